"""The first run: how long carom's kernels take to compile, and which ones take it.

Run it with an empty Numba cache (delete the `__pycache__` folders under `src/carom`, or point
`NUMBA_CACHE_DIR` at a fresh folder) and under `/usr/bin/time -v` for the peak memory:

    /usr/bin/time -v python benchmarks/first_run.py [--top 25]

It runs `carom.warmup.warm_up` (small scenes that reach every kernel family of both engines, in 3D and
2D) and prints the wall time of each scene, then each kernel's own compile time (excluding the kernels it
compiled on the way) and how many type signatures it was compiled for.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from numba.core import event

from carom.warmup import warm_up


class CompileTimes(event.Listener):
    """Each dispatcher's own compile seconds (a nested compile's time is its own, not its caller's)."""

    def __init__(self):
        self.own = defaultdict(float)
        self.signatures = defaultdict(set)
        self._stack: list[list] = []  # [name, start, seconds spent in nested compiles]

    def on_start(self, ev):
        dispatcher = ev.data["dispatcher"]
        name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"
        self.signatures[name].add(tuple(ev.data["args"]))
        self._stack.append([name, time.perf_counter(), 0.0])

    def on_end(self, ev):
        name, start, nested = self._stack.pop()
        seconds = time.perf_counter() - start
        self.own[name] += seconds - nested
        if self._stack:
            self._stack[-1][2] += seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=25, help="how many kernels to list")
    args = parser.parse_args()
    times = CompileTimes()
    event.register("numba:compile", times)
    scene_start = [time.perf_counter()]

    def progress(label):
        now = time.perf_counter()
        print(f"{now - scene_start[0]:7.1f} s  then {label}", flush=True)
        scene_start[0] = now

    total = warm_up(progress=progress)
    print(f"{time.perf_counter() - scene_start[0]:7.1f} s")
    print(f"\nwarm-up: {total:.1f} s, of which compiling {sum(times.own.values()):.1f} s "
          f"({len(times.own)} kernels, {sum(map(len, times.signatures.values()))} signatures)")  # fmt: skip
    print(f"\n{'own s':>7}  sigs  kernel")
    for name, seconds in sorted(times.own.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{seconds:7.2f}  {len(times.signatures[name]):4d}  {name}")


if __name__ == "__main__":
    main()
