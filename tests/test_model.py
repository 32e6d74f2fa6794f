"""Bad input gets a clear ValueError naming the field and the value; good input round-trips."""

import math

import numpy as np
import pytest

import carom


@pytest.fixture
def world():
    return carom.World(dim=3, gravity=(0, 0, -9.81))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"position": (0, 0, math.nan), "mass": 1.0}, "position must be finite"),
        ({"position": (0, 0), "mass": 1.0}, "position must have 3"),
        ({"position": (0, 0, 0), "velocity": (math.inf, 0, 0), "mass": 1.0}, "velocity must be finite"),
        ({"position": (0, 0, 0), "mass": -1.0}, "mass must be > 0, got -1.0"),
        ({"position": (0, 0, 0), "mass": 0.0}, "mass must be > 0"),
        ({"position": (0, 0, 0)}, "mass is required"),
        ({"position": (0, 0, 0), "mass": 1.0, "radius": -0.1}, "radius must be > 0, got -0.1"),
        ({"position": (0, 0, 0), "mass": 1.0, "radius": math.nan}, "radius must be finite"),
        ({"position": (0, 0, 0), "mass": 1.0, "restitution": 1.5}, r"restitution must be in \[0, 1\], got 1.5"),
        ({"position": (0, 0, 0), "mass": 1.0, "restitution": -0.1}, "restitution must be in"),
        ({"position": (0, 0, 0), "mass": 1.0, "drag_coefficient": -1}, "drag_coefficient must be >= 0"),
    ],
)
def test_add_body_rejects(world, kwargs, message):
    with pytest.raises(ValueError, match=message):
        world.add_body(**kwargs)
    assert world.n_bodies == 0


def test_overlap_at_start_is_rejected_touching_is_not(world):
    world.add_body(position=(0, 0, 0), mass=1.0, radius=0.5)
    world.add_body(position=(1.0, 0, 0), mass=1.0, radius=0.5)  # touching
    with pytest.raises(ValueError, match="overlaps body 0"):
        world.add_body(position=(0, 0.9, 0), mass=1.0, radius=0.5)
    with pytest.raises(ValueError, match=r"new body \[1\].*overlaps new body \[0\]"):
        world.add_bodies([(5, 5, 5), (5, 5, 5.5)], masses=1.0, radii=0.5)
    assert world.n_bodies == 2  # all-or-nothing


def test_walls_and_boxes_are_validated(world):
    with pytest.raises(ValueError, match="wall normal must have non-zero length"):
        world.add_wall(point=(0, 0, 0), normal=(0, 0, 0))
    with pytest.raises(ValueError, match="wall restitution must be in"):
        world.add_wall(point=(0, 0, 0), normal=(0, 0, 1), restitution=2)
    world.add_wall(point=(0, 0, 0), normal=(0, 0, 2))
    np.testing.assert_allclose(world.walls.normal[0], (0, 0, 1))
    with pytest.raises(ValueError, match="overlaps wall 0"):
        world.add_body(position=(0, 0, 0.05), mass=1.0, radius=0.1)
    world.add_body(position=(0, 0, 0.5), mass=1.0, radius=0.1)
    with pytest.raises(ValueError, match="not inside the box"):
        world.add_box(lower=(-1, -1, 0.55), upper=(1, 1, 2))
    with pytest.raises(ValueError, match="lower must be below upper"):
        world.add_box(lower=(1, -1, 0), upper=(-1, 1, 2))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dim": 4}, "dim must be 2 or 3"),
        ({"gravity": (0, 0)}, "gravity must have 3"),
        ({"restitution_rule": "median"}, "restitution_rule must be one of"),
        ({"impact_mode": "stick"}, "impact_mode must be one of"),
        ({"integrator": "rk45"}, "integrator must be one of"),
    ],
)
def test_world_options_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        carom.World(**kwargs)


def test_step_and_run_validate_dt(world):
    for bad in (0.0, -1e-3, math.nan):
        with pytest.raises(ValueError, match="dt must be"):
            world.step(bad)
    with pytest.raises(ValueError, match="until must be"):
        world.run(until=-1.0, dt=0.1)


def test_forces_are_validated(world):
    with pytest.raises(ValueError, match="softening must be >= 0"):
        carom.NBodyGravity(softening=-1)
    with pytest.raises(ValueError, match="scale_height must be > 0"):
        carom.Atmosphere(body=0, scale_height=0)
    with pytest.raises(ValueError, match="Atmosphere body must be a body id"):
        world.add_force(carom.Atmosphere(body=3))
    world.add_body(position=(0, 0, 1), mass=1.0)
    with pytest.raises(ValueError, match="Thrust force must have 3"):
        world.add_force(carom.Thrust(body=0, force=(1, 0)))
    with pytest.raises(ValueError, match="carom force"):
        world.add_force(lambda w, t: 0)


def test_config_is_validated():
    with pytest.raises(ValueError, match=r"Config\.resting_speed"):
        carom.Config(resting_speed=-1)
    with pytest.raises(ValueError, match=r"Config\.max_speed_ratio must be >= 1, got 0\.5"):
        carom.Config(max_speed_ratio=0.5)
    assert carom.Config().replace(resting_speed=0.0).resting_speed == 0.0


def test_pair_restitution_validated(world):
    world.add_body(position=(0, 0, 1), mass=1.0, radius=0.1)
    world.add_body(position=(0, 0, 2), mass=1.0, radius=0.1)
    with pytest.raises(ValueError, match="pair restitution must be in"):
        world.set_pair_restitution(0, 1, 1.1)
    with pytest.raises(ValueError, match="j must be another body id"):
        world.set_pair_restitution(0, 0, 0.5)
    with pytest.raises(ValueError, match="names wall 0, but there are 0 walls"):
        world.set_pair_restitution(0, -1, 0.5)


def test_fixed_body_mass_optional_and_views(world):
    i = world.add_body(position=(0, 0, 0), radius=1.0, fixed=True)
    j = world.add_body(position=(0, 0, 3), velocity=(1, 0, 0), mass=2.0, radius=0.5)
    assert (i, j) == (0, 1)
    assert math.isinf(world.masses[i]) and world.fixed[i] and world.active.all()
    assert world.kinetic_energy() == pytest.approx(1.0)
    np.testing.assert_allclose(world.momentum(), (2, 0, 0))
    assert world.positions.shape == (2, 3) and world.radii.shape == (2,)
