"""Trajectory files: contents, exact resume, partial files, plain-h5py readability."""

import re
from pathlib import Path

import h5py
import numpy as np
import pytest

import carom
from carom.io import load, runner
from carom.io.trajectory import _write_state
from carom.scenefile import parse_scene

# 2D gas of 12 disks in a box with a thrust on one of them: impacts, walls and a force in a short run.
GAS = """
[world]
dim = 2
gravity = [0.0, -1.0]
seed = 4
[run]
until = 2.0
dt = 0.01
output_interval = 0.1
[[bodies]]
name = "pushed"
position = [0.5, 0.5]
velocity = [1.0, 0.3]
mass = 1.0
radius = 0.1
[[generate]]
kind = "gas"
count = 12
lower = [1.0, 0.0]
upper = [3.0, 2.0]
radius = [0.05, 0.15]
mass = [0.5, 2.0]
speed = 1.5
restitution = 0.8
[[boxes]]
lower = [0.0, 0.0]
upper = [3.0, 2.0]
[[forces]]
kind = "thrust"
body = "pushed"
force = [0.0, 2.0]
"""
FIELDS = ("time", "position", "velocity", "angular_velocity", "orientation", "active", "mass", "radius",
          "kinetic_energy", "potential_energy", "total_energy", "momentum", "collision_count")  # fmt: skip


def run(path, text=GAS, **run_table):
    runner.start(parse_scene(text, "gas.toml", {"run": run_table}), text, "gas.toml", path, progress=False)
    return path


def assert_same_run(a, b):
    for field in FIELDS:
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    for name, values in a.impacts.items():
        assert np.array_equal(values, b.impacts[name]), name


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return load(run(tmp_path_factory.mktemp("ref") / "gas.h5"))


def test_file_holds_frames_on_the_grid_with_diagnostics(reference):
    t = reference
    assert np.array_equal(t.time, np.arange(21) * 0.1)
    assert t.position.shape == t.velocity.shape == (21, 13, 2) and t.dim == 2
    assert t.mass.shape == (21, 13) and np.array_equal(t.mass[-1], t.mass[0])
    v2 = np.sum(t.velocity**2, axis=2)
    assert np.allclose(t.kinetic_energy, 0.5 * np.sum(t.mass * v2, axis=1), rtol=1e-12)
    assert np.allclose(t.potential_energy, np.sum(t.mass * t.position[..., 1], axis=1), rtol=1e-12)  # g = 1
    assert np.array_equal(t.total_energy, t.kinetic_energy + t.potential_energy)
    assert np.allclose(t.momentum, np.sum(t.mass[..., None] * t.velocity, axis=1), rtol=1e-12, atol=1e-12)
    assert t.collision_count[-1] == len(t.impacts["time"]) > 10
    assert np.all(np.diff(t.impacts["time"]) >= 0) and t.impacts["time"][-1] <= 2.0
    assert t.attrs["until"] == 2.0 and t.attrs["dt"] == 0.01 and t.attrs["engine"] == "step"


def test_frames_are_the_world_run_directly(reference):
    scene = parse_scene(GAS)
    w = carom.scenefile.build_world(scene)
    for k in range(1, 12):  # the runner stops at every frame time
        w.run(until=k * 0.1, dt=0.01)
    assert np.array_equal(reference.position[11], w.positions)
    assert np.array_equal(reference.velocity[11], w.velocities)


def test_resume_of_a_finished_run_equals_one_long_run(tmp_path, reference):
    path = run(tmp_path / "short.h5", until=0.7)
    assert len(load(path).time) == 8
    runner.resume(path, until=2.0, progress=False)
    assert_same_run(load(path), reference)


def test_resume_after_an_off_grid_end_keeps_to_the_grid(tmp_path, reference):
    path = run(tmp_path / "odd.h5", until=1.234)
    assert load(path).time[-1] == 1.234
    runner.resume(path, until=2.0, progress=False)
    assert_same_run(load(path), reference)


def test_rows_after_the_checkpoint_are_dropped_on_resume(tmp_path, reference):
    path = run(tmp_path / "cut.h5", until=1.0)
    with h5py.File(path, "r+") as f:  # as if killed while writing frames past the checkpoint at t = 1.0
        for name in ("frames/time", "frames/position", "impacts/time"):
            f[name].resize(f[name].shape[0] + 3, axis=0)
            f[name][-3:] = 7.0
    partial = load(path)
    assert len(partial.time) == 11 and np.all(partial.impacts["time"] <= 1.0)  # only complete frames
    runner.resume(path, until=2.0, progress=False)
    assert_same_run(load(path), reference)


def test_resume_with_drag_is_exact(tmp_path):
    text = GAS + '[[forces]]\nkind = "atmosphere"\nbody = 1\nscale_height = inf\n'
    whole, part = run(tmp_path / "whole.h5", text), run(tmp_path / "part.h5", text, until=0.7)
    runner.resume(part, until=2.0, progress=False)
    assert_same_run(load(whole), load(part))


def test_event_engine_resumes_exactly(tmp_path):
    if not hasattr(carom, "EventWorld"):
        pytest.skip("carom.EventWorld is not exported yet")
    text = GAS.replace("[world]", '[world]\nengine = "event"').replace("dt = 0.01\n", "")
    text = text[: text.index("[[forces]]")]
    whole, part = run(tmp_path / "whole.h5", text), run(tmp_path / "part.h5", text, until=0.9)
    runner.resume(part, until=2.0, progress=False)
    assert_same_run(load(whole), load(part))


def test_checkpoint_entries_follow_the_state(tmp_path):
    with h5py.File(tmp_path / "c.h5", "w") as f:
        group = f.create_group("slot")
        _write_state(group, {"time": 1.0, "x": np.arange(3.0), "gone": np.zeros(2)})
        _write_state(group, {"time": 2.0, "x": np.arange(5.0), "new": np.ones(1, dtype=bool)})
        assert set(group) == {"time", "x", "new"}
        assert group["time"][()] == 2.0 and np.array_equal(group["x"][()], np.arange(5.0))
        _write_state(group, {"time": 3.0, "x": np.ones((7, 4, 2)), "new": np.ones(1, dtype=bool)})  # (rank: 3)
        assert group["x"].shape == (7, 4, 2)  # (IAS15's memory: empty before its first step, (7, n, d) after)


def test_readable_with_plain_h5py_as_documented(reference, tmp_path):
    path = run(tmp_path / "plain.h5", until=0.5)
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "carom.trajectory" and f.attrs["version"] == 2
        assert f["scene"].asstr()[()] == GAS
        assert f["frames/position"].shape == (6, 13, 2) and f["bodies/fixed"].dtype == bool
        assert f["walls/normal"].shape == (4, 2) and f["impacts/normal"].shape[1] == 2
        assert f["checkpoint/latest"][()] in (0, 1)
        latest = f["checkpoint"][str(f["checkpoint/latest"][()])]
        assert latest.attrs["frame"] == 5 and latest["time"][()] == pytest.approx(0.5)
        assert np.array_equal(f["diagnostics/total_energy"][:], reference.total_energy[:6])


def test_not_a_trajectory_file_is_refused(tmp_path):
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = 1
    with pytest.raises(ValueError, match="not a carom trajectory file"):
        load(tmp_path / "other.h5")


# Spheres with friction and spin on a frictional floor in a box: they slide, roll, collide and settle.
SPIN = """
[world]
dim = 3
gravity = [0.0, 0.0, -9.81]
seed = 2
[run]
until = 1.0
dt = 0.01
output_interval = 0.05
[[bodies]]
position = [0.2, 0.5, 0.1]
velocity = [2.0, 0.5, 0.0]
angular_velocity = [0.0, 0.0, 30.0]
mass = 1.0
radius = 0.1
static_friction = 0.3
kinetic_friction = 0.25
rolling_resistance = 0.01
[[generate]]
kind = "gas"
count = 8
lower = [0.5, 0.0, 0.0]
upper = [2.0, 1.0, 1.0]
radius = [0.05, 0.1]
mass = [0.5, 1.0]
speed = 1.0
restitution = 0.5
static_friction = 0.4
angular_velocity = [3.0, -2.0, 1.0]
[[boxes]]
lower = [0.0, 0.0, 0.0]
upper = [2.0, 1.0, 1.0]
restitution = 0.7
static_friction = 0.5
kinetic_friction = 0.4
"""


@pytest.fixture(scope="module")
def spinning(tmp_path_factory):
    return load(run(tmp_path_factory.mktemp("spin") / "spin.h5", SPIN))


def test_frames_hold_spin_and_orientation(spinning):
    t = spinning
    assert t.angular_velocity.shape == (21, 9, 3) and t.orientation.shape == (21, 9, 4)
    assert np.array_equal(t.angular_velocity[0, 0], [0.0, 0.0, 30.0])
    assert np.array_equal(t.orientation[0], np.tile([1.0, 0.0, 0.0, 0.0], (9, 1)))
    assert np.allclose(np.linalg.norm(t.orientation, axis=2), 1.0, rtol=1e-12)
    assert np.all(np.any(t.orientation[-1] != t.orientation[0], axis=1))  # every ball has turned
    w = carom.scenefile.build_world(parse_scene(SPIN))
    for k in range(1, 8):
        w.run(until=k * 0.05, dt=0.01)
    assert np.array_equal(t.angular_velocity[7], w.angular_velocities)
    assert np.array_equal(t.orientation[7], w.orientations)
    spin = 0.5 * np.sum(np.sum(t.angular_velocity**2, axis=2) * w.inertias, axis=1)
    v2 = np.sum(t.velocity**2, axis=2)
    assert np.allclose(t.kinetic_energy, 0.5 * np.sum(t.mass * v2, axis=1) + spin, rtol=1e-12)


def test_frames_of_disks_hold_angles(tmp_path):
    text = GAS.replace("restitution = 0.8", "restitution = 0.8\nstatic_friction = 0.3\nangular_velocity = 5.0")
    t = load(run(tmp_path / "disks.h5", text, until=0.3))
    assert t.angular_velocity.shape == t.orientation.shape == (4, 13)
    assert np.array_equal(t.angular_velocity[0], [0.0] + [5.0] * 12)
    assert t.orientation[1, 1] != 0.0 and t.orientation[0, 1] == 0.0


def test_resume_with_friction_and_spin_is_exact(tmp_path, spinning):
    part = run(tmp_path / "part.h5", SPIN, until=0.35)
    runner.resume(part, until=1.0, progress=False)
    assert_same_run(spinning, load(part))


def test_files_without_spin_load_as_smooth_and_resume(tmp_path, reference):
    path = run(tmp_path / "old.h5", until=1.0)
    with h5py.File(path, "r+") as f:  # as written before spin was recorded
        del f["frames/angular_velocity"], f["frames/orientation"]
    old = load(path)
    assert np.array_equal(old.angular_velocity, np.zeros((11, 13))) and old.orientation.shape == (11, 13)
    assert not np.any(old.orientation)
    runner.resume(path, until=2.0, progress=False)
    with h5py.File(path, "r") as f:
        assert "frames/orientation" not in f and f["frames/position"].shape[0] == 21
    resumed = load(path)
    assert np.array_equal(resumed.position, reference.position) and resumed.angular_velocity.shape == (21, 13)


def test_3d_files_without_spin_load_with_identity_orientations(tmp_path):
    path = run(tmp_path / "old3.h5", SPIN, until=0.1)
    with h5py.File(path, "r+") as f:
        del f["frames/angular_velocity"], f["frames/orientation"]
    old = load(path)
    assert np.array_equal(old.angular_velocity, np.zeros((3, 9, 3)))
    assert np.array_equal(old.orientation, np.tile([1.0, 0.0, 0.0, 0.0], (3, 9, 1)))


# A box resting on a floor falls asleep (at 0.2 s, with another island made and woken at once); a ball lands on
# it at 0.7 s and wakes it; both sleep again by 0.9 s. A world of polygons: no disk step ever sizes the wall forces.
WAKE = """
[world]
dim = 2
gravity = [0.0, -9.81]
[run]
until = 1.6
dt = 0.016666666666666666
output_interval = 0.1
[config]
sleep_time = 0.2
[[bodies]]
position = [0.1, 3.0]
radius = 0.2
mass = 1.0
restitution = 0.2
static_friction = 0.5
[[polygons]]
shape = "rectangle"
width = 1.0
height = 0.5
position = [0.0, 0.25]
mass = 1.0
restitution = 0.2
static_friction = 0.5
[[walls]]
point = [0.0, 0.0]
normal = [0.0, 1.0]
static_friction = 0.5
"""


def test_a_resumed_run_ends_with_the_checkpoint_of_the_run_never_stopped(tmp_path):
    """Stopped at 0.8 s (islands made and all awake again) and resumed: every checkpoint entry has the shape
    and the bits of the uninterrupted run's, the wall forces that no step sized and the labels of the islands
    that fall asleep after the stop too."""
    whole, part = run(tmp_path / "whole.h5", WAKE), run(tmp_path / "part.h5", WAKE, until=0.8)
    stopped = load(part).checkpoint
    assert stopped["islands_made"] > 0 and np.all(stopped["sleep_island"] == -1)
    runner.resume(part, until=1.6, progress=False)
    a, b = load(whole), load(part)
    assert_same_run(a, b)
    assert np.all(a.checkpoint["sleep_island"] >= stopped["islands_made"])  # asleep again, under new labels
    assert a.checkpoint["wall_force"].shape == (0, 0)
    assert a.checkpoint.keys() == b.checkpoint.keys()
    for name, value in a.checkpoint.items():
        assert value.shape == b.checkpoint[name].shape and value.tobytes() == b.checkpoint[name].tobytes(), name


def _documented_shapes() -> dict[str, list[str]]:
    """Each dataset of docs/file-format.md's table with its shapes as written: ``(F, N, 3) or (F, N)`` gives
    ``["F, N, 3", "F, N"]`` (3D first)."""
    text = (Path(__file__).parents[1] / "docs" / "file-format.md").read_text()
    shapes = {}
    for paths, shape in re.findall(r"^\| (`/[^|]*) \| ([^|]*) \|", text, re.M):
        for path in re.findall(r"`(/[^`]+)`", paths):
            shapes[path.lstrip("/")] = re.findall(r"\(([^)]*)\)", shape)
    return shapes


@pytest.mark.parametrize("dim", [2, 3])
def test_datasets_have_the_shapes_the_file_format_doc_gives(tmp_path, dim):
    path = run(tmp_path / "run.h5", SPIN if dim == 3 else GAS, until=0.3)
    shapes = _documented_shapes()
    with h5py.File(path, "r") as f:
        sizes = {"F": f["frames/time"].shape[0], "N": f["bodies/mass"].shape[0], "d": dim,
                 "W": f["walls/point"].shape[0], "M": f["impacts/time"].shape[0],
                 "V": f["polygons/vertices"].shape[0]}  # fmt: skip
        assert sizes["F"] > 1 and sizes["M"] > 0
        found = []
        f.visititems(lambda name, item: found.append(name) if isinstance(item, h5py.Dataset) else None)
        listed = [n for n in found if n != "scene" and (not n.startswith("checkpoint/") or n == "checkpoint/latest")]
        for name in listed:
            written = shapes[name]
            expected = written[0] if dim == 3 or len(written) == 1 else written[1]
            axes = [axis.split("+") for axis in expected.split(",") if axis.strip()]  # ("N + 1" is a sum)
            want = tuple(sum(sizes[t.strip()] if t.strip() in sizes else int(t) for t in axis) for axis in axes)
            assert f[name].shape == want, (name, written)


STACK = """
[world]
dim = 2
gravity = [0.0, -9.81]
[config]
sleep_time = inf
[run]
until = 1.0
dt = 0.01
output_interval = 0.1
[[walls]]
point = [0.0, 0.0]
normal = [0.0, 1.0]
restitution = 0.0
[[generate]]
kind = "lattice"
origin = [0.0, 0.1]
counts = [1, 3]
spacing = 0.2
radius = 0.1
mass = 1.0
restitution = 0.0
"""


def test_a_version_1_checkpoint_with_its_old_pair_keys_resumes_as_the_run_never_stopped(tmp_path):
    """Files of version 1 keyed resting forces between bodies ``i * n + j``; read back, they are converted to
    `carom.materials.pair_key`, and the run goes on to the same bits."""
    whole = load(run(tmp_path / "whole.h5", STACK))
    path = run(tmp_path / "old.h5", STACK, until=0.5)
    pairs = []
    with h5py.File(path, "r+") as f:
        slot = f["checkpoint"][str(f["checkpoint/latest"][()])]
        for name in ("pair_force_keys", "sleep_pair_keys"):  # (awake or asleep, the stack rests on its contacts)
            i, j = carom.materials.key_pairs(slot[name][()])
            pairs += list(zip(i.tolist(), j.tolist(), strict=True))
            slot[name][...] = i * 3 + j  # as version 1 wrote them
        f.attrs["version"] = 1
    assert sorted(set(pairs)) == [(0, 1), (1, 2)]
    runner.resume(path, until=1.0, progress=False)
    assert_same_run(load(path), whole)
