"""The contact law against its closed forms (docs/physics.md, Impact law): the impact law, simultaneous contacts
solved in order-free rounds, restitution rules and pair overrides in both engines, merging."""

import math

import numpy as np
import pytest
from conftest import closed_form_impact
from hypothesis import given
from hypothesis import strategies as st

import carom
from carom import EventWorld

masses = st.floats(1e-3, 1e3)
speeds = st.floats(-100, 100)
coefficients = st.floats(0.0, 1.0)


@given(masses, speeds, masses, speeds, coefficients)
def test_departure_speeds_match_closed_form(ma, ua, mb, ub, e):
    va, vb = carom.resolve_impact(ma, ua, mb, ub, e)
    scale = abs(ua) + abs(ub) + 1.0
    assert va == pytest.approx((ma * ua + mb * ub + mb * e * (ub - ua)) / (ma + mb), abs=1e-12 * scale)
    assert vb == pytest.approx((ma * ua + mb * ub + ma * e * (ua - ub)) / (ma + mb), abs=1e-12 * scale)


@given(masses, speeds, masses, speeds, coefficients)
def test_momentum_newton_law_and_energy_loss(ma, ua, mb, ub, e):
    va, vb = carom.resolve_impact(ma, ua, mb, ub, e)
    p = ma * ua + mb * ub
    assert ma * va + mb * vb == pytest.approx(p, abs=1e-12 * (abs(ma * ua) + abs(mb * ub) + 1e-300))
    assert vb - va == pytest.approx(-e * (ub - ua), abs=1e-9 * (abs(ua) + abs(ub) + 1e-300))
    mu = ma * mb / (ma + mb)
    lost = 0.5 * ma * ua**2 + 0.5 * mb * ub**2 - 0.5 * ma * va**2 - 0.5 * mb * vb**2
    ke = 0.5 * ma * ua**2 + 0.5 * mb * ub**2
    assert lost == pytest.approx(0.5 * (1 - e**2) * mu * (ua - ub) ** 2, abs=1e-11 * ke + 1e-300)


@given(masses, speeds, speeds, coefficients)
def test_fixed_body_is_the_exact_infinite_mass_limit(ma, ua, ub, e):
    va, vb = carom.resolve_impact(ma, ua, math.inf, ub, e)
    assert vb == ub
    assert va == pytest.approx(ub - e * (ua - ub), abs=1e-12 * (abs(ua) + abs(ub)) + 1e-300)


def test_equal_masses_elastic_exchange_velocities():
    assert carom.resolve_impact(1.0, 3.0, 1.0, -1.0, 1.0) == pytest.approx((-1.0, 3.0))
    assert carom.resolve_impact(2.0, 1.0, 2.0, 0.0, 0.0) == pytest.approx((0.5, 0.5))


@pytest.mark.parametrize(
    ("args", "field"),
    [((0, 1, 1, 0, 1), "m1"), ((1, 1, -1, 0, 1), "m2"), ((1, math.nan, 1, 0, 1), "u1"), ((1, 1, 1, 0, 1.5), "e")],
)
def test_bad_input_names_the_field(args, field):
    with pytest.raises(ValueError, match=field):
        carom.resolve_impact(*args)


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


# ------------------------------------------------------------------ pair overrides, both engines


def run_engine(w, until, dt):
    """Run either engine to ``until`` (``dt`` for the time-stepped one)."""
    if isinstance(w, EventWorld):
        w.run(until=until)
    else:
        w.run(until=until, dt=dt)


@pytest.mark.parametrize("engine", [carom.World, EventWorld])
def test_wall_override_changes_only_that_wall(engine):
    # Two walls, x = 0 (wall 0) and x = 4 (wall 1); an override e = 0.5 for body 0 with wall 1 only. Body 0
    # leaves wall 1 at 0.5 u and wall 0 at its elastic e = 1; body 1, without an override, at e = 1 from both.
    w = engine(dim=2)
    w.add_wall(point=(0, 0), normal=(1, 0))
    w.add_wall(point=(4, 0), normal=(-1, 0))
    w.add_body(position=(2, 0), velocity=(1, 0), mass=1.0, radius=0.5)
    w.add_body(position=(2, 2), velocity=(1, 0), mass=1.0, radius=0.5)
    w.set_pair_restitution(0, -1 - 1, 0.5)
    impacts = []
    w.on_impact(lambda imp: impacts.append((imp.i, imp.j, imp.restitution, imp.approach_speed)))
    run_engine(w, 8.0, dt=0.1)
    # body 0: wall 1 at t = 1.5 (u = 1 -> 0.5), wall 0 at 1.5 + 3 / 0.5 = 7.5 (u = 0.5 -> 0.5);
    # body 1: wall 1 at 1.5, wall 0 at 4.5, wall 1 at 7.5, always at 1 m/s
    assert sorted(impacts) == [(0, -2, 0.5, 1.0), (0, -1, 1.0, 0.5), (1, -2, 1.0, 1.0), (1, -2, 1.0, 1.0),
                               (1, -1, 1.0, 1.0)]  # fmt: skip
    # halving and reflecting speeds of 1 m/s are exact in floating point
    np.testing.assert_array_equal(w.velocities, [(0.5, 0.0), (-1.0, 0.0)])


@pytest.mark.parametrize("engine", [carom.World, EventWorld])
def test_body_override_sets_the_impact_law_of_that_pair(engine):
    # Both bodies have e = 0.6, their pair an override of 0.2 (set as (1, 0): the pair is unordered); a
    # distant third body's override with body 0 (0.9) must not apply. The impact is the closed form's, e = 0.2.
    x1, v1 = np.array([-1.37, 0.05, -0.02]), np.array([1.3, 0.1, 0.0])
    x2, v2 = np.array([0.5, 0.0, 0.1]), np.array([-0.4, 0.0, 0.05])
    t_hit, _, w1, w2 = closed_form_impact(x1, v1, 2.0, 0.3, x2, v2, 0.7, 0.45, 0.2)
    w = engine(dim=3)
    w.add_body(position=x1, velocity=v1, mass=2.0, radius=0.3, restitution=0.6)
    w.add_body(position=x2, velocity=v2, mass=0.7, radius=0.45, restitution=0.6)
    w.add_body(position=(5.0, 5.0, 5.0), mass=1.0, radius=0.1, restitution=0.6)
    w.set_pair_restitution(1, 0, 0.2)
    w.set_pair_restitution(0, 2, 0.9)
    impacts = []
    w.on_impact(lambda imp: impacts.append((imp.time, imp.restitution)))
    run_engine(w, t_hit + 1.0, dt=0.25)
    # the impact time to round-off (the oblique-impact tests of both engines hold it to 1e-13)
    assert impacts == [(pytest.approx(t_hit, rel=1e-13, abs=0), 0.2)]
    # departure velocities of order 1 m/s to round-off, as in those tests
    np.testing.assert_allclose(w.velocities, [w1, w2, (0.0, 0.0, 0.0)], rtol=0, atol=1e-13)


# ------------------------------------------------------------------ rounds capped by Config.max_rounds


@pytest.mark.parametrize("engine", [carom.World, EventWorld])
@pytest.mark.parametrize(("max_rounds", "expected"), [(1, [0.05, 0.475, 0.475]), (2, [0.04875, 0.04875, 0.9025])])
def test_rounds_beyond_max_rounds_are_perfectly_inelastic_with_a_warning(engine, max_rounds, expected):
    # Ball 0 at 1 m/s hits two touching balls at rest, e = 0.9: uncapped, rounds 0-1, 1-2, 0-1 give
    # (0.047625, 0.049875, 0.9025) (test_inelastic_chain_gives_sequential_result). Rounds beyond max_rounds
    # are solved with e = 0: with 1 round, 0-1 gives (0.05, 0.95, 0) and then 1-2 moves together at 0.475;
    # with 2, 0-1 and 1-2 give (0.05, 0.0475, 0.9025), then 0-1 moves together at 0.04875.
    w = engine(dim=3, config=carom.Config(max_rounds=max_rounds))
    w.add_bodies([(-0.25, 0, 0), (1, 0, 0), (2, 0, 0)], [(1, 0, 0), (0, 0, 0), (0, 0, 0)], masses=1.0, radii=0.5,
                 restitution=0.9)  # fmt: skip
    with pytest.warns(carom.ContactWarning, match=f"more than Config.max_rounds ?= ?{max_rounds} rounds"):
        run_engine(w, 0.5, dt=0.1)
    # velocities below 1 m/s after three impacts: round-off ~1e-16 (measured: exact to 4e-17)
    np.testing.assert_allclose(w.velocities[:, 0], expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(w.velocities[:, 1:], 0.0)
    assert w.momentum()[0] == pytest.approx(1.0, rel=1e-15, abs=0)  # conserved to round-off of a sum


@pytest.mark.parametrize("dt", [0.01, 0.03])  # the impact at the very end of a step (0.5 = 50 dt), or inside one
def test_a_long_chain_past_max_rounds_is_solved_at_once_not_crushed(dt):
    """Ball 0 at 1 m/s hits a chain of 20 touching balls (e = 0.9) with Config.max_rounds = 3. Round by round
    an impulse reaches one ball further each time, so past the cap the whole touching cluster is solved as
    one perfectly inelastic system (as the warning says): nothing is crushed. After the instant no touching
    neighbours approach, momentum is conserved and no energy is gained; both engines agree. Tolerances: the
    chain's projected Gauss-Seidel solve runs to Config.lcp_iterations (500 sweeps), which on a chain of 20
    leaves the engines 3e-6 m/s apart when the impact ends a step, 1e-8 inside one (measured)."""
    results = []
    for engine in (carom.World, EventWorld):
        w = engine(dim=2, config=carom.Config(max_rounds=3))
        w.add_body(position=(-1.0, 0.0), velocity=(1.0, 0.0), mass=1.0, radius=0.5, restitution=0.9)
        w.add_bodies([(0.5 + k, 0.0) for k in range(20)], masses=1.0, radii=0.5, restitution=0.9)
        e0 = w.kinetic_energy()
        with pytest.warns(carom.ContactWarning, match="max_rounds ?= ?3 rounds"):
            run_engine(w, 1.0, dt=dt)
        v = w.velocities[:, 0]
        assert w.momentum()[0] == pytest.approx(1.0, rel=1e-12, abs=0)
        assert w.kinetic_energy() <= e0
        assert np.all(np.diff(v) >= -1e-9)  # no touching pair approaches (measured: -5e-14 at worst)
        assert np.all(v > 0.0) and v[-1] < 0.1  # a slow block: inelastic, not a cradle's one-out
        results.append(v)
    np.testing.assert_allclose(results[0], results[1], rtol=0, atol=1e-5)
