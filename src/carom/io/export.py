"""Exports of a run to the formats other tools read: extended XYZ (OVITO, ASE), VTK (ParaView) and CSV.

Each writer takes a `carom.Trajectory` (`carom.load(path)`) and writes every ``every``-th frame (frames
0, K, 2K, ...). Numbers are written exactly: text formats print the shortest decimal that reads back as
the same float64 (Python's ``repr``), VTK stores float64 in binary. The output appears whole or not at
all: it is written under a temporary name next to the target and renamed when complete, and an existing
output is replaced only with ``overwrite=True``. Formats, columns and units: ``docs/export.md``.

    from carom.io import export
    export.to_csv(carom.load("run.h5"), "run.csv", every=10)
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .trajectory import Trajectory

FORMATS = ("xyz", "vtk", "csv")
#: The species of every body in an XYZ file: the dummy element of ASE and OVITO (bodies are not atoms).
XYZ_SPECIES = "X"
#: The XYZ name of a body without a name (a name cannot be empty in a whitespace-separated column).
XYZ_NO_NAME = "-"
XYZ_PROPERTIES = "species:S:1:pos:R:3:velo:R:3:omega:R:3:radius:R:1:mass:R:1:id:I:1:name:S:1:active:L:1"
#: The columns of a 2D run's XYZ file: `XYZ_PROPERTIES`, then each body's angle (rad) and shape ("disk", "polygon").
XYZ_PROPERTIES_2D = f"{XYZ_PROPERTIES}:angle:R:1:shape:S:1"
#: In a VTK export folder: the collection file ParaView opens, and the name of the frame files.
PVD_NAME = "frames.pvd"
VTU_PATTERN = "frame_{:0{width}d}.vtu"


def default_path(run_file, fmt: str) -> Path:
    """Where `carom export` writes by default: RUN.xyz, RUN.csv, or the folder RUN_vtk."""
    run_file = Path(run_file)
    if fmt == "vtk":
        return run_file.with_name(f"{run_file.stem}_vtk")
    return run_file.with_suffix(f".{_check_format(fmt)}")


def export(traj: Trajectory, path, fmt: str, every: int = 1, overwrite: bool = False) -> Path:
    """Write ``traj`` in format ``fmt`` (one of `FORMATS`) to ``path``; return the file to open (for
    "vtk", the ``.pvd`` collection inside the folder ``path``)."""
    writers: dict[str, Callable[..., Path]] = {"xyz": to_xyz, "vtk": to_vtk, "csv": to_csv}
    return writers[_check_format(fmt)](traj, path, every=every, overwrite=overwrite)


def to_xyz(traj: Trajectory, path, every: int = 1, overwrite: bool = False) -> Path:
    """Extended XYZ, one block per frame: positions (m; 2D runs with z = 0), velocities (m/s), angular
    velocities (rad/s; 2D: about z), radius (m), mass (kg), body id, name and active, in 2D each body's
    angle (rad, counter-clockwise) and shape, and the frame's ``Time`` (s). A periodic box becomes the cell
    (``Lattice``, ``Origin``, ``pbc``); otherwise ``pbc="F F F"`` and no cell."""
    frames = _frame_indices(traj, every)
    header = f"Properties={XYZ_PROPERTIES if traj.dim == 3 else XYZ_PROPERTIES_2D} {_xyz_cell(traj)}"
    labels = [f"{body} {_xyz_name(name)}" for body, name in enumerate(traj.names)]
    numbers = np.concatenate(
        [_padded(traj.position), _padded(traj.velocity), _spin(traj), traj.radius[..., None], traj.mass[..., None]],
        axis=2,
    )
    with _replacing(Path(path), overwrite, folder=False) as part, _text(part) as out:
        for k in frames:
            out.write(f"{len(labels)}\n{header} Time={float(traj.time[k])!r}\n")
            poses = [""] * len(labels) if traj.dim == 3 else [
                f" {angle!r} {shape}" for angle, shape in zip(traj.orientation[k].tolist(), traj.shapes, strict=True)
            ]  # fmt: skip
            for row, label, active, pose in zip(numbers[k].tolist(), labels, traj.active[k].tolist(), poses,
                                                strict=True):  # fmt: skip
                values = " ".join(map(repr, row))
                out.write(f"{XYZ_SPECIES} {values} {label} {'T' if active else 'F'}{pose}\n")
    return Path(path)


def to_csv(traj: Trajectory, path, every: int = 1, overwrite: bool = False) -> Path:
    """CSV with a header, one row per (frame, body), frames in order and bodies by id within a frame:
    ``frame, time, body, name, x, y[, z], vx, vy[, vz]``, then ``angle, omega`` (2D: rad, counter-clockwise,
    and rad/s) or ``omega_x, omega_y, omega_z`` (3D), ``radius, mass, active`` (1 or 0), and in 2D ``shape``
    ("disk" or "polygon"). Units: s, m, m/s, rad, rad/s, kg."""
    frames = _frame_indices(traj, every)
    axes = "xyz"[: traj.dim]
    flat = traj.dim == 2
    spin = ["angle", "omega"] if flat else [f"omega_{a}" for a in axes]
    header = ["frame", "time", "body", "name", *axes, *(f"v{a}" for a in axes), *spin, "radius", "mass", "active",
              *(["shape"] if flat else [])]  # fmt: skip
    names = traj.names
    spins = np.stack([traj.orientation, traj.angular_velocity], axis=2) if flat else traj.angular_velocity
    numbers = np.concatenate(
        [traj.position, traj.velocity, spins, traj.radius[..., None], traj.mass[..., None]], axis=2
    )
    shapes = [[shape] for shape in traj.shapes.tolist()] if flat else [[]] * len(names)
    with _replacing(Path(path), overwrite, folder=False) as part, _text(part, newline="") as out:
        rows = csv.writer(out, lineterminator="\n")
        rows.writerow(header)
        for k in frames:
            time = float(traj.time[k])
            active = traj.active[k].astype(int).tolist()
            rows.writerows(
                [int(k), time, body, names[body], *values, active[body], *shapes[body]]
                for body, values in enumerate(numbers[k].tolist())
            )
    return Path(path)


def to_vtk(traj: Trajectory, folder, every: int = 1, overwrite: bool = False) -> Path:
    """A folder of VTK unstructured-grid files (``.vtu``, one per frame, written with meshio) and the
    collection ``frames.pvd`` that lists them with their times; return the path of the ``.pvd``.

    Each body is a point (2D runs with z = 0) with point data ``velocity`` (m/s), ``angular_velocity``
    (rad/s; 2D: about z), ``radius`` (m), ``mass`` (kg), ``id`` and ``active`` (1 or 0), and in 2D
    ``angle`` (rad, counter-clockwise) and ``polygon`` (1 for a polygon, 0 for a disk)."""
    import meshio  # only this format needs it

    frames = _frame_indices(traj, every)
    width = max(6, len(str(len(traj.time) - 1)))
    ids = np.arange(traj.position.shape[1])
    positions, velocities, spins = _padded(traj.position), _padded(traj.velocity), _spin(traj)
    polygon = (traj.shapes == "polygon").astype(np.uint8)
    collection = ET.Element("VTKFile", type="Collection", version="0.1", byte_order="LittleEndian")
    datasets = ET.SubElement(collection, "Collection")
    with _replacing(Path(folder), overwrite, folder=True) as part:
        for k in frames:
            name = VTU_PATTERN.format(int(k), width=width)
            point_data = {
                "velocity": velocities[k],
                "angular_velocity": spins[k],
                "radius": np.ascontiguousarray(traj.radius[k]),
                "mass": np.ascontiguousarray(traj.mass[k]),
                "id": ids,
                "active": traj.active[k].astype(np.uint8),
            }
            if traj.dim == 2:
                point_data |= {"angle": np.ascontiguousarray(traj.orientation[k]), "polygon": polygon}
            mesh = meshio.Mesh(positions[k], [("vertex", ids[:, None])], point_data=point_data)
            meshio.write(part / name, mesh, file_format="vtu")
            ET.SubElement(datasets, "DataSet", timestep=repr(float(traj.time[k])), group="", part="0", file=name)
        ET.indent(collection)
        ET.ElementTree(collection).write(part / PVD_NAME, encoding="utf-8", xml_declaration=True)
    return Path(folder) / PVD_NAME


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    return fmt


def _frame_indices(traj: Trajectory, every: int) -> range:
    """Frames 0, every, 2 every, ..."""
    if isinstance(every, bool) or not isinstance(every, int | np.integer) or every < 1:
        raise ValueError(f"every = {every!r}: must be a whole number of frames, 1 or more")
    return range(0, len(traj.time), int(every))


def _padded(vectors: np.ndarray) -> np.ndarray:
    """(..., d) vectors as (..., 3): 2D ones get z = 0."""
    pad = [(0, 0)] * (vectors.ndim - 1) + [(0, 3 - vectors.shape[-1])]
    return np.pad(vectors, pad)


def _spin(traj: Trajectory) -> np.ndarray:
    """Angular velocities as (F, N, 3) vectors, rad/s: a 2D body turns about z (counter-clockwise > 0)."""
    if traj.dim == 3:
        return traj.angular_velocity
    return np.stack([np.zeros_like(traj.angular_velocity)] * 2 + [traj.angular_velocity], axis=-1)


def _xyz_cell(traj: Trajectory) -> str:
    """The cell keys of the XYZ comment line. A periodic box is the cell; in 2D its third edge (not
    periodic) is the largest diameter, centred on z = 0, so that OVITO and ASE get a proper cell."""
    box = traj.periodic_box
    if box is None:
        return 'pbc="F F F"'
    lower, upper = box
    if traj.dim == 2:
        depth = 2 * float(traj.radius.max()) if traj.radius.size else 1.0
        lower, upper = np.append(lower, -depth / 2), np.append(upper, depth / 2)
    lattice = np.diag(upper - lower).ravel().tolist()
    pbc = "T T T" if traj.dim == 3 else "T T F"
    return f'Lattice="{_words(lattice)}" Origin="{_words(lower.tolist())}" pbc="{pbc}"'


def _words(numbers) -> str:
    return " ".join(map(repr, numbers))


def _xyz_name(name: str) -> str:
    """A name as one XYZ word: whitespace becomes "_", an empty name `XYZ_NO_NAME`."""
    return re.sub(r"\s", "_", name) or XYZ_NO_NAME


def _text(path: Path, newline: str = "\n"):
    return open(path, "w", encoding="utf-8", newline=newline)


@contextmanager
def _replacing(path: Path, overwrite: bool, folder: bool) -> Iterator[Path]:
    """Yield a temporary path next to ``path`` to write into; on success it replaces ``path``, on any
    error (or Ctrl-C) it is removed and ``path`` is left as it was."""
    _check_target(path, overwrite, folder)
    part = path.with_name(f".{path.name}.part-{os.getpid()}")
    _remove(part)
    if folder:
        part.mkdir()
    try:
        yield part
        if folder and path.exists():
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            path.rename(old)
            part.rename(path)
            shutil.rmtree(old)
        else:
            os.replace(part, path)
    except BaseException:
        _remove(part)
        raise


def _check_target(path: Path, overwrite: bool, folder: bool) -> None:
    """Refuse an output that cannot be written: its folder is missing, it exists (without
    ``overwrite``), or it is not the kind of thing (file or folder) that will replace it."""
    if not path.parent.is_dir():
        raise ValueError(f"{path}: the folder {path.parent} does not exist")
    if not (path.exists() or path.is_symlink()):
        return
    if not overwrite:
        raise FileExistsError(f"{path} already exists")
    if folder and not path.is_dir():
        raise ValueError(f"{path} is a file, not a folder of VTK files")
    if not folder and path.is_dir():
        raise ValueError(f"{path} is a folder, not a file")
    if folder and any(p.suffix not in (".vtu", ".pvd") for p in path.iterdir()):
        raise ValueError(f"{path} holds files other than .vtu and .pvd: not replacing it")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
