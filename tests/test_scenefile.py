"""Scene files: parsing, error messages, generators and the shipped examples."""

import math
import re
from pathlib import Path

import numpy as np
import pytest

import carom
from carom import examples, scenefile
from carom.scenefile import SceneError, build_world, parse_scene, read_scene

HEADER = """
[world]
dim = 2
[run]
until = 1.0
dt = 0.01
"""
BALL = "[[bodies]]\nposition = [0.0, 0.0]\nmass = 1.0\nradius = 0.1\n"


def world_of(text: str, header: str = HEADER):
    return build_world(parse_scene(header + text, "scene.toml"), "scene.toml")


@pytest.mark.parametrize("name", examples.names())
def test_every_example_builds_and_says_what_it_shows(name):
    text = examples.path(name).read_text()
    assert text.startswith("# ") and examples.summary(name)
    scene, _ = read_scene(examples.path(name))
    if scene.world.engine == "event" and not hasattr(carom, "EventWorld"):
        pytest.skip("carom.EventWorld is not exported yet")
    assert build_world(scene).n_bodies >= 2


def test_examples_cover_the_gallery_of_the_brief():
    expected = {"restitution", "billiard_break", "heavy_target", "earth_moon_satellite", "earth_drop",
                "gas_box", "newtons_cradle"}  # fmt: skip
    assert expected <= set(examples.names())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[bodies]]\nmass = 1.0\n", ["scene.toml: bodies[0]", "missing required field `position`"]),
        (BALL.replace("1.0\nradius", '"heavy"\nradius'), ["bodies[0].mass = 'heavy'", "float", "str"]),
        (BALL.replace("mass = 1.0", "mass = -2.0"), ["bodies[0]", "mass must be > 0, got -2.0"]),
        (BALL + BALL.replace("0.0, 0.0", "0.15, 0.0"), ["bodies[1]", "overlaps body 0"]),
        (BALL.replace("mass", "mas"), ["bodies[0]", "unknown key 'mas'", "did you mean 'mass'?"]),
        (BALL.replace("[0.0, 0.0]", "[0.0, 0.0, 0.0]"), ["bodies[0]", "position must have 2 components"]),
        ('[[generate]]\nkind = "latice"\n', ["generate[0].kind", "'latice'", "did you mean 'lattice'?"]),
        (BALL + '[output]\ncolor_by = "sped"\n', ["output.color_by", "'sped'", "allowed: 'mass', 'speed'"]),
        (BALL + "[config]\nresting_sped = 1.0\n", ["config", "did you mean 'resting_speed'?"]),
        (BALL + '[[forces]]\nkind = "thrust"\nbody = "bal"\nforce = [1.0, 0.0]\n', ["no body has that name"]),
        ("[[bodies\n", ["scene.toml: not valid TOML", "line"]),
        ("", ["the scene has no bodies"]),
        (BALL.replace("mass", 'name = "a"\nmass') * 2, ["the name 'a' is given to more than one body"]),
    ],
)
def test_bad_scenes_are_explained(text, expected):
    with pytest.raises(SceneError) as err:
        world_of(text)
    for part in expected:
        assert part in str(err.value)


def test_step_engine_needs_dt_and_event_engine_refuses_it():
    with pytest.raises(SceneError, match=r"run\.dt is required"):
        parse_scene("[world]\ndim = 2\n[run]\nuntil = 1.0\n" + BALL)
    with pytest.raises(SceneError, match="does not apply"):
        parse_scene('[world]\ndim = 2\nengine = "event"\n[run]\nuntil = 1.0\ndt = 0.1\n' + BALL)


def test_overrides_replace_file_values_and_keep_the_frame_grid():
    scene = parse_scene(HEADER + BALL, overrides={"run": {"until": 5.0}, "world": {"seed": 9}})
    assert (scene.run.until, scene.world.seed) == (5.0, 9)
    assert scene.run.output_interval == 1.0 / 200  # from the file's until, so runs of any length match
    with pytest.raises(SceneError, match=r"run\.until"):
        parse_scene(HEADER + BALL, overrides={"run": {"until": -1.0}})


def test_bodies_get_api_defaults_and_names_resolve():
    thrust = '[[forces]]\nkind = "thrust"\nbody = "earth"\nforce = [2.0, 0.0]\n'
    w = world_of(BALL.replace("mass", 'name = "earth"\nmass') + thrust)
    assert w.restitutions[0] == 1.0 and w.forces[0].body == 0
    w.run(until=1.0, dt=0.01)
    assert w.velocities[0, 0] == pytest.approx(2.0, rel=1e-12)  # F t / m


def test_lattice_is_a_grid():
    w = world_of('[[generate]]\nkind = "lattice"\norigin = [1.0, 2.0]\ncounts = [3, 2]\nspacing = 0.5\n'
                 "radius = 0.25\nmass = 2.0\n")  # fmt: skip
    assert sorted(map(tuple, w.positions)) == [(1 + 0.5 * i, 2 + 0.5 * j) for i in range(3) for j in range(2)]
    assert np.all(w.masses == 2.0) and np.all(w.velocities == 0)


GAS = """[[generate]]
kind = "gas"
count = 60
lower = [0.0, 0.0]
upper = [4.0, 3.0]
radius = [0.05, 0.2]
mass = [1.0, 3.0]
"""


def test_gas_is_inside_its_region_without_overlaps_and_seeded():
    w = world_of(GAS + "speed = 2.0\n")
    x, r = w.positions, w.radii
    assert np.all(x - r[:, None] >= 0) and np.all(x + r[:, None] <= [4.0, 3.0])
    gaps = np.linalg.norm(x[:, None] - x[None], axis=2) - (r[:, None] + r[None])
    assert np.all(gaps[~np.eye(len(r), dtype=bool)] >= 0)
    assert 0.05 <= r.min() and r.max() <= 0.2 and 1.0 <= w.masses.min() and w.masses.max() <= 3.0
    assert np.allclose(np.linalg.norm(w.velocities, axis=1), 2.0, rtol=1e-12)
    assert np.array_equal(world_of(GAS + "speed = 2.0\n").positions, x)
    other = world_of(GAS, HEADER.replace("dim = 2", "dim = 2\nseed = 1"))
    assert not np.array_equal(other.positions, x)


def test_gas_that_does_not_fit_is_rejected():
    with pytest.raises(SceneError, match=r"generate\[0\] \(gas\): placed only"):
        world_of(GAS.replace("count = 60", "count = 400").replace("[0.05, 0.2]", "0.2"))


def test_temperature_gives_maxwell_velocities_at_zero_momentum():
    # kT = 0.5 J: <m v_x^2> = kT; 2 x 2500 samples give a relative standard error sqrt(2 / 5000) = 2%.
    w = world_of('[[generate]]\nkind = "lattice"\norigin = [0.0, 0.0]\ncounts = [50, 50]\nspacing = 1.0\n'
                 "radius = 0.4\nmass = 2.0\ntemperature = 0.5\n")  # fmt: skip
    assert np.allclose(w.momentum(), 0.0, atol=1e-12)
    assert np.mean(w.masses[:, None] * w.velocities**2) == pytest.approx(0.5, rel=0.1)


def test_rack_is_a_touching_triangle_with_its_apex_in_place():
    r = 0.028575
    w = world_of(f'[[generate]]\nkind = "rack"\napex = [1.0, 0.5]\nradius = {r}\nmass = 0.17\n')
    x = w.positions
    assert len(x) == 15 and np.array_equal(x[0], [1.0, 0.5])
    d = np.linalg.norm(x[:, None] - x[None], axis=2)[np.triu_indices(15, 1)]
    assert d.min() == pytest.approx(2 * r, rel=1e-12)
    assert np.sum(np.isclose(d, 2 * r, rtol=1e-9)) == 30  # touching neighbours in a 5-row triangle
    assert x[:, 0].max() == pytest.approx(1.0 + 4 * 2 * r * math.sqrt(3) / 2, rel=1e-12)


def test_ring_orbits_at_the_circular_speed():
    w = world_of('[[bodies]]\nname = "sun"\nposition = [1.0, 1.0]\nvelocity = [0.0, 3.0]\nmass = 1e20\n'
                 'radius = 1.0\n[[forces]]\nkind = "gravity"\n[[generate]]\nkind = "ring"\naround = "sun"\n'
                 "count = 4\ndistance = 100.0\nradius = 1.0\nmass = 5.0\nphase = 30.0\n")  # fmt: skip
    rel_x, rel_v = w.positions[1:] - w.positions[0], w.velocities[1:] - w.velocities[0]
    assert np.allclose(np.linalg.norm(rel_x, axis=1), 100.0, rtol=1e-12)
    assert np.allclose(np.linalg.norm(rel_v, axis=1), math.sqrt(carom.G * (1e20 + 5.0) / 100.0), rtol=1e-12)
    assert np.allclose(np.sum(rel_x * rel_v, axis=1), 0.0, atol=1e-9)
    assert math.degrees(math.atan2(rel_x[0, 1], rel_x[0, 0])) == pytest.approx(30.0)


TABLES = [scenefile.WorldTable, scenefile.RunTable, scenefile.BodyTable, scenefile.Lattice, scenefile.Gas,
          scenefile.Rack, scenefile.Ring, scenefile.WallTable, scenefile.BoxTable, scenefile.GravityForce,
          scenefile.AtmosphereForce, scenefile.ThrustForce, scenefile.OutputTable, scenefile.PolygonTable]  # fmt: skip


@pytest.mark.parametrize("table", TABLES)
def test_docs_describe_every_key(table):
    doc = (Path(__file__).parents[1] / "docs" / "scenes.md").read_text()
    for key in table.__struct_fields__:
        assert f"`{key}`" in doc, f"docs/scenes.md does not describe {table.__name__}.{key}"


# ----------------------------------------------------------------------------------------------- friction and spin
FRICTION_3D = """
[world]
dim = 3
gravity = [0.0, 0.0, -9.81]
[run]
until = 0.1
dt = 0.01
[[bodies]]
position = [0.0, 0.0, 0.1]
velocity = [1.0, 0.0, 0.0]
mass = 1.0
radius = 0.1
static_friction = 0.3
kinetic_friction = 0.2
rolling_resistance = 0.01
spinning_friction = 0.3
angular_velocity = [0.0, 10.0, 0.0]
inertia = 0.005
[[bodies]]
position = [1.0, 0.0, 0.1]
mass = 1.0
radius = 0.1
[[generate]]
kind = "lattice"
origin = [0.0, 1.0, 0.1]
counts = [2, 1, 1]
spacing = 0.5
radius = 0.1
mass = 2.0
static_friction = 0.5
rolling_resistance = 0.02
spinning_friction = 0.4
angular_velocity = [1.0, 2.0, 3.0]
inertia = 0.01
[[walls]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
static_friction = 0.4
kinetic_friction = 0.3
[[boxes]]
lower = [-1.0, -1.0, -1.0]
upper = [3.0, 3.0, 3.0]
static_friction = 0.1
"""


def test_friction_and_spin_reach_the_world():
    w = build_world(parse_scene(FRICTION_3D))
    b = w.bodies
    assert np.array_equal(b.static_friction[:4], [0.3, 0.0, 0.5, 0.5])
    assert np.array_equal(b.kinetic_friction[:4], [0.2, 0.0, 0.5, 0.5])  # kinetic defaults to static
    assert np.array_equal(b.rolling_resistance[:4], [0.01, 0.0, 0.02, 0.02])
    assert np.array_equal(b.spinning_friction[:4], [0.3, 0.0, 0.4, 0.4])
    assert np.array_equal(w.angular_velocities, [[0, 10, 0], [0, 0, 0], [1, 2, 3], [1, 2, 3]])
    assert np.allclose(w.inertias, [0.005, 0.4 * 1.0 * 0.1**2, 0.01, 0.01], rtol=1e-12)
    assert np.array_equal(w.orientations, np.tile([1.0, 0, 0, 0], (4, 1)))
    assert np.array_equal(w.walls.static_friction, [0.4] + [0.1] * 6)
    assert np.array_equal(w.walls.kinetic_friction, [0.3] + [0.1] * 6)
    w.run(until=0.05, dt=0.01)
    assert not np.array_equal(w.orientations[0], [1.0, 0, 0, 0])  # it turns


def test_friction_rule_reaches_the_world():
    w = build_world(parse_scene(FRICTION_3D.replace("dim = 3", 'dim = 3\nfriction_rule = "max"')))
    assert w.friction_rule == "max"
    assert build_world(parse_scene(FRICTION_3D)).friction_rule == "geometric"  # the API's default


def test_spin_of_2d_bodies_and_groups_is_a_number():
    w = world_of(BALL.replace("mass", "angular_velocity = -3\nmass")
                 + '[[generate]]\nkind = "rack"\napex = [1.0, 0.0]\nrows = 2\nradius = 0.1\nmass = 1.0\n'
                 "angular_velocity = 2.5\nkinetic_friction = 0.0\nstatic_friction = 0.1\n")  # fmt: skip
    assert np.array_equal(w.angular_velocities, [-3.0, 2.5, 2.5, 2.5])
    assert np.array_equal(w.bodies.kinetic_friction[:4], [0.0, 0.0, 0.0, 0.0])
    assert np.array_equal(w.bodies.static_friction[:4], [0.0, 0.1, 0.1, 0.1])


GAS_2D = '[[generate]]\nkind = "gas"\ncount = 3\nlower = [0.0, 0.0]\nupper = [2.0, 2.0]\nradius = 0.1\nmass = 1.0\n'
WALL_2D = "[[walls]]\npoint = [0.0, -1.0]\nnormal = [0.0, 1.0]\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BALL + "static_friction = -0.1\n", ["bodies[0]", "static_friction must be >= 0, got -0.1"]),
        (BALL + "static_friction = 0.2\nkinetic_friction = 0.3\n",
         ["bodies[0]", "kinetic_friction must be <= static_friction (0.2), got 0.3"]),
        (BALL + "kinetic_friction = -1.0\n", ["bodies[0]", "kinetic_friction must be >= 0"]),
        (BALL + "rolling_resistance = -0.01\n", ["bodies[0]", "rolling_resistance must be >= 0"]),
        (BALL + "inertia = 0.0\n", ["bodies[0]", "inertia must be > 0"]),
        (BALL + "angular_velocity = [0.0, 0.0, 1.0]\n", ["bodies[0]", "angular_velocity must be a number (dim=2)"]),
        (BALL + 'angular_velocity = "fast"\n', ["bodies[0].angular_velocity = 'fast'"]),
        (BALL + "static_fricton = 0.1\n", ["bodies[0]", "unknown key 'static_fricton'",
                                            "did you mean 'static_friction'"]),
        (GAS_2D + "static_friction = -0.5\n", ["generate[0] (gas)", "static_friction[0] must be >= 0"]),
        (GAS_2D + "static_friction = 0.1\nkinetic_friction = 0.5\n", ["generate[0] (gas)", "kinetic_friction[0]"]),
        (GAS_2D + "angular_velocity = [1.0, 2.0]\n", ["generate[0] (gas)", "angular_velocity must be a number"]),
        (GAS_2D + "rolling_friction = 0.1\n", ["generate[0]", "unknown key 'rolling_friction'"]),
        (BALL + WALL_2D + "static_friction = -0.2\n", ["walls[0]", "wall static_friction must be >= 0, got -0.2"]),
        (BALL + WALL_2D + "static_friction = 0.1\nkinetic_friction = 0.2\n",
         ["walls[0]", "wall kinetic_friction must be <= static_friction"]),
        (BALL + WALL_2D + "rolling_resistance = 0.1\n", ["walls[0]", "unknown key 'rolling_resistance'"]),
        (BALL + "[[boxes]]\nlower = [-1.0, -1.0]\nupper = [1.0, 1.0]\nkinetic_friction = 0.4\n",
         ["boxes[0]", "box kinetic_friction must be <= static_friction (0.0), got 0.4"]),
        (BALL + '[world]\nfriction_rule = "harmonic"\n', ["world.friction_rule", "'harmonic' is not allowed",
                                                           "'geometric'"]),
    ],
)  # fmt: skip
def test_bad_friction_and_spin_are_explained(text, expected):
    if "[world]" in text:  # a second [world] table is not TOML: put the key into the header's
        body, extra = text.split("[world]\n")
        text, header = body, HEADER.replace("dim = 2", "dim = 2\n" + extra)
    else:
        header = HEADER
    with pytest.raises(SceneError) as err:
        world_of(text, header)
    assert isinstance(err.value, ValueError)
    for part in expected:
        assert part in str(err.value)


def test_bad_spin_of_3d_bodies_and_groups_is_explained():
    for text in (FRICTION_3D.replace("[0.0, 10.0, 0.0]", "10.0"), FRICTION_3D.replace("[1.0, 2.0, 3.0]", "2.0"),
                 FRICTION_3D.replace("[1.0, 2.0, 3.0]", "[1.0, 2.0]")):  # fmt: skip
        with pytest.raises(SceneError, match=r"angular_velocity must (be a 3-vector|have 3 components)"):
            build_world(parse_scene(text))


EVENT = '[world]\ndim = 2\nengine = "event"\n[run]\nuntil = 1.0\n'


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (BALL + "static_friction = 0.1\n", "bodies[0].static_friction"),
        (BALL + "angular_velocity = 1.0\n", "bodies[0].angular_velocity"),
        (GAS_2D + "rolling_resistance = 0.1\n", "generate[0].rolling_resistance"),
        (BALL + WALL_2D + "static_friction = 0.1\n", "walls[0].static_friction"),
    ],
)
def test_event_engine_refuses_friction_and_spin(text, where):
    with pytest.raises(SceneError, match=rf'{re.escape(where)} needs world.engine = "step"'):
        parse_scene(EVENT + text)
    with pytest.raises(SceneError, match=r'world.friction_rule needs world.engine = "step"'):
        parse_scene(EVENT.replace("dim = 2", 'dim = 2\nfriction_rule = "min"') + BALL)


NEW_EXAMPLES = ("billiard_follow", "ramp_roll", "frictional_heap")


@pytest.mark.parametrize("name", NEW_EXAMPLES)
def test_friction_examples_run(name):
    """Each friction example, for 0.2 s: past the first impacts (the cue balls' at 0.18 s, the heap's landing
    at 0.14 s)."""
    scene, _ = read_scene(examples.path(name))
    w = build_world(scene)
    assert w.has_friction() and scene.world.engine == "step"
    energy = w.total_energy()
    w.run(until=0.2, dt=scene.run.dt)
    assert np.all(np.isfinite(w.positions)) and np.all(np.isfinite(w.angular_velocities))
    assert w.total_energy() <= energy + 1e-3 * abs(energy)
    assert np.any(w.angular_velocities != 0)
