"""Contact geometry of rigid convex polygons (2D): polygon–polygon, polygon–disk and polygon–wall manifolds.

A manifold is what an impact or a resting contact needs to know about a pair at one instant: the unit
normal (from body i towards body j; for a wall, the wall's normal, away from the wall, as everywhere in
carom), and one or two contact points, each with its own gap (m, positive apart, negative overlapping).
Each point is the midpoint of the two surface points it joins: body i's surface is at ``point - gap/2 n``
and body j's at ``point + gap/2 n`` (for a wall: the polygon's at ``point + gap/2 n``, the wall's at
``point - gap/2 n``). An impulse along n gives the same torque ``r x n`` anywhere on that line, so the
midpoint is a choice of presentation only; it makes swapping i and j flip the normal and keep the points.

**Storage** (`PolygonTable`, the engine's layout): the vertices of every polygon, in its body frame whose
origin is its centroid (its position), counter-clockwise, stacked into one ``(V, 2)`` float64 array;
body b's rows are ``start[b]:start[b + 1]`` (``start``, (n + 1,) int64; a disk has none); ``normals``, the
same shape, holds the outward unit normal of the edge from vertex k to vertex k + 1 (the last to the first),
in the body frame. World coordinates of vertex k of body b are ``x[b] + R(angle[b]) vertices[k]``.

**Kernels** take the engine's arrays and body ids, as the sphere kernels do: positions ``x`` (n, 2),
angles ``angle`` (n,) (rad, counter-clockwise: the 2D orientation column), the table, and output arrays
``points_out`` (2, 2), ``gaps_out`` (2,), ``normal_out`` (2,); they allocate nothing and return how many
points they wrote (deepest first). `polygon_contact`, `polygon_disk_contact` and `polygon_wall_contact` are
the same computations for Python callers (docs/polygons.md, Geometry).

* polygons (`polygons_manifold`): separating axes. The face of either polygon along whose normal the other
  reaches least far out (the largest *separation*) is the reference face. If even that separation exceeds
  ``reach``, the pair is returned with no points. Otherwise the edge of the other polygon most opposed to
  that face (the incident edge) is clipped to the strip beside the reference face: up to two points, each
  with its gap from the reference face's line (Box2D's manifold, Catto 2005). Apart, the true closest
  features decide: when the nearest points of the two outlines are two vertices, the manifold is that one
  pair of points, its normal along the line joining them, its gap their distance.
* polygon and disk (`polygon_disk_manifold`): the point of the polygon nearest the disk's centre, on the
  face of largest separation (its inside, or one of its ends: the vertex regions): `nearest_on_outline`,
  which the time of impact (`carom.narrowphase.rotation`) also uses for every vertex of a pair.
* polygon and wall (`polygon_wall_manifold`): the deepest vertex, and its deeper neighbour too when that
  one's gap exceeds the first's by at most ``within`` (an edge parallel to the wall: a flat landing needs
  both corners).

A second point of a polygon pair is reported by the same rule (its gap at most ``within`` beyond the
first's); the engine passes its touching slack (`spheres.touch_slack` with the circumradii), so that
contacts closing together are solved together.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..config import ROUNDOFF, Config
from ..jit import inlined, kernel
from ..shapes import check_polygon
from .spheres import touch_slack

INF = math.inf


class PolygonTable(NamedTuple):
    """Every polygon's body-frame vertices and edge normals, stacked (see the module's docstring)."""

    #: (n + 1,) int64: body b's vertices are rows ``start[b]:start[b + 1]`` (none for a disk).
    start: np.ndarray
    #: (V, 2) float64, m: vertices in the body frame (origin at the centroid), counter-clockwise.
    vertices: np.ndarray
    #: (V, 2) float64: outward unit normal of the edge from each vertex to the next, body frame.
    normals: np.ndarray


class Manifold(NamedTuple):
    """Contact geometry of a pair at one instant (world frame)."""

    #: (2,) unit normal, from body i towards body j (for a wall, the wall's normal).
    normal: np.ndarray
    #: (count, 2) contact points (m), deepest first: midpoints of the two surface points they join.
    points: np.ndarray
    #: (count,) gap at each point (m): negative where the bodies overlap.
    gaps: np.ndarray


def edge_normals(vertices: np.ndarray) -> np.ndarray:
    """Outward unit normals (k, 2) of the edges of a counter-clockwise polygon, edge k from vertex k to k + 1."""
    edges = np.roll(vertices, -1, axis=0) - vertices
    outward = np.column_stack([edges[:, 1], -edges[:, 0]])
    return outward / np.linalg.norm(outward, axis=1)[:, None]


def polygon_table(polygons) -> PolygonTable:
    """The `PolygonTable` of a sequence with one entry per body: the (k, 2) vertices of a convex polygon,
    counter-clockwise, in its body frame (as `carom.shapes.polygon_properties` returns them), or None for a
    body that is not a polygon."""
    counts = [0 if p is None else len(p) for p in polygons]
    start = np.zeros(len(counts) + 1, dtype=np.int64)
    start[1:] = np.cumsum(counts)
    stacked = [np.asarray(p, dtype=np.float64).reshape(-1, 2) for p in polygons if p is not None]
    vertices = np.concatenate(stacked) if stacked else np.zeros((0, 2))
    normals = np.concatenate([edge_normals(p) for p in stacked]) if stacked else np.zeros((0, 2))
    return PolygonTable(start, vertices, normals)


# --- kernels ---------------------------------------------------------------------------------------------


@inlined
def _next(k, first, end):
    """The vertex after k in a polygon whose rows are ``first:end`` (the last wraps to the first)."""
    return k + 1 if k + 1 < end else first


@inlined
def _placed(vertices, k, c, s, tx, ty):
    """Vertex k rotated by (c, s) = (cos, sin) of an angle and moved by (tx, ty)."""
    vx = vertices[k, 0]
    vy = vertices[k, 1]
    return c * vx - s * vy + tx, s * vx + c * vy + ty


@kernel
def max_separation(vertices, normals, ref0, ref1, inc0, inc1, c, s, tx, ty):
    """The largest separation (m) of the incident polygon (rows ``inc0:inc1``, placed in the reference
    polygon's frame by rotation (c, s) and offset (tx, ty)) from a face of the reference polygon (rows
    ``ref0:ref1``), and that face's row: for each face, how far the incident polygon's deepest vertex lies
    out along its normal."""
    best = -INF
    best_edge = ref0
    for k in range(ref0, ref1):
        nx = normals[k, 0]
        ny = normals[k, 1]
        ox = vertices[k, 0]
        oy = vertices[k, 1]
        deepest = INF
        for q in range(inc0, inc1):
            wx, wy = _placed(vertices, q, c, s, tx, ty)
            deepest = min(deepest, nx * (wx - ox) + ny * (wy - oy))
        if deepest > best:
            best = deepest
            best_edge = k
    return best, best_edge


@inlined
def _segment_nearest(px, py, ax, ay, bx, by):
    """The point of segment ab nearest to p, its squared distance (m^2), and whether it lies strictly
    inside the segment (not at an end)."""
    ex = bx - ax
    ey = by - ay
    u = ((px - ax) * ex + (py - ay) * ey) / (ex * ex + ey * ey)
    u = min(max(u, 0.0), 1.0)
    qx = ax + u * ex
    qy = ay + u * ey
    return qx, qy, (px - qx) ** 2 + (py - qy) ** 2, 0.0 < u < 1.0


@inlined
def nearest_on_outline(px, py, vertices, normals, first, end):
    """The signed distance (m) from point p to the convex outline of rows ``first:end`` (``vertices`` and
    their edges' outward unit ``normals``, in p's frame; two rows are a segment, its normals opposite),
    negative inside; the unit direction ``nx, ny`` from the outline's nearest point to p; the row of the
    edge that holds it; and whether it lies strictly inside that edge (then the direction is the edge's
    normal, which round-off cannot tilt however small the distance). The nearest point is ``p - distance
    n``. The edge of largest separation holds it, on its inside or at one of its ends (the vertex regions);
    docs/polygons.md, Geometry."""
    best = -INF
    edge = first
    for k in range(first, end):
        sep = normals[k, 0] * (px - vertices[k, 0]) + normals[k, 1] * (py - vertices[k, 1])
        if sep > best:
            best = sep
            edge = k
    e2 = _next(edge, first, end)
    qx, qy, d2, inside = _segment_nearest(px, py, vertices[edge, 0], vertices[edge, 1], vertices[e2, 0],
                                          vertices[e2, 1])  # fmt: skip
    # Beside the edge, the nearest point is its end; a segment's every point beside it is outside it.
    if not inside and d2 > 0.0 and (best > 0.0 or end - first < 3):
        distance = math.sqrt(d2)
        return distance, (px - qx) / distance, (py - qy) / distance, edge, False
    return best, normals[edge, 0], normals[edge, 1], edge, inside


@kernel
def _nearest_points(vertices, ref0, ref1, inc0, inc1, c, s, tx, ty):
    """The nearest points of two disjoint outlines (reference frame), by every vertex against every edge of
    the other polygon (two disjoint segments are nearest at an end of one of them): ``(distance, rx, ry,
    ix, iy)``, r on the reference polygon, i on the incident one."""
    best = INF
    rx = ry = ix = iy = 0.0
    for k in range(ref0, ref1):
        ax = vertices[k, 0]
        ay = vertices[k, 1]
        k2 = _next(k, ref0, ref1)
        bx = vertices[k2, 0]
        by = vertices[k2, 1]
        for q in range(inc0, inc1):
            wx, wy = _placed(vertices, q, c, s, tx, ty)
            qx, qy, d2, _ = _segment_nearest(wx, wy, ax, ay, bx, by)
            if d2 < best:
                best, rx, ry, ix, iy = d2, qx, qy, wx, wy
            # the reference vertex k against the incident edge from q
            w2x, w2y = _placed(vertices, _next(q, inc0, inc1), c, s, tx, ty)
            qx, qy, d2, _ = _segment_nearest(ax, ay, wx, wy, w2x, w2y)
            if d2 < best:
                best, rx, ry, ix, iy = d2, ax, ay, qx, qy
    return math.sqrt(best), rx, ry, ix, iy


@kernel
def _incident_edge(normals, inc0, inc1, c, s, nx, ny):
    """The row of the incident polygon's edge whose normal (rotated by (c, s)) is most opposed to (nx, ny)."""
    best = INF
    best_edge = inc0
    for q in range(inc0, inc1):
        mx = c * normals[q, 0] - s * normals[q, 1]
        my = s * normals[q, 0] + c * normals[q, 1]
        along = mx * nx + my * ny
        if along < best:
            best = along
            best_edge = q
    return best_edge


@inlined
def _write_point(points_out, gaps_out, m, px, py, gap, nx, ny):
    """Store, as point m, the midpoint between (px, py) on the incident outline and its projection on the
    reference face's line, ``gap`` (m) behind it along (nx, ny)."""
    points_out[m, 0] = px - 0.5 * gap * nx
    points_out[m, 1] = py - 0.5 * gap * ny
    gaps_out[m] = gap


@kernel
def _clipped_points(w1x, w1y, w2x, w2y, v1x, v1y, nx, ny, length, within, points_out, gaps_out):
    """Face contact in the reference frame: the incident edge w1 w2 clipped to the strip beside the reference
    face (from v1, ``length`` m long, outward normal (nx, ny)); writes one or two points (deepest first) and
    returns how many."""
    ux = -ny  # the face's tangent, from v1 to v2: the normal turned a quarter counter-clockwise
    uy = nx
    a1 = ux * (w1x - v1x) + uy * (w1y - v1y)
    a2 = ux * (w2x - v1x) + uy * (w2y - v1y)
    lo = 0.0
    hi = 1.0
    if a2 != a1:
        ua = -a1 / (a2 - a1)
        ub = (length - a1) / (a2 - a1)
        lo = max(lo, min(ua, ub))
        hi = min(hi, max(ua, ub))
    elif not 0.0 <= a1 <= length:
        lo = 2.0  # beside the strip: nothing survives the clip
    if lo > hi:  # the incident edge misses the strip (deep, lopsided overlaps): its deeper end alone
        g1 = nx * (w1x - v1x) + ny * (w1y - v1y)
        g2 = nx * (w2x - v1x) + ny * (w2y - v1y)
        if g2 < g1:
            w1x, w1y, g1 = w2x, w2y, g2
        _write_point(points_out, gaps_out, 0, w1x, w1y, g1, nx, ny)
        return 1
    p1x = w1x + lo * (w2x - w1x) if lo > 0.0 else w1x
    p1y = w1y + lo * (w2y - w1y) if lo > 0.0 else w1y
    p2x = w1x + hi * (w2x - w1x) if hi < 1.0 else w2x
    p2y = w1y + hi * (w2y - w1y) if hi < 1.0 else w2y
    g1 = nx * (p1x - v1x) + ny * (p1y - v1y)
    g2 = nx * (p2x - v1x) + ny * (p2y - v1y)
    if g2 < g1:
        p1x, p1y, g1, p2x, p2y, g2 = p2x, p2y, g2, p1x, p1y, g1
    _write_point(points_out, gaps_out, 0, p1x, p1y, g1, nx, ny)
    size = max(abs(p1x), abs(p1y), abs(p2x), abs(p2y), length)
    if g2 - g1 <= within and math.hypot(p2x - p1x, p2y - p1y) > ROUNDOFF * size:
        _write_point(points_out, gaps_out, 1, p2x, p2y, g2, nx, ny)
        return 2
    return 1


@kernel
def _reference_manifold(vertices, normals, ref0, ref1, edge, sep, inc0, inc1, c, s, tx, ty, within,
                        points_out, gaps_out):  # fmt: skip
    """The manifold in the reference polygon's frame: ``(count, nx, ny)``, the normal pointing out of the
    reference polygon, points written to the outputs. ``sep``: the separation of face ``edge`` (m)."""
    nx = normals[edge, 0]
    ny = normals[edge, 1]
    v1x = vertices[edge, 0]
    v1y = vertices[edge, 1]
    e2 = _next(edge, ref0, ref1)
    length = math.hypot(vertices[e2, 0] - v1x, vertices[e2, 1] - v1y)
    q1 = _incident_edge(normals, inc0, inc1, c, s, nx, ny)
    w1x, w1y = _placed(vertices, q1, c, s, tx, ty)
    w2x, w2y = _placed(vertices, _next(q1, inc0, inc1), c, s, tx, ty)
    if sep > 0.0:
        # Apart, a face's separation never exceeds the distance, and equals it when the nearest points face
        # each other across the face: surely so when the incident polygon's deepest vertex (an end of the
        # incident edge) lies in the face's strip. Otherwise the nearest points decide (by every vertex
        # against every edge): if they are two vertices, the manifold is that one pair, along their line.
        deeper_x, deeper_y = (w1x, w1y) if nx * w1x + ny * w1y <= nx * w2x + ny * w2y else (w2x, w2y)
        slack = ROUNDOFF * max(abs(deeper_x), abs(deeper_y), abs(v1x), abs(v1y), length)
        beside = -ny * (deeper_x - v1x) + nx * (deeper_y - v1y)  # along the face, from v1
        if beside < -slack or beside > length + slack:
            distance, rx, ry, ix, iy = _nearest_points(vertices, ref0, ref1, inc0, inc1, c, s, tx, ty)
            slack = ROUNDOFF * max(abs(rx), abs(ry), abs(ix), abs(iy), length)
            beside = -ny * (ix - v1x) + nx * (iy - v1y)
            if distance > sep + slack or beside < -slack or beside > length + slack:
                points_out[0, 0] = 0.5 * (rx + ix)
                points_out[0, 1] = 0.5 * (ry + iy)
                gaps_out[0] = distance
                return 1, (ix - rx) / distance, (iy - ry) / distance
    count = _clipped_points(w1x, w1y, w2x, w2y, v1x, v1y, nx, ny, length, within, points_out, gaps_out)
    return count, nx, ny


@inlined
def _to_world(points_out, count, x, b, c, s):
    """Move ``count`` points from body b's frame (rotation (c, s)) to the world frame, in place."""
    for m in range(count):
        px = points_out[m, 0]
        py = points_out[m, 1]
        points_out[m, 0] = x[b, 0] + c * px - s * py
        points_out[m, 1] = x[b, 1] + s * px + c * py


@kernel
def polygons_manifold(i, j, x, angle, start, vertices, normals, reach, within, points_out, gaps_out, normal_out):
    """Contact manifold of polygons i and j (table rows ``start``, ``vertices``, ``normals``; positions ``x``
    (n, 2), m; angles (n,), rad). Returns the number of points written (1 or 2, deepest first), or 0 when the
    largest separation exceeds ``reach`` (m), that separation (a lower bound of the gap) then in
    ``gaps_out[0]``. A second point is kept when its gap exceeds the first's by at most ``within`` (m).
    ``normal_out``: unit normal from i towards j."""
    ci = math.cos(angle[i])
    si = math.sin(angle[i])
    cj = math.cos(angle[j])
    sj = math.sin(angle[j])
    dx = x[j, 0] - x[i, 0]
    dy = x[j, 1] - x[i, 1]
    # j in i's frame: rotation by angle_j - angle_i, offset R_i^T d; i in j's frame: the inverse.
    c = ci * cj + si * sj
    s = ci * sj - si * cj
    jx = ci * dx + si * dy
    jy = -si * dx + ci * dy
    ix = -(cj * dx + sj * dy)
    iy = -(-sj * dx + cj * dy)
    i0, i1, j0, j1 = start[i], start[i + 1], start[j], start[j + 1]
    sep_i, edge_i = max_separation(vertices, normals, i0, i1, j0, j1, c, s, jx, jy)
    if sep_i > reach:
        gaps_out[0] = sep_i
        return 0
    sep_j, edge_j = max_separation(vertices, normals, j0, j1, i0, i1, c, -s, ix, iy)
    if sep_j > reach:
        gaps_out[0] = sep_j
        return 0
    if sep_j > sep_i:  # j's face is the reference: the normal it gives points from j to i
        count, nx, ny = _reference_manifold(vertices, normals, j0, j1, edge_j, sep_j, i0, i1, c, -s, ix, iy, within,
                                            points_out, gaps_out)  # fmt: skip
        _to_world(points_out, count, x, j, cj, sj)
        normal_out[0] = -(cj * nx - sj * ny)
        normal_out[1] = -(sj * nx + cj * ny)
        return count
    count, nx, ny = _reference_manifold(vertices, normals, i0, i1, edge_i, sep_i, j0, j1, c, s, jx, jy, within,
                                        points_out, gaps_out)  # fmt: skip
    _to_world(points_out, count, x, i, ci, si)
    normal_out[0] = ci * nx - si * ny
    normal_out[1] = si * nx + ci * ny
    return count


@kernel
def polygon_disk_manifold(i, j, x, angle, radius, start, vertices, normals, points_out, gaps_out, normal_out):
    """Contact of polygon i and disk j (radius ``radius[j]``, m): one point, its gap (m) and the unit normal
    from the polygon towards the disk; returns 1. The disk's centre is placed in the polygon's frame; the
    face of largest separation holds the nearest point of the outline (on it, or at one of its ends)."""
    c = math.cos(angle[i])
    s = math.sin(angle[i])
    dx = x[j, 0] - x[i, 0]
    dy = x[j, 1] - x[i, 1]
    px = c * dx + s * dy
    py = -s * dx + c * dy
    distance, nx, ny, _, _ = nearest_on_outline(px, py, vertices, normals, start[i], start[i + 1])
    qx = px - distance * nx
    qy = py - distance * ny
    gap = distance - radius[j]
    points_out[0, 0] = x[i, 0] + c * (qx + 0.5 * gap * nx) - s * (qy + 0.5 * gap * ny)
    points_out[0, 1] = x[i, 1] + s * (qx + 0.5 * gap * nx) + c * (qy + 0.5 * gap * ny)
    gaps_out[0] = gap
    normal_out[0] = c * nx - s * ny
    normal_out[1] = s * nx + c * ny
    return 1


@kernel
def polygon_wall_manifold(b, k, x, angle, start, vertices, wall_p, wall_n, within, points_out, gaps_out, normal_out):
    """Contact of polygon b and wall k (a plane through ``wall_p[k]`` with unit normal ``wall_n[k]``, bodies
    on the side it points to): the deepest vertex, and its deeper neighbour when that one's gap exceeds the
    first's by at most ``within`` (m). Returns the count (1 or 2, deepest first); ``normal_out`` is the
    wall's normal. (The gaps of a convex polygon's vertices rise monotonically both ways round from the
    deepest, so the second deepest is a neighbour.)"""
    c = math.cos(angle[b])
    s = math.sin(angle[b])
    wx = wall_n[k, 0]
    wy = wall_n[k, 1]
    # the wall's normal in the body frame, and the plane gap of the body's origin
    bx = c * wx + s * wy
    by = -s * wx + c * wy
    height = wx * (x[b, 0] - wall_p[k, 0]) + wy * (x[b, 1] - wall_p[k, 1])
    first, end = start[b], start[b + 1]
    deepest = first
    low = INF
    for q in range(first, end):
        gap = height + bx * vertices[q, 0] + by * vertices[q, 1]
        if gap < low:
            low = gap
            deepest = q
    after = _next(deepest, first, end)
    before = deepest - 1 if deepest > first else end - 1
    gap_after = height + bx * vertices[after, 0] + by * vertices[after, 1]
    gap_before = height + bx * vertices[before, 0] + by * vertices[before, 1]
    second, gap2 = (after, gap_after) if gap_after <= gap_before else (before, gap_before)
    count = 2 if gap2 - low <= within else 1
    for m in range(count):
        q = deepest if m == 0 else second
        gap = low if m == 0 else gap2
        px, py = _placed(vertices, q, c, s, x[b, 0], x[b, 1])
        points_out[m, 0] = px - 0.5 * gap * wx
        points_out[m, 1] = py - 0.5 * gap * wy
        gaps_out[m] = gap
    normal_out[0] = wx
    normal_out[1] = wy
    return count


# --- Python entry points ---------------------------------------------------------------------------------


def _pose(position, angle, name: str) -> tuple[np.ndarray, float]:
    point = np.asarray(position, dtype=np.float64)
    if point.shape != (2,) or not np.isfinite(point).all():
        raise ValueError(f"{name} must be two finite numbers (m), got {position!r}")
    if not math.isfinite(angle):
        raise ValueError(f"the angle of {name} must be finite (rad), got {angle!r}")
    return point, float(angle)


def _default_within(vertices, positions, tolerance) -> float:
    """The engine's touching slack for these bodies: ``tolerance`` times the smaller circumradius (about
    each frame's origin) plus the round-off of their coordinates (`spheres.touch_slack`)."""
    radii = [float(np.max(np.hypot(v[:, 0], v[:, 1]))) for v in vertices]
    size = float(np.max(np.abs(positions)))
    return touch_slack(min(radii), min(radii), size, tolerance)


def _manifold(count: int, points: np.ndarray, gaps: np.ndarray, normal: np.ndarray) -> Manifold:
    return Manifold(normal.copy(), points[:count].copy(), gaps[:count].copy())


def polygon_contact(vertices_i, position_i, angle_i, vertices_j, position_j, angle_j, *, within=None,
                    reach=INF) -> Manifold:  # fmt: skip
    """The contact `Manifold` of two convex polygons, each given by its vertices in its own body frame
    (either winding), the position of that frame's origin (m) and its angle (rad, counter-clockwise).

    ``within`` (m): a second point is kept when its gap exceeds the first's by at most this; by default the
    engine's touching slack (``Config.contact_tolerance`` times the smaller circumradius, plus round-off).
    ``reach`` (m): farther apart than this (by separating axes), no points are returned.
    """
    polygons = [check_polygon(vertices_i, "vertices_i"), check_polygon(vertices_j, "vertices_j")]
    xi, ai = _pose(position_i, angle_i, "position_i")
    xj, aj = _pose(position_j, angle_j, "position_j")
    return checked_polygon_contact(polygons, np.array([xi, xj]), np.array([ai, aj]), within, reach)


def checked_polygon_contact(polygons, x: np.ndarray, angles: np.ndarray, within=None, reach=INF) -> Manifold:
    """`polygon_contact` of two outlines that are checked already (`carom.shapes.check_polygon`: (k, 2),
    counter-clockwise, convex), at positions ``x`` (2, 2) m and ``angles`` (2,) rad: no validation."""
    if within is None:
        within = _default_within(polygons, x, Config().contact_tolerance)
    table = polygon_table(polygons)
    points, gaps, normal = np.zeros((2, 2)), np.zeros(2), np.zeros(2)
    count = polygons_manifold(0, 1, x, angles, *table, float(reach), float(within), points, gaps, normal)
    return _manifold(count, points, gaps, normal)


def polygon_disk_contact(vertices, position, angle, centre, radius) -> Manifold:
    """The contact `Manifold` of a convex polygon (vertices in its body frame, either winding; the position
    of that frame's origin, m; its angle, rad) and a disk (centre, m; radius, m): one point, the normal from
    the polygon towards the disk."""
    polygon = check_polygon(vertices, "vertices")
    xp, ap = _pose(position, angle, "position")
    xc, _ = _pose(centre, 0.0, "centre")
    if not (math.isfinite(radius) and radius > 0.0):
        raise ValueError(f"radius must be a positive finite number (m), got {radius!r}")
    table = polygon_table([polygon, None])
    points, gaps, normal = np.zeros((2, 2)), np.zeros(2), np.zeros(2)
    count = polygon_disk_manifold(0, 1, np.array([xp, xc]), np.array([ap, 0.0]), np.array([0.0, float(radius)]),
                                  *table, points, gaps, normal)  # fmt: skip
    return _manifold(count, points, gaps, normal)


def polygon_wall_contact(vertices, position, angle, wall_point, wall_normal, *, within=None) -> Manifold:
    """The contact `Manifold` of a convex polygon (as in `polygon_disk_contact`) and the wall through
    ``wall_point`` (m) with normal ``wall_normal`` (normalised here; bodies live on the side it points to):
    the deepest vertex, and its neighbour when the two are level within ``within`` (m; by default the
    engine's touching slack for the polygon)."""
    polygon = check_polygon(vertices, "vertices")
    xp, ap = _pose(position, angle, "position")
    p, _ = _pose(wall_point, 0.0, "wall_point")
    n, _ = _pose(wall_normal, 0.0, "wall_normal")
    length = float(np.hypot(*n))
    if length == 0.0:
        raise ValueError(f"wall_normal must not be zero, got {wall_normal!r}")
    if within is None:
        within = _default_within([polygon], np.array([xp, p]), Config().contact_tolerance)
    table = polygon_table([polygon])
    points, gaps, normal = np.zeros((2, 2)), np.zeros(2), np.zeros(2)
    count = polygon_wall_manifold(0, 0, xp[None, :], np.array([ap]), table.start, table.vertices, p[None, :],
                                  (n / length)[None, :], float(within), points, gaps, normal)  # fmt: skip
    return _manifold(count, points, gaps, normal)
