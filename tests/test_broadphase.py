"""Broad phase: the fast cell lists against the O(n^2) reference, on random and on awkward scenes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import naive_candidates

from carom import broadphase


def expected_large_and_margin(radius, active, motion_bound, safety):
    """The classification, from its definition: large bodies sweep more than LARGE_FACTOR times the
    median swept radius of the active bodies; the margin covers the farthest-moving small body."""
    swept = radius + safety * motion_bound
    live = np.asarray(active, dtype=bool)
    large = np.zeros(len(radius), dtype=bool)
    if live.any():
        large = live & (swept > broadphase.LARGE_FACTOR * np.median(swept[live]))
    small = live & ~large
    margin = float(safety * motion_bound[small].max()) if small.any() else 0.0
    return large, margin


def check(position, radius, active, motion_bound, safety=1.5):
    """Fast against naive: the same classification and exactly the same CSR lists."""
    position = np.asarray(position, dtype=float)
    radius = np.asarray(radius, dtype=float)
    active = np.asarray(active, dtype=bool)
    motion_bound = np.asarray(motion_bound, dtype=float)
    start, neighbours, margin, large = broadphase.candidates(position, radius, active, motion_bound, safety)
    want_large, want_margin = expected_large_and_margin(radius, active, motion_bound, safety)
    assert margin == want_margin
    np.testing.assert_array_equal(large, want_large)
    want_start, want_neighbours = naive_candidates(position, radius, active, want_large, want_margin)
    assert start.dtype == np.int64 and neighbours.dtype == np.int64
    assert start.shape == (len(radius) + 1,)
    np.testing.assert_array_equal(start, want_start)
    np.testing.assert_array_equal(neighbours, want_neighbours)
    return start, neighbours, margin, large


# ------------------------------------------------------------------ random scenes


@st.composite
def scenes(draw):
    """2D and 3D scenes: uniform gases, far-apart clusters (hashed cells), lattices at exactly touching
    distance, heaps of duplicate positions; equal or polydisperse radii, some inactive, some large."""
    dim = draw(st.sampled_from([2, 3]))
    n = draw(st.integers(0, 120))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["gas", "clusters", "lattice", "duplicates"]))
    if kind == "gas":
        side = draw(st.floats(0.5, 40.0))
        position = rng.uniform(0.0, side, (n, dim))
    elif kind == "clusters":
        spread = draw(st.floats(1e3, 1e9))
        centres = rng.uniform(-spread, spread, (draw(st.integers(1, 4)), dim))
        position = centres[rng.integers(0, len(centres), n)] + rng.uniform(0.0, 3.0, (n, dim))
    elif kind == "lattice":
        offset = draw(st.sampled_from([0.0, 1e6, -3e7]))
        position = offset + rng.integers(0, 5, (n, dim)).astype(float)
    else:
        pool = rng.uniform(0.0, 2.0, (max(1, n // 10), dim))
        position = pool[rng.integers(0, len(pool), n)]
    if kind == "lattice" or draw(st.booleans()):
        radius = np.full(n, 0.5)
    else:
        radius = rng.uniform(0.05, 1.0, n)
    if kind == "lattice" and draw(st.booleans()):
        motion_bound = np.zeros(n)  # neighbours at distance 1 = R_i + R_j exactly: candidates (<=)
    else:
        motion_bound = rng.uniform(0.0, draw(st.floats(0.0, 0.5)), n)
    if n and draw(st.booleans()):
        big = rng.integers(0, n, draw(st.integers(1, 3)))
        if draw(st.booleans()):
            motion_bound[big] = 100.0
        else:
            radius[big] = 1e3
    active = rng.random(n) >= draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    safety = draw(st.sampled_from([1.0, 1.5, 2.0]))
    return position, radius, active, motion_bound, safety


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenes())
def test_fast_matches_naive_on_random_scenes(scene):
    check(*scene)


# ------------------------------------------------------------------ awkward scenes


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_scenes(dim, n):
    check(np.zeros((n, dim)), np.full(n, 0.5), np.ones(n, dtype=bool), np.full(n, 0.1))


def test_all_inactive():
    rng = np.random.default_rng(0)
    start, neighbours, margin, large = check(rng.uniform(0, 3, (50, 3)), np.full(50, 0.5), np.zeros(50, bool),
                                             np.full(50, 0.1))  # fmt: skip
    assert margin == 0.0 and not start.any() and not len(neighbours) and not large.any()


def test_planet_and_moon_far_apart_need_no_huge_grid():
    """Two bodies 4e8 m apart with radii 1e6 m (cells of ~2e6 m): a grid of their bounding box would be
    cheap, but add a swarm of metre-sized debris around each and it would hold 1e24 cells."""
    rng = np.random.default_rng(1)
    debris = rng.normal(0, 3e6, (400, 3))
    debris[200:, 0] += 4e8
    position = np.concatenate([[[0.0, 0.0, 0.0], [4e8, 0.0, 0.0]], debris])
    radius = np.concatenate([[6.4e6, 1.7e6], np.full(400, 1.0)])
    motion = np.concatenate([[1e3, 1e3], np.full(400, 10.0)])
    large = check(position, radius, np.ones(402, bool), motion)[3]
    assert large[:2].all() and not large[2:].any()
    assert broadphase._workspace.arrays["first"].size < 100_000
    check(position[:2], radius[:2], np.ones(2, bool), motion[:2])  # the two alone: both small


def test_all_bodies_at_one_point_pair_with_all():
    n = 60
    start = check(np.full((n, 3), 7.0), np.full(n, 0.5), np.ones(n, bool), np.zeros(n))[0]
    assert np.all(np.diff(start) == n - 1)


def test_point_bodies_with_no_reach_pair_only_when_coincident():
    position = np.array([[0.0, 0.0], [0.0, 0.0], [1e-100, 0.0], [5.0, 5.0]])
    neighbours = check(position, np.zeros(4), np.ones(4, bool), np.zeros(4))[1]
    assert neighbours.tolist() == [1, 0]


def test_pair_buffer_overflow_is_regrown_and_retried():
    rng = np.random.default_rng(2)
    position = rng.uniform(0, 1.0, (300, 3))  # every pair is a candidate: 44850 pairs
    saved = broadphase._workspace.pairs_per_body
    try:
        broadphase._workspace.pairs_per_body = 0.0
        check(position, np.full(300, 0.5), np.ones(300, bool), np.full(300, 0.01))
        assert broadphase._workspace.pairs_per_body >= 44850 / 300
    finally:
        broadphase._workspace.pairs_per_body = saved


@pytest.mark.parametrize("dim", [2, 3])
def test_larger_gas_spans_many_sort_buckets(dim):
    """Enough cells and bodies that both two-level counting sorts use many coarse buckets."""
    rng = np.random.default_rng(3 + dim)
    n = 2500
    side = (n * 4.0) ** (1 / dim)
    radius = rng.uniform(0.2, 0.5, n)
    active = rng.random(n) > 0.05
    motion = rng.uniform(0, 0.05, n)
    motion[[5, 700]] = 40.0  # two large bodies, merged into every row
    check(rng.uniform(0, side, (n, dim)), radius, active, motion)


def test_far_from_origin_touching_lattice():
    """Cell coordinates computed far from the bounding-box corner still catch exact contacts."""
    grid = np.stack(np.meshgrid(np.arange(12.0), np.arange(12.0), indexing="ij"), -1).reshape(-1, 2)
    position = np.concatenate([grid, grid + np.array([3e9, -2e9])]) * 0.75
    n = len(position)
    neighbours = check(position, np.full(n, 0.375), np.ones(n, bool), np.zeros(n))[1]
    assert len(neighbours) == 2 * 2 * (2 * 12 * 11)  # nearest neighbours of two 12 x 12 lattices


def test_rejects_bad_shapes_and_positions():
    with pytest.raises(ValueError, match="position"):
        broadphase.candidates(np.zeros((3, 4)), np.ones(3), np.ones(3, bool), np.zeros(3), 1.5)
    with pytest.raises(ValueError, match="shape"):
        broadphase.candidates(np.zeros((3, 2)), np.ones(3), np.ones(2, bool), np.zeros(3), 1.5)
    position = np.zeros((3, 2))
    position[1, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        broadphase.candidates(position, np.ones(3), np.ones(3, bool), np.zeros(3), 1.5)


@pytest.mark.parametrize("spread", [30.0, 1e9])
def test_one_dimensional(spread):
    rng = np.random.default_rng(int(spread))
    n = 400
    position = rng.uniform(0, spread, (n, 1)) + rng.uniform(0, 40.0, (n, 1))
    check(position, rng.uniform(0.1, 0.5, n), rng.random(n) > 0.1, rng.uniform(0, 0.1, n))


@pytest.mark.parametrize("clustered", [False, True])
def test_dilute_scenes_widen_cells_unless_clustered(clustered):
    """A dilute gas is binned in wider cells; two dense clusters with the same bounding box would pile
    up in such cells, and are hashed instead. Both are exact."""
    rng = np.random.default_rng(11)
    n = 1200
    if clustered:
        position = rng.uniform(0, 6.0, (n, 2))
        position[n // 2 :] += 350.0
    else:
        position = rng.uniform(0, 356.0, (n, 2))
    check(position, rng.uniform(0.3, 0.5, n), np.ones(n, bool), rng.uniform(0, 0.05, n))
