"""Two-body (Kepler) orbits: Kepler's equation, the state on an orbit at a time, the elements of a state.

Two bodies of masses ``m1`` and ``m2`` under Newtonian gravity move about their centre of mass; the second's
position relative to the first, ``r = x2 - x1`` (velocity ``v = v2 - v1``), follows a conic section about the
origin with ``mu = G (m1 + m2)``. For a light body about a heavy one, ``mu = G M``. Units are whatever ``mu``
is in (m^3/s^2 with m and s; AU^3/day^2 with AU and days).

An elliptic orbit (eccentricity ``0 <= e < 1``, semi-major axis ``a > 0``) is placed in space by three
angles (rad): ``inclination`` of its plane to the x-y plane, the longitude of the ascending ``node`` (from
the x axis) and the ``argument`` of periapsis (from the node, in the direction of motion). On the orbit, the
mean anomaly ``M = n (t - t_p)`` grows uniformly at the mean motion ``n = sqrt(mu / a^3)`` from the
periapsis time ``t_p``; the eccentric anomaly ``E`` solves Kepler's equation ``E - e sin E = M``, and

    r = a (cos E - e) P + a sqrt(1 - e^2) sin E Q,   v = n a (-sin E P + sqrt(1 - e^2) cos E Q) / (1 - e cos E)

with ``P`` the unit vector towards periapsis and ``Q`` 90 degrees ahead of it in the orbit's plane.

>>> r, v = kepler_state(mu=1.0, a=1.0, e=0.5, time=0.0)  # at periapsis: distance a (1 - e)
>>> r.tolist(), round(float(v[1]), 12)
([0.5, 0.0], 1.732050807569)
>>> round(float(orbital_elements(1.0, r, v).e), 12)
0.5
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .model import as_number, as_numbers

#: Newton's iterations on Kepler's equation stop once a correction is this many units of round-off of the
#: eccentric anomaly E, or once corrections below ``_ROUND_OFF_REGIME`` of E stop shrinking (they then only
#: stir its last bits); each iteration squares the error, so the one before had about 1e-8 left. From
#: Danby's start, Newton's method takes at most 13 iterations (the last one included) for e <= 0.999, and
#: 50 for the largest double below 1 (measured over M in [-pi, pi]).
_CONVERGED = 8.0 * np.finfo(float).eps
_ROUND_OFF_REGIME = 1e-8
_MAX_ITERATIONS = 100
#: Below this |E| (rad), ``E - sin E`` is summed from its Taylor series: evaluated directly it would cancel
#: to a relative error eps / E^2, which for e near 1 near periapsis (where Kepler's equation is
#: ``(1 - e) E + e (E - sin E) = M``) would leave E with a relative error up to eps / (1 - e). Nine terms
#: reach round-off below 1 (the next, E^21 / 21!, is 1e-19 of E^3 / 6 there); above it the direct
#: difference loses at most a factor 6 (1 - sin 1 = 0.16).
_SERIES_BELOW = 1.0
_SERIES_TERMS = 9


class OrbitalElements(NamedTuple):
    """The osculating elements of a relative state (`orbital_elements`). Angles in rad."""

    a: float  #: semi-major axis: > 0 for an ellipse, < 0 for a hyperbola, inf for a parabola
    e: float  #: eccentricity
    inclination: float  #: in [0, pi]; in 2D 0 (counter-clockwise) or pi (clockwise)
    node: float  #: longitude of the ascending node, in (-pi, pi]; 0 where the orbit lies in the x-y plane
    argument: float  #: argument of periapsis from the node, in (-pi, pi]; 0 for a circular orbit
    true_anomaly: float  #: angle from periapsis to the position, in (-pi, pi]
    mean_anomaly: float  #: in [0, 2 pi) for an ellipse (time since periapsis times n); nan for e >= 1


def _e_minus_sin(E: np.ndarray) -> np.ndarray:
    """``E - sin E`` to a few units of round-off relative to itself, for any E (rad)."""
    small = np.abs(E) < _SERIES_BELOW
    E2 = E * E
    series = np.full_like(E, 1.0 / math.factorial(2 * _SERIES_TERMS + 1))
    for k in range(_SERIES_TERMS - 1, 0, -1):  # E^3 (1/3! - E^2/5! + E^4/7! - ...), by Horner's rule in E^2
        series = 1.0 / math.factorial(2 * k + 1) - E2 * series
    return np.where(small, E * E2 * series, E - np.sin(E))


def solve_kepler(mean_anomaly, e):
    """The eccentric anomaly ``E`` (rad) with ``E - e sin E = M`` (Kepler's equation) for the mean anomaly
    ``M`` (rad, a number or an array) and eccentricity ``e`` in [0, 1): Newton's method from Danby's start
    ``E0 = M + 0.85 e sign(sin M)``, on M reduced to [-pi, pi] (at most 13 iterations for e <= 0.999), to
    round-off. Near periapsis of an orbit of e near 1 the equation is written
    ``(1 - e) E + e (E - sin E) = M``, so that E keeps its relative precision. Returns a float for a number,
    an array for an array; E lies within pi of M (the same number of whole turns)."""
    M = as_numbers("mean_anomaly", mean_anomaly, "a number or an array of numbers")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"mean_anomaly must be finite, got {mean_anomaly!r}")
    e = _eccentricity(e)
    turns = 2.0 * np.pi * np.round(M / (2.0 * np.pi))
    m = M - turns  # in [-pi, pi]
    E = m + 0.85 * e * np.sign(np.sin(m))
    previous = np.full_like(E, np.inf)
    for _ in range(_MAX_ITERATIONS):
        f = (1.0 - e) * E + e * _e_minus_sin(E) - m
        slope = (1.0 - e) + 2.0 * e * np.sin(0.5 * E) ** 2  # 1 - e cos E, without its cancellation near 1
        step = f / slope
        E = E - step
        size = np.abs(step)
        if np.all((size <= _CONVERGED * np.abs(E)) | ((size >= previous) & (size <= _ROUND_OFF_REGIME * np.abs(E)))):
            break
        previous = size
    else:  # (a safety net: twice the iterations that e just below 1 takes)
        raise ArithmeticError(f"Kepler's equation did not converge for e = {e!r}")
    E = E + turns
    return float(E) if E.ndim == 0 else E


def kepler_state(mu, a, e, time, *, periapsis_time=0.0, inclination=0.0, node=0.0, argument=0.0, dim=2):
    """(position, velocity) of the relative two-body orbit at ``time`` (a number or an array of times): arrays
    of shape (dim,), or (len(time), dim). ``mu = G (m1 + m2)`` > 0, semi-major axis ``a`` > 0, eccentricity
    ``e`` in [0, 1), periapsis at ``periapsis_time``. The orbit's plane: ``inclination``, ``node`` and
    ``argument`` (rad; module docstring). ``dim=2``: the x-y plane, ``inclination`` 0 (counter-clockwise,
    periapsis at angle ``argument`` from the x axis) or pi (clockwise, periapsis at ``-argument``)."""
    mu = _positive("mu", mu)
    a = _positive("a", a)
    e = _eccentricity(e)
    t = as_numbers("time", time, "a number or an array of numbers")
    if not np.all(np.isfinite(t)):
        raise ValueError(f"time must be finite, got {time!r}")
    tp = as_number("periapsis_time", periapsis_time)
    P, Q = _orbit_axes(inclination, node, argument, dim)
    n = math.sqrt(mu / a**3)
    E = np.asarray(solve_kepler(n * (t - tp), e))
    half = np.sin(0.5 * E) ** 2
    b = a * math.sqrt((1.0 - e) * (1.0 + e))
    x = a * ((1.0 - e) - 2.0 * half)  # a (cos E - e), exact at periapsis
    y = b * np.sin(E)
    rate = n / ((1.0 - e) + 2.0 * e * half)  # dE/dt = n / (1 - e cos E)
    vx = -a * np.sin(E) * rate
    vy = b * np.cos(E) * rate
    position = x[..., None] * P + y[..., None] * Q
    velocity = vx[..., None] * P + vy[..., None] * Q
    return position, velocity


def orbital_elements(mu, r, v) -> OrbitalElements:
    """The osculating `OrbitalElements` of the relative position ``r`` and velocity ``v`` (2 or 3 numbers
    each) under ``mu = G (m1 + m2)`` > 0. For an elliptic orbit, `kepler_state` with these elements (and
    ``periapsis_time = t - mean_anomaly / n``) gives ``r`` and ``v`` back at time ``t``."""
    mu = _positive("mu", mu)
    r = as_numbers("r", r, "a vector of 2 or 3 numbers")
    if r.shape not in ((2,), (3,)) or not np.all(np.isfinite(r)):
        raise ValueError(f"r must be 2 or 3 finite numbers, got {r.tolist()!r}")
    v = as_numbers("v", v, f"a vector of {len(r)} numbers")
    if v.shape != r.shape or not np.all(np.isfinite(v)):
        raise ValueError(f"v must be {len(r)} finite numbers (as r), got {v.tolist()!r}")
    if not np.any(r):
        raise ValueError(f"r must be nonzero (the bodies apart), got {r.tolist()!r}")
    r3, v3 = np.zeros(3), np.zeros(3)
    r3[: len(r)], v3[: len(v)] = r, v
    h = np.cross(r3, v3)
    h_norm = float(np.linalg.norm(h))
    if h_norm == 0.0:
        raise ValueError(f"r and v must not be parallel (a radial orbit has no plane), got r = {r.tolist()!r}, "
                         f"v = {v.tolist()!r}")  # fmt: skip
    distance = float(np.linalg.norm(r3))
    energy = 0.5 * float(v3 @ v3) - mu / distance
    a = math.inf if energy == 0.0 else -mu / (2.0 * energy)
    e_vec = ((float(v3 @ v3) - mu / distance) * r3 - float(r3 @ v3) * v3) / mu
    e = float(np.linalg.norm(e_vec))
    sin_i, cos_i = math.hypot(h[0], h[1]) / h_norm, h[2] / h_norm
    inclination = math.atan2(sin_i, cos_i)
    node = math.atan2(h[0], -h[1]) if sin_i > 0.0 else 0.0
    line = np.array([math.cos(node), math.sin(node), 0.0])  # towards the ascending node
    P = e_vec / e if e > 0.0 else line
    Q = np.cross(h / h_norm, P)
    # P turned back by the node about z is (cos w, sin w cos i, sin w sin i)
    cos_w = P[0] * line[0] + P[1] * line[1]
    sin_w = (P[1] * line[0] - P[0] * line[1]) * cos_i + P[2] * sin_i
    argument = math.atan2(sin_w, cos_w)
    f = math.atan2(float(r3 @ Q), float(r3 @ P))
    if e < 1.0:
        E = math.atan2(math.sqrt((1.0 - e) * (1.0 + e)) * math.sin(f), e + math.cos(f))
        mean = (E - e * math.sin(E)) % (2.0 * math.pi)
    else:
        mean = math.nan
    return OrbitalElements(a, e, inclination, node, argument, f, mean)


def _positive(field: str, value) -> float:
    x = as_number(field, value)
    if not x > 0:
        raise ValueError(f"{field} must be > 0, got {value!r}")
    return x


def _eccentricity(value) -> float:
    e = as_number("e", value)
    if not 0.0 <= e < 1.0:
        raise ValueError(f"e must be in [0, 1) (an elliptic orbit), got {value!r}")
    return e


def _orbit_axes(inclination, node, argument, dim) -> tuple[np.ndarray, np.ndarray]:
    """The unit vectors P (towards periapsis) and Q (90 degrees ahead) of an orbit placed by its angles."""
    if dim not in (2, 3):
        raise ValueError(f"dim must be 2 or 3, got {dim!r}")
    i = as_number("inclination", inclination)
    node = as_number("node", node)
    w = as_number("argument", argument)
    if dim == 2:
        if i not in (0.0, math.pi):
            raise ValueError(f"inclination must be 0 or pi in 2D (counter-clockwise or clockwise), got {inclination!r}")
        cos_i, sin_i = (1.0, 0.0) if i == 0.0 else (-1.0, 0.0)
    else:
        if not 0.0 <= i <= math.pi:
            raise ValueError(f"inclination must be in [0, pi], got {inclination!r}")
        cos_i, sin_i = math.cos(i), math.sin(i)
    cn, sn, cw, sw = math.cos(node), math.sin(node), math.cos(w), math.sin(w)
    P = np.array([cn * cw - sn * sw * cos_i, sn * cw + cn * sw * cos_i, sw * sin_i])
    Q = np.array([-cn * sw - sn * cw * cos_i, -sn * sw + cn * cw * cos_i, cw * sin_i])
    return P[:dim], Q[:dim]
