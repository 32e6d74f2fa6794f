"""The time-stepped engine's motion within a step (docs/physics.md: Impact law; Motion between impacts): every
impact found at its exact time whatever the step, nothing tunnelling, impacts caused by acceleration."""

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
    assert w.collision_count == 1  # the right angle comes from an impact, not from both at rest


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


# ------------------------------------------------------------------ impacts caused by different accelerations


def test_ball_falling_onto_a_fixed_sphere_hits_at_the_free_fall_time():
    # A ball 1 mm above a fixed sphere: only the ball accelerates (fixed bodies have a = 0), and from rest
    # their distance closes by g t^2 / 2 alone. One step of 0.1 s spans the fall (0.0143 s): the pair must
    # not be rejected as out of reach by its relative speed (zero) while its relative acceleration closes
    # the gap. Elastic, it then bounces with period 2 t1 and exactly its energy.
    g, gap = 9.81, 1e-3
    w = carom.World(dim=3, gravity=(0, 0, -g))
    w.add_body(position=(0, 0, 0), radius=1.0, fixed=True)
    w.add_body(position=(0, 0, 1.1 + gap), mass=1.0, radius=0.1)
    times = []
    w.on_impact(lambda imp: times.append(imp.time))
    e0 = w.total_energy()
    t1 = math.sqrt(2 * gap / g)
    energy = []
    for k in range(10):
        w.run(until=0.1 * (k + 1), dt=0.1)
        energy.append(w.total_energy())
    # The contact is found to within round-off of the coordinates (eps * 1.1 m ~ 2.4e-16 m) at the impact
    # speed sqrt(2 g gap) = 0.14 m/s, about 2e-15 s = 1.2e-13 of t1 (measured 7e-14).
    assert times[0] == pytest.approx(t1, rel=1e-12, abs=0)
    # then every 2 t1, to the same round-off growing with each bounce (measured 6e-13 by the fifth)
    np.testing.assert_allclose(times[:5], t1 + 2 * t1 * np.arange(5), rtol=1e-11)
    assert len(times) == w.collision_count == math.floor((1.0 - t1) / (2 * t1)) + 1  # 35 bounces within 1 s
    # no energy gained at any step: round-off of the energy (10.8 J) over a few steps and impacts is far
    # below 1e-12 of it (~1e4 ulp; measured 0)
    assert max(energy) <= e0 * (1 + 1e-12)


def test_two_free_bodies_one_under_thrust_meet_at_the_quartic_root():
    # Body 0 is pushed by a constant thrust, body 1 is not: their separation d(t) = p + q t + r t^2 is a
    # parabola and |d|^2 = S^2 a quartic. One step of 2 s spans the approach, which their relative speed
    # (0.11 m/s) alone would not close (gap 0.72 m): only the relative acceleration brings them together.
    force, m0, m1, size = np.array([4.0, 0.0, 0.0]), 2.0, 1.0, 0.9
    x0, v0 = np.zeros(3), np.array([0.0, 0.1, 0.0])
    x1, v1 = np.array([1.6, 0.2, -0.1]), np.array([-0.05, 0.0, 0.02])
    w = carom.World(dim=3)
    w.add_body(position=x0, velocity=v0, mass=m0, radius=0.5)
    w.add_body(position=x1, velocity=v1, mass=m1, radius=0.4)
    w.add_force(carom.Thrust(body=0, force=force))
    impacts = []
    w.on_impact(impacts.append)
    w.run(until=2.0, dt=2.0)
    p, q, r = x1 - x0, v1 - v0, -0.5 * force / m0
    quartic = np.polynomial.Polynomial([p @ p - size**2, 2 * p @ q, q @ q + 2 * p @ r, 2 * q @ r, r @ r])
    t_hit = min(z.real for z in quartic.roots() if abs(z.imag) < 1e-12 and z.real > 0)
    # numpy's companion-matrix root of this simple, well-separated root is good to ~1e-15 relative, the
    # engine's contact time to round-off of the coordinates over the closing speed (1.7 m/s): ~1e-16 s
    assert [imp.time for imp in impacts] == [pytest.approx(t_hit, rel=1e-12, abs=0)]
    imp = impacts[0]
    n = (p + q * t_hit + r * t_hit**2) / size
    np.testing.assert_allclose(imp.normal, n, rtol=0, atol=1e-12)
    u0 = v0 + force / m0 * t_hit
    a0, a1 = carom.resolve_impact(m0, u0 @ n, m1, v1 @ n, 1.0)
    expected = [u0 + (a0 - u0 @ n) * n + force / m0 * (2.0 - t_hit), v1 + (a1 - v1 @ n) * n]
    # velocities of order 3 m/s, the impact time to ~1e-15 s: round-off is ~1e-15 m/s
    np.testing.assert_allclose(w.velocities, expected, rtol=0, atol=1e-12)
    # the impulse is internal: momentum gains exactly the thrust's F T
    np.testing.assert_allclose(w.momentum(), m0 * v0 + m1 * v1 + force * 2.0, rtol=0, atol=1e-13)
