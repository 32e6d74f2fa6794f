"""`EventWorld`: the exact event-driven engine for spheres and disks in free flight.

There is no time step. Every body's next contact (with a body or a wall) and next cell crossing are
predicted exactly; the earliest is processed, and only the bodies it changed are predicted again (see
`carom.events` for the stages). Motion between events is exact (straight lines, or parabolas under uniform
gravity), impacts follow the same law as `World` (`carom.contact`), and contacts touching at one instant
are solved together in rounds.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from ..config import DEFAULT, Config
from ..contact.log import ImpactLog, new_log
from ..errors import (
    CONTACTS_FULL,
    CRUSHED,
    LOG_FULL,
    RUNAWAY,
    STALLED,
    ContactError,
    ContactWarning,
    InelasticCollapseWarning,
    NotInEventWorld,
    crushed_error,
)
from ..model import Model, as_number, as_vector
from ..narrowphase.spheres import touch_slacks
from . import state as st
from .calendar import new_calendar, rebuild_calendar
from .cells import new_grid
from .loop import kinetic_pending, run_events, start_events, synced
from .state import Contacts, Geometry


@dataclass
class _Engine:
    """The event engine's arrays (see `carom.events.state`)."""

    body: np.ndarray
    link: np.ndarray
    geo: Geometry
    head: np.ndarray
    chain: np.ndarray
    key: np.ndarray
    tree: np.ndarray
    speed_scale: float  # m/s, sets the round-off floor Config.speed_tolerance * speed_scale
    size: float  # m: the coordinate magnitude of the touching rule's round-off (`EventWorld._coordinate_size`)
    contacts: Contacts | None = None
    still: int = 0  # events in a row whose time did not advance beyond round-off (see `carom.events.loop`)
    still_time: float = -math.inf  # s: the time of the last of them

    def state(self) -> dict:
        """The arrays as flat ``engine_*`` entries (the calendar is rebuilt from the event times)."""
        out = {f"engine_{k}": v.copy() for k, v in (("body", self.body), ("link", self.link),
                                                     ("head", self.head), ("chain", self.chain))}  # fmt: skip
        out.update({f"engine_{k}": np.array(v) for k, v in self.geo._asdict().items()})
        out["engine_speed_scale"] = self.speed_scale
        out["engine_size"] = self.size
        return out

    @classmethod
    def from_state(cls, state: dict) -> _Engine:
        body = np.asarray(state["engine_body"], dtype=float)
        aligned, _ = st.new_body(len(body))
        aligned[:] = body
        key, tree = new_calendar(len(body))
        key[:-1] = np.minimum(body[:, st.EV_TIME], body[:, st.CX_TIME])
        rebuild_calendar(key, tree)
        return cls(
            aligned, np.array(state["engine_link"], dtype=np.int64),
            Geometry(*(tuple(np.asarray(state[f"engine_{k}"]).tolist()) for k in Geometry._fields)),
            np.array(state["engine_head"], dtype=np.int32), np.array(state["engine_chain"], dtype=np.int32), key,
            tree, float(state["engine_speed_scale"]),
            float(state.get("engine_size", np.abs(body[:, st.X : st.X + 3]).max(initial=0.0))),
        )  # fmt: skip


class EventWorld(Model):
    """An event-driven world of spheres (dim=3) or disks (dim=2): exact collision times, no time step.

    ``gravity`` is uniform (m/s^2). ``tc`` (s) switches on the TC model of Luding & McNamara: a pair
    impact of a body whose previous impact was less than ``tc`` earlier is elastic (0: off).

    >>> w = EventWorld(dim=2)
    >>> _ = w.add_body(position=(0, 0), velocity=(1, 0), mass=1.0, radius=0.5)
    >>> _ = w.add_body(position=(3, 0), mass=1.0, radius=0.5)
    >>> w.run(until=5.0)
    >>> w.velocities.tolist(), w.collision_count
    ([[0.0, 0.0], [1.0, 0.0]], 1)
    """

    def __init__(
        self,
        dim: int = 3,
        gravity=None,
        *,
        restitution_rule: str = "min",
        impact_mode: str = "bounce",
        config: Config = DEFAULT,
        tc: float = 0.0,
    ):
        super().__init__(dim, gravity, restitution_rule=restitution_rule, impact_mode=impact_mode, config=config)
        if impact_mode != "bounce":
            raise ValueError(f"EventWorld supports impact_mode='bounce' only, got {impact_mode!r}")
        self.tc = as_number("tc", tc)
        if self.tc < 0:
            raise ValueError(f"tc must be >= 0, got {tc!r}")
        self.event_count = 0
        self._box: tuple[np.ndarray, np.ndarray] | None = None
        self._engine: _Engine | None = None
        self._contact_capacity = 64
        self._pressure_sums: tuple[float, float, float] | None = None

    # ----------------------------------------------------------------- scene
    def add_bodies(self, positions, *args, static_friction=0.0, kinetic_friction=None, rolling_resistance=0.0,
                   spinning_friction=0.0, **kwargs) -> np.ndarray:  # fmt: skip
        """As `Model.add_bodies`, for smooth spheres only: friction needs the time-stepped `World`."""
        for name, value in (("static_friction", static_friction), ("kinetic_friction", kinetic_friction),
                            ("rolling_resistance", rolling_resistance),
                            ("spinning_friction", spinning_friction)):  # fmt: skip
            if value is not None and np.any(np.asarray(value, dtype=float) != 0.0):
                raise ValueError(f"EventWorld moves smooth spheres: {name} must be 0, got {value!r}; use World")
        return super().add_bodies(positions, *args, **kwargs)

    def add_periodic_box(self, lower, upper) -> None:
        """Make space periodic on every axis with the box ``[lower, upper)``: a body leaving through one
        face comes back through the opposite one, and bodies interact with the nearest image of each other
        (minimum image). Positions are wrapped into the box."""
        if self._box is not None:
            raise ValueError("this world already has a periodic box")
        lo = as_vector("box lower", lower, self.dim)
        hi = as_vector("box upper", upper, self.dim)
        if not np.all(lo < hi):
            raise ValueError(f"box lower must be below upper on every axis, got lower={lower!r} upper={upper!r}")
        self._box = (lo, hi)
        n = self.bodies.n
        try:
            self._check_periodic_overlaps(np.zeros((0, self.dim)), np.zeros(0))
        except ValueError:
            self._box = None
            raise
        x = self.bodies.position[:n]
        outside = np.any((x < lo) | (x >= hi), axis=1)  # (those inside keep their bits: a scene round trip)
        x[outside] = lo + np.mod(x[outside] - lo, hi - lo)
        self._bodies_changed()

    def add_polygon(self, vertices, position, **keywords) -> int:
        """Not available: raises ValueError (an `EventWorld` holds spheres and disks only)."""
        raise ValueError(
            "EventWorld holds spheres and disks only: add_polygon needs the time-stepped World (World(dim=2)), "
            "which moves rigid polygons"
        )

    def add_rectangle(self, width, height, position, **keywords) -> int:
        """Not available: raises ValueError (an `EventWorld` holds spheres and disks only)."""
        raise ValueError(
            "EventWorld holds spheres and disks only: add_rectangle needs the time-stepped World (World(dim=2)), "
            "which moves rigid polygons"
        )

    def _check_overlaps(self, pos: np.ndarray, rad: np.ndarray, single: bool, polygon=None) -> None:
        super()._check_overlaps(pos, rad, single, polygon)
        if self._box is not None:
            self._check_periodic_overlaps(pos, rad)

    def _check_periodic_overlaps(self, pos: np.ndarray, rad: np.ndarray) -> None:
        """Overlaps through the periodic boundaries, among the bodies so far and ``pos``."""
        lo, hi = self._box
        n = self.bodies.n
        x = np.mod(np.vstack([self.bodies.position[:n], pos]) - lo, hi - lo)
        r = np.concatenate([self.bodies.radius[:n], rad])
        if len(r) < 2:
            return
        pairs = cKDTree(np.minimum(x, np.nextafter(hi - lo, 0)), boxsize=hi - lo).query_pairs(
            2.0 * r.max(), output_type="ndarray"
        )
        if not len(pairs):
            return
        d = np.abs(x[pairs[:, 0]] - x[pairs[:, 1]])
        d = np.minimum(d, (hi - lo) - d)
        s = r[pairs[:, 0]] + r[pairs[:, 1]]
        p, q = pairs[:, 0], pairs[:, 1]
        slack = touch_slacks(r[p], r[q], x[p], x[q], self.config.contact_tolerance)
        bad = np.flatnonzero(np.linalg.norm(d, axis=1) - s < -slack)
        if len(bad):
            p, q = pairs[bad[0]]
            raise ValueError(
                f"bodies {p} and {q} (counting new ones after the {n} existing) overlap through the periodic "
                f"box lower={lo.tolist()} upper={hi.tolist()}"
            )

    def _bodies_changed(self) -> None:
        self._engine = None

    # ----------------------------------------------------------------- running
    def run(self, until: float, dt: None = None, *, max_events: int | None = None) -> None:
        """Advance to exactly ``until`` (s), processing every event up to and including it. There is no
        time step (``dt`` is refused: that is `World`). ``max_events``: stop after that many events (cell
        crossings included), at the time of the last; calling ``run`` again with the same ``until``
        continues to the same bits, so a caller can do other work, or stop, between pieces of a long run."""
        if dt is not None:
            raise NotInEventWorld(
                f"EventWorld.run takes no dt (got dt={dt!r}): it has no time step, every event is processed at "
                f"its exact time. Use run(until), or World for a time-stepped run"
            )
        until = as_number("until", until)
        if until < self.time:
            raise ValueError(f"until must be >= the current time {self.time!r}, got {until!r}")
        if max_events is None:
            max_events = np.iinfo(np.int64).max
        elif not (isinstance(max_events, int | np.integer) and max_events >= 1):
            raise ValueError(f"max_events must be an integer >= 1, got {max_events!r}")
        events = self.event_count
        last = self._process(until, int(max_events))
        self.time = until if self.event_count - events < max_events else max(self.time, last)
        self._finish()

    # ----------------------------------------------------------------- what only World has
    def add_force(self, force) -> None:
        """Not available: raises `NotInEventWorld` (bodies move ballistically between events)."""
        raise NotInEventWorld(
            f"EventWorld has no forces (got {force!r}): between events its bodies move on exact straight lines, or "
            f"parabolas under the uniform gravity=(...) of the world. Use World for NBodyGravity, Atmosphere, "
            f"Thrust or a Force of your own"
        )

    def step(self, dt: float) -> None:
        """Not available: raises `NotInEventWorld` (there is no time step)."""
        raise NotInEventWorld(
            f"EventWorld has no time step (got step({dt!r})): use run(until) or advance(n_events); World steps"
        )

    def wake(self) -> None:
        """Not available: raises `NotInEventWorld` (no body sleeps)."""
        raise NotInEventWorld("EventWorld has no sleeping islands to wake (World has): its bodies never sleep")

    @property
    def sleeping(self) -> np.ndarray:
        """(n,) bool, all False: no body of an `EventWorld` sleeps."""
        return np.zeros(self.bodies.n, dtype=bool)

    def advance(self, n_events: int) -> None:
        """Process the next ``n_events`` events (cell crossings included); the time becomes that of the
        last one (unchanged if there was none)."""
        if not isinstance(n_events, int | np.integer) or n_events < 0:
            raise ValueError(f"n_events must be an integer >= 0, got {n_events!r}")
        last = self._process(math.inf, int(n_events))
        self.time = max(self.time, last)
        self._finish()

    def _process(self, t_end: float, max_events: int) -> float:
        """Run the event loop to t_end or max_events; return the time of the last event (-inf if none)."""
        eng = self._ensure_engine()
        walls, keys, values = st.scene_arrays(self)
        params = st.make_params(self, eng.speed_scale, eng.size)
        if eng.contacts is None:
            eng.contacts = st.new_contacts(len(eng.body), self.walls.n, self._contact_capacity)
        log = new_log(self.config.impact_log_capacity if self._impact_callbacks else 0, 3)  # (3D kernels)
        tally = np.zeros(8, dtype=np.int64)
        sums = np.zeros(3)
        tally[st.STILL], sums[st.PREVIOUS] = eng.still, eng.still_time
        t0 = self.time
        sums[st.KINETIC] = -kinetic_pending(eng.body, t0)
        last = -math.inf
        while True:
            status, t = run_events(
                eng.body, eng.link, eng.head, eng.chain, eng.geo, walls, keys, values, params, eng.contacts,
                log, eng.key, eng.tree, tally, sums, t_end, max_events - int(tally[st.EVENTS]),
            )  # fmt: skip
            last = max(last, t)
            self._emit_log(log, int(tally[st.N_LOG]))
            if status == CONTACTS_FULL:
                self._contact_capacity *= 2
                eng.contacts = st.new_contacts(len(eng.body), self.walls.n, self._contact_capacity)
            elif status == LOG_FULL and tally[st.N_LOG] == 0:
                log = new_log(2 * len(log.time), 3)
            elif status != LOG_FULL:
                break
            tally[st.N_LOG] = 0
        eng.still, eng.still_time = int(tally[st.STILL]), float(sums[st.PREVIOUS])
        stopped = int(eng.tree[1]) if status in (CRUSHED, RUNAWAY, STALLED) else -1
        if stopped >= 0:  # stop at the event that cannot be resolved: the world is left just before it
            t_end = last = float(eng.key[stopped])
        t1 = t_end if math.isfinite(t_end) else max(t0, last)
        sums[st.KINETIC] += kinetic_pending(eng.body, t1)
        self._pressure_sums = (float(sums[st.KINETIC]), float(sums[st.VIRIAL]), t1 - t0)
        self.collision_count += int(tally[st.IMPACTS])
        self.event_count += int(tally[st.EVENTS])
        self._warn(tally, last)
        if stopped >= 0:
            self.time = last
            self._finish()
            raise self._stop_error(status, stopped, last)
        return last

    def _stop_error(self, status: int, i: int, t: float) -> ContactError:
        """The error for an event of body i at time t that stopped the run (status CRUSHED, RUNAWAY or
        STALLED)."""
        if status == STALLED:
            return ContactError(
                f"the run stalled at t={t:.17g} s: more than Config.max_body_events + 10 n = "
                f"{self.config.max_body_events + 10 * self.bodies.n} events in a row came at times the clock cannot "
                f"tell apart (its resolution there is about {np.spacing(abs(t)):.3g} s), the next one of body {i} at "
                f"{np.linalg.norm(self._engine.body[i, st.V : st.V + 3]):.6g} m/s: a contact sooner than that "
                f"cannot be reached, as for a body crushed ever faster by a moving fixed body, or a fast body near "
                f"contact at a large absolute time. The world is left at that time."
            )
        if status == CRUSHED:
            return crushed_error(i, t, self.config.max_rounds, "just before that instant")
        eng = self._engine
        j = int(eng.link[i, st.PARTNER])
        pair = [i, j] if j >= 0 else [i]  # j < 0: a wall
        speed = np.linalg.norm(eng.body[pair, st.V : st.V + 3], axis=1)
        fast = pair[int(np.argmax(speed))]
        return ContactError(
            f"body {fast} reached {speed.max():.6g} m/s at t={t:.17g} s, more than Config.max_speed_ratio="
            f"{self.config.max_speed_ratio:g} times the scene's speed scale {eng.speed_scale:.6g} m/s: its "
            f"impacts come ever faster, as when a moving fixed body crushes it elastically against a wall. The "
            f"world is left just before that event."
        )

    def _emit_log(self, log: ImpactLog, count: int) -> None:
        if count:
            self._emit_impacts({**log._asdict(), "normal": log.normal[:, : self.dim]}, count)

    def _warn(self, tally: np.ndarray, last: float) -> None:
        if tally[st.TC_USED] or tally[st.RESTED] or tally[st.HOPPED]:
            warnings.warn(
                f"inelastic collapse remedy used up to t = {last:.9g} s: {tally[st.RESTED]} impacts between bodies "
                f"slower than Config.resting_speed = {self.config.resting_speed} m/s made resting, "
                f"{tally[st.HOPPED]} hops of bodies pressed together by gravity, {tally[st.TC_USED]} impacts made "
                f"elastic by the TC model (tc = {self.tc} s)",
                InelasticCollapseWarning,
                stacklevel=3,
            )
        if tally[st.CAPPED]:
            warnings.warn(
                f"contacts at one instant needed more than Config.max_rounds = {self.config.max_rounds} rounds "
                f"before t = {last:.9g} s; the rest were solved as perfectly inelastic",
                ContactWarning,
                stacklevel=3,
            )

    def _finish(self) -> None:
        """Copy every body's state at the current time into the public arrays."""
        eng = self._engine
        n = self.bodies.n
        synced(eng.body, self.time, self.bodies.position[:n], self.bodies.velocity[:n])

    # ----------------------------------------------------------------- the engine's arrays
    def _ensure_engine(self) -> _Engine:
        if self._engine is None:
            self._engine = self._build()
        return self._engine

    def _coordinate_size(self) -> float:
        """The largest coordinate magnitude (m) of the bodies, walls and periodic box: the ``size`` of the
        touching rule's round-off allowance, ``ROUNDOFF * size`` (`carom.narrowphase.spheres.touch_slack`),
        for every pair. `World` takes each pair's own coordinates; an event kernel cannot, since a pair's
        touching test must give the same answer wherever it is made, and bodies are at different times
        there."""
        n = self.bodies.n
        size = float(np.abs(self.bodies.position[:n]).max(initial=0.0))
        size = max(size, float(np.abs(self.walls.point).max(initial=0.0)))
        if self._box is not None:
            size = max(size, float(np.abs(np.concatenate(self._box)).max()))
        return size

    def _build(self) -> _Engine:
        """The engine's arrays from the public ones, every body at the current time."""
        b = self.bodies
        n, dim = b.n, self.dim
        body, link = st.new_body(n)
        x = b.position[:n]
        if self._box is not None:
            x = self._box[0] + np.mod(x - self._box[0], self._box[1] - self._box[0])
        body[:, st.X : st.X + dim] = x
        body[:, st.V : st.V + dim] = b.velocity[:n]
        body[b.inv_mass[:n] != 0.0, st.A : st.A + dim] = self.gravity
        body[:, st.TB] = self.time
        body[:, st.RADIUS] = b.radius[:n]
        body[:, st.INV_MASS] = b.inv_mass[:n]
        body[:, st.E] = b.restitution[:n]
        tol = self.config.contact_tolerance
        size = self._coordinate_size()
        geo, head, chain = new_grid(body, link, dim, self._box, tol, size)
        if self._box is not None:
            side = min(geo.length[:dim])
            diameter = 2.0 * float(b.radius[:n].max(initial=0.0)) * (1.0 + tol)
            if not side > 2.0 * diameter:
                raise ValueError(f"periodic box side {side} must exceed twice the largest diameter {diameter}")
        extent = math.hypot(*geo.length[:dim])
        speed = float(np.sqrt((b.velocity[:n] ** 2).sum(axis=1).max(initial=0.0)))
        speed_scale = max(speed, math.sqrt(float(np.linalg.norm(self.gravity)) * extent), 1e-300)
        eng = _Engine(body, link, geo, head, chain, *new_calendar(n), speed_scale, size,
                      st.new_contacts(n, self.walls.n, self._contact_capacity))  # fmt: skip
        params = st.make_params(self, speed_scale, size)
        start_events(body, link, head, chain, geo, st.scene_arrays(self)[0], params, eng.contacts, eng.key, eng.tree,
                     self.time)  # fmt: skip
        return eng

    # ----------------------------------------------------------------- diagnostics
    def pressure(self, volume: float | None = None) -> float:
        """Pressure (Pa; N/m in 2D) averaged over the last `run` or `advance`: kinetic part plus the
        collision virial, ``P = (integral of sum m v^2 dt + sum over pair impacts of P_ij |r_ij|) /
        (d V t)``. ``volume`` (m^3; m^2 in 2D) defaults to the periodic box's."""
        if self._pressure_sums is None:
            raise ValueError("pressure() needs a run first")
        if volume is None:
            if self._box is None:
                raise ValueError("pressure() needs volume= when the world has no periodic box")
            volume = float(np.prod(self._box[1] - self._box[0]))
        volume = as_number("volume", volume)
        if not volume > 0:
            raise ValueError(f"volume must be > 0, got {volume!r}")
        kinetic, virial, span = self._pressure_sums
        if not span > 0:
            raise ValueError("pressure() needs a run of non-zero duration")
        return (kinetic + virial) / (self.dim * volume * span)

    # ----------------------------------------------------------------- state for exact restart
    def get_state(self) -> dict:
        """Everything needed to continue this run exactly: time, counters, every body array and the
        engine's own (pending events, cells) as flat ``engine_*`` entries."""
        state = {
            "time": self.time,
            "collision_count": self.collision_count,
            "event_count": self.event_count,
            **self.bodies.snapshot(),
        }
        if self._engine is not None:
            state.update(self._engine.state())
        return state

    def set_state(self, state: dict) -> None:
        """Restore a state from `get_state` (same scene: walls and the periodic box are not part of it)."""
        counters = ("time", "collision_count", "event_count")
        self.bodies.restore({k: np.asarray(v) for k, v in state.items()
                             if k not in counters and not k.startswith("engine_")})  # fmt: skip
        self._names = list(self.names)  # (kept: names are the scene's, not the state's)
        self.time = float(state["time"])
        self.collision_count = int(state["collision_count"])
        self.event_count = int(state.get("event_count", 0))
        self._engine = _Engine.from_state(state) if "engine_body" in state else None
