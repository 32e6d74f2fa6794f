"""Exact time of impact of turning bodies: the first instant at which a rotating convex polygon touches a
wall, a disk or another rotating polygon, never missed whatever the step and the spin.

Between events a body's frame origin moves on a parabola, ``x(t) = x + v t + a t^2 / 2``, and its frame
turns at a constant rate, ``theta(t) = theta + omega t`` (no torque in free flight). The gap between two
such bodies is no polynomial in t, so the exact roots of `carom.narrowphase.roots` do not apply. This
module finds it by *conservative advancement* (Mirtich 1996) with second-order bounds:

1. at the current time t, the gap and the unit direction n of the closest points (a wall's normal);
2. a lower bound L(s) of the gap for every later s, built from the separating-axis inequality (along any
   axis the shapes' projections are at most as far apart as the shapes), each vertex's projection taken
   with its exact value and rate at t and a bound on its second derivative (from the acceleration, the
   spin ``omega^2 |r|``, and, for an axis turning with a face, the frame's own turning);
3. advance t to the first root of L (no contact can happen before it); stop when the gap is within the
   touching distance ``slack``.

See docs/polygons.md, "Time of impact", for the bounds, the guarantee and the iteration counts.

Shapes are *rounded convex polygons* over plain arrays: body-frame vertices ``(k, 2)`` (m; k >= 3 a convex
polygon in counter-clockwise order, k = 2 a segment, k = 1 a point) and a rounding radius (m), so a disk is
one vertex at its centre with its radius. A motion is 8 floats: ``x, y, vx, vy, ax, ay, angle, omega``
(m, m/s, m/s^2, rad, rad/s) of the body frame's origin at time 0.

The static distance between two shapes (`_separation`) is private here and is to be replaced by the
shared polygon geometry of `carom.narrowphase` (its closest points and features) once it lands: the root
finder needs only the gap, the closest-point direction and whether a face of either body holds the
closest point.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..config import Config
from ..shapes import check_polygon
from .roots import quadratic_crossing
from .spheres import touch_slack, wall_touch_slack

INF = math.inf

#: `_separation`'s feature code: the closest points are two vertices (or the shapes overlap).
VERTICES = 0
#: `_separation`'s feature code: a vertex of A is closest to the inside of an edge of B.
FACE_OF_B = 1
#: `_separation`'s feature code: a vertex of B is closest to the inside of an edge of A.
FACE_OF_A = 2

#: Default cap on the advancement steps of one search (`first_contact_time`): far above the counts
#: measured (docs/polygons.md); a search that reaches it returns how far it got (``cleared``).
MAX_ITERATIONS = 10_000


# ---------------------------------------------------------------------------------------------------------
# Motion and placement


@njit(cache=True, forceinline=True)
def _frame_at(motion, t):
    """Frame origin, its velocity, and the cosine and sine of the angle at time t (s):
    ``x, y, vx, vy, cos, sin``."""
    x = motion[0] + t * (motion[2] + 0.5 * t * motion[4])
    y = motion[1] + t * (motion[3] + 0.5 * t * motion[5])
    vx = motion[2] + t * motion[4]
    vy = motion[3] + t * motion[5]
    angle = motion[6] + motion[7] * t
    return x, y, vx, vy, math.cos(angle), math.sin(angle)


@njit(cache=True, forceinline=False)
def _place(vertices, motion, t, out):
    """World coordinates (m) of body-frame ``vertices`` at time t (s), into ``out``."""
    x, y, _, _, c, s = _frame_at(motion, t)
    for i in range(vertices.shape[0]):
        rx, ry = vertices[i, 0], vertices[i, 1]
        out[i, 0] = x + (c * rx - s * ry)
        out[i, 1] = y + (s * rx + c * ry)


@njit(cache=True, forceinline=False)
def circumradius(vertices):
    """Largest distance (m) of a vertex from the body frame's origin."""
    reach = 0.0
    for i in range(vertices.shape[0]):
        reach = max(reach, math.hypot(vertices[i, 0], vertices[i, 1]))
    return reach


# ---------------------------------------------------------------------------------------------------------
# Static geometry (private; to be replaced by the shared polygon kernels)


@njit(cache=True, forceinline=True)
def _closest_on_segment(px, py, ax, ay, bx, by):
    """Closest point to (px, py) on segment a-b, and whether it lies strictly inside the segment."""
    ex = bx - ax
    ey = by - ay
    length2 = ex * ex + ey * ey
    u = 0.0
    if length2 > 0.0:
        u = min(1.0, max(0.0, ((px - ax) * ex + (py - ay) * ey) / length2))
    return ax + u * ex, ay + u * ey, 0.0 < u < 1.0


@njit(cache=True, forceinline=True)
def _edge_count(k):
    """Edges of a k-vertex shape: a point has one degenerate edge, a segment one, a polygon k."""
    return 1 if k <= 2 else k


@njit(cache=True, forceinline=False)
def _closest_vertex_edge(pa, pb):
    """Closest pair between the vertices of ``pa`` and the edges of ``pb`` (world, m): ``distance^2``, the
    unit direction ``nx, ny`` from pb's point to pa's, and ``on_face`` (pb's point is inside an edge; the
    direction is then that edge's normal, which round-off cannot tilt however small the distance)."""
    best = INF
    nx = ny = 0.0
    face = False
    kb = pb.shape[0]
    for i in range(pa.shape[0]):
        for e in range(_edge_count(kb)):
            f = (e + 1) % kb
            qx, qy, inside = _closest_on_segment(pa[i, 0], pa[i, 1], pb[e, 0], pb[e, 1], pb[f, 0], pb[f, 1])
            dx, dy = pa[i, 0] - qx, pa[i, 1] - qy
            d2 = dx * dx + dy * dy
            if d2 < best:
                best, face = d2, inside
                if inside:
                    ex, ey = pb[f, 0] - pb[e, 0], pb[f, 1] - pb[e, 1]
                    length = math.hypot(ex, ey)
                    nx, ny = ey / length, -ex / length
                    if nx * dx + ny * dy < 0.0:
                        nx, ny = -nx, -ny
                elif d2 > 0.0:
                    distance = math.sqrt(d2)
                    nx, ny = dx / distance, dy / distance
    return best, nx, ny, face


@njit(cache=True, forceinline=False)
def _axis_gap(pa, pb, nx, ny):
    """Separation (m) of the projections on axis n: ``min_A n.p - max_B n.q`` (positive: apart)."""
    lo = INF
    for i in range(pa.shape[0]):
        lo = min(lo, nx * pa[i, 0] + ny * pa[i, 1])
    hi = -INF
    for j in range(pb.shape[0]):
        hi = max(hi, nx * pb[j, 0] + ny * pb[j, 1])
    return lo - hi


@njit(cache=True, forceinline=False)
def _edge_axes_gap(pa, pb, owner):
    """Largest separation of pa and pb along the edge normals of ``owner`` (pa or pb, world): negative
    when no edge normal separates them (both orientations are tried, so the winding does not matter)."""
    best = -INF
    k = owner.shape[0]
    if k < 2:
        return best
    for e in range(_edge_count(k)):
        f = (e + 1) % k
        ex = owner[f, 0] - owner[e, 0]
        ey = owner[f, 1] - owner[e, 1]
        length = math.hypot(ex, ey)
        if length == 0.0:
            continue
        nx, ny = ey / length, -ex / length
        best = max(best, _axis_gap(pa, pb, nx, ny), _axis_gap(pb, pa, nx, ny))
    return best


@njit(cache=True, forceinline=False)
def _overlap_depth(pa, pb):
    """Whether the convex hulls of pa and pb (world, m) overlap, by the separating-axis test over their
    edge normals: the largest separation (negative when they overlap; -inf for two points)."""
    return max(_edge_axes_gap(pa, pb, pa), _edge_axes_gap(pa, pb, pb))


@njit(cache=True, forceinline=False)
def _separation(pa, ra, pb, rb, check_overlap):
    """Gap (m) between rounded convex shapes A and B placed at ``pa``, ``pb`` (world vertices, m; rounding
    radii ``ra``, ``rb``), the unit direction ``nx, ny`` from B's closest point to A's, and which feature
    holds the closest points (`VERTICES`, `FACE_OF_B`, `FACE_OF_A`). Overlapping hulls (tested only when
    ``check_overlap``) give a negative gap. For separated convex shapes the closest pair always has a
    vertex on one side, so vertex-to-edge distances both ways give the distance."""
    if check_overlap and min(pa.shape[0], pb.shape[0]) >= 1 and max(pa.shape[0], pb.shape[0]) >= 2:
        depth = _overlap_depth(pa, pb)
        if depth < 0.0:
            return depth - ra - rb, 0.0, 0.0, VERTICES
    d2, nx, ny, on_b = _closest_vertex_edge(pa, pb)
    e2, mx, my, on_a = _closest_vertex_edge(pb, pa)
    feature = FACE_OF_B if on_b else VERTICES
    if e2 < d2:
        d2, nx, ny = e2, -mx, -my
        feature = FACE_OF_A if on_a else VERTICES
    if d2 == 0.0:
        return -ra - rb, 0.0, 0.0, VERTICES
    return math.sqrt(d2) - ra - rb, nx, ny, feature


# ---------------------------------------------------------------------------------------------------------
# Lower bounds of the gap, and the first time each can reach zero


@njit(cache=True, forceinline=True)
def _vertex_terms(rx, ry, ox, oy, frame_v_x, frame_v_y, omega, nx, ny):
    """Rate (m/s) along n of a vertex at world offset (ox, oy) from its frame origin, and its spin
    curvature bound ``omega^2 |r|`` (m/s^2)."""
    rate = nx * (frame_v_x - omega * oy) + ny * (frame_v_y + omega * ox)
    return rate, omega * omega * math.hypot(rx, ry)


@njit(cache=True, forceinline=False)
def _world_axis_step(verts_a, motion_a, verts_b, motion_b, radii, nx, ny, t, horizon):
    """First delay (s, within ``horizon``; inf if none) at which the gap of A and B along the fixed world
    axis n (from B towards A) can reach zero: ``min_i n.a_i(s) - max_j n.b_j(s) - radii``, every vertex
    bounded below (A) or above (B) by its value and rate at t and the curvature bound ``n.a -+
    omega^2 |r|``. A rigorous lower bound of the gap: no contact happens sooner."""
    xa, ya, vxa, vya, ca, sa = _frame_at(motion_a, t)
    xb, yb, vxb, vyb, cb, sb = _frame_at(motion_b, t)
    apart = nx * (xa - xb) + ny * (ya - yb)  # relative first: no cancellation far from the origin
    acc_a = nx * motion_a[4] + ny * motion_a[5]
    acc_b = nx * motion_b[4] + ny * motion_b[5]
    first = INF
    for j in range(verts_b.shape[0]):
        rx, ry = verts_b[j, 0], verts_b[j, 1]
        ox, oy = cb * rx - sb * ry, sb * rx + cb * ry
        value_b = nx * ox + ny * oy
        rate_b, spin_b = _vertex_terms(rx, ry, ox, oy, vxb, vyb, motion_b[7], nx, ny)
        for i in range(verts_a.shape[0]):
            sx, sy = verts_a[i, 0], verts_a[i, 1]
            px, py = ca * sx - sa * sy, sa * sx + ca * sy
            value_a = apart + nx * px + ny * py
            rate_a, spin_a = _vertex_terms(sx, sy, px, py, vxa, vya, motion_a[7], nx, ny)
            c0 = value_a - value_b - radii
            if c0 <= 0.0:  # n no longer separates (round-off at touching): no safe advance along it
                return 0.0
            c2 = 0.5 * ((acc_a - spin_a) - (acc_b + spin_b))
            first = min(first, quadratic_crossing(c0, rate_a - rate_b, c2, 0.0, horizon, True))
    return first


@njit(cache=True, forceinline=False)
def _face_axis_crossing(verts_p, motion_p, verts_q, motion_q, radii, nx, ny, t, span):
    """The lower bound of `_face_axis_step` over the delays [0, ``span``] (s): its first root (inf if none),
    its value at 0 (m) and the fastest closing rate (m/s) of its vertex terms at 0."""
    xp, yp, vxp, vyp, cp, sp = _frame_at(motion_p, t)
    xq, yq, vxq, vyq, cq, sq = _frame_at(motion_q, t)
    extent_q = -INF
    for j in range(verts_q.shape[0]):
        rx, ry = verts_q[j, 0], verts_q[j, 1]
        extent_q = max(extent_q, nx * (cq * rx - sq * ry) + ny * (sq * rx + cq * ry))
    dax, day = motion_p[4] - motion_q[4], motion_p[5] - motion_q[5]
    accel = math.hypot(dax, day)
    speed0 = math.hypot(vxp - vxq, vyp - vyq)
    speed = speed0 + accel * span
    reach = math.hypot(xp - xq, yp - yq) + (speed0 + 0.5 * accel * span) * span
    omega_q = motion_q[7]
    spin = motion_p[7] - omega_q
    frame_curvature = accel + 2.0 * abs(omega_q) * speed + omega_q * omega_q * reach
    turn_x, turn_y = -omega_q * ny, omega_q * nx  # dn/ds at t
    first = INF
    lowest = INF
    closing = 0.0
    for i in range(verts_p.shape[0]):
        rx, ry = verts_p[i, 0], verts_p[i, 1]
        ox, oy = cp * rx - sp * ry, sp * rx + cp * ry
        wx, wy = xp + ox - xq, yp + oy - yq
        rate = turn_x * wx + turn_y * wy
        rate += nx * (vxp - motion_p[7] * oy - vxq) + ny * (vyp + motion_p[7] * ox - vyq)
        c0 = nx * wx + ny * wy - extent_q - radii
        lowest = min(lowest, c0)
        closing = max(closing, -rate)
        c2 = -0.5 * (frame_curvature + spin * spin * math.hypot(rx, ry))
        first = min(first, quadratic_crossing(c0, rate, c2, 0.0, span, True))
    return first, lowest, closing


@njit(cache=True, forceinline=False)
def _face_axis_step(verts_p, motion_p, verts_q, motion_q, radii, nx, ny, t, horizon):
    """As `_world_axis_step`, along an axis that turns with body Q (n at t from Q towards P, the normal of
    the face of Q nearest to P). Q's own extent along it is then constant (``h_Q = max_j n.(q_j - x_Q)``);
    each vertex of P is bounded below by its value and rate at t and a bound on the second derivative
    of ``n(s).(p_i(s) - x_Q(s))``: ``|a_PQ| + 2 |omega_Q| |v_PQ| + omega_Q^2 |x_PQ| + (omega_P -
    omega_Q)^2 |r_i|`` (relative acceleration, the Coriolis and centripetal terms of Q's turning frame,
    and P's spin relative to it), |v_PQ| and |x_PQ| bounded over a span of delays that starts at twice
    the first-order guess and grows fourfold while the root lies beyond it. Converges quadratically
    where the world axis converges linearly: a vertex closing on a turning face."""
    first, lowest, closing = _face_axis_crossing(verts_p, motion_p, verts_q, motion_q, radii, nx, ny, t, 0.0)
    if lowest <= 0.0:  # n no longer separates (round-off at touching): no safe advance along it
        return 0.0
    span = horizon if closing * horizon <= 2.0 * lowest else 2.0 * lowest / closing
    for _ in range(8):
        first, _, _ = _face_axis_crossing(verts_p, motion_p, verts_q, motion_q, radii, nx, ny, t, span)
        if first < span:
            return first
        if span >= horizon:
            return INF
        last = span
        span = min(horizon, 4.0 * span)
    return last


@njit(cache=True, forceinline=False)
def _centre_step(motion_a, reach_a, motion_b, reach_b, t, horizon):
    """First delay (s; inf if none within ``horizon``) at which the circles about the frame origins that
    hold each body (radii ``reach_a``, ``reach_b``, m) can touch, along the fixed line of centres at t:
    the far-field bound, free of the spin's curvature. 0 if they overlap now."""
    xa, ya, vxa, vya, _, _ = _frame_at(motion_a, t)
    xb, yb, vxb, vyb, _, _ = _frame_at(motion_b, t)
    dx, dy = xa - xb, ya - yb
    distance = math.hypot(dx, dy)
    c0 = distance - reach_a - reach_b
    if distance == 0.0 or c0 <= 0.0:
        return 0.0
    nx, ny = dx / distance, dy / distance
    c1 = nx * (vxa - vxb) + ny * (vya - vyb)
    c2 = 0.5 * (nx * (motion_a[4] - motion_b[4]) + ny * (motion_a[5] - motion_b[5]))
    return quadratic_crossing(c0, c1, c2, 0.0, horizon, True)


# ---------------------------------------------------------------------------------------------------------
# The searches


@njit(cache=True, forceinline=False)
def pair_contact_time(verts_a, radius_a, motion_a, verts_b, radius_b, motion_b, horizon, slack, max_iterations):
    """First time (s) in [0, ``horizon``] at which rounded convex shapes A and B touch (gap <= ``slack``,
    m), both moving and turning (module docstring for the arrays). Returns ``time, cleared, iterations``:
    ``time`` inf if they do not touch within the horizon; ``cleared`` (s) the time up to which the gap
    was proven positive (``time`` if found, ``horizon`` if none, less if ``max_iterations`` ran out).

    Guarantee: the gap stays positive (up to round-off) on [0, time), and is within [0, slack] at
    ``time`` (or negative when already overlapping at 0)."""
    pa = np.empty((verts_a.shape[0], 2))
    pb = np.empty((verts_b.shape[0], 2))
    reach_a = circumradius(verts_a) + radius_a
    reach_b = circumradius(verts_b) + radius_b
    radii = radius_a + radius_b
    t = 0.0
    for iteration in range(max_iterations):
        _place(verts_a, motion_a, t, pa)
        _place(verts_b, motion_b, t, pb)
        gap, nx, ny, feature = _separation(pa, radius_a, pb, radius_b, iteration == 0)
        if gap <= slack:
            return t, t, iteration
        left = horizon - t
        step = _centre_step(motion_a, reach_a, motion_b, reach_b, t, left)
        if step < left:
            step = max(step, _world_axis_step(verts_a, motion_a, verts_b, motion_b, radii, nx, ny, t, left))
        if step < left and feature == FACE_OF_B:
            step = max(step, _face_axis_step(verts_a, motion_a, verts_b, motion_b, radii, nx, ny, t, left))
        elif step < left and feature == FACE_OF_A:
            step = max(step, _face_axis_step(verts_b, motion_b, verts_a, motion_a, radii, -nx, -ny, t, left))
        if step >= left:
            return INF, horizon, iteration + 1
        if t + step == t:  # the clock cannot move: within round-off of touching
            return t, t, iteration + 1
        t += step
    return INF, t, max_iterations


@njit(cache=True, forceinline=False)
def wall_contact_time(verts, radius, motion, wall_point, wall_normal, horizon, slack, max_iterations):
    """First time (s) in [0, ``horizon``] at which a rounded convex shape touches a wall (the line through
    ``wall_point`` with unit inward normal ``wall_normal``; the body lives on the side it points to):
    ``min_i n.(p_i - w) - radius <= slack``. Returns ``time, cleared, iterations`` as `pair_contact_time`.
    Along the wall's fixed normal the bound of `_world_axis_step` is the gap itself, to second order."""
    p = np.empty((verts.shape[0], 2))
    point = np.empty((1, 2))
    point[0, 0], point[0, 1] = wall_point[0], wall_point[1]
    still = np.zeros(8)
    still[0], still[1] = wall_point[0], wall_point[1]
    origin = np.zeros((1, 2))
    nx, ny = wall_normal[0], wall_normal[1]
    reach = circumradius(verts) + radius
    t = 0.0
    for iteration in range(max_iterations):
        _place(verts, motion, t, p)
        gap = _axis_gap(p, point, nx, ny) - radius
        if gap <= slack:
            return t, t, iteration
        left = horizon - t
        x, y, vx, vy, _, _ = _frame_at(motion, t)
        far = nx * (x - wall_point[0]) + ny * (y - wall_point[1]) - reach
        step = 0.0
        if far > 0.0:
            step = quadratic_crossing(far, nx * vx + ny * vy, 0.5 * (nx * motion[4] + ny * motion[5]), 0.0, left, True)
        if step < left:
            step = max(step, _world_axis_step(verts, motion, origin, still, radius, nx, ny, t, left))
        if step >= left:
            return INF, horizon, iteration + 1
        if t + step == t:
            return t, t, iteration + 1
        t += step
    return INF, t, max_iterations


# ---------------------------------------------------------------------------------------------------------
# Python entry point


class Shape(NamedTuple):
    """A rounded convex shape: body-frame ``vertices`` (k, 2) (m; counter-clockwise when k >= 3) and a
    rounding ``radius`` (m). Make one with `polygon` or `disk`."""

    vertices: np.ndarray
    radius: float

    @property
    def size(self) -> float:
        """Circumradius (m) about the body frame's origin, rounding included: the size that the touching
        tolerance scales with."""
        return float(circumradius(self.vertices)) + self.radius


class Wall(NamedTuple):
    """A fixed infinite line through ``point`` (m) with unit inward ``normal``; bodies live on the side
    the normal points to."""

    point: np.ndarray
    normal: np.ndarray


class ImpactTime(NamedTuple):
    """The answer of `first_contact_time`."""

    #: First time (s) the shapes touch, or None if they do not within the horizon.
    time: float | None
    #: Time (s) up to which the gap was proven positive: ``time`` if they touch, the horizon if they do
    #: not, less if the search ran out of iterations (search again from there).
    cleared: float
    #: Advancement steps taken.
    iterations: int


def _finite_array(value, field: str) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{field} must be finite, got {value!r}")
    return array


def polygon(vertices) -> Shape:
    """A convex polygon from its vertices in the body frame ((k, 2), m, k >= 3, either winding; validated
    by `carom.shapes.check_polygon`). The frame origin is the point that `motion` moves and turns about:
    the centroid for a body of `World`."""
    return Shape(np.ascontiguousarray(check_polygon(vertices, "vertices")), 0.0)


def disk(radius: float) -> Shape:
    """A disk of ``radius`` (m) centred on its body frame's origin."""
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be positive and finite, got {radius!r}")
    return Shape(np.zeros((1, 2)), float(radius))


def wall(point, normal) -> Wall:
    """A fixed wall: the line through ``point`` (m) with inward ``normal`` (normalised here)."""
    p = _finite_array(point, "point")
    n = _finite_array(normal, "normal")
    length = float(np.hypot(*n)) if n.shape == (2,) else 0.0
    if p.shape != (2,) or length == 0.0:
        raise ValueError(f"wall needs a 2D point and a nonzero 2D normal, got point={point!r}, normal={normal!r}")
    return Wall(p, n / length)


def motion(position, velocity=(0.0, 0.0), acceleration=(0.0, 0.0), angle=0.0, angular_velocity=0.0) -> np.ndarray:
    """The 8 floats of a body's motion from time 0: frame origin ``position`` (m), ``velocity`` (m/s),
    constant ``acceleration`` (m/s^2), ``angle`` (rad, counter-clockwise) and constant
    ``angular_velocity`` (rad/s). A fixed body has zero velocity and spin."""
    parts = {"position": position, "velocity": velocity, "acceleration": acceleration}
    out = np.empty(8)
    for k, (field, value) in enumerate(parts.items()):
        v = _finite_array(value, field)
        if v.shape != (2,):
            raise ValueError(f"{field} must be 2 numbers, got {value!r}")
        out[2 * k : 2 * k + 2] = v
    for k, (field, value) in enumerate({"angle": angle, "angular_velocity": angular_velocity}.items()):
        if not math.isfinite(value):
            raise ValueError(f"{field} must be finite, got {value!r}")
        out[6 + k] = value
    return out


def _check_motion(value, field: str) -> np.ndarray:
    """A body's motion as `motion` makes it, or a ValueError naming ``field``."""
    array = None if value is None else np.asarray(value, dtype=np.float64)
    if array is None or array.shape != (8,) or not np.all(np.isfinite(array)):
        raise ValueError(f"{field} must be 8 finite numbers (see motion()), got {value!r}")
    return array


def default_slack(shape_a: Shape, motion_a, shape_b: Shape | Wall, motion_b=None,
                  config: Config | None = None) -> float:  # fmt: skip
    """carom's touching distance (m) for the pair: ``contact_tolerance`` times the smaller size
    (`Shape.size`; the body's own for a wall) plus the round-off of their coordinates, as for disks
    (`carom.narrowphase.spheres.touch_slack`)."""
    tol = (config or Config()).contact_tolerance
    size = float(np.max(np.abs(motion_a[:2])))
    if isinstance(shape_b, Wall):
        return float(wall_touch_slack(shape_a.size, max(size, float(np.max(np.abs(shape_b.point)))), tol))
    size = max(size, float(np.max(np.abs(motion_b[:2]))))
    return float(touch_slack(shape_a.size, shape_b.size, size, tol))


def first_contact_time(shape_a: Shape, motion_a, shape_b: Shape | Wall, motion_b=None, horizon: float = 1.0,
                       slack: float | None = None, max_iterations: int = MAX_ITERATIONS) -> ImpactTime:  # fmt: skip
    """The first time in [0, ``horizon``] (s) at which ``shape_a`` moving by ``motion_a`` touches
    ``shape_b`` (a `Shape` moving by ``motion_b``, or a fixed `Wall` with no motion): its gap within
    ``slack`` (m; default `default_slack`). Never misses a contact, whatever the horizon and the spins
    (docs/polygons.md, "Time of impact").

    >>> box = polygon([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)])
    >>> first_contact_time(box, motion((0, 1.5), velocity=(0, -2)), wall((0, 0), (0, 1))).time
    0.5
    """
    if not (math.isfinite(horizon) and horizon >= 0):
        raise ValueError(f"horizon must be finite and >= 0, got {horizon!r}")
    motion_a = _check_motion(motion_a, "motion_a")
    if not isinstance(shape_b, Wall):
        motion_b = _check_motion(motion_b, "motion_b")
    if slack is None:
        slack = default_slack(shape_a, motion_a, shape_b, motion_b)
    if not (math.isfinite(slack) and slack >= 0):
        raise ValueError(f"slack must be finite and >= 0, got {slack!r}")
    if isinstance(shape_b, Wall):
        if motion_b is not None:
            raise ValueError("a wall is fixed: motion_b must be None")
        found = wall_contact_time(shape_a.vertices, shape_a.radius, motion_a, shape_b.point, shape_b.normal,
                                  horizon, slack, max_iterations)  # fmt: skip
    else:
        found = pair_contact_time(shape_a.vertices, shape_a.radius, motion_a, shape_b.vertices, shape_b.radius,
                                  motion_b, horizon, slack, max_iterations)  # fmt: skip
    time, cleared, iterations = found
    return ImpactTime(None if time == INF else float(time), float(cleared), int(iterations))


__all__ = ["ImpactTime", "Shape", "Wall", "disk", "first_contact_time", "motion", "polygon", "wall"]
