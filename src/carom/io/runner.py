"""Running a scene into a trajectory file, and resuming a stopped or finished run exactly.

Frames are written at ``t_k = k * output_interval`` (k = 0, 1, ...) and at ``until``. A frame is a look at
the run, never a stop of it: a `World` advances on its own step grid (`World.run` with ``exact=False``) to
the last step boundary at or before ``t_k``, and a frame that falls between two steps is taken from a copy
run on to ``t_k`` (`World.peek`), the world itself going on from the boundary. The steps are thus those of a
run with no frames, whatever the interval, and every frame holds the bits of a plain ``run(until=t_k)``.
The checkpoint saved with a frame is the world at that boundary, so resuming from it gives the same bits
as an uninterrupted run. The run's last step is shortened to end at ``until`` when that lies between two
steps; the final frame then gets no checkpoint, nor does one off the frame grid (``until`` not a multiple
of the interval), so that a resumed run with a later ``until`` goes on from the grids.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import msgspec
import numpy as np
from tqdm import tqdm

from .. import __version__
from ..model import as_number
from ..scenefile import Scene, SceneError, build_world
from .trajectory import TrajectoryWriter, read_checkpoint, rebuild_world

#: Wall-clock seconds between writes to the file (frames are buffered in between). A killed run loses
#: at most this much work; Ctrl-C loses none.
FLUSH_SECONDS = 1.0


def frame_times(until: float, interval: float, start: float = 0.0) -> tuple[np.ndarray, bool]:
    """Times of all frames (s) of a run from ``start`` to ``until``, and whether the last is on the grid
    ``k * interval``: a frame at ``start``, one at every ``k * interval`` after it, and one at ``until``. (The
    grid does not depend on ``start``: a run resumed from one of its frames steps as the run did.)"""
    if not (math.isfinite(until) and math.isfinite(interval) and interval > 0):
        raise ValueError(f"frames need a finite until and interval > 0, got until={until!r}, interval={interval!r}")
    n = until / interval
    on_grid = abs(n - round(n)) <= 1e-9 * max(n, 1.0)
    first = start / interval
    first = round(first) if abs(first - round(first)) <= 1e-9 * max(first, 1.0) else math.ceil(first) - 1
    times = np.arange(first, (round(n) if on_grid else math.ceil(n)) + 1) * interval
    times[0] = start
    if not on_grid:
        times[-1] = until
    return times, on_grid


def start(scene: Scene, text: str, source: str, out: Path, progress: bool = True) -> None:
    """Run a validated scene into ``out``. The world is built (and so the scene fully checked) before
    the file is created."""
    world = build_world(scene, source)
    with TrajectoryWriter.create(out, world, text, _attrs(scene, source)) as writer:
        _advance(world, writer, scene, progress)


def _attrs(scene: Scene, source: str) -> dict:
    """The file attributes of a run of ``scene`` (docs/file-format.md)."""
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
    if scene.run.start:
        attrs["start"] = scene.run.start
    return attrs


def resume(path: Path, until: float | None = None, progress: bool = True) -> None:
    """Continue the run in ``path`` from its checkpoint to ``until`` (default: the run's own end)."""
    text, attrs, state = read_checkpoint(path)
    run = {key: float(attrs[key]) for key in ("until", "output_interval", "dt") if key in attrs}
    if until is not None:
        run["until"] = until
    elif not math.isfinite(run["until"]):  # (a file from before carom checked it)
        raise SceneError(f"{path}: the run's end time until = {run['until']!r} is not finite: resume it with --until T")
    scene, world = rebuild_world(text, attrs, run["until"])
    world.set_state(state)
    if scene.run.until < world.time:
        raise SceneError(f"{path}: --until {scene.run.until} is before the checkpoint at t = {world.time} s")
    with TrajectoryWriter.reopen(path, world) as writer:
        writer.file.attrs["until"] = scene.run.until
        _advance(world, writer, scene, progress)


def _advance(world, writer: TrajectoryWriter, scene: Scene, progress: bool) -> bool:
    """Write the remaining frames of the run, with a progress bar on a terminal. Ctrl-C: see `_ctrl_c`.
    Returns whether the world may go on from where it is (the last frame has a checkpoint, of the world as
    it is)."""
    run = scene.run
    times, last_on_grid = frame_times(run.until, run.output_interval, run.start)
    count0, wall0 = world.collision_count, time.perf_counter()
    flushed = wall0
    bar = tqdm(
        total=run.until,
        initial=world.time,
        disable=None if progress else True,  # None: only on a terminal
        bar_format="{l_bar}{bar}| t = {n:.4g} / {total:.4g} s [{elapsed} < {remaining}{postfix}]",
    )
    with bar, ticking(bar), _ctrl_c() as stop:
        pieces = _Pieces(world, run.dt, stop, lambda: bar.update(world.time - bar.n))
        resumable = True
        for k in range(writer.frames, len(times)):
            if not pieces.reach(times[k]):
                raise KeyboardInterrupt  # (the frames so far are written on the way out; no checkpoint here)
            last = k == len(times) - 1
            frame, on_step = world, world.time == times[k]
            if not on_step and last:  # the run ends between two steps: its last step is shortened
                world.run(until=times[k], dt=run.dt)
            elif not on_step:
                frame = world.peek(times[k], run.dt)
            writer.add_frame(frame)
            resumable = not last or (last_on_grid and on_step)
            now = time.perf_counter()
            if stop or now - flushed > FLUSH_SECONDS or k >= len(times) - 2:  # checkpoint the last grid frame
                writer.flush(world.get_state() if resumable else None)
                flushed = now
            if stop:
                raise KeyboardInterrupt
            bar.set_postfix_str(_impacts(world.collision_count - count0, now - wall0), refresh=False)
            bar.update(world.time - bar.n)
    return resumable


def _impacts(count: int, seconds: float) -> str:
    """The progress bar's impacts: the count, and the rate per second of wall time once it is 1 or more
    ("12 impacts", "3,200 impacts, 1,600/s")."""
    rate = count / max(seconds, 1e-9)
    return f"{count:,} impact{'s' * (count != 1)}" + (f", {rate:,.0f}/s" if rate >= 1 else "")


@contextmanager
def ticking(bar: tqdm, every: float = 1.0):
    """Redraw ``bar`` every ``every`` seconds from a thread while the block runs, so that its clock goes on
    while the block computes (a first run compiles for minutes before the bar's first update)."""
    stop = threading.Event()

    def tick():
        while not stop.wait(every):
            bar.refresh()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield bar
    finally:
        stop.set()
        thread.join()


#: Wall-clock seconds that one piece of a frame should take: a stop is noticed within about this long
#: (unless one step, or one event, takes longer by itself).
PIECE_SECONDS = 0.1
#: After Ctrl-C the run goes on to the end of the frame for at most this long, to stop at a frame with a
#: checkpoint; past it, it stops where it is.
STOP_GRACE_SECONDS = 0.5


class _Pieces:
    """Advances a world towards each frame in pieces of whole steps (`World.run`'s ``max_steps``) or events
    (`EventWorld.run`'s ``max_events``), sized to take about `PIECE_SECONDS` each. The pieces fall on the
    world's step grid, so where a run is stopped never changes the bits of what follows."""

    def __init__(self, world, dt: float | None, stop: list, on_piece):
        self.world, self.dt, self.stop, self.on_piece = world, dt, stop, on_piece
        self.size = 1  # steps or events in the next piece

    def reach(self, t: float) -> bool:
        """Advance to time ``t`` (s), a `World` to the last step boundary at or before it: True once there;
        False if a stop was asked for more than `STOP_GRACE_SECONDS` ago first."""
        while True:
            wall = time.perf_counter()
            if self._piece(t):
                return True
            took = time.perf_counter() - wall
            if took < PIECE_SECONDS / 2:
                self.size *= 2
            elif took > PIECE_SECONDS and self.size > 1:
                self.size //= 2
            self.on_piece()
            if self.stop and time.perf_counter() - self.stop[0] > STOP_GRACE_SECONDS:
                return False

    def _piece(self, t: float) -> bool:
        """One piece towards ``t``; whether it got there."""
        world = self.world
        if self.dt is not None or getattr(world, "integrator", None) == "ias15":
            steps = world.step_count
            world.run(until=t, dt=self.dt, max_steps=self.size, exact=False)
            return world.step_count - steps < self.size
        events = world.event_count
        world.run(until=t, max_events=self.size)
        return world.event_count - events < self.size


@contextmanager
def _ctrl_c():
    """Ctrl-C during a run: the first one asks for a stop, at the end of the current frame if that comes
    within `STOP_GRACE_SECONDS`, with a checkpoint (the yielded list becomes non-empty, holding the time of
    the request; the caller then raises KeyboardInterrupt), or else where the run is, after the last frame
    (`resume` goes on from the last checkpoint). The handler then reverts to the default, so a second Ctrl-C
    ends the process at once, leaving the file as last written. (An exception raised inside compiled
    kernels would not unwind cleanly, so none is raised there.)"""
    requested: list = []

    def handler(signum, frame):
        requested.append(time.perf_counter())
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


class Recording:
    """A world being written to a trajectory file as it runs (`carom.record`): the file `carom run` writes,
    with a frame every ``every`` s of simulated time on the grid ``t0 + k * every`` (t0: the world's time
    when the recording began), impacts, diagnostics, body names, a checkpoint, and the world's scene
    (`Model.to_scene`), so that ``carom run --resume`` and `carom.load(path).world()` continue it.

    Frames never change the run: a `World` steps as it would with no frames (see the module docstring).
    Advance the world with `run`, not with ``world.run``. A `run` that ends off the frame grid writes a
    last frame there, and one that ends between two steps shortens its last step; the next `run` goes back
    to the last checkpoint (`World.set_state`, at the last frame on the grid or the step boundary before it)
    and continues from it, so the file is always that of one uninterrupted run (the impacts of the replayed
    stretch reach ``on_impact`` callbacks again). Ctrl-C stops a `run` as on the command
    line (KeyboardInterrupt); a later `run` goes on from the last checkpoint."""

    def __init__(self, world, path, every: float, dt: float | None = None, *, overwrite: bool = False,
                 progress: bool = False):  # fmt: skip
        path = Path(path)
        if not path.parent.is_dir():
            raise FileNotFoundError(f"{path}: cannot write the trajectory file there: the folder {path.parent} does "
                                    "not exist")  # fmt: skip
        if path.exists() and not overwrite:
            raise FileExistsError(f"{path} exists: pass overwrite=True to replace it")
        every = as_number("every", every)
        if not every > 0:
            raise ValueError(f"every must be > 0 (s between frames), got {every!r}")
        # the scene's until is replaced by each run's (the file's attributes hold the run's end)
        self._scene = world.to_scene(until=world.time + every, dt=dt, every=every)
        self.world, self.path, self.progress = world, path, progress
        self._writer = TrajectoryWriter.create(path, world, self._scene.to_toml(), _attrs(self._scene, "carom.record"))
        self._frame_time = world.time  # s: the time of the last frame written
        self._on_grid = True  # whether that frame has a checkpoint of the world as it is (it may go on from it)

    def run(self, until: float) -> None:
        """Advance the world to ``until`` (s), writing every frame on the way and checkpointing the last
        one on the grid."""
        if self._writer is None:
            raise ValueError(f"the recording to {self.path} is closed")
        until = as_number("until", until)
        if not self._on_grid:
            self.world.set_state(self._writer.rewind())
            self._frame_time = float(self._writer.file["frames/time"][-1])
        elif self.world.time != self._frame_time:
            raise ValueError(
                f"the world is at t = {self.world.time!r} s, not at its last frame t = {self._frame_time!r} s: "
                "advance a recorded world with Recording.run only"
            )
        if until < self._frame_time:
            raise ValueError(f"until must be >= the last frame's time {self._frame_time!r}, got {until!r}")
        scene = msgspec.structs.replace(self._scene, run=msgspec.structs.replace(self._scene.run, until=until))
        self._writer.file.attrs["until"] = until
        self._on_grid = False  # (until the run gets there: a stopped run goes back to its checkpoint)
        self._on_grid = _advance(self.world, self._writer, scene, self.progress)
        self._frame_time = self.world.time

    def close(self) -> None:
        """Write what is buffered and close the file (the world's impacts are no longer collected)."""
        if self._writer is not None:
            self._writer.__exit__(None, None, None)
            self._writer = None

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def record(world, path, every: float, dt: float | None = None, *, overwrite: bool = False,
           progress: bool = False) -> Recording:  # fmt: skip
    """Start writing ``world`` to the trajectory file ``path`` (HDF5, as `carom run` writes it): a frame
    now and one every ``every`` s (simulated) as `Recording.run` advances it, in steps of ``dt`` (s; a
    `World` needs it, an `EventWorld` has none). An existing file is replaced only with ``overwrite=True``.
    ``progress=True`` shows a progress bar on a terminal.

    >>> with carom.record(world, "run.h5", every=0.01, dt=1e-3) as rec:   # doctest: +SKIP
    ...     rec.run(until=2.0)
    """
    return Recording(world, path, every, dt, overwrite=overwrite, progress=progress)
