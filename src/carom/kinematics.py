"""Kinematics of the time-stepped engine: bodies on parabolas, and how far they can move in a step.
"""

from __future__ import annotations

import math

from numba import njit


# ---------------------------------------------------------------- kinematics
@njit(cache=True, inline="always")
def moved(x, v, a, h):
    """Position (m) after h seconds on a parabola from x (m), v (m/s), a (m/s^2): one formula for both
    engines, so that their results agree bitwise."""
    return x + (v * h + 0.5 * a * h * h)


@njit(cache=True, inline="always")
def advance(b, t, x, v, a, tb):
    """Move body b along its parabola to time t (exact; a body already at t is left as it is).

    No branch on ``t == tb[b]``: a branch around array accesses in an inlined helper keeps Numba from
    pruning its reference counting, which then costs more than the arithmetic."""
    h = t - tb[b]
    for d in range(x.shape[1]):
        x[b, d] = moved(x[b, d], v[b, d], a[b, d], h)
        v[b, d] += a[b, d] * h
    tb[b] = t


@njit(cache=True)
def advance_all(t, x, v, a, tb, active):
    """Move every active body along its parabola to time t (exact)."""
    for b in range(len(tb)):
        if active[b]:
            advance(b, t, x, v, a, tb)


@njit(cache=True)
def motion_bounds(v, a0, radius, movable, h, tol, out):
    """Every body's displacement bound (m) over h (s), ``|v| h + |a0| h^2 / 2 + tol R``, into ``out``.
    Returns the largest speed (m/s) of a movable body and the largest acceleration ``|a0|`` (m/s^2)."""
    v_max = 0.0
    a_max = 0.0
    for b in range(len(out)):
        vv = 0.0
        aa = 0.0
        for d in range(v.shape[1]):
            vv += v[b, d] * v[b, d]
            aa += a0[b, d] * a0[b, d]
        speed = math.sqrt(vv)
        accel = math.sqrt(aa)
        out[b] = speed * h + 0.5 * accel * h * h
        out[b] += tol * radius[b]
        if movable[b]:
            v_max = max(v_max, speed)
        a_max = max(a_max, accel)
    return v_max, a_max
