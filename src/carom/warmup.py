"""Compile carom's Numba kernels ahead of a first run, and say so when a run has to compile them.

Numba compiles a kernel the first time it is called and keeps the machine code in its on-disk cache
(`__pycache__` next to the source, or a user cache folder where that is read-only), so only the first run
after an install or an upgrade pays. `warm_up` runs small scenes that reach every kernel family a user
can: `carom warmup` calls it, one worker process per kernel family, saying on stderr what it compiles, about
how long that takes, and when each scene and family is done. `announce_compiles` makes a run that finds the
cache cold say so on stderr, with the time it will take, and again when it is done, so that a silent
pause is not mistaken for a hang.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable

import numpy as np
from numba.core import event
from tqdm import tqdm

from .io.runner import ticking

#: CPU seconds that a cold Numba cache takes to compile the kernels one run of each engine reaches at most:
#: for `World`, the costliest kernel family of `FAMILIES` (a run compiles only the features its world
#: uses), measured on a 2-core AMD EPYC host (docs/performance.md, "Compilation time").
COMPILE_CPU_SECONDS = {"World": 91, "EventWorld": 28}
#: CPU seconds that a cold Numba cache takes to compile each kernel family of `FAMILIES`, its scenes in one
#: worker process, measured on the same host.
FAMILY_CPU_SECONDS = {"friction": 91, "disks and orbits": 80, "polygons": 50, "events": 28}
#: A machine busy with other work (or slower than that host) takes up to this many times longer.
BUSY_FACTOR = 2.0
#: Seconds without a compile of carom's kernels after which a run's compile counts as done.
QUIET_SECONDS = 2.0
#: Compiles that last longer than this (s) are announced: a small kernel that the cache missed is not.
ANNOUNCE_SECONDS = 1.0


def engine_of(module: str) -> str | None:
    """Which engine the kernels of a module belong to: 'EventWorld' for `carom.events`, 'World' for the
    rest of carom, None for a module outside carom."""
    if module == "carom.events" or module.startswith("carom.events."):
        return "EventWorld"
    return "World" if module == "carom" or module.startswith("carom.") else None


def estimate(cpu_seconds: Iterable[float], processes: int = 1) -> str:
    """About how long compiling groups of kernels of these CPU costs takes on this machine, each group in
    one of ``processes`` processes, with free CPUs and on a busy one: "2.7 min (5.3 min on a busy machine)"."""
    costs = list(cpu_seconds)
    lanes = max(1, min(processes, os.cpu_count() or 1, len(costs)))
    wall = max(max(costs, default=0.0), sum(costs) / lanes)
    return f"{_duration(wall)} ({_duration(BUSY_FACTOR * wall)} on a busy machine)"


def _duration(seconds: float) -> str:
    """"40 s" or "2.7 min"."""
    return f"{seconds:.0f} s" if seconds < 100 else f"{seconds / 60:.2g} min"


def _write(text: str, stream) -> None:
    """A line on ``stream`` (stderr by default), above any progress bar on it."""
    tqdm.write(text, file=stream or sys.stderr)


class CompileNotice(event.Listener):
    """Says when Numba is compiling carom's kernels, once per engine, with about how long that takes, and
    when the compiles are done: `QUIET_SECONDS` after the last one ended, with the wall time they took.
    Numba fires its compile event only on a cache miss, so a warm cache says nothing; compiles that are
    over within ``announce_after`` seconds (one small kernel the cache missed) say nothing either."""

    def __init__(self, stream=None, quiet_seconds: float = QUIET_SECONDS, announce_after: float = ANNOUNCE_SECONDS):
        self.stream = stream
        self.quiet_seconds = quiet_seconds
        self.announce_after = announce_after
        self.enabled = True
        self.announced: set[str] = set()
        self._lock = threading.Lock()
        self._depth = 0  # compiles of carom's kernels under way (they nest)
        self._burst: dict = {}  # of the compiles since the last quiet spell: start, engines, said (announced)
        self._timers: dict[str, threading.Timer] = {}

    def on_start(self, ev):
        engine = self._engine(ev)
        if engine is None:
            return
        with self._lock:
            self._depth += 1
            self._cancel("done")
            if not self._burst:
                self._burst = {"start": time.perf_counter(), "engines": [], "said": []}
                self._later("announce", self.announce_after, self._announce)
            if engine not in self._burst["engines"]:
                self._burst["engines"].append(engine)
            ready = "announce" not in self._timers
        if ready:  # (an engine that joins a burst already announced)
            self._announce()

    def on_end(self, ev):
        if self._engine(ev) is None:
            return
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._burst:
                self._later("done", self.quiet_seconds, self._done)

    def _engine(self, ev) -> str | None:
        py_func = getattr(ev.data["dispatcher"], "py_func", None)
        return engine_of(getattr(py_func, "__module__", None) or "") if self.enabled else None

    def _later(self, name: str, seconds: float, then) -> None:
        timer = self._timers[name] = threading.Timer(seconds, then)
        timer.daemon = True
        timer.start()

    def _cancel(self, name: str) -> None:
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    def _announce(self) -> None:
        with self._lock:
            self._timers.pop("announce", None)
            new = [e for e in self._burst.get("engines", ()) if e not in self.announced]
            self.announced.update(new)
            self._burst.get("said", []).extend(new)
        for engine in new:
            cost = estimate([COMPILE_CPU_SECONDS[engine]])
            _write(f"compiling carom's {engine} kernels (first run only): up to about {cost}; `carom warmup` "
                   "compiles them all ahead", self.stream)  # fmt: skip

    def _done(self) -> None:
        with self._lock:
            if self._depth or not self._burst:
                return
            self._cancel("announce")
            self._timers.pop("done", None)
            burst, self._burst = self._burst, {}
        if burst["said"]:  # (a later compile of an engine announced before is not reported)
            seconds = time.perf_counter() - burst["start"] - self.quiet_seconds
            _write(f"compiled carom's {' and '.join(burst['said'])} kernels in {seconds:.0f} s", self.stream)


_notice = CompileNotice()
event.register("numba:compile", _notice)
_notice.enabled = False


def announce_compiles(enabled: bool = True, stream=None) -> None:
    """Say on ``stream`` (stderr by default) when carom's kernels are about to be compiled, once per engine
    and process: "compiling carom's World kernels (first run only): up to about 2.7 min ...", and when they
    are compiled ("compiled carom's World kernels in 95 s"). ``enabled=False``: stop. The `carom` command
    turns it on, whether or not its stderr is a terminal."""
    _notice.enabled = enabled
    _notice.stream = stream


# ----------------------------------------------------------------- the warm-up scenes
def _world_pile(dim: int) -> None:
    """Resting contact, friction with rolling resistance, sleeping, walls and gravity: a small pile."""
    from .canonical import pile

    w = pile(12 if dim == 2 else 18, dim=dim, friction=0.5, rolling_resistance=0.01)
    w.run(until=1.0, dt=0.005)
    w.total_energy()


def _world_smooth_pile(dim: int) -> None:
    """A smooth (frictionless) pile: the resting set without friction."""
    from .canonical import pile

    pile(8, dim=dim).run(until=0.5, dt=0.005)


def _world_rolling(dim: int) -> None:
    """A ball sliding on a rough floor until it rolls, then hitting a rough wall (impact friction)."""
    from .world import World

    gravity = np.zeros(dim)
    gravity[-1] = -9.81
    w = World(dim=dim, gravity=gravity)
    floor_normal = np.eye(dim)[-1]
    w.add_wall(point=np.zeros(dim), normal=floor_normal, restitution=0.3, static_friction=0.4, kinetic_friction=0.3)
    w.add_wall(point=np.eye(dim)[0] * 2.0, normal=-np.eye(dim)[0], restitution=0.5, static_friction=0.4)
    position = floor_normal * 0.1
    w.add_body(position=position, velocity=np.eye(dim)[0] * 3.0, mass=1.0, radius=0.1, restitution=0.3,
               static_friction=0.4, kinetic_friction=0.3, rolling_resistance=0.01)  # fmt: skip
    w.add_body(position=position + np.eye(dim)[0] * 0.5, mass=1.0, radius=0.1, restitution=0.3,
               static_friction=0.4, kinetic_friction=0.3)  # fmt: skip
    w.run(until=1.0, dt=0.005)


def _world_gas(dim: int) -> None:
    """An elastic gas in a box: the broad phase's grid and sorted keys, impacts between bodies and walls."""
    from .canonical import gas

    gas(64, 0.2, dim=dim).run(until=0.2, dt=0.01)
    gas(20, 0.01, dim=dim).run(until=0.2, dt=0.01)


def _world_forces(dim: int) -> None:
    """N-body gravity, drag in an atmosphere and thrust, with merging impacts, the Euler integrator and IAS15
    (its compiled loop, and the Python one for a callable thrust)."""
    from .forces import Atmosphere, NBodyGravity, Thrust
    from .world import World

    for mode, integrator in (("bounce", "leapfrog"), ("merge", "euler"), ("bounce", "ias15"), ("merge", "ias15")):
        w = World(dim=dim, impact_mode=mode, integrator=integrator)
        planet = w.add_body(position=np.zeros(dim), mass=1e3, radius=1.0, fixed=True)
        w.add_body(position=np.eye(dim)[0] * 1.5, velocity=np.eye(dim)[1] * 0.5, mass=1.0, radius=0.1)
        w.add_body(position=np.eye(dim)[0] * -1.5, velocity=np.eye(dim)[0] * 2.0, mass=1.0, radius=0.1)
        w.add_force(NBodyGravity(G=1e-3, softening=0.01))
        w.add_force(Atmosphere(body=planet, surface_density=1.0, scale_height=0.5))
        push = np.eye(dim)[1] * 0.1
        w.add_force(Thrust(body=1, force=(lambda world, t, push=push: push) if mode == "merge" else push))
        w.run(until=1.0, dt=0.01)
        w.total_energy()


def _world_polygons(dim: int) -> None:
    """Rigid polygons (2D only): boxes landing on a floor, on each other and on a disk, with friction; a
    cradle of boxes (an impact of more than four contact points)."""
    from .world import World

    w = World(dim=dim, gravity=(0.0, -9.81))
    w.add_wall((0.0, 0.0), (0.0, 1.0), restitution=0.3, static_friction=0.5)
    w.add_rectangle(1.0, 0.5, (0.0, 0.5), angle=0.3, mass=1.0, restitution=0.3, static_friction=0.5)
    w.add_polygon([(0.0, 0.0), (0.6, 0.0), (0.3, 0.5)], (0.2, 1.5), angular_velocity=2.0, mass=1.0,
                  restitution=0.3, static_friction=0.5)  # fmt: skip
    w.add_body((1.5, 0.3), velocity=(-1.0, 0.0), mass=1.0, radius=0.2, restitution=0.3, static_friction=0.5)
    w.run(until=1.0, dt=1.0 / 60.0)
    cradle = World(dim=dim)
    cradle.add_rectangle(1.0, 1.0, (-2.0, 0.0), velocity=(1.0, 0.0), mass=1.0)
    for k in range(3):
        cradle.add_rectangle(1.0, 1.0, (float(k), 0.0), mass=1.0)
    cradle.run(until=1.5, dt=0.1)


_world_polygons.dims = (2,)  # (polygons are planar)


def _event_gas(dim: int) -> None:
    """`EventWorld`: a hard-sphere (disk) gas in a periodic box, elastic and inelastic."""
    from .canonical import hard_sphere_gas

    hard_sphere_gas(64, 0.3, dim=dim).run(until=0.5)
    hard_sphere_gas(64, 0.3, dim=dim, e=0.8, tc=1e-3).run(until=0.5)


def _event_walls(dim: int) -> None:
    """`EventWorld` with walls and gravity: bodies bouncing and resting on a floor."""
    from .events import EventWorld

    gravity = np.zeros(dim)
    gravity[-1] = -9.81
    w = EventWorld(dim=dim, gravity=gravity)
    w.add_box(lower=np.zeros(dim), upper=np.full(dim, 3.0), restitution=0.8)
    w.add_bodies(np.full((2, dim), 1.0) + np.eye(dim)[:2] * 0.8, np.ones((2, dim)), masses=1.0, radii=0.3)
    w.run(until=1.0)


#: The warm-up scenes by kernel family: (label, function of dim). Each scene reaches a family of kernels in
#: both dimensions (in the dimensions of its ``dims`` attribute, where it has one). The families share few
#: kernels (a frictionless world compiles no friction kernel, a world of disks no polygon kernel), so
#: `carom warmup` compiles each in a worker process of its own, in parallel, the costliest first.
FAMILIES: dict[str, tuple[tuple[str, Callable[[int], None]], ...]] = {
    "friction": (
        ("World: pile with friction", _world_pile),
        ("World: rolling ball", _world_rolling),
    ),
    "disks and orbits": (
        ("World: gas", _world_gas),
        ("World: smooth pile", _world_smooth_pile),
        ("World: forces and merging", _world_forces),
    ),
    "polygons": (("World: rigid polygons", _world_polygons),),
    "events": (
        ("EventWorld: periodic gas", _event_gas),
        ("EventWorld: walls and gravity", _event_walls),
    ),
}
#: Every warm-up scene.
SCENES = tuple(scene for scenes in FAMILIES.values() for scene in scenes)


def _tasks(scenes, dims) -> list[tuple[str, Callable[[int], None], int]]:
    return [(f"{label} ({dim}D)", scene, dim) for label, scene in scenes for dim in dims
            if dim in getattr(scene, "dims", dims)]  # fmt: skip


def warm_up(scenes: Iterable[tuple[str, Callable[[int], None]]] = SCENES, dims=(3, 2), progress=None) -> float:
    """Run every warm-up scene in each dimension, compiling (or loading from Numba's cache) every kernel.
    ``progress`` is called with each step's label before it runs. Returns the seconds it took."""
    start = time.perf_counter()
    for label, scene, dim in _tasks(scenes, dims):
        if progress is not None:
            progress(label)
        scene(dim)
    return time.perf_counter() - start


def groups(dims=(3, 2)) -> dict[str, list[tuple[str, Callable[[int], None], int]]]:
    """The warm-up tasks (label, scene, dim) of each kernel family, by family: the part of `carom warmup`
    that one worker process runs."""
    return {family: _tasks(scenes, dims) for family, scenes in FAMILIES.items()}


def _run_group(family: str, tasks, done) -> None:
    """Run the warm-up tasks of one kernel family (in a worker process), putting (family, label, seconds since
    the group started) on ``done`` after each, and (family, None, CPU seconds of the group) at the end."""
    import warnings

    warnings.simplefilter("ignore")  # the scenes' own warnings (an inelastic collapse) are not the user's
    start, cpu = time.perf_counter(), time.process_time()
    for label, scene, dim in tasks:
        scene(dim)
        done.put((family, label, time.perf_counter() - start))
    done.put((family, None, time.process_time() - cpu))


def _next_message(done, runs) -> tuple:
    """The next message of a worker; a worker's error is raised here."""
    import queue

    while True:
        try:
            return done.get(timeout=0.5)
        except queue.Empty:
            for run in runs:
                if run.done():
                    run.result()


def warm_up_families(jobs: int = 2, show_progress: bool | None = None, stream=None, work=None) -> float:
    """Compile every kernel of both engines, each kernel family in a fresh worker process (``jobs`` of them at
    a time, the costliest family first; every kernel writes its own cache file). Says on ``stream`` (stderr
    by default) what it compiles and about how long a cold cache takes, and when each family is done; with a
    progress bar whose clock ticks (``show_progress`` None: only on a terminal), or else a line per scene.
    ``work``: the tasks by family (default `groups`). Returns the wall time, s."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    stream = stream or sys.stderr
    work = groups() if work is None else work
    start = time.perf_counter()
    total = sum(map(len, work.values()))
    lanes = min(jobs, len(work))
    cost = estimate([FAMILY_CPU_SECONDS.get(family, 0.0) for family in work], jobs)
    _write(f"compiling carom's kernels: {total} small scenes of {len(work)} kernel families in {lanes} "
           f"processes: about {cost} the first time, a few seconds from the cache", stream)  # fmt: skip
    context = multiprocessing.get_context("spawn")  # fresh workers: no lock or LLVM state forked mid-use
    # (a worker per family: what one family's compiles hold in memory is freed when it ends)
    pool = ProcessPoolExecutor(max(1, jobs), mp_context=context, max_tasks_per_child=1)
    with context.Manager() as manager, pool:
        done = manager.Queue()
        order = sorted(work, key=lambda family: -FAMILY_CPU_SECONDS.get(family, 0.0))
        runs = [pool.submit(_run_group, family, work[family], done) for family in order]
        bar = tqdm(total=total, unit="scene", file=stream, desc="compiling", bar_format="{l_bar}{bar}| "
                   "{n_fmt}/{total_fmt} scenes [{elapsed}{postfix}]",
                   disable=None if show_progress is None else not show_progress)  # fmt: skip
        with bar, ticking(bar):
            for _ in range(total + len(work)):
                family, label, seconds = _next_message(done, runs)
                if label is None:
                    wall = time.perf_counter() - start
                    _write(f"{family} kernels ready: {wall:.0f} s ({seconds:.0f} s of CPU)", stream)
                    continue
                if bar.disable:
                    _write(f"  {label}: done at {seconds:.0f} s", stream)
                bar.set_postfix_str(label, refresh=False)
                bar.update()
    return time.perf_counter() - start
