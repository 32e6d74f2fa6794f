"""One workflow from Python: body names, scenes from and to worlds, recording a run into a trajectory file,
and rebuilding the world from that file (docs/python.md, whose code blocks run here too)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import carom
from carom import examples

EVERY, DT = 0.05, 1e-3


def _box_world() -> carom.World:
    w = carom.World(dim=2, gravity=(0, -9.81))
    w.add_box((-1, 0), (1, 2), restitution=0.8)
    w.add_body(position=(0, 1), velocity=(0.7, 0), mass=1.0, radius=0.1, restitution=0.9, name="ball")
    w.add_body(position=(0.5, 1.5), velocity=(-0.3, 0.2), mass=2.0, radius=0.15, name="big")
    return w


def _same_state(a, b, skip=()) -> None:
    """Every array of two worlds' states equal to the bit (``skip``: entries left out)."""
    sa, sb = a.get_state(), b.get_state()
    keys = sa.keys() - set(skip)
    assert keys <= sb.keys()
    for key in keys:
        assert np.asarray(sa[key]).tobytes() == np.asarray(sb[key]).tobytes(), key


# ----------------------------------------------------------------------------------------------- names
def test_names_are_kept_in_order_and_empty_for_unnamed_bodies():
    w = carom.World(dim=2)
    w.add_body(position=(0, 0), mass=1.0, radius=0.1, name="a")
    w.add_bodies([[1, 0], [2, 0]], masses=1.0, radii=0.1, names=["", "c"])
    w.add_body(position=(3, 0), mass=1.0, radius=0.1)
    assert w.names == ("a", "", "c", "")


@pytest.mark.parametrize(
    ("add", "message"),
    [
        (lambda w: w.add_body(position=(1, 0), mass=1.0, radius=0.1, name="a"), "name = 'a' is already the name of"),
        (lambda w: w.add_bodies([[1, 0], [2, 0]], masses=1.0, radii=0.1, names=["b", "b"]), r"names\[1\] = 'b'"),
        (lambda w: w.add_body(position=(1, 0), mass=1.0, radius=0.1, name=3), "name must be a string, got 3"),
        (lambda w: w.add_bodies([[1, 0], [2, 0]], masses=1.0, radii=0.1, names=["x"]), "names must be a list of 2"),
    ],
)
def test_bad_names_are_rejected_and_nothing_is_added(add, message):
    w = carom.World(dim=2)
    w.add_body(position=(0, 0), mass=1.0, radius=0.1, name="a")
    with pytest.raises(ValueError, match=message):
        add(w)
    assert w.n_bodies == 1 and w.names == ("a",)


def test_event_world_names_survive_set_state():
    w = carom.EventWorld(dim=2)
    w.add_body(position=(0, 0), velocity=(1, 0), mass=1.0, radius=0.5, name="left")
    w.add_body(position=(3, 0), mass=1.0, radius=0.5, name="right")
    state = w.get_state()
    w.run(until=5.0)
    w.set_state(state)
    assert w.names == ("left", "right")


def test_scene_names_reach_the_world_and_the_trajectory_file(tmp_path):
    w = carom.Scene.load(examples.path("earth_moon_satellite"))
    assert w.names[:2] == ("earth", "moon") and w.names[2] == ""
    path = tmp_path / "run.h5"
    with carom.record(w, path, every=1200.0, dt=600.0) as rec:
        rec.run(until=2400.0)
    with h5py.File(path) as f:
        stored = tuple(f["bodies/name"].asstr()[()])
    assert stored == w.names == carom.load(path).names


def test_files_without_names_read_as_empty_names(tmp_path):
    path = tmp_path / "run.h5"
    with carom.record(_box_world(), path, every=EVERY, dt=DT) as rec:
        rec.run(until=0.1)
    with h5py.File(path, "r+") as f:
        del f["bodies/name"]  # as written before names existed
    assert carom.load(path).names == ("", "")


# ----------------------------------------------------------------------------------------------- scenes
def _rich_world() -> carom.World:
    """A world using every part of the scene format that a World has, run for a while (spin, orientation)."""
    w = carom.World(dim=3, gravity=(0, 0, -9.81), restitution_rule="mean", friction_rule="max",
                    integrator="euler", config=carom.Config(resting_speed=2e-3, sleep_time=np.inf))  # fmt: skip
    w.add_body(position=(0.1, 0.2, 1.0), velocity=(0.3, -0.0, 0), mass=1.3, radius=0.1, restitution=0.7,
               static_friction=0.3, kinetic_friction=0.2, angular_velocity=(0, 1, 0), inertia=0.0123,
               name="a")  # fmt: skip
    w.add_body(position=(0.5, 0.2, 1.0), mass=2.0, radius=0.1, drag_coefficient=0.3, rolling_resistance=0.01,
               spinning_friction=0.2, name="b")  # fmt: skip
    w.add_body(position=(5, 5, 5), fixed=True, radius=0.5)
    w.add_wall((0, 0, 0), (0.6, 0.8, 0.3), static_friction=0.1)  # (a normal whose length rounds)
    w.add_box((-10, -10, -1), (10, 10, 10), restitution=0.5, static_friction=0.4, kinetic_friction=0.3)
    w.add_force(carom.NBodyGravity(G=1e-3, softening=0.01))
    w.add_force(carom.Thrust(body=1, force=(0, 0, 1.0)))
    w.add_force(carom.Atmosphere(body=2, scale_height=np.inf))
    w.set_pair_restitution(0, 1, 0.3)
    w.set_pair_friction(0, -1, 0.5, 0.1)
    w.run(0.37, 0.01)
    return w


def test_world_to_scene_and_back_is_exact(tmp_path):
    w = _rich_world()
    path = w.to_scene(until=1.0, dt=0.01).save(tmp_path / "again.toml")
    back = carom.Scene.load(path)
    # the scene holds every body array, wall, force and setting; not the engine's memory of the last step
    _same_state(w, back, skip=("smooth_acceleration", "pair_force_keys", "pair_force", "wall_force",
                               "held_pair_friction", "held_wall_friction", "sleep_wall_force", "collision_count",
                               "event_count", "step_count", "step_grid"))  # fmt: skip
    assert back.time == 0.37 and back.names == ("a", "b", "")
    assert (back.restitution_rule, back.friction_rule, back.integrator) == ("mean", "max", "euler")
    assert back.config == w.config
    assert [repr(f) for f in back.forces] == [repr(f) for f in w.forces]
    assert back._pair_restitution == w._pair_restitution and back._pair_friction == w._pair_friction
    for name in ("point", "normal", "restitution", "static_friction", "kinetic_friction"):
        assert getattr(back.walls, name).tobytes() == getattr(w.walls, name).tobytes()


def test_a_settling_pile_goes_to_a_scene_and_a_recording(tmp_path):
    """Mid-run, a pile's contacts overlap by up to resting_gap: a World accepts that at the start (it is the
    depth its contacts are held within), so the scene of a settling pile loads, and recording goes on."""
    from carom.canonical import pile

    w = pile(30, seed=2)
    w.run(until=1.5, dt=1 / 60)
    x, r = w.positions, w.radii
    gaps = np.linalg.norm(x[:, None] - x[None], axis=-1) - (r[:, None] + r[None])
    np.fill_diagonal(gaps, np.inf)
    deepest = -gaps.min() / r.min()
    assert w.config.contact_tolerance < deepest <= w.config.resting_gap  # touching by more than tolerance
    back = w.to_scene(until=3.0, dt=1 / 60).build()
    assert back.positions.tobytes() == w.positions.tobytes()
    with pytest.raises(ValueError, match="overlaps"):  # deeper than resting_gap is still an error
        back.add_body(position=x[0] + [0, 0.5 * r[0]], mass=1.0, radius=r[0])
    with carom.record(w, tmp_path / "pile.h5", every=0.1, dt=1 / 60) as rec:
        rec.run(until=2.0)
    again = carom.load(tmp_path / "pile.h5").world()
    assert again.time == w.time == 2.0 and again.positions.tobytes() == w.positions.tobytes()


def test_event_world_with_periodic_box_to_scene_and_back_is_exact():
    w = carom.EventWorld(dim=2, tc=1e-4)
    w.add_periodic_box((-1, -1), (1, 1))
    rng = np.random.default_rng(3)
    for k in range(6):
        w.add_body(position=(-0.8 + 0.3 * k, 0.1 * k), velocity=rng.normal(size=2), mass=1.0, radius=0.05)
    w.run(until=0.7)
    text = w.to_scene(until=2.0).to_toml()
    back = carom.Scene.from_toml(text).build()
    assert isinstance(back, carom.EventWorld) and back.tc == 1e-4 and back._box is not None
    engine = [k for k in w.get_state() if k.startswith("engine_")]  # (the pending events, predicted again)
    _same_state(w, back, skip=[*engine, "collision_count", "event_count"])


def test_to_scene_names_what_a_scene_cannot_hold():
    w = carom.World(dim=2)
    w.add_body(position=(0, 0), mass=1.0, radius=0.1)
    w.add_force(carom.Thrust(body=0, force=lambda world, t: (0.0, 1.0)))
    with pytest.raises(ValueError, match="Thrust on body 0 has a callable force"):
        w.to_scene(until=1.0, dt=0.1)
    merged = carom.World(dim=2, impact_mode="merge")
    merged.add_body(position=(0, 0), velocity=(1, 0), mass=1.0, radius=0.1)
    merged.add_body(position=(0.5, 0), mass=1.0, radius=0.1)
    merged.run(until=1.0, dt=0.1)
    with pytest.raises(ValueError, match="body 1 has merged into another"):
        merged.to_scene(until=2.0, dt=0.1)
    with pytest.raises(ValueError, match="dt"):
        _box_world().to_scene(until=1.0)


def test_scene_pairs_table_sets_overrides_by_name():
    text = """
[world]
dim = 2
[run]
until = 1.0
dt = 0.01
[[bodies]]
name = "a"
position = [0.0, 0.5]
mass = 1.0
radius = 0.1
[[bodies]]
position = [0.5, 0.5]
mass = 1.0
radius = 0.1
[[walls]]
point = [0.0, 0.0]
normal = [0.0, 1.0]
[[pairs]]
body = "a"
other = 1
restitution = 0.25
[[pairs]]
body = "a"
wall = 0
static_friction = 0.5
"""
    w = carom.Scene.from_toml(text).build()
    assert w.pair_restitution_arrays()[1].tolist() == [0.25]
    assert w.pair_friction_arrays()[1].tolist() == [[0.5, 0.5]]
    with pytest.raises(carom.SceneError, match=r"pairs\[1\]: wall = 3: no wall"):
        carom.Scene.from_toml(text.replace("wall = 0", "wall = 3")).build()


# ----------------------------------------------------------------------------------------------- recording
def test_recording_in_pieces_writes_the_same_file_as_one_run(tmp_path):
    with carom.record(_box_world(), tmp_path / "one.h5", every=EVERY, dt=DT) as rec:
        rec.run(until=1.0)
    with carom.record(_box_world(), tmp_path / "two.h5", every=EVERY, dt=DT) as rec:
        rec.run(until=0.52)  # off the frame grid: the next run goes on from the frame at 0.5
        rec.run(until=1.0)
    one, two = carom.load(tmp_path / "one.h5"), carom.load(tmp_path / "two.h5")
    assert len(one.time) == 21
    for name in ("time", "position", "velocity", "total_energy", "collision_count"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    for name, values in one.impacts.items():
        assert np.array_equal(values, two.impacts[name]), name
    assert one.collision_count[-1] > 0


def test_recording_is_the_file_the_cli_writes_and_resumes(tmp_path):
    """The CLI resumes a recording made in Python, and the result equals the uninterrupted recording."""
    whole, part = tmp_path / "whole.h5", tmp_path / "part.h5"
    with carom.record(_box_world(), whole, every=EVERY, dt=DT) as rec:
        rec.run(until=1.0)
    with carom.record(_box_world(), part, every=EVERY, dt=DT) as rec:
        rec.run(until=0.5)
    done = subprocess.run([sys.executable, "-m", "carom.cli", "run", "--resume", str(part), "--until", "1.0", "-q"],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    a, b = carom.load(whole), carom.load(part)
    assert np.array_equal(a.position, b.position) and np.array_equal(a.time, b.time)
    assert b.attrs["source"] == "carom.record" and b.names == ("ball", "big")


def test_record_refuses_to_replace_a_file_unless_asked(tmp_path):
    path = tmp_path / "run.h5"
    path.write_text("precious")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        carom.record(_box_world(), path, every=EVERY, dt=DT)
    assert path.read_text() == "precious"
    with carom.record(_box_world(), path, every=EVERY, dt=DT, overwrite=True) as rec:
        rec.run(until=0.1)
    assert len(carom.load(path).time) == 3


def test_a_recorded_world_moved_outside_the_recording_is_an_error(tmp_path):
    w = _box_world()
    with carom.record(w, tmp_path / "run.h5", every=EVERY, dt=DT) as rec:
        rec.run(until=0.1)
        w.run(until=0.2, dt=DT)
        with pytest.raises(ValueError, match=r"advance a recorded world with Recording\.run only"):
            rec.run(until=0.3)
    assert not w._impact_callbacks  # the closed recording no longer collects impacts


def test_record_an_event_world(tmp_path):
    w = carom.EventWorld(dim=2)
    w.add_body(position=(0, 0), velocity=(1, 0), mass=1.0, radius=0.5, name="left")
    w.add_body(position=(3, 0), mass=1.0, radius=0.5, name="right")
    with carom.record(w, tmp_path / "ev.h5", every=0.5) as rec:
        rec.run(until=5.0)
    t = carom.load(tmp_path / "ev.h5")
    assert t.attrs["engine"] == "event" and t.names == ("left", "right")
    assert t.velocity[-1].tolist() == [[0.0, 0.0], [1.0, 0.0]] and len(t.impacts["time"]) == 1
    with pytest.raises(ValueError, match="dt does not apply"):
        carom.record(w, tmp_path / "again.h5", every=0.5, dt=0.1)


# ----------------------------------------------------------------------------------------------- resuming
@pytest.mark.parametrize("engine", ["step", "event"])
def test_world_from_checkpoint_goes_on_with_the_same_bits(tmp_path, engine):
    def make():
        if engine == "step":
            return _box_world()
        w = carom.EventWorld(dim=2, gravity=(0, -9.81))
        w.add_box((-1, 0), (1, 2), restitution=0.8)
        w.add_body(position=(0, 1), velocity=(0.7, 0), mass=1.0, radius=0.1, restitution=0.9, name="ball")
        w.add_body(position=(0.5, 1.5), velocity=(-0.3, 0.2), mass=2.0, radius=0.15, name="big")
        return w

    dt = DT if engine == "step" else None
    with carom.record(make(), tmp_path / "whole.h5", every=EVERY, dt=dt) as rec:
        rec.run(until=1.0)
    with carom.record(make(), tmp_path / "first.h5", every=EVERY, dt=dt) as rec:
        rec.run(until=0.5)
    w = carom.load(tmp_path / "first.h5").world()
    assert w.time == 0.5 and w.names == ("ball", "big")
    with carom.record(w, tmp_path / "second.h5", every=EVERY, dt=dt) as rec:
        rec.run(until=1.0)
    whole, second = carom.load(tmp_path / "whole.h5"), carom.load(tmp_path / "second.h5")
    assert np.array_equal(whole.time[10:], second.time)
    assert np.array_equal(whole.position[10:], second.position) and np.array_equal(whole.velocity[10:], second.velocity)
    assert whole.collision_count[-1] == second.collision_count[-1] > whole.collision_count[10]


def test_world_at_a_frame_holds_that_frame(tmp_path):
    with carom.record(_box_world(), tmp_path / "run.h5", every=EVERY, dt=DT) as rec:
        rec.run(until=1.0)
    t = carom.load(tmp_path / "run.h5")
    w = t.world(at=0.3)  # the frame at 6 * 0.05 = 0.30000000000000004 s
    assert w.time == t.time[6]
    assert w.positions.tobytes() == t.position[6].tobytes() and w.velocities.tobytes() == t.velocity[6].tobytes()
    assert w.collision_count == t.collision_count[6]
    w.run(until=0.35, dt=DT)  # it runs on
    assert np.allclose(w.positions, t.position[7], atol=1e-9)
    message = "at = 0.31: no frame at that time (frames: 0 .. 1 s, every 0.05 s)"
    with pytest.raises(ValueError, match=re.escape(message)):
        t.world(at=0.31)


# ----------------------------------------------------------------------------------------------- the docs page
def _python_blocks() -> list[str]:
    text = (Path(__file__).parents[1] / "docs" / "python.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_docs_python_page_runs(tmp_path, monkeypatch):
    """Every ```python block of docs/python.md, in order, in one namespace, in an empty folder."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks()
    assert len(blocks) >= 5
    namespace: dict = {}
    for block in blocks:
        if ".plot()" in block or ".animate(" in block:
            if not hasattr(carom.Trajectory, "plot"):
                continue  # (the plotting methods come with the pictures work)
        exec(compile(block, "docs/python.md", "exec"), namespace)
    assert (tmp_path / "drop.h5").exists()


def test_a_removed_impact_callback_is_no_longer_called():
    w = carom.World(dim=2)
    w.add_body(position=(0, 0), velocity=(1, 0), mass=1.0, radius=0.1)
    w.add_wall(point=(0.5, 0), normal=(-1, 0))
    w.add_wall(point=(-0.5, 0), normal=(1, 0))
    seen = []
    w.on_impact(seen.append)
    w.run(until=0.5, dt=0.01)  # the wall at x = 0.5 is struck at t = 0.4 s
    assert [round(x.time, 12) for x in seen] == [0.4]
    w.remove_impact_callback(seen.append)
    w.remove_impact_callback(seen.append)  # (twice: nothing happens)
    w.run(until=2.0, dt=0.01)
    assert w.collision_count > 1 and len(seen) == 1
