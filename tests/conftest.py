"""Shared scenes for the tests (the same builders the benchmarks use)."""

from __future__ import annotations

import math

import numpy as np

import carom


def lattice_gas(n: int, phi: float, dim: int = 3, seed: int = 0, e: float = 1.0, radius: float = 0.5):
    """n equal spheres (disks) on a cubic lattice in a box at packing fraction phi, Gaussian velocities
    with zero total momentum."""
    rng = np.random.default_rng(seed)
    volume = n * (4 / 3 * math.pi * radius**3 if dim == 3 else math.pi * radius**2) / phi
    side = volume ** (1 / dim)
    per_side = math.ceil(n ** (1 / dim))
    spacing = side / per_side
    assert spacing > 2 * radius, "packing fraction too high for a lattice start"
    grid = np.stack(np.meshgrid(*[np.arange(per_side)] * dim, indexing="ij"), -1).reshape(-1, dim)[:n]
    velocities = rng.normal(size=(n, dim))
    velocities -= velocities.mean(axis=0)
    w = carom.World(dim=dim)
    w.add_box(lower=[0.0] * dim, upper=[side] * dim, restitution=e)
    w.add_bodies((grid + 0.5) * spacing, velocities, masses=1.0, radii=radius, restitution=e)
    return w


def min_gap(world) -> float:
    """Smallest surface gap between any two active bodies (negative: overlap), O(n^2)."""
    x = world.positions[world.active]
    r = world.radii[world.active]
    d = np.linalg.norm(x[:, None] - x[None], axis=-1) - (r[:, None] + r[None])
    np.fill_diagonal(d, np.inf)
    return float(d.min())
