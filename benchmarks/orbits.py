"""Orbits side by side: carom's `World(integrator="ias15")` against REBOUND's IAS15 on the same scenes.

Scenes (each from the same initial conditions in both; G, units and bodies as listed):
- Kepler e = 0.9 over 100 and 1000 orbits, and e = 0.99 over 1000: a body of 1e-3 around one of 1 (G = 1,
  a = 1, period 2 pi / sqrt(1.001)), about their centre of mass, from apoapsis (so the run ends there);
- the outer solar system (Sun, Jupiter, Saturn, Uranus, Neptune) of Hairer, Lubich & Wanner, *Geometric
  Numerical Integration*, section I.2.4 (AU, days, solar masses; tests/test_orbits.py cites the table) over
  1e5 years;
- the Earth, the Moon and a satellite around it over 30 days (the example scene ``earth_moon_satellite``, SI);
- a grazing impact: two spheres of mass 1/2 (G = 1) on a relative orbit of a = 1, e = 0.98 from apoapsis,
  whose radii make the closest approach 1e-6 R inside contact (``--graze``). Kepler's equation gives the
  instant they touch. carom finds it inside a step (`carom.step.ias15`); REBOUND looks for overlaps at the
  end of each step (``collision = "direct"``) or along the straight line between a step's ends (``"line"``),
  halting there.

For each: wall time of the whole run (first step included; carom's kernels are compiled first by a short
warm-up run of the same scene, not timed), steps taken, relative energy error at the end, and the largest
difference of a body's position between carom and REBOUND at the end (in the scene's length unit: a, AU, the
Earth-Moon distance). REBOUND runs twice: with its default step criterion (PRS23, Pham, Rein & Spiegel 2024)
and with the global one of Rein & Spiegel (2015), which carom uses. REBOUND (``pip install rebound``, in the
``bench`` extra) is imported only here, and skipped with a message when missing.

Prints a Markdown table and writes the rows as JSON (``--json``, default benchmarks/out/orbits.json).
``--quick``: every scene a hundredth as long (or at least one orbit), a smoke run of a few seconds;
``--graze``: the grazing orbit's depth (a fraction of R; default 1e-6).

    python benchmarks/orbits.py [--quick] [--graze DEPTH] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The outer solar system (HLW I.2.4): mass (solar masses; the Sun's includes the inner planets), position
#: (AU), velocity (AU/day), on 5 September 1994; G in AU^3 / (solar mass day^2).
OUTER = (
    (1.00000597682, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    (0.000954786104043, (-3.5023653, -3.8169847, -1.5507963), (0.00565429, -0.00412490, -0.00190589)),
    (0.000285583733151, (9.0755314, -3.0458353, -1.6483708), (0.00168318, 0.00483525, 0.00192462)),
    (0.0000437273164546, (8.3101420, -16.2901086, -7.2521278), (0.00354178, 0.00137102, 0.00055029)),
    (0.0000517759138449, (11.4707666, -25.7294829, -10.8169456), (0.00288930, 0.00114527, 0.00039677)),
)
G_AU_DAY = 2.95912208286e-4
YEAR = 365.25  # days
DAY = 86400.0  # s
GRAZE = 1e-6  # the grazing orbit's closest approach, a fraction of R inside contact
REBOUND_MODES = {"PRS23": 2, "global": 1}  # REBOUND's adaptive_mode values


@dataclass
class Scene:
    """Bodies (masses, radii, positions, velocities) under gravity G, run to ``until``; ``length``: the unit
    of the position differences; ``impact``: the exact instant of the first impact, where there is one."""

    name: str
    G: float
    masses: np.ndarray
    radii: np.ndarray
    x: np.ndarray
    v: np.ndarray
    until: float
    length: float
    impact: float | None = None


def kepler(e: float, orbits: float, *, m2: float = 1e-3, radius: float = 1e-6) -> Scene:
    from carom.orbits import kepler_state

    mu = 1.0 + m2
    period = 2 * math.pi / math.sqrt(mu)
    r, v = kepler_state(mu, 1.0, e, 0.0, periapsis_time=-period / 2)
    x = np.array([-m2 / mu * r, r / mu])
    u = np.array([-m2 / mu * v, v / mu])
    return Scene(f"Kepler e = {e}, orbits: {orbits:g}", 1.0, np.array([1.0, m2]), np.full(2, radius), x, u,
                 orbits * period, 1.0)  # fmt: skip


def outer_solar_system(years: float) -> Scene:
    masses, x, v = (np.array(column, dtype=float) for column in zip(*OUTER, strict=True))
    return Scene(f"outer solar system, {years:g} years", G_AU_DAY, masses, np.full(5, 1e-4), x, v, years * YEAR, 1.0)


def earth_moon_satellite(days: float) -> Scene:
    import carom

    w = carom.Scene.load(carom.examples.path("earth_moon_satellite"))
    gravity = next(f for f in w.forces if isinstance(f, carom.NBodyGravity))
    return Scene(f"Earth-Moon-satellite, {days:g} days", gravity.G, w.masses.copy(), w.radii.copy(),
                 w.positions.copy(), w.velocities.copy(), days * DAY, 3.844e8)  # fmt: skip


def grazing_impact(depth: float = GRAZE) -> Scene:
    """Two spheres of mass 1/2 and radius R (G = 1) on a relative orbit a = 1, e = 0.98 from apoapsis, R such
    that the periapsis distance q = a (1 - e) is ``2 R - depth R``. They touch where r = 2 R, before periapsis:
    ``1 - cos E = (r - q) / (a e)``, at ``t = P/2 - (E - e sin E)`` (mean motion 1)."""
    from carom.orbits import kepler_state

    a, e = 1.0, 0.98
    q = a * (1 - e)
    R = q / (2 - depth)
    period = 2 * math.pi
    r, v = kepler_state(1.0, a, e, 0.0, periapsis_time=-period / 2)
    E = 2 * math.asin(math.sqrt((2 * R - q) / (2 * a * e)))
    touch = period / 2 - ((1 - e) * E + e * (E - math.sin(E)))
    return Scene(f"grazing impact, e = 0.98, {depth:g} R deep", 1.0, np.full(2, 0.5), np.full(2, R),
                 np.array([-r / 2, r / 2]), np.array([-v / 2, v / 2]), period, a, touch)  # fmt: skip


def scenes(quick: bool, depth: float) -> list[Scene]:
    f = 0.01 if quick else 1.0
    return [kepler(0.9, max(100 * f, 1)), kepler(0.9, max(1000 * f, 1)), kepler(0.99, max(1000 * f, 1)),
            outer_solar_system(1e5 * f), earth_moon_satellite(max(30 * f, 1.0)), grazing_impact(depth)]  # fmt: skip


def _row(scene: Scene, engine: str, wall: float, steps: int, energy: float, impact: float | None) -> dict:
    row = {"scene": scene.name, "engine": engine, "wall s": wall, "steps": steps, "energy error": energy}
    if scene.impact is not None:
        row["impact seen at"] = impact
        row["its error"] = None if impact is None else impact - scene.impact
    return row


def run_carom(scene: Scene) -> tuple[dict, np.ndarray]:
    import carom

    def world():
        w = carom.World(dim=scene.x.shape[1], integrator="ias15")
        w.add_bodies(scene.x, velocities=scene.v, masses=scene.masses, radii=scene.radii)
        w.add_force(carom.NBodyGravity(G=scene.G))
        return w

    world().run(until=scene.until / 100 if scene.impact is None else scene.until)  # warm-up: compiles the kernels
    w = world()
    impacts = []
    w.on_impact(impacts.append)
    e0 = w.total_energy()
    start = time.perf_counter()
    w.run(until=scene.until)
    wall = time.perf_counter() - start
    first = min((i.time for i in impacts), default=None)
    return _row(scene, "carom", wall, w.step_count, (w.total_energy() - e0) / abs(e0), first), w.positions.copy()


def run_rebound(scene: Scene, mode: str, collision: str | None = None) -> tuple[dict, np.ndarray]:
    import rebound

    sim = rebound.Simulation()
    sim.G = scene.G
    sim.integrator = "ias15"
    sim.integrator.adaptive_mode = REBOUND_MODES[mode]
    for m, r, x, v in zip(scene.masses, scene.radii, scene.x, scene.v, strict=True):
        x3, v3 = np.zeros(3), np.zeros(3)
        x3[: len(x)], v3[: len(v)] = x, v
        sim.add(m=m, r=r, x=x3[0], y=x3[1], z=x3[2], vx=v3[0], vy=v3[1], vz=v3[2])
    if collision is not None:
        sim.collision = collision
        sim.collision_resolve = "halt"
    e0 = sim.energy()
    seen = None
    start = time.perf_counter()
    try:
        sim.integrate(scene.until, exact_finish_time=1)
    except rebound.Collision:
        seen = sim.t
    wall = time.perf_counter() - start
    engine = f"REBOUND {mode}" + (f", collision {collision}" if collision else "")
    positions = np.array([[p.x, p.y, p.z] for p in sim.particles])[:, : scene.x.shape[1]]
    return _row(scene, engine, wall, sim.steps_done, (sim.energy() - e0) / abs(e0), seen), positions


def measure(scene: Scene, have_rebound: bool) -> list[dict]:
    row, ours = run_carom(scene)
    rows = [row]
    if not have_rebound:
        return rows
    if scene.impact is None:
        runs = [(mode, None) for mode in REBOUND_MODES]
    else:
        runs = [("PRS23", "direct"), ("PRS23", "line")]
    for mode, collision in runs:
        other, theirs = run_rebound(scene, mode, collision)
        if scene.impact is None:
            other["position difference"] = float(np.max(np.linalg.norm(theirs - ours, axis=1))) / scene.length
        rows.append(other)
    return rows


def _cell(key: str, value) -> str:
    if value is None:
        return "missed" if key == "impact seen at" else "-"
    if key == "wall s":
        return f"{value:.3f}"
    if key == "impact seen at":
        return f"{value:.12f}"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def table(rows: list[dict]) -> str:
    keys = ["scene", "engine", "wall s", "steps", "energy error", "position difference", "impact seen at", "its error"]
    lines = ["| " + " | ".join(keys) + " |", "|---|---|" + "---:|" * (len(keys) - 2)]
    lines += ["| " + " | ".join(_cell(k, r.get(k)) if k in r else "" for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="every scene a hundredth as long: a smoke run")
    parser.add_argument("--graze", type=float, default=GRAZE, help="how deep (a fraction of R) the grazing orbit's "
                        "closest approach is inside contact")  # fmt: skip
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "out" / "orbits.json",
                        help="where to write the rows")  # fmt: skip
    args = parser.parse_args()
    try:
        import rebound  # noqa: F401  (only to know whether it is there)

        have_rebound = True
    except ImportError:
        have_rebound = False
        print("rebound is not installed: carom alone (pip install '.[bench]' for the side-by-side)")
    rows = [row for scene in scenes(args.quick, args.graze) for row in measure(scene, have_rebound)]
    print(table(rows))
    grazing = grazing_impact(args.graze)
    print(f"\nexact impact of the grazing orbit: t = {grazing.impact:.15f} (Kepler's equation)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=1))
    print(f"rows written to {args.json}")


if __name__ == "__main__":
    main()
