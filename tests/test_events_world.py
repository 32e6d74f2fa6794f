"""`World` and `EventWorld` on scenes both can run: the same impacts, the same state to 1e-9.

Both engines resolve every impact at its exact time with the same impact law and the same rounds for
contacts touching at one instant, so they must agree to round-off; this cross-checks both.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carom
from carom.events import EventWorld


def both(dim, build, gravity=None):
    worlds = [carom.World(dim=dim, gravity=gravity), EventWorld(dim=dim, gravity=gravity)]
    for w in worlds:
        build(w)
    return worlds


def agree(worlds, until, dt=0.01, atol=1e-9):
    """Run both to ``until``; the same impacts (the order of those of one round may differ) and state."""
    step, event = worlds
    logs = []
    for w in worlds:
        log = []
        w.on_impact(lambda imp, log=log: log.append((round(imp.time, 9), min(imp.i, imp.j), max(imp.i, imp.j),
                                                     imp.time, imp.impulse)))  # fmt: skip
        logs.append(log)
    step.run(until=until, dt=dt)
    event.run(until=until)
    np.testing.assert_allclose(event.positions, step.positions, rtol=0, atol=atol)
    np.testing.assert_allclose(event.velocities, step.velocities, rtol=0, atol=atol)
    assert event.collision_count == step.collision_count
    a, b = (np.array(sorted(log)) for log in logs)
    np.testing.assert_array_equal(b[:, 1:3], a[:, 1:3])
    np.testing.assert_allclose(b[:, 3:], a[:, 3:], rtol=0, atol=atol)
    return event


def test_billiards_break():
    # a triangle of 10 touching balls, struck by the cue ball, in a walled table (2D)
    r = 0.0286

    def build(w):
        w.add_box(lower=(0.0, 0.0), upper=(2.54, 1.27), restitution=0.9)
        rows = [(0.5 + k * r * math.sqrt(3.0), (m - k / 2) * 2 * r) for k in range(4) for m in range(k + 1)]
        w.add_bodies(np.array(rows) + np.array([1.4, 0.635]), masses=0.17, radii=r, restitution=0.95)
        w.add_body(position=(0.6, 0.636), velocity=(6.0, 0.0), mass=0.17, radius=r, restitution=0.95)

    event = agree(both(2, build), until=1.0)
    assert event.collision_count > 20


@pytest.mark.parametrize("n_in", [1, 2])
def test_newtons_cradle(n_in):
    def build(w):
        x = np.zeros((7, 3))
        x[:, 0] = np.arange(7) * 0.1
        x[:n_in, 0] -= 0.05
        v = np.zeros((7, 3))
        v[:n_in, 0] = 1.0
        w.add_bodies(x, v, masses=0.2, radii=0.05)

    agree(both(3, build), until=0.5)


def bouncing_ball(w):
    w.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0))
    w.add_body(position=(0.0, 0.0, 1.05), velocity=(0.3, 0.0, 0.0), mass=1.0, radius=0.05, restitution=0.7)


def test_bouncing_ball_bounces_the_same_way():
    # the first 11 bounces (24 in all before the ball rests at 2.558 s)
    agree(both(3, bouncing_ball, gravity=(0.0, 0.0, -9.81)), until=2.5)


def test_bouncing_ball_comes_to_rest_the_same_way():
    event = agree(both(3, bouncing_ball, gravity=(0.0, 0.0, -9.81)), until=3.0)
    assert event.positions[0, 2] == pytest.approx(0.05, abs=1e-12)


def test_small_gas_in_a_box():
    rng = np.random.default_rng(3)

    def build(w):
        w.add_box(lower=(0.0, 0.0, 0.0), upper=(4.0, 4.0, 4.0))
        grid = np.stack(np.meshgrid(*[np.arange(3)] * 3, indexing="ij"), -1).reshape(-1, 3)
        w.add_bodies((grid + 0.5) * 4.0 / 3.0, velocities, masses=rng_masses, radii=0.45)

    velocities = rng.normal(size=(27, 3))
    rng_masses = rng.uniform(0.5, 2.0, size=27)
    event = agree(both(3, build), until=2.0, dt=0.05)
    assert event.collision_count > 50


# ------------------------------------------------------------------ a body crushed by a moving fixed body


def piston(engine, e, **config):
    """A ball (restitution e) between a wall at x = 0 and a fixed body closing in at 1 m/s: the gap the ball
    can move in closes at t = 0.7 s, after infinitely many impacts."""
    w = engine(dim=2, config=carom.Config(**config))
    w.add_wall(point=(0, 0), normal=(1, 0))
    w.add_body(position=(1.0, 0), velocity=(0, 0), mass=1.0, radius=0.5, restitution=e)
    w.add_body(position=(2.2, 0), velocity=(-1.0, 0), radius=0.5, fixed=True)
    return w


@pytest.mark.parametrize("engine", [carom.World, EventWorld])
@pytest.mark.parametrize("e", [0.5, 0.0])
def test_inelastic_ball_crushed_by_a_moving_fixed_body_stops_the_run_with_a_clear_error(engine, e):
    # Once the gap has closed, no velocity of the ball satisfies both contacts (the ball cannot move away from
    # the wall and from the piston at once): rounds at that instant never end. Both engines must stop.
    w = piston(engine, e, max_rounds=50)
    with pytest.raises(carom.ContactError, match="body 0 is crushed at"):
        if engine is EventWorld:
            w.run(until=1.0)
        else:
            w.run(until=1.0, dt=0.01)
    # the closing time, within the contact tolerance of both contacts (1e-9 of the radius each, 1 m/s)
    assert 0.7 - 1e-9 <= w.time <= 0.7 + 1e-12
    assert w.positions[1, 0] == pytest.approx(2.2 - w.time, abs=1e-12)
    assert w.positions[0, 0] == pytest.approx(0.5, abs=1e-9)


def test_elastic_ball_crushed_by_a_moving_fixed_body_stops_the_event_run_with_a_clear_error():
    # e = 1: each bounce off the piston adds 2 m/s and the gap closes after infinitely many impacts; World
    # stops at Config.max_body_events in one step (test_world), EventWorld once the ball is faster than
    # Config.max_speed_ratio times the scene's speed scale (1 m/s here, the piston's speed).
    w = piston(EventWorld, 1.0, max_speed_ratio=1e3)
    with pytest.raises(carom.ContactError, match=r"body 0 reached 1002 m/s .*Config\.max_speed_ratio=1000 times"):
        w.run(until=1.0)
    assert w.time < 0.7
    # left just before the event that found it: impacts alternate piston, wall, piston, ...; after c of them
    # the ball has met the piston ceil(c / 2) times, and integer speeds are exact in floating point
    assert abs(w.velocities[0, 0]) == 2 * math.ceil(w.collision_count / 2) == 1002
    assert 0.5 - 1e-9 <= w.positions[0, 0] <= w.positions[1, 0] - 1.0 + 1e-9


def test_event_sooner_than_the_clock_can_tell_stops_the_event_run_with_a_clear_error():
    # At t = 1e9 s the clock's resolution is 1.2e-7 s, and the ball reaches the wall 5e-9 s later: its event
    # time rounds to now, and repeating it would never move the ball. (A known limitation of absolute event
    # times, README; a crushed ball ends here too.) The run must stop, not loop.
    w = EventWorld(dim=2, config=carom.Config(max_body_events=1000))
    w.time = 1e9
    w.add_wall(point=(0, 0), normal=(1, 0))
    w.add_body(position=(0.5 + 5e-6, 0), velocity=(-1e3, 0), mass=1.0, radius=0.5)
    with pytest.raises(carom.ContactError, match=r"stalled at t=1000000000 s: more than .* = 1010 events in a row"):
        w.run(until=1e9 + 1.0)
    assert w.time == 1e9
    assert w.positions[0, 0] == 0.5 + 5e-6


@pytest.mark.filterwarnings("ignore::UserWarning")  # collapse remedies and capped rounds, expected here
@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
def test_random_scenes_with_moving_fixed_bodies_run_or_stop_with_a_clear_error(seed):
    # Fixed bodies that move through a box of bodies crush some of them against walls (about 4% of these
    # scenes within 0.5 s; before the guards, those runs never ended). Every run must end, by reaching its
    # time or with a ContactError, and no body may overlap another or a wall at any of the checks: the exact
    # engine resolves every contact, or stops before it.
    rng = np.random.default_rng(seed)
    dim = int(rng.choice([2, 3]))
    gravity = np.zeros(dim)
    gravity[-1] = -9.81 * float(rng.integers(0, 2))
    w = EventWorld(dim=dim, gravity=gravity)
    w.add_box(lower=[0.0] * dim, upper=[3.0] * dim, restitution=float(rng.choice([1.0, 0.5])))
    placed = []
    for _ in range(int(rng.integers(3, 25))):
        r = float(rng.uniform(0.1, 0.3))
        p = rng.uniform(r + 0.01, 3.0 - r - 0.01, dim)
        if all(np.linalg.norm(p - q) > r + rq + 1e-6 for q, rq in placed):
            fixed = bool(rng.random() < 0.15)
            w.add_body(position=p, velocity=rng.normal(size=dim) * 3.0, mass=None if fixed else 1.0, radius=r,
                       restitution=float(rng.choice([1.0, 0.8, 0.0])), fixed=fixed)  # fmt: skip
            placed.append((p, r))
    for until in (0.1, 0.2, 0.3, 0.4, 0.5):  # checked every 0.1 s (split runs are bitwise one run)
        stopped = False
        try:
            w.run(until=until)
        except carom.ContactError:
            stopped = True
        x, r, fixed = w.positions, w.radii, w.bodies.fixed[: w.bodies.n]
        for i in range(len(r)):
            for j in range(i + 1, len(r)):
                if not (fixed[i] and fixed[j]):
                    assert np.linalg.norm(x[i] - x[j]) >= (r[i] + r[j]) * (1 - 1e-8), (i, j)
            if not fixed[i]:
                assert np.all(x[i] >= r[i] * (1 - 1e-8)) and np.all(x[i] <= 3.0 - r[i] * (1 - 1e-8)), i
        if stopped:
            break


# ------------------------------------------------------------------ one touching rule


@pytest.mark.parametrize("engine", ["World", "EventWorld"])
@pytest.mark.parametrize("ratio", [0.5, 0.99, 1.01, 4.0])
def test_both_engines_touch_within_the_tolerance_of_the_smaller_radius(engine, ratio):
    """Ball A (R = 0.25) strikes ball B (R = 1) whose gap to ball C (R = 0.25) is ``ratio`` times the
    touching slack, ``contact_tolerance`` times the *smaller* radius (the round-off part is ~1e-16 m here).
    Within it B and C touch, so B's impact on C is solved in the same instant as A's on B (the second round);
    beyond it B crosses the gap first, ``gap / v_B`` later. Both engines follow one rule (EventWorld once
    took the sum of the radii: a gap of 4 slacks still touched there). A tolerance of 1e-6 puts the edge
    far above round-off; the times are exact to round-off (1e-15 s)."""
    tol = 1e-6
    slack = tol * 0.25
    gap = ratio * slack
    w = getattr(carom, engine)(dim=2, config=carom.Config(contact_tolerance=tol))
    a = w.add_body(position=(0.0, 0.0), velocity=(1.0, 0.0), mass=1.0, radius=0.25)
    b = w.add_body(position=(2.0, 0.0), mass=2.0, radius=1.0)
    c = w.add_body(position=(2.0 + 1.25 + gap, 0.0), mass=1.0, radius=0.25)
    times = {}
    w.on_impact(lambda imp: times.setdefault((min(imp.i, imp.j), max(imp.i, imp.j)), imp.time))
    if engine == "World":
        w.run(until=1.0, dt=0.01)
    else:
        w.run(until=1.0)
    t_ab = 0.75  # A covers the gap of 0.75 m at 1 m/s
    v_b = 2.0 / 3.0  # elastic, masses 1 and 2: B leaves at 2 m1 u / (m1 + m2)
    assert times[(a, b)] == pytest.approx(t_ab, rel=0, abs=1e-15)
    if ratio < 1.0:
        assert times[(b, c)] == times[(a, b)]  # one instant, solved in rounds
    else:
        assert times[(b, c)] == pytest.approx(t_ab + gap / v_b, rel=0, abs=1e-15)
    # either way the same elastic exchanges: A back at -1/3, then B (2/3) on C: 2/9 and 8/9 (to round-off)
    np.testing.assert_allclose(w.velocities[:, 0], [-1.0 / 3.0, 2.0 / 9.0, 8.0 / 9.0], rtol=0, atol=1e-14)


@pytest.mark.parametrize("engine", ["World", "EventWorld"])
@pytest.mark.parametrize("ratio", [0.5, 4.0])
def test_both_engines_touch_a_wall_within_the_tolerance_of_the_radius(engine, ratio):
    """The same for a wall: ball B (R = 1) at ``ratio`` times ``tol R`` from a wall is struck by A; within
    the slack its rebound off the wall is solved in A's instant, beyond it ``gap / v_B`` later."""
    tol = 1e-6
    gap = ratio * tol * 1.0
    w = getattr(carom, engine)(dim=2, config=carom.Config(contact_tolerance=tol))
    w.add_wall(point=(3.0 + gap, 0.0), normal=(-1.0, 0.0))
    a = w.add_body(position=(0.0, 0.0), velocity=(1.0, 0.0), mass=1.0, radius=0.25)
    b = w.add_body(position=(2.0, 0.0), mass=2.0, radius=1.0)
    times = {}
    w.on_impact(lambda imp: times.setdefault((imp.i, imp.j), imp.time))
    if engine == "World":
        w.run(until=0.9, dt=0.01)
    else:
        w.run(until=0.9)
    assert times[(a, b)] == pytest.approx(0.75, rel=0, abs=1e-15)
    if ratio < 1.0:
        assert times[(b, -1)] == times[(a, b)]
    else:
        assert times[(b, -1)] == pytest.approx(0.75 + gap / (2.0 / 3.0), rel=0, abs=1e-15)
