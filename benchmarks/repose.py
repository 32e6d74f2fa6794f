"""Angles of repose: heaps of bodies poured one at a time, with friction and without.

Each heap is `carom.canonical.poured_heap`: a rough floor (a row, in 3D a square grid, of fixed bodies of
radius R = 0.05 m, touching, on a wall), bodies of 0.8 to 1.2 R (1 kg, restitution 0.3) dropped at rest
from 1.5 R above the top of the heap near its axis, one every 0.1 s, at dt = 1/60 s, then left until every
speed is below 1 mm/s (or 20 s more). `carom.canonical.heap_angle` fits a tent (2D) or a cone (3D)
``z = h - s |x - x0|`` to the heap's surface (the highest body of each column 2 R_max wide, above the first
layer) and reports ``atan s``. Each heap is built with friction (``--friction``, rolling resistance
``--rolling``, in 3D spinning friction ``--spinning``) and smooth; it prints the angle, the simulated and
wall time, and the fastest body at the end (a smooth body that leaves the rough floor slides on along the
wall, rightly; it is not part of the heap's surface).

    python benchmarks/repose.py --n 300 --dim 2 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from carom.canonical import heap_angle, poured_heap

RADIUS = 0.05


def heap(n: int, dim: int, friction: float, rolling: float, spinning: float) -> dict:
    start = time.perf_counter()
    w = poured_heap(n, dim=dim, friction=friction, rolling_resistance=rolling,
                    spinning_friction=spinning if dim == 3 else 0.0, radius=RADIUS)  # fmt: skip
    wall = time.perf_counter() - start
    poured = slice(len(w.positions) - n, None)
    fastest = float(np.linalg.norm(w.velocities, axis=1).max())
    return {"angle": heap_angle(w.positions[poured], w.radii[poured], base=2 * RADIUS), "time": w.time,
            "wall": wall, "fastest": fastest}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="bodies per heap")
    parser.add_argument("--dim", type=int, choices=(2, 3), nargs="+", default=[2, 3])
    parser.add_argument("--friction", type=float, default=0.5)
    parser.add_argument("--rolling", type=float, default=0.1, help="rolling resistance")
    parser.add_argument("--spinning", type=float, default=0.1, help="spinning friction (3D)")
    args = parser.parse_args()
    print("| heap | friction | angle of repose, degrees | simulated s | wall s | fastest body at the end, m/s |")
    print("|---|---|---:|---:|---:|---:|")
    for dim in args.dim:
        kind = "disks" if dim == 2 else "spheres"
        rough = f"mu = {args.friction}, rolling {args.rolling}" + (f", spinning {args.spinning}" if dim == 3 else "")
        for label, mu, rolling, spinning in ((rough, args.friction, args.rolling, args.spinning),
                                             ("smooth", 0.0, 0.0, 0.0)):  # fmt: skip
            out = heap(args.n, dim, mu, rolling, spinning)
            print(f"| {args.n} {kind} | {label} | {out['angle']:.1f} | {out['time']:.1f} | {out['wall']:.1f} | "
                  f"{out['fastest']:.1e} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
