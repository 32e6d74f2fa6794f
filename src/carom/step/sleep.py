"""Sleeping islands of `World`: bodies at rest on a support stop costing anything until touched.

An *island* is a set of movable bodies joined by contacts (gaps within the step's resting reach); walls
and fixed bodies do not join islands. After a step, a body is *still* while its speed is at most
``Config.sleep_speed``; an island falls asleep when every body in it has been still for
``Config.sleep_time`` and it is *supported*: one of its bodies carries a resting force from a wall or a
fixed body (an island drifting slowly through space keeps its momentum, so it never sleeps). Its bodies
then stop exactly (velocity 0: kinetic energy only falls) and drop out of the drift, the projection and
the broad phase's events, their resting forces kept for the step they wake in.

A sleeping island wakes whole, at the start of a step or at any broad-phase rebuild within one, as soon
as an awake body's candidate list reaches one of its bodies: before anything could touch it. What
sleeping changes is thus only the motion an awake island would have had below ``sleep_speed``: the
solver's residual creep, within its tolerances, not physics. `World` never lets islands sleep under
forces other than uniform gravity, in merge mode, or with ``sleep_time = inf``.

Worlds with polygons (`carom.step.rigid`) sleep the same way, with what that step has: islands are joined
by the contacts that pushed in their last hold, sleeping bodies take part in a step as fixed ones at rest,
and an island is woken before a step when an awake body's swept bounding circle may reach it (`reached`),
or, should a body flung within the step touch it anyway, the step is done again with it awake.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .. import broadphase
from ..materials import key_pairs


def candidate_pairs(start: np.ndarray, nbrs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every entry of the CSR candidate lists as (row body, neighbour) arrays."""
    rows = np.repeat(np.arange(len(start) - 1), np.diff(start))
    return rows, np.asarray(nbrs, dtype=np.int64)


def touched(start, nbrs, awake, asleep, x, radius, reach) -> np.ndarray:
    """Mask of the sleeping bodies that an awake body in their candidate lists may meet: their gap at most
    the sum of their displacement bounds ``reach`` (m) over the interval the lists were built for."""
    i, j = candidate_pairs(start, nbrs)
    mixed = (awake[i] & asleep[j]) | (asleep[i] & awake[j])
    i, j = i[mixed], j[mixed]
    gap = np.linalg.norm(x[j] - x[i], axis=1) - radius[i] - radius[j]
    near = gap <= reach[i] + reach[j]
    hit = np.zeros(len(asleep), dtype=bool)
    hit[i[near & asleep[i]]] = True
    hit[j[near & asleep[j]]] = True
    return hit


def islands(start, nbrs, x, radius, members, reach) -> tuple[int, np.ndarray]:
    """Connected components of ``members`` (a mask) under the candidate pairs whose gap is at most ``reach``
    (m). Returns (their number, a label per body; -1 for bodies not in ``members``)."""
    i, j = candidate_pairs(start, nbrs)
    keep = members[i] & members[j] & (j > i)
    i, j = i[keep], j[keep]
    gap = np.linalg.norm(x[j] - x[i], axis=1) - radius[i] - radius[j]
    near = gap <= reach
    return components(members, i[near], j[near])


def components(members: np.ndarray, i: np.ndarray, j: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of ``members`` (a mask) joined by the pairs (i, j) of members. Returns (their
    number, a label per body; -1 for bodies not in ``members``)."""
    n = len(members)
    graph = coo_matrix((np.ones(len(i)), (i, j)), shape=(n, n))
    count, labels = connected_components(graph, directed=False)
    labels = np.where(members, labels, -1)
    return count, labels


def reached(x: np.ndarray, size: np.ndarray, reach: np.ndarray, awake: np.ndarray, asleep: np.ndarray,
            slop: float) -> np.ndarray:  # fmt: skip
    """Mask of the sleeping bodies that an awake one may touch (worlds with polygons, which have no candidate
    lists between steps): their bounding circles (radius ``size``, m) closer than the awake body's ``reach``
    (m) plus ``slop`` (m). The pairs come from the shared broad phase (`carom.broadphase`)."""
    hit = np.zeros(len(asleep), dtype=bool)
    sleepers, movers = np.flatnonzero(asleep), np.flatnonzero(awake)
    if len(sleepers) == 0 or len(movers) == 0:
        return hit
    start, nbrs, _, _ = broadphase.candidates(x, size, awake | asleep, np.where(awake, reach + slop, 0.0), 1.0)
    k, j = candidate_pairs(start, nbrs)
    k, j = k[awake[k] & asleep[j]], j[awake[k] & asleep[j]]  # (each awake-asleep pair once: the lists are symmetric)
    gap = np.linalg.norm(x[k] - x[j], axis=1) - size[k] - size[j]
    hit[j[gap <= reach[k] + slop]] = True
    return hit


def supported(n: int, movable: np.ndarray, pair_keys: np.ndarray, pair_force: np.ndarray,
              wall_force: np.ndarray) -> np.ndarray:  # fmt: skip
    """Mask of the bodies carrying a resting force from a wall or a fixed body (`carom.materials` pair keys)."""
    held = np.zeros(n, dtype=bool)
    if wall_force.size:
        held |= np.any(wall_force != 0.0, axis=1)
    if len(pair_keys):
        i, j = key_pairs(pair_keys)
        on = pair_force != 0.0
        held[i[on & ~movable[j]]] = True
        held[j[on & ~movable[i]]] = True
    return held


def falling_asleep(labels: np.ndarray, count: int, ready: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Mask of the bodies whose island falls asleep: every body in it ``ready`` (still for long enough) and
    at least one ``held`` (supported)."""
    inside = labels >= 0
    lab = labels[inside]
    all_ready = np.bincount(lab, weights=~ready[inside], minlength=count) == 0
    any_held = np.bincount(lab, weights=held[inside], minlength=count) > 0
    asleep = np.zeros(len(labels), dtype=bool)
    asleep[inside] = (all_ready & any_held)[lab]
    return asleep
