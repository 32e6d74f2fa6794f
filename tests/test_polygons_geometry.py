"""Rigid convex polygons: mass properties and validation (carom.shapes) and contact manifolds
(carom.narrowphase.polygons), against closed forms and the slow references in tests/naive.py
(docs/polygons.md, Geometry)."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from naive import (
    naive_area,
    naive_boundary_distance,
    naive_clip,
    naive_inside,
    naive_penetration_depth,
    naive_placed,
    naive_signed_distance,
)
from scipy import integrate
from scipy.spatial import ConvexHull, QhullError

import carom
from carom.narrowphase.polygons import (
    polygon_contact,
    polygon_disk_contact,
    polygon_disk_manifold,
    polygon_table,
    polygon_wall_contact,
    polygon_wall_manifold,
    polygons_manifold,
)
from carom.shapes import check_polygon, placed_vertices, polygon_moments, polygon_properties, rectangle_vertices

TOL = 1e-12

coordinate = st.floats(-1.0, 1.0, allow_nan=False)
point = st.tuples(coordinate, coordinate)
angle = st.floats(-4.0, 4.0, allow_nan=False)


@st.composite
def convex_polygons(draw, min_area=0.05):
    """Counter-clockwise convex polygons: the convex hull of 3 to 8 random points (scipy's Qhull)."""
    points = np.array(draw(st.lists(point, min_size=3, max_size=8)))
    try:
        hull = ConvexHull(points)
    except QhullError:  # (nearly) on one line
        assume(False)
    assume(hull.volume > min_area)
    polygon = points[hull.vertices]  # counter-clockwise in 2D
    try:
        check_polygon(polygon)
    except ValueError:
        assume(False)  # a vertex on the line through its neighbours, to the last few digits
    return polygon


def surface_errors(manifold, polygon_i, polygon_j):
    """For each point, how far ``point - gap/2 n`` is from i's outline and ``point + gap/2 n`` from j's."""
    errors = []
    for p, gap in zip(manifold.points, manifold.gaps, strict=True):
        errors.append(naive_boundary_distance(p - 0.5 * gap * manifold.normal, polygon_i))
        errors.append(naive_boundary_distance(p + 0.5 * gap * manifold.normal, polygon_j))
    return errors


# --- mass properties -------------------------------------------------------------------------------------


def triangle_closed_form(a, b, c):
    """Area, centroid and second moment about the centroid of triangle abc: ``J = A (l1^2 + l2^2 + l3^2) / 36``
    (l the side lengths), the polar moment of a uniform triangle per unit mass times its area."""
    area = 0.5 * abs((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
    sides2 = sum(float(np.sum((p - q) ** 2)) for p, q in ((a, b), (b, c), (c, a)))
    return area, (a + b + c) / 3.0, area * sides2 / 36.0


def test_triangle_formula_by_quadrature():
    # the closed form the triangle tests rely on, checked once by integrating |r - centroid|^2 over a triangle
    a, b, c = np.array([0.0, 0.0]), np.array([2.0, 0.0]), np.array([0.5, 1.5])
    _, centroid, second = triangle_closed_form(a, b, c)

    def integrand(y, x):
        return (x - centroid[0]) ** 2 + (y - centroid[1]) ** 2

    left = integrate.dblquad(integrand, 0.0, 0.5, lambda x: 0.0, lambda x: 3.0 * x)[0]
    right = integrate.dblquad(integrand, 0.5, 2.0, lambda x: 0.0, lambda x: 1.5 * (2.0 - x) / 1.5)[0]
    assert left + right == pytest.approx(second, rel=1e-10)


@settings(max_examples=200)
@given(point, point, point)
def test_any_triangle(a, b, c):
    a, b, c = np.array(a), np.array(b), np.array(c)
    area, centroid, second = triangle_closed_form(a, b, c)
    size = max(np.ptp(np.array([a, b, c]), axis=0))
    assume(area > 1e-3 * size * size)
    props = polygon_properties([a, b, c])
    assert props.area == pytest.approx(area, rel=1e-12)
    assert props.centroid == pytest.approx(centroid, abs=1e-14)
    assert props.second_moment == pytest.approx(second, rel=1e-11)
    assert props.vertices.mean(axis=0) == pytest.approx([0.0, 0.0], abs=1e-14)  # a triangle's centroid


@pytest.mark.parametrize("width, height", [(1.0, 0.5), (2.0, 2.0), (0.01, 30.0)])
def test_rectangle(width, height):
    props = polygon_properties(rectangle_vertices(width, height) + np.array([3.0, -7.0]))
    mass = 2.0
    assert props.area == pytest.approx(width * height, rel=1e-14)
    assert props.centroid == pytest.approx([3.0, -7.0], rel=1e-14)
    assert mass * props.second_moment / props.area == pytest.approx(mass * (width**2 + height**2) / 12, rel=1e-13)
    assert props.circumradius == pytest.approx(math.hypot(width, height) / 2, rel=1e-14)
    assert props.vertices == pytest.approx(rectangle_vertices(width, height), abs=1e-14)


def test_placed_vertices_turn_counter_clockwise_then_move():
    """A quarter turn takes (1, 0) to (0, 1) (to cos(pi/2) = 6e-17); per-vertex angles and positions agree with
    turning each vertex by a complex exponential."""
    corners = placed_vertices(rectangle_vertices(2.0, 1.0), math.pi / 2, np.array([3.0, -7.0]))
    np.testing.assert_allclose(corners, [[3.5, -8.0], [3.5, -6.0], [2.5, -6.0], [2.5, -8.0]], rtol=0, atol=1e-15)
    assert placed_vertices(rectangle_vertices(2.0, 1.0), 0.0, np.zeros(2)).tobytes() == rectangle_vertices(
        2.0, 1.0).tobytes()  # fmt: skip
    rng = np.random.default_rng(3)
    v, angle, position = rng.normal(size=(50, 2)), rng.uniform(-7, 7, 50), rng.normal(size=(50, 2))
    turned = (v[:, 0] + 1j * v[:, 1]) * np.exp(1j * angle) + (position[:, 0] + 1j * position[:, 1])
    np.testing.assert_allclose(placed_vertices(v, angle, position), np.column_stack([turned.real, turned.imag]),
                               rtol=0, atol=1e-14)  # fmt: skip


@pytest.mark.parametrize("sides", [3, 4, 5, 6, 7, 12, 100])
def test_regular_polygon(sides):
    # Cut into `sides` triangles (centre, v_k, v_k+1): each has area R^2 sin(2 pi/n) / 2 and, about the centre,
    # J = A_t (|p|^2 + p.q + |q|^2) / 6 = A_t R^2 (2 + cos(2 pi/n)) / 6 = A_t R^2 (1 + 2 cos^2(pi/n)) / 6.
    radius = 1.7
    phase = 0.3
    angles = phase + 2 * np.pi * np.arange(sides) / sides
    vertices = radius * np.column_stack([np.cos(angles), np.sin(angles)])
    props = polygon_properties(vertices)
    area = sides * radius**2 * math.sin(2 * math.pi / sides) / 2
    assert props.area == pytest.approx(area, rel=1e-13)
    assert props.centroid == pytest.approx([0.0, 0.0], abs=1e-14)
    expected = area * radius**2 * (1 + 2 * math.cos(math.pi / sides) ** 2) / 6
    assert props.second_moment == pytest.approx(expected, rel=1e-13)
    assert props.circumradius == pytest.approx(radius, rel=1e-14)


def test_square_and_many_sides_limits():
    # the regular-polygon formula's two ends: the square's m s^2 / 6, and the disk's m R^2 / 2
    square = polygon_properties([(0, 0), (2, 0), (2, 2), (0, 2)])
    assert square.second_moment / square.area == pytest.approx(4 / 6, rel=1e-14)
    angles = 2 * np.pi * np.arange(4000) / 4000
    disk = polygon_properties(np.column_stack([np.cos(angles), np.sin(angles)]))
    assert disk.second_moment / disk.area == pytest.approx(0.5, rel=1e-6)


def fan_closed_form(polygon):
    """Area, centroid and second moment about the centroid of a convex polygon, cut into the triangles
    (v_0, v_k, v_k+1) and put together by the parallel-axis theorem, ``J = sum (J_t + A_t |c_t - c|^2)``:
    independent of the shoelace sums about the mean vertex of `polygon_moments`."""
    parts = [triangle_closed_form(polygon[0], polygon[k], polygon[k + 1]) for k in range(1, len(polygon) - 1)]
    area = sum(a for a, _, _ in parts)
    centroid = sum(a * c for a, c, _ in parts) / area
    second = sum(j + a * float(np.sum((c - centroid) ** 2)) for a, c, j in parts)
    return area, centroid, second


def test_an_irregular_quadrilateral_about_its_centroid_not_its_mean_vertex():
    """The quadrilateral (0, 0), (4, 0), (3, 2), (0, 3) is the triangles (0, 0), (4, 0), (3, 2) (area 4,
    centroid (7/3, 2/3)) and (0, 0), (3, 2), (0, 3) (area 9/2, centroid (1, 5/3)): area 17/2, centroid
    (83/51, 61/51), not its mean vertex (7/4, 5/4). Its second moment about that centroid, each triangle's
    A (l1^2 + l2^2 + l3^2) / 36 moved there by the parallel-axis theorem, is J = 2090/153 m^4 (by hand, in
    fractions); about the mean vertex it would be 221/16, 1.1% more. A 3 kg body of that outline spinning at
    2 rad/s has the kinetic energy I w^2 / 2 with I = m J / A."""
    quad = np.array([(0.0, 0.0), (4.0, 0.0), (3.0, 2.0), (0.0, 3.0)])
    area, centroid, second = fan_closed_form(quad)
    assert area == 8.5 and centroid == pytest.approx([83 / 51, 61 / 51], rel=1e-15)
    assert second == pytest.approx(2090 / 153, rel=1e-15)
    props = polygon_properties(quad)
    assert props.area == pytest.approx(area, rel=1e-14)
    assert props.centroid == pytest.approx(centroid, rel=1e-14)
    assert props.second_moment == pytest.approx(second, rel=1e-13)
    assert props.vertices.mean(axis=0) == pytest.approx([7 / 4 - 83 / 51, 5 / 4 - 61 / 51], rel=1e-13)
    w = carom.World(dim=2)
    w.add_polygon(quad, (1.0, 2.0), mass=3.0, angular_velocity=2.0)
    assert w.kinetic_energy() == pytest.approx(0.5 * (3.0 * second / area) * 2.0**2, rel=1e-13)


@settings(max_examples=100)
@given(convex_polygons())
def test_any_polygon_matches_its_triangles(polygon):
    """Any convex polygon: area, centroid and second moment about the centroid as its triangles give them
    (`fan_closed_form`), to round-off."""
    area, centroid, second = fan_closed_form(polygon)
    props = polygon_properties(polygon)
    assert props.area == pytest.approx(area, rel=1e-12)
    assert props.centroid == pytest.approx(centroid, abs=1e-13)
    assert props.second_moment == pytest.approx(second, rel=1e-11)


@settings(max_examples=100)
@given(convex_polygons(), st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)))
def test_winding_and_frame_do_not_matter(polygon, offset):
    base = polygon_properties(polygon)
    offset = np.array(offset)
    for vertices, shift in ((polygon[::-1], 0.0 * offset), (polygon + offset, offset),
                            (np.roll(polygon, 2, axis=0)[::-1] + offset, offset)):  # fmt: skip
        props = polygon_properties(vertices)
        assert props.area == pytest.approx(base.area, rel=1e-9)
        assert props.second_moment == pytest.approx(base.second_moment, rel=1e-8)
        assert props.centroid == pytest.approx(base.centroid + shift, abs=1e-9 * (1 + np.abs(shift).max()))
        assert props.circumradius == pytest.approx(base.circumradius, rel=1e-9)
        # the same vertices, about the centroid, counter-clockwise: equal up to where the list starts
        start = int(np.argmin(np.linalg.norm(props.vertices - base.vertices[0], axis=1)))
        assert np.roll(props.vertices, -start, axis=0) == pytest.approx(base.vertices, abs=1e-8)


@settings(max_examples=100)
@given(convex_polygons())
def test_convex_hulls_agree_with_qhull(polygon):
    props = polygon_properties(polygon[::-1])
    assert props.area == pytest.approx(ConvexHull(polygon).volume, rel=1e-12)
    assert polygon_moments(props.vertices)[0] > 0.0  # counter-clockwise
    assert naive_inside(props.centroid, polygon)


@settings(max_examples=100)
@given(convex_polygons(), st.integers(0, 7), st.floats(0.05, 0.95))
def test_a_dent_is_named(polygon, where, depth):
    # a vertex pushed inside, part way from an edge's midpoint towards the centroid, makes a reflex vertex
    k = where % len(polygon)
    midpoint = 0.5 * (polygon[k] + polygon[(k + 1) % len(polygon)])
    dent = midpoint + depth * (polygon.mean(axis=0) - midpoint)
    dented = np.insert(polygon, k + 1, dent, axis=0)
    with pytest.raises(ValueError, match=rf"not convex at vertices\[{k + 1}\]"):
        check_polygon(dented)


@pytest.mark.parametrize(
    "vertices, message",
    [
        ([(0, 0), (1, 0)], r"vertices: a polygon needs at least 3 vertices, got 2"),
        ([(0, 0), (1, 0), (math.inf, 1)], r"vertices\[2\] must be finite, got \(inf, 1.0\)"),
        ([(0, 0), (1, 0), (math.nan, 1)], r"vertices\[2\] must be finite, got \(nan, 1.0\)"),
        ([(0, 0), (1, 0), (1, 0), (0, 1)], r"vertices\[2\] repeats vertices\[1\]: \(1.0, 0.0\)"),
        ([(0, 0), (1, 0), (1, 1), (0, 0)], r"vertices\[3\] repeats vertices\[0\]"),
        ([(0, 0), (1, 1), (2, 2)], r"zero area \(its vertices lie on one line\)"),
        ([(0, 0), (1, 1), (1, 0), (0, 1)], r"self-intersecting: the edge from vertices\[0\] to vertices\[1\] crosses"),
        ([(0, 0), (2, 0), (2, 1), (1, 3), (1, -1), (0, 1)], r"self-intersecting"),
        ([(math.cos(a), math.sin(a)) for a in np.arange(5) * 4 * np.pi / 5], r"self-intersecting"),
        ([(0, 0), (2, 0), (1, 0.5), (1, 2)], r"not convex at vertices\[2\] \(1.0, 0.5\)"),
        ([(1, 2), (1, 0.5), (2, 0), (0, 0)], r"not convex at vertices\[1\] \(1.0, 0.5\)"),  # clockwise
        ([(0, 0), (1, 0), (2, 0), (1, 1)], r"vertices\[1\] \(1.0, 0.0\) lies on the line through its neighbours"),
        ([[0, 1, 2], [3, 4, 5], [6, 7, 8]], r"vertices must be a list of \(x, y\) pairs, got an array of shape"),
        ("square", r"vertices must be a list of \(x, y\) pairs, got 'square'"),
    ],
)
def test_bad_polygons_are_named(vertices, message):
    with pytest.raises(ValueError, match=message):
        polygon_properties(vertices)


def test_field_name_is_the_callers():
    with pytest.raises(ValueError, match=r"polygons\[3\]\.vertices\[2\] must be finite"):
        check_polygon([(0, 0), (1, 0), (math.nan, 1)], field="polygons[3].vertices")
    with pytest.raises(ValueError, match=r"width must be a positive finite number \(m\), got -1.0"):
        rectangle_vertices(-1.0, 1.0)


# --- layout ----------------------------------------------------------------------------------------------


def test_table_layout():
    square = polygon_properties([(0, 0), (1, 0), (1, 1), (0, 1)]).vertices
    triangle = polygon_properties([(0, 0), (0, 1), (1, 0)]).vertices  # clockwise in, counter-clockwise out
    table = polygon_table([square, None, triangle])
    assert table.start.tolist() == [0, 4, 4, 7]
    assert table.vertices[4:] == pytest.approx(triangle)
    assert np.linalg.norm(table.normals, axis=1) == pytest.approx(np.ones(7))
    # each normal points out: every vertex of its polygon lies behind each edge's line
    for first, end in ((0, 4), (4, 7)):
        rows = table.vertices[first:end]
        for k in range(first, end):
            heights = (rows - table.vertices[k]) @ table.normals[k]
            assert heights.max() == pytest.approx(0.0, abs=1e-15)
            assert np.sort(heights)[-3] < 0.0  # only the edge's own two vertices lie on its line


# --- polygon–polygon -------------------------------------------------------------------------------------


@settings(max_examples=300)
@given(convex_polygons(), convex_polygons(), point, angle, st.tuples(st.floats(-2.5, 2.5), st.floats(-2.5, 2.5)),
       angle)  # fmt: skip
def test_polygon_pairs_against_naive(p, q, xi, ai, xj, aj):
    m = polygon_contact(p, xi, ai, q, xj, aj, within=math.inf)
    pw, qw = naive_placed(p, xi, ai), naive_placed(q, xj, aj)
    assert len(m.gaps) in (1, 2)
    assert np.linalg.norm(m.normal) == pytest.approx(1.0, abs=1e-15)
    # the deepest point's gap is the signed distance: the distance apart, minus the penetration depth
    assert m.gaps[0] == pytest.approx(naive_signed_distance(pw, qw), abs=TOL)
    assert m.gaps[-1] >= m.gaps[0]
    # each point joins a point of i's outline to a point of j's, gap apart along the normal
    assert max(surface_errors(m, pw, qw)) < TOL
    if m.gaps[0] < 0.0:  # the normal is a least way out: j moved by the depth along it just touches
        depth = naive_penetration_depth(pw, qw)
        assert -m.gaps[0] == pytest.approx(depth, abs=TOL)
        assert naive_signed_distance(pw, qw - m.gaps[0] * m.normal) == pytest.approx(0.0, abs=1e-10)
    assert (m.gaps[0] < -TOL) <= (naive_area(naive_clip(pw, qw)) > 0.0)


@settings(max_examples=300)
@given(convex_polygons(), convex_polygons(), point, angle, st.tuples(st.floats(-2.5, 2.5), st.floats(-2.5, 2.5)),
       angle, st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6),
       st.sampled_from([1e-9, 1e-4, 0.1, 1.0]))  # fmt: skip
def test_the_deepest_gap_changes_no_faster_than_the_outlines_move(p, q, xi, ai, xj, aj, moves, scale):
    """The deepest point's gap (the signed distance) of a pair moved by (dx, d angle) each changes by at most
    how far their points move, ``|dx| + |d angle| r`` each (r the farthest vertex from the frame origin): the
    bound by which the projection passes over pairs that cannot have come to overlap."""
    move = np.array(moves) * scale
    before = polygon_contact(p, xi, ai, q, xj, aj, within=math.inf).gaps[0]
    xi2, xj2 = np.add(xi, move[0:2]), np.add(xj, move[3:5])
    after = polygon_contact(p, xi2, ai + move[2], q, xj2, aj + move[5], within=math.inf).gaps[0]
    reach_p, reach_q = np.hypot(*np.transpose(p)).max(), np.hypot(*np.transpose(q)).max()
    bound = np.hypot(*move[0:2]) + abs(move[2]) * reach_p + np.hypot(*move[3:5]) + abs(move[5]) * reach_q
    assert abs(after - before) <= bound + TOL


@settings(max_examples=300)
@given(convex_polygons(), point, angle, point, st.floats(0.05, 1.0), point, angle,
       st.lists(st.floats(-1.0, 1.0), min_size=5, max_size=5), st.sampled_from([1e-9, 1e-4, 0.1, 1.0]))  # fmt: skip
def test_the_gap_to_a_disk_or_a_wall_changes_no_faster_than_the_outlines_move(p, x, a, centre, radius, wall_point,
                                                                               wall_angle, moves, scale):  # fmt: skip
    """The same bound for the projection's other pairs: a polygon moved by (dx, d angle) and a disk moved by
    dc change their gap by at most ``|dx| + |d angle| r + |dc|``, a polygon and a wall by ``|dx| + |d angle| r``
    (r the polygon's farthest vertex from its frame origin), overlapping or not."""
    move = np.array(moves) * scale
    reach = np.hypot(*np.transpose(p)).max()
    x2, a2 = np.add(x, move[0:2]), a + move[2]
    polygon_moves = np.hypot(*move[0:2]) + abs(move[2]) * reach
    before = polygon_disk_contact(p, x, a, centre, radius).gaps[0]
    after = polygon_disk_contact(p, x2, a2, np.add(centre, move[3:5]), radius).gaps[0]
    assert abs(after - before) <= polygon_moves + np.hypot(*move[3:5]) + TOL
    normal = (math.cos(wall_angle), math.sin(wall_angle))
    before = polygon_wall_contact(p, x, a, wall_point, normal, within=math.inf).gaps[0]
    after = polygon_wall_contact(p, x2, a2, wall_point, normal, within=math.inf).gaps[0]
    assert abs(after - before) <= polygon_moves + TOL


@settings(max_examples=150)
@given(convex_polygons(), convex_polygons(), point, angle, st.tuples(st.floats(-2.5, 2.5), st.floats(-2.5, 2.5)),
       angle)  # fmt: skip
def test_swapping_the_pair_flips_the_normal_and_keeps_the_points(p, q, xi, ai, xj, aj):
    forward = polygon_contact(p, xi, ai, q, xj, aj, within=math.inf)
    backward = polygon_contact(q, xj, aj, p, xi, ai, within=math.inf)
    assert backward.normal == pytest.approx(-forward.normal, abs=1e-9)
    assert backward.gaps[0] == pytest.approx(forward.gaps[0], abs=TOL)
    # the deepest points agree; a second point exists in both unless the clipped edges differ (a tie of faces)
    assert backward.points[0] == pytest.approx(forward.points[0], abs=1e-9) or (
        len(forward.gaps) == 2 and forward.gaps[1] == pytest.approx(forward.gaps[0], abs=1e-9)
    )


def test_box_flat_on_a_box_gives_two_equal_points():
    box = rectangle_vertices(1.0, 0.5)
    lower, upper = (0.0, 0.25), (0.3, 0.75 + 1e-7)
    for m, normal in (
        (polygon_contact(box, lower, 0.0, box, upper, 0.0), [0.0, 1.0]),
        (polygon_contact(box, upper, 0.0, box, lower, 0.0), [0.0, -1.0]),
    ):
        assert m.normal == pytest.approx(normal, abs=1e-15)
        assert m.gaps == pytest.approx([1e-7, 1e-7], abs=1e-15)
        assert sorted(m.points[:, 0]) == pytest.approx([-0.2, 0.5], abs=1e-15)
        assert m.points[:, 1] == pytest.approx([0.5 + 5e-8] * 2, abs=1e-15)


def test_tilted_box_on_a_box_keeps_its_second_corner_only_within_the_slack():
    box = rectangle_vertices(1.0, 0.5)
    tilt = 1e-3
    level = polygon_contact(box, (0.0, 0.25), 0.0, box, (0.0, 0.75 + 0.5 * math.sin(tilt)), tilt, within=0.0)
    assert len(level.gaps) == 1  # one corner
    both = polygon_contact(box, (0.0, 0.25), 0.0, box, (0.0, 0.75 + 0.5 * math.sin(tilt)), tilt, within=1e-2)
    assert len(both.gaps) == 2
    # the upper box's bottom edge, from its lower left corner to where the lower box's top ends (x = 0.5)
    left = -0.5 * math.cos(tilt) + 0.25 * math.sin(tilt)
    assert both.gaps[1] - both.gaps[0] == pytest.approx((0.5 - left) * math.tan(tilt), rel=1e-12)
    assert sorted(both.points[:, 0]) == pytest.approx([left, 0.5], rel=1e-12)


def test_corner_to_corner_apart_is_one_point_along_the_corners():
    box = rectangle_vertices(1.0, 1.0)
    m = polygon_contact(box, (0.0, 0.0), 0.0, box, (1.3, 1.4), 0.0)
    assert m.gaps == pytest.approx([math.hypot(0.3, 0.4)], rel=1e-15)
    assert m.normal == pytest.approx([0.6, 0.8], rel=1e-15)
    assert m.points[0] == pytest.approx([0.65, 0.7], rel=1e-15)
    # a hair beside the face's strip at a small gap: still the corners' line, not the face's normal
    aside, apart = 2.0**-40, 2.0**-30  # about 1e-12 and 1e-9 m, exact in binary
    m = polygon_contact(box, (0.0, 0.0), 0.0, box, (1.0 + aside, 1.0 + apart), 0.0)
    assert m.normal == pytest.approx(np.array([aside, apart]) / math.hypot(aside, apart), rel=1e-12)
    assert m.gaps == pytest.approx([math.hypot(aside, apart)], rel=1e-12)


def test_far_pairs_stop_at_the_reach():
    box = rectangle_vertices(1.0, 1.0)
    far = polygon_contact(box, (0.0, 0.0), 0.0, box, (5.0, 0.0), 0.0, reach=1.0)
    assert len(far.gaps) == 0
    near = polygon_contact(box, (0.0, 0.0), 0.0, box, (1.5, 0.0), 0.0, reach=1.0)
    assert near.gaps == pytest.approx([0.5, 0.5])


def test_kernels_take_body_ids_in_the_engines_layout():
    # three bodies: a box, a disk and a triangle; the kernels read their rows by id
    box = polygon_properties(rectangle_vertices(1.0, 0.5))
    tri = polygon_properties([(0, 0), (1, 0), (0, 1)])
    table = polygon_table([box.vertices, None, tri.vertices])
    x = np.array([[0.0, 0.25], [2.0, 0.3], [0.2, 0.5 + 1 / 3 + 0.01]])
    angles = np.array([0.0, 0.0, 0.0])
    radius = np.array([box.circumradius, 0.25, tri.circumradius])
    points, gaps, normal = np.zeros((2, 2)), np.zeros(2), np.zeros(2)
    count = polygons_manifold(0, 2, x, angles, *table, math.inf, 1e-9, points, gaps, normal)
    assert count == 2
    assert gaps == pytest.approx([0.01, 0.01], abs=1e-15)
    assert normal == pytest.approx([0.0, 1.0])
    assert sorted(points[:, 0]) == pytest.approx([0.2 - 1 / 3, 0.5])  # where the triangle's base meets the box
    count = polygon_disk_manifold(0, 1, x, angles, radius, *table, points, gaps, normal)
    assert (count, gaps[0], *normal) == (1, 1.25, 1.0, 0.0)  # facing the right side of the box
    wall_p, wall_n = np.array([[0.0, 0.0]]), np.array([[0.0, 1.0]])
    count = polygon_wall_manifold(2, 0, x, angles, table.start, table.vertices, wall_p, wall_n, 1e-9, points, gaps,
                                  normal)  # fmt: skip
    assert count == 2
    assert gaps == pytest.approx([0.51, 0.51])


def test_one_corner_impact_of_the_issue():
    # A 1 m x 0.5 m box of 2 kg turned 30 degrees, falling at 3 m/s onto a floor, e = 0.5: the corner the
    # manifold gives yields the impulse j = (1 + e) u / (1/m + (r x n)^2 / I) = 4.710144 N s.
    props = polygon_properties(rectangle_vertices(1.0, 0.5))
    mass, e, speed = 2.0, 0.5, 3.0
    inertia = mass * props.second_moment / props.area
    angle_ = math.radians(30.0)
    lowest = naive_placed(props.vertices, (0.0, 0.0), angle_)[:, 1].min()
    position = (0.0, -lowest)  # touching the floor y = 0
    m = polygon_wall_contact(props.vertices, position, angle_, (0.0, 0.0), (0.0, 1.0))
    assert len(m.gaps) == 1
    assert m.gaps[0] == pytest.approx(0.0, abs=1e-15)
    r = m.points[0] - position
    r_cross_n = r[0] * m.normal[1] - r[1] * m.normal[0]
    impulse = (1 + e) * speed / (1 / mass + r_cross_n**2 / inertia)
    assert impulse == pytest.approx(4.710144, abs=5e-7)


# --- polygon–disk ----------------------------------------------------------------------------------------


@settings(max_examples=300)
@given(convex_polygons(), point, angle, st.tuples(st.floats(-2.5, 2.5), st.floats(-2.5, 2.5)),
       st.floats(0.01, 1.0))  # fmt: skip
def test_polygon_and_disk_against_naive(p, x, a, centre, radius):
    m = polygon_disk_contact(p, x, a, centre, radius)
    pw = naive_placed(p, x, a)
    centre = np.array(centre)
    to_outline = naive_boundary_distance(centre, pw)
    inside = naive_inside(centre, pw)
    assert len(m.gaps) == 1
    assert m.gaps[0] == pytest.approx((-to_outline if inside else to_outline) - radius, abs=TOL)
    polygon_side = m.points[0] - 0.5 * m.gaps[0] * m.normal
    disk_side = m.points[0] + 0.5 * m.gaps[0] * m.normal
    assert naive_boundary_distance(polygon_side, pw) < TOL
    assert np.linalg.norm(disk_side - centre) == pytest.approx(radius, abs=TOL)
    assert np.linalg.norm(m.normal) == pytest.approx(1.0, abs=1e-15)
    # the disk's deepest point is its centre pushed back along the normal
    assert disk_side == pytest.approx(centre - radius * m.normal, abs=TOL)


def test_disk_by_a_corner_and_inside():
    box = rectangle_vertices(1.0, 1.0)
    corner = polygon_disk_contact(box, (0.0, 0.0), 0.0, (0.8, 0.9), 0.25)
    assert corner.normal == pytest.approx([0.6, 0.8], rel=1e-15)
    assert corner.gaps == pytest.approx([0.25], rel=1e-15)
    inside = polygon_disk_contact(box, (0.0, 0.0), 0.0, (0.1, 0.4), 0.25)
    assert inside.normal == pytest.approx([0.0, 1.0])
    assert inside.gaps == pytest.approx([-0.1 - 0.25])


# --- polygon–wall ----------------------------------------------------------------------------------------


@settings(max_examples=300)
@given(convex_polygons(), point, angle, point, angle, st.floats(0.0, 0.5))
def test_polygon_and_wall_against_naive(p, x, a, wall_point, wall_angle, within):
    normal = np.array([math.cos(wall_angle), math.sin(wall_angle)])
    m = polygon_wall_contact(p, x, a, wall_point, normal, within=within)
    pw = naive_placed(p, x, a)
    heights = np.sort((pw - wall_point) @ normal)
    assert m.normal == pytest.approx(normal, abs=1e-15)
    assert m.gaps[0] == pytest.approx(heights[0], abs=TOL)
    assert len(m.gaps) == (2 if heights[1] - heights[0] <= within else 1) or abs(heights[1] - heights[0] - within) < TOL
    if len(m.gaps) == 2:
        assert m.gaps[1] == pytest.approx(heights[1], abs=TOL)
    for point_, gap in zip(m.points, m.gaps, strict=True):
        vertex = point_ + 0.5 * gap * normal  # the polygon's side: one of its vertices
        assert np.min(np.linalg.norm(pw - vertex, axis=1)) < TOL
        assert (point_ - 0.5 * gap * normal - wall_point) @ normal == pytest.approx(0.0, abs=TOL)  # on the wall


def test_box_resting_flat_on_a_floor_gives_both_corners():
    box = rectangle_vertices(1.0, 0.5)
    for angle_ in (0.0, math.pi):  # flat either way up
        m = polygon_wall_contact(box, (3.0, 0.25 + 1e-10), angle_, (0.0, 0.0), (0.0, 1.0))
        assert len(m.gaps) == 2
        assert m.gaps == pytest.approx([1e-10, 1e-10], abs=1e-16)
        assert sorted(m.points[:, 0]) == pytest.approx([2.5, 3.5], rel=1e-15)
    # standing on its short side, a quarter turn (cos(pi/2) is not exactly 0: level within round-off)
    m = polygon_wall_contact(box, (0.0, 0.5), math.pi / 2, (0.0, 0.0), (0.0, 1.0))
    assert len(m.gaps) == 2
    assert m.gaps == pytest.approx([0.0, 0.0], abs=1e-15)
    assert sorted(m.points[:, 0]) == pytest.approx([-0.25, 0.25], rel=1e-14)


def test_bad_poses_are_named():
    box = rectangle_vertices(1.0, 1.0)
    with pytest.raises(ValueError, match=r"position_j must be two finite numbers \(m\), got"):
        polygon_contact(box, (0, 0), 0.0, box, (math.nan, 0), 0.0)
    with pytest.raises(ValueError, match=r"vertices_j: a polygon needs at least 3 vertices"):
        polygon_contact(box, (0, 0), 0.0, box[:2], (1, 0), 0.0)
    with pytest.raises(ValueError, match=r"radius must be a positive finite number \(m\), got -1"):
        polygon_disk_contact(box, (0, 0), 0.0, (2, 0), -1)
    with pytest.raises(ValueError, match=r"wall_normal must not be zero"):
        polygon_wall_contact(box, (0, 0), 0.0, (0, -1), (0, 0))


def test_far_from_the_origin_the_gaps_keep_their_digits():
    # the kernels work relative to body i: at 1e6 m, a 1e-7 m gap is still known to the coordinates' round-off
    box = rectangle_vertices(1.0, 0.5)
    far = np.array([1e6, -1e6])
    m = polygon_contact(box, far + np.array([0.0, 0.25]), 0.0, box, far + np.array([0.3, 0.75 + 1e-7]), 0.0)
    assert m.gaps == pytest.approx([1e-7, 1e-7], abs=1e-9)
    wall = polygon_wall_contact(box, far + np.array([0.0, 0.25 + 1e-7]), 0.0, far, (0.0, 1.0))
    assert wall.gaps == pytest.approx([1e-7, 1e-7], abs=1e-9)
