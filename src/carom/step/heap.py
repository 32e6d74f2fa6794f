"""The indexed binary min-heap of the drift's event times (one entry per body with an event in the step).
"""

from __future__ import annotations

import math

from ..jit import inlined, kernel

INF = math.inf


# ---------------------------------------------------------------- indexed binary min-heap of event times
# Only bodies with an event within the step are in it (a few per cent of a gas), and each entry holds its
# time beside its body, so that sifting reads two small arrays instead of event times all over memory.
# Entries are ordered by time, then body id: the order of events does not depend on the heap's history.
@inlined
def _before(heap_t, heap_b, p, q):
    """Whether heap entry p comes before entry q (no short-circuit: a branch around array reads would
    make Numba count references)."""
    return (heap_t[p] < heap_t[q]) | ((heap_t[p] == heap_t[q]) & (heap_b[p] < heap_b[q]))


@inlined
def _heap_swap(heap_t, heap_b, where, p, q):
    heap_t[p], heap_t[q] = heap_t[q], heap_t[p]
    heap_b[p], heap_b[q] = heap_b[q], heap_b[p]
    where[heap_b[p]] = p
    where[heap_b[q]] = q


@kernel
def _sift(heap_t, heap_b, where, size, p):
    """Move entry p, the only one out of order, up or down to its place."""
    while p > 0 and _before(heap_t, heap_b, p, (p - 1) >> 1):
        _heap_swap(heap_t, heap_b, where, p, (p - 1) >> 1)
        p = (p - 1) >> 1
    _sift_down(heap_t, heap_b, where, size, p)


@kernel
def _sift_down(heap_t, heap_b, where, size, p):
    """Move entry p down to its place below."""
    while True:
        first = p
        for child in range(2 * p + 1, min(2 * p + 3, size)):
            if _before(heap_t, heap_b, child, first):
                first = child
        if first == p:
            return
        _heap_swap(heap_t, heap_b, where, p, first)
        p = first


@kernel
def heap_build(ev_time, heap_t, heap_b, where):
    """A heap of every body with a finite event time; ``where[b]`` is b's entry, -1 if none. Returns its size."""
    size = 0
    for b in range(len(ev_time)):
        where[b] = -1
        if ev_time[b] < INF:
            heap_t[size] = ev_time[b]
            heap_b[size] = b
            where[b] = size
            size += 1
    for p in range(size // 2 - 1, -1, -1):
        _sift_down(heap_t, heap_b, where, size, p)
    return size


@kernel
def heap_update(heap_t, heap_b, where, size, body, t):
    """Give ``body`` the event time t (s): insert, move or (t = inf) remove its entry. Returns the new size."""
    p = where[body]
    if p < 0:
        if t == INF:
            return size
        p = size
        size += 1
        heap_b[p] = body
        where[body] = p
    elif t == INF:
        where[body] = -1
        size -= 1
        if p == size:
            return size
        heap_b[p] = heap_b[size]
        where[heap_b[p]] = p
        t = heap_t[size]
    heap_t[p] = t
    _sift(heap_t, heap_b, where, size, p)
    return size
