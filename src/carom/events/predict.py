"""Prediction: the exact time of each body's next contact.

Free flight is a parabola, ``x(t) = x + v h + a h^2 / 2`` with ``h = t - TB``. Two bodies with equal
accelerations (free flight under uniform gravity) touch at a root of a quadratic, solved here in closed,
cancellation-free form; otherwise (a body resting on a wall against a free one, a free one against a fixed
one) the contact time is a root of a quartic, found by `carom.narrowphase` (bisection on monotone pieces).

Robustness near contact (Bannerman, Strobl, Formella & Pöschel 2014): a pair whose gap is within the contact tolerance
*touches*. A touching pair collides *now* if it approaches faster than the round-off floor ``speed_tol``,
or if it is *pressed*: not approaching, but its gap's second derivative is negative (gravity pushing a
body onto a fixed or resting one). Otherwise its next contact is sought only after its gap has opened
beyond the tolerance. The test for "now" is the same function here and in `resolve`, on the same
numbers, so an event predicted for now always finds something to do: round-off can neither let bodies
pass through each other nor make a pair collide again and again at one instant.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import inlined, kernel
from ..kinematics import moved
from ..narrowphase.spheres import pair_contact_time, touch_slack, wall_contact_time, wall_touch_slack
from .cells import cells_around, prefetch_first
from .state import (
    COUNT,
    EV_TIME,
    INV_MASS,
    KINETIC,
    NEXT,
    PARTNER,
    PARTNER_COUNT,
    RADIUS,
    TB,
    WALL_NORMAL,
    WALL_POINT,
    A,
    V,
    X,
)  # fmt: skip

INF = math.inf


@inlined
def body_kinetic(body, b, h):
    """Integral of m |v|^2 over the next h seconds of body b's flight (J s); 0 for a fixed body."""
    if body[b, INV_MASS] == 0.0 or h == 0.0:
        return 0.0
    vv = body[b, V] ** 2 + body[b, V + 1] ** 2 + body[b, V + 2] ** 2
    va = body[b, V] * body[b, A] + body[b, V + 1] * body[b, A + 1] + body[b, V + 2] * body[b, A + 2]
    aa = body[b, A] ** 2 + body[b, A + 1] ** 2 + body[b, A + 2] ** 2
    return (vv * h + va * h * h + aa * h * h * h / 3.0) / body[b, INV_MASS]


@inlined
def advance(body, b, t, sums):
    """Move body b along its parabola to time t, adding its integral of m |v|^2 dt (J s, for the
    pressure's kinetic part) to ``sums[KINETIC]``."""
    h = t - body[b, TB]
    if h == 0.0:
        return
    sums[KINETIC] += body_kinetic(body, b, h)
    for d in range(3):
        body[b, X + d] = moved(body[b, X + d], body[b, V + d], body[b, A + d], h)
        body[b, V + d] += body[b, A + d] * h
    body[b, TB] = t


@kernel(refcounts=False)
def nearest_image(r, periodic, length):
    """Component r of a separation, made the nearest periodic image (|r| < length on entry)."""
    if periodic:
        if r > 0.5 * length:
            return r - length
        if r < -0.5 * length:
            return r + length
    return r


@inlined
def flight(body, j, h, p):
    """Position and velocity of body j after a flight of h seconds: 6 floats. Without gravity every
    acceleration is 0 and is not read (``x + v h`` equals `moved`'s result up to the sign of a zero)."""
    x0, x1, x2 = body[j, X], body[j, X + 1], body[j, X + 2]
    v0, v1, v2 = _velocity(body, j, h, p)
    if not p.has_gravity:
        return x0 + v0 * h, x1 + v1 * h, x2 + v2 * h, v0, v1, v2
    x0 = moved(x0, body[j, V], body[j, A], h)
    x1 = moved(x1, body[j, V + 1], body[j, A + 1], h)
    x2 = moved(x2, body[j, V + 2], body[j, A + 2], h)
    return x0, x1, x2, v0, v1, v2


@inlined
def _velocity(body, j, h, p):
    """Velocity of body j after a flight of h seconds: 3 floats."""
    if not p.has_gravity:
        return body[j, V], body[j, V + 1], body[j, V + 2]
    return body[j, V] + body[j, A] * h, body[j, V + 1] + body[j, A + 1] * h, body[j, V + 2] + body[j, A + 2] * h


@inlined
def relative_state(body, geo, p, i, j, t):
    """Position, velocity and acceleration of body j relative to body i at time t (nearest periodic
    image): 9 floats, by the same arithmetic as `scan_cells`'s, so that both agree bitwise."""
    xi0, xi1, xi2, vi0, vi1, vi2 = flight(body, i, t - body[i, TB], p)
    xj0, xj1, xj2, vj0, vj1, vj2 = flight(body, j, t - body[j, TB], p)
    return (
        nearest_image(xj0 - xi0, geo.periodic[0], geo.length[0]),
        nearest_image(xj1 - xi1, geo.periodic[1], geo.length[1]),
        nearest_image(xj2 - xi2, geo.periodic[2], geo.length[2]),
        vj0 - vi0, vj1 - vi1, vj2 - vi2,
        body[j, A] - body[i, A], body[j, A + 1] - body[i, A + 1], body[j, A + 2] - body[i, A + 2],
    )  # fmt: skip


@kernel(refcounts=False)
def opening_speed(pressing, slack):
    """Least separation speed (m/s) at which a contact pressed together with normal acceleration
    ``pressing`` (m/s^2) opens beyond 4 times its touching slack (m, `touch_slack`) before it closes
    again: slower, its return would pass unseen inside the slack, where bodies count as touching."""
    return 2.0 * math.sqrt(2.0 * pressing * slack)


@kernel(refcounts=False)
def pair_state(x0, x1, x2, v0, v1, v2, a0, a1, a2, contact_distance, slack, p):
    """(touching, now) for a pair in relative state x, v, a: touching (gap within ``slack``, m), and either
    approaching faster than ``speed_tol``, or pressed together (normal acceleration of approach above
    ``accel_tol``, enough to beat the centripetal part ``|v|^2 / D``) and separating slower than half
    the hop speed (see `resolve`)."""
    xx = x0 * x0 + x1 * x1 + x2 * x2
    reach = contact_distance + slack
    if xx > reach * reach:
        return False, False
    dist = math.sqrt(xx)
    xv = x0 * v0 + x1 * v1 + x2 * v2
    if -xv > p.speed_tol * dist:
        return True, True
    xa = x0 * a0 + x1 * a1 + x2 * a2
    pressing = -xa / dist
    if pressing <= p.accel_tol:
        return True, False
    vv = v0 * v0 + v1 * v1 + v2 * v2
    hop = max(p.resting_speed, opening_speed(pressing, slack))
    return True, vv + xa < -p.accel_tol * dist and xv < 0.5 * hop * dist


@inlined(error_model="numpy")
def pair_delay(x0, x1, x2, v0, v1, v2, a0, a1, a2, contact_distance, slack, horizon, p):
    """Delay until a pair in relative state x, v, a touches: 0 if now, inf if not within ``horizon``,
    -1 if the accelerations differ and it needs the general (quartic) solver.

    Most pairs are neither touching nor going to touch soon: for them the closing root is computed
    unconditionally and discarded if the pair recedes or misses, by adding 0 or inf to it. Not a branch,
    which the processor would mispredict half of the time, and not a select between the root and inf
    either: LLVM turns a select whose operand is a division or a square root into a branch around them
    (that branch cost a fifth of a gas run's time). Hence also IEEE arithmetic, ``error_model="numpy"``,
    here and in the kernels it is inlined into."""
    xx = x0 * x0 + x1 * x1 + x2 * x2
    reach = contact_distance + slack
    if xx <= reach * reach:  # touching: now, or (in straight relative flight) separating
        if pair_state(x0, x1, x2, v0, v1, v2, a0, a1, a2, contact_distance, slack, p)[1]:
            return 0.0
        return -1.0 if (a0 != 0.0 or a1 != 0.0 or a2 != 0.0) else INF
    if a0 != 0.0 or a1 != 0.0 or a2 != 0.0:
        return -1.0
    xv = x0 * v0 + x1 * v1 + x2 * v2
    c0 = xx - contact_distance * contact_distance
    disc = xv * xv - (v0 * v0 + v1 * v1 + v2 * v2) * c0
    # The closing root of |x + v t|^2 = D^2 in its stable form, c0 / (sqrt(disc) - xv) for an approaching
    # pair (xv < 0); + |xv| keeps the divisor from being negative otherwise, where c0 / divisor could
    # overflow to -inf, and -inf + inf is NaN. So delay is in (0, inf], and delay + miss never NaN.
    delay = c0 / (math.sqrt(max(disc, 0.0)) + abs(xv))
    miss = 0.0 if (xv < 0.0) & (disc > 0.0) & (delay <= horizon) else INF  # a select of constants
    return delay + miss


@inlined
def wall_state(body, walls, p, b, k, t):
    """(touching, now, gap, normal speed, normal acceleration) of body b and wall k at time t; "now" as
    for pairs (approaching, or pressed onto the wall)."""
    h = t - body[b, TB]
    gap = -body[b, RADIUS]
    ns = 0.0
    na = 0.0
    for d in range(3):
        n = walls[k, WALL_NORMAL + d]
        gap += (moved(body[b, X + d], body[b, V + d], body[b, A + d], h) - walls[k, WALL_POINT + d]) * n
        ns += (body[b, V + d] + body[b, A + d] * h) * n
        na += body[b, A + d] * n
    touching = gap <= wall_touch_slack(body[b, RADIUS], p.size, p.tol)
    now = touching and (-ns > p.speed_tol or (ns <= p.speed_tol and na < -p.accel_tol))
    return touching, now, gap, ns, na


@kernel(refcounts=False)
def _quartic_delay(x0, x1, x2, v0, v1, v2, a0, a1, a2, contact_distance, slack, horizon, p, rel):
    """`pair_delay` for unequal accelerations, by `carom.narrowphase` on a finite horizon: no root of
    f(t) = |x + v t + a t^2 / 2|^2 - D^2 = sum c_k t^k lies beyond the Cauchy bound 1 + max |c_k / c_4|.
    ``rel`` is (3, 3) scratch."""
    aa = a0 * a0 + a1 * a1 + a2 * a2
    coefficients = (
        x0 * x0 + x1 * x1 + x2 * x2 - contact_distance * contact_distance,
        2.0 * (x0 * v0 + x1 * v1 + x2 * v2),
        v0 * v0 + v1 * v1 + v2 * v2 + x0 * a0 + x1 * a1 + x2 * a2,
        v0 * a0 + v1 * a1 + v2 * a2,
    )
    bound = 1.0
    for c in coefficients:
        bound = max(bound, 1.0 + abs(c) / (0.25 * aa))
    rel[0, 0], rel[0, 1], rel[0, 2] = x0, x1, x2
    rel[1, 0], rel[1, 1], rel[1, 2] = v0, v1, v2
    rel[2, 0], rel[2, 1], rel[2, 2] = a0, a1, a2
    # "Now" was decided by the caller (speed_tol inf); a touching pair is sought again once its gap has
    # opened beyond its slack, however slowly it separates.
    return pair_contact_time(rel[0], rel[1], rel[2], contact_distance, slack, min(horizon, bound), INF)


@inlined
def _bodies_delay(body, p, b, j, horizon, x0, x1, x2, v0, v1, v2):
    """`pair_delay` of bodies b and j, j at relative position x and velocity v (inf for two fixed bodies).
    Called for every pair a scan meets: it takes no scratch array (`_general_delay` does the rest)."""
    if body[b, INV_MASS] == 0.0 and body[j, INV_MASS] == 0.0:
        return INF
    a0, a1, a2 = 0.0, 0.0, 0.0
    if p.has_gravity:
        a0, a1, a2 = body[j, A] - body[b, A], body[j, A + 1] - body[b, A + 1], body[j, A + 2] - body[b, A + 2]
    rb, rj = body[b, RADIUS], body[j, RADIUS]
    return pair_delay(x0, x1, x2, v0, v1, v2, a0, a1, a2, rb + rj, touch_slack(rb, rj, p.size, p.tol), horizon, p)


@kernel(refcounts=False)
def _general_delay(body, p, rel, b, j, horizon, x0, x1, x2, v0, v1, v2):
    """`_bodies_delay` for unequal accelerations (the quartic; ``rel`` is (3, 3) scratch)."""
    a0, a1, a2 = body[j, A] - body[b, A], body[j, A + 1] - body[b, A + 1], body[j, A + 2] - body[b, A + 2]
    rb, rj = body[b, RADIUS], body[j, RADIUS]
    slack = touch_slack(rb, rj, p.size, p.tol)
    return _quartic_delay(x0, x1, x2, v0, v1, v2, a0, a1, a2, rb + rj, slack, horizon, p, rel)


@inlined
def _earlier(body, p, rel, b, j, t, best, partner, x0, x1, x2, v0, v1, v2):
    """(best, partner) with body j in it if its contact with body b (j at relative position x, velocity v,
    both at time t) comes before ``best``."""
    delay = _bodies_delay(body, p, b, j, best - t, x0, x1, x2, v0, v1, v2)
    if delay < 0.0:
        delay = _general_delay(body, p, rel, b, j, best - t, x0, x1, x2, v0, v1, v2)
    if t + delay < best:
        return t + delay, j
    return best, partner


@kernel(refcounts=False, error_model="numpy")  # for `pair_delay`, inlined
def scan_cells(body, link, head, chain, geo, p, cells, rel, b, t, axis, step, best):
    """Earliest contact of body b after t with the bodies of the cells around it (axis = -1) or of the
    slab just entered (see `cells_around`), if before ``best``: (time, partner), partner -1 if none."""
    xb0, xb1, xb2, vb0, vb1, vb2 = flight(body, b, t - body[b, TB], p)
    p0, p1, p2 = geo.periodic
    l0, l1, l2 = geo.length
    partner = np.int64(-1)
    n_cells = cells_around(link, geo, b, axis, step, cells)
    prefetch_first(body, head, chain, cells, n_cells)
    for m in range(n_cells):
        j = np.int64(head[cells[m]])  # int64 as near[k] in scan_near: one signature of _earlier
        while j >= 0:
            if j != b:
                xj0, xj1, xj2, vj0, vj1, vj2 = flight(body, j, t - body[j, TB], p)
                x0 = nearest_image(xj0 - xb0, p0, l0)
                x1 = nearest_image(xj1 - xb1, p1, l1)
                x2 = nearest_image(xj2 - xb2, p2, l2)
                v0, v1, v2 = vj0 - vb0, vj1 - vb1, vj2 - vb2
                best, partner = _earlier(body, p, rel, b, j, t, best, partner, x0, x1, x2, v0, v1, v2)
            j = np.int64(chain[j, NEXT])
    return best, partner


@kernel(refcounts=False, error_model="numpy")  # for `pair_delay`, inlined
def scan_near(body, p, rel, near, near_x, start, end, b, t):
    """`scan_cells` over the bodies ``near[start:end]``, at relative positions ``near_x`` (b and they at time
    t; the bodies around b that `resolve` listed before it changed velocities)."""
    vb0, vb1, vb2 = _velocity(body, b, t - body[b, TB], p)
    best = INF
    partner = np.int64(-1)
    for k in range(start, end):
        j = near[k]
        x0, x1, x2 = near_x[k, 0], near_x[k, 1], near_x[k, 2]
        vj0, vj1, vj2 = _velocity(body, j, t - body[j, TB], p)
        v0, v1, v2 = vj0 - vb0, vj1 - vb1, vj2 - vb2
        best, partner = _earlier(body, p, rel, b, j, t, best, partner, x0, x1, x2, v0, v1, v2)
    return best, partner


@inlined
def predict_body(body, link, head, chain, geo, walls, p, cells, rel, b, t):
    """Replace body b's pending pair event by its earliest contact after t with a body or a wall."""
    best, partner = scan_cells(body, link, head, chain, geo, p, cells, rel, b, t, np.int64(-1), np.int64(0), INF)
    set_prediction(body, link, walls, p, b, t, best, partner)


@inlined
def set_prediction(body, link, walls, p, b, t, best, partner):
    """Make body b's pair event its earliest contact after t with a wall, or else (at ``best``) with
    ``partner``."""
    if body[b, INV_MASS] != 0.0:
        for k in range(walls.shape[0]):
            _, now, gap, ns, na = wall_state(body, walls, p, b, k, t)
            slack = wall_touch_slack(body[b, RADIUS], p.size, p.tol)
            delay = 0.0 if now else wall_contact_time(gap, ns, na, slack, best - t, INF)
            if t + delay < best:
                best = t + delay
                partner = -1 - k
    set_event(body, link, b, best, partner)


@inlined
def set_event(body, link, b, time, partner):
    body[b, EV_TIME] = time
    link[b, PARTNER] = partner
    link[b, PARTNER_COUNT] = link[partner, COUNT] if partner >= 0 else 0
