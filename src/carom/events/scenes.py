"""Canonical event-engine scenes, shared by the tests, the benchmark and the docs."""

from __future__ import annotations

import math

import numpy as np

from .world import EventWorld


def hard_sphere_gas(
    n: int, phi: float, dim: int = 3, *, e: float = 1.0, kT: float = 1.0, seed: int = 0, equal_speeds=False,
    **world_args,
) -> EventWorld:
    """n equal spheres (disks) of diameter 1 and mass 1 in a periodic cube (square) at packing fraction
    ``phi`` (reduced units: sigma = m = 1), restitution ``e``.

    They start on a random subset of a simple cubic (square) lattice, which holds up to phi = pi/6 (pi/4
    in 2D), with Gaussian velocities (or, ``equal_speeds``, all of one speed in random directions) at zero
    total momentum, scaled to exactly ``kT = m sum v^2 / (d (n - 1))``; run for a few collisions per body
    to forget the lattice."""
    rng = np.random.default_rng(seed)
    volume = n * (math.pi / 6 if dim == 3 else math.pi / 4) / phi
    side = volume ** (1 / dim)
    per_side = math.ceil(n ** (1 / dim))
    spacing = side / per_side
    if spacing <= 1.0:
        raise ValueError(f"phi = {phi} is too dense for a lattice start of {n} bodies in {dim}D")
    sites = np.stack(np.meshgrid(*[np.arange(per_side)] * dim, indexing="ij"), -1).reshape(-1, dim)
    positions = (sites[np.sort(rng.choice(len(sites), n, replace=False))] + 0.5) * spacing
    v = rng.normal(size=(n, dim))
    if equal_speeds:
        v /= np.linalg.norm(v, axis=1)[:, None]
    v -= v.mean(axis=0)
    v *= math.sqrt(kT * dim * (n - 1) / np.sum(v * v))
    w = EventWorld(dim=dim, **world_args)
    w.add_periodic_box([0.0] * dim, [side] * dim)
    w.add_bodies(positions, v, masses=1.0, radii=0.5, restitution=e)
    return w


def temperature(world: EventWorld) -> float:
    """kT = m sum v^2 / (d (n - 1)) (reduced units; the n - 1 for a gas at zero total momentum)."""
    v = world.velocities
    m = world.masses
    return float(np.sum(m[:, None] * v * v) / (world.dim * (len(v) - 1)))
