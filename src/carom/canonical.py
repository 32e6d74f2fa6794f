"""Canonical generated scenes, defined once: the tests, the benchmarks and the documentation build them here
(scene files are `carom.scenefile`; the shipped examples, `carom.examples`).

Reduced units: sphere (disk) diameter 1, mass 1, and velocities drawn with k_B T = 1.
"""

from __future__ import annotations

import math

import numpy as np

from .events import EventWorld
from .world import World


def gas(n: int, phi: float, dim: int = 3, seed: int = 0, e: float = 1.0, radius: float = 0.5, world=World, **kwargs):
    """n equal spheres (disks) on a cubic lattice inside a box at packing fraction phi, with Maxwell
    velocities (k_B T = m = 1) of zero total momentum. ``world`` is the engine class to build."""
    rng = np.random.default_rng(seed)
    volume = n * (4 / 3 * math.pi * radius**3 if dim == 3 else math.pi * radius**2) / phi
    side = volume ** (1 / dim)
    per_side = math.ceil(n ** (1 / dim))
    spacing = side / per_side
    if spacing <= 2 * radius:
        raise ValueError(f"packing fraction {phi} is too high for a lattice start in dim={dim}")
    grid = np.stack(np.meshgrid(*[np.arange(per_side)] * dim, indexing="ij"), -1).reshape(-1, dim)[:n]
    velocities = rng.normal(size=(n, dim))
    velocities -= velocities.mean(axis=0)
    w = world(dim=dim, **kwargs)
    w.add_box(lower=[0.0] * dim, upper=[side] * dim, restitution=e)
    w.add_bodies((grid + 0.5) * spacing, velocities, masses=1.0, radii=radius, restitution=e)
    return w


def pile(n: int, dim: int = 2, seed: int = 0, e: float = 0.5, radius: float = 0.5, g: float = 9.81,
         friction: float = 0.0, rolling_resistance: float = 0.0, spinning_friction: float = 0.0,
         **kwargs):  # fmt: skip
    """n disks (spheres) dropped from a loose lattice into a box under gravity, to settle into a heap; bodies
    and walls with Coulomb coefficient ``friction`` (static = kinetic), bodies with ``rolling_resistance``
    and ``spinning_friction``."""
    rng = np.random.default_rng(seed)
    columns = max(1, round(math.sqrt(n) if dim == 2 else n ** (1 / 3)))
    spacing = 2.2 * radius
    width = columns * spacing
    per_layer = columns ** (dim - 1)
    layers = math.ceil(n / per_layer)
    height = layers * 2 * spacing + 2 * radius
    grid = np.stack(np.meshgrid(*[np.arange(columns)] * (dim - 1), np.arange(layers), indexing="ij"), -1)
    grid = grid.reshape(-1, dim)[:n].astype(float)
    positions = (grid + 0.5) * spacing
    positions[:, -1] = (grid[:, -1] * 2 + 0.5) * spacing
    positions[:, :-1] += rng.uniform(-0.04, 0.04, (n, dim - 1)) * radius
    gravity = np.zeros(dim)
    gravity[-1] = -g
    w = World(dim=dim, gravity=gravity, **kwargs)
    w.add_box(lower=[0.0] * dim, upper=[width] * (dim - 1) + [height], restitution=e, static_friction=friction)
    w.add_bodies(positions, rng.normal(scale=0.1, size=(n, dim)), masses=1.0, radii=radius, restitution=e,
                 static_friction=friction, rolling_resistance=rolling_resistance,
                 spinning_friction=spinning_friction)  # fmt: skip
    return w


def poured_heap(n: int, dim: int = 2, friction: float = 0.5, rolling_resistance: float = 0.1,
                spinning_friction: float = 0.0, radius: float = 0.05, g: float = 9.81, seed: int = 0,
                dt: float = 1 / 60, every: float = 0.1, settle: float = 20.0) -> World:  # fmt: skip
    """n disks (spheres) poured one at a time onto a rough floor, and left to settle: a heap.

    The floor is a row (square grid) of fixed bodies of radius R, touching, on a wall; each body, of radius
    0.8 to 1.2 R (1 kg, restitution 0.3, the friction coefficients given, also the floor's), is dropped at
    rest from 1.5 R above the top of the bodies at rest near the axis, every ``every`` s (when there is
    room), with a jitter of 0.2 R. After the last, the world runs until every speed is below 1 mm/s or for
    ``settle`` s more. Returns the world (the fixed floor bodies first)."""
    rng = np.random.default_rng(seed)
    gravity = np.zeros(dim)
    gravity[-1] = -g
    w = World(dim=dim, gravity=gravity)
    up = np.eye(dim)[-1]
    w.add_wall(point=np.zeros(dim), normal=up, restitution=0.3, static_friction=friction)
    reach = 2 * round(math.sqrt(n) if dim == 2 else n ** (1 / 3)) + 4  # floor bodies beyond the axis, per side
    grid = np.stack(np.meshgrid(*[np.arange(-reach, reach + 1)] * (dim - 1), indexing="ij"), -1).reshape(-1, dim - 1)
    floor = np.column_stack([grid * 2.0 * radius, np.full(len(grid), radius)])
    w.add_bodies(floor, masses=0.0, radii=radius, restitution=0.3, fixed=True, static_friction=friction)
    kinds = dict(restitution=0.3, static_friction=friction, rolling_resistance=rolling_resistance,
                 spinning_friction=spinning_friction)  # fmt: skip
    poured = 0
    while poured < n:
        x, v = w.positions, w.velocities
        near = (np.linalg.norm(x[:, :-1], axis=1) < 3 * radius) & (np.linalg.norm(v, axis=1) < 0.2)
        top = float(x[near, -1].max()) + 1.2 * radius
        drop = np.append(rng.uniform(-0.2, 0.2, dim - 1) * radius, top + 1.5 * radius)
        if np.linalg.norm(x - drop, axis=1).min() > 2.45 * radius:
            w.add_body(position=drop, mass=1.0, radius=radius * rng.uniform(0.8, 1.2), **kinds)
            poured += 1
        w.run(until=w.time + every, dt=dt)
    end = w.time + settle
    while w.time < end and np.linalg.norm(w.velocities, axis=1).max() >= 1e-3:
        w.run(until=min(end, w.time + 0.5), dt=dt)
    return w


def heap_angle(positions: np.ndarray, radii: np.ndarray, base: float) -> float:
    """The angle of repose (degrees) of a heap of disks (spheres) standing on a floor at height ``base`` (m):
    the slope of the tent (cone) ``z = h - s |x - x0|`` fitted by least squares to the heap's surface, the
    top of each column 2 R_max wide, over the columns that rise above the first layer."""
    from scipy.optimize import least_squares

    dim = positions.shape[1]
    width = 2.0 * float(radii.max())
    tops = positions[:, -1] + radii
    _, column = np.unique(np.floor(positions[:, :-1] / width).astype(np.int64), axis=0, return_inverse=True)
    order = np.lexsort((tops, column.ravel()))  # by column, then by top: each column's highest body is its last
    last = np.append(np.diff(column.ravel()[order]) != 0, True)
    where, height = positions[order[last], :-1], tops[order[last]]
    floor = base + 1.5 * width / 2
    above = height > floor

    def misfit(p):
        return np.maximum(p[0] - p[1] * np.linalg.norm(where[above] - p[2:], axis=1), floor) - height[above]

    fit = least_squares(misfit, [float(height.max()), 0.5, *np.zeros(dim - 1)])
    return math.degrees(math.atan(fit.x[1]))


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
