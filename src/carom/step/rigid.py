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

A held solve's contact work over its whole span is not positive (the midpoint targets), but over a first part
it may be: a contact separating at the start is pushed so that it returns no faster than it left. Where an
event cuts a plan short (2), and at the end of the step, the energy its held bodies gained since it began
(kinetic, and the potential of the smooth forces) is taken back from their kinetic energy, as much as they
have (`_Plans`); the same for the potential energy that the projection (3) adds.

A body that is free in a step follows its exact parabola and turns at its constant spin, and its impacts
are found at their instant and resolved exactly. A held body's motion is first order in h where a torque
acts on it (a box tipping over a corner), exact otherwise.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import broadphase
from ..contact.projection import pay, pay_for_lift, potential_rise
from ..contact.rigid import STALL_CEILING, contact_rates, hold_impulses, resolve_rounds
from ..errors import ContactError, crushed_error
from ..materials import key_pairs, pair_keys
from ..narrowphase.polygons import PolygonTable
from . import rigid_kernels as kernels
from .rigid_kernels import Contacts, Entries, Outlines, Since
from .sleep import candidate_pairs

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
#: A body whose displacement bound grows past its share of the candidate margin rebuilds the pairs; the
#: margin of a still body is this fraction of its size.
STILL_MARGIN = 0.05
#: A contact separating faster than this fraction of the speed the smooth forces add over the rest of the step
#: is not held: it flies, and its return is an event (an inelastic impact if slow). Held, it would be pushed so
#: as to return no faster than it left, lifting its bodies in the first part of the step: energy banked where an
#: event cuts the plan short and the bodies have too little kinetic energy to pay it back (a hopper of boxes and
#: disks: 4e-5 J in a step; 4e-7 J with this rule). Slower separations (a pivoting corner's round-off, 1e-6 m/s)
#: stay held, or a box tipping over a corner would be stopped at every event.
LIFT_FRACTION = 0.05
#: A held solve whose warm start knows fewer than this fraction of its contacts (a stack at its first step), and
#: has GUESS_CONTACTS or more, starts from `_load_guess` instead: the statics of the stack, carried down from
#: its top. (Gauss-Seidel and the accelerated gradient from zero took 3,454 sweeps, 1.2 s, on a 50-row pyramid;
#: from the guess it converges in one sweep.)
GUESS_FRACTION = 0.5
GUESS_CONTACTS = 16
#: `_load_guess`: the weight of the tangential impulses in each body's least-norm balance (their scale is
#: divided by it), so that the guess leans on normal forces and friction stays small.
TANGENT_WEIGHT = 10.0
#: A held solve is run again, with kinetic friction at the contacts it left sliding under static friction, at
#: most this many times (each time turns at least one more contact kinetic).
SLIDE_ROUNDS = 4


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


class HeldForces(NamedTuple):
    """The forces of the last hold of each pair, the next held solve's warm start: rows sorted by pair key
    (`carom.materials.pair_key`), each with its point in body i's frame."""

    key: np.ndarray  # (q,) int64
    local: np.ndarray  # (q, 2) m
    force: np.ndarray  # (q, 2) N: normal, tangential

    @classmethod
    def empty(cls) -> HeldForces:
        return cls(np.zeros(0, dtype=np.int64), np.zeros((0, 2)), np.zeros((0, 2)))


class Report(NamedTuple):
    """What a step did."""

    impacts: int
    events: int
    held: np.ndarray  # (n,) bool: carried a held contact at the end of the step
    memory: HeldForces  # the held forces after the step


def outlines(p: Planar) -> Outlines:
    """The kernels' view of the bodies and walls."""
    t = p.table
    return Outlines(p.shape, p.size, t.start, t.vertices, t.normals, p.inv_mass, p.inv_inertia, p.wall_point,
                    p.wall_normal, np.zeros((1, 2)))  # fmt: skip


# ---------------------------------------------------------------- candidates
class Candidates(NamedTuple):
    """Pairs of bodies, and bodies with walls, that may touch within the rest of the step (entries: pairs
    first, i < j, then body-wall entries), with each entry's coefficients."""

    lists: Entries
    coefficients: np.ndarray  # (E, 3): e, mu_s, mu_k of each entry (pair overrides, else the rules)
    x_ref: np.ndarray  # (n, 2) m: positions the lists were built at
    margin: np.ndarray  # (n,) m: how far each body may stray from x_ref before they are rebuilt


def reach(v: np.ndarray, a: np.ndarray, size: np.ndarray, h: float) -> np.ndarray:
    """How far (m) each body can move in h s at velocity ``v`` and acceleration ``a``, with the broad phase's
    safety factor."""
    speed = np.linalg.norm(v, axis=1)
    accel = np.linalg.norm(a, axis=1)
    return 1.5 * (speed * h + 0.5 * accel * h * h) + STILL_MARGIN * size


def candidates(p: Planar, m: Motion, h: float) -> Candidates:
    """The candidate entries for the next h s (bounding circles swept by each body's reach): pairs from the
    shared broad phase (`carom.broadphase`, the disks' own), kept where the two bodies' own swept circles
    overlap and not both are fixed."""
    n = len(p.size)
    live = np.flatnonzero(p.active)
    margin = reach(m.v, m.a, p.size, h)
    swept = p.size + margin
    start, nbrs, _, _ = broadphase.candidates(m.x, p.size, p.active, margin, 1.0)
    rows, nbrs = candidate_pairs(start, nbrs)
    a, b = rows[nbrs > rows], nbrs[nbrs > rows]  # (each pair once, i < j, in id order)
    close = np.linalg.norm(m.x[a] - m.x[b], axis=1) <= swept[a] + swept[b]
    keep = close & ~((p.inv_mass[a] == 0) & (p.inv_mass[b] == 0))
    pair_i, pair_j = a[keep], b[keep]
    wall_b, wall_k = [pair_i[:0]], [pair_i[:0]]
    for k in range(len(p.wall_restitution)):
        height = (m.x[live] - p.wall_point[k]) @ p.wall_normal[k]
        near = live[(height <= swept[live]) & (p.inv_mass[live] != 0)]
        wall_b.append(near.astype(np.int64))
        wall_k.append(np.full(len(near), k, dtype=np.int64))
    entry_i = np.concatenate([pair_i, *wall_b])
    entry_j = np.concatenate([pair_j, -1 - np.concatenate(wall_k)])
    ends = np.concatenate([pair_i, pair_j, entry_i[len(pair_i) :]])
    ids = np.concatenate([np.arange(len(pair_i)), np.arange(len(entry_i))])
    order = np.lexsort((ids, ends))
    adjacent_start = np.zeros(n + 1, dtype=np.int64)
    adjacent_start[1:] = np.cumsum(np.bincount(ends, minlength=n))
    lists = Entries(entry_i, entry_j, adjacent_start, ids[order].astype(np.int64))
    return Candidates(lists, _coefficients(p, entry_i, entry_j), m.x.copy(), margin)


def _coefficients(p: Planar, entry_i: np.ndarray, entry_j: np.ndarray) -> np.ndarray:
    """(E, 3): (e, mu_s, mu_k) of each entry: its pair's overrides, else the mixing rules."""
    out = np.empty((len(entry_i), 3))
    own = np.column_stack([p.restitution, p.static_friction, p.kinetic_friction])
    walls = np.column_stack([p.wall_restitution, p.wall_static, p.wall_kinetic]).reshape(-1, 3)
    kernels.entry_coefficients(entry_i, entry_j, own, walls, p.restitution_rule, p.friction_rule, out)
    if p.restitution_pairs or p.friction_pairs:
        keys = pair_keys(entry_i, entry_j)
        for q in np.flatnonzero(np.isin(keys, list(p.restitution_pairs))):
            out[q, 0] = p.restitution_pairs[int(keys[q])]
        for q in np.flatnonzero(np.isin(keys, list(p.friction_pairs))):
            out[q, 1:] = p.friction_pairs[int(keys[q])]
    return out


# ---------------------------------------------------------------- motion
def advance(m: Motion, tau: float) -> None:
    """Every body tau s along its motion (parabola, constant turning rate)."""
    if tau == 0.0:
        return
    m.x[...] += m.v * tau + 0.5 * m.a * tau * tau
    m.v[...] += m.a * tau
    m.angle[...] += m.w_drift * tau
    m.w[...] += m.alpha * tau


def passing_time(p: Planar, tol: Tolerances, m: Motion, i: int, j: int) -> float:
    """How long (s) bodies i and j (j < 0: a wall) take to move by their touching distance relative to each
    other: a contact found again within it, with nothing to resolve, is the same one (a corner passing a
    corner, where the nearest points' direction is undefined)."""
    speed = float(np.hypot(*m.v[i])) + abs(m.w_drift[i]) * p.size[i]
    if j >= 0:
        speed += float(np.hypot(*m.v[j])) + abs(m.w_drift[j]) * p.size[j]
    band = kernels.pair_band(tol.touch, p.size, p.wall_point, m.x, i, j)
    return band / max(speed, tol.speed_tol, 1e-300)


# ---------------------------------------------------------------- the solves
def touching(g: Outlines, tol: Tolerances, m: Motion, lists: Entries, seeds: np.ndarray,
             entry_gap: np.ndarray | None = None) -> Contacts:  # fmt: skip
    """The contact points within the band of the touching cluster of ``seeds`` (body ids): the seeds, and
    every movable body joined to them by such contacts; fixed bodies and walls end the cluster. Where
    ``entry_gap`` (E,) is given, each entry met gets its deepest gap (m) there (-inf for the others)."""
    room = 2 * len(lists.entry_i)
    out = Contacts(np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64),
                   np.empty((room, 2)), np.empty((room, 2)), np.empty(room))  # fmt: skip
    if entry_gap is None:
        entry_gap = np.empty(0)
    else:
        entry_gap[:] = -INF
    rows = kernels.gather_touching(g, lists, seeds, m.x, m.angle, tol.band, out, entry_gap)
    return Contacts(*(column[:rows] for column in out))


def _rates(c: Contacts, v: np.ndarray, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(k, 2): approach speed and slip (m/s) of every contact (`carom.contact.rigid.contact_rates`)."""
    out = np.empty((len(c.ci), 2))
    contact_rates(c.ci, c.cj, c.point, c.normal, x, v, w, out)
    return out


def _resting_speeds(tol: Tolerances, m: Motion, h: float, c: Contacts) -> np.ndarray:
    """(k,) approach speed (m/s) below which each contact's impact is perfectly inelastic: the resting
    speed, raised to ``h |a_smooth|`` for a body that was held in the last step (constant forces are only
    right to that speed within a step). A free body keeps the plain threshold, so its impacts stay exact."""
    speed = np.full(len(c.ci), tol.resting_speed)
    for side in (c.ci, c.cj):
        body = np.maximum(side, 0)
        raised = np.where((side >= 0) & m.rested[body], h * np.hypot(m.a_smooth[body, 0], m.a_smooth[body, 1]), 0.0)
        speed = np.maximum(speed, raised)
    return speed


def impact(tol: Tolerances, m: Motion, g: Outlines, coefficients: np.ndarray, c: Contacts, h: float, t: float,
           log: list | None) -> int:  # fmt: skip
    """Resolve the impact of the contacts ``c`` now (time t s into a step of h s; ``coefficients``: the
    candidate entries'). Where some contact approaches faster than its resting speed, all are solved in
    rounds by the rigid impact law, each with its pair's restitution (0 below the resting speed); returns
    the impacts counted (approaches faster than the resting speed, or e = 1), logged into ``log`` if given.
    Where every approach is slower, they are stopped by one perfectly inelastic held solve and nothing is
    counted."""
    k = len(c.ci)
    if k == 0:
        return 0
    rates = _rates(c, m.v, m.w, m.x)
    if not np.any(rates[:, 0] > tol.approach):
        return 0
    e = coefficients[c.entry, 0].copy()
    mu = coefficients[c.entry, 2].copy()
    slow = _resting_speeds(tol, m, h, c)
    e[(rates[:, 0] > tol.approach) & (rates[:, 0] <= slow)] = 0.0  # (one not approaching yet keeps e for later)
    impulse = np.zeros((k, 2))
    if not np.any(rates[:, 0] > slow):
        hold_impulses(c.ci, c.cj, c.point, c.normal, mu, np.zeros((k, 2)), m.x, m.v, m.w, g.inv_mass,
                      g.inv_inertia, impulse, tol.hold_sweeps, tol.hold_tol, True)  # fmt: skip
        return 0
    if k <= EXACT_CONTACTS:
        rounds = resolve_rounds(c.ci, c.cj, c.point, c.normal, e, mu, m.x, m.v, m.w, g.inv_mass, g.inv_inertia,
                                impulse, tol.max_rounds, MAX_MODES)  # fmt: skip
    else:
        rounds = kernels.rounds_by_sweeps(c, g, m.x, m.v, m.w, e, mu, slow, impulse, tol.max_rounds, tol.hold_sweeps)
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


def _kinetic_energy(g: Outlines, v: np.ndarray, w: np.ndarray, bodies: np.ndarray) -> float:
    """Kinetic energy (J) of ``bodies`` (movable ids) at velocities ``v`` and spins ``w``, translation and spin."""
    return kernels.kinetic_energy(bodies, len(bodies), g.inv_mass, g.inv_inertia, v, w)


def _impact_row(c: Contacts, q: int, t: float, impulse: np.ndarray, speed: float, e: float) -> dict:
    """One impact for `carom.Impact`: the normal from i towards j (a wall's own normal for a wall), the
    tangential impulse on j as a vector."""
    n = c.normal[q]
    tangent = np.array([-n[1], n[0]])
    wall = c.cj[q] < 0
    return {"time": t, "i": int(c.ci[q]), "j": int(c.cj[q]), "normal": -n if wall else n.copy(),
            "point": c.point[q].copy(), "impulse": float(impulse[0]), "approach_speed": float(speed),
            "restitution": float(e), "tangential": impulse[1] * tangent}  # fmt: skip


def _pair_keys(c: Contacts) -> np.ndarray:
    """(k,) int64: each contact's pair key for `HeldForces` (`carom.materials.pair_key`, the key every
    engine's pair tables use; a contact's i is its pair's lower id)."""
    return pair_keys(c.ci, c.cj)


def _local_points(m: Motion, c: Contacts) -> np.ndarray:
    """(k, 2) m: each contact point in body i's frame."""
    out = np.empty((len(c.ci), 2))
    kernels.body_frame_points(c.ci, c.point, m.x, m.angle, out)
    return out


def _warm_start(memory: HeldForces, keys: np.ndarray, local: np.ndarray, h_left: float) -> tuple[np.ndarray, int]:
    """(k, 2) impulses to start the held solve from: each contact's force (N) from the last hold of its pair
    (``keys``, `_pair_keys`), matched by its point in body i's frame (``local``, `_local_points`; the nearest
    kept one), times h_left; and how many contacts had one."""
    out = np.empty((len(keys), 2))
    found = kernels.warm_start(keys, local, memory.key, memory.local, memory.force, h_left, out)
    return out, found


def _load_guess(g: Outlines, c: Contacts, m: Motion, cluster: np.ndarray, h_left: float,
                mu: np.ndarray) -> np.ndarray:  # fmt: skip
    """(k, 2) impulses to start a cold held solve from: the smooth forces of the bodies of ``cluster`` over the
    h_left s held, carried down from the top of the stack to its supports
    (`carom.step.rigid_kernels.load_guess`)."""
    weight = np.zeros_like(m.a_smooth)
    movable = cluster[g.inv_mass[cluster] != 0.0]
    weight[movable] = m.a_smooth[movable] * (h_left / g.inv_mass[movable])[:, None]
    out = np.empty((len(c.ci), 2))
    kernels.load_guess(c.ci, c.cj, c.point, c.normal, m.x, g.inv_mass, weight, mu, TANGENT_WEIGHT, out)
    return out


def _remember(memory: HeldForces, keys: np.ndarray, local: np.ndarray, impulse: np.ndarray,
              h_left: float) -> HeldForces:  # fmt: skip
    """The held forces with this hold's pairs replaced: each contact's force (N), by pair key and point in body
    i's frame (`_warm_start`'s ``keys``, ``local``; zero forces too: a point that did not push starts the next
    solve from zero, not from its neighbour's force)."""
    return HeldForces(*kernels.merge_held(memory.key, memory.local, memory.force, keys, local, impulse / h_left))


def held_rows(memory: HeldForces) -> np.ndarray:
    """The held forces as one (q, 6) array for saving: i, j, point in body i's frame (m), normal and
    tangential force (N), pairs in sorted order."""
    i, j = key_pairs(memory.key)
    return np.column_stack([i, j, memory.local, memory.force]).astype(float).reshape(len(memory.key), 6)


def held_memory(rows: np.ndarray) -> HeldForces:
    """`held_rows` read back."""
    rows = np.asarray(rows, dtype=float).reshape(-1, 6)
    key = pair_keys(rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64))
    order = np.argsort(key, kind="stable")
    return HeldForces(key[order], rows[order, 2:4].copy(), rows[order, 4:6].copy())


def _lift_speed(m: Motion, c: Contacts, h_left: float) -> np.ndarray:
    """(k,) m/s: the separation speed above which a contact is not held for the h_left s left (`LIFT_FRACTION`
    of the speed its bodies' smooth forces add in that time, the larger of the two)."""
    added = h_left * np.hypot(m.a_smooth[:, 0], m.a_smooth[:, 1])
    return LIFT_FRACTION * np.maximum(added[c.ci], np.where(c.cj >= 0, added[np.maximum(c.cj, 0)], 0.0))


def _slides(tol: Tolerances, m: Motion, c: Contacts, bias: np.ndarray, v_end: np.ndarray, w_end: np.ndarray,
            impulse: np.ndarray, mu: np.ndarray) -> np.ndarray:  # fmt: skip
    """(k,) bool: the contacts that a held solve left sliding: friction on the cone's edge and the contact point
    still slipping (its rate plus ``bias`` above what the solve's stopping rule may leave). A contact whose
    friction merely reaches its cone's edge while its point sticks is held: where contacts are redundant (a
    box on two corners) the split of the friction between them is not unique, and the body stays whenever
    some admissible split holds it."""
    slip = np.abs(_rates(c, v_end, w_end, m.x)[:, 1] + bias[:, 1])
    on_edge = (np.abs(impulse[:, 1]) >= mu * impulse[:, 0] * (1.0 - 1e-9)) & (impulse[:, 0] > 0.0)
    return on_edge & (slip > _stick_speed(tol))


def _drift_slip(tol: Tolerances, m: Motion, c: Contacts, h: float) -> np.ndarray:
    """(k,) m/s: the slip that a held contact may show without sliding: `_stick_speed`, plus what a held
    body's motion adds in a step of h s. The held solve zeroes the contact point's rates at the arm ``r`` it
    has then, and the arm turns with the body: a point held still on a body turning at w slips by about
    ``w^2 |r| h`` a step (a box tipping over its edge). A faster slip is a sliding contact."""
    arm = np.hypot(c.point[:, 0] - m.x[c.ci, 0], c.point[:, 1] - m.x[c.ci, 1])
    drift = m.w[c.ci] ** 2 * arm
    other = np.maximum(c.cj, 0)
    arm_j = np.hypot(c.point[:, 0] - m.x[other, 0], c.point[:, 1] - m.x[other, 1])
    drift += np.where(c.cj >= 0, m.w[other] ** 2 * arm_j, 0.0)
    return _stick_speed(tol) + 2.0 * h * drift


def _stick_speed(tol: Tolerances) -> float:
    """Slip (m/s) up to which a held contact sticks: what a held solve's stopping rule may leave of a rate
    (`carom.contact.rigid.STALL_CEILING` times its tolerance). A body that static friction holds creeps by
    that much at most; faster, a contact slides now, and gets kinetic friction."""
    return max(tol.approach, STALL_CEILING * tol.hold_tol)


def hold(tol: Tolerances, m: Motion, g: Outlines, coefficients: np.ndarray, c: Contacts, cluster: np.ndarray,
         h_left: float, h: float, memory: HeldForces) -> tuple[np.ndarray, HeldForces]:  # fmt: skip
    """Hold the contacts ``c`` of the bodies ``cluster`` for the h_left s left in the step of h s: one perfectly
    inelastic solve (`carom.contact.rigid.hold_impulses`, warm-started from ``memory``, the forces of the
    last hold) on the velocities the smooth forces would give at its end; each body that a contact pushes
    gets the constant acceleration and spin rate that reach its solved end velocity and spin, and turns at
    the mean of its spins. Friction is static where a contact does not slip now (`_drift_slip`), kinetic where
    it does, and kinetic where the solve with static friction leaves the contact sliding (`_slides`); a contact
    whose static friction only reaches its cone's edge while its point sticks stays static.
    Returns the bodies held (pushed by a contact) and the held forces updated."""
    movable = cluster[g.inv_mass[cluster] != 0.0]
    m.a[movable] = m.a_smooth[movable]
    m.alpha[movable] = 0.0
    m.w_drift[movable] = m.w[movable]
    if len(c.ci) == 0 or h_left <= 0.0:
        return np.zeros(0, dtype=np.int64), memory
    v_end = m.v.copy()
    v_end[movable] += m.a_smooth[movable] * h_left
    w_end = m.w.copy()
    now = _rates(c, m.v, m.w, m.x)
    flying = now[:, 0] < -np.maximum(_lift_speed(m, c, h_left), tol.approach)
    if np.any(flying):  # a contact that separates flies free: its return is an event at its time
        c, now = c.part(~flying), now[~flying]
    kinetic = coefficients[c.entry, 2]
    mu = np.where(np.abs(now[:, 1]) <= _drift_slip(tol, m, c, h), coefficients[c.entry, 1], kinetic)
    keys, local = _pair_keys(c), _local_points(m, c)
    impulse, known = _warm_start(memory, keys, local, h_left)
    if len(c.ci) >= GUESS_CONTACTS and known < GUESS_FRACTION * len(c.ci):
        impulse = _load_guess(g, c, m, cluster, h_left, mu)
    start = (v_end.copy(), w_end.copy())
    for attempt in range(SLIDE_ROUNDS + 1):
        if attempt:  # again from the start, kinetic friction where static friction could not hold, warm-started
            v_end[...], w_end[...] = start  # from the last answer brought into the narrower cones
            impulse[:, 1] = np.clip(impulse[:, 1], -mu * impulse[:, 0], mu * impulse[:, 0])
        hold_impulses(c.ci, c.cj, c.point, c.normal, mu, now, m.x, v_end, w_end, g.inv_mass, g.inv_inertia,
                      impulse, tol.hold_sweeps, tol.hold_tol, True)  # fmt: skip
        slides = _slides(tol, m, c, now, v_end, w_end, impulse, mu) & (kinetic < mu)
        if attempt == SLIDE_ROUNDS or not np.any(slides):
            break
        mu[slides] = kinetic[slides]
    memory = _remember(memory, keys, local, impulse, h_left)
    pushed = impulse[:, 0] > 0.0
    pushes = np.zeros(len(m.v), dtype=bool)
    pushes[c.ci[pushed]] = True
    pushes[c.cj[pushed & (c.cj >= 0)]] = True
    held = np.flatnonzero(pushes & (g.inv_mass != 0.0))
    m.a[held] = (v_end[held] - m.v[held]) / h_left
    m.alpha[held] = (w_end[held] - m.w[held]) / h_left
    m.w_drift[held] = 0.5 * (m.w[held] + w_end[held])
    return held, memory


def project(tol: Tolerances, m: Motion, g: Outlines, lists: Entries, since: Since | None = None) -> float:
    """Push apart what overlaps deeper than the band, positions and angles only
    (`carom.step.rigid_kernels.project_overlaps`; ``since``: the entries' gaps measured earlier, which spare
    the first pass the entries that cannot overlap; none: every entry is checked). A push that raises a
    body against the smooth forces takes that potential energy from the kinetic energy of the bodies moved
    (their velocities and spins scaled down), so the projection never adds energy while they have it.
    Returns the deepest overlap left (m, >= 0)."""
    x0 = m.x.copy()
    if since is None:
        since = Since(m.x, m.angle, np.empty(0))
    deepest = kernels.project_overlaps(g, lists, m.x, m.angle, tol.band, tol.projection_iterations, since)
    _pay_for_pushes(g, m, x0)
    return deepest


def _pay_for_pushes(g: Outlines, m: Motion, x0: np.ndarray) -> None:
    """Take the potential energy the projection added against the smooth forces, ``-m a_smooth . dx``,
    from the kinetic energy of the bodies it moved (as much as they have)."""
    pay_for_lift(x0, m.x, m.v, m.w, g.inv_mass, m.a_smooth, lambda moved: _kinetic_energy(g, m.v, m.w, moved))


class _Plans(NamedTuple):
    """Where each body's held motion began (its last held solve, or the step's start), to pay back what an
    interrupted plan gained: a plan's contact work is not positive over its whole span (the midpoint targets),
    but it may be over its first part, when a contact that separates at its start is pushed so as to return
    no faster than it left."""

    x: np.ndarray  # (n, 2) m
    v: np.ndarray  # (n, 2) m/s
    w: np.ndarray  # (n,) rad/s
    held: np.ndarray  # (n,) bool: pushed by a contact in its plan

    @classmethod
    def now(cls, m: Motion, held: np.ndarray) -> _Plans:
        return cls(m.x.copy(), m.v.copy(), m.w.copy(), held.copy())

    def settle(self, g: Outlines, m: Motion, bodies: np.ndarray) -> None:
        """Pay what the plans of ``bodies`` (movable ids) gained (J: kinetic, and the potential of the smooth
        forces) from their kinetic energy."""
        held = bodies[self.held[bodies]]
        if len(held):
            kinetic = _kinetic_energy(g, m.v, m.w, held)
            gain = kinetic - _kinetic_energy(g, self.v, self.w, held)
            pay(m.v, m.w, held, gain + potential_rise(g.inv_mass, m.a_smooth, m.x, self.x, held), kinetic)

    def restart(self, m: Motion, bodies: np.ndarray, pushed: np.ndarray) -> None:
        """New plans for ``bodies`` from now; ``pushed`` the ones a contact holds."""
        self.x[bodies], self.v[bodies], self.w[bodies] = m.x[bodies], m.v[bodies], m.w[bodies]
        self.held[bodies] = False
        self.held[pushed] = True


# ---------------------------------------------------------------- the step
class _Schedule:
    """The next contact time of every candidate entry (s from the step start)."""

    def __init__(self, g: Outlines, tol: Tolerances, m: Motion, lists: Entries, t: float, h: float):
        self.lists = lists
        size = len(lists.entry_i)
        self.time = np.full(size, INF)
        self.real = np.zeros(size, dtype=bool)
        self.quiet = np.zeros(size)  # s from the step start: an entry's search starts here at the earliest
        self.predict(g, tol, m, np.arange(size), t, h)

    def entry(self, q: int) -> tuple[int, int]:
        """Entry q as (i, j), j = -1 - k for wall k."""
        return int(self.lists.entry_i[q]), int(self.lists.entry_j[q])

    def predict(self, g: Outlines, tol: Tolerances, m: Motion, which: np.ndarray, t: float, h: float) -> None:
        """The next contacts of the entries ``which``."""
        kernels.next_contact_times(g, self.lists, m, which, t, h, self.quiet, tol.touch, tol.approach,
                                   self.time, self.real)  # fmt: skip

    def predict_bodies(self, g: Outlines, tol: Tolerances, m: Motion, bodies: np.ndarray, t: float, h: float) -> None:
        """The next contacts of every entry of ``bodies``."""
        self.predict(g, tol, m, kernels.entries_of(self.lists, bodies), t, h)


def _strays(lists: Candidates, m: Motion, bodies: np.ndarray, h_left: float) -> bool:
    """Whether any of ``bodies`` may leave its margin around where the lists were built."""
    off = np.hypot(m.x[bodies, 0] - lists.x_ref[bodies, 0], m.x[bodies, 1] - lists.x_ref[bodies, 1])
    speed = np.hypot(m.v[bodies, 0], m.v[bodies, 1])
    accel = np.hypot(m.a[bodies, 0], m.a[bodies, 1])
    return bool(np.any(off + speed * h_left + 0.5 * accel * h_left**2 > lists.margin[bodies]))


def step(p: Planar, tol: Tolerances, m: Motion, h: float, log: list | None, memory: HeldForces) -> Report:
    """Advance every active body by h s (`Motion` written in place); see the module docstring. ``memory``:
    the held forces by pair, the warm start of each held solve (the updated ones are in the report);
    ``log``: where given, each impact is appended to it (a dict of `carom.Impact`'s fields, time from the
    step start)."""
    n = len(p.size)
    g = outlines(p)
    movable = np.flatnonzero(p.active & (p.inv_mass != 0.0))
    m.a[...] = m.a_smooth
    m.alpha[...] = 0.0
    m.w_drift[...] = m.w
    lists = candidates(p, m, h)
    held = np.zeros(n, dtype=bool)
    since = Since(m.x.copy(), m.angle.copy(), np.empty(len(lists.lists.entry_i)))
    contacts = touching(g, tol, m, lists.lists, movable, since.gap)
    start_lists = lists
    impacts = impact(tol, m, g, lists.coefficients, contacts, h, 0.0, log)
    pushed, memory = hold(tol, m, g, lists.coefficients, contacts, movable, h, h, memory)
    held[pushed] = True
    plans = _Plans.now(m, held)
    schedule = _Schedule(g, tol, m, lists.lists, 0.0, h)
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
            schedule.predict(g, tol, m, np.array([q]), t, h)
            continue
        i, j = schedule.entry(q)
        seeds = np.array([i] if j < 0 else [i, j], dtype=np.int64)
        contacts = touching(g, tol, m, lists.lists, seeds)
        acted = len(contacts.ci) and np.any(_rates(contacts, m.v, m.w, m.x)[:, 0] > tol.approach)
        cluster = np.unique(np.concatenate([seeds, contacts.ci, contacts.cj]))
        cluster = cluster[cluster >= 0]
        movable_cluster = cluster[p.inv_mass[cluster] != 0.0]
        plans.settle(g, m, movable_cluster)
        impacts += impact(tol, m, g, lists.coefficients, contacts, h, t, log)
        pushed, memory = hold(tol, m, g, lists.coefficients, contacts, cluster, h - t, h, memory)
        held[pushed] = True
        plans.restart(m, movable_cluster, pushed)
        events[movable_cluster] += 1
        if np.any(events[movable_cluster] > tol.max_body_events):
            busiest = int(movable_cluster[np.argmax(events[movable_cluster])])
            raise ContactError(f"body {busiest} took part in more than Config.max_body_events="
                               f"{tol.max_body_events} events within one step")
        if _strays(lists, m, cluster, h - t):
            lists = candidates(p, m, h - t)
            schedule = _Schedule(g, tol, m, lists.lists, t, h)
        else:
            schedule.predict_bodies(g, tol, m, cluster, t, h)
        if not acted:  # nothing to resolve: this entry's search goes on from past this touch
            schedule.quiet[q] = t + max(passing_time(p, tol, m, i, j), QUIET_FRACTION * h)
            schedule.predict(g, tol, m, np.array([q]), t, h)
    advance(m, h - t)
    plans.settle(g, m, movable)
    project(tol, m, g, lists.lists, since if lists is start_lists else None)
    return Report(impacts, total, held, memory)
