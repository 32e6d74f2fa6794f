"""Coulomb friction, spin and rolling resistance, against exact answers.

Notation: k = I / (m R^2) (2/5 solid sphere, 1/2 disk); the contact point's slip u = v + w x r.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carom

G = 9.81


def floor_world(dim, mu_s=0.3, mu_k=0.2, e=0.5, **kwargs):
    w = carom.World(dim=dim, gravity=(0, 0, -G) if dim == 3 else (0, -G), **kwargs)
    w.add_wall(point=(0,) * dim, normal=up(dim), restitution=e, static_friction=mu_s, kinetic_friction=mu_k)
    return w


def up(dim):
    return np.eye(dim)[dim - 1]


def along(dim, s):
    return np.eye(dim)[0] * s


def spin_about_roll(dim, v, radius):
    """The angular velocity of a ball rolling at v along +x on a floor."""
    return (0.0, v / radius, 0.0) if dim == 3 else -v / radius


def k_of(dim):
    return 0.4 if dim == 3 else 0.5


# ---------------------------------------------------------------- impacts (Coulomb impulse model)
@pytest.mark.parametrize(("mu", "vt", "spin"), [(0.1, 2.28, 18.0), (0.5, 15 / 7, 150 / 7)])
def test_impact_on_floor_matches_the_coulomb_impulse(mu, vt, spin):
    """1 kg solid sphere, R = 0.1, e = 0.8, hits a floor at (v_t, v_n) = (3, -4) m/s: J_n = 7.2 N s; the
    tangential impulse is mu J_n (sliding throughout) or what stops the slip, 3 / (1/m + R^2/I) = 6/7."""
    w = carom.World(dim=3)
    w.add_wall(point=(0, 0, 0), normal=(0, 0, 1), restitution=0.8, static_friction=mu)
    w.add_body(position=(0, 0, 0.101), velocity=(3, 0, -4), mass=1.0, radius=0.1, restitution=0.8,
               static_friction=mu)  # fmt: skip
    impacts = []
    w.on_impact(impacts.append)
    w.run(until=0.01, dt=0.01)
    assert len(impacts) == 1
    v, om = w.velocities[0], w.angular_velocities[0]
    assert v[0] == pytest.approx(vt, rel=1e-12, abs=1e-12)
    assert v[2] == pytest.approx(3.2, rel=1e-12)
    assert om[1] == pytest.approx(spin, rel=1e-12)
    assert abs(v[1]) + abs(om[0]) + abs(om[2]) == 0.0
    # the friction impulse on j (the floor) points along the ball's slip, +x: the ball gets the opposite
    np.testing.assert_allclose(impacts[0].tangential_impulse, [3 - vt, 0, 0], rtol=1e-12, atol=1e-15)


def test_impact_between_spinning_balls_conserves_momentum_and_angular_momentum():
    w = carom.World(dim=3)
    w.add_body(position=(0, 0, 0), velocity=(1.0, 0.3, -0.2), angular_velocity=(3, -2, 5), mass=1.0, radius=0.1,
               static_friction=0.4, restitution=0.7)  # fmt: skip
    w.add_body(position=(0.25, 0.05, 0.02), velocity=(-0.5, 0, 0.1), angular_velocity=(-1, 4, 0), mass=2.5,
               radius=0.12, static_friction=0.6, restitution=0.9, inertia=0.01)  # fmt: skip
    origin = (0.3, -1.0, 2.0)
    p0, l0, e0 = w.momentum(), w.angular_momentum(origin), w.kinetic_energy()
    w.run(until=1.0, dt=0.1)
    assert w.collision_count == 1
    np.testing.assert_allclose(w.momentum(), p0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(w.angular_momentum(origin), l0, rtol=0, atol=1e-12 * np.abs(l0).max())
    assert w.kinetic_energy() < e0


@settings(max_examples=60, deadline=None)
@given(
    dim=st.sampled_from([2, 3]),
    v=st.lists(st.floats(-3, 3), min_size=6, max_size=6),
    spin=st.lists(st.floats(-50, 50), min_size=6, max_size=6),
    mu=st.floats(0, 1.5),
    e=st.floats(0, 1),
    mass=st.floats(0.1, 10),
    offset=st.floats(-0.9, 0.9),
)
def test_impacts_never_gain_energy_and_conserve_angular_momentum(dim, v, spin, mu, e, mass, offset):
    """Two free balls with any spins and any friction: the kinetic energy (with rotation) never rises, and
    momentum and angular momentum about any point are conserved to round-off."""
    w = carom.World(dim=dim)
    r = 0.1
    x1 = np.zeros(dim)
    x2 = np.zeros(dim)
    x2[0] = 2 * r * math.sqrt(1 - offset**2) + 1e-12
    x2[1] = 2 * r * offset
    w.add_body(position=x1, velocity=np.array(v[:dim]) + along(dim, 1.0), mass=1.0, radius=r, restitution=e,
               static_friction=mu, angular_velocity=spin[:3] if dim == 3 else spin[0])  # fmt: skip
    w.add_body(position=x2, velocity=v[3 : 3 + dim], mass=mass, radius=r, restitution=e, static_friction=mu,
               angular_velocity=spin[3:] if dim == 3 else spin[3])  # fmt: skip
    origin = np.linspace(1.0, -2.0, dim)
    p0, l0, e0 = w.momentum(), w.angular_momentum(origin), w.kinetic_energy()
    w.step(1e-3)
    scale = e0 + 1.0
    assert w.kinetic_energy() <= e0 + 1e-12 * scale
    np.testing.assert_allclose(w.momentum(), p0, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(w.angular_momentum(origin), l0, rtol=0, atol=1e-11 * scale)


def test_a_ball_dropped_straight_onto_a_rough_floor_does_not_spin():
    """A symmetric scene stays symmetric: no slip, no friction, no spurious spin."""
    w = floor_world(3, e=0.8)
    w.add_body(position=(0, 0, 1.0), mass=1.0, radius=0.1, restitution=0.8, static_friction=0.5)
    w.run(until=2.0, dt=0.01)
    assert w.collision_count >= 3
    assert np.all(w.angular_velocities == 0.0)
    assert np.all(w.velocities[0, :2] == 0.0)


# ---------------------------------------------------------------- sliding, then rolling
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("dt", [1e-2, 0.3])
@pytest.mark.parametrize("spin0", [0.0, 10.0, -40.0])
def test_a_struck_ball_slides_then_rolls_at_the_exact_time_and_speed(dim, dt, spin0):
    """Struck at v0 with spin w0 (about the rolling axis), a ball slides with deceleration mu_k g until its
    slip vanishes, at t = (v0 - R w0) / ((1 + 1/k) mu_k g), then rolls at (v0 + k R w0) / (1 + k) for
    ever: both exact whatever dt (backspin R w0 = -v0 gives 3 v0 / 7 for a sphere)."""
    mu_s, mu_k, radius, v0 = 0.3, 0.2, 0.05, 2.0
    k = k_of(dim)
    w = floor_world(dim, mu_s, mu_k)
    roll = spin0 if dim == 3 else -spin0
    w.add_body(position=up(dim) * radius, velocity=along(dim, v0), mass=0.2, radius=radius, restitution=0.5,
               static_friction=mu_s, kinetic_friction=mu_k,
               angular_velocity=(0, roll, 0) if dim == 3 else roll)  # fmt: skip
    mu = math.sqrt(mu_k * mu_k)  # (geometric rule: the wall's and the ball's)
    slip0 = v0 - radius * spin0
    t_roll = slip0 / ((1 + 1 / k) * mu * G)
    v_roll = (v0 + k * radius * spin0) / (1 + k)
    until = 1.2
    w.run(until=until, dt=dt)
    x_exact = v0 * t_roll - 0.5 * np.sign(slip0) * mu * G * t_roll**2 + v_roll * (until - t_roll)
    assert w.velocities[0, 0] == pytest.approx(v_roll, rel=1e-9)
    assert w.positions[0, 0] == pytest.approx(x_exact, rel=1e-9)
    rolling = w.angular_velocities[0, 1] if dim == 3 else -w.angular_velocities[0]
    assert rolling * radius == pytest.approx(v_roll, rel=1e-9)
    v_then = w.velocities[0, 0]
    w.run(until=until + 2.0, dt=dt)
    assert w.velocities[0, 0] == v_then  # rolling without resistance: exactly constant, no stick-slip chatter
    assert w.positions[0, dim - 1] == pytest.approx(radius, abs=1e-4 * radius)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("dt", [1e-3, 0.05, 0.4])
def test_a_sliding_ball_reaches_another_at_the_exact_time(dim, dt):
    """A ball struck without spin slides, decelerating at mu_k g, into a resting ball a distance d ahead
    before it starts to roll: the impact is at the root of d = v0 t - mu_k g t^2 / 2, whatever dt (the
    billiards benchmark's cue ball). Tolerance: an impact fires once the gap is within contact_tolerance R,
    so up to contact_tolerance R / v early; 4x that for the round-off of the root and the positions."""
    mu, radius, v0, d = 0.2, 0.028575, 8.0, 0.9
    w = floor_world(dim, mu, mu, friction_rule="max")
    w.add_bodies([up(dim) * radius, up(dim) * radius + along(dim, 2 * radius + d)], [along(dim, v0), 0 * up(dim)],
                 masses=0.17, radii=radius, restitution=1.0)  # fmt: skip
    times = []
    w.on_impact(lambda impact: times.append(impact.time) if impact.j == 1 else None)
    while not times:
        w.step(dt)
    a = mu * G
    t_exact = (v0 - math.sqrt(v0 * v0 - 2 * a * d)) / a
    assert t_exact < 2 * v0 / (7 * a)  # still sliding when it arrives
    v_arrival = v0 - a * t_exact
    assert times[0] == pytest.approx(t_exact, rel=0, abs=4 * w.config.contact_tolerance * radius / v_arrival)


@pytest.mark.parametrize("dim", [2, 3])
def test_touching_balls_sliding_together_decelerate_at_the_kinetic_coefficient(dim):
    """Two disks (spheres) touching side by side, both struck to v0 along their line without spin, on a floor
    with mu_s = 0.5, mu_k = 0.2: each has two contacts, so its floor contact is held at the velocity level
    (the slip taken out over a step as far as the cone allows). While they slide, the cone must be the
    kinetic one: v = v0 - mu_k g t at every step end (1e-12; mu_s would give 2.5 times the deceleration).
    Then both roll at (v + k R w)/(1 + k) = v0 / (1 + k): 2 v0 / 3 for disks, 5 v0 / 7 for spheres, exact
    whatever step the change falls in (angular momentum about the contact point is conserved by the floor's
    force). In 3D the clusters are held too (since held contacts no longer break away), so this is the 3D
    held path's kinetic cone."""
    radius, v0, dt = 0.1, 3.0, 0.01
    k = 0.5 if dim == 2 else 0.4
    w = floor_world(dim, 0.5, 0.2, friction_rule="max")
    w.add_bodies([up(dim) * radius, up(dim) * radius + along(dim, 2 * radius)], [along(dim, v0)] * 2, masses=1.0,
                 radii=radius, restitution=0.5)  # fmt: skip
    t_roll = k * v0 / ((1 + k) * 0.2 * G)
    while w.time + dt < t_roll:
        w.step(dt)
        assert w.velocities[:, 0] == pytest.approx(v0 - 0.2 * G * w.time, rel=1e-12)
    w.run(until=t_roll + 0.5, dt=dt)
    assert w.velocities[:, 0] == pytest.approx(v0 / (1 + k), rel=1e-9)
    spin = -w.angular_velocities if dim == 2 else w.angular_velocities[:, 1]
    assert spin * radius == pytest.approx(v0 / (1 + k), rel=1e-9)
    assert np.abs(w.velocities[:, 1:]).max() <= 1e-12


@pytest.mark.parametrize("dim", [2, 3])
def test_a_sliding_ball_is_exact_while_others_rest_on_each_other(dim):
    """A ball sliding alone on the floor while a column of three rests elsewhere: its contact is solved
    together with the column's, but touches nothing else, so its normal force is exactly m g and it
    decelerates at exactly mu_k g (round-off, 1e-12 relative). Solved to the set's tolerance instead, it
    was 6.8e-9 short on a table of 16 billiard balls."""
    mu, radius, v0, dt = 0.2, 0.05, 3.0, 0.01
    w = floor_world(dim, mu, mu, friction_rule="max")
    column = [up(dim) * radius * (1 + 2 * k) + along(dim, 1.0) for k in range(3)]
    w.add_bodies([up(dim) * radius, *column], [along(dim, v0)] + [0 * up(dim)] * 3, masses=[1.0, 0.5, 0.5, 0.5],
                 radii=radius, restitution=0.5)  # fmt: skip
    for k in range(1, 6):
        w.step(dt)
        assert w.velocities[0, 0] == pytest.approx(v0 - mu * G * k * dt, rel=1e-12)
        assert w.velocities[0, dim - 1] == 0.0


@pytest.mark.parametrize("dim", [2, 3])
def test_a_ball_on_a_fixed_body_moves_as_if_no_other_ball_touched_that_body(dim):
    """A ball struck on top of a large fixed ball (its ground), with and without a second ball rolling off
    the far side of the same fixed ball: the first ball slides, then rolls (from about 0.1 s), the same way
    to round-off. A body of infinite mass passes nothing from one contact to another, so each contact is
    solved alone, its regime changes exact events; held with the other as one cluster, it slid to rolling
    to first order in dt (3.5e-5 m apart after 0.3 s). At 0.3 s it rolls: the slip of its contact point is
    below 1e-5 of its speed (measured 1e-6 at this dt: each step holds the friction force constant while the
    contact moves over the curved ground; 1e-8 at dt = 1 ms), where it started at 1 m/s."""
    mu, radius, ground = 0.3, 0.05, 5.0

    def run(other):
        w = carom.World(dim=dim, gravity=-G * up(dim))
        w.add_body(position=-ground * up(dim), velocity=0 * up(dim), radius=ground, fixed=True, restitution=0.5,
                   static_friction=mu)  # fmt: skip
        w.add_body(position=radius * up(dim), velocity=along(dim, 1.0), mass=1.0, radius=radius, restitution=0.5,
                   static_friction=mu)  # fmt: skip
        if other:
            side = np.eye(dim)[0] * math.sin(-0.8) + up(dim) * math.cos(-0.8)
            w.add_body(position=-ground * up(dim) + (ground + radius) * side, velocity=0 * up(dim), mass=1.0,
                       radius=radius, restitution=0.5, static_friction=mu)  # fmt: skip
        w.run(until=0.3, dt=0.01)
        x, v, spin = w.positions[1], w.velocities[1], w.angular_velocities[1]
        r = -radius * (x - w.positions[0]) / np.linalg.norm(x - w.positions[0])  # centre to contact point
        point = v + (spin * np.array([-r[1], r[0]]) if dim == 2 else np.cross(spin, r))
        assert np.linalg.norm(point) <= 1e-5 * np.linalg.norm(v)
        return x, v, np.atleast_1d(spin)

    for alone, beside in zip(run(False), run(True), strict=True):
        np.testing.assert_allclose(beside, alone, rtol=0, atol=1e-12)


def test_backspin_leaves_three_sevenths():
    w = floor_world(3)
    v0, radius = 1.5, 0.03
    w.add_body(position=(0, 0, radius), velocity=(v0, 0, 0), angular_velocity=(0, -v0 / radius, 0), mass=0.17,
               radius=radius, static_friction=0.3, kinetic_friction=0.2)  # fmt: skip
    w.run(until=2.0, dt=0.05)
    assert w.velocities[0, 0] == pytest.approx(3 * v0 / 7, rel=1e-9)


def test_a_rough_floor_alone_gives_friction_under_the_max_rule():
    """Only the wall is rough (the ball's coefficients are 0): with friction_rule="max" the contact has the
    wall's mu, and the ball still slides into rolling at 5 v0 / 7."""
    w = floor_world(3, 0.3, 0.2, friction_rule="max")
    w.add_body(position=(0, 0, 0.05), velocity=(2.0, 0, 0), mass=0.2, radius=0.05)
    w.run(until=1.0, dt=0.01)
    assert w.velocities[0, 0] == pytest.approx(5 * 2.0 / 7, rel=1e-9)


def test_a_rolling_ball_turns_its_quaternion_about_its_axis():
    """Rolling at v about +y, the orientation after t is the rotation by angle w t about y:
    q = (cos(w t / 2), 0, sin(w t / 2), 0), to round-off over many steps."""
    v, radius, t = 0.7, 0.05, 1.3
    w = floor_world(3)
    w.add_body(position=(0, 0, radius), velocity=(v, 0, 0), angular_velocity=(0, v / radius, 0), mass=0.2,
               radius=radius, static_friction=0.3)  # fmt: skip
    w.run(until=t, dt=0.01)
    angle = v / radius * t
    np.testing.assert_allclose(w.orientations[0], [math.cos(angle / 2), 0, math.sin(angle / 2), 0], atol=1e-12)


# ---------------------------------------------------------------- slopes and pushes
def slope_world(dim, theta, mu_s, mu_k, radius=0.1):
    c, s = math.cos(theta), math.sin(theta)
    normal = np.array([-s, c]) if dim == 2 else np.array([-s, 0, c])
    w = carom.World(dim=dim, gravity=(0, -G) if dim == 2 else (0, 0, -G))
    w.add_wall(point=np.zeros(dim), normal=normal, static_friction=mu_s, kinetic_friction=mu_k, restitution=0.0)
    w.add_body(position=radius * normal, mass=1.0, radius=radius, static_friction=mu_s, kinetic_friction=mu_k,
               restitution=0.0)  # fmt: skip
    down = -np.array([c, s]) if dim == 2 else -np.array([c, 0, s])
    return w, down


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("theta", [0.2, 0.6])
def test_a_ball_on_a_slope_rolls_or_slides_as_the_threshold_says(dim, theta):
    """Rolls at g sin(theta) / (1 + k) while mu_s >= k tan(theta) / (1 + k); below, slides at
    g (sin(theta) - mu_k cos(theta)), spinning up at mu_k g cos(theta) / (k R)."""
    k, radius, t = k_of(dim), 0.1, 0.7
    threshold = k * math.tan(theta) / (1 + k)
    w, down = slope_world(dim, theta, threshold * 1.001, threshold * 1.001, radius)
    w.run(until=t, dt=0.01)
    assert w.velocities[0] @ down == pytest.approx(G * math.sin(theta) / (1 + k) * t, rel=1e-9)
    mu_s, mu_k = threshold * 0.9, threshold * 0.5
    w, down = slope_world(dim, theta, mu_s, mu_k, radius)
    w.run(until=t, dt=0.01)
    assert w.velocities[0] @ down == pytest.approx(G * (math.sin(theta) - mu_k * math.cos(theta)) * t, rel=1e-9)
    spin = np.linalg.norm(w.angular_velocities[0])
    assert spin == pytest.approx(mu_k * G * math.cos(theta) / (k * radius) * t, rel=1e-9)


@pytest.mark.parametrize("dim", [2, 3])
def test_a_push_through_the_centre_rolls_the_ball_up_to_the_static_limit(dim):
    """A horizontal thrust F through the centre of a ball resting on a floor: it rolls at F / (m (1 + k))
    while F <= mu_s m g (1 + k) / k; beyond, it slides at F / m - mu_k g."""
    k, mass, t = k_of(dim), 1.0, 0.5
    limit = 0.3 * mass * G * (1 + k) / k
    for force, accel in ((0.99 * limit, 0.99 * limit / (mass * (1 + k))), (1.2 * limit, 1.2 * limit / mass - 0.2 * G)):
        w = floor_world(dim)
        w.add_body(position=up(dim) * 0.1, mass=mass, radius=0.1, static_friction=0.3, kinetic_friction=0.2)
        w.add_force(carom.Thrust(body=0, force=along(dim, force)))
        w.run(until=t, dt=0.01)
        assert w.velocities[0, 0] == pytest.approx(accel * t, rel=1e-9)


# ---------------------------------------------------------------- rolling resistance
@pytest.mark.parametrize("dim", [2, 3])
def test_rolling_resistance_slows_uniformly_and_stops_without_creeping_back(dim):
    """A rolling ball slows at mu_r g / (1 + k) and stops after v^2 (1 + k) / (2 mu_r g), then stays."""
    k, mu_r, v, radius = k_of(dim), 0.01, 1.0, 0.1
    w = floor_world(dim)
    w.add_body(position=up(dim) * radius, velocity=along(dim, v), angular_velocity=spin_about_roll(dim, v, radius),
               mass=1.0, radius=radius, static_friction=0.3, rolling_resistance=mu_r)  # fmt: skip
    w.run(until=0.5, dt=0.01)
    assert (v - w.velocities[0, 0]) / 0.5 == pytest.approx(mu_r * G / (1 + k), rel=1e-9)
    t_stop = v * (1 + k) / (mu_r * G)
    w.run(until=t_stop + 1.0, dt=0.01)
    distance = v * v * (1 + k) / (2 * mu_r * G)
    assert w.positions[0, 0] == pytest.approx(distance, rel=1e-9)
    x_stop = w.positions[0, 0]
    w.run(until=t_stop + 5.0, dt=0.01)
    assert w.positions[0, 0] == x_stop
    assert np.all(w.velocities[0] == 0.0)


@pytest.mark.parametrize("dim", [2, 3])
def test_two_stacked_balls_turning_like_gears_slow_at_the_effective_radius(dim):
    """Two equal balls (R = 0.1 m, 1 kg) stacked on a smooth floor, turning like meshed gears (w and -w about
    a horizontal axis: their contact point does not slip); the upper one also spins about the vertical (3D).
    Only the upper ball has rolling resistance and spinning friction (the "max" rule gives them to the pair;
    the floor contact has none). The lower ball touches two things, so the pair is held with its cluster
    (the joint solve). By symmetry the friction force is 0; the rolling torque mu_r N R_eff, with
    R_eff = R/2 and N = m g, brings the rolling rate w_up - w_down down at 2 mu_r g R_eff / (k R^2), and the
    spinning torque the relative spin at 2 mu_sp g R_eff / (k R^2). Measured after the stack has settled
    (0.2 s, when the sink into the resting gap is over): 5e-8 relative, the held solve's normal force being
    converged to force_tolerance (1e-8) of the acceleration scale; R instead of R_eff doubles both rates."""
    radius, mu_r, mu_sp, w0, s0 = 0.1, 0.02, 0.05, 10.0, 8.0
    k, r_eff = k_of(dim), radius / 2
    w = floor_world(dim, 0.0, 0.0, friction_rule="max")
    w.add_body(position=radius * up(dim), mass=1.0, radius=radius, restitution=0.5,
               angular_velocity=(0, -w0, 0) if dim == 3 else -w0)  # fmt: skip
    w.add_body(position=3 * radius * up(dim), mass=1.0, radius=radius, restitution=0.5, static_friction=0.5,
               rolling_resistance=mu_r, spinning_friction=mu_sp,
               angular_velocity=(0, w0, s0) if dim == 3 else w0)  # fmt: skip

    def rates():  # (rolling rate, spinning rate) of the pair
        spin = w.angular_velocities.reshape(2, -1)
        return spin[1, dim - 2] - spin[0, dim - 2], spin[1, -1] - spin[0, -1]

    w.run(until=0.2, dt=0.01)
    before = rates()
    w.run(until=0.5, dt=0.01)
    after = rates()
    assert (before[0] - after[0]) / 0.3 == pytest.approx(2 * mu_r * G * r_eff / (k * radius**2), rel=1e-6)
    if dim == 3:
        assert (before[1] - after[1]) / 0.3 == pytest.approx(2 * mu_sp * G * r_eff / (k * radius**2), rel=1e-6)
    assert np.abs(w.velocities).max() <= 1e-9


# ---------------------------------------------------------------- spinning friction (3D)
@pytest.mark.parametrize("dt", [1e-3, 0.05, 0.3])
def test_spinning_friction_stops_a_ball_spinning_in_place_at_the_exact_time(dt):
    """A ball spinning about the vertical on a floor feels the torque mu_sp N R about the normal: its spin
    falls at 5 mu_sp g / (2 R) and stops at w0 / that (an event: no spinning back), whatever dt; nothing
    else moves."""
    radius, w0, mu_sp = 0.05, 20.0, 0.4
    w = floor_world(3)
    w.add_body(position=(0, 0, radius), mass=0.2, radius=radius, static_friction=0.3, spinning_friction=mu_sp,
               angular_velocity=(0, 0, w0))  # fmt: skip
    rate = 5 * mu_sp * G / (2 * radius)
    t_stop = w0 / rate
    w.run(until=0.37 * t_stop, dt=dt)
    assert w.angular_velocities[0, 2] == pytest.approx(w0 - rate * w.time, rel=1e-12)
    w.run(until=t_stop + 1.0, dt=dt)
    assert np.all(w.angular_velocities[0] == 0.0)
    assert np.all(w.velocities[0] == 0.0) and np.all(w.positions[0] == (0, 0, radius))


def test_spinning_and_rolling_resistance_act_apart():
    """A ball rolling along x and spinning about the vertical: rolling resistance slows the roll at
    mu_r g / (1 + k), spinning friction the spin at 5 mu_sp g / (2 R), each as if alone (the torques are
    tangential and normal), until the spin stops (an event) and after."""
    radius, v, w0, mu_r, mu_sp = 0.1, 1.0, 5.0, 0.01, 0.05
    k = k_of(3)
    w = floor_world(3)
    w.add_body(position=(0, 0, radius), velocity=(v, 0, 0), angular_velocity=(0, v / radius, w0), mass=1.0,
               radius=radius, static_friction=0.3, rolling_resistance=mu_r, spinning_friction=mu_sp)  # fmt: skip
    spin_rate = 5 * mu_sp * G / (2 * radius)
    for until in (0.5 * w0 / spin_rate, 1.5 * w0 / spin_rate):
        w.run(until=until, dt=0.02)
        assert w.velocities[0, 0] == pytest.approx(v - mu_r * G / (1 + k) * w.time, rel=1e-9)
        assert w.angular_velocities[0, 1] * radius == pytest.approx(w.velocities[0, 0], rel=1e-9)
        assert w.angular_velocities[0, 2] == pytest.approx(max(w0 - spin_rate * w.time, 0.0), rel=1e-9, abs=0.0)
        assert w.velocities[0, 1] == 0.0


def test_spinning_friction_changes_nothing_in_2d():
    """In 2D every contact normal lies in the plane and spin is about the axis normal to it: there is no
    spinning about a normal, so the coefficient changes no bit of a frictional pile's run."""
    runs = []
    for mu_sp in (0.0, 0.7):
        w = floor_world(2, friction_rule="max")
        w.add_box(lower=(-0.5, 0.0), upper=(0.5, 2.0), static_friction=0.4)
        x = [(-0.25 + 0.21 * (k % 3) + 0.02 * (k // 3), 0.1 + 0.25 * k) for k in range(8)]
        w.add_bodies(x, [(0.3 * (-1) ** k, 0.0) for k in range(8)], masses=1.0, radii=0.1, restitution=0.3,
                     static_friction=0.5, rolling_resistance=0.02, spinning_friction=mu_sp,
                     angular_velocities=[3.0 * k for k in range(8)])  # fmt: skip
        w.run(until=1.0, dt=0.01)
        runs.append((w.positions.copy(), w.velocities.copy(), w.angular_velocities.copy()))
    for a, b in zip(*runs, strict=True):
        assert np.array_equal(a, b)


# ---------------------------------------------------------------- billiards
def billiard_pair(spin, gap=0.2):
    radius, mass, v = 0.0286, 0.17, 1.0
    w = floor_world(3, 0.2, 0.2)
    cue = w.add_body(position=(0, 0, radius), velocity=(v, 0, 0), angular_velocity=(0, spin * v / radius, 0),
                     mass=mass, radius=radius, static_friction=0.2, restitution=1.0)  # fmt: skip
    ball = w.add_body(position=(2 * radius + gap, 0, radius), mass=mass, radius=radius, static_friction=0.2,
                      restitution=1.0)  # fmt: skip
    w.set_pair_friction(cue, ball, 0.0)
    return w, v


def test_follow_shot():
    """A rolling cue ball hits an equal ball head on (e = 1, smooth between balls): the object ball leaves at
    v and ends rolling at 5v/7; the cue ball stops, and its kept spin pulls it forward to roll at 2v/7."""
    w, v = billiard_pair(1.0)
    w.run(until=3.0, dt=0.01)
    assert w.collision_count == 1
    np.testing.assert_allclose(w.velocities[:, 0], [2 * v / 7, 5 * v / 7], rtol=1e-9)


def test_draw_shot():
    """Backspin (R w = -v) at the moment of impact: the cue ball stops, then draws back to roll at -2v/7."""
    w, v = billiard_pair(-1.0, gap=0.0)
    w.run(until=3.0, dt=0.01)
    np.testing.assert_allclose(w.velocities[:, 0], [-2 * v / 7, 5 * v / 7], rtol=1e-9)


# ---------------------------------------------------------------- order, restart, smooth bodies
def test_the_order_bodies_are_added_in_changes_nothing():
    rng = np.random.default_rng(4)
    n = 12
    pos = np.column_stack([np.arange(n) * 0.25, np.zeros(n), 0.1 + rng.uniform(0, 0.3, n)])
    vel = rng.normal(0, 1, (n, 3))
    spin = rng.normal(0, 10, (n, 3))

    def run(order):
        w = floor_world(3, 0.4, 0.3, e=0.6)
        w.add_box(lower=(-0.5, -1, 0), upper=(3.5, 1, 2), restitution=0.6, static_friction=0.4, kinetic_friction=0.3)
        w.add_bodies(pos[order], velocities=vel[order], masses=1.0, radii=0.1, restitution=0.6, static_friction=0.4,
                     kinetic_friction=0.3, angular_velocities=spin[order])  # fmt: skip
        w.run(until=1.0, dt=0.01)
        back = np.argsort(order)
        return w.positions[back], w.velocities[back], w.angular_velocities[back]

    a = run(np.arange(n))
    b = run(rng.permutation(n))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-9)


def test_exact_restart_mid_slide():
    w = floor_world(3)
    w.add_body(position=(0, 0, 0.05), velocity=(2, 1, 0), angular_velocity=(5, 0, 3), mass=0.2, radius=0.05,
               static_friction=0.3, kinetic_friction=0.2, rolling_resistance=0.01)  # fmt: skip
    w.run(until=0.1, dt=0.01)
    state = w.get_state()
    w.run(until=1.0, dt=0.01)
    other = floor_world(3)
    other.add_body(position=(0, 0, 0.05), mass=0.2, radius=0.05)
    other.set_state(state)
    other.run(until=1.0, dt=0.01)
    for name in ("positions", "velocities", "angular_velocities", "orientations"):
        np.testing.assert_array_equal(getattr(other, name), getattr(w, name))


def test_without_friction_spin_changes_no_trajectory():
    """Smooth bodies: spin never couples to motion, so spinning copies of a scene move identically, and
    each keeps its spin while its orientation turns at that rate."""
    def run(spin):
        w = carom.World(dim=2, gravity=(0, -G))
        w.add_box(lower=(0, 0), upper=(2, 2), restitution=0.9)
        w.add_bodies([[0.5, 0.5], [1.0, 1.2], [1.5, 0.4]], velocities=[[1, 2], [-1, 0], [0.5, -3]], masses=1.0,
                     radii=0.1, restitution=0.9, angular_velocities=spin)  # fmt: skip
        w.run(until=2.0, dt=0.01)
        return w

    still, spinning = run(0.0), run([3.0, -1.0, 0.5])
    np.testing.assert_array_equal(still.positions, spinning.positions)
    np.testing.assert_array_equal(spinning.angular_velocities, [3.0, -1.0, 0.5])
    np.testing.assert_allclose(spinning.orientations, [6.0, -2.0, 1.0], rtol=1e-12)


# ---------------------------------------------------------------- input
@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"static_friction": -0.1}, "static_friction"),
        ({"static_friction": float("nan")}, "static_friction"),
        ({"static_friction": 0.2, "kinetic_friction": 0.3}, "kinetic_friction"),
        ({"rolling_resistance": -1}, "rolling_resistance"),
        ({"spinning_friction": -0.5}, "spinning_friction"),
        ({"spinning_friction": float("inf")}, "spinning_friction"),
        ({"inertia": 0.0}, "inertia"),
        ({"inertia": -2.0}, "inertia"),
        ({"angular_velocity": (1, 2)}, "angular_velocity"),
        ({"angular_velocity": (1, 2, float("inf"))}, "angular_velocity"),
    ],
)
def test_bad_friction_input_names_the_field(kwargs, field):
    w = carom.World(dim=3)
    with pytest.raises(ValueError, match=field):
        w.add_body(position=(0, 0, 0), mass=1.0, radius=0.1, **kwargs)


def test_bad_wall_and_pair_friction_and_rule():
    w = carom.World(dim=2)
    with pytest.raises(ValueError, match="wall kinetic_friction"):
        w.add_wall(point=(0, 0), normal=(0, 1), static_friction=0.1, kinetic_friction=0.2)
    with pytest.raises(ValueError, match="angular_velocity"):
        w.add_body(position=(0, 1), mass=1.0, radius=0.1, angular_velocity=(0, 0, 1))
    a = w.add_body(position=(0, 1), mass=1.0, radius=0.1)
    b = w.add_body(position=(1, 1), mass=1.0, radius=0.1)
    with pytest.raises(ValueError, match="pair static_friction"):
        w.set_pair_friction(a, b, -1.0)
    with pytest.raises(ValueError, match="friction_rule"):
        carom.World(dim=2, friction_rule="harmonic")


def test_views_of_spin():
    w = carom.World(dim=3)
    w.add_body(position=(0, 0, 0), mass=2.0, radius=0.5, angular_velocity=(1, 2, 3))
    w.add_body(position=(2, 0, 0), radius=0.5, fixed=True, angular_velocity=(0, 0, 7))
    np.testing.assert_array_equal(w.inertias, [0.4 * 2.0 * 0.25, np.inf])
    np.testing.assert_array_equal(w.orientations, [[1, 0, 0, 0], [1, 0, 0, 0]])
    assert w.kinetic_energy() == pytest.approx(0.5 * 0.2 * 14)
    w2 = carom.World(dim=2)
    w2.add_body(position=(0, 0), mass=2.0, radius=0.5, angular_velocity=1.5, inertia=3.0)
    assert w2.angular_velocities.shape == (1,)
    assert w2.inertias[0] == 3.0
    assert w2.angular_momentum() == pytest.approx(4.5)


# ---------------------------------------------------------------- piles with friction
def frictional_pile(n=60, dim=2):
    """A pile poured with friction 0.5 and rolling resistance 0.05 (in 3D also spinning friction 0.05: without
    it a sphere left spinning about the vertical keeps spinning, rightly, and its pile awake)."""
    from carom.canonical import pile

    spinning = 0.05 if dim == 3 else 0.0
    return pile(n, dim=dim, seed=1, e=0.5, radius=0.1, g=9.0, friction=0.5, rolling_resistance=0.05,
                spinning_friction=spinning)  # fmt: skip


def deepest_overlap(w):
    x, r = w.positions, w.radii
    d = np.linalg.norm(x[:, None] - x[None], axis=-1) + np.eye(len(x)) * 1e9
    return max(0.0, -float((d - r[:, None] - r[None]).min()))


def test_a_frictional_pile_keeps_overlaps_within_the_resting_gap():
    w = frictional_pile()
    gap = w.config.resting_gap * 0.1
    for _ in range(120):
        w.step(1 / 60)
        assert deepest_overlap(w) <= gap * (1 + 1e-6)
    assert np.all(np.isfinite(w.positions)) and np.all(np.isfinite(w.angular_velocities))


def test_a_settling_frictional_pile_resumes_exactly_from_its_state():
    """The friction forces of held contacts are carried to the next step as its warm start, like the normal
    forces: they are part of the state, so a pile stopped mid-settle and resumed in a new world continues
    bit for bit. (Left out of the state, the resumed solve starts its friction from zero and the runs part.)"""
    w = frictional_pile(40)
    w.run(until=1.5, dt=1 / 60)
    state = w.get_state()
    assert np.any(state["held_pair_friction"]) and np.any(state["held_wall_friction"])
    w.run(until=2.0, dt=1 / 60)
    other = frictional_pile(40)
    other.set_state(state)
    other.run(until=2.0, dt=1 / 60)
    for name in ("positions", "velocities", "angular_velocities", "orientations"):
        np.testing.assert_array_equal(getattr(other, name), getattr(w, name))


def three_disk_pyramid(mu, spread):
    """Two disks on a floor ``spread`` (m) apart, a third on top of them: every coefficient mu, e = 0.5."""
    radius = 0.1
    w = carom.World(dim=2, gravity=(0, -G))
    w.add_wall(point=(0, 0), normal=(0, 1), restitution=0.5, static_friction=mu)
    half = radius + spread / 2
    top = radius + math.sqrt((2 * radius) ** 2 - half**2)
    w.add_bodies([(-half, radius), (half, radius), (0.0, top)], masses=1.0, radii=radius, restitution=0.5,
                 static_friction=mu)  # fmt: skip
    return w


def test_a_three_disk_pyramid_without_enough_friction_collapses():
    """Statics of three equal disks (two on a floor, one on top, the lines of centres at angle theta from the
    vertical): the stack stands only if friction between the disks reaches tan(theta / 2) (and on the floor
    less). The bottom disks 0.4 R apart: sin theta = 0.6, tan(theta / 2) = 1/3, so with 0.3 the top disk
    falls to the floor."""
    w = three_disk_pyramid(0.3, 0.04)
    w.run(until=3.0, dt=1 / 60)
    assert w.positions[2, 1] == pytest.approx(0.1, abs=1e-3)


@pytest.mark.parametrize("mu", [0.3, 0.5, 1.0])
def test_a_three_disk_pyramid_with_enough_friction_stands_still(mu):
    """The same statics, the bottom disks touching (theta = 30 deg): friction from tan 15 deg = 0.268 up
    holds the stack, which must then not move: top disk within 1e-9 m over 5 s, and no step gaining more
    energy than the force solve's tolerance allows (1e-8 g on every contact's acceleration, about
    m g * 1e-8 g h^2 / 2 = 1e-10 J a disk a step; measured 2e-11 J). With friction solved after the normal
    forces in one pass, the bottom disks sank into the floor at 9 mm/s in the first step and the stack
    spread by 2-6 cm."""
    w = three_disk_pyramid(mu, 0.0)
    top = w.positions[2].copy()
    for _ in range(300):
        before = w.total_energy()
        w.step(1 / 60)
        assert w.total_energy() - before <= 3e-10
    assert np.linalg.norm(w.positions[2] - top) <= 1e-9


@pytest.mark.parametrize("dim, n", [(2, 60), (3, 64)])
def test_a_frictional_pile_comes_to_rest(dim, n):
    """A pile poured with friction at dt = 1/60 (contacts in clusters held at the velocity level): at rest by
    6 s (every speed below 1 mm/s), then still: the top body moves less than 1e-6 m over 10 s more, and no
    step gains energy. Before, with kinetic rows along the slip on accelerations, the 2D pile boiled (steps
    gained up to 42 J); in 3D, where held contacts at their cone's edge could still break away into kinetic
    rows, the 64-sphere pile gained up to 6.7 J in a step and moved at 0.86 m/s at 6 s."""
    w = frictional_pile(n, dim)
    w.run(until=6.0, dt=1 / 60)
    assert np.linalg.norm(w.velocities, axis=1).max() < 1e-3
    top = int(np.argmax(w.positions[:, -1]))
    x_top = w.positions[top].copy()
    for _ in range(600):
        before = w.total_energy()
        w.step(1 / 60)
        assert w.total_energy() - before <= 0.0
    assert np.linalg.norm(w.positions[top] - x_top) <= 1e-6


def test_a_poured_frictional_heap_stands_steeper_than_a_smooth_one():
    """100 disks poured one at a time onto a rough floor (`carom.canonical.poured_heap`) build a heap whose
    angle of repose friction sets: with mu = 0.5 and rolling resistance 0.1 the heaps stand at rest with
    slopes well above the smooth heaps', which only the rough floor and the disks' interlocking hold up.
    One heap of 100 is a chaotic draw: over seeds 0-3, 18.8-32.3 degrees (mean 25.5) with friction and
    12.2-23.1 (mean 16.9) without. The test asks for 5 degrees between the means of those four seeds, and
    every frictional heap at rest."""
    from carom.canonical import heap_angle, poured_heap

    means = []
    for mu, mu_r in ((0.5, 0.1), (0.0, 0.0)):
        angles = []
        for seed in range(4):
            w = poured_heap(100, dim=2, friction=mu, rolling_resistance=mu_r, settle=10.0, seed=seed)
            heap = slice(len(w.positions) - 100, None)
            angles.append(heap_angle(w.positions[heap], w.radii[heap], base=0.1))
            if mu:
                assert np.linalg.norm(w.velocities, axis=1).max() < 1e-3
        means.append(np.mean(angles))
    rough, smooth = means
    assert rough >= smooth + 5.0


# ---------------------------------------------------------------- the joint solve of a cluster
def _joint_column(depth):
    """A column of ``depth`` disks (1 kg, R = 0.5 m) on a floor under unit gravity, every contact held with
    mu = 0.5 and rolling resistance 0.01, its normal, friction and rolling rows solved together from zero
    forces to 1e-6 m/s^2 by `solve_joint`. Exact: the contact under layer k carries depth - k disk weights,
    and no friction or torque. Returns the sweeps, the normal forces (N) and the largest friction force and torque."""
    from carom.contact.friction import MU_K, MU_R, MU_S, R_EFF, new_friction_work
    from carom.contact.layout import IMPULSE
    from carom.step import friction
    from carom.step.drift import CONTACT_COLUMNS, Bodies

    zeros, gravity = np.zeros((depth, 2)), np.tile([0.0, -1.0], (depth, 1))
    bodies = Bodies(zeros.copy(), zeros.copy(), gravity.copy(), gravity.copy(), np.ones(depth), np.ones(depth),
                    np.full(depth, 0.5), np.zeros(depth), np.full(depth, 8.0), np.ones(depth, dtype=bool),
                    np.zeros((depth, 1)), np.zeros((depth, 1)), np.zeros((depth, 1)))  # fmt: skip
    ci, cj = np.arange(depth), np.arange(depth) - 1  # contact c: body c on the one below (-1: the floor)
    normal = np.tile([0.0, -1.0], (depth, 1))  # from body i towards j (or the floor): down
    cw = np.zeros((depth, CONTACT_COLUMNS))
    fw = new_friction_work(depth, depth, 1, 0)
    fw.coef[:, MU_S] = fw.coef[:, MU_K] = 0.5
    fw.coef[:, MU_R], fw.coef[:, R_EFF] = 0.01, 0.25
    fw.held[:] = True
    sweeps = friction.solve_joint(np.arange(depth), ci, cj, normal, cw, bodies, bodies.a, bodies.alpha, fw,
                                  np.zeros(depth), 100_000, 1e-6)  # fmt: skip
    return sweeps, cw[:, IMPULSE], np.abs(fw.force).max(), np.abs(fw.torque).max()


@pytest.mark.parametrize("depth", [10, 40, 160])
def test_joint_solve_recovers_the_column_forces(depth):
    """Stopped where no row's rate moves by more than 1e-6 m/s^2 in a sweep, the normal forces are within that
    over the smallest eigenvalue of the column's operator (about 2.5 / depth^2 per kg), and nothing drives a
    slip or a rolling: no friction force or torque at all."""
    _, forces, friction_force, torque = _joint_column(depth)
    np.testing.assert_allclose(forces, depth - np.arange(depth), rtol=0, atol=1e-6 * depth**2 / 2.5)
    assert friction_force == 0.0 and torque == 0.0


def test_joint_solve_sweeps_grow_with_depth_not_its_square():
    """A column's operator has condition number ~ depth^2: Gauss-Seidel or a plain gradient passes the load
    down about a layer a sweep and needs ~depth^2 sweeps, the accelerated gradient ~depth. From 20 to 160
    layers (8x) the accelerated sweeps may grow at most 16x (a log factor on 8x), where depth^2 would be
    64x."""
    s20, *_ = _joint_column(20)
    s160, *_ = _joint_column(160)
    assert s160 <= 16 * s20


def test_joint_solve_gives_the_exact_slope_accelerations():
    """Three disks (1 kg, R = 0.5 m, k = 1/2) resting on a floor, gravity tilted by theta = 0.3 rad (a slope),
    held contacts from zero forces, solved together: with mu = 0.5 > tan(theta) k/(1 + k) a disk rolls at
    g sin(theta)/(1 + k), spinning at -a/R; with mu = 0.05 below it, friction sits on the cone's edge and the
    disk slides at g (sin(theta) - mu cos(theta)), alpha = -mu g cos(theta) R/I; with mu = 0.5 and rolling
    resistance 0.5 (both above tan(theta)) static friction and the rolling torque hold it still. The normal
    force is m g cos(theta) in every case. Solved to 1e-13 m/s^2: exact to 1e-10."""
    from carom.contact.friction import MU_K, MU_R, MU_S, R_EFF, new_friction_work
    from carom.contact.layout import IMPULSE
    from carom.step import friction
    from carom.step.drift import CONTACT_COLUMNS, Bodies

    theta, radius, n = 0.3, 0.5, 3
    gravity = np.tile([math.sin(theta), -math.cos(theta)], (n, 1))
    zeros = np.zeros((n, 2))
    bodies = Bodies(zeros.copy(), zeros.copy(), gravity.copy(), gravity.copy(), np.ones(n), np.ones(n),
                    np.full(n, radius), np.zeros(n), np.full(n, 2.0 / radius**2), np.ones(n, dtype=bool),
                    np.zeros((n, 1)), np.zeros((n, 1)), np.zeros((n, 1)))  # fmt: skip
    ci, cj = np.arange(n), np.full(n, -1)
    normal = np.tile([0.0, -1.0], (n, 1))
    cw = np.zeros((n, CONTACT_COLUMNS))
    fw = new_friction_work(n, n, 1, 0)
    fw.coef[:, MU_S] = fw.coef[:, MU_K] = (0.5, 0.05, 0.5)
    fw.coef[:, MU_R], fw.coef[:, R_EFF] = (0.0, 0.0, 0.5), radius
    fw.held[:] = True
    friction.solve_joint(np.arange(n), ci, cj, normal, cw, bodies, bodies.a, bodies.alpha, fw, np.zeros(n), 100_000,
                         1e-13)  # fmt: skip
    sin, cos = math.sin(theta), math.cos(theta)
    rolling = 2.0 / 3.0 * sin
    sliding = sin - 0.05 * cos
    np.testing.assert_allclose(bodies.a, [[rolling, 0.0], [sliding, 0.0], [0.0, 0.0]], rtol=0, atol=1e-10)
    np.testing.assert_allclose(bodies.alpha[:, 0], [-rolling / radius, -2.0 * 0.05 * cos / radius, 0.0],
                               rtol=0, atol=1e-10)  # fmt: skip
    np.testing.assert_allclose(cw[:, IMPULSE], cos, rtol=0, atol=1e-10)
