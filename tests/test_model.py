"""Bad input gets a clear ValueError naming the field and the value; good input round-trips."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

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


# ------------------------------------------------------------------ contracts: non-finite input is named


def _world3():
    w = carom.World(dim=3)
    w.add_body(position=(0, 0, 0), mass=1.0, radius=0.5)
    return w


INF, NAN = math.inf, math.nan

# (call, field, value): the ValueError must name the field and show the offending value as Python prints it
BAD_INPUT = [
    (lambda w: w.add_body(position=(5, 0, INF), mass=1.0), "position", "inf"),
    (lambda w: w.add_body(position=(5, 0, 0), velocity=(0, -INF, 0), mass=1.0), "velocity", "-inf"),
    (lambda w: w.add_body(position=(5, 0, 0), mass=NAN), "mass", "nan"),
    (lambda w: w.add_body(position=(5, 0, 0), mass=1.0, radius=INF), "radius", "inf"),
    (lambda w: w.add_body(position=(5, 0, 0), mass=1.0, restitution=INF), "restitution", "inf"),
    (lambda w: w.add_body(position=(5, 0, 0), mass=1.0, restitution=NAN), "restitution", "nan"),
    (lambda w: w.add_body(position=(5, 0, 0), mass=1.0, drag_coefficient=INF), "drag_coefficient", "inf"),
    (lambda w: w.add_bodies([(5, 0, 0), (INF, 0, 0)], masses=1.0, radii=0.5), r"position\[1\]", "inf"),
    (lambda w: w.add_bodies([(5, 0, 0), (7, 0, 0)], [(0, 0, 0), (NAN, 0, 0)], masses=1.0), r"velocity\[1\]", "nan"),
    (lambda w: w.add_bodies([(5, 0, 0), (7, 0, 0)], masses=[1.0, NAN]), r"mass\[1\]", "nan"),
    (lambda w: w.add_bodies([(5, 0, 0), (7, 0, 0)], masses=1.0, radii=[0.5, INF]), r"radius\[1\]", "inf"),
    (lambda w: w.add_bodies([(5, 0, 0), (7, 0, 0)], masses=1.0, restitution=[NAN, 0.5]), r"restitution\[0\]", "nan"),
    (lambda w: w.add_wall(point=(0, 0, -INF), normal=(0, 0, 1)), "wall point", "-inf"),
    (lambda w: w.add_wall(point=(0, 0, -1), normal=(0, NAN, 1)), "wall normal", "nan"),
    (lambda w: w.add_wall(point=(0, 0, -1), normal=(0, 0, 1), restitution=INF), "wall restitution", "inf"),
    (lambda w: w.add_wall(point=(0, 0, -1), normal=(0, 0, 1), restitution=NAN), "wall restitution", "nan"),
    (lambda w: w.add_box(lower=(-INF, -1, -1), upper=(1, 1, 1)), "box lower", "-inf"),
    (lambda w: w.add_box(lower=(-1, -1, -1), upper=(1, NAN, 1)), "box upper", "nan"),
    (lambda w: w.add_box(lower=(-1, -1, -1), upper=(1, 1, 1), restitution=NAN), "box restitution", "nan"),
    (lambda w: w.set_pair_restitution(0, 0, NAN), "pair restitution", "nan"),
    (lambda w: w.step(INF), "dt", "inf"),
    (lambda w: w.step(NAN), "dt", "nan"),
    (lambda w: w.run(until=1.0, dt=INF), "dt", "inf"),
    (lambda w: w.run(until=NAN, dt=0.1), "until", "nan"),
    (lambda w: w.run(until=INF, dt=0.1), "until", "inf"),
    (lambda w: carom.Config(resting_speed=INF), r"Config\.resting_speed", "inf"),
    (lambda w: carom.Config(contact_tolerance=NAN), r"Config\.contact_tolerance", "nan"),
    (lambda w: carom.Config(max_rounds=INF), r"Config\.max_rounds", "inf"),
    (lambda w: carom.World(dim=3, gravity=(0, 0, -INF)), "gravity", "-inf"),
    (lambda w: carom.NBodyGravity(softening=INF), "softening", "inf"),
    (lambda w: carom.EventWorld(dim=3, tc=INF), "tc", "inf"),
    (lambda w: carom.EventWorld(dim=3).run(until=NAN), "until", "nan"),
    (lambda w: carom.EventWorld(dim=3).run(until=INF), "until", "inf"),
]


@pytest.mark.parametrize(("call", "field", "value"), BAD_INPUT)
def test_non_finite_input_is_rejected_naming_the_field_and_the_value(call, field, value):
    w = _world3()
    # the field, then (after "must be ...") the value itself, not a longer number that contains it
    with pytest.raises(ValueError, match=rf"{field}(?!\w).*(?<![\w.]){value}\b"):
        call(w)
    assert w.n_bodies == 1 and w.walls.n == 0 and w.time == 0.0  # nothing was added or moved


def test_infinite_mass_of_a_free_body_is_rejected_naming_the_value():
    w = _world3()
    with pytest.raises(ValueError, match=r"mass\b.*(?<![\w.])inf\b"):
        w.add_body(position=(5, 0, 0), mass=INF)
    assert w.n_bodies == 1


def test_infinite_mass_of_a_free_body_is_rejected():
    w = _world3()
    with pytest.raises(ValueError, match="mass must be finite for a body that is not fixed"):
        w.add_body(position=(5, 0, 0), mass=INF)
    assert w.n_bodies == 1


def test_a_fixed_body_accepts_mass_zero_and_attracts_nothing():
    w = carom.World(dim=3)
    gravity = w.add_force(carom.NBodyGravity(G=1.0))
    i = w.add_body(position=(0, 0, 0), radius=1.0, fixed=True, mass=0.0)
    j = w.add_body(position=(3, 0, 0), mass=1.0, radius=0.5)
    assert w.masses[i] == 0.0 and w.fixed[i]
    acc = np.zeros((2, 3))
    gravity.accelerate(w, 0.0, acc)
    np.testing.assert_array_equal(acc, 0.0)  # the free body is the only other one: nothing attracts it
    assert w.potential_energy() == 0.0
    w.run(until=1.0, dt=0.1)
    np.testing.assert_array_equal(w.positions[j], (3, 0, 0))


@given(st.integers(0, 2**31 - 1), st.integers(-(2**31), 2**31 - 1))
def test_pair_keys_read_back_to_their_pair(i, j):
    """One pair-key scheme (`carom.materials`) for overrides, saved states and the polygons' held forces: a key
    names its pair whichever body comes first, a wall's key names the body and the wall, and every key reads
    back (`key_pairs`) as (lower id, higher id) or (body, -1 - wall)."""
    from carom.materials import key_pairs, pair_key, pair_keys

    keys = pair_keys(np.array([i, j]), np.array([j, i])) if j >= 0 else pair_keys(np.array([i]), np.array([j]))
    assert keys[0] == pair_key(i, j)
    if j >= 0:
        assert keys[0] == keys[1]  # (either order)
        assert [list(v) for v in key_pairs(keys)] == [[min(i, j)] * 2, [max(i, j)] * 2]
    else:
        assert keys[0] < 0 and [list(v) for v in key_pairs(keys)] == [[i], [j]]
