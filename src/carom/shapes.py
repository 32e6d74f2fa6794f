"""Mass properties of shapes.

A ball (a solid sphere in 3D, a uniform disk in 2D) of mass m and radius R has the moment of inertia
``I = k m R^2`` about its centre, ``k = 2/5`` for the sphere and ``1/2`` for the disk.

A rigid convex polygon (2D) is given by its vertices in its body frame, in either winding.
`polygon_properties` validates them (`check_polygon`) and returns its area, centroid and second moment of
area (so that ``I = m J / A``, or ``density * J``), with the vertices moved to the centroid frame,
counter-clockwise, and its circumradius (docs/polygons.md, Geometry).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .jit import inlined, kernel


@inlined
def ball_inertia_factor(dim):
    """k in ``I = k m R^2`` for a ball in ``dim`` dimensions: 2/5 (solid sphere), 1/2 (uniform disk)."""
    return 0.4 if dim == 3 else 0.5


# --- Rigid convex polygons -------------------------------------------------------------------------------

#: Two vertices closer than this fraction of the polygon's size (its largest vertex distance from their mean)
#: are one vertex repeated; an area below this fraction of the size squared is zero; a turn whose sine is
#: below it (relative to the two edges' lengths) is a straight angle. Dimensionless.
POLYGON_TOLERANCE = 1e-12


class PolygonProperties(NamedTuple):
    """Mass properties of a uniform convex polygon (`polygon_properties`).

    ``area`` (m^2); ``centroid`` (2,), in the frame the vertices were given in (m); ``second_moment`` (m^4),
    the polar second moment of area about the centroid, ``J = integral of |r - centroid|^2 dA``, so that a
    uniform polygon of mass m has the moment of inertia ``I = m J / area`` (``density * J``); ``vertices``
    (k, 2), moved to the centroid frame and counter-clockwise (m); ``circumradius`` (m), the largest
    distance of a vertex from the centroid: the body's size, and its bounding radius.
    """

    area: float
    centroid: np.ndarray
    second_moment: float
    vertices: np.ndarray
    circumradius: float


@kernel
def polygon_moments(vertices):
    """Signed area (m^2), centroid (m) and polar second moment of area about the centroid (m^4) of the
    simple polygon with these (k, 2) vertices, by the shoelace sums over its edges; the area is positive
    for a counter-clockwise polygon, and the second moment is positive either way.

    With the cross product ``c_k = x_k y_{k+1} - x_{k+1} y_k`` of consecutive vertices:
    ``A = sum c_k / 2``, ``centroid = sum (p_k + p_{k+1}) c_k / (6 A)``,
    ``J_origin = sum c_k (|p_k|^2 + p_k . p_{k+1} + |p_{k+1}|^2) / 12`` and ``J = J_origin - A |centroid|^2``
    (parallel axes). The sums run about the mean vertex, so a polygon far from its frame's origin loses no
    digits. Returns ``(area, cx, cy, second_moment)``; for zero area, ``(0, mean vertex, 0)``.
    """
    k = vertices.shape[0]
    mx = 0.0
    my = 0.0
    for a in range(k):
        mx += vertices[a, 0]
        my += vertices[a, 1]
    mx /= k
    my /= k
    twice_area = 0.0
    sx = 0.0
    sy = 0.0
    sj = 0.0
    for a in range(k):
        b = a + 1 if a + 1 < k else 0
        x0 = vertices[a, 0] - mx
        y0 = vertices[a, 1] - my
        x1 = vertices[b, 0] - mx
        y1 = vertices[b, 1] - my
        c = x0 * y1 - x1 * y0
        twice_area += c
        sx += (x0 + x1) * c
        sy += (y0 + y1) * c
        sj += c * (x0 * x0 + x0 * x1 + x1 * x1 + y0 * y0 + y0 * y1 + y1 * y1)
    area = 0.5 * twice_area
    if area == 0.0:
        return 0.0, mx, my, 0.0
    cx = sx / (6.0 * area)
    cy = sy / (6.0 * area)
    second_moment = sj / 12.0 - area * (cx * cx + cy * cy)
    if area < 0.0:
        second_moment = -second_moment
    return area, mx + cx, my + cy, second_moment


def check_polygon(vertices, field: str = "vertices") -> np.ndarray:
    """The vertices of a convex polygon as a (k, 2) float64 array, counter-clockwise (either winding is
    accepted; a clockwise list is reversed), or a ValueError naming ``field`` and the offending value:
    fewer than 3 vertices, a shape other than (k, 2), a non-finite number, a vertex repeated, zero area
    (all vertices on one line), a self-intersecting outline (two edges crossing), a vertex on the straight
    line through its neighbours, or a non-convex (reflex) vertex. Tolerances: `POLYGON_TOLERANCE`.
    """
    points = _vertex_array(vertices, field)
    size = float(np.max(np.linalg.norm(points - points.mean(axis=0), axis=1)))
    _check_repeats(points, size, field)
    area = polygon_moments(points)[0]
    if not abs(area) > POLYGON_TOLERANCE * size * size:
        _check_zero_area(points, size, field)
    if area < 0.0:
        points = points[::-1].copy()
        field_index = _reversed_index(len(points))
    else:
        field_index = _same_index
    _check_turns(points, field, field_index)
    return points


def polygon_properties(vertices, field: str = "vertices") -> PolygonProperties:
    """Validate a convex polygon (`check_polygon`) given in its body frame, in either winding, and return
    its `PolygonProperties`: area, centroid, second moment about the centroid, and the vertices moved to
    the centroid frame, counter-clockwise, with the circumradius about the centroid.

    This is what ``World.add_polygon`` will call: the body's position is its centroid, its inertia
    ``mass * second_moment / area`` unless given, and its bounding radius the circumradius.
    """
    points = check_polygon(vertices, field)
    area, cx, cy, second_moment = polygon_moments(points)
    centroid = np.array([cx, cy])
    centred = points - centroid
    circumradius = float(np.max(np.hypot(centred[:, 0], centred[:, 1])))
    return PolygonProperties(float(area), centroid, float(second_moment), centred, circumradius)


def rectangle_vertices(width: float, height: float) -> np.ndarray:
    """The (4, 2) vertices of a ``width`` x ``height`` rectangle (m) centred on the origin, counter-clockwise
    from the lower left corner; its second moment about the centre is ``width height (width^2 + height^2) / 12``."""
    for name, value in (("width", width), ("height", height)):
        if not (np.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be a positive finite number (m), got {value!r}")
    w = 0.5 * float(width)
    h = 0.5 * float(height)
    return np.array([[-w, -h], [w, -h], [w, h], [-w, h]])


def placed_vertices(outline, angle, position) -> np.ndarray:
    """World coordinates (m) of body-frame vertices ``outline`` (..., 2) (m, about the centroid): each turned
    counter-clockwise by ``angle`` (rad; a number, or one per vertex: broadcast against ``outline[..., 0]``)
    and moved by ``position`` (m; (2,), or one per vertex), ``position + R(angle) v``."""
    outline = np.asarray(outline, dtype=float)
    c, s = np.cos(angle), np.sin(angle)
    x, y = outline[..., 0], outline[..., 1]
    return position + np.stack([c * x - s * y, s * x + c * y], axis=-1)


def _vertex_array(vertices, field: str) -> np.ndarray:
    try:
        points = np.array(vertices, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{field} must be a list of (x, y) pairs, got {vertices!r}") from error
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"{field} must be a list of (x, y) pairs, got an array of shape {points.shape}")
    if len(points) < 3:
        raise ValueError(f"{field}: a polygon needs at least 3 vertices, got {len(points)}")
    bad = np.flatnonzero(~np.isfinite(points).all(axis=1))
    if len(bad):
        raise ValueError(f"{field}[{bad[0]}] must be finite, got {tuple(points[bad[0]].tolist())}")
    return points


def _check_repeats(points: np.ndarray, size: float, field: str) -> None:
    distance = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    distance[np.tril_indices(len(points))] = np.inf
    close = np.argwhere(distance <= POLYGON_TOLERANCE * size)
    if len(close):
        a, b = close[0]
        raise ValueError(f"{field}[{b}] repeats {field}[{a}]: {tuple(points[b].tolist())}")


def _check_zero_area(points: np.ndarray, size: float, field: str) -> None:
    """The ValueError for an outline of zero area: on one line, crossing itself (a bow tie), or else."""
    spread = np.linalg.svd(points - points.mean(axis=0), compute_uv=False)
    if spread[1] <= POLYGON_TOLERANCE * size:
        raise ValueError(f"{field}: the polygon has zero area (its vertices lie on one line): {points.tolist()}")
    _check_crossings(points, field, _same_index)
    raise ValueError(f"{field}: the polygon has zero area: {points.tolist()}")


def _same_index(k: int) -> int:
    return k


def _reversed_index(count: int):
    """Index in the user's list of vertex k of the reversed (counter-clockwise) array."""
    return lambda k: count - 1 - k


def _check_turns(points: np.ndarray, field: str, field_index) -> None:
    """Every vertex of the counter-clockwise ``points`` turns left, and the outline goes round once."""
    edges = np.roll(points, -1, axis=0) - points  # edge k: vertex k -> k + 1
    incoming = np.roll(edges, 1, axis=0)  # edge into vertex k
    turn = incoming[:, 0] * edges[:, 1] - incoming[:, 1] * edges[:, 0]
    scale = np.linalg.norm(incoming, axis=1) * np.linalg.norm(edges, axis=1)
    if np.any(turn < -POLYGON_TOLERANCE * scale):
        _check_crossings(points, field, field_index)
        k = int(np.flatnonzero(turn < -POLYGON_TOLERANCE * scale)[0])
        raise ValueError(f"{field}: the polygon is not convex at {field}[{field_index(k)}] "
                         f"{tuple(points[k].tolist())}")  # fmt: skip
    flat = np.flatnonzero(turn <= POLYGON_TOLERANCE * scale)
    if len(flat):
        k = int(flat[0])
        raise ValueError(f"{field}[{field_index(k)}] {tuple(points[k].tolist())} lies on the line through its "
                         "neighbours: leave it out")  # fmt: skip
    # All turns left: a convex polygon turns through 2 pi in all; a star (a self-intersecting outline) more.
    exterior = np.arctan2(turn, np.einsum("ij,ij->i", incoming, edges))
    if exterior.sum() > 3.0 * np.pi:
        _check_crossings(points, field, field_index)
        raise ValueError(f"{field}: the outline winds round more than once (self-intersecting)")


def _check_crossings(points: np.ndarray, field: str, field_index) -> None:
    """A ValueError naming two edges of the outline that cross, if any do."""
    count = len(points)
    for a in range(count):
        for b in range(a + 2, count):
            if a == 0 and b == count - 1:
                continue  # neighbours: they share vertex 0
            if _segments_cross(points[a], points[(a + 1) % count], points[b], points[(b + 1) % count]):
                ends_a = (field_index(a), field_index((a + 1) % count))
                ends_b = (field_index(b), field_index((b + 1) % count))
                raise ValueError(f"{field}: the polygon is self-intersecting: the edge from {field}[{ends_a[0]}] to "
                                 f"{field}[{ends_a[1]}] crosses the edge from {field}[{ends_b[0]}] to "
                                 f"{field}[{ends_b[1]}]")  # fmt: skip


def _segments_cross(p, q, r, s) -> bool:
    """Whether the segments pq and rs share a point (touching counts)."""

    def side(a, b, c):
        return np.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))

    d1, d2, d3, d4 = side(r, s, p), side(r, s, q), side(p, q, r), side(p, q, s)
    if d1 * d2 < 0 and d3 * d4 < 0:
        return True

    def within(a, b, c):  # c, collinear with ab, lies on the segment ab
        return min(a[0], b[0]) <= c[0] <= max(a[0], b[0]) and min(a[1], b[1]) <= c[1] <= max(a[1], b[1])

    return bool(
        (d1 == 0 and within(r, s, p))
        or (d2 == 0 and within(r, s, q))
        or (d3 == 0 and within(p, q, r))
        or (d4 == 0 and within(p, q, s))
    )
