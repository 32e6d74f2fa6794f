"""Recording never changes the motion: frames at any interval, runs split on the step grid, `carom run` and
`carom.record` all end on the bits of one plain `run` (docs/python.md)."""

import numpy as np
import pytest
from click.testing import CliRunner

import carom
from carom import examples
from carom.cli import main

STEPS = 24  # steps of each example's own dt: enough to hit, roll, rest and turn, a few seconds in all
EVENT_SPAN = 0.25  # s of the event-driven example (hundreds of impacts; a multiple of its frame interval)


def assert_same_bits(world, other) -> None:
    for name in ("positions", "velocities", "angular_velocities", "orientations"):
        assert np.array_equal(getattr(world, name), getattr(other, name)), name
    assert world.collision_count == other.collision_count


def assert_frame_is(trajectory, k: int, world) -> None:
    for name in ("position", "velocity", "angular_velocity", "orientation"):
        assert np.array_equal(getattr(trajectory, name)[k], getattr(world, f"{name}s".replace("ys", "ies"))), name
    assert trajectory.collision_count[k] == world.collision_count


def _recorded(path, tmp_path, every, dt, until) -> tuple[carom.Trajectory, carom.World]:
    world = carom.Scene.load(path)
    with carom.record(world, tmp_path / f"every-{every!r}.h5", every=every, dt=dt) as rec:
        rec.run(until=until)
    return carom.load(tmp_path / f"every-{every!r}.h5"), world


@pytest.mark.parametrize("name", examples.names())
def test_frames_pieces_and_the_cli_leave_every_example_run_unchanged(name, tmp_path):
    path = examples.path(name)
    scene = carom.Scene.read(path)
    dt = scene.run.dt  # (None: the event engine)
    until = STEPS * dt if dt else EVENT_SPAN
    plain = carom.Scene.load(path)
    plain.run(until=until, dt=dt)
    # a run in eight pieces, each ending within round-off of a multiple of dt (for the event engine, anywhere;
    # for IAS15, whose steps are its own, each but the last ending at its last whole step: `run(exact=False)`)
    pieces = carom.Scene.load(path)
    adaptive = getattr(pieces, "integrator", None) == "ias15"
    for j in range(1, 9):
        if adaptive:
            pieces.run(until=until * j / 8, exact=j == 8)
        else:
            pieces.run(until=until * j / 8, dt=dt)
    assert_same_bits(pieces, plain)
    # recorded at the scene's interval, and at one that puts every other frame between two steps
    for every in (scene.run.output_interval, 2.5 * dt if dt else until / 7):
        trajectory, recorded = _recorded(path, tmp_path, every, dt, until)
        assert_same_bits(recorded, plain)
        assert_frame_is(trajectory, -1, plain)
    fresh = carom.Scene.load(path)  # a frame between two steps holds the bits of a plain run to its time
    fresh.run(until=trajectory.time[1], dt=dt)
    assert_frame_is(trajectory, 1, fresh)
    assert fresh.time == trajectory.time[1] == every
    # the command line
    out = tmp_path / "cli.h5"
    result = CliRunner().invoke(main, ["run", "--example", name, "--until", repr(until), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert_frame_is(carom.load(out), -1, plain)


def _pushed(integrator="leapfrog", seen=None) -> carom.World:
    """A disk pushed by a force that changes with time (each time it is evaluated at goes into ``seen``)."""

    def force(world, t):
        if seen is not None:
            seen.append(t)
        return (np.sin(7.0 * t), np.cos(3.0 * t))

    w = carom.World(dim=2, integrator=integrator)
    w.add_body(position=(0, 0), velocity=(1, 0), mass=1.0, radius=0.1)
    w.add_force(carom.Thrust(body=0, force=force))
    return w


def test_step_boundaries_are_k_dt_from_the_count_and_an_off_grid_stop_splits_one_step():
    seen = []
    w = _pushed(seen=seen)
    w.run(until=1.0, dt=0.1)  # leapfrog evaluates the forces at the start, then at the end of every step
    assert seen == [k * 0.1 for k in range(11)] and w.step_count == 10  # (summed, 0.1 ten times is 1 - 1e-16)
    assert w.time == 1.0 and w.step_grid == (0.0, 0.1, 10)
    seen.clear()
    w.run(until=1.25, dt=0.1)  # off the grid: the last step is shortened to end at 1.25 ...
    w.run(until=1.6, dt=0.1)  # ... and the next run goes on to the boundary 13 dt, back on the grid
    assert seen == [11 * 0.1, 12 * 0.1, 1.25, 13 * 0.1, 14 * 0.1, 15 * 0.1, 16 * 0.1]
    assert w.step_count == 17 and w.step_grid == (0.0, 0.1, 16) and w.time == 1.6
    w.run(until=1.95, dt=0.1, exact=False)  # no shortened step: it stops at the last boundary before 1.95
    assert w.time == 19 * 0.1 and w.step_count == 20


def test_steps_one_at_a_time_are_the_run_to_the_same_time():
    path = examples.path("box_stack")
    dt = carom.Scene.read(path).run.dt
    stepped, run = carom.Scene.load(path), carom.Scene.load(path)
    for _ in range(15):
        stepped.step(dt)
    run.run(until=15 * dt, dt=dt)
    assert_same_bits(stepped, run)
    assert stepped.step_grid == run.step_grid == (0.0, dt, 15)


def test_state_holds_the_grid_and_taking_it_changes_nothing():
    """Euler with a force that changes with time: the force at the start of a step is evaluated when the
    step starts, at the grid's boundary (0.9 is 3 * 0.3 = 0.8999999999999999 there), whether or not a state
    was taken first; a state taken between two steps goes on to the next boundary."""
    plain, taken = _pushed("euler"), _pushed("euler")
    for w in (plain, taken):
        w.run(until=0.9, dt=0.3)
    taken.get_state()
    for w in (plain, taken):
        w.run(until=1.7, dt=0.3)  # between two steps
    restored = _pushed("euler")
    restored.set_state(taken.get_state())
    for w in (plain, taken, restored):
        w.run(until=2.4, dt=0.3)
        assert_same_bits(w, plain)
        assert w.step_grid == (0.0, 0.3, 8) and w.step_count == 9


def _bouncing() -> carom.World:
    w = carom.World(dim=2, gravity=(0, -9.81))
    w.add_box((-1, 0), (1, 2), restitution=0.8)
    w.add_body(position=(0, 1), velocity=(0.7, 0), mass=1.0, radius=0.1, restitution=0.9, name="ball")
    w.add_body(position=(0.5, 1.5), mass=2.0, radius=0.15, name="big")
    return w


def test_a_recording_stopped_between_two_steps_goes_on_as_one_run(tmp_path):
    """Frames every 0.05 s, steps of 0.03 s: 0.5 s is a frame but not a step boundary."""
    every, dt = 0.05, 0.03
    with carom.record(_bouncing(), tmp_path / "one.h5", every=every, dt=dt) as rec:
        rec.run(until=1.0)
    w = _bouncing()
    with carom.record(w, tmp_path / "two.h5", every=every, dt=dt) as rec:
        rec.run(until=0.5)
        assert w.time == 0.5
        rec.run(until=1.0)
    plain = _bouncing()
    plain.run(until=1.0, dt=dt)
    assert_same_bits(w, plain)
    one, two = carom.load(tmp_path / "one.h5"), carom.load(tmp_path / "two.h5")
    for name in ("time", "position", "velocity", "total_energy", "collision_count"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    for name, values in one.impacts.items():
        assert np.array_equal(values, two.impacts[name]), name
    assert len(one.impacts["time"]) == one.collision_count[-1] > 0  # each impact once, looks ahead or not
    assert_frame_is(one, -1, plain)
