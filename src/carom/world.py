"""`World`: the time-stepped engine. ``step()`` is the pipeline.

One step of length dt (kick-drift-kick leapfrog, written as velocity Verlet):

1. **forces** — every force is evaluated at the state at the start of the step, before anything moves:
   ``a0 = g + F(x0, v0, t) / m`` (cached from the previous step's end when nothing changed since).
2. **drift with impacts** — every body follows the parabola ``x0 + v0 t + a t^2 / 2`` with
   ``a = a0 + a_contact`` (resting-contact forces), and every impact is resolved at the instant it
   happens, contacts touching at that instant solved together in rounds (`carom.integrate`). Uniform
   gravity is thus integrated exactly, whatever dt.
3. **projection** — overlaps beyond the contact tolerance (left by resting contacts whose geometry changed
   within the step) are removed by moving positions only: velocities, hence kinetic energy, are untouched.
4. **kick** — forces at the new state ``a1``; ``v += (a1 - a0) dt / 2`` (leapfrog). For uniform gravity
   ``a1 = a0`` and the step is exact; for other forces the scheme is symplectic and second order.
   ``integrator="euler"`` skips this kick (first order: forces held at their start-of-step value).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numba import njit

from . import broadphase
from .config import DEFAULT, INTEGRATORS, Config
from .forces import Force
from .integrate import REBUILD, _drift, _slack, _wall_slack
from .model import Model, _number
from .solver import RULE_CODES


class ContactWarning(UserWarning):
    """Issued when the contacts at one instant needed more rounds than ``Config.max_rounds``."""


class World(Model):
    """A time-stepped world of spheres (dim=3) or disks (dim=2) with exact impacts, forces and walls.

    >>> w = World(dim=3, gravity=(0, 0, -9.81))
    >>> ball = w.add_body(position=(0, 0, 1), mass=1.0, radius=0.1, restitution=0.5)
    >>> _ = w.add_wall(point=(0, 0, 0), normal=(0, 0, 1))
    >>> w.run(until=0.5, dt=0.01)
    >>> w.collision_count
    1
    """

    def __init__(
        self,
        dim: int = 3,
        gravity=None,
        *,
        restitution_rule: str = "min",
        impact_mode: str = "bounce",
        integrator: str = "leapfrog",
        config: Config = DEFAULT,
    ):
        super().__init__(dim, gravity, restitution_rule=restitution_rule, impact_mode=impact_mode, config=config)
        if integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
        self.integrator = integrator
        self.forces: list[Force] = []
        self._a0: np.ndarray | None = None
        #: Events processed by the drift (impacts, resting contacts made, predictions that came to nothing).
        self.event_count = 0
        self._log = _empty_log(dim, config.impact_log_capacity)

    def add_force(self, force: Force) -> Force:
        """Add a force (`NBodyGravity`, `Atmosphere`, `Thrust`, or a `Force` subclass)."""
        if not isinstance(force, Force):
            raise ValueError(f"add_force needs a carom force (NBodyGravity, Atmosphere, Thrust), got {force!r}")
        force.bind(self)
        self.forces.append(force)
        self._a0 = None
        return force

    def _bodies_changed(self) -> None:
        self._a0 = None

    # ----------------------------------------------------------------- stepping
    def step(self, dt: float) -> None:
        """Advance by exactly ``dt`` seconds."""
        dt = _number("dt", dt)
        if not dt > 0:
            raise ValueError(f"dt must be > 0, got {dt!r}")
        self._step(dt)
        self.time += dt

    def run(self, until: float, dt: float) -> None:
        """Advance to exactly ``until`` (s) in steps of ``dt``; the last step is shortened if needed."""
        until = _number("until", until)
        dt = _number("dt", dt)
        if not dt > 0:
            raise ValueError(f"dt must be > 0, got {dt!r}")
        if until < self.time:
            raise ValueError(f"until must be >= the current time {self.time!r}, got {until!r}")
        while self.time < until:
            h = until - self.time
            if h > dt * (1.0 + 1e-9):
                self._step(dt)
                self.time += dt
            else:
                self._step(h)
                self.time = until

    def _smooth_accel(self, t: float) -> np.ndarray:
        """Acceleration (m/s^2) of every body from uniform gravity and all forces; 0 for fixed bodies."""
        n = self.n_bodies
        acc = np.zeros((n, self.dim))
        acc[:] = self.gravity
        for force in self.forces:
            force.accelerate(self, t, acc)
        acc[~self._movable()] = 0.0
        return acc

    def _step(self, dt: float) -> None:
        b = self.bodies
        n = b.n
        if n == 0:
            return
        a0 = self._a0 if self._a0 is not None else self._smooth_accel(self.time)
        a_smooth = a0.copy()  # merges inside the drift rewrite rows of this copy
        a_total = np.empty_like(a0)
        cfg = self.config
        keys, values = self.pair_restitution_arrays()
        x, v = b.position[:n], b.velocity[:n]
        motion = np.empty(n)
        v_scale, a_scale = _motion_bounds(v, a0, b.radius[:n], self._movable(), dt, cfg.contact_tolerance, motion)
        v_scale = max(v_scale, a_scale * dt)
        a_scale = max(a_scale, v_scale / dt)
        speed_tol = cfg.speed_tolerance * v_scale
        log_enabled = bool(self._impact_callbacks)
        t_sub = 0.0
        capped = False
        while True:
            start, nbrs, margin, large = broadphase.candidates(x, b.radius[:n], b.active[:n], motion, cfg.sweep_safety)
            out = _drift(
                x, v, a_smooth, a_total, b.inv_mass[:n], b.mass[:n], b.radius[:n], b.restitution[:n],
                b.inv_inertia[:n], b.active[:n], start, nbrs, large, x.copy(), margin,
                self.walls.point, self.walls.normal, self.walls.restitution, RULE_CODES[self.restitution_rule],
                keys, values, t_sub, dt, cfg.contact_tolerance, speed_tol, cfg.resting_speed, cfg.lcp_iterations,
                cfg.lcp_tolerance * v_scale, cfg.lcp_tolerance * a_scale, cfg.max_rounds, self.impact_mode == "merge",
                *self._log.values(), log_enabled,
            )  # fmt: skip
            t_sub, status, impacts, n_log = out[:4]
            self._log = dict(zip(self._log, out[4:11], strict=True))
            capped = capped or out[11]
            self.collision_count += int(impacts)
            self.event_count += int(out[12])
            if n_log:
                shifted = dict(self._log)
                shifted["time"] = self._log["time"][:n_log] + self.time
                self._emit_impacts(shifted, int(n_log))
            if status != REBUILD:
                break
            _motion_bounds(v, a0, b.radius[:n], self._movable(), dt - t_sub, cfg.contact_tolerance, motion)
        if capped:
            warnings.warn(
                f"contacts at one instant needed more than Config.max_rounds={cfg.max_rounds} rounds near "
                f"t={self.time:.9g} s; the rest were solved as one perfectly inelastic system",
                ContactWarning,
                stacklevel=3,
            )
        _project(x, b.inv_mass[:n], b.radius[:n], b.active[:n], start, nbrs, self.walls.point, self.walls.normal,
                 cfg.contact_tolerance, cfg.projection_iterations)  # fmt: skip
        if self.integrator == "leapfrog" and self.forces:
            a1 = self._smooth_accel(self.time + dt)
            v += 0.5 * dt * (a1 - a_smooth)
            self._a0 = a1
        else:
            self._a0 = a_smooth if not self.forces else None

    # ----------------------------------------------------------------- state for exact restart
    def get_state(self) -> dict:
        """Everything needed to continue this run exactly: time, counters and every body array."""
        if self._a0 is None:
            self._a0 = self._smooth_accel(self.time)
        return {
            "time": self.time,
            "collision_count": self.collision_count,
            "event_count": self.event_count,
            # the forces at the start of the next step (leapfrog reuses the last step's end-of-step value)
            "smooth_acceleration": self._a0.copy(),
            **self.bodies.snapshot(),
        }

    def set_state(self, state: dict) -> None:
        """Restore a state from `get_state` (same scene: walls and forces are not part of it)."""
        scalars = ("time", "collision_count", "event_count", "smooth_acceleration")
        self.bodies.restore({k: np.asarray(v) for k, v in state.items() if k not in scalars})
        self.time = float(state["time"])
        self.collision_count = int(state["collision_count"])
        self.event_count = int(state.get("event_count", 0))
        a0 = state.get("smooth_acceleration")
        self._a0 = None if a0 is None else np.array(a0, dtype=float).reshape(self.n_bodies, self.dim)


@njit(cache=True)
def _motion_bounds(v, a0, radius, movable, h, tol, out):
    """Every body's displacement bound (m) over h (s), ``|v| h + |a0| h^2 / 2 + tol R``, into ``out``.
    Returns the largest speed (m/s) of a movable body and the largest acceleration ``|a0|`` (m/s^2)."""
    v_max = 0.0
    a_max = 0.0
    for b in range(len(out)):
        vv = 0.0
        aa = 0.0
        for d in range(v.shape[1]):
            vv += v[b, d] * v[b, d]
            aa += a0[b, d] * a0[b, d]
        speed = math.sqrt(vv)
        accel = math.sqrt(aa)
        out[b] = speed * h + 0.5 * accel * h * h
        out[b] += tol * radius[b]
        if movable[b]:
            v_max = max(v_max, speed)
        a_max = max(a_max, accel)
    return v_max, a_max


def _empty_log(dim: int, capacity: int) -> dict[str, np.ndarray]:
    return {
        "time": np.empty(capacity),
        "i": np.empty(capacity, dtype=np.int64),
        "j": np.empty(capacity, dtype=np.int64),
        "normal": np.empty((capacity, dim)),
        "impulse": np.empty(capacity),
        "approach_speed": np.empty(capacity),
        "restitution": np.empty(capacity),
    }


@njit(cache=True)
def _project(x, inv_mass, radius, active, start, nbrs, wall_p, wall_n, tol, iterations):
    """Remove overlaps deeper than the contact tolerance by moving positions along contact normals,
    shared in inverse proportion to mass (Jacobi sweeps, averaged per body). Velocities are untouched."""
    n, dim = x.shape
    shift = np.zeros((n, dim))
    count = np.zeros(n)
    for _ in range(iterations):
        shift[:] = 0.0
        count[:] = 0.0
        worst = 0.0
        for i in range(n):
            if not active[i]:
                continue
            for m in range(start[i], start[i + 1]):
                j = nbrs[m]
                if j <= i or not active[j]:
                    continue
                w = inv_mass[i] + inv_mass[j]
                if w == 0.0:
                    continue
                s = radius[i] + radius[j]
                dist2 = 0.0
                for d in range(dim):
                    dist2 += (x[j, d] - x[i, d]) ** 2
                if dist2 >= (s - _slack(i, j, x, radius, tol)) ** 2 or dist2 == 0.0:
                    continue
                dist = math.sqrt(dist2)
                depth = s - dist
                worst = max(worst, depth / s)
                for d in range(dim):
                    nd = (x[j, d] - x[i, d]) / dist
                    shift[i, d] -= depth * inv_mass[i] / w * nd
                    shift[j, d] += depth * inv_mass[j] / w * nd
                count[i] += 1.0
                count[j] += 1.0
            if inv_mass[i] != 0.0:
                for k in range(wall_p.shape[0]):
                    gap = -radius[i]
                    for d in range(dim):
                        gap += (x[i, d] - wall_p[k, d]) * wall_n[k, d]
                    if gap < -_wall_slack(i, k, x, radius, wall_p, tol):
                        worst = max(worst, -gap / radius[i])
                        for d in range(dim):
                            shift[i, d] -= gap * wall_n[k, d]
                        count[i] += 1.0
        if worst == 0.0:
            return
        for i in range(n):
            if count[i] > 0.0:
                for d in range(dim):
                    x[i, d] += shift[i, d] / count[i]
