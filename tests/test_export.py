"""`carom export`: each format read back with the reader its users use (ASE for XYZ, meshio and an XML
parser for VTK, pandas for CSV) and compared to `carom.load` number for number; thinning; refusals."""

import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import ase.io
import meshio
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from carom import load
from carom.cli import main
from carom.io import export

PERIODIC = """# Two named disks, one name with a space, in a periodic box away from the origin.
[world]
dim = 2
engine = "event"
[run]
until = 0.5
output_interval = 0.1
[[bodies]]
name = "left ball"
position = [2.0, 3.0]
velocity = [3.0, 0.5]
mass = 1.0
radius = 0.25
[[bodies]]
position = [4.0, 3.2]
velocity = [-1.0, 0.0]
mass = 2.0
radius = 0.4
[[boxes]]
lower = [1.0, 2.0]
upper = [5.0, 6.0]
periodic = true
"""


def carom(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Trajectory files: "2d" (restitution, unnamed), "3d" (billiard_follow, named), "periodic"."""
    folder = tmp_path_factory.mktemp("runs")
    (folder / "periodic.toml").write_text(PERIODIC)
    sources = {
        "2d": ["--example", "restitution"],
        "3d": ["--example", "billiard_follow"],
        "periodic": [folder / "periodic.toml"],
    }
    paths = {}
    for key, source in sources.items():
        paths[key] = folder / f"{key}.h5"
        result = carom("run", *source, "--out", paths[key], "-q")
        assert result.exit_code == 0, result.output
    return paths


def exported(run_file, tmp_path, fmt, *args):
    """Export through the command line into tmp_path; return the output path."""
    out = tmp_path / export.default_path(run_file, fmt).name
    result = carom("export", run_file, "--format", fmt, "--out", out, *args)
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.output
    return out


def spin3(traj, k):
    """Angular velocities of frame k as 3-vectors (2D: about z)."""
    w = traj.angular_velocity[k]
    return w if traj.dim == 3 else np.stack([0 * w, 0 * w, w], axis=1)


def padded(vectors):
    return np.pad(vectors, [(0, 0), (0, 3 - vectors.shape[1])])


@pytest.mark.parametrize(("key", "every"), [("2d", 1), ("3d", 3)])
def test_xyz_reads_back_in_ase_bit_for_bit(runs, tmp_path, key, every):
    traj = load(runs[key])
    frames = ase.io.read(exported(runs[key], tmp_path, "xyz", "--every", every), index=":")
    kept = range(0, len(traj.time), every)
    assert len(frames) == len(kept) > 10
    for atoms, k in zip(frames, kept, strict=True):
        assert atoms.info["Time"] == traj.time[k]
        assert np.array_equal(atoms.positions, padded(traj.position[k]))
        assert np.array_equal(atoms.arrays["velo"], padded(traj.velocity[k]))
        assert np.array_equal(atoms.arrays["omega"], spin3(traj, k))
        assert np.array_equal(atoms.arrays["radius"], traj.radius[k])
        assert np.array_equal(atoms.arrays["mass"], traj.mass[k])
        assert np.array_equal(atoms.arrays["id"], np.arange(len(traj.fixed)))
        assert np.array_equal(atoms.arrays["active"], traj.active[k])
        assert list(atoms.arrays["name"]) == [name or "-" for name in traj.names]
        assert set(atoms.get_chemical_symbols()) == {"X"}
        assert not atoms.pbc.any() and not atoms.cell.any()  # no box: no cell
        if traj.dim == 2:
            assert np.array_equal(atoms.arrays["angle"], traj.orientation[k])
            assert list(atoms.arrays["shape"]) == traj.shapes.tolist()
        else:
            assert "angle" not in atoms.arrays and "shape" not in atoms.arrays
    if key == "3d":
        assert traj.names[0] == "follow_cue" and np.any(traj.angular_velocity[0] != 0)


def test_xyz_cell_is_the_periodic_box(runs, tmp_path):
    traj = load(runs["periodic"])
    frames = ase.io.read(exported(runs["periodic"], tmp_path, "xyz"), index=":")
    assert [a.info["Time"] for a in frames] == traj.time.tolist()
    depth = 2 * 0.4  # the largest diameter, centred on z = 0
    for atoms in frames:
        assert np.array_equal(atoms.cell[:], np.diag([4.0, 4.0, depth]))
        assert np.array_equal(atoms.info["Origin"], [1.0, 2.0, -depth / 2])
        assert atoms.pbc.tolist() == [True, True, False]
        assert list(atoms.arrays["name"]) == ["left_ball", "-"]  # whitespace -> "_", no name -> "-"
    assert np.array_equal(frames[-1].positions[:, :2], traj.position[-1])


@pytest.mark.parametrize(("key", "every"), [("2d", 1), ("3d", 7), ("periodic", 2)])
def test_csv_reads_back_in_pandas_bit_for_bit(runs, tmp_path, key, every):
    traj = load(runs[key])
    table = pd.read_csv(exported(runs[key], tmp_path, "csv", "--every", str(every)), keep_default_na=False)
    axes = "xyz"[: traj.dim]
    spin = ["omega"] if traj.dim == 2 else ["omega_x", "omega_y", "omega_z"]
    pose, shape = (["angle"], ["shape"]) if traj.dim == 2 else ([], [])
    assert list(table.columns) == [
        "frame", "time", "body", "name", *axes, *(f"v{a}" for a in axes), *pose, *spin, "radius", "mass", "active",
        *shape,
    ]  # fmt: skip
    kept = np.arange(0, len(traj.time), every)
    n = len(traj.fixed)
    assert len(table) == len(kept) * n
    assert np.array_equal(table["frame"], np.repeat(kept, n))
    assert np.array_equal(table["time"], np.repeat(traj.time[kept], n))
    assert np.array_equal(table["body"], np.tile(np.arange(n), len(kept)))
    assert table["name"].tolist() == list(traj.names) * len(kept)
    assert np.array_equal(table[list(axes)], traj.position[kept].reshape(-1, traj.dim))
    assert np.array_equal(table[[f"v{a}" for a in axes]], traj.velocity[kept].reshape(-1, traj.dim))
    assert np.array_equal(table[spin], traj.angular_velocity[kept].reshape(len(table), -1))
    assert np.array_equal(table["radius"], traj.radius[kept].ravel())
    assert np.array_equal(table["mass"], traj.mass[kept].ravel())
    assert np.array_equal(table["active"], traj.active[kept].ravel().astype(int))
    if traj.dim == 2:
        assert np.array_equal(table["angle"], traj.orientation[kept].ravel())
        assert table["shape"].tolist() == traj.shapes.tolist() * len(kept)


@pytest.mark.parametrize(("key", "every"), [("2d", 5), ("3d", 1)])
def test_vtk_reads_back_in_meshio_with_a_pvd_time_series(runs, tmp_path, key, every):
    traj = load(runs[key])
    folder = exported(runs[key], tmp_path, "vtk", "--every", str(every))
    datasets = ET.parse(folder / "frames.pvd").getroot().findall("./Collection/DataSet")
    kept = range(0, len(traj.time), every)
    assert [float(d.get("timestep")) for d in datasets] == traj.time[kept].tolist()
    assert sorted(p.name for p in folder.iterdir()) == sorted(["frames.pvd", *(d.get("file") for d in datasets)])
    for dataset, k in zip(datasets, kept, strict=True):
        assert dataset.get("file") == f"frame_{k:06d}.vtu"
        mesh = meshio.read(folder / dataset.get("file"))
        assert np.array_equal(mesh.points, padded(traj.position[k]))
        assert np.array_equal(mesh.cells_dict["vertex"].ravel(), np.arange(len(traj.fixed)))
        data = mesh.point_data
        assert np.array_equal(data["velocity"], padded(traj.velocity[k]))
        assert np.array_equal(data["angular_velocity"], spin3(traj, k))
        assert np.array_equal(data["radius"], traj.radius[k])
        assert np.array_equal(data["mass"], traj.mass[k])
        assert np.array_equal(data["id"], np.arange(len(traj.fixed)))
        assert np.array_equal(data["active"], traj.active[k])
        if traj.dim == 2:
            assert np.array_equal(data["angle"], traj.orientation[k])
            assert np.array_equal(data["polygon"], traj.shapes == "polygon")
        else:
            assert "angle" not in data and "polygon" not in data


def test_default_outputs_sit_beside_the_run(runs, tmp_path):
    run_file = tmp_path / "my run.h5"
    run_file.write_bytes(runs["2d"].read_bytes())
    for fmt, name in [("xyz", "my run.xyz"), ("csv", "my run.csv"), ("vtk", "my run_vtk")]:
        result = carom("export", run_file, "--format", fmt)
        assert result.exit_code == 0, result.output
        assert (tmp_path / name).exists()
    assert (tmp_path / "my run_vtk" / "frames.pvd").is_file()


@pytest.mark.parametrize("fmt", ["xyz", "csv", "vtk"])
def test_an_existing_output_is_replaced_only_with_force(runs, tmp_path, fmt):
    out = exported(runs["2d"], tmp_path, fmt, "--every", "50")
    before = sorted(p.name for p in out.iterdir()) if out.is_dir() else out.read_bytes()
    result = carom("export", runs["2d"], "--format", fmt, "--out", out)
    assert result.exit_code == 2 and f"{out} exists: add --force" in result.output
    assert (sorted(p.name for p in out.iterdir()) if out.is_dir() else out.read_bytes()) == before
    exported(runs["2d"], tmp_path, fmt, "--every", "100", "--force")
    assert (sorted(p.name for p in out.iterdir()) if out.is_dir() else out.read_bytes()) != before
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # no temporary left beside it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "pdb"], "'pdb' is not one of 'xyz', 'vtk', 'csv'"),
        (["--format", "xyz", "--every", "0"], "--every"),
        (["--format", "csv", "--every", "two"], "--every"),
        (["--format", "xyz", "--out", "{tmp}/missing/run.xyz"], "the folder {tmp}/missing does not exist"),
        (["--format", "csv", "--out", "{run}", "--force"], "is the run file itself"),
        (["--format", "csv", "--out", "{tmp}"], "{tmp} exists"),
        (["--format", "csv", "--out", "{tmp}", "--force"], "is a folder, not a file"),
        (["--format", "vtk", "--out", "{tmp}", "--force"], "holds files other than .vtu and .pvd"),
    ],
)
def test_bad_options_exit_2_and_name_what_is_wrong(runs, tmp_path, args, message):
    run_file = tmp_path / "run.h5"
    run_file.write_bytes(runs["2d"].read_bytes())
    args = [a.format(tmp=tmp_path, run=run_file) for a in args]
    result = carom("export", run_file, *args)
    assert result.exit_code == 2, result.output
    assert message.format(tmp=tmp_path) in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]
    assert load(run_file).time.shape == load(runs["2d"]).time.shape


@pytest.mark.parametrize("content", [b"not a trajectory\n", b""])
def test_a_file_that_is_not_a_trajectory_exits_2(tmp_path, content):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(content)
    result = carom("export", bad, "--format", "xyz")
    assert result.exit_code == 2 and f"{bad}: cannot read it as a carom trajectory file" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.h5"]
    missing = carom("export", tmp_path / "nothere.h5", "--format", "xyz")
    assert missing.exit_code == 2 and "nothere.h5" in missing.output


@pytest.mark.parametrize("writer", [export.to_xyz, export.to_csv])
def test_a_failed_file_export_leaves_nothing_and_keeps_the_old_file(runs, tmp_path, writer):
    traj = load(runs["3d"])
    broken = replace(traj, names=traj.names[:1])  # fails part-way: one name for four bodies
    out = tmp_path / "out.txt"
    with pytest.raises((ValueError, IndexError)):
        writer(broken, out)
    assert list(tmp_path.iterdir()) == []
    out.write_text("old")
    with pytest.raises((ValueError, IndexError)):
        writer(broken, out, overwrite=True)
    assert out.read_text() == "old" and list(tmp_path.iterdir()) == [out]


def test_a_failed_vtk_export_leaves_nothing_and_keeps_the_old_folder(runs, tmp_path, monkeypatch):
    traj = load(runs["2d"])
    folder = tmp_path / "frames"
    export.to_vtk(traj, folder, every=100)
    before = sorted(p.name for p in folder.iterdir())
    write, calls = meshio.write, []

    def fail_on_the_third(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise KeyboardInterrupt
        write(*args, **kwargs)

    monkeypatch.setattr(meshio, "write", fail_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        export.to_vtk(traj, folder, every=10, overwrite=True)
    assert len(calls) == 3
    assert sorted(p.name for p in folder.iterdir()) == before
    assert list(tmp_path.iterdir()) == [folder]


def test_python_api(runs, tmp_path):
    traj = load(runs["2d"])
    assert export.export(traj, tmp_path / "a.csv", "csv", every=200) == tmp_path / "a.csv"
    assert len(pd.read_csv(tmp_path / "a.csv")) == 2 * len(traj.fixed)  # frames 0 and 200
    assert export.to_vtk(traj, tmp_path / "v") == tmp_path / "v" / "frames.pvd"
    with pytest.raises(FileExistsError, match=re.escape(f"{tmp_path / 'a.csv'} already exists")):
        export.to_csv(traj, tmp_path / "a.csv")
    for every in (0, 1.5, True):
        with pytest.raises(ValueError, match=re.escape(f"every = {every!r}")):
            export.to_xyz(traj, tmp_path / "b.xyz", every=every)
    with pytest.raises(ValueError, match="format 'pdb'"):
        export.export(traj, tmp_path / "c", "pdb")
    assert export.default_path("runs/x.h5", "vtk").as_posix() == "runs/x_vtk"
    assert export.default_path("runs/x.h5", "xyz").as_posix() == "runs/x.xyz"


def test_help_lists_formats_and_examples():
    result = carom("export", "--help")
    assert result.exit_code == 0
    assert all(word in result.output for word in ("xyz", "vtk", "csv", "--every", "--force", "Examples"))
    assert "carom export" in carom("--help").output
