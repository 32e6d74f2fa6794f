"""Running a scene into a trajectory file, and resuming a stopped or finished run exactly.

Frames are written at ``t_k = k * output_interval`` (k = 0, 1, ...) and at ``until``. The world advances
from frame to frame with ``World.run(until=t_k, dt)``, so a run's steps depend only on the scene, never
on where it was stopped: resuming from a checkpoint gives the same bits as an uninterrupted run. A final
frame off that grid (``until`` not a multiple of the interval) gets no checkpoint, so that a resumed
run with a later ``until`` continues from the grid.
"""

from __future__ import annotations

import math
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from tqdm import tqdm

from .. import __version__
from ..scenefile import Scene, SceneError, build_world, parse_scene
from .trajectory import TrajectoryWriter, read_checkpoint

#: Wall-clock seconds between writes to the file (frames are buffered in between). A killed run loses
#: at most this much work; Ctrl-C loses none.
FLUSH_SECONDS = 1.0


def frame_times(until: float, interval: float) -> tuple[np.ndarray, bool]:
    """Times of all frames (s), and whether the last is on the grid ``k * interval``."""
    n = until / interval
    on_grid = abs(n - round(n)) <= 1e-9 * max(n, 1.0)
    times = np.arange((round(n) if on_grid else math.ceil(n)) + 1) * interval
    if not on_grid:
        times[-1] = until
    return times, on_grid


def start(scene: Scene, text: str, source: str, out: Path, progress: bool = True) -> None:
    """Run a validated scene into ``out``. The world is built (and so the scene fully checked) before
    the file is created."""
    world = build_world(scene, source)
    attrs = {
        "source": source,
        "carom_version": __version__,
        "engine": scene.world.engine,
        "seed": scene.world.seed,
        "until": scene.run.until,
        "output_interval": scene.run.output_interval,
    }
    if scene.run.dt is not None:
        attrs["dt"] = scene.run.dt
    with TrajectoryWriter.create(out, world, text, attrs) as writer:
        _advance(world, writer, scene, progress)


def resume(path: Path, until: float | None = None, progress: bool = True) -> None:
    """Continue the run in ``path`` from its checkpoint to ``until`` (default: the run's own end)."""
    text, attrs, state = read_checkpoint(path)
    run = {key: float(attrs[key]) for key in ("until", "output_interval", "dt") if key in attrs}
    if until is not None:
        run["until"] = until
    source = str(attrs["source"])
    scene = parse_scene(text, source, {"run": run, "world": {"seed": int(attrs["seed"])}})
    world = build_world(scene, source)
    world.set_state(state)
    if scene.run.until < world.time:
        raise SceneError(f"{path}: --until {scene.run.until} is before the checkpoint at t = {world.time} s")
    with TrajectoryWriter.reopen(path, world) as writer:
        writer.file.attrs["until"] = scene.run.until
        _advance(world, writer, scene, progress)


def _advance(world, writer: TrajectoryWriter, scene: Scene, progress: bool) -> None:
    """Write the remaining frames of the run, with a progress bar on a terminal."""
    run = scene.run
    times, last_on_grid = frame_times(run.until, run.output_interval)
    count0, wall0 = world.collision_count, time.perf_counter()
    flushed = wall0
    bar = tqdm(
        total=run.until,
        initial=world.time,
        disable=None if progress else True,  # None: only on a terminal
        bar_format="{l_bar}{bar}| t = {n:.4g} / {total:.4g} s [{elapsed} < {remaining}{postfix}]",
    )
    with bar, _ctrl_c() as stop:
        for k in range(writer.frames, len(times)):
            if run.dt is None:
                world.run(until=times[k])
            else:
                world.run(until=times[k], dt=run.dt)
            writer.add_frame(world)
            now = time.perf_counter()
            if stop or now - flushed > FLUSH_SECONDS or k >= len(times) - 2:  # checkpoint the last grid frame
                writer.flush(world.get_state() if last_on_grid or k < len(times) - 1 else None)
                flushed = now
            if stop:
                raise KeyboardInterrupt
            rate = (world.collision_count - count0) / max(now - wall0, 1e-9)
            bar.set_postfix_str(f"{rate:,.0f} impacts/s", refresh=False)
            bar.update(world.time - bar.n)


@contextmanager
def _ctrl_c():
    """Ctrl-C during a run: the first one asks for a stop after the current frame, with a checkpoint
    (the yielded list becomes non-empty; the caller then raises KeyboardInterrupt). The handler then
    reverts to the default, so a second Ctrl-C ends the process at once, leaving the file as last written.
    (An exception raised inside compiled kernels would not unwind cleanly, so none is raised there.)"""
    requested: list = []

    def handler(signum, frame):
        requested.append(signum)
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread, which alone receives signals
        previous = None
    try:
        yield requested
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
