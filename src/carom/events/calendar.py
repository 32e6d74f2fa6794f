"""The event calendar: which body has the earliest pending event.

A complete binary tournament tree over the bodies: leaf ``size + b`` holds body b, every inner node the
winner (smaller key, lower id on ties) of its two children, the root ``tree[1]`` the body whose event
comes first. Changing one body's key replays its matches towards the root: O(log n) per update, no
allocation, and the tree is a pure function of the keys (so it need not be saved for a restart).
``key`` has one extra entry, ``key[n] = inf``, for the unused leaves.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import inlined, kernel


def new_calendar(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(key, tree) for n bodies, every key inf."""
    size = 1
    while size < max(n, 1):
        size *= 2
    key = np.full(n + 1, math.inf)
    tree = np.full(2 * size, n, dtype=np.int64)
    tree[size : size + n] = np.arange(n)
    return key, tree


@inlined
def _winner(key, tree, node):
    left = tree[2 * node]
    right = tree[2 * node + 1]
    return left if key[left] <= key[right] else right


@kernel(refcounts=False)
def rebuild_calendar(key, tree):
    """Replay every match (after all keys were set)."""
    for node in range(len(tree) // 2 - 1, 0, -1):
        tree[node] = _winner(key, tree, node)


@inlined
def update_key(key, tree, b, value):
    """Set body b's key and replay its matches, up to the first one whose winner is unchanged and not b:
    the matches above it are unchanged too (they see the same winners with the same keys)."""
    key[b] = value
    node = (len(tree) // 2 + b) >> 1
    while node >= 1:
        winner = _winner(key, tree, node)
        if winner == tree[node] and winner != b:
            break
        tree[node] = winner
        node >>= 1


@inlined
def runner_up(key, tree, b):
    """The body whose key comes next after body b's, b being the root's winner (b itself if every other
    key is inf): the earliest of the winners beside b's path. Reading them also brings into cache what
    updating b's key will compare."""
    node = len(tree) // 2 + b
    best = math.inf
    who = b
    while node > 1:
        w = tree[node ^ 1]
        if key[w] < best:
            best = key[w]
            who = w
        node >>= 1
    return who
