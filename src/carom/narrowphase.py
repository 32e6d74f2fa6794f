"""Pair geometry: gaps and exact contact times of bodies on parabolic paths.

Between events every body moves with constant acceleration, ``x(t) = x + v t + a t^2 / 2`` (exact free
flight under uniform gravity; the drift of the leapfrog integrator otherwise). Two spheres touch when
``f(t) = |d(t)|^2 - S^2 = 0``, ``d`` the relative position and ``S`` the sum of radii: a quartic in t, a
quadratic when both bodies have the same acceleration (uniform gravity, free flight). A sphere touches a
wall when ``n . (x(t) - p) - R = 0``: a quadratic. The contact time is the first *descending* crossing of
zero (the gap closing), found by closed form for quadratics and by bisection on monotone pieces (split
at the roots of the derivative, found the same way one degree down) for higher degrees.

Robustness near contact (after Bannerman, Lue & Sargant 2013): a pair that already touches (gap within
the contact tolerance, or overlapping by round-off) is either approaching — then it collides *now*, at
zero delay — or not, and then its next contact is only sought after its gap has opened beyond the
tolerance. Round-off can therefore neither let a pair pass through each other nor make it collide again
and again at the same instant.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

INF = math.inf


@njit(cache=True)
def _quadratic_crossing(c0, c1, c2, lo, hi, descending):
    """First time in [lo, hi] where c0 + c1 t + c2 t^2 crosses zero downwards (``descending``) or
    upwards; inf if none. Closed form, stable against cancellation."""
    if c2 == 0.0:
        if c1 == 0.0 or (c1 < 0.0) != descending:
            return INF
        t = -c0 / c1
        return t if lo <= t <= hi else INF
    disc = c1 * c1 - 4.0 * c2 * c0
    if disc < 0.0:
        return INF
    q = -0.5 * (c1 + math.copysign(math.sqrt(disc), c1))
    if q == 0.0:
        r1 = r2 = 0.0
    else:
        r1 = q / c2
        r2 = c0 / q
    small, large = min(r1, r2), max(r1, r2)
    # An upward-opening parabola descends through its smaller root; a downward one through its larger.
    t = small if (c2 > 0.0) == descending else large
    return t if lo <= t <= hi else INF


@njit(cache=True)
def _poly(c, t):
    r = 0.0
    for k in range(len(c) - 1, -1, -1):
        r = r * t + c[k]
    return r


@njit(cache=True)
def _bisect(c, a, b):
    """Root of polynomial c on [a, b], where it changes sign; to full double precision."""
    fa = _poly(c, a)
    for _ in range(200):
        m = 0.5 * (a + b)
        if m <= a or m >= b:
            break
        fm = _poly(c, m)
        if (fm > 0.0) == (fa > 0.0):
            a, fa = m, fm
        else:
            b = m
    return b


@njit(cache=True)
def _derivative(c):
    d = np.zeros(len(c) - 1)
    for k in range(1, len(c)):
        d[k - 1] = k * c[k]
    return d


@njit(cache=True)
def _degree(c):
    deg = len(c) - 1
    while deg > 0 and c[deg] == 0.0:
        deg -= 1
    return deg


@njit(cache=True)
def _quadratic_roots(c, lo, hi, out, count):
    """Append the roots of c0 + c1 t + c2 t^2 strictly inside (lo, hi) to ``out``."""
    if c[2] == 0.0:
        if c[1] != 0.0:
            t = -c[0] / c[1]
            if lo < t < hi:
                out[count] = t
                count += 1
        return count
    for desc in (True, False):
        t = _quadratic_crossing(c[0], c[1], c[2], lo, hi, desc)
        if lo < t < hi:
            out[count] = t
            count += 1
    return count


@njit(cache=True)
def _critical_points(c, lo, hi):
    """Sorted roots of the derivative of c (degree <= 4) strictly inside (lo, hi)."""
    out = np.empty(4)
    d = _derivative(c)
    if _degree(d) <= 2:
        count = _quadratic_roots(d[:3], lo, hi, out, 0)
        return np.sort(out[:count])
    # cubic derivative: split at the roots of its own (quadratic) derivative, bisect sign changes
    inner = np.empty(2)
    n_inner = _quadratic_roots(_derivative(d), lo, hi, inner, 0)
    inner = np.sort(inner[:n_inner])
    count = 0
    a = lo
    fa = _poly(d, a)
    for k in range(n_inner + 1):
        b = inner[k] if k < n_inner else hi
        fb = _poly(d, b)
        if (fa > 0.0) != (fb > 0.0) and fb != 0.0:
            out[count] = _bisect(d, a, b)
            count += 1
        a, fa = b, fb
    return np.sort(out[:count])


@njit(cache=True)
def _polynomial_crossing(c, lo, hi, descending):
    """First time in [lo, hi] where polynomial c (degree <= 4) crosses zero downwards or upwards."""
    crit = _critical_points(c, lo, hi)
    a = lo
    fa = _poly(c, a)
    for k in range(len(crit) + 1):
        b = crit[k] if k < len(crit) else hi
        fb = _poly(c, b)
        if descending and fa > 0.0 >= fb:
            return _bisect(c, a, b)
        if not descending and fa < 0.0 <= fb:
            return _bisect(c, a, b)
        a, fa = b, fb
    return INF


@njit(cache=True, _nrt=True)  # it allocates: never inherit a caller's _nrt=False (the drift, the event kernels)
def _crossing(c0, c1, c2, c3, c4, lo, hi, descending):
    if c3 == 0.0 and c4 == 0.0:
        return _quadratic_crossing(c0, c1, c2, lo, hi, descending)
    return _polynomial_crossing(np.array([c0, c1, c2, c3, c4]), lo, hi, descending)


#: The reference body of `_pair_contact_time`: at rest at the origin (subtracting it is exact).
ORIGIN = np.zeros(3)


@njit(cache=True, inline="always")
def _relative_products(xi, xj, vi, vj, ai, aj, reach2):
    """Products of body j's position, velocity and acceleration relative to body i's (rows, m, m/s,
    m/s^2): ``xx, xv, vv, xa, va, aa`` (``xv = dx . dv`` and so on), and, for a pair closer than
    ``sqrt(reach2)`` (m), its approach speed (m/s) by the arithmetic of the event's own test
    (`integrate._pair_gap`, `solver._approach_speed`); 0 otherwise."""
    xx = 0.0
    xv = 0.0
    vv = 0.0
    xa = 0.0
    va = 0.0
    aa = 0.0
    for d in range(len(xj)):
        dx = xj[d] - xi[d]
        dv = vj[d] - vi[d]
        da = aj[d] - ai[d]
        xx += dx * dx
        xv += dx * dv
        vv += dv * dv
        xa += dx * da
        va += dv * da
        aa += da * da
    approach = 0.0
    if xx <= reach2 and xx > 0.0:
        dist = math.sqrt(xx)
        for d in range(len(xj)):
            approach += (-(vj[d] - vi[d])) * ((xj[d] - xi[d]) / dist)
    return xx, xv, vv, xa, va, aa, approach


@njit(cache=True)
def _pair_contact_time(dx, dv, da, contact_distance, slack, horizon, speed_tol):
    """Delay until two spheres touch, or inf if not within ``horizon`` (s).

    ``dx, dv, da``: position, velocity and acceleration of body j relative to body i (m, m/s, m/s^2);
    ``contact_distance``: sum of radii S (m); ``slack``: gap (m) up to which the pair touches; ``speed_tol``:
    approach speeds below it (m/s) count as zero.
    """
    products = _relative_products(ORIGIN, dx, ORIGIN, dv, ORIGIN, da, (contact_distance + slack) ** 2)
    return _contact_time(*products, contact_distance, slack, horizon, speed_tol)


@njit(cache=True)
def _contact_time(xx, xv, vv, xa, va, aa, approach, contact_distance, slack, horizon, speed_tol):
    """`_pair_contact_time` from `_relative_products` (scalars only: a hot loop hands over no array)."""
    s2 = contact_distance * contact_distance
    reach2 = (contact_distance + slack) ** 2
    touch = reach2 - s2
    c0 = xx - s2
    c1 = 2.0 * xv
    c2 = vv + xa
    c3 = va
    c4 = 0.25 * aa
    if xx <= reach2 and xx > 0.0:
        if approach > speed_tol:
            return 0.0
        opened = _crossing(c0 - touch, c1, c2, c3, c4, 0.0, horizon, False)
        if opened == INF:
            return INF
        return _crossing(c0, c1, c2, c3, c4, opened, horizon, True)
    if _out_of_reach(xx, vv, aa, contact_distance, horizon):
        return INF
    return _crossing(c0, c1, c2, c3, c4, 0.0, horizon, True)


@njit(cache=True)
def _out_of_reach(xx, vv, aa, contact_distance, horizon):
    """Cheap rejection: whether two spheres at squared distance ``xx`` (m^2), not touching, with squared
    relative speed ``vv`` and acceleration ``aa``, stay apart for ``horizon`` (s): their distance cannot
    shrink by more than ``|dv| h + |da| h^2 / 2``. Callers may test this first: `_pair_contact_time` then
    returns inf."""
    reach = math.sqrt(vv) * horizon + 0.5 * math.sqrt(aa) * horizon * horizon
    return math.sqrt(xx) - contact_distance > reach


@njit(cache=True)
def _wall_contact_time(gap, normal_speed, normal_accel, slack, horizon, speed_tol):
    """Delay until a sphere touches a wall, or inf. ``gap = n . (x - p) - R`` (m), ``normal_speed =
    n . v`` and ``normal_accel = n . a`` along the wall's inward normal n; the body touches the wall while
    ``gap <= slack`` (m). Touching contacts as in `_pair_contact_time`."""
    touch = slack
    c2 = 0.5 * normal_accel
    if gap <= touch:
        if -normal_speed > speed_tol:
            return 0.0
        opened = _quadratic_crossing(gap - touch, normal_speed, c2, 0.0, horizon, False)
        if opened == INF:
            return INF
        return _quadratic_crossing(gap, normal_speed, c2, opened, horizon, True)
    # Cheap rejection: the gap cannot shrink by more than |n.v| h + |n.a| h^2 / 2 within the horizon.
    if gap > abs(normal_speed) * horizon + abs(c2) * horizon * horizon:
        return INF
    return _quadratic_crossing(gap, normal_speed, c2, 0.0, horizon, True)
