"""Compile carom's Numba kernels ahead of a first run, and say so when a run has to compile them.

Numba compiles a kernel the first time it is called and keeps the machine code in its on-disk cache
(`__pycache__` next to the source, or a user cache folder where that is read-only), so only the first run
after an install or an upgrade pays. `warm_up` runs small scenes that reach every kernel family a user
can: `carom warmup` calls it with a progress bar. `announce_compiles` makes a run that finds the cache
cold print one line to stderr before it compiles, so a silent pause is not mistaken for a hang.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable

import numpy as np
from numba.core import event

#: About how long the first run compiles each engine's kernels (s, measured on a 2-core machine).
COMPILE_SECONDS = {"World": 50, "EventWorld": 30}


def engine_of(module: str) -> str | None:
    """Which engine the kernels of a module belong to: 'EventWorld' for `carom.events`, 'World' for the
    rest of carom, None for a module outside carom."""
    if module == "carom.events" or module.startswith("carom.events."):
        return "EventWorld"
    return "World" if module == "carom" or module.startswith("carom.") else None


class CompileNotice(event.Listener):
    """Prints the first-run line once per engine, when Numba starts compiling one of carom's kernels (Numba
    fires its compile event only on a cache miss, so a warm cache prints nothing)."""

    def __init__(self, stream=None):
        self.stream = stream
        self.enabled = True
        self.announced: set[str] = set()

    def on_start(self, ev):
        py_func = getattr(ev.data["dispatcher"], "py_func", None)
        engine = engine_of(getattr(py_func, "__module__", None) or "")
        if not self.enabled or engine is None or engine in self.announced:
            return
        self.announced.add(engine)
        print(f"compiling carom's kernels (first run only, about {COMPILE_SECONDS[engine]} s)",
              file=self.stream or sys.stderr, flush=True)  # fmt: skip

    def on_end(self, ev):
        pass


_notice = CompileNotice()
event.register("numba:compile", _notice)
_notice.enabled = False


def announce_compiles(enabled: bool = True, stream=None) -> None:
    """Print "compiling carom's kernels (first run only, about N s)" to ``stream`` (stderr by default) when a
    kernel of an engine is about to be compiled, once per engine and process (``enabled=False``: stop). The
    `carom` command turns it on when its stderr is a terminal."""
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
    """N-body gravity, drag in an atmosphere and thrust, with merging impacts and the Euler integrator."""
    from .forces import Atmosphere, NBodyGravity, Thrust
    from .world import World

    for mode, integrator in (("bounce", "leapfrog"), ("merge", "euler")):
        w = World(dim=dim, impact_mode=mode, integrator=integrator)
        planet = w.add_body(position=np.zeros(dim), mass=1e3, radius=1.0, fixed=True)
        w.add_body(position=np.eye(dim)[0] * 1.5, velocity=np.eye(dim)[1] * 0.5, mass=1.0, radius=0.1)
        w.add_body(position=np.eye(dim)[0] * -1.5, velocity=np.eye(dim)[0] * 2.0, mass=1.0, radius=0.1)
        w.add_force(NBodyGravity(G=1e-3, softening=0.01))
        w.add_force(Atmosphere(body=planet, surface_density=1.0, scale_height=0.5))
        w.add_force(Thrust(body=1, force=np.eye(dim)[1] * 0.1))
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


#: The warm-up scenes: (label, function of dim). Each reaches a family of kernels in both dimensions (in the
#: dimensions of its ``dims`` attribute, where it has one).
SCENES: tuple[tuple[str, Callable[[int], None]], ...] = (
    ("World: pile with friction", _world_pile),
    ("World: smooth pile", _world_smooth_pile),
    ("World: rolling ball", _world_rolling),
    ("World: gas", _world_gas),
    ("World: forces and merging", _world_forces),
    ("World: rigid polygons", _world_polygons),
    ("EventWorld: periodic gas", _event_gas),
    ("EventWorld: walls and gravity", _event_walls),
)


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


def _engine_group(engine: str, done) -> None:
    """Run the warm-up scenes of one engine (in a worker process), putting each label on ``done``."""
    import warnings

    warnings.simplefilter("ignore")  # the scenes' own warnings (an inelastic collapse) are not the user's
    for label, scene, dim in _tasks([s for s in SCENES if s[0].startswith(f"{engine}:")], (3, 2)):
        scene(dim)
        done.put(label)


def _next_label(done, runs) -> str:
    """The label of the next scene a worker finished; a worker's error is raised here."""
    import queue

    while True:
        try:
            return done.get(timeout=0.5)
        except queue.Empty:
            for run in runs:
                if run.done():
                    run.result()


def warm_up_engines(jobs: int = 2, show_progress: bool | None = None) -> float:
    """Compile every kernel of both engines, each engine in its own worker process when ``jobs`` > 1 (every
    kernel writes its own cache file), with a progress bar (``show_progress`` None: only on a terminal).
    Returns the wall time, s."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from tqdm import tqdm

    start = time.perf_counter()
    total = len(_tasks(SCENES, (3, 2)))
    context = multiprocessing.get_context("spawn")  # fresh workers: no lock or LLVM state forked mid-use
    with context.Manager() as manager, ProcessPoolExecutor(max(1, jobs), mp_context=context) as pool:
        done = manager.Queue()
        runs = [pool.submit(_engine_group, engine, done) for engine in COMPILE_SECONDS]
        with tqdm(total=total, unit="scene", disable=None if show_progress is None else not show_progress,
                  desc="compiling carom's kernels") as bar:  # fmt: skip
            for _ in range(total):
                bar.set_postfix_str(_next_label(done, runs), refresh=False)
                bar.update()
    return time.perf_counter() - start
