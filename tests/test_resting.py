"""Resting contact in the time-stepped engine (docs/physics.md: Resting contact): the bouncing ball's Zeno
point, slow touching impacts, piles that settle without overlap or jitter, and resuming inside one."""

import math

import numpy as np
import pytest
from conftest import min_gap
from hypothesis import example, given, settings
from hypothesis import strategies as st

import carom

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


# ------------------------------------------------------------------ piles and resting contact


def test_pile_of_1000_spheres_settles_without_overlap_or_escape():
    """1000 spheres (e = 0.5) poured into a box come to rest in a heap: no overlap with a body or a wall
    deeper than twice ``resting_gap`` R (what the position projection leaves after every step, with its
    solver's tolerance) at any check, none escapes, nothing ever adds energy, and the kinetic energy left
    is a tiny fraction of what was dissipated. (Measured: 0.99e-4 R at dt = 1e-3 and 2e-3; with the
    earlier projection, which could push a body out of one overlap into another, 0.20% and 1.5% R; 2.5 s of
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
@example(335, 0.5339443528612946, 3, 1e-3)  # found by this test: 1.6% R with the earlier projection
def test_random_piles_keep_overlaps_within_the_resting_gap_and_dissipate(seed, e, dim, dt):
    """After every step the position projection leaves no overlap deeper than ``resting_gap`` R (1e-4 R),
    with a body or a wall; twice that allows for its solver's tolerance. The earlier projection could
    push a body out of one overlap into a neighbour: the worst overlap of 360 random piles at dt = 1
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
    near 1e-3 J, speeds near 0.02 m/s, and steps that gained up to 2e-6 of its energy. Now, from 5 s, its
    kinetic energy stays below 1e-9 J and no step gains more than 1e-9 of the energy (it falls asleep)."""
    w, _ = _small_pile(0, 0.0, 2)
    w.run(until=5.0, dt=1e-3)
    e_scale = abs(w.total_energy())
    for _ in range(500):
        before = w.total_energy()
        w.step(1e-3)
        assert w.total_energy() - before <= 1e-9 * e_scale
        assert w.kinetic_energy() < 1e-9
    assert np.abs(w.velocities).max() < 1e-4


@pytest.mark.xfail(strict=True, reason="known limitation (README): while a small inelastic pile settles, the "
                   "position projection lifts bodies with too little kinetic energy to pay for the height, and "
                   "solves stop at their tolerance: single steps gain up to 2.1e-9 of the energy (22 of 1500 "
                   "steps above 1e-12; 2.7e-6 in 133 steps before the projection paid for its lift)")
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
