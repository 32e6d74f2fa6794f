"""The drift of a step: every body on its parabola, every impact resolved at the instant it happens.

Within a step each body moves with a constant acceleration ``a = a_smooth + a_contact``: ``a_smooth``
from the forces evaluated before anything moved (exact for uniform gravity; the drift of kick-drift-kick
leapfrog otherwise), ``a_contact`` from resting-contact normal forces. The drift is an event-driven
simulation over the step: each body keeps its state at its own last event time (advanced lazily, exactly),
the earliest predicted contact of every body that has one within the step sits in an indexed binary heap,
and the globally earliest one is processed next (ties in body id order). At an event all contacts
touching the bodies involved are gathered and solved in rounds (`carom.solver`), the bodies whose
velocity changed gather their own touching contacts in turn, and only those bodies are re-predicted. A
body that strays farther than the broad phase's sweep margin ends the drift early (status REBUILD) so that
the caller can rebuild the candidate lists and continue.

Resting contact: touching contacts with zero normal speed carry a normal force found by a complementarity
problem on accelerations (normal acceleration of approach ``<= kappa`` with force ``>= 0``), globally at
the start of a drift and for the bodies of each event after it. Approaches slower than ``resting_speed``
with e < 1 are made perfectly inelastic and not counted as impacts: the Zeno sequence of an inelastic
bouncing ball ends in resting contact after finitely many impacts.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .config import ROUNDOFF
from .narrowphase import _out_of_reach, _pair_contact_time, _wall_contact_time
from .solver import _approach_speed, _pair_restitution, _solve_contacts

DONE = 0
REBUILD = 1
INF = math.inf
NO_PARTNER = np.iinfo(np.int64).max


# ---------------------------------------------------------------- indexed binary min-heap of event times
# Only bodies with an event within the step are in it (a few per cent of a gas), and each entry holds its
# time beside its body, so that sifting reads two small arrays instead of event times all over memory.
# Entries are ordered by time, then body id: the order of events does not depend on the heap's history.
@njit(cache=True, inline="always")
def _before(heap_t, heap_b, p, q):
    """Whether heap entry p comes before entry q."""
    return heap_t[p] < heap_t[q] or (heap_t[p] == heap_t[q] and heap_b[p] < heap_b[q])


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
        for child in (2 * p + 1, 2 * p + 2):
            if child < size and _before(heap_t, heap_b, child, first):
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
def _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol, dx, dv, da):
    """Time of the next contact of bodies i and j (both at time t) in [t, T], or inf; the same to the last
    bit for (j, i). Pairs out of reach are rejected here, before any call (`narrowphase._out_of_reach`)."""
    xx = 0.0
    vv = 0.0
    aa = 0.0
    for d in range(x.shape[1]):
        dx[d] = x[j, d] - x[i, d]
        dv[d] = v[j, d] - v[i, d]
        da[d] = a[j, d] - a[i, d]
        xx += dx[d] * dx[d]
        vv += dv[d] * dv[d]
        aa += da[d] * da[d]
    s = radius[i] + radius[j]
    slack = _slack(i, j, x, radius, tol)
    if xx > (s + slack) ** 2 and _out_of_reach(xx, vv, aa, s, T - t):
        return INF
    return t + _pair_contact_time(dx, dv, da, s, slack, T - t, speed_tol)


@njit(cache=True, inline="always")
def _predict(i, t, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, speed_tol, dx, dv, da):
    """Earliest contact of body i in [t, T]: (time, partner); partner < 0 is wall -1 - partner.

    Body i and its neighbours are first advanced to t, so that "touching" and "approaching" are decided
    on exactly the numbers the event itself will see."""
    best = INF
    partner = NO_PARTNER
    _advance(i, t, x, v, a, tb)
    for m in range(start[i], start[i + 1]):
        j = nbrs[m]
        if not active[j] or (inv_mass[i] == 0.0 and inv_mass[j] == 0.0):
            continue
        _advance(j, t, x, v, a, tb)
        t_c = _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol, dx, dv, da)
        if t_c < best:
            best = t_c
            partner = j
    if inv_mass[i] != 0.0:
        for k in range(wall_p.shape[0]):
            gap = -radius[i]
            ns = 0.0
            na = 0.0
            for d in range(x.shape[1]):
                gap += (x[i, d] - wall_p[k, d]) * wall_n[k, d]
                ns += v[i, d] * wall_n[k, d]
                na += a[i, d] * wall_n[k, d]
            tau = _wall_contact_time(gap, ns, na, _wall_slack(i, k, x, radius, wall_p, tol), T - t, speed_tol)
            if t + tau < best:
                best = t + tau
                partner = -1 - k
    return best, partner


@njit(cache=True)
def _advance_all(t, x, v, a, tb, active):
    """Move every active body along its parabola to time t (exact)."""
    for b in range(len(tb)):
        if active[b]:
            _advance(b, t, x, v, a, tb)


@njit(cache=True)
def _predict_all(t, T, x, v, a, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, speed_tol, ev_time,
                 ev_partner):  # fmt: skip
    """`_predict` for every movable active body, all of them at time t: ``ev_time``, ``ev_partner``.

    Each pair's contact time is computed once, for both bodies: it is the same to the last bit either
    way round (``x_i - x_j == -(x_j - x_i)`` exactly, and every product in it pairs two such
    differences), and as rows are visited in id order each body still meets its partners in id order,
    walls last, so ties go to the same partner as in `_predict`."""
    n, dim = x.shape
    dx = np.empty(dim)
    dv = np.empty(dim)
    da = np.empty(dim)
    for i in range(n):
        ev_time[i] = INF
        ev_partner[i] = NO_PARTNER
    for i in range(n):
        if not active[i]:
            continue
        for m in range(start[i], start[i + 1]):
            j = nbrs[m]
            if j <= i or not active[j] or (inv_mass[i] == 0.0 and inv_mass[j] == 0.0):
                continue
            t_c = _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol, dx, dv, da)
            if t_c < ev_time[i] and inv_mass[i] != 0.0:
                ev_time[i] = t_c
                ev_partner[i] = j
            if t_c < ev_time[j] and inv_mass[j] != 0.0:
                ev_time[j] = t_c
                ev_partner[j] = i
        if inv_mass[i] != 0.0:
            for k in range(wall_p.shape[0]):
                gap = -radius[i]
                ns = 0.0
                na = 0.0
                for d in range(dim):
                    gap += (x[i, d] - wall_p[k, d]) * wall_n[k, d]
                    ns += v[i, d] * wall_n[k, d]
                    na += a[i, d] * wall_n[k, d]
                tau = _wall_contact_time(gap, ns, na, _wall_slack(i, k, x, radius, wall_p, tol), T - t, speed_tol)
                if t + tau < ev_time[i]:
                    ev_time[i] = t + tau
                    ev_partner[i] = -1 - k


@njit(cache=True, inline="always")
def _resting_speed(i, j, a, a_smooth, dt, resting_speed):
    """Approach speed (m/s) below which contact i-j is resting: ``resting_speed``, raised to
    ``dt (|a_c,i| + |a_c,j|)`` for bodies that carry resting-contact forces (``a_c = a - a_smooth``),
    since those forces are held constant between events and are only right to that speed within a step.
    Free bodies (a bouncing ball) keep the plain threshold, and exact impacts."""
    ac = 0.0
    for b in (i, j):
        if b >= 0:
            m = 0.0
            for d in range(a.shape[1]):
                m += (a[b, d] - a_smooth[b, d]) ** 2
            ac += math.sqrt(m)
    return max(resting_speed, dt * ac)


# ---------------------------------------------------------------- contact lists
@njit(cache=True)
def _grow_contacts(ci, cj, cn, work, need=0):
    """The contact arrays with room for at least ``need`` contacts (twice as many as now, at least)."""
    cap = max(2 * len(ci), need)
    ci2 = np.empty(cap, dtype=np.int64)
    cj2 = np.empty(cap, dtype=np.int64)
    cn2 = np.empty((cap, cn.shape[1]))
    work2 = np.empty((cap, work.shape[1]))
    ci2[: len(ci)] = ci
    cj2[: len(cj)] = cj
    cn2[: len(ci)] = cn
    work2[: len(ci)] = work
    return ci2, cj2, cn2, work2


@njit(cache=True)
def _gather_touching(x, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, ci, cj, cn):
    """Every touching contact (body-body and body-wall; all bodies at one time), in body order, into the
    contact arrays; returns their number, which may exceed the capacity: then only the first are kept.

    Growing the arrays inside this loop would make Numba count references on every array of it at every
    iteration, so the caller grows them to the count and gathers again instead."""
    n, dim = x.shape
    nrm = np.empty(dim)
    cap = len(ci)
    nc = 0
    for b in range(n):
        if not active[b]:
            continue
        for m in range(start[b], start[b + 1]):
            j = nbrs[m]
            if j > b and active[j] and (inv_mass[b] != 0.0 or inv_mass[j] != 0.0):
                if _touching(b, j, x, radius, tol, nrm):
                    if nc < cap:
                        ci[nc] = b
                        cj[nc] = j
                        cn[nc] = nrm
                    nc += 1
        if inv_mass[b] != 0.0:
            for k in range(wall_p.shape[0]):
                if _wall_touching(b, k, x, radius, wall_p, wall_n, tol):
                    if nc < cap:
                        ci[nc] = b
                        cj[nc] = -1 - k
                        for d in range(dim):
                            cn[nc, d] = -wall_n[k, d]
                    nc += 1
    return nc


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
def _touching(b, j, x, radius, tol, normal_out):
    """Whether bodies b and j (both at the same time) touch; writes the unit normal b -> j."""
    dist2 = 0.0
    for d in range(x.shape[1]):
        normal_out[d] = x[j, d] - x[b, d]
        dist2 += normal_out[d] * normal_out[d]
    reach = radius[b] + radius[j] + _slack(b, j, x, radius, tol)
    if dist2 > reach**2 or dist2 == 0.0:
        return False
    dist = math.sqrt(dist2)
    for d in range(x.shape[1]):
        normal_out[d] /= dist
    return True


@njit(cache=True, inline="always")
def _wall_touching(b, k, x, radius, wall_p, wall_n, tol):
    gap = -radius[b]
    for d in range(x.shape[1]):
        gap += (x[b, d] - wall_p[k, d]) * wall_n[k, d]
    return gap <= _wall_slack(b, k, x, radius, wall_p, tol)


@njit(cache=True)
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
def _resting_forces(nc, ci, cj, cn, cw, sel, x, v, a, inv_mass, speed_tol, iterations, tol):
    """Normal forces of the contacts among the first ``nc`` that have zero normal speed (resting
    contact): accelerations ``a`` are updated in place. ``sel`` is scratch of length >= nc."""
    nr = 0
    for c in range(nc):
        if abs(_approach_speed(c, ci, cj, cn, v)) <= speed_tol:
            sel[nr] = c
            nr += 1
            cw[c, 2] = -_centripetal(c, ci, cj, cn, x, v)
    if nr:
        _solve_contacts(sel[:nr], ci, cj, cn, cw[:, 2], a, inv_mass, cw[:, 3], iterations, tol)


# ---------------------------------------------------------------- the drift
@njit(cache=True)
def _drift(
    x, v, a_smooth, a, inv_mass, mass, radius, restitution, inv_inertia, active,
    start, nbrs, large, x_ref, margin,
    wall_p, wall_n, wall_e, rule, keys, values,
    t0, T, tol, speed_tol, resting_speed, lcp_iterations, lcp_tol_v, lcp_tol_a, max_rounds, merge,
    log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e, log_enabled,
):  # fmt: skip
    """Advance every active body from t0 to T (times relative to the step start).

    Returns (time reached, status, impacts, log entries, log arrays (possibly grown), rounds capped,
    events processed).
    """
    n, dim = x.shape
    tb = np.full(n, t0)
    cnt = np.zeros(n, dtype=np.int64)
    ev_time = np.full(n, INF)
    ev_partner = np.full(n, NO_PARTNER, dtype=np.int64)
    ev_count = np.zeros(n, dtype=np.int64)
    expanded = np.zeros(n, dtype=np.bool_)
    w_free = np.zeros(n)
    cluster = np.empty(n, dtype=np.int64)
    dx = np.empty(dim)
    dv = np.empty(dim)
    da = np.empty(dim)
    nrm = np.empty(dim)
    cap = 64
    ci = np.empty(cap, dtype=np.int64)
    cj = np.empty(cap, dtype=np.int64)
    cn = np.empty((cap, dim))
    cw = np.empty((cap, 4))  # per contact: approach speed, restitution, target, impulse/force
    sel = np.empty(cap, dtype=np.int64)
    impacts = 0
    n_log = 0
    capped = False

    # ---- resting-contact forces over all touching, non-approaching contacts
    for b in range(n):
        for d in range(dim):
            a[b, d] = a_smooth[b, d]
    nc = _gather_touching(x, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, ci, cj, cn)
    if nc > len(ci):
        ci, cj, cn, cw = _grow_contacts(ci, cj, cn, cw, nc)
        _gather_touching(x, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, ci, cj, cn)
    if nc:
        resting = np.empty(nc, dtype=np.int64)
        # slow approaches at touching contacts: removed together, perfectly inelastic (faster ones are
        # impacts, resolved exactly as events at t0)
        nr = 0
        slow = False
        for c in range(nc):
            u = _approach_speed(c, ci, cj, cn, v)
            if u <= _resting_speed(ci[c], cj[c], a, a_smooth, T, resting_speed):
                resting[nr] = c
                nr += 1
                cw[c, 2] = 0.0
                slow = slow or u > speed_tol
        if slow:
            _solve_contacts(resting[:nr], ci, cj, cn, cw[:, 2], v, inv_mass, cw[:, 3], lcp_iterations, lcp_tol_v)
        _resting_forces(nc, ci, cj, cn, cw, resting, x, v, a, inv_mass, speed_tol, lcp_iterations, lcp_tol_a)

    # ---- predictions and the heap
    _predict_all(t0, T, x, v, a, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, speed_tol,
                 ev_time, ev_partner)  # fmt: skip
    heap_t = np.empty(n)
    heap_b = np.empty(n, dtype=np.int64)
    where = np.empty(n, dtype=np.int64)
    size = _heap_build(ev_time, heap_t, heap_b, where)
    for b in range(n):
        p = ev_partner[b]
        if p != NO_PARTNER and p >= 0:
            ev_count[b] = cnt[p]

    t_now = t0
    status = DONE
    events = 0
    while size > 0:
        i = heap_b[0]
        t_ev = ev_time[i]
        if t_ev > T:
            break
        p = ev_partner[i]
        if p >= 0 and (ev_count[i] != cnt[p] or not active[p]):
            ev_time[i], ev_partner[i] = _predict(
                i, t_now, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, speed_tol,
                dx, dv, da,
            )
            if ev_partner[i] >= 0 and ev_partner[i] != NO_PARTNER:
                ev_count[i] = cnt[ev_partner[i]]
            size = _heap_update(heap_t, heap_b, where, size, i, ev_time[i])
            continue
        t_now = t_ev
        events += 1

        # ---- merge mode: two bodies that meet become one (then the caller rebuilds)
        if merge and p >= 0:
            _advance(i, t_now, x, v, a, tb)
            _advance(p, t_now, x, v, a, tb)
            if _touching(i, p, x, radius, tol, nrm):
                s = min(i, p)
                o = max(i, p)
                u = 0.0
                for d in range(dim):
                    u += (v[i, d] - v[p, d]) * nrm[d]
                mu = 0.0
                if inv_mass[i] + inv_mass[p] > 0.0:
                    mu = 1.0 / (inv_mass[i] + inv_mass[p])
                if log_enabled:
                    if n_log == len(log_time):
                        log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e = _grow_log(
                            log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e
                        )
                    log_time[n_log] = t_now
                    log_i[n_log] = i
                    log_j[n_log] = p
                    log_normal[n_log] = nrm
                    log_impulse[n_log] = mu * max(u, 0.0)
                    log_speed[n_log] = u
                    log_e[n_log] = 0.0
                    n_log += 1
                impacts += 1
                _merge(s, o, x, v, a_smooth, inv_mass, mass, radius, inv_inertia, active, dim)
                status = REBUILD
                break

        # ---- gather the touching contacts of the bodies involved, solve in rounds
        nc = 0
        n_cluster = 0
        todo_first = i
        todo_second = p if (p >= 0 and inv_mass[p] != 0.0) else -1
        for b in (todo_first, todo_second):
            if b < 0:
                continue
            _advance(b, t_now, x, v, a, tb)
            nc, ci, cj, cn, cw = _expand(
                b, t_now, x, v, a, tb, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, merge,
                expanded, ci, cj, cn, cw, nc, nrm,
            )  # fmt: skip
            cluster[n_cluster] = b
            n_cluster += 1
        rounds = 0
        while True:
            if len(sel) < nc:
                sel = np.empty(len(ci), dtype=np.int64)
            ns = 0
            for c in range(nc):
                u = _approach_speed(c, ci, cj, cn, v)
                if u > speed_tol:
                    sel[ns] = c
                    ns += 1
                    cw[c, 0] = u
            if ns == 0:
                break
            rounds += 1
            capped_now = rounds > max_rounds
            capped = capped or capped_now
            resting_only = True
            for s in range(ns):
                c = sel[s]
                e = _pair_restitution(ci[c], cj[c], restitution, wall_e, rule, keys, values)
                if e < 1.0 and cw[c, 0] <= _resting_speed(ci[c], cj[c], a, a_smooth, T, resting_speed):
                    e = 0.0
                cw[c, 1] = e
                cw[c, 2] = e * cw[c, 0]
                resting_only = resting_only and e == 0.0
            if resting_only or capped_now:
                # Resting contact (or too many rounds): every gathered contact at once, perfectly
                # inelastic. Sequential rounds would shrink such approaches only geometrically.
                for c in range(nc):
                    sel[c] = c
                    cw[c, 0] = _approach_speed(c, ci, cj, cn, v)
                    cw[c, 1] = 0.0
                    cw[c, 2] = 0.0
                ns = nc
            _solve_contacts(sel[:ns], ci, cj, cn, cw[:, 2], v, inv_mass, cw[:, 3], lcp_iterations, lcp_tol_v)
            for s in range(ns):
                c = sel[s]
                if cw[c, 3] <= 0.0:
                    continue
                e_pair = _pair_restitution(ci[c], cj[c], restitution, wall_e, rule, keys, values)
                if e_pair == 1.0 or cw[c, 0] > _resting_speed(ci[c], cj[c], a, a_smooth, T, resting_speed):
                    impacts += 1
                    if log_enabled:
                        if n_log == len(log_time):
                            log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e = _grow_log(
                                log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e
                            )
                        log_time[n_log] = t_now
                        log_i[n_log] = ci[c]
                        log_j[n_log] = cj[c]
                        log_normal[n_log] = cn[c]
                        log_impulse[n_log] = cw[c, 3]
                        log_speed[n_log] = cw[c, 0]
                        log_e[n_log] = cw[c, 1]
                        n_log += 1
                for b in (ci[c], cj[c]):
                    if b >= 0 and inv_mass[b] != 0.0 and not expanded[b]:
                        nc, ci, cj, cn, cw = _expand(
                            b, t_now, x, v, a, tb, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol,
                            merge, expanded, ci, cj, cn, cw, nc, nrm,
                        )  # fmt: skip
                        cluster[n_cluster] = b
                        n_cluster += 1
                        if len(sel) < nc:
                            grown = np.empty(len(ci), dtype=np.int64)
                            grown[:ns] = sel[:ns]
                            sel = grown

        # ---- resting-contact forces of the bodies involved (their neighbours held as they are)
        for q in range(n_cluster):
            b = cluster[q]
            w_free[b] = inv_mass[b]
            for d in range(dim):
                a[b, d] = a_smooth[b, d]
        if len(sel) < nc:
            sel = np.empty(len(ci), dtype=np.int64)
        _resting_forces(nc, ci, cj, cn, cw, sel, x, v, a, w_free, speed_tol, lcp_iterations, lcp_tol_a)

        # ---- re-predict what changed
        for q in range(n_cluster):
            b = cluster[q]
            w_free[b] = 0.0
            expanded[b] = False
            cnt[b] += 1
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
                b, t_now, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, speed_tol,
                dx, dv, da,
            )
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

    t_end = t_now if status == REBUILD else T
    _advance_all(t_end, x, v, a, tb, active)
    return (
        t_end, status, impacts, n_log,
        log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e, capped, events,
    )  # fmt: skip


@njit(cache=True, inline="always")
def _expand(b, t, x, v, a, tb, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, merge,
            expanded, ci, cj, cn, cw, nc, nrm):  # fmt: skip
    """Add every touching contact of body b (at time t) not yet gathered; mark b expanded."""
    # room for every candidate first: growing inside the loops would make Numba count references on
    # every array at every iteration
    need = nc + start[b + 1] - start[b] + wall_p.shape[0]
    if need > len(ci):
        ci, cj, cn, cw = _grow_contacts(ci, cj, cn, cw, need)
    for m in range(start[b], start[b + 1]):
        j = nbrs[m]
        if not active[j] or expanded[j] or (inv_mass[b] == 0.0 and inv_mass[j] == 0.0):
            continue
        if merge:
            continue
        _advance(j, t, x, v, a, tb)
        if _touching(b, j, x, radius, tol, nrm):
            ci[nc] = b
            cj[nc] = j
            cn[nc] = nrm
            nc += 1
    for k in range(wall_p.shape[0]):
        if _wall_touching(b, k, x, radius, wall_p, wall_n, tol):
            ci[nc] = b
            cj[nc] = -1 - k
            cn[nc] = -wall_n[k]
            nc += 1
    expanded[b] = True
    return nc, ci, cj, cn, cw


@njit(cache=True)
def _grow_log(log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e):
    cap = 2 * len(log_time)
    t2 = np.empty(cap)
    i2 = np.empty(cap, dtype=np.int64)
    j2 = np.empty(cap, dtype=np.int64)
    n2 = np.empty((cap, log_normal.shape[1]))
    p2 = np.empty(cap)
    s2 = np.empty(cap)
    e2 = np.empty(cap)
    m = len(log_time)
    t2[:m] = log_time
    i2[:m] = log_i
    j2[:m] = log_j
    n2[:m] = log_normal
    p2[:m] = log_impulse
    s2[:m] = log_speed
    e2[:m] = log_e
    return t2, i2, j2, n2, p2, s2, e2


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
