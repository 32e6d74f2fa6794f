"""The drift of a step: every body on its parabola, every impact resolved at the instant it happens.

Within a step each body moves with a constant acceleration ``a = a_smooth + a_contact``: ``a_smooth``
from the forces evaluated before anything moved (exact for uniform gravity; the drift of kick-drift-kick
leapfrog otherwise), ``a_contact`` from resting-contact normal forces. The drift is an event-driven
simulation over the step: each body keeps its state at its own last event time (advanced lazily, exactly),
the earliest predicted contact of every body sits in an indexed binary heap, and the globally earliest
one is processed next. At an event the touching contacts of the bodies involved are gathered and solved
in rounds (`carom.contact`), the bodies whose velocity changed gather their own contacts in turn, and only
the bodies whose motion changed are re-predicted. A body that strays farther than the broad phase's
sweep margin ends the drift early (status REBUILD) so that the caller can rebuild the candidate lists
and continue.

Resting contact (a Moreau-type step inside the event-driven one). At the start of a drift, the contacts
that touch or are within ``Config.resting_gap`` and would meet no faster than the *resting speed* form
the step's **resting set**. The resting speed is ``Config.resting_speed``, raised to ``dt |a_smooth|``
for bodies that rest on something (they carried a contact force at the end of the last step): constant
contact forces are only right to that speed within a step. Over the resting set, in order:

1. one perfectly inelastic velocity solve (accelerated projected gradient, to 1% of the resting gap per step:
   `carom.step.resting.VELOCITY_SINK_FRACTION`): no contact may approach faster than its gap closes in the
   step;
2. one force solve (a complementarity problem on accelerations, warm-started from the last step's forces):
   each contact's gap stays >= 0 at the end of the step to second order, see `contact_forces`;
3. no events among resting contacts for the rest of the step: a pile is held by forces, not by a
   million micro-impacts. Events still happen between everything else.

An event whose impact reaches a resting contact faster than the resting speed solves it in its rounds
(an impact propagates into a pile); slower ones are left to the forces. After each event the forces of
the contacts gathered are taken off both bodies and solved again, both bodies free. What a step leaves
deeper than ``resting_gap`` is removed by the position projection (`carom.contact.projection.project`), which never
touches velocities. Approaches slower than the resting speed with e < 1 are made perfectly inelastic and
not counted as impacts: the Zeno sequence of an inelastic bouncing ball ends in resting contact after
finitely many impacts. A free body keeps the plain threshold, so its impacts stay exact.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..contact.law import apply_impulse, approach_speed
from ..contact.layout import APPROACH, IMPULSE, RESTITUTION, TARGET
from ..contact.log import log_impact
from ..contact.solver import (
    SolverWork,
    mark_clustered,
    solve_accelerated,
    solve_contacts,
    solver_work,
)
from ..errors import CRUSHED, OK, REBUILD, STALLED
from ..intrinsics import prefetch
from ..jit import inlined, kernel
from ..kinematics import advance, advance_all, spin_all
from ..materials import pair_key, pair_restitution
from ..narrowphase.spheres import pair_gap
from ..shapes import ball_inertia_factor
from .friction import (
    REGIME,
    clear_held,
    force_friction,
    impact_coefficients,
    impact_friction,
    note_regimes,
    record_held,
    spin_contacts,
    start_held,
    take_off_held,
)
from .gather import (
    CONTACT_COLUMNS,
    FORCE,
    GAP,
    RESTING,
    UPDATE,
    expand,
    expand_cluster,
    gather_near,
    record_resting,
)
from .heap import heap_build, heap_update
from .predict import predict_all, predict_body
from .resting import (
    contact_forces,
    inelastic_selection,
    joins_resting_set,
    mark_rested,
    normal_targets,
    pair_resting_speed,
    rest_limit,
)

INF = math.inf


# ---------------------------------------------------------------- the drift
#: Fraction of the step below which the time left after an event counts as this fraction (its forces).
LATE_EVENT = 1e-6


class Bodies(NamedTuple):
    """The bodies' arrays (rows [:n]; `carom.state.BodyState`). The drift moves ``x`` and ``v``, writes the
    total acceleration ``a``, and (merge mode) rewrites the rows of merged bodies."""

    x: np.ndarray  # (n, d) m
    v: np.ndarray  # (n, d) m/s
    a_smooth: np.ndarray  # (n, d) m/s^2: uniform and body forces, from the start of the step
    a: np.ndarray  # (n, d) m/s^2: a_smooth plus the resting-contact forces per mass (written)
    inv_mass: np.ndarray  # (n,) 1/kg, 0 for fixed bodies
    mass: np.ndarray  # (n,) kg
    radius: np.ndarray  # (n,) m
    restitution: np.ndarray  # (n,)
    inv_inertia: np.ndarray  # (n,) 1/(kg m^2), 0 for fixed bodies
    active: np.ndarray  # (n,) bool
    w: np.ndarray  # (n, 3) in 3D, (n, 1) in 2D: angular velocity, rad/s
    alpha: np.ndarray  # (n, 3) or (n, 1) rad/s^2: angular acceleration from friction (written)
    orientation: np.ndarray  # (n, 4) unit quaternions in 3D, (n, 1) angles (rad) in 2D


class Candidates(NamedTuple):
    """The broad phase's candidate lists (`carom.broadphase.candidates`) and the positions they were built
    at: a body farther than ``margin`` from ``x_ref`` ends the drift (status REBUILD)."""

    start: np.ndarray  # (n + 1,) CSR row starts
    nbrs: np.ndarray  # (entries,) neighbour ids, sorted within each row
    large: np.ndarray  # (n,) bool: bodies listed with every other (never stray)
    x_ref: np.ndarray  # (n, d) m
    margin: float  # m


class Walls(NamedTuple):
    """Walls: points on the planes (m), unit normals into the world, restitution."""

    point: np.ndarray  # (k, d)
    normal: np.ndarray  # (k, d)
    restitution: np.ndarray  # (k,)


class Materials(NamedTuple):
    """How coefficients combine (`carom.materials`)."""

    rule: int  # `RULE_CODES`
    keys: np.ndarray  # (p,) sorted pair keys of the overrides
    values: np.ndarray  # (p,) their coefficients


class Carried(NamedTuple):
    """Resting-contact forces (N) at the end of the last step, this step's warm start; the drift writes
    the new wall forces into ``wall_force`` and the new pair forces into `Work`."""

    keys: np.ndarray  # (q,) sorted pair keys (`carom.materials.pair_key`)
    values: np.ndarray  # (q,) N
    wall_force: np.ndarray  # (n, k) N, by body and wall
    walls_held: bool  # whether any wall_force is nonzero
    # with friction, the held contacts' friction forces and torques (N, N m: on body j; on the body), else
    # empty: pairs as ``keys`` (the drift writes the new ones into `FrictionWork.out_held`), walls in place
    friction: np.ndarray  # (q, 6)
    wall_friction: np.ndarray  # (n, k, 6)


class Settings(NamedTuple):
    """Tolerances and switches of one drift (`carom.config.Config`, scaled by the step's speeds)."""

    tol: float  # contact tolerance, fraction of the smaller radius
    resting_gap: float  # fraction of the smaller radius
    rest_reach: float  # m: the gap a contact closes in the step at the largest resting speed
    speed_tol: float  # m/s: approach speeds up to this count as zero
    resting_speed: float  # m/s
    lcp_iterations: int
    lcp_tol_v: float  # m/s: impulse solves
    rest_tol_v: float  # m/s: the resting set's inelastic solve (`VELOCITY_SINK_FRACTION` slop / dt)
    rest_tol_a: float  # m/s^2: force solves
    rest_stall_a: float  # m/s^2: what a force solve that stalls may leave (`carom.step.resting.stall_tolerance`)
    max_rounds: int
    max_body_events: int
    merge: bool  # impact_mode="merge"
    log_enabled: bool  # whether impacts are logged (someone listens)


class Work(NamedTuple):
    """The drift's work arrays (`new_work`). ``f_pair``, ``f_wall``, ``rest_pair``, ``rest_wall`` and
    ``solver.per_body`` must be all zero when a drift starts, and each drift leaves them so."""

    tb: np.ndarray  # (n,) s: each body's own time
    ev_time: np.ndarray  # (n,) s: its next event
    ev_partner: np.ndarray  # (n,) its partner (-1 - k: wall k; NO_PARTNER; friction's REGIME)
    ev_count: np.ndarray  # (n,) the partner's trajectory count when predicted
    cnt: np.ndarray  # (n,) trajectory changes in this drift
    heap_t: np.ndarray  # (n,) `carom.step.heap`
    heap_b: np.ndarray  # (n,)
    where: np.ndarray  # (n,)
    cluster: np.ndarray  # (n,) bodies of the current event
    expanded: np.ndarray  # (n,) bool: contacts gathered at the current event
    rested: np.ndarray  # (n,) bool: carried a contact force at the end of the last step
    nrm: np.ndarray  # (d,) a unit normal
    ci: np.ndarray  # (cap,) contacts (`carom.step.gather`)
    cj: np.ndarray  # (cap,)
    ck: np.ndarray  # (cap,)
    cn: np.ndarray  # (cap, d)
    cw: np.ndarray  # (cap, CONTACT_COLUMNS)
    sel: np.ndarray  # (cap,) contacts of the current solve
    f_pair: np.ndarray  # (entries,) N: resting force by candidate entry
    rest_pair: np.ndarray  # (entries,) bool: in the resting set
    f_wall: np.ndarray  # (n, k) N
    rest_wall: np.ndarray  # (n, k) bool
    out_keys: np.ndarray  # (entries,) the pair forces carried at the end (`carried_forces`)
    out_values: np.ndarray  # (entries,) N
    solver: SolverWork  # the force solver's (`carom.contact.solver.solve_accelerated`); its per_body serves others


class Outcome(NamedTuple):
    """What a drift did."""

    t_end: float  # s from the step start: T, or where it stopped (status other than OK)
    status: int  # `carom.errors`: OK, REBUILD, STALLED or CRUSHED
    impacts: int
    n_log: int  # impacts to log; more than the log holds: grow it, run the drift again from the same state
    capped: bool  # some instant needed more than max_rounds rounds
    events: int
    n_carried: int  # pair forces carried (`carried_forces`)
    deepest: float  # deepest overlap at the start, fraction of the smaller radius (0 if none)
    held: bool  # whether any contact was held by forces
    walls_held: bool  # whether any wall force is nonzero now
    stalled: int  # the body that stopped the drift (STALLED, CRUSHED), else -1


@kernel
def contact_capacity(n, n_wall, n_entry):
    """The most contacts the drift holds at once: each body's candidates and walls, once (a gather takes each
    pair once; an event expands each body at most once)."""
    return n_entry + n * n_wall


def new_work(n: int, dim: int, n_wall: int, n_entry: int) -> Work:
    """The drift's work arrays for n bodies in dim dimensions, n_wall walls and up to n_entry candidate-list
    entries. Kept by the caller from step to step while they fit (`fits`): fresh arrays each step would
    cost more in page faults than the work in them."""
    cap = contact_capacity(n, n_wall, n_entry)
    f, i, b = np.float64, np.int64, np.bool_
    return Work(
        tb=np.empty(n), ev_time=np.empty(n), ev_partner=np.empty(n, i), ev_count=np.empty(n, i), cnt=np.empty(n, i),
        heap_t=np.empty(n), heap_b=np.empty(n, i), where=np.empty(n, i), cluster=np.empty(n, i),
        expanded=np.empty(n, b), rested=np.empty(n, b), nrm=np.empty(dim),
        ci=np.empty(cap, i), cj=np.empty(cap, i), ck=np.empty(cap, i), cn=np.empty((cap, dim)),
        cw=np.empty((cap, CONTACT_COLUMNS)), sel=np.empty(cap, i),
        f_pair=np.zeros(n_entry, f), rest_pair=np.zeros(n_entry, b), f_wall=np.zeros((n, n_wall), f),
        rest_wall=np.zeros((n, n_wall), b), out_keys=np.empty(n_entry, i), out_values=np.empty(n_entry, f),
        solver=solver_work(n, cap, dim),
    )  # fmt: skip


def fits(work: Work | None, n: int, dim: int, n_wall: int, n_entry: int) -> bool:
    """Whether ``work`` serves a drift of n bodies, n_wall walls and n_entry candidate-list entries."""
    return (
        work is not None
        and work.f_wall.shape == (n, n_wall)
        and len(work.nrm) == dim
        and len(work.f_pair) >= n_entry
        and len(work.ci) >= contact_capacity(n, n_wall, n_entry)
    )


def clear_work(work: Work) -> None:
    """Zero the arrays that must be zero between drifts (after a drift cut short by an exception)."""
    for arr in (work.f_pair, work.f_wall, work.rest_pair, work.rest_wall, work.solver.per_body):
        arr[...] = 0


def carried_forces(work: Work, fwork, n_carried: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Copies of the pair-force keys and values (N) that a drift left in ``work``, and their friction forces
    and torques (N, N m; zero without friction) from ``fwork`` (`carom.contact.friction.FrictionWork`)."""
    held = fwork.out_held[:n_carried].copy() if len(fwork.out_held) else np.zeros((n_carried, 6))
    return work.out_keys[:n_carried].copy(), work.out_values[:n_carried].copy(), held


@kernel
def _wall_size(wall_p):
    """The largest wall-point coordinate (m; `wall_slack_bound`)."""
    size = 0.0
    for k in range(wall_p.shape[0]):
        for d in range(wall_p.shape[1]):
            size = max(size, abs(wall_p[k, d]))
    return size


# no reference counting in the event loop (calls on every array): it allocates nothing
@kernel(refcounts=False)
def drift(bodies, lists, walls, materials, fr, carried, s, log, w, fw, t0, T):
    """Advance every active body from t0 to T (s, relative to the step start): the resting set and its
    forces, then every event in time order (an impact solved in rounds, the forces around it solved again,
    what changed predicted again), then the forces carried to the next step. Takes the named tuples above
    (``s``: `Settings`; ``w``: `Work`) and friction's (``fr``: `carom.contact.friction.Friction`, ``fw``: its
    `FrictionWork`; `carom.step.friction`). Returns an `Outcome`.
    """
    dim = bodies.x.shape[1]
    wall_size = _wall_size(walls.point)
    nc, deepest, held, fused = _resting_set(bodies, lists, walls, materials, fr, carried, s, w, fw, wall_size, t0, T)
    n = bodies.x.shape[0]
    x, v, a_smooth, a = bodies.x, bodies.v, bodies.a_smooth, bodies.a
    inv_mass, radius, restitution, active = bodies.inv_mass, bodies.radius, bodies.restitution, bodies.active
    start, nbrs, large, x_ref, margin = lists.start, lists.nbrs, lists.large, lists.x_ref, lists.margin
    wall_p, wall_n, wall_e = walls.point, walls.normal, walls.restitution
    rule, keys, values = materials.rule, materials.keys, materials.values
    tol, resting_gap, speed_tol, resting_speed = s.tol, s.resting_gap, s.speed_tol, s.resting_speed
    lcp_iterations, rest_tol_a, rest_stall_a = s.lcp_iterations, s.rest_tol_a, s.rest_stall_a
    max_body_events, merge = s.max_body_events, s.merge
    tb, ev_time, ev_partner, ev_count, cnt = w.tb, w.ev_time, w.ev_partner, w.ev_count, w.cnt
    heap_t, heap_b, where, cluster, expanded, rested = w.heap_t, w.heap_b, w.where, w.cluster, w.expanded, w.rested
    ci, cj, ck, cn, cw, sel, nrm = w.ci, w.cj, w.ck, w.cn, w.cw, w.sel, w.nrm
    f_pair, rest_pair, f_wall, rest_wall = w.f_pair, w.rest_pair, w.f_wall, w.rest_wall
    impacts = 0
    n_log = np.int64(0)
    capped = False

    # ---- predictions and the heap
    if held or not fused:
        predict_all(t0, T, x, v, a, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n, wall_size,
                     rest_wall, tol, speed_tol, ev_time, ev_partner, False, resting_gap, ci, cj, ck, cn, cw,
                     nrm)  # fmt: skip
    if fr is not None:
        for b in range(n):
            _with_regime(b, fw, ev_time, ev_partner, cnt)
    size = heap_build(ev_time, heap_t, heap_b, where)  # (every trajectory count is 0 until the first event)

    t_now = t0
    status = OK
    events = 0
    stalled = -1  # a body past max_body_events (status STALLED), or crushed (status CRUSHED)
    crushed = -1
    while size > 0:
        i = heap_b[0]
        t_ev = ev_time[i]
        if t_ev > T:
            break
        p = ev_partner[i]
        if 0 <= p < n and (ev_count[i] != cnt[p] or not active[p]):
            ev_time[i], ev_partner[i] = predict_body(
                i, t_now, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n,
                wall_size, rest_wall, tol, speed_tol,
            )  # fmt: skip
            if 0 <= ev_partner[i] < n:
                ev_count[i] = cnt[ev_partner[i]]
            if fr is not None:
                _with_regime(i, fw, ev_time, ev_partner, cnt)
            size = heap_update(heap_t, heap_b, where, size, i, ev_time[i])
            continue
        t_now = t_ev
        events += 1
        # rows read late in this event (the stray check) and by the likely next ones (the heap's runners-up)
        prefetch(x_ref, i)
        prefetch(x_ref, max(p, 0))
        for q in range(1, min(size, 3)):
            prefetch(x, heap_b[q])
            prefetch(v, heap_b[q])
            prefetch(tb, heap_b[q])
            prefetch(start, heap_b[q])
            prefetch(ev_partner, heap_b[q])

        # ---- merge mode: two bodies that meet become one (then the caller rebuilds)
        if merge and 0 <= p < n:
            advance(i, t_now, x, v, a, tb)
            advance(p, t_now, x, v, a, tb)
            merged, n_log = merge_pair(bodies, s, log, n_log, t_now, i, p, nrm)
            if merged:
                impacts += 1
                status = REBUILD
                break

        # ---- gather the contacts of the bodies involved, solve the touching ones in rounds
        nc = np.int64(0)
        n_cluster = np.int64(0)
        if p == REGIME:
            fw.regime[i] = INF
        for b in (i, p if (0 <= p < n and inv_mass[p] != 0.0) else -1):
            if b < 0:
                continue
            advance(b, t_now, x, v, a, tb)
            nc = expand(
                b, t_now, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p, wall_n,
                wall_size, rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw, nc, nrm,
            )  # fmt: skip
            cluster[n_cluster] = b
            n_cluster += 1
        nc, n_cluster, new_impacts, n_log, capped_now, crushed = impact_rounds(
            bodies, lists, walls, materials, fr, s, log, w, fw, wall_size, held, t_now, T, nc, n_cluster, n_log
        )
        impacts += new_impacts
        capped = capped or capped_now

        # ---- the resting set and its forces around the bodies involved: the forces their contacts carried
        # are taken off both bodies and solved anew with both free (neighbours' other contacts as they are)
        ns = 0
        if fr is not None:  # (every spin brought to now before the angular accelerations change)
            spin_contacts(range(nc), ci, cj, t_now, bodies, fw.tw)
        for c in range(nc):
            limit = rest_limit(c, ci, cj, a, a_smooth, rested, T, resting_speed, speed_tol, restitution, wall_e, rule,
                               keys, values)  # fmt: skip
            rests = joins_resting_set(c, ci, cj, cn, cw, v, a_smooth, limit)
            cw[c, UPDATE] = 1.0 if (rests or cw[c, RESTING] != 0.0 or cw[c, FORCE] != 0.0) else 0.0
            cw[c, RESTING] = 1.0 if rests else 0.0
            if cw[c, FORCE] != 0.0:
                apply_impulse(c, -cw[c, FORCE], ci, cj, cn, a, inv_mass)
                if fr is not None:
                    take_off_held(c, ci, cj, ck, start, nbrs, bodies, fw)
            if rests:
                sel[ns] = c
                ns += 1
        if ns:
            # (an event in the last millionth of the step solves its forces as if a millionth were left: they
            # stop an approach within that time, and carried to the next step's warm start, forces for a
            # vanishing remainder, ``u / h``, would be unbounded)
            h_left = max(T - t_now, LATE_EVENT * T)
            contact_forces(sel[:ns], ci, cj, cn, cw, x, v, a, inv_mass, w.solver, h_left, lcp_iterations,
                           rest_tol_a, rest_stall_a)  # fmt: skip
            held = True
            if fr is not None:
                force_friction(sel[:ns], ci, cj, cn, cw, t_now, h_left, bodies, fr, fw, w.solver.per_body,
                               lcp_iterations, rest_tol_a, speed_tol)  # fmt: skip
        if fr is not None:  # the next changes of regime of the bodies whose every contact was gathered
            for q in range(n_cluster):
                fw.regime[cluster[q]] = INF
            note_regimes(sel[:ns], ci, cj, cn, t_now, bodies, fw, speed_tol)
        for c in range(nc):
            if cw[c, UPDATE] == 0.0:  # free before and after: nothing to record
                continue
            record_resting(c, cw[c, IMPULSE] if cw[c, RESTING] != 0.0 else 0.0, ci, cj, ck, cw, start, nbrs, rest_pair,
                    f_pair, rest_wall, f_wall)  # fmt: skip
            if fr is not None:
                record_held(c, cw[c, RESTING] != 0.0, ci, cj, ck, cn, start, nbrs, bodies, fw)
            for b in (ci[c], cj[c]):  # every body whose acceleration changed is re-predicted
                if b >= 0 and inv_mass[b] != 0.0 and not expanded[b]:
                    expanded[b] = True
                    cluster[n_cluster] = b
                    n_cluster += 1

        # ---- re-predict what changed
        for q in range(n_cluster):
            b = cluster[q]
            expanded[b] = False
            cnt[b] += 1
            if cnt[b] > max_body_events:
                stalled = b
        stray = False
        for q in range(n_cluster):
            b = cluster[q]
            if not large[b]:
                h = T - t_now
                off = 0.0
                vv = 0.0
                aa = 0.0
                for d in range(dim):
                    off += (x[b, d] - x_ref[b, d]) ** 2
                    vv += v[b, d] ** 2
                    aa += a[b, d] ** 2
                if math.sqrt(off) + math.sqrt(vv) * h + 0.5 * math.sqrt(aa) * h * h > margin:
                    stray = True
            ev_time[b], ev_partner[b] = predict_body(
                b, t_now, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n,
                wall_size, rest_wall, tol, speed_tol,
            )  # fmt: skip
            if fr is not None:
                _with_regime(b, fw, ev_time, ev_partner, cnt)
            q_partner = ev_partner[b]
            if 0 <= q_partner < n:
                ev_count[b] = cnt[q_partner]
                if inv_mass[q_partner] != 0.0 and ev_time[b] < ev_time[q_partner]:
                    ev_time[q_partner] = ev_time[b]
                    ev_partner[q_partner] = b
                    ev_count[q_partner] = cnt[b]
                    size = heap_update(heap_t, heap_b, where, size, q_partner, ev_time[q_partner])
            size = heap_update(heap_t, heap_b, where, size, b, ev_time[b])
        if stray:
            status = REBUILD
            break
        if stalled >= 0:
            status = STALLED
            break
        if crushed >= 0:
            status = CRUSHED
            stalled = crushed
            break


    t_end = T if status == OK else t_now
    advance_all(t_end, x, v, a, tb, active)
    if fr is not None:
        spin_all(t_end, bodies.w, bodies.alpha, bodies.orientation, fw.tw, active)
    n_carried, walls_held = _carry_out(bodies, lists, carried, w, fr is not None, fw, held)
    if fr is not None:
        clear_held(fw)
    return Outcome(t_end, status, impacts, n_log, capped, events, n_carried, deepest, held, walls_held, stalled)


# no reference counting (called on every event): it allocates nothing
@kernel(refcounts=False)
def impact_rounds(
    bodies, lists, walls, materials, fr, settings, log, w, fw, wall_size, held, t_now, T, nc, n_cluster, n_log
):
    """The impacts of one instant ``t_now`` (s; ``T`` the end of the step), solved together in rounds: each round
    solves every touching contact of the ``nc`` gathered in ``w`` that approaches now (resting ones only faster
    than their resting speed), perfectly inelastic below the resting speed, and gathers the contacts of every
    body it pushed; past ``s.max_rounds`` rounds the whole touching cluster at once, inelastic. The drift's
    event and `carom.step.ias15`'s impacts share it. Returns (nc, n_cluster: contacts and bodies gathered now,
    impacts, n_log, capped, crushed: a body no velocities satisfy, else -1)."""
    dim = bodies.x.shape[1]
    x, v, a, a_smooth = bodies.x, bodies.v, bodies.a, bodies.a_smooth
    inv_mass, radius, restitution, active = bodies.inv_mass, bodies.radius, bodies.restitution, bodies.active
    start, nbrs = lists.start, lists.nbrs
    wall_p, wall_n, wall_e = walls.point, walls.normal, walls.restitution
    rule, keys, values = materials.rule, materials.keys, materials.values
    tol, speed_tol, resting_speed, merge = settings.tol, settings.speed_tol, settings.resting_speed, settings.merge
    lcp_iterations, lcp_tol_v = settings.lcp_iterations, settings.lcp_tol_v
    max_rounds, log_enabled = settings.max_rounds, settings.log_enabled
    tb, cluster, expanded, rested = w.tb, w.cluster, w.expanded, w.rested
    ci, cj, ck, cn, cw, sel, nrm = w.ci, w.cj, w.ck, w.cn, w.cw, w.sel, w.nrm
    f_pair, rest_pair, f_wall, rest_wall = w.f_pair, w.rest_pair, w.f_wall, w.rest_wall
    impacts = 0
    capped = False
    crushed = -1
    rounds = 0
    while True:
        # A round: the touching contacts that approach, except resting ones approaching slower than the
        # resting speed (their forces take care of them: an impulse must not run through a whole pile).
        ns = 0
        for c in range(nc):
            u = approach_speed(c, ci, cj, cn, v)
            if u > speed_tol and cw[c, GAP] == 0.0 and (
                cw[c, RESTING] == 0.0 or u > pair_resting_speed(ci[c], cj[c], a, a_smooth, rested, T, resting_speed)
            ):
                sel[ns] = c
                ns += 1
                cw[c, APPROACH] = u
        if ns == 0:
            break
        rounds += 1
        if rounds > 2 * max_rounds:  # no velocities satisfy these contacts: a body is crushed
            crushed = ci[sel[0]]
            break
        capped_now = rounds > max_rounds
        capped = capped or capped_now
        resting_only = True
        for s in range(ns):
            c = sel[s]
            e = pair_restitution(ci[c], cj[c], restitution, wall_e, rule, keys, values)
            if e < 1.0 and cw[c, APPROACH] <= pair_resting_speed(ci[c], cj[c], a, a_smooth, rested, T,
                                                                 resting_speed):  # fmt: skip
                e = 0.0
            cw[c, RESTITUTION] = e
            cw[c, TARGET] = e * cw[c, APPROACH]
            resting_only = resting_only and e == 0.0
        if capped_now:  # the whole touching cluster, or each round would still reach one body further
            nc, n_cluster = expand_cluster(
                t_now, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p, wall_n,
                wall_size, rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw, nc, nrm, cluster,
                n_cluster,
            )  # fmt: skip
        if resting_only or capped_now:
            # Resting contact (or too many rounds): every touching contact that is not already resting
            # at once, perfectly inelastic. Sequential rounds would shrink such approaches only
            # geometrically.
            ns = inelastic_selection(sel, ci, cj, cn, cw, v, a, a_smooth, rested, T, resting_speed, nc, capped_now)
        if fr is not None and impact_coefficients(sel[:ns], ci, cj, radius, fr, fw):
            # every contact at once, from the same velocities: in any order the same
            solve_accelerated(sel[:ns], ci, cj, cn, cw[:, TARGET], v, inv_mass, cw[:, IMPULSE], w.solver,
                              lcp_iterations, lcp_tol_v, np.bool_(False), 0.0)  # fmt: skip
            impact_friction(sel[:ns], ci, cj, cn, cw, t_now, bodies, fw, w.solver.per_body, lcp_iterations,
                            lcp_tol_v)  # fmt: skip
        else:
            solve_contacts(sel[:ns], ci, cj, cn, cw[:, TARGET], v, inv_mass, cw[:, IMPULSE], lcp_iterations,
                           lcp_tol_v)  # fmt: skip
        for s in range(ns):
            c = sel[s]
            if cw[c, IMPULSE] <= 0.0:
                continue
            e_pair = pair_restitution(ci[c], cj[c], restitution, wall_e, rule, keys, values)
            v_rest = pair_resting_speed(ci[c], cj[c], a, a_smooth, rested, T, resting_speed)
            if e_pair == 1.0 or cw[c, APPROACH] > v_rest:
                impacts += 1
                if log_enabled:
                    n_log = log_impact(log, n_log, t_now, ci[c], cj[c], cn[c], 1.0, cw[c, IMPULSE], cw[c, APPROACH],
                                       cw[c, RESTITUTION])  # fmt: skip
                    if fr is not None and n_log <= len(log.time):
                        for d in range(dim):
                            log.tangential[n_log - 1, d] = fw.force[c, d]
            for b in (ci[c], cj[c]):
                if b >= 0 and inv_mass[b] != 0.0 and not expanded[b]:
                    nc = expand(
                        b, t_now, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p,
                        wall_n, wall_size, rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw, nc,
                        nrm,
                    )  # fmt: skip
                    cluster[n_cluster] = b
                    n_cluster += 1

    return nc, n_cluster, impacts, n_log, capped, crushed


#: Friction regime events one body may have in a step (`carom.step.friction`): a ball needs one or two (slides,
#: rolls, stops). Contacts in a dense pile can flip between sticking and slipping ever faster (each flip
#: changes its neighbours' forces); past this many events, a body's regimes are held to the end of the step.
REGIME_EVENTS = 32


@inlined
def _with_regime(b, fw, ev_time, ev_partner, cnt):
    """Body b's next event: its predicted contact, or its next change of friction regime if earlier (while it
    has had fewer than `REGIME_EVENTS` events in this drift)."""
    if fw.regime[b] < ev_time[b] and cnt[b] < REGIME_EVENTS:
        ev_time[b] = fw.regime[b]
        ev_partner[b] = REGIME


@kernel(refcounts=False)
def _resting_set(bodies, lists, walls, materials, fr, carried, s, w, fw, wall_size, t0, T):
    """Start a drift: every body at t0 with its smooth acceleration, the near contacts gathered, and the
    resting set over them: one perfectly inelastic velocity solve and one force solve (warm-started from
    the forces carried), no events among them for the rest of the step. Where the last step held no
    contact (a gas), the near contacts are gathered in the pass that predicts (``fused``), and those
    predictions stand unless some contact joins the resting set now.

    Returns (contacts gathered, the deepest overlap as a fraction of the smaller radius, whether any
    contact is held by forces, whether the predictions were made)."""
    x, v, a_smooth, a = bodies.x, bodies.v, bodies.a_smooth, bodies.a
    inv_mass, radius, restitution, active = bodies.inv_mass, bodies.radius, bodies.restitution, bodies.active
    start, nbrs = lists.start, lists.nbrs
    wall_p, wall_n, wall_e = walls.point, walls.normal, walls.restitution
    rule, keys, values = materials.rule, materials.keys, materials.values
    force_keys, force_values, wall_force = carried.keys, carried.values, carried.wall_force
    tol, resting_gap, speed_tol, resting_speed, merge = s.tol, s.resting_gap, s.speed_tol, s.resting_speed, s.merge
    lcp_iterations, rest_tol_v, rest_tol_a = s.lcp_iterations, s.rest_tol_v, s.rest_tol_a
    rest_stall_a = s.rest_stall_a
    tb, ev_time, ev_partner, ev_count, cnt, expanded, rested = w.tb, w.ev_time, w.ev_partner, w.ev_count, w.cnt, \
        w.expanded, w.rested
    ci, cj, ck, cn, cw, sel, nrm = w.ci, w.cj, w.ck, w.cn, w.cw, w.sel, w.nrm
    f_pair, rest_pair, f_wall, rest_wall = w.f_pair, w.rest_pair, w.f_wall, w.rest_wall
    n, dim = x.shape
    tb[:] = t0
    cnt[:] = 0
    ev_count[:] = 0
    expanded[:] = False
    mark_rested(n, force_keys, force_values, wall_force, carried.walls_held, rested)
    # ---- the resting set: slow contacts, touching or within resting_gap; one inelastic velocity solve and
    # one force solve over all of them, and no events among them in this step
    for b in range(n):
        for d in range(dim):
            a[b, d] = a_smooth[b, d]
    if fr is not None:
        bodies.alpha[:] = 0.0
        fw.tw[:] = t0
        fw.regime[:] = INF
    h = T - t0
    # Where the last step held no contact (a gas), the near contacts are gathered in the pass that predicts,
    # and the predictions stand unless some contact joins the resting set now. That pass leaves out the
    # contacts that could close within the step but do not touch (Settings.rest_reach): with nothing held,
    # they are events; once something rests, they join the resting set.
    fused = not merge and len(force_keys) == 0 and not carried.walls_held
    if fused:
        nc, deepest = predict_all(t0, T, x, v, a, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n,
                                   wall_size, rest_wall, tol, speed_tol, ev_time, ev_partner, True, resting_gap,
                                   ci, cj, ck, cn, cw, nrm)  # fmt: skip
    else:
        nc, deepest = gather_near(x, radius, inv_mass, active, start, nbrs, wall_p, wall_n, wall_size, tol,
                                   resting_gap, s.rest_reach, merge, ci, cj, ck, cn, cw, nrm)  # fmt: skip
    held = False  # whether any contact was in the resting set (held by forces)
    if nc and h > 0.0:  # (a drift that resumes exactly at the end of the step moves nothing)
        ns = 0
        slow = False
        for c in range(nc):
            limit = rest_limit(c, ci, cj, a, a_smooth, rested, T, resting_speed, speed_tol, restitution, wall_e, rule,
                               keys, values)  # fmt: skip
            if joins_resting_set(c, ci, cj, cn, cw, v, a_smooth, limit):
                u = approach_speed(c, ci, cj, cn, v)
                cw[c, RESTING] = 1.0
                sel[ns] = c
                ns += 1
                # (an overlap is not pushed apart: that would add energy; the projection removes it)
                closing = max(cw[c, GAP], 0.0) / h
                cw[c, TARGET] = -closing
                slow = slow or u > closing + speed_tol
        if slow:  # perfectly inelastic: approach no faster than the gap can take (all at once, in any order)
            solve_accelerated(sel[:ns], ci, cj, cn, cw[:, TARGET], v, inv_mass, cw[:, IMPULSE], w.solver,
                              lcp_iterations, rest_tol_v, np.bool_(False), 0.0)  # fmt: skip
            if fr is not None and impact_coefficients(sel[:ns], ci, cj, radius, fr, fw):
                impact_friction(sel[:ns], ci, cj, cn, cw, t0, bodies, fw, w.solver.per_body, lcp_iterations,
                                rest_tol_v)  # fmt: skip
        # warm start: each contact's force at the end of the last step (by pair key), and with
        # friction, the contacts held in a cluster start from their friction too
        n_lone = _lone_first(sel, ns, ci, cj, inv_mass, w.solver.per_body, fw.held) if fr is not None else ns
        warm_friction = fr is not None and len(carried.friction) == len(force_keys)
        for s in range(ns):
            c = sel[s]
            i, j = ci[c], cj[c]
            f = 0.0
            k = -1
            if j < 0:
                f = wall_force[i, -1 - j]
            elif len(force_keys):
                key = pair_key(i, j)
                k = np.searchsorted(force_keys, key)
                if k < len(force_keys) and force_keys[k] == key:
                    f = force_values[k]
            cw[c, IMPULSE] = f
            if f != 0.0:
                apply_impulse(c, f, ci, cj, cn, a, inv_mass)
            if fr is not None:
                for d in range(3):
                    fw.force[c, d] = 0.0
                    fw.torque[c, d] = 0.0
                if s >= n_lone and f != 0.0:
                    if j < 0:
                        start_held(c, carried.wall_friction[i, -1 - j], ci, cj, cn, bodies, fw)
                    elif warm_friction:
                        start_held(c, carried.friction[k], ci, cj, cn, bodies, fw)
        # Without friction, every force is solved here. With it, only the lone contacts' normal forces: a
        # cluster's normal and friction rows are solved together from the warm start (`force_friction`),
        # and a solve of its normal rows alone would only move them towards the frictionless answer.
        tol_n = normal_targets(sel[:ns], ci, cj, cn, cw, x, v, h, rest_tol_a)
        solve_accelerated(sel[:n_lone], ci, cj, cn, cw[:, TARGET], a, inv_mass, cw[:, IMPULSE], w.solver,
                          lcp_iterations, tol_n, np.bool_(True), rest_stall_a)  # fmt: skip
        if fr is not None:
            force_friction(sel[:ns], ci, cj, cn, cw, t0, h, bodies, fr, fw, w.solver.per_body, lcp_iterations,
                           rest_tol_a, speed_tol, True)  # fmt: skip
            note_regimes(sel[:ns], ci, cj, cn, t0, bodies, fw, speed_tol)
        held = ns > 0
        for s in range(ns):
            c = sel[s]
            record_resting(c, cw[c, IMPULSE], ci, cj, ck, cw, start, nbrs, rest_pair, f_pair, rest_wall, f_wall)
            if fr is not None:
                record_held(c, True, ci, cj, ck, cn, start, nbrs, bodies, fw)

    return nc, deepest, held, fused


@kernel
def _lone_first(sel, ns, ci, cj, inv_mass, per_body, clustered):
    """Order ``sel[:ns]`` so that the contacts whose movable bodies touch nothing else among them come first,
    and mark the others in ``clustered`` (by contact; `mark_clustered`). ``per_body`` is a (bodies,) array
    that must be all zero (it is left so). Returns how many are lone."""
    mark_clustered(sel[:ns], ci, cj, inv_mass, per_body, clustered)
    n_lone = 0
    for s in range(ns):
        c = sel[s]
        if not clustered[c]:
            sel[s] = sel[n_lone]
            sel[n_lone] = c
            n_lone += 1
    return n_lone


@kernel(refcounts=False)
def _carry_out(bodies, lists, carried, w, friction, fw, held):
    """End a drift: the resting forces carried to the next step's warm start (pairs into ``w.out_keys``,
    ``w.out_values``; walls into ``carried.wall_force``; with ``friction``, their friction into
    ``fw.out_held`` and ``carried.wall_friction``), and the resting set cleared for the next drift (with no
    contact held, it is clear already). Returns (pair forces carried, whether any wall force is nonzero)."""
    n = bodies.x.shape[0]
    start, nbrs = lists.start, lists.nbrs
    f_pair, rest_pair, f_wall, rest_wall = w.f_pair, w.rest_pair, w.f_wall, w.rest_wall
    n_carried = 0
    if held:
        for b in range(n):
            for m in range(start[b], start[b + 1]):
                if f_pair[m] != 0.0 and nbrs[m] > b:
                    w.out_keys[n_carried] = pair_key(b, nbrs[m])
                    w.out_values[n_carried] = f_pair[m]
                    if friction:
                        for d in range(6):
                            fw.out_held[n_carried, d] = fw.pair_held[m, d]
                    n_carried += 1
        f_pair[:] = 0.0
        rest_pair[:] = False
    walls_held = carried.walls_held
    if held or walls_held:
        walls_held = False
        for b in range(n):
            for k in range(f_wall.shape[1]):
                carried.wall_force[b, k] = f_wall[b, k]
                walls_held = walls_held or f_wall[b, k] != 0.0
                if friction:
                    for d in range(6):
                        carried.wall_friction[b, k, d] = fw.wall_held[b, k, d]
        f_wall[:] = 0.0
        rest_wall[:] = False
    return n_carried, walls_held


@kernel
def merge_pair(bodies, settings, log, n_log, t_now, i, p, nrm):
    """Merge mode: bodies i and p (both at ``t_now``) become one if they touch (`_merge`), the impact logged.
    Returns (whether they merged, n_log)."""
    x, v, inv_mass = bodies.x, bodies.v, bodies.inv_mass
    if pair_gap(i, p, x, bodies.radius, settings.tol, nrm) != 0.0:
        return False, n_log
    u = 0.0
    for d in range(x.shape[1]):
        u += (v[i, d] - v[p, d]) * nrm[d]
    mu = 0.0
    if inv_mass[i] + inv_mass[p] > 0.0:
        mu = 1.0 / (inv_mass[i] + inv_mass[p])
    if settings.log_enabled:
        n_log = log_impact(log, n_log, t_now, i, p, nrm, 1.0, mu * max(u, 0.0), u, 0.0)
    _merge(min(i, p), max(i, p), x, v, bodies.a_smooth, inv_mass, bodies.mass, bodies.radius, bodies.inv_inertia,
           bodies.active, x.shape[1])  # fmt: skip
    return True, n_log


@kernel
def resolve_instant(bodies, lists, walls, materials, fr, settings, log, w, fw, i, p):
    """The impact of bodies i and p (p = -1 - k: wall k), touching now, every body at this instant (time 0) and
    no contact held: in merge mode two bodies merge; otherwise it is solved in rounds (`impact_rounds`) with
    every contact it reaches. `carom.step.ias15`'s impacts. Returns (impacts, n_log, capped, crushed)."""
    n = bodies.x.shape[0]
    w.tb[:] = 0.0
    w.rested[:] = False
    if settings.merge and 0 <= p < n:
        merged, n_log = merge_pair(bodies, settings, log, np.int64(0), 0.0, i, p, w.nrm)
        return (1 if merged else 0), n_log, False, -1
    wall_size = _wall_size(walls.point)
    nc = np.int64(0)
    n_cluster = np.int64(0)
    held = np.bool_(False)  # (no contact held; typed as the drift's flag, so the kernels below compile once)
    for b in (i, p if (0 <= p < n and bodies.inv_mass[p] != 0.0) else -1):
        if b < 0:
            continue
        nc = expand(
            b, 0.0, bodies.x, bodies.v, bodies.a, w.tb, bodies.radius, bodies.inv_mass, bodies.active, lists.start,
            lists.nbrs, w.rest_pair, w.f_pair, walls.point, walls.normal, wall_size, w.rest_wall, w.f_wall, held,
            settings.tol, settings.merge, w.expanded, w.ci, w.cj, w.ck, w.cn, w.cw, nc, w.nrm,
        )  # fmt: skip
        w.cluster[n_cluster] = b
        n_cluster += 1
    nc, n_cluster, impacts, n_log, capped, crushed = impact_rounds(
        bodies, lists, walls, materials, fr, settings, log, w, fw, wall_size, held, 0.0, 0.0, nc, n_cluster,
        np.int64(0),
    )
    for q in range(n_cluster):
        w.expanded[w.cluster[q]] = False
    return impacts, n_log, capped, crushed


@kernel
def _merge(s, o, x, v, a_smooth, inv_mass, mass, radius, inv_inertia, active, dim):
    """Body o joins body s: mass, momentum and volume (area in 2D) conserved, placed at the centre of
    mass. If either is fixed the result is fixed, where the fixed one is."""
    fixed_s = inv_mass[s] == 0.0
    fixed_o = inv_mass[o] == 0.0
    if fixed_s or fixed_o:
        if fixed_o:
            for d in range(dim):
                x[s, d] = x[o, d]
                v[s, d] = v[o, d]
        for d in range(dim):
            a_smooth[s, d] = 0.0
        inv_mass[s] = 0.0
        mass[s] = mass[s] + mass[o]
    else:
        m = mass[s] + mass[o]
        for d in range(dim):
            x[s, d] = (mass[s] * x[s, d] + mass[o] * x[o, d]) / m
            v[s, d] = (mass[s] * v[s, d] + mass[o] * v[o, d]) / m
            a_smooth[s, d] = (mass[s] * a_smooth[s, d] + mass[o] * a_smooth[o, d]) / m
        mass[s] = m
        inv_mass[s] = 1.0 / m
    power = 3.0 if dim == 3 else 2.0
    radius[s] = (radius[s] ** power + radius[o] ** power) ** (1.0 / power)
    inv_inertia[s] = inv_mass[s] / (ball_inertia_factor(dim) * radius[s] ** 2)
    active[o] = False

