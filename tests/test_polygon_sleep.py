"""Sleeping islands in worlds with polygons: a pyramid of boxes at rest falls asleep and costs nothing, wakes
before anything reaches it, and is struck exactly as an awake one would be."""

import math

import numpy as np
import pytest
from conftest import assert_same_run
from hypothesis import given, settings
from hypothesis import strategies as st

import carom
from carom.config import Config

DT = 1 / 60


def pyramid(rows=5, sleep_time=0.5):
    """Unit boxes (1 kg, e = 0.2, mu = 0.6) stacked in a pyramid on a floor, touching, at rest."""
    w = carom.World(dim=2, gravity=(0.0, -9.81), config=Config(sleep_time=sleep_time))
    w.add_wall((0.0, 0.0), (0.0, 1.0), restitution=0.2, static_friction=0.6)
    for r in range(rows):
        for k in range(rows - r):
            w.add_rectangle(1.0, 1.0, (k - (rows - r - 1) / 2, 0.5 + r), mass=1.0, restitution=0.2,
                            static_friction=0.6)  # fmt: skip
    return w


def test_a_pyramid_of_boxes_falls_asleep_and_stays_exactly_still():
    """Still from the start, the pyramid sleeps once every box has been still for `sleep_time` (and not
    before); asleep, steps change nothing at all, and they cost almost nothing against the awake held
    solve."""
    w = pyramid()
    n_before = 0
    while w.time < 0.5 - 1e-9:
        w.step(DT)
        n_before = max(n_before, int(w.sleeping.sum()))
    assert n_before == 0
    w.run(until=1.0, dt=DT)
    assert w.sleeping.all()
    x, angles = w.positions.copy(), w.angles.copy()
    w.run(until=11.0, dt=DT)
    np.testing.assert_array_equal(w.positions, x)
    np.testing.assert_array_equal(w.angles, angles)
    assert not np.any(w.velocities) and not np.any(w.angular_velocities)


def _throw(sleep_time, speed=8.0):
    """A ball thrown at the left flank of the pyramid, from far enough that it arrives after the pyramid has
    slept for a second; every impact of the run, in order."""
    w = pyramid(sleep_time=sleep_time)
    # from (-14, 1.5) at (speed, g T / 2) it falls back to 1.5 m after T = 1.5 * 8 / speed... arriving at t ~ 1.5 s
    flight = 11.2 / speed
    w.add_body((-14.0, 1.2), velocity=(speed, 9.81 * flight / 2), mass=0.5, radius=0.3, restitution=0.5,
               static_friction=0.3)  # fmt: skip
    impacts = []
    w.on_impact(lambda imp: impacts.append((imp.time, imp.i, imp.j, imp.impulse, *imp.tangential_impulse)))
    return w, impacts


def test_a_ball_on_a_sleeping_pyramid_strikes_as_on_an_awake_one():
    """The same throw onto the same pyramid, asleep and awake (sleeping off): the ball's impacts and the
    boxes' come in the same order between the same bodies, at the same times and with the same impulses. The
    sleeping boxes were at rest to round-off (their speeds, about 1e-12 m/s, set to 0 when they slept), so
    the runs agree to that: measured, 2e-12 in times and impulses."""
    runs = []
    for sleep_time in (0.5, math.inf):
        w, impacts = _throw(sleep_time)
        w.run(until=1.2, dt=DT)
        asleep = int(w.sleeping.sum())
        assert not impacts
        w.run(until=2.0, dt=DT)
        runs.append((asleep, impacts))
    (asleep, struck_asleep), (awake_asleep, struck_awake) = runs
    assert asleep == 15 and awake_asleep == 0
    assert len(struck_asleep) == len(struck_awake) >= 2
    for a, b in zip(struck_asleep, struck_awake, strict=True):
        assert a[1:3] == b[1:3]
        assert a[0] == pytest.approx(b[0], abs=1e-9)
        np.testing.assert_allclose(a[3:], b[3:], rtol=1e-9, atol=1e-9)


def test_a_body_flung_into_a_sleeping_box_within_a_step_wakes_it_first():
    """A disk rests 15 cm from a sleeping box, in its own island; a ball at 20 m/s strikes the disk 1.7 ms into
    a step, and the disk crosses the gap at 30 m/s and hits the box within the same step (at the step's start
    the disk was still and the box beyond the ball's reach, so nothing woke the box). The step is done again
    with the box awake: the box takes the disk's impact and moves, as in the same run with sleeping off.
    (Without the step done again, the box takes the disk's first blow as a fixed body: 10.8 N s, not 8.9.)"""
    results = []
    for sleep_time in (0.5, math.inf):
        w = carom.World(dim=2, gravity=(0.0, -9.81), config=Config(sleep_time=sleep_time))
        w.add_wall((0.0, 0.0), (0.0, 1.0), restitution=0.5)
        box = w.add_rectangle(0.5, 0.5, (1.0, 0.25), mass=1.0, restitution=0.8)
        disk = w.add_body((0.3, 0.3), mass=0.2, radius=0.3, restitution=0.8)
        ball = w.add_body((-20.0, 0.3), velocity=(20.0, 0.0), mass=1.0, radius=0.3, restitution=0.8)
        impacts = []
        w.on_impact(lambda imp, log=impacts: log.append((imp.time, imp.i, imp.j, imp.impulse)))
        w.run(until=0.9, dt=DT)
        asleep = w.sleeping.copy()
        w.run(until=1.1, dt=DT)
        results.append((asleep, impacts, w.velocities.copy()))
    (asleep, hits, v), (awake, hits_awake, v_awake) = results
    assert asleep[box] and asleep[disk] and not asleep[ball] and not awake.any()
    pairs = {tuple(sorted(h[1:3])) for h in hits}
    assert (min(ball, disk), max(ball, disk)) in pairs and (min(box, disk), max(box, disk)) in pairs
    assert len(hits) == len(hits_awake)
    for a, b in zip(hits, hits_awake, strict=True):
        assert a[1:3] == b[1:3]
        assert a[0] == pytest.approx(b[0], abs=1e-9)
        assert a[3] == pytest.approx(b[3], rel=1e-9)
    assert v[box, 0] > 1.0
    np.testing.assert_allclose(v, v_awake, rtol=0, atol=1e-9)


def test_resume_inside_a_sleeping_pyramid_is_exact():
    """Who sleeps and the held forces kept for waking are part of the state: a run split by
    get_state/set_state while the pyramid sleeps is bit-identical to an unbroken one, through the strike."""
    w, _ = _throw(0.5)
    w.run(until=1.2, dt=DT)
    assert w.sleeping.sum() == 15
    resumed, _ = _throw(0.5)
    resumed.set_state(w.get_state())
    np.testing.assert_array_equal(resumed.sleeping, w.sleeping)
    assert_same_run(w, resumed, 2.5, DT)


def test_a_moving_fixed_body_wakes_a_sleeping_box_before_it_reaches_it():
    """A fixed plate moving at constant speed (a piston) towards a box asleep on the floor: the box wakes
    before the plate reaches it and is struck as an awake box would be (the plate passes through nothing:
    two fixed bodies would not collide, so a box still asleep would let it through)."""
    results = []
    for sleep_time in (0.5, math.inf):
        w = carom.World(dim=2, gravity=(0.0, -9.81), config=Config(sleep_time=sleep_time))
        w.add_wall((0.0, 0.0), (0.0, 1.0), restitution=0.5)
        box = w.add_rectangle(0.5, 0.5, (2.0, 0.25), mass=1.0, restitution=0.5)
        w.add_rectangle(0.2, 1.0, (-3.0, 0.6), velocity=(3.0, 0.0), fixed=True, restitution=0.5)
        impacts = []
        w.on_impact(lambda imp, log=impacts: log.append((imp.time, imp.i, imp.j, imp.impulse)))
        w.run(until=1.0, dt=DT)
        asleep = bool(w.sleeping[box])
        w.run(until=2.0, dt=DT)
        results.append((asleep, impacts, w.positions[box].copy(), w.velocities[box].copy()))
    (asleep, hits, x, v), (awake, hits_awake, x_awake, v_awake) = results
    assert asleep and not awake
    assert len(hits) == len(hits_awake) >= 1
    for a, b in zip(hits, hits_awake, strict=True):
        assert a[1:3] == b[1:3]
        assert a[0] == pytest.approx(b[0], abs=1e-9)
        assert a[3] == pytest.approx(b[3], rel=1e-9)
    assert x[0] > 2.0 and v[0] > 0.0
    np.testing.assert_allclose(x, x_awake, rtol=0, atol=1e-9)
    np.testing.assert_allclose(v, v_awake, rtol=0, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 60), st.booleans())
def test_the_sleepers_an_awake_body_may_reach_are_those_of_a_search_over_every_pair(seed, n, large):
    """`sleep.reached` takes its pairs from the shared broad phase: it must find exactly the sleeping bodies
    whose bounding circle an awake one's reach (plus the slop) touches, as a search over every pair does."""
    from carom.step import sleep

    rng = np.random.default_rng(seed)
    x, size, reach = rng.uniform(0, 5, (n, 2)), rng.uniform(0.05, 0.5, n), rng.uniform(0, 0.3, n)
    if large:
        size[0] = 3.0  # (listed with every body by the broad phase)
    awake = rng.random(n) < 0.5
    asleep = ~awake & (rng.random(n) < 0.8)
    gap = np.linalg.norm(x[:, None] - x[None], axis=2) - size[:, None] - size[None]
    expected = np.any(awake[:, None] & asleep[None] & (gap <= reach[:, None] + 0.01), axis=0)
    assert np.array_equal(sleep.reached(x, size, reach, awake, asleep, 0.01), expected)
