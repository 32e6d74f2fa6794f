"""The drift of a step: every body on its parabola, every impact resolved at the instant it happens.

Within a step each body moves with a constant acceleration ``a = a_smooth + a_contact``: ``a_smooth``
from the forces evaluated before anything moved (exact for uniform gravity; the drift of kick-drift-kick
leapfrog otherwise), ``a_contact`` from resting-contact normal forces. The drift is an event-driven
simulation over the step: each body keeps its state at its own last event time (advanced lazily, exactly),
the earliest predicted contact of every body sits in an indexed binary heap, and the globally earliest
one is processed next. At an event all contacts touching the bodies involved are gathered and solved in
rounds (`carom.solver`), the bodies whose velocity changed gather their own touching contacts in turn,
and only those bodies are re-predicted. A body that strays farther than the broad phase's sweep margin
ends the drift early (status REBUILD) so that the caller can rebuild the candidate lists and continue.

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
from .narrowphase import _pair_contact_time, _wall_contact_time
from .solver import _approach_speed, _pair_restitution, _solve_contacts

DONE = 0
REBUILD = 1
INF = math.inf
NO_PARTNER = np.iinfo(np.int64).max


# ---------------------------------------------------------------- indexed binary min-heap on ev_time
@njit(cache=True)
def _heap_swap(heap, where, p, q):
    heap[p], heap[q] = heap[q], heap[p]
    where[heap[p]] = p
    where[heap[q]] = q


@njit(cache=True)
def _sift_down(heap, where, size, key, p):
    while True:
        left = 2 * p + 1
        smallest = p
        if left < size and key[heap[left]] < key[heap[smallest]]:
            smallest = left
        if left + 1 < size and key[heap[left + 1]] < key[heap[smallest]]:
            smallest = left + 1
        if smallest == p:
            return
        _heap_swap(heap, where, p, smallest)
        p = smallest


@njit(cache=True)
def _heap_fix(heap, where, size, key, body):
    """Restore heap order after ``key[body]`` changed."""
    p = where[body]
    while p > 0:
        parent = (p - 1) >> 1
        if key[heap[p]] < key[heap[parent]]:
            _heap_swap(heap, where, p, parent)
            p = parent
        else:
            break
    _sift_down(heap, where, size, key, p)


# ---------------------------------------------------------------- kinematics
@njit(cache=True)
def _advance(b, t, x, v, a, tb):
    """Move body b along its parabola to time t (exact)."""
    h = t - tb[b]
    if h != 0.0:
        for d in range(x.shape[1]):
            x[b, d] += v[b, d] * h + 0.5 * a[b, d] * h * h
            v[b, d] += a[b, d] * h
        tb[b] = t


@njit(cache=True)
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
        for d in range(x.shape[1]):
            dx[d] = x[j, d] - x[i, d]
            dv[d] = v[j, d] - v[i, d]
            da[d] = a[j, d] - a[i, d]
        slack = _slack(i, j, x, radius, tol)
        tau = _pair_contact_time(dx, dv, da, radius[i] + radius[j], slack, T - t, speed_tol)
        if t + tau < best:
            best = t + tau
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
def _grow_contacts(ci, cj, cn, work):
    cap = 2 * len(ci)
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
def _slack(i, j, x, radius, tol):
    """Gap (m) up to which bodies i and j touch: ``tol`` times the smaller radius, plus round-off."""
    size = 0.0
    for d in range(x.shape[1]):
        size = max(size, abs(x[i, d]), abs(x[j, d]))
    return tol * min(radius[i], radius[j]) + ROUNDOFF * size


@njit(cache=True)
def _wall_slack(b, k, x, radius, wall_p, tol):
    """Gap (m) up to which body b touches wall k: ``tol`` times its radius, plus round-off."""
    size = 0.0
    for d in range(x.shape[1]):
        size = max(size, abs(x[b, d]), abs(wall_p[k, d]))
    return tol * radius[b] + ROUNDOFF * size


@njit(cache=True)
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


@njit(cache=True)
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
    n_wall = wall_p.shape[0]
    impacts = 0
    n_log = 0
    capped = False

    # ---- resting-contact forces over all touching, non-approaching contacts
    for b in range(n):
        for d in range(dim):
            a[b, d] = a_smooth[b, d]
    nc = 0
    for b in range(n):
        if not active[b]:
            continue
        for m in range(start[b], start[b + 1]):
            j = nbrs[m]
            if j > b and active[j] and (inv_mass[b] != 0.0 or inv_mass[j] != 0.0):
                if _touching(b, j, x, radius, tol, nrm):
                    if nc == len(ci):
                        ci, cj, cn, cw = _grow_contacts(ci, cj, cn, cw)
                    ci[nc] = b
                    cj[nc] = j
                    cn[nc] = nrm
                    nc += 1
        if inv_mass[b] != 0.0:
            for k in range(n_wall):
                if _wall_touching(b, k, x, radius, wall_p, wall_n, tol):
                    if nc == len(ci):
                        ci, cj, cn, cw = _grow_contacts(ci, cj, cn, cw)
                    ci[nc] = b
                    cj[nc] = -1 - k
                    cn[nc] = -wall_n[k]
                    nc += 1
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
    heap = np.empty(n, dtype=np.int64)
    where = np.full(n, -1, dtype=np.int64)
    size = 0
    for b in range(n):
        if active[b] and inv_mass[b] != 0.0:
            ev_time[b], ev_partner[b] = _predict(
                b, t0, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, speed_tol,
                dx, dv, da,
            )
            heap[size] = b
            where[b] = size
            size += 1
    for p in range(size // 2 - 1, -1, -1):
        _sift_down(heap, where, size, ev_time, p)
    for b in range(n):
        p = ev_partner[b]
        if p != NO_PARTNER and p >= 0:
            ev_count[b] = cnt[p]

    t_now = t0
    status = DONE
    events = 0
    while size > 0:
        i = heap[0]
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
            _heap_fix(heap, where, size, ev_time, i)
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
                    _heap_fix(heap, where, size, ev_time, q_partner)
            _heap_fix(heap, where, size, ev_time, b)
        if stray:
            status = REBUILD
            break

    t_end = t_now if status == REBUILD else T
    for b in range(n):
        if active[b]:
            _advance(b, t_end, x, v, a, tb)
    return (
        t_end, status, impacts, n_log,
        log_time, log_i, log_j, log_normal, log_impulse, log_speed, log_e, capped, events,
    )  # fmt: skip


@njit(cache=True)
def _expand(b, t, x, v, a, tb, radius, inv_mass, active, start, nbrs, wall_p, wall_n, tol, merge,
            expanded, ci, cj, cn, cw, nc, nrm):  # fmt: skip
    """Add every touching contact of body b (at time t) not yet gathered; mark b expanded."""
    for m in range(start[b], start[b + 1]):
        j = nbrs[m]
        if not active[j] or expanded[j] or (inv_mass[b] == 0.0 and inv_mass[j] == 0.0):
            continue
        if merge:
            continue
        _advance(j, t, x, v, a, tb)
        if _touching(b, j, x, radius, tol, nrm):
            if nc == len(ci):
                ci, cj, cn, cw = _grow_contacts(ci, cj, cn, cw)
            ci[nc] = b
            cj[nc] = j
            cn[nc] = nrm
            nc += 1
    for k in range(wall_p.shape[0]):
        if _wall_touching(b, k, x, radius, wall_p, wall_n, tol):
            if nc == len(ci):
                ci, cj, cn, cw = _grow_contacts(ci, cj, cn, cw)
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
