"""Simultaneous contacts: the complementarity solve of one round, shared by both engines.

Several contacts at one instant (Newton's cradle, a ball resting on a pile) are solved in *rounds*: the
contacts that approach now are solved together as one complementarity problem (normal impulses
``P >= 0``, separation speed ``>= e`` times approach speed, equality where ``P > 0``), then every contact
is checked again, and the new approaching ones form the next round. The impulse thus travels down a
touching chain one ball at a time, as in real cradles, and symmetric impacts stay symmetric. Each round's
problem is solved by projected Gauss–Seidel; its velocities are unique (the problem is a strictly convex
quadratic program in the velocity change) so the result does not depend on the order of the contacts.
The same solve, on accelerations, gives resting-contact forces, and on displacements the position
projection (`carom.contact.projection`). Contact conventions: `carom.contact.law`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..jit import inlined, kernel
from .law import apply_impulse, approach_speed


@inlined
def tally_contacts(active, ci, cj, per_body, amount):
    """Add ``amount`` to ``per_body`` (bodies,) for each body of each contact in ``active``: 1.0 counts the
    contacts of every body, -1.0 takes that count off again (back to zero, exactly)."""
    for c in active:
        per_body[ci[c]] += amount
        if cj[c] >= 0:
            per_body[cj[c]] += amount


@inlined
def mark_clustered(active, ci, cj, inv_mass, per_body, clustered):
    """Mark in ``clustered`` (by contact) each contact of ``active`` that shares a movable body with another of
    them (the contacts of a pile, as against a ball alone on a floor, or alone on a fixed body that others
    touch too: through a body of inverse mass 0 in ``inv_mass``, contacts do not act on each other).
    ``per_body`` is a (bodies,) array that must be all zero (it is left so). Returns whether any is marked."""
    tally_contacts(active, ci, cj, per_body, 1.0)
    marked = False
    for c in active:
        clustered[c] = not alone(c, ci, cj, inv_mass, per_body)
        marked = marked or clustered[c]
    tally_contacts(active, ci, cj, per_body, -1.0)
    return marked


@inlined
def _shared(b, inv_mass, per_body):
    """Whether movable body b takes part in more than one of the contacts counted in ``per_body``."""
    return inv_mass[b] != 0.0 and per_body[b] > 1.0


@inlined
def alone(c, ci, cj, inv_mass, per_body):
    """Whether contact c's movable bodies take part in no other contact counted in ``per_body``
    (`tally_contacts`): its rows then couple to no other contact's."""
    return not _shared(ci[c], inv_mass, per_body) and (cj[c] < 0 or not _shared(cj[c], inv_mass, per_body))


@inlined
def nesterov_momentum(theta, restart):
    """Nesterov's extrapolation weight for the next step and the next theta (start from theta = 1), or
    (0, 1) where ``restart`` (the momentum points against the gradient: O'Donoghue and Candes' adaptive
    restart)."""
    if restart:
        return 0.0, 1.0
    theta_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * theta * theta))
    return (theta - 1.0) / theta_next, theta_next


@inlined
def solve_one(c, ci, cj, normal, target, rate, inv_mass, out):
    """`solve_contacts` for the single contact c, in closed form (what its sweeps converge to):
    ``out[c] = max(0, (u + target) / k)``, k the sum of the inverse masses."""
    i = ci[c]
    j = cj[c]
    k = inv_mass[i] + (inv_mass[j] if j >= 0 else 0.0)
    p = max(0.0, (approach_speed(c, ci, cj, normal, rate) + target[c]) / k) if k != 0.0 else 0.0
    out[c] = p
    if p != 0.0:
        apply_impulse(c, p, ci, cj, normal, rate, inv_mass)


@kernel
def solve_contacts(active, ci, cj, normal, target, rate, inv_mass, out, iterations, tol, warm=False):
    """Projected Gauss–Seidel over the contacts listed in ``active``; ``rate`` is updated in place.

    Velocity level (``rate`` = velocities, ``out`` = impulses in N s): finds ``out[c] >= 0`` such that
    each contact's approach speed after is ``<= -target[c]`` (``target = e * u_before``: separation at
    least e times the approach), with equality where the impulse is positive.

    Acceleration level (``rate`` = accelerations, ``out`` = resting-contact forces in N): the same with
    ``target = -kappa``, kappa the centripetal part of the gap's second derivative (``|v_t|^2 / D`` for two
    spheres at distance D moving with relative tangential speed v_t; 0 for a wall): the normal
    acceleration of approach is then ``<= kappa`` (the gap does not start to close) and ``out > 0`` only
    where it is exactly kappa.

    ``tol`` (units of ``rate``) bounds the last sweep's largest change. Returns the sweeps used. With
    ``warm``, the sweeps start from the values in ``out``, already applied to ``rate`` (a warm start).
    """
    if not warm:
        for c in active:
            out[c] = 0.0
    for sweep in range(iterations):
        worst = 0.0
        for c in active:
            i = ci[c]
            j = cj[c]
            k = inv_mass[i] + (inv_mass[j] if j >= 0 else 0.0)
            if k == 0.0:
                continue
            new = max(0.0, out[c] + (approach_speed(c, ci, cj, normal, rate) + target[c]) / k)
            dp = new - out[c]
            if dp != 0.0:
                out[c] = new
                apply_impulse(c, dp, ci, cj, normal, rate, inv_mass)
                worst = max(worst, abs(dp) * k)
        if worst <= tol:
            return sweep + 1
    return iterations


#: The accelerated solve may stop before ``tol`` once it stalls, if the caller allows (``stall_tol``): from
#: `STALL_SWEEPS` sweeps on (counted from the start, or from its switch to the eigenvalue step,
#: `SPECTRAL_SWEEPS`), each time the sweeps have doubled, it stops if the smallest residual seen is
#: still above `STALL_FACTOR` times what it was at the last check (falling slower than 1/k) and within
#: ``stall_tol``, and returns the iterate that had it. On a jammed pile (more contacts than degrees of
#: freedom, targets consistent only to round-off) the dual problem is degenerate: the residual plateaus far
#: above ``tol`` for thousands of sweeps. A plateau is no proof that none will follow (a solvable problem can
#: stand still for a while, then converge), hence the caller's bound on what stopping may leave.
STALL_SWEEPS = 256
STALL_FACTOR = 0.5


#: In a set of at least `SPECTRAL_CONTACTS` contacts that has not converged in `SPECTRAL_SWEEPS` sweeps, the
#: accelerated solve's step comes from then on from the largest eigenvalue of the Delassus operator, estimated
#: by `SPECTRAL_ITERATIONS` power iterations (a Rayleigh quotient, which approaches it from below) times
#: `SPECTRAL_MARGIN`, where that is below the Gershgorin bound (the accelerated method needs a bound at least
#: the largest eigenvalue: the estimate must be within 1/1.5 of it, tested on random sets). In a random pile
#: the Gershgorin bound is 2-3 times the eigenvalue (3D: 19 against 6.0), and the sweeps grow with the
#: square root of the step's bound. The estimate costs about 24 sweeps: a warm-started solve of a settled
#: pile, done in a few sweeps, does not pay it (a settled 992-disk pile's step took 3.4-4.0 ms with the
#: estimate made up front, 2.1-2.9 ms without).
SPECTRAL_CONTACTS = 128
SPECTRAL_SWEEPS = 64
SPECTRAL_ITERATIONS = 16
SPECTRAL_MARGIN = 1.5


@kernel
def largest_eigenvalue(active, ci, cj, normal, inv_mass, per_body, dim, vector, image):
    """The Rayleigh quotient of the Delassus operator ``J M^-1 J^T`` of the contacts ``active`` after
    `SPECTRAL_ITERATIONS` power iterations: at most its largest eigenvalue, and near it. The start vector,
    ``1 + frac(0.618 c)`` for contact c, is positive (the top eigenvector of a pile's operator is near one
    of one sign) and uneven, so that no symmetry of the set hides the top eigenvector from it.
    ``per_body`` is a (bodies,) array that must be all zero (it is left so), used one dimension of ``dim``
    at a time; ``vector`` and ``image`` are (contacts,) work arrays."""
    for c in active:
        vector[c] = 1.0 + (0.6180339887498949 * c) % 1.0
    quotient = 0.0
    for _ in range(SPECTRAL_ITERATIONS):
        for c in active:
            image[c] = 0.0
        for d in range(dim):
            for c in active:
                i, j = ci[c], cj[c]
                per_body[i] -= vector[c] * inv_mass[i] * normal[c, d]
                if j >= 0:
                    per_body[j] += vector[c] * inv_mass[j] * normal[c, d]
            for c in active:
                i, j = ci[c], cj[c]
                image[c] -= (per_body[i] - (per_body[j] if j >= 0 else 0.0)) * normal[c, d]
            for c in active:
                per_body[ci[c]] = 0.0
                if cj[c] >= 0:
                    per_body[cj[c]] = 0.0
        dot = 0.0
        size2 = 0.0
        norm2 = 0.0
        for c in active:
            dot += vector[c] * image[c]
            size2 += vector[c] * vector[c]
            norm2 += image[c] * image[c]
        quotient = dot / size2
        if norm2 == 0.0:
            return 0.0
        scale = 1.0 / math.sqrt(norm2)
        for c in active:
            vector[c] = image[c] * scale
    return quotient


class SolverWork(NamedTuple):
    """`solve_accelerated`'s work arrays for up to n bodies and cap contacts (`solver_work`). Its sweeps run
    over a packed copy of the contacts, in sweep order and with their bodies numbered locally: they read
    memory in order and never branch on walls (every wall is local body m, of inverse mass 0, whose rates
    stay 0). The arithmetic is the same operation for operation as sweeping the contacts in place (the
    result is the same to the bit), 1.25 times faster on a pile's 3,700 contacts. ``per_body`` must be all
    zero between solves; the rest is scratch."""

    per_body: np.ndarray  # (n,): zero between solves (a count, or a local id + 1, within one)
    bodies: np.ndarray  # (n,) int64: each local body's index
    rate: np.ndarray  # (n + 1, dim): the local bodies' rates, then the walls' (0)
    bi: np.ndarray  # (cap,) int64: each packed contact's body i, local
    bj: np.ndarray  # (cap,) int64: its body j, local (m: a wall)
    normal: np.ndarray  # (cap, dim)
    inv_mass_i: np.ndarray  # (cap,)
    inv_mass_j: np.ndarray  # (cap,): 0 for a wall
    target: np.ndarray  # (cap,)
    lip: np.ndarray  # (cap,): each contact's L (its step is 1 / L)
    out: np.ndarray  # (cap,): the iterate
    y: np.ndarray  # (cap,): the extrapolated point, whose impulses ``rate`` holds
    trial: np.ndarray  # (cap,)
    best: np.ndarray  # (cap,): the iterate of the smallest residual so far
    vector: np.ndarray  # (cap,): `largest_eigenvalue`'s work, by contact index
    image: np.ndarray  # (cap,)


@kernel
def solver_work(n, cap, dim):
    """`SolverWork` for up to n bodies, cap contacts (indices below cap) in dim dimensions."""
    i = np.int64
    return SolverWork(np.zeros(n), np.empty(n, i), np.empty((n + 1, dim)), np.empty(cap, i), np.empty(cap, i),
                      np.empty((cap, dim)), np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap),
                      np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap))  # fmt: skip


@kernel
def solve_accelerated(active, ci, cj, normal, target, rate, inv_mass, out, work, iterations, tol, warm=False,
                      stall_tol=0.0):  # fmt: skip
    """`solve_contacts`'s problem by accelerated projected gradient: Nesterov's method with adaptive restart
    (APGD, as in Chrono). Every contact moves at once from the same rates, a Jacobi-type sweep, so the
    result does not depend on the contacts' order; the step is ``1 / L``, L the Gershgorin bound of the
    Delassus operator ``J M^-1 J^T`` or, in a large set still short of ``tol`` after `SPECTRAL_SWEEPS` sweeps,
    from then on `SPECTRAL_MARGIN` times its largest eigenvalue (`largest_eigenvalue`) where that is less (no
    line search), except for a contact whose movable bodies touch
    nothing else in the set (a ball alone on a floor, or on a fixed body): it steps by the inverse of its
    own diagonal entry, so it is solved exactly in the first sweep, whatever the rest of the set (the
    rest's bound would leave it converged only to ``tol``). It converges in O(sqrt(kappa)) sweeps, kappa
    that operator's condition number (about the square of a pile's depth in layers), where Gauss-Seidel
    needs O(kappa); the projection onto ``out >= 0`` becomes one onto a friction cone for tangential rows.
    (Every contact stepping by its own row's bound, a diagonal metric that also converges, made no measured
    difference on random piles.)

    ``work`` is a `SolverWork` for at least the bodies of ``rate`` and the contacts' indices. With
    ``stall_tol`` (units of ``rate``; 0: never), the solve may end at a stall (`STALL_SWEEPS`) with its best
    iterate, once that is within ``stall_tol``. Returns the sweeps used."""
    k = len(active)
    if k == 0:
        return 0
    per_body = work.per_body
    tally_contacts(active, ci, cj, per_body, 1.0)
    lip = 0.0
    for c in active:
        i, j = ci[c], cj[c]
        lip = max(lip, inv_mass[i] * per_body[i] + (inv_mass[j] * per_body[j] if j >= 0 else 0.0))
    for s in range(k):
        c = active[s]
        i, j = ci[c], cj[c]
        work.lip[s] = inv_mass[i] + (inv_mass[j] if j >= 0 else 0.0) if alone(c, ci, cj, inv_mass, per_body) else lip
    tally_contacts(active, ci, cj, per_body, -1.0)
    for s in range(k):
        c = active[s]
        if not warm or work.lip[s] == 0.0:  # (a contact between two fixed bodies carries nothing)
            out[c] = 0.0
        work.out[s] = out[c]
        work.y[s] = out[c]  # the extrapolated point y, whose impulses ``rate`` holds
    m = _pack(active, ci, cj, normal, target, rate, inv_mass, work)
    first = min(iterations, SPECTRAL_SWEEPS) if k >= SPECTRAL_CONTACTS else iterations
    sweeps, done = _accelerated_sweeps(work, k, first, tol, stall_tol)
    if not done and sweeps < iterations:  # a long solve: a tighter step from here on, if the estimate gives one
        estimate = SPECTRAL_MARGIN * largest_eigenvalue(active, ci, cj, normal, inv_mass, per_body, rate.shape[1],
                                                        work.vector, work.image)  # fmt: skip
        if 0.0 < estimate < lip:
            for s in range(k):  # (an alone contact whose own bound is lip may take it too: at least its diagonal)
                if work.lip[s] == lip:
                    work.lip[s] = estimate
            _restart(work, k)
        more, _ = _accelerated_sweeps(work, k, iterations - sweeps, tol, stall_tol)
        sweeps += more
    _restart(work, k)  # (the rates of the iterate)
    _unpack(work, k, m, active, rate, out)
    return sweeps


@kernel
def _pack(active, ci, cj, normal, target, rate, inv_mass, work):
    """Copy the contacts ``active`` and their bodies' rates into ``work``, numbering the bodies in order of
    first appearance; returns how many bodies (m: the walls' local index)."""
    per_body = work.per_body
    m = 0
    for c in active:  # (per_body: local id + 1)
        for b in (ci[c], cj[c]):
            if b >= 0 and per_body[b] == 0.0:
                work.bodies[m] = b
                m += 1
                per_body[b] = m
    for q in range(m):
        for d in range(rate.shape[1]):
            work.rate[q, d] = rate[work.bodies[q], d]
    work.rate[m, :] = 0.0
    for s in range(len(active)):
        c = active[s]
        i, j = ci[c], cj[c]
        work.bi[s] = int(per_body[i]) - 1
        work.bj[s] = int(per_body[j]) - 1 if j >= 0 else m
        for d in range(rate.shape[1]):
            work.normal[s, d] = normal[c, d]
        work.inv_mass_i[s] = inv_mass[i]
        work.inv_mass_j[s] = inv_mass[j] if j >= 0 else 0.0
        work.target[s] = target[c]
    for q in range(m):
        per_body[work.bodies[q]] = 0.0
    return m


@inlined
def _packed_push(work, s, amount):
    """`carom.contact.law.apply_impulse` of ``amount`` at packed contact s."""
    i, j = work.bi[s], work.bj[s]
    for d in range(work.rate.shape[1]):
        work.rate[i, d] -= amount * work.inv_mass_i[s] * work.normal[s, d]
        work.rate[j, d] += amount * work.inv_mass_j[s] * work.normal[s, d]


@kernel
def _accelerated_sweeps(work, k, iterations, tol, stall_tol):
    """`solve_accelerated`'s sweeps over the k packed contacts of ``work``, at most ``iterations``, from
    momentum 0; returns the sweeps used and whether they ended at the tolerance or a stall."""
    rate, normal, target, lip, out, y, trial = work.rate, work.normal, work.target, work.lip, work.out, work.y, \
        work.trial
    theta = 1.0
    best = math.inf  # the smallest residual so far, its iterate in work.best
    window = math.inf  # the smallest residual at the last checkpoint
    checkpoint = STALL_SWEEPS
    for sweep in range(iterations):
        worst = 0.0
        restart = 0.0
        for s in range(k):
            i, j = work.bi[s], work.bj[s]
            u = 0.0
            for d in range(rate.shape[1]):
                u += (rate[i, d] - rate[j, d]) * normal[s, d]
            step = max(0.0, y[s] + (u + target[s]) / lip[s]) if lip[s] != 0.0 else 0.0
            trial[s] = step
            worst = max(worst, abs(step - y[s]) * lip[s])
            restart += lip[s] * (y[s] - step) * (step - out[s])
        if worst <= tol:
            _copy(trial, out, k)
            return sweep + 1, True
        if stall_tol > 0.0 and worst < best:
            best = worst
            _copy(trial, work.best, k)
        if stall_tol > 0.0 and sweep + 1 == checkpoint:
            if best <= stall_tol and best > STALL_FACTOR * window:  # stalled: the best iterate is the answer
                _copy(work.best, out, k)
                return sweep + 1, True
            window = best
            checkpoint *= 2
        beta, theta = nesterov_momentum(theta, restart > 0.0)  # (restart: momentum against the gradient)
        for s in range(k):
            step = trial[s]
            extrapolated = max(0.0, step + beta * (step - out[s]))
            if extrapolated != y[s]:
                _packed_push(work, s, extrapolated - y[s])
            out[s] = step
            y[s] = extrapolated
    return iterations, False


@kernel
def _restart(work, k):
    """Restart the sweeps from the iterate: the extrapolated point becomes it (its rates too)."""
    for s in range(k):
        if work.out[s] != work.y[s]:
            _packed_push(work, s, work.out[s] - work.y[s])
            work.y[s] = work.out[s]


@inlined
def _copy(source, destination, k):
    """``destination[:k] = source[:k]``, without the temporary copy numba makes for a slice."""
    for s in range(k):
        destination[s] = source[s]


@kernel
def _unpack(work, k, m, active, rate, out):
    """Write the packed solve back: ``work.out`` into ``out``, the packed rates into ``rate``."""
    for s in range(k):
        out[active[s]] = work.out[s]
    for q in range(m):
        for d in range(rate.shape[1]):
            rate[work.bodies[q], d] = work.rate[q, d]
