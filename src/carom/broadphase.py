"""Broad phase: which pairs of bodies could touch within the coming interval.

Cell lists on a spatial hash. Every *small* body sweeps a sphere of radius ``R + margin`` around its
position at the start of the interval, with one common ``margin`` (m) that bounds how far any small
body can travel in it; a pair is a candidate when the two swept spheres overlap. Cells are as wide as the
largest swept diameter, so candidates lie in the 3^d cells around a body: O(n) work for uniform density.
*Large* bodies (planets, fixed obstacles, bullets — whose swept sphere is far larger than the typical
one) would make cells huge; they are instead paired with every other body: O(n) per large body.

The result is a symmetric neighbour list in CSR form: the candidates of body i are
``neighbours[start[i]:start[i + 1]]``, in increasing id order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Bodies whose swept radius exceeds this many times the median are "large" (paired with all).
LARGE_FACTOR = 4.0

_PRIMES = (73856093, 19349663, 83492791)


@njit(cache=True)
def _cell_of(x, origin, inv_cell, out):
    for d in range(len(x)):
        out[d] = np.int64(np.floor((x[d] - origin[d]) * inv_cell))


@njit(cache=True)
def _hash(cell, table_size):
    h = np.int64(0)
    for d in range(len(cell)):
        h ^= cell[d] * np.int64(_PRIMES[d])
    return h % table_size


@njit(cache=True)
def _candidates(position, radius, active, large, margin, cell_size):
    """Symmetric candidate lists (CSR: start, neighbours) for the active bodies."""
    n, dim = position.shape
    origin = np.zeros(dim)
    for i in range(n):
        if active[i]:
            for d in range(dim):
                origin[d] = position[i, d]
            break
    inv_cell = 1.0 / cell_size
    table_size = max(1, 2 * n)
    cells = np.zeros((n, dim), dtype=np.int64)
    bucket = np.full(n, -1, dtype=np.int64)
    count = np.zeros(table_size + 1, dtype=np.int64)
    for i in range(n):
        if active[i] and not large[i]:
            _cell_of(position[i], origin, inv_cell, cells[i])
            bucket[i] = _hash(cells[i], table_size)
            count[bucket[i] + 1] += 1
    for b in range(table_size):
        count[b + 1] += count[b]
    members = np.empty(max(1, count[table_size]), dtype=np.int64)
    fill = count[:-1].copy()
    for i in range(n):
        if bucket[i] >= 0:
            members[fill[bucket[i]]] = i
            fill[bucket[i]] += 1
    large_ids = np.flatnonzero(large & active)
    degree = np.zeros(n + 1, dtype=np.int64)
    neighbours = np.empty(0, dtype=np.int64)
    probe = np.empty(dim, dtype=np.int64)
    offsets = 3**dim
    # pass 0 counts, pass 1 fills
    for fill_pass in range(2):
        cursor = degree[:-1].copy()
        for i in range(n):
            if not active[i]:
                continue
            if large[i]:
                for j in range(n):
                    if j != i and active[j]:
                        if fill_pass:
                            neighbours[cursor[i]] = j
                            cursor[i] += 1
                        else:
                            degree[i + 1] += 1
                continue
            for j in large_ids:
                if fill_pass:
                    neighbours[cursor[i]] = j
                    cursor[i] += 1
                else:
                    degree[i + 1] += 1
            for o in range(offsets):
                rest = o
                for d in range(dim):
                    probe[d] = cells[i, d] + (rest % 3) - 1
                    rest //= 3
                b = _hash(probe, table_size)
                for m in range(count[b], count[b + 1]):
                    j = members[m]
                    if j == i:
                        continue
                    same = True
                    for d in range(dim):
                        if cells[j, d] != probe[d]:
                            same = False
                            break
                    if not same:
                        continue
                    reach = radius[i] + radius[j] + 2.0 * margin
                    dist2 = 0.0
                    for d in range(dim):
                        dist2 += (position[i, d] - position[j, d]) ** 2
                    if dist2 <= reach * reach:
                        if fill_pass:
                            neighbours[cursor[i]] = j
                            cursor[i] += 1
                        else:
                            degree[i + 1] += 1
        if fill_pass == 0:
            for i in range(n):
                degree[i + 1] += degree[i]
            neighbours = np.empty(degree[n], dtype=np.int64)
    for i in range(n):
        neighbours[degree[i] : degree[i + 1]].sort()
    return degree, neighbours


def candidates(position, radius, active, motion_bound, safety):
    """Candidate lists for the next interval, given each body's displacement bound ``motion_bound`` (m).

    Returns ``(start, neighbours, margin, large)``: the common sweep margin of small bodies (m) and the
    mask of large bodies. A small body that moves farther than ``margin`` from where it was must trigger
    a rebuild.
    """
    n = len(radius)
    swept = radius + safety * motion_bound
    live = active.copy()
    large = np.zeros(n, dtype=np.bool_)
    if live.any():
        large = live & (swept > LARGE_FACTOR * np.median(swept[live]))
    small = live & ~large
    margin = float(safety * motion_bound[small].max()) if small.any() else 0.0
    cell = 2.0 * (float(radius[small].max()) + margin) if small.any() else 1.0
    start, neighbours = _candidates(position, radius, live, large, margin, cell)
    return start, neighbours, margin, large
