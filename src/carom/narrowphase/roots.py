"""Roots of the contact equations: the first crossing of zero of a polynomial of degree <= 4 in time.

Closed form for quadratics (stable against cancellation); for higher degrees, bisection on monotone
pieces, split at the roots of the derivative (found the same way one degree down). Bisection runs to
full double precision.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel

INF = math.inf


@kernel
def quadratic_crossing(c0, c1, c2, lo, hi, descending):
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


@kernel
def polynomial_value(c, t):
    """The polynomial with coefficients ``c`` (lowest power first) at t (Horner)."""
    r = 0.0
    for k in range(len(c) - 1, -1, -1):
        r = r * t + c[k]
    return r


@kernel
def _bisect(c, a, b):
    """Root of polynomial c on [a, b], where it changes sign; to full double precision."""
    fa = polynomial_value(c, a)
    for _ in range(200):
        m = 0.5 * (a + b)
        if m <= a or m >= b:
            break
        fm = polynomial_value(c, m)
        if (fm > 0.0) == (fa > 0.0):
            a, fa = m, fm
        else:
            b = m
    return b


@kernel
def _derivative(c):
    d = np.zeros(len(c) - 1)
    for k in range(1, len(c)):
        d[k - 1] = k * c[k]
    return d


@kernel
def _degree(c):
    deg = len(c) - 1
    while deg > 0 and c[deg] == 0.0:
        deg -= 1
    return deg


@kernel
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
        t = quadratic_crossing(c[0], c[1], c[2], lo, hi, desc)
        if lo < t < hi:
            out[count] = t
            count += 1
    return count


@kernel
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
    fa = polynomial_value(d, a)
    for k in range(n_inner + 1):
        b = inner[k] if k < n_inner else hi
        fb = polynomial_value(d, b)
        if (fa > 0.0) != (fb > 0.0) and fb != 0.0:
            out[count] = _bisect(d, a, b)
            count += 1
        a, fa = b, fb
    return np.sort(out[:count])


@kernel
def _polynomial_crossing(c, lo, hi, descending):
    """First time in [lo, hi] where polynomial c (degree <= 4) crosses zero downwards or upwards."""
    crit = _critical_points(c, lo, hi)
    a = lo
    fa = polynomial_value(c, a)
    for k in range(len(crit) + 1):
        b = crit[k] if k < len(crit) else hi
        fb = polynomial_value(c, b)
        if descending and fa > 0.0 >= fb:
            return _bisect(c, a, b)
        if not descending and fa < 0.0 <= fb:
            return _bisect(c, a, b)
        a, fa = b, fb
    return INF


# it allocates: never inherit a caller's refcounts=False (the drift, the event kernels)
@kernel(refcounts=True)
def first_crossing(c0, c1, c2, c3, c4, lo, hi, descending):
    if c3 == 0.0 and c4 == 0.0:
        return quadratic_crossing(c0, c1, c2, lo, hi, descending)
    return _polynomial_crossing(np.array([c0, c1, c2, c3, c4]), lo, hi, descending)
