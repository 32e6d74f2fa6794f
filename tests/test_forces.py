"""Forces against exact results (docs/physics.md: Forces; Motion between impacts)."""

import math

import numpy as np
import pytest

import carom


def kepler(dt, orbits, eccentricity=0.5, integrator="leapfrog"):
    """A light body on a Kepler ellipse around a fixed unit mass (G M = 1), started at periapsis."""
    w = carom.World(dim=2, integrator=integrator)
    w.add_force(carom.NBodyGravity(G=1.0))
    w.add_body(position=(0, 0), mass=1.0, radius=1e-3, fixed=True)
    a = 1.0
    rp = a * (1 - eccentricity)
    vp = math.sqrt((1 + eccentricity) / rp)
    w.add_body(position=(rp, 0), velocity=(0, vp), mass=1e-6, radius=1e-3)
    energies = []
    for k in range(orbits):
        w.run(until=2 * math.pi * (k + 1), dt=dt)
        energies.append(w.total_energy())
    return w, np.array(energies), -0.5 * 1e-6 / a


def test_kepler_orbit_error_falls_as_dt_squared():
    errors = []
    for dt in (0.02, 0.01, 0.005):
        w, _, _ = kepler(dt, 1)
        errors.append(np.linalg.norm(w.positions[1] - (0.5, 0.0)))  # back at periapsis after one period
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 3.6) & (ratios < 4.4)), (errors, ratios)


def test_euler_integrator_is_first_order():
    errors = [np.linalg.norm(kepler(dt, 1, integrator="euler")[0].positions[1] - (0.5, 0.0)) for dt in (0.004, 0.002)]
    assert 1.7 < errors[0] / errors[1] < 2.3


@pytest.mark.slow
def test_leapfrog_energy_error_is_bounded_over_1000_orbits():
    _, energy, exact = kepler(0.02, 1000)
    rel = np.abs(energy / exact - 1)
    assert rel.max() < 2e-3  # O(dt^2) oscillation: 1.4e-3 at dt = 0.02 on this e = 0.5 orbit
    # no secular drift: the last hundred orbits are no worse than the first hundred
    assert rel[-100:].max() < 1.5 * rel[:100].max() + 1e-12


def test_two_body_gravity_conserves_momentum_and_circular_period():
    G, m1, m2, d = 1.0, 3.0, 1.0, 2.0
    w = carom.World(dim=3)
    w.add_force(carom.NBodyGravity(G=G))
    omega = math.sqrt(G * (m1 + m2) / d**3)
    w.add_body(position=(-d * m2 / 4, 0, 0), velocity=(0, -omega * d * m2 / 4, 0), mass=m1, radius=0.1)
    w.add_body(position=(d * m1 / 4, 0, 0), velocity=(0, omega * d * m1 / 4, 0), mass=m2, radius=0.1)
    period = 2 * math.pi / omega
    w.run(until=period, dt=period / 2000)
    np.testing.assert_allclose(w.momentum(), 0.0, atol=1e-14)
    np.testing.assert_allclose(w.positions[1], (d * m1 / 4, 0, 0), atol=5e-5 * d)


def test_softened_potential_energy():
    w = carom.World(dim=3)
    w.add_force(carom.NBodyGravity(G=2.0, softening=0.5))
    w.add_body(position=(0, 0, 0), mass=3.0, radius=0.1)
    w.add_body(position=(1.2, 0, 0), mass=5.0, radius=0.1)
    assert w.potential_energy() == pytest.approx(-2.0 * 15.0 / math.sqrt(1.44 + 0.25), rel=1e-15)


@pytest.mark.parametrize("dim", [2, 3])
def test_softened_gravity_is_minus_the_gradient_of_its_potential(dim):
    # The force must be -grad U of the softened potential (softening 0.5 is comparable to the distances,
    # so dropping it from either changes the result by tens of per cent), on each free body, with a fixed
    # body of finite mass among the sources; the fixed body itself does not accelerate.
    rng = np.random.default_rng(11)
    w = carom.World(dim=dim)
    gravity = w.add_force(carom.NBodyGravity(G=2.0, softening=0.5))
    w.add_bodies(rng.uniform(-1.5, 1.5, (4, dim)), masses=[3.0, 5.0, 1.5, 0.8], radii=0.01)
    w.add_body(position=[2.5] * dim, radius=0.2, fixed=True, mass=4.0)
    acc = np.zeros((5, dim))
    gravity.accelerate(w, 0.0, acc)
    h = 1e-5
    grad = np.zeros((5, dim))
    for i in range(5):
        for d in range(dim):
            x = w.positions[i, d]
            w.positions[i, d] = x + h
            up = w.potential_energy()
            w.positions[i, d] = x - h
            down = w.potential_energy()
            w.positions[i, d] = x
            grad[i, d] = (up - down) / (2 * h)
    # Central differences (h near its optimum): truncation h^2 |d3U| / 6 ~ 2e-9 N (|d3U| <~ 100 J/m^3 here)
    # and round-off of U, a few eps |U| / h ~ 1e-8 N (|U| <= 77 J); divided by masses >= 0.8 kg, against
    # accelerations of 1 to 10 m/s^2 (measured: 4e-9 m/s^2 at worst; without softening they differ by > 1)
    np.testing.assert_allclose(acc[:4], -grad[:4] / w.masses[:4, None], rtol=0, atol=3e-8)
    assert np.abs(acc[:4]).max() > 1.0  # the accelerations are far above the tolerance
    np.testing.assert_array_equal(acc[4], 0.0)


def test_falling_in_uniform_air_follows_tanh_to_terminal_speed():
    g, rho, cd, m, r = 9.81, 1.225, 0.47, 0.5, 0.05
    area = math.pi * r**2
    v_t = math.sqrt(2 * m * g / (rho * cd * area))
    w = carom.World(dim=3, gravity=(0, 0, -g))
    ground = w.add_body(position=(0, 0, -1e7), radius=1.0, fixed=True)
    ball = w.add_body(position=(0, 0, 0), mass=m, radius=r, drag_coefficient=cd)
    w.add_force(carom.Atmosphere(body=ground, surface_density=rho, scale_height=math.inf))
    for t in (0.5, 1.0, 2.0, 4.0, 8.0):
        w.run(until=t, dt=1e-3)
        assert -w.velocities[ball, 2] == pytest.approx(v_t * math.tanh(g * t / v_t), rel=1e-6)
    w.run(until=80.0, dt=1e-2)  # tanh(g t / v_t) = 1 - 5e-15 by now
    assert -w.velocities[ball, 2] == pytest.approx(v_t, rel=1e-10)


def test_exponential_atmosphere_drag_value():
    w = carom.World(dim=3)
    planet = w.add_body(position=(0, 0, 0), radius=100.0, fixed=True, velocity=(0, 5.0, 0))
    probe = w.add_body(position=(0, 0, 100.0 + 2000.0), velocity=(30.0, 5.0, -4.0), mass=2.0, radius=0.3,
                       drag_coefficient=1.1)  # fmt: skip
    force = carom.Atmosphere(body=planet, surface_density=1.2, scale_height=8000.0)
    w.add_force(force)
    acc = np.zeros((2, 3))
    force.accelerate(w, 0.0, acc)
    v_rel = np.array([30.0, 0.0, -4.0])
    rho = 1.2 * math.exp(-2000.0 / 8000.0)
    expected = -0.5 * rho * 1.1 * math.pi * 0.09 * np.linalg.norm(v_rel) * v_rel / 2.0
    np.testing.assert_allclose(acc[probe], expected, rtol=1e-14)
    np.testing.assert_array_equal(acc[planet], 0.0)


def test_constant_thrust_is_integrated_exactly():
    w = carom.World(dim=2)
    i = w.add_body(position=(0, 0), mass=2.0, radius=0.1)
    w.add_force(carom.Thrust(body=i, force=(4.0, -1.0)))
    w.run(until=3.0, dt=0.07)
    np.testing.assert_allclose(w.positions[i], 0.5 * np.array([2.0, -0.5]) * 9.0, rtol=1e-13)


def test_thrust_controller_sees_time_and_world():
    seen = []

    def controller(world, t):
        seen.append(t)
        return (0.0, -world.velocities[0, 1])  # a damper: v' = -v / m

    w = carom.World(dim=2)
    w.add_body(position=(0, 0), velocity=(0, 1.0), mass=1.0, radius=0.1)
    w.add_force(carom.Thrust(body=0, force=controller))
    w.run(until=1.0, dt=1e-3)
    assert w.velocities[0, 1] == pytest.approx(math.exp(-1.0), rel=1e-6)
    assert seen[0] == 0.0 and seen[-1] == pytest.approx(1.0)


def drag_world(vertices, angle, velocity, *, rho=1.2, cd=0.8, mass=2.0):
    """A 2D world in uniform air (a fixed ground far below) with one polygon; return it, the force and the
    polygon's id."""
    w = carom.World(dim=2)
    ground = w.add_body(position=(0, -1e6), radius=1.0, fixed=True)
    p = w.add_polygon(vertices, (0, 0), angle=angle, velocity=velocity, mass=mass, drag_coefficient=cd)
    force = carom.Atmosphere(body=ground, surface_density=rho, scale_height=math.inf)
    w.add_force(force)
    return w, force, p


def polygon_drag(w, force, p):
    acc = np.zeros((w.n_bodies, 2))
    force.accelerate(w, 0.0, acc)
    return acc[p]


SQUARE = [(0, 0), (1, 0), (1, 1), (0, 1)]


@pytest.mark.parametrize(
    ("velocity", "width"),
    [((3.0, 0.0), 1.0), ((0.0, -3.0), 1.0), ((2.0, 2.0), math.sqrt(2)), ((-1.5, 1.5), math.sqrt(2))],
)
def test_drag_on_a_unit_square_takes_its_width_across_the_air(velocity, width):
    """A = pi w^2 / 4 (the disk of the projected width, as a disk's pi r^2): w = 1 along a side, sqrt 2 along
    a diagonal, where the circumradius (sqrt 2 / 2) would give A = pi / 2 in both."""
    w, force, p = drag_world(SQUARE, 0.0, velocity)
    v = np.array(velocity)
    expected = -0.5 * 1.2 * 0.8 * math.pi * width**2 / 4 * np.linalg.norm(v) * v / 2.0
    np.testing.assert_allclose(polygon_drag(w, force, p), expected, rtol=1e-14, atol=0)


@pytest.mark.parametrize("theta", [0.0, 0.3, 1.2, 2.5, -0.7])
@pytest.mark.parametrize("heading", [0.0, 0.9, -2.0])
def test_drag_on_a_turned_rectangle_takes_the_closed_form_width(theta, heading):
    """A W x H rectangle at angle theta moving along the direction phi spans W |sin(phi - theta)| +
    H |cos(phi - theta)| across its motion; drag gives it no spin (it acts at the centroid)."""
    width, height, speed = 0.8, 0.3, 4.0
    rect = [(0, 0), (width, 0), (width, height), (0, height)]
    v = speed * np.array([math.cos(heading), math.sin(heading)])
    w, force, p = drag_world(rect, theta, v)
    across = width * abs(math.sin(heading - theta)) + height * abs(math.cos(heading - theta))
    expected = -0.5 * 1.2 * 0.8 * math.pi * across**2 / 4 * speed * v / 2.0
    np.testing.assert_allclose(polygon_drag(w, force, p), expected, rtol=1e-13, atol=0)
    w.run(until=0.1, dt=0.01)
    assert w.angular_velocities[p] == 0.0 and w.angles[p] == theta


def test_drag_on_a_polygon_follows_its_angle():
    """The width is taken at the present angle: a square turned by 45 degrees moving along x spans sqrt 2."""
    w, force, p = drag_world(SQUARE, math.pi / 4, (3.0, 0.0))
    expected = -0.5 * 1.2 * 0.8 * math.pi * 2.0 / 4 * 3.0 * 3.0 / 2.0
    assert polygon_drag(w, force, p)[0] == pytest.approx(expected, rel=1e-14)


def test_drag_on_a_disk_is_pi_r_squared_beside_polygons():
    """A 2D disk keeps A = pi r^2, to the bit, in a world with polygons; a polygon at rest in the air feels none."""
    w, force, p = drag_world(SQUARE, 0.3, (0.0, 0.0))
    disk = w.add_body(position=(5.0, 0.0), velocity=(3.0, -4.0), mass=1.5, radius=0.2, drag_coefficient=1.1)
    acc = np.zeros((w.n_bodies, 2))
    force.accelerate(w, 0.0, acc)
    k = 0.5 * 1.2 * 1.1 * math.pi * 0.2**2 * 5.0 * (1.0 / 1.5)
    np.testing.assert_array_equal(acc[disk], -k * np.array([3.0, -4.0]))
    np.testing.assert_array_equal(acc[p], 0.0)
