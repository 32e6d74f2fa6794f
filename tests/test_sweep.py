"""`carom sweep`: the --vary grammar, members, a real sweep on Dask, resume, failing members, missing Dask."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
import tomli_w
from click.testing import CliRunner
from dask import distributed
from test_cli import LONG

import carom
from carom import examples
from carom.cli import main
from carom.scenefile import build_world, parse_scene
from carom.sweep import SweepError, Vary, parse_vary, plan, product, run_member, set_value

#: Two bodies per lane meet at t = 0.8 s: by 1.2 s each of the three lanes has had its one impact.
LANES = examples.path("restitution")
UNTIL = "1.2"


def sweep(*args: str):
    return CliRunner().invoke(main, ["sweep", str(LANES), "--until", UNTIL, "-q", *args])


def summary(folder: Path) -> list[dict]:
    with open(folder / "summary.csv", newline="") as f:
        return list(csv.DictReader(f))


# ----------------------------------------------------------------------------------------------- grammar
def test_count_evenly_spaced_values_both_ends_included():
    assert parse_vary("restitution=0.1:0.9:9") == Vary("restitution", (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9))
    assert parse_vary("bodies.0.mass=2:1:3").values == (2, 1.5, 1)  # decreasing; whole values stay integers
    assert parse_vary("x=0.5:0.5:1").values == (0.5,)


def test_start_stop_is_every_integer_and_lists_keep_their_types():
    assert parse_vary("seed=1:100").values == tuple(range(1, 101))
    assert parse_vary("seed = -2:1").values == (-2, -1, 0, 1)
    assert parse_vary("world.restitution_rule=min,max").values == ("min", "max")
    assert parse_vary("k=1,2.5,true,1e-3").values == (1, 2.5, True, 0.001)


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("restitution", "expected KEY=START:STOP:COUNT"),
        ("=1,2", "expected KEY="),
        ("seed=1.5:3", "'1.5' is not an integer"),
        ("seed=5:1", "START 5 is after STOP 1"),
        ("e=0:1:0", "COUNT must be at least 1"),
        ("e=0:1:2:3", "is not START:STOP:COUNT"),
        ("e=a:1:3", "'a' is not a finite number"),
        ("e=1,,2", "a value is empty"),
    ],
)
def test_bad_vary_names_the_option(option, says):
    with pytest.raises(SweepError, match="--vary") as err:
        parse_vary(option)
    assert says in str(err.value) and option in str(err.value)


def test_product_is_every_combination_last_key_fastest():
    members = product([parse_vary("restitution=0.1:0.9:9"), parse_vary("seed=1:100")])
    assert len(members) == 900
    assert members[0] == {"restitution": 0.1, "seed": 1}
    assert members[1] == {"restitution": 0.1, "seed": 2}
    assert members[-1] == {"restitution": 0.9, "seed": 100}
    with pytest.raises(SweepError, match="seed: the key is given more than once"):
        product([parse_vary("seed=1:2"), parse_vary("seed=3,4")])


# ----------------------------------------------------------------------------------------------- keys
SCENE = """
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
[[generate]]
kind = "lattice"
origin = [1.0, 1.0]
counts = [2, 2]
spacing = 0.5
radius = 0.1
mass = 1.0
restitution = 0.9
[[walls]]
point = [0.0, -1.0]
normal = [0.0, 1.0]
[[boxes]]
lower = [-3.0, -3.0]
upper = [3.0, 3.0]
"""


def test_dotted_paths_and_aliases_set_the_scene():
    data = tomllib.loads(SCENE)
    set_value(data, "bodies.0.velocity.1", 2.5)
    set_value(data, "seed", 7)
    set_value(data, "config.resting_speed", 0.01)  # a table the file leaves out
    set_value(data, "restitution", 0.3)
    assert data["bodies"][0]["velocity"] == [1.0, 2.5]
    assert data["world"]["seed"] == 7 and data["config"] == {"resting_speed": 0.01}
    assert [t["restitution"] for t in (*data["bodies"], *data["generate"], *data["walls"], *data["boxes"])] == [0.3] * 4


def test_restitution_alias_reaches_every_body_and_wall_of_the_built_world():
    data = tomllib.loads(SCENE)
    set_value(data, "restitution", 0.3)
    world = build_world(parse_scene(tomli_w.dumps(data)))
    assert np.all(world.restitutions == 0.3)  # the body, the four generated ones
    assert np.all(world.walls.restitution == 0.3)  # the wall, the box's four


def test_periodic_boxes_get_no_restitution():
    data = {"boxes": [{"lower": [0, 0], "upper": [1, 1], "periodic": True}]}
    set_value(data, "restitution", 0.5)
    assert "restitution" not in data["boxes"][0]


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("bodies.3.mass", "bodies.3: the scene has 1 entries there (0 .. 0)"),
        ("bodies.x.mass", "bodies.x: the scene has 1 entries there"),
        ("world.dim.x", "world.dim is 2, which has no 'x'"),
        ("bodies.0.velocity.2", "bodies.0.velocity.2: the scene has 2 entries there"),
    ],
)
def test_paths_the_scene_does_not_have_are_errors(key, says):
    with pytest.raises(SweepError, match="--vary") as err:
        set_value(tomllib.loads(SCENE), key, 1.0)
    assert says in str(err.value)


def test_plan_writes_each_members_values_into_its_scene(tmp_path):
    scene = tmp_path / "s.toml"
    scene.write_text(SCENE)
    members = plan(scene, [parse_vary("bodies.0.mass=1,2"), parse_vary("seed=3:4")], tmp_path / "out", {"until": 0.5})
    assert [m.params for m in members] == [
        {"bodies.0.mass": 1, "seed": 3},
        {"bodies.0.mass": 1, "seed": 4},
        {"bodies.0.mass": 2, "seed": 3},
        {"bodies.0.mass": 2, "seed": 4},
    ]
    assert [Path(m.path).name for m in members] == [f"member-000{k}.h5" for k in range(4)]
    last = parse_scene(members[-1].text)
    assert (last.bodies[0].mass, last.world.seed, last.run.until) == (2.0, 4, 0.5)
    assert last.run.output_interval == 1.0 / 200  # the file's frame grid, as `carom run --until` keeps it


# ----------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("restitution=0.5:1.5:3", "--vary restitution=1.5: "),  # the world rejects it when built
        ("bodies.0.restitutoin=0.5", "unknown key 'restitutoin'"),
        ("bodies.6.mass=1,2", "--vary bodies.6.mass: bodies.6: the scene has 6 entries"),
        ("seed=1:10:3", "--vary seed=5.5: "),
        ("world.restitution_rule=min,maxx", "(did you mean 'max'?)"),
    ],
)
def test_bad_keys_and_values_exit_2_before_anything_runs(tmp_path, option, says):
    out = tmp_path / "out"
    result = sweep("--vary", option, "--out", str(out))
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert not out.exists()


def test_missing_dask_exits_2_saying_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # `import dask.distributed` raises ImportError
    result = sweep("--vary", "seed=1:2", "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "pip install 'carom[sweep]'" in result.output
    assert not (tmp_path / "out").exists()


def test_a_member_that_raises_is_a_failed_row(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the runner broke")

    monkeypatch.setattr("carom.sweep.start", broken)
    [member] = plan(LANES, [parse_vary("seed=1")], tmp_path)
    row = run_member(member)
    assert (row["status"], row["error"], row["impacts"]) == ("failed", "RuntimeError: the runner broke", "")


# ----------------------------------------------------------------------------------------------- on Dask
@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A sweep of the three head-on lanes: e = 0.2, 0.6, 1.0 for every body, seeds 1 and 2, on a local
    cluster of 2 workers that the command starts."""
    out = tmp_path_factory.mktemp("sweep") / "runs"
    result = sweep("--vary", "restitution=0.2:1:3", "--vary", "seed=1:2", "--out", str(out), "--workers", "2")
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def scheduler():
    """The address of a running 2-worker cluster, for --scheduler."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def test_a_sweep_writes_every_member_and_a_summary_that_matches_the_files(swept):
    rows = summary(swept)
    assert [(float(r["restitution"]), int(r["seed"])) for r in rows] == [
        (e, seed) for e in (0.2, 0.6, 1.0) for seed in (1, 2)
    ]
    for row in rows:
        t = carom.load(swept / row["path"])
        e = float(row["restitution"])
        assert row["status"] == "ok" and row["error"] == "" and row["skipped"] == "False"
        assert np.all(t.restitution == e) and int(t.attrs["seed"]) == int(row["seed"])
        assert int(row["impacts"]) == int(t.collision_count[-1]) == 3  # one impact per lane
        assert float(row["kinetic_energy"]) == t.kinetic_energy[-1]
        assert float(row["total_energy"]) == t.total_energy[-1]
        assert float(row["final_time"]) == t.time[-1] == pytest.approx(float(UNTIL))
        assert int(row["frames"]) == len(t.time)
        # each lane: 1 J before its impact, e² of it after; momentum stays zero
        assert float(row["kinetic_energy"]) == pytest.approx(3 * e**2, rel=1e-12)
        assert float(row["energy_drift"]) == pytest.approx(e**2 - 1, abs=1e-12)
        assert float(row["momentum_drift"]) < 1e-12
        assert float(row["wall_s"]) > 0
    assert (swept / "summary.png").read_bytes()[:4] == b"\x89PNG"


def test_running_again_skips_complete_members_and_finishes_partial_ones(swept, tmp_path, scheduler):
    out = tmp_path / "runs"
    shutil.copytree(swept, out)
    before = summary(out)
    # member 1: a run of its own scene stopped at 0.5 s (as if killed), to be continued
    [member] = [m for m in plan(LANES, [parse_vary("restitution=0.2:1:3"), parse_vary("seed=1:2")], out,
                                {"until": float(UNTIL)}) if m.index == 1]  # fmt: skip
    partial = Path(member.path)
    partial.unlink()
    stopped = parse_scene(member.text, member.source, {"run": {"until": 0.5}})
    carom.io.runner.start(stopped, member.text, member.source, partial, progress=False)
    assert carom.load(partial).time[-1] == pytest.approx(0.5)
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("member-*.h5") if p != partial}

    result = sweep("--vary", "restitution=0.2:1:3", "--vary", "seed=1:2", "--out", str(out), "--scheduler", scheduler)
    assert result.exit_code == 0, result.output
    assert "6 members, 5 done before: running 1" in result.output
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("member-*.h5") if p != partial} == mtimes
    after = summary(out)
    assert [r["skipped"] for r in after] == ["True", "False", "True", "True", "True", "True"]
    assert [r["wall_s"] for r in after if r["skipped"] == "True"] == [
        r["wall_s"] for r in before if r["member"] != "1"
    ]  # kept from the earlier summary
    finished, fresh = carom.load(partial), carom.load(swept / partial.name)
    assert np.array_equal(finished.time, fresh.time) and np.array_equal(finished.position, fresh.position)
    assert [r["kinetic_energy"] for r in after] == [r["kinetic_energy"] for r in before]


def test_another_sweeps_files_are_not_overwritten_without_force(swept):
    mtimes = {p: p.stat().st_mtime_ns for p in swept.glob("member-*.h5")}
    result = sweep("--vary", "seed=5:6", "--out", str(swept))
    assert result.exit_code == 2
    assert "member-0000.h5 holds a run of another scene" in result.output and "--force" in result.output
    assert {p: p.stat().st_mtime_ns for p in swept.glob("member-*.h5")} == mtimes


def test_a_failing_member_is_reported_and_the_others_complete(tmp_path, scheduler):
    """Body 0 grown to 0.28 m and moved down to y = 0.95 m overlaps body 2 (at y = 0.5 m, 0.2 m): each
    value alone is fine, so the sweep starts, and only that member fails, on its worker."""
    out = tmp_path / "runs"
    result = sweep(
        "--vary", "bodies.0.radius=0.2,0.28", "--vary", "bodies.0.position.1=1.0,0.95",
        "--out", str(out), "--scheduler", scheduler,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "1 of 4 members failed" in result.output
    rows = summary(out)
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "failed"]
    assert "bodies[2]: the new body" in rows[3]["error"] and "overlaps body 0" in rows[3]["error"]
    assert not (out / "member-0003.h5").exists()
    for row in rows[:3]:
        assert int(row["impacts"]) == int(carom.load(out / row["path"]).collision_count[-1]) > 0


def test_ctrl_c_on_a_local_sweep_stops_at_once_with_one_line_and_exit_130(tmp_path):
    """Ctrl-C at a terminal reaches every process of the command (its process group): the command and the
    local cluster's workers."""
    scene, out = tmp_path / "endless.toml", tmp_path / "runs"
    scene.write_text(LONG)  # (a gas that runs far longer than any test waits)
    command = [sys.executable, "-c", "from carom.cli import main; main()", "sweep", str(scene), "--vary", "seed=1:4",
               "--out", str(out), "--workers", "2", "-q"]  # fmt: skip
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 240
    while not (out / "member-0000.h5").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(1.0)  # the first member runs
    assert proc.poll() is None, proc.communicate()[1]
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    said = [line for line in err.splitlines() if line and not line.startswith(("compiling carom", "compiled carom"))]
    assert proc.returncode == 130 and took < 3.0, (took, err)
    assert "Traceback" not in err and len(said) == 2, err
    assert said == ["4 members, 0 done before: running 4 on a local cluster of 2 workers",
                    f"interrupted: run the same command again to go on ({out}/summary.csv so far)"]  # fmt: skip
    assert [r["status"] for r in summary(out)] == ["not run"] * 4
