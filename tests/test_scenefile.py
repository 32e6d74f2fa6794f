"""Scene files: parsing, error messages, generators and the shipped examples."""

import math
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
          scenefile.AtmosphereForce, scenefile.ThrustForce, scenefile.OutputTable]  # fmt: skip


@pytest.mark.parametrize("table", TABLES)
def test_docs_describe_every_key(table):
    doc = (Path(__file__).parents[1] / "docs" / "scenes.md").read_text()
    for key in table.__struct_fields__:
        assert f"`{key}`" in doc, f"docs/scenes.md does not describe {table.__name__}.{key}"
