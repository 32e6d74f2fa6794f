"""Contact lists of the drift: the contacts near or touching, gathered into the drift's contact arrays.

A contact ``c`` is body ``ci[c]`` with body ``cj[c]`` (``cj < 0``: wall ``-1 - cj``), ``ck[c]`` the entry of
``cj`` in ``ci``'s candidate list (-1 for a wall), unit normal ``cn[c]`` from i towards j, and the work
columns below in ``cw[c]``.
"""

from __future__ import annotations

import math

import numpy as np

from ..contact.layout import SHARED_COLUMNS
from ..jit import inlined, kernel
from ..kinematics import advance
from ..narrowphase.spheres import pair_gap, pair_slack, wall_gap, wall_plane_gap, wall_slack_bound, walls_within

INF = math.inf


# ---------------------------------------------------------------- contact lists
# Columns of the per-contact work array: approach speed (m/s), restitution, solver target, impulse (N s) or
# force (N), resting flag (1.0: in the step's resting set), gap (m; 0 while touching), force carried (N),
# whether its resting state or force is being updated (1.0). (Eight columns: a row is one 64-byte cache
# line; the force solver's scratch is a work array of its own.)
RESTING, GAP, FORCE, UPDATE = range(SHARED_COLUMNS, SHARED_COLUMNS + 4)
CONTACT_COLUMNS = SHARED_COLUMNS + 4


@inlined
def put_contact(ci, cj, ck, cn, cw, c, i, j, m, normal, sign, gap, resting, force):
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


@inlined
def near_gap(resting_gap, r, reach):
    """The gap (m) within which a contact is near: ``resting_gap`` of the (smaller) radius r, or ``reach``
    if larger (None: not that; a branch Numba prunes, so the hot loop of a gas stays lean)."""
    near = resting_gap * r
    if reach is not None:
        near = max(near, reach)
    return near


@inlined
def near_pair(b, j, m, x, radius, tol, resting_gap, reach, ci, cj, ck, cn, cw, nc, nrm, deepest):
    """`gather_near` for pair b-j (entry m of b's list, j > b): the contact is written at nc if it is near.
    Returns the new (nc, deepest). ``reach`` (m) or None: see `gather_near`."""
    near = near_gap(resting_gap, min(radius[b], radius[j]), reach)
    within = radius[b] + radius[j] + max(near, pair_slack(b, j, x, radius, tol))
    dist2 = 0.0
    for d in range(x.shape[1]):
        dist2 += (x[j, d] - x[b, d]) ** 2
    if dist2 > within * within:
        return nc, deepest
    gap = pair_gap(b, j, x, radius, tol, nrm)
    if gap > near:
        return nc, deepest
    put_contact(ci, cj, ck, cn, cw, nc, b, j, m, nrm, 1.0, gap, np.bool_(False), 0.0)
    return nc + 1, min(deepest, (math.sqrt(dist2) - radius[b] - radius[j]) / min(radius[b], radius[j]))


@inlined
def near_wall_reach(b, x, radius, wall_size, tol, resting_gap, reach):
    """A plane gap (m) beyond which body b is near no wall: beyond the resting gap, ``reach`` (m) and the
    touching slack of every wall (`wall_slack_bound`)."""
    return max(near_gap(resting_gap, radius[b], reach), wall_slack_bound(b, x, radius, wall_size, tol))


@inlined
def near_wall(b, k, plane_gap, x, radius, wall_p, wall_n, tol, resting_gap, reach, ci, cj, ck, cn, cw, nc, deepest):
    """`gather_near` for body b and wall k, at plane gap ``plane_gap`` (m) within `near_wall_reach`.
    Returns the new (nc, deepest)."""
    gap = wall_gap(b, k, x, radius, wall_p, wall_n, tol)
    if gap > near_gap(resting_gap, radius[b], reach):
        return nc, deepest
    put_contact(ci, cj, ck, cn, cw, nc, b, -1 - k, np.int64(-1), wall_n[k], -1.0, gap, np.bool_(False), 0.0)
    return nc + 1, min(deepest, plane_gap / radius[b])


@kernel(refcounts=False)  # no reference counting on its arrays: it allocates nothing
def gather_near(x, radius, inv_mass, active, start, nbrs, wall_p, wall_n, wall_size, tol, resting_gap, reach, merge,
                ci, cj, ck, cn, cw, nrm):  # fmt: skip
    """Every contact (all bodies at one time) touching or within ``resting_gap`` of the smaller radius or
    ``reach`` (m; None: not that), in body order, into the contact arrays (room for `contact_capacity`).
    No body pairs in merge mode (bodies that touch merge). ``nrm``: work array of dim floats. Returns
    their number and the deepest overlap among them, as a fraction of the smaller radius (0 if none
    overlaps)."""
    nc = np.int64(0)
    deepest = 0.0
    for b in range(x.shape[0]):
        if not active[b]:
            continue
        if not merge:
            for m in range(start[b], start[b + 1]):
                j = nbrs[m]
                if j > b and active[j] and (inv_mass[b] != 0.0 or inv_mass[j] != 0.0):
                    nc, deepest = near_pair(b, j, m, x, radius, tol, resting_gap, reach, ci, cj, ck, cn, cw, nc, nrm,
                                             deepest)  # fmt: skip
        if inv_mass[b] != 0.0:
            near_reach = near_wall_reach(b, x, radius, wall_size, tol, resting_gap, reach)
            for k in range(walls_within(b, near_reach, x, radius, wall_p, wall_n)):
                plane_gap = wall_plane_gap(b, k, x, radius, wall_p, wall_n)
                if plane_gap <= near_reach:
                    nc, deepest = near_wall(b, k, plane_gap, x, radius, wall_p, wall_n, tol, resting_gap, reach, ci,
                                            cj, ck, cn, cw, nc, deepest)  # fmt: skip
    return nc, deepest


@inlined
def record_resting(c, force, ci, cj, ck, cw, start, nbrs, rest_pair, f_pair, rest_wall, f_wall):
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


@inlined
def expand(b, t, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p, wall_n, wall_size,
            rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw, nc, nrm):  # fmt: skip
    """Add the contacts of body b (at time t) not yet gathered, touching or resting; mark b expanded. With no
    contact held in this drift (``held`` false: no wall rests), a body far from every wall visits none."""
    if not merge:
        for m in range(start[b], start[b + 1]):
            j = nbrs[m]
            if not active[j] or expanded[j] or (inv_mass[b] == 0.0 and inv_mass[j] == 0.0):
                continue
            advance(j, t, x, v, a, tb)
            gap = pair_gap(b, j, x, radius, tol, nrm)
            if gap == 0.0 or rest_pair[m]:
                put_contact(ci, cj, ck, cn, cw, nc, b, j, m, nrm, 1.0, gap, rest_pair[m], f_pair[m])
                nc += 1
    n_walls = wall_p.shape[0]
    if not held:
        n_walls = walls_within(b, wall_slack_bound(b, x, radius, wall_size, tol), x, radius, wall_p, wall_n)
    for k in range(n_walls):
        gap = wall_gap(b, k, x, radius, wall_p, wall_n, tol)
        if gap == 0.0 or rest_wall[b, k]:
            put_contact(ci, cj, ck, cn, cw, nc, b, -1 - k, np.int64(-1), wall_n[k], -1.0, gap, rest_wall[b, k],
                        f_wall[b, k])  # fmt: skip
            nc += 1
    expanded[b] = True
    return nc


# a call, not inlined: it runs only when an instant needs too many rounds
@kernel(refcounts=False)
def expand_cluster(t, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p, wall_n, wall_size,
                   rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw, nc, nrm, cluster,
                   n_cluster):  # fmt: skip
    """Expand every body that touches one already gathered, until the whole touching cluster is in the
    contact lists (appended to ``cluster``). Returns (contacts, bodies in the cluster)."""
    q = 0
    while q < nc:
        if cw[q, GAP] == 0.0:
            for b in (ci[q], cj[q]):
                if b >= 0 and inv_mass[b] != 0.0 and not expanded[b]:
                    nc = expand(b, t, x, v, a, tb, radius, inv_mass, active, start, nbrs, rest_pair, f_pair, wall_p,
                                wall_n, wall_size, rest_wall, f_wall, held, tol, merge, expanded, ci, cj, ck, cn, cw,
                                nc, nrm)  # fmt: skip
                    cluster[n_cluster] = b
                    n_cluster += 1
        q += 1
    return nc, n_cluster
