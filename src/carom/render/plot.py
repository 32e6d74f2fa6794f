"""One figure that summarises a run.

Runs with impacts: energy, momentum and angular momentum against time, the relative change of the total
energy and of the angular momentum, and the impact rate. Runs without impacts, or with N-body gravity:
the paths of the bodies (orbits), with the relative changes of energy and angular momentum (their errors,
where they should be conserved), and the impact rate if there are impacts.

A relative change is drawn on its own axis, symmetric about zero, never narrower than the round-off of
the quantity (shaded), so that round-off reads as round-off and not as a trend.

Runs where balls roll or slide on walls while something turns (friction): a row with the slip speed at
each such ball's contact and its spin. Runs with polygons: a row with the top one's drift from where it
started and its turn (a stack that holds stays at zero).
"""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..io.trajectory import Trajectory

#: The impact rate is averaged over at most this many intervals of the run.
RATE_BINS = 100
#: Half-width of the shaded round-off band of a relative change, in units of the machine epsilon times the
#: size of the terms summed into the quantity.
ROUNDOFF_ULPS = 8
#: The axis of a relative change spans at least this much either side of zero.
SMALLEST_LIMIT = 1e-15
#: In runs of more bodies than this, unnamed bodies get no legend entry in the paths panel.
LABELLED_BODIES = 10
#: A ball touches a wall while its gap to it is at most this share of its radius (resting contacts keep a
#: small gap).
TOUCH = 0.01
#: Unnamed balls get slip and spin panels only in runs of at most this many of them on walls.
ROLLING_BALLS = 4

_EPS = np.finfo(float).eps


class RunFigure(Figure):
    """A matplotlib ``Figure`` that shows itself in Jupyter as a PNG image (`_repr_png_`), without pyplot or
    any ``%matplotlib`` setting (a plain ``Figure`` shows only as text there until pyplot is imported)."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png")
        return buffer.getvalue()


def figure(traj: Trajectory, size: tuple[int, int] | None = None) -> RunFigure:
    """The summary figure of a run, ``size`` pixels (width, height) at 100 dpi (default: 900 wide, 900
    high and 250 more for each row of friction or polygon panels); nothing is written."""
    size = size or (900, 900 + 250 * len(_extra_rows(traj)))
    fig = RunFigure(figsize=(size[0] / 100, size[1] / 100), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = _layout(fig, traj)
    draw = {
        "paths": _draw_paths,
        "energy": _draw_energy,
        "energy_change": _draw_energy_change,
        "momentum": _draw_momentum,
        "angular_momentum": _draw_angular_momentum,
        "angular_momentum_change": _draw_angular_momentum_change,
        "impacts": _draw_impact_rate,
        "slip": _draw_slip,
        "spin": _draw_spin,
        "drift": _draw_drift,
        "turn": _draw_turn,
    }
    for name, ax in axes.items():
        draw[name](ax, traj)
        ax.grid(alpha=0.3)
    fig.suptitle(_title(traj), fontsize=11)
    return fig


def plot(traj: Trajectory, out, size: tuple[int, int] | None = None) -> Path:
    """Write the summary figure (`figure`) to ``out``; its suffix picks the format (none: PNG, appended).
    Returns the path written."""
    path = Path(out)
    if not path.suffix:
        path = path.with_suffix(".png")
    figure(traj, size).savefig(path)
    return path


def shows_paths(traj: Trajectory) -> bool:
    """Whether the figure draws the bodies' paths: runs with N-body gravity, and runs without impacts."""
    return _has_n_body_gravity(traj.scene) or int(traj.collision_count[-1]) == 0


def _has_n_body_gravity(scene_text: str) -> bool:
    try:
        forces = tomllib.loads(scene_text).get("forces", [])
    except tomllib.TOMLDecodeError:
        return False
    return any(isinstance(f, dict) and f.get("kind") == "gravity" for f in forces)


def _layout(fig: Figure, traj: Trajectory) -> dict[str, Axes]:
    """The panels of the figure by name; the time axes share their x axis."""
    has_spin = traj.angular_momentum is not None
    impacts = int(traj.collision_count[-1]) > 0
    if shows_paths(traj):
        changes = ["energy_change", "angular_momentum_change"] if has_spin else ["energy_change"] * 2
        rows = [["paths", "paths"], changes] + ([["impacts", "impacts"]] if impacts else [])
        heights = [3, 1] + ([1] if impacts else [])
    else:
        rows = [["energy", "energy_change"]]
        if has_spin:
            rows.append(["angular_momentum", "angular_momentum_change"])
        rows.append(["momentum", "impacts"])
        heights = [1] * len(rows)
    extra = _extra_rows(traj)
    rows, heights = rows + extra, heights + [1] * len(extra)
    axes = fig.subplot_mosaic(rows, height_ratios=heights)
    timed = [ax for name, ax in axes.items() if name != "paths"]
    for ax in timed[1:]:
        ax.sharex(timed[0])
    for name in set(rows[-1]):
        axes[name].set_xlabel("time (s)")
    return axes


def _title(traj: Trajectory) -> str:
    source = Path(str(traj.attrs.get("source", ""))).stem
    bodies = _count(traj.position.shape[1], "body", "bodies")
    impacts = _count(int(traj.collision_count[-1]), "impact", "impacts")
    text = f"{bodies}, {impacts} in {traj.time[-1] - traj.time[0]:.4g} s"
    return f"{source}: {text}" if source else text


def _count(n: int, one: str, many: str) -> str:
    """``n`` and the noun that goes with it: "1 impact", "0 impacts", "2 impacts"."""
    return f"{n} {one if n == 1 else many}"


def _draw_energy(ax: Axes, traj: Trajectory) -> None:
    t = traj.time
    ax.plot(t, traj.kinetic_energy, label="kinetic")
    ax.plot(t, traj.potential_energy, label="potential")
    ax.plot(t, traj.total_energy, label="total", color="k", lw=1.5, ls="--")
    ax.set_ylabel("energy (J)")
    ax.legend(loc="best", fontsize=8)
    _include_zero(ax, _roundoff(_energy_terms(traj)))


def _draw_momentum(ax: Axes, traj: Trajectory) -> None:
    for axis, name in zip(traj.momentum.T, "xyz", strict=False):
        ax.plot(traj.time, axis, label=f"$p_{name}$")
    ax.plot(traj.time, np.linalg.norm(traj.momentum, axis=1), label="|p|", color="k", lw=1.5, ls="--")
    ax.set_ylabel("momentum (kg m/s)")
    ax.legend(loc="best", fontsize=8)
    moving = traj.active & ~traj.fixed
    terms = np.max(np.sum(np.where(moving, traj.mass, 0.0) * np.linalg.norm(traj.velocity, axis=2), axis=1))
    _include_zero(ax, _roundoff(terms))


def _draw_angular_momentum(ax: Axes, traj: Trajectory) -> None:
    t, spin = traj.time, traj.angular_momentum
    if traj.dim == 2:
        ax.plot(t, spin, label="$L_z$")
    else:
        for axis, name in zip(spin.T, "xyz", strict=True):
            ax.plot(t, axis, label=f"$L_{name}$")
        ax.plot(t, np.linalg.norm(spin, axis=1), label="|L|", color="k", lw=1.5, ls="--")
    ax.set_ylabel("angular momentum (kg m²/s)")
    ax.set_title("about the origin, orbital + spin", fontsize=9)
    ax.legend(loc="best", fontsize=8)
    _include_zero(ax, _roundoff(angular_momentum_scale(traj)))


def _include_zero(ax: Axes, roundoff: float) -> None:
    """Widen the y limits to take in zero and ±``roundoff``: a quantity that is constant, or zero up to
    round-off, is drawn flat, not blown up to fill the axis."""
    low, high = ax.get_ylim()
    ax.set_ylim(min(low, -roundoff), max(high, roundoff))


def _roundoff(terms: float) -> float:
    """The round-off of a sum whose terms add up to ``terms`` in magnitude (same units)."""
    return ROUNDOFF_ULPS * _EPS * float(terms)


def _energy_terms(traj: Trajectory) -> float:
    """J: the largest |kinetic| + |potential| energy of the run, the size of the terms of the total."""
    return float(np.max(np.abs(traj.kinetic_energy) + np.abs(traj.potential_energy)))


def energy_scale(traj: Trajectory) -> float:
    """J: what a change of the total energy is measured against: the largest kinetic energy of the run
    (the energy in motion; the total itself depends on where the potential is zero and may be about 0).
    Where nothing moves, the largest |kinetic| + |potential|, else 1 J."""
    for scale in (float(np.max(traj.kinetic_energy)), _energy_terms(traj)):
        if scale > 0:
            return scale
    return 1.0


def angular_momentum_scale(traj: Trajectory) -> float:
    """kg m^2/s: what a change of the angular momentum is measured against: the largest sum over the
    moving bodies of m (|r| |v| + R^2 |omega|) in a frame, which bounds |L| and is the size of the terms
    summed into it (R^2 over-estimates the moment of inertia of a ball, 2/5 or 1/2 m R^2). 1 where
    nothing moves."""
    moving = traj.active & ~traj.fixed
    spin = np.abs(traj.angular_velocity).reshape(*moving.shape, -1)
    mass = np.where(moving, traj.mass, 0.0)  # fixed bodies have infinite mass
    terms = mass * (
        np.linalg.norm(traj.position, axis=2) * np.linalg.norm(traj.velocity, axis=2)
        + traj.radius**2 * np.linalg.norm(spin, axis=2)
    )
    scale = float(np.max(np.sum(terms, axis=1)))
    return scale if scale > 0 else 1.0


def _draw_energy_change(ax: Axes, traj: Trajectory) -> None:
    scale = energy_scale(traj)
    change = (traj.total_energy - traj.total_energy[0]) / scale
    _draw_relative_change(ax, traj.time, {"E": (change, "k")}, _roundoff(_energy_terms(traj)) / scale)
    ax.set_ylabel("$(E - E_0)\\,/\\,K_{max}$")
    ax.set_title(
        f"total energy, relative change\n$K_{{max}}$ = {scale:.4g} J, the largest kinetic energy", fontsize=9, pad=12
    )


def _draw_angular_momentum_change(ax: Axes, traj: Trajectory) -> None:
    scale = angular_momentum_scale(traj)
    spin = traj.angular_momentum
    change = (spin - spin[0]) / scale
    if traj.dim == 2:
        lines = {"$L_z$": (change, "C0")}
    else:
        lines = {f"$L_{n}$": (c, f"C{k}") for k, (n, c) in enumerate(zip("xyz", change.T, strict=True))}
    _draw_relative_change(ax, traj.time, lines, _roundoff(1.0))
    ax.set_ylabel("$(L - L_0)\\,/\\,L_{scale}$")
    ax.set_title(
        "angular momentum, relative change\n"
        f"$L_{{scale}}$ = {scale:.4g} kg m²/s = max $\\Sigma m(|r||v| + R^2|\\omega|)$",
        fontsize=9,
        pad=12,
    )


def _draw_relative_change(ax: Axes, t: np.ndarray, lines: dict, roundoff: float) -> None:
    """Lines of relative change, ``{label: (values, colour)}``, on limits symmetric about zero, at least
    ±2 ``roundoff`` (shaded) and ±SMALLEST_LIMIT."""
    largest = max(float(np.max(np.abs(values), initial=0.0)) for values, _ in lines.values())
    limit = max(1.15 * largest, 2 * roundoff, SMALLEST_LIMIT)
    ax.axhspan(-roundoff, roundoff, color="0.85", lw=0, label=f"round-off (±{roundoff:.1g})")
    ax.axhline(0.0, color="0.5", lw=0.8)
    for label, (values, colour) in lines.items():
        ax.plot(t, values, color=colour, lw=1.0, label=label if len(lines) > 1 else None)
    ax.set_ylim(-limit, limit)
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3), useMathText=True)
    ax.legend(loc="best", fontsize=7, ncols=len(lines) + 1)


def _draw_impact_rate(ax: Axes, traj: Trajectory) -> None:
    t = traj.time
    if len(t) > 1:
        edges = np.unique(np.linspace(0, len(t) - 1, min(len(t), RATE_BINS + 1)).round().astype(int))
        ax.stairs(np.diff(traj.collision_count[edges]) / np.diff(t[edges]), t[edges], fill=True, alpha=0.6)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("impacts per second")


def _draw_paths(ax: Axes, traj: Trajectory) -> None:
    """Each body's path in the plane of motion, to scale, with a dot where it ends."""
    points, (xlabel, ylabel) = _plane(traj)
    points = np.where(traj.active[..., None], points, np.nan)  # a merged body's path ends
    for k, label in enumerate(_body_labels(traj)):
        colour = f"C{k % 10}"
        ax.plot(points[:, k, 0], points[:, k, 1], color=colour, lw=1.0, label=label)
        last = np.flatnonzero(traj.active[:, k])
        if len(last):
            ax.plot(*points[last[-1], k], "o", color=colour, ms=4)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title("paths (dots: where the bodies end)", fontsize=9)
    if any(label is not None for label in _body_labels(traj)):
        ax.legend(loc="best", fontsize=8)


def _body_labels(traj: Trajectory) -> list[str | None]:
    """Each body's name; "body k" for an unnamed one, or None (no legend entry) in a run of many bodies."""
    n = traj.position.shape[1]
    names = getattr(traj, "names", None) or ("",) * n
    return [name or (f"body {k}" if n <= LABELLED_BODIES else None) for k, name in enumerate(names)]


def _plane(traj: Trajectory) -> tuple[np.ndarray, tuple[str, str]]:
    """(F, N, 2) coordinates (m) in the plane of motion, and the axes' labels. In 3D the plane is the one
    that fits the moving bodies' positions best; where it is a coordinate plane, its own axes are used."""
    if traj.dim == 2:
        return traj.position, ("x (m)", "y (m)")
    moving = traj.position[traj.active & ~traj.fixed]
    if len(moving) < 3:
        return traj.position[..., :2], ("x (m)", "y (m)")
    _, _, directions = np.linalg.svd(moving - moving.mean(axis=0), full_matrices=False)
    normal = directions[2]
    across = int(np.argmax(np.abs(normal)))
    if abs(normal[across]) > 1 - 1e-9:
        keep = [a for a in range(3) if a != across]
        return traj.position[..., keep], tuple(f"{'xyz'[a]} (m)" for a in keep)
    labels = tuple("along ({:.2f}, {:.2f}, {:.2f}) (m)".format(*d) for d in directions[:2])
    return traj.position @ directions[:2].T, labels


# ----------------------------------------------------------------------------------------- friction, polygons
def _extra_rows(traj: Trajectory) -> list[list[str]]:
    """The rows of panels that friction and polygons add: slip and spin, drift and turn."""
    rows = [["slip", "spin"]] if len(rolling_balls(traj)) else []
    return rows + ([["drift", "turn"]] if top_polygon(traj) is not None else [])


def _up(traj: Trajectory) -> np.ndarray:
    """The unit vector against the scene's gravity (the last axis where it has none)."""
    try:
        gravity = np.asarray(tomllib.loads(traj.scene).get("world", {}).get("gravity", ()), dtype=float)
    except (tomllib.TOMLDecodeError, ValueError):
        gravity = np.zeros(0)
    if gravity.shape == (traj.dim,) and np.any(gravity):
        return -gravity / np.linalg.norm(gravity)
    return np.eye(traj.dim)[-1]


def _contacts(traj: Trajectory, ids: np.ndarray) -> np.ndarray:
    """(F, len(ids)): the index of the wall each ball touches in each frame (its nearest), -1 for none."""
    if not len(traj.wall_point):
        return np.full((len(traj.time), len(ids)), -1)
    x, r = traj.position[:, ids], traj.radius[:, ids]
    gap = np.einsum("fbd,wd->fbw", x, traj.wall_normal) - np.sum(traj.wall_point * traj.wall_normal, axis=1)
    gap -= r[..., None]
    nearest = np.argmin(np.abs(gap), axis=2)
    touching = np.take_along_axis(np.abs(gap), nearest[..., None], axis=2)[..., 0] <= TOUCH * r
    return np.where(touching & traj.active[:, ids], nearest, -1)


def rolling_balls(traj: Trajectory) -> np.ndarray:
    """The balls (disks, spheres) whose slip and spin the figure shows, in a run where anything turns: those
    that touch a wall in more than one frame; the named ones among them, else all of them while there are
    at most `ROLLING_BALLS`."""
    if not np.any(traj.angular_velocity):
        return np.zeros(0, dtype=int)
    balls = np.flatnonzero(~traj.fixed & (traj.shapes != "polygon"))
    balls = balls[np.sum(_contacts(traj, balls) >= 0, axis=0) > 1]
    named = [b for b in balls if traj.names[b]]
    if named:
        return np.array(named)
    return balls if len(balls) <= ROLLING_BALLS else np.zeros(0, dtype=int)


def slip_speed(traj: Trajectory, ids: np.ndarray) -> np.ndarray:
    """(F, len(ids)) m/s: the speed at which each ball's contact point slides over the wall it touches (the
    point's velocity v + omega x (-R n), less its part along the wall's normal n); NaN while it touches
    none. A ball that rolls without slipping has 0."""
    wall = _contacts(traj, ids)
    n = traj.wall_normal[np.maximum(wall, 0)]  # (F, B, d)
    v, r = traj.velocity[:, ids], traj.radius[:, ids, None]
    omega = traj.angular_velocity[:, ids]
    if traj.dim == 2:
        point = v + r * omega[..., None] * np.stack([n[..., 1], -n[..., 0]], axis=-1)  # omega x (-R n)
    else:
        point = v - r * np.cross(omega, n)
    sliding = point - np.sum(point * n, axis=-1, keepdims=True) * n
    return np.where(wall >= 0, np.linalg.norm(sliding, axis=-1), np.nan)


def _ball_label(traj: Trajectory, b: int) -> str:
    return traj.names[b] or f"body {b}"


def _draw_slip(ax: Axes, traj: Trajectory) -> None:
    ids = rolling_balls(traj)
    for b, slip in zip(ids, slip_speed(traj, ids).T, strict=True):
        ax.plot(traj.time, slip, lw=1.0, label=_ball_label(traj, b))
    speed = float(np.max(np.linalg.norm(traj.velocity[:, ids], axis=2), initial=0.0))
    ax.set_ylim(0, max(ax.get_ylim()[1], 0.01 * speed))  # a ball that rolls reads as 0, not as noise blown up
    ax.set_ylabel("slip speed (m/s)")
    ax.set_title("at the contact with a wall (0: rolling; gaps: off the wall)", fontsize=9)
    ax.legend(loc="best", fontsize=8)


def _draw_spin(ax: Axes, traj: Trajectory) -> None:
    ids = rolling_balls(traj)
    spin = traj.angular_velocity[:, ids]
    for b, values in zip(ids, (spin if traj.dim == 2 else np.linalg.norm(spin, axis=2)).T, strict=True):
        ax.plot(traj.time, values, lw=1.0, label=_ball_label(traj, b))
    ax.set_ylabel("spin ω (rad/s)" if traj.dim == 2 else "spin |ω| (rad/s)")
    ax.set_title("counter-clockwise positive" if traj.dim == 2 else "", fontsize=9)
    ax.legend(loc="best", fontsize=8)


def top_polygon(traj: Trajectory) -> int | None:
    """The polygon that starts highest (against gravity), or None in a run without polygons."""
    polygons = np.flatnonzero((traj.shapes == "polygon") & ~traj.fixed)
    if not len(polygons):
        return None
    return int(polygons[np.argmax(traj.position[0, polygons] @ _up(traj))])


def _draw_drift(ax: Axes, traj: Trajectory) -> None:
    top = top_polygon(traj)
    up = _up(traj)
    along = np.array([up[1], -up[0]])  # (polygons are 2D)
    moved = traj.position[:, top] - traj.position[0, top]
    ax.plot(traj.time, moved @ along, label="along the floor")
    ax.plot(traj.time, moved @ up, label="up")
    ax.set_ylabel("drift (m)")
    ax.set_title(f"the top polygon ({_ball_label(traj, top)}): moved from its start", fontsize=9)
    ax.legend(loc="best", fontsize=8)
    _include_zero(ax, _roundoff(float(np.max(np.abs(traj.position[:, top])))))


def _draw_turn(ax: Axes, traj: Trajectory) -> None:
    top = top_polygon(traj)
    ax.plot(traj.time, np.degrees(traj.orientation[:, top] - traj.orientation[0, top]), color="C2")
    ax.set_ylabel("turn (°)")
    ax.set_title(f"the top polygon ({_ball_label(traj, top)}): angle from its start", fontsize=9)
    _include_zero(ax, _roundoff(float(np.max(np.abs(traj.orientation[:, top])))))
