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

The gap at an instant is the least signed distance of a vertex of either shape from the other's outline
(apart, the nearest points of two convex shapes include a vertex), each by the polygon geometry's
`carom.narrowphase.polygons.nearest_on_outline`; the crossed-plates overlap, where no vertex lies inside
the other shape, by its separating axes (`polygons.max_separation`).

Shapes that touch at the start (the engine asks after an impact, or for a resting pair) get their next
*new* contact: each vertex against the other outline is a feature; a touching feature that approaches is
a contact now, one that does not is held until its gap has opened beyond the touching distance, and
then counts again (docs/polygons.md, "Pairs that touch at the start").
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..config import Config
from ..jit import inlined, kernel
from ..shapes import check_polygon
from .polygons import max_separation, nearest_on_outline
from .roots import first_crossing, quadratic_crossing
from .spheres import touch_slack, wall_touch_slack

INF = math.inf

#: `_separation`'s feature code: the closest points are two vertices (or a vertex lies inside the other shape).
VERTICES = 0
#: `_separation`'s feature code: a vertex of A is closest to the inside of an edge of B.
FACE_OF_B = 1
#: `_separation`'s feature code: a vertex of B is closest to the inside of an edge of A.
FACE_OF_A = 2

#: A held feature (touching at the start) counts again once its gap has opened beyond this fraction of the
#: touching distance: the hold times close in on the opening quadratically, but the last fraction of the
#: gap's round-off would take a step each (docs/polygons.md, "Pairs that touch at the start").
OPENED = 0.999

#: Default cap on the advancement steps of one search (`first_contact_time`): far above the counts
#: measured (docs/polygons.md); a search that reaches it returns how far it got (``cleared``).
MAX_ITERATIONS = 10_000


# ---------------------------------------------------------------------------------------------------------
# Motion and placement


@inlined
def _frame_at(motion, t):
    """Frame origin, its velocity, and the cosine and sine of the angle at time t (s):
    ``x, y, vx, vy, cos, sin``."""
    x = motion[0] + t * (motion[2] + 0.5 * t * motion[4])
    y = motion[1] + t * (motion[3] + 0.5 * t * motion[5])
    vx = motion[2] + t * motion[4]
    vy = motion[3] + t * motion[5]
    angle = motion[6] + motion[7] * t
    return x, y, vx, vy, math.cos(angle), math.sin(angle)


@kernel
def circumradius(vertices):
    """Largest distance (m) of a vertex from the body frame's origin."""
    reach = 0.0
    for i in range(vertices.shape[0]):
        reach = max(reach, math.hypot(vertices[i, 0], vertices[i, 1]))
    return reach


# ---------------------------------------------------------------------------------------------------------
# Static geometry: the shared polygon kernels (`carom.narrowphase.polygons`) on the placed shapes


@kernel
def _outline_normals(vertices, out):
    """Outward unit normals of the edges of a shape's outline in its body frame, edge k from vertex k to
    the next, into ``out`` (k, 2): a polygon's (counter-clockwise) edges, a segment's two opposite sides
    (k = 2), none for a point (k = 1: zero, never read)."""
    k = vertices.shape[0]
    if k < 2:
        out[:] = 0.0
        return
    for e in range(k):
        f = (e + 1) % k
        ex = vertices[f, 0] - vertices[e, 0]
        ey = vertices[f, 1] - vertices[e, 1]
        length = math.sqrt(ex * ex + ey * ey)
        out[e, 0] = ey / length
        out[e, 1] = -ex / length


@kernel
def _place_pair(verts_a, normals_a, motion_a, verts_b, normals_b, motion_b, t, placed, placed_normals):
    """World coordinates (m) at time t (s) of A's vertices and edge normals (rows ``0:k_A`` of ``placed``
    and ``placed_normals``) and of B's (the rows after)."""
    ka = verts_a.shape[0]
    for shape in range(2):
        verts, normals, m, first = (verts_a, normals_a, motion_a, 0) if shape == 0 else \
            (verts_b, normals_b, motion_b, ka)  # fmt: skip
        x, y, _, _, c, s = _frame_at(m, t)
        for i in range(verts.shape[0]):
            rx, ry = verts[i, 0], verts[i, 1]
            placed[first + i, 0] = x + (c * rx - s * ry)
            placed[first + i, 1] = y + (s * rx + c * ry)
            mx, my = normals[i, 0], normals[i, 1]
            placed_normals[first + i, 0] = c * mx - s * my
            placed_normals[first + i, 1] = s * mx + c * my


@inlined
def _vertex_to_outline(placed, placed_normals, row, first, end):
    """Vertex feature ``row`` of ``placed`` against the other shape's outline (rows ``first:end``): the
    signed distance (m, no rounding), the unit direction ``nx, ny`` from the outline's nearest point to the
    vertex, that point's edge row and whether it lies inside the edge (`polygons.nearest_on_outline`; a
    point shape is its one vertex)."""
    px, py = placed[row, 0], placed[row, 1]
    if end - first == 1:
        dx, dy = px - placed[first, 0], py - placed[first, 1]
        distance = math.sqrt(dx * dx + dy * dy)
        if distance == 0.0:
            return 0.0, 0.0, 0.0, first, False
        return distance, dx / distance, dy / distance, first, False
    return nearest_on_outline(px, py, placed, placed_normals, first, end)


@kernel
def _separation(placed, placed_normals, ka, radii):
    """Gap (m) between the placed rounded shapes A (rows ``0:ka``) and B (the rest), the unit direction
    ``nx, ny`` from B's nearest point to A's, and which feature holds the nearest points (`VERTICES`,
    `FACE_OF_B`, `FACE_OF_A`): the least signed distance of a vertex of either from the other's outline
    (apart, the nearest points of two convex shapes always include a vertex), less the radii."""
    kab = placed.shape[0]
    best = INF
    nx = ny = 0.0
    feature = VERTICES
    for row in range(kab):
        a_side = row < ka
        first, end = (ka, kab) if a_side else (0, ka)
        distance, mx, my, _, on_face = _vertex_to_outline(placed, placed_normals, row, first, end)
        if distance < best:
            best = distance
            nx, ny = (mx, my) if a_side else (-mx, -my)
            feature = VERTICES if not on_face else (FACE_OF_B if a_side else FACE_OF_A)
    return best - radii, nx, ny, feature


@kernel
def _hulls_cross(placed, placed_normals, ka):
    """Whether the hulls of A (rows ``0:ka``) and B overlap along every edge normal of both
    (`polygons.max_separation`): an overlap in which no vertex need lie inside the other shape (two thin
    plates crossed)."""
    kab = placed.shape[0]
    depth = -INF
    if ka >= 2:
        depth, _ = max_separation(placed, placed_normals, 0, ka, ka, kab, 1.0, 0.0, 0.0, 0.0)
    if kab - ka >= 2:
        depth = max(depth, max_separation(placed, placed_normals, ka, kab, 0, ka, 1.0, 0.0, 0.0, 0.0)[0])
    return depth < 0.0 and (ka >= 2 or kab - ka >= 2)


# ---------------------------------------------------------------------------------------------------------
# Lower bounds of the gap, and the first time each can reach zero


@inlined
def _vertex_terms(rx, ry, ox, oy, frame_v_x, frame_v_y, omega, nx, ny):
    """Rate (m/s) along n of a vertex at world offset (ox, oy) from its frame origin, and its spin
    curvature bound ``omega^2 |r|`` (m/s^2)."""
    rate = nx * (frame_v_x - omega * oy) + ny * (frame_v_y + omega * ox)
    return rate, omega * omega * math.hypot(rx, ry)


@kernel
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


@kernel
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


@kernel
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


@kernel
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
# Pairs that touch at the start: held features


@inlined
def _material_point(motion, t, px, py):
    """World offset (m) of point p from the body's frame origin at time t (s), and the velocity (m/s) of
    the body's material point there: ``ox, oy, vx, vy``."""
    x, y, vx, vy, _, _ = _frame_at(motion, t)
    ox, oy = px - x, py - y
    return ox, oy, vx - motion[7] * oy, vy + motion[7] * ox


@inlined
def _rises_to(c0, c1, c2, span):
    """First delay in [0, ``span``] (s; inf if none) at which ``c0 + c1 s + c2 s^2`` (an upper bound of a
    quantity below zero now) can reach zero: 0 if it is not below zero now."""
    return 0.0 if c0 >= 0.0 else quadratic_crossing(c0, c1, c2, 0.0, span, False)


@inlined
def _falls_to(c0, c1, c2, span):
    """As `_rises_to` for a lower bound of a quantity above zero now."""
    return 0.0 if c0 <= 0.0 else quadratic_crossing(c0, c1, c2, 0.0, span, True)


@kernel
def _depth_under(placed, placed_normals, first, end, nx, ny, sx, sy):
    """How deep (m) the convex outline of rows ``first:end`` reaches straight in (along -n) from the point
    (sx, sy) of one of its edges, n that edge's outward normal: where that ray leaves it. 0 under an acute
    corner or a segment's side."""
    depth = INF
    for k in range(first, end):
        facing = placed_normals[k, 0] * nx + placed_normals[k, 1] * ny
        if facing < 0.0:
            out = placed_normals[k, 0] * (placed[k, 0] - sx) + placed_normals[k, 1] * (placed[k, 1] - sy)
            depth = min(depth, out / -facing)
    return max(0.0, depth) if depth < INF else 0.0


@kernel
def _nearest_point_hold(distance, nx, ny, w1x, w1y, w2x, w2y, spins, room, span):
    """First delay (s; inf: the whole ``span``) at which ``|w0 + w1 s + w2 s^2| + spins s^2 / 2`` (w0 =
    ``distance`` n, m) can exceed ``room`` (m): the squared inequality, ``|.|^2 <= (room - spins s^2 / 2)^2``,
    is a quartic, valid while its right side's root is positive."""
    if abs(distance) >= room:
        return 0.0
    limit = span if spins == 0.0 else min(span, math.sqrt(2.0 * room / spins))
    along1 = nx * w1x + ny * w1y
    along2 = nx * w2x + ny * w2y
    c2 = w1x * w1x + w1y * w1y + 2.0 * distance * along2 + room * spins
    c3 = 2.0 * (w1x * w2x + w1y * w2y)
    c4 = w2x * w2x + w2y * w2y - 0.25 * spins * spins
    root = first_crossing(distance * distance - room * room, 2.0 * distance * along1, c2, c3, c4, 0.0, limit, False)
    return limit if root == INF and limit < span else root


@kernel
def _hold_time(motion_p, motion_q, px, py, distance, nx, ny, on_face, u_lo, u_hi, depth, room, t, span):
    """A delay (s; inf: the whole ``span``) during which a vertex of P at (px, py) provably stays within
    ``room`` (m) of the other shape Q, its signed distance now ``distance`` (m) along the unit direction n
    from Q's nearest point q. The longest of three sufficient conditions, each bounded over the span:

    * the signed distance to a convex set is 1-Lipschitz, so it stays below ``distance + |w(s)|``, w the
      vertex's displacement from Q's material point that was at the vertex (w(0) = 0), with
      ``|w''| <= |a_PQ| + omega_P^2 |r_p| + omega_Q^2 |p - x_Q|`` (r_p the vertex's offset, m);
    * the distance is at most ``|p - q|``, q held to Q (q's offset r_q): ``|p - q|(s)`` is at most the
      length of its second-order Taylor polynomial, exact for the translation, plus
      ``(omega_P^2 |r_p| + omega_Q^2 |r_q|) s^2 / 2`` for the spins; squared, a quartic (`first_crossing`).
      Exact for two translating disks: a disk sliding round another stays held;
    * when q lies inside an edge of Q (``on_face``): the vertex stays in that edge's strip (its offset
      along the edge from q within [``u_lo``, ``u_hi``], m), at most ``room`` outside the edge's line
      (then within ``room`` of the edge itself) and at most ``depth`` behind it (Q's least depth over
      that part of the strip, `_depth_under`: then inside Q), or ``room`` if that is more. Both projections are on axes
      turning with Q; their second derivatives are bounded as in `_face_axis_step`, the acceleration term
      kept signed along n (a vertex sliding on a face under gravity never lifts: exact without spin)."""
    opx, opy, vpx, vpy = _material_point(motion_p, t, px, py)
    qx, qy = px - distance * nx, py - distance * ny
    oqx, oqy, vqx, vqy = _material_point(motion_q, t, qx, qy)
    wvx, wvy = vpx - vqx, vpy - vqy
    ax, ay = motion_p[4] - motion_q[4], motion_p[5] - motion_q[5]
    accel = math.hypot(ax, ay)
    spin_p, spin_q = motion_p[7], motion_q[7]
    spin_p2 = spin_p * spin_p * math.hypot(opx, opy)
    spins = spin_p2 + spin_q * spin_q * math.hypot(oqx, oqy)
    curvature = accel + spins
    speed = math.hypot(wvx, wvy)
    # Q's material point at the vertex: q's velocity plus omega_Q x (p - q), its offset p - x_Q
    slip = math.hypot(wvx + spin_q * distance * ny, wvy - spin_q * distance * nx)
    lever = math.hypot(oqx + distance * nx, oqy + distance * ny)
    hold = _rises_to(distance - room, slip, 0.5 * (accel + spin_p2 + spin_q * spin_q * lever), span)
    hold = max(hold, _nearest_point_hold(distance, nx, ny, wvx, wvy, 0.5 * ax, 0.5 * ay, spins, room, span))
    inside = max(room, depth)
    if not on_face or distance < -inside:
        return hold
    w_max = abs(distance) + (speed + 0.5 * curvature * span) * span
    turn = curvature - accel + spin_q * spin_q * w_max + 2.0 * abs(spin_q) * (speed + curvature * span)
    turn += abs(spin_q) * span * accel  # how far n and the edge turn from their values at 0, times |a_PQ|
    tx, ty = -ny, nx  # along the edge, from its first vertex to its second
    sep_rate = nx * wvx + ny * wvy
    along_rate = tx * wvx + ty * wvy - spin_q * distance
    normal_accel = nx * ax + ny * ay
    along_curvature = abs(tx * ax + ty * ay) + turn
    face = min(_rises_to(distance - room, sep_rate, 0.5 * (normal_accel + turn), span),
               _falls_to(distance + inside, sep_rate, 0.5 * (normal_accel - turn), span),
               _falls_to(-u_lo, along_rate, -0.5 * along_curvature, span),
               _falls_to(u_hi, -along_rate, -0.5 * along_curvature, span))  # fmt: skip
    return max(hold, face)


@kernel
def _feature_step(verts, row, motion, verts_other, motion_other, radii, nx, ny, on_face, t, left):
    """First delay (s; inf beyond ``left``) at which vertex ``row`` of a shape can come within the other
    shape, n (unit, from the other's nearest point to the vertex) its direction now: the better of the
    fixed-axis bound and, on a face, the turning-face bound, each for this one vertex."""
    vertex = verts[row : row + 1]
    step = _world_axis_step(vertex, motion, verts_other, motion_other, radii, nx, ny, t, left)
    if on_face and step < left:
        step = max(step, _face_axis_step(vertex, motion, verts_other, motion_other, radii, nx, ny, t, left))
    return step


@kernel
def _approach_rate(motion_a, motion_b, placed, placed_normals, row, first, end, distance, nx, ny, edge, on_face,
                   slack, t):  # fmt: skip
    """Rate (m/s) of the gap of vertex feature ``row`` (placed; the other outline rows ``first:end``, its
    nearest point at ``distance`` along n, on edge ``edge``): ``n.(v_p - v_q)``, the velocities of the
    vertex and of the other body's material point q. When q is a corner of a polygon and the two are
    within ``slack``, n is round-off: the signed distance from a corner changes at the greater of the
    rates along its two edges' normals (or, inside their cone, at |v|, which is greater still), so that
    is the rate."""
    m_p, m_q = (motion_a, motion_b) if row < first else (motion_b, motion_a)
    qx, qy = placed[row, 0] - distance * nx, placed[row, 1] - distance * ny
    _, _, vpx, vpy = _material_point(m_p, t, placed[row, 0], placed[row, 1])
    _, _, vqx, vqy = _material_point(m_q, t, qx, qy)
    ux, uy = vpx - vqx, vpy - vqy
    if on_face or end - first < 3 or distance > slack:
        return nx * ux + ny * uy
    after = edge + 1 if edge + 1 < end else first
    before = edge - 1 if edge > first else end - 1
    at_start = (qx - placed[edge, 0]) ** 2 + (qy - placed[edge, 1]) ** 2 <= (qx - placed[after, 0]) ** 2 + (
        qy - placed[after, 1]) ** 2  # fmt: skip
    other = before if at_start else after
    rate = placed_normals[edge, 0] * ux + placed_normals[edge, 1] * uy
    return max(rate, placed_normals[other, 0] * ux + placed_normals[other, 1] * uy)


@inlined
def _displacement_bound(motion, reach, horizon):
    """How far (m) any point of a body within ``reach`` (m) of its frame origin can move in ``horizon`` s:
    ``|v| H + |a| H^2 / 2`` for the origin, plus the arc ``|omega| H reach`` of the turning (a chord is
    never longer than its arc)."""
    return (math.hypot(motion[2], motion[3]) + 0.5 * math.hypot(motion[4], motion[5]) * horizon
            + abs(motion[7]) * reach) * horizon  # fmt: skip


@inlined
def _feature_report(ka, kab, slack):
    """(kab,) the gap (m) at which each vertex feature of a touching pair (A's ``ka`` vertices, then B's) is a
    contact: ``slack``, or inf for a feature that never counts (-inf, set later, while one is held)."""
    report = np.full(kab, slack)
    # A vertex's distance to a point shape is never less than the point's distance to the vertex's shape:
    # against a disk only the disk's own feature counts (else a disk rolling over a corner is a contact).
    report[: ka if kab - ka == 1 and ka > 1 else 0] = INF
    report[ka if ka == 1 else kab :] = INF
    return report


@inlined
def _speed_bound(motion, reach):
    """The greatest speed (m/s) now of a body's material point within ``reach`` (m) of its frame origin."""
    return math.hypot(motion[2], motion[3]) + abs(motion[7]) * reach


@kernel
def _touching_feature_approaches(motion_a, motion_b, placed, placed_normals, ka, radii, report, slack, speed_tol):
    """Whether a touching feature (gap within ``slack``) of a pair placed at 0 approaches faster than
    ``speed_tol`` (m/s): a contact now."""
    kab = placed.shape[0]
    for row in range(kab):
        if report[row] == INF:
            continue
        first, end = (ka, kab) if row < ka else (0, ka)
        distance, nx, ny, edge, on_face = _vertex_to_outline(placed, placed_normals, row, first, end)
        if distance - radii <= slack and _approach_rate(motion_a, motion_b, placed, placed_normals, row, first, end,
                                                        distance, nx, ny, edge, on_face, slack, 0.0) < -speed_tol:
            return True
    return False


@kernel
def _touching_pair_time(verts_a, radius_a, motion_a, verts_b, radius_b, motion_b, frame_normals, placed,
                        placed_normals, horizon, slack, speed_tol, max_iterations):  # fmt: skip
    """`pair_contact_time` for a pair that touches at 0 (``placed`` at 0): the first *new* contact.

    Each vertex of either shape, against the other shape's outline, is a feature. A feature within
    ``slack`` at 0 that approaches faster than ``speed_tol`` (m/s) is a contact now (time 0). One that
    does not is *held*: left out of the search until its gap has opened beyond ``slack`` (`OPENED`; proved by
    `_hold_time`, so no opening is stepped over); from then on it is a new contact once its gap is back
    within ``slack / 2`` (the half keeps a gap that hovers at ``slack`` from being reported). Every other
    feature is searched as in `pair_contact_time`, each along its own direction (`_feature_step`); a
    feature that ``report`` marks inf is left out for good."""
    ka = verts_a.shape[0]
    kab = placed.shape[0]
    radii = radius_a + radius_b
    room = slack + radii
    # A pair that barely moves (a pile at rest): no feature that does not touch (gap > slack) can reach 0 while
    # every point moves by less than the slack, nor can a touching one after opening beyond OPENED slack; the
    # gap of a vertex to a convex outline changes by no more than the two bodies' displacements together. Half
    # the margin is kept for the gaps' round-off.
    reach_a, reach_b = circumradius(verts_a), circumradius(verts_b)
    moves = _displacement_bound(motion_a, reach_a, horizon) + _displacement_bound(motion_b, reach_b, horizon)
    if 2.0 * moves < OPENED * slack:
        # (no feature's gap changes faster than the two bodies' fastest points move: none approaches)
        if 2.0 * (_speed_bound(motion_a, reach_a) + _speed_bound(motion_b, reach_b)) <= speed_tol:
            return INF, horizon, 1
        report = _feature_report(ka, kab, slack)
        if _touching_feature_approaches(motion_a, motion_b, placed, placed_normals, ka, radii, report, slack,
                                        speed_tol):  # fmt: skip
            return 0.0, 0.0, 0
        return INF, horizon, 1
    report = _feature_report(ka, kab, slack)
    t = 0.0
    for iteration in range(max_iterations):
        if iteration > 0:
            _place_pair(verts_a, frame_normals[:ka], motion_a, verts_b, frame_normals[ka:], motion_b, t, placed,
                        placed_normals)  # fmt: skip
        left = horizon - t
        step = left
        for row in range(kab):
            if report[row] == INF:
                continue
            a_side = row < ka
            first, end = (ka, kab) if a_side else (0, ka)
            distance, nx, ny, edge, on_face = _vertex_to_outline(placed, placed_normals, row, first, end)
            gap = distance - radii
            if iteration == 0 and gap <= slack:
                if _approach_rate(motion_a, motion_b, placed, placed_normals, row, first, end, distance, nx, ny,
                                  edge, on_face, slack, t) < -speed_tol:  # fmt: skip
                    return 0.0, 0.0, 0
                report[row] = -INF
            elif report[row] == -INF and gap > OPENED * slack:
                report[row] = 0.5 * slack
            if report[row] == -INF:
                continue
            if gap <= report[row]:
                return t, t, iteration
            if a_side:
                found = _feature_step(verts_a, row, motion_a, verts_b, motion_b, radii, nx, ny, on_face, t, step)
            else:
                found = _feature_step(verts_b, row - ka, motion_b, verts_a, motion_a, radii, nx, ny, on_face, t, step)
            step = min(step, found)
        for row in range(kab):
            if report[row] != -INF:
                continue
            a_side = row < ka
            first, end = (ka, kab) if a_side else (0, ka)
            distance, nx, ny, edge, on_face = _vertex_to_outline(placed, placed_normals, row, first, end)
            u_lo = u_hi = depth = 0.0
            if on_face:  # the middle of the strip, from q halfway to either end: Q is deeper there
                after = edge + 1 if edge + 1 < end else first
                qx, qy = placed[row, 0] - distance * nx, placed[row, 1] - distance * ny
                u_lo = 0.5 * (-ny * (placed[edge, 0] - qx) + nx * (placed[edge, 1] - qy))
                u_hi = 0.5 * (-ny * (placed[after, 0] - qx) + nx * (placed[after, 1] - qy))
                depth = min(_depth_under(placed, placed_normals, first, end, nx, ny, qx - ny * u_lo, qy + nx * u_lo),
                            _depth_under(placed, placed_normals, first, end, nx, ny, qx - ny * u_hi, qy + nx * u_hi))
            m_p, m_q = (motion_a, motion_b) if a_side else (motion_b, motion_a)
            hold = _hold_time(m_p, m_q, placed[row, 0], placed[row, 1], distance, nx, ny, on_face, u_lo, u_hi, depth,
                              room, t, step)  # fmt: skip
            if t + hold == t:  # opening within round-off of now (its gap at slack): a new contact from here
                report[row] = 0.5 * slack
                verts_p, verts_q, index = (verts_a, verts_b, row) if a_side else (verts_b, verts_a, row - ka)
                hold = _feature_step(verts_p, index, m_p, verts_q, m_q, radii, nx, ny, on_face, t, step)
            step = min(step, hold)
        if step >= left:
            return INF, horizon, iteration + 1
        if t + step == t:  # the clock cannot move: within round-off of touching
            return t, t, iteration + 1
        t += step
    return INF, t, max_iterations


# ---------------------------------------------------------------------------------------------------------
# The searches


@kernel
def pair_contact_time(verts_a, radius_a, motion_a, verts_b, radius_b, motion_b, horizon, slack, speed_tol,
                      max_iterations):  # fmt: skip
    """First time (s) in [0, ``horizon``] at which rounded convex shapes A and B make a new contact (gap <=
    ``slack``, m), both moving and turning (module docstring for the arrays). Returns ``time, cleared,
    iterations``: ``time`` inf if they do not touch within the horizon; ``cleared`` (s) the time up to
    which no new contact was proven (``time`` if found, ``horizon`` if none, less if ``max_iterations``
    ran out).

    Guarantee: the gap stays positive (up to round-off) on [0, time), and is within [0, slack] at
    ``time``. A pair that touches at 0 is searched by `_touching_pair_time`: time 0 if a touching vertex
    approaches faster than ``speed_tol`` (m/s), else the first contact of a vertex that did not touch or
    that has come off; an overlap of the hulls with no vertex inside the other shape is a contact now."""
    ka = verts_a.shape[0]
    kab = ka + verts_b.shape[0]
    work = np.empty((3 * kab, 2))  # body-frame edge normals; vertices and normals placed in the world
    frame_normals, placed, placed_normals = work[:kab], work[kab : 2 * kab], work[2 * kab :]
    _outline_normals(verts_a, frame_normals[:ka])
    _outline_normals(verts_b, frame_normals[ka:])
    reach_a = circumradius(verts_a) + radius_a
    reach_b = circumradius(verts_b) + radius_b
    radii = radius_a + radius_b
    t = 0.0
    for iteration in range(max_iterations):
        _place_pair(verts_a, frame_normals[:ka], motion_a, verts_b, frame_normals[ka:], motion_b, t, placed,
                    placed_normals)  # fmt: skip
        gap, nx, ny, feature = _separation(placed, placed_normals, ka, radii)
        if gap <= slack:
            if iteration == 0:
                return _touching_pair_time(verts_a, radius_a, motion_a, verts_b, radius_b, motion_b, frame_normals,
                                           placed, placed_normals, horizon, slack, speed_tol, max_iterations)
            return t, t, iteration
        if iteration == 0 and _hulls_cross(placed, placed_normals, ka):
            return 0.0, 0.0, 0
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


@inlined
def _vertex_height(verts, i, motion, x, y, vx, vy, c, s, wall_point, nx, ny):
    """Height (m) of vertex i above the wall line along its unit normal n, and its rate (m/s), for the
    frame at origin (x, y), velocity (vx, vy), angle of cosine c and sine s."""
    rx, ry = verts[i, 0], verts[i, 1]
    ox, oy = c * rx - s * ry, s * rx + c * ry
    height = nx * (x - wall_point[0] + ox) + ny * (y - wall_point[1] + oy)
    rate, _ = _vertex_terms(rx, ry, ox, oy, vx, vy, motion[7], nx, ny)
    return height, rate


@kernel
def _touching_wall_time(verts, radius, motion, wall_point, wall_normal, horizon, slack, speed_tol, max_iterations):
    """`wall_contact_time` for a shape that touches the wall at 0: each vertex is a feature, held or not
    as in `_touching_pair_time`. A vertex's height is exact to second order, so a held vertex's hold time
    comes from the upper bound ``n.a + omega^2 |r_i|`` of its curvature (exact without spin)."""
    still = np.zeros(8)
    still[0], still[1] = wall_point[0], wall_point[1]
    origin = np.zeros((1, 2))
    nx, ny = wall_normal[0], wall_normal[1]
    normal_accel = nx * motion[4] + ny * motion[5]
    spin2 = motion[7] * motion[7]
    reach = circumradius(verts) + radius
    k = verts.shape[0]
    report = np.full(k, slack)  # the gap (m) at which each vertex is a contact; -inf while it is held
    held = 0
    t = 0.0
    for iteration in range(max_iterations):
        left = horizon - t
        step = left
        x, y, vx, vy, c, s = _frame_at(motion, t)
        for i in range(k):
            height, rate = _vertex_height(verts, i, motion, x, y, vx, vy, c, s, wall_point, nx, ny)
            gap = height - radius
            if iteration == 0 and gap <= slack:
                if rate < -speed_tol:
                    return 0.0, 0.0, 0
                report[i] = -INF
                held += 1
            elif report[i] == -INF and gap > OPENED * slack:
                report[i] = 0.5 * slack
                held -= 1
            if report[i] != -INF and gap <= report[i]:
                return t, t, iteration
            if report[i] == -INF:
                bound = 0.5 * (normal_accel + spin2 * math.hypot(verts[i, 0], verts[i, 1]))
                hold = _rises_to(gap - slack, rate, bound, step)
                if t + hold == t:  # opening within round-off of now: a new contact from here
                    report[i] = 0.5 * slack
                    held -= 1
                else:
                    step = min(step, hold)
        if held == 0:
            far = nx * (x - wall_point[0]) + ny * (y - wall_point[1]) - reach
            if far > 0.0:
                step = min(step, quadratic_crossing(far, nx * vx + ny * vy, 0.5 * normal_accel, 0.0, left, True))
            else:
                step = 0.0
            if step < left:
                step = max(step, _world_axis_step(verts, motion, origin, still, radius, nx, ny, t, left))
        else:
            for i in range(k):
                if report[i] != -INF and step > 0.0:
                    step = min(step, _world_axis_step(verts[i : i + 1], motion, origin, still, radius, nx, ny, t, left))
        if step >= left:
            return INF, horizon, iteration + 1
        if t + step == t:
            return t, t, iteration + 1
        t += step
    return INF, t, max_iterations


@kernel
def wall_contact_time(verts, radius, motion, wall_point, wall_normal, horizon, slack, speed_tol, max_iterations):
    """First time (s) in [0, ``horizon``] at which a rounded convex shape makes a new contact with a wall (the
    line through ``wall_point`` with unit inward normal ``wall_normal``; the body lives on the side it
    points to): ``min_i n.(p_i - w) - radius <= slack``. Returns ``time, cleared, iterations`` as
    `pair_contact_time`; a shape that touches at 0 is searched by `_touching_wall_time`. Along the wall's
    fixed normal the bound of `_world_axis_step` is the gap itself, to second order."""
    still = np.zeros(8)
    still[0], still[1] = wall_point[0], wall_point[1]
    origin = np.zeros((1, 2))
    nx, ny = wall_normal[0], wall_normal[1]
    reach = circumradius(verts) + radius
    t = 0.0
    for iteration in range(max_iterations):
        x, y, vx, vy, c, s = _frame_at(motion, t)
        gap = INF
        for i in range(verts.shape[0]):
            rx, ry = verts[i, 0], verts[i, 1]
            gap = min(gap, nx * (x - wall_point[0] + c * rx - s * ry) + ny * (y - wall_point[1] + s * rx + c * ry))
        gap -= radius
        if gap <= slack:
            if iteration == 0:
                return _touching_wall_time(verts, radius, motion, wall_point, wall_normal, horizon, slack, speed_tol,
                                           max_iterations)  # fmt: skip
            return t, t, iteration
        left = horizon - t
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


def default_speed_tol(shape_a: Shape, motion_a, shape_b: Shape | Wall, motion_b=None,
                      config: Config | None = None) -> float:  # fmt: skip
    """carom's round-off of an approach speed (m/s) for the pair: ``speed_tolerance`` times the fastest a
    point of either body moves at 0, ``|v| + |omega| size`` (the engine uses its scene's speed scale)."""
    speed = 0.0
    for shape, m in ((shape_a, motion_a), (shape_b, motion_b)):
        if m is not None:
            speed += math.hypot(m[2], m[3]) + abs(m[7]) * shape.size
    return (config or Config()).speed_tolerance * speed


def first_contact_time(shape_a: Shape, motion_a, shape_b: Shape | Wall, motion_b=None, horizon: float = 1.0,
                       slack: float | None = None, speed_tol: float | None = None,
                       max_iterations: int = MAX_ITERATIONS) -> ImpactTime:  # fmt: skip
    """The first time in [0, ``horizon``] (s) at which ``shape_a`` moving by ``motion_a`` touches
    ``shape_b`` (a `Shape` moving by ``motion_b``, or a fixed `Wall` with no motion): its gap within
    ``slack`` (m; default `default_slack`). Never misses a contact, whatever the horizon and the spins
    (docs/polygons.md, "Time of impact").

    Shapes that already touch at 0 get the time of their next *new* contact: 0 if a touching vertex
    approaches faster than ``speed_tol`` (m/s; default `default_speed_tol`), otherwise the first contact
    of a vertex that did not touch, or that came off (its gap opened beyond ``slack``) and comes back. A
    box resting on a floor, sliding along it, or pivoting on one corner reports the next corner that
    lands, never its resting corners.

    >>> box = polygon([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)])
    >>> first_contact_time(box, motion((0, 1.5), velocity=(0, -2)), wall((0, 0), (0, 1))).time
    0.5
    """
    if not (math.isfinite(horizon) and horizon >= 0):
        raise ValueError(f"horizon must be finite and >= 0, got {horizon!r}")
    motion_a = _check_motion(motion_a, "motion_a")
    if not isinstance(shape_b, Wall):
        motion_b = _check_motion(motion_b, "motion_b")
    elif motion_b is not None:
        raise ValueError("a wall is fixed: motion_b must be None")
    if slack is None:
        slack = default_slack(shape_a, motion_a, shape_b, motion_b)
    if not (math.isfinite(slack) and slack >= 0):
        raise ValueError(f"slack must be finite and >= 0, got {slack!r}")
    if speed_tol is None:
        speed_tol = default_speed_tol(shape_a, motion_a, shape_b, motion_b)
    if not (math.isfinite(speed_tol) and speed_tol >= 0):
        raise ValueError(f"speed_tol must be finite and >= 0, got {speed_tol!r}")
    if isinstance(shape_b, Wall):
        found = wall_contact_time(shape_a.vertices, shape_a.radius, motion_a, shape_b.point, shape_b.normal,
                                  horizon, slack, speed_tol, max_iterations)  # fmt: skip
    else:
        found = pair_contact_time(shape_a.vertices, shape_a.radius, motion_a, shape_b.vertices, shape_b.radius,
                                  motion_b, horizon, slack, speed_tol, max_iterations)  # fmt: skip
    time, cleared, iterations = found
    return ImpactTime(None if time == INF else float(time), float(cleared), int(iterations))


__all__ = ["ImpactTime", "Shape", "Wall", "disk", "first_contact_time", "motion", "polygon", "wall"]
