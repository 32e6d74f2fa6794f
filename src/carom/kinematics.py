"""Kinematics of the time-stepped engine: bodies on parabolas, and how far they can move in a step.
"""

from __future__ import annotations

import math

from .jit import inlined, kernel


# ---------------------------------------------------------------- kinematics
@inlined
def moved(x, v, a, h):
    """Position (m) after h seconds on a parabola from x (m), v (m/s), a (m/s^2): one formula for both
    engines, so that their results agree bitwise."""
    return x + (v * h + 0.5 * a * h * h)


@inlined
def advance(b, t, x, v, a, tb):
    """Move body b along its parabola to time t (exact; a body already at t is left as it is).

    No branch on ``t == tb[b]``: a branch around array accesses in an inlined helper keeps Numba from
    pruning its reference counting, which then costs more than the arithmetic."""
    h = t - tb[b]
    for d in range(x.shape[1]):
        x[b, d] = moved(x[b, d], v[b, d], a[b, d], h)
        v[b, d] += a[b, d] * h
    tb[b] = t


@kernel
def advance_all(t, x, v, a, tb, active):
    """Move every active body along its parabola to time t (exact)."""
    for b in range(len(tb)):
        if active[b]:
            advance(b, t, x, v, a, tb)


@kernel
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


# ---------------------------------------------------------------- spin
@inlined
def spin_to(b, t, w, alpha, orientation, tw):
    """Turn body b to time t: ``w += alpha h`` and its orientation by the rotation of those h seconds
    (h = t - tw[b]). In 2D the angle ``theta += w h + alpha h^2 / 2`` is exact; in 3D the quaternion turns
    by the mean angular velocity ``w + alpha h / 2`` over h, exact while alpha is parallel to w (a ball
    rolling or spinning about a fixed axis), which the dynamics of a ball never depend on."""
    h = t - tw[b]
    tw[b] = t
    if h == 0.0:
        return
    if w.shape[1] == 1:
        orientation[b, 0] += w[b, 0] * h + 0.5 * alpha[b, 0] * h * h
        w[b, 0] += alpha[b, 0] * h
        return
    m0 = w[b, 0] + 0.5 * alpha[b, 0] * h
    m1 = w[b, 1] + 0.5 * alpha[b, 1] * h
    m2 = w[b, 2] + 0.5 * alpha[b, 2] * h
    for d in range(3):
        w[b, d] += alpha[b, d] * h
    speed = math.sqrt(m0 * m0 + m1 * m1 + m2 * m2)
    if speed == 0.0:
        return
    half = 0.5 * speed * h
    s = math.sin(half) / speed
    r0, r1, r2, r3 = math.cos(half), s * m0, s * m1, s * m2  # the rotation, a unit quaternion
    q0, q1, q2, q3 = orientation[b, 0], orientation[b, 1], orientation[b, 2], orientation[b, 3]
    p0 = r0 * q0 - r1 * q1 - r2 * q2 - r3 * q3
    p1 = r0 * q1 + r1 * q0 + r2 * q3 - r3 * q2
    p2 = r0 * q2 - r1 * q3 + r2 * q0 + r3 * q1
    p3 = r0 * q3 + r1 * q2 - r2 * q1 + r3 * q0
    size = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3)
    orientation[b, 0], orientation[b, 1], orientation[b, 2], orientation[b, 3] = (p0 / size, p1 / size, p2 / size,
                                                                                  p3 / size)  # fmt: skip


@kernel
def spin_all(t, w, alpha, orientation, tw, active):
    """Turn every active body to time t (`spin_to`)."""
    for b in range(len(tw)):
        if active[b]:
            spin_to(b, t, w, alpha, orientation, tw)
