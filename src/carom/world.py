"""`World`: the time-stepped engine. ``step()`` is the pipeline.

One step of length dt (kick-drift-kick leapfrog, written as velocity Verlet):

1. **forces** — every force is evaluated at the state at the start of the step, before anything moves:
   ``a0 = g + F(x0, v0, t) / m`` (cached from the previous step's end when nothing changed since).
2. **drift with impacts** — every body follows the parabola ``x0 + v0 t + a t^2 / 2`` with
   ``a = a0 + a_contact`` (resting-contact forces), and every impact is resolved at the instant it
   happens, contacts touching at that instant solved together in rounds (`carom.step`). Uniform
   gravity is thus integrated exactly, whatever dt.
3. **projection** — overlaps deeper than ``Config.resting_gap`` (left by resting contacts, whose forces
   are held constant within the step) are removed by moving positions; the potential energy a push adds
   against the forces (a body lifted by its weight) is taken from the kinetic energy of the bodies moved,
   as far as they have it (`carom.contact.projection.pay_for_lift`), and no other velocity changes. A
   step with no force, no held contact and no overlap at its start leaves none (straight lines between
   exact impacts), and skips this scan.
4. **kick** — forces at the new state ``a1``; ``v += (a1 - a0) dt / 2`` (leapfrog). For uniform gravity
   ``a1 = a0`` and the step is exact; for other forces the scheme is symplectic and second order.
   ``integrator="euler"`` skips this kick (first order: forces held at their start-of-step value).
   ``integrator="ias15"`` replaces the whole step by an adaptive one of order 15 for spheres and disks, with
   every impact found exactly inside it (`carom.step.ias15`; `run` then needs no ``dt``).
5. **sleep** — islands of touching bodies that have rested on a support for ``Config.sleep_time`` fall
   asleep: left out of steps 2 and 3 until an awake body may reach them (`carom.step.sleep`).
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np

from . import broadphase
from .config import DEFAULT, IAS15_EPSILON, INTEGRATORS, ROUNDOFF, Config
from .contact.friction import Friction, new_friction_work
from .contact.log import new_log
from .contact.projection import kinetic_energy, pay_for_lift, project
from .errors import CRUSHED, REBUILD, STALLED, ContactError, ContactWarning, crushed_error
from .forces import Force, force_bodies, force_table
from .kinematics import motion_bounds, spin_all
from .materials import RULE_CODES, key_pairs
from .model import Model, as_number
from .step import ias15, rigid, sleep
from .step.drift import (
    Bodies,
    Candidates,
    Carried,
    Materials,
    Outcome,
    Settings,
    Walls,
    Work,
    carried_forces,
    clear_work,
    drift,
    fits,
    new_work,
    resolve_instant,
)
from .step.friction import clear_held
from .step.resting import VELOCITY_SINK_FRACTION, stall_tolerance

#: The most steps a run may take from time 0: ``dt`` must be at least ``max(|time|, |until|) / MAX_STEPS``.
#: Beyond it a run would not end in any useful time (a step takes microseconds at least), and the clock
#: loses resolution: at ``MAX_STEPS`` a step is still about 4500 units of round-off of the time (2^52 / 1e12),
#: while a step below one unit would leave the time unchanged and the run would never end.
MAX_STEPS = 1e12


def check_dt(dt, start: float, until: float) -> float:
    """A validated time step (s) for a run from ``start`` to ``until`` (s): > 0 and at least
    ``max(|start|, |until|) / MAX_STEPS``; ValueError naming ``dt`` and the limit otherwise."""
    dt = as_number("dt", dt)
    if not dt > 0:
        raise ValueError(f"dt must be > 0, got {dt!r}")
    smallest = max(abs(start), abs(until)) / MAX_STEPS
    if dt < smallest:
        raise ValueError(
            f"dt = {dt!r} s is too small for a run to t = {max(abs(start), abs(until))!r} s: it must be at least "
            f"that time / MAX_STEPS ({MAX_STEPS:g}) = {smallest:.3g} s (a longer run would never end, and the "
            f"clock could not advance by so small a step)"
        )
    return dt


#: A time within this fraction of ``dt`` of a step boundary is that boundary: round-off of ``t0 + k dt``
#: (a run to ``until = 0.3`` with steps of 0.1 ends at the boundary 3 * 0.1 = 0.30000000000000004).
GRID_TOLERANCE = 1e-9


def _boundary(origin: float, dt: float, k: int) -> float:
    """The k-th boundary (s) of the step grid ``t0 + k dt``, from the count (never accumulated)."""
    return origin + k * dt


#: The names `World.get_state` gives the fields of IAS15's memory (`carom.step.ias15.Radau`) it keeps.
_ADAPTIVE_FIELDS = {"adaptive_clock": "clock", "adaptive_b": "b", "adaptive_e": "e", "adaptive_b_done": "b_done",
                    "adaptive_e_done": "e_done", "adaptive_cx": "cx", "adaptive_cv": "cv"}  # fmt: skip


def _rows_in(rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(len(rows),) bool: whether each row of ``rows`` is also a row of ``others`` (the same bits)."""
    if len(others) == 0:
        return np.zeros(len(rows), dtype=bool)
    seen = {row.tobytes() for row in others}
    return np.array([row.tobytes() in seen for row in rows], dtype=bool)


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
        friction_rule: str = "geometric",
        impact_mode: str = "bounce",
        integrator: str = "leapfrog",
        epsilon: float | None = None,
        config: Config = DEFAULT,
    ):
        super().__init__(dim, gravity, restitution_rule=restitution_rule, friction_rule=friction_rule,
                         impact_mode=impact_mode, config=config)  # fmt: skip
        if integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
        self.integrator = integrator
        if epsilon is not None and integrator != "ias15":
            raise ValueError(f'epsilon applies to integrator="ias15" only, got epsilon={epsilon!r} with {integrator!r}')
        #: IAS15's tolerance (the error of a step relative to its accelerations); None for the other integrators.
        self.epsilon = None
        if integrator == "ias15":
            self.epsilon = as_number("epsilon", IAS15_EPSILON if epsilon is None else epsilon)
        if self.epsilon is not None and not 0.0 < self.epsilon < 1.0:
            raise ValueError(f"epsilon must be in (0, 1), got {epsilon!r}")
        self._radau: ias15.Radau | None = None  # IAS15's memory between steps (`_adaptive_radau`)
        self.forces: list[Force] = []
        self._a0: np.ndarray | None = None
        #: Resting-contact forces (N) at the end of the last step, the next step's warm start: pairs by key
        #: (`carom.materials.pair_key`, sorted), and a (n, walls) array.
        self._pair_force = (np.zeros(0, dtype=np.int64), np.zeros(0))
        self._wall_force = np.zeros((0, 0))
        self._walls_held = False  # whether any wall force is nonzero
        #: With friction, the friction force and torque (N, N m) of each held contact, their warm start:
        #: (q, 6) by the pair keys above (on body j), and (n, walls, 6) (on the body).
        self._held_friction = np.zeros((0, 6))
        self._held_wall_friction = np.zeros((0, 0, 6))
        #: Events processed by the drift (impacts, resting contacts made, predictions that came to nothing).
        self.event_count = 0
        self.step_count = 0  #: steps taken (a shortened last step of a run counts as one)
        self._grid: tuple[float, float, int] | None = None  # `step_grid`
        self._log = new_log(config.impact_log_capacity, dim)
        self._work: Work | None = None  # the drift's work arrays, kept between steps
        self._friction_work = self._no_friction_work = new_friction_work(0, 0, 0, 0)  # friction's, the same
        self._friction = None  # `_friction_model`
        # sleeping islands (`carom.step.sleep`): per body, whether asleep, how long it has been still (s) and
        # its island's label while asleep; the resting forces of sleeping bodies, kept for when they wake
        self._asleep = np.zeros(0, dtype=bool)
        self._sleepers = 0  # how many bodies sleep (so that a world with none pays nothing for sleeping)
        self._still_time = np.zeros(0)
        self._island = np.zeros(0, dtype=np.int64)
        self._islands_made = 0
        self._sleep_pairs = (np.zeros(0, dtype=np.int64), np.zeros(0))
        self._sleep_walls = np.zeros((0, 0))
        self._rest_reach = 0.0
        self._still_counted = False  # whether any still time may be nonzero
        self._rested = np.zeros(0, dtype=bool)  # polygon worlds: bodies held by a contact in the last step
        self._held_forces = rigid.HeldForces.empty()  # polygon worlds: the held solve's warm start

    def add_force(self, force: Force) -> Force:
        """Add a force (`NBodyGravity`, `Atmosphere`, `Thrust`, or a `Force` subclass)."""
        if not isinstance(force, Force):
            raise ValueError(f"add_force needs a carom force (NBodyGravity, Atmosphere, Thrust), got {force!r}")
        force.bind(self)
        self.forces.append(force)
        self._a0 = None
        self.wake()
        return force

    def _materials_changed(self) -> None:
        self._friction = None

    def _bodies_changed(self) -> None:
        self._a0 = None
        self._radau = None
        self._friction = None
        self._pair_force = (np.zeros(0, dtype=np.int64), np.zeros(0))
        self._held_friction = np.zeros((0, 6))
        self.wake()

    # ----------------------------------------------------------------- sleeping islands
    @property
    def _overlap_slop(self) -> float:
        """Overlap (a fraction of the smaller radius) that the projection leaves, and that bodies may have at
        the start: ``resting_gap``, the depth that contacts are held within (at least ``contact_tolerance``)."""
        return max(self.config.contact_tolerance, self.config.resting_gap)

    @property
    def sleeping(self) -> np.ndarray:
        """(n,) bool: the bodies asleep now (`carom.step.sleep`): at rest on a support, frozen until touched."""
        return self._sleep_state()[0].copy()

    def wake(self) -> None:
        """Wake every sleeping body. Call it after writing positions or velocities in place."""
        n = self.bodies.n
        self._asleep = np.zeros(n, dtype=bool)
        self._sleepers = 0
        self._still_time = np.zeros(n)
        self._island = np.full(n, -1, dtype=np.int64)
        self._sleep_pairs = (np.zeros(0, dtype=np.int64), np.zeros(0))

    def _sleep_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(asleep, still time), sized to the bodies (all awake after bodies were added)."""
        if len(self._asleep) != self.bodies.n:
            self.wake()
        return self._asleep, self._still_time

    def _nothing_moves(self) -> bool:
        """Whether every movable body sleeps and every other active body (fixed) is at rest."""
        movable = self._movable()
        if self._sleepers != np.count_nonzero(movable):
            return False
        others = self.active & ~movable
        n = self.bodies.n
        return not (np.any(self.bodies.velocity[:n][others]) or np.any(self.bodies.angular_velocity[:n][others]))

    def _sleep_allowed(self) -> bool:
        return math.isfinite(self.config.sleep_time) and not self.forces and self.impact_mode == "bounce"

    def _wake_islands(self, hit: np.ndarray) -> np.ndarray:
        """Wake the whole island of every body in ``hit`` (its velocity 0 as it slept). Returns the mask of
        the bodies woken."""
        woken = self._asleep & np.isin(self._island, np.unique(self._island[hit]))
        self._asleep[woken] = False
        self._sleepers -= int(np.count_nonzero(woken))
        self._still_time[woken] = 0.0
        self._island[woken] = -1
        return woken

    def _keep_sleeping_forces(self) -> None:
        """The resting forces of sleeping bodies (which the drift does not see) put back among those carried,
        the next step's warm start (without their friction: a woken island starts that from zero)."""
        asleep = self._asleep
        keys, values = self._sleep_pairs
        i, j = key_pairs(keys)
        keep = asleep[i] | asleep[j]
        if np.any(keep):
            all_keys = np.concatenate([self._pair_force[0], keys[keep]])
            order = np.argsort(all_keys, kind="stable")
            self._pair_force = (all_keys[order], np.concatenate([self._pair_force[1], values[keep]])[order])
            friction = np.concatenate([self._held_friction, np.zeros((np.count_nonzero(keep), 6))])
            self._held_friction = friction[order]
        if self._sleep_walls.shape == self._wall_force.shape:
            self._wall_force[asleep] = self._sleep_walls[asleep]
        self._walls_held = bool(np.any(self._wall_force))

    def _settle(self, lists: Candidates, awake: np.ndarray, dt: float) -> None:
        """After a step: how long each awake body has been still, and the islands that fall asleep."""
        if not self._sleep_allowed():
            if self._sleepers:
                self.wake()
            return
        if len(self._pair_force[0]) == 0 and not self._walls_held:  # nothing rests on anything: none can sleep
            if self._still_counted:
                self._still_time[:] = 0.0
                self._still_counted = False
            return
        self._still_counted = True
        b, n = self.bodies, self.bodies.n
        movable = self._movable()
        members = awake & movable
        ready = self._still_for_long(members, dt)
        if ready is None:
            return
        # islands over the sleeping bodies too: a group that comes to rest against a sleeping island joins it
        # (asleep apart, waking one would leave the other in its way)
        count, labels = sleep.islands(lists.start, lists.nbrs, b.position[:n], b.radius[:n],
                                      members | self._asleep, self._rest_reach)  # fmt: skip
        held = sleep.supported(n, movable, *self._pair_force, self._wall_force)
        if not self._fall_asleep(sleep.falling_asleep(labels, count, ready | self._asleep, held), labels, count):
            return
        keys, values = self._pair_force
        i, j = key_pairs(keys)
        mine = self._asleep[i] | self._asleep[j]
        self._sleep_pairs = (keys[mine], values[mine])
        self._sleep_walls = self._wall_force.copy()

    def _still_for_long(self, members: np.ndarray, dt: float) -> np.ndarray | None:
        """After a step: count how long each of ``members`` has been still (its speed, and its rim's from spin,
        at most ``sleep_speed``). Returns the mask of those still for ``sleep_time``, or None if none is."""
        cfg, b, n = self.config, self.bodies, self.bodies.n
        speed = np.linalg.norm(b.velocity[:n], axis=1)  # (and the rim's speed from spin)
        speed = np.maximum(speed, np.linalg.norm(b.angular_velocity[:n], axis=1) * b.radius[:n])
        self._still_time = np.where(members & (speed <= cfg.sleep_speed), self._still_time + dt, 0.0)
        ready = self._still_time >= cfg.sleep_time
        return ready if np.any(ready & members) else None

    def _fall_asleep(self, fall: np.ndarray, labels: np.ndarray, count: int) -> bool:
        """Put the bodies ``fall`` to sleep (velocity and spin 0), by island (``labels`` of ``count``
        islands). Returns whether any was awake."""
        if not np.any(fall & ~self._asleep):
            return False
        n = self.bodies.n
        self.bodies.velocity[:n][fall] = 0.0
        self.bodies.angular_velocity[:n][fall] = 0.0
        self._asleep |= fall
        self._sleepers = int(np.count_nonzero(self._asleep))
        self._island[fall] = labels[fall] + self._islands_made
        self._islands_made += count
        return True

    def _settle_planar(self, dt: float) -> None:
        """After a step of a world with polygons: how long each awake body has been still, and the islands that
        fall asleep. Islands are joined by the contacts that pushed in their last hold (the held solve's
        memory, of pairs whose bounding circles still touch), and supported by such a contact with a wall or a
        fixed body."""
        if not self._sleep_allowed():
            if self._sleepers:
                self.wake()
            return
        b, n = self.bodies, self.bodies.n
        asleep, _ = self._sleep_state()
        movable = self._movable()
        ready = self._still_for_long(b.active[:n] & movable & ~asleep, dt)
        if ready is None:
            return
        rows = rigid.held_rows(self._held_forces)
        i, j = rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64)
        x, size = b.position[:n], b.radius[:n]
        on_wall = j < 0
        other = np.maximum(j, 0)
        gap = np.linalg.norm(x[other] - x[i], axis=1) - size[i] - size[other]
        k, b_wall = -1 - j[on_wall], i[on_wall]
        gap[on_wall] = np.einsum("kd,kd->k", x[b_wall] - self.walls.point[k], self.walls.normal[k]) - size[b_wall]
        pushes = (rows[:, 4] > 0.0) & (gap <= rigid.STILL_MARGIN * size[i])  # (bounding circles: conservative)
        joined = pushes & ~on_wall & movable[i] & movable[other]
        count, labels = sleep.components(b.active[:n] & movable, i[joined], j[joined])
        held = np.zeros(n, dtype=bool)
        held[i[pushes & (on_wall | ~movable[other])]] = True
        held[other[pushes & ~on_wall & ~movable[i]]] = True
        self._fall_asleep(sleep.falling_asleep(labels, count, ready | asleep, held), labels, count)

    # ----------------------------------------------------------------- stepping
    def step(self, dt: float) -> None:
        """Advance by exactly ``dt`` seconds (at least ``|time| / MAX_STEPS``): the next step of the world's
        step grid when it is at a boundary of one with steps of ``dt`` (n calls give the bits of ``run(time +
        n dt, dt)``), else the first of a grid from the current time."""
        if self.integrator == "ias15":  # (adaptive: as many of its own steps as it takes)
            self.run(self.time + check_dt(dt, self.time, self.time))
            return
        dt = check_dt(dt, self.time, self.time)
        origin, k, on = self._grid_for(dt)
        if not on:
            origin, k = self.time, 0
        self._grid_step(origin, dt, k, _boundary(origin, dt, k), _boundary(origin, dt, k + 1))

    def run(self, until: float, dt: float | None = None, *, max_steps: int | None = None, exact: bool = True) -> None:
        """Advance to exactly ``until`` (s) in steps of ``dt`` (s, at least ``max(|time|, |until|) /
        MAX_STEPS``) on the world's step grid ``t0 + k dt`` (`step_grid`), whose boundaries are computed from
        the step count, never accumulated. Where a run stops on the grid (within ``GRID_TOLERANCE dt``) thus
        changes no bit of what follows: ``run(2.0, dt)`` gives the same bits as ``run(1.0, dt)`` then
        ``run(2.0, dt)`` when 1.0 is on the grid. An ``until`` off the grid shortens the last step to end
        there, and the next run goes on to the next boundary: such a stop splits one step in two (the same
        physics, not the same bits). ``exact=False``: never shorten a step, stop at the last boundary at or
        before ``until`` (the time may then be before it). ``max_steps``: stop after that many steps, on the
        grid (calling ``run`` again with the same ``until`` and ``dt`` continues it to the same bits), so a
        caller can do other work, or stop, between pieces of a long run.

        ``integrator="ias15"`` chooses its own steps: ``dt`` (optional) is only the first trial step. The run
        ends exactly at ``until``, its last step shortened; ``exact=False`` stops instead after the last step
        that ends at or before it (a recording's frames then look ahead with `peek`, and never change the run)."""
        until = as_number("until", until)
        if until < self.time:
            raise ValueError(f"until must be >= the current time {self.time!r}, got {until!r}")
        if max_steps is not None and not (isinstance(max_steps, int | np.integer) and max_steps >= 1):
            raise ValueError(f"max_steps must be an integer >= 1, got {max_steps!r}")
        if self.integrator == "ias15":
            self._run_adaptive(until, None if dt is None else check_dt(dt, self.time, until), max_steps, exact)
            return
        if dt is None:
            raise ValueError(f'dt is needed for integrator="{self.integrator}" (only "ias15" chooses its own steps)')
        dt = check_dt(dt, self.time, until)
        origin, k, on = self._grid_for(dt)
        tol = GRID_TOLERANCE * dt
        steps = 0
        while steps != max_steps:
            start, boundary = _boundary(origin, dt, k) if on else self.time, _boundary(origin, dt, k + 1)
            if boundary <= until + tol:  # (a boundary within round-off of until is that time)
                end = boundary
            elif exact and until - start > (tol if on else 0.0):
                end = until  # the last step, shortened
            else:
                break
            self._grid_step(origin, dt, k, start, end)
            k, on = (k + 1, True) if end == boundary else (k, False)
            steps += 1
        if on and abs(until - self.time) <= tol:
            self.time = until

    def peek(self, until: float, dt: float | None = None) -> World:
        """A copy of this world run on to ``until`` (s) in steps of ``dt``, the bits `run` would give; this
        world is left as it is (the copy calls no ``on_impact`` callback; a ``Thrust`` callable is called
        with the copy). A recording's frame between two steps is such a look ahead, so that frames never
        change the run."""
        callbacks, self._impact_callbacks = self._impact_callbacks, []
        try:
            ahead = copy.deepcopy(self)
        finally:
            self._impact_callbacks = callbacks
        ahead.run(until, dt)
        return ahead

    @property
    def step_grid(self) -> tuple[float, float, int] | None:
        """The step grid of the last step, ``(t0, dt, k)``: boundaries at ``t0 + j dt``, ``t0 + k dt`` the last
        at or before the time (which may be a run's ``until`` within round-off of it, or lie between it and
        the next after a shortened step). None before the first step."""
        return self._grid

    def _grid_for(self, dt: float) -> tuple[float, int, bool]:
        """The step grid that steps of ``dt`` go on from the current time: (t0, k, on), ``t0 + k dt`` the
        last boundary at or before the time and ``on`` whether the time is at it. The world's own grid while
        its steps are of ``dt`` and the time lies within its k-th step; else a new one from the time."""
        if self._grid is not None and self._grid[1] == dt:
            origin, _, k = self._grid
            tol = GRID_TOLERANCE * dt
            if abs(self.time - _boundary(origin, dt, k)) <= tol:
                return origin, k, True
            if _boundary(origin, dt, k) < self.time < _boundary(origin, dt, k + 1) - tol:
                return origin, k, False
        return self.time, 0, True

    def _start_time(self) -> float:
        """The time the next step starts from: the grid boundary the world is at (exactly, where a run's
        ``until`` is within round-off of it), or the time itself."""
        if self._grid is None:
            return self.time
        dt = self._grid[1]
        origin, k, on = self._grid_for(dt)
        return _boundary(origin, dt, k) if on else self.time

    def _grid_step(self, origin: float, dt: float, k: int, start: float, end: float) -> None:
        """One step from ``start`` to ``end`` (s) within the k-th step of the grid ``t0 + j dt``: of exactly
        dt between its boundaries, else of ``end - start`` (a shortened step, or the rest of one)."""
        self._grid = (origin, dt, k)
        boundary = _boundary(origin, dt, k + 1)
        self.time = start
        self._step(dt if start == _boundary(origin, dt, k) and end == boundary else end - start, end)
        self.time = end
        self.step_count += 1
        if end == boundary:
            self._grid = (origin, dt, k + 1)

    # ----------------------------------------------------------------- IAS15 (`carom.step.ias15`)
    def _run_adaptive(self, until: float, dt: float | None, max_steps: int | None, exact: bool) -> None:
        """`run` with ``integrator="ias15"``: adaptive steps to ``until``, each impact at its instant."""
        if self.has_polygons:
            raise ValueError('integrator="ias15" moves spheres and disks: a world with polygons needs "leapfrog"')
        b, n = self.bodies, self.bodies.n
        if n == 0 or until == self.time:
            self.time = until
            return
        radau = self._adaptive_radau(dt, until)
        table = force_table(self)
        left = math.inf if max_steps is None else max_steps
        start = self.time
        last_contact, stalled = math.nan, 0  # (contacts in a row at one instant)
        while left > 0:
            x, v, active = b.position[:n], b.velocity[:n], b.active[:n]
            contacts = ias15.new_contacts(b.radius[:n], b.inv_mass[:n], active, self.walls.point, self.walls.normal,
                                      self.config.contact_tolerance, self._speed_tolerance())  # fmt: skip
            budget = int(min(left, 2**62))
            if table is not None:
                status, t, steps, i, j = ias15.integrate(radau, table, force_bodies(self), contacts, x, v, self.time,
                                                         until, exact, self.epsilon, budget)  # fmt: skip
            else:
                g = float(np.linalg.norm(self.gravity))
                status, t, steps, i, j = ias15.integrate_python(radau, self._python_accel(x, v), contacts, x, v,
                                                                self.time, until, exact, self.epsilon, g,
                                                                budget)  # fmt: skip
            self.time = t
            self.step_count += steps
            left -= steps
            if status == ias15.CONTACT:
                stalled = stalled + 1 if t == last_contact else 0
                last_contact = t
                if stalled > self.config.max_body_events:
                    raise ContactError(f"IAS15 found body {i} touching {'wall ' + str(-1 - j) if j < 0 else j} "
                                       f"more than Config.max_body_events={self.config.max_body_events} times at "
                                       f"t={t:.17g} s without the time advancing")
                self._adaptive_impact(radau, i, j)
            elif status == ias15.PRESSED:
                raise ContactError(self._pressed_message(i, j))
            elif status == ias15.STUCK:
                raise ContactError(f"the IAS15 step fell to the round-off of the time at t={t:.17g} s: the forces "
                                   "change faster than the clock can resolve (a singular encounter without softening)")
            else:  # END, or PAUSED after max_steps
                break
        self._spin_freely(start)

    def _adaptive_radau(self, dt: float | None, until: float) -> ias15.Radau:
        """IAS15's memory, in step with the bodies: made afresh (and restarted) where the bodies were written or
        changed since the last step; the first trial step ``dt``, or one estimated from the bodies."""
        b, n = self.bodies, self.bodies.n
        x, v = b.position[:n], b.velocity[:n]
        radau = self._radau
        if radau is None or radau.x0.shape != x.shape:
            radau = self._radau = ias15.new_radau(n, self.dim)
        if not (np.array_equal(radau.x0, x) and np.array_equal(radau.v0, v)):
            radau.x0[...] = x
            radau.v0[...] = v
            ias15.restart(radau)
            radau.clock[ias15.NEXT_STEP] = 0.0
        if radau.clock[ias15.NEXT_STEP] == 0.0:
            radau.clock[ias15.NEXT_STEP] = dt if dt is not None else self._first_trial_step(until)
        return radau

    def _first_trial_step(self, until: float) -> float:
        """A first trial step (s): a tenth of the shortest time a body takes to cover its radius, from its speed
        or from its acceleration (the step then adapts, by up to 4x a step); the whole run if nothing moves."""
        b, n = self.bodies, self.bodies.n
        live = self._movable()
        radius = b.radius[:n][live]
        speed = np.linalg.norm(b.velocity[:n][live], axis=1)
        accel = np.linalg.norm(self._smooth_accel(self.time)[live], axis=1)
        with np.errstate(divide="ignore"):
            times = np.concatenate([radius / speed, np.sqrt(radius / accel)])
        return float(min(0.1 * np.min(times, initial=np.inf), until - self.time))

    def _speed_tolerance(self) -> float:
        """Approach speeds (m/s) up to this count as zero: ``Config.speed_tolerance`` of the largest speed."""
        b, n = self.bodies, self.bodies.n
        top = float(np.max(np.abs(b.velocity[:n]), initial=0.0))
        return self.config.speed_tolerance * top

    def _python_accel(self, x: np.ndarray, v: np.ndarray):
        """The accelerations of every force, for `ias15.integrate_python`: ``accel(xs, vs, t, out)`` puts the
        state (xs, vs) in the world's arrays (x, v) if it is not there, and evaluates the forces at time t."""

        def accel(xs, vs, t, out):
            if xs is not x:
                x[...] = xs
                v[...] = vs
            out[...] = self._smooth_accel(t)

        return accel

    def _adaptive_impact(self, radau: ias15.Radau, i: int, j: int) -> None:
        """The impact of i and j (j = -1 - k: wall k) found by IAS15, the bodies at its instant: solved with the
        drift's impact law and rounds (`resolve_instant`), or merged; the integrator starts afresh from it."""
        cfg, b, n = self.config, self.bodies, self.bodies.n
        zeros = np.zeros((n, self.dim))
        friction, alpha = self._friction_model()
        bodies = Bodies(b.position[:n], b.velocity[:n], zeros, zeros.copy(), b.inv_mass[:n], b.mass[:n], b.radius[:n],
                        b.restitution[:n], b.inv_inertia[:n], b.active[:n], b.angular_velocity[:n], alpha,
                        b.orientation[:n])  # fmt: skip
        # (every pair within the touching rule's slack: the pair found may be a round-off short of contact)
        slack = cfg.contact_tolerance * bodies.radius + ROUNDOFF * np.max(np.abs(bodies.x), axis=1)
        start, nbrs, margin, large = broadphase.candidates(bodies.x, bodies.radius, bodies.active, slack,
                                                           cfg.sweep_safety)  # fmt: skip
        lists = Candidates(start, nbrs, large, bodies.x.copy(), margin)
        if not fits(self._work, n, self.dim, self.walls.n, len(nbrs)):
            self._work = new_work(n, self.dim, self.walls.n, len(nbrs) + len(nbrs) // 4 + 64)
        if friction is not None and not self._fits_friction(self._work, n):
            self._friction_work = new_friction_work(len(self._work.ci), n, self.walls.n, len(self._work.f_pair))
        fwork = self._friction_work if friction is not None else self._no_friction_work
        speed = self._speed_tolerance()
        settings = Settings(cfg.contact_tolerance, cfg.resting_gap, 0.0, speed, cfg.resting_speed, cfg.lcp_iterations,
                            cfg.lcp_tolerance * speed / cfg.speed_tolerance, 0.0, 0.0, 0.0, cfg.max_rounds,
                            cfg.max_body_events, self.impact_mode == "merge", bool(self._impact_callbacks))  # fmt: skip
        walls = Walls(self.walls.point, self.walls.normal, self.walls.restitution)
        materials = Materials(RULE_CODES[self.restitution_rule], *self.pair_restitution_arrays())
        kept = [arr.copy() for arr in (bodies.x, bodies.v, bodies.w, b.mass[:n], b.inv_mass[:n], b.radius[:n],
                                       b.inv_inertia[:n], b.active[:n])]  # fmt: skip
        while True:
            impacts, n_log, capped, crushed = resolve_instant(bodies, lists, walls, materials, friction, settings,
                                                              self._log, self._work, fwork, i, j)  # fmt: skip
            if n_log <= len(self._log.time):
                break
            for arr, old in zip((bodies.x, bodies.v, bodies.w, b.mass[:n], b.inv_mass[:n], b.radius[:n],
                                 b.inv_inertia[:n], b.active[:n]), kept, strict=True):  # fmt: skip
                arr[...] = old
            self._log = new_log(2 * n_log, self.dim)
        if crushed >= 0:
            raise crushed_error(crushed, self.time, cfg.max_rounds, "at that instant")
        if capped:
            warnings.warn(f"contacts at one instant needed more than Config.max_rounds={cfg.max_rounds} rounds near "
                          f"t={self.time:.9g} s; the rest were solved as one perfectly inelastic system",
                          ContactWarning, stacklevel=4)  # fmt: skip
        self.collision_count += int(impacts)
        self.event_count += 1
        if n_log:
            shifted = self._log._asdict()
            shifted["time"] = self._log.time[:n_log] + self.time
            self._emit_impacts(shifted, int(n_log))
        radau.x0[...] = bodies.x
        radau.v0[...] = bodies.v
        ias15.restart(radau)

    def _pressed_message(self, i: int, j: int) -> str:
        other = f"wall {-1 - j}" if j < 0 else f"body {j}"
        return (f"body {i} rests against {other} at t={self.time:.17g} s (touching, not approaching, pressed "
                f'together by the forces): integrator="ias15" solves impacts but holds no resting contact. Use '
                f'integrator="leapfrog", or impact_mode="merge" for bodies that stay together.')

    def _spin_freely(self, start: float) -> None:
        """Turn every spinning body from ``start`` to now (no torque acts between IAS15's impacts)."""
        b, n = self.bodies, self.bodies.n
        w = b.angular_velocity[:n]
        if np.any(w):
            spin_all(self.time, w, np.zeros_like(w), b.orientation[:n], np.full(n, start), b.active[:n])

    def _smooth_accel(self, t: float) -> np.ndarray:
        """Acceleration (m/s^2) of every body from uniform gravity and all forces; 0 for fixed bodies."""
        n = self.n_bodies
        acc = np.zeros((n, self.dim))
        acc[:] = self.gravity
        for force in self.forces:
            force.accelerate(self, t, acc)
        acc[~self._movable()] = 0.0
        return acc

    def _step(self, dt: float, end: float) -> None:
        """One step of ``dt`` (s) from the current time to ``end`` (s): the pipeline of the module docstring."""
        if self.bodies.n == 0:
            return
        asleep, _ = self._sleep_state()
        if self._sleepers and self._nothing_moves():
            return  # every movable body asleep, every fixed one at rest: the step changes nothing
        a_smooth = self._forces()  # 1. forces
        if self.has_polygons:  # (rigid polygons: their own drift and projection, `carom.step.rigid`)
            self._planar_step(a_smooth, dt)
            self._kick(a_smooth, dt, end)
            self._settle_planar(dt)
            return
        awake = self.bodies.active[: self.bodies.n]  # read only, unless some body sleeps:
        if self._sleepers:
            a_smooth[asleep] = 0.0
            awake = awake & ~asleep  # (a new array, woken in place by the drift)
        lists, may_overlap = self._drift(a_smooth, awake, dt)  # 2. drift with impacts
        if may_overlap:  # 3. projection
            b, n = self.bodies, self.bodies.n
            x0 = b.position[:n].copy()
            project(b.position[:n], b.inv_mass[:n], b.radius[:n], awake, lists.start, lists.nbrs,
                    self.walls.point, self.walls.normal, self._overlap_slop,
                    self.config.projection_iterations)  # fmt: skip
            v, w = b.velocity[:n], b.angular_velocity[:n]
            pay_for_lift(x0, b.position[:n], v, w, b.inv_mass[:n], a_smooth,
                         lambda moved: kinetic_energy(v, w, b.inv_mass[:n], b.inv_inertia[:n], moved))  # fmt: skip
        if self._sleepers:  # (the forces kept for the next step are the real ones)
            a_smooth[self._asleep] = self._a0[self._asleep]
        self._kick(a_smooth, dt, end)  # 4. kick
        self._settle(lists, awake, dt)  # 5. sleeping islands

    def _planar_step(self, a_smooth: np.ndarray, dt: float) -> None:
        """Steps 2 and 3 for a 2D world that holds polygons (`carom.step.rigid`): impacts of turning bodies
        at their instants, resting contact held by impulses, the projection.

        Sleeping bodies take part as fixed ones, at rest. Before the step, every island that an awake body
        may reach in it (bounding circles swept at its present rates) is woken; if a body still touched a
        sleeping one in the step (an impact flung it further), the step is undone, that island woken, and
        the step done again: a sleeping island never takes a push, so the step is the one it would be with
        the island awake and at rest."""
        b, n = self.bodies, self.bodies.n
        if self.impact_mode == "merge":
            raise ValueError("impact_mode='merge' is for spheres and disks: a world with polygons must bounce")
        if self._sleepers:
            reach = rigid.reach(b.velocity[:n], a_smooth, b.radius[:n], dt)
            asleep = self._asleep
            self._wake_islands(sleep.reached(b.position[:n], b.radius[:n], reach, b.active[:n] & ~asleep, asleep,
                                             self._overlap_slop * float(b.radius[:n].max())))  # fmt: skip
        while True:
            start = (b.position[:n].copy(), b.velocity[:n].copy(), self._held_forces) if self._sleepers else None
            report, motion, log = self._planar_try(a_smooth, dt)
            if start is None:
                break
            hit = self._touched_sleepers(report, log, start[2])
            if not np.any(hit):
                break
            b.position[:n], b.velocity[:n] = start[0], start[1]
            self._wake_islands(hit)
        b.orientation[:n, 0] = motion.angle
        b.angular_velocity[:n, 0] = motion.w
        self._rested = report.held | self._asleep
        self._held_forces = report.memory
        self.collision_count += report.impacts
        self.event_count += report.events
        if log and self._impact_callbacks:
            rows = {key: np.array([row[key] for row in log]) for key in log[0]}
            rows["time"] = rows["time"] + self.time
            self._emit_impacts(rows, len(log))

    def _planar_try(self, a_smooth: np.ndarray, dt: float):
        """One try of `_planar_step` (sleeping bodies fixed): positions and velocities written in place.
        Returns the step's report, its motion (angles and spins at the end) and its impacts (a list, or None
        when not needed)."""
        b, n, cfg, walls = self.bodies, self.bodies.n, self.config, self.walls
        asleep = self._asleep if self._sleepers else np.zeros(n, dtype=bool)
        inv_mass, inv_inertia = b.inv_mass[:n], b.inv_inertia[:n]
        if self._sleepers:
            inv_mass, inv_inertia = np.where(asleep, 0.0, inv_mass), np.where(asleep, 0.0, inv_inertia)
            a_smooth = np.where(asleep[:, None], 0.0, a_smooth)
        planar = rigid.Planar(
            b.shape[:n], self.polygon_table(), inv_mass, inv_inertia, b.radius[:n], b.restitution[:n],
            b.static_friction[:n], b.kinetic_friction[:n], b.active[:n], walls.point, walls.normal, walls.restitution,
            walls.static_friction, walls.kinetic_friction, RULE_CODES[self.restitution_rule],
            dict(self._pair_restitution), RULE_CODES[self.friction_rule], dict(self._pair_friction),
        )  # fmt: skip
        movable = self._movable() & ~asleep
        speed = np.linalg.norm(b.velocity[:n], axis=1) + np.abs(b.angular_velocity[:n, 0]) * b.radius[:n]
        speed += np.linalg.norm(a_smooth, axis=1) * dt
        v_scale = float(np.max(speed, where=movable, initial=0.0))
        a_scale = float(np.max(np.linalg.norm(a_smooth, axis=1), where=movable, initial=0.0))
        hold_tol = cfg.force_tolerance * max(a_scale, cfg.resting_speed / dt) * dt  # m/s
        tol = rigid.Tolerances(cfg.contact_tolerance, self._overlap_slop, cfg.resting_speed,
                               cfg.speed_tolerance * v_scale, max(cfg.speed_tolerance * v_scale, 2.0 * hold_tol),
                               cfg.max_rounds, cfg.max_body_events,
                               cfg.projection_iterations, cfg.lcp_iterations, hold_tol)  # fmt: skip
        if len(self._rested) != n:
            self._rested = np.zeros(n, dtype=bool)
        motion = rigid.Motion(b.position[:n], b.velocity[:n], b.orientation[:n, 0].copy(),
                              b.angular_velocity[:n, 0].copy(), a_smooth, np.empty_like(a_smooth), np.zeros(n),
                              np.zeros(n), self._rested)  # fmt: skip
        log = [] if self._impact_callbacks or self._sleepers else None
        return rigid.step(planar, tol, motion, dt, log, self._held_forces), motion, log

    def _touched_sleepers(self, report, log: list | None, memory: rigid.HeldForces) -> np.ndarray:
        """Mask of the sleeping bodies that a step touched: an impact on one, or a held contact with one that
        is new or changed (a sleeping island's own contacts are never held again while it sleeps)."""
        asleep = self._asleep
        hit = np.zeros(len(asleep), dtype=bool)
        for row in log or ():
            for k in (row["i"], row["j"]):
                hit[k] |= k >= 0 and asleep[k]
        before, after = self._sleeper_rows(memory), self._sleeper_rows(report.memory)
        if before.shape == after.shape and np.array_equal(before, after):  # (the usual case: none touched)
            return hit
        fresh = after[~_rows_in(after, before)]
        i, j = fresh[:, 0].astype(np.int64), fresh[:, 1].astype(np.int64)
        hit[i[asleep[i]]] = True
        hit[j[(j >= 0) & asleep[np.maximum(j, 0)]]] = True
        return hit

    def _sleeper_rows(self, memory: rigid.HeldForces) -> np.ndarray:
        """The rows of held forces (`rigid.held_rows`) of the contacts with a sleeping body."""
        rows = rigid.held_rows(memory)
        i, j = rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64)
        return rows[self._asleep[i] | ((j >= 0) & self._asleep[np.maximum(j, 0)])]

    def _held_bodies(self) -> np.ndarray:
        """(n,) bool: the bodies a contact held in the last step (polygon worlds; all False otherwise)."""
        n = self.bodies.n
        return self._rested.copy() if len(self._rested) == n else np.zeros(n, dtype=bool)

    def _forces(self) -> np.ndarray:
        """The smooth accelerations at the start of the step, a copy (merges in the drift rewrite rows)."""
        if self._a0 is None:
            self._a0 = self._smooth_accel(self.time)
        return self._a0.copy()

    def _kick(self, a_smooth: np.ndarray, dt: float, end: float) -> None:
        """Leapfrog's closing half kick with the forces at the new state, at time ``end`` (exact, and skipped,
        when the only force is uniform gravity); the forces are kept for the next step."""
        if self.integrator == "leapfrog" and self.forces:
            a1 = self._smooth_accel(end)
            self.bodies.velocity[: self.bodies.n] += 0.5 * dt * (a1 - a_smooth)
            self._a0 = a1
        else:
            self._a0 = a_smooth if not self.forces else None

    def _drift(self, a_smooth: np.ndarray, awake: np.ndarray, dt: float) -> tuple[Candidates, bool]:
        """Every awake body on its parabola for dt, every impact at its instant (`carom.step.drift`), the
        drift restarted with new candidate lists whenever a body outruns them; a sleeping island that some
        list reaches is woken first. Returns the last candidate lists and whether the drift may have left
        an overlap deeper than the projection's slop."""
        b, n, cfg = self.bodies, self.bodies.n, self.config
        if self._wall_force.shape != (n, self.walls.n):
            self._wall_force = np.zeros((n, self.walls.n))
            self._walls_held = False
        if self._held_wall_friction.shape != (n, self.walls.n, 6):
            self._held_wall_friction = np.zeros((n, self.walls.n, 6))
        x, v = b.position[:n], b.velocity[:n]
        merge = self.impact_mode == "merge"
        friction, alpha = self._friction_model()
        bodies = Bodies(x, v, a_smooth, np.empty_like(a_smooth), b.inv_mass[:n], b.mass[:n], b.radius[:n],
                        b.restitution[:n], b.inv_inertia[:n], b.active[:n] if merge else awake,
                        b.angular_velocity[:n], alpha, b.orientation[:n])  # fmt: skip
        walls = Walls(self.walls.point, self.walls.normal, self.walls.restitution)
        materials = Materials(RULE_CODES[self.restitution_rule], *self.pair_restitution_arrays())
        motion = np.empty(n)
        live = self._movable()
        v_scale, a_scale = motion_bounds(v, a_smooth, b.radius[:n], live, dt, cfg.contact_tolerance, motion)
        force_tol = cfg.force_tolerance * max(a_scale, cfg.resting_speed / dt)  # m/s^2
        v_scale = max(v_scale, a_scale * dt)
        # resting contacts are held to within resting_gap of the smallest radius: their solves stop there
        r_min = float(np.min(b.radius[:n], where=live, initial=np.inf))
        slop = cfg.resting_gap * r_min if math.isfinite(r_min) else 0.0
        # a slow contact that can close within the step joins the resting set (held by its force, which acts
        # only if the gap would close), instead of landing in an event
        rest_reach = max(cfg.resting_speed, 2.0 * dt * a_scale) * dt
        self._rest_reach = max(rest_reach, slop)
        rest_tol_v = VELOCITY_SINK_FRACTION * slop / dt  # m/s: the resting set's velocity solve
        settings = Settings(cfg.contact_tolerance, cfg.resting_gap, rest_reach, cfg.speed_tolerance * v_scale,
                            cfg.resting_speed, cfg.lcp_iterations, cfg.lcp_tolerance * v_scale, rest_tol_v, force_tol,
                            stall_tolerance(slop, dt), cfg.max_rounds, cfg.max_body_events,
                            self.impact_mode == "merge", bool(self._impact_callbacks))  # fmt: skip
        # Whether the drift may leave an overlap deeper than the projection's slop. With no force at all,
        # bodies move on straight lines between impacts: a touching pair that does not approach only
        # separates, and one that approaches is an impact. Only held contacts (forces), merges or an overlap
        # already there can leave one; the projection, a scan over every candidate pair, is skipped otherwise.
        overlap_slop = self._overlap_slop
        may_overlap = self.impact_mode == "merge" or bool(self.forces) or bool(np.any(self.gravity))
        t_sub = 0.0
        capped = False
        while True:
            start, nbrs, margin, large = broadphase.candidates(x, b.radius[:n], b.active[:n], motion, cfg.sweep_safety)
            if self._sleepers:
                hit = sleep.touched(start, nbrs, awake, self._asleep, x, b.radius[:n], cfg.sweep_safety * motion)
                if np.any(hit):  # a sleeping island some awake body may reach: woken before it can be, back
                    woken = self._wake_islands(hit)  # into the drift with its smooth acceleration
                    awake[woken] = True
                    a_smooth[woken] = self._a0[woken]
                    motion_bounds(v, a_smooth, b.radius[:n], awake, dt - t_sub, cfg.contact_tolerance, motion)
                    continue
            lists = Candidates(start, nbrs, large, x.copy(), margin)
            out = self._drift_once(bodies, lists, walls, materials, friction, settings, t_sub, dt)
            t_sub = out.t_end
            capped = capped or out.capped
            may_overlap = may_overlap or out.held or out.deepest < -overlap_slop
            if out.status == CRUSHED:
                self.time += t_sub
                self._a0 = None
                raise crushed_error(out.stalled, self.time, cfg.max_rounds, "at that instant")
            if out.status == STALLED:
                self.time += t_sub
                self._a0 = None
                raise ContactError(
                    f"body {out.stalled} took part in more than Config.max_body_events={cfg.max_body_events} events"
                    f" within one step, up to t={self.time:.17g} s: its impacts come ever faster, as when a moving "
                    f"fixed body crushes it against a wall or another fixed body. The world is left at that time."
                )
            if out.status != REBUILD:
                break
            # (with friction, bounded by the accelerations held when the drift stopped, contact forces included:
            # friction can hold a body's acceleration far from its smooth one for the rest of the step)
            held_accel = bodies.a if friction is not None else a_smooth
            motion_bounds(v, held_accel, b.radius[:n], self._movable(), dt - t_sub, cfg.contact_tolerance, motion)
        if capped:
            warnings.warn(
                f"contacts at one instant needed more than Config.max_rounds={cfg.max_rounds} rounds near "
                f"t={self.time:.9g} s; the rest were solved as one perfectly inelastic system",
                ContactWarning,
                stacklevel=4,
            )
        return lists, may_overlap

    def _drift_once(self, bodies, lists, walls, materials, friction, settings, t0, dt) -> Outcome:
        """One call of the drift kernel from t0, run again from the same state with a larger log if its
        impact log filled up; books its counts, carried forces and impacts."""
        b, n = self.bodies, self.bodies.n
        dim, n_entry = bodies.x.shape[1], len(lists.nbrs)
        if not fits(self._work, n, dim, self.walls.n, n_entry):  # grown with headroom, kept while it fits
            self._work = new_work(n, dim, self.walls.n, n_entry + n_entry // 4 + 64)
        work = self._work
        if friction is not None and not self._fits_friction(work, n):
            self._friction_work = new_friction_work(len(work.ci), n, self.walls.n, len(work.f_pair))
        fwork = self._friction_work if friction is not None else self._no_friction_work
        # what the drift changes, kept to run it again should the impact log fill up
        changed = (bodies.x, bodies.v, bodies.a_smooth, self._wall_force, self._held_wall_friction,
                   b.inv_mass[:n], b.mass[:n], b.radius[:n], b.inv_inertia[:n], b.active[:n], bodies.w,
                   bodies.orientation)  # fmt: skip
        kept = [arr.copy() for arr in changed] if settings.log_enabled else []
        while True:
            carried = Carried(*self._pair_force, self._wall_force, self._walls_held, self._held_friction,
                              self._held_wall_friction)  # fmt: skip
            try:
                out = drift(bodies, lists, walls, materials, friction, carried, settings, self._log, work, fwork, t0,
                            dt)  # fmt: skip
            except BaseException:
                clear_work(work)  # a drift cut short may leave them dirty: they must be all zero
                if friction is not None:
                    clear_held(fwork)
                raise
            if out.n_log <= len(self._log.time):
                break
            for arr, old in zip(changed, kept, strict=True):
                arr[...] = old
            self._log = new_log(2 * out.n_log, bodies.x.shape[1])
        self._walls_held = out.walls_held
        self.collision_count += int(out.impacts)
        self.event_count += int(out.events)
        keys, values, self._held_friction = carried_forces(work, fwork, out.n_carried)
        self._pair_force = (keys, values)
        if self._sleepers:
            self._keep_sleeping_forces()
        if out.n_log:
            shifted = self._log._asdict()
            shifted["time"] = self._log.time[: out.n_log] + self.time
            self._emit_impacts(shifted, int(out.n_log))
        return out

    def _friction_model(self) -> tuple[Friction | None, np.ndarray]:
        """The drift's `Friction` (None where friction is off) and angular-acceleration array, kept until
        bodies, walls or pair friction change (or a state is set): whether friction is on is decided once, not
        every step. It is on where any contact can carry friction, or any body spins (its orientation is then
        integrated). Off, the drift compiles without its friction kernels."""
        if self._friction is None:
            b, n = self.bodies, self.bodies.n
            friction = None
            if self.has_friction() or bool(np.any(b.angular_velocity[:n])):
                friction = Friction(b.static_friction[:n], b.kinetic_friction[:n], b.rolling_resistance[:n],
                                    b.spinning_friction[:n], self.walls.static_friction, self.walls.kinetic_friction,
                                    RULE_CODES[self.friction_rule], *self.pair_friction_arrays())  # fmt: skip
            self._friction = (friction, np.zeros_like(b.angular_velocity[:n]))
        return self._friction

    def _fits_friction(self, work: Work, n: int) -> bool:
        fw = self._friction_work
        return len(fw.coef) >= len(work.ci) and len(fw.pair_a) >= len(work.f_pair) and fw.wall_a.shape[:2] == (
            n, self.walls.n)  # fmt: skip

    # ----------------------------------------------------------------- state for exact restart
    def get_state(self) -> dict:
        """Everything needed to continue this run exactly: time, counters, the step grid and every body array.
        (It changes nothing: a run that takes states on the way gives the same bits as one that does not.)"""
        a0 = self._smooth_accel(self._start_time()) if self._a0 is None else self._a0
        return {
            "time": self.time,
            "collision_count": self.collision_count,
            "event_count": self.event_count,
            "step_count": self.step_count,
            # (t0, dt, k) of `step_grid`: a run goes on from it, on the steps the uninterrupted run took
            "step_grid": np.array(self._grid if self._grid is not None else (), dtype=float),
            # the forces at the start of the next step (leapfrog reuses the last step's end-of-step value)
            "smooth_acceleration": a0.copy(),
            # resting-contact forces, the warm start of the next step's contact solve
            "pair_force_keys": self._pair_force[0].copy(),
            "pair_force": self._pair_force[1].copy(),
            "wall_force": self._wall_force.copy(),
            "held_pair_friction": self._held_friction.copy(),
            "held_wall_friction": self._held_wall_friction.copy(),
            # sleeping islands: who sleeps (by island), how long each body has been still, the forces kept
            "sleep_island": np.where(self._sleep_state()[0], self._island, -1),
            "islands_made": self._islands_made,  # (the next island's label)
            "still_time": self._still_time.copy(),
            "sleep_pair_keys": self._sleep_pairs[0].copy(),
            "sleep_pair_force": self._sleep_pairs[1].copy(),
            "sleep_wall_force": (
                self._sleep_walls.copy()
                if self._sleep_walls.shape == self._wall_force.shape
                else np.zeros_like(self._wall_force)
            ),
            # polygon worlds (`carom.step.rigid`): the bodies held last step, and the held forces by contact
            # (rows i, j, point in body i's frame x, y (m), normal and tangential force (N)): the warm start
            "held_bodies": self._held_bodies(),
            "held_contacts": rigid.held_rows(self._held_forces),
            # integrator="ias15": its memory (the next trial step and the last accepted one, s; the predicted and
            # last accepted acceleration polynomials; what the compensated sums lost), so that a run goes on
            # with the same bits; empty before its first step
            **self._adaptive_state(),
            **self.bodies.snapshot(),
        }

    def _adaptive_state(self) -> dict:
        radau = self._radau
        in_step = radau is not None and radau.x0.shape == (self.n_bodies, self.dim)
        return {key: getattr(radau, field).copy() if in_step else np.zeros(0)
                for key, field in _ADAPTIVE_FIELDS.items()}  # fmt: skip

    def set_state(self, state: dict) -> None:
        """Restore a state from `get_state` (same scene: walls and forces are not part of it)."""
        scalars = ("time", "collision_count", "event_count", "step_count", "step_grid", "smooth_acceleration",
                   "pair_force_keys", "pair_force", "wall_force", "held_pair_friction", "held_wall_friction",
                   "sleep_island", "still_time", "sleep_pair_keys", "sleep_pair_force", "sleep_wall_force",
                   "held_bodies", "held_contacts", "islands_made", *_ADAPTIVE_FIELDS)  # fmt: skip
        self.bodies.restore({k: np.asarray(v) for k, v in state.items() if k not in scalars})
        self._names = list(self.names)  # (kept: names are the scene's, not the state's)
        self.time = float(state["time"])
        self.collision_count = int(state["collision_count"])
        self.event_count = int(state.get("event_count", 0))
        self.step_count = int(state.get("step_count", 0))
        grid = np.asarray(state.get("step_grid", ()), dtype=float)  # (a state without one: a new grid from its time)
        self._grid = (float(grid[0]), float(grid[1]), int(grid[2])) if grid.size == 3 else None
        n = self.n_bodies
        self._pair_force = (np.array(state.get("pair_force_keys", np.zeros(0)), dtype=np.int64),
                            np.array(state.get("pair_force", np.zeros(0)), dtype=float))  # fmt: skip
        # The wall forces as saved: (n, walls), or empty where no disk step has run (a world of polygons, or one
        # saved before its first step; the drift sizes them then, as in the run that was not stopped).
        self._wall_force = np.array(state.get("wall_force", np.zeros((0, 0))), dtype=float)
        self._walls_held = bool(np.any(self._wall_force))
        # (a state saved without them, or before any step: friction starts from zero)
        friction = np.asarray(state.get("held_pair_friction", np.zeros((0, 6))), dtype=float)
        self._held_friction = (friction.reshape(-1, 6) if friction.size == 6 * len(self._pair_force[0])
                               else np.zeros((len(self._pair_force[0]), 6)))  # fmt: skip
        self._held_wall_friction = np.array(state.get("held_wall_friction", np.zeros((0, 0, 6))), dtype=float)
        self.wake()  # (a state from before sleeping existed has every body awake)
        self._friction = None
        if "sleep_island" in state:
            self._island = np.array(state["sleep_island"], dtype=np.int64).reshape(n)
            self._asleep = self._island >= 0
            self._sleepers = int(np.count_nonzero(self._asleep))
            # (a state saved without the count: labels past every island's that sleeps)
            self._islands_made = int(state.get("islands_made", self._island.max(initial=-1) + 1))
            self._still_time = np.array(state["still_time"], dtype=float).reshape(n)
            self._still_counted = True
            self._sleep_pairs = (np.array(state["sleep_pair_keys"], dtype=np.int64),
                                 np.array(state["sleep_pair_force"], dtype=float))  # fmt: skip
            self._sleep_walls = np.array(state["sleep_wall_force"], dtype=float)
        self._rested = np.array(state.get("held_bodies", np.zeros(n, dtype=bool)), dtype=bool).reshape(n)
        self._held_forces = rigid.held_memory(np.asarray(state.get("held_contacts", np.zeros((0, 6))), dtype=float))
        self._radau = None
        if np.size(state.get("adaptive_clock", ())) == ias15.CLOCK:
            radau = ias15.new_radau(n, self.dim)
            for key, field in _ADAPTIVE_FIELDS.items():
                getattr(radau, field)[...] = np.asarray(state[key], dtype=float).reshape(getattr(radau, field).shape)
            radau.x0[...] = self.positions
            radau.v0[...] = self.velocities
            self._radau = radau
        a0 = state.get("smooth_acceleration")
        self._a0 = None if a0 is None else np.array(a0, dtype=float).reshape(self.n_bodies, self.dim)
