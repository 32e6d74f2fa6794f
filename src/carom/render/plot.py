"""One figure that summarises a run: energy, momentum and impact rate against time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..io.trajectory import Trajectory

#: The impact rate is averaged over at most this many intervals of the run.
RATE_BINS = 100


def plot(traj: Trajectory, out: Path, size: tuple[int, int] = (900, 900)) -> None:
    """Write a PNG of ``size`` pixels: kinetic, potential and total energy (J), with the change of the
    total on a second axis; momentum components and magnitude (kg m/s); impacts per second, averaged
    over at most `RATE_BINS` intervals; all against time (s)."""
    fig = Figure(figsize=(size[0] / 100, size[1] / 100), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    energy, momentum, rate = fig.subplots(3, 1, sharex=True)
    t = traj.time
    energy.plot(t, traj.kinetic_energy, label="kinetic")
    energy.plot(t, traj.potential_energy, label="potential")
    energy.plot(t, traj.total_energy, label="total", color="k", lw=1.5, ls="--")
    energy.set_ylabel("energy (J)")
    change = energy.twinx()
    change.plot(t, traj.total_energy - traj.total_energy[0], color="C3", lw=1.0, label="total - total(0)")
    change.set_ylabel("change of total (J)", color="C3")
    change.tick_params(axis="y", colors="C3")
    lines = energy.get_lines() + change.get_lines()
    energy.legend(lines, [x.get_label() for x in lines], loc="best", fontsize=8)
    for axis, name in zip(traj.momentum.T, "xyz", strict=False):
        momentum.plot(t, axis, label=f"$p_{name}$")
    momentum.plot(t, np.linalg.norm(traj.momentum, axis=1), label="|p|", color="k", lw=1.5)
    momentum.set_ylabel("momentum (kg m/s)")
    momentum.legend(loc="best", fontsize=8)
    if len(t) > 1:
        edges = np.unique(np.linspace(0, len(t) - 1, min(len(t), RATE_BINS + 1)).round().astype(int))
        rate.stairs(np.diff(traj.collision_count[edges]) / np.diff(t[edges]), t[edges], fill=True, alpha=0.6)
    rate.set_ylim(bottom=0)
    rate.set_ylabel("impacts per second")
    rate.set_xlabel("time (s)")
    for ax in (energy, momentum, rate):
        ax.grid(alpha=0.3)
    source = Path(str(traj.attrs.get("source", ""))).stem
    fig.suptitle(f"{source}: {traj.collision_count[-1]} impacts in {t[-1] - t[0]:.4g} s", fontsize=11)
    fig.savefig(out)
