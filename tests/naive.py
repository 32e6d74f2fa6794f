"""Slow, obviously correct references for the fast kernels (O(n^2) and worse is fine here)."""

from __future__ import annotations

import numpy as np


def naive_candidates(position, radius, active, large, margin):
    """Broad-phase candidate lists by checking every pair; CSR ``(start, neighbours)`` as in
    ``carom.broadphase.candidates``.

    Bodies i != j, both active, are candidates when either is large, or when
    ``|x_i - x_j| <= R_i + R_j + 2 margin``, with the squared distance summed axis by axis in order and
    compared with the squared reach (the definition evaluated as written).
    """
    position = np.asarray(position, dtype=np.float64)
    radius = np.asarray(radius, dtype=np.float64)
    active = np.asarray(active, dtype=bool)
    large = np.asarray(large, dtype=bool)
    n = len(radius)
    dist2 = np.zeros((n, n))
    for d in range(position.shape[1]):
        dist2 += (position[:, None, d] - position[None, :, d]) ** 2
    reach = radius[:, None] + radius[None, :] + 2.0 * margin
    close = dist2 <= reach * reach
    either_large = large[:, None] | large[None, :]
    both_active = active[:, None] & active[None, :]
    pair = both_active & (close | either_large)
    np.fill_diagonal(pair, False)
    start = np.zeros(n + 1, dtype=np.int64)
    neighbours = []
    for i in range(n):
        row = np.flatnonzero(pair[i])  # ascending ids
        neighbours.append(row)
        start[i + 1] = start[i] + len(row)
    flat = np.concatenate(neighbours) if neighbours else np.empty(0, dtype=np.int64)
    return start, flat.astype(np.int64)
