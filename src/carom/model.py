"""What both engines share: bodies, walls, restitution rules, validation, impacts and diagnostics.

`World` (time-stepped) and `EventWorld` (event-driven) subclass `Model`; everything a user adds to a
world goes through here, so bad input is caught once, with a message that names the field and value,
before any kernel sees it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.spatial import cKDTree

from .config import DEFAULT, FRICTION_RULES, IMPACT_MODES, RESTITUTION_RULES, ROUNDOFF, Config
from .materials import pair_key
from .narrowphase.polygons import (
    PolygonTable,
    checked_polygon_contact,
    polygon_disk_contact,
    polygon_table,
    polygon_wall_contact,
)
from .narrowphase.spheres import touch_slacks
from .shapes import ball_inertia_factor, placed_vertices, polygon_properties, rectangle_vertices
from .state import SHAPE_POLYGON, SHAPE_SPHERE, BodyState, WallState


@dataclass(frozen=True)
class Impact:
    """One resolved impact. ``j = -1 - k`` for wall ``k``. ``normal`` points from body i towards body
    j (for a wall: the wall's normal, away from the wall). ``impulse`` (N s) is the magnitude of the
    normal impulse; ``approach_speed`` (m/s) the normal approach speed before it. ``tangential_impulse``
    (N s, a vector in the contact plane) is the friction impulse on body j (body i receives its opposite):
    zero between smooth bodies. ``point`` (m, world frame) is the contact point, where the engine reports
    one (impacts of polygons), else None."""

    time: float
    i: int
    j: int
    normal: np.ndarray
    impulse: float
    approach_speed: float
    restitution: float
    tangential_impulse: np.ndarray = None
    point: np.ndarray | None = None

    def __post_init__(self):
        if self.tangential_impulse is None:
            object.__setattr__(self, "tangential_impulse", np.zeros_like(self.normal))


def as_numbers(field: str, value, what: str, shown=None) -> np.ndarray:
    """``value`` as a float64 array, or a ValueError naming ``field`` and ``shown`` (default ``value``) that
    says it must be ``what``: text (even "1"), booleans and values that are not numbers are refused, where
    NumPy alone would turn "1" into 1.0 and True into 1.0. The shape is the caller's to check."""
    try:
        raw = np.asarray(value)
        text = raw.dtype.kind in "USb" or (raw.dtype == object and any(
            isinstance(x, str | bytes | bool | np.bool_) for x in raw.flat))  # fmt: skip
        if not text:
            return raw.astype(float)
    except (TypeError, ValueError):
        pass
    raise ValueError(f"{field} must be {what}, got {value if shown is None else shown!r}")


def as_number(field: str, value, *, allow_inf: bool = False) -> float:
    x = as_numbers(field, value, "a number")
    if x.shape != ():
        raise ValueError(f"{field} must be a number, got {value!r}")
    x = float(x)
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise ValueError(f"{field} must be finite, got {value!r}")
    return x


def as_vector(field: str, value, dim: int) -> np.ndarray:
    v = as_numbers(field, value, f"a vector of {dim} numbers")
    if v.shape != (dim,):
        raise ValueError(f"{field} must have {dim} components (dim={dim}), got {value!r}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{field} must be finite, got {value!r}")
    return v


#: The largest magnitude (in SI units) of a position or wall coordinate (m), velocity (m/s), angular velocity
#: (rad/s), uniform gravity (m/s^2), mass (kg), radius (m) and moment of inertia (kg m^2) that a world
#: accepts; `SMALLEST` is the least radius, (finite, nonzero) mass and inertia. The kernels and diagnostics
#: multiply at most five such numbers together (the spin energy I w^2 = m r^2 w^2; the discriminant
#: (dx . dv)^2 of a contact time has four) and divide by at most three (w / (m r^2)), so every intermediate
#: stays within 1e+-300, short of the largest double (1.8e308) and the smallest normal one (2.2e-308).
#: Physical scenes lie far inside: 1e-31 kg (an electron) to 1e53 kg (the observable universe), 1e-15 m
#: (a proton) to 1e27 m.
LARGEST = 1e60
SMALLEST = 1e-60


def check_magnitude(field: str, value, unit: str, *, low: float = 0.0, high: float = LARGEST) -> None:
    """Raise ValueError naming ``field`` and ``value`` (a finite number or vector) when a component lies
    outside ``low <= |x| <= high`` (``low`` applies to nonzero components only)."""
    arr = np.abs(np.asarray(value, dtype=float))
    if np.any(arr > high):
        rule = f"at most {high:g} {unit}"
    elif np.any((arr < low) & (arr > 0)):
        rule = f"at least {low:g} {unit}"
    else:
        return
    shown = np.asarray(value, dtype=float).tolist()
    what = "its magnitude" if arr.ndim == 0 else "each component's magnitude"
    raise ValueError(
        f"{field} = {shown!r} is out of range: {what} must be {rule} (carom.model.LARGEST and SMALLEST keep "
        f"every product the kernels form finite)"
    )


def _restitution(field: str, value) -> float:
    e = as_number(field, value)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"{field} must be in [0, 1], got {value!r}")
    return e


def _friction_pair(prefix: str, static, kinetic) -> tuple[float, float]:
    """Validated (mu_s, mu_k): both finite and >= 0, mu_k <= mu_s; ``kinetic=None`` means mu_k = mu_s.
    Fields are named ``{prefix}static_friction`` and ``{prefix}kinetic_friction`` in messages."""
    mu_s = as_number(f"{prefix}static_friction", static)
    if mu_s < 0:
        raise ValueError(f"{prefix}static_friction must be >= 0, got {static!r}")
    if kinetic is None:
        return mu_s, mu_s
    mu_k = as_number(f"{prefix}kinetic_friction", kinetic)
    if mu_k < 0:
        raise ValueError(f"{prefix}kinetic_friction must be >= 0, got {kinetic!r}")
    if mu_k > mu_s:
        raise ValueError(f"{prefix}kinetic_friction must be <= static_friction ({mu_s!r}), got {kinetic!r}")
    return mu_s, mu_k


class _NewPolygon(NamedTuple):
    """What `Model.add_bodies` needs to store one polygon besides a disk's fields (`Model.add_polygon`)."""

    outline: np.ndarray  # (k, 2) m: vertices about the centroid, counter-clockwise (`shapes.polygon_properties`)
    angle: float  # rad, counter-clockwise
    area: float  # m^2
    second_moment: float  # m^4, about the centroid: I = mass * second_moment / area
    given: np.ndarray  # (k, 2) m: the vertices as given, body frame (`Model.to_scene` writes them back)


def _polygon_mass(mass, density, area: float, fixed) -> float | None:
    """The mass (kg) of a polygon of ``area`` (m^2) from its ``mass`` (checked later, as a disk's) or
    ``density`` (kg/m^2): exactly one of them, or neither for a fixed body (None)."""
    if mass is not None and density is not None:
        raise ValueError(f"give a polygon's mass or its density, not both: got mass={mass!r}, density={density!r}")
    if density is None:
        if mass is None and not fixed:
            raise ValueError("a polygon that is not fixed needs mass= (kg) or density= (kg/m^2); got neither")
        return mass
    rho = as_number("density", density)
    if not rho > 0:
        raise ValueError(f"density must be > 0 (kg/m^2), got {density!r}")
    return rho * area


#: `_new_pairs` compares up to this many new bodies with every earlier one directly; more are sorted by a tree.
DIRECT_PAIRS = 16


def _new_pairs(x: np.ndarray, radius: np.ndarray, old: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (p, q), p < q, q >= old, of rows of ``x`` (m) whose bounding circles (``radius``, m) may
    overlap: each new body (rows from ``old`` on) with every other before it. A few new bodies are compared with
    all earlier ones directly, O(n) each (a tree over all of them for each body added one by one made building
    a 5,050-box pyramid O(n^2 log n): 26 s)."""
    if len(x) - old > DIRECT_PAIRS:
        pairs = cKDTree(x).query_pairs(2.0 * radius.max(), output_type="ndarray")
        pairs = pairs[pairs[:, 1] >= old] if len(pairs) else np.zeros((0, 2), dtype=np.int64)
        return pairs[:, 0], pairs[:, 1]
    ps, qs = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for q in range(old, len(x)):
        reach = np.hypot(x[:q, 0] - x[q, 0], x[:q, 1] - x[q, 1]) if x.shape[1] == 2 else \
            np.linalg.norm(x[:q] - x[q], axis=1)  # fmt: skip
        near = np.flatnonzero(reach <= 2.0 * np.maximum(radius[:q], radius[q]))
        ps.append(near)
        qs.append(np.full(len(near), q, dtype=np.int64))
    return np.concatenate(ps), np.concatenate(qs)


class _Outline(NamedTuple):
    """A body's shape and pose for the start-of-run overlap checks: ``outline`` its vertices about its
    position (polygons) or None (disks); ``position`` (2,) m; ``angle`` rad; ``radius`` m (a polygon's
    circumradius)."""

    outline: np.ndarray | None
    position: np.ndarray
    angle: float
    radius: float

    def describe(self) -> str:
        if self.outline is None:
            return f"position {self.position.tolist()}, radius {self.radius}"
        return f"a polygon at position {self.position.tolist()}, angle {self.angle}, circumradius {self.radius}"


def _shape_gap(a: _Outline, b: _Outline) -> float:
    """The gap (m, negative overlapping: the deepest point of the contact manifold) between two bodies of
    which at least one is a polygon."""
    if a.outline is None:
        a, b = b, a
    if b.outline is None:
        return float(polygon_disk_contact(a.outline, a.position, a.angle, b.position, b.radius).gaps[0])
    x, angles = np.array([a.position, b.position], dtype=float), np.array([a.angle, b.angle])
    return float(checked_polygon_contact([a.outline, b.outline], x, angles).gaps[0])


def _wall_gap(body: _Outline, point: np.ndarray, normal: np.ndarray) -> float:
    """The gap (m, negative overlapping) between a polygon and the wall through ``point`` with unit
    ``normal``: that of its deepest vertex."""
    return float(polygon_wall_contact(body.outline, body.position, body.angle, point, normal).gaps[0])


def _sticks_out(low: np.ndarray, high: np.ndarray, lo: np.ndarray, hi: np.ndarray, slack: float) -> bool:
    """Whether the extent ``[low, high]`` (m, per axis) reaches beyond the box ``[lo, hi]`` by more than
    ``slack`` (m) on some axis."""
    return bool(np.any(low < lo - slack) or np.any(high > hi + slack))


class Model:
    """Bodies (spheres in 3D, disks in 2D), walls and the impact model shared by both engines."""

    def __init__(
        self,
        dim: int = 3,
        gravity=None,
        *,
        restitution_rule: str = "min",
        friction_rule: str = "geometric",
        impact_mode: str = "bounce",
        config: Config = DEFAULT,
    ):
        if dim not in (2, 3):
            raise ValueError(f"dim must be 2 or 3, got {dim!r}")
        if restitution_rule not in RESTITUTION_RULES:
            raise ValueError(f"restitution_rule must be one of {RESTITUTION_RULES}, got {restitution_rule!r}")
        if friction_rule not in FRICTION_RULES:
            raise ValueError(f"friction_rule must be one of {FRICTION_RULES}, got {friction_rule!r}")
        if impact_mode not in IMPACT_MODES:
            raise ValueError(f"impact_mode must be one of {IMPACT_MODES}, got {impact_mode!r}")
        if not isinstance(config, Config):
            raise ValueError(f"config must be a carom.Config, got {config!r}")
        self.dim = dim
        self.gravity = np.zeros(dim) if gravity is None else as_vector("gravity", gravity, dim)
        check_magnitude("gravity", self.gravity, "m/s^2")
        self.restitution_rule = restitution_rule
        self.friction_rule = friction_rule
        self.impact_mode = impact_mode
        self.config = config
        self.time = 0.0
        self.collision_count = 0
        self.bodies = BodyState(dim)
        self.walls = WallState(dim)
        self._pair_restitution: dict[int, float] = {}
        self._pair_friction: dict[int, tuple[float, float]] = {}  # key -> (mu_s, mu_k)
        self._names: list[str] = []  # per body id: its name, "" for none
        #: Per body id: a polygon's vertices in its body frame (origin at the centroid, counter-clockwise, (k, 2)
        #: float64, as `shapes.polygon_properties` returns them), None for a sphere or disk.
        self._outlines: list[np.ndarray | None] = []
        self._polygons: PolygonTable | None = None  # `polygon_table`, kept until bodies are added
        #: Per polygon id: its vertices as given to `add_polygon` ((k, 2) float64, body frame), from which a
        #: scene (`to_scene`) rebuilds the same outline to the bit (the outline alone would not: centring an
        #: outline again moves its last bits).
        self._given_vertices: dict[int, np.ndarray] = {}
        self._impact_callbacks: list[Callable[[Impact], None]] = []

    # ----------------------------------------------------------------- adding things
    def add_body(
        self,
        position,
        velocity=None,
        mass=None,
        radius: float = 1.0,
        restitution: float = 1.0,
        fixed: bool = False,
        drag_coefficient: float = 0.47,
        *,
        static_friction: float = 0.0,
        kinetic_friction: float | None = None,
        rolling_resistance: float = 0.0,
        spinning_friction: float = 0.0,
        angular_velocity=None,
        inertia: float | None = None,
        name: str | None = None,
    ) -> int:
        """Add a sphere (3D) or disk (2D); return its id (stable for the world's life).

        ``fixed=True``: infinite inertial mass and inertia, unmoved by impacts and forces (it keeps its
        velocity and angular velocity, 0 by default: a driven roller may spin); its ``mass``, if given,
        still attracts other bodies under `NBodyGravity`. Friction: ``static_friction`` mu_s >= 0,
        ``kinetic_friction`` mu_k in [0, mu_s] (default mu_s), ``rolling_resistance`` mu_r >= 0 (the normal
        force acts mu_r R ahead of the contact point), ``spinning_friction`` mu_sp >= 0 (3D: a torque up to
        mu_sp N R about the contact normal resists spinning there). ``angular_velocity`` (rad/s): a 3-vector in 3D, a
        number in 2D (counter-clockwise positive). ``inertia`` (kg m^2, about the centre): default
        2/5 m R^2 (solid sphere) or 1/2 m R^2 (uniform disk). ``name``: a label, unique in the world
        (`names`; plots label named bodies, trajectory files keep them).
        """
        ids = self.add_bodies(
            [position],
            velocities=None if velocity is None else [velocity],
            masses=None if mass is None else [mass],
            radii=[radius],
            restitution=restitution,
            fixed=fixed,
            drag_coefficient=drag_coefficient,
            static_friction=static_friction,
            kinetic_friction=kinetic_friction,
            rolling_resistance=rolling_resistance,
            spinning_friction=spinning_friction,
            angular_velocities=None if angular_velocity is None else [angular_velocity],
            inertias=None if inertia is None else [inertia],
            names=None if name is None else [name],
            _single=True,
        )
        return int(ids[0])

    def add_bodies(
        self,
        positions,
        velocities=None,
        masses=None,
        radii=1.0,
        restitution=1.0,
        fixed=False,
        drag_coefficient=0.47,
        *,
        static_friction=0.0,
        kinetic_friction=None,
        rolling_resistance=0.0,
        spinning_friction=0.0,
        angular_velocities=None,
        inertias=None,
        names=None,
        _single: bool = False,
        _polygon: _NewPolygon | None = None,
    ) -> np.ndarray:
        """Add many bodies at once (arrays of shape (k, dim) / (k,), or scalars broadcast); return ids.

        ``angular_velocities``: (k, 3) in 3D, (k,) in 2D. ``names``: k strings ("" or None: unnamed), each
        name unique in the world. All are validated and checked for overlaps (with
        each other, earlier bodies and walls) before any is stored: either all are added or none.
        """
        dim = self.dim

        def shown(value):  # (`add_body` passes some of its one body's values in a list)
            return value[0] if _single and isinstance(value, list) else value

        def numbers(name, value, what):
            return as_numbers(name, value, what if _single else f"{what}, one per body", shown(value))

        def vectors(name, value, rows=None):  # (rows, dim) numbers
            arr = numbers(name, value, f"a vector of {dim} numbers")
            if arr.ndim != 2 or arr.shape[1] != dim or rows not in (None, len(arr)):
                got = repr(shown(value)) if _single else f"shape {arr.shape}"
                raise ValueError(f"{name} must have {dim} components (dim={dim}), got {got}")
            return arr

        pos = vectors("position", positions)
        k = len(pos)

        def field(name, index):
            return name if _single else f"{name}[{index}]"

        def per_body(name, value, *, allow_inf=False):
            if value is None:
                return None
            arr = as_numbers(name, value, "a number" if _single else f"a number or one per body ({k})", shown(value))
            try:
                arr = np.broadcast_to(arr, (k,))
            except ValueError:
                raise ValueError(f"{name} must be a number or one per body ({k}), got {shown(value)!r}") from None
            for idx in np.flatnonzero(~(np.isfinite(arr) | (allow_inf & np.isinf(arr) & (arr > 0)))):
                raise ValueError(f"{field(name, idx)} must be finite, got {float(arr[idx])!r}")
            return arr

        for idx in np.flatnonzero(~np.all(np.isfinite(pos), axis=1)):
            raise ValueError(f"{field('position', idx)} must be finite, got {pos[idx].tolist()!r}")
        if velocities is None:
            vel = np.zeros((k, dim))
        else:
            vel = vectors("velocity", velocities, k)
            for idx in np.flatnonzero(~np.all(np.isfinite(vel), axis=1)):
                raise ValueError(f"{field('velocity', idx)} must be finite, got {vel[idx].tolist()!r}")
        spin = self._angular_velocities(angular_velocities, k, field, _single)
        if np.asarray(fixed).dtype.kind not in "biu":  # (NumPy would read any text, "no" too, as True)
            raise ValueError(f"fixed must be True or False, got {fixed!r}")
        fix = np.broadcast_to(np.asarray(fixed, dtype=bool), (k,))
        rad = per_body("radius", radii)
        for idx in np.flatnonzero(rad <= 0):
            raise ValueError(f"{field('radius', idx)} must be > 0, got {float(rad[idx])!r}")
        rest = per_body("restitution", restitution)
        for idx in np.flatnonzero((rest < 0) | (rest > 1)):
            raise ValueError(f"{field('restitution', idx)} must be in [0, 1], got {float(rest[idx])!r}")
        cd = per_body("drag_coefficient", drag_coefficient)
        for idx in np.flatnonzero(cd < 0):
            raise ValueError(f"{field('drag_coefficient', idx)} must be >= 0, got {float(cd[idx])!r}")
        mu_s = per_body("static_friction", static_friction)
        mu_k = mu_s if kinetic_friction is None else per_body("kinetic_friction", kinetic_friction)
        mu_r = per_body("rolling_resistance", rolling_resistance)
        mu_sp = per_body("spinning_friction", spinning_friction)
        for name, arr in (("static_friction", mu_s), ("kinetic_friction", mu_k), ("rolling_resistance", mu_r),
                          ("spinning_friction", mu_sp)):  # fmt: skip
            for idx in np.flatnonzero(arr < 0):
                raise ValueError(f"{field(name, idx)} must be >= 0, got {float(arr[idx])!r}")
        for idx in np.flatnonzero(mu_k > mu_s):
            raise ValueError(
                f"{field('kinetic_friction', idx)} must be <= static_friction ({float(mu_s[idx])!r}), "
                f"got {float(mu_k[idx])!r}"
            )
        if masses is None:
            for idx in np.flatnonzero(~fix):
                raise ValueError(f"{field('mass', idx)} is required for a body that is not fixed")
            mass = np.full(k, np.inf)
        else:
            mass = per_body("mass", masses, allow_inf=True)
            # a fixed body may have mass 0 (it attracts nothing); a free one needs 0 < mass < inf
            for idx in np.flatnonzero(~((mass > 0) | (fix & (mass == 0)))):
                rule = ">= 0 for a fixed body" if fix[idx] else "> 0"
                raise ValueError(f"{field('mass', idx)} must be {rule}, got {float(mass[idx])!r}")
            for idx in np.flatnonzero(np.isinf(mass) & ~fix):
                raise ValueError(
                    f"{field('mass', idx)} must be finite for a body that is not fixed, got {float(mass[idx])!r}"
                )
        inertia = per_body("inertia", inertias)
        if inertia is not None:
            for idx in np.flatnonzero(~(inertia > 0)):
                raise ValueError(f"{field('inertia', idx)} must be > 0, got {float(inertia[idx])!r}")
        finite_mass = np.where(np.isfinite(mass), mass, 0.0)
        ranges = (("position", pos, "m", 0.0), ("velocity", vel, "m/s", 0.0), ("angular_velocity", spin, "rad/s", 0.0),
                  ("radius", rad, "m", SMALLEST), ("mass", finite_mass, "kg", SMALLEST),
                  ("inertia", inertia, "kg m^2", SMALLEST))  # fmt: skip
        for name, values, unit, low in ranges:
            self._check_range(name, values, unit, low, field)

        labels = self._new_names(names, k, _single)
        self._check_overlaps(pos, rad, _single, _polygon)
        inertia_factor = ball_inertia_factor(dim)
        shape = SHAPE_SPHERE if _polygon is None else SHAPE_POLYGON
        ids = np.empty(k, dtype=np.int64)
        for a in range(k):
            inv_m = 0.0 if fix[a] else 1.0 / mass[a]
            if fix[a]:
                inv_i = 0.0
            elif inertia is not None:
                inv_i = 1.0 / inertia[a]
            elif _polygon is not None:
                inv_i = 1.0 / (mass[a] * _polygon.second_moment / _polygon.area)
            else:
                inv_i = inv_m / (inertia_factor * rad[a] ** 2)
            ids[a] = self.bodies.append(
                position=pos[a],
                velocity=vel[a],
                angular_velocity=spin[a],
                mass=mass[a],
                inv_mass=inv_m,
                radius=rad[a],
                restitution=rest[a],
                drag_coefficient=cd[a],
                inv_inertia=inv_i,
                static_friction=mu_s[a],
                kinetic_friction=mu_k[a],
                rolling_resistance=mu_r[a],
                spinning_friction=mu_sp[a],
                fixed=fix[a],
                shape=shape,
            )
        if _polygon is not None:
            self.bodies.orientation[ids[0], 0] = _polygon.angle
            self._given_vertices[int(ids[0])] = _polygon.given
        self._names.extend(labels)
        if len(self._outlines) != self.bodies.n - k:
            self._outlines = self._outlines_of(self.bodies.n - k)
        self._outlines.extend([None] * k if _polygon is None else [_polygon.outline])
        self._bodies_changed()
        return ids

    def _outlines_of(self, n: int) -> list[np.ndarray | None]:
        """The outlines of bodies ``[:n]`` (`set_state` may leave more of them, from bodies past a state it set,
        or fewer, from a state of another world: those are disks)."""
        return self._outlines[:n] + [None] * (n - len(self._outlines))

    def add_polygon(
        self,
        vertices,
        position,
        *,
        angle: float = 0.0,
        velocity=None,
        angular_velocity: float = 0.0,
        mass: float | None = None,
        density: float | None = None,
        inertia: float | None = None,
        restitution: float = 1.0,
        static_friction: float = 0.0,
        kinetic_friction: float | None = None,
        drag_coefficient: float = 0.47,
        fixed: bool = False,
        name: str | None = None,
    ) -> int:
        """Add a rigid convex polygon (2D worlds only); return its id.

        ``vertices``: (k, 2) m, k >= 3, in the body's own frame, in either winding (`shapes.check_polygon`
        says what is refused). carom moves that frame's origin to the polygon's centroid, its centre of
        mass: ``position`` (m) is where the centroid goes, and world vertex k is ``position + R(angle) (v_k -
        centroid)``, ``angle`` (rad) turning counter-clockwise. ``mass`` (kg) or ``density`` (kg/m^2, mass =
        density * area): exactly one, or neither for a ``fixed`` body. ``inertia`` (kg m^2, about the
        centroid): default that of a uniform polygon, ``mass * second_moment / area``. The other keywords
        are `add_body`'s; ``radii`` then holds the polygon's circumradius (its bounding radius, and the size
        that ``Config.contact_tolerance`` and ``resting_gap`` scale with).
        """
        if self.dim != 2:
            raise ValueError(f"polygons are 2D bodies: add_polygon needs dim=2, this world has dim={self.dim}")
        given = as_numbers("vertices", vertices, "a list of (x, y) pairs")
        if given.ndim == 2:  # (magnitudes before the geometry, which is relative to the polygon's size)
            finite = np.where(np.isinf(given), 0.0, given)  # (an infinite vertex: `polygon_properties` names it)
            self._check_range("vertices", finite, "m", 0.0, lambda name, k: f"{name}[{k}]")
        shape = polygon_properties(given)
        check_magnitude("the polygon's circumradius", shape.circumradius, "m", low=SMALLEST)
        polygon = _NewPolygon(shape.vertices, as_number("angle", angle), shape.area, shape.second_moment, given)
        mass = _polygon_mass(mass, density, shape.area, fixed)
        ids = self.add_bodies(
            [position],
            velocities=None if velocity is None else [velocity],
            masses=None if mass is None else [mass],
            radii=[shape.circumradius],
            restitution=restitution,
            fixed=fixed,
            drag_coefficient=drag_coefficient,
            static_friction=static_friction,
            kinetic_friction=kinetic_friction,
            angular_velocities=[angular_velocity],
            inertias=None if inertia is None else [inertia],
            names=None if name is None else [name],
            _single=True,
            _polygon=polygon,
        )
        return int(ids[0])

    def add_rectangle(self, width: float, height: float, position, **keywords) -> int:
        """Add a ``width`` x ``height`` rectangle (m), sides along its body frame's axes, centred on
        ``position`` (m) and turned by ``angle`` (rad, counter-clockwise); return its id. The keywords are
        `add_polygon`'s."""
        sides = {"width": as_number("width", width), "height": as_number("height", height)}
        for name, side in sides.items():
            check_magnitude(name, side, "m")
        vertices = rectangle_vertices(sides["width"], sides["height"])
        return self.add_polygon(vertices, position, **keywords)

    def _new_names(self, names, k: int, single: bool) -> list[str]:
        """Validated names of k new bodies ("" for none): strings, none given to another body."""
        if names is None:
            return [""] * k
        if isinstance(names, str) or len(names) != k:
            raise ValueError(f"names must be a list of {k} strings (one per body), got {names!r}")
        taken = {name: i for i, name in enumerate(self._names) if name}
        labels = []
        for a, name in enumerate(names):
            field = "name" if single else f"names[{a}]"
            if name is None:
                name = ""
            if not isinstance(name, str):
                raise ValueError(f"{field} must be a string, got {name!r}")
            if name in taken:
                raise ValueError(f"{field} = {name!r} is already the name of body {taken[name]}")
            if name:
                taken[name] = len(self._names) + a
            labels.append(name)
        return labels

    @staticmethod
    def _check_range(name: str, values, unit: str, low: float, field) -> None:
        """`check_magnitude` for the first body (row of ``values``, or None: not given) out of range."""
        if values is None or not len(values):
            return
        rows = np.abs(values).reshape(len(values), -1)
        bad = np.flatnonzero(np.any((rows > LARGEST) | ((rows < low) & (rows > 0)), axis=1))
        if len(bad):
            check_magnitude(field(name, bad[0]), values[bad[0]], unit, low=low)

    def _angular_velocities(self, value, k: int, field, single: bool) -> np.ndarray:
        """Validated angular velocities (rad/s) of k new bodies, as stored: (k, 3) in 3D, (k, 1) in 2D."""
        rot = 3 if self.dim == 3 else 1
        if value is None:
            return np.zeros((k, rot))
        want = "a 3-vector (dim=3)" if rot == 3 else "a number (dim=2)"
        arr = as_numbers("angular_velocity", value, want, value[0] if single else value)
        if self.dim == 2 and arr.shape in ((), (k,), (k, 1)):
            arr = np.broadcast_to(arr.reshape(-1, 1), (k, 1))
        elif self.dim == 3 and arr.shape == (3,):
            arr = np.broadcast_to(arr, (k, 3))
        elif arr.shape != (k, 3) or self.dim != 3:
            raise ValueError(f"angular_velocity must be {want}, got {value[0] if single else value!r}")
        for idx in np.flatnonzero(~np.all(np.isfinite(arr), axis=1)):
            raise ValueError(f"{field('angular_velocity', idx)} must be finite, got {arr[idx].tolist()!r}")
        return arr

    @property
    def _overlap_slop(self) -> float:
        """Overlap (a fraction of the smaller radius; of the body's, against a wall) that bodies may have at
        the start: touching, within ``contact_tolerance``. (`World` also allows ``resting_gap``, the overlap
        it keeps piles within, so that a world saved mid-run, e.g. by `to_scene`, can be built again.)"""
        return self.config.contact_tolerance

    def _check_overlaps(self, pos: np.ndarray, rad: np.ndarray, single: bool, polygon: _NewPolygon | None = None
                        ) -> None:  # fmt: skip
        """Raise ValueError if a new body (rows of ``pos`` and ``rad``; ``polygon``: the one new body is that
        polygon) overlaps a wall, an earlier body or another new one by more than `_overlap_slop` of the
        smaller size (a polygon's: its circumradius), plus round-off. Bounding circles are compared first; a
        pair whose circles overlap and that holds a polygon is then measured by its contact manifold."""
        tol = self._overlap_slop
        b = self.bodies
        n = b.n
        old = np.flatnonzero(b.active[:n])

        def shape_of(x: int) -> _Outline:  # x: an index into the old bodies, then the new ones
            if x < len(old):
                return self._outline_pose(old[x])
            a = x - len(old)
            if polygon is None:
                return _Outline(None, pos[a], 0.0, float(rad[a]))
            return _Outline(polygon.outline, pos[a], polygon.angle, float(rad[a]))

        def name(x: int) -> str:
            if x < len(old):
                return f"body {old[x]}"
            return "the new body" if single else f"new body [{x - len(old)}]"

        for k in range(self.walls.n):
            point, normal = self.walls.point[k], self.walls.normal[k]
            gap = (pos - point) @ normal - rad
            size = np.maximum(np.abs(pos).max(axis=1), np.abs(point).max())
            slack = tol * rad + ROUNDOFF * size
            bad = np.flatnonzero(gap < -slack)
            if len(bad) and polygon is not None:
                gap[0] = _wall_gap(shape_of(len(old)), point, normal)
                bad = bad[gap[bad] < -slack[bad]]
            if len(bad):
                a = bad[0]
                raise ValueError(
                    f"{name(len(old) + a)} ({shape_of(len(old) + a).describe()}) overlaps wall {k} (point "
                    f"{point.tolist()}, normal {normal.tolist()}) by {-gap[a]:.6g} m: bodies must start inside (on "
                    f"the normal side of) every wall"
                )
        all_pos = np.vstack([b.position[old], pos])
        all_rad = np.concatenate([b.radius[old], rad])
        if len(all_pos) < 2:
            return
        p, q = _new_pairs(all_pos, all_rad, len(old))
        if not len(p):
            return
        sum_r = all_rad[p] + all_rad[q]
        gap = np.linalg.norm(all_pos[p] - all_pos[q], axis=1) - sum_r
        slack = touch_slacks(all_rad[p], all_rad[q], all_pos[p], all_pos[q], tol)
        bad = np.flatnonzero(gap < -slack)
        if len(bad) and (polygon is not None or self.has_polygons):
            for a in bad:
                body_p, body_q = shape_of(p[a]), shape_of(q[a])
                if body_p.outline is not None or body_q.outline is not None:
                    gap[a] = _shape_gap(body_p, body_q)
            bad = bad[gap[bad] < -slack[bad]]
        if len(bad):
            a = bad[np.argmin(gap[bad])]
            raise ValueError(
                f"{name(q[a])} ({shape_of(q[a]).describe()}) overlaps {name(p[a])} ({shape_of(p[a]).describe()}) "
                f"by {-gap[a]:.6g} m; bodies may touch but not overlap (by more than {tol:g} of the smaller size: a "
                f"disk's radius, a polygon's circumradius)"
            )

    def add_wall(self, point, normal, restitution: float = 1.0, *, static_friction: float = 0.0,
                 kinetic_friction: float | None = None) -> int:  # fmt: skip
        """Add an infinite plane through ``point``; bodies live on the side ``normal`` points to. Its
        friction coefficients combine with each body's by the world's ``friction_rule``."""
        mu_s, mu_k = _friction_pair("wall ", static_friction, kinetic_friction)
        p = as_vector("wall point", point, self.dim)
        nv = as_vector("wall normal", normal, self.dim)
        check_magnitude("wall point", p, "m")
        check_magnitude("wall normal", nv, "")
        length = float(np.linalg.norm(nv))
        if not length > 0:
            raise ValueError(f"wall normal must have non-zero length, got {normal!r}")
        e = _restitution("wall restitution", restitution)
        nv = nv / length
        b = self.bodies
        live = np.flatnonzero(b.active[: b.n])
        gap = (b.position[live] - p) @ nv - b.radius[live]
        slack = self._overlap_slop * b.radius[live]
        bad = np.flatnonzero(gap < -slack)
        if len(bad) and self.has_polygons:  # (a polygon's bounding circle may cross the wall, the polygon not)
            for a in bad[b.shape[live[bad]] == SHAPE_POLYGON]:
                gap[a] = _wall_gap(self._outline_pose(live[a]), p, nv)
            bad = bad[gap[bad] < -slack[bad]]
        if len(bad):
            i = live[bad[0]]
            raise ValueError(
                f"wall (point {p.tolist()}, normal {nv.tolist()}) would overlap body {i} "
                f"({self._outline_pose(i).describe()}) by {-gap[bad[0]]:.6g} m"
            )
        k = self.walls.append(p, nv, e, mu_s, mu_k)
        self._bodies_changed()
        return k

    def add_box(self, lower, upper, restitution: float = 1.0, *, static_friction: float = 0.0,
                kinetic_friction: float | None = None) -> list[int]:  # fmt: skip
        """Add the inward-facing walls of an axis-aligned box (six in 3D, four in 2D); return their ids."""
        _friction_pair("box ", static_friction, kinetic_friction)
        lo = as_vector("box lower", lower, self.dim)
        hi = as_vector("box upper", upper, self.dim)
        check_magnitude("box lower", lo, "m")
        check_magnitude("box upper", hi, "m")
        for axis in range(self.dim):
            if not lo[axis] < hi[axis]:
                raise ValueError(f"box lower must be below upper on every axis, got lower={lower!r} upper={upper!r}")
        _restitution("box restitution", restitution)
        b = self.bodies
        live = np.flatnonzero(b.active[: b.n])
        tol = self._overlap_slop
        for i in live:
            x, r = b.position[i], b.radius[i]
            outside = _sticks_out(x - r, x + r, lo, hi, tol * r)
            if outside and b.shape[i] == SHAPE_POLYGON:  # (its bounding circle sticks out; the polygon?)
                corners = self._placed_outline(i)
                outside = _sticks_out(corners.min(axis=0), corners.max(axis=0), lo, hi, tol * r)
            if outside:
                raise ValueError(
                    f"body {i} ({self._outline_pose(i).describe()}) is not inside the box lower={lo.tolist()} "
                    f"upper={hi.tolist()}"
                )
        ids = []
        for axis in range(self.dim):
            normal = np.zeros(self.dim)
            normal[axis] = 1.0
            for point, side in ((lo, normal), (hi, -normal)):
                ids.append(self.add_wall(point, side, restitution, static_friction=static_friction,
                                         kinetic_friction=kinetic_friction))  # fmt: skip
        return ids

    def set_pair_restitution(self, i: int, j: int, e: float) -> None:
        """Override the coefficient of restitution for bodies i and j (j = -1 - k for wall k)."""
        e = _restitution("pair restitution", e)
        self._pair_restitution[self._override_key(i, j)] = e

    def set_pair_friction(self, i: int, j: int, static: float, kinetic: float | None = None) -> None:
        """Override the friction coefficients (mu_s, mu_k; default mu_k = mu_s) for bodies i and j (j = -1 - k
        for wall k)."""
        self._pair_friction[self._override_key(i, j)] = _friction_pair("pair ", static, kinetic)
        self._materials_changed()

    def _override_key(self, i: int, j: int) -> int:
        """The pair key of bodies i, j (j = -1 - k: wall k), both checked."""
        for name, x in (("i", i), ("j", j)):
            if not isinstance(x, int | np.integer):
                raise ValueError(f"{name} must be an integer id, got {x!r}")
        if not 0 <= i < self.bodies.n:
            raise ValueError(f"i must be a body id in [0, {self.bodies.n}), got {i!r}")
        if j >= 0:
            if not 0 <= j < self.bodies.n or j == i:
                raise ValueError(f"j must be another body id in [0, {self.bodies.n}) or -1 - wall, got {j!r}")
        elif -1 - j >= self.walls.n:
            raise ValueError(f"j = {j} names wall {-1 - j}, but there are {self.walls.n} walls")
        return int(pair_key(int(i), int(j)))

    def pair_restitution_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted keys and values of the pair overrides, for kernels."""
        keys = np.array(sorted(self._pair_restitution), dtype=np.int64)
        return keys, np.array([self._pair_restitution[k] for k in keys], dtype=np.float64)

    def pair_friction_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted keys and (p, 2) values (mu_s, mu_k) of the pair friction overrides, for kernels."""
        keys = np.array(sorted(self._pair_friction), dtype=np.int64)
        return keys, np.array([self._pair_friction[k] for k in keys], dtype=np.float64).reshape(len(keys), 2)

    def has_friction(self) -> bool:
        """Whether any contact may carry friction, rolling resistance or spinning friction."""
        b, n = self.bodies, self.bodies.n
        return bool(np.any(b.static_friction[:n]) or np.any(b.rolling_resistance[:n])
                    or np.any(b.spinning_friction[:n])
                    or np.any(self.walls.static_friction)
                    or any(mu_s for mu_s, _ in self._pair_friction.values()))  # fmt: skip

    def on_impact(self, callback: Callable[[Impact], None]) -> None:
        """Call ``callback(impact)`` for every impact, in time order, after it is resolved."""
        if not callable(callback):
            raise ValueError(f"on_impact needs a callable, got {callback!r}")
        self._impact_callbacks.append(callback)

    def remove_impact_callback(self, callback: Callable[[Impact], None]) -> None:
        """Stop calling ``callback`` (given to `on_impact`); nothing happens if it is not registered."""
        if callback in self._impact_callbacks:
            self._impact_callbacks.remove(callback)

    def _bodies_changed(self) -> None:
        """Hook for engines that cache derived structures."""

    def _materials_changed(self) -> None:
        """Hook for engines that cache how coefficients combine (a pair override changed)."""

    def _emit_impacts(self, log: dict[str, np.ndarray], count: int) -> None:
        if not self._impact_callbacks:
            return
        tangential = log.get("tangential")
        points = log.get("point")
        for a in range(count):
            impact = Impact(
                time=float(log["time"][a]),
                i=int(log["i"][a]),
                j=int(log["j"][a]),
                normal=log["normal"][a].copy(),
                impulse=float(log["impulse"][a]),
                approach_speed=float(log["approach_speed"][a]),
                restitution=float(log["restitution"][a]),
                tangential_impulse=None if tangential is None else tangential[a].copy(),
                point=None if points is None else points[a].copy(),
            )
            for callback in self._impact_callbacks:
                callback(impact)

    # ----------------------------------------------------------------- state views
    @property
    def n_bodies(self) -> int:
        return self.bodies.n

    @property
    def names(self) -> tuple[str, ...]:
        """Each body's name, indexed by id; "" for a body given none."""
        n = self.bodies.n
        return (*self._names[:n], *[""] * (n - len(self._names)))

    @property
    def positions(self) -> np.ndarray:
        """(n, dim) m, indexed by id (a view: do not write to it)."""
        return self.bodies.position[: self.bodies.n]

    @property
    def velocities(self) -> np.ndarray:
        """(n, dim) m/s, indexed by id (a view)."""
        return self.bodies.velocity[: self.bodies.n]

    @property
    def masses(self) -> np.ndarray:
        """(n,) kg; +inf for a fixed body given no mass."""
        return self.bodies.mass[: self.bodies.n]

    @property
    def radii(self) -> np.ndarray:
        """(n,) m: a sphere's or disk's radius, a polygon's circumradius (its bounding radius)."""
        return self.bodies.radius[: self.bodies.n]

    @property
    def shapes(self) -> np.ndarray:
        """(n,) str, indexed by id: "sphere" (3D) or "disk" (2D), or "polygon"."""
        polygon = self.bodies.shape[: self.bodies.n] == SHAPE_POLYGON
        return np.where(polygon, "polygon", "sphere" if self.dim == 3 else "disk")

    @property
    def has_polygons(self) -> bool:
        """Whether any body is a polygon."""
        return bool(np.any(self.bodies.shape[: self.bodies.n] == SHAPE_POLYGON))

    def polygon_table(self) -> PolygonTable:
        """Every polygon's outline, for the kernels (`carom.narrowphase.polygons.PolygonTable`, a disk having
        none), kept until bodies are added."""
        n = self.bodies.n
        if self._polygons is None or len(self._polygons.start) != n + 1:  # (adding bodies changes n)
            self._polygons = polygon_table(self._outlines_of(n))
        return self._polygons

    def polygon_vertices(self, body: int) -> np.ndarray:
        """(k, 2) m: polygon ``body``'s vertices now, in the world frame, counter-clockwise (a new array)."""
        if not isinstance(body, int | np.integer) or not 0 <= body < self.bodies.n:
            raise ValueError(f"body must be a body id in [0, {self.bodies.n}), got {body!r}")
        if self.bodies.shape[body] != SHAPE_POLYGON:
            raise ValueError(f"body {body} is a {self.shapes[body]}, not a polygon: it has no vertices")
        return self._placed_outline(int(body))

    def _placed_outline(self, i: int) -> np.ndarray:
        """Polygon i's vertices (m) in the world frame: its position + R(angle) (each vertex about its centroid)."""
        return placed_vertices(self._outlines[i], self.bodies.orientation[i, 0], self.bodies.position[i])

    def _outline_pose(self, i: int) -> _Outline:
        """Body i's shape and pose, for the overlap checks."""
        b = self.bodies
        outline = self._outlines[i] if b.shape[i] == SHAPE_POLYGON else None
        return _Outline(outline, b.position[i], float(b.orientation[i, 0]), float(b.radius[i]))

    @property
    def active(self) -> np.ndarray:
        """(n,) bool: False for a body merged into another."""
        return self.bodies.active[: self.bodies.n]

    @property
    def fixed(self) -> np.ndarray:
        """(n,) bool: True for bodies of infinite inertial mass."""
        return self.bodies.fixed[: self.bodies.n]

    @property
    def restitutions(self) -> np.ndarray:
        return self.bodies.restitution[: self.bodies.n]

    @property
    def angular_velocities(self) -> np.ndarray:
        """Angular velocities (rad/s), indexed by id: (n, 3) in 3D, (n,) in 2D (counter-clockwise +). A view."""
        w = self.bodies.angular_velocity[: self.bodies.n]
        return w if self.dim == 3 else w[:, 0]

    @property
    def angles(self) -> np.ndarray:
        """(n,) rad, indexed by id, counter-clockwise: each body's angle in a 2D world (the same array as
        `orientations`; a view). A 3D world has none: its orientations are quaternions."""
        if self.dim != 2:
            raise ValueError("angles are the orientations of a 2D world; a 3D world's are quaternions: use "
                             "orientations")  # fmt: skip
        return self.orientations

    @property
    def orientations(self) -> np.ndarray:
        """Orientations, indexed by id: (n, 4) unit quaternions (w, x, y, z) rotating the body frame into the
        world frame in 3D; (n,) angles (rad) in 2D. A view."""
        q = self.bodies.orientation[: self.bodies.n]
        return q if self.dim == 3 else q[:, 0]

    @property
    def inertias(self) -> np.ndarray:
        """(n,) kg m^2 about each centre; inf for fixed bodies."""
        inv = self.bodies.inv_inertia[: self.bodies.n]
        return np.divide(1.0, inv, out=np.full(len(inv), np.inf), where=inv > 0)

    # ----------------------------------------------------------------- diagnostics
    def _movable(self) -> np.ndarray:
        return self.active & ~self.fixed

    def kinetic_energy(self) -> float:
        """Translational + rotational kinetic energy (J) of active, non-fixed bodies."""
        m = self._movable()
        b = self.bodies
        n = b.n
        ke = 0.5 * np.sum(b.mass[:n][m] * np.sum(b.velocity[:n][m] ** 2, axis=1))
        w2 = np.sum(b.angular_velocity[:n][m] ** 2, axis=1)
        spin = w2 > 0
        if np.any(spin):
            ke += 0.5 * np.sum(w2[spin] / b.inv_inertia[:n][m][spin])
        return float(ke)

    def potential_energy(self) -> float:
        """Potential energy (J) of uniform gravity (zero at the origin) plus every conservative force."""
        m = self._movable()
        pe = -float(np.sum(self.masses[m] * (self.positions[m] @ self.gravity)))
        for force in getattr(self, "forces", ()):
            pe += force.potential_energy(self)
        return pe

    def total_energy(self) -> float:
        return self.kinetic_energy() + self.potential_energy()

    def momentum(self) -> np.ndarray:
        """Total linear momentum (kg m/s) of active, non-fixed bodies."""
        m = self._movable()
        return np.sum(self.masses[m][:, None] * self.velocities[m], axis=0)

    def angular_momentum(self, origin=None) -> np.ndarray | float:
        """Angular momentum (kg m^2/s) about ``origin`` (default 0) of active, non-fixed bodies, orbital +
        spin: a 3-vector in 3D, the z component (a float) in 2D."""
        m = self._movable()
        o = np.zeros(self.dim) if origin is None else as_vector("origin", origin, self.dim)
        r = self.positions[m] - o
        p = self.masses[m][:, None] * self.velocities[m]
        b = self.bodies
        w = b.angular_velocity[: b.n][m]
        inertia = np.divide(1.0, b.inv_inertia[: b.n][m], out=np.zeros(int(m.sum())), where=w.any(axis=1))
        if self.dim == 3:
            return np.sum(np.cross(r, p), axis=0) + np.sum(inertia[:, None] * w, axis=0)
        return float(np.sum(r[:, 0] * p[:, 1] - r[:, 1] * p[:, 0]) + np.sum(inertia * w[:, 0]))

    def center_of_mass(self) -> np.ndarray:
        m = self._movable()
        return np.average(self.positions[m], axis=0, weights=self.masses[m])

    # ----------------------------------------------------------------- scenes
    def to_scene(self, until: float, dt: float | None = None, *, every: float | None = None):
        """This world as a `carom.Scene` (`Scene.save` writes it as a scene file) that runs from the world's
        present time to ``until`` (s) in steps of ``dt`` (s; `World` only), a frame every ``every`` s (default
        (until - time) / 200). `Scene.build` gives a world with the same bodies, walls, forces and settings,
        every number the same to the bit. Raises ValueError naming what a scene cannot say (a `Thrust`
        with a callable force, a merged body, a force class of your own)."""
        from .scenefile import scene_of  # (a higher layer: scenes are built from worlds)

        return scene_of(self, until, dt, every)

