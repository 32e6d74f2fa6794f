"""Trajectory files (HDF5): frames, impacts, diagnostics and a checkpoint for exact restart.

The layout is documented in ``docs/file-format.md`` and is readable with plain h5py. Frames are buffered
and appended as the run goes, the file flushed after each append, so a run that is killed keeps every
frame appended before the kill. The checkpoint (the world's full state, `World.get_state`) is
double-buffered: it is written into the slot not in use, flushed, and only then made current, so a kill
at any moment leaves one complete checkpoint to resume from.
"""

from __future__ import annotations

import html
import os
import tomllib
from dataclasses import dataclass, field

import h5py
import numpy as np

from ..materials import pair_keys
from ..scenefile import build_world, parse_scene
from ..shapes import ball_inertia_factor, placed_vertices

FORMAT = "carom.trajectory"
#: Version 2: resting forces in checkpoints keyed by `carom.materials.pair_key` (version 1: ``i * n + j``).
VERSION = 2
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
        self._world = world
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
        f.create_dataset("bodies/name", data=list(world.names), dtype=h5py.string_dtype(), shape=(world.n_bodies,))
        f.create_dataset("bodies/shape", data=list(world.shapes), dtype=h5py.string_dtype(), shape=(world.n_bodies,))
        outlines = world.polygon_table()
        f.create_dataset("polygons/start", data=outlines.start)
        f.create_dataset("polygons/vertices", data=outlines.vertices.reshape(-1, 2))
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
        _, n_impacts = _truncate_to_checkpoint(f)
        return cls(f, world, n_impacts)

    def rewind(self) -> dict:
        """Drop what was written or buffered after the checkpoint; return the checkpoint's state (for
        `World.set_state`: the world goes back there, and the run goes on from it)."""
        for rows in self._buffer.values():
            rows.clear()
        self._impacts.clear()
        self.frames, self._n_impacts = _truncate_to_checkpoint(self.file)
        return _checkpoint_state(self.file)

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
            "diagnostics/angular_momentum": world.angular_momentum(),
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
        """Write the complete frames still buffered (without a checkpoint) and close the file; the world's
        impacts are no longer collected."""
        try:
            self.flush()
        finally:
            self.file.close()
            self._world.remove_impact_callback(self._impacts.append)


def _truncate_to_checkpoint(f: h5py.File) -> tuple[int, int]:
    """Drop the rows written after the latest checkpoint; return the frames and impacts kept."""
    slot = f["checkpoint"][str(f["checkpoint/latest"][()])]
    frames, n_impacts = int(slot.attrs["frame"]) + 1, int(slot.attrs["n_impacts"])
    for group, n in [*((g, frames) for g in _FRAME_GROUPS), ("impacts", n_impacts)]:
        for ds in f[group].values():
            ds.resize(n, axis=0)
    return frames, n_impacts


def _checkpoint_state(f: h5py.File) -> dict:
    """The world state of the latest checkpoint ({} if the run stopped before its first), its pair keys in
    `carom.materials`' scheme (files of version 1 keyed resting forces ``i * n + j``)."""
    latest = int(f["checkpoint/latest"][()])
    state = {} if latest < 0 else {name: ds[()] for name, ds in f[f"checkpoint/{latest}"].items()}
    if f.attrs["version"] < 2 and "position" in state:
        n = len(state["position"])
        for name in ("pair_force_keys", "sleep_pair_keys"):
            if name in state and len(state[name]):
                i, j = np.divmod(np.asarray(state[name], dtype=np.int64), n)
                state[name] = pair_keys(i, j)
    return state


def read_checkpoint(path) -> tuple[str, dict, dict]:
    """The scene text, the file's attributes and the world state of its latest checkpoint."""
    with _open(path) as f:
        _check_format(f, path)
        state = _checkpoint_state(f)
        if not state:
            raise ValueError(
                f"{path}: the run was stopped before its first frame; there is nothing to resume"
            )
        return f["scene"].asstr()[()], dict(f.attrs), state


def rebuild_world(scene_text: str, attrs: dict, until: float | None = None):
    """The scene of a trajectory file built again, with the run settings the file's attributes hold (and
    ``until`` instead of the file's, if given); return the scene and the world, at the scene's start."""
    run = {key: float(attrs[key]) for key in ("until", "output_interval", "dt") if key in attrs}
    if until is not None:
        run["until"] = until
    source = str(attrs["source"])
    scene = parse_scene(scene_text, source, {"run": run, "world": {"seed": int(attrs["seed"])}})
    return scene, build_world(scene, source)


@dataclass(frozen=True, repr=False)
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
    names: tuple[str, ...]  #: (N,) each body's name, "" for none (all "" in files written without names)
    #: (N,) str: "sphere" (3D), "disk" or "polygon" (2D); disks in files written before polygons
    shapes: np.ndarray
    #: (N + 1,) int64: polygon b's outline is rows ``outline_start[b]:outline_start[b + 1]`` of
    #: `outline_vertices` (none for a disk or sphere)
    outline_start: np.ndarray
    #: (V, 2) m: every polygon's vertices in its body frame (origin at its centroid, counter-clockwise)
    outline_vertices: np.ndarray
    #: the world state of the latest checkpoint (`World.get_state`), {} if the run stopped before its first
    checkpoint: dict = field(repr=False)
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
    #: kg m^2/s about the origin, orbital + spin: (F, 3) in 3D, (F,) (the z component) in 2D; None in files
    #: written without it
    angular_momentum: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return int(self.attrs["dim"])

    @property
    def energy_scale(self) -> float:
        """J: the largest kinetic energy of the run, the scale of its energy drift (`carom info`, sweeps)."""
        return max(float(np.max(np.abs(self.kinetic_energy))), 1e-300)

    @property
    def momentum_scale(self) -> float:
        """kg m/s: the largest sum of |m v| over the moving bodies in a frame, the scale of the momentum
        drift."""
        moving = ~self.fixed
        mv = np.sum(self.mass[:, moving] * np.linalg.norm(self.velocity[:, moving], axis=2), axis=1)
        return max(float(np.max(mv)), 1e-300)

    @property
    def periodic_box(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The run's periodic box (lower, upper corners, m), from its scene; None if it has none."""
        try:
            boxes = tomllib.loads(self.scene).get("boxes", [])
        except tomllib.TOMLDecodeError:  # a scene that carom did not write: no box is known
            return None
        box = next((b for b in boxes if b.get("periodic", False)), None)
        if box is None:
            return None
        return np.asarray(box["lower"], dtype=float), np.asarray(box["upper"], dtype=float)

    def polygon_vertices(self, k: int, ids) -> list[np.ndarray]:
        """The vertices (m, world frame, counter-clockwise) of the polygons ``ids`` at frame k, one (k_i, 2)
        array each: ``position + R(angle) outline`` (as `World.polygon_vertices`)."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        first, counts = self.outline_start[ids], np.diff(self.outline_start)[ids]
        if np.any(counts == 0):
            raise ValueError(f"body {int(ids[np.argmax(counts == 0)])} is not a polygon: it has no vertices")
        ends = np.cumsum(counts)
        rows = np.arange(ends[-1] if len(ids) else 0) + np.repeat(first - (ends - counts), counts)
        owner = np.repeat(ids, counts)
        placed = placed_vertices(self.outline_vertices[rows], self.orientation[k, owner], self.position[k, owner])
        return np.split(placed, ends[:-1])

    def world(self, at: float | None = None):
        """The run's world (a `World` or `EventWorld`, built from the file's scene), ready to go on.

        ``at=None``: at the latest checkpoint, exactly: running it on (on the same frame grid) gives the same
        bits as the run that was never stopped, as ``carom run --resume`` does. (The checkpoint is the world
        at its frame, or at the last step before it where the frame fell between two steps.) ``at=t`` (s): at the frame
        at time t (within 1e-6 of the frame interval; ValueError naming ``at`` if there is none), with every
        stored number of that frame exact: positions, velocities, spins, orientations, which bodies are
        active (merged bodies: masses and radii, inverse masses and inertias recomputed from them), the time
        and the impact count. What frames do not store starts afresh: `World`'s warm-started contact forces
        and sleeping islands, `EventWorld`'s pending events (predicted again from the frame), event counts.
        Going on from a frame is thus the same physics, but in general not the same bits, as the run."""
        _, world = rebuild_world(self.scene, self.attrs)
        if at is None:
            if not self.checkpoint:
                raise ValueError("the run stopped before its first checkpoint: there is no state to go on from")
            world.set_state(self.checkpoint)
        else:
            world.set_state(self._frame_state(world, self._frame_at(at)))
        return world

    def _frame_at(self, at) -> int:
        """The index of the frame at time ``at`` (s)."""
        try:
            t = float(at)
        except (TypeError, ValueError):
            raise ValueError(f"at must be a time in s, got {at!r}") from None
        k = int(np.argmin(np.abs(self.time - t))) if len(self.time) else -1
        interval = float(self.attrs["output_interval"])
        if k < 0 or not abs(self.time[k] - t) <= 1e-6 * interval:
            span = f"{self.time[0]:.9g} .. {self.time[-1]:.9g} s" if len(self.time) else "none"
            raise ValueError(f"at = {at!r}: no frame at that time (frames: {span}, every {interval:.9g} s)")
        return k

    def _frame_state(self, world, k: int) -> dict:
        """A `World.set_state` dict of frame k: the built world's body constants, the frame's state."""
        state = world.bodies.snapshot()
        state |= {"time": float(self.time[k]), "collision_count": int(self.collision_count[k]),
                  "position": self.position[k], "velocity": self.velocity[k],
                  "angular_velocity": self.angular_velocity[k], "orientation": self.orientation[k],
                  "active": self.active[k]}  # fmt: skip
        if world.impact_mode == "merge":
            mass, radius, fixed = self.mass[k], self.radius[k], self.fixed
            inv_mass = np.where(fixed, 0.0, 1.0 / mass)
            state |= {"mass": mass, "radius": radius, "inv_mass": inv_mass,
                      "inv_inertia": inv_mass / (ball_inertia_factor(self.dim) * radius**2)}  # fmt: skip
        return state

    def plot(self, **kw):
        """The plot of the run (energy, its relative error, momentum, impacts against time) as a matplotlib
        ``Figure``; ``kw`` as for `carom.render.plot.figure` (``size``: (width, height), pixels)."""
        from ..render.plot import figure

        return figure(self, **kw)

    def animate(self, **kw):
        """The animation of the run as a matplotlib ``FuncAnimation``; ``kw`` as for
        `carom.render.animation.animation` (``trails``, ``fps``, ``color_by``, ``size``, ``max_frames``)."""
        from ..render.animation import animation

        return animation(self, **kw)

    def _facts(self) -> dict[str, str]:
        """What `repr` and a notebook show of the run: its scene, bodies, frames and impacts."""
        a, (frames, n) = self.attrs, self.position.shape[:2]
        polygons = int(np.sum(self.shapes == "polygon"))
        span = f"t = {self.time[0]:.6g} .. {self.time[-1]:.6g} s" if frames else "none"
        return {
            "scene": f"{a.get('source', '')} ({self.dim}D, engine {a.get('engine', '')})",
            "bodies": f"{n}" + (f" ({polygons} polygons)" if polygons else "") + f", {len(self.wall_point)} walls",
            "frames": f"{frames}, {span}",
            "impacts": f"{int(self.collision_count[-1]) if frames else 0} ({len(self.impacts['time'])} logged)",
        }

    def __repr__(self) -> str:
        return "<carom.Trajectory " + "; ".join(f"{key} {value}" for key, value in self._facts().items()) + ">"

    def _repr_html_(self) -> str:
        """In a notebook: a small table (the pictures are `plot` and `animate`, which show themselves)."""
        rows = "".join(f"<tr><th style='text-align:left'>{key}</th><td style='text-align:left'>{html.escape(value)}"
                       "</td></tr>" for key, value in self._facts().items())  # fmt: skip
        return (f"<table><caption style='text-align:left'>carom.Trajectory</caption>{rows}</table>"
                "<p><code>.plot()</code> draws it, <code>.animate()</code> animates it.</p>")


def load(path) -> Trajectory:
    """Read a trajectory file. A run killed mid-write may leave one partial frame: only complete frames
    (and the impacts up to the last of them) are returned."""
    with _open(path) as f:
        _check_format(f, path)
        n = min(ds.shape[0] for g in _FRAME_GROUPS for ds in f[g].values())
        frames = {name: ds[:n] for name, ds in f["frames"].items()}
        diag = {name: ds[:n] for name, ds in f["diagnostics"].items()}
        impacts = {name: ds[()] for name, ds in f["impacts"].items()}
        bodies = {name: ds[()] for name, ds in f["bodies"].items()}
        walls = {name: ds[()] for name, ds in f["walls"].items()}
        scene, attrs = f["scene"].asstr()[()], dict(f.attrs)
        checkpoint = _checkpoint_state(f)
        n_bodies = len(bodies["mass"])
        names = tuple(f["bodies/name"].asstr()[()]) if "name" in f["bodies"] else ("",) * n_bodies
        if "shape" in f["bodies"]:
            shapes = f["bodies/shape"].asstr()[()].astype(str)
            start, vertices = f["polygons/start"][()], f["polygons/vertices"][()]
        else:  # a file from before polygons: disks (or spheres)
            shapes = np.full(n_bodies, "sphere" if int(f.attrs["dim"]) == 3 else "disk")
            start, vertices = np.zeros(n_bodies + 1, dtype=np.int64), np.zeros((0, 2))
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
        names=names,
        shapes=shapes,
        outline_start=start,
        outline_vertices=vertices,
        checkpoint=checkpoint,
        wall_point=walls["point"],
        wall_normal=walls["normal"],
        wall_restitution=walls["restitution"],
        impacts={name: v[:m] for name, v in impacts.items()},
        **diag,  # angular_momentum stays None where the file has none
    )


def _open(path) -> h5py.File:
    """Open a trajectory file to read; FileNotFoundError naming it if there is none, ValueError if it is not
    HDF5 at all."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such trajectory file")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a folder, not a trajectory file")
    try:
        return h5py.File(path, "r")
    except OSError:
        if os.path.isfile(path) and not h5py.is_hdf5(path):
            raise ValueError(f"{path}: not a carom trajectory file (it is not an HDF5 file)") from None
        raise


def _check_format(f: h5py.File, path) -> None:
    if f.attrs.get("format") != FORMAT:
        raise ValueError(f"{path}: not a carom trajectory file")
    if f.attrs["version"] > VERSION:
        raise ValueError(
            f"{path}: file format version {f.attrs['version']} is newer than this carom reads ({VERSION})"
        )


def _write_state(group: h5py.Group, state: dict) -> None:
    """Store a `World.get_state()` dict in a group, one dataset per entry (resizable: entries may change
    size, even rank (IAS15's memory is empty before its first step), and the set of entries may change,
    between checkpoints)."""
    for name in group.keys() - state.keys():
        del group[name]
    for name, value in state.items():
        value = np.asarray(value)
        if name in group and group[name].ndim != value.ndim:
            del group[name]
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
