"""The `carom` command end to end, in subprocesses: exit codes, messages, files, kills and resumes."""

import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image
from test_io import assert_same_run

from carom import examples
from carom.cli import main
from carom.io import load, runner
from carom.scenefile import read_scene

CAROM = [sys.executable, "-c", "from carom.cli import main; main()"]
SMALL = """# Two balls meet.
[world]
dim = 2
[run]
until = 1.0
dt = 0.01
[[bodies]]
position = [0.0, 0.0]
velocity = [1.0, 0.0]
mass = 1.0
radius = 0.1
[[bodies]]
position = [0.5, 0.0]
mass = 1.0
radius = 0.1
"""
# Far longer than any test waits: it is always stopped part-way.
LONG = """[world]
dim = 2
seed = 2
[run]
until = 1e4
dt = 0.001
output_interval = 0.05
[[generate]]
kind = "gas"
count = 40
lower = [0.0, 0.0]
upper = [4.0, 4.0]
radius = 0.1
mass = 1.0
speed = 2.0
[[boxes]]
lower = [0.0, 0.0]
upper = [4.0, 4.0]
"""


def carom(*args, cwd=None):
    return subprocess.run([*CAROM, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)


def scene_file(tmp_path, text=SMALL, name="scene.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def reference(tmp_path, until):
    """The long scene run to ``until`` without interruption (in-process)."""
    path = scene_file(tmp_path, LONG, "reference.toml")
    scene, text = read_scene(path, {"run": {"until": until}})
    runner.start(scene, text, str(path), path.with_suffix(".h5"), progress=False)
    return load(path.with_suffix(".h5"))


def stop_part_way(tmp_path, sig):
    """Start the long run, send ``sig`` once it has written more than its first frame. Frames are
    flushed about once a second, after a compilation that can take a minute on a cold Numba cache: wait
    for two writes at least half a second apart after the file appeared."""
    scene = scene_file(tmp_path, LONG, "long.toml")
    path = tmp_path / "long.h5"
    proc = subprocess.Popen([*CAROM, "run", scene], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    writes = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        if path.exists():
            mtime = path.stat().st_mtime
            if not writes or mtime > writes[-1] + 0.5:
                writes.append(mtime)
            if len(writes) >= 3:
                time.sleep(0.3)  # let that write end
                break
    assert proc.poll() is None, "the run ended before it could be stopped"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err, tmp_path / "long.h5"


def resume_and_compare(tmp_path, path, stopped_at):
    """Resume a stopped run to a second past where it stopped; it must equal an uninterrupted run."""
    until = round(float(stopped_at) + 1.0, 2)
    done = carom("run", "--resume", path, "--until", until, "-q")
    assert done.returncode == 0, done.stderr
    assert_same_run(load(path), reference(tmp_path, until))


def test_killed_run_leaves_a_readable_file_that_resumes_exactly(tmp_path):
    code, _, path = stop_part_way(tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    partial = load(path)
    assert len(partial.time) > 1 and np.array_equal(partial.time, np.arange(len(partial.time)) * 0.05)
    resume_and_compare(tmp_path, path, partial.time[-1])


def test_ctrl_c_stops_cleanly_and_resume_finishes_the_run(tmp_path):
    code, err, path = stop_part_way(tmp_path, signal.SIGINT)
    assert code == 130 and f"carom run --resume {path.name}" in err, err
    stopped = load(path)
    with h5py.File(path, "r") as f:  # stopped at a frame, with its checkpoint
        latest = f["checkpoint"][str(f["checkpoint/latest"][()])]
        assert latest.attrs["frame"] == f["frames/time"].shape[0] - 1 == len(stopped.time) - 1
    assert "stopped" in carom("info", path).stdout
    resume_and_compare(tmp_path, path, stopped.time[-1])


def test_resume_with_a_later_until_extends_the_run(tmp_path):
    scene = scene_file(tmp_path)
    assert carom("run", scene, "--until", "0.5", "-q", cwd=tmp_path).returncode == 0
    assert carom("run", "--resume", "scene.h5", "--until", "1.0", cwd=tmp_path).returncode == 0
    assert carom("run", scene, "--out", "whole.h5", "-q", cwd=tmp_path).returncode == 0
    assert_same_run(load(tmp_path / "scene.h5"), load(tmp_path / "whole.h5"))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("position = [0.5, 0.0]\n", ""), "bodies[1]: Object missing required field `position`"),
        (("mass = 1.0\nradius = 0.1\n[[", 'mass = "one"\nradius = 0.1\n[['), "bodies[0].mass = 'one'"),
        (("mass = 1.0\nradius = 0.1\n[[", "mass = -1.0\nradius = 0.1\n[["), "bodies[0]: mass must be > 0"),
        (("[0.5, 0.0]", "[0.15, 0.0]"), "bodies[1]: the new body"),
        (("dt = 0.01", "dt = 0.01\nuntill = 2.0"), "run: unknown key 'untill'"),
    ],
    ids=["missing field", "wrong type", "negative mass", "overlapping bodies", "unknown key"],
)
def test_bad_scene_exits_2_naming_file_and_field_and_writes_nothing(tmp_path, change, expected):
    scene = scene_file(tmp_path, SMALL.replace(*change))
    result = carom("run", scene, cwd=tmp_path)
    assert result.returncode == 2
    assert f"{scene}: {expected}" in result.stderr
    assert not (tmp_path / "scene.h5").exists()


def test_usage_errors_exit_2(tmp_path):
    scene = scene_file(tmp_path)
    cli = CliRunner()
    assert cli.invoke(main, ["run"]).exit_code == 2
    assert cli.invoke(main, ["run", str(scene), "--until", "-1"]).exit_code == 2
    assert cli.invoke(main, ["run", "--resume", str(scene), "--dt", "0.1"]).exit_code == 2
    wrong = cli.invoke(main, ["run", "--example", "newtons_cradel"])
    assert wrong.exit_code == 2 and "did you mean 'newtons_cradle'?" in wrong.output
    assert cli.invoke(main, ["info", str(scene)]).exit_code == 2  # not a trajectory file
    assert cli.invoke(main, ["render", str(scene), "--out", "x.avi"]).exit_code == 2


def test_a_file_that_cannot_be_written_is_bad_input_not_a_traceback(tmp_path):
    nowhere = tmp_path / "missing-folder" / "x.h5"
    result = CliRunner().invoke(main, ["run", str(scene_file(tmp_path)), "--out", str(nowhere)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"the folder {nowhere.parent} does not exist" in result.output and not nowhere.parent.exists()


def test_every_command_has_help_with_examples():
    for command in ("run", "info", "plot", "render", "examples", "demo"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "Example" in result.output, command
    assert "carom run scene.toml" in CliRunner().invoke(main, ["--help"]).output


def test_example_run_info_plot_render(tmp_path):
    listing = carom("examples").stdout.splitlines()
    assert [line.split()[0] for line in listing] == examples.names()
    assert carom("run", "--example", "heavy_target", "--out", "heavy.h5", "-q", cwd=tmp_path).returncode == 0
    info = carom("info", "heavy.h5", cwd=tmp_path).stdout
    assert "bodies    2 (0 fixed, 2 active at the end)" in info and "impacts   1 " in info
    assert "0 .. 3 s of 3 s" in info
    assert carom("plot", "heavy.h5", cwd=tmp_path).returncode == 0
    assert Image.open(tmp_path / "heavy.png").size == (900, 900)
    gif = tmp_path / "heavy.gif"
    result = carom("render", "heavy.h5", "--out", gif, "--size", 320, "--max-frames", 12, cwd=tmp_path)
    assert result.returncode == 0 and "12 frames" in result.stderr
    assert Image.open(gif).size[0] == 320 and Image.open(gif).n_frames == 12


def test_progress_bar_stays_quiet_off_a_terminal(tmp_path):
    result = carom("run", scene_file(tmp_path), cwd=tmp_path)
    said = [line for line in result.stderr.splitlines() if not line.startswith(("compiling carom", "compiled carom"))]
    assert result.returncode == 0 and result.stdout == "" and said == ["wrote scene.h5"]  # (a cold cache says so)
    assert os.path.getsize(tmp_path / "scene.h5") > 0


def test_info_of_a_run_where_nothing_moved_says_so(tmp_path):
    """The drift's scale, the largest kinetic energy, is floored at 1e-300 J to stay finite; a still run's is 0 J."""
    still = SMALL.replace("velocity = [1.0, 0.0]\n", "")
    path = tmp_path / "still.h5"
    assert CliRunner().invoke(main, ["run", str(scene_file(tmp_path, still)), "--out", str(path), "-q"]).exit_code == 0
    assert not np.any(load(path).kinetic_energy)
    info = CliRunner().invoke(main, ["info", str(path)])
    assert info.exit_code == 0 and "1e-300" not in info.output, info.output
    assert "energy    total 0 -> 0 J: nothing moved (the kinetic energy is 0 J in every frame)" in info.output


def test_examples_come_with_import_carom():
    code = "import carom; print(carom.examples.names()); print(carom.examples.path('pile').name)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "'pile'" in done.stdout and "pile.toml" in done.stdout


def test_the_progress_bar_counts_impacts_and_gives_a_rate_only_once_it_reads_above_zero():
    assert runner._impacts(0, 5.0) == "0 impacts"
    assert runner._impacts(1, 5.0) == "1 impact"
    assert runner._impacts(12, 30.0) == "12 impacts"  # 0.4 a second: "0 impacts/s" said nothing
    assert runner._impacts(3200, 2.0) == "3,200 impacts, 1,600/s"
