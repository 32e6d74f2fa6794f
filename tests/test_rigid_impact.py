"""The impact law of planar rigid bodies (`carom.contact.rigid`): exact answers, rounds, friction, energy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_newton_coulomb, naive_rigid_rounds

from carom.contact.rigid import (
    RigidBodies,
    RigidContacts,
    RigidImpact,
    contact_rates,
    resolve_rigid_impact,
    solve_rigid_round,
)
from carom.errors import ContactError

FLOOR = (0.0, -1.0)  # the normal from a body into a floor below it


def cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def box_corners(width, height, angle):
    """Corners of a width x height box centred at the origin, rotated by angle (rad, counter-clockwise)."""
    c, s = math.cos(angle), math.sin(angle)
    local = np.array([[-width / 2, -height / 2], [width / 2, -height / 2], [width / 2, height / 2],
                      [-width / 2, height / 2]])  # fmt: skip
    return local @ np.array([[c, -s], [s, c]]).T


def one_body(mass, inertia, velocity, spin=0.0, position=(0.0, 0.0)):
    return RigidBodies(np.array([position], dtype=float), np.array([velocity], dtype=float), np.array([spin]),
                       np.array([1.0 / mass]), np.array([1.0 / inertia]))  # fmt: skip


def on_floor(points, e, mu):
    k = len(points)
    return RigidContacts(np.zeros(k, int), np.full(k, -1), np.array(points, dtype=float), np.array([FLOOR] * k),
                         np.full(k, e), np.full(k, mu))  # fmt: skip


def energy(bodies, v, w):
    free = bodies.inv_mass > 0
    lin = 0.5 * np.sum(np.sum(v[free] ** 2, axis=1) / bodies.inv_mass[free])
    rot = bodies.inv_inertia > 0
    return lin + 0.5 * np.sum(w[rot] ** 2 / bodies.inv_inertia[rot])


def momenta(bodies, v, w, about=(0.0, 0.0)):
    """Linear momentum (2,) and angular momentum about ``about`` of free bodies."""
    m = 1.0 / bodies.inv_mass
    p = (m[:, None] * v).sum(axis=0)
    arm = bodies.position - np.asarray(about)
    spin = w / bodies.inv_inertia
    return p, float(np.sum(m * (arm[:, 0] * v[:, 1] - arm[:, 1] * v[:, 0]) + spin))


def rates_after(bodies, contacts, result):
    out = np.zeros((len(contacts.body_i), 2))
    contact_rates(np.asarray(contacts.body_i, dtype=np.int64), np.asarray(contacts.body_j, dtype=np.int64),
                  np.asarray(contacts.point, dtype=float), np.asarray(contacts.normal, dtype=float),
                  bodies.position, result.velocity, result.angular_velocity, out)  # fmt: skip
    return out


# ---------------------------------------------------------------------------------------------------------
# One corner


def test_tilted_box_lands_on_one_corner_with_the_published_numbers():
    m, width, height, e = 2.0, 1.0, 0.5, 0.5
    inertia = m * (width**2 + height**2) / 12
    corners = box_corners(width, height, math.radians(30))
    low = corners[np.argmin(corners[:, 1])]
    bodies = one_body(m, inertia, (0.0, -3.0))
    contacts = on_floor([low], e, 0.0)
    out = resolve_rigid_impact(bodies, contacts)
    arm = cross(low, FLOOR)
    j = (1 + e) * 3.0 / (1 / m + arm**2 / inertia)  # the closed form
    assert out.impulse[0, 0] == pytest.approx(j, rel=1e-12, abs=0)
    assert out.impulse[0, 1] == 0.0
    np.testing.assert_allclose(out.velocity[0], [0.0, -3.0 + j / m], rtol=0, atol=1e-12)
    assert out.angular_velocity[0] == pytest.approx(-arm * j / inertia, rel=1e-12, abs=0)
    # the published figures (six decimals)
    assert abs(out.impulse[0, 0] - 4.710144) < 5e-7
    assert abs(out.velocity[0, 1] - -0.644928) < 5e-7
    assert abs(out.angular_velocity[0] - -6.963764) < 5e-7
    # the corner leaves the floor at exactly e times its approach speed
    assert rates_after(bodies, contacts, out)[0, 0] == pytest.approx(-1.5, rel=0, abs=1e-12)
    assert out.rounds == 1


@pytest.mark.parametrize("theta_deg", [0.0, 20.0, 45.0, 70.0])
@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_a_thin_rod_end_hitting_a_step(theta_deg, e):
    """A horizontal thin rod (length L, I = m L^2 / 12) moving at v along the normal of a step's face
    inclined at theta to the rod's perpendicular hits it with its end: ``j = (1 + e) m v / (1 + 3 cos^2
    theta)``."""
    m, length, v = 3.0, 2.0, 1.7
    theta = math.radians(theta_deg)
    normal = (math.sin(theta), -math.cos(theta))  # from the rod into the step
    end = (length / 2, 0.0)
    bodies = one_body(m, m * length**2 / 12, (v * normal[0], v * normal[1]))
    contacts = RigidContacts([0], [-1], [end], [normal], [e], [0.0])
    out = resolve_rigid_impact(bodies, contacts)
    j = (1 + e) * m * v / (1 + 3 * math.cos(theta) ** 2)
    assert out.impulse[0, 0] == pytest.approx(j, rel=1e-12, abs=0)
    np.testing.assert_allclose(out.velocity[0], np.array(bodies.velocity[0]) - j * np.array(normal) / m, atol=1e-12,
                               rtol=0)  # fmt: skip
    assert out.angular_velocity[0] == pytest.approx(-cross(end, normal) * j * 12 / (m * length**2), abs=1e-12)
    assert rates_after(bodies, contacts, out)[0, 0] == pytest.approx(-e * v, abs=1e-12)


@pytest.mark.parametrize("e", [0.0, 0.4, 1.0])
def test_corner_of_a_free_square_hits_the_face_of_another_off_centre(e):
    """Square A (side 1, 1 kg, turned 45 degrees, spinning) drives its corner into the left face of square B
    (side 2, 5 kg) 0.3 m above B's centre: both momenta conserved, Newton's law at the point, and the energy
    lost is exactly ``(1 - e^2) u^2 / (2 W)``."""
    m = np.array([1.0, 5.0])
    inertia = m * np.array([1.0**2 + 1.0**2, 2.0**2 + 2.0**2]) / 12
    corner = np.array([-1.0, 0.3])  # on B's left face x = -1
    position = np.array([corner - (math.sqrt(0.5), 0.0), [0.0, 0.0]])
    bodies = RigidBodies(position, np.array([[2.0, 0.5], [-0.3, 0.1]]), np.array([1.5, -0.2]), 1 / m, 1 / inertia)
    contacts = RigidContacts([0], [1], [corner], [(1.0, 0.0)], [e], [0.0])
    out = resolve_rigid_impact(bodies, contacts)
    for about in ((0.0, 0.0), tuple(corner), (7.0, -3.0)):
        p0, l0 = momenta(bodies, bodies.velocity, bodies.angular_velocity, about)
        p1, l1 = momenta(bodies, out.velocity, out.angular_velocity, about)
        np.testing.assert_allclose(p1, p0, rtol=0, atol=1e-12)
        assert l1 == pytest.approx(l0, rel=0, abs=1e-12)
    u = rates_after(bodies, contacts, RigidImpact(bodies.velocity, bodies.angular_velocity, None, 0))[0, 0]
    assert u > 0
    assert rates_after(bodies, contacts, out)[0, 0] == pytest.approx(-e * u, rel=0, abs=1e-12)
    w_nn = 1 / m[0] + 1 / m[1] + cross(corner - position[0], (1, 0)) ** 2 / inertia[0] + cross(corner, (1, 0)) ** 2 / \
        inertia[1]  # fmt: skip
    lost = energy(bodies, bodies.velocity, bodies.angular_velocity) - energy(bodies, out.velocity, out.angular_velocity)
    assert lost == pytest.approx((1 - e**2) * u**2 / (2 * w_nn), rel=1e-12, abs=1e-13)


# ---------------------------------------------------------------------------------------------------------
# Several contacts at once


def flat_box(angle=0.0, velocity=(0.0, -3.0), e=0.5, mu=0.0):
    m, width, height = 2.0, 1.0, 0.5
    corners = box_corners(width, height, angle)
    low = corners[np.argsort(corners[:, 1])[:2]]
    return one_body(m, m * (width**2 + height**2) / 12, velocity), on_floor(low, e, mu)


@pytest.mark.parametrize("mu", [0.0, 0.3, 0.6, 5.0])
def test_a_box_landing_flat_does_not_spin_or_drift(mu):
    bodies, contacts = flat_box(mu=mu)
    out = resolve_rigid_impact(bodies, contacts)
    assert abs(out.angular_velocity[0]) <= 1e-12
    assert abs(out.velocity[0, 0]) <= 1e-12
    assert out.velocity[0, 1] == pytest.approx(1.5, rel=0, abs=1e-12)
    np.testing.assert_allclose(out.impulse[:, 0], [4.5, 4.5], rtol=1e-12)  # m (1 + e) 3 / 2 each
    np.testing.assert_allclose(out.impulse[:, 1], [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(rates_after(bodies, contacts, out)[:, 0], [-1.5, -1.5], atol=1e-12)


@pytest.mark.parametrize("mu", [0.0, 0.3, 0.6])
@pytest.mark.parametrize("velocity", [(0.0, -3.0), (1.0, -3.0), (-4.0, -1.0)])
def test_a_box_tilted_by_1e_9_lands_almost_as_a_flat_one(mu, velocity):
    """Continuity: the two lowest corners of a box turned by 1e-9 rad, solved together, give the flat answer to
    1e-8 of the speed (the answer depends smoothly on the arms)."""
    flat = resolve_rigid_impact(*flat_box(velocity=velocity, mu=mu))
    for tilt in (1e-9, -1e-9):
        tilted = resolve_rigid_impact(*flat_box(angle=tilt, velocity=velocity, mu=mu))
        scale = np.abs(velocity).max()
        np.testing.assert_allclose(tilted.velocity, flat.velocity, rtol=0, atol=1e-8 * scale)
        assert abs(tilted.angular_velocity[0] - flat.angular_velocity[0]) <= 1e-8 * scale


def test_a_sliding_box_landing_flat_with_friction_stops_sliding_without_spin():
    """Landing flat at (1, -3) m/s with mu = 0.6: the cone holds 0.6 (1 + e) 3 m > m 1, so friction stops the
    slide; the box leaves at (0, 1.5) without spin, and the two normal impulses differ by the torque of
    friction about the centroid: ``P2 - P1 = 2 (h/2) T / w``."""
    bodies, contacts = flat_box(velocity=(1.0, -3.0), mu=0.6)
    out = resolve_rigid_impact(bodies, contacts)
    np.testing.assert_allclose(out.velocity[0], [0.0, 1.5], atol=1e-12)
    assert abs(out.angular_velocity[0]) <= 1e-12
    total_t = out.impulse[:, 1].sum()
    assert total_t == pytest.approx(2.0, rel=1e-12)  # m * 1 m/s
    right = np.argmax(contacts.point[:, 0])
    assert out.impulse[right, 0] - out.impulse[1 - right, 0] == pytest.approx(0.5 * total_t, rel=1e-12)
    assert np.all(np.abs(out.impulse[:, 1]) <= 0.6 * out.impulse[:, 0] * (1 + 1e-12))


def test_the_order_of_the_contacts_changes_nothing():
    m = np.array([1.0, 2.0, 3.0])
    bodies = RigidBodies(np.array([[0.0, 0.0], [1.1, 0.2], [0.4, 1.0]]), np.array([[1.0, -1.0], [-1.0, 0.5],
                         [0.2, -2.0]]), np.array([0.5, -1.0, 2.0]), 1 / m, 1 / (0.3 * m))  # fmt: skip
    contacts = RigidContacts([0, 0, 1, 2, 2], [1, -1, -1, 0, 1],
                             [[0.55, 0.1], [0.2, -0.5], [1.3, -0.4], [0.2, 0.5], [0.8, 0.6]],
                             [[1, 0], [0, -1], [0, -1], [0, -1], [0.6, -0.8]], [0.5, 0.2, 0.8, 0.0, 1.0],
                             [0.0, 0.4, 0.2, 0.0, 0.7])  # fmt: skip
    first = resolve_rigid_impact(bodies, contacts)
    for order in ([4, 3, 2, 1, 0], [2, 0, 4, 1, 3]):
        shuffled = RigidContacts(*(np.asarray(a)[order] for a in contacts))
        again = resolve_rigid_impact(bodies, shuffled)
        np.testing.assert_allclose(again.velocity, first.velocity, rtol=0, atol=1e-12)
        np.testing.assert_allclose(again.angular_velocity, first.angular_velocity, rtol=0, atol=1e-12)


def test_rounds_send_the_impulse_through_a_touching_row_of_boxes():
    """Three equal boxes in a row, touching face to face at two points each, the first arriving at 1 m/s,
    e = 1: the rounds give Newton's cradle (0, 0, 1) exactly, with no spin."""
    m = np.ones(3)
    inertia = m * (1 + 1) / 12
    x = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    bodies = RigidBodies(x, np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]), np.zeros(3), 1 / m, 1 / inertia)
    pts = [[0.5, -0.5], [0.5, 0.5], [1.5, -0.5], [1.5, 0.5]]
    contacts = RigidContacts([0, 0, 1, 1], [1, 1, 2, 2], pts, [[1, 0]] * 4, [1.0] * 4, [0.0] * 4)
    out = resolve_rigid_impact(bodies, contacts)
    np.testing.assert_allclose(out.velocity, [[0, 0], [0, 0], [1, 0]], atol=1e-12)
    np.testing.assert_allclose(out.angular_velocity, 0.0, atol=1e-12)
    assert out.rounds == 2


# ---------------------------------------------------------------------------------------------------------
# Friction and energy


@pytest.mark.parametrize(("mu", "vt", "spin"), [(0.1, 2.28, -18.0), (0.5, 15 / 7, -15 / 7 / 0.1)])
def test_a_ball_striking_a_floor_obliquely_gives_the_published_numbers(mu, vt, spin):
    """A solid sphere (R = 0.1 m, I = 2/5 m R^2) at (3, -4) m/s, e = 0.8, in the plane of its motion: with
    mu = 0.1 it slides through the impact (``v_t' = 2.28``, ``w' = -18`` rad/s), with mu = 0.5 it leaves
    rolling at ``15/7`` m/s (physics reference, "Impact with friction")."""
    m, radius = 1.3, 0.1
    bodies = one_body(m, 0.4 * m * radius**2, (3.0, -4.0))
    out = resolve_rigid_impact(bodies, on_floor([(0.0, -radius)], 0.8, mu))
    np.testing.assert_allclose(out.velocity[0], [vt, 3.2], rtol=1e-12)
    assert out.angular_velocity[0] == pytest.approx(spin, rel=1e-12)


KANE_LEVINSON = dict(angle=math.radians(25), velocity=(0.3, -1.0), e=1.0, mu=0.8)


def rod_on_floor(angle, velocity, e, mu):
    """A thin rod (1 kg, 1 m, I = 1/12) inclined at angle, its lower end on a fixed floor, not spinning."""
    end = -0.5 * np.array([math.cos(angle), math.sin(angle)])
    return one_body(1.0, 1 / 12, velocity), on_floor([end], e, mu), end


def test_kane_and_levinson_rod_gains_energy_with_the_naive_law_and_not_with_carom():
    """Kane & Levinson's rod: Newton's restitution with Coulomb friction against the initial slip gains 16%
    of the kinetic energy (the reference failure); Newton's law with friction solved on the slip after the
    impact still gains (the round's cap engages); carom's capped law gains nothing."""
    bodies, contacts, end = rod_on_floor(**KANE_LEVINSON)
    before = energy(bodies, bodies.velocity, bodies.angular_velocity)
    v, w = naive_newton_coulomb(1.0, 12.0, end, FLOOR, bodies.velocity[0], 0.0, KANE_LEVINSON["e"],
                                KANE_LEVINSON["mu"])  # fmt: skip
    assert (0.5 * v @ v + w**2 / 24) / before - 1 > 0.12
    # the uncapped velocity-level law gains too: the cap's factor on the rebound is below 1
    v_round, w_round = bodies.velocity.copy(), bodies.angular_velocity.copy()
    rates = np.zeros((1, 2))
    ci, cj = np.array([0]), np.array([-1])
    contact_rates(ci, cj, contacts.point, contacts.normal, bodies.position, v_round, w_round, rates)
    factor = solve_rigid_round(np.array([0]), ci, cj, contacts.point, contacts.normal, contacts.restitution,
                               contacts.friction, bodies.position, v_round, w_round, bodies.inv_mass,
                               bodies.inv_inertia, rates, np.zeros((1, 2)), 4096, False)  # fmt: skip
    assert 0.5 < factor < 0.99
    out = resolve_rigid_impact(bodies, contacts)
    after = energy(bodies, out.velocity, out.angular_velocity)
    assert after <= before
    assert after == pytest.approx(before, rel=1e-12)  # capped exactly at no gain
    assert rates_after(bodies, contacts, out)[0, 0] <= 0.0
    assert abs(out.impulse[0, 1]) <= KANE_LEVINSON["mu"] * out.impulse[0, 0] * (1 + 1e-12)


@pytest.mark.parametrize("angle_deg", [15, 30, 45, 60, 75])
@pytest.mark.parametrize("vx", [-1.0, 0.3, 1.0])
def test_a_rod_never_gains_energy_and_frictionless_rods_are_not_capped(angle_deg, vx):
    for e in (0.5, 0.9, 1.0):
        for mu in (0.0, 0.3, 0.8):
            bodies, contacts, end = rod_on_floor(math.radians(angle_deg), (vx, -1.0), e, mu)
            out = resolve_rigid_impact(bodies, contacts)
            before = energy(bodies, bodies.velocity, bodies.angular_velocity)
            assert energy(bodies, out.velocity, out.angular_velocity) <= before * (1 + 1e-14)
            if mu == 0.0:
                w_nn = 1 + cross(end, FLOOR) ** 2 * 12
                assert out.impulse[0, 0] == pytest.approx((1 + e) / w_nn, rel=1e-12)


# ---------------------------------------------------------------------------------------------------------
# Random bodies and contacts


@st.composite
def scenes(draw, walls=True, friction=True):
    n = draw(st.integers(2, 3))
    mass = np.array([draw(st.floats(0.1, 10.0)) for _ in range(n)])
    inertia = mass * np.array([draw(st.floats(0.01, 1.0)) for _ in range(n)])
    coords = st.floats(-1.0, 1.0)
    position = np.array([[draw(coords), draw(coords)] for _ in range(n)])
    speed = st.floats(-3.0, 3.0)
    velocity = np.array([[draw(speed), draw(speed)] for _ in range(n)])
    spin = np.array([draw(st.floats(-5.0, 5.0)) for _ in range(n)])
    k = draw(st.integers(1, 4))
    body_i, body_j, point, normal, e, mu = [], [], [], [], [], []
    for _ in range(k):
        i = draw(st.integers(0, n - 1))
        others = [b for b in range(n) if b != i] + ([-1] if walls else [])
        body_i.append(i)
        body_j.append(draw(st.sampled_from(others)))
        point.append([draw(coords), draw(coords)])
        angle = draw(st.floats(0.0, 2 * math.pi))
        normal.append([math.cos(angle), math.sin(angle)])
        e.append(draw(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0.0, 1.0)))
        mu.append(draw(st.sampled_from([0.0, 0.3, 1.0]) | st.floats(0.0, 2.0)) if friction else 0.0)
    bodies = RigidBodies(position, velocity, spin, 1 / mass, 1 / inertia)
    return bodies, RigidContacts(np.array(body_i), np.array(body_j), np.array(point), np.array(normal), np.array(e),
                                 np.array(mu))  # fmt: skip


def check_law(bodies, contacts, out):
    """Energy never rises (beyond the round-off of a sum of six terms, 1e-14 of it); no contact approaches after
    (1e-9 of the largest contact speed before); every impulse in its cone (1e-9 of the impulses)."""
    before = energy(bodies, bodies.velocity, bodies.angular_velocity)
    assert energy(bodies, out.velocity, out.angular_velocity) <= before * (1 + 1e-14) + 1e-300
    before_rates = rates_after(bodies, contacts, RigidImpact(bodies.velocity, bodies.angular_velocity, None, 0))
    scale = np.abs(before_rates).max()
    assert rates_after(bodies, contacts, out)[:, 0].max() <= 1e-9 * scale
    p_scale = np.abs(out.impulse).max() + 1e-300
    assert out.impulse[:, 0].min() >= -1e-9 * p_scale
    assert np.all(np.abs(out.impulse[:, 1]) <= contacts.friction * out.impulse[:, 0] + 1e-9 * p_scale)


@settings(max_examples=200)
@given(scenes(walls=False))
def test_random_impacts_between_free_bodies_conserve_momenta_and_never_gain_energy(scene):
    bodies, contacts = scene
    out = resolve_rigid_impact(bodies, contacts)
    check_law(bodies, contacts, out)
    scale = (
        np.abs(1 / bodies.inv_mass[:, None] * bodies.velocity).sum()
        + np.abs(bodies.angular_velocity / bodies.inv_inertia).sum()
    )
    for about in ((0.0, 0.0), (2.0, -1.0)):
        p0, l0 = momenta(bodies, bodies.velocity, bodies.angular_velocity, about)
        p1, l1 = momenta(bodies, out.velocity, out.angular_velocity, about)
        np.testing.assert_allclose(p1, p0, rtol=0, atol=1e-12 * max(scale, 1.0))
        assert abs(l1 - l0) <= 1e-12 * max(scale, 1.0) * 4


@settings(max_examples=200)
@given(scenes())
def test_random_impacts_with_walls_never_gain_energy_nor_leave_an_approach(scene):
    bodies, contacts = scene
    check_law(bodies, contacts, resolve_rigid_impact(bodies, contacts))


@settings(max_examples=100)
@given(scenes(friction=False), st.booleans())
def test_frictionless_impacts_match_the_dense_enumeration(scene, blocks):
    """Frictionless rounds against `naive_rigid_rounds`; with ``blocks`` every round by block Gauss–Seidel."""
    bodies, contacts = scene
    out = resolve_rigid_impact(bodies, contacts, max_modes=1 if blocks else 4096)
    v, w = naive_rigid_rounds(*bodies, contacts.body_i, contacts.body_j, contacts.point, contacts.normal,
                              contacts.restitution)  # fmt: skip
    scale = np.abs(bodies.velocity).max() + np.abs(bodies.angular_velocity).max()
    np.testing.assert_allclose(out.velocity, v, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(out.angular_velocity, w, rtol=0, atol=1e-8 * scale)


# ---------------------------------------------------------------------------------------------------------
# Bad input


def test_bad_input_names_the_field_and_the_value():
    bodies, contacts = flat_box()
    with pytest.raises(ValueError, match=r"restitution\[1\] must be in \[0, 1\], got 1.5"):
        resolve_rigid_impact(bodies, contacts._replace(restitution=[0.5, 1.5]))
    with pytest.raises(ValueError, match=r"friction\[0\] must be >= 0, got -0.1"):
        resolve_rigid_impact(bodies, contacts._replace(friction=[-0.1, 0.0]))
    with pytest.raises(ValueError, match=r"normal\[0\] must be a unit vector"):
        resolve_rigid_impact(bodies, contacts._replace(normal=[[0.0, -2.0], [0.0, -1.0]]))
    with pytest.raises(ValueError, match=r"body_i\[1\] must be a body id in \[0, 1\), got 3"):
        resolve_rigid_impact(bodies, contacts._replace(body_i=[0, 3]))
    with pytest.raises(ValueError, match=r"body_j\[0\] must be another body id"):
        resolve_rigid_impact(bodies, contacts._replace(body_j=[0, -1]))
    with pytest.raises(ValueError, match=r"inv_mass must be >= 0, got -0.5 for body 0"):
        resolve_rigid_impact(bodies._replace(inv_mass=np.array([-0.5])), contacts)
    with pytest.raises(ValueError, match=r"velocity must be finite"):
        resolve_rigid_impact(bodies._replace(velocity=np.array([[np.nan, 0.0]])), contacts)
    with pytest.raises(ValueError, match=r"point must have shape \(2, 2\)"):
        resolve_rigid_impact(bodies, contacts._replace(point=[[0.0, 0.0]]))


def test_a_fixed_body_driven_into_a_wall_is_crushed():
    fixed = RigidBodies(np.zeros((1, 2)), np.array([[0.0, -1.0]]), np.zeros(1), np.zeros(1), np.zeros(1))
    with pytest.raises(ContactError, match="no velocities satisfy them all"):
        resolve_rigid_impact(fixed, on_floor([(0.0, -0.5)], 0.5, 0.0), max_rounds=3)
