"""The step of a 2D world that holds rigid polygons: exact impacts of turning bodies, resting contact by
impulses.

A world with a polygon is stepped here instead of by `carom.step.drift` (disk-only worlds keep that
engine, unchanged). Bodies are polygons and disks; walls and fixed bodies are as everywhere. One step of
length h, from the forces ``a_smooth`` evaluated before anything moved:

1. **Resting contact at the start.** Every contact point within ``resting_gap`` of touching (the band, a
   fraction of the pair's smaller size: a polygon's circumradius, a disk's radius) is gathered. If one
   approaches, the instant is an impact (below). Then the contacts are *held*: one perfectly inelastic
   solve of the rigid impact law (`carom.contact.rigid`) on the velocities the smooth forces would give
   at the end of the step, ``v + a_smooth h``, gives each body its end-of-step velocity and spin. Every
   target is 0 (no held contact may approach at the end of the step), so the targets agree with each other
   whatever the pile: the problem always has a solution, and bodies at rest stay at rest exactly. Each
   held body then moves with the constant acceleration ``(v_end - v) / h`` (a parabola: exact for a box
   sliding down an incline) and turns at the mean of its spins, ``(w + w_end) / 2`` (its end angle is
   that of a constant angular acceleration); its spin becomes ``w_end`` at the end of the step.
2. **Events.** Every pair of bodies that may meet within the step (bounding circles swept by their
   motion), and every body with every wall, has its next new contact found by conservative advancement
   with rotation (`carom.narrowphase.rotation`), which never misses one, whatever the step. The earliest is
   processed: every body is moved to that instant; the touching cluster (the bodies joined to the pair
   through contacts within the band, fixed bodies and walls ending it) is gathered; its approaching
   contacts are solved together in rounds by the rigid impact law, with the pair's restitution (made 0
   where the approach is slower than the resting speed: the end of a Zeno sequence of bounces; clusters of
   more than `EXACT_CONTACTS` points by projected block Gauss-Seidel to round-off instead of the exact
   enumeration, a round that would gain energy made perfectly inelastic); and the
   cluster's contacts are held again for the rest of the step, as in 1. Only the cluster's pairs are
   searched again.
3. **Projection.** What the step leaves deeper than the band is pushed apart, positions and angles only
   (nonlinear Gauss-Seidel along each contact's normal, weighted by the inverse masses and inertias).

A body that is free in a step follows its exact parabola and turns at its constant spin, and its impacts
are found at their instant and resolved exactly. A held body's motion is first order in h where a torque
acts on it (a box tipping over a corner), exact otherwise.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.spatial import cKDTree

from ..config import ROUNDOFF
from ..contact.rigid import APPROACH_ROUNDOFF, ENERGY_ROUNDOFF, contact_rates, hold_impulses, resolve_rounds
from ..errors import ContactError, crushed_error
from ..materials import combine, pair_key
from ..narrowphase.polygons import PolygonTable, polygon_disk_manifold, polygon_wall_manifold, polygons_manifold
from ..narrowphase.rotation import pair_contact_time, wall_contact_time
from ..state import SHAPE_POLYGON

INF = math.inf
#: Mode assignments the exact impact law enumerates before it turns to block Gauss-Seidel
#: (`carom.contact.rigid`): 4^6, six contact points with friction.
MAX_MODES = 4096
#: After a contact found with nothing to resolve (a feature sliding along a face or past a corner while the pair
#: is held), the pair's next search starts this fraction of the step later: at most 1 / QUIET_FRACTION such
#: events per pair and step. A new contact of that pair within the quiet time is met at the next event or step.
QUIET_FRACTION = 0.125
#: The exact rigid impact law (mode enumeration) resolves clusters of up to this many contact points; larger
#: clusters (an impact running into a stack) are solved round by round by projected block Gauss-Seidel.
EXACT_CONTACTS = 4
#: Advancement steps of one time-of-impact search before it hands back how far it got.
TOI_ITERATIONS = 200
#: A body whose displacement bound grows past its share of the candidate margin rebuilds the pairs; the
#: margin of a still body is this fraction of its size.
STILL_MARGIN = 0.05


class Planar(NamedTuple):
    """What a step of a planar rigid world reads and does not change: bodies' constants, walls, materials."""

    shape: np.ndarray  # (n,) int8: `carom.state` shape codes
    table: PolygonTable  # every polygon's body-frame outline
    inv_mass: np.ndarray  # (n,) 1/kg, 0 fixed
    inv_inertia: np.ndarray  # (n,) 1/(kg m^2), 0 fixed
    size: np.ndarray  # (n,) m: circumradius of a polygon, radius of a disk
    restitution: np.ndarray  # (n,)
    static_friction: np.ndarray  # (n,)
    kinetic_friction: np.ndarray  # (n,)
    active: np.ndarray  # (n,) bool
    wall_point: np.ndarray  # (k, 2) m
    wall_normal: np.ndarray  # (k, 2) unit, into the world
    wall_restitution: np.ndarray  # (k,)
    wall_static: np.ndarray  # (k,)
    wall_kinetic: np.ndarray  # (k,)
    restitution_rule: int  # `carom.materials.RULE_CODES`
    restitution_pairs: dict  # pair key -> e
    friction_rule: int
    friction_pairs: dict  # pair key -> (mu_s, mu_k)


class Tolerances(NamedTuple):
    """Tolerances of one step (`carom.config.Config`, scaled)."""

    touch: float  # contact_tolerance: a fraction of the pair's smaller size
    band: float  # resting_gap (at least contact_tolerance): contacts held, overlap left by the projection
    resting_speed: float  # m/s
    speed_tol: float  # m/s: approach speeds up to this are zero
    approach: float  # m/s: a touching contact approaches when faster than this (the held solve's tolerance, at least)
    max_rounds: int
    max_body_events: int
    projection_iterations: int
    hold_sweeps: int  # the most Gauss-Seidel sweeps of a held solve
    hold_tol: float  # m/s: a held solve stops when no sweep changes a rate by more


class Motion(NamedTuple):
    """Every body at the drift's present time (written in place): the state and its constant rates."""

    x: np.ndarray  # (n, 2) m
    v: np.ndarray  # (n, 2) m/s
    angle: np.ndarray  # (n,) rad
    w: np.ndarray  # (n,) rad/s: the spin now
    a_smooth: np.ndarray  # (n, 2) m/s^2: the smooth forces, from the start of the step
    a: np.ndarray  # (n, 2) m/s^2: smooth forces plus held contacts, constant in the step
    alpha: np.ndarray  # (n,) rad/s^2: the spin's rate from held contacts
    w_drift: np.ndarray  # (n,) rad/s: the rate the angle turns at, constant in the step
    rested: np.ndarray  # (n,) bool: held by a contact in the last step (its resting speed is raised)


class Contacts(NamedTuple):
    """Contact points of one instant: body i, body j (-1 - k for wall k), point, unit normal from i towards
    j (for a wall: into it), gap (m)."""

    ci: np.ndarray
    cj: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    gap: np.ndarray


class Report(NamedTuple):
    """What a step did."""

    impacts: int
    events: int
    held: np.ndarray  # (n,) bool: carried a held contact at the end of the step


# ---------------------------------------------------------------- shapes, materials, geometry
def outline(p: Planar, b: int) -> tuple[np.ndarray, float]:
    """Body b as a rounded convex shape for the time of impact: body-frame vertices and a rounding radius."""
    if p.shape[b] == SHAPE_POLYGON:
        return p.table.vertices[p.table.start[b] : p.table.start[b + 1]], 0.0
    return np.zeros((1, 2)), float(p.size[b])


def pair_coefficients(p: Planar, i: int, j: int) -> tuple[float, float, float]:
    """(e, mu_s, mu_k) of body i with body j (j < 0: wall -1 - j): pair overrides, else the rules."""
    key = int(pair_key(i, j))
    if j >= 0:
        e_j, s_j, k_j = p.restitution[j], p.static_friction[j], p.kinetic_friction[j]
    else:
        e_j, s_j, k_j = p.wall_restitution[-1 - j], p.wall_static[-1 - j], p.wall_kinetic[-1 - j]
    e = p.restitution_pairs.get(key)
    if e is None:
        e = combine(p.restitution[i], e_j, p.restitution_rule)
    mu = p.friction_pairs.get(key)
    if mu is None:
        mu = (combine(p.static_friction[i], s_j, p.friction_rule), combine(p.kinetic_friction[i], k_j, p.friction_rule))
    return float(e), float(mu[0]), float(mu[1])


def _pair_band(p: Planar, fraction: float, i: int, j: int, x: np.ndarray) -> float:
    """Gap (m) within ``fraction`` of the pair's smaller size, plus the round-off of its coordinates."""
    if j >= 0:
        size = min(p.size[i], p.size[j])
        coords = max(abs(x[i]).max(), abs(x[j]).max())
    else:
        size = p.size[i]
        coords = max(abs(x[i]).max(), abs(p.wall_point[-1 - j]).max())
    return fraction * size + ROUNDOFF * coords


def manifold(p: Planar, i: int, j: int, x: np.ndarray, angle: np.ndarray, within: float):
    """Contact points of body i with body j (j < 0: wall -1 - j) now: (points (m, 2), gaps (m,), normal from
    i towards j (into a wall)). A second point is kept within ``within`` (m) of the first's gap."""
    points = np.empty((2, 2))
    gaps = np.empty(2)
    normal = np.empty(2)
    poly_i = p.shape[i] == SHAPE_POLYGON
    t = p.table
    if j < 0:
        k = -1 - j
        n_w = p.wall_normal[k]
        if poly_i:
            count = polygon_wall_manifold(i, k, x, angle, t.start, t.vertices, p.wall_point, p.wall_normal, within,
                                          points, gaps, normal)  # fmt: skip
        else:
            gap = float((x[i] - p.wall_point[k]) @ n_w) - p.size[i]
            points[0] = x[i] - (p.size[i] + 0.5 * gap) * n_w
            gaps[0] = gap
            count = 1
        return points[:count], gaps[:count], -n_w
    poly_j = p.shape[j] == SHAPE_POLYGON
    if poly_i and poly_j:
        count = polygons_manifold(i, j, x, angle, t.start, t.vertices, t.normals, INF, within, points, gaps, normal)
        return points[:count], gaps[:count], normal
    if poly_i or poly_j:
        a, b = (i, j) if poly_i else (j, i)
        polygon_disk_manifold(a, b, x, angle, p.size, t.start, t.vertices, t.normals, points, gaps, normal)
        return points[:1], gaps[:1], (normal if poly_i else -normal)
    d = x[j] - x[i]
    dist = math.hypot(d[0], d[1])
    normal = d / dist if dist > 0 else np.array([1.0, 0.0])
    gap = dist - p.size[i] - p.size[j]
    points[0] = x[i] + (p.size[i] + 0.5 * gap) * normal
    gaps[0] = gap
    return points[:1], gaps[:1], normal


class _Gathered:
    """Contact rows being gathered (lists, then `Contacts`)."""

    def __init__(self):
        self.rows: list = []

    def add(self, i, j, points, gaps, normal):
        for m in range(len(gaps)):
            self.rows.append((i, j, points[m], normal, gaps[m]))

    def contacts(self) -> Contacts:
        k = len(self.rows)
        return Contacts(
            np.array([r[0] for r in self.rows], dtype=np.int64).reshape(k),
            np.array([r[1] for r in self.rows], dtype=np.int64).reshape(k),
            np.array([r[2] for r in self.rows], dtype=float).reshape(k, 2),
            np.array([r[3] for r in self.rows], dtype=float).reshape(k, 2),
            np.array([r[4] for r in self.rows], dtype=float).reshape(k),
        )


# ---------------------------------------------------------------- candidates
class Candidates(NamedTuple):
    """Pairs of bodies, and bodies with walls, that may touch within the rest of the step."""

    pair_i: np.ndarray  # (P,) int64, i < j
    pair_j: np.ndarray
    wall_b: np.ndarray  # (Q,) int64
    wall_k: np.ndarray
    x_ref: np.ndarray  # (n, 2) m: positions the lists were built at
    margin: np.ndarray  # (n,) m: how far each body may stray from x_ref before they are rebuilt
    partners: list  # per body: indices into the pairs, then -1 - q for wall entries q


def _reach(m: Motion, size: np.ndarray, h: float) -> np.ndarray:
    """How far (m) each body can move in h s at its present rates, with the broad phase's safety factor."""
    speed = np.linalg.norm(m.v, axis=1)
    accel = np.linalg.norm(m.a, axis=1)
    return 1.5 * (speed * h + 0.5 * accel * h * h) + STILL_MARGIN * size


def candidates(p: Planar, m: Motion, h: float) -> Candidates:
    """The candidate pairs for the next h s (bounding circles swept by each body's reach)."""
    n = len(p.size)
    live = np.flatnonzero(p.active)
    margin = _reach(m, p.size, h)
    swept = p.size + margin
    pi_list, pj_list = [], []
    if len(live) > 1:
        tree = cKDTree(m.x[live])
        pairs = tree.query_pairs(2.0 * float(swept[live].max()), output_type="ndarray")
        if len(pairs):
            a, b = live[pairs[:, 0]], live[pairs[:, 1]]
            close = np.linalg.norm(m.x[a] - m.x[b], axis=1) <= swept[a] + swept[b]
            both_fixed = (p.inv_mass[a] == 0) & (p.inv_mass[b] == 0)
            keep = close & ~both_fixed
            pi_list, pj_list = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    pair_i = np.asarray(pi_list, dtype=np.int64)
    pair_j = np.asarray(pj_list, dtype=np.int64)
    wb, wk = [], []
    for k in range(len(p.wall_restitution)):
        height = (m.x[live] - p.wall_point[k]) @ p.wall_normal[k]
        near = live[(height <= swept[live]) & (p.inv_mass[live] != 0)]
        wb.extend(near.tolist())
        wk.extend([k] * len(near))
    partners: list = [[] for _ in range(n)]
    for q in range(len(pair_i)):
        partners[pair_i[q]].append(q)
        partners[pair_j[q]].append(q)
    for q in range(len(wb)):
        partners[wb[q]].append(-1 - q)
    return Candidates(pair_i, pair_j, np.asarray(wb, dtype=np.int64), np.asarray(wk, dtype=np.int64), m.x.copy(),
                      margin, partners)  # fmt: skip


# ---------------------------------------------------------------- motion
def advance(m: Motion, tau: float) -> None:
    """Every body tau s along its motion (parabola, constant turning rate)."""
    if tau == 0.0:
        return
    m.x[...] += m.v * tau + 0.5 * m.a * tau * tau
    m.v[...] += m.a * tau
    m.angle[...] += m.w_drift * tau
    m.w[...] += m.alpha * tau


def motion_of(m: Motion, b: int, later: float = 0.0) -> np.ndarray:
    """Body b's motion from ``later`` s after now, for the time of impact (`carom.narrowphase.rotation.motion`)."""
    x = m.x[b] + m.v[b] * later + 0.5 * m.a[b] * later * later
    v = m.v[b] + m.a[b] * later
    return np.array([x[0], x[1], v[0], v[1], m.a[b, 0], m.a[b, 1], m.angle[b] + m.w_drift[b] * later, m.w_drift[b]])


def contact_time(p: Planar, tol: Tolerances, m: Motion, i: int, j: int, horizon: float,
                 later: float = 0.0) -> tuple[float, bool]:  # fmt: skip
    """Time (s from now) of the next new contact of body i with body j (-1 - k: wall k) within the horizon,
    searched from ``later`` s on, and whether it is a contact (False: the search stopped there short of an
    answer; search again then)."""
    verts_i, round_i = outline(p, i)
    slack = _pair_band(p, tol.touch, i, j, m.x)
    if j < 0:
        k = -1 - j
        t, cleared, _ = wall_contact_time(verts_i, round_i, motion_of(m, i, later), p.wall_point[k], p.wall_normal[k],
                                          horizon - later, slack, tol.approach, TOI_ITERATIONS)  # fmt: skip
    else:
        verts_j, round_j = outline(p, j)
        t, cleared, _ = pair_contact_time(verts_i, round_i, motion_of(m, i, later), verts_j, round_j,
                                          motion_of(m, j, later), horizon - later, slack, tol.approach,
                                          TOI_ITERATIONS)  # fmt: skip
    if t < INF:
        return later + t, True
    if cleared < horizon - later:
        return later + cleared, False
    return INF, False


def passing_time(p: Planar, tol: Tolerances, m: Motion, i: int, j: int) -> float:
    """How long (s) bodies i and j (j < 0: a wall) take to move by their touching distance relative to each
    other: a contact found again within it, with nothing to resolve, is the same one (a corner passing a
    corner, where the nearest points' direction is undefined)."""
    speed = float(np.hypot(*m.v[i])) + abs(m.w_drift[i]) * p.size[i]
    if j >= 0:
        speed += float(np.hypot(*m.v[j])) + abs(m.w_drift[j]) * p.size[j]
    return _pair_band(p, tol.touch, i, j, m.x) / max(speed, tol.speed_tol, 1e-300)


# ---------------------------------------------------------------- the solves
def touching(p: Planar, tol: Tolerances, m: Motion, lists: Candidates, seeds) -> Contacts:
    """The contact points within the band of the touching cluster of ``seeds`` (body ids): the seeds, and
    every movable body joined to them by such contacts; fixed bodies and walls end the cluster."""
    gathered = _Gathered()
    seen = np.zeros(len(p.size), dtype=bool)
    done = set()
    queue = [int(b) for b in seeds if p.inv_mass[b] != 0.0]
    seen[queue] = True
    while queue:
        b = queue.pop()
        for q in lists.partners[b]:
            if q in done:
                continue
            done.add(q)
            if q >= 0:
                i, j = int(lists.pair_i[q]), int(lists.pair_j[q])
            else:
                i, j = int(lists.wall_b[-1 - q]), -1 - int(lists.wall_k[-1 - q])
            band = _pair_band(p, tol.band, i, j, m.x)
            points, gaps, normal = manifold(p, i, j, m.x, m.angle, band)
            near = gaps <= band
            if not np.any(near):
                continue
            gathered.add(i, j, points[near], gaps[near], normal)
            other = j if i == b else i
            if other >= 0 and not seen[other] and p.inv_mass[other] != 0.0:
                seen[other] = True
                queue.append(other)
    return gathered.contacts()


def _rates(c: Contacts, v: np.ndarray, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(k, 2): approach speed and slip (m/s) of every contact (`carom.contact.rigid.contact_rates`)."""
    out = np.empty((len(c.ci), 2))
    contact_rates(c.ci, c.cj, c.point, c.normal, x, v, w, out)
    return out


def _resting_speed(tol: Tolerances, m: Motion, h: float, i: int, j: int) -> float:
    """Approach speed (m/s) below which an impact of i with j is perfectly inelastic: the resting speed,
    raised to ``h |a_smooth|`` for a body that was held in the last step (constant forces are only right to
    that speed within a step). A free body keeps the plain threshold, so its impacts stay exact."""
    speed = tol.resting_speed
    for b in (i, j):
        if b >= 0 and m.rested[b]:
            speed = max(speed, h * float(np.hypot(*m.a_smooth[b])))
    return speed


def impact(p: Planar, tol: Tolerances, m: Motion, c: Contacts, h: float, t: float, log: list | None) -> int:
    """Resolve the impact of the contacts ``c`` now (time t s into a step of h s). Where some contact
    approaches faster than its resting speed, all are solved in rounds by the rigid impact law, each with
    its pair's restitution (0 below the resting speed); returns the impacts counted (approaches faster
    than the resting speed, or e = 1), logged into ``log`` if given. Where every approach is slower, they
    are stopped by one perfectly inelastic held solve and nothing is counted."""
    k = len(c.ci)
    if k == 0:
        return 0
    rates = _rates(c, m.v, m.w, m.x)
    if not np.any(rates[:, 0] > tol.approach):
        return 0
    e = np.empty(k)
    mu = np.empty(k)
    slow = np.empty(k)
    for q in range(k):
        e[q], _, mu[q] = pair_coefficients(p, int(c.ci[q]), int(c.cj[q]))
        slow[q] = _resting_speed(tol, m, h, int(c.ci[q]), int(c.cj[q]))
        if tol.approach < rates[q, 0] <= slow[q]:  # (one that does not approach yet keeps e for later rounds)
            e[q] = 0.0
    impulse = np.zeros((k, 2))
    if not np.any(rates[:, 0] > slow):
        hold_impulses(c.ci, c.cj, c.point, c.normal, mu, np.zeros((k, 2)), m.x, m.v, m.w, p.inv_mass,
                      p.inv_inertia, impulse, tol.hold_sweeps, tol.hold_tol)  # fmt: skip
        return 0
    if k <= EXACT_CONTACTS:
        rounds = resolve_rounds(c.ci, c.cj, c.point, c.normal, e, mu, m.x, m.v, m.w, p.inv_mass, p.inv_inertia,
                                impulse, tol.max_rounds, MAX_MODES)  # fmt: skip
    else:
        rounds = _rounds_by_sweeps(p, tol, m, c, e, mu, slow, impulse)
    if rounds < 0:
        raise crushed_error(int(c.ci[0]), t, tol.max_rounds, "at that instant")
    counted = 0
    for q in range(k):
        if impulse[q, 0] <= 0.0 or not (rates[q, 0] > slow[q] or e[q] == 1.0):
            continue
        counted += 1
        if log is not None:
            log.append(_impact_row(c, q, t, impulse[q], rates[q, 0], e[q]))
    return counted


def _kinetic_energy(p: Planar, m: Motion, bodies: np.ndarray) -> float:
    """Kinetic energy (J) of ``bodies`` (movable ids), translation and spin."""
    mass = 1.0 / p.inv_mass[bodies]
    inv_inertia = p.inv_inertia[bodies]
    spin = np.divide(m.w[bodies] ** 2, inv_inertia, out=np.zeros(len(bodies)), where=inv_inertia > 0)
    return 0.5 * float(np.sum(mass * np.sum(m.v[bodies] ** 2, axis=1)) + np.sum(spin))


def _rounds_by_sweeps(p: Planar, tol: Tolerances, m: Motion, c: Contacts, e: np.ndarray, mu: np.ndarray,
                      slow: np.ndarray, impulse: np.ndarray) -> int:  # fmt: skip
    """The rounds of the rigid impact law for a cluster too large to enumerate (more than `EXACT_CONTACTS`
    points): each round's approaching contacts solved together by `hold_impulses` with Newton's targets
    (``u' <= -e u``, friction in the cone; e = 0 where the approach is no faster than ``slow``, m/s) to
    round-off; a round that would raise the kinetic energy of its bodies is solved again perfectly inelastic
    (which never does: the cap of the exact law at its two ends).
    After ``max_rounds`` rounds every contact is solved perfectly inelastic. Returns the rounds, or -1 if
    contacts still approach (crushed)."""
    rates = _rates(c, m.v, m.w, m.x)
    floor = APPROACH_ROUNDOFF * float(np.abs(rates).max())
    for rnd in range(2 * tol.max_rounds):
        if rnd:
            rates = _rates(c, m.v, m.w, m.x)
        sel = np.flatnonzero(rates[:, 0] > floor)
        if not len(sel):
            return rnd
        inelastic = rnd >= tol.max_rounds
        if inelastic:
            sel = np.arange(len(c.ci))
        part = Contacts(c.ci[sel], c.cj[sel], c.point[sel], c.normal[sel], c.gap[sel])
        bodies = np.unique(np.concatenate([part.ci, part.cj]))
        bodies = bodies[(bodies >= 0)]
        bodies = bodies[p.inv_mass[bodies] != 0.0]
        before = _kinetic_energy(p, m, bodies)
        kept = (m.v[bodies].copy(), m.w[bodies].copy())
        bias = np.zeros((len(sel), 2))
        if not inelastic:
            bias[:, 0] = np.where(rates[sel, 0] > slow[sel], e[sel] * rates[sel, 0], 0.0)
        for attempt in range(2):
            lam = np.zeros((len(sel), 2))
            hold_impulses(part.ci, part.cj, part.point, part.normal, mu[sel], bias, m.x, m.v, m.w, p.inv_mass,
                          p.inv_inertia, lam, tol.hold_sweeps, floor)  # fmt: skip
            # (the sweeps stop when no rate changes by more than ``floor``: the work that leaves undone is
            # at most that rate times the impulses, the round-off of this solve's energy)
            allowed = before * ENERGY_ROUNDOFF + 2.0 * floor * float(np.abs(lam).sum())
            if attempt or _kinetic_energy(p, m, bodies) <= before + allowed or not np.any(bias):
                break
            m.v[bodies], m.w[bodies] = kept
            bias[:] = 0.0
        impulse[sel] += lam
    return -1 if np.any(_rates(c, m.v, m.w, m.x)[:, 0] > floor) else 2 * tol.max_rounds


def _impact_row(c: Contacts, q: int, t: float, impulse: np.ndarray, speed: float, e: float) -> dict:
    """One impact for `carom.Impact`: the normal from i towards j (a wall's own normal for a wall), the
    tangential impulse on j as a vector."""
    n = c.normal[q]
    tangent = np.array([-n[1], n[0]])
    wall = c.cj[q] < 0
    return {"time": t, "i": int(c.ci[q]), "j": int(c.cj[q]), "normal": -n if wall else n.copy(),
            "point": c.point[q].copy(), "impulse": float(impulse[0]), "approach_speed": float(speed),
            "restitution": float(e), "tangential": impulse[1] * tangent}  # fmt: skip


def _warm_start(memory: dict, c: Contacts, m: Motion, h_left: float) -> np.ndarray:
    """(k, 2) impulses to start the held solve from: each contact's force (N) from the last hold of its pair,
    matched by its point in body i's frame (the nearest kept one), times h_left."""
    impulse = np.zeros((len(c.ci), 2))
    for q in range(len(c.ci)):
        kept = memory.get((int(c.ci[q]), int(c.cj[q])))
        if kept is None:
            continue
        local = _body_frame(m, int(c.ci[q]), c.point[q])
        dist = np.hypot(kept[:, 0] - local[0], kept[:, 1] - local[1])
        near = int(np.argmin(dist))
        impulse[q] = kept[near, 2:] * h_left
    return impulse


def _body_frame(m: Motion, b: int, point: np.ndarray) -> np.ndarray:
    """``point`` (m, world) in body b's frame."""
    cos, sin = math.cos(m.angle[b]), math.sin(m.angle[b])
    dx, dy = point[0] - m.x[b, 0], point[1] - m.x[b, 1]
    return np.array([cos * dx + sin * dy, -sin * dx + cos * dy])


def _remember(memory: dict, c: Contacts, m: Motion, impulse: np.ndarray, h_left: float) -> None:
    """Keep each pair's held forces (N) for the next warm start, by point in body i's frame."""
    rows: dict = {}
    for q in range(len(c.ci)):
        if impulse[q, 0] > 0.0:
            local = _body_frame(m, int(c.ci[q]), c.point[q])
            rows.setdefault((int(c.ci[q]), int(c.cj[q])), []).append([*local, *(impulse[q] / h_left)])
    for key in {(int(i), int(j)) for i, j in zip(c.ci, c.cj, strict=True)}:
        memory.pop(key, None)
    for key, kept in rows.items():
        memory[key] = np.array(kept)


def held_rows(memory: dict) -> np.ndarray:
    """The held forces of `_remember` as one (q, 6) array for saving: i, j, point in body i's frame (m),
    normal and tangential force (N), pairs in sorted order."""
    rows = [[i, j, *row] for (i, j), kept in sorted(memory.items()) for row in kept]
    return np.array(rows, dtype=float).reshape(len(rows), 6)


def held_memory(rows: np.ndarray) -> dict:
    """`held_rows` read back."""
    memory: dict = {}
    for row in rows:
        memory.setdefault((int(row[0]), int(row[1])), []).append(row[2:])
    return {key: np.array(kept) for key, kept in memory.items()}


def hold(p: Planar, tol: Tolerances, m: Motion, c: Contacts, cluster: np.ndarray, h_left: float,
         memory: dict) -> np.ndarray:  # fmt: skip
    """Hold the contacts ``c`` of the bodies ``cluster`` for the h_left s left in the step: one perfectly
    inelastic solve (`carom.contact.rigid.hold_impulses`, warm-started from ``memory``, the forces of the
    last hold) on the velocities the smooth forces would give at its end; each body that a contact pushes
    gets the constant acceleration and spin rate that reach its solved end velocity and spin, and turns at
    the mean of its spins. Friction is static where a contact does not slip now, kinetic where it does.
    Returns the bodies held (pushed by a contact)."""
    movable = cluster[p.inv_mass[cluster] != 0.0]
    m.a[movable] = m.a_smooth[movable]
    m.alpha[movable] = 0.0
    m.w_drift[movable] = m.w[movable]
    k = len(c.ci)
    if k == 0 or h_left <= 0.0:
        return np.zeros(0, dtype=np.int64)
    v_end = m.v.copy()
    v_end[movable] += m.a_smooth[movable] * h_left
    w_end = m.w.copy()
    now = _rates(c, m.v, m.w, m.x)
    slip = now[:, 1]
    mu = np.empty(k)
    kinetic = np.empty(k)
    for q in range(k):
        _, mu_s, kinetic[q] = pair_coefficients(p, int(c.ci[q]), int(c.cj[q]))
        mu[q] = mu_s if abs(slip[q]) <= tol.speed_tol else kinetic[q]
    impulse = _warm_start(memory, c, m, h_left)
    start = (v_end.copy(), w_end.copy())
    hold_impulses(c.ci, c.cj, c.point, c.normal, mu, now, m.x, v_end, w_end, p.inv_mass, p.inv_inertia, impulse,
                  tol.hold_sweeps, tol.hold_tol)  # fmt: skip
    # a contact that static friction cannot hold (its friction on the cone's edge) slides: kinetic friction
    breaks = (np.abs(impulse[:, 1]) >= mu * impulse[:, 0] * (1.0 - 1e-9)) & (impulse[:, 0] > 0.0) & (kinetic < mu)
    if np.any(breaks):
        mu[breaks] = kinetic[breaks]
        v_end[...], w_end[...] = start
        impulse[:] = 0.0
        hold_impulses(c.ci, c.cj, c.point, c.normal, mu, now, m.x, v_end, w_end, p.inv_mass, p.inv_inertia,
                      impulse, tol.hold_sweeps, tol.hold_tol)  # fmt: skip
    _remember(memory, c, m, impulse, h_left)
    pushed = impulse[:, 0] > 0.0
    bodies = np.unique(np.concatenate([c.ci[pushed], c.cj[pushed]]))
    held = bodies[(bodies >= 0)]
    held = held[p.inv_mass[held] != 0.0]
    m.a[held] = (v_end[held] - m.v[held]) / h_left
    m.alpha[held] = (w_end[held] - m.w[held]) / h_left
    m.w_drift[held] = 0.5 * (m.w[held] + w_end[held])
    return held


def project(p: Planar, tol: Tolerances, m: Motion, lists: Candidates) -> float:
    """Push apart what overlaps deeper than the band, positions and angles only: passes of nonlinear
    Gauss-Seidel, each contact's deepest point moved to half the band along its normal, the move shared by
    the inverse masses and inertias. A push that raises a body against the smooth forces takes that potential
    energy from the kinetic energy of the bodies moved (their velocities and spins scaled down), so the
    projection never adds energy while they have it. Returns the deepest overlap left (m, >= 0)."""
    entries = [(int(i), int(j)) for i, j in zip(lists.pair_i, lists.pair_j, strict=True)]
    entries += [(int(b), -1 - int(k)) for b, k in zip(lists.wall_b, lists.wall_k, strict=True)]
    x0 = m.x.copy()
    deepest = 0.0
    for _ in range(tol.projection_iterations):
        deepest = 0.0
        for i, j in entries:
            band = _pair_band(p, tol.band, i, j, m.x)
            points, gaps, normal = manifold(p, i, j, m.x, m.angle, band)
            if not len(gaps) or gaps[0] >= -band:
                continue
            deepest = max(deepest, -gaps[0])
            _push(p, m, i, j, points[0], normal, -(gaps[0] + 0.5 * band))
        if deepest == 0.0:
            break
    _pay_for_pushes(p, m, x0)
    return deepest


def _pay_for_pushes(p: Planar, m: Motion, x0: np.ndarray) -> None:
    """Take the potential energy the projection added against the smooth forces, ``-m a_smooth . dx``,
    from the kinetic energy of the bodies it moved (as much as they have)."""
    moved = np.flatnonzero(np.any(m.x != x0, axis=1) & (p.inv_mass != 0.0))
    if not len(moved):
        return
    mass = 1.0 / p.inv_mass[moved]
    raised = -float(np.sum(mass * np.sum(m.a_smooth[moved] * (m.x[moved] - x0[moved]), axis=1)))
    spin = np.divide(m.w[moved] ** 2, p.inv_inertia[moved], out=np.zeros(len(moved)), where=p.inv_inertia[moved] > 0)
    kinetic = 0.5 * float(np.sum(mass * np.sum(m.v[moved] ** 2, axis=1)) + np.sum(spin))
    if raised <= 0.0 or kinetic <= 0.0:
        return
    factor = math.sqrt(max(0.0, 1.0 - raised / kinetic))
    m.v[moved] *= factor
    m.w[moved] *= factor


def _push(p: Planar, m: Motion, i: int, j: int, point: np.ndarray, normal: np.ndarray, depth: float) -> None:
    """Move bodies i and j (j < 0: a wall) apart by ``depth`` (m) at ``point`` along ``normal`` (from i
    towards j), the move shared by inverse mass and inertia (the positions a unit impulse would move)."""
    bodies = [(i, -1.0)] + ([(j, 1.0)] if j >= 0 else [])
    arm = {b: float((point[0] - m.x[b, 0]) * normal[1] - (point[1] - m.x[b, 1]) * normal[0]) for b, _ in bodies}
    weight = sum(p.inv_mass[b] + arm[b] ** 2 * p.inv_inertia[b] for b, _ in bodies)
    if weight <= 0.0:
        return
    impulse = depth / weight
    for b, sign in bodies:
        m.x[b] += sign * impulse * p.inv_mass[b] * normal
        m.angle[b] += sign * impulse * p.inv_inertia[b] * arm[b]


# ---------------------------------------------------------------- the step
class _Schedule:
    """The next contact time of every candidate pair and body-wall entry (s from the step start)."""

    def __init__(self, p: Planar, tol: Tolerances, m: Motion, lists: Candidates, t: float, h: float):
        self.lists = lists
        self.time = np.full(len(lists.pair_i) + len(lists.wall_b), INF)
        self.real = np.zeros(len(self.time), dtype=bool)
        self.quiet = np.zeros(len(self.time))  # s from the step start: an entry's search starts here at the earliest
        for q in range(len(self.time)):
            self.predict(p, tol, m, q, t, h)

    def entry(self, q: int) -> tuple[int, int]:
        """Entry q as (i, j), j = -1 - k for wall k."""
        lists = self.lists
        n_pairs = len(lists.pair_i)
        if q < n_pairs:
            return int(lists.pair_i[q]), int(lists.pair_j[q])
        return int(lists.wall_b[q - n_pairs]), -1 - int(lists.wall_k[q - n_pairs])

    def predict(self, p: Planar, tol: Tolerances, m: Motion, q: int, t: float, h: float) -> None:
        i, j = self.entry(q)
        if self.quiet[q] >= h:
            self.time[q], self.real[q] = INF, False
            return
        dt, real = contact_time(p, tol, m, i, j, h - t, max(self.quiet[q] - t, 0.0))
        self.time[q] = t + dt
        self.real[q] = real

    def predict_bodies(self, p: Planar, tol: Tolerances, m: Motion, bodies, t: float, h: float) -> None:
        n_pairs = len(self.lists.pair_i)
        entries = set()
        for b in bodies:
            for q in self.lists.partners[b]:
                entries.add(q if q >= 0 else n_pairs + (-1 - q))
        for q in entries:
            self.predict(p, tol, m, q, t, h)


def _strays(lists: Candidates, m: Motion, bodies, h_left: float) -> bool:
    """Whether any of ``bodies`` may leave its margin around where the lists were built."""
    for b in bodies:
        off = float(np.hypot(*(m.x[b] - lists.x_ref[b])))
        bound = off + float(np.hypot(*m.v[b])) * h_left + 0.5 * float(np.hypot(*m.a[b])) * h_left**2
        if bound > lists.margin[b]:
            return True
    return False


def step(p: Planar, tol: Tolerances, m: Motion, h: float, log: list | None, memory: dict) -> Report:
    """Advance every active body by h s (`Motion` written in place); see the module docstring. ``memory``:
    the held forces by pair, the warm start of each held solve, updated; ``log``: where given, each impact
    is appended to it (a dict of `carom.Impact`'s fields, time from the step start)."""
    n = len(p.size)
    movable = np.flatnonzero(p.active & (p.inv_mass != 0.0))
    m.a[...] = m.a_smooth
    m.alpha[...] = 0.0
    m.w_drift[...] = m.w
    lists = candidates(p, m, h)
    held = np.zeros(n, dtype=bool)
    contacts = touching(p, tol, m, lists, movable)
    impacts = impact(p, tol, m, contacts, h, 0.0, log)
    held[hold(p, tol, m, contacts, movable, h, memory)] = True
    schedule = _Schedule(p, tol, m, lists, 0.0, h)
    events = np.zeros(n, dtype=np.int64)
    t = 0.0
    total = 0
    while len(schedule.time):
        q = int(np.argmin(schedule.time))
        t_event = schedule.time[q]
        if t_event > h:
            break
        advance(m, t_event - t)
        t = t_event
        total += 1
        if not schedule.real[q]:
            schedule.predict(p, tol, m, q, t, h)
            continue
        i, j = schedule.entry(q)
        seeds = [i] if j < 0 else [i, j]
        contacts = touching(p, tol, m, lists, seeds)
        acted = len(contacts.ci) and np.any(_rates(contacts, m.v, m.w, m.x)[:, 0] > tol.approach)
        impacts += impact(p, tol, m, contacts, h, t, log)
        cluster = np.unique(np.concatenate([np.asarray(seeds, dtype=np.int64), contacts.ci, contacts.cj]))
        cluster = cluster[cluster >= 0]
        held[hold(p, tol, m, contacts, cluster, h - t, memory)] = True
        counted = cluster[p.inv_mass[cluster] != 0.0]
        events[counted] += 1
        if np.any(events[counted] > tol.max_body_events):
            raise ContactError(f"body {int(counted[np.argmax(events[counted])])} took part in more than "
                               f"Config.max_body_events={tol.max_body_events} events within one step")
        if _strays(lists, m, cluster, h - t):
            lists = candidates(p, m, h - t)
            schedule = _Schedule(p, tol, m, lists, t, h)
        else:
            schedule.predict_bodies(p, tol, m, cluster, t, h)
        if not acted:  # nothing to resolve: this entry's search goes on from past this touch
            schedule.quiet[q] = t + max(passing_time(p, tol, m, i, j), QUIET_FRACTION * h)
            schedule.predict(p, tol, m, q, t, h)
    advance(m, h - t)
    project(p, tol, m, lists)
    return Report(impacts, total, held)
