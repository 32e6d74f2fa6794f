"""Rigid polygons stepped by `World` (`carom.step.rigid`), against exact answers: the issue's one-corner impact,
a rod's end on a step, flat landings, thin fast plates, inclines, a tower, and energy that never rises."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carom

C30, S30 = math.cos(math.pi / 6), math.sin(math.pi / 6)


def one_corner_world(dt_gravity=None):
    w = carom.World(dim=2, gravity=dt_gravity)
    b = w.add_rectangle(1.0, 0.5, (0.0, 1.0), angle=math.pi / 6, velocity=(0.0, -3.0), mass=2.0, restitution=0.5)
    w.add_wall((0, 0), (0, 1), restitution=1.0)
    return w, b


@pytest.mark.parametrize("dt", [1e-3, 0.1, 1.0])
def test_one_corner_landing_is_the_exact_impulse_at_any_dt(dt):
    """The docs' derivation: j = 1.5 * 3 / W_nn with W_nn = 1/2 + (r x n)^2 / I, r the lowest corner turned by
    30 degrees; the box leaves at (0, -3 + j/m) spinning at -(r x n) j / I, its corner at exactly e * 3."""
    w, b = one_corner_world()
    impacts = []
    w.on_impact(impacts.append)
    inertia = 2.0 * (1.0 + 0.25) / 12.0
    arm = 0.5 * C30 - 0.25 * S30  # r x n for n = (0, -1): r_x n_y - r_y n_x = -r_x
    j = 1.5 * 3.0 / (0.5 + arm**2 / inertia)
    # the corner reaches the floor after (1 - (0.5 S30 + 0.25 C30)) / 3 s; stop before the second corner lands
    w.run(until=0.2, dt=dt)
    first = impacts[0]
    assert first.impulse == pytest.approx(4.710144, abs=5e-7)
    assert first.impulse == pytest.approx(j, rel=1e-12)
    assert np.allclose(w.velocities[b], [0.0, -3.0 + j / 2.0], rtol=0, atol=1e-12)
    assert w.angular_velocities[b] == pytest.approx(-arm * j / inertia, abs=1e-12)
    assert w.angular_velocities[b] == pytest.approx(-6.963764, abs=5e-7)
    assert first.point[1] == pytest.approx(0.0, abs=1e-9)
    # the corner at the impact, r = (-arm, -(0.5 S30 + 0.25 C30)) from the centre, leaves at exactly e * 3
    corner_vy = w.velocities[b][1] + w.angular_velocities[b] * (-arm)
    assert corner_vy == pytest.approx(1.5, abs=1e-12)


def test_a_corner_sliding_through_its_impact_takes_the_kinetic_coefficient():
    """The box of the test above (2 kg, 1 m x 0.5 m, turned 30 degrees, e = 0.5) lands on its corner
    r = (-(0.5 C30 - 0.25 S30), -(0.5 S30 + 0.25 C30)) from its centre moving at (5, -2) m/s, on a floor with
    mu_s = 0.9, mu_k = 0.1. It slides throughout (its corner still slips forward after), so the impulse on
    the box is J (n - mu_k x) with n = (0, 1): its normal speed changes by J (1/m + r_x (r_x + mu_k r_y) / I)
    = (1 + e) 2, and the friction impulse is mu_k J (round-off). The static coefficient plays no part in an
    impact: mu_s would give 0.9 J, with J 1.90 N s instead of 2.93."""
    mu_s, mu_k, e, mass = 0.9, 0.1, 0.5, 2.0
    w = carom.World(dim=2)
    b = w.add_rectangle(1.0, 0.5, (0.0, 1.0), angle=math.pi / 6, velocity=(5.0, -2.0), mass=mass, restitution=e,
                        static_friction=mu_s, kinetic_friction=mu_k)  # fmt: skip
    w.add_wall((0, 0), (0, 1), restitution=e, static_friction=mu_s, kinetic_friction=mu_k)
    impacts = []
    w.on_impact(impacts.append)
    w.run(until=0.3, dt=0.3)  # (it lands after 0.23 s)
    inertia = mass * (1.0 + 0.25) / 12.0
    r_x, r_y = -(0.5 * C30 - 0.25 * S30), -(0.5 * S30 + 0.25 * C30)
    j = (1 + e) * 2.0 / (1 / mass + r_x * (r_x + mu_k * r_y) / inertia)
    assert len(impacts) == 1
    assert impacts[0].impulse == pytest.approx(j, rel=1e-12)
    np.testing.assert_allclose(impacts[0].tangential_impulse, [mu_k * j, 0.0], rtol=1e-12, atol=1e-15)
    assert w.velocities[b, 0] - w.angular_velocities[b] * r_y > 0.0  # the corner's slip after: still forward


def test_rod_end_on_a_step():
    """A thin horizontal rod falling flat, its end over a fixed step: j = (1 + e) v / (1/m + (L/2)^2 / I), which
    for a thin rod is (1 + e) m v / 4."""
    length, thick, m, v, e = 2.0, 1e-3, 3.0, 2.0, 0.6
    w = carom.World(dim=2)
    rod = w.add_rectangle(length, thick, (0.0, 0.5), velocity=(0, -v), mass=m, restitution=e)
    w.add_rectangle(1.0, 1.0, (1.45, 0.5 - thick / 2 - 0.5 - 0.1), fixed=True, restitution=1.0)
    impacts = []
    w.on_impact(impacts.append)
    w.run(until=0.06, dt=0.01)
    inertia = m * (length**2 + thick**2) / 12.0
    arm = 0.95  # the step's corner, at x = 0.95, under the rod
    j = (1 + e) * v / (1 / m + arm**2 / inertia)
    assert len(impacts) == 1
    assert impacts[0].impulse == pytest.approx(j, rel=1e-12)
    assert w.angular_velocities[rod] == pytest.approx(arm * j / inertia, rel=1e-12)


def test_free_squares_conserve_both_momenta():
    """A corner of a spinning square into the face of another, off centre, no gravity: linear and angular
    momentum (about two points) conserved to round-off, the energy lost (1 - e^2) u^2 / (2 W_nn) at most."""
    w = carom.World(dim=2)
    a = w.add_rectangle(1.0, 1.0, (-1.5, 0.3), angle=math.pi / 4, velocity=(2.0, 0.0), angular_velocity=1.5,
                        mass=1.0, restitution=0.7)  # fmt: skip
    w.add_rectangle(2.0, 2.0, (1.0, 0.0), mass=5.0, restitution=0.7)
    p0, l0, l1, e0 = w.momentum(), w.angular_momentum(), w.angular_momentum(origin=(3, -2)), w.kinetic_energy()
    w.run(until=1.0, dt=0.05)
    assert w.collision_count >= 1
    assert np.allclose(w.momentum(), p0, rtol=0, atol=1e-12)
    assert w.angular_momentum() == pytest.approx(l0, abs=1e-12)
    assert w.angular_momentum(origin=(3, -2)) == pytest.approx(l1, abs=1e-12)
    assert w.kinetic_energy() < e0
    assert w.velocities[a][0] < 2.0


@pytest.mark.parametrize("friction", [0.0, 0.6])
def test_flat_landing_has_no_spin_and_no_drift(friction):
    w = carom.World(dim=2)
    b = w.add_rectangle(1.0, 0.5, (0.3, 1.0), velocity=(0.0, -3.0), mass=2.0, restitution=0.5,
                        static_friction=friction)  # fmt: skip
    w.add_wall((0, 0), (0, 1), restitution=1.0, static_friction=friction)
    w.run(until=0.5, dt=0.1)
    assert w.collision_count == 2  # both corners, at one instant
    assert abs(w.angular_velocities[b]) <= 1e-12
    assert np.allclose(w.velocities[b], [0.0, 1.5], rtol=0, atol=1e-12)
    assert abs(w.positions[b][0] - 0.3) <= 1e-12  # (the velocity's bound over the run: round-off of the solve)


def test_tilted_landing_is_close_to_the_flat_one():
    """Continuity: tilted by 1e-9 rad, the box lands almost as it does flat (the corners within the touching
    distance land together)."""
    w = carom.World(dim=2)
    b = w.add_rectangle(1.0, 0.5, (0.3, 1.0), angle=1e-9, velocity=(0.0, -3.0), mass=2.0, restitution=0.5)
    w.add_wall((0, 0), (0, 1))
    w.run(until=0.5, dt=0.1)
    assert np.allclose(w.velocities[b], [0.0, 1.5], rtol=0, atol=1e-7)
    assert abs(w.angular_velocities[b]) <= 1e-7


@pytest.mark.parametrize("dt", [1e-4, 1e-2, 1.0])
def test_thin_fast_plate_never_passes_through(dt):
    """A 1 mm plate at 1 km/s against a fixed 1 mm plate 0.3 m away bounces (e = 1) at (0.3 - 0.001) / 1000 s and
    comes back at the same speed, whatever dt."""
    w = carom.World(dim=2)
    plate = w.add_rectangle(0.001, 0.2, (0.0, 0.0), velocity=(1000.0, 0.0), mass=0.1, restitution=1.0)
    w.add_rectangle(0.001, 1.0, (0.3, 0.0), fixed=True, restitution=1.0)
    impacts = []
    w.on_impact(impacts.append)
    w.run(until=0.001, dt=dt)
    assert len(impacts) == 2  # its two corners, at one instant
    for hit in impacts:
        assert hit.time == pytest.approx((0.3 - 0.001) / 1000.0, abs=1e-12)
    assert sum(hit.impulse for hit in impacts) == pytest.approx(2 * 0.1 * 1000.0, rel=1e-12)
    assert np.allclose(w.velocities[plate], [-1000.0, 0.0], rtol=0, atol=1e-9)
    assert w.positions[plate][0] < 0.3


def test_shuffled_insertion_changes_nothing():
    def run(order):
        w = carom.World(dim=2, gravity=(0, -9.81))
        w.add_wall((0, 0), (0, 1), restitution=0.4)
        boxes = [((0.0, 0.5), 0.0), ((0.2, 1.6), 0.3), ((-0.4, 2.8), -0.2)]
        ids = {}
        for k in order:
            ids[k] = w.add_rectangle(0.8, 0.6, boxes[k][0], angle=boxes[k][1], mass=1.0 + k, restitution=0.4)
        w.run(until=1.0, dt=1 / 60)
        return np.array([[*w.positions[ids[k]], w.angles[ids[k]]] for k in range(3)])

    assert np.allclose(run([0, 1, 2]), run([2, 0, 1]), rtol=0, atol=1e-9)


def incline(theta, mu_s, mu_k, until, width=1.0, height=0.5):
    n = np.array([-math.sin(theta), math.cos(theta)])
    w = carom.World(dim=2, gravity=(0, -9.81))
    w.add_wall((0, 0), n, restitution=0.0, static_friction=mu_s, kinetic_friction=mu_k)
    b = w.add_rectangle(width, height, tuple(0.5 * height * n), angle=theta, mass=1.0, restitution=0.0,
                        static_friction=mu_s, kinetic_friction=mu_k)  # fmt: skip
    x0 = w.positions[b].copy()
    w.run(until=until, dt=1 / 60)
    return w, b, w.positions[b] - x0


def test_box_stays_on_an_incline_within_static_friction():
    theta = math.radians(20)  # tan = 0.364 <= 0.5
    w, b, moved = incline(theta, 0.5, 0.5, 10.0)
    assert np.hypot(*moved) <= 1e-9
    assert w.angles[b] == pytest.approx(theta, abs=1e-9)


@pytest.mark.parametrize(("mu_s", "mu_k"), [(0.0, 0.0), (0.2, 0.1)])
def test_box_slides_down_an_incline_at_the_coulomb_rate(mu_s, mu_k):
    theta = math.radians(20)
    w, b, moved = incline(theta, mu_s, mu_k, 2.0)
    accel = 9.81 * (math.sin(theta) - mu_k * math.cos(theta))
    assert np.hypot(*moved) == pytest.approx(0.5 * accel * 4.0, rel=1e-9)
    assert np.hypot(*w.velocities[b]) == pytest.approx(accel * 2.0, rel=1e-9)
    assert abs(w.angular_velocities[b]) <= 1e-9


@pytest.mark.parametrize(("mu", "tips"), [(0.8, True), (0.3, False)])
def test_tall_box_tips_or_slides(mu, tips):
    """A box 0.5 wide and 1 tall on an incline with tan 35 degrees = 0.70 > w/h = 0.5: it tips when friction holds
    its foot (mu_s = 0.8), and slides without turning when it cannot (mu_s = 0.3 < tan 35)."""
    theta = math.radians(35)
    w, b, _ = incline(theta, mu, mu, 1.0, width=0.5, height=1.0)
    turned = abs(w.angles[b] - theta)
    assert (turned > 0.5) == tips
    if not tips:
        assert turned <= 1e-9


def stand(w, steps=600):
    """Step ``w`` at 1/60 s, asserting that no step raises the total energy beyond the held solve's tolerance:
    it stops when a sweep changes no rate by more than force_tolerance g dt, and the work its residual does is
    of that order times the impulses (about 5e-12 of the energy of a tower of 10 boxes)."""
    energy = w.total_energy()
    for _ in range(steps):
        w.step(1 / 60)
        now = w.total_energy()
        assert now <= energy + 2e-11 * abs(energy)
        energy = now


def test_tower_of_ten_boxes_stands_still():
    w = carom.World(dim=2, gravity=(0, -9.81))
    w.add_wall((0, 0), (0, 1), restitution=0.0, static_friction=0.6)
    for k in range(10):
        w.add_rectangle(1.0, 1.0, (0.0, 0.5 + k), mass=1.0, restitution=0.0, static_friction=0.6)
    x0 = w.positions.copy()
    stand(w)
    assert np.abs(w.positions - x0).max() <= 1e-6
    gaps = w.positions[1:, 1] - w.positions[:-1, 1] - 1.0
    assert gaps.min() >= -w.config.resting_gap * math.sqrt(0.5)


def test_pyramid_of_twenty_rows_stands_still():
    """Box2D's pyramid at the issue's size: 210 unit boxes (20 in the bottom row), friction 0.6, e = 0, 10 s at
    60 Hz. The top box drifts by at most 1e-6 m, no step raises the energy (beyond the held solve's
    tolerance, as for the tower), and no overlap is deeper than `resting_gap` times the box's circumradius."""
    from carom.narrowphase.polygons import polygon_contact, polygon_wall_contact
    from carom.shapes import rectangle_vertices

    rows = 20
    w = carom.World(dim=2, gravity=(0, -9.81))
    w.add_wall((0, 0), (0, 1), restitution=0.0, static_friction=0.6)
    for r in range(rows):
        for col in range(rows - r):
            w.add_rectangle(1.0, 1.0, (col - (rows - r - 1) / 2, 0.5 + r), mass=1.0, restitution=0.0,
                            static_friction=0.6)  # fmt: skip
    top = w.positions[-1].copy()
    stand(w)
    assert np.hypot(*(w.positions[-1] - top)) <= 1e-6
    square, x, a = rectangle_vertices(1.0, 1.0), w.positions, w.angles
    deepest = max(-float(polygon_wall_contact(square, x[b], a[b], (0, 0), (0, 1)).gaps.min()) for b in range(len(x)))
    for b in range(len(x)):
        for c in range(b + 1, len(x)):
            if np.hypot(*(x[c] - x[b])) < 1.5:
                deepest = max(deepest, -float(polygon_contact(square, x[b], a[b], square, x[c], a[c]).gaps.min()))
    assert deepest <= w.config.resting_gap * math.sqrt(0.5)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-1.5, 1.5), st.floats(0.5, 2.5), st.floats(-3, 3), st.floats(-5, 5)),
             min_size=1, max_size=4),
    st.floats(0.0, 1.0),
    st.floats(0.0, 0.8),
)  # fmt: skip
def test_energy_never_rises_in_a_box(boxes, e, mu):
    """Boxes with random poses, speeds and spins dropped into a walled box: the total energy never rises in a
    step (beyond the round-off of its sum), and no overlap stays deeper than resting_gap."""
    w = carom.World(dim=2, gravity=(0, -9.81))
    w.add_box((-3, 0), (3, 14), restitution=e, static_friction=mu)
    placed = []
    for x, y, vx, spin in boxes:
        pos = (x, y + 3.0 * len(placed))
        placed.append(w.add_rectangle(0.6, 0.4, pos, angle=spin / 3, velocity=(vx, 0.0), angular_velocity=spin,
                                      mass=1.0, restitution=e, static_friction=mu))  # fmt: skip
    energy = w.total_energy()
    for _ in range(60):
        w.step(1 / 60)
        now = w.total_energy()
        assert now <= energy + 1e-9 * (1.0 + abs(energy))
        energy = now
    for b in placed:
        assert w.polygon_vertices(b)[:, 1].min() >= -w.config.resting_gap * w.radii[b] * 1.01


@pytest.mark.parametrize("stacked", [False, True])
def test_a_box_pushed_out_of_an_overlap_pays_for_its_lift(stacked):
    """A 2 kg box (1 m x 0.5 m, smooth) sliding at 0.3 m/s, made to sink 1 mm (18 bands: resting_gap times
    its circumradius, 0.056 mm) into the floor (or into a box at rest under it) by hand: the step's
    projection lifts it out by l, which would add m g l (0.019 J) of potential energy. It is taken from the
    kinetic energy of the boxes moved: the total energy after the step is no more than before (round-off,
    1e-13 relative; measured 1e-12 less), and the box alone on the floor slides on at sqrt(v^2 - 2 g l)."""
    w = carom.World(dim=2, gravity=(0, -9.81))
    w.add_wall((0, 0), (0, 1), restitution=0.5)
    if stacked:
        w.add_rectangle(1.0, 0.5, (0.0, 0.25), mass=2.0, restitution=0.5)
    box = w.add_rectangle(1.0, 0.5, (0.0, 0.75 if stacked else 0.25), velocity=(0.3, 0.0), mass=2.0, restitution=0.5)
    w.positions[box, 1] -= 1e-3
    w.wake()
    e0, heights = w.total_energy(), w.positions[:, 1].copy()
    w.step(1e-2)
    rise = w.positions[:, 1] - heights
    lift = rise[box]
    assert lift - rise[0] * stacked > 1e-3 - w.config.resting_gap * w.radii[box]  # out, to within the band
    assert w.total_energy() <= e0 * (1 + 1e-13)
    if not stacked:
        assert w.velocities[box, 0] == pytest.approx(math.sqrt(0.3**2 - 2 * 9.81 * lift), rel=1e-9)


def test_a_cradle_of_boxes_passes_the_impact_through():
    """Four equal boxes in a row, the first striking the three that touch face to face (e = 1, smooth, no
    gravity): six contact points, more than the exact enumeration takes, solved in rounds by Gauss-Seidel.
    As a Newton's cradle: one in, one out, momentum and energy kept."""
    w = carom.World(dim=2)
    ids = [w.add_rectangle(1.0, 1.0, (-2.0, 0.0), velocity=(1.0, 0.0), mass=1.0, restitution=1.0)]
    ids += [w.add_rectangle(1.0, 1.0, (float(k), 0.0), mass=1.0, restitution=1.0) for k in range(3)]
    w.run(until=1.5, dt=0.1)
    assert np.allclose(w.velocities[ids], [[0, 0], [0, 0], [0, 0], [1, 0]], rtol=0, atol=1e-9)
    assert np.allclose(w.angular_velocities[ids], 0.0, rtol=0, atol=1e-9)
    assert w.kinetic_energy() == pytest.approx(0.5, rel=1e-9)


def test_kane_levinson_rod_gains_no_energy_through_the_engine():
    """Kane and Levinson's rod (1 kg, 1 m, inclined at 25 degrees, its lower end on the floor, falling at
    (0.3, -1) m/s, e = 1, mu = 0.8), the case where Newton's law with Coulomb friction creates energy: stepped
    by the engine (no gravity), the impact leaves the kinetic energy at most what it was, and the end leaves."""
    theta = math.radians(25)
    w = carom.World(dim=2)
    w.add_wall((0, 0), (0, 1), restitution=1.0, static_friction=0.8)
    thick = 1e-3
    lowest = 0.5 * math.sin(theta) + 0.5 * thick * math.cos(theta)  # the centre's height with a corner on the floor
    rod = w.add_rectangle(1.0, thick, (0.0, lowest), angle=theta, velocity=(0.3, -1.0), mass=1.0, restitution=1.0,
                          static_friction=0.8)  # fmt: skip
    before = w.kinetic_energy()
    impacts = []
    w.on_impact(impacts.append)
    start = w.positions[rod].copy()
    w.step(1e-6)  # (the impact is at the start of the step; no force acts after it)
    assert impacts and impacts[0].time == 0.0
    assert w.kinetic_energy() <= before * (1.0 + 1e-14)
    arm = impacts[0].point - start
    corner_vy = w.velocities[rod][1] + w.angular_velocities[rod] * arm[0]
    assert corner_vy >= -1e-12  # the end leaves the floor (or slides on it), never enters it


def test_resume_from_a_state_is_bit_identical():
    """get_state / set_state carry what a polygon world's next step depends on (the bodies held, the held
    forces that warm-start the next solve): a run resumed from a saved state ends on the same bits."""

    def build():
        w = carom.World(dim=2, gravity=(0, -9.81))
        w.add_box((-2, 0), (2, 6), restitution=0.3, static_friction=0.5)
        for k in range(3):
            w.add_rectangle(0.8, 0.4, (-0.5 + 0.4 * k, 0.5 + 0.7 * k), angle=0.3 * k, mass=1.0 + k, restitution=0.3,
                            static_friction=0.5)  # fmt: skip
        w.add_body((1.2, 0.5), velocity=(-2.0, 0.0), mass=1.0, radius=0.2, restitution=0.3, static_friction=0.5)
        return w

    straight = build()
    straight.run(until=0.5, dt=1 / 60)
    state = straight.get_state()
    assert state["held_bodies"].any() and len(state["held_contacts"])
    straight.run(until=1.0, dt=1 / 60)
    resumed = build()
    resumed.set_state(state)
    resumed.run(until=1.0, dt=1 / 60)
    for field in ("position", "velocity", "orientation", "angular_velocity"):
        assert np.array_equal(getattr(resumed.bodies, field), getattr(straight.bodies, field)), field


def test_held_forces_warm_start_each_point_from_its_own_force():
    """The warm start of a held solve matches each contact point to the force kept at that point of its pair
    (in body i's frame), a point that did not push included: a box resting on one corner of another keeps 0
    at the other corner, not its neighbour's force (which cost a 20-row pyramid 3,000 sweeps a step)."""
    from carom.step import rigid

    m = rigid.Motion(np.array([[0.0, 0.5], [0.3, 1.5]]), np.zeros((2, 2)), np.array([0.0, 0.2]), np.zeros(2),
                     np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2), np.zeros(2), np.zeros(2, dtype=bool))  # fmt: skip
    points = np.array([[-0.2, 1.0], [0.5, 1.0], [0.0, 0.0]])
    c = rigid.Contacts(np.array([0, 0, 1]), np.zeros(3, dtype=np.int64), np.array([1, 1, -1]), points,
                       np.array([[0.0, 1.0], [0.0, 1.0], [0.0, -1.0]]), np.zeros(3))  # fmt: skip
    impulse = np.array([[0.3, 0.05], [0.0, 0.0], [0.5, -0.1]])
    h = 1.0 / 60.0
    keys, local = rigid._pair_keys(c), rigid._local_points(m, c)
    memory = rigid._remember(rigid.HeldForces.empty(), keys, local, impulse, h)
    shuffled = np.array([2, 1, 0])
    again, known = rigid._warm_start(memory, keys[shuffled], local[shuffled], 0.5 * h)
    assert np.array_equal(again, 0.5 * impulse[shuffled]) and known == 3
    rows = rigid.held_rows(memory)  # saved and read back (get_state / set_state)
    assert np.array_equal(rigid._warm_start(rigid.held_memory(rows), keys, local, h)[0], impulse)


def test_an_interrupted_held_plan_gives_back_what_it_gained():
    """Where an event cuts a held plan short, the energy its held bodies gained since it began (kinetic, and
    the potential of the smooth forces; energy moves between them through their contacts) is taken from their
    kinetic energy: after `_Plans.settle` they have their plans' starting energy again, to round-off. A free
    body is left alone, and so are held bodies that lost energy."""
    from carom.step import rigid

    g = rigid.Outlines(np.zeros(3, dtype=np.int8), np.ones(3), np.zeros(4, dtype=np.int64), np.zeros((0, 2)),
                       np.zeros((0, 2)), np.array([0.5, 0.5, 0.5]), np.array([2.0, 2.0, 2.0]), np.zeros((0, 2)),
                       np.zeros((0, 2)), np.zeros((1, 2)))  # fmt: skip  (three bodies of 2 kg, 0.5 kg m^2)
    a_smooth = np.tile([0.0, -9.81], (3, 1))

    def energy(v, w, x):  # J: kinetic, and the potential of the smooth forces, of bodies 0 and 2
        return sum(v[b] @ v[b] + 0.25 * w[b] ** 2 + 2.0 * 9.81 * x[b, 1] for b in (0, 2))

    for lift in (0.001, -0.02):  # the held bodies gained energy, or lost it
        x = np.array([[0.0, lift], [3.0, 0.5], [6.0, -0.001]])
        v = np.array([[0.0, 1.0], [0.0, 2.0], [0.0, 0.5]])
        w = np.array([0.3, 0.0, 0.0])
        m = rigid.Motion(x, v, np.zeros(3), w, a_smooth, a_smooth.copy(), np.zeros(3), np.zeros(3),
                         np.zeros(3, dtype=bool))  # fmt: skip
        plans = rigid._Plans(np.array([[0.0, 0.0], [3.0, 0.0], [6.0, 0.0]]),
                             np.array([[0.0, 0.9], [0.0, 0.0], [0.0, 0.6]]), np.zeros(3),
                             np.array([True, False, True]))  # fmt: skip
        start = energy(plans.v, plans.w, plans.x)
        before = energy(v, w, x)
        plans.settle(g, m, np.arange(3))
        assert np.array_equal(m.v[1], [0.0, 2.0])
        if before > start:
            assert energy(m.v, m.w, m.x) == pytest.approx(start, rel=1e-14)
        else:
            assert energy(m.v, m.w, m.x) == before


def test_a_cold_held_solve_starts_from_the_static_forces_of_a_stack():
    """Two unit boxes (1 kg, I = 1/6 kg m^2) stacked on a floor, each about to fall at g h: the starting guess
    of a cold held solve (`_load_guess`) is the statics of the stack, m g h / 2 under each corner of the top
    box and m g h under each of the bottom one's, with no friction; Gauss-Seidel then has nothing to do
    (one sweep)."""
    from carom.contact.rigid import hold_impulses
    from carom.step import rigid

    h, grav = 1.0 / 60.0, 9.81
    g = rigid.Outlines(np.ones(2, dtype=np.int8), np.full(2, math.sqrt(0.5)), np.array([0, 4, 8]),
                       np.zeros((8, 2)), np.zeros((8, 2)), np.ones(2), np.full(2, 6.0), np.zeros((1, 2)),
                       np.array([[0.0, 1.0]]), np.zeros((1, 2)))  # fmt: skip
    x = np.array([[0.0, 0.5], [0.0, 1.5]])
    v = np.array([[0.0, -grav * h], [0.0, -grav * h]])
    w = np.zeros(2)
    points = np.array([[-0.5, 0.0], [0.5, 0.0], [-0.5, 1.0], [0.5, 1.0]])
    normals = np.array([[0.0, -1.0], [0.0, -1.0], [0.0, 1.0], [0.0, 1.0]])  # from i towards j (into the floor)
    c = rigid.Contacts(np.arange(4), np.array([0, 0, 0, 0]), np.array([-1, -1, 1, 1]), points, normals, np.zeros(4))
    mu = np.full(4, 0.6)
    a_smooth = np.array([[0.0, -grav], [0.0, -grav]])
    m = rigid.Motion(x, v, np.zeros(2), w, a_smooth, a_smooth.copy(), np.zeros(2), np.zeros(2), np.zeros(2, bool))
    guess = rigid._load_guess(g, c, m, np.arange(2), h, mu)
    expected = np.array([[1.0, 0.0], [1.0, 0.0], [0.5, 0.0], [0.5, 0.0]]) * grav * h
    assert np.allclose(guess, expected, rtol=1e-12, atol=1e-15)
    sweeps = hold_impulses(c.ci, c.cj, c.point, c.normal, mu, np.zeros((4, 2)), x, v, w, g.inv_mass, g.inv_inertia,
                           guess, 100, 1e-12)  # fmt: skip
    assert sweeps == 1 and np.abs(v).max() <= 1e-15


def _pyramid_contacts(rows: int):
    """Box2D's pyramid of unit boxes standing on a floor, touching exactly: centres (m) and its contact points as
    the rigid step gathers them (two a touching face: floor, side by side, and each box on the two below it)."""
    ids, centres = {}, []
    for r in range(rows):
        for col in range(rows - r):
            ids[r, col] = len(centres)
            centres.append((col - (rows - r - 1) / 2, 0.5 + r))
    ci, cj, points, normals = [], [], [], []
    for (r, col), b in ids.items():
        x, y = centres[b]
        rows_of = []
        if r == 0:
            rows_of += [(b, -1, (x + dx, 0.0), (0.0, -1.0)) for dx in (-0.5, 0.5)]
        if (r, col + 1) in ids:
            rows_of += [(b, ids[r, col + 1], (x + 0.5, y + dy), (1.0, 0.0)) for dy in (-0.5, 0.5)]
        if r:
            for below, xs in ((ids[r - 1, col], (x - 0.5, x)), (ids[r - 1, col + 1], (x, x + 0.5))):
                rows_of += [(below, b, (px, y - 0.5), (0.0, 1.0)) for px in xs]
        for i, j, point, normal in rows_of:
            ci.append(i)
            cj.append(j)
            points.append(point)
            normals.append(normal)
    return (np.array(centres), np.array(ci, dtype=np.int64), np.array(cj, dtype=np.int64), np.array(points),
            np.array(normals))  # fmt: skip


def test_a_cold_held_solve_of_a_pyramid_converges_in_sweeps_that_grow_as_its_height():
    """Pyramids of 10 and 40 rows of unit boxes (1 kg, I = 1/6 kg m^2, mu = 0.6), every box about to fall at
    g h, held from zero impulses (no warm start, no guess): statics says they stand, so the solve must end
    with every box at rest, to its tolerance (1.6e-9 m/s at g and 1/60 s; a box's velocity sums the rate
    errors of the contacts below it, hence the factor 10), and the floor carrying the whole weight. Projected
    Gauss-Seidel alone needs sweeps that grow about as the square of the height (897 at 10 rows, 10,174 at
    40, where its stall rule stops it at 3e-8 m/s); the accelerated phase of `hold_impulses` about as the
    height (819 and 2,510)."""
    from carom.contact.rigid import hold_impulses

    h, grav, tol = 1.0 / 60.0, 9.81, 1.6e-9
    used = {}
    for rows in (10, 40):
        x, ci, cj, points, normals = _pyramid_contacts(rows)
        n, k = len(x), len(ci)
        v = np.column_stack([np.zeros(n), np.full(n, -grav * h)])
        w = np.zeros(n)
        impulse = np.zeros((k, 2))
        used[rows] = hold_impulses(ci, cj, points, normals, np.full(k, 0.6), np.zeros((k, 2)), x, v, w, np.ones(n),
                                   np.full(n, 6.0), impulse, 100_000, tol, True)  # fmt: skip
        assert np.abs(v).max() <= 10 * tol and np.abs(w).max() * math.sqrt(0.5) <= 10 * tol
        floor = impulse[cj == -1, 0].sum()
        assert floor == pytest.approx(n * grav * h, rel=10 * tol / (grav * h))
        assert np.all(np.abs(impulse[:, 1]) <= 0.6 * impulse[:, 0] * (1 + 1e-12))
    assert used[40] < 5_000 and used[40] <= 4.5 * used[10]


@pytest.mark.parametrize("rows", [10, 50])
def test_a_cold_pyramid_starts_from_its_statics(rows):
    """Box2D's pyramid (unit boxes, 1 kg, I = 1/6 kg m^2, mu = 0.6), every box about to fall at g h, held cold:
    the guess carried down from the top (`carom.step.rigid_kernels.load_guess`) is the pyramid's statics, so the
    held solve ends in one sweep (from zero impulses: 897 sweeps at 10 rows, 3,454 at 50); its floor carries the
    whole weight n m g h, pushes only, and needs no friction beyond round-off."""
    from carom.contact.rigid import hold_impulses
    from carom.step.rigid_kernels import load_guess

    h, grav, tol = 1.0 / 60.0, 9.81, 1e-9
    x, ci, cj, points, normals = _pyramid_contacts(rows)
    n, k = len(x), len(ci)
    guess = np.empty((k, 2))
    load_guess(ci, cj, points, normals, x, np.ones(n), np.tile([0.0, -grav * h], (n, 1)), np.full(k, 0.6), 10.0,
               guess)  # fmt: skip
    assert guess[cj == -1, 0].sum() == pytest.approx(n * grav * h, rel=1e-12)
    assert np.all(guess[:, 0] >= 0.0) and np.abs(guess[:, 1]).max() <= 1e-12 * grav * h
    v = np.column_stack([np.zeros(n), np.full(n, -grav * h)])
    w = np.zeros(n)
    sweeps = hold_impulses(ci, cj, points, normals, np.full(k, 0.6), np.zeros((k, 2)), x, v, w, np.ones(n),
                           np.full(n, 6.0), guess, 10_000, tol, True)  # fmt: skip
    assert sweeps == 1
    assert np.abs(v).max() <= tol and np.abs(w).max() <= tol


def test_the_held_gradient_phase_slides_without_lifting_off():
    """The gradient phase of the held solve alone (`_held_accelerated`), from zero impulses: unit boxes (1 kg,
    I = 1/6 kg m^2) sliding at 1 m/s on a floor with mu = 0.3, each about to fall at g h. Coulomb's law: each
    slides on, slowed by mu g h, with no vertical speed and no spin (its corners share the load so that
    friction turns nothing). The cone complementarity problem, which a plain projected gradient solves, would
    instead lift the boxes at mu times their slip; De Saxce's modified rate gives Coulomb's answer, to the
    phase's tolerance."""
    from carom.contact.rigid import _held_accelerated

    h, grav, mu, tol, boxes = 1.0 / 60.0, 9.81, 0.3, 1e-12, 4
    ci = np.repeat(np.arange(boxes), 2)
    cj = np.full(2 * boxes, -1)
    normal = np.tile([0.0, -1.0], (2 * boxes, 1))  # from the box into the floor
    arm_n = np.tile([0.5, -0.5], boxes)  # r x n at the corners (-0.5, -0.5) and (0.5, -0.5) from the centre
    arms = np.column_stack([arm_n, np.full(2 * boxes, 0.5), np.zeros(2 * boxes), np.zeros(2 * boxes)])
    v = np.tile([1.0, -grav * h], (boxes, 1))
    w = np.zeros(boxes)
    impulse = np.zeros((2 * boxes, 2))
    _held_accelerated(ci, cj, normal, np.full(2 * boxes, mu), np.zeros((2 * boxes, 2)), v, w, np.ones(boxes),
                      np.full(boxes, 6.0), impulse, arms, 100_000, tol)  # fmt: skip
    assert np.allclose(v[:, 0], 1.0 - mu * grav * h, rtol=0, atol=10 * tol)
    assert np.abs(v[:, 1]).max() <= 10 * tol and np.abs(w).max() <= 10 * tol
    assert np.allclose(impulse[:, 1], mu * impulse[:, 0], rtol=1e-12, atol=0)  # on the cone's edge, against the slip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=12), st.lists(st.integers(0, 6), max_size=12))
def test_merging_held_forces_keeps_the_pairs_not_held_and_sorts_by_pair(kept_pairs, new_pairs):
    """`merge_held` against its definition: the kept rows whose pair the hold did not hold, then the hold's
    rows, sorted stably by pair key (a pair's rows keep their order), row by row."""
    from carom.step.rigid_kernels import merge_held

    kept_key = np.sort(np.array(kept_pairs, dtype=np.int64))
    key = np.array(new_pairs, dtype=np.int64)
    kept_local, kept_force = np.arange(2 * len(kept_key), dtype=float).reshape(-1, 2), -np.ones((len(kept_key), 2))
    local = 100.0 + np.arange(2 * len(key), dtype=float).reshape(-1, 2)
    force = local + 0.5
    out_key, out_local, out_force = merge_held(kept_key, kept_local, kept_force, key, local, force)
    kept = ~np.isin(kept_key, key)
    all_key = np.concatenate([kept_key[kept], key])
    order = np.argsort(all_key, kind="stable")
    assert np.array_equal(out_key, all_key[order])
    assert np.array_equal(out_local, np.concatenate([kept_local[kept], local])[order])
    assert np.array_equal(out_force, np.concatenate([kept_force[kept], force])[order])


def test_pair_overrides_decide_a_polygons_contacts():
    """`set_pair_restitution` and `set_pair_friction` reach the polygon step. A box falling flat at 3 m/s onto a
    floor whose rule makes e = 0.5 leaves at 3 m/s with the pair's e = 1 (a flat landing: both corners at
    once, no spin); a box resting on a 20 degree incline at mu = 0.5 slides at g (sin - 0.1 cos) with the
    pair's mu = 0.1."""
    w = carom.World(dim=2, gravity=(0, 0))
    w.add_wall((0, 0), (0, 1), restitution=0.5)
    b = w.add_rectangle(1.0, 0.5, (0.0, 0.5), velocity=(0.0, -3.0), mass=2.0, restitution=0.5)
    w.set_pair_restitution(b, -1, 1.0)
    w.run(until=0.2, dt=1 / 60)
    assert w.velocities[b] == pytest.approx([0.0, 3.0], abs=1e-12)
    assert abs(w.angular_velocities[b]) <= 1e-12

    theta = math.radians(20)
    n = np.array([-math.sin(theta), math.cos(theta)])
    w = carom.World(dim=2, gravity=(0, -9.81))
    w.add_wall((0, 0), n, restitution=0.0, static_friction=0.5)
    b = w.add_rectangle(1.0, 0.5, tuple(0.25 * n), angle=theta, mass=1.0, restitution=0.0, static_friction=0.5)
    w.set_pair_friction(b, -1, static=0.1, kinetic=0.1)
    w.run(until=1.0, dt=1 / 60)
    accel = 9.81 * (math.sin(theta) - 0.1 * math.cos(theta))
    assert np.hypot(*w.velocities[b]) == pytest.approx(accel, rel=1e-9)


def test_the_projection_passes_over_only_pairs_it_would_leave_alone(monkeypatch):
    """The projection's first pass skips the pairs whose gap at the step's start, less how far their outlines
    can have moved since, is above half the band (`carom.step.rigid_kernels.project_overlaps`): the pass
    would leave them alone, so the hopper of boxes and disks (impacts, held stacks, pushes) runs to the same
    bits as with every pair checked, and the projection does push in it."""
    from carom import examples
    from carom.step import rigid

    def run():
        w = carom.Scene.load(examples.path("hopper"))
        w.run(until=2.0, dt=1 / 60)
        return np.concatenate([w.positions.ravel(), w.velocities.ravel(), w.angles, w.angular_velocities.ravel()])

    skipping = run()
    pushes = []
    project = rigid.project

    def every_pair(tol, m, g, lists, since=None):
        before = (m.x.copy(), m.angle.copy())
        deepest = project(tol, m, g, lists)  # (no gaps kept: every pair is checked)
        pushes.append(not (np.array_equal(before[0], m.x) and np.array_equal(before[1], m.angle)))
        return deepest

    monkeypatch.setattr(rigid, "project", every_pair)
    assert np.array_equal(run(), skipping)
    assert any(pushes)
