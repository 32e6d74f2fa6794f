"""Two-body orbits (`carom.orbits`) against Kepler's laws, and `World(integrator="ias15")` against them: long
eccentric orbits, the outer solar system, drag against an independent ODE solver, merging under gravity."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

import carom
from carom.orbits import kepler_state, orbital_elements, solve_kepler

EPS = np.finfo(float).eps
eccentricities = st.floats(0.0, 0.999)
angles = st.floats(-math.pi, math.pi)


# ----------------------------------------------------------------------------------------------- Kepler's equation
@given(st.floats(-100.0, 100.0), eccentricities)
def test_solve_kepler_solves_keplers_equation(M, e):
    E = solve_kepler(M, e)
    # the residual is the round-off of E (|E| <= |M| + 1) and of e sin E; E - M = e sin E lies within e
    assert abs(E - e * math.sin(E) - M) <= 4 * EPS * (abs(M) + 2.0)
    assert abs(E - M) <= e + 4 * EPS * (abs(M) + 1.0)


@pytest.mark.parametrize("e", [0.5, 0.99, 0.999])
def test_solve_kepler_keeps_its_relative_precision_near_periapsis(e):
    """For tiny M, E = M / (1 - e) - e E^3 / (6 (1 - e)) to a relative O(E^4): E must match it to round-off.
    (Kepler's equation written as E - e sin E - M would lose a factor 1 / (1 - e) here: 1e-13 at e = 0.999.)"""
    M = np.geomspace(1e-300, 1e-9, 200)
    E = solve_kepler(M, e)
    first = M / (1.0 - e)
    expected = first - e * first**3 / (6.0 * (1.0 - e))
    np.testing.assert_allclose(E, expected, rtol=4 * EPS, atol=0.0)
    np.testing.assert_allclose(solve_kepler(-M, e), -expected, rtol=4 * EPS, atol=0.0)


def test_solve_kepler_takes_arrays_and_whole_turns():
    M = np.linspace(-3.0, 3.0, 7)
    E = solve_kepler(M, 0.7)
    assert isinstance(E, np.ndarray) and E.shape == M.shape
    assert isinstance(solve_kepler(1.0, 0.7), float)
    np.testing.assert_allclose(solve_kepler(M + 8 * math.pi, 0.7), E + 8 * math.pi, rtol=0, atol=64 * EPS)
    assert solve_kepler(0.0, 0.999) == 0.0 and solve_kepler(math.pi, 0.999) == pytest.approx(math.pi, abs=1e-15)


# ----------------------------------------------------------------------------------------------- states and elements
@settings(max_examples=300)
@given(eccentricities, st.floats(-50.0, 50.0), angles, st.floats(0.0, math.pi), angles)
def test_kepler_state_obeys_vis_viva_and_keeps_its_angular_momentum(e, t, node, inclination, argument):
    mu, a = 3.0, 2.0
    r, v = kepler_state(mu, a, e, t, periapsis_time=0.3, inclination=inclination, node=node, argument=argument,
                        dim=3)  # fmt: skip
    distance = np.linalg.norm(r)
    assert a * (1 - e) * (1 - 1e-15) <= distance <= a * (1 + e) * (1 + 1e-15)
    # v^2 = mu (2 / r - 1 / a), each side to round-off of the larger of its terms (2 mu / r)
    assert abs(v @ v - mu * (2 / distance - 1 / a)) <= 16 * EPS * 2 * mu / distance
    h = np.cross(r, v)  # |h| = sqrt(mu a (1 - e^2)), along the orbit's pole
    assert np.linalg.norm(h) == pytest.approx(math.sqrt(mu * a * (1 - e) * (1 + e)), rel=1e-12)
    pole = (math.sin(node) * math.sin(inclination), -math.cos(node) * math.sin(inclination), math.cos(inclination))
    np.testing.assert_allclose(h / np.linalg.norm(h), pole, rtol=0, atol=1e-12)


@settings(max_examples=300)
@given(eccentricities, st.floats(0.0, 1.0), angles, st.floats(0.0, math.pi), angles)
def test_elements_and_states_round_trip(e, phase, node, inclination, argument):
    mu, a = 1.5, 0.7
    n = math.sqrt(mu / a**3)
    t = 2 * math.pi / n * phase
    r, v = kepler_state(mu, a, e, t, inclination=inclination, node=node, argument=argument, dim=3)
    el = orbital_elements(mu, r, v)
    # a from vis-viva: 1 / a = 2 / r - v^2 / mu loses a factor 2 a / r <= 2 / (1 - e) to cancellation
    assert el.a == pytest.approx(a, rel=32 * EPS / (1 - e))
    assert el.e == pytest.approx(e, abs=1e-12 / (1 - e))
    back_r, back_v = kepler_state(mu, el.a, el.e, t, periapsis_time=t - el.mean_anomaly / math.sqrt(mu / el.a**3),
                                  inclination=el.inclination, node=el.node, argument=el.argument, dim=3)  # fmt: skip
    np.testing.assert_allclose(back_r, r, rtol=0, atol=1e-11 * a / (1 - e))
    np.testing.assert_allclose(back_v, v, rtol=0, atol=1e-11 * np.linalg.norm(v) / (1 - e))
    if e > 1e-3 and 1e-3 < inclination < math.pi - 1e-3:  # (elsewhere the angles are degenerate)
        assert el.inclination == pytest.approx(inclination, abs=1e-12)
        assert math.remainder(el.node - node, 2 * math.pi) == pytest.approx(0.0, abs=1e-10)
        assert math.remainder(el.argument - argument, 2 * math.pi) == pytest.approx(0.0, abs=1e-9)


def test_two_dimensional_orbits_are_the_plane_of_three_dimensional_ones():
    t = np.linspace(0.0, 7.0, 11)
    r2, v2 = kepler_state(1.0, 1.0, 0.6, t, argument=0.4)
    r3, v3 = kepler_state(1.0, 1.0, 0.6, t, argument=0.3, node=0.1, dim=3)
    assert r2.shape == (11, 2) and r3.shape == (11, 3) and not np.any(r3[:, 2])
    np.testing.assert_allclose(r3[:, :2], r2, atol=1e-15)
    np.testing.assert_allclose(v3[:, :2], v2, atol=1e-15)
    # the mirror image in the x axis: clockwise, periapsis at -0.4 (at -argument)
    back, back_v = kepler_state(1.0, 1.0, 0.6, t, argument=0.4, inclination=math.pi)
    np.testing.assert_allclose(back, r2 * (1, -1), atol=1e-15)
    np.testing.assert_allclose(back_v, v2 * (1, -1), atol=1e-15)
    el = orbital_elements(1.0, back[3], back_v[3])
    assert el.inclination == math.pi and el.node == 0.0 and el.argument == pytest.approx(0.4, abs=1e-14)


def test_kepler_state_is_the_two_body_motion():
    """An independent check: the two-body equations integrated by DOP853 (rtol 1e-13) from the state at
    apoapsis, over one and a half orbits of e = 0.9, end where `kepler_state` says (1e-10 of a; the
    integrator's own error is below 1e-11)."""
    mu, a, e = 2.0, 1.3, 0.9
    P = 2 * math.pi * math.sqrt(a**3 / mu)
    r0, v0 = kepler_state(mu, a, e, 0.0, periapsis_time=-P / 2)

    def rhs(_, y):
        return np.concatenate([y[2:], -mu * y[:2] / np.linalg.norm(y[:2]) ** 3])

    times = np.array([0.3, 0.5, 1.0, 1.5]) * P
    sol = solve_ivp(rhs, (0.0, times[-1]), np.concatenate([r0, v0]), method="DOP853", rtol=1e-13, atol=1e-16,
                    t_eval=times)  # fmt: skip
    r, _ = kepler_state(mu, a, e, times, periapsis_time=-P / 2)
    np.testing.assert_allclose(sol.y[:2].T, r, rtol=0, atol=1e-10 * a)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: solve_kepler(1.0, 1.0), r"e must be in \[0, 1\).*got 1.0"),
        (lambda: solve_kepler(1.0, -0.1), r"e must be in \[0, 1\).*got -0.1"),
        (lambda: solve_kepler(math.nan, 0.1), "mean_anomaly must be finite"),
        (lambda: solve_kepler("1", 0.1), "mean_anomaly must be a number"),
        (lambda: kepler_state(-1.0, 1.0, 0.1, 0.0), "mu must be > 0, got -1.0"),
        (lambda: kepler_state(1.0, 0.0, 0.1, 0.0), "a must be > 0, got 0.0"),
        (lambda: kepler_state(1.0, 1.0, 0.1, math.inf), "time must be finite"),
        (lambda: kepler_state(1.0, 1.0, 0.1, 0.0, inclination=0.5), "inclination must be 0 or pi in 2D"),
        (lambda: kepler_state(1.0, 1.0, 0.1, 0.0, inclination=4.0, dim=3), r"inclination must be in \[0, pi\]"),
        (lambda: kepler_state(1.0, 1.0, 0.1, 0.0, dim=4), "dim must be 2 or 3, got 4"),
        (lambda: kepler_state(1.0, 1.0, 0.1, 0.0, periapsis_time=None), "periapsis_time must be finite"),
        (lambda: orbital_elements(1.0, (1.0, 0.0), (2.0, 0.0)), "r and v must not be parallel"),
        (lambda: orbital_elements(1.0, (0.0, 0.0), (0.0, 1.0)), "r must be nonzero"),
        (lambda: orbital_elements(1.0, (1.0, 0.0), (0.0, 1.0, 0.0)), r"v must be 2 finite numbers \(as r\)"),
        (lambda: orbital_elements(1.0, (1.0,), (1.0,)), "r must be 2 or 3 finite numbers"),
        (lambda: orbital_elements(0.0, (1.0, 0.0), (0.0, 1.0)), "mu must be > 0"),
    ],
)
def test_bad_input_names_the_field(call, message):
    with pytest.raises(ValueError, match=message):
        call()
