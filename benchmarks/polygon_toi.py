"""Time of impact of rotating polygons (carom.narrowphase.rotation): advancement steps per search and cost
per call, over random convex polygons, disks, capsules and walls with random poses, velocities, spins and horizons
(the distribution of tests/test_polygon_toi.py), over the hard cases of the tests (a thin plate at
1 km/s spinning at 2000 rad/s; a rod at 100 rad/s grazing a disk), and over pairs that touch at the start
(the next new contact: a box leaving a floor, a box turned about a resting corner, a disk rolling)."""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from carom.narrowphase.rotation import (
    Shape,
    default_slack,
    disk,
    motion,
    pair_contact_time,
    polygon,
    wall,
    wall_contact_time,
)


def _random_shape(rng):
    kind = rng.random()
    if kind < 1 / 4:
        return disk(rng.uniform(0.05, 1.0))
    if kind < 1 / 2:  # a capsule: a rounded segment
        half = rng.uniform(0.05, 1.0)
        return Shape(np.array([[-half, 0.0], [half, 0.0]]) + rng.uniform(-0.1, 0.1), rng.uniform(0.01, 0.3))
    k = rng.integers(3, 9)
    gaps = rng.uniform(0.2, 1.0, k)
    angles = np.cumsum(gaps) / gaps.sum() * 2 * math.pi
    rx, ry = rng.uniform(0.1, 1.0), rng.uniform(0.02, 1.0)
    return polygon(np.column_stack([rx * np.cos(angles), ry * np.sin(angles)]) + rng.uniform(-0.1, 0.1, 2))


def random_case(rng):
    """One search: (kernel, its arguments) as in the hypothesis test."""
    horizon = rng.uniform(0.01, 2.0)
    shape_a = _random_shape(rng)
    start_b = rng.uniform(-1.0, 1.0, 2)
    start_a = start_b + np.array([rng.uniform(-3, 3), rng.uniform(2.5, 4.0)])
    velocity = (start_b - start_a) / horizon * rng.uniform(0.5, 2.0) + rng.uniform(-1, 1, 2)
    motion_a = motion(start_a, velocity, rng.uniform(-5, 5, 2), rng.uniform(-3, 3), rng.uniform(-30, 30))
    if rng.random() < 1 / 3:
        line = wall((0.0, start_b[1] - 1.0), (rng.uniform(-0.5, 0.5), 1.0))
        slack = default_slack(shape_a, motion_a, line)
        args = (shape_a.vertices, shape_a.radius, motion_a, line.point, line.normal, horizon, slack, 0.0, 10_000)
        return wall_contact_time, args
    shape_b = _random_shape(rng)
    accel_b = motion_a[4:6] if rng.random() < 0.5 else (0.0, 0.0)  # the same gravity, or a fixed body
    motion_b = motion(start_b, rng.uniform(-2, 2, 2), accel_b, rng.uniform(-3, 3), rng.uniform(-30, 30))
    slack = default_slack(shape_a, motion_a, shape_b, motion_b)
    args = (shape_a.vertices, shape_a.radius, motion_a, shape_b.vertices, shape_b.radius, motion_b, horizon, slack,
            0.0, 10_000)  # fmt: skip
    return pair_contact_time, args


def _rectangle(width, height):
    w, h = 0.5 * width, 0.5 * height
    return polygon([(-w, -h), (w, -h), (w, h), (-w, h)])


def hard_cases():
    plate, thin_wall, rod, ball = _rectangle(0.001, 0.1), _rectangle(0.001, 1.0), _rectangle(1.0, 0.01), disk(0.05)
    plate_motion = motion((0.0, 0.0), (1000.0, 0.0), angle=1.2, angular_velocity=2000.0)
    wall_motion = motion((0.3, 0.2))
    rod_motion = motion((0.0, 0.0), angle=0.4, angular_velocity=100.0)
    cases = {}
    for name, (a, ma, b, mb, h) in {
        "plate 1 km/s, 2000 rad/s vs thin wall, h = 1 s": (plate, plate_motion, thin_wall, wall_motion, 1.0),
        "rod 100 rad/s vs disk 1 um inside its sweep": (rod, rod_motion, ball, None, 0.1),
        "rod 100 rad/s vs disk 1 um outside its sweep": (rod, rod_motion, ball, None, 0.1),
    }.items():
        if mb is None:
            centre = math.hypot(0.5, 0.005) + 0.05 + (-1e-6 if "inside" in name else 1e-6)
            mb = motion((centre * math.cos(2.0), centre * math.sin(2.0)))
        slack = default_slack(a, ma, b, mb)
        cases[name] = (pair_contact_time, (a.vertices, a.radius, ma, b.vertices, b.radius, mb, h, slack, 0.0, 10_000))
    return cases


def touching_cases():
    """Pairs that touch at 0, against a floor wall and a fixed floor box (top face y = 0)."""
    box, floor_box, ball = _rectangle(1.0, 0.5), _rectangle(20.0, 1.0), disk(0.3)
    pivoted = polygon([(-0.8, 0.0), (0.0, 0.0), (0.0, 0.5), (-0.8, 0.5)])  # frame origin at a corner
    floor, floor_motion = wall((0.0, 0.0), (0.0, 1.0)), motion((0.0, -0.5))
    corner_down = 0.5 * math.sin(0.3) + 0.25 * math.cos(0.3)  # the lower-left corner on the floor
    leaving = motion((0.0, corner_down), velocity=(1.0, 2.4), acceleration=(0.0, -9.81), angle=0.3,
                     angular_velocity=-2.0)  # fmt: skip
    scenes = {
        "box leaving a floor on one corner, -2 rad/s": (box, leaving, 1.0),
        "box turned about a resting corner, -3 rad/s": (pivoted, motion((0.7, 0.0), angular_velocity=-3.0), 1.0),
        "disk rolling on a floor at 2 m/s": (ball, motion((0.0, 0.3), (2.0, 0.0), angular_velocity=-2.0 / 0.3), 1.0),
    }
    cases = {}
    for name, (shape, m, h) in scenes.items():
        slack = default_slack(shape, m, floor)
        cases[name + ", wall"] = (wall_contact_time, (shape.vertices, shape.radius, m, floor.point, floor.normal, h,
                                                      slack, 0.0, 10_000))  # fmt: skip
        slack = default_slack(shape, m, floor_box, floor_motion)
        cases[name + ", box"] = (pair_contact_time, (shape.vertices, shape.radius, m, floor_box.vertices, 0.0,
                                                     floor_motion, h, slack, 0.0, 10_000))  # fmt: skip
    return cases


def _timed(kernel, args, repeats):
    kernel(*args)
    start = time.perf_counter()
    for _ in range(repeats):
        found = kernel(*args)
    return (time.perf_counter() - start) / repeats * 1e6, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    rng = np.random.default_rng(options.seed)
    rows = []
    for _ in range(options.cases):
        kernel, args = random_case(rng)
        us, (t, _, iterations) = _timed(kernel, args, 5)
        rows.append((kernel is wall_contact_time, t < math.inf, iterations, us))
    table = np.array(rows, dtype=float)
    print(f"{options.cases} random searches (seed {options.seed}); steps per search, and us per call")
    print(f"{'':24}{'count':>7}{'median':>8}{'p90':>6}{'p99':>6}{'max':>6}{'us median':>11}{'us p99':>8}{'us max':>8}")
    for label, wall_mask, hit_mask in [("pair, contact", 0, 1), ("pair, none", 0, 0), ("wall, contact", 1, 1),
                                       ("wall, none", 1, 0)]:  # fmt: skip
        part = table[(table[:, 0] == wall_mask) & (table[:, 1] == hit_mask)]
        if len(part) == 0:
            continue
        it, us = part[:, 2], part[:, 3]
        print(f"{label:24}{len(part):7d}{np.median(it):8.0f}{np.percentile(it, 90):6.0f}{np.percentile(it, 99):6.0f}"
              f"{it.max():6.0f}{np.median(us):11.2f}{np.percentile(us, 99):8.2f}{us.max():8.2f}")  # fmt: skip
    for title, cases in [("hard cases", hard_cases()), ("touching at the start", touching_cases())]:
        print(f"\n{title}")
        for name, (kernel, args) in cases.items():
            us, (t, _, iterations) = _timed(kernel, args, 50)
            print(f"  {name:53} t = {t:.12g} s, {iterations} steps, {us:.2f} us")


if __name__ == "__main__":
    main()
