"""The drift's indexed event heap against a brute-force reference."""

from __future__ import annotations

import random

import numpy as np

from carom.step.heap import INF, heap_build, heap_update


def test_heap_keeps_order_membership_and_positions_through_random_updates():
    rng = random.Random(1)
    n = 40
    for _ in range(200):
        times = np.array([rng.choice([INF, 0.5, rng.random()]) for _ in range(n)])
        heap_t, heap_b, where = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        size = heap_build(times, heap_t, heap_b, where)
        for _ in range(50):
            b = rng.randrange(n)
            times[b] = rng.choice([INF, 0.5, rng.random()])
            size = heap_update(heap_t, heap_b, where, size, b, times[b])
            finite = np.flatnonzero(times < INF)
            assert size == len(finite)
            assert np.all(where[times == INF] == -1)
            for p in range(size):
                assert where[heap_b[p]] == p and heap_t[p] == times[heap_b[p]]
                for c in (2 * p + 1, 2 * p + 2):
                    if c < size:
                        assert (heap_t[p], heap_b[p]) < (heap_t[c], heap_b[c])
            if size:
                first = min(finite, key=lambda k: (times[k], k))
                assert heap_b[0] == first
