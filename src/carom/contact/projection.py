"""The end-of-step position projection of `World`: overlaps removed without touching velocities.

Resting contacts carry forces held constant within a step, so a step may leave overlaps a little deeper
than ``Config.resting_gap``. They are removed by the smallest mass-weighted displacement of positions
(`project`): the complementarity problem of `carom.contact.solver.solve_contacts` on displacements
instead of velocities, solved by `carom.contact.solver.solve_accelerated`. A push that lifts bodies against
the smooth forces raises their potential energy; `pay_for_lift` takes that energy from the kinetic energy
of the bodies moved, as far as they have it, so pushing bodies apart does not add energy.
"""

from __future__ import annotations

import math

import numpy as np

from .. import broadphase
from ..jit import kernel
from .solver import solve_accelerated, solver_work

PROJECTION_PASSES = 64  # position projections per step at most, each from the positions the last one left
FIRST_PASSES = 4  # passes of ``iterations`` sweeps; the later ones (deep piles) take LATE_SWEEPS times as many
LATE_SWEEPS = 5


def project(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, iterations):
    """Remove overlaps deeper than ``slop`` (a fraction of the smaller radius; of the radius for a wall) by
    the smallest mass-weighted displacement of the positions that leaves every overlap at most half of
    it: the complementarity problem of `carom.contact.solver.solve_contacts`, on displacements instead of
    velocities (unique, so independent of body order). It moves positions only (`pay_for_lift` then pays
    for the height gained).

    ``start, nbrs`` are the step's candidate lists, which hold every pair that touched in it. A
    displacement can close a gap that was open (a body pushed out of one overlap into a neighbour), so
    the problem takes in every pair and wall whose gap is less than the deepest overlap, from candidate
    lists built for that reach, with targets that hold only if the gap would close. It is linearised about
    the positions (fixed normals), so it is solved again from the new positions while an overlap deeper
    than the slop remains, at most ``PROJECTION_PASSES`` times: most steps need one pass, a landing pile's
    worst steps a few dozen (the first ``FIRST_PASSES`` with ``iterations`` sweeps, the later ones with
    ``LATE_SWEEPS`` times as many)."""
    no_i, no_n, no_t = np.empty(0, dtype=np.int64), np.empty((0, x.shape[1])), np.empty(0)
    for k in range(PROJECTION_PASSES):
        deep, depth = _near_contacts(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, 0.0, no_i, no_i,
                                     no_n, no_t)  # fmt: skip
        if deep == 0:
            return
        # candidates: every pair within 2 depth of touching
        start, nbrs, _, _ = broadphase.candidates(x, radius, active, np.full(len(radius), depth), 1.0)
        moved = _project_once(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, slop, depth,
                              iterations if k < FIRST_PASSES else LATE_SWEEPS * iterations)
        if moved > depth:  # two bodies beyond the lists' reach may have been moved into each other
            start, nbrs, _, _ = broadphase.candidates(x, radius, active, np.zeros(len(radius)), 1.0)


def pay_for_lift(x0, x, v, w, inv_mass, accel, kinetic) -> float:
    """Take the potential energy that moving positions from ``x0`` to ``x`` added against the smooth
    accelerations ``accel`` (m/s^2) from the kinetic energy of the movable bodies moved, as much as they have
    (`pay`). ``kinetic(bodies)``: their kinetic energy (J). Returns the energy taken (J). A move that lowers
    the bodies, or moves them under no force, changes no velocity."""
    moved = np.flatnonzero(np.any(x != x0, axis=1) & (inv_mass != 0.0))
    if len(moved) == 0:
        return 0.0
    return pay(v, w, moved, potential_rise(inv_mass, accel, x, x0, moved), kinetic(moved))


def potential_rise(inv_mass, accel, x, x0, bodies) -> float:
    """Potential energy (J) of the smooth accelerations ``accel`` gained by ``bodies`` (movable ids) since
    they were at ``x0``: ``-sum m accel . (x - x0)``."""
    mass = 1.0 / inv_mass[bodies]
    return -float(np.sum(mass * np.sum(accel[bodies] * (x[bodies] - x0[bodies]), axis=1)))


def pay(v, w, bodies, energy, kinetic) -> float:
    """Take ``energy`` (J, if positive) from ``kinetic``, the kinetic energy of ``bodies`` (J), as much as
    there is: their velocities ``v`` and spins ``w`` scaled down by one factor. Returns the energy taken."""
    if energy <= 0.0 or kinetic <= 0.0:
        return 0.0
    factor = math.sqrt(max(0.0, 1.0 - energy / kinetic))
    v[bodies] *= factor
    w[bodies] *= factor
    return min(energy, kinetic)


def kinetic_energy(v, w, inv_mass, inv_inertia, bodies) -> float:
    """Kinetic energy (J) of the movable ``bodies``: translation (``v``, (n, dim) m/s) and spin (``w``,
    (n, k) rad/s; none where ``inv_inertia`` is 0)."""
    mass = 1.0 / inv_mass[bodies]
    inertia = np.divide(1.0, inv_inertia[bodies], out=np.zeros(len(bodies)), where=inv_inertia[bodies] != 0.0)
    return 0.5 * float(np.sum(mass * np.sum(v[bodies] ** 2, axis=1)) + np.sum(inertia * np.sum(w[bodies] ** 2, axis=1)))


@kernel
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
    solve_accelerated(np.arange(nc), ci, cj, cn, target, shift, inv_mass, np.empty(nc),
                      solver_work(len(radius), nc, x.shape[1]), iterations, 0.05 * slop * r_min)  # fmt: skip
    x += shift
    moved2 = 0.0
    for i in range(len(radius)):
        step2 = 0.0
        for d in range(x.shape[1]):
            step2 += shift[i, d] ** 2
        moved2 = max(moved2, step2)
    return math.sqrt(moved2)


@kernel
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
