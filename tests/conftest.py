"""Shared scenes for the tests (the same builders the benchmarks use)."""

from __future__ import annotations

import numpy as np

from carom.scenes import gas


def lattice_gas(n: int, phi: float, dim: int = 3, seed: int = 0, e: float = 1.0, radius: float = 0.5):
    """The canonical gas (carom.scenes.gas) for the time-stepped engine."""
    return gas(n, phi, dim=dim, seed=seed, e=e, radius=radius)


def min_gap(world) -> float:
    """Smallest surface gap between any two active bodies (negative: overlap), O(n^2)."""
    x = world.positions[world.active]
    r = world.radii[world.active]
    d = np.linalg.norm(x[:, None] - x[None], axis=-1) - (r[:, None] + r[None])
    np.fill_diagonal(d, np.inf)
    return float(d.min())
