"""A billiards break side by side: carom against pooltool on the same table, balls and shot.

Sixteen regulation balls (pooltool's defaults: 170.097 g, R = 28.575 mm) on a pocketless 0.9906 m x
1.9812 m table: fifteen in a triangle rack (gaps of 1e-4 R between neighbours, each ball moved by up to a
quarter of that, seeded) with its apex on the foot spot, and the cue ball on the head spot, sliding at 8 m/s
without spin straight at the apex. Cloth: sliding friction 0.2, rolling resistance giving a rolling ball a
deceleration of 0.01 g, spinning friction 4/9 (pooltool's: a ball spinning about the vertical slows at
10 g / 9 rad/s^2); cushions: restitution 0.85, friction 0.2; ball against ball: elastic and smooth.
Both engines play the break until every ball has stopped, and report their wall time (the best of
``--repeat`` runs, after one untimed run that compiles), the simulated time it took, their impacts by kind, and
the time of the first impact (cue ball on the apex ball) against its exact value: the cue ball slides with
the deceleration ``mu g`` until then, so ``d = v0 t - mu g t^2 / 2`` over the distance d it travels to touch.

The engines model two things differently, so their breaks are not ball-for-ball the same (nor could they
be: the break is chaotic, and a change of 1e-12 m/s in the cue ball's speed moves balls by 1e-5 m within
0.3 s in either engine):
- carom is three-dimensional: a cushion is a wall plane at the height of the balls' centres, and its
  friction acts on the contact point's whole slip, vertical included, so a ball rolling into a cushion is
  thrown up a little and lands again (the floor's impacts are listed). pooltool keeps balls on the cloth
  and uses Han's (2005) cushion model with the nose above the centre.
pooltool's ``u_r`` is a rolling deceleration over g; carom's rolling resistance ``mu_r`` is a torque
``mu_r N R``, whose deceleration is ``mu_r g / (1 + 2/5)``; carom gets ``mu_r = 1.4 u_r``. pooltool's
spinning deceleration ``5 u_sp g / (2 R)`` with ``u_sp = (4/9) R`` is carom's ``5 mu_sp g / (2 R)`` with
``mu_sp = 4/9``.

pooltool-billiards 0.3.3 is the newest release that installs from PyPI here (later ones need a development
build of panda3d); it is in the ``bench`` extra and skipped when missing.

    python benchmarks/billiards.py --dt 0.01 0.05
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

MASS, RADIUS = 0.170097, 0.028575  # kg, m (pooltool's ball)
WIDTH, LENGTH = 0.9906, 1.9812  # m, the playing area
SLIDING, ROLLING = 0.2, 0.01  # the cloth: sliding friction, rolling deceleration / g (pooltool's u_s, u_r)
SPINNING = 4 / 9  # the cloth's spinning friction (pooltool's u_sp_proportionality)
CUSHION_E, CUSHION_MU = 0.85, 0.2
SPEED = 8.0  # m/s, the cue ball's
G = 9.81
GAP = 1e-4 * RADIUS  # m, between neighbours in the rack
STOPPED = 1e-9  # m/s, rad/s: a ball moving or turning slower than this has stopped (carom's residues: ~1e-19)
LONGEST = 60.0  # s: a break that has not ended by then is reported as such


def rack(seed: int = 0) -> np.ndarray:
    """(16, 2) centres (m): the cue ball on the head spot, then the rack's 15 balls, apex on the foot spot."""
    rng = np.random.default_rng(seed)
    apex = np.array([WIDTH / 2, 3 * LENGTH / 4])
    pitch = 2 * RADIUS + GAP
    balls = [apex + pitch * np.array([s - r / 2, r * math.sqrt(3) / 2]) for r in range(5) for s in range(r + 1)]
    balls = np.array(balls) + rng.uniform(-0.25, 0.25, (15, 2)) * GAP
    return np.vstack([[WIDTH / 2, LENGTH / 4], balls])


def first_impact_time() -> float:
    """Exact time (s) at which the sliding cue ball reaches the apex ball: ``d = v0 t - mu g t^2 / 2``."""
    xy = rack()
    across, ahead = xy[1] - xy[0]  # the cue ball runs along +y; the apex ball is off its line by ``across``
    d = ahead - math.sqrt((2 * RADIUS) ** 2 - across**2)
    a = SLIDING * G
    t = (SPEED - math.sqrt(SPEED**2 - 2 * a * d)) / a
    assert t < 2 * SPEED / (7 * a), "the cue ball must still slide when it arrives"
    return t


def _row(engine, dt, wall, simulated, ball_ball, cushion, floor, first) -> dict:
    exact = first_impact_time()
    return {"engine": engine, "dt s": dt, "wall s": wall, "simulated s": simulated, "ball-ball": ball_ball,
            "cushion": cushion, "floor": floor, "first impact s": first, "its error s": first - exact}  # fmt: skip


def carom_world():
    import carom

    w = carom.World(dim=3, gravity=(0.0, 0.0, -G), friction_rule="max")
    # the cloth (the balls are smooth, so "max" gives each wall its own coefficient and ball-ball 0)
    w.add_wall(point=(0, 0, 0), normal=(0, 0, 1), restitution=0.5, static_friction=SLIDING)
    for point, normal in (((0, 0, 0), (1, 0, 0)), ((WIDTH, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)),
                          ((0, LENGTH, 0), (0, -1, 0))):  # fmt: skip
        w.add_wall(point=point, normal=normal, restitution=CUSHION_E, static_friction=CUSHION_MU)
    positions = np.column_stack([rack(), np.full(16, RADIUS)])
    velocities = np.zeros((16, 3))
    velocities[0, 1] = SPEED
    w.add_bodies(positions, velocities, masses=MASS, radii=RADIUS, restitution=1.0, static_friction=0.0,
                 rolling_resistance=ROLLING * (1 + 2 / 5), spinning_friction=SPINNING)  # fmt: skip
    return w


def run_carom(dt: float, repeat: int) -> dict:
    best = math.inf
    for attempt in range(repeat + 1):  # the first run compiles (or loads Numba's cache): not timed
        w = carom_world()
        impacts = []
        w.on_impact(impacts.append)
        start = time.perf_counter()
        while w.time < LONGEST and max(np.abs(w.velocities[:, :2]).max(), np.abs(w.angular_velocities).max()) > STOPPED:
            w.step(dt)
        wall = time.perf_counter() - start
        if attempt:
            best = min(best, wall)
    kinds = np.array([im.j for im in impacts])
    first = min(im.time for im in impacts if im.j >= 0)
    return _row("carom", dt, best, w.time, int(np.sum(kinds >= 0)), int(np.sum(kinds < -1)),
                int(np.sum(kinds == -1)), first)  # fmt: skip


def run_pooltool(repeat: int) -> dict:
    import pooltool as pt
    from pooltool.objects import BilliardTableSpecs

    table = pt.Table.from_table_specs(BilliardTableSpecs(l=LENGTH, w=WIDTH))
    params = {"m": MASS, "R": RADIUS, "u_s": SLIDING, "u_r": ROLLING, "u_sp_proportionality": SPINNING,
              "e_c": CUSHION_E, "f_c": CUSHION_MU, "g": G}  # fmt: skip

    def system():
        balls = {}
        for k, xy in enumerate(rack()):
            ball = pt.Ball.create("cue" if k == 0 else str(k), xy=xy, **params)
            balls[ball.id] = ball
        balls["cue"].state.rvw[1] = [0.0, SPEED, 0.0]
        balls["cue"].state.s = 2  # sliding
        return pt.System(table=table, balls=balls, cue=pt.Cue(cue_ball_id="cue"))

    best = math.inf
    for attempt in range(repeat + 1):
        shot = system()
        start = time.perf_counter()
        pt.simulate(shot, inplace=True)
        wall = time.perf_counter() - start
        if attempt:
            best = min(best, wall)
    kinds = [e.event_type.value for e in shot.events]
    stops = [e.time for e in shot.events if e.event_type.value in ("rolling_stationary", "spinning_stationary")]
    first = min(e.time for e in shot.events if e.event_type.value == "ball_ball")
    return _row("pooltool", "events", best, max(stops), kinds.count("ball_ball"), kinds.count("ball_linear_cushion"),
                0, first)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dt", type=float, nargs="+", default=[0.01, 0.05], help="carom's time steps, s")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per engine (the best is reported)")
    args = parser.parse_args()
    rows = [run_carom(dt, args.repeat) for dt in args.dt]
    try:
        rows.append(run_pooltool(args.repeat))
    except ImportError:
        print("pooltool is not installed: skipped (pip install '.[bench]')")
    print(f"exact first impact: {first_impact_time():.15f} s")
    print("| " + " | ".join(rows[0]) + " |")
    print("|---|" + "---:|" * (len(rows[0]) - 1))
    for r in rows:
        cells = [f"{v:.3g}" if isinstance(v, float) else str(v) for v in r.values()]
        cells[-2] = f"{r['first impact s']:.12f}"
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
