"""Trajectory files (HDF5): frames, impacts, diagnostics and a checkpoint for exact restart.

The layout is documented in ``docs/file-format.md`` and is readable with plain h5py. Frames are buffered
and appended as the run goes, the file flushed after each append, so a run that is killed keeps every
frame appended before the kill. The checkpoint (the world's full state, `World.get_state`) is
double-buffered: it is written into the slot not in use, flushed, and only then made current, so a kill
at any moment leaves one complete checkpoint to resume from.
"""

from __future__ import annotations

from dataclasses import dataclass

import h5py
import numpy as np

FORMAT = "carom.trajectory"
VERSION = 1
#: Target size of one chunk of a growing dataset, bytes.
CHUNK_BYTES = 1 << 14
_FRAME_GROUPS = ("frames", "diagnostics")


class TrajectoryWriter:
    """Buffers frames and impacts of a run and appends them to an open trajectory file on `flush`."""

    def __init__(self, file: h5py.File, world, n_impacts: int = 0):
        self.file = file
        self._growing = {
            f"{g}/{name}": ds for g in (*_FRAME_GROUPS, "impacts") for name, ds in file[g].items()
        }
        self._buffer: dict[str, list] = {name: [] for name in self._growing}
        self._impacts: list = []  # since the last frame
        self._n_impacts = n_impacts
        self.frames = file["frames/time"].shape[0]  #: frames written or buffered
        world.on_impact(self._impacts.append)

    @classmethod
    def create(cls, path, world, scene_text: str, attrs: dict) -> TrajectoryWriter:
        """Create (or overwrite) the file for a run of ``world`` and write its first frame and checkpoint."""
        f = h5py.File(path, "w")
        f.attrs.update({"format": FORMAT, "version": VERSION, "dim": world.dim, **attrs})
        f.create_dataset("scene", data=scene_text, dtype=h5py.string_dtype())
        bodies = {
            "mass": world.masses,
            "radius": world.radii,
            "fixed": world.fixed,
            "restitution": world.restitutions,
        }
        for name, values in bodies.items():
            f.create_dataset(f"bodies/{name}", data=values)
        for name in ("point", "normal", "restitution"):
            f.create_dataset(f"walls/{name}", data=getattr(world.walls, name))
        frame = {name: np.asarray(row)[None] for name, row in cls._frame(world).items()}
        for name, rows in {**frame, **_impact_rows([], world.dim)}.items():
            row = rows.shape[1:]
            per_chunk = max(1, CHUNK_BYTES // (rows.itemsize * int(np.prod(row))))
            f.create_dataset(name, (0, *row), rows.dtype, maxshape=(None, *row), chunks=(per_chunk, *row))
        f.create_dataset("checkpoint/latest", data=-1)
        writer = cls(f, world)
        writer.add_frame(world)
        writer.flush(world.get_state())
        return writer

    @classmethod
    def reopen(cls, path, world) -> TrajectoryWriter:
        """Open a file to continue from its checkpoint: rows after it are dropped."""
        f = h5py.File(path, "r+")
        slot = f["checkpoint"][str(f["checkpoint/latest"][()])]
        frames, n_impacts = int(slot.attrs["frame"]) + 1, int(slot.attrs["n_impacts"])
        for group, n in [*((g, frames) for g in _FRAME_GROUPS), ("impacts", n_impacts)]:
            for ds in f[group].values():
                ds.resize(n, axis=0)
        return cls(f, world, n_impacts)

    @staticmethod
    def _frame(world) -> dict:
        rows = {
            "frames/time": world.time,
            "frames/position": world.positions,
            "frames/velocity": world.velocities,
            "frames/angular_velocity": world.angular_velocities,
            "frames/orientation": world.orientations,
            "frames/active": world.active,
            "diagnostics/kinetic_energy": world.kinetic_energy(),
            "diagnostics/potential_energy": world.potential_energy(),
            "diagnostics/total_energy": world.total_energy(),
            "diagnostics/momentum": world.momentum(),
            "diagnostics/collision_count": world.collision_count,
        }
        if world.impact_mode == "merge":  # merged bodies change mass and radius
            rows |= {"frames/mass": world.masses, "frames/radius": world.radii}
        return rows

    def add_frame(self, world) -> None:
        """Buffer the world's current frame and the impacts since the previous one. (A file written before
        a dataset existed, resumed, goes on without it: every frame dataset keeps one row per frame.)"""
        for name, row in self._frame(world).items():
            if name in self._buffer:
                self._buffer[name].append(np.array(row))
        for name, rows in _impact_rows(self._impacts, world.dim).items():
            self._buffer[name].extend(rows)
        self._impacts.clear()
        self.frames += 1

    def flush(self, state: dict | None = None) -> None:
        """Append the buffered frames and impacts to the file; with ``state`` (`World.get_state()` at
        the last buffered frame), also make it the checkpoint."""
        f = self.file
        self._n_impacts += len(self._buffer["impacts/time"])
        for name, rows in self._buffer.items():
            if rows:
                ds, n = self._growing[name], self._growing[name].shape[0]
                ds.resize(n + len(rows), axis=0)
                ds[n:] = np.stack(rows)
                rows.clear()
        if state is not None:
            index = 1 - max(int(f["checkpoint/latest"][()]), 0)  # the slot not in use
            slot = f.require_group(f"checkpoint/{index}")
            _write_state(slot, state)
            slot.attrs.update(frame=self.frames - 1, n_impacts=self._n_impacts)
            f.flush()  # the new checkpoint is complete on disk before it becomes the current one
            f["checkpoint/latest"][()] = index
        f.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        """Write the complete frames still buffered (without a checkpoint) and close the file."""
        try:
            self.flush()
        finally:
            self.file.close()


def read_checkpoint(path) -> tuple[str, dict, dict]:
    """The scene text, the file's attributes and the world state of its latest checkpoint."""
    with h5py.File(path, "r") as f:
        _check_format(f, path)
        latest = int(f["checkpoint/latest"][()])
        if latest < 0:
            raise ValueError(
                f"{path}: the run was stopped before its first frame; there is nothing to resume"
            )
        state = {name: ds[()] for name, ds in f[f"checkpoint/{latest}"].items()}
        return f["scene"].asstr()[()], dict(f.attrs), state


@dataclass(frozen=True)
class Trajectory:
    """A run read back from a trajectory file. F frames, N bodies, W walls, M impacts, dim d.

    ``mass`` and ``radius`` are (F, N) (read-only broadcasts of the per-body constants unless bodies
    merge). Units: s, m, m/s, rad/s, kg, J, kg m/s, N s."""

    scene: str  #: the scene file's TOML text
    attrs: dict  #: file attributes: dim, engine, until, output_interval, dt, seed, source, ...
    time: np.ndarray  #: (F,)
    position: np.ndarray  #: (F, N, d)
    velocity: np.ndarray  #: (F, N, d)
    #: rad/s: (F, N, 3) in 3D, (F, N) in 2D (counter-clockwise positive); zeros in files written without it
    angular_velocity: np.ndarray
    #: (F, N, 4) unit quaternions (w, x, y, z) taking the body frame to the world frame in 3D, (F, N) angles
    #: (rad) in 2D; the identity (angle 0) in files written without it
    orientation: np.ndarray
    active: np.ndarray  #: (F, N) bool
    mass: np.ndarray  #: (F, N)
    radius: np.ndarray  #: (F, N)
    fixed: np.ndarray  #: (N,) bool
    restitution: np.ndarray  #: (N,)
    wall_point: np.ndarray  #: (W, d)
    wall_normal: np.ndarray  #: (W, d) unit, pointing to the side bodies live on
    wall_restitution: np.ndarray  #: (W,)
    kinetic_energy: np.ndarray  #: (F,)
    potential_energy: np.ndarray  #: (F,)
    total_energy: np.ndarray  #: (F,)
    momentum: np.ndarray  #: (F, d)
    collision_count: np.ndarray  #: (F,) impacts since the start
    impacts: dict[str, np.ndarray]  #: time (M,), i, j (M,) (j = -1 - k for wall k), normal (M, d),
    #: impulse, approach_speed, restitution (M,)

    @property
    def dim(self) -> int:
        return int(self.attrs["dim"])


def load(path) -> Trajectory:
    """Read a trajectory file. A run killed mid-write may leave one partial frame: only complete frames
    (and the impacts up to the last of them) are returned."""
    with h5py.File(path, "r") as f:
        _check_format(f, path)
        n = min(ds.shape[0] for g in _FRAME_GROUPS for ds in f[g].values())
        frames = {name: ds[:n] for name, ds in f["frames"].items()}
        diag = {name: ds[:n] for name, ds in f["diagnostics"].items()}
        impacts = {name: ds[()] for name, ds in f["impacts"].items()}
        bodies = {name: ds[()] for name, ds in f["bodies"].items()}
        walls = {name: ds[()] for name, ds in f["walls"].items()}
        scene, attrs = f["scene"].asstr()[()], dict(f.attrs)
    m = min(
        np.searchsorted(impacts["time"], frames["time"][-1], side="right") if n else 0,
        *(len(v) for v in impacts.values()),
    )
    shape = (n, len(bodies["mass"]))
    dim = int(attrs["dim"])
    if "angular_velocity" not in frames:  # a file from before spin: smooth bodies that never turn
        frames["angular_velocity"] = np.zeros((*shape, 3) if dim == 3 else shape)
    if "orientation" not in frames:
        frames["orientation"] = np.zeros((*shape, 4) if dim == 3 else shape)
        if dim == 3:
            frames["orientation"][..., 0] = 1.0
    return Trajectory(
        scene=scene,
        attrs=attrs,
        time=frames["time"],
        position=frames["position"],
        velocity=frames["velocity"],
        angular_velocity=frames["angular_velocity"],
        orientation=frames["orientation"],
        active=frames["active"],
        mass=frames.get("mass", np.broadcast_to(bodies["mass"], shape)),
        radius=frames.get("radius", np.broadcast_to(bodies["radius"], shape)),
        fixed=bodies["fixed"],
        restitution=bodies["restitution"],
        wall_point=walls["point"],
        wall_normal=walls["normal"],
        wall_restitution=walls["restitution"],
        impacts={name: v[:m] for name, v in impacts.items()},
        **diag,
    )


def _check_format(f: h5py.File, path) -> None:
    if f.attrs.get("format") != FORMAT:
        raise ValueError(f"{path}: not a carom trajectory file")
    if f.attrs["version"] > VERSION:
        raise ValueError(
            f"{path}: file format version {f.attrs['version']} is newer than this carom reads ({VERSION})"
        )


def _write_state(group: h5py.Group, state: dict) -> None:
    """Store a `World.get_state()` dict in a group, one dataset per entry (resizable: entries may change
    size, and the set of entries may change, between checkpoints)."""
    for name in group.keys() - state.keys():
        del group[name]
    for name, value in state.items():
        value = np.asarray(value)
        if name not in group:
            group.create_dataset(name, data=value, maxshape=(None,) * value.ndim or None)
            continue
        if value.ndim:
            group[name].resize(value.shape)
        group[name][()] = value


def _impact_rows(impacts: list, dim: int) -> dict:
    return {
        "impacts/time": np.array([x.time for x in impacts], dtype=float),
        "impacts/i": np.array([x.i for x in impacts], dtype=np.int64),
        "impacts/j": np.array([x.j for x in impacts], dtype=np.int64),
        "impacts/normal": np.array([x.normal for x in impacts], dtype=float).reshape(-1, dim),
        "impacts/impulse": np.array([x.impulse for x in impacts], dtype=float),
        "impacts/approach_speed": np.array([x.approach_speed for x in impacts], dtype=float),
        "impacts/restitution": np.array([x.restitution for x in impacts], dtype=float),
    }
