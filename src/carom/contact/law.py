"""The impact law at one contact: approach speed, impulse, and the 1D law users can call.

Smooth bodies: the impulse acts along the contact normal only,
``j = (1 + e) (Ub - Ua) / (1/Ma + 1/Mb)``, ``Va = Ua + j / Ma``, ``Vb = Ub - j / Mb``; a fixed body has
inverse mass 0 (the exact ``Mb -> inf`` limit). Momentum is conserved to round-off, and the kinetic
energy lost is ``(1 - e^2) mu (Ua - Ub)^2 / 2``.

Conventions for a contact ``c`` between body ``ci[c]`` and body ``cj[c]`` (``cj < 0``: wall ``-1 - cj``,
inverse mass 0, at rest): ``normal[c]`` is the unit vector from body i towards body j (into the wall), the
approach speed is ``u = (v_i - v_j) . n`` (positive when approaching), and a positive impulse ``P``
changes ``v_i -= P n / m_i``, ``v_j += P n / m_j``. Both engines use these conventions.
"""

from __future__ import annotations

import math

from ..jit import inlined


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


@inlined
def approach_speed(c, ci, cj, normal, velocity):
    """Normal approach speed u = (v_i - v_j) . n of contact c (m/s)."""
    i = ci[c]
    j = cj[c]
    u = 0.0
    for d in range(velocity.shape[1]):
        vj = velocity[j, d] if j >= 0 else 0.0
        u += (velocity[i, d] - vj) * normal[c, d]
    return u


@inlined
def apply_impulse(c, p, ci, cj, normal, velocity, inv_mass):
    i = ci[c]
    j = cj[c]
    for d in range(velocity.shape[1]):
        velocity[i, d] -= p * inv_mass[i] * normal[c, d]
        if j >= 0:
            velocity[j, d] += p * inv_mass[j] * normal[c, d]
