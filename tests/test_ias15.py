"""`World(integrator="ias15")`: the adaptive Gauss–Radau integrator and the impacts it finds inside its steps,
against closed forms: the radial fall of two bodies, a grazing pass on a Kepler orbit, a ball on a floor,
a harmonic force in Python; exact resume; bad input."""

import math

import numpy as np
import pytest

import carom
from carom import Atmosphere, ContactError, Force, NBodyGravity, Thrust, World
from carom.step import ias15

G = 1.0


def _radial_fall_time(d, r, total_mass):
    """Time (s) for two point masses released at rest at distance d to fall to distance r (closed form)."""
    ratio = r / d
    return math.sqrt(d**3 / (2.0 * G * total_mass)) * (math.sqrt(ratio * (1.0 - ratio)) + math.acos(math.sqrt(ratio)))


def _impacts(world):
    seen = []
    world.on_impact(seen.append)
    return seen


@pytest.mark.parametrize(("d", "r1", "r2", "m1", "m2"), [
    (1.0, 0.1, 0.05, 1.0, 0.5),
    (10.0, 0.01, 0.01, 1.0, 1.0),
    (3.0, 1.0, 0.2, 2.0, 1e-3),
    (1e4, 1.0, 2.0, 1.0, 3.0),
])  # fmt: skip
@pytest.mark.parametrize("dim", [2, 3])
def test_radial_fall_impact_time(d, r1, r2, m1, m2, dim):
    """Two spheres at rest fall together: the first impact comes at the closed-form time to 1e-11 relative,
    at the default epsilon, and the bodies touch there."""
    w = World(dim=dim, integrator="ias15")
    zero = (0.0,) * (dim - 1)
    w.add_body(position=(0.0, *zero), mass=m1, radius=r1)
    w.add_body(position=(d, *zero), mass=m2, radius=r2)
    w.add_force(NBodyGravity(G=G))
    seen = _impacts(w)
    expected = _radial_fall_time(d, r1 + r2, m1 + m2)
    w.run(until=expected * 1.001)
    assert len(seen) == 1
    assert seen[0].time == pytest.approx(expected, rel=1e-11)
    assert seen[0].approach_speed == pytest.approx(math.sqrt(2 * G * (m1 + m2) * (1 / (r1 + r2) - 1 / d)), rel=1e-9)


def _kepler_contact(e, a, reach, total_mass):
    """Time (s) from apocentre at which the relative orbit (semi-major axis a, eccentricity e) first reaches
    distance ``reach`` on its way in (Kepler's equation)."""
    eccentric = -math.acos((1.0 - reach / a) / e)  # E in (-pi, 0): before pericentre
    mean = eccentric - e * math.sin(eccentric)
    return (mean + math.pi) / math.sqrt(G * total_mass / a**3)


def _orbit_from_apocentre(w, e, a, m1, m2, r1, r2, dim):
    """Two bodies at the apocentre of a relative orbit about their common centre of mass (at rest)."""
    total = m1 + m2
    ra = a * (1 + e)
    va = math.sqrt(G * total * (1 - e) / ra)
    zero = (0.0,) * (dim - 2)
    w.add_body(position=(-ra * m2 / total, 0.0, *zero), velocity=(0.0, -va * m2 / total, *zero), mass=m1, radius=r1)
    w.add_body(position=(ra * m1 / total, 0.0, *zero), velocity=(0.0, va * m1 / total, *zero), mass=m2, radius=r2)


@pytest.mark.parametrize(("dim", "depth"), [(2, 1e-6), (3, 1e-6), (2, 1e-4), (3, 1e-2)])
def test_grazing_impact_on_an_eccentric_orbit(dim, depth):
    """Closest approach 1e-6 R (and deeper) inside contact on an orbit of e = 0.98: found, at the time Kepler's
    equation gives (to 1e-12 of the period; measured about 3e-15), and nowhere else;
    the run goes on past it (an impact that falls within round-off of a step's end is still solved)."""
    e, a, m1, m2 = 0.98, 1.0, 1.0, 1e-3
    periapsis = a * (1 - e)
    reach = periapsis * (1 + depth)  # R1 + R2: the bodies overlap by ``depth`` of it at pericentre
    r1, r2 = 0.75 * reach, 0.25 * reach
    w = World(dim=dim, integrator="ias15")
    _orbit_from_apocentre(w, e, a, m1, m2, r1, r2, dim)
    w.add_force(NBodyGravity(G=G))
    seen = _impacts(w)
    expected = _kepler_contact(e, a, reach, m1 + m2)
    period = 2 * math.pi * math.sqrt(a**3 / (G * (m1 + m2)))
    w.run(until=expected + 0.01 * period)
    assert w.time == expected + 0.01 * period
    assert len(seen) == 1
    assert abs(seen[0].time - expected) < 1e-12 * period, (seen[0].time - expected) / period
    assert seen[0].approach_speed > 0


def test_a_grazing_miss_is_no_impact():
    """The same orbit with closest approach 1e-6 R outside contact: no impact over an orbit."""
    e, a, m1, m2 = 0.98, 1.0, 1.0, 1e-3
    reach = a * (1 - e) * (1 - 1e-6)
    w = World(dim=2, integrator="ias15")
    _orbit_from_apocentre(w, e, a, m1, m2, 0.5 * reach, 0.5 * reach, 2)
    w.add_force(NBodyGravity(G=G))
    seen = _impacts(w)
    w.run(until=2 * math.pi * math.sqrt(a**3 / (G * (m1 + m2))))
    assert seen == []


def test_ball_bounces_on_a_floor_at_the_closed_form_times():
    """A ball dropped from h on a floor, e = 0.5, under uniform gravity: impacts at sqrt(2h/g) (1 + 2e + 2e^2...),
    each at speed e^k sqrt(2 g h), to round-off (the polynomials are exact for constant gravity)."""
    g, h, e, radius = 9.81, 1.0, 0.5, 0.1
    w = World(dim=3, gravity=(0, 0, -g), integrator="ias15")
    w.add_body(position=(0, 0, h + radius), mass=1.0, radius=radius, restitution=e)
    w.add_wall(point=(0, 0, 0), normal=(0, 0, 1))
    seen = _impacts(w)
    fall = math.sqrt(2 * h / g)
    times = [fall, fall * (1 + 2 * e), fall * (1 + 2 * e + 2 * e**2)]
    w.run(until=times[-1] + 1e-3)
    assert [imp.time for imp in seen] == pytest.approx(times, rel=1e-13)
    speeds = [math.sqrt(2 * g * h) * e**k for k in range(3)]
    assert [imp.approach_speed for imp in seen] == pytest.approx(speeds, rel=1e-12)


class _Spring(Force):
    """a = -k x on every body (a force that runs in Python: IAS15's Python loop)."""

    def __init__(self, k):
        self.k = k

    def accelerate(self, world, t, out):
        out -= self.k * world.positions


def test_python_force_follows_the_harmonic_solution():
    """A force written in Python (evaluated at every node): x(t) = cos(w t) to 1e-12 over 20 periods, and the
    energy of the oscillator kept to 1e-13."""
    k = 4.0
    w = World(dim=2, integrator="ias15")
    w.add_body(position=(1.0, 0.0), mass=1.0, radius=0.01)
    w.add_force(_Spring(k))
    omega = math.sqrt(k)
    t_end = 20 * 2 * math.pi / omega
    w.run(until=t_end)
    assert w.positions[0, 0] == pytest.approx(math.cos(omega * t_end), abs=1e-12)
    assert w.velocities[0, 0] == pytest.approx(-omega * math.sin(omega * t_end), abs=1e-12)
    energy = 0.5 * w.velocities[0] @ w.velocities[0] + 0.5 * k * w.positions[0] @ w.positions[0]
    assert energy == pytest.approx(0.5 * k, rel=1e-13)


def test_compiled_and_python_forces_agree():
    """The same drag and thrust, once from the compiled force table and once through Python (a callable
    thrust): the same trajectory to round-off."""

    def build(callable_thrust):
        w = World(dim=2, integrator="ias15")
        w.add_body(position=(0, 0), mass=1e6, radius=1.0)
        w.add_body(position=(1.5, 0), velocity=(0, 800.0), mass=1.0, radius=0.01)
        w.add_force(NBodyGravity(G=1.0))
        w.add_force(Atmosphere(body=0, surface_density=1e-3, scale_height=0.2))
        force = (lambda world, t: (0.0, 0.5)) if callable_thrust else (0.0, 0.5)
        w.add_force(Thrust(body=1, force=force))
        w.run(until=0.05)
        return w

    a, b = build(False), build(True)
    assert a.step_count == b.step_count
    np.testing.assert_allclose(a.positions, b.positions, rtol=0, atol=1e-12)


def test_resume_from_a_state_gives_the_same_bits():
    """`get_state` mid-run, restored into a fresh world, goes on with exactly the bits of the run that went on."""

    def build():
        w = World(dim=3, integrator="ias15")
        w.add_body(position=(0, 0, 0), mass=1.0, radius=0.01)
        w.add_body(position=(1, 0, 0), velocity=(0, 0.9, 0.1), mass=1e-3, radius=0.01)
        w.add_body(position=(-2, 0, 0), velocity=(0, -0.7, 0), mass=1e-3, radius=0.01)
        w.add_force(NBodyGravity(G=1.0))
        return w

    straight = build()
    straight.run(until=7.0)
    straight.run(until=20.0)
    stopped = build()
    stopped.run(until=7.0)
    state = stopped.get_state()
    resumed = build()
    resumed.set_state(state)
    resumed.run(until=20.0)
    assert np.array_equal(resumed.positions, straight.positions)
    assert np.array_equal(resumed.velocities, straight.velocities)
    assert resumed.step_count == straight.step_count


def test_merge_mode_merges_at_the_fall_time():
    """impact_mode="merge": the falling pair becomes one body at the closed-form time, mass and momentum kept."""
    w = World(dim=2, integrator="ias15", impact_mode="merge")
    w.add_body(position=(0, 0), velocity=(0.0, 0.3), mass=1.0, radius=0.1)
    w.add_body(position=(2, 0), velocity=(0.0, 0.3), mass=3.0, radius=0.1)
    w.add_force(NBodyGravity(G=G))
    seen = _impacts(w)
    p0 = w.momentum().copy()
    expected = _radial_fall_time(2.0, 0.2, 4.0)
    w.run(until=2 * expected)
    assert len(seen) == 1 and seen[0].time == pytest.approx(expected, rel=1e-11)
    assert w.active.tolist() == [True, False]
    assert w.masses[0] == 4.0
    np.testing.assert_allclose(w.momentum(), p0, rtol=0, atol=1e-14)


def test_resting_contact_is_refused():
    """Two bodies that stay together under their gravity (e = 0) make a resting contact, which IAS15 does not
    hold: a ContactError that says so, not a silent overlap."""
    w = World(dim=2, integrator="ias15")
    w.add_body(position=(0, 0), mass=1.0, radius=0.1, restitution=0.0)
    w.add_body(position=(1, 0), mass=1.0, radius=0.1, restitution=0.0)
    w.add_force(NBodyGravity(G=G))
    with pytest.raises(ContactError, match="resting contact"):
        w.run(until=10.0)


def test_exact_false_stops_on_its_own_steps_and_frames_do_not_change_the_run():
    """``run(exact=False)`` stops after the last whole step; a run in such pieces gives the bits of one run."""

    def build():
        w = World(dim=2, integrator="ias15")
        w.add_body(position=(0, 0), mass=1.0, radius=0.01)
        w.add_body(position=(1, 0), velocity=(0, 1.2), mass=1e-3, radius=0.01)
        w.add_force(NBodyGravity(G=1.0))
        return w

    whole = build()
    whole.run(until=30.0, exact=False)
    pieces = build()
    for t in np.linspace(0.5, 30.0, 17):
        pieces.run(until=t, exact=False)
        assert pieces.time <= t
    assert pieces.time == whole.time and np.array_equal(pieces.positions, whole.positions)


@pytest.mark.parametrize("epsilon", [0.0, -1e-9, 1.0, math.nan, math.inf])
def test_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        World(integrator="ias15", epsilon=epsilon)


def test_bad_integrator_and_misplaced_options():
    with pytest.raises(ValueError, match="integrator"):
        World(integrator="rk4")
    with pytest.raises(ValueError, match="epsilon"):
        World(epsilon=1e-9)
    w = World(dim=2)
    w.add_body(position=(0, 0), mass=1.0, radius=0.1)
    with pytest.raises(ValueError, match="dt is needed"):
        w.run(until=1.0)
    p = World(dim=2, integrator="ias15")
    p.add_rectangle(1.0, 1.0, position=(0, 0), mass=1.0)
    with pytest.raises(ValueError, match="polygons"):
        p.run(until=1.0)


def test_gauss_radau_tables():
    """The tables the kernels use: the Newton-to-power matrix and its inverse, and the nodes' spacings."""
    c, d = ias15.NEWTON_TO_POWER, ias15.POWER_TO_NEWTON
    np.testing.assert_allclose(c @ d, np.eye(ias15.STAGES), atol=1e-14)
    assert np.all(np.diff(ias15.NODES) > 0) and ias15.NODES[-1] < 1.0
    # the nodes are the roots of the Radau polynomial P7 + P8 (shifted to [0, 1]), with 0 the eighth
    radau = np.polynomial.legendre.Legendre([0] * 7 + [1, 1])
    np.testing.assert_allclose(np.sort((radau.roots() + 1) / 2), ias15.NODES, atol=1e-14)


ORBIT_SCENE = """
[world]
dim = 2
integrator = "ias15"
epsilon = 1e-10

[run]
until = 12.0
output_interval = 0.5

[[forces]]
kind = "gravity"
G = 1.0

[[bodies]]
position = [0.0, 0.0]
mass = 1.0
radius = 0.01

[[bodies]]
position = [1.0, 0.0]
velocity = [0.0, 1.1]
mass = 1e-3
radius = 0.01
"""


def test_scene_file_runs_ias15_without_dt(tmp_path):
    """A scene with integrator = "ias15" and no dt: recorded frame by frame, each frame has the bits of a run
    to its time (frames look ahead on a copy, so they never change the run), and the scene round-trips."""
    from carom.io import runner
    from carom.scenefile import build_world, parse_scene

    scene = parse_scene(ORBIT_SCENE)
    path = tmp_path / "orbit.h5"
    runner.start(scene, ORBIT_SCENE, "orbit.toml", path, progress=False)
    straight = build_world(parse_scene(ORBIT_SCENE))
    assert straight.epsilon == 1e-10
    straight.run(until=12.0)
    traj = carom.load(path)
    assert traj.time[-1] == 12.0 and len(traj.time) == 25
    np.testing.assert_array_equal(traj.position[-1], straight.positions)
    middle = build_world(parse_scene(ORBIT_SCENE))
    middle.run(until=6.0)  # a frame is the state a run to its time gives
    np.testing.assert_array_equal(traj.position[12], middle.positions)
    again = build_world(parse_scene(straight.to_scene(until=20.0).to_toml()))
    assert again.integrator == "ias15" and again.epsilon == 1e-10


def test_scene_epsilon_needs_ias15():
    from carom.scenefile import parse_scene

    with pytest.raises(ValueError, match="epsilon"):
        parse_scene(ORBIT_SCENE.replace('integrator = "ias15"', 'integrator = "leapfrog"').replace(
            "output_interval", "dt = 0.01\noutput_interval"))
    with pytest.raises(ValueError, match=r"run\.dt is required"):
        parse_scene(ORBIT_SCENE.replace('integrator = "ias15"', 'integrator = "leapfrog"').replace("epsilon", "#"))


def test_drag_balancing_gravity_follows_the_tanh_law_in_few_steps():
    """A ball falling from rest through uniform air: v(t) = v_t tanh(g t / v_t), v_t = sqrt(2 m g / (rho Cd A)),
    to 1e-10 relative."""
    g, m, radius, rho, cd = 9.81, 0.1, 0.1, 1.2, 0.47
    w = World(dim=2, gravity=(0, -g), integrator="ias15")
    w.add_body(position=(0, -1e7), radius=1e6, fixed=True)  # the atmosphere's body, far below
    w.add_body(position=(0, 1e4), mass=m, radius=radius, drag_coefficient=cd)
    w.add_force(Atmosphere(body=0, surface_density=rho, scale_height=math.inf))
    v_t = math.sqrt(2 * m * g / (rho * cd * math.pi * radius**2))
    for t in (0.3, 1.0, 5 * v_t / g):
        w.run(until=t)
        assert -w.velocities[1, 1] == pytest.approx(v_t * math.tanh(g * t / v_t), rel=1e-10)


def test_terminal_speed_in_an_exponential_atmosphere_keeps_long_steps():
    """A ball falling 1 km up through the Earth's air reaches the local terminal speed sqrt(2 m g / (rho(h) Cd
    A)) (to 1e-3: it lags the thickening air by about v_t^2 / (g H)). There drag cancels gravity to round-off;
    the step error is measured against gravity's magnitude, not the net acceleration, so the steps stay long:
    under 500 for 10 s (against them, 190,000 steps of 5e-5 s)."""
    g, m, radius, cd, rho0, scale = 9.81, 0.1, 0.1, 0.47, 1.225, 8500.0
    w = World(dim=2, gravity=(0, -g), integrator="ias15")
    w.add_body(position=(0, -6.371e6), radius=6.371e6, fixed=True)
    w.add_body(position=(0, 1000.0), mass=m, radius=radius, drag_coefficient=cd)
    w.add_force(Atmosphere(body=0, surface_density=rho0, scale_height=scale))
    w.run(until=10.0)
    rho = rho0 * math.exp(-w.positions[1, 1] / scale)  # (altitude: the centre above the surface)
    v_t = math.sqrt(2 * m * g / (rho * cd * math.pi * radius**2))
    assert -w.velocities[1, 1] == pytest.approx(v_t, rel=1e-3)
    assert w.step_count < 500
