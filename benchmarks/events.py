"""Event-driven engine benchmark: a 3D monodisperse elastic hard-sphere gas (reduced units, sigma = m =
kT = 1) in a periodic box, one process per case. Reports collisions per second (one core; over the whole
run, and the lowest and highest over its fifths, which show the host's noise), events per second
(including cell crossings), peak memory, and the relative energy change; then the cost per collision
against n, beside the growth of log n."""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import math
import multiprocessing as mp
import resource
import time


def _case(n: int, phi: float, until: float) -> dict:
    from carom.canonical import hard_sphere_gas

    w = hard_sphere_gas(n, phi, seed=1)
    w.run(until=0.05)  # compile and leave the lattice
    e0, c0, ev0, t0 = w.kinetic_energy(), w.collision_count, w.event_count, w.time
    start = time.perf_counter()
    fifths = []  # collisions/s over each fifth of the run: the spread shows the host's noise
    for k in range(1, 6):
        since, done = time.perf_counter(), w.collision_count
        w.run(until=t0 + until * k / 5)
        fifths.append((w.collision_count - done) / (time.perf_counter() - since))
    wall = time.perf_counter() - start
    return {
        "n": n,
        "phi": phi,
        "t": until,
        "collisions": w.collision_count - c0,
        "collisions/s": (w.collision_count - c0) / wall,
        "fifths": (min(fifths), max(fifths)),
        "events/s": (w.event_count - ev0) / wall,
        "us/collision": 1e6 * wall / max(1, w.collision_count - c0),
        "peak MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "dE/E": (w.kinetic_energy() - e0) / e0,
    }


def _warm_up() -> tuple[float, float]:
    """Seconds and peak MB to get the engine's kernels ready: compiled, when Numba's cache is cold (once
    per install), or loaded from it."""
    start = time.perf_counter()
    from carom.canonical import hard_sphere_gas

    hard_sphere_gas(500, 0.3, seed=1).run(until=0.05)
    return time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _isolated(fn, *args):
    with cf.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        cases = [(4_000, 0.30, 2.0), (4_000, 0.45, 1.0)]
    else:  # n = 32,000 to t = 20 as specified; for the scaling, 4,000 (in cache) and larger n over shorter times
        cases = [(32_000, 0.30, 20.0), (32_000, 0.45, 20.0), (4_000, 0.30, 100.0), (100_000, 0.30, 3.0),
                 (1_000_000, 0.30, 0.3), (4_000_000, 0.30, 0.15)]  # fmt: skip
    seconds, peak_mb = _isolated(_warm_up)  # in a process of its own, so that peak memory below is the run's
    print(f"Event engine kernels ready in {seconds:.1f} s (peak {peak_mb:.0f} MB): compiled if Numba's cache was "
          "cold, else loaded from it.\n")  # fmt: skip
    print("| event engine: 3D elastic gas | n | phi | t | collisions | collisions/s | fifths: min–max | events/s | "
          "µs/collision | peak MB | ΔE/E |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    cost = {}  # n -> µs per collision at phi = 0.3
    for n, phi, until in cases:
        r = _isolated(_case, n, phi, until)
        if phi == 0.30:
            cost[n] = r["us/collision"]
        row = (
            f"| periodic box | {n:,} | {phi} | {until} | {r['collisions']:,} | {r['collisions/s']:.3g} | "
            f"{r['fifths'][0]:.3g}–{r['fifths'][1]:.3g} | "
            f"{r['events/s']:.3g} | {r['us/collision']:.3g} | {r['peak MB']:.0f} | {r['dE/E']:.1e} |"
        )
        print(row, flush=True)
    if 32_000 in cost:
        print("\n| phi = 0.3: n | µs/collision | relative to n = 32,000 | log n relative |")
        print("|---:|---:|---:|---:|")
        for n in sorted(cost):
            print(f"| {n:,} | {cost[n]:.3g} | {cost[n] / cost[32_000]:.2f}x | {math.log(n) / math.log(32_000):.2f}x |")


if __name__ == "__main__":
    main()
