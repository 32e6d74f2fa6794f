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

from numba import njit

from .law import apply_impulse, approach_speed


@njit(cache=True, inline="always")
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


@njit(cache=True)
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
            u = approach_speed(c, ci, cj, normal, rate)
            new = max(0.0, out[c] + (u + target[c]) / k)
            dp = new - out[c]
            if dp != 0.0:
                out[c] = new
                apply_impulse(c, dp, ci, cj, normal, rate, inv_mass)
                worst = max(worst, abs(dp) * k)
        if worst <= tol:
            return sweep + 1
    return iterations
