"""The impact law against its closed forms (REFERENCE.md, Impacts)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import carom

masses = st.floats(1e-3, 1e3)
speeds = st.floats(-100, 100)
coefficients = st.floats(0.0, 1.0)


@given(masses, speeds, masses, speeds, coefficients)
def test_departure_speeds_match_closed_form(ma, ua, mb, ub, e):
    va, vb = carom.resolve_impact(ma, ua, mb, ub, e)
    scale = abs(ua) + abs(ub) + 1.0
    assert va == pytest.approx((ma * ua + mb * ub + mb * e * (ub - ua)) / (ma + mb), abs=1e-12 * scale)
    assert vb == pytest.approx((ma * ua + mb * ub + ma * e * (ua - ub)) / (ma + mb), abs=1e-12 * scale)


@given(masses, speeds, masses, speeds, coefficients)
def test_momentum_newton_law_and_energy_loss(ma, ua, mb, ub, e):
    va, vb = carom.resolve_impact(ma, ua, mb, ub, e)
    p = ma * ua + mb * ub
    assert ma * va + mb * vb == pytest.approx(p, abs=1e-12 * (abs(ma * ua) + abs(mb * ub) + 1e-300))
    assert vb - va == pytest.approx(-e * (ub - ua), abs=1e-9 * (abs(ua) + abs(ub) + 1e-300))
    mu = ma * mb / (ma + mb)
    lost = 0.5 * ma * ua**2 + 0.5 * mb * ub**2 - 0.5 * ma * va**2 - 0.5 * mb * vb**2
    ke = 0.5 * ma * ua**2 + 0.5 * mb * ub**2
    assert lost == pytest.approx(0.5 * (1 - e**2) * mu * (ua - ub) ** 2, abs=1e-11 * ke + 1e-300)


@given(masses, speeds, speeds, coefficients)
def test_fixed_body_is_the_exact_infinite_mass_limit(ma, ua, ub, e):
    va, vb = carom.resolve_impact(ma, ua, math.inf, ub, e)
    assert vb == ub
    assert va == pytest.approx(ub - e * (ua - ub), abs=1e-12 * (abs(ua) + abs(ub)) + 1e-300)


def test_equal_masses_elastic_exchange_velocities():
    assert carom.resolve_impact(1.0, 3.0, 1.0, -1.0, 1.0) == pytest.approx((-1.0, 3.0))
    assert carom.resolve_impact(2.0, 1.0, 2.0, 0.0, 0.0) == pytest.approx((0.5, 0.5))


@pytest.mark.parametrize(
    ("args", "field"),
    [((0, 1, 1, 0, 1), "m1"), ((1, 1, -1, 0, 1), "m2"), ((1, math.nan, 1, 0, 1), "u1"), ((1, 1, 1, 0, 1.5), "e")],
)
def test_bad_input_names_the_field(args, field):
    with pytest.raises(ValueError, match=field):
        carom.resolve_impact(*args)
