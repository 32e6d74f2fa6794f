"""Prediction within a step: each body's earliest contact in the rest of the step, with a body or a wall.
"""

from __future__ import annotations

import math

import numpy as np

from ..intrinsics import prefetch
from ..jit import inlined, kernel
from ..kinematics import advance
from ..narrowphase.spheres import (
    contact_time,
    out_of_reach,
    pair_slack,
    relative_products,
    wall_contact_time,
    wall_plane_gap,
    wall_reach,
    wall_slack,
    walls_within,
)
from .gather import near_pair, near_wall, near_wall_reach

INF = math.inf


NO_PARTNER = np.iinfo(np.int64).max


#: Bodies ahead whose neighbours' rows a scan over candidate lists prefetches.
PREFETCH_AHEAD = 8


@inlined
def _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol):
    """Time of the next contact of bodies i and j (both at time t) in [t, T], or inf; the same to the last
    bit for (j, i). Pairs out of reach are rejected here, before any call (`narrowphase._out_of_reach`)."""
    s = radius[i] + radius[j]
    slack = pair_slack(i, j, x, radius, tol)
    reach2 = (s + slack) ** 2
    xx, xv, vv, xa, va, aa, approach = relative_products(x[i], x[j], v[i], v[j], a[i], a[j], reach2)
    if xx > reach2 and out_of_reach(xx, vv, aa, s, T - t):
        return INF
    return t + contact_time(xx, xv, vv, xa, va, aa, approach, s, slack, T - t, speed_tol)


@inlined
def predict_body(i, t, T, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n, wall_size,
             rest_wall, tol, speed_tol):  # fmt: skip
    """Earliest contact of body i in [t, T]: (time, partner); partner < 0 is wall -1 - partner. Contacts in
    the step's resting set (``rest_pair`` by candidate entry, ``rest_wall``) have no events.

    Body i and its neighbours are first advanced to t, so that "touching" and "approaching" are decided
    on exactly the numbers the event itself will see."""
    best = INF
    partner = np.int64(NO_PARTNER)
    advance(i, t, x, v, a, tb)
    for m in range(start[i], start[i + 1]):
        j = nbrs[m]
        if not active[j] or rest_pair[m] or (inv_mass[i] == 0.0 and inv_mass[j] == 0.0):
            continue
        advance(j, t, x, v, a, tb)
        t_c = _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol)
        if t_c < best:
            best = t_c
            partner = j
    if inv_mass[i] != 0.0:
        best, partner = _wall_event(i, t, T, x, v, a, radius, wall_p, wall_n, wall_size, rest_wall, tol, speed_tol,
                                    best, partner)  # fmt: skip
    return best, partner


@inlined
def _wall_event(i, t, T, x, v, a, radius, wall_p, wall_n, wall_size, rest_wall, tol, speed_tol, best, partner):
    """The earlier of (``best``, ``partner``) and body i's first wall contact in [t, T] (partner -1 - k for
    wall k); resting walls have no events. A wall is first tested by its plane gap alone: beyond
    `wall_reach`, it is out of reach, as `narrowphase._wall_contact_time` would find."""
    reach = wall_reach(i, x, v, a, radius, wall_size, tol, T - t)
    for k in range(walls_within(i, reach, x, radius, wall_p, wall_n)):
        if wall_plane_gap(i, k, x, radius, wall_p, wall_n) > reach or rest_wall[i, k]:
            continue
        t_c = _wall_time(i, k, t, T, x, v, a, radius, wall_p, wall_n, tol, speed_tol)
        if t_c < best:
            best = t_c
            partner = -1 - k
    return best, partner


@inlined
def _wall_time(b, k, t, T, x, v, a, radius, wall_p, wall_n, tol, speed_tol):
    """Time of the next contact of body b (at time t) with wall k in [t, T], or inf."""
    gap = wall_plane_gap(b, k, x, radius, wall_p, wall_n)
    ns = 0.0
    na = 0.0
    for d in range(x.shape[1]):
        ns += v[b, d] * wall_n[k, d]
        na += a[b, d] * wall_n[k, d]
    return t + wall_contact_time(gap, ns, na, wall_slack(b, k, x, radius, wall_p, tol), T - t, speed_tol)


@kernel
def predict_all(t, T, x, v, a, radius, inv_mass, active, start, nbrs, rest_pair, wall_p, wall_n, wall_size,
                 rest_wall, tol, speed_tol, ev_time, ev_partner, gather, resting_gap, ci, cj, ck, cn, cw,
                 nrm):  # fmt: skip
    """`predict_body` for every movable active body, all of them at time t: ``ev_time``, ``ev_partner``.

    Each pair's contact time is computed once, for both bodies: it is the same to the last bit either
    way round (``x_i - x_j == -(x_j - x_i)`` exactly, and every product in it pairs two such
    differences), and as rows are visited in id order each body still meets its partners in id order,
    walls last, so ties go to the same partner as in `predict_body`.

    With ``gather`` (no contact held by forces in the last step, not merge mode), it is also `gather_near`
    in the same pass, without the ``reach`` (with nothing resting, a slow contact that closes within the
    step is an event), and returns what that returns; (0, 0.0) otherwise."""
    n = x.shape[0]
    nc = np.int64(0)
    deepest = 0.0
    for i in range(n):
        ev_time[i] = INF
        ev_partner[i] = NO_PARTNER
    for i in range(n):
        ahead = min(i + PREFETCH_AHEAD, n)
        for m in range(start[ahead], start[min(ahead + 1, n)]):
            prefetch(x, nbrs[m])
            prefetch(v, nbrs[m])
            prefetch(a, nbrs[m])
            prefetch(radius, nbrs[m])
            prefetch(inv_mass, nbrs[m])
        if not active[i]:
            continue
        for m in range(start[i], start[i + 1]):
            j = nbrs[m]
            if j <= i or not active[j] or rest_pair[m] or (inv_mass[i] == 0.0 and inv_mass[j] == 0.0):
                continue
            if gather:
                nc, deepest = near_pair(i, j, m, x, radius, tol, resting_gap, None, ci, cj, ck, cn, cw, nc, nrm,
                                        deepest)  # fmt: skip
            t_c = _pair_time(i, j, t, T, x, v, a, radius, tol, speed_tol)
            if t_c < ev_time[i] and inv_mass[i] != 0.0:
                ev_time[i] = t_c
                ev_partner[i] = j
            if t_c < ev_time[j] and inv_mass[j] != 0.0:
                ev_time[j] = t_c
                ev_partner[j] = i
        if inv_mass[i] != 0.0:  # `_wall_event`, written out: inlined here it counted references on 7 arrays
            reach = wall_reach(i, x, v, a, radius, wall_size, tol, T - t)
            near_reach = near_wall_reach(i, x, radius, wall_size, tol, resting_gap, None) if gather else -INF
            for k in range(walls_within(i, max(reach, near_reach), x, radius, wall_p, wall_n)):
                plane_gap = wall_plane_gap(i, k, x, radius, wall_p, wall_n)
                if plane_gap <= near_reach:
                    nc, deepest = near_wall(i, k, plane_gap, x, radius, wall_p, wall_n, tol, resting_gap, None, ci,
                                            cj, ck, cn, cw, nc, deepest)  # fmt: skip
                if plane_gap > reach or rest_wall[i, k]:
                    continue
                t_c = _wall_time(i, k, t, T, x, v, a, radius, wall_p, wall_n, tol, speed_tol)
                if t_c < ev_time[i]:
                    ev_time[i] = t_c
                    ev_partner[i] = -1 - k
    return nc, deepest
