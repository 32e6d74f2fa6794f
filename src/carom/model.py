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

from .config import DEFAULT, IMPACT_MODES, RESTITUTION_RULES, ROUNDOFF, Config
from .materials import pair_key
from .narrowphase.spheres import touch_slacks
from .shapes import ball_inertia_factor
from .state import BodyState, WallState


@dataclass(frozen=True)
class Impact:
    """One resolved impact. ``j = -1 - k`` for wall ``k``. ``normal`` points from body i towards body
    j (for a wall: the wall's normal, away from the wall). ``impulse`` (N s) is the magnitude of the
    normal impulse; ``approach_speed`` (m/s) the normal approach speed before it."""

    time: float
    i: int
    j: int
    normal: np.ndarray
    impulse: float
    approach_speed: float
    restitution: float


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


def _restitution(field: str, value) -> float:
    e = as_number(field, value)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"{field} must be in [0, 1], got {value!r}")
    return e


class Model:
    """Bodies (spheres in 3D, disks in 2D), walls and the impact model shared by both engines."""

    def __init__(
        self,
        dim: int = 3,
        gravity=None,
        *,
        restitution_rule: str = "min",
        impact_mode: str = "bounce",
        config: Config = DEFAULT,
    ):
        if dim not in (2, 3):
            raise ValueError(f"dim must be 2 or 3, got {dim!r}")
        if restitution_rule not in RESTITUTION_RULES:
            raise ValueError(f"restitution_rule must be one of {RESTITUTION_RULES}, got {restitution_rule!r}")
        if impact_mode not in IMPACT_MODES:
            raise ValueError(f"impact_mode must be one of {IMPACT_MODES}, got {impact_mode!r}")
        if not isinstance(config, Config):
            raise ValueError(f"config must be a carom.Config, got {config!r}")
        self.dim = dim
        self.gravity = np.zeros(dim) if gravity is None else as_vector("gravity", gravity, dim)
        self.restitution_rule = restitution_rule
        self.impact_mode = impact_mode
        self.config = config
        self.time = 0.0
        self.collision_count = 0
        self.bodies = BodyState(dim)
        self.walls = WallState(dim)
        self._pair_restitution: dict[int, float] = {}
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
    ) -> int:
        """Add a sphere (3D) or disk (2D); return its id (stable for the world's life).

        ``fixed=True``: infinite inertial mass, unmoved by impacts and forces (it keeps its velocity, 0
        by default); its ``mass``, if given, still attracts other bodies under `NBodyGravity`.
        """
        ids = self.add_bodies(
            [position],
            velocities=None if velocity is None else [velocity],
            masses=None if mass is None else [mass],
            radii=[radius],
            restitution=restitution,
            fixed=fixed,
            drag_coefficient=drag_coefficient,
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
        _single: bool = False,
    ) -> np.ndarray:
        """Add many bodies at once (arrays of shape (k, dim) / (k,), or scalars broadcast); return ids.

        All are validated and checked for overlaps (with each other, earlier bodies and walls) before any
        is stored: either all are added or none.
        """
        dim = self.dim
        pos = np.asarray(positions, dtype=float)
        if pos.ndim != 2 or pos.shape[1] != dim:
            raise ValueError(f"position must have {dim} components (dim={dim}), got shape {pos.shape}")
        k = len(pos)

        def field(name, index):
            return name if _single else f"{name}[{index}]"

        def per_body(name, value, *, allow_inf=False):
            arr = np.broadcast_to(np.asarray(value, dtype=float), (k,)) if value is not None else None
            if arr is None:
                return None
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

        self._check_overlaps(pos, rad, _single)
        inertia_factor = ball_inertia_factor(dim)
        ids = np.empty(k, dtype=np.int64)
        for a in range(k):
            inv_m = 0.0 if fix[a] else 1.0 / mass[a]
            ids[a] = self.bodies.append(
                position=pos[a],
                velocity=vel[a],
                mass=mass[a],
                inv_mass=inv_m,
                radius=rad[a],
                restitution=rest[a],
                drag_coefficient=cd[a],
                inv_inertia=inv_m / (inertia_factor * rad[a] ** 2),
                fixed=fix[a],
            )
        self._bodies_changed()
        return ids

    def _check_overlaps(self, pos: np.ndarray, rad: np.ndarray, single: bool) -> None:
        tol = self.config.contact_tolerance
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
                f"{-gap[a]:.6g} m; bodies may touch but not overlap"
            )

    def add_wall(self, point, normal, restitution: float = 1.0) -> int:
        """Add an infinite plane through ``point``; bodies live on the side ``normal`` points to."""
        p = as_vector("wall point", point, self.dim)
        nv = as_vector("wall normal", normal, self.dim)
        length = float(np.linalg.norm(nv))
        if not length > 0:
            raise ValueError(f"wall normal must have non-zero length, got {normal!r}")
        e = _restitution("wall restitution", restitution)
        nv = nv / length
        b = self.bodies
        live = np.flatnonzero(b.active[: b.n])
        gap = (b.position[live] - p) @ nv - b.radius[live]
        bad = np.flatnonzero(gap < -self.config.contact_tolerance * b.radius[live])
        if len(bad):
            i = live[bad[0]]
            raise ValueError(
                f"wall (point {p.tolist()}, normal {nv.tolist()}) would overlap body {i} at position "
                f"{b.position[i].tolist()} with radius {b.radius[i]}"
            )
        k = self.walls.append(p, nv, e)
        self._bodies_changed()
        return k

    def add_box(self, lower, upper, restitution: float = 1.0) -> list[int]:
        """Add the inward-facing walls of an axis-aligned box (six in 3D, four in 2D); return their ids."""
        lo = as_vector("box lower", lower, self.dim)
        hi = as_vector("box upper", upper, self.dim)
        for axis in range(self.dim):
            if not lo[axis] < hi[axis]:
                raise ValueError(f"box lower must be below upper on every axis, got lower={lower!r} upper={upper!r}")
        _restitution("box restitution", restitution)
        b = self.bodies
        live = np.flatnonzero(b.active[: b.n])
        tol = self.config.contact_tolerance
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
            ids.append(self.add_wall(lo, normal, restitution))
            ids.append(self.add_wall(hi, -normal, restitution))
        return ids

    def set_pair_restitution(self, i: int, j: int, e: float) -> None:
        """Override the coefficient of restitution for bodies i and j (j = -1 - k for wall k)."""
        e = _restitution("pair restitution", e)
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
        self._pair_restitution[int(pair_key(int(i), int(j)))] = e

    def pair_restitution_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted keys and values of the pair overrides, for kernels."""
        keys = np.array(sorted(self._pair_restitution), dtype=np.int64)
        return keys, np.array([self._pair_restitution[k] for k in keys], dtype=np.float64)

    def on_impact(self, callback: Callable[[Impact], None]) -> None:
        """Call ``callback(impact)`` for every impact, in time order, after it is resolved."""
        if not callable(callback):
            raise ValueError(f"on_impact needs a callable, got {callback!r}")
        self._impact_callbacks.append(callback)

    def _bodies_changed(self) -> None:
        """Hook for engines that cache derived structures."""

    def _emit_impacts(self, log: dict[str, np.ndarray], count: int) -> None:
        if not self._impact_callbacks:
            return
        for a in range(count):
            impact = Impact(
                time=float(log["time"][a]),
                i=int(log["i"][a]),
                j=int(log["j"][a]),
                normal=log["normal"][a].copy(),
                impulse=float(log["impulse"][a]),
                approach_speed=float(log["approach_speed"][a]),
                restitution=float(log["restitution"][a]),
            )
            for callback in self._impact_callbacks:
                callback(impact)

    # ----------------------------------------------------------------- state views
    @property
    def n_bodies(self) -> int:
        return self.bodies.n

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
