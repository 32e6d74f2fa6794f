"""What both engines share: bodies, walls, restitution rules, validation, impacts and diagnostics.

`World` (time-stepped) and `EventWorld` (event-driven) subclass `Model`; everything a user adds to a
world goes through here, so bad input is caught once, with a message that names the field and value,
before any kernel sees it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from .config import DEFAULT, FRICTION_RULES, IMPACT_MODES, RESTITUTION_RULES, ROUNDOFF, Config
from .materials import pair_key
from .narrowphase.spheres import touch_slacks
from .shapes import ball_inertia_factor
from .state import BodyState, WallState


@dataclass(frozen=True)
class Impact:
    """One resolved impact. ``j = -1 - k`` for wall ``k``. ``normal`` points from body i towards body
    j (for a wall: the wall's normal, away from the wall). ``impulse`` (N s) is the magnitude of the
    normal impulse; ``approach_speed`` (m/s) the normal approach speed before it. ``tangential_impulse``
    (N s, a vector in the contact plane) is the friction impulse on body j (body i receives its opposite):
    zero between smooth bodies."""

    time: float
    i: int
    j: int
    normal: np.ndarray
    impulse: float
    approach_speed: float
    restitution: float
    tangential_impulse: np.ndarray = None

    def __post_init__(self):
        if self.tangential_impulse is None:
            object.__setattr__(self, "tangential_impulse", np.zeros_like(self.normal))


def as_number(field: str, value, *, allow_inf: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{field} must be a number, got {value!r}") from None
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise ValueError(f"{field} must be finite, got {value!r}")
    return x


def as_vector(field: str, value, dim: int) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{field} must be a vector of {dim} numbers, got {value!r}") from None
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
        angular_velocity=None,
        inertia: float | None = None,
        name: str | None = None,
    ) -> int:
        """Add a sphere (3D) or disk (2D); return its id (stable for the world's life).

        ``fixed=True``: infinite inertial mass and inertia, unmoved by impacts and forces (it keeps its
        velocity and angular velocity, 0 by default: a driven roller may spin); its ``mass``, if given,
        still attracts other bodies under `NBodyGravity`. Friction: ``static_friction`` mu_s >= 0,
        ``kinetic_friction`` mu_k in [0, mu_s] (default mu_s), ``rolling_resistance`` mu_r >= 0 (the normal
        force acts mu_r R ahead of the contact point). ``angular_velocity`` (rad/s): a 3-vector in 3D, a
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
        angular_velocities=None,
        inertias=None,
        names=None,
        _single: bool = False,
    ) -> np.ndarray:
        """Add many bodies at once (arrays of shape (k, dim) / (k,), or scalars broadcast); return ids.

        ``angular_velocities``: (k, 3) in 3D, (k,) in 2D. ``names``: k strings ("" or None: unnamed), each
        name unique in the world. All are validated and checked for overlaps (with
        each other, earlier bodies and walls) before any is stored: either all are added or none.
        """
        dim = self.dim
        pos = np.asarray(positions, dtype=float)
        if pos.ndim != 2 or pos.shape[1] != dim:
            raise ValueError(f"position must have {dim} components (dim={dim}), got shape {pos.shape}")
        k = len(pos)

        def field(name, index):
            return name if _single else f"{name}[{index}]"

        def per_body(name, value, *, allow_inf=False):
            if value is None:
                return None
            try:
                arr = np.broadcast_to(np.asarray(value, dtype=float), (k,))
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be a number or one per body ({k}), got {value!r}") from None
            for idx in np.flatnonzero(~(np.isfinite(arr) | (allow_inf & np.isinf(arr) & (arr > 0)))):
                raise ValueError(f"{field(name, idx)} must be finite, got {float(arr[idx])!r}")
            return arr

        for idx in np.flatnonzero(~np.all(np.isfinite(pos), axis=1)):
            raise ValueError(f"{field('position', idx)} must be finite, got {pos[idx].tolist()!r}")
        if velocities is None:
            vel = np.zeros((k, dim))
        else:
            vel = np.asarray(velocities, dtype=float)
            if vel.shape != (k, dim):
                raise ValueError(f"velocity must have {dim} components (dim={dim}), got shape {vel.shape}")
            for idx in np.flatnonzero(~np.all(np.isfinite(vel), axis=1)):
                raise ValueError(f"{field('velocity', idx)} must be finite, got {vel[idx].tolist()!r}")
        spin = self._angular_velocities(angular_velocities, k, field, _single)
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
        for name, arr in (("static_friction", mu_s), ("kinetic_friction", mu_k), ("rolling_resistance", mu_r)):
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
        self._check_overlaps(pos, rad, _single)
        inertia_factor = ball_inertia_factor(dim)
        ids = np.empty(k, dtype=np.int64)
        for a in range(k):
            inv_m = 0.0 if fix[a] else 1.0 / mass[a]
            if fix[a]:
                inv_i = 0.0
            elif inertia is None:
                inv_i = inv_m / (inertia_factor * rad[a] ** 2)
            else:
                inv_i = 1.0 / inertia[a]
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
                fixed=fix[a],
            )
        self._names.extend(labels)
        self._bodies_changed()
        return ids

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
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"angular_velocity must be numbers, got {value!r}") from None
        want = "a 3-vector (dim=3)" if rot == 3 else "a number (dim=2)"
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

    def _check_overlaps(self, pos: np.ndarray, rad: np.ndarray, single: bool) -> None:
        tol = self._overlap_slop
        b = self.bodies
        for k in range(self.walls.n):
            gap = (pos - self.walls.point[k]) @ self.walls.normal[k] - rad
            size = np.maximum(np.abs(pos).max(axis=1), np.abs(self.walls.point[k]).max())
            bad = np.flatnonzero(gap < -(tol * rad + ROUNDOFF * size))
            if len(bad):
                a = bad[0]
                where = "" if single else f"[{a}]"
                raise ValueError(
                    f"body{where} at position {pos[a].tolist()} with radius {rad[a]} overlaps wall {k} "
                    f"(point {self.walls.point[k].tolist()}, normal {self.walls.normal[k].tolist()}) "
                    f"by {-gap[a]:.6g} m: bodies must start inside (on the normal side of) every wall"
                )
        n = b.n
        old = np.flatnonzero(b.active[:n])
        all_pos = np.vstack([b.position[old], pos])
        all_rad = np.concatenate([b.radius[old], rad])
        if len(all_pos) < 2:
            return
        pairs = cKDTree(all_pos).query_pairs(2.0 * all_rad.max(), output_type="ndarray")
        pairs = pairs[pairs[:, 1] >= len(old)] if len(pairs) else pairs
        if not len(pairs):
            return
        p, q = pairs[:, 0], pairs[:, 1]
        sum_r = all_rad[p] + all_rad[q]
        gap = np.linalg.norm(all_pos[p] - all_pos[q], axis=1) - sum_r
        bad = np.flatnonzero(gap < -touch_slacks(all_rad[p], all_rad[q], all_pos[p], all_pos[q], tol))
        if len(bad):
            a = bad[np.argmin(gap[bad])]

            def name(x):
                if x < len(old):
                    return f"body {old[x]}"
                return "the new body" if single else f"new body [{x - len(old)}]"

            raise ValueError(
                f"{name(q[a])} (position {all_pos[q[a]].tolist()}, radius {all_rad[q[a]]}) overlaps "
                f"{name(p[a])} (position {all_pos[p[a]].tolist()}, radius {all_rad[p[a]]}) by "
                f"{-gap[a]:.6g} m; bodies may touch but not overlap (by more than {tol:g} of the smaller radius)"
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
        bad = np.flatnonzero(gap < -self._overlap_slop * b.radius[live])
        if len(bad):
            i = live[bad[0]]
            raise ValueError(
                f"wall (point {p.tolist()}, normal {nv.tolist()}) would overlap body {i} at position "
                f"{b.position[i].tolist()} with radius {b.radius[i]}"
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
            if np.any(x - r < lo - tol * r) or np.any(x + r > hi + tol * r):
                raise ValueError(
                    f"body {i} at position {x.tolist()} with radius {r} is not inside the box "
                    f"lower={lo.tolist()} upper={hi.tolist()}"
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
        """Whether any contact may carry friction or rolling resistance."""
        b, n = self.bodies, self.bodies.n
        return bool(np.any(b.static_friction[:n]) or np.any(b.rolling_resistance[:n])
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
        for a in range(count):
            tangential = log.get("tangential")
            impact = Impact(
                time=float(log["time"][a]),
                i=int(log["i"][a]),
                j=int(log["j"][a]),
                normal=log["normal"][a].copy(),
                impulse=float(log["impulse"][a]),
                approach_speed=float(log["approach_speed"][a]),
                restitution=float(log["restitution"][a]),
                tangential_impulse=None if tangential is None else tangential[a].copy(),
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
        """(n,) m."""
        return self.bodies.radius[: self.bodies.n]

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

