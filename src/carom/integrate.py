"""The drift of a step: every body on its parabola, every impact resolved at the instant it happens.

Within a step each body moves with a constant acceleration ``a = a_smooth + a_contact``: ``a_smooth``
from the forces evaluated before anything moved (exact for uniform gravity; the drift of kick-drift-kick
leapfrog otherwise), ``a_contact`` from resting-contact normal forces. The drift is an event-driven
simulation over the step: each body keeps its state at its own last event time (advanced lazily, exactly),
the earliest predicted contact of every body sits in an indexed binary heap, and the globally earliest
one is processed next. At an event the touching contacts of the bodies involved are gathered and solved
in rounds (`carom.solver`), the bodies whose velocity changed gather their own contacts in turn, and only
the bodies whose motion changed are re-predicted. A body that strays farther than the broad phase's
sweep margin ends the drift early (status REBUILD) so that the caller can rebuild the candidate lists
and continue.

Resting contact (a Moreau-type step inside the event-driven one). At the start of a drift, the contacts
that touch or are within ``Config.resting_gap`` and would meet no faster than the *resting speed* form
the step's **resting set**. The resting speed is ``Config.resting_speed``, raised to ``dt |a_smooth|``
for bodies that rest on something (they carried a contact force at the end of the last step): constant
contact forces are only right to that speed within a step. Over the resting set, in order:

1. one perfectly inelastic velocity solve: no contact may approach faster than its gap closes in the step;
2. one force solve (a complementarity problem on accelerations, warm-started from the last step's forces):
   each contact's gap stays >= 0 at the end of the step to second order, see `_contact_forces`;
3. no events among resting contacts for the rest of the step: a pile is held by forces, not by a
   million micro-impacts. Events still happen between everything else.

An event whose impact reaches a resting contact faster than the resting speed solves it in its rounds
(an impact propagates into a pile); slower ones are left to the forces. After each event the forces of
the contacts gathered are taken off both bodies and solved again, both bodies free. What a step leaves
deeper than ``resting_gap`` is removed by the position projection (`carom.world._project`), which never
touches velocities. Approaches slower than the resting speed with e < 1 are made perfectly inelastic and
not counted as impacts: the Zeno sequence of an inelastic bouncing ball ends in resting contact after
finitely many impacts. A free body keeps the plain threshold, so its impacts stay exact.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .config import ROUNDOFF
from .narrowphase import _contact_time, _out_of_reach, _relative_products, _wall_contact_time
from .solver import _apply_impulse, _approach_speed, _pair_restitution, _solve_contacts
from .state import _prefetch

DONE = 0
REBUILD = 1
STALLED = 2
CRUSHED = 3
INF = math.inf
NO_PARTNER = np.iinfo(np.int64).max
#: Bodies ahead whose neighbours' rows a scan over candidate lists prefetches.
PREFETCH_AHEAD = 8


# ---------------------------------------------------------------- indexed binary min-heap of event times
# Only bodies with an event within the step are in it (a few per cent of a gas), and each entry holds its
# time beside its body, so that sifting reads two small arrays instead of event times all over memory.
# Entries are ordered by time, then body id: the order of events does not depend on the heap's history.
@njit(cache=True, inline="always")
def _before(heap_t, heap_b, p, q):
    """Whether heap entry p comes before entry q (no short-circuit: a branch around array reads would
    make Numba count references)."""
    return (heap_t[p] < heap_t[q]) | ((heap_t[p] == heap_t[q]) & (heap_b[p] < heap_b[q]))


@njit(cache=True, inline="always")
def _heap_swap(heap_t, heap_b, where, p, q):
    heap_t[p], heap_t[q] = heap_t[q], heap_t[p]
    heap_b[p], heap_b[q] = heap_b[q], heap_b[p]
    where[heap_b[p]] = p
    where[heap_b[q]] = q


@njit(cache=True)
def _sift(heap_t, heap_b, where, size, p):
    """Move entry p, the only one out of order, up or down to its place."""
    while p > 0 and _before(heap_t, heap_b, p, (p - 1) >> 1):
        _heap_swap(heap_t, heap_b, where, p, (p - 1) >> 1)
        p = (p - 1) >> 1
    _sift_down(heap_t, heap_b, where, size, p)


@njit(cache=True)
def _sift_down(heap_t, heap_b, where, size, p):
    """Move entry p down to its place below."""
    while True:
        first = p
        for child in range(2 * p + 1, min(2 * p + 3, size)):
            if _before(heap_t, heap_b, child, first):
                first = child
        if first == p:
            return
        _heap_swap(heap_t, heap_b, where, p, first)
        p = first


@njit(cache=True)
def _heap_build(ev_time, heap_t, heap_b, where):
    """A heap of every body with a finite event time; ``where[b]`` is b's entry, -1 if none. Returns its size."""
    size = 0
    for b in range(len(ev_time)):
        where[b] = -1
        if ev_time[b] < INF:
            heap_t[size] = ev_time[b]
            heap_b[size] = b
            where[b] = size
            size += 1
    for p in range(size // 2 - 1, -1, -1):
        _sift_down(heap_t, heap_b, where, size, p)
    return size


@njit(cache=True)
def _heap_update(heap_t, heap_b, where, size, body, t):
    """Give ``body`` the event time t (s): insert, move or (t = inf) remove its entry. Returns the new size."""
    p = where[body]
    if p < 0:
        if t == INF:
            return size
        p = size
        size += 1
        heap_b[p] = body
        where[body] = p
    elif t == INF:
        where[body] = -1
        size -= 1
        if p == size:
            return size
        heap_b[p] = heap_b[size]
        where[heap_b[p]] = p
        t = heap_t[size]
    heap_t[p] = t
    _sift(heap_t, heap_b, where, size, p)
    return size


# ---------------------------------------------------------------- kinematics
@njit(cache=True, inline="always")
def _advance(b, t, x, v, a, tb):
    """Move body b along its parabola to time t (exact; a body already at t is left as it is).

    No branch on ``t == tb[b]``: a branch around array accesses in an inlined helper keeps Numba from
    pruning its reference counting, which then costs more than the arithmetic."""
    h = t - tb[b]
    for d in range(x.shape[1]):
        x[b, d] += v[b, d] * h + 0.5 * a[b, d] * h * h
        v[b, d] += a[b, d] * h
    tb[b] = t


@njit(cache=True, inline="always")
def _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol):
    """Time of the next contact of bodies i and j (both at time t) in [t, T], or inf; the same to the last
    bit for (j, i). Pairs out of reach are rejected here, before any call (`narrowphase._out_of_reach`)."""
    s = radius[i] + radius[j]
    slack = _slack(i, j, x, radius, tol)
    reach2 = (s + slack) ** 2
    xx, xv, vv, xa, va, aa, approach = _relative_products(x[i], x[j], v[i], v[j], a[i], a[j], reach2)
    if xx > reach2 and _out_of_reach(xx, vv, aa, s, T - t):
        return INF
    return t + _contact_time(xx, xv, vv, xa, va, aa, approach, s, slack, T - t, speed_tol)


@njit(cache=True, inline="always")
def _predict(i, t, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n, wall_size,
             rest_wall, tol, speed_tol):  # fmt: skip
    """Earliest contact of body i in [t, T]: (time, partner); partner < 0 is wall -1 - partner. Contacts in
    the step's resting set (``rest_pair`` by candidate entry, ``rest_wall``) have no events.

    Body i and its neighbours are first advanced to t, so that "touching" and "approaching" are decided
    on exactly the numbers the event itself will see."""
    best = INF
    partner = NO_PARTNER
    _advance(i, t, x, v, a, tb)
    for m in range(start[i], start[i + 1]):
        j = nbrs[m]
        if not active[j] or rest_pair[m] or (inv_mass[i] == 0.0 and inv_mass[j] == 0.0):
            continue
        _advance(j, t, x, v, a, tb)
        t_c = _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol)
        if t_c < best:
            best = t_c
            partner = j
    if inv_mass[i] != 0.0:
        best, partner = _wall_event(i, t, T, x, v, a, radius, wall_p, wall_n, wall_size, rest_wall, tol, speed_tol,
                                    best, partner)  # fmt: skip
    return best, partner


@njit(cache=True, inline="always")
def _wall_event(i, t, T, x, v, a, radius, wall_p, wall_n, wall_size, rest_wall, tol, speed_tol, best, partner):
    """The earlier of (``best``, ``partner``) and body i's first wall contact in [t, T] (partner -1 - k for
    wall k); resting walls have no events. A wall is first tested by its plane gap alone: beyond
    `_wall_reach`, it is out of reach, as `narrowphase._wall_contact_time` would find."""
    reach = _wall_reach(i, x, v, a, radius, wall_size, tol, T - t)
    for k in range(_walls_within(i, reach, x, radius, wall_p, wall_n)):
        if _plane_gap(i, k, x, radius, wall_p, wall_n) > reach or rest_wall[i, k]:
            continue
        t_c = _wall_time(i, k, t, T, x, v, a, radius, wall_p, wall_n, tol, speed_tol)
        if t_c < best:
            best = t_c
            partner = -1 - k
    return best, partner


@njit(cache=True, inline="always")
def _walls_within(b, reach, x, radius, wall_p, wall_n):
    """How many walls a loop over body b's walls must visit: all of them if one has a plane gap of at most
    ``reach`` (m), none otherwise. Most bodies are far from every wall: one branch instead of one per wall."""
    nearest = INF
    for k in range(wall_p.shape[0]):
        nearest = min(nearest, _plane_gap(b, k, x, radius, wall_p, wall_n))
    return wall_p.shape[0] if nearest <= reach else 0


@njit(cache=True, inline="always")
def _wall_slack_bound(b, x, radius, wall_size, tol):
    """An upper bound (m) of `_wall_slack` of body b for every wall, ``wall_size`` the largest wall-point
    coordinate: the same operations on a size no smaller (rounding is monotone)."""
    size = wall_size
    for d in range(x.shape[1]):
        size = max(size, abs(x[b, d]))
    return tol * radius[b] + ROUNDOFF * size


@njit(cache=True, inline="always")
def _wall_reach(b, x, v, a, radius, wall_size, tol, horizon):
    """A gap (m) beyond which body b touches no wall within ``horizon`` (s): `_wall_slack_bound` plus
    ``2 (|v|_1 h + |a|_1 h^2)``, which bounds ``|n.v| h + |n.a| h^2 / 2`` for every unit normal n, round-off
    included: beyond it, `narrowphase._wall_contact_time` returns inf by its own rejection test."""
    speed = 0.0
    accel = 0.0
    for d in range(x.shape[1]):
        speed += abs(v[b, d])
        accel += abs(a[b, d])
    return _wall_slack_bound(b, x, radius, wall_size, tol) + 2.0 * (speed * horizon + accel * horizon * horizon)


@njit(cache=True, inline="always")
def _plane_gap(b, k, x, radius, wall_p, wall_n):
    """Signed gap (m) of body b from the plane of wall k."""
    gap = -radius[b]
    for d in range(x.shape[1]):
        gap += (x[b, d] - wall_p[k, d]) * wall_n[k, d]
    return gap


@njit(cache=True, inline="always")
def _wall_time(b, k, t, T, x, v, a, radius, wall_p, wall_n, tol, speed_tol):
    """Time of the next contact of body b (at time t) with wall k in [t, T], or inf."""
    gap = _plane_gap(b, k, x, radius, wall_p, wall_n)
    ns = 0.0
    na = 0.0
    for d in range(x.shape[1]):
        ns += v[b, d] * wall_n[k, d]
        na += a[b, d] * wall_n[k, d]
    return t + _wall_contact_time(gap, ns, na, _wall_slack(b, k, x, radius, wall_p, tol), T - t, speed_tol)


@njit(cache=True)
def _advance_all(t, x, v, a, tb, active):
    """Move every active body along its parabola to time t (exact)."""
    for b in range(len(tb)):
        if active[b]:
            _advance(b, t, x, v, a, tb)


@njit(cache=True)
def _predict_all(t, T, x, v, a, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n, wall_size,
                 rest_wall, tol, speed_tol, ev_time, ev_partner, gather, resting_gap, ci, cj, ck, cn, cw,
                 nrm):  # fmt: skip
    """`_predict` for every movable active body, all of them at time t: ``ev_time``, ``ev_partner``.

    Each pair's contact time is computed once, for both bodies: it is the same to the last bit either
    way round (``x_i - x_j == -(x_j - x_i)`` exactly, and every product in it pairs two such
    differences), and as rows are visited in id order each body still meets its partners in id order,
    walls last, so ties go to the same partner as in `_predict`.

    With ``gather`` (no contact in the resting set yet, not merge mode), it is also `_gather_near` in the
    same pass, and returns what that returns; (0, 0.0) otherwise."""
    n = x.shape[0]
    nc = 0
    deepest = 0.0
    for i in range(n):
        ev_time[i] = INF
        ev_partner[i] = NO_PARTNER
    for i in range(n):
        ahead = min(i + PREFETCH_AHEAD, n)
        for m in range(start[ahead], start[min(ahead + 1, n)]):
            _prefetch(x, nbrs[m])
            _prefetch(v, nbrs[m])
            _prefetch(a, nbrs[m])
            _prefetch(radius, nbrs[m])
            _prefetch(inv_mass, nbrs[m])
        if not active[i]:
            continue
        for m in range(start[i], start[i + 1]):
            j = nbrs[m]
            if j <= i or not active[j] or rest_pair[m] or (inv_mass[i] == 0.0 and inv_mass[j] == 0.0):
                continue
            if gather:
                nc, deepest = _near_pair(i, j, m, x, radius, tol, resting_gap, ci, cj, ck, cn, cw, nc, nrm, deepest)
            t_c = _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol)
            if t_c < ev_time[i] and inv_mass[i] != 0.0:
                ev_time[i] = t_c
                ev_partner[i] = j
            if t_c < ev_time[j] and inv_mass[j] != 0.0:
                ev_time[j] = t_c
                ev_partner[j] = i
        if inv_mass[i] != 0.0:  # `_wall_event`, written out: inlined here it counted references on 7 arrays
            reach = _wall_reach(i, x, v, a, radius, wall_size, tol, T - t)
            near_reach = _near_wall_reach(i, x, radius, wall_size, tol, resting_gap) if gather else -INF
            for k in range(_walls_within(i, max(reach, near_reach), x, radius, wall_p, wall_n)):
                plane_gap = _plane_gap(i, k, x, radius, wall_p, wall_n)
                if plane_gap <= near_reach:
                    nc, deepest = _near_wall(i, k, plane_gap, x, radius, wall_p, wall_n, tol, resting_gap, ci, cj, ck,
                                             cn, cw, nc, deepest)  # fmt: skip
                if plane_gap > reach or rest_wall[i, k]:
                    continue
                t_c = _wall_time(i, k, t, T, x, v, a, radius, wall_p, wall_n, tol, speed_tol)
                if t_c < ev_time[i]:
                    ev_time[i] = t_c
                    ev_partner[i] = -1 - k
    return nc, deepest


# ---------------------------------------------------------------- contact lists
# Columns of the per-contact work array: approach speed (m/s), restitution, solver target, impulse (N s) or
# force (N), resting flag (1.0: in the step's resting set), gap (m; 0 while touching), force carried (N),
# whether its resting state or force is being updated (1.0).
APPROACH, RESTITUTION, TARGET, IMPULSE, RESTING, GAP, FORCE, UPDATE = 0, 1, 2, 3, 4, 5, 6, 7


@njit(cache=True, inline="always")
def _put_contact(ci, cj, ck, cn, cw, c, i, j, m, normal, sign, gap, resting, force):
    """Write contact c: bodies i-j (``m``: the entry of j in i's candidate list, -1 for a wall), unit normal
    i -> j (``sign * normal``), gap (m), resting flag and the force it carries (N)."""
    ci[c] = i
    cj[c] = j
    ck[c] = m
    for d in range(cn.shape[1]):
        cn[c, d] = sign * normal[d]
    cw[c, RESTING] = 1.0 if resting else 0.0
    cw[c, GAP] = gap
    cw[c, FORCE] = force


@njit(cache=True, inline="always")
def _near_pair(b, j, m, x, radius, tol, resting_gap, ci, cj, ck, cn, cw, nc, nrm, deepest):
    """`_gather_near` for pair b-j (entry m of b's list, j > b): the contact is written at nc if it is near.
    Returns the new (nc, deepest)."""
    reach = radius[b] + radius[j] + max(resting_gap * min(radius[b], radius[j]), _slack(b, j, x, radius, tol))
    dist2 = 0.0
    for d in range(x.shape[1]):
        dist2 += (x[j, d] - x[b, d]) ** 2
    if dist2 > reach * reach:
        return nc, deepest
    gap = _pair_gap(b, j, x, radius, tol, nrm)
    if gap > resting_gap * min(radius[b], radius[j]):
        return nc, deepest
    _put_contact(ci, cj, ck, cn, cw, nc, b, j, m, nrm, 1.0, gap, False, 0.0)
    return nc + 1, min(deepest, (math.sqrt(dist2) - radius[b] - radius[j]) / min(radius[b], radius[j]))


@njit(cache=True, inline="always")
def _near_wall_reach(b, x, radius, wall_size, tol, resting_gap):
    """A plane gap (m) beyond which body b is near no wall: beyond both the resting gap and the touching
    slack of every wall (`_wall_slack_bound`)."""
    return max(resting_gap * radius[b], _wall_slack_bound(b, x, radius, wall_size, tol))


@njit(cache=True, inline="always")
def _near_wall(b, k, plane_gap, x, radius, wall_p, wall_n, tol, resting_gap, ci, cj, ck, cn, cw, nc, deepest):
    """`_gather_near` for body b and wall k, at plane gap ``plane_gap`` (m) within `_near_wall_reach`.
    Returns the new (nc, deepest)."""
    gap = _wall_gap(b, k, x, radius, wall_p, wall_n, tol)
    if gap > resting_gap * radius[b]:
        return nc, deepest
    _put_contact(ci, cj, ck, cn, cw, nc, b, -1 - k, -1, wall_n[k], -1.0, gap, False, 0.0)
    return nc + 1, min(deepest, plane_gap / radius[b])


@njit(cache=True, _nrt=False)  # no reference counting on its arrays: it allocates nothing
def _gather_near(x, radius, inv_mass, active, start, nbrs, wall_p, wall_n, wall_size, tol, resting_gap, merge, ci, cj,
                 ck, cn, cw, nrm):  # fmt: skip
    """Every contact (all bodies at one time) touching or within ``resting_gap`` of the smaller radius, in
    body order, into the contact arrays (room for `contact_capacity`). No body pairs in merge mode (bodies
    that touch merge). ``nrm``: work array of dim floats. Returns their number and the deepest overlap
    among them, as a fraction of the smaller radius (0 if none overlaps)."""
    nc = 0
    deepest = 0.0
    for b in range(x.shape[0]):
        if not active[b]:
            continue
        if not merge:
            for m in range(start[b], start[b + 1]):
                j = nbrs[m]
                if j > b and active[j] and (inv_mass[b] != 0.0 or inv_mass[j] != 0.0):
                    nc, deepest = _near_pair(b, j, m, x, radius, tol, resting_gap, ci, cj, ck, cn, cw, nc, nrm,
                                             deepest)  # fmt: skip
        if inv_mass[b] != 0.0:
            near_reach = _near_wall_reach(b, x, radius, wall_size, tol, resting_gap)
            for k in range(_walls_within(b, near_reach, x, radius, wall_p, wall_n)):
                plane_gap = _plane_gap(b, k, x, radius, wall_p, wall_n)
                if plane_gap <= near_reach:
                    nc, deepest = _near_wall(b, k, plane_gap, x, radius, wall_p, wall_n, tol, resting_gap, ci, cj, ck,
                                             cn, cw, nc, deepest)  # fmt: skip
    return nc, deepest


@njit(cache=True, inline="always")
def _slack(i, j, x, radius, tol):
    """Gap (m) up to which bodies i and j touch: ``tol`` times the smaller radius, plus round-off."""
    size = 0.0
    for d in range(x.shape[1]):
        size = max(size, abs(x[i, d]), abs(x[j, d]))
    return tol * min(radius[i], radius[j]) + ROUNDOFF * size


@njit(cache=True, inline="always")
def _wall_slack(b, k, x, radius, wall_p, tol):
    """Gap (m) up to which body b touches wall k: ``tol`` times its radius, plus round-off."""
    size = 0.0
    for d in range(x.shape[1]):
        size = max(size, abs(x[b, d]), abs(wall_p[k, d]))
    return tol * radius[b] + ROUNDOFF * size


@njit(cache=True, inline="always")
def _pair_gap(b, j, x, radius, tol, normal_out):
    """Surface gap (m) of bodies b and j (both at the same time), 0 while they touch; writes the unit
    normal b -> j. The touching test is the prediction's (`carom.narrowphase._pair_contact_time`)."""
    dist2 = 0.0
    for d in range(x.shape[1]):
        normal_out[d] = x[j, d] - x[b, d]
        dist2 += normal_out[d] * normal_out[d]
    if dist2 == 0.0:
        return INF
    dist = math.sqrt(dist2)
    for d in range(x.shape[1]):
        normal_out[d] /= dist
    s = radius[b] + radius[j]
    if dist2 <= (s + _slack(b, j, x, radius, tol)) ** 2:
        return 0.0
    return dist - s


@njit(cache=True, inline="always")
def _wall_gap(b, k, x, radius, wall_p, wall_n, tol):
    """Surface gap (m) of body b from wall k, 0 while it touches."""
    gap = _plane_gap(b, k, x, radius, wall_p, wall_n)
    return 0.0 if gap <= _wall_slack(b, k, x, radius, wall_p, tol) else gap


@njit(cache=True, inline="always")
def _record(c, force, ci, cj, ck, cw, start, nbrs, rest_pair, f_pair, rest_wall, f_wall):
    """Record whether contact c is in the resting set, and the force (N) it carries, for both bodies."""
    i = ci[c]
    j = cj[c]
    flag = cw[c, RESTING] != 0.0
    if j < 0:
        rest_wall[i, -1 - j] = flag
        f_wall[i, -1 - j] = force
        return
    lo = start[j]
    mirror = lo + np.searchsorted(nbrs[lo : start[j + 1]], i)  # rows are sorted by id
    for m in (ck[c], mirror):
        rest_pair[m] = flag
        f_pair[m] = force


@njit(cache=True, inline="always")
def _centripetal(c, ci, cj, cn, x, v):
    """|v_rel,t|^2 / D for a body pair: how fast the gap of a sliding contact opens by curvature."""
    i = ci[c]
    j = cj[c]
    if j < 0:
        return 0.0
    vn = 0.0
    vv = 0.0
    dist2 = 0.0
    for d in range(x.shape[1]):
        dvd = v[j, d] - v[i, d]
        vv += dvd * dvd
        vn += dvd * cn[c, d]
        dist2 += (x[j, d] - x[i, d]) ** 2
    return max(vv - vn * vn, 0.0) / math.sqrt(dist2)


@njit(cache=True)
def _contact_forces(sel, ci, cj, cn, cw, x, v, a, inv_mass, h, iterations, tol, warm=False):
    """Normal forces of the resting contacts ``sel`` for the h seconds left in the step, added to the
    accelerations ``a`` (bodies of inverse mass 0 in ``inv_mass`` are held).

    A contact of gap g (0 while touching) and approach speed u is a constraint on the normal acceleration
    of approach, ``a_n <= kappa + |v_t|^2 / D`` (the last term: the gap a sliding pair opens by curvature),
    force >= 0, complementary. ``kappa = 2 (g - u h) / h^2`` keeps the gap >= 0 at the end of the step;
    it is raised to ``-u / h`` when that asks more than stopping the approach by then, so the force never
    turns an approach into a separation: what closes within the step is left to the position projection.
    A touching pair at rest has kappa = 0 (the gap does not start to close): exact resting contact. With
    ``warm``, the forces in the IMPULSE column (already applied to ``a``) are the starting point."""
    for c in sel:
        u = _approach_speed(c, ci, cj, cn, v)
        kappa = 0.0
        if h > 0.0:
            kappa = max(2.0 * (cw[c, GAP] - u * h) / (h * h), -max(u, 0.0) / h)
        cw[c, TARGET] = -(kappa + _centripetal(c, ci, cj, cn, x, v))
    return _solve_contacts(sel, ci, cj, cn, cw[:, TARGET], a, inv_mass, cw[:, IMPULSE], iterations, tol, warm)


@njit(cache=True, inline="always")
def _rests(c, ci, cj, cn, cw, v, a_smooth, resting_speed):
    """Whether contact c belongs in the resting set: left free, it would touch (or part) no faster than
    ``resting_speed``, ``u^2 + 2 max(a_n, 0) g <= resting_speed^2`` for approach speed u, approach
    acceleration a_n from the smooth forces and gap g. A ball hovering above a floor is thus admitted only
    if it would land no faster than the speed below which its impact would be inelastic anyway."""
    u = _approach_speed(c, ci, cj, cn, v)
    a_n = _approach_speed(c, ci, cj, cn, a_smooth)
    return u * u + 2.0 * max(a_n, 0.0) * cw[c, GAP] <= resting_speed * resting_speed


@njit(cache=True, inline="always")
def _resting_speed(i, j, a, a_smooth, rested, dt, resting_speed):
    """Approach speed (m/s) below which contact i-j is resting: ``resting_speed``, raised to
    ``dt (|a_s,i| + |a_s,j|)`` (``a_s`` the smooth acceleration, gravity say) over the bodies that rest on
    something (they carry a contact force now, ``a != a_s``, or did at the end of the last step,
    ``rested``): contact forces are held constant between events, so they are only right to about the
    speed the smooth forces give in one step. Free bodies (a bouncing ball) keep the plain threshold,
    and exact impacts."""
    scale = 0.0
    for b in (i, j):
        if b >= 0:
            resting = rested[b]
            s = 0.0
            for d in range(a.shape[1]):
                resting = resting or a[b, d] != a_smooth[b, d]
                s += a_smooth[b, d] ** 2
            if resting:
                scale += math.sqrt(s)
    return max(resting_speed, dt * scale)


@njit(cache=True, inline="always")
def _rested(n, force_keys, force_values, wall_force, walls_held, rested):
    """Mark in ``rested`` which of the n bodies carried a resting-contact force at the end of the last step
    (from its forces: pairs by key ``i * n + j``, walls by row, read only if ``walls_held``)."""
    rested[:] = False
    for k in range(len(force_keys)):
        if force_values[k] != 0.0:
            rested[force_keys[k] // n] = True
            rested[force_keys[k] % n] = True
    if walls_held:
        for b in range(n):
            for k in range(wall_force.shape[1]):
                rested[b] = rested[b] or wall_force[b, k] != 0.0


@njit(cache=True, inline="always")
def _rest_limit(c, ci, cj, a, a_smooth, rested, dt, resting_speed, speed_tol, restitution, wall_e, rule, keys, values):
    """The speed (m/s) below which contact c may join the resting set: its resting speed if e < 1; if the
    pair is perfectly elastic, only the round-off speed ``speed_tol``, so that no elastic approach is ever
    absorbed (an elastic gas keeps its energy; elastic bodies at rest still carry forces)."""
    if _pair_restitution(ci[c], cj[c], restitution, wall_e, rule, keys, values) == 1.0:
        return speed_tol
    return _resting_speed(ci[c], cj[c], a, a_smooth, rested, dt, resting_speed)


@njit(cache=True, inline="always")
def _expand(b, t, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p, wall_n, wall_size,
            rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw, nc, nrm):  # fmt: skip
    """Add the contacts of body b (at time t) not yet gathered, touching or resting; mark b expanded. With no
    contact held in this drift (``held`` false: no wall rests), a body far from every wall visits none."""
    if not merge:
        for m in range(start[b], start[b + 1]):
            j = nbrs[m]
            if not active[j] or expanded[j] or (inv_mass[b] == 0.0 and inv_mass[j] == 0.0):
                continue
            _advance(j, t, x, v, a, tb)
            gap = _pair_gap(b, j, x, radius, tol, nrm)
            if gap == 0.0 or rest_pair[m]:
                _put_contact(ci, cj, ck, cn, cw, nc, b, j, m, nrm, 1.0, gap, rest_pair[m], f_pair[m])
                nc += 1
    n_walls = wall_p.shape[0]
    if not held:
        n_walls = _walls_within(b, _wall_slack_bound(b, x, radius, wall_size, tol), x, radius, wall_p, wall_n)
    for k in range(n_walls):
        gap = _wall_gap(b, k, x, radius, wall_p, wall_n, tol)
        if gap == 0.0 or rest_wall[b, k]:
            _put_contact(ci, cj, ck, cn, cw, nc, b, -1 - k, -1, wall_n[k], -1.0, gap, rest_wall[b, k], f_wall[b, k])
            nc += 1
    expanded[b] = True
    return nc


@njit(cache=True, inline="always")
def _log_impact(log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e, n_log, t, i, j, normal, impulse,
                speed, e):  # fmt: skip
    """Log impact number n_log if the log has room for it; returns n_log + 1 (the caller grows a full log
    and runs the drift again)."""
    if n_log < len(log_time):
        log_time[n_log] = t
        log_i[n_log] = i
        log_j[n_log] = j
        for d in range(log_normal.shape[1]):
            log_normal[n_log, d] = normal[d]
        log_impulse[n_log] = impulse
        log_speed[n_log] = speed
        log_e[n_log] = e
    return n_log + 1


# ---------------------------------------------------------------- the drift
@njit(cache=True)
def contact_capacity(n, n_wall, n_entry):
    """The most contacts the drift holds at once: each body's candidates and walls, once (a gather takes each
    pair once; an event expands each body at most once)."""
    return n_entry + n * n_wall


def scratch_specs(n, dim, n_wall, n_entry):
    """(length, dtype, zeroed) of the work arrays of `_drift`, for n bodies in dim dimensions, n_wall walls
    and n_entry candidate-list entries: float, int and bool, then the float and bool arrays of the resting
    set, which must be all zero when first made (each drift leaves them so)."""
    cap = contact_capacity(n, n_wall, n_entry)
    held = n_entry + n * n_wall
    return (
        (3 * n + n_entry + dim + (dim + 8) * cap, np.float64, False),
        (6 * n + n_entry + 4 * cap, np.int64, False),
        (2 * n, np.bool_, False),
        (held, np.float64, True),
        (held, np.bool_, True),
    )


def carried_forces(scratch, n, nk):
    """Copies of the nk pair-force keys and values (N) that `_drift` left in its ``scratch`` arrays."""
    return scratch[1][6 * n : 6 * n + nk].copy(), scratch[0][3 * n : 3 * n + nk].copy()


@njit(cache=True, _nrt=False)  # no reference counting in the event loop (calls on every array): it allocates nothing
def _drift(
    x, v, a_smooth, a, force_keys, force_values, wall_force,
    inv_mass, mass, radius, restitution, inv_inertia, active,
    start, nbrs, large, x_ref, margin,
    wall_p, wall_n, wall_e, rule, keys, values,
    t0, T, tol, resting_gap, speed_tol, resting_speed, lcp_iterations, lcp_tol_v, rest_tol_v, rest_tol_a, max_rounds,
    max_body_events, merge,
    log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e, log_enabled,
    f_scratch, i_scratch, b_scratch, held_f, held_b, walls_held,
):  # fmt: skip
    """Advance every active body from t0 to T (times relative to the step start).

    ``*_scratch`` and ``held_*`` are work arrays of `scratch_specs` (float, int, bool, then float and bool
    that are all zero between drifts), kept by the caller between steps: fresh arrays of this size each
    step would cost more in page faults than the work in them. On return they also hold the pair forces
    carried at the end, the next step's warm start (`carried_forces`). ``walls_held``: whether any
    ``wall_force`` is nonzero.

    Returns (time reached, status, impacts, impacts to log (more than the log holds: grow it and run the
    drift again on the state it started from), rounds capped, events processed, pair forces carried, the
    deepest overlap at t0 as a fraction of the smaller radius (0 if none), whether any contact was held by
    forces, whether any ``wall_force`` is nonzero now, the body that took part in more than
    ``max_body_events`` events (status STALLED) or whose contacts still approached after ``2 max_rounds``
    rounds at one instant, the last half perfectly inelastic (status CRUSHED: no velocities satisfy them
    all); -1 otherwise).
    """
    n, dim = x.shape
    n_wall = wall_p.shape[0]
    wall_size = 0.0  # the largest wall-point coordinate (`_wall_slack_bound`)
    for k in range(n_wall):
        for d in range(dim):
            wall_size = max(wall_size, abs(wall_p[k, d]))
    n_entry = len(nbrs)
    tb = f_scratch[:n]
    ev_time = f_scratch[n : 2 * n]  # (filled by _predict_all)
    heap_t = f_scratch[2 * n : 3 * n]
    # the resting set and its forces (N), by candidate entry and by body and wall: zero between drifts
    f_pair = held_f[:n_entry]
    f_wall = held_f[n_entry : n_entry + n * n_wall].reshape((n, n_wall))
    rest_pair = held_b[:n_entry]
    rest_wall = held_b[n_entry : n_entry + n * n_wall].reshape((n, n_wall))
    cnt = i_scratch[:n]
    ev_partner = i_scratch[n : 2 * n]
    ev_count = i_scratch[2 * n : 3 * n]
    cluster = i_scratch[3 * n : 4 * n]
    heap_b = i_scratch[4 * n : 5 * n]
    where = i_scratch[5 * n : 6 * n]
    expanded = b_scratch[:n]
    rested = b_scratch[n : 2 * n]
    cap = contact_capacity(n, n_wall, n_entry)
    f_at = 3 * n
    out_values = f_scratch[f_at : f_at + n_entry]
    nrm = f_scratch[f_at + n_entry : f_at + n_entry + dim]
    f_at += n_entry + dim
    cn = f_scratch[f_at : f_at + dim * cap].reshape((cap, dim))
    cw = f_scratch[f_at + dim * cap : f_at + (dim + 8) * cap].reshape((cap, 8))
    out_keys = i_scratch[6 * n : 6 * n + n_entry]
    ci = i_scratch[6 * n + n_entry : 6 * n + n_entry + cap]
    cj = i_scratch[6 * n + n_entry + cap : 6 * n + n_entry + 2 * cap]
    ck = i_scratch[6 * n + n_entry + 2 * cap : 6 * n + n_entry + 3 * cap]
    sel = i_scratch[6 * n + n_entry + 3 * cap : 6 * n + n_entry + 4 * cap]
    tb[:] = t0
    cnt[:] = 0
    ev_count[:] = 0
    expanded[:] = False
    _rested(n, force_keys, force_values, wall_force, walls_held, rested)
    impacts = 0
    n_log = 0
    capped = False

    # ---- the resting set: slow contacts, touching or within resting_gap; one inelastic velocity solve and
    # one force solve over all of them, and no events among them in this step
    for b in range(n):
        for d in range(dim):
            a[b, d] = a_smooth[b, d]
    h = T - t0
    # Where the last step held no contact (a gas), the near contacts are gathered in the pass that predicts,
    # and the predictions stand unless some contact joins the resting set now. (The resting set is empty
    # here, so both passes see the same contacts; which one runs changes no result.)
    fused = not merge and len(force_keys) == 0 and not walls_held
    if fused:
        nc, deepest = _predict_all(t0, T, x, v, a, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n,
                                   wall_size, rest_wall, tol, speed_tol, ev_time, ev_partner, True, resting_gap, ci,
                                   cj, ck, cn, cw, nrm)  # fmt: skip
    else:
        nc, deepest = _gather_near(x, radius, inv_mass, active, start, nbrs, wall_p, wall_n, wall_size, tol,
                                   resting_gap, merge, ci, cj, ck, cn, cw, nrm)  # fmt: skip
    held = False  # whether any contact was in the resting set (held by forces)
    if nc and h > 0.0:  # (a drift that resumes exactly at the end of the step moves nothing)
        ns = 0
        slow = False
        for c in range(nc):
            if _rests(c, ci, cj, cn, cw, v, a_smooth, _rest_limit(c, ci, cj, a, a_smooth, rested, T, resting_speed,
                                                                  speed_tol, restitution, wall_e, rule, keys, values)):
                u = _approach_speed(c, ci, cj, cn, v)
                cw[c, RESTING] = 1.0
                sel[ns] = c
                ns += 1
                cw[c, TARGET] = -cw[c, GAP] / h
                slow = slow or u > cw[c, GAP] / h + speed_tol
        if slow:  # perfectly inelastic: approach no faster than the gap can take
            _solve_contacts(sel[:ns], ci, cj, cn, cw[:, TARGET], v, inv_mass, cw[:, IMPULSE], lcp_iterations,
                            rest_tol_v)  # fmt: skip
        # warm start: each contact's force at the end of the last step (keys i * n + j, i < j)
        for s in range(ns):
            c = sel[s]
            i, j = ci[c], cj[c]
            f = 0.0
            if j < 0:
                f = wall_force[i, -1 - j]
            elif len(force_keys):
                key = i * n + j
                k = np.searchsorted(force_keys, key)
                if k < len(force_keys) and force_keys[k] == key:
                    f = force_values[k]
            cw[c, IMPULSE] = f
            if f != 0.0:
                _apply_impulse(c, f, ci, cj, cn, a, inv_mass)
        _contact_forces(sel[:ns], ci, cj, cn, cw, x, v, a, inv_mass, h, lcp_iterations, rest_tol_a, True)
        held = ns > 0
        for s in range(ns):
            c = sel[s]
            _record(c, cw[c, IMPULSE], ci, cj, ck, cw, start, nbrs, rest_pair, f_pair, rest_wall, f_wall)

    # ---- predictions and the heap
    if held or not fused:
        _predict_all(t0, T, x, v, a, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n, wall_size,
                     rest_wall, tol, speed_tol, ev_time, ev_partner, False, resting_gap, ci, cj, ck, cn, cw,
                     nrm)  # fmt: skip
    size = _heap_build(ev_time, heap_t, heap_b, where)  # (every trajectory count is 0 until the first event)

    t_now = t0
    status = DONE
    events = 0
    stalled = -1  # a body past max_body_events (status STALLED), or crushed (status CRUSHED)
    crushed = -1
    while size > 0:
        i = heap_b[0]
        t_ev = ev_time[i]
        if t_ev > T:
            break
        p = ev_partner[i]
        if p >= 0 and (ev_count[i] != cnt[p] or not active[p]):
            ev_time[i], ev_partner[i] = _predict(
                i, t_now, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n,
                wall_size, rest_wall, tol, speed_tol,
            )  # fmt: skip
            if ev_partner[i] >= 0 and ev_partner[i] != NO_PARTNER:
                ev_count[i] = cnt[ev_partner[i]]
            size = _heap_update(heap_t, heap_b, where, size, i, ev_time[i])
            continue
        t_now = t_ev
        events += 1
        # rows read late in this event (the stray check) and by the likely next ones (the heap's runners-up)
        _prefetch(x_ref, i)
        _prefetch(x_ref, max(p, 0))
        for q in range(1, min(size, 3)):
            _prefetch(x, heap_b[q])
            _prefetch(v, heap_b[q])
            _prefetch(tb, heap_b[q])
            _prefetch(start, heap_b[q])
            _prefetch(ev_partner, heap_b[q])

        # ---- merge mode: two bodies that meet become one (then the caller rebuilds)
        if merge and p >= 0:
            _advance(i, t_now, x, v, a, tb)
            _advance(p, t_now, x, v, a, tb)
            if _pair_gap(i, p, x, radius, tol, nrm) == 0.0:
                u = 0.0
                for d in range(dim):
                    u += (v[i, d] - v[p, d]) * nrm[d]
                mu = 0.0
                if inv_mass[i] + inv_mass[p] > 0.0:
                    mu = 1.0 / (inv_mass[i] + inv_mass[p])
                if log_enabled:
                    n_log = _log_impact(
                        log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e, n_log,
                        t_now, i, p, nrm, mu * max(u, 0.0), u, 0.0,
                    )  # fmt: skip
                impacts += 1
                _merge(min(i, p), max(i, p), x, v, a_smooth, inv_mass, mass, radius, inv_inertia, active, dim)
                status = REBUILD
                break

        # ---- gather the contacts of the bodies involved, solve the touching ones in rounds
        nc = 0
        n_cluster = 0
        for b in (i, p if (p >= 0 and inv_mass[p] != 0.0) else -1):
            if b < 0:
                continue
            _advance(b, t_now, x, v, a, tb)
            nc = _expand(
                b, t_now, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p, wall_n,
                wall_size, rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw, nc, nrm,
            )  # fmt: skip
            cluster[n_cluster] = b
            n_cluster += 1
        rounds = 0
        while True:
            # A round: the touching contacts that approach, except resting ones approaching slower than the
            # resting speed (their forces take care of them: an impulse must not run through a whole pile).
            ns = 0
            for c in range(nc):
                u = _approach_speed(c, ci, cj, cn, v)
                if u > speed_tol and cw[c, GAP] == 0.0 and (
                    cw[c, RESTING] == 0.0 or u > _resting_speed(ci[c], cj[c], a, a_smooth, rested, T, resting_speed)
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
                e = _pair_restitution(ci[c], cj[c], restitution, wall_e, rule, keys, values)
                if e < 1.0 and cw[c, APPROACH] <= _resting_speed(ci[c], cj[c], a, a_smooth, rested, T, resting_speed):
                    e = 0.0
                cw[c, RESTITUTION] = e
                cw[c, TARGET] = e * cw[c, APPROACH]
                resting_only = resting_only and e == 0.0
            if resting_only or capped_now:
                # Resting contact (or too many rounds): every touching contact that is not already resting
                # at once, perfectly inelastic. Sequential rounds would shrink such approaches only
                # geometrically.
                ns = _inelastic_selection(sel, ci, cj, cn, cw, v, a, a_smooth, rested, T, resting_speed, nc)
            _solve_contacts(sel[:ns], ci, cj, cn, cw[:, TARGET], v, inv_mass, cw[:, IMPULSE], lcp_iterations,
                            lcp_tol_v)  # fmt: skip
            for s in range(ns):
                c = sel[s]
                if cw[c, IMPULSE] <= 0.0:
                    continue
                e_pair = _pair_restitution(ci[c], cj[c], restitution, wall_e, rule, keys, values)
                v_rest = _resting_speed(ci[c], cj[c], a, a_smooth, rested, T, resting_speed)
                if e_pair == 1.0 or cw[c, APPROACH] > v_rest:
                    impacts += 1
                    if log_enabled:
                        n_log = _log_impact(
                            log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e, n_log,
                            t_now, ci[c], cj[c], cn[c], cw[c, IMPULSE], cw[c, APPROACH], cw[c, RESTITUTION],
                        )  # fmt: skip
                for b in (ci[c], cj[c]):
                    if b >= 0 and inv_mass[b] != 0.0 and not expanded[b]:
                        nc = _expand(
                            b, t_now, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p,
                            wall_n, wall_size, rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw, nc,
                            nrm,
                        )  # fmt: skip
                        cluster[n_cluster] = b
                        n_cluster += 1

        # ---- the resting set and its forces around the bodies involved: the forces their contacts carried
        # are taken off both bodies and solved anew with both free (neighbours' other contacts as they are)
        ns = 0
        for c in range(nc):
            rests = _rests(c, ci, cj, cn, cw, v, a_smooth, _rest_limit(c, ci, cj, a, a_smooth, rested, T, resting_speed,
                                                                       speed_tol, restitution, wall_e, rule, keys,
                                                                       values))  # fmt: skip
            cw[c, UPDATE] = 1.0 if (rests or cw[c, RESTING] != 0.0 or cw[c, FORCE] != 0.0) else 0.0
            cw[c, RESTING] = 1.0 if rests else 0.0
            if cw[c, FORCE] != 0.0:
                _apply_impulse(c, -cw[c, FORCE], ci, cj, cn, a, inv_mass)
            if rests:
                sel[ns] = c
                ns += 1
        if ns:
            _contact_forces(sel[:ns], ci, cj, cn, cw, x, v, a, inv_mass, T - t_now, lcp_iterations, rest_tol_a)
            held = True
        for c in range(nc):
            if cw[c, UPDATE] == 0.0:  # free before and after: nothing to record
                continue
            _record(c, cw[c, IMPULSE] if cw[c, RESTING] != 0.0 else 0.0, ci, cj, ck, cw, start, nbrs, rest_pair,
                    f_pair, rest_wall, f_wall)  # fmt: skip
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
            ev_time[b], ev_partner[b] = _predict(
                b, t_now, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n,
                wall_size, rest_wall, tol, speed_tol,
            )  # fmt: skip
            q_partner = ev_partner[b]
            if q_partner >= 0 and q_partner != NO_PARTNER:
                ev_count[b] = cnt[q_partner]
                if inv_mass[q_partner] != 0.0 and ev_time[b] < ev_time[q_partner]:
                    ev_time[q_partner] = ev_time[b]
                    ev_partner[q_partner] = b
                    ev_count[q_partner] = cnt[b]
                    size = _heap_update(heap_t, heap_b, where, size, q_partner, ev_time[q_partner])
            size = _heap_update(heap_t, heap_b, where, size, b, ev_time[b])
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

    t_end = T if status == DONE else t_now
    _advance_all(t_end, x, v, a, tb, active)
    # the forces carried at the end, for the next step's warm start; the resting set is cleared for the next
    # drift (with no contact held, it is clear already)
    nk = 0
    if held:
        for b in range(n):
            for m in range(start[b], start[b + 1]):
                if f_pair[m] != 0.0 and nbrs[m] > b:
                    out_keys[nk] = b * n + nbrs[m]
                    out_values[nk] = f_pair[m]
                    nk += 1
        f_pair[:] = 0.0
        rest_pair[:] = False
    if held or walls_held:
        walls_held = False
        for b in range(n):
            for k in range(n_wall):
                wall_force[b, k] = f_wall[b, k]
                walls_held = walls_held or f_wall[b, k] != 0.0
        f_wall[:] = 0.0
        rest_wall[:] = False
    return t_end, status, impacts, n_log, capped, events, nk, deepest, held, walls_held, stalled


@njit(cache=True)
def _inelastic_selection(sel, ci, cj, cn, cw, v, a, a_smooth, rested, T, resting_speed, nc):
    """Select, for one perfectly inelastic solve, every touching contact except resting ones approaching
    slower than their resting speed; returns how many."""
    ns = 0
    for c in range(nc):
        if cw[c, GAP] != 0.0:
            continue
        u = _approach_speed(c, ci, cj, cn, v)
        if cw[c, RESTING] == 0.0 or u > _resting_speed(ci[c], cj[c], a, a_smooth, rested, T, resting_speed):
            sel[ns] = c
            ns += 1
            cw[c, APPROACH] = u
            cw[c, RESTITUTION] = 0.0
            cw[c, TARGET] = 0.0
    return ns


@njit(cache=True)
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
    factor = 0.4 if dim == 3 else 0.5
    inv_inertia[s] = inv_mass[s] / (factor * radius[s] ** 2)
    active[o] = False

