"""Slow, obviously correct references for the fast kernels (O(n^2) and worse is fine here)."""

from __future__ import annotations

import numpy as np


def naive_candidates(position, radius, active, large, margin):
    """Broad-phase candidate lists by checking every pair; CSR ``(start, neighbours)`` as in
    ``carom.broadphase.candidates``.

    Bodies i != j, both active, are candidates when either is large, or when
    ``|x_i - x_j| <= R_i + R_j + 2 margin``, with the squared distance summed axis by axis in order and
    compared with the squared reach (the definition evaluated as written).
    """
    position = np.asarray(position, dtype=np.float64)
    radius = np.asarray(radius, dtype=np.float64)
    active = np.asarray(active, dtype=bool)
    large = np.asarray(large, dtype=bool)
    n = len(radius)
    dist2 = np.zeros((n, n))
    for d in range(position.shape[1]):
        dist2 += (position[:, None, d] - position[None, :, d]) ** 2
    reach = radius[:, None] + radius[None, :] + 2.0 * margin
    close = dist2 <= reach * reach
    either_large = large[:, None] | large[None, :]
    both_active = active[:, None] & active[None, :]
    pair = both_active & (close | either_large)
    np.fill_diagonal(pair, False)
    start = np.zeros(n + 1, dtype=np.int64)
    neighbours = []
    for i in range(n):
        row = np.flatnonzero(pair[i])  # ascending ids
        neighbours.append(row)
        start[i + 1] = start[i] + len(row)
    flat = np.concatenate(neighbours) if neighbours else np.empty(0, dtype=np.int64)
    return start, flat.astype(np.int64)


# --- Convex polygons (2D) --------------------------------------------------------------------------------


def naive_placed(vertices, position, angle):
    """World coordinates (k, 2) of body-frame vertices rotated by ``angle`` (rad) and moved to ``position``."""
    c, s = np.cos(angle), np.sin(angle)
    rotation = np.array([[c, -s], [s, c]])
    return np.asarray(position, dtype=np.float64) + np.asarray(vertices, dtype=np.float64) @ rotation.T


def naive_segment_distance(point, a, b):
    """Distance from ``point`` to the segment ab: to the projection of the point on ab's line, clamped to
    the segment."""
    point, a, b = (np.asarray(v, dtype=np.float64) for v in (point, a, b))
    u = np.clip(np.dot(point - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
    return float(np.linalg.norm(point - (a + u * (b - a))))


def naive_boundary_distance(point, polygon):
    """Distance from ``point`` to the outline of ``polygon`` (k, 2): the nearest of its edges."""
    k = len(polygon)
    return min(naive_segment_distance(point, polygon[a], polygon[(a + 1) % k]) for a in range(k))


def naive_inside(point, polygon):
    """Whether ``point`` lies inside the counter-clockwise convex ``polygon`` (on the left of every edge)."""
    k = len(polygon)
    for a in range(k):
        edge = polygon[(a + 1) % k] - polygon[a]
        rel = np.asarray(point) - polygon[a]
        if edge[0] * rel[1] - edge[1] * rel[0] < 0.0:
            return False
    return True


def naive_clip(subject, polygon):
    """The part of convex ``subject`` inside counter-clockwise convex ``polygon`` (both (k, 2)): subject cut by
    each of polygon's edges' half-planes in turn (Sutherland–Hodgman); (0, 2) when they do not overlap."""
    out = [np.asarray(p, dtype=np.float64) for p in subject]
    k = len(polygon)
    for a in range(k):
        p, q = polygon[a], polygon[(a + 1) % k]

        def side(v, p=p, q=q):
            return (q[0] - p[0]) * (v[1] - p[1]) - (q[1] - p[1]) * (v[0] - p[0])

        cut = []
        for m in range(len(out)):
            v, w = out[m], out[(m + 1) % len(out)]
            sv, sw = side(v), side(w)
            if sv >= 0.0:
                cut.append(v)
            if (sv >= 0.0) != (sw >= 0.0):
                cut.append(v + (w - v) * (sv / (sv - sw)))
        out = cut
        if not out:
            break
    return np.array(out).reshape(-1, 2)


def naive_area(polygon):
    """Area of a simple polygon (m^2), by the shoelace formula; 0 for fewer than 3 points."""
    if len(polygon) < 3:
        return 0.0
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y)))


def naive_penetration_depth(p, q):
    """How far convex q must move, at least, to stop overlapping convex p (both (k, 2), counter-clockwise):
    the least over directions u of ``max_p u.x - min_q u.x``, the depth of the overlap along u. Its minimum
    over all directions is at a face normal of p or q (a face of their Minkowski difference), so trying
    every edge normal of both, both ways, is exact."""
    axes = []
    for polygon in (p, q):
        edges = np.roll(polygon, -1, axis=0) - polygon
        normals = np.column_stack([edges[:, 1], -edges[:, 0]]) / np.linalg.norm(edges, axis=1)[:, None]
        axes.extend(normals)
        axes.extend(-normals)
    return min(float((p @ u).max() - (q @ u).min()) for u in axes)


def naive_signed_distance(p, q):
    """Gap between convex polygons p and q (both (k, 2), counter-clockwise): their distance when they do not
    overlap (the nearest of every vertex of one to every edge of the other), minus the penetration depth when
    they do."""
    if naive_area(naive_clip(p, q)) > 0.0:
        return -naive_penetration_depth(p, q)
    return min(
        min(naive_boundary_distance(v, q) for v in p),
        min(naive_boundary_distance(v, p) for v in q),
    )


# --- Rigid polygons: time of impact with rotation (carom.narrowphase.rotation) ---------------------------


def naive_place(vertices, motion, times):
    """World vertices (T, k, 2) of body-frame ``vertices`` (k, 2) at each of ``times`` (T,), for a motion
    ``x, y, vx, vy, ax, ay, angle, omega``: the frame origin on its parabola, the frame turned by its angle."""
    vertices = np.asarray(vertices, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64)[:, None]
    origin = np.asarray(motion[:2]) + np.asarray(motion[2:4]) * t + 0.5 * np.asarray(motion[4:6]) * t * t
    angle = motion[6] + motion[7] * t[:, 0]
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    x = origin[:, None, 0] + c * vertices[None, :, 0] - s * vertices[None, :, 1]
    y = origin[:, None, 1] + s * vertices[None, :, 0] + c * vertices[None, :, 1]
    return np.stack([x, y], axis=-1)


def _toi_edges(points):
    """Start and end points (T, e, 2) of a shape's edges: a point is one degenerate edge, a segment one,
    a polygon closes on itself."""
    if points.shape[1] <= 2:
        return points[:, :1], points[:, -1:]
    return points, np.roll(points, -1, axis=1)


def _toi_cross(ux, uy, vx, vy):
    return ux * vy - uy * vx


def _toi_point_edge_distances(points, starts, ends):
    """Distance (T, k, e) of every point to every edge, by clamping the projection onto the edge."""
    p = points[:, :, None, :]
    s = starts[:, None, :, :]
    e = ends[:, None, :, :] - s
    length2 = np.sum(e * e, axis=-1)
    u = np.where(length2 > 0, np.sum((p - s) * e, axis=-1) / np.where(length2 > 0, length2, 1.0), 0.0)
    closest = s + np.clip(u, 0.0, 1.0)[..., None] * e
    return np.sqrt(np.sum((p - closest) ** 2, axis=-1))


def _toi_inside(points, polygon):
    """Whether each point (T, k) lies inside or on the counter-clockwise convex ``polygon`` (T, m >= 3)."""
    if polygon.shape[1] < 3:
        return np.zeros(points.shape[:2], dtype=bool)
    starts, ends = _toi_edges(polygon)
    e = (ends - starts)[:, None, :, :]
    d = points[:, :, None, :] - starts[:, None, :, :]
    return np.all(_toi_cross(e[..., 0], e[..., 1], d[..., 0], d[..., 1]) >= 0, axis=-1)


def _toi_edges_cross(pa, pb):
    """Whether some edge of pa properly crosses some edge of pb (T,)."""
    sa, ea = (x[:, :, None, :] for x in _toi_edges(pa))
    sb, eb = (x[:, None, :, :] for x in _toi_edges(pb))

    def side(p, q, r):
        return _toi_cross(q[..., 0] - p[..., 0], q[..., 1] - p[..., 1], r[..., 0] - p[..., 0], r[..., 1] - p[..., 1])

    crossing = (side(sa, ea, sb) * side(sa, ea, eb) < 0) & (side(sb, eb, sa) * side(sb, eb, ea) < 0)
    return np.any(crossing, axis=(1, 2))


def naive_shape_gap(verts_a, radius_a, motion_a, verts_b, radius_b, motion_b, times):
    """Signed gap (T,) (m) between two rounded convex shapes (body-frame vertices counter-clockwise, rounding
    radii) at each of ``times``: the smallest vertex-to-edge distance either way, negative when the shapes
    overlap (a vertex inside the other shape, or two edges crossing), minus the radii."""
    pa = naive_place(verts_a, motion_a, times)
    pb = naive_place(verts_b, motion_b, times)
    a_to_b = _toi_point_edge_distances(pa, *_toi_edges(pb)).min(axis=(1, 2))
    b_to_a = _toi_point_edge_distances(pb, *_toi_edges(pa)).min(axis=(1, 2))
    distance = np.minimum(a_to_b, b_to_a)
    overlap = _toi_inside(pa, pb).any(axis=1) | _toi_inside(pb, pa).any(axis=1) | _toi_edges_cross(pa, pb)
    return np.where(overlap, -distance, distance) - radius_a - radius_b


def naive_vertex_gaps(verts_a, radius_a, motion_a, verts_b, radius_b, motion_b, times):
    """Signed gap (T, k_A + k_B) (m) of every vertex of each rounded convex shape from the other's outline,
    A's vertices first: the distance to the nearest edge, negative inside the other shape, minus the
    radii (the features of a time-of-impact search)."""
    pa = naive_place(verts_a, motion_a, times)
    pb = naive_place(verts_b, motion_b, times)
    columns = []
    for p, q in ((pa, pb), (pb, pa)):
        distance = _toi_point_edge_distances(p, *_toi_edges(q)).min(axis=2)
        columns.append(np.where(_toi_inside(p, q), -distance, distance))
    return np.concatenate(columns, axis=1) - radius_a - radius_b


def naive_wall_vertex_gaps(verts, radius, motion, point, normal, times):
    """Height (T, k) (m) of every vertex of a rounded shape above a wall along its unit normal, minus the radius."""
    p = naive_place(verts, motion, times)
    return (p[..., 0] - point[0]) * normal[0] + (p[..., 1] - point[1]) * normal[1] - radius


def naive_next_contact(feature_gaps, horizon, slack, samples):
    """The next *new* contact of a pair whose features' gaps (T, F) ``feature_gaps(times)`` gives: a
    feature within ``slack`` at 0 counts only once a sample has seen it beyond ``slack``. Returns the
    first time (s) a counting feature is within ``slack``, and the first it reaches 0 (None if never),
    each bisected to round-off between samples."""
    times = np.linspace(0.0, horizon, samples)
    gaps = feature_gaps(times)
    counts = np.ones_like(gaps, dtype=bool)
    held = gaps[0] <= slack
    if held.any():
        opened = np.maximum.accumulate(gaps[:, held] > slack, axis=0)
        counts[:, held] = opened
    answers = []
    for level in (slack, 0.0):
        first = None
        for f in range(gaps.shape[1]):
            hits = np.flatnonzero(counts[:, f] & (gaps[:, f] <= level))
            if len(hits) == 0 or (first is not None and times[hits[0]] >= first):
                continue
            k = hits[0]
            lo, hi = times[max(k - 1, 0)], times[k]
            if counts[max(k - 1, 0), f]:
                for _ in range(200):
                    mid = 0.5 * (lo + hi)
                    if mid <= lo or mid >= hi:
                        break
                    lo, hi = (lo, mid) if feature_gaps(np.array([mid]))[0, f] <= level else (mid, hi)
            first = hi
        answers.append(first)
    return answers


def naive_wall_gap(verts, radius, motion, point, normal, times):
    """Signed gap (T,) (m) of a rounded shape from a wall: its lowest vertex along the wall's unit normal."""
    p = naive_place(verts, motion, times)
    heights = (p[..., 0] - point[0]) * normal[0] + (p[..., 1] - point[1]) * normal[1]
    return heights.min(axis=1) - radius


def naive_first_touch(gap, horizon, level, samples):
    """First time in [0, horizon] at which ``gap(times)`` (vectorised) is at most ``level``, by sampling
    ``samples`` evenly spaced times and bisecting the first sampled crossing; None if no sample reaches it.
    Also returns the sampled times and gaps."""
    times = np.linspace(0.0, horizon, samples)
    gaps = gap(times)
    hits = np.flatnonzero(gaps <= level)
    if len(hits) == 0:
        return None, times, gaps
    k = hits[0]
    if k == 0:
        return 0.0, times, gaps
    lo, hi = times[k - 1], times[k]
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if gap(np.array([mid]))[0] <= level:
            hi = mid
        else:
            lo = mid
    return hi, times, gaps


def _rigid_jacobian(point, normal, body_i, body_j, position, n_bodies):
    """Dense (K, 3n) normal rows of planar rigid contacts: approach speed ``u = J q``, q = (vx, vy, w) per body."""
    jac = np.zeros((len(body_i), 3 * n_bodies))
    for c, (i, j) in enumerate(zip(body_i, body_j, strict=True)):
        for body, sign in ((i, 1.0), (j, -1.0)):
            if body < 0:
                continue
            r = np.asarray(point[c]) - position[body]
            n = np.asarray(normal[c])
            jac[c, 3 * body : 3 * body + 3] += sign * np.array([n[0], n[1], r[0] * n[1] - r[1] * n[0]])
    return jac


def naive_rigid_rounds(position, velocity, angular_velocity, inv_mass, inv_inertia, body_i, body_j, point, normal,
                       restitution, rounds=20):  # fmt: skip
    """Frictionless planar rigid impacts in rounds, each round's Newton LCP solved by trying every subset of
    its contacts with dense least squares: the contacts approaching (u > 1e-12 of the largest |u|) get
    ``P >= 0``, separation ``>= e u``, equality where ``P > 0``. After ``rounds`` rounds (a sequence that
    would not end, such as two contacts that pass the impulse back and forth), every contact is solved
    together perfectly inelastic, for at most as many rounds again (the law's rule for
    ``Config.max_rounds``). Returns (velocity, angular velocity)."""
    n = len(inv_mass)
    position = np.asarray(position, dtype=np.float64)
    jac = _rigid_jacobian(point, normal, body_i, body_j, position, n)
    import itertools

    m_inv = np.diag(np.column_stack([inv_mass, inv_mass, inv_inertia]).reshape(-1))
    q = np.stack([velocity[:, 0], velocity[:, 1], angular_velocity], axis=1).reshape(-1).astype(np.float64)
    e = np.asarray(restitution, dtype=np.float64)
    floor = 1e-12 * max(np.abs(jac @ q).max(), 1e-300)
    for rnd in range(2 * rounds):
        u = jac @ q
        sel = np.flatnonzero(u > floor)
        if len(sel) == 0:
            break
        if rnd >= rounds:
            sel = np.arange(len(u))
        w = jac[sel] @ m_inv @ jac[sel].T
        rhs = (1.0 + (e[sel] if rnd < rounds else 0.0)) * u[sel]
        for size in range(1, len(sel) + 1):
            done = False
            for subset in itertools.combinations(range(len(sel)), size):
                a = list(subset)
                p = np.zeros(len(sel))
                p[a] = np.linalg.lstsq(w[np.ix_(a, a)], rhs[a], rcond=1e-13)[0]
                slack = w @ p - rhs
                tol = 1e-9 * (np.abs(rhs).max() + np.abs(w).max() * np.abs(p).max())
                if p.min() >= -tol and slack.min() >= -tol and np.abs(slack[a]).max() <= tol:
                    q = q - m_inv @ jac[sel].T @ p
                    done = True
                    break
            if done:
                break
    q = q.reshape(n, 3)
    return q[:, :2].copy(), q[:, 2].copy()


def naive_newton_coulomb(inv_mass, inv_inertia, r, normal, velocity, angular_velocity, e, mu):
    """The naive rigid impact law at one contact of a body with a fixed floor: Newton's restitution on the
    normal speed, ``u' = -e u``, with Coulomb friction ``mu P`` against the slip *before* the impact, held
    throughout (no sticking, no reversal). Returns (velocity, angular velocity); it can create energy
    (Kane & Levinson)."""
    n = np.asarray(normal, dtype=np.float64)
    t = np.array([-n[1], n[0]])
    r = np.asarray(r, dtype=np.float64)

    def cross(a, b):
        return a[0] * b[1] - a[1] * b[0]

    g = np.asarray(velocity, dtype=np.float64) + angular_velocity * np.array([-r[1], r[0]])
    u, s = g @ n, g @ t
    w_nn = inv_mass + cross(r, n) ** 2 * inv_inertia
    w_nt = cross(r, n) * cross(r, t) * inv_inertia
    sign = np.sign(s)
    p = (1.0 + e) * u / (w_nn + sign * mu * w_nt)
    impulse = p * n + sign * mu * p * t  # on the floor; its opposite on the body
    return velocity - inv_mass * impulse, angular_velocity - inv_inertia * cross(r, impulse)
