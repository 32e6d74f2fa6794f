"""The impact law of planar rigid bodies (carom.contact.rigid): us per impact (one `resolve_rounds` call, every
round of it) for K = 1, 2 and 4 contact points, with and without friction, against walls and between free
bodies. The scenes are boxes (1 m x 0.5 m, 2 kg, e = 0.5) landing:

- K = 1: on one corner, turned 30 degrees;
- K = 2: flat, on a floor (walls) or on a free box (pairs);
- K = 4: flat into the corner of a floor and a side wall (walls), or flat across two free boxes (pairs).

With friction (mu = 0.6) each box also slides at 1 m/s along the surface it meets."""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from carom.contact.rigid import resolve_rounds

MASS, WIDTH, HEIGHT, RESTITUTION, FRICTION = 2.0, 1.0, 0.5, 0.5, 0.6
INERTIA = MASS * (WIDTH**2 + HEIGHT**2) / 12


def _scene(position, velocity, contacts, mu):
    """Arrays of `resolve_rounds` for boxes at ``position`` moving at ``velocity``; ``contacts`` (i, j, point,
    normal) rows."""
    n = len(position)
    ci = np.array([c[0] for c in contacts], dtype=np.int64)
    cj = np.array([c[1] for c in contacts], dtype=np.int64)
    point = np.array([c[2] for c in contacts], dtype=float)
    normal = np.array([c[3] for c in contacts], dtype=float)
    k = len(contacts)
    return (ci, cj, point, normal, np.full(k, RESTITUTION), np.full(k, mu), np.array(position, dtype=float),
            np.array(velocity, dtype=float), np.zeros(n), np.full(n, 1 / MASS), np.full(n, 1 / INERTIA))  # fmt: skip


def scenes(mu):
    """(name, arrays) of the six scenes with friction ``mu`` (a slide of 1 m/s along the surface when mu > 0)."""
    slide = 1.0 if mu > 0 else 0.0
    c, s = math.cos(math.pi / 6), math.sin(math.pi / 6)
    corner = (-0.5 * c + 0.25 * s, -0.5 * s - 0.25 * c)
    down = (0.0, -1.0)
    w, h = WIDTH / 2, HEIGHT / 2
    return {
        "walls K=1 (corner)": _scene([(0, 0)], [(slide, -3)], [(0, -1, corner, down)], mu),
        "walls K=2 (flat)": _scene([(0, 0)], [(slide, -3)], [(0, -1, (-w, -h), down), (0, -1, (w, -h), down)], mu),
        "walls K=4 (flat in a corner)": _scene(
            [(0, 0)],
            [(-2.0, -3.0 + slide)],
            [(0, -1, (-w, -h), down), (0, -1, (w, -h), down), (0, -1, (-w, -h), (-1, 0)), (0, -1, (-w, h), (-1, 0))],
            mu,
        ),
        "pairs K=1 (corner on a face)": _scene(
            [(-corner[0], h - corner[1]), (0.1, 0)], [(slide, -3), (0, 0)], [(0, 1, (0, h), down)], mu
        ),
        "pairs K=2 (flat on a box)": _scene(
            [(0.2, 2 * h), (0, 0)], [(slide, -3), (0, 0)], [(0, 1, (0.2 - w, h), down), (0, 1, (w, h), down)], mu
        ),
        "pairs K=4 (flat on two boxes)": _scene(
            [(0.5, 2 * h), (0, 0), (1.0, 0)],
            [(slide, -3), (0, 0), (0, 0)],
            [(0, 1, (0, h), down), (0, 1, (w, h), down), (0, 2, (w, h), down), (0, 2, (2 * w, h), down)],
            mu,
        ),
    }


def time_impact(arrays, repeats, loops):
    """Best over ``repeats`` of the mean us per `resolve_rounds` call over ``loops`` calls (the velocities are
    reset before each call: two small copies, inside the timing), and the rounds used."""
    ci, cj, point, normal, e, mu, x, v0, w0, inv_mass, inv_inertia = arrays
    v, w = v0.copy(), w0.copy()
    impulse = np.zeros((len(ci), 2))
    rounds = resolve_rounds(ci, cj, point, normal, e, mu, x, v, w, inv_mass, inv_inertia, impulse, 20, 4096)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            v[:] = v0
            w[:] = w0
            resolve_rounds(ci, cj, point, normal, e, mu, x, v, w, inv_mass, inv_inertia, impulse, 20, 4096)
        best = min(best, (time.perf_counter() - start) / loops * 1e6)
    return best, rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; the best is reported")
    parser.add_argument("--budget", type=float, default=0.05, help="seconds per repeat (sets the loop count)")
    options = parser.parse_args()
    print(f"us per impact, best of {options.repeats}")
    print(f"{'scene':32}{'mu = 0':>12}{'mu = ' + str(FRICTION):>12}{'rounds':>8}")
    smooth, rough = scenes(0.0), scenes(FRICTION)
    for name in smooth:
        row = []
        for arrays in (smooth[name], rough[name]):
            once, rounds = time_impact(arrays, 1, 1)
            loops = max(1, int(options.budget / (once * 1e-6)))
            us, rounds = time_impact(arrays, options.repeats, loops)
            row.append((us, rounds))
        print(f"{name:32}{row[0][0]:12.2f}{row[1][0]:12.2f}{row[0][1]:>4}/{row[1][1]}")


if __name__ == "__main__":
    main()
