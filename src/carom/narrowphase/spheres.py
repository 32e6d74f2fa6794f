"""Sphere–sphere and sphere–wall geometry: gaps, the touching rule, and exact contact times on parabolic
paths (disks are the same in 2D).

Between events every body moves with constant acceleration, ``x(t) = x + v t + a t^2 / 2`` (exact free
flight under uniform gravity; the drift of the leapfrog integrator otherwise). Two spheres touch when
``f(t) = |d(t)|^2 - S^2 = 0``, ``d`` the relative position and ``S`` the sum of radii: a quartic in t, a
quadratic when both bodies have the same acceleration (uniform gravity, free flight). A sphere touches a
wall when ``n . (x(t) - p) - R = 0``: a quadratic. The contact time is the first *descending* crossing of
zero (the gap closing), found by closed form for quadratics and by bisection on monotone pieces (split
at the roots of the derivative, found the same way one degree down) for higher degrees.

Robustness near contact (after Bannerman, Strobl, Formella & Pöschel 2014): a pair that already touches (gap within
the contact tolerance, or overlapping by round-off) is either approaching — then it collides *now*, at
zero delay — or not, and then its next contact is only sought after its gap has opened beyond the
tolerance. Round-off can therefore neither let a pair pass through each other nor make it collide again
and again at the same instant.
"""

from __future__ import annotations

import math

import numpy as np

from ..config import ROUNDOFF
from ..jit import inlined, kernel
from .roots import first_crossing, quadratic_crossing

INF = math.inf


#: The reference body of `pair_contact_time`: at rest at the origin (subtracting it is exact).
ORIGIN = np.zeros(3)


@inlined
def relative_products(xi, xj, vi, vj, ai, aj, reach2):
    """Products of body j's position, velocity and acceleration relative to body i's (rows, m, m/s,
    m/s^2): ``xx, xv, vv, xa, va, aa`` (``xv = dx . dv`` and so on), and, for a pair closer than
    ``sqrt(reach2)`` (m), its approach speed (m/s) by the arithmetic of the event's own test
    (`pair_gap`, `carom.contact.law.approach_speed`); 0 otherwise."""
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


@kernel
def pair_contact_time(dx, dv, da, contact_distance, slack, horizon, speed_tol):
    """Delay until two spheres touch, or inf if not within ``horizon`` (s).

    ``dx, dv, da``: position, velocity and acceleration of body j relative to body i (m, m/s, m/s^2);
    ``contact_distance``: sum of radii S (m); ``slack``: gap (m) up to which the pair touches; ``speed_tol``:
    approach speeds below it (m/s) count as zero.
    """
    products = relative_products(ORIGIN, dx, ORIGIN, dv, ORIGIN, da, (contact_distance + slack) ** 2)
    return contact_time(*products, contact_distance, slack, horizon, speed_tol)


@kernel
def contact_time(xx, xv, vv, xa, va, aa, approach, contact_distance, slack, horizon, speed_tol):
    """`pair_contact_time` from `relative_products` (scalars only: a hot loop hands over no array)."""
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
        opened = first_crossing(c0 - touch, c1, c2, c3, c4, 0.0, horizon, False)
        if opened == INF:
            return INF
        return first_crossing(c0, c1, c2, c3, c4, opened, horizon, True)
    if out_of_reach(xx, vv, aa, contact_distance, horizon):
        return INF
    return first_crossing(c0, c1, c2, c3, c4, 0.0, horizon, True)


@kernel
def out_of_reach(xx, vv, aa, contact_distance, horizon):
    """Cheap rejection: whether two spheres at squared distance ``xx`` (m^2), not touching, with squared
    relative speed ``vv`` and acceleration ``aa``, stay apart for ``horizon`` (s): their distance cannot
    shrink by more than ``|dv| h + |da| h^2 / 2``. Callers may test this first: `pair_contact_time` then
    returns inf."""
    reach = math.sqrt(vv) * horizon + 0.5 * math.sqrt(aa) * horizon * horizon
    return math.sqrt(xx) - contact_distance > reach


@kernel
def wall_contact_time(gap, normal_speed, normal_accel, slack, horizon, speed_tol):
    """Delay until a sphere touches a wall, or inf. ``gap = n . (x - p) - R`` (m), ``normal_speed =
    n . v`` and ``normal_accel = n . a`` along the wall's inward normal n; the body touches the wall while
    ``gap <= slack`` (m). Touching contacts as in `pair_contact_time`."""
    touch = slack
    c2 = 0.5 * normal_accel
    if gap <= touch:
        if -normal_speed > speed_tol:
            return 0.0
        opened = quadratic_crossing(gap - touch, normal_speed, c2, 0.0, horizon, False)
        if opened == INF:
            return INF
        return quadratic_crossing(gap, normal_speed, c2, opened, horizon, True)
    # Cheap rejection: the gap cannot shrink by more than |n.v| h + |n.a| h^2 / 2 within the horizon.
    if gap > abs(normal_speed) * horizon + abs(c2) * horizon * horizon:
        return INF
    return quadratic_crossing(gap, normal_speed, c2, 0.0, horizon, True)


@inlined
def walls_within(b, reach, x, radius, wall_p, wall_n):
    """How many walls a loop over body b's walls must visit: all of them if one has a plane gap of at most
    ``reach`` (m), none otherwise. Most bodies are far from every wall: one branch instead of one per wall."""
    nearest = INF
    for k in range(wall_p.shape[0]):
        nearest = min(nearest, wall_plane_gap(b, k, x, radius, wall_p, wall_n))
    return wall_p.shape[0] if nearest <= reach else 0


@inlined
def wall_slack_bound(b, x, radius, wall_size, tol):
    """An upper bound (m) of `wall_slack` of body b for every wall, ``wall_size`` the largest wall-point
    coordinate: the same operations on a size no smaller (rounding is monotone)."""
    size = wall_size
    for d in range(x.shape[1]):
        size = max(size, abs(x[b, d]))
    return wall_touch_slack(radius[b], size, tol)


@inlined
def wall_reach(b, x, v, a, radius, wall_size, tol, horizon):
    """A gap (m) beyond which body b touches no wall within ``horizon`` (s): `wall_slack_bound` plus
    ``2 (|v|_1 h + |a|_1 h^2)``, which bounds ``|n.v| h + |n.a| h^2 / 2`` for every unit normal n, round-off
    included: beyond it, `narrowphase._wall_contact_time` returns inf by its own rejection test."""
    speed = 0.0
    accel = 0.0
    for d in range(x.shape[1]):
        speed += abs(v[b, d])
        accel += abs(a[b, d])
    return wall_slack_bound(b, x, radius, wall_size, tol) + 2.0 * (speed * horizon + accel * horizon * horizon)


@inlined
def wall_plane_gap(b, k, x, radius, wall_p, wall_n):
    """Signed gap (m) of body b from the plane of wall k."""
    gap = -radius[b]
    for d in range(x.shape[1]):
        gap += (x[b, d] - wall_p[k, d]) * wall_n[k, d]
    return gap


@inlined
def touch_slack(r_i, r_j, size, tol):
    """The touching rule of both engines: two balls of radii r_i and r_j (m) touch while their gap is at
    most this (m): ``tol`` times the smaller radius, plus the round-off of coordinates of magnitude ``size``
    (m; positions are only known to ``ROUNDOFF * size``)."""
    return tol * min(r_i, r_j) + ROUNDOFF * size


def touch_slacks(r_i, r_j, x_i, x_j, tol):
    """`touch_slack` for arrays of pairs (NumPy, for validation outside the kernels): radii ``r_i``, ``r_j``
    (m) and positions ``x_i``, ``x_j`` (rows, m), the round-off taken over each pair's coordinates."""
    size = np.maximum(np.abs(x_i).max(axis=1), np.abs(x_j).max(axis=1))
    return tol * np.minimum(r_i, r_j) + ROUNDOFF * size


@inlined
def wall_touch_slack(r, size, tol):
    """`touch_slack` of a ball of radius r (m) and a wall: ``tol`` times its radius, plus round-off."""
    return tol * r + ROUNDOFF * size


@inlined
def pair_slack(i, j, x, radius, tol):
    """Gap (m) up to which bodies i and j touch: ``tol`` times the smaller radius, plus round-off."""
    size = 0.0
    for d in range(x.shape[1]):
        size = max(size, abs(x[i, d]), abs(x[j, d]))
    return touch_slack(radius[i], radius[j], size, tol)


@inlined
def wall_slack(b, k, x, radius, wall_p, tol):
    """Gap (m) up to which body b touches wall k: ``tol`` times its radius, plus round-off."""
    size = 0.0
    for d in range(x.shape[1]):
        size = max(size, abs(x[b, d]), abs(wall_p[k, d]))
    return wall_touch_slack(radius[b], size, tol)


@inlined
def pair_gap(b, j, x, radius, tol, normal_out):
    """Surface gap (m) of bodies b and j (both at the same time), 0 while they touch; writes the unit
    normal b -> j. The touching test is the prediction's (`pair_contact_time`)."""
    dist2 = 0.0
    for d in range(x.shape[1]):
        normal_out[d] = x[j, d] - x[b, d]
        dist2 += normal_out[d] * normal_out[d]
    if dist2 == 0.0:
        return INF
    dist = math.sqrt(dist2)
    for d in range(x.shape[1]):
        normal_out[d] /= dist
    s = radius[b] + radius[j]
    if dist2 <= (s + pair_slack(b, j, x, radius, tol)) ** 2:
        return 0.0
    return dist - s


@inlined
def wall_gap(b, k, x, radius, wall_p, wall_n, tol):
    """Surface gap (m) of body b from wall k, 0 while it touches."""
    gap = wall_plane_gap(b, k, x, radius, wall_p, wall_n)
    return 0.0 if gap <= wall_slack(b, k, x, radius, wall_p, tol) else gap


@inlined
def centripetal(c, ci, cj, cn, x, v):
    """|v_rel,t|^2 / D for a body pair: how fast the gap of a sliding contact opens by curvature."""
    i = ci[c]
    j = cj[c]
    if j < 0:
        return 0.0
    vn = 0.0
    vv = 0.0
    dist2 = 0.0
    for d in range(x.shape[1]):
        dvd = v[j, d] - v[i, d]
        vv += dvd * dvd
        vn += dvd * cn[c, d]
        dist2 += (x[j, d] - x[i, d]) ** 2
    return max(vv - vn * vn, 0.0) / math.sqrt(dist2)
