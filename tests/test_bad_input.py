"""Bad values and output files: each is rejected up front (exit code 2, or a ValueError), with a message that
names the field or file and the value, and leaves no file behind; Ctrl-C stops within a second or two."""

import re
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from test_cli import CAROM, SMALL, scene_file
from test_io import assert_same_run

import carom
from carom import examples
from carom.cli import main
from carom.errors import NotInEventWorld
from carom.io import load
from carom.scenefile import SceneError, build_world, read_scene


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# ----------------------------------------------------------------------------------------------- times
@pytest.mark.parametrize("value", ["inf", "nan"])
def test_an_end_time_that_is_not_finite_is_refused_and_writes_nothing(tmp_path, value):
    in_file = cli("run", scene_file(tmp_path, SMALL.replace("until = 1.0", f"until = {value}")), "--out",
                  tmp_path / "a.h5")  # fmt: skip
    assert in_file.exit_code == 2 and "run" in in_file.output and value in in_file.output, in_file.output
    option = cli("run", scene_file(tmp_path), "--until", value, "--out", tmp_path / "b.h5")
    assert option.exit_code == 2 and f"'--until': {value} is not a finite number" in option.output
    assert list(tmp_path.glob("*.h5")) == []


def test_a_file_left_with_an_infinite_end_time_is_reported_and_resumes_with_until(tmp_path):
    path = tmp_path / "old.h5"
    assert cli("run", scene_file(tmp_path), "--out", path, "-q").exit_code == 0
    with h5py.File(path, "r+") as f:  # as runs before the check left it
        f.attrs["until"] = np.inf
    info = cli("info", path)
    assert info.exit_code == 0 and "an end time that is not finite" in info.output, info.output
    bare = cli("run", "--resume", path)
    assert bare.exit_code == 2 and f"{path}: the run's end time until = inf is not finite" in bare.output
    assert cli("run", "--resume", path, "--until", 1.0, "-q").exit_code == 0
    assert load(path).time[-1] == 1.0


def test_too_many_frames_are_refused(tmp_path):
    result = cli("run", scene_file(tmp_path), "--until", "1e300", "--out", tmp_path / "x.h5")
    assert result.exit_code == 2 and "frames: at most MAX_FRAMES = 1e+07" in result.output
    assert not (tmp_path / "x.h5").exists()


def test_a_time_step_too_small_for_the_clock_is_refused_with_its_limit(tmp_path):
    for args in (("--dt", "1e-300"), ()):
        text = SMALL if args else SMALL.replace("dt = 0.01", "dt = 1e-300")
        result = cli("run", scene_file(tmp_path, text), *args, "--out", tmp_path / "x.h5")
        assert result.exit_code == 2 and "dt = 1e-300 s is too small" in result.output, result.output
        assert "MAX_STEPS (1e+12) = 1e-12 s" in result.output
    assert not (tmp_path / "x.h5").exists()
    world = carom.World(dim=2)
    world.add_body((0.0, 0.0), mass=1.0, radius=0.1)
    with pytest.raises(ValueError, match=r"dt = 1e-300 s is too small for a run to t = 1.0 s"):
        world.run(until=1.0, dt=1e-300)
    world.time = 1e6
    with pytest.raises(ValueError, match=r"dt = 1e-09 s is too small .* at least .* = 1e-06 s"):
        world.step(1e-9)
    world.run(until=1e6 + 1e-5, dt=2e-6)  # near the limit: the clock advances, the run ends
    assert world.time == 1e6 + 1e-5


# ----------------------------------------------------------------------------------------------- Ctrl-C
STUCK = SMALL.replace("dt = 0.01", "dt = 1e-11")  # 5e8 steps to its first frame after the start


def test_ctrl_c_stops_within_a_second_or_two_even_inside_a_frame_and_the_run_resumes_exactly(tmp_path):
    scene = scene_file(tmp_path, STUCK)
    path = tmp_path / "scene.h5"
    proc = subprocess.Popen([*CAROM, "run", scene], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240  # (the kernels may compile first on a cold cache)
    while not path.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the first frame
    assert proc.poll() is None
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 130 and "carom run --resume scene.h5" in err, err
    assert took < 2.5, took
    # the file holds the first frame and its checkpoint; resumed to a short end, it equals a run never stopped
    assert len(load(path).time) == 1
    assert cli("run", "--resume", path, "--until", 1e-9, "-q").exit_code == 0
    whole = tmp_path / "whole.h5"
    assert cli("run", scene, "--until", 1e-9, "--out", whole, "-q").exit_code == 0
    assert_same_run(load(path), load(whole))
    assert load(path).time[-1] == 1e-9


def _gas(world_class, **kwargs):
    world = world_class(dim=2, **kwargs)
    world.add_box((0.0, 0.0), (3.0, 3.0))
    positions = [(x, y) for x in np.arange(0.3, 2.8, 0.5) for y in np.arange(0.3, 2.8, 0.5)]
    velocities = np.random.default_rng(1).normal(size=(len(positions), 2))
    world.add_bodies(positions, velocities, masses=1.0, radii=0.1)
    return world


def test_runs_in_pieces_give_the_bits_of_one_run():
    whole, pieces = _gas(carom.World), _gas(carom.World)
    whole.run(until=2.0, dt=0.01)
    while pieces.time < 2.0:
        pieces.run(until=2.0, dt=0.01, max_steps=7)
    assert pieces.collision_count == whole.collision_count > 10
    assert np.array_equal(pieces.positions, whole.positions) and np.array_equal(pieces.velocities, whole.velocities)
    whole, pieces = _gas(carom.EventWorld), _gas(carom.EventWorld)
    whole.run(until=2.0)
    for _ in range(1000):
        pieces.run(until=2.0, max_events=5)
    assert pieces.time == 2.0 and pieces.event_count == whole.event_count > 100
    assert np.array_equal(pieces.positions, whole.positions) and np.array_equal(pieces.velocities, whole.velocities)


# ----------------------------------------------------------------------------------------------- physics limits
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"velocity": (1e200, 0.0)}, "velocity = [1e+200, 0.0] is out of range: each component's magnitude must be "
                                     "at most 1e+60 m/s"),
        ({"radius": 1e-300}, "radius = 1e-300 is out of range: its magnitude must be at least 1e-60 m"),
        ({"position": (1e300, 0.0)}, "position = [1e+300, 0.0] is out of range"),
        ({"mass": 1e80}, "mass = 1e+80 is out of range: its magnitude must be at most 1e+60 kg"),
    ],
    ids=["velocity 1e200", "radius 1e-300", "position 1e300", "mass 1e80"],
)  # fmt: skip
def test_numbers_that_would_overflow_the_physics_are_refused_with_the_limit(tmp_path, body, message):
    args = {"position": (0.0, 0.0), "mass": 1.0, "radius": 0.1, **body}
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("+", r"\+")):
        carom.World(dim=2).add_body(**args)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("+", r"\+")):
        carom.EventWorld(dim=2).add_body(**args)
    key, value = next(iter(body.items()))
    toml = f"[{value[0]!r}, 0.0]" if isinstance(value, tuple) else repr(value)
    text = SMALL.replace("velocity = [1.0, 0.0]\n", "").replace("[[bodies]]\n", f"[[bodies]]\n{key} = {toml}\n", 1)
    text = text.replace("position = [0.0, 0.0]\n", "", 1) if key == "position" else text
    text = text.replace("radius = 0.1\n", "", 1) if key == "radius" else text
    text = text.replace("mass = 1.0\n", "", 1) if key == "mass" else text
    result = cli("run", scene_file(tmp_path, text), "--out", tmp_path / "x.h5")
    assert result.exit_code == 2 and f"bodies[0]: {message}" in result.output, result.output
    assert not (tmp_path / "x.h5").exists()


def test_a_world_at_the_limits_runs_with_finite_energy_and_momentum():
    world = carom.World(dim=3, gravity=(0.0, 0.0, -1e60))
    world.add_body((1e60, -1e60, 1e60), velocity=(1e60, 1e60, -1e60), mass=1e60, radius=1e60,
                   angular_velocity=(1e60, 0.0, 0.0))  # fmt: skip
    world.add_body((-1e60, 1e60, -1e60), velocity=(-1e60, -1e60, 1e60), mass=1e-60, radius=1e-60)
    world.run(until=1.0, dt=0.5)
    for value in (world.kinetic_energy(), world.total_energy(), world.momentum(), world.angular_momentum()):
        assert np.all(np.isfinite(value)), value


def test_every_shipped_example_is_within_the_limits():
    for name in examples.names():
        build_world(read_scene(examples.path(name))[0], name)


def test_walls_and_gravity_are_checked_too():
    with pytest.raises(ValueError, match=r"gravity = \[0.0, -1e\+80\] is out of range"):
        carom.World(dim=2, gravity=(0.0, -1e80))
    with pytest.raises(ValueError, match=r"wall point = \[0.0, 1e\+200\] is out of range"):
        carom.World(dim=2).add_wall((0.0, 1e200), (0.0, 1.0))
    with pytest.raises(ValueError, match=r"box upper = \[1e\+300, 1.0\] is out of range"):
        carom.World(dim=2).add_box((0.0, 0.0), (1e300, 1.0))


# ----------------------------------------------------------------------------------------------- output files
@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    path = folder / "scene.h5"
    assert cli("run", scene_file(folder), "--out", path, "-q").exit_code == 0
    return path


def test_plot_refuses_a_suffix_matplotlib_cannot_write_and_names_the_file_it_writes(run_file, tmp_path):
    result = cli("plot", run_file, "--out", tmp_path / "x.txt")
    assert result.exit_code == 2 and "cannot write a plot as '.txt'; use one of:" in result.output
    assert "png" in result.output and "pdf" in result.output and "svg" in result.output
    result = cli("plot", run_file, "--out", tmp_path / "noext")
    assert result.exit_code == 0 and f"wrote {tmp_path / 'noext.png'}" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["noext.png"]
    assert (tmp_path / "noext.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli("plot", run_file, "--out", tmp_path / "x.svg").exit_code == 0
    assert (tmp_path / "x.svg").read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize("command", ["render", "plot"])
def test_an_output_folder_that_does_not_exist_is_named_before_anything_starts(run_file, tmp_path, command):
    out = tmp_path / "nonexistent" / ("x.mp4" if command == "render" else "x.png")
    result = subprocess.run([*CAROM, command, run_file, "--out", out], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert f"the folder {out.parent} does not exist" in result.stderr
    assert "Broken pipe" not in result.stderr and "ffmpeg" not in result.stderr.lower()


def test_resume_of_a_scene_file_says_it_is_not_a_trajectory_file(tmp_path):
    scene = scene_file(tmp_path)
    result = cli("run", "--resume", scene)
    assert result.exit_code == 2 and f"{scene}: not a carom trajectory file" in result.output


def test_run_does_not_replace_a_trajectory_without_force(tmp_path):
    scene = scene_file(tmp_path)
    path = tmp_path / "scene.h5"
    assert cli("run", scene, "--out", path, "--until", 0.5, "-q").exit_code == 0
    refused = cli("run", scene, "--out", path)
    assert refused.exit_code == 2 and f"{path} exists" in refused.output and "--force" in refused.output
    assert load(path).time[-1] == 0.5  # untouched
    assert cli("run", scene, "--out", path, "--force", "-q").exit_code == 0
    assert load(path).time[-1] == 1.0


def test_load_of_a_file_that_is_not_hdf5_names_it(tmp_path):
    scene = scene_file(tmp_path)
    with pytest.raises(ValueError, match=f"{scene}: not a carom trajectory file"):
        load(scene)


def test_a_binary_scene_file_is_a_scene_error_naming_the_file(tmp_path):
    path = tmp_path / "binary.toml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(SceneError, match=f"{path}: not a scene file: .* byte 0 is 0x89"):
        read_scene(path)
    result = cli("run", path)
    assert result.exit_code == 2 and f"{path}: not a scene file" in result.output


# ----------------------------------------------------------------------------------------------- EventWorld
def test_event_world_says_what_it_lacks_and_to_use_world():
    world = carom.EventWorld(dim=2)
    world.add_body((0.0, 0.0), mass=1.0, radius=0.1)
    calls = {
        "no forces": lambda: world.add_force(carom.NBodyGravity()),
        "no time step": lambda: world.step(0.01),
        "takes no dt": lambda: world.run(1.0, 0.01),
        "no sleeping islands": world.wake,
    }
    for message, call in calls.items():
        with pytest.raises(NotInEventWorld, match=message) as err:
            call()
        assert isinstance(err.value, NotImplementedError) and "World" in str(err.value)
    assert world.sleeping.tolist() == [False]


# ----------------------------------------------------------------------------------------------- what a newcomer hits
def test_vertices_beyond_the_limit_are_refused_with_the_limit_before_the_geometry(tmp_path):
    """At 1e61 m the polygon's size makes its other vertices "repeats" of each other: the magnitude is checked
    first, and the message names the vertex and the limit."""
    message = "vertices[1] = [1e+61, 0.0] is out of range: each component's magnitude must be at most 1e+60 m"
    with pytest.raises(ValueError, match=re.escape(message)):
        carom.World(dim=2).add_polygon([[0, 0], [1e61, 0], [0, 1]], (0.0, 0.0), mass=1.0)
    with pytest.raises(ValueError, match=re.escape("width = 1e+61 is out of range")):
        carom.World(dim=2).add_rectangle(1e61, 1.0, (0.0, 0.0), mass=1.0)
    text = SMALL + "[[polygons]]\nvertices = [[0, 0], [1e61, 0], [0, 1]]\nposition = [3.0, 0.0]\nmass = 1.0\n"
    result = cli("run", scene_file(tmp_path, text), "--out", tmp_path / "x.h5")
    assert result.exit_code == 2 and f"polygons[0]: {message}" in result.output, result.output


TRIANGLE = [(0, 0), (1, 0), (0, 1)]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda w: w.add_body(position="abc", mass=1.0), "position must be a vector of 2 numbers, got 'abc'"),
        (lambda w: w.add_body((0, 0), mass="1"), "mass must be a number, got '1'"),
        (lambda w: w.add_body((0, 0), mass=True), "mass must be a number, got True"),
        (lambda w: w.add_body((0, 0), mass=1.0, radius="0.1"), "radius must be a number, got '0.1'"),
        (lambda w: w.add_body((0, 0), velocity=(1, "2"), mass=1.0),
         "velocity must be a vector of 2 numbers, got (1, '2')"),
        (lambda w: w.add_body((0, 0), mass=1.0, restitution="1"), "restitution must be a number, got '1'"),
        (lambda w: w.add_body((0, 0), mass=1.0, angular_velocity="1"),
         "angular_velocity must be a number (dim=2), got '1'"),
        (lambda w: w.add_body((0, 0), mass=1.0, fixed="no"), "fixed must be True or False, got 'no'"),
        (lambda w: w.add_bodies([(0, 0), (3, 0)], masses=[1.0, "2"]),
         "mass must be a number or one per body (2), got [1.0, '2']"),
        (lambda w: w.add_wall((0, -1), (0, 1), static_friction="0.5"),
         "wall static_friction must be a number, got '0.5'"),
        (lambda w: w.add_polygon([(0, 0), (1, 0), ("0", 1)], (0, 0), mass=1.0),
         "vertices must be a list of (x, y) pairs, got [(0, 0), (1, 0), ('0', 1)]"),
        (lambda w: w.add_polygon(TRIANGLE, (0, 0), density="2"), "density must be a number, got '2'"),
        (lambda w: w.add_polygon(TRIANGLE, (0, 0), mass=1.0, angle=True), "angle must be a number, got True"),
    ],
    ids=["position", "mass text", "mass bool", "radius", "velocity", "restitution", "spin", "fixed", "masses", "wall",
         "vertices", "density", "angle"],
)  # fmt: skip
def test_text_and_booleans_are_not_numbers(call, message):
    world = carom.World(dim=2)
    with pytest.raises(ValueError, match=re.escape(message)):
        call(world)
    assert world.n_bodies == 0 and world.walls.n == 0


def test_a_negative_seed_is_named_with_its_option_or_key(tmp_path):
    option = cli("run", "--example", "pile", "--seed", -1, "--out", tmp_path / "x.h5")
    assert option.exit_code == 2 and "'--seed': -1 is not in the range x>=0" in option.output, option.output
    scene = scene_file(tmp_path, SMALL.replace("dim = 2", "dim = 2\nseed = -1"))
    in_file = cli("run", scene, "--out", tmp_path / "x.h5")
    assert in_file.exit_code == 2 and f"{scene}: world.seed = -1: Expected `int` >= 0" in in_file.output
    swept = cli("sweep", scene_file(tmp_path), "--vary", "seed=-1:1", "--out", tmp_path / "runs")
    assert swept.exit_code == 2 and "--vary seed=-1: " in swept.output and "world.seed = -1" in swept.output
    assert list(tmp_path.glob("*.h5")) == [] and not (tmp_path / "runs").exists()


def test_an_empty_scene_file_says_which_tables_are_missing(tmp_path):
    empty = cli("run", scene_file(tmp_path, ""), "--out", tmp_path / "x.h5")
    assert empty.exit_code == 2 and "the [world] and [run] tables are missing" in empty.output, empty.output
    no_run = scene_file(tmp_path, SMALL[: SMALL.index("[run]")] + SMALL[SMALL.index("[[bodies]]") :])
    result = cli("run", no_run, "--until", 1.0, "--dt", 0.01, "--out", tmp_path / "x.h5")
    assert result.exit_code == 2 and f"{no_run}: the [run] table is missing" in result.output, result.output


@pytest.mark.parametrize(("key", "value"), [("max_rounds", "0"), ("resting_speed", "-1.0")])
def test_config_errors_are_labelled_config_with_the_key_and_value(tmp_path, key, value):
    scene = scene_file(tmp_path, SMALL + f"[config]\n{key} = {value}\n")
    result = cli("run", scene, "--out", tmp_path / "x.h5")
    assert result.exit_code == 2, result.output
    assert f"{scene}: config: Config.{key} must be" in result.output and f"got {value}" in result.output
    with pytest.raises(ValueError, match=f"Config.{key} must be .*, got {value}"):
        carom.Config(**{key: float(value) if "." in value else int(value)})
    with pytest.raises(ValueError, match=re.escape("Config.resting_speed must be a number, got '1'")):
        carom.Config(resting_speed="1")


def test_record_into_a_missing_folder_and_load_of_a_missing_file_name_the_path(tmp_path):
    world = carom.World(dim=2)
    world.add_body((0.0, 0.0), mass=1.0, radius=0.1)
    target = tmp_path / "nothere" / "run.h5"
    with pytest.raises(FileNotFoundError, match=re.escape(f"the folder {target.parent} does not exist")):
        carom.record(world, target, every=0.1, dt=0.01)
    with pytest.raises(FileNotFoundError, match=re.escape(f"{tmp_path / 'nothere.h5'}: no such trajectory file")):
        load(tmp_path / "nothere.h5")
    with pytest.raises(IsADirectoryError, match=re.escape(f"{tmp_path} is a folder, not a trajectory file")):
        load(tmp_path)
    assert list(tmp_path.iterdir()) == []
