"""The time-stepped engine's motion within a step (REFERENCE.md: Impacts; Motion between impacts): every
impact found at its exact time whatever the step, nothing tunnelling."""

import math

import numpy as np
import pytest
from conftest import closed_form_impact

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
