"""The compiled loops of the rigid step (`carom.step.rigid`): over its candidate entries (pairs of bodies,
and bodies with walls) and over contact points.

`carom.step.rigid` decides; these kernels do the per-entry and per-contact work it asks for, over plain
arrays (no Python object enters them):

* `entry_manifold`: one entry's contact points now, dispatched on the pair's shapes (polygon, disk, wall);
* `gather_touching`: the contact points within the band of a touching cluster, grown from seed bodies
  through the entries' adjacency (a body's entries in ascending order, the cluster as a stack);
  `entries_of`: the entries of a set of bodies;
* `next_contact_times`: each listed entry's next new contact, by the time of impact with rotation;
* `project_overlaps`: nonlinear Gauss-Seidel on positions and angles, pushing apart what overlaps deeper
  than the band (its first pass skipping the entries whose gaps, measured at the step's start, cannot have
  fallen that far since);
* `body_frame_points` and `warm_start`: held forces kept by pair and by point in body i's frame, matched to
  new contact points;
* `rounds_by_sweeps`: the rounds of the rigid impact law over a cluster too large to enumerate.

An entry q joins body ``entry_i[q]`` with body ``entry_j[q]``, or with wall ``-1 - entry_j[q]`` when that is
negative. Every tolerance is passed in by the caller (`carom.step.rigid.Tolerances`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..config import ROUNDOFF
from ..contact.rigid import ENERGY_ROUNDOFF, approach_floor, contact_rates, hold_impulses, round_selection
from ..jit import inlined, kernel
from ..materials import combine
from ..narrowphase.polygons import polygon_disk_manifold, polygon_wall_manifold, polygons_manifold
from ..narrowphase.rotation import pair_contact_time, wall_contact_time
from ..state import SHAPE_POLYGON

INF = math.inf
#: Advancement steps of one time-of-impact search before it hands back how far it got.
TOI_ITERATIONS = 200


class Outlines(NamedTuple):
    """The bodies' and walls' geometry, as the kernels read it."""

    shape: np.ndarray  # (n,) int8: `carom.state` shape codes
    size: np.ndarray  # (n,) m: circumradius of a polygon, radius of a disk
    start: np.ndarray  # (n + 1,) int64: body b's vertices are rows start[b]:start[b + 1] (none for a disk)
    vertices: np.ndarray  # (V, 2) m, body frame, counter-clockwise
    normals: np.ndarray  # (V, 2) outward unit edge normals, body frame
    inv_mass: np.ndarray  # (n,) 1/kg, 0 fixed
    inv_inertia: np.ndarray  # (n,) 1/(kg m^2), 0 fixed
    wall_point: np.ndarray  # (k, 2) m
    wall_normal: np.ndarray  # (k, 2) unit, into the world
    disk_outline: np.ndarray  # (1, 2) zeros: a disk's outline for the time of impact (a point, rounded)


class Entries(NamedTuple):
    """Candidate entries and their adjacency: body b's entries are ``entry[adjacent_start[b]:adjacent_start[b +
    1]]``, ascending."""

    entry_i: np.ndarray  # (E,) int64
    entry_j: np.ndarray  # (E,) int64: body, or -1 - wall
    adjacent_start: np.ndarray  # (n + 1,) int64
    adjacent: np.ndarray  # (2 E,) int64 at most: entry indices


class Since(NamedTuple):
    """Every body's pose when each candidate entry's deepest gap was measured (`gather_touching`), and those
    gaps: what lets `project_overlaps` pass over entries that cannot overlap."""

    x: np.ndarray  # (n, 2) m
    angle: np.ndarray  # (n,) rad
    gap: np.ndarray  # (E,) m: -inf where not measured


class Contacts(NamedTuple):
    """Contact points of one instant: the candidate entry they belong to, body i, body j (-1 - k for wall k),
    point, unit normal from i towards j (for a wall: into it), gap (m). `gather_touching` writes them."""

    entry: np.ndarray  # (R,) int64
    ci: np.ndarray  # (R,) int64
    cj: np.ndarray  # (R,) int64: body, or -1 - wall
    point: np.ndarray  # (R, 2) m
    normal: np.ndarray  # (R, 2) unit, from i towards j (into a wall)
    gap: np.ndarray  # (R,) m

    def part(self, sel: np.ndarray) -> Contacts:
        """The rows ``sel``."""
        return Contacts(*(column[sel] for column in self))


@kernel
def pair_band(fraction, size, wall_point, x, i, j):
    """Gap (m) within ``fraction`` of the pair's smaller size, plus the round-off of its coordinates."""
    if j >= 0:
        smaller = min(size[i], size[j])
        coords = max(max(abs(x[i, 0]), abs(x[i, 1])), max(abs(x[j, 0]), abs(x[j, 1])))
    else:
        smaller = size[i]
        k = -1 - j
        coords = max(max(abs(x[i, 0]), abs(x[i, 1])), max(abs(wall_point[k, 0]), abs(wall_point[k, 1])))
    return fraction * smaller + ROUNDOFF * coords


@kernel
def entry_manifold(g, i, j, x, angle, within, points, gaps, normal):
    """Contact points of body i with body j (j < 0: wall -1 - j) now: writes ``points`` (2, 2) (m), ``gaps``
    (2,) (m) and the unit ``normal`` (2,) from i towards j (into a wall); returns how many points (deepest
    first). A second point is kept within ``within`` (m) of the first's gap."""
    poly_i = g.shape[i] == SHAPE_POLYGON
    if j < 0:
        k = -1 - j
        if poly_i:
            count = polygon_wall_manifold(i, k, x, angle, g.start, g.vertices, g.wall_point, g.wall_normal, within,
                                          points, gaps, normal)  # fmt: skip
        else:
            nx, ny = g.wall_normal[k, 0], g.wall_normal[k, 1]
            gap = (x[i, 0] - g.wall_point[k, 0]) * nx + (x[i, 1] - g.wall_point[k, 1]) * ny - g.size[i]
            reach = g.size[i] + 0.5 * gap
            points[0, 0] = x[i, 0] - reach * nx
            points[0, 1] = x[i, 1] - reach * ny
            gaps[0] = gap
            count = 1
        normal[0] = -g.wall_normal[k, 0]
        normal[1] = -g.wall_normal[k, 1]
        return count
    poly_j = g.shape[j] == SHAPE_POLYGON
    if poly_i and poly_j:
        return polygons_manifold(i, j, x, angle, g.start, g.vertices, g.normals, INF, within, points, gaps, normal)
    if poly_i:
        return polygon_disk_manifold(i, j, x, angle, g.size, g.start, g.vertices, g.normals, points, gaps, normal)
    if poly_j:
        polygon_disk_manifold(j, i, x, angle, g.size, g.start, g.vertices, g.normals, points, gaps, normal)
        normal[0] = -normal[0]
        normal[1] = -normal[1]
        return 1
    dx = x[j, 0] - x[i, 0]
    dy = x[j, 1] - x[i, 1]
    dist = math.hypot(dx, dy)
    if dist > 0.0:
        normal[0], normal[1] = dx / dist, dy / dist
    else:
        normal[0], normal[1] = 1.0, 0.0
    gap = dist - g.size[i] - g.size[j]
    reach = g.size[i] + 0.5 * gap
    points[0, 0] = x[i, 0] + reach * normal[0]
    points[0, 1] = x[i, 1] + reach * normal[1]
    gaps[0] = gap
    return 1


@kernel
def gather_touching(g, lists, seeds, x, angle, band_fraction, out, entry_gap):
    """The contact points within the band of the touching cluster of ``seeds`` (body ids): the movable seeds,
    and every movable body joined to them through entries with a point within the band (``band_fraction`` of
    the pair's smaller size); fixed bodies and walls end the cluster. Rows go into ``out`` (`Contacts`, two
    per entry of room), in the order met; returns how many. Each entry met has its deepest gap (m) written
    into ``entry_gap`` (by entry; pass an empty array not to keep them)."""
    n = g.size.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    done = np.zeros(lists.entry_i.shape[0], dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    for b in seeds:
        if g.inv_mass[b] != 0.0:
            stack[top] = b
            top += 1
            seen[b] = True
    points = np.empty((2, 2))
    gaps = np.empty(2)
    normal = np.empty(2)
    rows = 0
    while top > 0:
        top -= 1
        b = stack[top]
        for a in range(lists.adjacent_start[b], lists.adjacent_start[b + 1]):
            q = lists.adjacent[a]
            if done[q]:
                continue
            done[q] = True
            i, j = lists.entry_i[q], lists.entry_j[q]
            band = pair_band(band_fraction, g.size, g.wall_point, x, i, j)
            count = entry_manifold(g, i, j, x, angle, band, points, gaps, normal)
            if entry_gap.shape[0]:
                entry_gap[q] = gaps[0] if count else -INF
            near = False
            for m in range(count):
                if gaps[m] <= band:
                    near = True
                    out.entry[rows], out.ci[rows], out.cj[rows] = q, i, j
                    out.point[rows, 0], out.point[rows, 1] = points[m, 0], points[m, 1]
                    out.normal[rows, 0], out.normal[rows, 1] = normal[0], normal[1]
                    out.gap[rows] = gaps[m]
                    rows += 1
            if not near:
                continue
            other = j if i == b else i
            if other >= 0 and not seen[other] and g.inv_mass[other] != 0.0:
                seen[other] = True
                stack[top] = other
                top += 1
    return rows


@kernel
def entries_of(lists, bodies):
    """(m,) int64: the entries of ``bodies`` (body ids; walls' negative ids are skipped), ascending, each once."""
    mark = np.zeros(lists.entry_i.shape[0], dtype=np.bool_)
    count = 0
    for b in bodies:
        if b < 0:
            continue
        for a in range(lists.adjacent_start[b], lists.adjacent_start[b + 1]):
            q = lists.adjacent[a]
            if not mark[q]:
                mark[q] = True
                count += 1
    out = np.empty(count, dtype=np.int64)
    k = 0
    for q in range(mark.shape[0]):
        if mark[q]:
            out[k] = q
            k += 1
    return out


@inlined
def _motion_at(m, b, later, out):
    """Body b's motion ``later`` s after now into ``out`` (8,): position, velocity, acceleration, angle, spin
    (`carom.narrowphase.rotation`)."""
    out[0] = m.x[b, 0] + m.v[b, 0] * later + 0.5 * m.a[b, 0] * later * later
    out[1] = m.x[b, 1] + m.v[b, 1] * later + 0.5 * m.a[b, 1] * later * later
    out[2] = m.v[b, 0] + m.a[b, 0] * later
    out[3] = m.v[b, 1] + m.a[b, 1] * later
    out[4], out[5] = m.a[b, 0], m.a[b, 1]
    out[6] = m.angle[b] + m.w_drift[b] * later
    out[7] = m.w_drift[b]


@kernel
def next_contact_times(g, lists, m, which, t, h, quiet, touch, approach, time, real):
    """For each entry q in ``which``: the time (s from the step start; the present is t, the step ends at h)
    of its next new contact, searched from ``quiet[q]`` on, into ``time[q]``, and whether it is a contact
    (``real[q]``; False: the search stopped there short of an answer, or at inf: none within the step).
    ``m`` is every body's motion now (`carom.step.rigid.Motion`: the parabola of ``x``, ``v``, ``a``, and the
    constant turning of ``angle`` at ``w_drift``); ``touch`` the touching fraction of the pair's smaller
    size; ``approach`` (m/s) the speed above which a touching contact approaches."""
    motion_i = np.empty(8)
    motion_j = np.empty(8)
    for q in which:
        if quiet[q] >= h:
            time[q], real[q] = INF, False
            continue
        later = max(quiet[q] - t, 0.0)
        horizon = h - t - later
        i, j = lists.entry_i[q], lists.entry_j[q]
        verts_i = g.vertices[g.start[i] : g.start[i + 1]] if g.shape[i] == SHAPE_POLYGON else g.disk_outline[0:1]
        round_i = 0.0 if g.shape[i] == SHAPE_POLYGON else g.size[i]
        slack = pair_band(touch, g.size, g.wall_point, m.x, i, j)
        _motion_at(m, i, later, motion_i)
        if j < 0:
            k = -1 - j
            found, cleared, _ = wall_contact_time(verts_i, round_i, motion_i, g.wall_point[k], g.wall_normal[k],
                                                  horizon, slack, approach, TOI_ITERATIONS)  # fmt: skip
        else:
            verts_j = g.vertices[g.start[j] : g.start[j + 1]] if g.shape[j] == SHAPE_POLYGON else g.disk_outline[0:1]
            round_j = 0.0 if g.shape[j] == SHAPE_POLYGON else g.size[j]
            _motion_at(m, j, later, motion_j)
            found, cleared, _ = pair_contact_time(verts_i, round_i, motion_i, verts_j, round_j, motion_j, horizon,
                                                  slack, approach, TOI_ITERATIONS)  # fmt: skip
        if found < INF:
            time[q], real[q] = t + later + found, True
        elif cleared < horizon:
            time[q], real[q] = t + later + cleared, False
        else:
            time[q], real[q] = INF, False


@kernel
def project_overlaps(g, lists, x, angle, band_fraction, iterations, since):
    """Push apart what overlaps deeper than the band, positions ``x`` and ``angle`` only (written in place):
    passes of nonlinear Gauss-Seidel over the entries, each entry's deepest point moved to half the band
    along its normal, the move shared by the inverse masses and inertias (the positions a unit impulse would
    move). Returns the deepest overlap (m, >= 0) met in the last pass.

    ``since`` (`Since`) is where every body was when each entry's deepest gap was last measured: the first
    pass skips an entry whose gap cannot have fallen below the band since (`_may_overlap`); with no gaps
    (an empty ``since.gap``) it checks every entry."""
    points = np.empty((2, 2))
    gaps = np.empty(2)
    normal = np.empty(2)
    deepest = 0.0
    for sweep in range(iterations):
        deepest = 0.0
        for q in range(lists.entry_i.shape[0]):
            i, j = lists.entry_i[q], lists.entry_j[q]
            band = pair_band(band_fraction, g.size, g.wall_point, x, i, j)
            if sweep == 0 and since.gap.shape[0] and not _may_overlap(g, since, x, angle, q, i, j, band):
                continue
            count = entry_manifold(g, i, j, x, angle, band, points, gaps, normal)
            if count == 0 or gaps[0] >= -band:
                continue
            deepest = max(deepest, -gaps[0])
            _push(g, x, angle, i, j, points[0, 0], points[0, 1], normal[0], normal[1], -(gaps[0] + 0.5 * band))
        if deepest == 0.0:
            break
    return deepest


@inlined
def _may_overlap(g, since, x, angle, q, i, j, band):
    """Whether entry q (bodies i and j, j < 0 a wall) may now overlap deeper than ``band`` (m), from its deepest
    gap then (``since.gap[q]``) and how far its bodies have moved and turned since. That gap is the signed
    distance of the two outlines, which changes by no more than their points move, ``|dx| + |d angle| size``
    for each body (a chord is no longer than its arc); half the band is kept for the gaps' round-off."""
    moved = _moved(g, since, x, angle, i)
    if j >= 0:
        moved += _moved(g, since, x, angle, j)
    return not since.gap[q] - moved > -0.5 * band


@inlined
def _moved(g, since, x, angle, b):
    """How far (m) any point of body b's outline can be from where it was at ``since``."""
    return math.hypot(x[b, 0] - since.x[b, 0], x[b, 1] - since.x[b, 1]) + abs(angle[b] - since.angle[b]) * g.size[b]


@inlined
def _push(g, x, angle, i, j, px, py, nx, ny, depth):
    """Move bodies i and j (j < 0: a wall) apart by ``depth`` (m) at (px, py) along (nx, ny) (from i towards
    j), the move shared by inverse mass and inertia."""
    arm_i = (px - x[i, 0]) * ny - (py - x[i, 1]) * nx
    weight = g.inv_mass[i] + arm_i * arm_i * g.inv_inertia[i]
    arm_j = 0.0
    if j >= 0:
        arm_j = (px - x[j, 0]) * ny - (py - x[j, 1]) * nx
        weight += g.inv_mass[j] + arm_j * arm_j * g.inv_inertia[j]
    if weight <= 0.0:
        return
    impulse = depth / weight
    x[i, 0] -= impulse * g.inv_mass[i] * nx
    x[i, 1] -= impulse * g.inv_mass[i] * ny
    angle[i] -= impulse * g.inv_inertia[i] * arm_i
    if j >= 0:
        x[j, 0] += impulse * g.inv_mass[j] * nx
        x[j, 1] += impulse * g.inv_mass[j] * ny
        angle[j] += impulse * g.inv_inertia[j] * arm_j


@kernel
def body_frame_points(bodies, points, x, angle, out):
    """``points`` (k, 2) (m, world) in the frames of ``bodies`` (k,), into ``out`` (k, 2)."""
    for c in range(bodies.shape[0]):
        b = bodies[c]
        cos, sin = math.cos(angle[b]), math.sin(angle[b])
        dx, dy = points[c, 0] - x[b, 0], points[c, 1] - x[b, 1]
        out[c, 0] = cos * dx + sin * dy
        out[c, 1] = -sin * dx + cos * dy


@kernel
def warm_start(keys, local, kept_keys, kept_local, kept_force, scale, out):
    """For each contact (pair ``keys[c]``, point ``local[c]`` in body i's frame), the kept force of its pair
    nearest to that point (``kept_*`` sorted by key) times ``scale`` (s), into ``out`` (k, 2); 0 where the pair
    kept none. Returns how many contacts found a kept force."""
    found = 0
    for c in range(keys.shape[0]):
        lo = np.searchsorted(kept_keys, keys[c])
        best, near = INF, -1
        r = lo
        while r < kept_keys.shape[0] and kept_keys[r] == keys[c]:
            dist = math.hypot(kept_local[r, 0] - local[c, 0], kept_local[r, 1] - local[c, 1])
            if dist < best:
                best, near = dist, r
            r += 1
        if near < 0:
            out[c, 0], out[c, 1] = 0.0, 0.0
        else:
            out[c, 0], out[c, 1] = kept_force[near, 0] * scale, kept_force[near, 1] * scale
            found += 1
    return found


@kernel
def merge_held(kept_key, kept_local, kept_force, key, local, force):
    """The held forces after a hold (`carom.step.rigid.HeldForces` as three arrays): the kept rows (sorted by
    key) of every pair this hold did not hold, and the hold's rows ``key`` (k,), ``local`` (k, 2), ``force``
    (k, 2), all sorted by key, a pair's new rows in their given order: a stable sort of the kept rows followed
    by the new ones, in one merge."""
    order = np.argsort(key, kind="mergesort")
    new_keys = key[order]
    q, k = kept_key.shape[0], key.shape[0]
    keep = np.empty(q, dtype=np.bool_)
    count = k
    for r in range(q):
        at = np.searchsorted(new_keys, kept_key[r])
        keep[r] = at == k or new_keys[at] != kept_key[r]
        count += keep[r]
    out_key = np.empty(count, dtype=np.int64)
    out_local = np.empty((count, 2))
    out_force = np.empty((count, 2))
    r, b = 0, 0
    for row in range(count):
        while r < q and not keep[r]:
            r += 1
        if b < k and (r == q or new_keys[b] < kept_key[r]):
            c = order[b]
            out_key[row] = key[c]
            out_local[row, 0], out_local[row, 1] = local[c, 0], local[c, 1]
            out_force[row, 0], out_force[row, 1] = force[c, 0], force[c, 1]
            b += 1
        else:
            out_key[row] = kept_key[r]
            out_local[row, 0], out_local[row, 1] = kept_local[r, 0], kept_local[r, 1]
            out_force[row, 0], out_force[row, 1] = kept_force[r, 0], kept_force[r, 1]
            r += 1
    return out_key, out_local, out_force


@kernel
def entry_coefficients(entry_i, entry_j, bodies, walls, restitution_rule, friction_rule, out):
    """Each entry's (e, mu_s, mu_k) by the mixing rules (`carom.materials.combine`) into ``out`` (E, 3), from
    the bodies' and walls' own coefficients ``bodies`` (n, 3) and ``walls`` (k, 3) (pair overrides are the
    caller's)."""
    for q in range(entry_i.shape[0]):
        i, j = entry_i[q], entry_j[q]
        other = bodies[j] if j >= 0 else walls[-1 - j]
        out[q, 0] = combine(bodies[i, 0], other[0], restitution_rule)
        out[q, 1] = combine(bodies[i, 1], other[1], friction_rule)
        out[q, 2] = combine(bodies[i, 2], other[2], friction_rule)


@kernel
def kinetic_energy(bodies, count, inv_mass, inv_inertia, v, w):
    """Kinetic energy (J) of the movable ``bodies[:count]``: translation and spin."""
    energy = 0.0
    for q in range(count):
        b = bodies[q]
        energy += (v[b, 0] ** 2 + v[b, 1] ** 2) / inv_mass[b]
        if inv_inertia[b] > 0.0:
            energy += w[b] ** 2 / inv_inertia[b]
    return 0.5 * energy


@kernel
def rounds_by_sweeps(c, g, x, v, w, e, mu, slow, impulse, max_rounds, hold_sweeps):
    """The rounds of the rigid impact law for the cluster of contacts ``c`` (`Contacts`) too large to
    enumerate: each round's approaching contacts solved together by `carom.contact.rigid.hold_impulses` with
    Newton's targets (``u' <= -e u``, friction ``mu`` in the cone; e = 0 where the approach is no faster than
    ``slow``, m/s) to round-off; a round that would raise the kinetic energy of its bodies is solved again
    perfectly inelastic (which never does: the cap of the exact law at its two ends). After ``max_rounds``
    rounds every contact is solved perfectly inelastic. The velocities ``v`` and spins ``w`` are updated,
    the impulses added to ``impulse`` (k, 2). Returns the rounds, or -1 if contacts still approach
    (crushed)."""
    k, n = c.ci.shape[0], v.shape[0]
    rates = np.empty((k, 2))
    contact_rates(c.ci, c.cj, c.point, c.normal, x, v, w, rates)
    floor = approach_floor(rates)
    member = np.zeros(n, dtype=np.bool_)
    bodies = np.empty(2 * k, dtype=np.int64)
    sel = np.empty(k, dtype=np.int64)
    kept_v = np.empty((2 * k, 2))
    kept_w = np.empty(2 * k)
    # a round's contacts, gathered into the first m rows (allocated once, not every round)
    ci, cj = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64)
    point, normal = np.empty((k, 2)), np.empty((k, 2))
    friction, bias, lam = np.empty(k), np.empty((k, 2)), np.empty((k, 2))
    for rnd in range(2 * max_rounds):
        if rnd:
            contact_rates(c.ci, c.cj, c.point, c.normal, x, v, w, rates)
        inelastic = rnd >= max_rounds
        m = round_selection(rates, floor, inelastic, sel)
        if m == 0:
            return rnd
        for s in range(m):
            q = sel[s]
            ci[s], cj[s], friction[s] = c.ci[q], c.cj[q], mu[q]
            point[s, 0], point[s, 1], normal[s, 0], normal[s, 1] = c.point[q, 0], c.point[q, 1], c.normal[q, 0], \
                c.normal[q, 1]
            bias[s, 0], bias[s, 1] = 0.0, 0.0
        count = 0
        for s in range(m):
            for b in (ci[s], cj[s]):
                if b >= 0 and g.inv_mass[b] != 0.0 and not member[b]:
                    member[b] = True
                    bodies[count] = b
                    kept_v[count, 0], kept_v[count, 1], kept_w[count] = v[b, 0], v[b, 1], w[b]
                    count += 1
        for q in range(count):
            member[bodies[q]] = False
        before = kinetic_energy(bodies, count, g.inv_mass, g.inv_inertia, v, w)
        biased = False
        if not inelastic:
            for s in range(m):
                q = sel[s]
                if rates[q, 0] > slow[q]:
                    bias[s, 0] = e[q] * rates[q, 0]
                    biased = biased or bias[s, 0] != 0.0
        for attempt in range(2):
            lam[:m] = 0.0
            hold_impulses(ci[:m], cj[:m], point[:m], normal[:m], friction[:m], bias[:m], x, v, w, g.inv_mass,
                          g.inv_inertia, lam[:m], hold_sweeps, floor)  # fmt: skip
            # (the sweeps stop when no rate changes by more than ``floor``: the work that leaves undone is at
            # most that rate times the impulses, the round-off of this solve's energy)
            allowed = before * ENERGY_ROUNDOFF + 2.0 * floor * np.abs(lam[:m]).sum()
            if attempt or not biased or kinetic_energy(bodies, count, g.inv_mass, g.inv_inertia, v, w) <= (
                    before + allowed):  # fmt: skip
                break
            for q in range(count):
                b = bodies[q]
                v[b, 0], v[b, 1], w[b] = kept_v[q, 0], kept_v[q, 1], kept_w[q]
            bias[:m] = 0.0
        for s in range(m):
            impulse[sel[s], 0] += lam[s, 0]
            impulse[sel[s], 1] += lam[s, 1]
    contact_rates(c.ci, c.cj, c.point, c.normal, x, v, w, rates)
    for q in range(k):
        if rates[q, 0] > floor:
            return -1
    return 2 * max_rounds


@kernel
def load_guess(ci, cj, point, normal, x, inv_mass, weight, mu, tangent_weight, out):
    """Impulses (K, 2) (N s: normal, tangential along ``(-n_y, n_x)``; j gets ``p n + t t``, i the opposite)
    that carry each body's ``weight`` (n, 2) (N s: its smooth force over the time held) down to its supports:
    bodies are taken from the top (along the weights' sum), and each passes its weight, and what rests on it,
    to the contacts it has with lower bodies, fixed bodies and walls, as the least-norm impulses there that
    balance its force and torque (tangential impulses ``tangent_weight`` times heavier, so friction stays
    small), kept pushing and within the cones ``mu`` (K,). O(K) and one small solve a body: a cold held solve's
    starting point, the statics of a stack where its supports balance each body alone."""
    k, n = len(ci), len(x)
    out[:] = 0.0
    down_x, down_y = 0.0, 0.0
    for b in range(n):
        down_x += weight[b, 0]
        down_y += weight[b, 1]
    size = math.hypot(down_x, down_y)
    if size == 0.0:
        return
    height = np.empty(n)
    for b in range(n):
        height[b] = -(x[b, 0] * down_x + x[b, 1] * down_y) / size
    start = np.zeros(n + 1, dtype=np.int64)  # body b's contacts: around[start[b]:start[b + 1]]
    for c in range(k):
        start[ci[c] + 1] += 1
        if cj[c] >= 0:
            start[cj[c] + 1] += 1
    for b in range(n):
        start[b + 1] += start[b]
    filled = start[:-1].copy()
    around = np.empty(start[n], dtype=np.int64)
    for c in range(k):
        around[filled[ci[c]]] = c
        filled[ci[c]] += 1
        if cj[c] >= 0:
            around[filled[cj[c]]] = c
            filled[cj[c]] += 1
    load = weight.copy()  # (n, 2) N s on each body: its own, and what rests on it
    torque = np.zeros(n)  # N m s about its centre
    rows = np.empty((3, 2 * max(1, k)))
    support = np.empty(max(1, k), dtype=np.int64)
    for b in np.argsort(-height):
        if inv_mass[b] == 0.0:
            continue
        count = 0
        for e in range(start[b], start[b + 1]):
            c = around[e]
            o = cj[c] if ci[c] == b else ci[c]
            if o < 0 or inv_mass[o] == 0.0 or height[o] < height[b] - ROUNDOFF * (1.0 + abs(height[b])):
                support[count] = c
                count += 1
        if count == 0:
            continue
        for q in range(count):  # the impulse on b of each support's unit normal and (scaled) tangential impulse
            c = support[q]
            sign = 1.0 if cj[c] == b else -1.0
            nx, ny = normal[c, 0], normal[c, 1]
            rx, ry = point[c, 0] - x[b, 0], point[c, 1] - x[b, 1]
            for col, dx, dy, scale in ((2 * q, nx, ny, 1.0), (2 * q + 1, -ny, nx, 1.0 / tangent_weight)):
                rows[0, col] = sign * dx * scale
                rows[1, col] = sign * dy * scale
                rows[2, col] = sign * (rx * dy - ry * dx) * scale
        target = np.array([-load[b, 0], -load[b, 1], -torque[b]])
        solved = np.linalg.lstsq(np.ascontiguousarray(rows[:, : 2 * count]), target, 1e-12)[0]  # (least norm)
        for q in range(count):
            c = support[q]
            p = max(solved[2 * q], 0.0)
            t = min(max(solved[2 * q + 1] / tangent_weight, -mu[c] * p), mu[c] * p)
            out[c, 0], out[c, 1] = p, t
            o = cj[c] if ci[c] == b else ci[c]
            if o < 0 or inv_mass[o] == 0.0:
                continue
            sign = 1.0 if cj[c] == o else -1.0
            nx, ny = normal[c, 0], normal[c, 1]
            fx, fy = sign * (p * nx - t * ny), sign * (p * ny + t * nx)
            load[o, 0] += fx
            load[o, 1] += fy
            torque[o] += (point[c, 0] - x[o, 0]) * fy - (point[c, 1] - x[o, 1]) * fx
