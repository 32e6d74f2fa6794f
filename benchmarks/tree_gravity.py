"""Tree gravity side by side: carom's Barnes–Hut tree against REBOUND's tree and carom's direct sum.

A Plummer sphere (G = 1, total mass 1, scale radius 1, seeded; no softening) of n bodies. Each code
evaluates the force once per repetition, and the best of ``--repeat`` wall times (after one untimed
evaluation that compiles and warms the caches) is reported:
- carom tree: ``NBodyGravity(G=1, tree=True, opening_angle=theta).accelerate`` on a `World` of the bodies
  (building the tree and walking it);
- REBOUND tree: ``sim.gravity = "tree"``, ``sim.opening_angle2 = theta^2`` (its criterion, cell width over
  the distance to the cell's centre of mass, is carom's), in one root box that holds every body; one
  ``leapfrog`` step with ``dt = 0`` (no body moves, so it is one tree update and one force evaluation);
- carom direct: ``NBodyGravity(G=1)`` (tree=False), up to ``--direct-max`` bodies.
The error of each tree is ``|a_tree - a_direct| / |a_direct|`` per body, with the direct sum evaluated for
all bodies up to 10,000 and for a random sample of 1,000 above.

REBOUND (``rebound>=4``, in the ``bench`` extra) is imported only here and skipped with a message when
missing.

    python benchmarks/tree_gravity.py                 # n = 1e4, 1e5
    python benchmarks/tree_gravity.py --million       # and n = 1e6
"""

from __future__ import annotations

import argparse
import ctypes
import time

import numpy as np

import carom
from carom.forces import _nbody_accel  # the direct sum for a sample of bodies

SAMPLE = 1000  # bodies whose direct-sum force is the reference above FULL bodies
FULL = 10_000


def plummer(n: int, seed: int = 0) -> np.ndarray:
    """(n, 3) positions of a Plummer sphere of unit scale radius (inverse of its cumulative mass profile)."""
    rng = np.random.default_rng(seed)
    r = 1.0 / np.sqrt(rng.uniform(1e-12, 1.0, n) ** (-2.0 / 3.0) - 1.0)
    u = rng.normal(size=(n, 3))
    return r[:, None] * u / np.linalg.norm(u, axis=1)[:, None]


def best_time(call, repeat: int) -> float:
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def carom_world(x: np.ndarray) -> carom.World:
    world = carom.World(dim=3)
    world.add_bodies(x, masses=np.full(len(x), 1.0 / len(x)), radii=1e-9)
    return world


def carom_accel(world: carom.World, force: carom.NBodyGravity) -> np.ndarray:
    out = np.zeros((world.n_bodies, 3))
    force.accelerate(world, 0.0, out)
    return out


def rebound_tree(x: np.ndarray, theta: float):
    """A REBOUND simulation of the bodies with its tree (or None when REBOUND is missing), and a function that
    evaluates the force once and returns the (n, 3) accelerations."""
    try:
        import rebound
        from rebound.particle import Particle
    except ImportError:
        return None
    sim = rebound.Simulation()
    sim.gravity = "tree"
    sim.opening_angle2 = theta**2
    sim.root_size = 2.0 * 1.001 * float(np.abs(x).max())
    sim.N_root_x = sim.N_root_y = sim.N_root_z = 1
    sim.integrator = "leapfrog"
    sim.dt = 0.0
    m = 1.0 / len(x)
    for p in x:
        sim.add(m=m, x=p[0], y=p[1], z=p[2])
    doubles = ctypes.sizeof(Particle) // 8  # x y z vx vy vz ax ay az m r ...

    def step() -> np.ndarray:
        sim.steps(1)
        address = ctypes.addressof(sim._particles.contents)
        raw = np.ctypeslib.as_array((ctypes.c_double * (sim.N * doubles)).from_address(address))
        return raw.reshape(sim.N, doubles)[:, 6:9].copy()

    return step


def direct_reference(world: carom.World, rows: np.ndarray) -> np.ndarray:
    """Direct-sum accelerations of bodies ``rows`` (their forces from every body)."""
    movable = np.zeros(world.n_bodies, bool)
    movable[rows] = True
    out = np.zeros((world.n_bodies, 3))
    _nbody_accel(world.positions, world.masses, world.active, movable, 1.0, 0.0, out)
    return out[rows]


def errors(a: np.ndarray, exact: np.ndarray) -> tuple[float, float]:
    e = np.linalg.norm(a - exact, axis=1) / np.linalg.norm(exact, axis=1)
    return float(np.median(e)), float(e.max())


def measure(n: int, theta: float, repeat: int, direct_max: int) -> dict:
    x = plummer(n)
    world = carom_world(x)
    rows = np.arange(n) if n <= FULL else np.sort(np.random.default_rng(1).choice(n, SAMPLE, replace=False))
    exact = direct_reference(world, rows)
    tree = carom.NBodyGravity(G=1.0, tree=True, opening_angle=theta)
    row = {"n": n, "tree_s": best_time(lambda: carom_accel(world, tree), repeat)}
    row["tree_err"] = errors(carom_accel(world, tree)[rows], exact)
    step = rebound_tree(x, theta)
    if step is not None:
        row["rebound_s"] = best_time(step, repeat)
        row["rebound_err"] = errors(step()[rows], exact)
    if n <= direct_max:
        direct = carom.NBodyGravity(G=1.0)
        row["direct_s"] = best_time(lambda: carom_accel(world, direct), repeat)
    return row


def cell(row: dict, key: str, fmt: str) -> str:
    value = row.get(key)
    if value is None:
        return "-"
    return f"{value[0]:{fmt}} / {value[1]:{fmt}}" if isinstance(value, tuple) else f"{value:{fmt}}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="also n = 1e6")
    parser.add_argument("--theta", type=float, default=0.5, help="opening angle (default 0.5)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--direct-max", type=int, default=FULL, help="largest n for the direct sum")
    args = parser.parse_args()
    sizes = args.sizes + ([1_000_000] if args.million else [])
    try:
        import rebound

        print(f"REBOUND {rebound.__version__}; carom {carom.__version__}; opening angle {args.theta}")
    except ImportError:
        print("REBOUND is not installed (pip install 'carom[bench]'): its column is skipped")
    print(f"{'n':>9} | {'carom tree s':>12} | {'REBOUND tree s':>14} | {'carom direct s':>14} | "
          f"{'carom tree error median / max':>30} | {'REBOUND error median / max':>27}")  # fmt: skip
    for n in sizes:
        row = measure(n, args.theta, args.repeat, args.direct_max)
        print(f"{n:>9} | {cell(row, 'tree_s', '.3f'):>12} | {cell(row, 'rebound_s', '.3f'):>14} | "
              f"{cell(row, 'direct_s', '.3f'):>14} | {cell(row, 'tree_err', '.1e'):>30} | "
              f"{cell(row, 'rebound_err', '.1e'):>27}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
