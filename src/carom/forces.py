"""Forces other than uniform gravity: N-body gravity, atmospheric drag, thrust.

A force adds accelerations (m/s^2) for every active body into an ``(n, dim)`` array; the world evaluates
all forces before anything moves (and again at the end of a step for the leapfrog kick). Fixed bodies
feel no force. Uniform gravity is part of the world (`World(gravity=...)`), not a force object: the
drift integrates it exactly.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .config import G
from .gravity_tree import tree_accel, tree_potential
from .jit import inlined, kernel
from .model import as_number, as_vector


@inlined
def _nbody_accel(position, mass, active, movable, G, eps2, out):
    """Direct-sum Newtonian gravity with Plummer softening; O(n^2). Sources: active bodies of finite mass."""
    n, dim = position.shape
    for i in range(n):
        if not active[i] or not movable[i]:
            continue
        for j in range(n):
            if j == i or not active[j] or not math.isfinite(mass[j]):
                continue
            r2 = eps2
            for d in range(dim):
                r2 += (position[j, d] - position[i, d]) ** 2
            s = G * mass[j] / (r2 * math.sqrt(r2))
            for d in range(dim):
                out[i, d] += s * (position[j, d] - position[i, d])


@kernel
def _nbody_potential(position, mass, active, G, eps2):
    n, dim = position.shape
    pe = 0.0
    for i in range(n):
        if not active[i] or not math.isfinite(mass[i]):
            continue
        for j in range(i + 1, n):
            if not active[j] or not math.isfinite(mass[j]):
                continue
            r2 = eps2
            for d in range(dim):
                r2 += (position[j, d] - position[i, d]) ** 2
            pe -= G * mass[i] * mass[j] / math.sqrt(r2)
    return pe


class Force:
    """Base of all forces: ``accelerate(world, t, out)`` adds m/s^2 into ``out`` (n, dim)."""

    def bind(self, world) -> None:
        """Check the force against the world it is added to (body ids, dimensions)."""

    def accelerate(self, world, t: float, out: np.ndarray) -> None:
        raise NotImplementedError

    def potential_energy(self, world) -> float:
        """Potential energy (J) for conservative forces; 0 for the others."""
        return 0.0


def _body_id(field: str, body, world) -> int:
    if not isinstance(body, int | np.integer) or not 0 <= body < world.n_bodies:
        raise ValueError(f"{field} must be a body id in [0, {world.n_bodies}), got {body!r}")
    return int(body)


class NBodyGravity(Force):
    """Newtonian gravity between all pairs, ``F = G Ma Mb / (r^2 + eps^2)`` along the line of centres,
    potential ``-G Ma Mb / sqrt(r^2 + eps^2)``. Fixed bodies with a finite mass attract but do not move.

    ``tree=True``: the Barnes–Hut tree (`carom.gravity_tree`), O(n log n), with monopole and quadrupole
    cells opened unless ``size < opening_angle * distance``; ``opening_angle=0`` opens every cell (the
    direct sum, in another order). ``tree=False``: the direct sum, O(n^2)."""

    def __init__(self, G: float = G, softening: float = 0.0, *, tree: bool = False, opening_angle: float = 0.5):
        self.G = as_number("NBodyGravity G", G)
        self.softening = as_number("NBodyGravity softening", softening)
        if self.G < 0:
            raise ValueError(f"NBodyGravity G must be >= 0, got {G!r}")
        if self.softening < 0:
            raise ValueError(f"NBodyGravity softening must be >= 0, got {softening!r}")
        if not isinstance(tree, bool | np.bool_):
            raise ValueError(f"NBodyGravity tree must be True or False, got {tree!r}")
        self.tree = bool(tree)
        self.opening_angle = as_number("NBodyGravity opening_angle", opening_angle)
        if self.opening_angle < 0:
            raise ValueError(f"NBodyGravity opening_angle must be >= 0, got {opening_angle!r}")

    def accelerate(self, world, t, out):
        args = (world.positions, world.masses, world.active, world._movable(), self.G, self.softening**2)
        if self.tree:
            tree_accel(*args, self.opening_angle, out)
        else:
            _nbody_accel(*args, out)

    def potential_energy(self, world):
        args = (world.positions, world.masses, world.active, self.G, self.softening**2)
        if self.tree:
            return tree_potential(*args, self.opening_angle)
        return float(_nbody_potential(*args))

    def __repr__(self):
        return (
            f"NBodyGravity(G={self.G!r}, softening={self.softening!r}, tree={self.tree!r}, "
            f"opening_angle={self.opening_angle!r})"
        )


class Atmosphere(Force):
    """Drag in an exponential atmosphere around ``body`` (an id): ``F = -1/2 rho(h) Cd A |v_rel| v_rel``,
    ``rho(h) = surface_density exp(-h / scale_height)`` at altitude ``h`` above the body's surface (its
    radius; a polygon's circumradius), ``v_rel`` relative to the body's velocity, ``Cd`` per body.
    ``scale_height = math.inf`` gives uniform density. Units: kg/m^3, m.

    ``A`` (m^2) is the disk of the body's projected width ``w``, ``A = pi w^2 / 4``, in 2D too: a sphere's
    or disk's ``pi r^2``; a polygon's ``w`` is its extent across ``v_rel`` at its present angle (the spread
    of its vertices along the unit vector perpendicular to ``v_rel``), so a unit square has ``w = 1`` moving
    along a side and ``sqrt 2`` along a diagonal. The force acts at the centre of mass: drag turns no body."""

    def __init__(self, body: int, surface_density: float = 1.225, scale_height: float = 8500.0):
        self.body = body
        self.surface_density = as_number("Atmosphere surface_density", surface_density)
        self.scale_height = as_number("Atmosphere scale_height", scale_height, allow_inf=True)
        if self.surface_density < 0:
            raise ValueError(f"Atmosphere surface_density must be >= 0, got {surface_density!r}")
        if not self.scale_height > 0:
            raise ValueError(f"Atmosphere scale_height must be > 0, got {scale_height!r}")

    def bind(self, world):
        self.body = _body_id("Atmosphere body", self.body, world)

    def accelerate(self, world, t, out):
        b, n = world.bodies, world.n_bodies
        outlines = world.polygon_table()
        _drag_accel(
            world.positions, world.velocities, b.inv_mass[:n], world.radii, b.drag_coefficient[:n], world.active,
            self.body, self.surface_density, self.scale_height, np.ascontiguousarray(b.orientation[:n, 0]),
            outlines.start, outlines.vertices, out,
        )  # fmt: skip

    def __repr__(self):
        return f"Atmosphere(body={self.body}, surface_density={self.surface_density}, scale_height={self.scale_height})"


@inlined
def _projected_width(vertices, first, end, angle, ux, uy):
    """The extent (m) along the unit vector (ux, uy) (world frame) of the polygon of rows ``first:end`` of
    ``vertices`` (body frame) turned by ``angle`` (rad): max minus min of its vertices' projections. (A vertex
    v turned by the angle projects on u as v projects on u turned back by it.)"""
    c = math.cos(angle)
    s = math.sin(angle)
    bx = c * ux + s * uy
    by = c * uy - s * ux
    low = math.inf
    high = -math.inf
    for k in range(first, end):
        p = vertices[k, 0] * bx + vertices[k, 1] * by
        low = min(low, p)
        high = max(high, p)
    return high - low


@inlined
def _drag_accel(position, velocity, inv_mass, radius, cd, active, planet, rho0, scale, angle, start, vertices, out):
    """Add the drag accelerations (m/s^2) of `Atmosphere` into ``out``: ``angle`` (n,) rad (2D; unused in
    3D), ``start`` and ``vertices`` the polygons' `PolygonTable` rows (none for a sphere or disk)."""
    n, dim = position.shape
    for i in range(n):
        if i == planet or not active[i] or inv_mass[i] == 0.0:
            continue
        r2 = 0.0
        v2 = 0.0
        for d in range(dim):
            r2 += (position[i, d] - position[planet, d]) ** 2
            v2 += (velocity[i, d] - velocity[planet, d]) ** 2
        altitude = max(math.sqrt(r2) - radius[planet], 0.0)
        rho = rho0 * math.exp(-altitude / scale)
        size = radius[i]  # m: half the projected width
        if start[i + 1] > start[i] and v2 > 0.0:  # a polygon: its extent across v_rel
            speed = math.sqrt(v2)
            ux = -(velocity[i, 1] - velocity[planet, 1]) / speed
            uy = (velocity[i, 0] - velocity[planet, 0]) / speed
            size = 0.5 * _projected_width(vertices, start[i], start[i + 1], angle[i], ux, uy)
        k = 0.5 * rho * cd[i] * math.pi * size**2 * math.sqrt(v2) * inv_mass[i]
        for d in range(dim):
            out[i, d] -= k * (velocity[i, d] - velocity[planet, d])


class Thrust(Force):
    """A force (N) on one body: a constant vector, or ``force(world, t) -> vector`` evaluated with the
    other forces (before anything moves, and at the end of each step)."""

    def __init__(self, body: int, force):
        self.body = body
        self.force = force

    def bind(self, world):
        self.body = _body_id("Thrust body", self.body, world)
        if not callable(self.force):
            self.force = as_vector("Thrust force", self.force, world.dim)

    def accelerate(self, world, t, out):
        f = self.force(world, t) if callable(self.force) else self.force
        if callable(self.force):
            f = as_vector("Thrust force (returned by the callable)", f, world.dim)
        if world.active[self.body]:
            out[self.body] += f * world.bodies.inv_mass[self.body]

    def __repr__(self):
        return f"Thrust(body={self.body}, force={self.force!r})"




# ---------------------------------------------------------------- the compiled force table
class ForceTable(NamedTuple):
    """The built-in forces of a world as arrays, for loops that run in compiled code (`table_accel`):
    uniform gravity, every `NBodyGravity` (direct sum), `Atmosphere` and constant `Thrust`."""

    gravity: np.ndarray  # (d,) m/s^2
    nbody: np.ndarray  # (k, 2): G (m^3 kg^-1 s^-2), softening^2 (m^2)
    drag: np.ndarray  # (k, 3): the atmosphere's body id, surface density (kg/m^3), scale height (m)
    thrust_body: np.ndarray  # (k,) body ids
    thrust: np.ndarray  # (k, d) N


class ForceBodies(NamedTuple):
    """The body arrays (rows [:n]) the built-in forces read, besides positions and velocities."""

    mass: np.ndarray  # (n,) kg
    inv_mass: np.ndarray  # (n,) 1/kg
    radius: np.ndarray  # (n,) m
    drag_coefficient: np.ndarray  # (n,)
    active: np.ndarray  # (n,) bool
    movable: np.ndarray  # (n,) bool: active with finite mass
    angle: np.ndarray  # (n,) rad (2D polygons; `Atmosphere`)
    outline_start: np.ndarray  # (n + 1,) `PolygonTable` rows
    outline_vertices: np.ndarray  # (v, 2) m


def force_table(world) -> ForceTable | None:
    """The world's forces as a `ForceTable`, or None if one of them only runs in Python (a `Thrust` given as a
    callable, a force of another class, or a subclass of a built-in one)."""
    dim = world.dim
    nbody, drag, thrust_body, thrust = [], [], [], []
    for force in world.forces:
        if type(force) is NBodyGravity:
            nbody.append((force.G, force.softening**2))
        elif type(force) is Atmosphere:
            drag.append((force.body, force.surface_density, force.scale_height))
        elif type(force) is Thrust and not callable(force.force):
            thrust_body.append(force.body)
            thrust.append(force.force)
        else:
            return None
    return ForceTable(
        np.array(world.gravity, dtype=float),
        np.array(nbody, dtype=float).reshape(-1, 2),
        np.array(drag, dtype=float).reshape(-1, 3),
        np.array(thrust_body, dtype=np.int64),
        np.array(thrust, dtype=float).reshape(-1, dim),
    )


def force_bodies(world) -> ForceBodies:
    """The world's `ForceBodies` (views of its arrays, but ``movable`` and ``angle``: a contiguous copy, so that
    2D and 3D worlds share one compiled signature)."""
    b, n = world.bodies, world.n_bodies
    outlines = world.polygon_table()
    return ForceBodies(b.mass[:n], b.inv_mass[:n], b.radius[:n], b.drag_coefficient[:n], b.active[:n],
                       world._movable(), np.ascontiguousarray(b.orientation[:n, 0]), outlines.start,
                       outlines.vertices)  # fmt: skip


@inlined
def table_accel(x, v, table, fb, out):
    """The accelerations (m/s^2) of every body under the forces of ``table`` (`ForceTable`) at positions x (m)
    and velocities v (m/s), into ``out``: what `World` gets from calling each force's `accelerate`."""
    n, dim = x.shape
    for i in range(n):
        for d in range(dim):
            out[i, d] = table.gravity[d]
    for k in range(table.nbody.shape[0]):
        _nbody_accel(x, fb.mass, fb.active, fb.movable, table.nbody[k, 0], table.nbody[k, 1], out)
    for k in range(table.drag.shape[0]):
        _drag_accel(x, v, fb.inv_mass, fb.radius, fb.drag_coefficient, fb.active, int(table.drag[k, 0]),
                    table.drag[k, 1], table.drag[k, 2], fb.angle, fb.outline_start, fb.outline_vertices,
                    out)  # fmt: skip
    for k in range(len(table.thrust_body)):
        b = table.thrust_body[k]
        if fb.active[b]:
            for d in range(dim):
                out[b, d] += table.thrust[k, d] * fb.inv_mass[b]
    for i in range(n):
        if not fb.movable[i]:
            for d in range(dim):
                out[i, d] = 0.0
