"""The end-of-step position projection of `World`: overlaps removed without touching velocities.

Resting contacts carry forces held constant within a step, so a step may leave overlaps a little deeper
than ``Config.resting_gap``. They are removed by the smallest mass-weighted displacement of positions
(`project`): the complementarity problem of `carom.contact.solver.solve_contacts` on displacements
instead of velocities, solved by `carom.contact.solver.solve_accelerated`. Velocities, hence kinetic
energy, are never changed: pushing bodies apart adds no kinetic energy (it raises the potential energy
of bodies lifted out of an overlap by their weight times the lift).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import broadphase
from .solver import solve_accelerated

PROJECTION_PASSES = 4  # position projections per step at most, each from the positions the last one left


def project(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, iterations):
    """Remove overlaps deeper than ``slop`` (a fraction of the smaller radius; of the radius for a wall) by
    the smallest mass-weighted displacement of the positions that leaves every overlap at most half of
    it: the complementarity problem of `carom.contact.solver.solve_contacts`, on displacements instead of
    velocities (unique, so independent of body order). Velocities, hence kinetic energy, are untouched.

    ``start, nbrs`` are the step's candidate lists, which hold every pair that touched in it. A
    displacement can close a gap that was open (a body pushed out of one overlap into a neighbour), so
    the problem takes in every pair and wall whose gap is less than the deepest overlap, from candidate
    lists built for that reach, with targets that hold only if the gap would close. It is linearised about
    the positions (fixed normals), so it is solved again from the new positions while an overlap deeper
    than the slop remains, at most ``PROJECTION_PASSES`` times."""
    no_i, no_n, no_t = np.empty(0, dtype=np.int64), np.empty((0, x.shape[1])), np.empty(0)
    for _ in range(PROJECTION_PASSES):
        deep, depth = _near_contacts(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, 0.0, no_i, no_i,
                                     no_n, no_t)  # fmt: skip
        if deep == 0:
            return
        # candidates: every pair within 2 depth of touching
        start, nbrs, _, _ = broadphase.candidates(x, radius, active, np.full(len(radius), depth), 1.0)
        moved = _project_once(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, depth, iterations)
        if moved > depth:  # two bodies beyond the lists' reach may have been moved into each other
            start, nbrs, _, _ = broadphase.candidates(x, radius, active, np.zeros(len(radius)), 1.0)


@njit(cache=True, forceinline=False)
def _project_once(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, margin, iterations):
    """One solve of `project`'s problem over the contacts within ``margin`` (m) of touching. Returns the
    largest displacement (m)."""
    no_i, no_n, no_t = np.empty(0, dtype=np.int64), np.empty((0, x.shape[1])), np.empty(0)
    nc, _ = _near_contacts(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, margin, no_i, no_i, no_n,
                           no_t)  # fmt: skip
    if nc == 0:
        return 0.0
    ci = np.empty(nc, dtype=np.int64)
    cj = np.empty(nc, dtype=np.int64)
    cn = np.empty((nc, x.shape[1]))
    target = np.empty(nc)
    _near_contacts(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, margin, ci, cj, cn, target)
    shift = np.zeros(x.shape)
    r_min = np.inf
    for i in range(len(radius)):
        if active[i]:
            r_min = min(r_min, radius[i])
    solve_accelerated(np.arange(nc), ci, cj, cn, target, shift, inv_mass, np.empty(nc), np.empty((nc, 3)),
                      np.zeros(len(radius)), iterations, 0.05 * slop * r_min)  # fmt: skip
    x += shift
    moved2 = 0.0
    for i in range(len(radius)):
        step2 = 0.0
        for d in range(x.shape[1]):
            step2 += shift[i, d] ** 2
        moved2 = max(moved2, step2)
    return math.sqrt(moved2)


@njit(cache=True, forceinline=False)
def _near_contacts(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, margin, ci, cj, cn, target):
    """The contacts of `project`, written into the arrays if they have room: every pair or wall within half
    the slop plus ``margin`` (m), with the displacement target ``-(gap + slop R / 2)``. Returns (their
    number, or 0 if no overlap is deeper than the slop: nothing to do; the deepest overlap, m)."""
    n, dim = x.shape
    deep = False
    depth = 0.0
    nc = 0
    for i in range(n):
        if not active[i]:
            continue
        for m in range(start[i], start[i + 1]):
            j = nbrs[m]
            if j <= i or not active[j] or inv_mass[i] + inv_mass[j] == 0.0:
                continue
            allowed = 0.5 * slop * min(radius[i], radius[j])
            reach = radius[i] + radius[j] + 2.0 * allowed + margin
            dist2 = 0.0
            for d in range(dim):
                dist2 += (x[j, d] - x[i, d]) ** 2
            if dist2 >= reach * reach or dist2 == 0.0:
                continue
            dist = math.sqrt(dist2)
            gap = dist - radius[i] - radius[j]
            deep = deep or gap < -2.0 * allowed
            depth = max(depth, -gap)
            if nc < len(ci):
                ci[nc] = i
                cj[nc] = j
                for d in range(dim):
                    cn[nc, d] = (x[j, d] - x[i, d]) / dist
                target[nc] = -(gap + allowed)
            nc += 1
        if inv_mass[i] != 0.0:
            allowed = 0.5 * slop * radius[i]
            for k in range(wall_p.shape[0]):
                gap = -radius[i]
                for d in range(dim):
                    gap += (x[i, d] - wall_p[k, d]) * wall_n[k, d]
                if gap >= 2.0 * allowed + margin:
                    continue
                deep = deep or gap < -2.0 * allowed
                depth = max(depth, -gap)
                if nc < len(ci):
                    ci[nc] = i
                    cj[nc] = -1 - k
                    for d in range(dim):
                        cn[nc, d] = -wall_n[k, d]
                    target[nc] = -(gap + allowed)
                nc += 1
    return (nc if deep else 0), depth
