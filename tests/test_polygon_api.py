"""Rigid polygons as a user adds and reads them (`World.add_polygon`, `add_rectangle`, `polygon_vertices`,
`angles`, `shapes`): placement at the centroid, mass properties against closed forms, energy and momentum
with rotation, bad input, and overlaps at the start measured on the polygons themselves, not their bounding
circles. (How polygons move is tested with the engine.)"""

import math

import numpy as np
import pytest

import carom
from carom.model import Impact
from carom.narrowphase.polygons import polygon_table
from carom.state import SHAPE_POLYGON, SHAPE_SPHERE

# A scalene triangle far from its frame's origin: centroid (101, 102), sides sqrt(9 + 36), 6, 3.
FAR_TRIANGLE = [(100.0, 100.0), (103.0, 100.0), (100.0, 106.0)]
UNIT_SQUARE = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
SQUARE_CIRCUMRADIUS = math.sqrt(0.5)


def world2d(**kwargs):
    return carom.World(dim=2, **kwargs)


def signed_area(points):
    x, y = points[:, 0], points[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def same_cycle(a, b, atol):
    """Whether the vertex lists a and b are the same cycle (one a rotation of the other's order)."""
    return any(np.allclose(np.roll(a, k, axis=0), b, rtol=0, atol=atol) for k in range(len(a)))


# ----------------------------------------------------------------------------------- placement and mass
def test_the_position_is_the_centroid_however_far_the_vertices_lie_from_their_origin():
    w = world2d()
    b = w.add_polygon(FAR_TRIANGLE, position=(0.0, 2.0), mass=1.0)
    np.testing.assert_array_equal(w.positions[b], (0.0, 2.0))
    expected = np.array(FAR_TRIANGLE) - (101.0, 102.0) + (0.0, 2.0)  # at angle 0: the vertices shifted
    np.testing.assert_allclose(w.polygon_vertices(b), expected, rtol=0, atol=1e-12)
    assert w.radii[b] == pytest.approx(math.sqrt(17.0), rel=1e-14)  # the farthest vertex, (100, 106)


def test_rectangle_and_triangle_moments_of_inertia_are_the_closed_forms():
    w = world2d()
    r = w.add_rectangle(1.0, 0.5, (0, 0), mass=2.0)
    assert w.inertias[r] == pytest.approx(2.0 * (1.0 + 0.25) / 12, rel=1e-14)
    t = w.add_polygon(FAR_TRIANGLE, (10, 0), mass=3.0)
    sides2 = 45.0 + 36.0 + 9.0  # a triangle about its centroid: I = m (a^2 + b^2 + c^2) / 36
    assert w.inertias[t] == pytest.approx(3.0 * sides2 / 36, rel=1e-13)
    given = w.add_polygon(FAR_TRIANGLE, (20, 0), mass=3.0, inertia=2.0)
    assert w.inertias[given] == 2.0


def test_density_gives_mass_and_inertia_from_the_area():
    w = world2d()
    b = w.add_rectangle(2.0, 0.5, (0, 0), density=3.0)  # area 1
    assert w.masses[b] == pytest.approx(3.0, rel=1e-15)
    assert w.inertias[b] == pytest.approx(3.0 * (4.0 + 0.25) / 12, rel=1e-14)
    t = w.add_polygon(FAR_TRIANGLE, (10, 0), density=0.5)  # area 9
    assert w.masses[t] == pytest.approx(4.5, rel=1e-14)


def test_a_fixed_polygon_needs_no_mass_and_is_not_moved_by_impacts():
    w = world2d()
    b = w.add_rectangle(4.0, 1.0, (0, 0), fixed=True)
    heavy = w.add_rectangle(4.0, 1.0, (0, 5), fixed=True, density=2.0)  # a mass that attracts (NBodyGravity)
    assert w.masses[b] == math.inf and w.masses[heavy] == 8.0
    assert w.bodies.inv_mass[b] == w.bodies.inv_inertia[b] == 0.0 == w.bodies.inv_inertia[heavy]


def test_vertices_turn_with_the_angle_about_the_centroid():
    w = world2d()
    b = w.add_rectangle(2.0, 0.5, (3.0, 1.0), angle=math.pi / 2, mass=1.0)
    corners = w.polygon_vertices(b)
    np.testing.assert_allclose(corners.min(axis=0), (2.75, 0.0), rtol=0, atol=1e-15)  # the extents swap
    np.testing.assert_allclose(corners.max(axis=0), (3.25, 2.0), rtol=0, atol=1e-15)
    # vertex k = position + R(angle) v_k: (-1, -0.25) turned a quarter counter-clockwise is (0.25, -1)
    np.testing.assert_allclose(corners[0], (3.25, 0.0), rtol=0, atol=1e-15)
    t = w.add_polygon(FAR_TRIANGLE, (10.0, 0.0), angle=0.3, mass=1.0)
    c, s = math.cos(0.3), math.sin(0.3)
    expected = (np.array(FAR_TRIANGLE) - (101.0, 102.0)) @ np.array([[c, s], [-s, c]]) + (10.0, 0.0)
    np.testing.assert_allclose(w.polygon_vertices(t), expected, rtol=0, atol=1e-13)
    assert w.angles[t] == 0.3


def test_clockwise_vertices_come_back_counter_clockwise():
    w = world2d()
    ccw = w.add_polygon(FAR_TRIANGLE, (0, 0), mass=1.0)
    cw = w.add_polygon(FAR_TRIANGLE[::-1], (10, 0), mass=1.0)
    out = w.polygon_vertices(cw)
    assert signed_area(out) == pytest.approx(9.0, rel=1e-14)
    assert same_cycle(out - (10, 0), w.polygon_vertices(ccw), atol=1e-13)


def test_kinetic_energy_and_angular_momentum_include_the_spin_of_a_polygon():
    w = world2d()
    m, width, height, v, omega, x = 2.0, 1.0, 0.5, np.array([3.0, -4.0]), 5.0, np.array([1.0, 2.0])
    w.add_rectangle(width, height, x, angle=0.4, velocity=v, angular_velocity=omega, mass=m)
    inertia = m * (width**2 + height**2) / 12
    assert w.kinetic_energy() == pytest.approx(0.5 * m * (v @ v) + 0.5 * inertia * omega**2, rel=1e-14)
    orbital = m * (x[0] * v[1] - x[1] * v[0])
    assert w.angular_momentum() == pytest.approx(orbital + inertia * omega, rel=1e-14)
    o = np.array([-2.0, 0.5])
    orbital = m * ((x - o)[0] * v[1] - (x - o)[1] * v[0])
    assert w.angular_momentum(origin=o) == pytest.approx(orbital + inertia * omega, rel=1e-14)
    np.testing.assert_array_equal(w.momentum(), m * v)


def test_shapes_and_angles_cover_every_body():
    w = world2d()
    w.add_body((0, 0), mass=1.0, radius=0.5)
    w.add_rectangle(1.0, 1.0, (3, 0), angle=-0.25, mass=1.0)
    w.add_body((6, 0), mass=1.0, radius=0.5)
    assert w.shapes.tolist() == ["disk", "polygon", "disk"]
    assert w.angles.tolist() == [0.0, -0.25, 0.0]
    assert w.angles is not None and np.shares_memory(w.angles, w.orientations)
    assert w.has_polygons
    w3 = carom.World(dim=3)
    w3.add_body((0, 0, 0), mass=1.0, radius=0.5)
    assert w3.shapes.tolist() == ["sphere"] and not w3.has_polygons
    with pytest.raises(ValueError, match="3D world's are quaternions: use orientations"):
        w3.angles  # noqa: B018


def test_the_stored_body_is_what_the_engine_reads():
    w = world2d()
    d = w.add_body((-8, 0), mass=1.0, radius=0.5)
    p = w.add_polygon(FAR_TRIANGLE, (0, 0), angle=0.7, angular_velocity=-2.0, mass=1.5, restitution=0.25,
                      static_friction=0.5, kinetic_friction=0.25, drag_coefficient=1.1, name="wedge")  # fmt: skip
    b = w.bodies
    assert (b.shape[d], b.shape[p]) == (SHAPE_SPHERE, SHAPE_POLYGON) == (0, 1)
    assert (b.orientation[p, 0], b.angular_velocity[p, 0], b.inv_mass[p]) == (0.7, -2.0, 1 / 1.5)
    assert (b.restitution[p], b.static_friction[p], b.kinetic_friction[p], b.drag_coefficient[p]) == (
        0.25, 0.5, 0.25, 1.1)  # fmt: skip
    assert w.names[p] == "wedge"
    assert w._outlines[d] is None
    outline = w._outlines[p]
    assert outline.dtype == np.float64 and outline.shape == (3, 2) and signed_area(outline) > 0
    np.testing.assert_allclose(outline.mean(axis=0), 0.0, atol=1e-14)  # a triangle's centroid is its mean vertex
    table = w.polygon_table()
    np.testing.assert_array_equal(table.start, [0, 0, 3])
    np.testing.assert_array_equal(table.vertices, outline)
    assert w.polygon_table() is table  # kept until bodies are added
    w.add_body((-12, 0), mass=1.0, radius=0.5)
    assert len(w.polygon_table().start) == 4


def test_a_disk_has_no_polygon_vertices():
    w = world2d()
    d = w.add_body((0, 0), mass=1.0, radius=0.5)
    with pytest.raises(ValueError, match="body 0 is a disk, not a polygon"):
        w.polygon_vertices(d)
    with pytest.raises(ValueError, match="body must be a body id in \\[0, 1\\), got 3"):
        w.polygon_vertices(3)


def test_states_set_again_keep_the_outlines():
    w = world2d()
    w.add_body((-3, 0), mass=1.0, radius=0.5)
    p = w.add_rectangle(1.0, 0.5, (0, 0), angle=0.5, velocity=(1, 0), mass=1.0)
    state = w.get_state()
    before = w.polygon_vertices(p)
    w.positions[p] += 1.0
    w.set_state(state)
    np.testing.assert_array_equal(w.polygon_vertices(p), before)
    # back to a state of fewer bodies: the ids past it are given anew, with their own outlines
    early = world2d()
    early.add_body((-3, 0), mass=1.0, radius=0.5)
    w.set_state(early.get_state())
    assert w.n_bodies == 1 and not w.has_polygons and len(w.polygon_table().start) == 2
    t = w.add_polygon(FAR_TRIANGLE, (5, 0), mass=1.0)
    d = w.add_body((0, 0), mass=1.0, radius=0.5)  # where the rectangle was
    assert (t, d) == (1, 2) and w.shapes.tolist() == ["disk", "polygon", "disk"]
    np.testing.assert_array_equal(w.polygon_table().start, [0, 0, 3, 3])


# ------------------------------------------------------------------------------------------- bad input
TRIANGLE = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"vertices": [(0, 0), (1, 0)]}, "vertices: a polygon needs at least 3 vertices, got 2"),
        ({"vertices": [(0, 0), (2, 0), (1, 0.2), (2, 2), (0, 2)]}, r"not convex at vertices\[2\] \(1.0, 0.2\)"),
        ({"vertices": [(0, 0), (1, 1), (1, 0), (0, 1)]}, "self-intersecting"),
        ({"vertices": [(0, 0), (1, 0), (2, 0)]}, "zero area"),
        ({"vertices": [(0, 0), (1, 0), (1, 0), (0, 1)]}, r"vertices\[2\] repeats vertices\[1\]: \(1.0, 0.0\)"),
        ({"vertices": [(0, 0), (1, math.nan), (0, 1)]}, r"vertices\[1\] must be finite, got \(1.0, nan\)"),
        ({"position": (math.inf, 0)}, r"position must be finite, got \[inf, 0.0\]"),
        ({"angle": math.nan}, "angle must be finite, got nan"),
        ({"velocity": (0, math.nan)}, r"velocity must be finite, got \[0.0, nan\]"),
        ({"angular_velocity": math.inf}, r"angular_velocity must be finite, got \[inf\]"),
        ({"density": 1.0}, "mass or its density, not both: got mass=1.0, density=1.0"),
        ({"mass": None}, "needs mass= \\(kg\\) or density= \\(kg/m\\^2\\); got neither"),
        ({"mass": None, "density": 0.0}, "density must be > 0 \\(kg/m\\^2\\), got 0.0"),
        ({"mass": None, "density": math.nan}, "density must be finite, got nan"),
        ({"mass": 0.0}, "mass must be > 0, got 0.0"),
        ({"mass": -2.0}, "mass must be > 0, got -2.0"),
        ({"inertia": 0.0}, "inertia must be > 0, got 0.0"),
        ({"restitution": 1.5}, r"restitution must be in \[0, 1\], got 1.5"),
        ({"static_friction": -0.1}, "static_friction must be >= 0, got -0.1"),
        ({"static_friction": 0.2, "kinetic_friction": 0.3}, r"kinetic_friction must be <= static_friction \(0.2\)"),
        ({"drag_coefficient": -1.0}, "drag_coefficient must be >= 0, got -1.0"),
        ({"vertices": np.array(TRIANGLE) * 1e-61}, "the polygon's circumradius = .* must be at least 1e-60 m"),
    ],
)
def test_add_polygon_rejects_bad_input_naming_field_and_value(kwargs, message):
    w = world2d()
    args = {"vertices": TRIANGLE, "position": (0, 0), "mass": 1.0, **kwargs}
    with pytest.raises(ValueError, match=message):
        w.add_polygon(**args)
    assert w.n_bodies == 0 and w._outlines == []


@pytest.mark.parametrize(("width", "height", "message"), [(0.0, 1.0, "width must be a positive finite number \\(m\\), "
                         "got 0.0"), (1.0, -2.0, "height must be .*got -2.0"), ("wide", 1.0, "width must be a number, "
                         "got 'wide'"), (1.0, math.inf, "height must be finite, got inf")])  # fmt: skip
def test_add_rectangle_rejects_sides_that_are_not_positive(width, height, message):
    with pytest.raises(ValueError, match=message):
        world2d().add_rectangle(width, height, (0, 0), mass=1.0)


def test_polygons_need_a_2d_time_stepped_world():
    with pytest.raises(ValueError, match="add_polygon needs dim=2, this world has dim=3"):
        carom.World(dim=3).add_polygon(TRIANGLE, (0, 0, 0), mass=1.0)
    with pytest.raises(ValueError, match="add_polygon needs dim=2"):
        carom.World(dim=3).add_rectangle(1.0, 1.0, (0, 0, 0), mass=1.0)
    events = carom.EventWorld(dim=2)
    refused = r"EventWorld holds spheres and disks only: add_(polygon|rectangle) needs the time-stepped World"
    with pytest.raises(ValueError, match=refused):
        events.add_polygon(TRIANGLE, (0, 0), mass=1.0)
    with pytest.raises(ValueError, match=refused):
        events.add_rectangle(1.0, 1.0, (0, 0), mass=1.0)
    assert events.n_bodies == 0


# -------------------------------------------------------------------------------- overlaps at the start
def test_polygons_may_touch_but_not_overlap():
    w = world2d()
    w.add_polygon(UNIT_SQUARE, (0, 0), mass=1.0)
    w.add_polygon(UNIT_SQUARE, (1.0, 0.2), mass=1.0)  # face to face: touching
    # a diamond (corners on its axes) whose face comes within 0.01 of the first square's corner, down and to
    # the left: their bounding circles overlap
    centre = (SQUARE_CIRCUMRADIUS + 0.01 + 0.5) / math.sqrt(2)
    w.add_polygon(UNIT_SQUARE, (-centre, -centre), angle=math.pi / 4, mass=1.0)
    slop = w._overlap_slop * SQUARE_CIRCUMRADIUS
    w.add_polygon(UNIT_SQUARE, (0.0, 1.0 - 0.5 * slop), mass=1.0)  # overlapping by half the slop: touching
    with pytest.raises(ValueError, match=r"the new body \(a polygon at position \[1.99985.*overlaps body 1 \(a "
                                         r"polygon at position \[1.0, 0.2\].* by 0.000141421 m"):  # fmt: skip
        w.add_polygon(UNIT_SQUARE, (1.0 + 1.0 - 2 * slop, 0.0), mass=1.0)
    with pytest.raises(ValueError, match="overlaps body 0"):  # a small triangle wholly inside
        w.add_polygon(np.array(TRIANGLE) * 0.3, (0.1, 0.1), mass=1.0)
    assert w.n_bodies == 4


@pytest.mark.parametrize("polygon_first", [True, False])
def test_a_disk_and_a_polygon_are_measured_by_the_polygon_not_its_bounding_circle(polygon_first):
    # a unit square at the origin; disks beside its right face, inside its bounding circle (radius 0.707)
    outside = [((0.6, 0.0), 0.05), ((0.81, 0.0), 0.3), ((0.0, -0.8), 0.3)]  # gaps 0.05, 0.01, 0 (touching)
    for centre, radius in outside:
        w = world2d()
        if polygon_first:
            w.add_polygon(UNIT_SQUARE, (0, 0), mass=1.0)
            w.add_body(centre, mass=1.0, radius=radius)
        else:
            w.add_body(centre, mass=1.0, radius=radius)
            w.add_polygon(UNIT_SQUARE, (0, 0), mass=1.0)
        assert w.n_bodies == 2
    w = world2d()
    if polygon_first:
        w.add_polygon(UNIT_SQUARE, (0, 0), mass=1.0)
        with pytest.raises(ValueError, match=r"the new body \(position \[0.7, 0.0\], radius 0.3\) overlaps body 0 "
                                             r"\(a polygon.* by 0.1 m"):  # fmt: skip
            w.add_body((0.7, 0.0), mass=1.0, radius=0.3)
        with pytest.raises(ValueError, match=r"new body \[1\] .* overlaps body 0 .* by 0.05 m"):  # many at once
            w.add_bodies([(-3.0, 0.0), (-0.55, 0.0)], masses=1.0, radii=0.1)
    else:
        w.add_body((0.7, 0.0), mass=1.0, radius=0.3)
        with pytest.raises(ValueError, match=r"the new body \(a polygon.*\) overlaps body 0 \(position \[0.7, 0.0\], "
                                             r"radius 0.3\) by 0.1 m"):  # fmt: skip
            w.add_polygon(UNIT_SQUARE, (0, 0), mass=1.0)
    assert w.n_bodies == 1


def test_a_polygon_and_a_wall_are_measured_by_the_polygon():
    w = world2d()
    w.add_wall((0, 0), (0, 1))
    w.add_polygon(UNIT_SQUARE, (0, 0.55), mass=1.0)  # its bounding circle crosses the floor, not the square
    w.add_polygon(UNIT_SQUARE, (3, SQUARE_CIRCUMRADIUS + 0.01), angle=math.pi / 4, mass=1.0)  # a corner down
    with pytest.raises(ValueError, match=r"the new body \(a polygon at position \[6.0, 0.6\], angle 0.7853.*\) "
                                         r"overlaps wall 0 .* by 0.1071.* m"):  # fmt: skip
        w.add_polygon(UNIT_SQUARE, (6, 0.6), angle=math.pi / 4, mass=1.0)
    assert w.n_bodies == 2


def test_a_wall_added_after_a_polygon_is_measured_by_the_polygon():
    w = world2d()
    w.add_polygon(UNIT_SQUARE, (0, 0.55), mass=1.0)
    w.add_wall((0, 1.05), (0, -1))  # a ceiling touching the square, well inside its bounding circle
    with pytest.raises(ValueError, match=r"wall \(point \[-0.4, 0.0\], normal \[1.0, 0.0\]\) would overlap body 0 "
                                         r"\(a polygon .*\) by 0.1 m"):  # fmt: skip
        w.add_wall((-0.4, 0.0), (1, 0))
    w.add_wall((-0.5 + 0.5 * w._overlap_slop * SQUARE_CIRCUMRADIUS, 0.0), (1, 0))  # half the slop into it
    assert w.walls.n == 2


def test_a_box_around_polygons_is_measured_by_their_corners():
    w = world2d()
    w.add_rectangle(2.0, 0.2, (0, 0.1), mass=1.0)  # its bounding circle reaches y = 0.1 +- 1.005
    w.add_rectangle(1.0, 0.2, (0, 0.75), angle=math.pi / 2, mass=1.0)  # stands up: y in [0.25, 1.25]
    with pytest.raises(ValueError, match=r"body 1 \(a polygon .*\) is not inside the box"):
        w.add_box((-1, 0), (1, 1.2))
    w.add_box((-1, 0), (1, 1.25))
    assert w.walls.n == 4


def test_impacts_carry_a_contact_point_when_the_engine_reports_one():
    old = Impact(0.0, 0, 1, np.array([1.0, 0.0]), 2.0, 1.0, 1.0)
    assert old.point is None and old.tangential_impulse.tolist() == [0.0, 0.0]
    w = world2d()
    seen = []
    w.on_impact(seen.append)
    log = {"time": np.array([0.5]), "i": np.array([0]), "j": np.array([-1]), "normal": np.array([[0.0, 1.0]]),
           "impulse": np.array([3.0]), "approach_speed": np.array([2.0]), "restitution": np.array([0.5])}  # fmt: skip
    w._emit_impacts(log, 1)
    w._emit_impacts({**log, "point": np.array([[0.25, -1.0]])}, 1)
    assert seen[0].point is None and seen[1].point.tolist() == [0.25, -1.0]
    assert seen[1].impulse == 3.0 and seen[1].j == -1


def test_the_table_of_outlines_is_the_narrowphase_table():
    w = world2d()
    w.add_body((-3, 0), mass=1.0, radius=0.5)
    w.add_polygon(FAR_TRIANGLE, (0, 0), mass=1.0)
    w.add_rectangle(1.0, 2.0, (4, 0), mass=1.0)
    expected = polygon_table(w._outlines)
    for got, want in zip(w.polygon_table(), expected, strict=True):
        np.testing.assert_array_equal(got, want)
