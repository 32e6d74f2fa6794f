"""The time-stepped engine against exact physics (REFERENCE.md: Impacts, Motion between impacts)."""

import hashlib
import math

import numpy as np
import pytest
from conftest import closed_form_impact, lattice_gas, min_gap
from hypothesis import example, given, settings
from hypothesis import strategies as st

import carom

# ------------------------------------------------------------------ two-body impacts


@pytest.mark.parametrize("dt", [1e-3, 0.0137, 0.25, 2.0])
@pytest.mark.parametrize("gap", [0.0, 0.37, 3.0])
def test_oblique_impact_independent_of_dt_and_gap(dt, gap):
    x1, v1 = np.array([-1.0 - gap, 0.05, -0.02]), np.array([1.3, 0.1, 0.0])
    x2, v2 = np.array([0.5, 0.0, 0.1]), np.array([-0.4, 0.0, 0.05])
    t_hit, _, w1, w2 = closed_form_impact(x1, v1, 2.0, 0.3, x2, v2, 0.7, 0.45, 0.6)
    w = carom.World(dim=3)
    w.add_body(position=x1, velocity=v1, mass=2.0, radius=0.3, restitution=0.6)
    w.add_body(position=x2, velocity=v2, mass=0.7, radius=0.45, restitution=0.6)
    times = []
    w.on_impact(lambda imp: times.append(imp.time))
    w.run(until=t_hit + 1.0, dt=dt)
    assert times == [pytest.approx(t_hit, rel=1e-13)]
    np.testing.assert_allclose(w.velocities, [w1, w2], rtol=0, atol=1e-13)


@pytest.mark.parametrize("b", [0.0, 0.1, 0.3, 0.55, 0.79])
def test_equal_masses_elastic_leave_at_right_angles(b):
    w = carom.World(dim=2)
    w.add_body(position=(-2.0, b), velocity=(1.0, 0.0), mass=1.0, radius=0.4)
    w.add_body(position=(0.0, 0.0), mass=1.0, radius=0.4)
    w.run(until=4.0, dt=0.1)
    v1, v2 = w.velocities
    assert abs(v1 @ v2) < 1e-14
    assert v1 @ v1 + v2 @ v2 == pytest.approx(1.0, rel=1e-14)


def test_fast_small_ball_does_not_tunnel_through_wall():
    # radius 5 mm at 1 km/s, dt = 0.1 s: it moves 100 m per step, the wall is 50 m away.
    w = carom.World(dim=3)
    w.add_body(position=(0, 0, 0), velocity=(1000.0, 0, 0), mass=0.01, radius=0.005, restitution=0.8)
    w.add_wall(point=(50.0, 0, 0), normal=(-1.0, 0, 0))
    w.run(until=1.0, dt=0.1)
    t_hit = (50.0 - 0.005) / 1000.0
    expected = 50.0 - 0.005 - 800.0 * (1.0 - t_hit)
    assert w.positions[0, 0] == pytest.approx(expected, rel=1e-14)
    assert w.velocities[0, 0] == -800.0
    assert w.collision_count == 1


def test_fixed_body_is_infinitely_heavy():
    w = carom.World(dim=2)
    w.add_body(position=(0, 0), radius=1.0, fixed=True, restitution=0.5)
    w.add_body(position=(-3, 0), velocity=(2.0, 0), mass=1e6, radius=0.5, restitution=0.5)
    w.run(until=3.0, dt=0.3)
    assert w.velocities[1, 0] == -1.0
    np.testing.assert_array_equal(w.positions[0], (0, 0))


# ------------------------------------------------------------------ bouncing ball (Zeno point)

G_EARTH = 9.81


@pytest.mark.parametrize("e", [0.5, 0.8, 0.9])
def test_bouncing_ball_apex_heights_and_impact_times(e):
    h0, radius = 1.0, 0.1
    t0 = math.sqrt(2 * h0 / G_EARTH)
    w = carom.World(dim=3, gravity=(0, 0, -G_EARTH))
    w.add_body(position=(0, 0, h0 + radius), mass=1.0, radius=radius, restitution=e)
    w.add_wall(point=(0, 0, 0), normal=(0, 0, 1))
    times = []
    w.on_impact(lambda imp: times.append(imp.time))
    for n in range(10):
        t_impact = t0 + 2 * t0 * e * (1 - e**n) / (1 - e)
        t_apex = t_impact + e ** (n + 1) * t0
        w.run(until=t_apex, dt=1e-2)
        height = w.positions[0, 2] - radius
        assert height == pytest.approx(e ** (2 * (n + 1)) * h0, rel=1e-9)
        assert abs(w.velocities[0, 2]) < 1e-12
        assert times[n] == pytest.approx(t_impact, rel=1e-12)


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_inelastic_ball_comes_to_rest_at_the_zeno_point_and_stays(e):
    h0, radius = 2.0, 0.05
    t0 = math.sqrt(2 * h0 / G_EARTH)
    t_rest = t0 * (1 + e) / (1 - e)
    w = carom.World(dim=3, gravity=(0, 0, -G_EARTH))
    w.add_body(position=(0.3, 0, h0 + radius), mass=1.0, radius=radius, restitution=e)
    w.add_wall(point=(0, 0, 0), normal=(0, 0, 1))
    times = []
    w.on_impact(lambda imp: times.append(imp.time))
    w.run(until=t_rest + 0.5, dt=1e-2)
    # Bounces end once the approach speed is below resting_speed; what remains of the geometric series
    # of flight times (2 u / g each, u shrinking by e) is shorter than 2 v_rest / (g (1 - e)).
    v_rest = w.config.resting_speed
    assert t_rest - 2 * v_rest / (G_EARTH * (1 - e)) <= times[-1] <= t_rest
    z_rest = w.positions[0, 2]
    assert z_rest == pytest.approx(radius, abs=1e-12)
    w.run(until=w.time + 10.0, dt=1e-2)
    assert w.positions[0, 2] == z_rest  # no sinking, no jitter
    np.testing.assert_array_equal(w.velocities[0], 0.0)
    assert len(times) == w.collision_count


# ------------------------------------------------------------------ chains: order-free rounds


@pytest.mark.parametrize("gap", [0.0, 1e-7])
def test_newtons_cradle_one_in_one_out(gap):
    w = carom.World(dim=3)
    r = 0.1
    for k in range(5):
        w.add_body(position=(k * (2 * r + gap), 0, 0), mass=1.0, radius=r)
    w.add_body(position=(-0.5, 0, 0), velocity=(1.5, 0, 0), mass=1.0, radius=r)
    w.run(until=0.5, dt=0.05)
    np.testing.assert_allclose(w.velocities[:, 0], [0, 0, 0, 0, 1.5, 0], atol=1e-12)


def test_newtons_cradle_two_in_two_out():
    w = carom.World(dim=2)
    for k in range(5):
        w.add_body(position=(k * 0.2, 0), mass=1.0, radius=0.1)
    w.add_body(position=(-0.3, 0), velocity=(1, 0), mass=1.0, radius=0.1)
    w.add_body(position=(-0.5, 0), velocity=(1, 0), mass=1.0, radius=0.1)
    w.run(until=0.3, dt=0.01)
    np.testing.assert_allclose(w.velocities[:, 0], [0, 0, 0, 1, 1, 0, 0], atol=1e-12)


def test_inelastic_chain_gives_sequential_result():
    e = 0.9
    w = carom.World(dim=3)
    for k in range(3):
        w.add_body(position=(k * 0.2, 0, 0), mass=1.0, radius=0.1, restitution=e)
    w.add_body(position=(-0.2, 0, 0), velocity=(1.0, 0, 0), mass=1.0, radius=0.1, restitution=e)
    w.step(1e-6)
    v = w.velocities[:, 0]
    assert v[2] == pytest.approx(((1 + e) / 2) ** 3, rel=1e-12)  # the impulse travelled ball by ball
    assert np.sum(v) == pytest.approx(1.0, rel=1e-14)
    order = v[[3, 0, 1, 2]]
    assert np.all(np.diff(order) >= -1e-12)  # nothing approaches any more


def test_symmetric_impact_stays_symmetric():
    w = carom.World(dim=2)
    w.add_body(position=(0, 0), mass=1.0, radius=0.5)
    w.add_body(position=(-2, 0), velocity=(1, 0), mass=1.0, radius=0.5)
    w.add_body(position=(2, 0), velocity=(-1, 0), mass=1.0, radius=0.5)
    w.run(until=2.0, dt=0.5)
    np.testing.assert_allclose(w.velocities, [(0, 0), (-1, 0), (1, 0)], atol=1e-14)


def billiard_break(order, dim=2):
    """A triangle rack of 10 touching balls hit head-on by the cue ball, bodies added in `order`."""
    r = 0.028575
    rack = [(0.0, 0.0)]
    for row in range(1, 4):
        for k in range(row + 1):
            rack.append((row * r * math.sqrt(3), (k - row / 2) * 2 * r))
    specs = [((x, y), (0.0, 0.0)) for x, y in rack] + [((-0.5, 0.0), (8.0, 0.0))]
    w = carom.World(dim=dim)
    ids = np.empty(len(specs), dtype=int)
    for k in order:
        ids[k] = w.add_body(position=specs[k][0], velocity=specs[k][1], mass=0.17, radius=r, restitution=0.95)
    w.run(until=0.2, dt=1e-3)
    return w.positions[ids], w.velocities[ids]


def test_shuffling_the_order_of_bodies_changes_nothing():
    x_ref, v_ref = billiard_break(range(11))
    rng = np.random.default_rng(4)
    for _ in range(3):
        x, v = billiard_break(rng.permutation(11))
        np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(v, v_ref, rtol=0, atol=1e-11)
    # the break is symmetric about the cue's line
    y_order = np.argsort(x_ref[:, 1])
    assert np.abs(np.sort(v_ref[:, 1]) + np.sort(v_ref[:, 1])[::-1]).max() < 1e-10, y_order


# ------------------------------------------------------------------ gases: conservation laws


def test_elastic_gas_in_a_box_conserves_energy_to_round_off():
    w = lattice_gas(500, 0.3, dim=3, seed=1)
    e0 = w.kinetic_energy()
    w.run(until=5.0, dt=0.05)
    assert w.collision_count > 5000
    assert w.kinetic_energy() == pytest.approx(e0, rel=1e-12)
    assert min_gap(w) > -1e-9


def test_free_gas_conserves_momentum_and_angular_momentum():
    rng = np.random.default_rng(2)
    w = carom.World(dim=3)
    pos = rng.uniform(-3, 3, (60, 3)) * np.array([1, 1, 0.2])
    keep = [0]
    for k in range(1, 60):
        if np.all(np.linalg.norm(pos[keep] - pos[k], axis=1) > 0.61):
            keep.append(k)
    pos = pos[keep]
    n = len(pos)
    w.add_bodies(pos, -0.5 * pos + rng.normal(size=(n, 3)), masses=rng.uniform(0.5, 2, n), radii=0.3, restitution=0.7)
    p0, l0, e0 = w.momentum(), w.angular_momentum(), w.kinetic_energy()
    w.run(until=4.0, dt=0.1)
    assert w.collision_count > 20
    np.testing.assert_allclose(w.momentum(), p0, atol=1e-12 * np.abs(p0).sum() + 1e-13)
    np.testing.assert_allclose(w.angular_momentum(), l0, atol=1e-12 * np.abs(l0).sum() + 1e-12)
    assert w.kinetic_energy() < e0


scene = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**31),
        "n": st.integers(2, 25),
        "dim": st.sampled_from([2, 3]),
        "e": st.sampled_from([0.0, 0.5, 1.0]),
        "dt": st.sampled_from([0.01, 0.1, 0.7]),
    }
)


def random_scene(seed, n, dim, e, dt, order=None):
    rng = np.random.default_rng(seed)
    pos, rad = [], []
    while len(pos) < n:
        x, r = rng.uniform(-2, 2, dim), rng.uniform(0.05, 0.3)
        if all(np.linalg.norm(x - p) > r + q for p, q in zip(pos, rad, strict=True)):
            pos.append(x)
            rad.append(r)
    vel = rng.normal(size=(n, dim))
    mass = rng.uniform(0.1, 3, n)
    order = range(n) if order is None else order
    w = carom.World(dim=dim)
    ids = np.empty(n, dtype=int)
    for k in order:
        ids[k] = w.add_body(position=pos[k], velocity=vel[k], mass=mass[k], radius=rad[k], restitution=e)
    return w, ids


@settings(max_examples=30, deadline=None)
@given(scene)
def test_invariants_momentum_energy_no_overlap(params):
    w, _ = random_scene(**params)
    p0, e0 = w.momentum(), w.kinetic_energy()
    w.run(until=1.5, dt=params["dt"])
    np.testing.assert_allclose(w.momentum(), p0, atol=1e-12 * (np.abs(p0).sum() + e0))
    if params["e"] == 1.0:
        assert w.kinetic_energy() == pytest.approx(e0, rel=1e-12)
    else:
        assert w.kinetic_energy() <= e0 * (1 + 1e-12)
    assert min_gap(w) >= -1e-9 * 0.6


@pytest.mark.parametrize("separating", [0.0, 0.01])
def test_overlap_made_between_steps_is_pushed_apart_by_the_next_step_without_forces(separating):
    # With no force at all the step skips the position projection unless an overlap is already there: one
    # made by hand (deeper than resting_gap R, with a wall and a pair) must still be removed, positions only.
    w = carom.World(dim=2)
    w.add_wall(point=(0, 0), normal=(0, 1))
    w.add_body(position=(0, 1), velocity=(-separating, 0), mass=1.0, radius=0.5)
    w.add_body(position=(2, 1), velocity=(separating, 0), mass=3.0, radius=0.5)
    w.add_body(position=(5, 1), velocity=(0, separating), mass=1.0, radius=0.5)
    w.positions[1, 0] = 0.9  # 0.1 into body 0
    w.positions[2, 1] = 0.45  # 0.05 into the wall
    p0, e0 = w.momentum(), w.kinetic_energy()
    com0 = (w.positions[0] + 3.0 * w.positions[1]) / 4.0
    w.step(1e-3)
    slop = w.config.resting_gap * 0.5
    # the pair is pushed apart by mass-weighted displacements: its centre of mass moves only by its momentum
    com = (w.positions[0] + 3.0 * w.positions[1]) / 4.0
    np.testing.assert_allclose(com, com0 + 1e-3 * (w.velocities[0] + 3.0 * w.velocities[1]) / 4.0, rtol=0, atol=1e-14)
    assert np.linalg.norm(w.positions[1] - w.positions[0]) >= 1.0 - slop
    assert w.positions[2, 1] >= 0.5 - slop
    np.testing.assert_array_equal(w.momentum(), p0)
    assert w.kinetic_energy() == e0


@pytest.mark.parametrize("gap", [2e-4, 0.02])
def test_a_body_pushed_out_of_an_overlap_is_not_pushed_into_its_neighbour(gap):
    # Bodies 0 and 1 overlap by 0.1 (made by hand); body 2 lies a small gap beyond body 1. Pushing 1 out of
    # 0 closes that gap, so the projection must move body 2 as well: it leaves no overlap deeper than its
    # slop anywhere (before session 8 it left 1 about 0.05 into 2), and touches no velocity.
    w = carom.World(dim=2)
    for position in ((0, 0), (0, 5), (1.9 + gap, 0)):
        w.add_body(position=position, velocity=(0, 0), mass=1.0, radius=0.5)
    w.positions[1] = (0.9, 0)
    com0 = w.positions.mean(axis=0)
    w.step(1e-3)
    slop = w.config.resting_gap * 0.5
    assert min_gap(w) >= -slop
    np.testing.assert_allclose(w.positions.mean(axis=0), com0, rtol=0, atol=1e-14)  # equal masses: mean fixed
    np.testing.assert_array_equal(w.velocities, 0.0)


def test_a_chain_pushed_off_a_fixed_body_is_not_pushed_into_the_body_beyond_it():
    # Body 0 is fixed; 1 overlaps it, 2 overlaps 1 and 3 overlaps 2, each by d (made by hand), so clearing
    # them moves body 3 by about 3 d. Body 4 lies 2.5 d beyond body 3: farther than the first candidate
    # lists reach (2 d), yet closed by that push. The projection must find it from the new positions.
    d = 0.01
    w = carom.World(dim=2)
    w.add_body(position=(0, 0), velocity=(0, 0), radius=0.5, fixed=True)
    for k in range(1, 4):
        w.add_body(position=(0, 5 * k), velocity=(0, 0), mass=1.0, radius=0.5)
    w.add_body(position=(4 - 0.5 * d, 0), velocity=(0, 0), mass=1.0, radius=0.5)
    for k in range(1, 4):
        w.positions[k] = (k * (1 - d), 0)
    w.step(1e-3)
    assert min_gap(w) >= -w.config.resting_gap * 0.5
    assert w.positions[0, 0] == 0.0  # the fixed body does not move
    np.testing.assert_array_equal(w.velocities, 0.0)


@settings(max_examples=15, deadline=None)
@given(scene, st.randoms(use_true_random=False))
def test_invariant_order_independence(params, rnd):
    w1, ids1 = random_scene(**params)
    order = list(range(params["n"]))
    rnd.shuffle(order)
    w2, ids2 = random_scene(**params, order=order)
    w1.run(until=0.5, dt=params["dt"])
    w2.run(until=0.5, dt=params["dt"])
    np.testing.assert_allclose(w2.positions[ids2], w1.positions[ids1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(w2.velocities[ids2], w1.velocities[ids1], rtol=0, atol=1e-9)


def test_body_crushed_by_a_moving_fixed_body_stops_the_run_with_a_clear_error():
    # A ball between a wall and a fixed body closing in at 1 m/s gains 2 m/s per bounce and its impacts come
    # ever faster: the gap closes at t = 0.7 s after infinitely many. The step must not run forever.
    w = carom.World(dim=2, config=carom.Config(max_body_events=1000))
    w.add_wall(point=(0, 0), normal=(1, 0))
    w.add_body(position=(1.0, 0), velocity=(0, 0), mass=1.0, radius=0.5)
    w.add_body(position=(2.2, 0), velocity=(-1.0, 0), radius=0.5, fixed=True)
    with pytest.raises(carom.ContactError, match="body 0 took part in more than"):
        w.run(until=1.0, dt=0.01)
    # left at the last event, all bodies there, the ball still between the wall and the piston
    assert 0.69 < w.time < 0.7
    assert w.positions[1, 0] == pytest.approx(2.2 - w.time, abs=1e-12)
    assert 0.5 - 1e-9 <= w.positions[0, 0] <= w.positions[1, 0] - 1.0 + 1e-9
    # each bounce off the piston adds twice its speed (the 1D impact law with M -> inf)
    assert abs(w.velocities[0, 0]) == pytest.approx(2 * round(abs(w.velocities[0, 0]) / 2), abs=1e-6)
    # exactly: impacts alternate piston, wall, piston, ...; after c of them the ball has met the piston
    # ceil(c / 2) times, and integer speeds are exact in floating point
    assert abs(w.velocities[0, 0]) == 2 * math.ceil(w.collision_count / 2)


# ------------------------------------------------------------------ restitution rules, merging


@pytest.mark.parametrize(("rule", "expected"), [("min", 0.2), ("max", 0.8), ("mean", 0.5), ("product", 0.16)])
def test_restitution_rules(rule, expected):
    w = carom.World(dim=2, restitution_rule=rule)
    w.add_body(position=(0, 1), velocity=(0, -1), mass=1.0, radius=0.5, restitution=0.2)
    w.add_wall(point=(0, 0), normal=(0, 1), restitution=0.8)
    w.run(until=1.0, dt=0.1)
    assert w.velocities[0, 1] == pytest.approx(expected, rel=1e-14)


def test_pair_override():
    w = carom.World(dim=2)
    w.add_body(position=(0, 1), velocity=(0, -1), mass=1.0, radius=0.5)
    w.add_body(position=(3, 1), velocity=(0, -1), mass=1.0, radius=0.5)
    w.add_wall(point=(0, 0), normal=(0, 1))
    w.set_pair_restitution(1, -1, 0.25)
    w.run(until=1.0, dt=0.1)
    np.testing.assert_allclose(w.velocities[:, 1], [1.0, 0.25], rtol=1e-14)


@pytest.mark.parametrize("dim", [2, 3])
def test_merge_conserves_mass_momentum_and_volume(dim):
    w = carom.World(dim=dim, impact_mode="merge")
    x1, x2 = np.zeros(dim), np.zeros(dim)
    x2[0] = 3.0
    x2[1] = 0.2
    v1, v2 = np.zeros(dim), np.zeros(dim)
    v1[0], v2[0], v2[1] = 1.0, -0.5, 0.05
    w.add_body(position=x1, velocity=v1, mass=2.0, radius=0.4)
    w.add_body(position=x2, velocity=v2, mass=1.0, radius=0.3)
    p0 = w.momentum()
    w.run(until=3.0, dt=0.1)
    assert list(w.active) == [True, False]
    assert w.masses[0] == 3.0
    np.testing.assert_allclose(w.momentum(), p0, rtol=1e-14)
    np.testing.assert_allclose(w.velocities[0], p0 / 3.0, rtol=1e-14)
    power = dim
    assert w.radii[0] == pytest.approx((0.4**power + 0.3**power) ** (1 / power), rel=1e-14)
    # the merged body sits at the centre of mass, which moves uniformly
    com0 = (2.0 * x1 + 1.0 * x2) / 3.0
    np.testing.assert_allclose(w.positions[0], com0 + 3.0 * p0 / 3.0, atol=1e-12)
    assert w.collision_count == 1


# ------------------------------------------------------------------ piles and resting contact


def test_pile_of_1000_spheres_settles_without_overlap_or_escape():
    """1000 spheres (e = 0.5) poured into a box come to rest in a heap: no overlap with a body or a wall
    deeper than twice ``resting_gap`` R (what the position projection leaves after every step, with its
    solver's tolerance) at any check, none escapes, nothing ever adds energy, and the kinetic energy left
    is a tiny fraction of what was dissipated. (Measured: 0.99e-4 R at dt = 1e-3 and 2e-3; before session
    8, whose projection could push a body out of one overlap into another, 0.20% and 1.5% R; 2.5 s of
    simulated time in about 50 s.)"""
    rng = np.random.default_rng(7)
    r = 0.05
    w = carom.World(dim=3, gravity=(0, 0, -9.81))
    w.add_box(lower=(0, 0, 0), upper=(1.0, 1.0, 4.0), restitution=0.5)
    grid = np.stack(np.meshgrid(np.arange(9), np.arange(9), np.arange(13), indexing="ij"), -1).reshape(-1, 3)
    jitter = rng.uniform(-0.004, 0.004, (1000, 3)) * [1, 1, 0]
    pos = 0.06 + grid[:1000] * np.array([0.11, 0.11, 0.25]) + jitter
    w.add_bodies(pos, rng.normal(scale=0.3, size=(1000, 3)), masses=1.0, radii=r, restitution=0.5)
    allowed = 2 * w.config.resting_gap * r
    energy = [w.total_energy()]
    for _ in range(25):
        w.run(until=w.time + 0.1, dt=1e-3)
        energy.append(w.total_energy())
        assert min_gap(w) > -allowed
        assert np.all((w.positions - r >= -allowed) & (w.positions + r <= np.array([1, 1, 4]) + allowed))
    x = w.positions
    assert np.all(np.diff(energy) <= 1e-6 * abs(energy[0]))  # nothing ever adds energy
    assert w.kinetic_energy() < 1e-3 * (energy[0] - energy[-1])  # settled
    assert x[:, 2].max() < 1.0  # a heap about ten layers deep, not a gas


@pytest.mark.parametrize("e", [1.0, 0.5])
def test_slow_touching_impact_is_exact_if_elastic_resting_if_not(e):
    """Two touching spheres closing at 0.5 mm/s, below the resting speed: elastic ones swap velocities
    exactly (no elastic approach is ever absorbed); inelastic ones are made resting (move together)."""
    w = carom.World(dim=3)
    w.add_body(position=(0, 0, 0), velocity=(5e-4, 0, 0), mass=1.0, radius=0.5, restitution=e)
    w.add_body(position=(1, 0, 0), velocity=(0, 0, 0), mass=1.0, radius=0.5, restitution=e)
    w.step(0.01)
    expected = [[0, 0, 0], [5e-4, 0, 0]] if e == 1.0 else [[2.5e-4, 0, 0], [2.5e-4, 0, 0]]
    np.testing.assert_allclose(w.velocities, expected, atol=1e-18)
    assert w.collision_count == (1 if e == 1.0 else 0)


def _small_pile(seed, e, dim):
    """40 disks (60 spheres) of random mass in four columns, falling onto the floor of a narrow box."""
    rng = np.random.default_rng(seed)
    r, n = 0.05, (40 if dim == 2 else 60)
    w = carom.World(dim=dim, gravity=[0.0] * (dim - 1) + [-9.81])
    w.add_box(lower=[0.0] * dim, upper=[0.5] * (dim - 1) + [3.0], restitution=e)
    grid = np.stack(np.meshgrid(*[np.arange(4)] * (dim - 1), np.arange(20), indexing="ij"), -1).reshape(-1, dim)[:n]
    pos = 0.07 + grid * 0.12 + rng.uniform(-0.01, 0.01, grid.shape) * ([1] * (dim - 1) + [0])
    w.add_bodies(pos, rng.normal(scale=0.5, size=(n, dim)), masses=rng.uniform(0.5, 2.0, n), radii=r, restitution=e)
    return w, r


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.floats(0.0, 0.95), st.sampled_from([2, 3]), st.sampled_from([1e-3, 2e-3]))
@example(335, 0.5339443528612946, 3, 1e-3)  # found by this test: 1.6% R with the projection of session 7
def test_random_piles_keep_overlaps_within_the_resting_gap_and_dissipate(seed, e, dim, dt):
    """After every step the position projection leaves no overlap deeper than ``resting_gap`` R (1e-4 R),
    with a body or a wall; twice that allows for its solver's tolerance. Until session 8 the projection
    could push a body out of one overlap into a neighbour: the worst overlap of 360 random piles at dt = 1
    ms was 0.18% R (1.6% R in the example above), of 100 at 2 ms 1.3% R; now 1.0e-4 R (150 piles each)."""
    w, r = _small_pile(seed, e, dim)
    allowed = 2 * w.config.resting_gap * r
    upper = np.array([0.5] * (dim - 1) + [3.0])
    e0 = w.total_energy()
    for _ in range(15):
        w.run(until=w.time + 0.1, dt=dt)
        assert min_gap(w) > -allowed
        assert np.all((w.positions - r >= -allowed) & (w.positions + r <= upper + allowed))
    assert w.total_energy() < e0


def test_settled_pile_comes_to_rest_without_jitter():
    """Once a pile has settled its bodies stop: no jitter of order g dt from inexact contact forces. With
    the force solve stopped at 1 m/s^2 (as before Config.force_tolerance), this pile kept kinetic energy
    near 1e-3 J, speeds near 0.02 m/s, and steps that gained up to 2e-6 of its energy. Now (measured) its
    kinetic energy falls below 1e-12 J by 4.5 s, and steps gain at most 5e-12 of the energy by then."""
    w, _ = _small_pile(0, 0.0, 2)
    w.run(until=5.0, dt=1e-3)
    e_scale = abs(w.total_energy())
    for _ in range(500):
        before = w.total_energy()
        w.step(1e-3)
        assert w.total_energy() - before <= 1e-9 * e_scale
        assert w.kinetic_energy() < 1e-9
    assert np.abs(w.velocities).max() < 1e-4


@pytest.mark.xfail(strict=True, reason="known limitation (README): resting-contact forces are held constant "
                   "within a step, and while a small inelastic pile settles single steps gain up to ~4e-6 of "
                   "the energy")
def test_no_step_of_a_settling_pile_gains_energy():
    w, _ = _small_pile(0, 0.0, 2)
    e_scale = abs(w.total_energy())
    for _ in range(1500):
        before = w.total_energy()
        w.step(1e-3)
        assert w.total_energy() - before <= 1e-12 * e_scale


def test_resume_inside_a_settling_pile_is_exact():
    """The state carries what the next step's contact solve starts from (which bodies rest, the forces
    they carry): a run split by get_state/set_state is bit-identical to an unbroken one."""
    from carom.canonical import pile

    whole = pile(60, dim=2, seed=4)
    whole.run(until=1.0, dt=0.01)
    state = whole.get_state()
    whole.run(until=1.5, dt=0.01)
    resumed = pile(60, dim=2, seed=4)
    resumed.set_state(state)
    resumed.run(until=1.5, dt=0.01)
    assert np.array_equal(resumed.positions, whole.positions)
    assert np.array_equal(resumed.velocities, whole.velocities)


# ------------------------------------------------------------------ determinism


def test_determinism_hash():
    """A pinned hash of a canonical scene's state: any change to the physics or its arithmetic shows."""
    w = lattice_gas(64, 0.25, dim=3, seed=3, e=0.9)
    w.gravity[:] = (0, 0, -1.0)
    w.run(until=2.0, dt=0.01)
    state = np.ascontiguousarray(np.concatenate([w.positions, w.velocities]))
    digest = hashlib.sha256(state.tobytes()).hexdigest()
    assert digest[:16] == PINNED_HASH, digest


PINNED_HASH = "c3a1e39244e235f7"
