"""Static against kinetic friction, against textbook statics: a body stays stuck whenever some admissible split
of its contact forces holds it, and slides at the Coulomb rate otherwise. A box resting flat on two corners is
hyperstatic (the split of its friction between them is not unique); every case here has mu_s != mu_k, so that
friction acting as kinetic where it sticks (or static where it slides) gives a different answer."""

import math

import numpy as np
import pytest

import carom

G = 9.81


def incline_world(theta, mu_s, mu_k):
    """A fixed incline at theta (a wall through the origin) with the given coefficients, and its unit normal."""
    n = np.array([-math.sin(theta), math.cos(theta)])
    w = carom.World(dim=2, gravity=(0, -G))
    w.add_wall((0, 0), n, restitution=0.0, static_friction=mu_s, kinetic_friction=mu_k)
    return w, n


def add_flat_box(w, n, theta, width, height, base, mu_s, mu_k, mass=1.0):
    """A box lying flat on the incline, its bottom face ``base`` (m) above the wall, centred on the normal."""
    return w.add_rectangle(width, height, tuple((base + 0.5 * height) * n), angle=theta, mass=mass,
                           restitution=0.0, static_friction=mu_s, kinetic_friction=mu_k)  # fmt: skip


def slide_distance(theta, mu_k, t):
    """Distance (m) down the slope after t s from rest at the Coulomb rate g (sin theta - mu_k cos theta)."""
    return 0.5 * G * (math.sin(theta) - mu_k * math.cos(theta)) * t * t


@pytest.mark.parametrize("degrees", range(5, 27))
def test_a_box_on_an_incline_holds_while_tan_theta_is_within_mu_s(degrees):
    """tan 26 deg = 0.488 <= mu_s = 0.5 (and above mu_k = 0.4 from 22 deg): static friction holds the box. It may
    creep only by the held solve's tolerance: at most 1e-9 m over 10 s, and it must not rock."""
    theta = math.radians(degrees)
    w, n = incline_world(theta, 0.5, 0.4)
    b = add_flat_box(w, n, theta, 1.0, 0.2, 0.0, 0.5, 0.4)
    x0 = w.positions[b].copy()
    w.run(until=10.0, dt=1 / 60)
    assert np.linalg.norm(w.positions[b] - x0) <= 1e-9
    assert abs(w.angles[b] - theta) <= 1e-9
    assert abs(w.angular_velocities[b]) <= 1e-9


@pytest.mark.parametrize(("degrees", "dt"), [*((d, 0.01) for d in range(27, 41)), (27, 1e-3), (40, 1e-3)])
def test_a_box_on_an_incline_slides_at_the_kinetic_rate_beyond_mu_s(degrees, dt):
    """tan 27 deg = 0.510 > mu_s = 0.5: the box slides from the start, with kinetic friction mu_k = 0.4, at
    g (sin theta - mu_k cos theta), exact on a parabola whatever dt (to 1e-9 relative over 1 s). With mu_s in
    place of mu_k it would travel 5 cm less at 27 deg."""
    theta = math.radians(degrees)
    w, n = incline_world(theta, 0.5, 0.4)
    b = add_flat_box(w, n, theta, 1.0, 0.2, 0.0, 0.5, 0.4)
    x0 = w.positions[b].copy()
    w.run(until=1.0, dt=dt)
    assert np.linalg.norm(w.positions[b] - x0) == pytest.approx(slide_distance(theta, 0.4, 1.0), rel=1e-9)
    assert abs(w.angles[b] - theta) <= 1e-9


@pytest.mark.parametrize(("width", "height", "mu_s", "mu_k", "degrees"),
                         [(1.0, 0.5, 0.5, 0.1, 26), (1.0, 1.0, 0.5, 0.4, 26), (1.0, 1.0, 0.8, 0.3, 38),
                          (1.0, 0.5, 0.5, 0.4, 25)])  # fmt: skip
@pytest.mark.parametrize("dt", [1 / 60, 1e-3])
def test_boxes_of_any_shape_hold_to_the_static_angle(width, height, mu_s, mu_k, degrees, dt):
    """The thresholds do not depend on mu_k or on the box's shape (while it does not tip: tan theta < width /
    height): tan 26 deg = 0.488 < 0.5, tan 38 deg = 0.781 < 0.8. Before, these slid from 15-24 degrees."""
    theta = math.radians(degrees)
    w, n = incline_world(theta, mu_s, mu_k)
    b = add_flat_box(w, n, theta, width, height, 0.0, mu_s, mu_k)
    x0 = w.positions[b].copy()
    w.run(until=2.0, dt=dt)
    assert np.linalg.norm(w.positions[b] - x0) <= 1e-9
    assert abs(w.angles[b] - theta) <= 1e-9


def two_boxes(theta, pair=None):
    """A 1 x 0.2 box on the incline (mu_s 0.5, mu_k 0.3) and a 0.5 x 0.2 box resting on it, both 1 kg; ``pair``:
    (mu_s, mu_k) between the two boxes, else the same coefficients."""
    w, n = incline_world(theta, 0.5, 0.3)
    low = add_flat_box(w, n, theta, 1.0, 0.2, 0.0, 0.5, 0.3)
    top = add_flat_box(w, n, theta, 0.5, 0.2, 0.2, 0.5, 0.3)
    if pair is not None:
        w.set_pair_friction(low, top, *pair)
    return w, low, top


def test_a_stack_of_two_boxes_holds_on_the_incline():
    """Two boxes stacked on a 25 deg incline, mu_s = 0.5 > tan 25 deg = 0.466 on every contact: the stack is
    hyperstatic twice over, and stands still."""
    theta = math.radians(25)
    w, _, _ = two_boxes(theta)
    x0 = w.positions.copy()
    w.run(until=3.0, dt=1 / 60)
    assert np.abs(w.positions - x0).max() <= 1e-9
    assert np.abs(w.angles - theta).max() <= 1e-9


def test_a_stack_of_two_boxes_slides_as_one_beyond_mu_s():
    """At 28 deg (tan 0.532 > 0.5) the stack slides at g (sin - mu_k cos) on the incline's kinetic friction;
    the top box needs only mu_k < mu_s to ride along, so the two move as one."""
    theta = math.radians(28)
    w, low, top = two_boxes(theta)
    x0 = w.positions.copy()
    w.run(until=1.0, dt=1 / 60)
    moved = np.linalg.norm(w.positions - x0, axis=1)
    assert moved[low] == pytest.approx(slide_distance(theta, 0.3, 1.0), rel=1e-9)
    assert np.linalg.norm((w.positions[top] - w.positions[low]) - (x0[top] - x0[low])) <= 1e-9


def test_a_box_slides_on_a_box_that_static_friction_holds():
    """At 20 deg, the top box's contact with the lower one has mu_s = 0.3 < tan 20 deg = 0.364, mu_k = 0.2: it
    slides at g (sin - 0.2 cos). The lower box, pressed by the top box's weight and dragged by its kinetic
    friction, needs m g sin + 0.2 m g cos = 0.55 m g cos of friction from the incline, within mu_s (2 m) g cos
    = m g cos: it holds, while one of its corners carries much of the load."""
    theta = math.radians(20)
    w, low, top = two_boxes(theta, pair=(0.3, 0.2))
    x0 = w.positions.copy()
    w.run(until=0.5, dt=1 / 60)
    assert np.linalg.norm(w.positions[low] - x0[low]) <= 1e-9
    assert np.linalg.norm(w.positions[top] - x0[top]) == pytest.approx(slide_distance(theta, 0.2, 0.5), rel=1e-9)


def pivot_time(theta, width, height, turn):
    """Seconds for a box (width x height) released flat on an incline at theta to turn by ``turn`` rad about its
    lower edge, held still there: I_edge phi'' = torque of gravity about the edge, I_edge = m (w^2 + h^2) / 3."""
    from scipy.integrate import solve_ivp

    gx, gy = G * math.sin(theta), -G * math.cos(theta)  # down the slope, along the incline's normal

    def rates(_, y):
        phi, spin = y
        cx = -0.5 * width * math.cos(phi) + 0.5 * height * math.sin(phi)  # centre from the edge, slope frame
        cy = 0.5 * width * math.sin(phi) + 0.5 * height * math.cos(phi)
        return [spin, (cy * gx - cx * gy) / ((width**2 + height**2) / 3.0)]

    turned = lambda _, y: y[0] - turn  # noqa: E731
    turned.terminal = True
    return float(solve_ivp(rates, (0, 10), [0, 0], events=turned, rtol=1e-12, atol=1e-12).t_events[0][0])


def test_a_tall_box_stands_below_its_tipping_angle():
    """A box 0.5 wide and 1 tall at 26 deg: tan 26 deg = 0.488 < width / height and < mu_s = 0.55: it stands
    still, although mu_k = 0.3 could not hold it."""
    theta = math.radians(26)
    w, n = incline_world(theta, 0.55, 0.3)
    b = add_flat_box(w, n, theta, 0.5, 1.0, 0.0, 0.55, 0.3)
    x0 = w.positions[b].copy()
    w.run(until=2.0, dt=1 / 60)
    assert abs(w.angles[b] - theta) <= 1e-9
    assert np.linalg.norm(w.positions[b] - x0) <= 1e-9


@pytest.mark.parametrize(("degrees", "mu_s"), [(28, 0.55), (35, 0.8)])
def test_a_tall_box_tips_before_it_slides(degrees, mu_s):
    """A box 0.5 wide and 1 tall tips over its lower edge once tan theta > 0.5, and static friction keeps that
    edge still (the rigid pivot's friction demand stays below mu_s until it has turned 0.82 rad at 28 deg, 0.72
    at 35), even with mu_k = 0.3 below tan theta: it turns by 0.5 rad at the pivot's time (the equation of
    motion about the edge, integrated apart; the held motion is first order in dt: within 3 steps of 1 ms),
    its edge within 1e-4 m of where it started. Kinetic friction at that edge would slide the box down the
    slope instead."""
    theta = math.radians(degrees)
    w, n = incline_world(theta, mu_s, 0.3)
    b = add_flat_box(w, n, theta, 0.5, 1.0, 0.0, mu_s, 0.3)

    def edge():
        c, s = math.cos(w.angles[b]), math.sin(w.angles[b])
        return w.positions[b] + np.array([-0.25 * c + 0.5 * s, -0.25 * s - 0.5 * c])

    start, t, dt = edge(), 0.0, 1e-3
    while w.angles[b] - theta < 0.5:
        w.step(dt)
        t += dt
    assert t == pytest.approx(pivot_time(theta, 0.5, 1.0, 0.5), abs=3 * dt)
    assert np.linalg.norm(edge() - start) <= 1e-4


def three_disks(mu):
    """Two disks touching on a floor, a third on top (R = 0.1 m, e = 0.5, mu_s = mu, mu_k = mu / 2 everywhere)."""
    r = 0.1
    w = carom.World(dim=2, gravity=(0, -G))
    w.add_wall(point=(0, 0), normal=(0, 1), restitution=0.5, static_friction=mu, kinetic_friction=mu / 2)
    w.add_bodies([(-r, r), (r, r), (0.0, r + math.sqrt(3) * r)], masses=1.0, radii=r, restitution=0.5,
                 static_friction=mu, kinetic_friction=mu / 2)  # fmt: skip
    return w


@pytest.mark.parametrize("dt", [1 / 60, 1e-3])
@pytest.mark.parametrize(("mu", "stands"), [(0.27, True), (0.26, False)])
def test_three_touching_disks_stand_from_mu_two_minus_root_three(dt, mu, stands):
    """The top disk rests on the two below along lines 30 deg from the vertical: the stack stands only if static
    friction between the disks reaches tan 15 deg = 2 - sqrt 3 = 0.268 (the floor needs less). At 0.27 the top
    disk stays within 1e-9 m over 2 s; at 0.26 it falls through."""
    w = three_disks(mu)
    top = w.positions[2].copy()
    w.run(until=2.0, dt=dt)
    if stands:
        assert np.linalg.norm(w.positions[2] - top) <= 1e-9
    else:
        assert w.positions[2, 1] < top[1] - 0.05
