"""IAS15: an adaptive Gauss–Radau integrator of order 15 (Rein & Spiegel 2015, MNRAS 446, 1424), with every
impact found exactly inside its steps.

Within a step of length h, from ``t0``, a body's acceleration is the polynomial in the step fraction
``tau = (t - t0) / h``

    a(tau) = a0 + b0 tau + b1 tau^2 + ... + b6 tau^7,

whose coefficients ``b`` come from the accelerations at the seven Gauss–Radau nodes ``NODES[1:]`` by an
implicit predictor–corrector (iterated until the last coefficient stops changing, to round-off; velocity-
dependent forces such as drag are evaluated at the predicted velocities, and iterate with the rest).
Integrated twice it gives the step's own position and velocity polynomials (degree 9 and 8 in tau):

    x(tau) = x0 + h v0 tau + h^2 (a0 tau^2 / 2 + b0 tau^3 / 6 + b1 tau^4 / 12 + ... + b6 tau^9 / 72).

**Step size** (Rein & Spiegel 2015, eq. 10–11, their global error): the step's error is
``max |b6| / max |a|`` over every body and axis; the next step is ``h (epsilon / error)^(1/7)``, at most 4 h;
a step whose error asks for less than a quarter of it is taken again, shorter. Positions and velocities
are summed with compensation (each keeps the round-off its last sum lost), which is what makes the energy
error grow as a random walk (Brouwer's law) rather than linearly. The next step's ``b`` is predicted by
shifting this step's polynomial to it, corrected by how far this step's own prediction was off.

**Impacts inside a step.** Once a step has converged, every pair of bodies whose paths over the step may
meet (their paths' bounding boxes, from the Bernstein control points of their position polynomials,
overlap) is tested exactly: the gap function ``g(tau) = |x_j(tau) - x_i(tau)|^2 - (R_i + R_j)^2`` is a
polynomial of degree 18, written in the Bernstein basis on [0, 1]. Its control points bound it (convex
hull), and the number of their sign changes bounds the number of its roots (Descartes' rule): an interval
whose control points are all positive holds no contact, one with a single sign change holds exactly one,
found by bisection on ``g`` itself, and any other is split in two (de Casteljau), the earlier half first.
The first root over every pair and wall (a wall's gap is degree 9) is the step's first impact: the bodies
are put where the step's polynomials have them then, the step ends there, and the impact is solved with
the drift's impact law and rounds (`carom.step.drift.resolve_instant`). The next step starts afresh from
that instant. No impact is missed for lack of sampling, whatever the step: a grazing pass 1e-6 R inside
contact is found at the time Kepler's equation gives.

A pair that touches at the start of a step (the one just solved) is looked at only once its gap has opened.
A pair that touches without approaching while the forces press it together is a resting contact, which
this integrator does not hold (`World` with ``integrator="leapfrog"`` does): the run stops with a
`ContactError`.

The kernels are small and pure; two loops drive them: `integrate` (compiled, for the forces of a
`carom.forces.ForceTable`) and `World`'s Python loop for any other force (`carom.world`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..config import ROUNDOFF
from ..forces import table_accel
from ..jit import inlined, kernel
from ..narrowphase.roots import polynomial_value

#: The Gauss–Radau nodes (fractions of the step) of IAS15, h_0 = 0 then the seven where forces are evaluated.
NODES = np.array([
    0.0, 0.0562625605369221464656521910318, 0.180240691736892364987579942780, 0.352624717113169637373907769648,
    0.547153626330555383001448554766, 0.734210177215410531523210605558, 0.885320946839095768090359771030,
    0.977520613561287501891174488626,
])  # fmt: skip
STAGES = 7
#: A step is taken again if its error asks for less than this fraction of it; steps grow by at most its inverse.
SAFETY = 0.25
#: The predictor–corrector stops when its last coefficient changes by less than this fraction of the largest
#: acceleration (round-off), when that change grows again (it oscillates at round-off), or after ``ITERATIONS``.
CONVERGED = 1e-16
ITERATIONS = 12
#: A step longer than this many times the last one starts its predictor from zero (the prediction is useless).
PREDICT_RATIO = 20.0
#: Splits of a gap polynomial's interval (a width of 2^-DEPTH of the step) before a near-tangency that round-off
#: cannot resolve counts as touching where its control points dip to zero.
DEPTH = 52
GAP_DEGREE = 9  # of a body's position in tau, so of a wall's gap; a pair's squared gap has twice it
#: Outcomes of `integrate`.
END, CONTACT, PRESSED, PAUSED, STUCK = range(5)


def _tables():
    """C: b = C g (the Newton basis ``tau prod_{m<k}(tau - h_m)`` in powers of tau); D = C^-1; R[k, m] =
    1 / (h_k - h_m); the binomial shift of `predict`; Bernstein conversion (degree 9) and product (9 x 9) weights."""
    c = np.zeros((STAGES, STAGES))
    for j in range(STAGES):
        poly = np.array([0.0, 1.0])
        for m in range(1, j + 1):
            poly = np.convolve(poly, [-NODES[m], 1.0])
        c[: j + 1, j] = poly[1 : j + 2]
    r = np.zeros((STAGES + 1, STAGES + 1))
    for k in range(1, STAGES + 1):
        for m in range(k):
            r[k, m] = 1.0 / (NODES[k] - NODES[m])
    binom = np.array([[math.comb(p, q) for q in range(STAGES + 2)] for p in range(STAGES + 2)], dtype=float)
    n = GAP_DEGREE
    to_bernstein = np.array([[math.comb(k, m) / math.comb(n, m) if m <= k else 0.0 for m in range(n + 1)]
                             for k in range(n + 1)])  # fmt: skip
    product = np.array([[math.comb(n, i) * math.comb(n, j) / math.comb(2 * n, i + j) for j in range(n + 1)]
                        for i in range(n + 1)])  # fmt: skip
    return c, np.linalg.inv(c), r, binom, to_bernstein, product


NEWTON_TO_POWER, POWER_TO_NEWTON, INV_SPACING, BINOMIAL, TO_BERNSTEIN, PRODUCT = _tables()


class Radau(NamedTuple):
    """The integrator's memory between steps (all (n, d) arrays per body and axis; ``b``-like ones (7, n, d))."""

    x0: np.ndarray  # m: positions at the start of the step (the compensated sum's high part)
    v0: np.ndarray  # m/s
    cx: np.ndarray  # m: what the sums of x0 lost to round-off (the true position is x0 + cx)
    cv: np.ndarray  # m/s
    a0: np.ndarray  # m/s^2: acceleration at the start of the step
    b: np.ndarray  # m/s^2: the acceleration polynomial's coefficients (the step's, or the prediction for it)
    g: np.ndarray  # m/s^2: the same polynomial in the Newton basis of the nodes
    e: np.ndarray  # m/s^2: the prediction the current b started from
    b_done: np.ndarray  # m/s^2: b of the last accepted step (a rejected step is predicted again from it)
    e_done: np.ndarray  # m/s^2
    clock: np.ndarray  # (CLOCK,) s: [next trial step, last accepted step (0: none since a restart)]


NEXT_STEP, LAST_STEP, CLOCK = 0, 1, 2


def new_radau(n: int, dim: int) -> Radau:
    """An integrator's memory for n bodies, restarted (no prediction, no step yet)."""
    per_body = [np.zeros((n, dim)) for _ in range(5)]
    coefficients = [np.zeros((STAGES, n, dim)) for _ in range(5)]
    return Radau(*per_body, *coefficients, np.zeros(CLOCK))


@kernel
def restart(radau):
    """Forget the predictions and the compensations (velocities jumped, or the state was written)."""
    for arr in (radau.b, radau.g, radau.e, radau.b_done, radau.e_done):
        arr[...] = 0.0
    radau.cx[...] = 0.0
    radau.cv[...] = 0.0
    radau.clock[LAST_STEP] = 0.0


#: 1 / ((k + 2)(k + 3)) and 1 / (k + 2), k = 0..6: the factors of b_k in the position and velocity polynomials
#: (multiplications: a division in Horner's chain would cost its latency at every link).
_X6, _X12, _X20, _X30, _X42, _X56, _X72 = (1.0 / ((k + 2) * (k + 3)) for k in range(STAGES))
_V2, _V3, _V4, _V5, _V6, _V7, _V8 = (1.0 / (k + 2) for k in range(STAGES))


@inlined
def _increment(radau, s, h, i, d):
    """How far (m) and by how much (m/s) body i moves along axis d from the step start to its fraction s."""
    v0, a0, b = radau.v0, radau.a0, radau.b
    sh = s * h
    b0, b1, b2, b3, b4, b5, b6 = b[0, i, d], b[1, i, d], b[2, i, d], b[3, i, d], b[4, i, d], b[5, i, d], b[6, i, d]
    dx = sh * (v0[i, d] + sh * (a0[i, d] * 0.5 + s * (b0 * _X6 + s * (b1 * _X12 + s * (b2 * _X20 + s * (
        b3 * _X30 + s * (b4 * _X42 + s * (b5 * _X56 + s * b6 * _X72))))))))  # fmt: skip
    dv = sh * (a0[i, d] + s * (b0 * _V2 + s * (b1 * _V3 + s * (b2 * _V4 + s * (b3 * _V5 + s * (
        b4 * _V6 + s * (b5 * _V7 + s * b6 * _V8)))))))  # fmt: skip
    return dx, dv


@inlined
def state_at(radau, s, h, active, x, v):
    """Positions (m) and velocities (m/s) of the active bodies at the fraction ``s`` of a step of h (s), from
    the step's polynomials, into x and v."""
    x0, v0, cx, cv = radau.x0, radau.v0, radau.cx, radau.cv
    for i in range(x0.shape[0]):
        if active[i]:
            for d in range(x0.shape[1]):
                dx, dv = _increment(radau, s, h, i, d)
                x[i, d] = x0[i, d] + (cx[i, d] + dx)
                v[i, d] = v0[i, d] + (cv[i, d] + dv)


@inlined
def _two_sum(a, b):
    """a + b and the round-off it lost (Knuth's TwoSum: exact, whatever the magnitudes)."""
    s = a + b
    bp = s - a
    return s, (a - (s - bp)) + (b - bp)


@kernel
def commit(radau, s, h, active, x, v):
    """End the step at fraction ``s``: x0, v0 (and x, v) become the state there, summed with compensation."""
    x0, v0, cx, cv = radau.x0, radau.v0, radau.cx, radau.cv
    for i in range(x0.shape[0]):
        if active[i]:
            for d in range(x0.shape[1]):
                dx, dv = _increment(radau, s, h, i, d)
                x0[i, d], cx[i, d] = _two_sum(x0[i, d], cx[i, d] + dx)
                v0[i, d], cv[i, d] = _two_sum(v0[i, d], cv[i, d] + dv)
                x[i, d] = x0[i, d]
                v[i, d] = v0[i, d]


@kernel
def begin_step(radau):
    """The Newton-basis coefficients g of the predicted b (the corrector updates both)."""
    b, g = radau.b, radau.g
    for j in range(STAGES):
        for i in range(b.shape[1]):
            for d in range(b.shape[2]):
                total = 0.0
                for q in range(j, STAGES):
                    total += POWER_TO_NEWTON[j, q] * b[q, i, d]
                g[j, i, d] = total


@inlined
def correct(radau, k, a):
    """The corrector at node k (1..7) given the accelerations ``a`` (m/s^2) there: g[k-1] from the divided
    differences, b updated by its change. Returns the largest change of g[k-1] (m/s^2)."""
    a0, g, b = radau.a0, radau.g, radau.b
    change = 0.0
    for i in range(a.shape[0]):
        for d in range(a.shape[1]):
            t = (a[i, d] - a0[i, d]) * INV_SPACING[k, 0]
            for m in range(1, k):
                t = (t - g[m - 1, i, d]) * INV_SPACING[k, m]
            dg = t - g[k - 1, i, d]
            g[k - 1, i, d] = t
            for q in range(k):
                b[q, i, d] += NEWTON_TO_POWER[q, k - 1] * dg
            change = max(change, abs(dg))
    return change


@inlined
def largest(arr):
    """The largest |value| of an array (0 if empty; inf if any is not finite)."""
    top = 0.0
    for value in arr.ravel():
        if not math.isfinite(value):
            return math.inf
        top = max(top, abs(value))
    return top


@kernel
def next_step(radau, h, a_last, epsilon, floor):
    """After a converged step of h (s): the step (s) its error asks for (Rein & Spiegel 2015, global error
    ``max |b6| / max |a|``, ``a`` at the last node, and ``max |a|`` at least ``floor``: the magnitude of uniform
    gravity, which drag may cancel at terminal speed, leaving a net acceleration made of round-off), at most
    ``h / SAFETY``; and whether the step is accepted (the new step is at least ``SAFETY h``)."""
    scale = max(largest(a_last), floor)
    top = largest(radau.b[STAGES - 1])
    if not (math.isfinite(scale) and math.isfinite(top)):  # a step through a singularity: much shorter
        return SAFETY * SAFETY * h, False
    error = top / scale if scale > 0.0 else 0.0
    if error > 0.0:
        h_new = h * (epsilon / error) ** (1.0 / 7.0)
    else:
        h_new = h / SAFETY
    if h_new < SAFETY * h:
        return h_new, False
    return min(h_new, h / SAFETY), True


@kernel
def predict(radau, b_from, e_from, ratio):
    """Predict the next step's b (ratio: its length over the last step's) from a converged b and the prediction
    it started from: the step's polynomial shifted to the next one, ``e_k = q^(k+1) sum_m C(m+1, k+1) b_m``, plus
    the last prediction's error ``b - e``. A step much longer than the last starts from zero."""
    b, e = radau.b, radau.e
    if ratio > PREDICT_RATIO:
        b[...] = 0.0
        e[...] = 0.0
        return
    for i in range(b.shape[1]):
        for d in range(b.shape[2]):
            q = 1.0
            for k in range(STAGES):
                q *= ratio
                shifted = 0.0
                for m in range(k, STAGES):
                    shifted += BINOMIAL[m + 1, k + 1] * b_from[m, i, d]
                e[k, i, d] = q * shifted
            for k in range(STAGES):
                b[k, i, d] = e[k, i, d] + (b_from[k, i, d] - e_from[k, i, d])


@kernel
def accept(radau, h, h_new):
    """Book an accepted step of h (s) that ended at its end: keep its b, predict the next one of h_new (s)."""
    radau.b_done[...] = radau.b
    radau.e_done[...] = radau.e
    predict(radau, radau.b_done, radau.e_done, h_new / h)
    radau.clock[LAST_STEP] = h
    radau.clock[NEXT_STEP] = h_new


@kernel
def reject(radau, h_new):
    """A step to be taken again with h_new (s): its prediction made again from the last accepted step."""
    last = radau.clock[LAST_STEP]
    if last > 0.0:
        predict(radau, radau.b_done, radau.e_done, h_new / last)
    else:
        radau.b[...] = 0.0
        radau.e[...] = 0.0
    radau.clock[NEXT_STEP] = h_new


# ---------------------------------------------------------------- impacts inside a step
class Contacts(NamedTuple):
    """What the impact search needs besides the integrator: bodies, walls, the touching tolerances, and its
    work arrays (`new_contacts`)."""

    radius: np.ndarray  # (n,) m
    inv_mass: np.ndarray  # (n,) 1/kg, 0 for fixed bodies
    active: np.ndarray  # (n,) bool
    wall_p: np.ndarray  # (k, d) m
    wall_n: np.ndarray  # (k, d) unit normals into the world
    tol: float  # contact tolerance, fraction of the smaller radius
    speed_tol: float  # m/s: approach speeds up to this count as zero
    lo: np.ndarray  # (n, d) m: each body's box over the step (work)
    hi: np.ndarray  # (n, d) m
    order: np.ndarray  # (n,) the bodies by the low end of their boxes along axis 0 (kept: nearly sorted)
    power: np.ndarray  # (d, 10) work
    other: np.ndarray  # (d, 10) work


def new_contacts(radius, inv_mass, active, wall_p, wall_n, tol, speed_tol) -> Contacts:
    """`Contacts` with fresh work arrays."""
    n, dim = len(radius), wall_p.shape[1]
    return Contacts(radius, inv_mass, active, wall_p, wall_n, tol, speed_tol, np.empty((n, dim)), np.empty((n, dim)),
                    np.arange(n), np.empty((dim, GAP_DEGREE + 1)), np.empty((dim, GAP_DEGREE + 1)))  # fmt: skip


@kernel
def _power(radau, h, i, out):
    """The power coefficients (d, 10) of body i's position over the step, in tau; the constant term is x0 (its
    round-off part in ``out[:, 0]`` is left to the caller)."""
    x0, v0, a0, b = radau.x0, radau.v0, radau.a0, radau.b
    h2 = h * h
    for d in range(x0.shape[1]):
        out[d, 0] = x0[i, d] + radau.cx[i, d]
        out[d, 1] = h * v0[i, d] + h * radau.cv[i, d]
        out[d, 2] = h2 * a0[i, d] / 2.0
        for k in range(STAGES):
            out[d, k + 3] = h2 * b[k, i, d] / ((k + 2) * (k + 3))


@kernel
def _to_bernstein(power, out):
    """Bernstein coefficients on [0, 1] of a polynomial of degree 9 given by its power coefficients."""
    for k in range(GAP_DEGREE + 1):
        total = 0.0
        for m in range(k + 1):
            total += TO_BERNSTEIN[k, m] * power[m]
        out[k] = total


@kernel
def _pair_gap2(rel, reach2, t):
    """|d(t)|^2 - (R_i + R_j)^2 (m^2) from the power coefficients (d, 10) of d = x_j - x_i."""
    total = -reach2
    for d in range(rel.shape[0]):
        total += polynomial_value(rel[d], t) ** 2
    return total


@kernel
def _gap(kind, poly, reach2, t):
    """A pair's squared gap (kind 0: ``poly`` the (d, 10) relative position) or a wall's gap (kind 1: ``poly[0]``
    the gap's own power coefficients, m)."""
    if kind == 0:
        return _pair_gap2(poly, reach2, t)
    return polynomial_value(poly[0], t)


@kernel
def _split(c, left, right):
    """de Casteljau at 1/2: the Bernstein coefficients of the two halves."""
    n = len(c) - 1
    work = c.copy()
    left[0] = work[0]
    right[n] = work[n]
    for r in range(1, n + 1):
        for k in range(n - r + 1):
            work[k] = 0.5 * (work[k] + work[k + 1])
        left[r] = work[0]
        right[n - r] = work[n - r]


@kernel
def _sign_changes(c):
    changes = 0
    last = c[0] > 0.0
    for k in range(1, len(c)):
        now = c[k] > 0.0
        if now != last:
            changes += 1
            last = now
    return changes


@kernel
def _first_descent(kind, poly, reach2, coef, lo, hi, before):
    """The first time in [lo, hi] (fractions of the step; ``coef`` the Bernstein coefficients of the gap there,
    positive at lo) where the gap reaches 0, if earlier than ``before``; else inf. Bernstein subdivision,
    the earlier half first; an interval with one sign change is bisected on the gap itself."""
    m = len(coef)
    stack_lo = np.empty(DEPTH + 2)
    stack_hi = np.empty(DEPTH + 2)
    stack_c = np.empty((DEPTH + 2, m))
    left = np.empty(m)
    right = np.empty(m)
    stack_lo[0], stack_hi[0] = lo, hi
    stack_c[0] = coef
    top = 1
    while top > 0:
        top -= 1
        a, b = stack_lo[top], stack_hi[top]
        c = stack_c[top].copy()
        if a >= before:
            continue
        if np.min(c) > 0.0:
            continue
        if c[0] <= 0.0:
            return a
        if _sign_changes(c) == 1:  # exactly one root, g(a) > 0 >= g(b): bisect on the gap
            for _ in range(64):
                mid = 0.5 * (a + b)
                if mid <= a or mid >= b:
                    break
                if _gap(kind, poly, reach2, mid) > 0.0:
                    a = mid
                else:
                    b = mid
            return b
        if top + 2 > DEPTH:  # a tangency round-off cannot resolve: touching where the coefficients dip
            return b if c[m - 1] <= 0.0 else a
        _split(c, left, right)
        mid = 0.5 * (a + b)
        stack_lo[top], stack_hi[top] = mid, b
        stack_c[top] = right
        stack_lo[top + 1], stack_hi[top + 1] = a, mid
        stack_c[top + 1] = left
        top += 2
    return math.inf


#: How a pair or wall contact stands at the start of a step.
_FREE, _APPROACHING, _PRESSED, _OPENING = range(4)


@kernel
def _contact_time(kind, poly, reach2, touching, u0, curving_in, speed_tol, before):
    """The first contact time (fraction of the step) of one pair or wall, given its gap polynomial; 0 if it
    approaches now; -1 if pressed (touching, not approaching, forced together); inf if none before ``before``.
    A contact touching at the start is looked at from the first power of 2 at which its gap has opened."""
    if touching:
        if u0 > speed_tol:
            return 0.0
        if curving_in and u0 >= -speed_tol:
            return -1.0
    power = np.empty(GAP_DEGREE + 1)
    coef = np.empty(2 * GAP_DEGREE + 1 if kind == 0 else GAP_DEGREE + 1)
    _gap_bernstein(kind, poly, reach2, power, coef)
    lo = 0.0
    if touching:  # the first 2^-k (k = 52 ... 0) at which the gap is open: search on from there
        lo = math.inf
        t = 2.0**-52
        while t <= 1.0:
            if _gap(kind, poly, reach2, t) > 0.0:
                lo = t
                break
            t *= 2.0
        if lo >= before:
            return math.inf
        coef = _restrict(coef, lo)
    elif coef[0] <= 0.0:
        return 0.0
    return _first_descent(kind, poly, reach2, coef, lo, 1.0, before)


@kernel
def _restrict(c, lo):
    """Bernstein coefficients on [lo, 1] of the polynomial with coefficients c on [0, 1] (de Casteljau at lo)."""
    n = len(c) - 1
    work = c.copy()
    right = np.empty(n + 1)
    right[n] = work[n]
    for r in range(1, n + 1):
        for k in range(n - r + 1):
            work[k] = (1.0 - lo) * work[k] + lo * work[k + 1]
        right[n - r] = work[n - r]
    return right


@kernel
def _gap_bernstein(kind, poly, reach2, power, out):
    """The Bernstein coefficients on [0, 1] of the gap: a pair's squared gap (degree 18, products of the degree-9
    coefficients of each axis of d), or a wall's gap (degree 9)."""
    if kind == 1:
        _to_bernstein(poly[0], out)
        return
    out[:] = -reach2
    for d in range(poly.shape[0]):
        _to_bernstein(poly[d], power)
        for i in range(GAP_DEGREE + 1):
            for j in range(GAP_DEGREE + 1):
                out[i + j] += PRODUCT[i, j] * power[i] * power[j]


@kernel
def _path_boxes(radau, h, contacts):
    """Each active body's bounding box (m) over the step, its radius included: the Bernstein control points of
    its position bound its path (inactive bodies: an empty box at +inf, last in the sweep)."""
    n, dim = radau.x0.shape
    lo, hi, power = contacts.lo, contacts.hi, contacts.power
    bern = np.empty(GAP_DEGREE + 1)
    for i in range(n):
        if not contacts.active[i]:
            lo[i, :] = math.inf
            hi[i, :] = -math.inf
            continue
        _power(radau, h, i, power)
        r = contacts.radius[i]
        for d in range(dim):
            _to_bernstein(power[d], bern)
            lo[i, d] = np.min(bern) - r
            hi[i, d] = np.max(bern) + r


@kernel
def _sort_boxes(lo, order):
    """Insertion sort of ``order`` by ``lo[:, 0]`` (linear for the nearly sorted order of the last step)."""
    for p in range(1, len(order)):
        body = order[p]
        key = lo[body, 0]
        q = p - 1
        while q >= 0 and lo[order[q], 0] > key:
            order[q + 1] = order[q]
            q -= 1
        order[q + 1] = body


@kernel
def first_contact(radau, h, contacts):
    """The first contact within a converged step of h (s): (fraction of the step, i, j) with j = -1 - k for wall
    k; fraction inf if none, -1 if pair or wall i-j is pressed (a resting contact). Pairs come from a sweep of
    the bodies' path boxes along the first axis."""
    n, dim = radau.x0.shape
    active, inv_mass, radius = contacts.active, contacts.inv_mass, contacts.radius
    lo, hi, power, other = contacts.lo, contacts.hi, contacts.power, contacts.other
    _path_boxes(radau, h, contacts)
    best, bi, bj = math.inf, -1, -1
    # walls
    wall = other[:1]
    for i in range(n if contacts.wall_p.shape[0] else 0):
        if not active[i] or inv_mass[i] == 0.0:
            continue
        _power(radau, h, i, power)
        for k in range(contacts.wall_p.shape[0]):
            wall[0, :] = 0.0
            size = 0.0
            for d in range(dim):
                nd = contacts.wall_n[k, d]
                for m in range(GAP_DEGREE + 1):
                    wall[0, m] += nd * power[d, m]
                wall[0, 0] -= nd * contacts.wall_p[k, d]
                size = max(size, abs(radau.x0[i, d]), abs(contacts.wall_p[k, d]))
            wall[0, 0] -= radius[i]
            slack = contacts.tol * radius[i] + ROUNDOFF * size
            u0 = -wall[0, 1] / h
            curving_in = wall[0, 2] < 0.0
            t = _contact_time(1, wall, 0.0, wall[0, 0] <= slack, u0, curving_in, contacts.speed_tol, best)
            if t < best:
                best, bi, bj = t, i, -1 - k
            if best < 0.0:
                return best, bi, bj
    # pairs: sweep the boxes along axis 0
    order = contacts.order
    _sort_boxes(lo, order)
    for p in range(n):
        i = order[p]
        if not active[i]:
            continue
        for q in range(p + 1, n):
            j = order[q]
            if lo[j, 0] > hi[i, 0]:
                break
            if not active[j] or (inv_mass[i] == 0.0 and inv_mass[j] == 0.0):
                continue
            apart = False
            for d in range(1, dim):
                if lo[j, d] > hi[i, d] or lo[i, d] > hi[j, d]:
                    apart = True
            if apart:
                continue
            a, c = min(i, j), max(i, j)
            _power(radau, h, a, power)
            _power(radau, h, c, other)
            size = 0.0
            for d in range(dim):
                for m in range(GAP_DEGREE + 1):
                    other[d, m] -= power[d, m]
                # (the constant term as the difference of the high parts plus that of the round-off parts)
                other[d, 0] = (radau.x0[c, d] - radau.x0[a, d]) + (radau.cx[c, d] - radau.cx[a, d])
                size = max(size, abs(radau.x0[a, d]), abs(radau.x0[c, d]))
            reach = radius[a] + radius[c]
            dist0 = math.sqrt(np.sum(other[:, 0] ** 2))
            slack = contacts.tol * min(radius[a], radius[c]) + ROUNDOFF * size
            touching = dist0 - reach <= slack
            u0 = 0.0
            curve = 0.0
            if dist0 > 0.0:
                for d in range(dim):
                    u0 -= other[d, 0] * other[d, 1] / (h * dist0)
                    curve += other[d, 1] ** 2 + 2.0 * other[d, 0] * other[d, 2]
            t = _contact_time(0, other, reach * reach, touching, u0, curve < 0.0, contacts.speed_tol, best)
            if t < best:
                best, bi, bj = t, a, c
            if best < 0.0:
                return best, bi, bj
    return best, bi, bj


# ---------------------------------------------------------------- the loops
@kernel
def _converged(change, a, it, last):
    """Whether the predictor–corrector may stop after iteration ``it`` whose last change of b6 was ``change``
    (m/s^2), ``a`` the last node's accelerations, ``last`` the previous iteration's relative change; and this
    one's relative change."""
    scale = largest(a)
    error = change / scale if scale > 0.0 else 0.0
    return error < CONVERGED or (it > 1 and error >= last), error


@kernel
def _converge(radau, h, table, fb, x, v, a):
    """The predictor–corrector of one step of h (s), forces from a `ForceTable`; leaves the last node's
    accelerations in ``a``."""
    begin_step(radau)
    last = math.inf
    for it in range(ITERATIONS):
        change = 0.0
        for k in range(1, STAGES + 1):
            state_at(radau, NODES[k], h, fb.active, x, v)
            table_accel(x, v, table, fb, a)
            change = correct(radau, k, a)
        done, last = _converged(change, a, it, last)
        if done:
            break


#: `_close_step`'s outcomes besides `CONTACT` and `PRESSED`.
_REJECTED, _ACCEPTED = -1, -2


@kernel
def _close_step(radau, h, a, epsilon, gravity, planned, ends, contacts, x, v):
    """After the predictor–corrector of a step of h (s) (``a`` the last node's accelerations): `_REJECTED` (to be
    taken again, shorter), `PRESSED` (a resting contact i-j; the bodies back at the step's start), `CONTACT` (the
    first contact i-j, j = -1 - k for wall k, at the fraction tau of the step; the bodies there, the integrator
    restarted) or `_ACCEPTED` (the bodies at the step's end, the next step predicted). Returns (outcome, tau, i,
    j)."""
    h_new, ok = next_step(radau, h, a, epsilon, gravity)
    if not ok:
        reject(radau, h_new)
        return _REJECTED, 0.0, -1, -1
    tau, i, j = first_contact(radau, h, contacts)
    if tau < 0.0:
        state_at(radau, 0.0, h, contacts.active, x, v)
        return PRESSED, 0.0, i, j
    if tau <= 1.0:
        commit(radau, tau, h, contacts.active, x, v)
        restart(radau)
        radau.clock[NEXT_STEP] = h_new
        return CONTACT, tau, i, j
    commit(radau, 1.0, h, contacts.active, x, v)
    accept(radau, h, max(h_new, planned) if ends else h_new)
    return _ACCEPTED, 1.0, -1, -1


@kernel
def _trial(radau, t, until, exact):
    """The next trial step (s), the one planned, and whether it ends the run at ``until`` (s): shortened to end
    there, or (``exact`` false) 0 where it would pass it (the run stops before)."""
    planned = radau.clock[NEXT_STEP]
    if t + planned >= until:
        return (until - t if exact or t + planned == until else 0.0), planned, True
    return planned, planned, False


@kernel
def integrate(radau, table, fb, contacts, x, v, t, until, exact, epsilon, max_steps):
    """Advance the bodies (x, v: the world's arrays, (n, d) m and m/s; ``radau`` in step with them) from t to
    ``until`` (s) under the forces of ``table`` (`carom.forces.ForceTable`, ``fb`` its `ForceBodies`), in at most
    ``max_steps`` steps (``exact`` false: stopping after the last one that ends at or before ``until``).
    Returns (status, time, steps accepted, i, j): `END` at ``until``; `CONTACT` at the first contact i-j
    (j = -1 - k: wall k), the bodies there; `PRESSED` at a resting contact i-j (the bodies at the step's
    start); `PAUSED` after max_steps; `STUCK` where the step falls to round-off of the time."""
    n, dim = x.shape
    a = np.empty((n, dim))
    gravity = math.sqrt(np.sum(table.gravity**2))
    steps = 0
    while t < until:
        if steps >= max_steps:
            return PAUSED, t, steps, -1, -1
        h, planned, ends = _trial(radau, t, until, exact)
        if h == 0.0:
            break
        if not h > ROUNDOFF * abs(t):
            return STUCK, t, steps, -1, -1
        table_accel(radau.x0, radau.v0, table, fb, radau.a0)
        _converge(radau, h, table, fb, x, v, a)
        outcome, tau, i, j = _close_step(radau, h, a, epsilon, gravity, planned, ends, contacts, x, v)
        if outcome == _REJECTED:
            continue
        if outcome == PRESSED:
            return PRESSED, t, steps, i, j
        steps += 1
        if outcome == CONTACT:
            return CONTACT, t + tau * h, steps, i, j
        t = until if ends else t + h
    return END, t, steps, -1, -1


def integrate_python(radau, accel, contacts, x, v, t, until, exact, epsilon, gravity, max_steps):
    """`integrate` for forces that run in Python: ``accel(x, v, t, out)`` fills the accelerations (m/s^2) at the
    given state (``gravity``: the magnitude of uniform gravity, m/s^2). The same kernels, in the same order."""
    n, dim = x.shape
    a = np.empty((n, dim))
    steps = 0
    while t < until:
        if steps >= max_steps:
            return PAUSED, t, steps, -1, -1
        h, planned, ends = _trial(radau, t, until, exact)
        if h == 0.0:
            break
        if not h > ROUNDOFF * abs(t):
            return STUCK, t, steps, -1, -1
        accel(radau.x0, radau.v0, t, radau.a0)
        begin_step(radau)
        last = math.inf
        for it in range(ITERATIONS):
            change = 0.0
            for k in range(1, STAGES + 1):
                state_at(radau, NODES[k], h, contacts.active, x, v)
                accel(x, v, t + NODES[k] * h, a)
                change = correct(radau, k, a)
            done, last = _converged(change, a, it, last)
            if done:
                break
        outcome, tau, i, j = _close_step(radau, h, a, epsilon, gravity, planned, ends, contacts, x, v)
        if outcome == _REJECTED:
            continue
        if outcome == PRESSED:
            return PRESSED, t, steps, i, j
        steps += 1
        if outcome == CONTACT:
            return CONTACT, t + tau * h, steps, i, j
        t = until if ends else t + h
    return END, t, steps, -1, -1
