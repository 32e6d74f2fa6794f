"""The ``carom`` command: run scene files, inspect, plot and render runs, and the demo gallery.

Exit codes: 0 success, 2 bad input (a scene, file or option that cannot be used), 1 failure,
130 interrupted by Ctrl-C (the trajectory file is valid and can be resumed).
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from pathlib import Path

import click
import numpy as np

from . import examples
from .io import load
from .io.runner import frame_times, resume, start
from .scenefile import read_scene

#: The example scenes `carom demo` runs, in gallery order.
GALLERY = (
    "restitution",
    "billiard_break",
    "billiard_follow",
    "ramp_roll",
    "heavy_target",
    "earth_moon_satellite",
    "earth_drop",
    "gas_box",
    "pile",
    "newtons_cradle",
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
      carom plot scene.h5             # energy, momentum, impacts/s -> scene.png
      carom render scene.h5 --out scene.mp4
      carom examples                  # the scenes shipped with carom
      carom demo                      # run a gallery of them into ./carom-demo
    """


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
    metavar="T",
    help="End time, s (with --resume: the new end time).",
)
@click.option("--dt", type=click.FloatRange(min=0, min_open=True), metavar="DT", help="Time step, s.")
@click.option("--seed", type=int, metavar="N", help="Seed for the random generators of the scene.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def run(scene, example, resume_path, out, until, dt, seed, quiet):
    """Run a scene and write its trajectory file (HDF5).

    A progress bar shows simulated time, wall time, impacts per second and the time left (on a
    terminal only). Ctrl-C stops after the current frame (a second Ctrl-C at once): the file stays
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


def _summary(path: Path, t) -> str:
    """The text of `carom info`."""
    a = t.attrs
    times, _ = frame_times(float(a["until"]), float(a["output_interval"]))
    finished = len(t.time) == len(times)
    energy0, energy = t.total_energy[0], t.total_energy
    e_scale = max(float(np.max(np.abs(t.kinetic_energy))), 1e-300)
    moving = ~t.fixed
    p_scale = max(
        float(np.max(np.sum(t.mass[:, moving] * np.linalg.norm(t.velocity[:, moving], axis=2), axis=1))),
        1e-300,
    )
    e_drift, e_worst = (energy[-1] - energy0) / e_scale, np.max(np.abs(energy - energy0)) / e_scale
    p_drift = np.linalg.norm(t.momentum[-1] - t.momentum[0]) / p_scale
    span = t.time[-1] - t.time[0]
    rate = t.collision_count[-1] / span if span > 0 else 0.0
    dt = f", dt {float(a['dt']):.6g} s" if "dt" in a else ""
    stopped = "" if finished else "  (stopped: continue with carom run --resume)"
    rows = {
        "file": path,
        "scene": f"{a['source']}  ({a['dim']}D, engine {a['engine']}, seed {a['seed']})",
        "bodies": f"{len(t.fixed)} ({int(t.fixed.sum())} fixed, {int(t.active[-1].sum())} active at the end)",
        "walls": len(t.wall_point),
        "frames": f"{len(t.time)}, every {float(a['output_interval']):.6g} s{dt}",
        "time": f"{t.time[0]:.6g} .. {t.time[-1]:.6g} s of {float(a['until']):.6g} s{stopped}",
        "energy": f"total {energy0:.6g} -> {energy[-1]:.6g} J: drift {e_drift:+.3e}, largest {e_worst:.3e} "
        f"(of the largest kinetic energy, {e_scale:.6g} J)",
        "momentum": f"{t.momentum[0]} -> {t.momentum[-1]} kg m/s: drift {p_drift:.3e} (of max sum |m v|)",
        "impacts": f"{int(t.collision_count[-1])} ({len(t.impacts['time'])} logged), {rate:.6g} per second",
    }
    return "\n".join(f"{key:<10}{value}" for key, value in rows.items())


@main.command(name="plot")
@click.argument("run_file", metavar="RUN.h5", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="PNG",
    help="Image to write (default: RUN.png).",
)
def plot_command(run_file, out):
    """Plot energy (kinetic, potential, total), momentum and impacts per second against time.

    \b
    Example:
      carom plot billiard_break.h5 --out break.png
    """
    from .render import plot  # matplotlib is loaded only by the commands that draw

    out = out or run_file.with_suffix(".png")
    plot(_trajectory(run_file), out)
    click.echo(f"wrote {out}", err=True)


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
    the scene's output.camera).

    \b
    Examples:
      carom render gas_box.h5 --out gas_box.mp4
      carom render earth_moon_satellite.h5 --out orbit.gif --trails --fps 24
    """
    from .render import render  # matplotlib is loaded only by the commands that draw

    out = out or run_file.with_suffix(".mp4")
    if out.suffix.lower() not in (".mp4", ".gif"):
        raise BadInput(f"--out {out}: the animation must be a .mp4 or .gif file")
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
    """Run a gallery of example scenes: for each, NAME.h5, NAME.mp4 and NAME.png in the folder.

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
    rest = GALLERY[1:]
    with ProcessPoolExecutor(max_workers=2) as pool:
        for name, seconds in zip(rest, pool.map(_demo_one, rest, repeat(out)), strict=True):
            report(name, seconds)
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


if __name__ == "__main__":
    main()
