"""Sweeps: one scene file run over a grid of parameter values, each run (a *member*) on a Dask worker.

``--vary KEY=START:STOP:COUNT``, ``KEY=START:STOP`` (integers) or ``KEY=a,b,c`` gives the values of one key;
several keys make the Cartesian product. A key is a dotted path into the scene file (``world.seed``,
``bodies.0.velocity.1``, ``generate.0.restitution``) or an alias (`ALIASES`, and ``restitution``: see
`set_restitution`). Each member's scene is the file with its values written in, stored as TOML in its own
trajectory file, so a member file can be read, resumed and re-run like any other run.

Everything is checked before anything runs (`plan`): every member's scene is parsed, and the world built
once for each value of each key; a bad key or value is a `SweepError` naming it. A member that fails while
it runs is reported in the summary and the others go on. Running a sweep again skips the members whose
trajectory file is complete (`member_state`). The format is documented in ``docs/sweeps.md``.
"""

from __future__ import annotations

import copy
import csv
import itertools
import math
import os
import signal
import sys
import time
import tomllib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tomli_w

from .io import load, read_checkpoint
from .io.runner import resume, start
from .scenefile import SceneError, build_world, parse_scene

#: Short keys and the scene paths they stand for (``restitution`` is special: `set_restitution`).
ALIASES = {"seed": "world.seed"}
RESTITUTION = "restitution"
INSTALL_HINT = "carom sweep needs Dask; install it with: pip install 'carom[sweep]'"
#: Columns of the summary table after the member's index and its parameters.
OUTCOMES = (
    "status",
    "error",
    "skipped",
    "impacts",
    "final_time",
    "kinetic_energy",
    "total_energy",
    "energy_drift",
    "momentum_drift",
    "frames",
    "wall_s",
    "path",
)
#: Values of ``START:STOP:COUNT`` are rounded to this many significant digits (0.1:0.9:9 gives 0.3).
DIGITS = 12


class SweepError(ValueError):
    """A --vary option, scene value or output folder that cannot be used; the message names it."""


# ----------------------------------------------------------------------------------------------- --vary
@dataclass(frozen=True)
class Vary:
    """One varied key and its values, in order."""

    key: str
    values: tuple


def parse_vary(option: str) -> Vary:
    """``KEY=START:STOP:COUNT`` (COUNT evenly spaced values, both ends included), ``KEY=START:STOP`` (every
    integer from START to STOP) or ``KEY=a,b,c`` (these values: numbers, true/false, or text)."""
    key, sep, spec = option.partition("=")
    key, spec = key.strip(), spec.strip()
    if not sep or not key or not spec:
        raise SweepError(f"--vary {option!r}: expected KEY=START:STOP:COUNT, KEY=START:STOP or KEY=a,b,c")
    try:
        values = _range(spec) if ":" in spec else tuple(_scalar(item.strip()) for item in spec.split(","))
    except ValueError as err:
        raise SweepError(f"--vary {option!r}: {err}") from None
    return Vary(key, values)


def _range(spec: str) -> tuple:
    parts = [p.strip() for p in spec.split(":")]
    if len(parts) == 2:
        first, last = (_integer(p) for p in parts)
        if first > last:
            raise ValueError(f"START {first} is after STOP {last}")
        return tuple(range(first, last + 1))
    if len(parts) != 3:
        raise ValueError(f"{spec!r} is not START:STOP:COUNT or START:STOP")
    first, last = (_number(p) for p in parts[:2])
    count = _integer(parts[2])
    if count < 1:
        raise ValueError(f"COUNT must be at least 1, got {count}")
    values = [float(f"{v:.{DIGITS}g}") for v in np.linspace(first, last, count)]
    if all(isinstance(v, int) for v in (first, last)):  # integer ends: whole values stay integers (seeds)
        return tuple(int(v) if v == round(v) else v for v in values)
    return tuple(values)


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an integer") from None


def _number(text: str) -> int | float:
    value = _scalar(text)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def _scalar(text: str):
    """A TOML number or boolean, else the text itself (a string value such as ``min``)."""
    if not text:
        raise ValueError("a value is empty")
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def product(varies: list[Vary]) -> list[dict]:
    """Every combination of the values, the last key varying fastest: one ``{key: value}`` per member."""
    keys = [v.key for v in varies]
    for key in {k for k in keys if keys.count(k) > 1}:
        raise SweepError(f"--vary {key}: the key is given more than once")
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(v.values for v in varies))]


# ----------------------------------------------------------------------------------------------- scene data
def set_value(data: dict, key: str, value) -> None:
    """Set ``key`` (a dotted path, or an alias) in the scene's TOML tables ``data``, in place."""
    if key == RESTITUTION:
        set_restitution(data, value)
        return
    steps = ALIASES.get(key, key).split(".")
    node = data
    for depth, step in enumerate(steps):
        where = ".".join(steps[: depth + 1])
        last = depth == len(steps) - 1
        if isinstance(node, list):
            if not step.isdigit() or int(step) >= len(node):
                raise SweepError(
                    f"--vary {key}: {where}: the scene has {len(node)} entries there (0 .. {len(node) - 1})"
                )
            step = int(step)
        elif not isinstance(node, dict):
            raise SweepError(f"--vary {key}: {'.'.join(steps[:depth])} is {node!r}, which has no {step!r}")
        elif not last and step not in node:
            if step.isdigit():
                raise SweepError(f"--vary {key}: {where} is not in the scene")
            node[step] = {}  # a table the file leaves out (its defaults), e.g. [config]
        if last:
            node[step] = value
        else:
            node = node[step]


def set_restitution(data: dict, value) -> None:
    """The ``restitution`` alias: the coefficient of every ``[[bodies]]``, ``[[generate]]``, ``[[walls]]``
    and (not periodic) ``[[boxes]]`` table, whether or not the file gives one, and of every ``[[pairs]]``
    table that gives one. With the scene's
    ``restitution_rule`` "min", "max" or "mean" every impact then has this ``e``; with "product", ``e²``."""
    for table in ("bodies", "generate", "walls"):
        for entry in data.get(table, []):
            entry["restitution"] = value
    for box in data.get("boxes", []):
        if not box.get("periodic", False):
            box["restitution"] = value
    for pair in data.get("pairs", []):
        if "restitution" in pair:
            pair["restitution"] = value


# ----------------------------------------------------------------------------------------------- members
@dataclass(frozen=True)
class Member:
    """One run of a sweep: what a worker needs, and nothing that cannot be pickled."""

    index: int
    params: dict  #: {key: value} as given to --vary
    text: str  #: the member's scene file (TOML)
    source: str  #: the sweep's scene file
    path: str  #: its trajectory file, absolute (workers may run in other folders)


def member_file(folder: Path, index: int, count: int) -> Path:
    """``member-0007.h5``: the index in `product` order, with at least four digits."""
    return folder / f"member-{index:0{max(4, len(str(count - 1)))}d}.h5"


def plan(scene_path: Path, varies: list[Vary], folder: Path, run: dict | None = None) -> list[Member]:
    """The members of a sweep, each checked: its scene parses, and every value of every key builds a world
    (with the other keys at their first value). ``run``: ``{"until": T, "dt": DT}`` for every member."""
    text = _read(scene_path)
    source = str(scene_path)
    base = parse_scene(text, source, {"run": run} if run else None)
    build_world(base, source)  # the scene, with --until and --dt, before any value of --vary
    data = tomllib.loads(text)
    data["run"] = {"output_interval": base.run.output_interval, **data["run"], **(run or {})}
    combos = product(varies)
    members = []
    for index, params in enumerate(combos):
        member_text = _member_text(data, params, source, f"{index} of {len(combos)} in a sweep of {source}")
        path = member_file(folder.resolve(), index, len(combos))
        members.append(Member(index, params, member_text, source, str(path)))
    _check_builds(members, varies)
    return members


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise SweepError(f"{path}: cannot read the scene file: {err}") from None


def _member_text(data: dict, params: dict, source: str, title: str) -> str:
    """The scene with ``params`` written in, as TOML; parsed here so that a bad key or value is found now."""
    member = copy.deepcopy(data)
    for key, value in params.items():
        set_value(member, key, value)
    header = f"# member {title}: " + ", ".join(f"{k} = {v!r}" for k, v in params.items())
    text = f"{header}\n{tomli_w.dumps(member)}"
    try:
        parse_scene(text, source)
    except SceneError as err:
        raise SweepError(f"--vary {_settings(params)}: {err}") from None
    return text


def _check_builds(members: list[Member], varies: list[Vary]) -> None:
    """Build the world of one member for each value of each key (the world checks what parsing cannot,
    such as restitution in [0, 1])."""
    first = {v.key: v.values[0] for v in varies}
    wanted = [{**first, v.key: value} for v in varies for value in v.values] or [{}]
    seen = set()
    for member in members:
        params = tuple(member.params.items())
        if params in seen or member.params not in wanted:
            continue
        seen.add(params)
        try:
            build_world(parse_scene(member.text, member.source), member.source)
        except SceneError as err:
            raise SweepError(f"--vary {_settings(member.params)}: {err}") from None


def _settings(params: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def member_state(member: Member) -> str:
    """What the member's file holds: "absent" (no file), "done" (a complete trajectory of this member's
    scene), "partial" (of this scene, its last frame before ``run.until``; or not readable) or "other"
    (a trajectory of another scene: another sweep's member)."""
    path = Path(member.path)
    if not path.exists():
        return "absent"
    try:
        traj = load(path)
    except (OSError, ValueError, KeyError):
        return "partial"
    if traj.scene != member.text:
        return "other"
    until = parse_scene(member.text, member.source).run.until
    return "done" if len(traj.time) and traj.time[-1] >= until - 1e-9 * abs(until) else "partial"


def split_done(members: list[Member], folder: Path, force: bool = False) -> tuple[list[dict], list[Member]]:
    """The summary rows of the members whose file is complete (skipped; wall time from the folder's earlier
    summary), and the members still to run. Files of another scene are removed with ``force``, else they
    are a `SweepError`."""
    states = {m.index: member_state(m) for m in members}
    others = [m for m in members if states[m.index] == "other"]
    if others and not force:
        raise SweepError(
            f"{others[0].path} holds a run of another scene ({len(others)} such files in the folder; another "
            "sweep?): give another --out, or --force to overwrite them"
        )
    for m in others:
        Path(m.path).unlink()
    walls = previous_wall_times(folder)
    done = [
        outcome(m, walls.get(Path(m.path).name, math.nan), skipped=True) for m in members if states[m.index] == "done"
    ]
    return done, [m for m in members if states[m.index] != "done"]


def run_member(member: Member) -> dict:
    """Run one member into its file (resuming a partial one from its checkpoint) and return its summary
    row. Never raises: a member that fails gets status "failed" and the error. Called on the workers."""
    wall = time.perf_counter()
    path = Path(member.path)
    try:
        scene = parse_scene(member.text, member.source)
        if _resumable(path):
            resume(path, scene.run.until, progress=False)
        else:
            start(scene, member.text, member.source, path, progress=False)
    except Exception as err:  # the member fails, not the sweep
        return failed(member, err, time.perf_counter() - wall)
    return outcome(member, time.perf_counter() - wall)


def _resumable(path: Path) -> bool:
    """A file (left by an earlier, stopped try of this member) with a checkpoint to continue from."""
    if not path.exists():
        return False
    try:
        read_checkpoint(path)
    except (OSError, ValueError, KeyError):
        return False
    return True


def outcome(member: Member, wall_s: float, skipped: bool = False) -> dict:
    """The summary row of a member whose run is complete, read back from its file. Energy drift is
    (E_end - E_0) over the largest kinetic energy of the run; momentum drift is |p_end - p_0| over the
    largest sum of |m v| (as in ``carom info``)."""
    t = load(member.path)
    scale_e, scale_p = t.energy_scale, t.momentum_scale
    return _row(
        member,
        status="ok",
        skipped=skipped,
        impacts=int(t.collision_count[-1]),
        final_time=float(t.time[-1]),
        kinetic_energy=float(t.kinetic_energy[-1]),
        total_energy=float(t.total_energy[-1]),
        energy_drift=float((t.total_energy[-1] - t.total_energy[0]) / scale_e),
        momentum_drift=float(np.linalg.norm(t.momentum[-1] - t.momentum[0]) / scale_p),
        frames=len(t.time),
        wall_s=wall_s,
    )


def failed(member: Member, err: BaseException, wall_s: float = math.nan) -> dict:
    """The summary row of a member that raised ``err``."""
    return _row(member, status="failed", error=f"{type(err).__name__}: {err}", wall_s=wall_s)


def not_run(member: Member) -> dict:
    """The summary row of a member that has not run (the sweep was stopped)."""
    return _row(member, status="not run")


def _row(member: Member, **outcomes) -> dict:
    row = {"member": member.index, **member.params, **dict.fromkeys(OUTCOMES, "")}
    row.update(outcomes, path=Path(member.path).name, skipped=outcomes.get("skipped", False))
    return row


# ----------------------------------------------------------------------------------------------- running
def run_all(client, members: list[Member], progress: bool = True):
    """Run members on a Dask ``client``, with a progress bar; yield their rows as they complete. The
    first runs alone, so that a fresh machine compiles carom's kernels (cached on disk) once, not once per
    worker. A member whose worker dies is run again by Dask (from its file's checkpoint: `run_member`), and
    is "failed" only once Dask gives up on it (``distributed.scheduler.allowed-failures``)."""
    if not members:
        return
    from dask.distributed import as_completed
    from tqdm import tqdm

    failures = 0
    bar = tqdm(total=len(members), unit="member", disable=None if progress else True, desc="sweep")
    with bar:
        for batch in (members[:1], members[1:]):
            futures = {client.submit(run_member, m, pure=False): m for m in batch}
            for future in as_completed(futures):
                try:
                    row = future.result()
                except Exception as err:
                    row = failed(futures[future], err)
                failures += row["status"] == "failed"
                bar.update()
                bar.set_postfix_str(f"{failures} failed", refresh=False)
                yield row


def open_client(stack, scheduler: str | None, workers: int):
    """A Dask client on ``scheduler`` (an address), or on a new local cluster of ``workers`` processes
    with one thread each (`_local_cluster`); closed by ``stack`` (a `contextlib.ExitStack`)."""
    from dask.distributed import Client

    if scheduler is not None:
        try:
            return stack.enter_context(Client(scheduler, timeout="10s"))
        except OSError as err:
            raise SweepError(f"--scheduler {scheduler}: cannot connect ({err})") from None
    return stack.enter_context(Client(stack.enter_context(_local_cluster(workers))))


@contextmanager
def _local_cluster(workers: int):
    """A local cluster of ``workers`` processes that ignore Ctrl-C. A terminal sends Ctrl-C to every process
    of the command, and each of Dask's would print its traceback; the sweep stops them itself
    (`stop_workers`)."""
    from dask.distributed import LocalCluster

    # Multiprocessing's resource tracker (a process of its own, started with the cluster and given these
    # warning options) frees the semaphores of workers that `stop_workers` ends, and would warn about them.
    sys.warnoptions.append("ignore:resource_tracker:UserWarning")
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the processes started now inherit it
    except ValueError:  # not the main thread, which alone receives signals
        previous = None
    try:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               scheduler_kwargs={"dashboard_address": ":0"})  # (its web server: any free port)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    with cluster:
        yield cluster


def stop_workers(client) -> bool:
    """After Ctrl-C: end the worker processes of a local cluster (`_local_cluster`) at once; whether there
    were any. Closing the cluster instead waits seconds for busy workers and prints their tracebacks. A
    member cut short keeps its frames up to its last checkpoint, and the same command resumes it. A
    cluster of the user's own (``--scheduler``) is left alone: False."""
    from distributed.core import Status

    cluster = getattr(client, "cluster", None)
    if cluster is None:
        return False
    for nanny in list(cluster.workers.values()):
        nanny.status = Status.closing  # its worker process is not restarted when it ends
        if nanny.pid is not None:
            os.kill(nanny.pid, signal.SIGKILL)
    return True


def exit_now(code: int) -> None:
    """End the process with ``code`` after `stop_workers`, without closing the local cluster: its scheduler
    and nannies would wait for the workers that were ended. Multiprocessing's own clean-up (its semaphores)
    runs first, as at a normal exit."""
    from multiprocessing import util

    util._run_finalizers()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def require_dask() -> None:
    """Raise `SweepError` with `INSTALL_HINT` if Dask's distributed scheduler is missing."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError as err:
        raise SweepError(f"{INSTALL_HINT}  ({err})") from None


# ----------------------------------------------------------------------------------------------- summary
def previous_wall_times(folder: Path) -> dict[str, float]:
    """Wall time (s) of each member file in an earlier ``summary.csv`` of the folder, by file name."""
    try:
        with open(folder / "summary.csv", newline="") as f:
            return {r["path"]: float(r["wall_s"]) for r in csv.DictReader(f) if r.get("status") == "ok"}
    except (OSError, ValueError, KeyError):
        return {}


def write_summary(rows: list[dict], keys: list[str], folder: Path, title: str = "") -> tuple[Path, Path]:
    """``summary.csv`` (one row per member, in member order) and ``summary.png``; returns both paths."""
    rows = sorted(rows, key=lambda r: r["member"])
    table = folder / "summary.csv"
    with open(table, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["member", *keys, *OUTCOMES])
        writer.writeheader()
        writer.writerows(rows)
    picture = folder / "summary.png"
    plot_summary(rows, keys[0] if keys else "member", picture, title)
    return table, picture


def plot_summary(rows: list[dict], key: str, path: Path, title: str = "") -> None:
    """Impacts and final kinetic energy of each member that ran, against ``key`` (one point per member;
    with other keys varied too, a line through the mean at each value)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ok = [r for r in rows if r["status"] == "ok"]
    labels = list(dict.fromkeys(r[key] for r in rows))
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in labels)
    position = {v: (v if numeric else i) for i, v in enumerate(labels)}
    fig = Figure(figsize=(7, 6), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 1, sharex=True)
    for ax, field, name in ((axes[0], "impacts", "impacts"), (axes[1], "kinetic_energy", "final kinetic energy (J)")):
        xs = np.array([position[r[key]] for r in ok], dtype=float)
        ys = np.array([r[field] for r in ok], dtype=float)
        ax.plot(xs, ys, "o", alpha=0.6, label="member")
        if len(set(xs)) < len(xs):
            at = np.array(sorted(set(xs)))
            ax.plot(at, [ys[xs == x].mean() for x in at], "-", color="C1", label="mean")
            ax.legend()
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    if not numeric:
        axes[1].set_xticks(range(len(labels)), [str(v) for v in labels])
    axes[1].set_xlabel(key)
    failures = len(rows) - len(ok)
    counts = f"{len(rows)} members" + (f", {failures} failed or not run (not shown)" if failures else "")
    axes[0].set_title(f"{title}: {counts}" if title else counts)
    fig.savefig(path)
