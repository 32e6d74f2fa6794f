"""Polygons in scene files, trajectory files, exports, `carom info` and animations, and the polygon examples."""

from __future__ import annotations

import ase.io
import h5py
import meshio
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import carom
from carom import examples
from carom.cli import main
from carom.io import load, runner
from carom.io.export import export
from carom.scenefile import Scene, SceneError, build_world, parse_scene

HEADER = """
[world]
dim = 2
gravity = [0.0, -9.81]
[run]
until = 0.5
dt = 0.016666666666666666
output_interval = 0.1
"""
#: Polygons in free flight, apart (no contacts: these tests are about files and pictures, not impacts).
FLIGHT = HEADER + """
[[bodies]]
name = "ball"
position = [-3.0, 0.0]
velocity = [1.0, 2.0]
mass = 1.0
radius = 0.2
angular_velocity = 1.5
[[polygons]]
name = "tri"
vertices = [[0.0, 0.0], [1.3, 0.1], [0.7, 0.9]]
position = [0.0, 0.0]
angle = 0.3
velocity = [0.5, 1.0]
angular_velocity = -4.0
mass = 2.0
[[polygons]]
name = "plate"
shape = "rectangle"
width = 1.0
height = 0.25
position = [3.0, 0.0]
angular_velocity = 7.0
density = 3.0
[[polygons]]
shape = "rectangle"
width = 8.0
height = 0.5
position = [0.0, -4.0]
fixed = true
"""


def world_of(text: str):
    return build_world(parse_scene(text, "scene.toml"), "scene.toml")


def same_world(a, b) -> None:
    """Every body array and every outline of two worlds, bit for bit."""
    arrays_a, arrays_b = a.bodies.snapshot(), b.bodies.snapshot()
    for name, values in arrays_a.items():
        assert values.tobytes() == arrays_b[name].tobytes(), name
    for outline_a, outline_b in zip(a._outlines_of(a.n_bodies), b._outlines_of(b.n_bodies), strict=True):
        assert (outline_a is None and outline_b is None) or outline_a.tobytes() == outline_b.tobytes()


# ----------------------------------------------------------------------------------------------- scene files
def test_polygon_tables_build_what_the_api_builds():
    w = world_of(FLIGHT)
    api = carom.World(dim=2, gravity=(0.0, -9.81))
    api.add_body((-3.0, 0.0), velocity=(1.0, 2.0), mass=1.0, radius=0.2, angular_velocity=1.5, name="ball")
    api.add_polygon([(0.0, 0.0), (1.3, 0.1), (0.7, 0.9)], (0.0, 0.0), angle=0.3, velocity=(0.5, 1.0),
                    angular_velocity=-4.0, mass=2.0, name="tri")  # fmt: skip
    api.add_rectangle(1.0, 0.25, (3.0, 0.0), angular_velocity=7.0, density=3.0, name="plate")
    api.add_rectangle(8.0, 0.5, (0.0, -4.0), fixed=True)
    same_world(w, api)
    assert w.shapes.tolist() == ["disk", "polygon", "polygon", "polygon"]
    assert w.masses[2] == 3.0 * 1.0 * 0.25 and w.names == api.names


def test_polygons_come_after_bodies_in_the_ids_and_forces_and_pairs_name_them():
    w = world_of(FLIGHT + '[[forces]]\nkind = "thrust"\nbody = "plate"\nforce = [1.0, 0.0]\n'
                 '[[pairs]]\nbody = "tri"\nother = "ball"\nrestitution = 0.25\n')  # fmt: skip
    assert w.forces[0].body == 2
    assert w._pair_restitution == {int(carom.materials.pair_key(1, 0)): 0.25}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("dim = 2", "dim = 3"), r"polygons\[0\]: polygons are 2D bodies: they need world.dim = 2, not 3"),
        (('shape = "rectangle"\nwidth = 1.0', 'vertices = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]\nshape = "rectangle"\n'
          "width = 1.0"), r'polygons\[1\]: give vertices or shape = "rectangle" \(with width and height\), not both'),
        (('shape = "rectangle"\nwidth = 1.0', "width = 1.0"),
         r'polygons\[1\]: give vertices or shape = "rectangle"'),
        (("height = 0.25\n", ""), r'polygons\[1\]: shape = "rectangle" needs height'),
        (('shape = "rectangle"\nwidth = 1.0\nheight = 0.25', 'vertices = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]\n'
          "width = 1.0"), r'polygons\[1\]: width need shape = "rectangle"'),
        (('shape = "rectangle"', 'shape = "square"'), r"polygons\[1\].shape: 'square' is not allowed; allowed: "
         r"'rectangle'"),
        (("density = 3.0", "density = 3.0\nmass = 1.0"), r"polygons\[1\]: give a polygon's mass or its density"),
        (("width = 1.0", "width = -1.0"), r"polygons\[1\]: width must be a positive finite number \(m\), got -1.0"),
        (("[0.7, 0.9]", "[0.7, 0.9], [0.6, 0.1]"), r"polygons\[0\]: .*vertices"),
        (("mass = 2.0", "mas = 2.0"), r"polygons\[0\]: unknown key 'mas'.*\(did you mean 'mass'\?\)"),
        (('name = "plate"', 'name = "ball"'), r"the name 'ball' is given to more than one body"),
        (("position = [3.0, 0.0]", "position = [0.5, 0.3]"), r"polygons\[1\]: the new body .* overlaps body 1"),
    ],
)
def test_bad_polygon_tables_are_explained(change, expected):
    old, new = change
    assert old in FLIGHT
    with pytest.raises(SceneError, match=expected):
        world_of(FLIGHT.replace(old, new, 1))


def test_polygons_need_the_step_engine():
    text = FLIGHT.replace("dt = 0.016666666666666666\n", "").replace("dim = 2", 'dim = 2\nengine = "event"')
    with pytest.raises(SceneError, match=r'polygons\[0\]: polygons need world.engine = "step"'):
        parse_scene(text, "scene.toml")


def test_to_scene_of_a_world_with_polygons_reads_back_to_the_bit(tmp_path):
    w = world_of(FLIGHT)
    w.add_polygon([(0.0, 0.0), (0.3, -0.1), (0.5, 0.4), (0.1, 0.6)], (-1.5, 2.0), angle=-2.2, mass=0.7,
                  inertia=0.013, static_friction=0.6, kinetic_friction=0.4, restitution=0.5,
                  drag_coefficient=1.1)  # fmt: skip
    w.add_wall((0.0, -10.0), (0.0, 1.0))
    w.set_pair_friction(4, -1, 0.3)
    w.run(until=0.2, dt=1 / 60)  # (in flight: the angles are whatever rotation made of them)
    path = tmp_path / "again.toml"
    w.to_scene(until=1.0, dt=1 / 60).save(path)
    again = Scene.load(path)
    same_world(w, again)
    assert again.time == w.time and again._pair_friction == w._pair_friction
    assert again.polygon_vertices(1).tobytes() == w.polygon_vertices(1).tobytes()


def interleaved_world():
    """Disks and polygons added in turn (ids: disk, polygon, disk, polygon, disk), named, one disk turned."""
    w = carom.World(dim=2, gravity=(0.0, -9.81))
    w.add_body((-3.0, 0.0), velocity=(1.0, 0.5), mass=1.0, radius=0.2, name="first")
    w.add_rectangle(1.0, 0.5, (-1.0, 0.0), angle=0.4, mass=2.0, angular_velocity=3.0, name="box")
    w.add_body((1.0, 0.0), mass=0.5, radius=0.3, angular_velocity=-2.0, static_friction=0.4, name="middle")
    w.add_polygon([(0.0, 0.0), (0.6, 0.1), (0.2, 0.5)], (3.0, 0.0), mass=0.3)
    w.add_body((5.0, 0.0), mass=2.0, radius=0.1, fixed=True)
    w.bodies.orientation[2, 0] = 1.25
    w.add_force(carom.Thrust(body=2, force=(0.0, 1.0)))
    w.set_pair_restitution(3, 2, 0.5)
    return w


def test_to_scene_keeps_the_ids_of_disks_added_after_polygons(tmp_path):
    """Every entry then carries its body's id; the scene file builds the same world to the bit (ids, names,
    forces and pair overrides on the right bodies), before and after a run."""
    w = interleaved_world()
    for run_to in (None, 0.3):
        if run_to is not None:
            w.run(until=run_to, dt=0.01)
        path = w.to_scene(until=w.time + 1.0, dt=0.01).save(tmp_path / "again.toml")
        scene = Scene.read(path)
        assert [t.id for t in scene.bodies] == [0, 2, 4] and [t.id for t in scene.polygons] == [1, 3]
        assert [where for where, _ in scene.listed()] == ["bodies[0]", "polygons[0]", "bodies[1]", "polygons[1]",
                                                          "bodies[2]"]  # fmt: skip
        again = Scene.load(path)
        same_world(w, again)
        assert again.names == w.names and again.shapes.tolist() == w.shapes.tolist()
        assert again.forces[0].body == 2 and again._pair_restitution == w._pair_restitution
        assert again.angles[2] == w.angles[2] != 0.0


def test_to_scene_writes_no_ids_when_the_disks_come_first():
    scene = world_of(FLIGHT).to_scene(until=1.0, dt=1 / 60)
    assert "id" not in scene.to_toml()


def test_scene_ids_order_the_bodies_and_names_follow_them():
    text = FLIGHT.replace('name = "ball"', 'name = "ball"\nid = 2').replace('name = "tri"', 'name = "tri"\nid = 0')
    text = text.replace('name = "plate"', 'name = "plate"\nid = 3').replace("fixed = true", "fixed = true\nid = 1")
    w = world_of(text + '[[forces]]\nkind = "thrust"\nbody = "ball"\nforce = [1.0, 0.0]\n')
    assert w.shapes.tolist() == ["polygon", "polygon", "disk", "polygon"]
    assert w.names == ("tri", "", "ball", "plate") and w.forces[0].body == 2
    assert w.radii[2] == 0.2 and w.angular_velocities[2] == 1.5 and w.fixed.tolist() == [False, True, False, False]


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ((2, None, 3, 1), r"polygons\[0\].id is missing: bodies\[0\].id is given, and then every \[\[bodies\]\] "
                          r"and \[\[polygons\]\] entry needs one \(ids 0 to 3, each once\)"),
        ((None, 0, None, None), r"bodies\[0\].id is missing: polygons\[0\].id is given"),
        ((2, 0, 4, 1), r"polygons\[1\].id = 4: the ids of the 4 \[\[bodies\]\] and \[\[polygons\]\] entries are 0 "
                       r"to 3, each once"),
        ((2, 0, 3, -1), r"polygons\[2\].id = -1: the ids of the 4"),
        ((2, 0, 2, 1), r"polygons\[1\].id = 2 is also bodies\[0\].id: each id is given once"),
        (("1", 0, 2, 3), r"bodies\[0\].id = '1': Expected `int`, got `str`"),
        ((1.0, 0, 2, 3), r"bodies\[0\].id = 1.0: Expected `int`, got `float`"),
    ],
)
def test_bad_scene_ids_are_explained(ids, expected):
    header, *entries = FLIGHT.split("\n[[")
    assert len(entries) == 4  # the ball, three polygons
    text = header
    for entry, i in zip(entries, ids, strict=True):
        text += "\n[[" + entry.rstrip("\n") + ("" if i is None else f"\nid = {i!r}".replace("'", '"')) + "\n"
    with pytest.raises(SceneError, match=expected):
        world_of(text)


# ----------------------------------------------------------------------------------------------- trajectory files
@pytest.fixture(scope="module")
def flight(tmp_path_factory):
    path = tmp_path_factory.mktemp("flight") / "flight.h5"
    runner.start(parse_scene(FLIGHT, "flight.toml"), FLIGHT, "flight.toml", path, progress=False)
    return path


def test_trajectory_holds_the_shapes_and_outlines(flight):
    traj, w = load(flight), world_of(FLIGHT)
    table = w.polygon_table()
    assert traj.shapes.tolist() == ["disk", "polygon", "polygon", "polygon"]
    assert traj.outline_start.tolist() == table.start.tolist()
    assert traj.outline_vertices.tobytes() == table.vertices.tobytes()
    assert len(traj.time) == 6 and np.all(traj.orientation[-1, 1:3] != traj.orientation[0, 1:3])


@pytest.mark.parametrize("at", [0.0, 0.3, 0.5])
def test_world_at_a_frame_has_its_polygons_to_the_bit(flight, at):
    traj = load(flight)
    k = int(np.argmin(np.abs(traj.time - at)))
    w = traj.world(at=at)
    same_world(w, _with_frame(world_of(FLIGHT), traj, k))
    for b in (1, 2, 3):
        assert traj.polygon_vertices(k, [b])[0].tobytes() == w.polygon_vertices(b).tobytes()  # (one formula)


def _with_frame(world, traj, k):
    """``world`` (built from the scene) with frame k's stored state put in by hand."""
    b = world.bodies
    b.position[: b.n], b.velocity[: b.n] = traj.position[k], traj.velocity[k]
    b.angular_velocity[: b.n, 0], b.orientation[: b.n, 0] = traj.angular_velocity[k], traj.orientation[k]
    return world


def test_polygon_vertices_of_a_disk_are_refused(flight):
    with pytest.raises(ValueError, match="body 0 is not a polygon"):
        load(flight).polygon_vertices(0, [0])


def test_files_from_before_polygons_read_as_disks(flight, tmp_path):
    old = tmp_path / "old.h5"
    old.write_bytes(flight.read_bytes())
    with h5py.File(old, "r+") as f:
        del f["bodies/shape"], f["polygons"]
    traj = load(old)
    assert traj.shapes.tolist() == ["disk"] * 4 and traj.outline_start.tolist() == [0] * 5
    assert traj.outline_vertices.shape == (0, 2)


def test_info_counts_the_polygons(flight):
    out = CliRunner().invoke(main, ["info", str(flight)]).output
    assert "bodies    4 (3 polygons, 1 fixed, 4 active at the end)" in out


def test_exports_of_a_run_with_polygons_hold_their_angles_spins_and_shapes(flight, tmp_path):
    """Each format, read back as its users read it (ASE, pandas, meshio), holds every frame's angles (rad),
    angular velocities (rad/s) and shapes to the bit."""
    traj = load(flight)
    frames, n = len(traj.time), len(traj.shapes)
    assert np.any(traj.orientation[-1] != 0) and np.any(traj.angular_velocity[-1] != 0)  # (they turn)
    atoms = ase.io.read(export(traj, tmp_path / "flight.xyz", "xyz"), index=":")
    assert np.array_equal([a.arrays["angle"] for a in atoms], traj.orientation)
    assert np.array_equal([a.arrays["omega"][:, 2] for a in atoms], traj.angular_velocity)
    assert all(a.arrays["shape"].tolist() == ["disk", "polygon", "polygon", "polygon"] for a in atoms)
    table = pd.read_csv(export(traj, tmp_path / "flight.csv", "csv"), keep_default_na=False)
    assert np.array_equal(table["angle"].to_numpy().reshape(frames, n), traj.orientation)
    assert np.array_equal(table["omega"].to_numpy().reshape(frames, n), traj.angular_velocity)
    assert table["shape"].tolist() == traj.shapes.tolist() * frames
    pvd = export(traj, tmp_path / "flight_vtk", "vtk")
    for k in range(frames):
        data = meshio.read(pvd.parent / f"frame_{k:06d}.vtu").point_data
        assert np.array_equal(data["angle"], traj.orientation[k])
        assert np.array_equal(data["angular_velocity"][:, 2], traj.angular_velocity[k])
        assert data["polygon"].tolist() == [0, 1, 1, 1]


# ----------------------------------------------------------------------------------------------- pictures
def test_a_frame_draws_each_polygon_where_the_world_has_it(flight):
    from carom.render.animation import _Picture

    traj = load(flight)
    drawn = _Picture(traj, trails=None, fps=None, color_by=None, size=480, max_frames=300)
    k = 4
    drawn.draw(k)
    w = traj.world(at=float(traj.time[k]))
    outlines = [path.vertices for path in drawn.outlines.get_paths()]
    assert len(outlines) == 2  # the moving polygons (the fixed one is drawn once, behind them)
    for b, outline in zip((1, 2), outlines, strict=True):
        corners = w.polygon_vertices(b)
        assert np.allclose(outline[: len(corners)], corners, rtol=0, atol=1e-14)
    static = [c for c in drawn.ax.collections if c is not drawn.outlines and hasattr(c, "set_verts")
              and len(c.get_paths()) == 1 and len(c.get_paths()[0].vertices) >= 4]  # fmt: skip
    assert any(np.allclose(c.get_paths()[0].vertices[:4], w.polygon_vertices(3), atol=1e-14) for c in static)
    assert len(drawn.bodies.get_offsets()) == 1  # the disk, as a circle
    assert np.allclose(drawn.bodies.get_offsets()[0], traj.position[k, 0])


# ----------------------------------------------------------------------------------------------- examples
@pytest.mark.parametrize("name", ["box_stairs", "box_stack", "box_pyramid", "hopper"])
def test_polygon_examples_run(name):
    """Half a second of each polygon example (the box slides off the top step at 0.08 s; the disk reaches the
    tower at 0.2 s), with a cap on the events of a step that ends a runaway contact in seconds."""
    scene = parse_scene(examples.path(name).read_text(), name, {"config": {"max_body_events": 20_000}})
    w = build_world(scene)
    assert w.has_polygons and scene.world.engine == "step"
    energy = w.total_energy()
    w.run(until=0.5, dt=scene.run.dt)
    assert np.all(np.isfinite(w.positions)) and np.any(w.angles != 0)
    assert w.total_energy() <= energy + 1e-9 * abs(energy)
