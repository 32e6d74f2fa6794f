"""Shared scenes for the tests (the same builders the benchmarks use)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import settings

import carom
from carom.canonical import gas

# Every property test draws the same examples on every run and machine (derandomize), so that a failure in
# CI replays anywhere; print_blob prints the failing example's reproduction blob. Numba compiles a kernel on
# its first call, so no deadline. Tests keep their own max_examples; this profile sets the rest.
settings.register_profile("carom", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("carom")


def lattice_gas(n: int, phi: float, dim: int = 3, seed: int = 0, e: float = 1.0, radius: float = 0.5):
    """The canonical gas (carom.canonical.gas) for the time-stepped engine."""
    return gas(n, phi, dim=dim, seed=seed, e=e, radius=radius)


def assert_same_run(world, resumed, until: float, dt: float) -> None:
    """Run both worlds to ``until`` at ``dt``: they must end bit-identical (positions, velocities, impacts)."""
    for w in (world, resumed):
        w.run(until=until, dt=dt)
    np.testing.assert_array_equal(resumed.positions, world.positions)
    np.testing.assert_array_equal(resumed.velocities, world.velocities)
    assert resumed.collision_count == world.collision_count


def min_gap(world) -> float:
    """Smallest surface gap between any two active bodies (negative: overlap), O(n^2)."""
    x = world.positions[world.active]
    r = world.radii[world.active]
    d = np.linalg.norm(x[:, None] - x[None], axis=-1) - (r[:, None] + r[None])
    np.fill_diagonal(d, np.inf)
    return float(d.min())


def closed_form_impact(x1, v1, m1, r1, x2, v2, m2, r2, e):
    """Contact time, normal and departure velocities of two spheres in free flight (the oracle)."""
    dx, dv = x2 - x1, v2 - v1
    s = r1 + r2
    a, b, c = dv @ dv, 2 * dx @ dv, dx @ dx - s * s
    t = (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)
    n = (dx + dv * t) / s
    ua, ub = v1 @ n, v2 @ n
    va, vb = carom.resolve_impact(m1, ua, m2, ub, e)
    return t, n, v1 + (va - ua) * n, v2 + (vb - ub) * n
