"""Impulses at contacts: the impact law, restitution rules and simultaneous contacts.

The impact law (smooth bodies): the impulse acts along the contact normal only,
``j = (1 + e) (Ub - Ua) / (1/Ma + 1/Mb)``, ``Va = Ua + j / Ma``, ``Vb = Ub - j / Mb``; a fixed body has
inverse mass 0 (the exact ``Mb -> inf`` limit). Momentum is conserved to round-off, and the kinetic
energy lost is ``(1 - e^2) mu (Ua - Ub)^2 / 2``.

Several contacts at one instant (Newton's cradle, a ball resting on a pile) are solved in *rounds*: the
contacts that approach now are solved together as one complementarity problem (normal impulses
``P >= 0``, separation speed ``>= e`` times approach speed, equality where ``P > 0``), then every contact
is checked again, and the new approaching ones form the next round. The impulse thus travels down a
touching chain one ball at a time, as in real cradles, and symmetric impacts stay symmetric. Each round's
problem is solved by projected Gauss–Seidel; its velocities are unique (the problem is a strictly convex
quadratic program in the velocity change) so the result does not depend on the order of the contacts.

Conventions for a contact ``c`` between body ``ci[c]`` and body ``cj[c]`` (``cj < 0``: wall ``-1 - cj``,
inverse mass 0, at rest): ``normal[c]`` is the unit vector from body i towards body j (into the wall), the
approach speed is ``u = (v_i - v_j) . n`` (positive when approaching), and a positive impulse ``P``
changes ``v_i -= P n / m_i``, ``v_j += P n / m_j``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

RULE_CODES = {"min": 0, "max": 1, "mean": 2, "product": 3}


def resolve_impact(m1: float, u1: float, m2: float, u2: float, e: float) -> tuple[float, float]:
    """Velocities after a 1D impact of masses m1, m2 (kg; m2 may be inf) arriving at u1, u2 (m/s).

    ``V1 = (m1 u1 + m2 u2 + m2 e (u2 - u1)) / (m1 + m2)`` and symmetrically, computed in impulse form so
    that ``m2 = inf`` is the exact fixed-body limit ``V1 = u2 - e (u1 - u2)``.
    """
    for name, value in (("m1", m1), ("m2", m2)):
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value!r}")
    if math.isinf(m1) and math.isinf(m2):
        raise ValueError("m1 and m2 cannot both be infinite")
    for name, value in (("u1", u1), ("u2", u2)):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"e must be in [0, 1], got {e!r}")
    w1, w2 = 1.0 / m1, 1.0 / m2
    j = (1.0 + e) * (u2 - u1) / (w1 + w2)
    return u1 + j * w1, u2 - j * w2


@njit(cache=True, inline="always")
def _combine_restitution(e1, e2, rule):
    """Combine two coefficients by rule code (0 min, 1 max, 2 mean, 3 product)."""
    if rule == 0:
        return min(e1, e2)
    if rule == 1:
        return max(e1, e2)
    if rule == 2:
        return 0.5 * (e1 + e2)
    return e1 * e2


@njit(cache=True, inline="always")
def _pair_restitution(i, j, restitution, wall_restitution, rule, keys, values):
    """Coefficient of restitution for body i with body j (j < 0: wall -1 - j): a pair override if one
    is set (keys from `Model.pair_restitution_arrays`), else the rule applied to the two coefficients."""
    if len(keys):
        if j >= 0:
            key = min(i, j) * (1 << 31) + max(i, j)
        else:
            key = -(i * (1 << 31) + (-1 - j) + 1)
        k = np.searchsorted(keys, key)
        if k < len(keys) and keys[k] == key:
            return values[k]
    other = restitution[j] if j >= 0 else wall_restitution[-1 - j]
    return _combine_restitution(restitution[i], other, rule)


@njit(cache=True, inline="always")
def _approach_speed(c, ci, cj, normal, velocity):
    """Normal approach speed u = (v_i - v_j) . n of contact c (m/s)."""
    i = ci[c]
    j = cj[c]
    u = 0.0
    for d in range(velocity.shape[1]):
        vj = velocity[j, d] if j >= 0 else 0.0
        u += (velocity[i, d] - vj) * normal[c, d]
    return u


@njit(cache=True, inline="always")
def _apply_impulse(c, p, ci, cj, normal, velocity, inv_mass):
    i = ci[c]
    j = cj[c]
    for d in range(velocity.shape[1]):
        velocity[i, d] -= p * inv_mass[i] * normal[c, d]
        if j >= 0:
            velocity[j, d] += p * inv_mass[j] * normal[c, d]


@njit(cache=True, inline="always")
def _solve_one(c, ci, cj, normal, target, rate, inv_mass, out):
    """`_solve_contacts` for the single contact c, in closed form (what its sweeps converge to):
    ``out[c] = max(0, (u + target) / k)``, k the sum of the inverse masses."""
    i = ci[c]
    j = cj[c]
    k = inv_mass[i] + (inv_mass[j] if j >= 0 else 0.0)
    p = max(0.0, (_approach_speed(c, ci, cj, normal, rate) + target[c]) / k) if k != 0.0 else 0.0
    out[c] = p
    if p != 0.0:
        _apply_impulse(c, p, ci, cj, normal, rate, inv_mass)


@njit(cache=True)
def _solve_contacts(active, ci, cj, normal, target, rate, inv_mass, out, iterations, tol, warm=False):
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
            u = _approach_speed(c, ci, cj, normal, rate)
            new = max(0.0, out[c] + (u + target[c]) / k)
            dp = new - out[c]
            if dp != 0.0:
                out[c] = new
                _apply_impulse(c, dp, ci, cj, normal, rate, inv_mass)
                worst = max(worst, abs(dp) * k)
        if worst <= tol:
            return sweep + 1
    return iterations
