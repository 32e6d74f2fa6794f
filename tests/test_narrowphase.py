"""Exact contact times of parabolic paths (docs/physics.md, Motion between impacts)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carom.narrowphase.roots import _polynomial_crossing
from carom.narrowphase.spheres import pair_contact_time, wall_contact_time

TOL = 1e-9


def test_head_on_pair_linear_motion():
    t = pair_contact_time(np.array([1.0, 0, 0]), np.array([-2.0, 0, 0]), np.zeros(3), 0.2, TOL, 10.0, 0.0)
    assert t == pytest.approx(0.4, rel=1e-15)


def test_relative_acceleration_gives_quartic_root():
    # j at rest 1 m away, accelerating towards i at 2 m/s^2: contact when 1 - t^2 = 0.2
    t = pair_contact_time(np.array([1.0, 0, 0]), np.zeros(3), np.array([-2.0, 1e-3, 0]), 0.2, TOL, 10.0, 0.0)
    # exact: |(1 - t^2, 5e-4 t^2)| = 0.2
    f = (1 - t**2) ** 2 + (5e-4 * t**2) ** 2 - 0.04
    assert abs(f) < 1e-14
    assert t == pytest.approx(math.sqrt(0.8), rel=1e-6)


def test_ball_dropped_on_floor_contact_time():
    g, h = 9.81, 1.3
    t = wall_contact_time(h, 0.0, -g, TOL, 10.0, 0.0)
    assert t == pytest.approx(math.sqrt(2 * h / g), rel=1e-15)


def test_miss_and_horizon():
    miss = pair_contact_time(np.array([1.0, 0.5, 0]), np.array([-1.0, 0, 0]), np.zeros(3), 0.2, TOL, 10.0, 0.0)
    assert miss == math.inf
    late = pair_contact_time(np.array([1.0, 0, 0]), np.array([-1.0, 0, 0]), np.zeros(3), 0.2, TOL, 0.5, 0.0)
    assert late == math.inf


def test_touching_pair_collides_now_only_if_approaching():
    dx = np.array([0.2 * (1 - 1e-12), 0, 0])  # overlapping by round-off
    assert pair_contact_time(dx, np.array([-1.0, 0, 0]), np.zeros(3), 0.2, TOL, 1.0, 1e-12) == 0.0
    assert pair_contact_time(dx, np.array([1.0, 0, 0]), np.zeros(3), 0.2, TOL, 1.0, 1e-12) == math.inf
    # separating now but pulled back: meets again after the gap opened (a bounce inside one step)
    back = pair_contact_time(dx, np.array([1.0, 0, 0]), np.array([-4.0, 0, 0]), 0.2, TOL, 1.0, 1e-12)
    assert back == pytest.approx(0.5, rel=1e-6)
    assert wall_contact_time(0.0, 1.0, -4.0, TOL, 1.0, 0.0) == pytest.approx(0.5, rel=1e-12)


def test_resting_on_wall_is_not_an_event():
    assert wall_contact_time(0.0, 0.0, -9.81, TOL, 1.0, 1e-12) == math.inf
    assert wall_contact_time(-1e-13, 0.0, 0.0, TOL, 1.0, 1e-12) == math.inf


@settings(deadline=None)  # the first example may include Numba compilation
@given(
    st.lists(st.floats(-10, 10), min_size=5, max_size=5),
    st.floats(0.0, 5.0),
)
def test_polynomial_crossing_is_a_descending_root_with_none_before(coeffs, hi):
    c = np.array(coeffs)
    t = _polynomial_crossing(c, 0.0, hi, True)
    grid = np.linspace(0.0, hi, 2001)
    f = np.polyval(c[::-1], grid)
    crossings = np.flatnonzero((f[:-1] > 0) & (f[1:] <= 0))
    if t == math.inf:
        assert len(crossings) == 0
    else:
        assert 0.0 <= t <= hi
        assert abs(np.polyval(c[::-1], t)) <= 1e-9 * np.abs(c).sum()
        if len(crossings):
            assert t <= grid[crossings[0] + 1] + 1e-12
