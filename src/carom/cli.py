"""The ``carom`` command: run scene files, inspect, plot and render runs, and the demo gallery.

Exit codes: 0 success, 2 bad input (a scene, file or option that cannot be used), 1 failure,
130 interrupted by Ctrl-C (the trajectory file is valid and can be resumed).
"""

from __future__ import annotations

import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import ExitStack
from pathlib import Path

import click
import numpy as np

from . import examples
from .io import load
from .io.runner import frame_times, resume, start
from .scenefile import read_scene

#: The example scenes `carom demo` runs: every example. The first one runs alone (it compiles the kernels
#: of the step engine for the others); the others start in this order, the slowest first, two at a time.
GALLERY = (
    "restitution",
    "pile",
    "hopper",
    "box_pyramid",
    "frictional_heap",
    "hard_disks",
    "billiard_follow",
    "billiard_break",
    "earth_drop",
    "gas_box",
    "earth_moon_satellite",
    "planetesimal_ring",
    "satellite_decay",
    "heavy_target",
    "ramp_roll",
    "newtons_cradle",
    "box_stack",
    "box_stairs",
)


class BadInput(click.ClickException):
    """An error in what the user gave: exit code 2."""

    exit_code = 2


class _Carom(click.Group):
    """Reports a file that cannot be written or read as an error (exit code 1), not a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OSError as err:
            raise click.ClickException(str(err)) from None


def _finite(ctx, param, value):
    """Click callback: a number option must be finite (click's float types accept inf)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value!r} is not a finite number")
    return value


def _check_output(path: Path, what: str, *, replace: bool = True) -> None:
    """Reject an output file whose folder does not exist, or (``replace=False``) that exists already."""
    folder = path.parent
    if not folder.is_dir():
        raise BadInput(f"{path}: cannot write {what} there: the folder {folder} does not exist")
    if path.exists() and not replace:
        raise BadInput(
            f"{path} exists: carom run does not replace a trajectory file; add --force to replace it, "
            f"or continue it with: carom run --resume {path}"
        )


def _trajectory(path: Path):
    try:
        return load(path)
    except (OSError, ValueError, KeyError) as err:
        raise BadInput(f"{path}: cannot read it as a carom trajectory file ({err})") from None


@click.group(cls=_Carom, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="carom")
def main():
    """carom: bodies moving and colliding, with exact impacts.

    Write a scene file (TOML, SI units; see docs/scenes.md), run it, and look at the result:

    \b
      carom run scene.toml            # writes scene.h5
      carom info scene.h5             # what is in it; energy and momentum drift
      carom plot scene.h5             # energy, momenta, impacts/s or paths -> scene.png
      carom render scene.h5 --out scene.mp4
      carom export scene.h5 --format xyz   # also vtk (ParaView), csv (pandas)
      carom examples                  # the scenes shipped with carom
      carom demo                      # run a gallery of them into ./carom-demo
    """
    from .warmup import announce_compiles

    announce_compiles()  # a cold Numba cache: say why the first run pauses, on a terminal or in a log


@main.command()
@click.argument("scene", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--example", metavar="NAME", help="Run a shipped example scene (see `carom examples`).")
@click.option(
    "--resume",
    "resume_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="RUN.h5",
    help="Continue a stopped or finished run from its checkpoint.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="RUN.h5",
    help="Trajectory file to write (default: the scene's output.file, or SCENE.h5 here).",
)
@click.option(
    "--until",
    type=click.FloatRange(min=0, min_open=True),
    callback=_finite,
    metavar="T",
    help="End time, s (with --resume: the new end time).",
)
@click.option(
    "--dt", type=click.FloatRange(min=0, min_open=True), callback=_finite, metavar="DT", help="Time step, s."
)
@click.option(
    "--seed", type=click.IntRange(min=0), metavar="N", help="Seed for the random generators of the scene (>= 0)."
)
@click.option("--force", is_flag=True, help="Replace the trajectory file if it exists.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def run(scene, example, resume_path, out, until, dt, seed, force, quiet):
    """Run a scene and write its trajectory file (HDF5).

    A progress bar shows simulated time, wall time, impacts per second and the time left (on a
    terminal only). An existing trajectory file is not replaced without --force. Ctrl-C stops within a
    second, at the end of the current frame if it comes by then (a second Ctrl-C at once): the file stays
    valid, and `--resume` continues it exactly, with the same bits as a run that was never stopped.

    \b
    Examples:
      carom run scene.toml
      carom run scene.toml --out long.h5 --until 60 --seed 3
      carom run --example billiard_break
      carom run --resume long.h5 --until 120
    """
    if sum(x is not None for x in (scene, example, resume_path)) != 1:
        raise click.UsageError("give exactly one of SCENE, --example NAME or --resume RUN.h5")
    if resume_path is not None and (out, dt, seed) != (None, None, None):
        raise click.UsageError("--resume continues a run as it was: only --until may go with it")
    path = resume_path or out
    try:
        if resume_path is not None:
            resume(path, until, not quiet)
        else:
            scene = examples.path(example) if example is not None else scene
            overrides = {"run": {k: v for k, v in (("until", until), ("dt", dt)) if v is not None}}
            if seed is not None:
                overrides["world"] = {"seed": seed}
            spec, text = read_scene(scene, overrides)
            path = path or Path(spec.output.file or f"{scene.stem}.h5")
            _check_output(path, "the trajectory file", replace=force)
            start(spec, text, str(scene), path, not quiet)
    except ValueError as err:  # SceneError, or an unusable file or example name
        raise BadInput(str(err)) from None
    except KeyboardInterrupt:
        if path is not None and path.exists():
            click.echo(f"\ninterrupted: {path} holds every frame so far. Continue with:", err=True)
            click.echo(f"  carom run --resume {path}", err=True)
        sys.exit(130)
    if not quiet:
        click.echo(f"wrote {path}", err=True)


@main.command()
@click.argument("run_file", metavar="RUN.h5", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def info(run_file):
    """Describe a run: its scene, counts, time span and conservation.

    Energy drift is relative to the largest kinetic energy of the run; momentum drift is relative to
    the sum of |m v| (walls, fixed bodies, forces and e < 1 all change these: drift is not an error in
    itself).

    \b
    Example:
      carom info billiard_break.h5
    """
    click.echo(_summary(run_file, _trajectory(run_file)))


def _finished(t) -> bool:
    """Whether a trajectory holds every frame of its run (False for an end time that is not finite, which
    files from before carom checked it may hold)."""
    until, interval = float(t.attrs["until"]), float(t.attrs["output_interval"])
    start = float(t.attrs.get("start", 0.0))  # (a recording from Python may start later than 0)
    return math.isfinite(until) and len(t.time) == len(frame_times(until, interval, start)[0])


def _summary(path: Path, t) -> str:
    """The text of `carom info`."""
    a = t.attrs
    finished = _finished(t)
    energy0, energy = t.total_energy[0], t.total_energy
    e_scale, p_scale = t.energy_scale, t.momentum_scale
    e_drift, e_worst = (energy[-1] - energy0) / e_scale, np.max(np.abs(energy - energy0)) / e_scale
    p_drift = np.linalg.norm(t.momentum[-1] - t.momentum[0]) / p_scale
    span = t.time[-1] - t.time[0]
    rate = t.collision_count[-1] / span if span > 0 else 0.0
    dt = f", dt {float(a['dt']):.6g} s" if "dt" in a else ""
    stopped = "" if finished else "  (stopped: continue with carom run --resume)"
    if not math.isfinite(float(a["until"])):
        stopped = "  (stopped: an end time that is not finite; continue with carom run --resume --until T)"
    rows = {
        "file": path,
        "scene": f"{a['source']}  ({a['dim']}D, engine {a['engine']}, seed {a['seed']})",
        "bodies": f"{len(t.fixed)} ({_polygon_count(t)}{int(t.fixed.sum())} fixed, {int(t.active[-1].sum())} active "
        f"at the end)",
        "walls": len(t.wall_point),
        "frames": f"{len(t.time)}, every {float(a['output_interval']):.6g} s{dt}",
        "time": f"{t.time[0]:.6g} .. {t.time[-1]:.6g} s of {float(a['until']):.6g} s{stopped}",
        "energy": f"total {energy0:.6g} -> {energy[-1]:.6g} J: drift {e_drift:+.3e}, largest {e_worst:.3e} "
        f"(of the largest kinetic energy, {e_scale:.6g} J)"
        if np.any(t.kinetic_energy)  # (else the scale is the floor that keeps the drift finite, 1e-300 J)
        else f"total {energy0:.6g} -> {energy[-1]:.6g} J: nothing moved (the kinetic energy is 0 J in every frame)",
        "momentum": f"{t.momentum[0]} -> {t.momentum[-1]} kg m/s: drift {p_drift:.3e} (of max sum |m v|)",
        "impacts": f"{int(t.collision_count[-1])} ({len(t.impacts['time'])} logged), {rate:.6g} per second",
    }
    return "\n".join(f"{key:<10}{value}" for key, value in rows.items())


def _polygon_count(t) -> str:
    """"P polygons, " for a run with polygons, else ""."""
    count = int(np.sum(t.shapes == "polygon"))
    return f"{count} polygon{'s' * (count != 1)}, " if count else ""


@main.command(name="plot")
@click.argument("run_file", metavar="RUN.h5", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="IMAGE",
    help="Image to write: .png (also for a name without a suffix), .pdf, .svg, .jpg, ... (default: RUN.png).",
)
def plot_command(run_file, out):
    """Plot a run: energy, momentum, angular momentum, their relative changes and impacts per second
    against time; for orbits (N-body gravity) and runs without impacts, the bodies' paths instead.

    An existing image of that name is replaced (plots and animations are remade from the run in
    seconds; `carom run` alone refuses to replace its file without --force).

    \b
    Example:
      carom plot billiard_break.h5 --out break.png
    """
    from .render import plot  # matplotlib is loaded only by the commands that draw

    out = _image_name(out or run_file.with_suffix(".png"))
    _check_output(out, "the plot")
    plot(_trajectory(run_file), out)
    click.echo(f"wrote {out}", err=True)


def _image_name(out: Path) -> Path:
    """The file `carom plot` writes for ``--out``: a name without a suffix gets ``.png``; a suffix must
    be a format matplotlib writes (pgf, which needs LaTeX, excepted)."""
    from matplotlib.backend_bases import FigureCanvasBase

    if not out.suffix:
        return out.with_name(out.name + ".png")
    formats = sorted(set(FigureCanvasBase.get_supported_filetypes()) - {"pgf"})
    if out.suffix[1:].lower() not in formats:
        raise BadInput(f"--out {out}: cannot write a plot as {out.suffix!r}; use one of: {', '.join(formats)}")
    return out


@main.command(name="render")
@click.argument("run_file", metavar="RUN.h5", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="RUN.mp4|RUN.gif",
    help="Animation to write (default: RUN.mp4).",
)
@click.option(
    "--trails/--no-trails", default=None, help="Draw each body's path (default: the scene's output.trails)."
)
@click.option(
    "--fps", type=click.IntRange(1, 120), help="Frames per second (default: the scene's output.fps)."
)
@click.option(
    "--color", "color_by", type=click.Choice(["speed", "mass"]), help="Colour bodies by speed or mass."
)
@click.option(
    "--size", type=click.IntRange(160, 2160), default=720, show_default=True, help="Longer side, px."
)
@click.option(
    "--max-frames",
    type=click.IntRange(min=1),
    default=300,
    show_default=True,
    help="At most this many frames, evenly spaced in the run.",
)
def render_command(run_file, out, trails, fps, color_by, size, max_frames):
    """Animate a run: bodies to scale on equal axes, walls and fixed bodies shown.

    2D runs are drawn as they are; 3D runs in an orthographic projection with depth shading (camera in
    the scene's output.camera). An existing animation of that name is replaced.

    \b
    Examples:
      carom render gas_box.h5 --out gas_box.mp4
      carom render earth_moon_satellite.h5 --out orbit.gif --trails --fps 24
    """
    from .render import render  # matplotlib is loaded only by the commands that draw

    out = out or run_file.with_suffix(".mp4")
    if out.suffix.lower() not in (".mp4", ".gif"):
        raise BadInput(f"--out {out}: the animation must be a .mp4 or .gif file")
    _check_output(out, "the animation")  # (before ffmpeg starts)
    traj = _trajectory(run_file)
    n = render(traj, out, trails=trails, fps=fps, color_by=color_by, size=size, max_frames=max_frames)
    click.echo(f"wrote {out} ({n} frames)", err=True)


@main.command(name="examples")
def list_examples():
    """List the example scenes shipped with carom, one line each.

    \b
    Example:
      carom examples
      carom run --example newtons_cradle
    """
    names = examples.names()
    width = max(map(len, names))
    for name in names:
        click.echo(f"{name:<{width}}  {examples.summary(name)}")


@main.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("carom-demo"),
    show_default=True,
    help="Folder for the runs, animations and plots.",
)
def demo(out):
    """Run every example scene: for each, NAME.h5, NAME.mp4 and NAME.png in the folder.

    \b
    Example:
      carom demo --out gallery
    """
    out.mkdir(parents=True, exist_ok=True)
    wall = time.perf_counter()

    def report(name, seconds):
        click.echo(f"{name:<22} {seconds:5.1f} s  {examples.summary(name)}")

    # The first scene runs here: it compiles the engine once (cached on disk) for the workers to load.
    report(GALLERY[0], _demo_one(GALLERY[0], out))
    with ProcessPoolExecutor(max_workers=2) as pool:
        runs = {pool.submit(_demo_one, name, out): name for name in GALLERY[1:]}
        for done in as_completed(runs):  # reported as they finish
            report(runs[done], done.result())
    click.echo(f"gallery in {out}/ ({time.perf_counter() - wall:.0f} s)")


def _demo_one(name: str, folder: Path) -> float:
    """Run, plot and animate one example; return the wall time, s."""
    from .render import plot, render

    wall = time.perf_counter()
    scene, text = read_scene(examples.path(name))
    start(scene, text, str(examples.path(name)), folder / f"{name}.h5", progress=False)
    traj = load(folder / f"{name}.h5")
    plot(traj, folder / f"{name}.png")
    render(traj, folder / f"{name}.mp4", max_frames=240, size=640)
    return time.perf_counter() - wall


@main.command(name="sweep")
@click.argument("scene", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--vary",
    "varies",
    multiple=True,
    required=True,
    metavar="KEY=VALUES",
    help="A key and its values: START:STOP:COUNT, START:STOP (integers) or a,b,c. Repeat for a product.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    metavar="DIR",
    help="Folder for the member trajectories, summary.csv and summary.png.",
)
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler of a running cluster (default: a local one).")
@click.option(
    "--workers", type=click.IntRange(min=1), metavar="N", help="Processes of the local cluster (default: CPUs)."
)
@click.option("--until", type=click.FloatRange(min=0, min_open=True), metavar="T", help="End time of every run, s.")
@click.option("--dt", type=click.FloatRange(min=0, min_open=True), metavar="DT", help="Time step of every run, s.")
@click.option("--force", is_flag=True, help="Overwrite files in DIR that hold runs of another scene.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def sweep_command(scene, varies, out, scheduler, workers, until, dt, force, quiet):
    """Run a scene over a grid of parameter values on Dask: one trajectory per member, and a summary.

    Each --vary gives a key (a dotted path into the scene file, or the alias seed or restitution) and
    its values; several make every combination. Members whose file is complete are skipped, so the same
    command again resumes a stopped sweep. Exit code 1 if any member failed (see DIR/summary.csv).
    Needs Dask: pip install 'carom[sweep]'. See docs/sweeps.md.

    \b
    Examples:
      carom sweep scene.toml --vary restitution=0.1:0.9:9 --vary seed=1:100 --out runs
      carom sweep scene.toml --vary bodies.0.velocity.0=1,2,4 --out runs --until 5 --workers 8
      carom sweep scene.toml --vary seed=1:1000 --out /shared/runs --scheduler tcp://head:8786
    """
    from . import sweep as sweeps  # dask is loaded only by this command

    if scheduler is not None and workers is not None:
        raise click.UsageError("--workers sizes the local cluster: leave it out with --scheduler")
    run_settings = {k: v for k, v in (("until", until), ("dt", dt)) if v is not None}
    try:
        sweeps.require_dask()
        grid = [sweeps.parse_vary(v) for v in varies]
        members = sweeps.plan(scene, grid, out, run_settings)
        rows, todo = sweeps.split_done(members, out, force)
    except ValueError as err:  # SweepError, SceneError
        raise BadInput(str(err)) from None
    workers = workers or os.cpu_count()
    where = f"the scheduler at {scheduler}" if scheduler else f"a local cluster of {workers} workers"
    doing = f"running {len(todo)} on {where}" if todo else "nothing left to run"
    click.echo(f"{len(members)} members, {len(rows)} done before: {doing}", err=True)
    keys = [v.key for v in grid]
    try:
        with ExitStack() as stack:
            client = sweeps.open_client(stack, scheduler, workers) if todo else None
            out.mkdir(parents=True, exist_ok=True)
            try:
                for row in sweeps.run_all(client, todo, not quiet):
                    rows.append(row)
            except KeyboardInterrupt:
                local = sweeps.stop_workers(client)
                finished = {r["member"] for r in rows}
                pending = [sweeps.not_run(m) for m in todo if m.index not in finished]
                sweeps.write_summary(rows + pending, keys, out, scene.name)
                click.echo(f"\ninterrupted: run the same command again to go on ({out}/summary.csv so far)", err=True)
                if local:
                    sweeps.exit_now(130)
                raise
    except ValueError as err:  # a scheduler that cannot be reached
        raise BadInput(str(err)) from None
    except KeyboardInterrupt:
        sys.exit(130)
    table, picture = sweeps.write_summary(rows, keys, out, scene.name)
    click.echo(f"wrote {table} and {picture}", err=True)
    failures = [r for r in sorted(rows, key=lambda r: r["member"]) if r["status"] == "failed"]
    for r in failures[:5]:
        click.echo(f"member {r['member']} failed: {r['error']}", err=True)
    if failures:
        click.echo(f"{len(failures)} of {len(members)} members failed (all in {table})", err=True)
        sys.exit(1)


@main.command(name="export")
@click.argument("run_file", metavar="RUN.h5", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", required=True, type=click.Choice(["xyz", "vtk", "csv"]), help="What to write (see above)."
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="File (xyz, csv) or folder (vtk) to write (default: RUN.xyz, RUN.csv, RUN_vtk).",
)
@click.option(
    "--every", type=click.IntRange(min=1), default=1, show_default=True, metavar="K", help="Frames 0, K, 2K, ..."
)
@click.option("--force", is_flag=True, help="Replace the output if it exists.")
def export_command(run_file, fmt, out, every, force):
    """Export a run's frames for other tools (units SI; columns in docs/export.md).

    \b
      xyz  extended XYZ, one block per frame: OVITO, ASE (ase.io.read(path, index=":"))
      vtk  a folder of .vtu point data, one per frame, and frames.pvd with the times: ParaView
      csv  one row per frame and body: time, body, name, position, velocity, spin, radius, mass, active

    The output appears only when complete; an existing one is replaced only with --force.

    \b
    Examples:
      carom export gas_box.h5 --format xyz
      carom export gas_box.h5 --format vtk --every 4 --out gas_frames
      carom export billiard_break.h5 --format csv --out break.csv --force
    """
    from .io import export  # meshio is loaded only by this command

    out = out or export.default_path(run_file, fmt)
    if out.exists() and out.resolve() == run_file.resolve():
        raise BadInput(f"--out {out} is the run file itself: choose another output")
    if out.exists() and not force:
        raise BadInput(f"{out} exists: add --force to replace it")
    traj = _trajectory(run_file)
    try:
        opened = export.export(traj, out, fmt, every=every, overwrite=force)
    except (ValueError, FileExistsError) as err:
        raise BadInput(str(err)) from None
    frames = len(range(0, len(traj.time), every))
    click.echo(f"wrote {opened} ({frames} frames of {len(traj.time)})", err=True)


@main.command()
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=2, show_default=True,
              help="Worker processes, each compiling one kernel family at a time (there are 4).")  # fmt: skip
def warmup(jobs):
    """Compile carom's kernels now, so that the first run starts at once.

    It says what it compiles and about how long that takes, then shows a progress bar (on a terminal) or
    a line per scene (in a log), and a line as each kernel family is ready. Numba keeps the machine code in
    its cache (next to carom's sources, or a user cache folder where those are read-only): only the first
    run after installing or upgrading carom compiles. Running it again only loads the cache (a few seconds).

    \b
    Example:
      carom warmup
    """
    from .warmup import announce_compiles, warm_up_families

    announce_compiles(False)  # (it says so itself)
    seconds = warm_up_families(jobs)
    click.echo(f"carom's kernels are ready ({seconds:.0f} s)", err=True)


if __name__ == "__main__":
    main()
