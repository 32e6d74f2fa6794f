"""The summary plot of a run (`carom plot`): which panels it draws, what they hold, and the angular
momentum row it reads from the trajectory file. Runs are made with the `carom run` command."""

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from carom.cli import main
from carom.io import load
from carom.render.plot import (
    ROUNDOFF_ULPS,
    SMALLEST_LIMIT,
    angular_momentum_scale,
    energy_scale,
    figure,
    plot,
    shows_paths,
)

EPS = np.finfo(float).eps
# A planet on a circular orbit in the x-z plane about a heavy sun, v = sqrt(G M / r), for one period
# (7.69 s): N-body gravity, no impacts.
ORBIT = """
[world]
dim = 3
[run]
until = 8.0
dt = 0.01
output_interval = 0.1
[[forces]]
kind = "gravity"
[[bodies]]
name = "sun"
position = [0.0, 0.0, 0.0]
mass = 1.0e10
radius = 0.05
[[bodies]]
name = "planet"
position = [1.0, 0.0, 0.0]
velocity = [0.0, 0.0, 0.81695777]
mass = 1.0
radius = 0.05
"""
# One ball 0.5 m above the x axis, bouncing elastically between walls at x = -1 and x = 1 (hits at 0.9 s
# and 2.7 s): impacts, the energy kept exactly, the angular momentum about the origin reversed by each wall.
BOUNCE = """
[world]
dim = 2
[run]
until = 3.0
dt = 0.01
output_interval = 0.05
[[bodies]]
position = [0.0, 0.5]
velocity = [1.0, 0.0]
mass = 2.0
radius = 0.1
[[walls]]
point = [-1.0, 0.0]
normal = [1.0, 0.0]
[[walls]]
point = [1.0, 0.0]
normal = [-1.0, 0.0]
"""
# Two unnamed balls drifting apart: no forces, no impacts.
APART = """
[world]
dim = 2
[run]
until = 1.0
dt = 0.1
output_interval = 0.1
[[bodies]]
position = [0.0, 0.0]
velocity = [-1.0, 0.5]
mass = 1.0
radius = 0.1
[[bodies]]
position = [1.0, 0.0]
velocity = [1.0, 0.0]
mass = 1.0
radius = 0.1
"""


def run(tmp_path, text, name="scene"):
    """Run a scene with `carom run` and return its trajectory file."""
    scene, out = tmp_path / f"{name}.toml", tmp_path / f"{name}.h5"
    scene.write_text(text)
    result = CliRunner().invoke(main, ["run", str(scene), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


def panels(fig):
    """The figure's axes by what they show: the y label (the paths panel: "paths")."""
    return {"paths" if ax.get_title().startswith("paths") else ax.get_ylabel(): ax for ax in fig.axes}


ENERGY_CHANGE = "$(E - E_0)\\,/\\,K_{max}$"
SPIN_CHANGE = "$(L - L_0)\\,/\\,L_{scale}$"
RATE = "impacts per second"


def test_angular_momentum_is_recorded_per_frame(tmp_path):
    orbit, bounce = run(tmp_path, ORBIT, "orbit"), run(tmp_path, BOUNCE, "bounce")
    with h5py.File(orbit) as f:
        spin = f["diagnostics/angular_momentum"][()]
        x, v, m = f["frames/position"][()], f["frames/velocity"][()], f["bodies/mass"][()]
    assert spin.shape == (len(x), 3)
    assert np.allclose(spin, np.sum(m[:, None] * np.cross(x, v), axis=1), rtol=0, atol=1e-12)
    assert spin[0] == pytest.approx([0.0, -0.81695777, 0.0], abs=1e-15)  # r x m v = (1,0,0) x (0,0,v)
    assert np.abs(spin - spin[0]).max() < 1e-13  # central forces keep it, to round-off
    with h5py.File(bounce) as f:
        spin, x, v = (f[name][()] for name in ("diagnostics/angular_momentum", "frames/position", "frames/velocity"))
    assert spin.shape == (len(x),)  # 2D: the z component
    assert np.array_equal(spin, 2.0 * (x[:, 0, 0] * v[:, 0, 1] - x[:, 0, 1] * v[:, 0, 0]))
    assert set(np.round(spin, 12)) == {-1.0, 1.0}  # -m y vx: the walls turn it over
    assert np.array_equal(load(bounce).angular_momentum, spin)


def test_orbits_are_drawn_as_paths_with_names_and_errors(tmp_path):
    traj = load(run(tmp_path, ORBIT, "orbit"))
    fig = figure(traj)
    found = panels(fig)
    assert shows_paths(traj) and set(found) == {"paths", ENERGY_CHANGE, SPIN_CHANGE}  # no empty impacts panel
    assert fig.get_suptitle() == "orbit: 2 bodies, 0 impacts in 8 s"
    paths = found["paths"]
    assert (paths.get_xlabel(), paths.get_ylabel()) == ("x (m)", "z (m)")  # the plane of the orbit
    assert [t.get_text() for t in paths.get_legend().get_texts()] == ["sun", "planet"]
    planet = next(line for line in paths.get_lines() if line.get_label() == "planet")
    assert np.array_equal(planet.get_xydata(), traj.position[:, 1][:, [0, 2]])
    xmin, xmax = paths.get_xlim()
    ymin, ymax = paths.get_ylim()
    assert xmin <= -1 and xmax >= 1 and ymin <= -1 and ymax >= 1
    assert paths.get_aspect() == 1.0  # to scale: a circle is drawn round
    # The energy error of the leapfrog (1e-10 of K_max) is drawn at its size; the angular momentum's,
    # round-off, on at least twice the round-off band.
    energy = found[ENERGY_CHANGE]
    error = (traj.total_energy - traj.total_energy[0]) / energy_scale(traj)
    assert energy_scale(traj) == pytest.approx(0.5 * 0.81695777**2)
    assert np.array_equal(energy.get_lines()[-1].get_ydata(), error)
    assert 1e-11 < np.abs(error).max() < 1e-9
    assert energy.get_ylim() == pytest.approx((-1.15 * np.abs(error).max(), 1.15 * np.abs(error).max()))
    spin = found[SPIN_CHANGE]
    assert angular_momentum_scale(traj) == pytest.approx(0.81695777, rel=1e-9)  # the planet's m |r| |v|
    assert spin.get_ylim()[1] == pytest.approx(-spin.get_ylim()[0])
    assert spin.get_ylim()[1] >= 2 * ROUNDOFF_ULPS * EPS


def test_unnamed_bodies_without_impacts_are_labelled_by_number(tmp_path):
    traj = load(run(tmp_path, APART))
    found = panels(figure(traj))
    assert set(found) == {"paths", ENERGY_CHANGE, SPIN_CHANGE}
    assert (found["paths"].get_xlabel(), found["paths"].get_ylabel()) == ("x (m)", "y (m)")
    assert [t.get_text() for t in found["paths"].get_legend().get_texts()] == ["body 0", "body 1"]


def test_exact_conservation_reads_as_round_off(tmp_path):
    out = tmp_path / "heavy.h5"
    result = CliRunner().invoke(main, ["run", "--example", "heavy_target", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    traj = load(out)
    fig = figure(traj)
    found = panels(fig)
    assert set(found) == {
        "energy (J)",
        ENERGY_CHANGE,
        "angular momentum (kg m²/s)",
        SPIN_CHANGE,
        "momentum (kg m/s)",
        RATE,
    }
    assert fig.get_suptitle() == "heavy_target: 2 bodies, 1 impact in 3 s"
    change = (traj.total_energy - traj.total_energy[0]) / 2.0  # K_max: the small ball, 1 kg at 2 m/s
    assert np.abs(change).max() <= EPS  # the impact keeps the energy to the last bit, or nearly
    energy = found[ENERGY_CHANGE]
    assert np.array_equal(energy.get_lines()[-1].get_ydata(), change)
    roundoff = ROUNDOFF_ULPS * EPS  # |K| + |U| = K_max: the band is 8 eps
    assert energy.get_ylim() == pytest.approx((-2 * roundoff, 2 * roundoff))
    assert 2 * roundoff > SMALLEST_LIMIT
    assert [band.get_label() for band in energy.patches] == ["round-off (±2e-15)"]
    low, high = found["momentum (kg m/s)"].get_ylim()
    assert low <= 0 and high >= 2  # p_x = 2 kg m/s, constant: drawn with zero in view, flat


def test_titles_count_impacts_and_bodies_in_the_right_number(tmp_path):
    traj = load(run(tmp_path, BOUNCE, "bounce"))
    assert figure(traj).get_suptitle() == "bounce: 1 body, 2 impacts in 3 s"
    assert not shows_paths(traj)
    spin = panels(figure(traj))[SPIN_CHANGE]
    # L = -m y vx goes from -1 to 1 kg m²/s at each wall; the scale is the largest m |r| |v|, at a wall.
    scale = 2.0 * np.hypot(0.9, 0.5)
    assert angular_momentum_scale(traj) == pytest.approx(scale)
    assert spin.get_ylim() == pytest.approx((-1.15 * 2 / scale, 1.15 * 2 / scale))


def test_a_file_without_angular_momentum_is_plotted_without_it(tmp_path):
    path = run(tmp_path, BOUNCE, "bounce")
    with h5py.File(path, "r+") as f:
        del f["diagnostics/angular_momentum"]
    traj = load(path)
    assert traj.angular_momentum is None
    assert set(panels(figure(traj))) == {"energy (J)", ENERGY_CHANGE, "momentum (kg m/s)", RATE}
    orbit = tmp_path / "orbit.h5"
    with h5py.File(run(tmp_path, ORBIT, "orbit"), "r+") as f:
        del f["diagnostics/angular_momentum"]
    assert set(panels(figure(load(orbit)))) == {"paths", ENERGY_CHANGE}


def test_plot_writes_the_image_and_returns_its_path(tmp_path):
    traj = load(run(tmp_path, BOUNCE, "bounce"))
    written = plot(traj, tmp_path / "summary", size=(600, 500))
    assert written == tmp_path / "summary.png"
    image = np.asarray(Image.open(written).convert("RGB"))
    assert image.shape == (500, 600, 3) and image.std() > 10


# A ball (3D) struck to slide at v0 = 2 m/s without spin on a floor, mu_k = 0.2 (both sides, geometric
# rule): its centre slows at mu g, its spin grows at 5 mu g / (2 R), and it rolls from t = 2 v0 / (7 mu g).
SLIDE = """
[world]
dim = 3
gravity = [0.0, 0.0, -9.81]
[run]
until = 0.6
dt = 0.001
output_interval = 0.01
[[bodies]]
name = "cue"
position = [0.0, 0.0, 0.1]
velocity = [2.0, 0.0, 0.0]
mass = 1.0
radius = 0.1
static_friction = 0.2
[[walls]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
static_friction = 0.2
"""
# A box (2D) falling freely from 2 m above a floor, on top of a box that rests there: the top box's drift.
DROP = """
[world]
dim = 2
gravity = [0.0, -9.81]
[run]
until = 0.5
dt = 0.001
output_interval = 0.01
[[polygons]]
shape = "rectangle"
width = 0.3
height = 0.3
position = [0.0, 0.15]
mass = 1.0
[[polygons]]
shape = "rectangle"
width = 0.3
height = 0.3
position = [0.0, 2.45]
mass = 1.0
[[walls]]
point = [0.0, 0.0]
normal = [0.0, 1.0]
"""


def test_a_struck_balls_slip_reaches_zero_when_it_starts_to_roll(tmp_path):
    traj = load(run(tmp_path, SLIDE))
    fig = figure(traj)
    slip, spin = panels(fig)["slip speed (m/s)"], panels(fig)["spin |ω| (rad/s)"]
    [line] = slip.get_lines()
    t, values = line.get_xdata(), line.get_ydata()
    v0, mu, g, radius = 2.0, 0.2, 9.81, 0.1
    rolls = 2 * v0 / (7 * mu * g)  # 0.291 s
    sliding = t < rolls - 0.01
    assert values[0] == pytest.approx(v0, rel=1e-9)
    assert np.allclose(values[sliding], v0 - 3.5 * mu * g * t[sliding], atol=mu * g * 0.002)  # (a step or two)
    first_rolling = t[np.argmax(values < 1e-3 * v0)]
    assert abs(first_rolling - rolls) <= 0.01  # within a frame interval
    assert np.all(values[t > rolls + 0.01] < 1e-3 * v0)
    [turning] = spin.get_lines()
    assert turning.get_ydata()[-1] == pytest.approx(np.linalg.norm(traj.velocity[-1, 0]) / radius, rel=1e-3)


def test_the_top_box_drift_follows_its_free_fall(tmp_path):
    traj = load(run(tmp_path, DROP))
    drift = panels(figure(traj))["drift (m)"]
    along, up = drift.get_lines()
    t = along.get_xdata()
    falling = t < 0.6  # it falls 2 m in 0.64 s
    assert np.all(np.abs(along.get_ydata()) < 1e-12)
    assert np.allclose(up.get_ydata()[falling], -0.5 * 9.81 * t[falling] ** 2, atol=9.81 * 0.001 * 0.6)
    [turn] = panels(figure(traj))["turn (°)"].get_lines()
    assert np.all(np.abs(turn.get_ydata()) < 1e-9)


def test_runs_without_friction_or_polygons_get_no_such_panels(tmp_path):
    fig = figure(load(run(tmp_path, BOUNCE)))
    assert not {"slip speed (m/s)", "drift (m)"} & panels(fig).keys()
    assert tuple(fig.get_size_inches() * fig.dpi) == (900, 900)
