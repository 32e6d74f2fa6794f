"""Pyramids of boxes side by side: carom against pymunk on Box2D's pyramid scene, in one process each.

A pyramid of unit boxes (1 kg, 1 m; ``rows`` in the bottom row, one fewer in each row above, stacked
touching) stands on a floor under g = 9.81, friction 0.6, restitution 0, stepped at 60 Hz for ``--steps``
steps (600: 10 s). pymunk gets the same boxes, its default 10 iterations and no sleeping; carom runs twice,
with sleeping off (as the peers) and with its default sleeping (the pyramid falls asleep after 0.5 s
still, and its steps then cost almost nothing). Each engine reports the whole run's wall time (building the
scene and every step), its first step (carom's held forces start cold there) and the mean of the other steps
(a small untimed pyramid first loads carom's compiled kernels), body-steps per second, the top box's drift
from where it started, and the deepest overlap (carom: between boxes and with the floor, from the contact
manifolds, measured every ``--every`` steps and at the end, outside the timing; pymunk: the top box's sag
stands for it). Box2D v3 (0.54 / 3.4 / 16 ms a step at 20 / 50 / 100 rows on its authors' figures) is not
measured here: no build of it installs from PyPI for this Python. A peer that is not installed is skipped
(``pip install '.[bench]'``).

A hopper of boxes and disks (carom only) follows.

    python benchmarks/polygon_stacks.py --rows 20 50 100 --steps 600 --hopper 10
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.spatial import cKDTree

G, FRICTION, DT = 9.81, 0.6, 1.0 / 60.0


def _boxes(rows: int) -> np.ndarray:
    """Centres (m) of the pyramid's boxes, bottom row first."""
    return np.array([(c - (rows - r - 1) / 2, 0.5 + r) for r in range(rows) for c in range(rows - r)])


def _carom(rows: int, steps: int, every: int, sleep: bool = False) -> dict:
    import carom
    from carom.config import Config
    from carom.narrowphase.polygons import polygon_contact, polygon_wall_contact
    from carom.shapes import rectangle_vertices

    built = time.perf_counter()
    w = carom.World(dim=2, gravity=(0, -G), config=Config() if sleep else Config(sleep_time=math.inf))
    w.add_wall((0, 0), (0, 1), restitution=0.0, static_friction=FRICTION)
    for x, y in _boxes(rows):
        w.add_rectangle(1.0, 1.0, (x, y), mass=1.0, restitution=0.0, static_friction=FRICTION)
    built = time.perf_counter() - built
    square = rectangle_vertices(1.0, 1.0)
    top0 = w.positions[-1].copy()
    neighbours = cKDTree(w.positions).query_pairs(1.5, output_type="ndarray")  # the pyramid stands: fixed list
    deepest, each = 0.0, np.empty(steps)
    for k in range(steps):
        start = time.perf_counter()
        w.step(DT)
        each[k] = time.perf_counter() - start
        if (k + 1) % every and k + 1 < steps:
            continue
        x, a = w.positions, w.angles
        for b in range(len(x)):
            floor = polygon_wall_contact(square, x[b], a[b], (0, 0), (0, 1))
            deepest = max(deepest, -float(floor.gaps.min()))
        for b, c in neighbours:
            deepest = max(deepest, -float(polygon_contact(square, x[b], a[b], square, x[c], a[c]).gaps.min()))
    return {**_times(built, each, len(x)), "drift": float(np.hypot(*(w.positions[-1] - top0))), "overlap": deepest}


def _times(built: float, each: np.ndarray, bodies: int) -> dict:
    """The whole run (s: building the scene and every step), its first step and the mean of the others (ms),
    and body-steps per second over the whole run."""
    total = built + float(each.sum())
    rest = 1e3 * float(each[1:].mean()) if len(each) > 1 else math.nan
    return {"total": total, "first": 1e3 * float(each[0]), "rest": rest, "rate": bodies * len(each) / total}


def _pymunk(rows: int, steps: int, every: int) -> dict | None:
    try:
        import pymunk
    except ImportError:
        return None
    built = time.perf_counter()
    space = pymunk.Space()
    space.gravity = (0, -G)
    floor = pymunk.Segment(space.static_body, (-1e3, 0), (1e3, 0), 0.0)
    floor.friction, floor.elasticity = FRICTION, 0.0
    space.add(floor)
    bodies = []
    for x, y in _boxes(rows):
        body = pymunk.Body(1.0, pymunk.moment_for_box(1.0, (1.0, 1.0)))
        body.position = (x, y)
        shape = pymunk.Poly.create_box(body, (1.0, 1.0))
        shape.friction, shape.elasticity = FRICTION, 0.0
        space.add(body, shape)
        bodies.append(body)
    built = time.perf_counter() - built
    top0 = np.array(bodies[-1].position)
    each = np.empty(steps)
    for k in range(steps):
        start = time.perf_counter()
        space.step(DT)
        each[k] = time.perf_counter() - start
    top = np.array(bodies[-1].position)
    return {**_times(built, each, len(bodies)), "drift": float(np.hypot(*(top - top0))),
            "overlap": float(top0[1] - top[1])}  # fmt: skip


def _hopper(seconds: float) -> dict:
    """carom only: 15 boxes (0.5 x 0.3 m) and 15 disks (R = 0.2 m) in a 4 m wide bin, dropped from a loose
    lattice with random spins, e = 0.2, friction 0.5, at 60 Hz: wall time, mean speed at the end (m/s; at
    rest below 1% of sqrt(g d) = 0.02), and the largest rise of the total energy in one step (J)."""
    import carom

    w = carom.World(dim=2, gravity=(0, -G))
    for point, normal in (((0, 0), (0, 1)), ((-2, 0), (1, 0)), ((2, 0), (-1, 0))):
        w.add_wall(point, normal, restitution=0.2, static_friction=0.5)
    rng = np.random.default_rng(1)
    for r in range(6):
        for c in range(5):
            x, y = -1.6 + 0.8 * c + 0.1 * rng.random(), 0.5 + 0.8 * r
            if (r + c) % 2:
                w.add_rectangle(0.5, 0.3, (x, y), angle=rng.random(), angular_velocity=rng.normal(), mass=1.0,
                                restitution=0.2, static_friction=0.5)  # fmt: skip
            else:
                w.add_body((x, y), velocity=(rng.normal(), 0), mass=1.0, radius=0.2, restitution=0.2,
                           static_friction=0.5)  # fmt: skip
    energy, gain, elapsed = w.total_energy(), 0.0, 0.0
    for _ in range(round(seconds / DT)):
        start = time.perf_counter()
        w.step(DT)
        elapsed += time.perf_counter() - start
        now = w.total_energy()
        gain, energy = max(gain, now - energy), now
    return {"wall": elapsed, "speed": float(np.linalg.norm(w.velocities, axis=1).mean()), "gain": gain}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--every", type=int, default=30, help="carom's overlaps are measured every this many steps")
    parser.add_argument("--hopper", type=float, default=10.0, help="seconds of the hopper (0: skip it)")
    args = parser.parse_args()
    _carom(3, 3, 1)  # loads carom's compiled kernels (about a second), which no timed step should pay for
    _carom(3, 3, 1, sleep=True)
    print(f"{'engine':>15} {'rows':>5} {'boxes':>6} {'whole s':>8} {'first ms':>9} {'rest ms':>8} "
          f"{'body-steps/s':>13} {'top drift m':>12} {'overlap m':>10}")  # fmt: skip
    for rows in args.rows:
        boxes = rows * (rows + 1) // 2
        runs = (("carom", _carom), ("carom, sleeping", lambda *a: _carom(*a, sleep=True)), ("pymunk", _pymunk))
        for name, run in runs:
            out = run(rows, args.steps, args.every)
            if out is None:
                print(f"{name:>15} {rows:>5} {boxes:>6}   (not installed)")
                continue
            print(f"{name:>15} {rows:>5} {boxes:>6} {out['total']:8.2f} {out['first']:9.2f} {out['rest']:8.3f} "
                  f"{out['rate']:13.3g} {out['drift']:12.3g} {out['overlap']:10.3g}")  # fmt: skip
    if args.hopper > 0:
        out = _hopper(args.hopper)
        print(f"hopper of 15 boxes and 15 disks, {args.hopper:g} s: {out['wall']:.1f} s wall, mean speed "
              f"{out['speed']:.2g} m/s at the end, largest step gain {out['gain']:.2g} J")


if __name__ == "__main__":
    main()
