"""Cell lists for the event engine: which bodies could touch, and when a body enters another cell.

Cells are at least one largest diameter (plus the contact tolerance) wide, so two bodies can touch only if
their cells are neighbours; a body's candidates are the bodies of the 3^d cells around its own. A body
changing cell is an event like any other (the *cell crossing*): its time is a root of a quadratic (free
flight is a parabola), and at it the body meets only the bodies of the one slab of cells that has just
come into its neighbourhood. Cost: O(1) bodies per scan at fixed density, O(n) memory.
"""

from __future__ import annotations

import math

import numpy as np

from ..config import ROUNDOFF
from ..intrinsics import prefetch
from ..jit import inlined, kernel
from ..narrowphase.roots import quadratic_crossing
from .state import CELL, FACE, NEXT, PREV, A, Geometry, V, X

INF = math.inf


def new_grid(body: np.ndarray, link: np.ndarray, dim: int, box, tol: float, size: float):
    """Cells for the bodies of ``body``, ``box`` = (lower, upper) of a periodic box or None; fills the
    cell columns of ``link`` and returns (geometry, head, chain) (see `carom.events.state`).

    Cells are at least ``2 max(radius) (1 + 2 tol) + 2 ROUNDOFF size`` wide (more than the touching reach
    of the largest pair, `carom.narrowphase.spheres.touch_slack`, for coordinates up to ``size``), and
    there are at most about 2 n + 64 of them (wider cells when the bodies are sparse)."""
    from .state import RADIUS

    n = len(body)
    d_max = 2.0 * float(body[:, RADIUS].max(initial=0.0)) * (1.0 + 2.0 * tol) + 2.0 * ROUNDOFF * size
    lower = np.zeros(3)
    extent = np.ones(3)
    periodic = np.zeros(3, dtype=bool)
    if box is not None:
        lower[:dim], extent[:dim] = box[0], box[1] - box[0]
        periodic[:dim] = True
    elif n:
        x = body[:, X : X + dim]
        lower[:dim], extent[:dim] = x.min(axis=0) - d_max, np.ptp(x, axis=0) + 2.0 * d_max
    width = max(d_max, float(np.prod(extent[:dim]) / (2 * n + 64)) ** (1.0 / dim), 1e-300)
    shape = np.ones(3, dtype=np.int64)
    shape[:dim] = np.maximum(1, np.floor(extent[:dim] / width))
    geo = Geometry(
        lower=tuple(map(float, lower)), width=tuple(map(float, extent / shape)), shape=tuple(map(int, shape)),
        periodic=tuple(map(bool, periodic)), length=tuple(map(float, extent)),
    )  # fmt: skip
    head = np.full(int(np.prod(shape)), -1, dtype=np.int32)
    chain = np.full((n, 2), -1, dtype=np.int32)
    _fill(body, link, head, chain, geo)
    return geo, head, chain


@inlined
def _flat(geo, c0, c1, c2):
    return c0 + geo.shape[0] * (c1 + geo.shape[1] * c2)


@inlined
def _insert(link, head, chain, geo, b):
    cell = _flat(geo, link[b, CELL], link[b, CELL + 1], link[b, CELL + 2])
    first = head[cell]
    chain[b, NEXT] = first
    chain[b, PREV] = -1
    if first >= 0:
        chain[first, PREV] = b
    head[cell] = b


@inlined
def _remove(link, head, chain, geo, b):
    before = chain[b, PREV]
    after = chain[b, NEXT]
    if before >= 0:
        chain[before, NEXT] = after
    else:
        head[_flat(geo, link[b, CELL], link[b, CELL + 1], link[b, CELL + 2])] = after
    if after >= 0:
        chain[after, PREV] = before


@kernel(refcounts=False)
def _fill(body, link, head, chain, geo):
    for b in range(body.shape[0]):
        for d in range(3):
            c = math.floor((body[b, X + d] - geo.lower[d]) / geo.width[d])
            link[b, CELL + d] = min(max(c, 0), geo.shape[d] - 1)
        _insert(link, head, chain, geo, b)


@inlined
def cells_around(link, geo, b, axis, step, out):
    """Flat ids of the cells to scan for body b: all 3^d neighbours (axis = -1), or the slab just entered
    by a crossing along ``axis`` in direction ``step``; wrapped on periodic axes, none past the ends, no
    repeats. Written to ``out[:count]`` (``out[27:36]`` is scratch); returns count."""
    c0, c1, c2 = link[b, CELL], link[b, CELL + 1], link[b, CELL + 2]
    s0, s1, s2 = geo.shape
    if axis < 0 and 0 < c0 < s0 - 1 and 0 < c1 < s1 - 1 and 0 < c2 < s2 - 1:  # inside: no wrap, no repeat
        count = 0
        for q2 in range(c2 - 1, c2 + 2):
            for q1 in range(c1 - 1, c1 + 2):
                row = s0 * (q1 + s1 * q2)
                for q0 in range(c0 - 1, c0 + 2):
                    out[count] = row + q0
                    count += 1
        return count
    for d in range(3):
        count = 0
        c = link[b, CELL + d]
        lo, hi = (step, step) if d == axis else (-1, 1)
        for o in range(lo, hi + 1):
            k = c + o
            if geo.periodic[d]:
                k %= geo.shape[d]
            elif k < 0 or k >= geo.shape[d]:
                continue
            if (count < 1 or out[27 + 3 * d] != k) and (count < 2 or out[28 + 3 * d] != k):
                out[27 + 3 * d + count] = k
                count += 1
        for m in range(count, 3):
            out[27 + 3 * d + m] = -1
    count = 0
    for p in range(3):
        for q in range(3):
            for r in range(3):
                c0, c1, c2 = out[27 + r], out[30 + q], out[33 + p]
                if c0 >= 0 and c1 >= 0 and c2 >= 0:
                    out[count] = _flat(geo, c0, c1, c2)
                    count += 1
    return count


@inlined
def prefetch_around(link, head, geo, b):
    """Start loading the entries of ``head`` for the 3^d cells around body b, one per row of three cells
    (rows wrapped around the grid on every axis, periodic or not: a hint, always in range). Fixed loop
    bounds, so the loops unroll without branches (bounds clamped to the grid made it 6% slower)."""
    c0, c1, c2 = link[b, CELL], link[b, CELL + 1], link[b, CELL + 2]
    _, s1, s2 = geo.shape
    for o2 in range(-1, 2):
        q2 = c2 + o2
        q2 = q2 + s2 if q2 < 0 else (q2 - s2 if q2 >= s2 else q2)
        for o1 in range(-1, 2):
            q1 = c1 + o1
            q1 = q1 + s1 if q1 < 0 else (q1 - s1 if q1 >= s1 else q1)
            prefetch(head, _flat(geo, c0, q1, q2))


@inlined
def prefetch_first(body, head, chain, cells, n_cells):
    """Start loading the rows of the first body of each of the cells ``cells[:n_cells]``: their cache
    misses then overlap, instead of each waiting for the walk's branch on the cell before."""
    for m in range(n_cells):
        first = max(head[cells[m]], 0)
        prefetch(chain, first)
        prefetch(body, first)


@kernel(refcounts=False)
def face_time(c0, c1, c2):
    """Delay until c0 + c1 t + c2 t^2 (the distance to a face, positive inside) first turns negative;
    0 if it is not positive now and decreasing (a body on or just past a face, moving out)."""
    if c0 <= 0.0:
        if c1 < 0.0 or (c1 == 0.0 and c2 < 0.0):
            return 0.0
        if c2 >= 0.0:  # moving inwards for good (not a double root at 0: the body just touches the face)
            return INF
    return quadratic_crossing(c0, c1, c2, 0.0, INF, True)


@inlined
def next_crossing(body, link, geo, b):
    """(delay, face) of the next cell face that body b crosses, from its state at its own time; face =
    2 axis + 1 upwards, 2 axis downwards; (inf, 0) if none.

    On an axis without acceleration only the face ahead can be crossed, at ``(face - s) / w`` (0 if the
    body is on or past it), the same number as `face_time`'s. That case is written without branches (the
    sign of w is a coin toss to the processor): selects of cheap values, an added 0 or inf, a min."""
    best = INF
    face = 0
    for d in range(3):
        n = geo.shape[d]
        c = link[b, CELL + d]
        s, w, g = body[b, X + d], body[b, V + d], 0.5 * body[b, A + d]
        has_top = c < n - 1 or geo.periodic[d]
        has_bottom = c > 0 or geo.periodic[d]
        top = geo.lower[d] + geo.length[d] if c == n - 1 else geo.lower[d] + (c + 1) * geo.width[d]
        bottom = geo.lower[d] + c * geo.width[d]
        if g == 0.0:
            up = w > 0.0
            ahead = (up & has_top) | ((w < 0.0) & has_bottom)
            t = max(((top if up else bottom) - s) / (w if ahead else 1.0), 0.0) + (0.0 if ahead else INF)
            face = (2 * d + up) if t < best else face
            best = min(t, best)  # a min: two selects on one test of a quotient would become a branch
            continue
        if has_top:
            t = face_time(top - s, -w, -g)
            if t < best:
                best, face = t, 2 * d + 1
        if has_bottom:
            t = face_time(s - bottom, w, g)
            if t < best:
                best, face = t, 2 * d
    return best, face


@inlined
def move_to_cell(body, link, head, chain, geo, b):
    """Put body b in the cell beyond its crossing face; on a periodic axis wrap around (its position
    too)."""
    _remove(link, head, chain, geo, b)
    face = link[b, FACE]
    d = face >> 1
    c = link[b, CELL + d] + (1 if face & 1 else -1)
    if c == geo.shape[d]:
        c = 0
        body[b, X + d] -= geo.length[d]
    elif c < 0:
        c = geo.shape[d] - 1
        body[b, X + d] += geo.length[d]
    link[b, CELL + d] = c
    _insert(link, head, chain, geo, b)
