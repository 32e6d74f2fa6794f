"""Piles side by side: carom against pymunk (2D) and pybullet (3D) on the same scene, in one process each.

The scene is `carom.canonical.pile`: n disks (spheres) dropped from a loose lattice into a box under gravity,
restitution 0.5. The peers get the same bodies, velocities and walls, friction 0.5 and their default
solver settings (pymunk: 10 iterations, no sleeping; pybullet: its defaults, sleeping after 2 s at rest);
carom's bodies are smooth (``--friction MU`` gives them and the walls Coulomb friction) and its islands
sleep (``Config.sleep_time``).
Each run simulates ``--until`` seconds at the step ``--dt`` and reports the wall time of the steps, whether
the pile is at rest at the end (mean speed below 1% of sqrt(g d), d the diameter), the deepest overlap
after any step (between bodies or against the box, a fraction of R), the largest rise of the total energy
in one step, and the body-steps per second; overlaps and energy are measured after every step, outside
the timing. A peer that is not installed is skipped (``pip install '.[bench]'`` installs both).

    python benchmarks/piles.py --n 1000 --dt 0.016667 --until 10

A landing pile is chaotic: a change of round-off moves its whole history, and with it the wall time, the
deepest overlap and the largest energy gain (docs/notes/piles.md, "Landing piles seed by seed").
``--seed 1 2 3`` runs each seed's pile in every engine, a row each (default: seed 1).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.spatial import cKDTree

FRICTION = 0.5  # the peers' Coulomb coefficient (carom's: --friction, default 0, smooth)
SCENES = {2: {"radius": 0.1, "g": 9.0}, 3: {"radius": 0.05, "g": 9.81}}


def _scene(n: int, dim: int, friction: float = 0.0, seed: int = 1):
    from carom.canonical import pile

    return pile(n, dim=dim, seed=seed, e=0.5, friction=friction, **SCENES[dim])


class _Watch:
    """What every engine is held to after every step: the deepest overlap (between bodies and against the
    box's planes, a fraction of R) and the largest rise of the total energy in one step (J: kinetic,
    rotational and m g h; unit masses, as in the scene). Measured outside the timed steps."""

    def __init__(self, radius: float, g: float, lower: np.ndarray, upper: np.ndarray):
        self.radius, self.g, self.lower, self.upper = radius, g, lower, upper
        self.deepest = 0.0
        self.gain = 0.0
        self.energy = None

    def __call__(self, x: np.ndarray, v: np.ndarray, spin_energy: float) -> None:
        r = self.radius
        walls = min(float((x - self.lower).min()), float((self.upper - x).min())) - r
        pairs = cKDTree(x).query_pairs(2.0 * r, output_type="ndarray")
        gap = np.linalg.norm(x[pairs[:, 0]] - x[pairs[:, 1]], axis=1).min() - 2.0 * r if len(pairs) else 0.0
        self.deepest = max(self.deepest, -min(walls, gap, 0.0) / r)
        energy = 0.5 * float((v * v).sum()) + spin_energy + self.g * float(x[:, -1].sum())
        if self.energy is not None:
            self.gain = max(self.gain, energy - self.energy)
        self.energy = energy


def _run(name: str, step, state, watch: _Watch, n: int, steps: int) -> dict:
    """Time ``steps`` calls of ``step()``; after each, ``state()`` -> (positions, velocities, rotational
    energy) goes to ``watch`` (untimed). Returns the row of the table."""
    wall = 0.0
    for _ in range(steps):
        start = time.perf_counter()
        step()
        wall += time.perf_counter() - start
        watch(*state())
    _, v, _ = state()
    mean_speed = float(np.linalg.norm(v, axis=1).mean())
    return {
        "engine": name,
        "wall s": wall,
        "at rest": mean_speed < 0.01 * math.sqrt(watch.g * 2.0 * watch.radius),
        "mean speed": mean_speed,
        "overlap / R": watch.deepest,
        "energy gain J": watch.gain,
        "body-steps/s": n * steps / wall,
    }


def _steps(until: float, dt: float) -> int:
    return max(1, round(until / dt))


def _watch(dim: int, ref) -> _Watch:
    return _Watch(SCENES[dim]["radius"], SCENES[dim]["g"], ref.walls.point.min(axis=0), ref.walls.point.max(axis=0))


def run_carom(n: int, dim: int, dt: float, until: float, friction: float = 0.0, seed: int = 1) -> dict:
    _scene(n, dim, friction, seed).step(dt)  # compile (or load from Numba's cache) outside the timing
    w = _scene(n, dim, friction, seed)

    def state():
        return w.positions, w.velocities, w.kinetic_energy() - 0.5 * float((w.velocities**2).sum())

    return _run("carom", lambda: w.step(dt), state, _watch(dim, w), n, _steps(until, dt))


def run_pymunk(n: int, dt: float, until: float, seed: int = 1) -> dict:
    import pymunk

    ref = _scene(n, 2, seed=seed)
    radius, g = SCENES[2]["radius"], SCENES[2]["g"]
    space = pymunk.Space()
    space.gravity = (0.0, -g)
    (x0, y0), (x1, y1) = ref.walls.point.min(axis=0), ref.walls.point.max(axis=0)
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
        wall = pymunk.Segment(space.static_body, a, b, 0.0)
        wall.elasticity, wall.friction = 0.5, FRICTION
        space.add(wall)
    bodies = []
    for x, v in zip(ref.positions, ref.velocities, strict=True):
        body = pymunk.Body(1.0, pymunk.moment_for_circle(1.0, 0.0, radius))
        body.position, body.velocity = tuple(x), tuple(v)
        shape = pymunk.Circle(body, radius)
        shape.elasticity, shape.friction = 0.5, FRICTION
        space.add(body, shape)
        bodies.append(body)

    def state():
        x = np.array([b.position for b in bodies])
        v = np.array([b.velocity for b in bodies])
        return x, v, sum(0.5 * b.moment * b.angular_velocity**2 for b in bodies)

    return _run("pymunk", lambda: space.step(dt), state, _watch(2, ref), n, _steps(until, dt))


def run_pybullet(n: int, dt: float, until: float, seed: int = 1) -> dict:
    import pybullet as pb

    ref = _scene(n, 3, seed=seed)
    radius, g = SCENES[3]["radius"], SCENES[3]["g"]
    client = pb.connect(pb.DIRECT)
    pb.setGravity(0.0, 0.0, -g, physicsClientId=client)
    pb.setTimeStep(dt, physicsClientId=client)
    lo, hi = ref.walls.point.min(axis=0), ref.walls.point.max(axis=0)
    centre, half, thick = (lo + hi) / 2, (hi - lo) / 2, 0.5
    for axis in range(3):  # six slabs just outside the box
        for side in (-1.0, 1.0):
            extent = half.copy() + thick
            extent[axis] = thick
            where = centre.copy()
            where[axis] += side * (half[axis] + thick)
            shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=extent.tolist(), physicsClientId=client)
            wall = pb.createMultiBody(0, shape, basePosition=where.tolist(), physicsClientId=client)
            pb.changeDynamics(wall, -1, restitution=0.5, lateralFriction=FRICTION, physicsClientId=client)
    sphere = pb.createCollisionShape(pb.GEOM_SPHERE, radius=radius, physicsClientId=client)
    bodies = []
    for x, v in zip(ref.positions, ref.velocities, strict=True):
        body = pb.createMultiBody(1.0, sphere, basePosition=x.tolist(), physicsClientId=client)
        pb.resetBaseVelocity(body, linearVelocity=v.tolist(), physicsClientId=client)
        pb.changeDynamics(body, -1, restitution=0.5, lateralFriction=FRICTION, physicsClientId=client)
        bodies.append(body)
    inertia = 0.4 * radius**2  # solid sphere of unit mass

    def state():
        x = np.array([pb.getBasePositionAndOrientation(b, physicsClientId=client)[0] for b in bodies])
        lin, ang = zip(*(pb.getBaseVelocity(b, physicsClientId=client) for b in bodies), strict=True)
        return x, np.array(lin), 0.5 * inertia * float((np.array(ang) ** 2).sum())

    try:
        return _run("pybullet", pb.stepSimulation, state, _watch(3, ref), n, _steps(until, dt))
    finally:
        pb.disconnect(client)


def hex_pile(n: int, radius: float = 0.1, g: float = 9.0):
    """About n disks in a settled hexagonal pile (rows touching exactly) in a 2D box, at rest, sleeping off:
    the contact structure of a pile without the cost of pouring it."""
    import carom

    cols = max(2, round(math.sqrt(n)))
    rows = max(1, n // cols)
    i, j = np.meshgrid(np.arange(cols), np.arange(rows), indexing="ij")
    x = radius + 2 * radius * i + radius * (j % 2)
    y = radius + math.sqrt(3) * radius * j
    w = carom.World(dim=2, gravity=(0, -g), config=carom.Config(sleep_time=math.inf))
    w.add_box(lower=(0, 0), upper=(2 * radius * cols + radius, y.max() + 4 * radius), restitution=0.5)
    w.add_bodies(np.column_stack([x.ravel(), y.ravel()]), np.zeros((x.size, 2)), masses=1.0, radii=radius,
                 restitution=0.5)  # fmt: skip
    return w


def scaling(sizes, dt: float) -> None:
    """Cost of a step of a settled, awake pile per contact (the contacts the solver holds), by size."""
    print("| disks | layers | contacts | ms per step | µs per contact per step |")
    print("|---:|---:|---:|---:|---:|")
    for n in sizes:
        w = hex_pile(n)
        w.step(dt)  # the first solve starts cold
        w.step(dt)
        state = w.get_state()
        contacts = len(state["pair_force"]) + int(np.count_nonzero(state["wall_force"]))
        steps = 20
        start = time.perf_counter()
        for _ in range(steps):
            w.step(dt)
        per_step = (time.perf_counter() - start) / steps
        layers = round((w.positions[:, 1].max() - 0.1) / (math.sqrt(3) * 0.1)) + 1
        print(f"| {w.n_bodies:,} | {layers} | {contacts:,} | {per_step * 1e3:.3g} | {per_step / contacts * 1e6:.3g} |",
              flush=True)  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="bodies per pile")
    parser.add_argument("--dt", type=float, default=1.0 / 60.0, help="time step, s")
    parser.add_argument("--until", type=float, default=10.0, help="simulated time, s")
    parser.add_argument("--dim", type=int, choices=(2, 3), nargs="*", default=[2, 3])
    parser.add_argument("--friction", type=float, default=0.0, help="carom's Coulomb coefficient (bodies and "
                        f"walls; the peers always have {FRICTION})")  # fmt: skip
    parser.add_argument("--seed", type=int, nargs="*", default=[1], help="the piles' random seeds, a row each "
                        "(a landing pile is chaotic: one seed's time, overlap and energy gain are one draw)")
    parser.add_argument("--scaling", type=int, nargs="*", help="instead: the cost per contact of settled "
                        "hexagonal 2D piles of these sizes, awake")  # fmt: skip
    args = parser.parse_args(argv)
    if args.scaling:
        scaling(args.scaling, args.dt)
        return
    print("| pile | engine | dt | simulated s | wall s | at rest | mean speed m/s | deepest overlap / R, any step | "
          "largest energy gain of a step, J | body-steps/s |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for dim, seed in ((dim, seed) for dim in args.dim for seed in args.seed):
        runs = [lambda dim=dim, seed=seed: run_carom(args.n, dim, args.dt, args.until, args.friction, seed)]
        peer = (run_pymunk, "pymunk") if dim == 2 else (run_pybullet, "pybullet")
        try:
            __import__(peer[1])
            runs.append(lambda peer=peer[0], seed=seed: peer(args.n, args.dt, args.until, seed))
        except ImportError:
            print(f"| {dim}D | {peer[1]}: not installed (pip install '.[bench]') | | | | | | | | |")
        label = f"{dim}D, n = {args.n:,}" + (f", seed {seed}" if args.seed != [1] else "")
        for run in runs:
            r = run()
            print(f"| {label} | {r['engine']} | {args.dt:.4g} | {args.until:g} | {r['wall s']:.3g} | "
                  f"{'yes' if r['at rest'] else 'no'} | {r['mean speed']:.2e} | {r['overlap / R']:.2e} | "
                  f"{r['energy gain J']:.2g} | {r['body-steps/s']:.3g} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
