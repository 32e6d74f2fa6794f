"""`make bench`: canonical scenes, timed, one process per case (so peak memory is per case).

Prints a Markdown table (body-steps/s, impacts/s, peak memory, energy change) for the time-stepped engine
on a 3D elastic gas (packing fraction 0.2, dt = 0.01 in reduced units) and on a 2D disk pile under
gravity (dt = 1 ms, timed from its start, while it pours and settles); then the event-driven
benchmark (benchmarks/events.py). Each case takes a few warm-up steps first (Numba compilation is not
timed) and then as many steps as fit in its time budget; the rates over each fifth of it show the spread
(the host's noise, and for the pile its physics: pouring, then settling).
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
from pathlib import Path


def _case(kind: str, n: int, budget_s: float) -> dict:
    from carom import canonical

    if kind == "gas":
        w, dt = canonical.gas(n, 0.2, dim=3, seed=1), 0.01
    else:
        w, dt = canonical.pile(n, dim=2, seed=1), 1e-3
    for _ in range(3):
        w.step(dt)
    e0, impacts0 = w.total_energy(), w.collision_count
    steps, start = 0, time.perf_counter()
    fifths = []  # body-steps/s over each fifth of the budget: the spread shows the host's noise
    while (now := time.perf_counter()) - start < budget_s:
        since, done = now, steps
        while time.perf_counter() - since < budget_s / 5 or steps == done:
            w.step(dt)
            steps += 1
        fifths.append(n * (steps - done) / (time.perf_counter() - since))
    wall = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "scene": "3D elastic gas, phi = 0.2" if kind == "gas" else "2D disk pile pouring and settling, e = 0.5",
        "n": n,
        "steps": steps,
        "body-steps/s": n * steps / wall,
        "fifths": (min(fifths), max(fifths)),
        "impacts/s": (w.collision_count - impacts0) / wall,
        "us/body-step": 1e6 * wall / (n * steps),
        "peak MB": peak_mb,
        "energy drift": (w.total_energy() - e0) / abs(e0),
    }


def _warm_up() -> tuple[float, float]:
    """Seconds and peak MB to get the time-stepped engine's kernels ready (see `events._warm_up`)."""
    from carom import canonical

    start = time.perf_counter()
    canonical.gas(200, 0.2, dim=3, seed=1).step(0.01)
    canonical.pile(200, dim=2, seed=1).step(1e-3)
    return time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes and budgets (smoke test)")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of stepping per case")
    parser.add_argument("--no-events", action="store_true", help="skip the event-driven benchmark")
    args = parser.parse_args(argv)
    gas_sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    pile_sizes = [1_000] if args.quick else [1_000, 10_000, 100_000]
    budget = 2.0 if args.quick else args.budget
    print(f"carom benchmark on {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{platform.system()}; one core per case\n")  # fmt: skip
    sys.path.insert(0, str(Path(__file__).parent))
    import events

    seconds, peak_mb = events._isolated(_warm_up)  # in a process of its own: peak memory below is the run's
    print(f"Time-stepped engine kernels ready in {seconds:.1f} s (peak {peak_mb:.0f} MB): compiled if Numba's "
          "cache was cold, else loaded from it.\n")  # fmt: skip
    print("| scene | n | steps | body-steps/s | fifths: min–max | impacts/s | µs/body-step | peak MB | "
          "ΔE/E over the run |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, sizes in (("gas", gas_sizes), ("pile", pile_sizes)):
        for n in sizes:
            r = events._isolated(_case, kind, n, budget)
            low, high = r["fifths"]
            print(f"| {r['scene']} | {n:,} | {r['steps']} | {r['body-steps/s']:.3g} | {low:.3g}–{high:.3g} | "
                  f"{r['impacts/s']:.3g} | {r['us/body-step']:.3g} | {r['peak MB']:.0f} | {r['energy drift']:.1e} |",
                  flush=True)  # fmt: skip
    if not args.no_events:
        print()
        events.main(["--quick"] if args.quick else [])


if __name__ == "__main__":
    main()
