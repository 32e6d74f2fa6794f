"""Scene files: TOML text -> validated, typed tables -> a ready `World`.

A scene states everything a run needs: the world (dimension, uniform gravity, impact model, engine),
bodies (explicit, or from generators), walls and boxes, forces, run settings and output settings. Units
are SI throughout: m, kg, s, m/s, N, J. The format is documented in ``docs/scenes.md``.

Parsing is strict: unknown keys, wrong types and out-of-range values are errors that name the file, the
table and field, the bad value and what is allowed ("did you mean" when a name is close). Building the
world is part of validation, so a scene is either fully accepted or rejected before anything is written.
Optional body and force fields that are absent are not passed on, so the defaults are the API's own.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import tomllib
import typing
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import msgspec.toml
import numpy as np
from msgspec import UNSET, Meta, Struct, UnsetType
from msgspec import inspect as mi

from .config import FRICTION_RULES, IMPACT_MODES, INTEGRATORS, RESTITUTION_RULES, Config
from .forces import Atmosphere, NBodyGravity, Thrust
from .materials import key_pairs
from .model import as_number, as_vector
from .shapes import ball_inertia_factor, polygon_properties
from .world import World, check_dt

#: Without ``run.output_interval``, a run of the scene file's own ``until`` writes this many frames.
DEFAULT_FRAMES = 200
#: The most frames a run may write: a row per frame in the file, and their times in memory (80 MB).
MAX_FRAMES = 1e7

Vector = list[float]
Positive = Annotated[float, Meta(gt=0)]
NonNegative = Annotated[float, Meta(ge=0)]
Count = Annotated[int, Meta(ge=1)]
#: A value, or ``[low, high]``: drawn uniformly per body. (Constraints are checked in `_draw`: msgspec
#: 0.22 mis-handles ``Annotated`` inside a union with a tuple.)
Span = float | tuple[float, float]
#: A body named by its ``name`` or by its id (its index in the order bodies are added).
BodyRef = int | str


class SceneError(ValueError):
    """A scene that cannot be run; the message names the file, the field and the bad value."""


class _Table(Struct, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    def given(self, *names: str) -> dict:
        """The named fields that the scene sets (absent ones keep the API's defaults)."""
        return {n: v for n in names if (v := getattr(self, n)) is not UNSET}


# ----------------------------------------------------------------------------------------------- tables
class WorldTable(_Table):
    dim: Literal[2, 3]
    gravity: Vector | UnsetType = UNSET
    restitution_rule: Literal[RESTITUTION_RULES] | UnsetType = UNSET
    friction_rule: Literal[FRICTION_RULES] | UnsetType = UNSET
    impact_mode: Literal[IMPACT_MODES] | UnsetType = UNSET
    integrator: Literal[INTEGRATORS] | UnsetType = UNSET
    #: IAS15's tolerance (`World(epsilon=...)`; integrator = "ias15" only).
    epsilon: Positive | UnsetType = UNSET
    engine: Literal["step", "event"] = "step"
    #: s: the TC model of the event engine (`EventWorld(tc=...)`; engine = "event" only).
    tc: NonNegative | UnsetType = UNSET
    #: Seed of the random generator that every random generator table draws from, in file order.
    seed: Annotated[int, Meta(ge=0)] = 0


class BodyTable(_Table):
    position: Vector
    velocity: Vector | UnsetType = UNSET
    mass: float | UnsetType = UNSET
    radius: float | UnsetType = UNSET
    restitution: float | UnsetType = UNSET
    fixed: bool | UnsetType = UNSET
    drag_coefficient: float | UnsetType = UNSET
    static_friction: float | UnsetType = UNSET
    kinetic_friction: float | UnsetType = UNSET
    rolling_resistance: float | UnsetType = UNSET
    spinning_friction: float | UnsetType = UNSET
    #: rad/s: a number in 2D (counter-clockwise positive), a 3-vector in 3D.
    angular_velocity: float | Vector | UnsetType = UNSET
    inertia: float | UnsetType = UNSET
    #: A unit quaternion (w, x, y, z) in 3D, an angle (rad) in 2D; default: the identity.
    orientation: float | Vector | UnsetType = UNSET
    name: str | UnsetType = UNSET
    #: The body's id, where a scene interleaves disks and polygons (`Scene.listed`).
    id: int | UnsetType = UNSET


_BODY_FIELDS = tuple(f for f in BodyTable.__struct_fields__ if f not in ("orientation", "id"))  # add_body's arguments


class PolygonTable(_Table):
    """A rigid convex polygon (dim = 2, engine = "step"): ``vertices`` (m, body frame, either winding), or
    ``shape = "rectangle"`` with ``width`` and ``height`` (m); the other keys are `World.add_polygon`'s."""

    position: Vector
    vertices: list[Vector] | UnsetType = UNSET
    shape: Literal["rectangle"] | UnsetType = UNSET
    width: float | UnsetType = UNSET
    height: float | UnsetType = UNSET
    angle: float | UnsetType = UNSET
    velocity: Vector | UnsetType = UNSET
    angular_velocity: float | UnsetType = UNSET
    mass: float | UnsetType = UNSET
    density: float | UnsetType = UNSET
    inertia: float | UnsetType = UNSET
    restitution: float | UnsetType = UNSET
    static_friction: float | UnsetType = UNSET
    kinetic_friction: float | UnsetType = UNSET
    drag_coefficient: float | UnsetType = UNSET
    fixed: bool | UnsetType = UNSET
    name: str | UnsetType = UNSET
    #: The body's id, where a scene interleaves disks and polygons (`Scene.listed`).
    id: int | UnsetType = UNSET

    def __post_init__(self):
        if (self.vertices is UNSET) == (self.shape is UNSET):
            raise ValueError('give vertices or shape = "rectangle" (with width and height), not both')
        sides = self.given("width", "height")
        if self.shape is UNSET and sides:
            raise ValueError(f'{" and ".join(sides)} need shape = "rectangle" (a polygon given by vertices has none)')
        for side in ("width", "height"):
            if self.shape is not UNSET and side not in sides:
                raise ValueError(f'shape = "rectangle" needs {side} (m)')

    def add_to(self, world) -> int:
        """Add this polygon to ``world``; return its id."""
        keywords = self.given(*_POLYGON_FIELDS)
        if self.shape is UNSET:
            return world.add_polygon(self.vertices, self.position, **keywords)
        return world.add_rectangle(self.width, self.height, self.position, **keywords)


#: `World.add_polygon`'s keyword arguments.
_POLYGON_FIELDS = tuple(f for f in PolygonTable.__struct_fields__
                        if f not in ("position", "vertices", "shape", "width", "height", "id"))  # fmt: skip
#: Keys that need the time-stepped `World` (`EventWorld` has smooth bodies that do not turn).
_SPIN_FIELDS = ("static_friction", "kinetic_friction", "rolling_resistance", "spinning_friction", "angular_velocity",
                "inertia")
_WALL_FRICTION = ("static_friction", "kinetic_friction")


class _Group(_Table):
    """Fields that every generator passes to each body it makes."""

    restitution: float | UnsetType = UNSET
    drag_coefficient: float | UnsetType = UNSET
    static_friction: float | UnsetType = UNSET
    kinetic_friction: float | UnsetType = UNSET
    rolling_resistance: float | UnsetType = UNSET
    spinning_friction: float | UnsetType = UNSET
    angular_velocity: float | Vector | UnsetType = UNSET
    inertia: float | UnsetType = UNSET

    def shared(self, dim: int, k: int) -> dict:
        """`add_bodies` arguments for the fields given, the same for each of the ``k`` bodies."""
        out = self.given("restitution", "drag_coefficient", "static_friction", "kinetic_friction", "rolling_resistance",
                         "spinning_friction")
        if self.inertia is not UNSET:
            out["inertias"] = self.inertia
        if self.angular_velocity is not UNSET:
            spin = _spin(self.angular_velocity, dim)
            out["angular_velocities"] = np.broadcast_to(spin, (k, 3) if dim == 3 else (k,))
        return out


class _Moving(_Group):
    """Velocities of generated bodies: ``velocity`` (m/s) for all, plus at most one random part:
    ``temperature`` kT (J; each component normal with variance kT/m, net momentum removed) or
    ``speed`` (m/s, each body in a random direction)."""

    velocity: Vector | UnsetType = UNSET
    temperature: NonNegative | UnsetType = UNSET
    speed: NonNegative | UnsetType = UNSET

    def __post_init__(self):
        if self.temperature is not UNSET and self.speed is not UNSET:
            raise ValueError("give temperature or speed, not both")

    def velocities(self, masses: np.ndarray, dim: int, rng: np.random.Generator) -> np.ndarray:
        k = len(masses)
        v = np.zeros((k, dim))
        if self.temperature is not UNSET:
            v = rng.normal(size=(k, dim)) * np.sqrt(self.temperature / masses)[:, None]
            v -= np.average(v, axis=0, weights=masses)
        elif self.speed is not UNSET:
            d = rng.normal(size=(k, dim))
            v = self.speed * d / np.linalg.norm(d, axis=1, keepdims=True)
        if self.velocity is not UNSET:
            v += as_vector("velocity", self.velocity, dim)
        return v


class Lattice(_Moving, tag_field="kind", tag="lattice", kw_only=True):
    """A regular grid: ``counts[a]`` bodies along axis a, ``spacing`` m apart, starting at ``origin``."""

    origin: Vector
    counts: list[Count]
    spacing: Positive
    radius: Positive
    mass: Positive

    def bodies(self, world, rng, scene) -> dict:
        dim = world.dim
        origin = as_vector("origin", self.origin, dim)
        if len(self.counts) != dim:
            raise ValueError(f"counts must have {dim} entries (dim={dim}), got {self.counts!r}")
        grid = np.stack(np.meshgrid(*(np.arange(c) for c in self.counts), indexing="ij"), axis=-1)
        positions = origin + self.spacing * grid.reshape(-1, dim)
        masses = np.full(len(positions), self.mass)
        return dict(
            positions=positions,
            masses=masses,
            radii=self.radius,
            velocities=self.velocities(masses, dim, rng),
        )


class Gas(_Moving, tag_field="kind", tag="gas", kw_only=True):
    """``count`` bodies at random, non-overlapping places inside the box ``lower``..``upper`` (m);
    ``radius`` and ``mass`` are values or ``[low, high]`` ranges drawn uniformly."""

    count: Count
    lower: Vector
    upper: Vector
    radius: Span
    mass: Span
    #: Random placements tried per body before giving up (the region is then too crowded).
    attempts: Count = 1000

    def bodies(self, world, rng, scene) -> dict:
        dim = world.dim
        lo, hi = as_vector("lower", self.lower, dim), as_vector("upper", self.upper, dim)
        radii, masses = (
            _draw("radius", self.radius, self.count, rng),
            _draw("mass", self.mass, self.count, rng),
        )
        if np.any(2 * radii.max() > hi - lo):
            raise ValueError(f"the region lower={self.lower} upper={self.upper} is narrower than a body")
        # Random sequential placement, largest first; bodies already in the world are obstacles.
        live = world.active
        xs = np.concatenate([world.positions[live], np.empty((self.count, dim))])
        rs = np.concatenate([world.radii[live], np.empty(self.count)])
        m = int(live.sum())
        positions = np.empty((self.count, dim))
        for n, a in enumerate(np.argsort(-radii, kind="stable")):
            r = radii[a]
            for _ in range(self.attempts):
                x = rng.uniform(lo + r, hi - r)
                if np.all(np.sum((xs[:m] - x) ** 2, axis=1) >= (rs[:m] + r) ** 2):
                    break
            else:
                raise ValueError(
                    f"placed only {n} of {self.count} bodies without overlap in lower={self.lower} "
                    f"upper={self.upper}: use a larger region, fewer or smaller bodies, or a lattice"
                )
            positions[a] = xs[m] = x
            rs[m] = r
            m += 1
        return dict(
            positions=positions, masses=masses, radii=radii, velocities=self.velocities(masses, dim, rng)
        )


class Rack(_Group, tag_field="kind", tag="rack", kw_only=True):
    """A triangle of ``rows`` rows of touching balls (15 for 5 rows), its front ball at ``apex``, pointing
    along ``direction`` (the rack opens away from the apex), ``gap`` m between neighbours. In 3D the
    rows run horizontally (perpendicular to z and to ``direction``)."""

    apex: Vector
    rows: Count = 5
    radius: Positive
    mass: Positive
    direction: Vector | UnsetType = UNSET
    gap: NonNegative = 0.0

    def bodies(self, world, rng, scene) -> dict:
        dim = world.dim
        apex = as_vector("apex", self.apex, dim)
        d = as_vector("direction", self.direction, dim) if self.direction is not UNSET else np.eye(dim)[0]
        across = np.array([-d[1], d[0]]) if dim == 2 else np.cross([0.0, 0.0, 1.0], d)
        if not np.linalg.norm(d) > 0 or not np.linalg.norm(across) > 0:
            raise ValueError(f"direction must be non-zero (and not vertical in 3D), got {self.direction!r}")
        d, across = d / np.linalg.norm(d), across / np.linalg.norm(across)
        pitch = 2 * self.radius + self.gap
        row, slot = np.array([(r, s) for r in range(self.rows) for s in range(r + 1)]).T
        positions = apex + pitch * (row[:, None] * math.sqrt(3) / 2 * d + (slot - row / 2)[:, None] * across)
        return dict(positions=positions, masses=np.full(len(row), self.mass), radii=self.radius)


class Ring(_Group, tag_field="kind", tag="ring", kw_only=True):
    """``count`` bodies evenly spaced on a circular orbit of radius ``distance`` (m) around a body, each
    moving at the circular speed ``sqrt(G (M + m) / distance)`` relative to it (G from the scene's
    gravity force). ``phase`` (degrees) places the first; in 3D the orbit is normal to ``axis``."""

    around: BodyRef
    count: Count = 1
    distance: Positive
    radius: Positive
    mass: Positive
    phase: float = 0.0
    axis: Vector | UnsetType = UNSET

    def bodies(self, world, rng, scene) -> dict:
        dim = world.dim
        gravity = [f for f in scene.forces if isinstance(f, GravityForce)]
        if not gravity:
            raise ValueError('a ring needs a [[forces]] table with kind = "gravity"')
        G = gravity[0].build(world, scene).G
        c = _body_id(self.around, scene, world, "around")
        if dim == 2:
            u, w = np.eye(2)
        else:
            axis = as_vector("axis", self.axis, 3) if self.axis is not UNSET else np.array([0.0, 0.0, 1.0])
            if not np.linalg.norm(axis) > 0:
                raise ValueError(f"axis must be non-zero, got {self.axis!r}")
            axis /= np.linalg.norm(axis)
            u = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
            u /= np.linalg.norm(u)
            w = np.cross(axis, u)
        angle = np.radians(self.phase) + 2 * np.pi * np.arange(self.count) / self.count
        radial = np.cos(angle)[:, None] * u + np.sin(angle)[:, None] * w
        tangent = -np.sin(angle)[:, None] * u + np.cos(angle)[:, None] * w
        mass_c = world.masses[c]
        if not np.isfinite(mass_c):
            raise ValueError(f"around names body {c}, which has no finite mass to orbit")
        v = math.sqrt(G * (mass_c + self.mass) / self.distance)
        return dict(
            positions=world.positions[c] + self.distance * radial,
            velocities=world.velocities[c] + v * tangent,
            masses=np.full(self.count, self.mass),
            radii=self.radius,
        )


class WallTable(_Table):
    point: Vector
    normal: Vector
    restitution: float | UnsetType = UNSET
    static_friction: float | UnsetType = UNSET
    kinetic_friction: float | UnsetType = UNSET


class BoxTable(_Table):
    lower: Vector
    upper: Vector
    restitution: float | UnsetType = UNSET
    static_friction: float | UnsetType = UNSET
    kinetic_friction: float | UnsetType = UNSET
    #: Periodic boundaries instead of walls (engine = "event" only).
    periodic: bool = False


class PairTable(_Table):
    """Coefficients for one pair, instead of what the world's rules make of the two sides': ``body`` with
    ``other`` (a body) or with ``wall`` (a wall's index, counting the walls of boxes after ``[[walls]]``)."""

    body: BodyRef
    other: BodyRef | UnsetType = UNSET
    wall: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    restitution: float | UnsetType = UNSET
    static_friction: float | UnsetType = UNSET
    kinetic_friction: float | UnsetType = UNSET

    def __post_init__(self):
        if (self.other is UNSET) == (self.wall is UNSET):
            raise ValueError("give other (a body) or wall (a wall's index), not both")
        if self.kinetic_friction is not UNSET and self.static_friction is UNSET:
            raise ValueError("kinetic_friction needs static_friction")

    def apply(self, world, scene) -> None:
        i = _body_id(self.body, scene, world, "body")
        if self.wall is UNSET:
            j = _body_id(self.other, scene, world, "other")
        else:
            if self.wall >= world.walls.n:
                raise ValueError(f"wall = {self.wall}: no wall with that index (there are {world.walls.n})")
            j = -1 - self.wall
        if self.restitution is not UNSET:
            world.set_pair_restitution(i, j, self.restitution)
        if self.static_friction is not UNSET:
            world.set_pair_friction(i, j, self.static_friction, self.given("kinetic_friction").get("kinetic_friction"))


class GravityForce(_Table, tag_field="kind", tag="gravity", kw_only=True):
    """Newtonian gravity between every pair of bodies."""

    G: float | UnsetType = UNSET
    softening: float | UnsetType = UNSET
    tree: bool | UnsetType = UNSET
    opening_angle: float | UnsetType = UNSET

    def build(self, world, scene):
        return NBodyGravity(**self.given("G", "softening", "tree", "opening_angle"))


class AtmosphereForce(_Table, tag_field="kind", tag="atmosphere", kw_only=True):
    """Exponential atmosphere around a body, with quadratic drag."""

    body: BodyRef
    surface_density: float | UnsetType = UNSET
    scale_height: float | UnsetType = UNSET

    def build(self, world, scene):
        body = _body_id(self.body, scene, world, "body")
        return Atmosphere(body=body, **self.given("surface_density", "scale_height"))


class ThrustForce(_Table, tag_field="kind", tag="thrust", kw_only=True):
    """A constant force (N) on one body."""

    body: BodyRef
    force: Vector

    def build(self, world, scene):
        return Thrust(body=_body_id(self.body, scene, world, "body"), force=self.force)


class RunTable(_Table):
    until: Positive
    #: Simulated time between frames written (s); default: the scene file's ``until / DEFAULT_FRAMES``
    #: (set by `parse_scene`, so that ``--until`` keeps the frame grid, and resumed runs match).
    output_interval: Positive
    #: Time step (s); required for engine = "step" (but integrator = "ias15", which chooses its own steps: there it
    #: is only the first trial step), not allowed for engine = "event".
    dt: Positive | None = None
    #: The world's time at the start (s): frames are at ``start + k * output_interval``.
    start: float = 0.0

    def __post_init__(self):
        """Finite times, at most `MAX_FRAMES` frames, and a ``dt`` within `carom.world.MAX_STEPS` steps."""
        for name in ("start", "until", "output_interval", "dt"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name} = {value!r}: must be a finite number of seconds")
        frames = (self.until - self.start) / self.output_interval
        if frames > MAX_FRAMES:
            raise ValueError(
                f"(until - start) / output_interval = {frames:.3g} frames: at most MAX_FRAMES = {MAX_FRAMES:g} "
                f"(give a longer output_interval)"
            )
        if self.dt is not None:
            check_dt(self.dt, self.start, self.until)


class OutputTable(_Table):
    #: Trajectory file; default: the scene's file name with ``.h5``, in the current folder.
    file: str | None = None
    color_by: Literal["speed", "mass"] = "speed"
    trails: bool = False
    #: Seconds of history each trail shows; default: all of it.
    trail_length: Positive | None = None
    fps: Annotated[int, Meta(ge=1, le=120)] = 30
    #: Rendered region ``[lower, upper]`` (m); default: fits the moving bodies and the walls.
    view: tuple[Vector, Vector] | None = None
    #: 3D view direction: elevation and azimuth, degrees.
    camera: tuple[float, float] = (25.0, -60.0)


_HINTS = typing.get_type_hints(Config)
ConfigTable = msgspec.defstruct(
    "ConfigTable",
    [(f.name, _HINTS[f.name], f.default) for f in dataclasses.fields(Config)],
    bases=(_Table,),
)


class Scene(_Table):
    world: WorldTable
    run: RunTable
    bodies: list[BodyTable] = []
    polygons: list[PolygonTable] = []
    generate: list[Lattice | Gas | Rack | Ring] = []
    walls: list[WallTable] = []
    boxes: list[BoxTable] = []
    forces: list[GravityForce | AtmosphereForce | ThrustForce] = []
    pairs: list[PairTable] = []
    config: ConfigTable = msgspec.field(default_factory=ConfigTable)
    output: OutputTable = msgspec.field(default_factory=OutputTable)

    def __post_init__(self):
        step = self.world.engine == "step"
        adaptive = self.world.integrator == "ias15"
        if step and self.run.dt is None and not adaptive:
            raise ValueError('run.dt is required for world.engine = "step" (but with world.integrator = "ias15")')
        if self.world.epsilon is not UNSET and not adaptive:
            raise ValueError('world.epsilon needs world.integrator = "ias15"')
        if not step and self.run.dt is not None:
            raise ValueError('run.dt does not apply to world.engine = "event" (it has no time step)')
        if step and self.world.tc is not UNSET:
            raise ValueError('world.tc needs world.engine = "event"')
        if not step and self.world.integrator is not UNSET:
            raise ValueError('world.integrator does not apply to world.engine = "event"')
        if not step and self.forces:
            raise ValueError(
                '[[forces]] need world.engine = "step" (the event engine moves bodies ballistically)'
            )
        if step and any(b.periodic for b in self.boxes):
            raise ValueError('boxes.periodic needs world.engine = "event"')
        if self.polygons and self.world.dim != 2:
            raise ValueError(f"polygons[0]: polygons are 2D bodies: they need world.dim = 2, not {self.world.dim}")
        if self.polygons and not step:
            raise ValueError('polygons[0]: polygons need world.engine = "step" (the event engine has disks and '
                             "spheres only)")  # fmt: skip
        if not step:
            self._check_smooth()
        if not (self.bodies or self.polygons or self.generate):
            raise ValueError("the scene has no bodies: add [[bodies]], [[polygons]] or [[generate]] tables")
        names = [t.name for t in (*self.bodies, *self.polygons) if t.name is not UNSET]
        for name in {n for n in names if names.count(n) > 1}:
            raise ValueError(f"bodies and polygons: the name {name!r} is given to more than one body")
        self._check_ids()

    def _entries(self) -> list[tuple[str, BodyTable | PolygonTable]]:
        """Each ``[[bodies]]`` and ``[[polygons]]`` entry with its place in the file ("bodies[k]"), in file order."""
        return [*((f"bodies[{k}]", t) for k, t in enumerate(self.bodies)),
                *((f"polygons[{k}]", t) for k, t in enumerate(self.polygons))]  # fmt: skip

    def _check_ids(self) -> None:
        """Either no ``[[bodies]]`` or ``[[polygons]]`` entry has an ``id``, or each has one and together they are
        0 .. n - 1 (n entries), each once."""
        entries = self._entries()
        given = [(where, t.id) for where, t in entries if t.id is not UNSET]
        if not given:
            return
        if len(given) < len(entries):
            missing = next(where for where, t in entries if t.id is UNSET)
            raise ValueError(f"{missing}.id is missing: {given[0][0]}.id is given, and then every [[bodies]] and "
                             f"[[polygons]] entry needs one (ids 0 to {len(entries) - 1}, each once)")  # fmt: skip
        seen: dict[int, str] = {}
        for where, i in given:
            if not 0 <= i < len(entries):
                raise ValueError(f"{where}.id = {i}: the ids of the {len(entries)} [[bodies]] and [[polygons]] "
                                 f"entries are 0 to {len(entries) - 1}, each once")  # fmt: skip
            if i in seen:
                raise ValueError(f"{where}.id = {i} is also {seen[i]}.id: each id is given once")
            seen[i] = where

    def listed(self) -> list[tuple[str, BodyTable | PolygonTable]]:
        """The ``[[bodies]]`` and ``[[polygons]]`` entries in the order of their body ids, each with its place in
        the file ("bodies[k]"): by ``id`` where the entries give one, else the ``[[bodies]]`` then the
        ``[[polygons]]``. (The ``[[generate]]`` tables' bodies follow them.)"""
        entries = self._entries()
        if entries and entries[0][1].id is not UNSET:
            entries.sort(key=lambda entry: entry[1].id)
        return entries

    def _check_smooth(self) -> None:
        """engine = "event": no friction or spin (`EventWorld` has smooth bodies that do not turn)."""
        why = 'needs world.engine = "step" (the event engine has smooth bodies that do not turn)'
        if self.world.friction_rule is not UNSET:
            raise ValueError(f"world.friction_rule {why}")
        for name, fields in (("bodies", _SPIN_FIELDS), ("generate", _SPIN_FIELDS), ("walls", _WALL_FRICTION),
                             ("boxes", _WALL_FRICTION), ("pairs", _WALL_FRICTION)):  # fmt: skip
            for k, table in enumerate(getattr(self, name)):
                for field in table.given(*fields):
                    raise ValueError(f"{name}[{k}].{field} {why}")

    # --------------------------------------------------------------------------- from and to Python
    @classmethod
    def load(cls, path: str | Path):
        """The ready world a scene file describes: a `World`, or an `EventWorld` for engine = "event".
        Raises `SceneError` (a ValueError) naming the file, the field and the bad value."""
        scene, _ = read_scene(path)
        return build_world(scene, str(path))

    @classmethod
    def read(cls, path: str | Path) -> Scene:
        """A scene file, parsed and validated (the world is not built: `build` does that)."""
        return read_scene(path)[0]

    @classmethod
    def from_toml(cls, text: str, source: str = "<scene>") -> Scene:
        """Scene TOML text, parsed and validated."""
        return parse_scene(text, source)

    def build(self, source: str = "<scene>"):
        """The world this scene describes (as `load`)."""
        return build_world(self, source)

    def to_toml(self) -> str:
        """The scene as TOML text (keys left at their defaults are left out; numbers read back exactly)."""
        return msgspec.toml.encode(self).decode()

    def save(self, path: str | Path) -> Path:
        """Write the scene file (TOML); return its path."""
        path = Path(path)
        path.write_text(self.to_toml())
        return path


# ----------------------------------------------------------------------------------------------- parsing
def read_scene(path: str | Path, overrides: dict | None = None) -> tuple[Scene, str]:
    """Parse and validate a scene file; return the scene and its text."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise SceneError(f"{path}: cannot read the scene file: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise SceneError(
            f"{path}: not a scene file: a scene is TOML text (UTF-8), but byte {err.start} is "
            f"{err.object[err.start]:#04x}"
        ) from None
    return parse_scene(text, str(path), overrides), text


def parse_scene(text: str, source: str = "<scene>", overrides: dict | None = None) -> Scene:
    """Parse and validate scene TOML. ``overrides`` (nested tables, e.g. ``{"run": {"until": 5.0}}``)
    replace values of the file before validation."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SceneError(f"{source}: not valid TOML: {err}") from None
    missing = [f"[{table}]" for table in ("world", "run") if table not in data]
    if missing:
        raise SceneError(
            f"{source}: the {' and '.join(missing)} table{' is' if len(missing) == 1 else 's are'} missing: a scene "
            f"needs [world] (with dim) and [run] (with until, and dt for the step engine); see docs/scenes.md"
        )
    run = data.get("run")
    if isinstance(run, dict) and isinstance(run.get("until"), int | float) and run["until"] > 0:
        run.setdefault("output_interval", run["until"] / DEFAULT_FRAMES)
    for table, values in (overrides or {}).items():
        if isinstance(data.setdefault(table, {}), dict):
            data[table].update(values)
    try:
        return msgspec.convert(data, Scene)
    except msgspec.ValidationError as err:
        raise SceneError(f"{source}: {_explain(str(err), data)}") from None


_AT = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _explain(message: str, data: dict) -> str:
    """Turn a msgspec message into "table.field = value: problem; allowed: ... (did you mean ...?)"."""
    m = _AT.match(message)
    msg, path = m["msg"], m["path"] or ""
    keys = [int(i) if i else name for name, i in _STEP.findall(path)]
    types, value = [mi.type_info(Scene)], data
    for key in keys:
        parent = _resolve(types[-1], value)
        value = value[key]
        if isinstance(parent, mi.StructType):
            types.append(next((f.type for f in parent.fields if f.encode_name == key), None))
        else:
            types.append(getattr(parent, "item_type", None))
    where = path.lstrip(".")
    allowed: list = []
    if (unknown := re.match(r"Object contains unknown field `(.*)`", msg)) is not None:
        info = _resolve(types[-1], value)
        allowed = [f.encode_name for f in info.fields] + ([info.tag_field] if info.tag_field else [])
        bad, msg = unknown[1], f"unknown key {unknown[1]!r}"
    elif msg.startswith("Invalid"):
        info = types[-1] if types[-1] is not None else _resolve(types[-2], None)
        allowed, bad, msg = _choices(info), value, f"{value!r} is not allowed"
    elif msg.startswith("Expected"):
        where = f"{where} = {value!r}"
    if allowed:
        close = difflib.get_close_matches(str(bad), [str(a) for a in allowed], n=1)
        msg += f"; allowed: {', '.join(map(repr, allowed))}" + (
            f" (did you mean {close[0]!r}?)" if close else ""
        )
    return f"{where}: {msg}" if where else msg


def _resolve(info, value):
    """The branch of a union type that applies to ``value`` (by tag, or the only table/list branch)."""
    if not isinstance(info, mi.UnionType):
        return info
    tables = [t for t in info.types if isinstance(t, mi.StructType | mi.ListType | mi.TupleType)]
    for t in tables:
        if isinstance(t, mi.StructType) and t.tag_field and isinstance(value, dict):
            if value.get(t.tag_field) == t.tag:
                return t
    return tables[0] if len(tables) == 1 else info


def _choices(info) -> list:
    """Allowed values of a literal type, or the tags of a union of tables."""
    if isinstance(info, mi.LiteralType):
        return list(info.values)
    if isinstance(info, mi.UnionType):
        return [v for t in info.types for v in _choices(t)] + [
            t.tag for t in info.types if isinstance(t, mi.StructType) and t.tag
        ]
    return []


# ----------------------------------------------------------------------------------------------- building
def build_world(scene: Scene, source: str = "<scene>"):
    """Make the world a scene describes: a `World`, or an `EventWorld` for engine = "event".

    Raises `SceneError` naming the table entry at fault (body ids are the order of addition: the
    ``[[bodies]]`` and ``[[polygons]]`` as `Scene.listed` orders them, then each ``[[generate]]`` table's
    bodies)."""
    w = scene.world
    kwargs = w.given("gravity", "restitution_rule", "impact_mode", "integrator", "epsilon", "friction_rule")
    where = "config"
    try:
        config = Config(**msgspec.structs.asdict(scene.config))
        where = "world"
        if w.engine == "event":
            import carom  # the event engine is optional: looked up at run time

            if not hasattr(carom, "EventWorld"):
                raise ValueError('engine = "event" needs carom.EventWorld, which this carom does not have')
            world = carom.EventWorld(dim=w.dim, config=config, **kwargs, **w.given("tc"))
        else:
            world = World(dim=w.dim, config=config, **kwargs)
        rng = np.random.default_rng(w.seed)
        for place, table in scene.listed():
            where = place
            if isinstance(table, PolygonTable):
                table.add_to(world)
                continue
            i = world.add_body(**table.given(*_BODY_FIELDS))
            if table.orientation is not UNSET:
                _orient(world, i, table.orientation)
        for k, gen in enumerate(scene.generate):
            where = f"generate[{k}] ({gen.__struct_config__.tag})"
            made = gen.bodies(world, rng, scene)
            world.add_bodies(**made, **gen.shared(world.dim, len(made["positions"])))
        for k, wall in enumerate(scene.walls):
            where = f"walls[{k}]"
            world.add_wall(wall.point, wall.normal, **wall.given("restitution", *_WALL_FRICTION))
        for k, box in enumerate(scene.boxes):
            where = f"boxes[{k}]"
            if box.periodic:
                world.add_periodic_box(box.lower, box.upper)
            else:
                world.add_box(box.lower, box.upper, **box.given("restitution", *_WALL_FRICTION))
        for k, force in enumerate(scene.forces):
            where = f"forces[{k}] ({force.__struct_config__.tag})"
            world.add_force(force.build(world, scene))
        for k, pair in enumerate(scene.pairs):
            where = f"pairs[{k}]"
            pair.apply(world, scene)
        where = "run"
        world.time = as_number("start", scene.run.start)
    except ValueError as err:
        raise SceneError(f"{source}: {where}: {err}") from None
    return world


def _orient(world, i: int, value) -> None:
    """Set body i's orientation: a unit quaternion (w, x, y, z) in 3D, an angle (rad) in 2D."""
    if world.dim == 2:
        if isinstance(value, list):
            raise ValueError(f"orientation must be a number (an angle, rad; dim=2), got {value!r}")
        world.bodies.orientation[i, 0] = as_number("orientation", value)
        return
    q = as_vector("orientation", value, 4) if isinstance(value, list) else None
    if q is None or not abs(np.linalg.norm(q) - 1.0) <= 1e-9:
        raise ValueError(f"orientation must be a unit quaternion [w, x, y, z] (dim=3), got {value!r}")
    world.bodies.orientation[i] = q


def _spin(value, dim: int):
    """A validated angular velocity (rad/s) for every body of a group: a number in 2D, a 3-vector in 3D."""
    if dim == 2:
        if isinstance(value, list):
            raise ValueError(f"angular_velocity must be a number (dim=2), got {value!r}")
        return as_number("angular_velocity", value)
    if not isinstance(value, list):
        raise ValueError(f"angular_velocity must be a 3-vector (dim=3), got {value!r}")
    return as_vector("angular_velocity", value, 3)


def _draw(field: str, span, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` values of a `Span`: all equal, or uniform in ``[low, high]``; every one must be > 0."""
    lo, hi = span if isinstance(span, tuple) else (span, span)
    if not 0 < lo <= hi:
        raise ValueError(f"{field} must be > 0, or a range [low, high] with 0 < low <= high, got {span!r}")
    return rng.uniform(lo, hi, size=k) if lo < hi else np.full(k, float(lo))


def _body_id(ref: BodyRef, scene: Scene, world, field: str) -> int:
    """Resolve a body name (from ``[[bodies]]`` and ``[[polygons]]``) or id."""
    if isinstance(ref, int):
        if not 0 <= ref < world.n_bodies:
            raise ValueError(f"{field} = {ref}: no body with that id (there are {world.n_bodies})")
        return ref
    names = [t.name for _, t in scene.listed()]  # (by id)
    if ref in names:
        return names.index(ref)
    close = difflib.get_close_matches(ref, [n for n in names if n is not UNSET], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"{field} = {ref!r}: no body has that name{hint}")


# ----------------------------------------------------------------------------------------------- from a world
def scene_of(world, until, dt=None, every=None) -> Scene:
    """The scene of a world as it is now (`Model.to_scene`), built again and compared, array by array and
    bit by bit, with the world: what a scene cannot hold raises ValueError naming it."""
    step = isinstance(world, World)
    t0 = world.time
    until = as_number("until", until)
    if not until > t0:
        raise ValueError(f"until must be after the world's time {t0!r}, got {until!r}")
    if step and dt is None and world.integrator != "ias15":
        raise ValueError("dt (the time step, s) is required for the scene of a World")
    if not step and dt is not None:
        raise ValueError(f"dt does not apply to an EventWorld (it has no time step), got {dt!r}")
    run = {"start": t0, "until": until, "output_interval": (until - t0) / DEFAULT_FRAMES if every is None else every}
    if step and dt is not None:
        run["dt"] = dt
    box = getattr(world, "_box", None)
    data = {
        "world": _world_table(world, step),
        "run": run,
        **_body_tables(world),
        "walls": [_wall_table(world, k) for k in range(world.walls.n)],
        "boxes": [] if box is None else [{"lower": box[0].tolist(), "upper": box[1].tolist(), "periodic": True}],
        "forces": [_force_table(force) for force in getattr(world, "forces", ())],
        "pairs": _pair_tables(world),
        "config": _config_table(world.config),
    }
    try:
        scene = msgspec.convert(data, Scene)
        rebuilt = build_world(scene, "the scene")
    except ValueError as err:  # (msgspec.ValidationError and SceneError are ValueErrors)
        raise ValueError(f"this world cannot be written as a scene: {err}") from None
    _check_same(world, rebuilt)
    return scene


def _config_table(config: Config) -> dict:
    """The ``[config]`` fields that differ from the defaults."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(Config)
            if not _same_bits(getattr(config, f.name), f.default)}  # fmt: skip


def _same_bits(a, b) -> bool:
    a = np.asarray(a, dtype=float)
    return a.tobytes() == np.broadcast_to(np.asarray(b, dtype=float), a.shape).tobytes()


def _world_table(world, step: bool) -> dict:
    table = {"dim": world.dim, "engine": "step" if step else "event", "gravity": world.gravity.tolist(),
             "restitution_rule": world.restitution_rule, "impact_mode": world.impact_mode}  # fmt: skip
    if step:
        table |= {"friction_rule": world.friction_rule, "integrator": world.integrator}
        if world.epsilon is not None:
            table["epsilon"] = world.epsilon
    else:
        table["tc"] = world.tc
    return table


def _body_tables(world) -> dict[str, list[dict]]:
    """The ``[[bodies]]`` (disks, spheres) and ``[[polygons]]`` tables of a world's bodies, in id order. A
    scene adds its bodies before its polygons: where a disk comes after a polygon, every table holds its
    body's ``id``."""
    polygon = world.shapes == "polygon"
    disks, polygons = np.flatnonzero(~polygon), np.flatnonzero(polygon)
    tables = {"bodies": [_body_table(world, i) for i in disks],
              "polygons": [_polygon_table(world, i) for i in polygons]}  # fmt: skip
    if len(disks) and len(polygons) and disks[-1] > polygons[0]:  # (a disk after a polygon)
        for i, table in zip((*disks, *polygons), (*tables["bodies"], *tables["polygons"]), strict=True):
            table["id"] = int(i)
    return tables


def _body_table(world, i: int) -> dict:
    """Body i's ``[[bodies]]`` table: every field that differs (in its bits) from the default."""
    b = world.bodies
    table = {"position": b.position[i].tolist(), "radius": float(b.radius[i]), **_shared_fields(world, i)}
    for name in ("rolling_resistance", "spinning_friction"):
        if not _same_bits(getattr(b, name)[i], 0.0):
            table[name] = float(getattr(b, name)[i])
    spin = b.angular_velocity[i]
    if world.dim == 3 and not _same_bits(spin, 0.0):
        table["angular_velocity"] = spin.tolist()
    inv_i = b.inv_inertia[i]
    default_inv_i = (1.0 / b.mass[i]) / (ball_inertia_factor(world.dim) * b.radius[i] ** 2)
    if not b.fixed[i] and not _same_bits(inv_i, default_inv_i):
        table["inertia"] = _reciprocal_giving(float(inv_i))
    q = b.orientation[i]
    if not _same_bits(q, (1.0, 0.0, 0.0, 0.0) if world.dim == 3 else 0.0):
        table["orientation"] = q.tolist() if world.dim == 3 else float(q[0])
    return table


def _polygon_table(world, i: int) -> dict:
    """Polygon i's ``[[polygons]]`` table: its vertices as they were given (so that the outline is rebuilt to
    the bit), its angle, and every other field that differs (in its bits) from the default."""
    b = world.bodies
    given = world._given_vertices[i]
    table = {"position": b.position[i].tolist(), "vertices": given.tolist(), **_shared_fields(world, i)}
    if not _same_bits(b.orientation[i], 0.0):
        table["angle"] = float(b.orientation[i, 0])
    shape = polygon_properties(given)
    inv_i = b.inv_inertia[i]
    if not b.fixed[i] and not _same_bits(inv_i, 1.0 / (b.mass[i] * shape.second_moment / shape.area)):
        table["inertia"] = _reciprocal_giving(float(inv_i))
    return table


def _shared_fields(world, i: int) -> dict:
    """The fields of body i's table that disks and polygons share (2D spin included), where they differ from
    the defaults."""
    b = world.bodies
    if not b.active[i]:
        raise ValueError(f"body {i} has merged into another (it is inactive): a scene cannot hold it")
    table = {"restitution": float(b.restitution[i])}
    if world.names[i]:
        table["name"] = world.names[i]
    if not _same_bits(b.velocity[i], 0.0):
        table["velocity"] = b.velocity[i].tolist()
    if b.fixed[i]:
        table["fixed"] = True
    if not (b.fixed[i] and b.mass[i] == np.inf):
        table["mass"] = float(b.mass[i])
    if not _same_bits(b.drag_coefficient[i], 0.47):
        table["drag_coefficient"] = float(b.drag_coefficient[i])
    if not _same_bits(b.static_friction[i], 0.0):
        table["static_friction"] = float(b.static_friction[i])
    if not _same_bits(b.kinetic_friction[i], b.static_friction[i]):
        table["kinetic_friction"] = float(b.kinetic_friction[i])
    if world.dim == 2 and not _same_bits(b.angular_velocity[i], 0.0):
        table["angular_velocity"] = float(b.angular_velocity[i, 0])
    return table


def _reciprocal_giving(x: float) -> float:
    """A number whose reciprocal is exactly x (1 / (1 / x), or one of its neighbours: a reciprocal's round-off)."""
    y = 1.0 / x
    for candidate in (y, math.nextafter(y, math.inf), math.nextafter(y, -math.inf)):
        if 1.0 / candidate == x:
            return candidate
    return y  # (`_check_same` then names the body)


def _normal_giving(normal: np.ndarray) -> np.ndarray:
    """A vector that `Model.add_wall` normalises to exactly ``normal``: itself, or a multiple (its length is
    1 only to round-off, and dividing by that may move a component's last bit)."""
    for k in range(4096):
        v = normal * (1.0 + k / 64.0)
        if _same_bits(v / float(np.linalg.norm(v)), normal):
            return v
    return normal  # (`_check_same` then names the walls)


def _wall_table(world, k: int) -> dict:
    w = world.walls
    table = {"point": w.point[k].tolist(), "normal": _normal_giving(w.normal[k]).tolist(),
             "restitution": float(w.restitution[k])}  # fmt: skip
    if not _same_bits(w.static_friction[k], 0.0):
        table["static_friction"] = float(w.static_friction[k])
    if not _same_bits(w.kinetic_friction[k], w.static_friction[k]):
        table["kinetic_friction"] = float(w.kinetic_friction[k])
    return table


def _force_table(force) -> dict:
    kind = type(force)
    if kind is NBodyGravity:
        table = {"kind": "gravity", "G": force.G, "softening": force.softening}
        if force.tree or force.opening_angle != 0.5:  # (scenes without a tree stay as they were)
            table.update(tree=force.tree, opening_angle=force.opening_angle)
        return table
    if kind is Atmosphere:
        return {"kind": "atmosphere", "body": force.body, "surface_density": force.surface_density,
                "scale_height": force.scale_height}  # fmt: skip
    if kind is Thrust and not callable(force.force):
        return {"kind": "thrust", "body": force.body, "force": np.asarray(force.force).tolist()}
    if kind is Thrust:
        raise ValueError(f"the Thrust on body {force.body} has a callable force, which a scene cannot hold")
    raise ValueError(f"{force!r} is not a force a scene can hold (NBodyGravity, Atmosphere, Thrust)")


def _pair_tables(world) -> list[dict]:
    """``[[pairs]]`` tables of the world's pair overrides (restitution and friction)."""
    restitution, friction = world._pair_restitution, world._pair_friction
    tables = []
    for key in sorted(restitution.keys() | friction.keys()):
        i, j = (int(ids[0]) for ids in key_pairs([key]))
        table = {"body": i, "other": j} if j >= 0 else {"body": i, "wall": -1 - j}
        if key in restitution:
            table["restitution"] = restitution[key]
        if key in friction:
            table["static_friction"], table["kinetic_friction"] = friction[key]
        tables.append(table)
    return tables


def _check_same(world, rebuilt) -> None:
    """Raise ValueError naming the first number of ``world`` that ``rebuilt`` (from its scene) lacks."""
    def differ(what, a, b):
        raise ValueError(f"this world cannot be written as a scene: {what} would read back as {b!r}, not {a!r}")

    old, new = world.bodies.snapshot(), rebuilt.bodies.snapshot()
    for name, a in old.items():
        rows_a, rows_b = (np.ascontiguousarray(x).reshape(len(x), -1).view(np.uint8) for x in (a, new[name]))
        for i in np.flatnonzero(np.any(rows_a != rows_b, axis=1))[:1]:
            differ(f"body {i}'s {name}", a[i].tolist(), new[name][i].tolist())
    for name in ("point", "normal", "restitution", "static_friction", "kinetic_friction"):
        a, b = getattr(world.walls, name), getattr(rebuilt.walls, name)
        if not _same_bits(a, b):
            differ(f"the walls' {name}", a.tolist(), b.tolist())
    outlines = world._outlines_of(world.n_bodies), rebuilt._outlines_of(rebuilt.n_bodies)
    for i, (a, b) in enumerate(zip(*outlines, strict=True)):
        if (a is None) != (b is None) or (a is not None and (a.shape != b.shape or not _same_bits(a, b))):
            differ(f"body {i}'s outline", None if a is None else a.tolist(), None if b is None else b.tolist())
    if world.names != rebuilt.names:
        differ("the names", world.names, rebuilt.names)
    if not _same_bits(world.time, rebuilt.time):
        differ("the time", world.time, rebuilt.time)
    pairs = (world._pair_restitution, world._pair_friction), (rebuilt._pair_restitution, rebuilt._pair_friction)
    if pairs[0] != pairs[1]:
        differ("the pair overrides", *pairs)
    forces = [repr(f) for f in getattr(world, "forces", ())], [repr(f) for f in getattr(rebuilt, "forces", ())]
    if forces[0] != forces[1]:
        differ("the forces", *forces)
