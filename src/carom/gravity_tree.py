"""Barnes–Hut tree gravity (Barnes & Hut 1986): `NBodyGravity(tree=True)`.

The sources (active bodies of finite, nonzero mass) are sorted along a Morton curve in the cube that bounds
them; the tree is the compressed octree (quadtree in 2D) of that order: each node is the smallest cell of
the grid hierarchy that holds a run of sorted bodies, so every internal node has at least two children and
there are fewer than twice as many nodes as bodies. A node keeps its bodies' mass, centre of mass and
second moment ``S = sum m s s^T`` (s: offsets from the centre of mass). Nodes are stored in depth-first
order with a skip index (the node after its subtree), so a walk is a loop. A body takes a node's multipole
when ``size < opening_angle * d`` (size: the side of the node's cell; d: from the body to the node's centre
of mass) and the body is outside the node's cell, and otherwise opens it; the leaves it opens (at most
`_LEAF` bodies, or bodies that share a cell of the finest grid level) it sums body by body. Bodies walk in
groups (Barnes 1990), the largest nodes of at most `_GROUP` bodies: a group takes a multipole only where
its bodies' bounding box lies outside the cell and the box's nearest point is farther than
``size / opening_angle`` from the centre of mass, that is where each of its bodies would, and then sums
the multipoles and bodies of its one walk at each of its bodies (a loop the compiler vectorises).

A multipole is the Taylor expansion of the softened potential ``-G m / sqrt(r^2 + eps^2)`` of the node's
bodies to second order about their centre of mass (the first order vanishes there):

    phi(x) = -G [M / h + (3/2) u.S.u / h^3 - (1/2) tr(S) / h^3],   h^2 = |x - c|^2 + eps^2, u = (x - c) / h

and the acceleration is its gradient; with eps = 0 it is the usual monopole plus traceless quadrupole.
2D worlds are walked as 3D ones with z = 0 (the quadtree is the octree of points in a plane).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, prange

from .jit import kernel

#: bodies in a leaf at most (more only where they share a cell of the finest grid level)
_LEAF = 16
#: bodies in a group at most: the bodies of a node this small walk the tree together
_GROUP = 256
#: sources from which the walk runs in parallel: below, waking the threads (up to 4 ms between the steps of a
#: World on the 2-core test machine) costs about what they save (a serial walk of 4,096 bodies: 18 ms)
_PARALLEL = 4096
# columns of a node's integer row: first body (in sorted order), body count, index of the node after its subtree
_START, _COUNT, _SKIP = 0, 1, 2
# columns of a node's row for the walk (one cache line): centre of mass (0-2), the cell's centre (3-5), its
# half-width (6, widened by a rounding margin), its opening distance squared (7)
_COM, _CENTRE, _HALF, _OPEN2 = 0, 3, 6, 7
# columns of a node's moments: mass (0), S xx yy zz xy xz yz (1-6), tr S (7)
_MASS, _S, _TRACE = 0, 1, 7


@kernel
def _morton_keys(x, lo, side, dim, bits):
    """(n,) int64: the bodies' cells on the 2^bits grid over the cube [lo, lo + side], bits interleaved (the
    first axis's bit first)."""
    n = x.shape[0]
    top = (1 << bits) - 1
    scale = (1 << bits) / side
    keys = np.zeros(n, np.int64)
    for i in range(n):
        key = 0
        for b in range(bits - 1, -1, -1):
            for d in range(dim):
                q = min(max(int((x[i, d] - lo[d]) * scale), 0), top)
                key = (key << 1) | ((q >> b) & 1)
        keys[i] = key
    return keys


@kernel
def _common_level(a, b, dim, bits):
    """Number of leading grid levels (digits of ``dim`` bits) that keys a and b share."""
    diff = a ^ b
    if diff == 0:
        return bits
    high = 0
    while diff > 1:
        diff >>= 1
        high += 1
    return bits - 1 - high // dim


@kernel
def _cell_box(key, level, dim, bits, lo, side, box):
    """Centre and half-width of the level-``level`` cell holding ``key``, into ``box`` (4,)."""
    width = side / (1 << level)
    for d in range(dim):
        q = 0
        for lev in range(level):
            q = 2 * q + ((key >> ((bits - 1 - lev) * dim + dim - 1 - d)) & 1)
        box[d] = lo[d] + (q + 0.5) * width
    box[3] = 0.5 * width


@kernel
def _build(keys, dim, bits, lo, side, leaf):
    """The compressed tree over sorted ``keys`` with leaves of at most ``leaf`` bodies, nodes in depth-first
    order: ``(node_i, box)``, node_i (m, 3) int64 (first body, count, skip), box (m, 4) (the cell's centre
    and half-width; z = 0 in 2D)."""
    n = keys.size
    cap = max(2 * n - 1, 1)
    node_i = np.empty((cap, 3), np.int64)
    box = np.zeros((cap, 4))
    parent = np.empty(cap, np.int64)
    depth = (bits + 1) * ((1 << dim) - 1) + 2
    stack = np.empty((depth, 3), np.int64)  # first body, end, parent
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, -1
    top, m = 1, 0
    mask = (1 << dim) - 1
    while top > 0:
        top -= 1
        s, e, up = stack[top, 0], stack[top, 1], stack[top, 2]
        k = m
        m += 1
        node_i[k, _START], node_i[k, _COUNT], parent[k] = s, e - s, up
        level = _common_level(keys[s], keys[e - 1], dim, bits)
        _cell_box(keys[s], level, dim, bits, lo, side, box[k])
        if e - s <= leaf or level == bits:
            continue
        shift = (bits - 1 - level) * dim
        # children in reverse order, so that the first pops next: depth-first preorder
        j = e
        while j > s:
            digit = (keys[j - 1] >> shift) & mask
            first = j - 1
            while first > s and ((keys[first - 1] >> shift) & mask) == digit:
                first -= 1
            stack[top, 0], stack[top, 1], stack[top, 2] = first, j, k
            top += 1
            j = first
    size = np.ones(m, np.int64)
    for k in range(m - 1, 0, -1):
        size[parent[k]] += size[k]
    for k in range(m):
        node_i[k, _SKIP] = k + size[k]
    return node_i[:m], box[:m]


class _Tree(NamedTuple):
    """The sources in tree order (ids, x (n, 3): positions padded to 3D, mass) and the nodes in depth-first
    order (node_i (m, 3), walk (m, 8), moments (m, 8): the columns above)."""

    ids: np.ndarray
    x: np.ndarray
    mass: np.ndarray
    node_i: np.ndarray
    walk: np.ndarray
    moments: np.ndarray


@kernel
def _moments(x, mass, node_i, box, theta, walk, moments):
    """Each node's mass, centre of mass and second moment S, its cell and opening distance."""
    for k in range(node_i.shape[0]):
        s, e = node_i[k, _START], node_i[k, _START] + node_i[k, _COUNT]
        w, mo = walk[k], moments[k]
        w[:], mo[:] = 0.0, 0.0
        for j in range(s, e):
            mo[_MASS] += mass[j]
            for d in range(3):
                w[_COM + d] += mass[j] * x[j, d]
        for d in range(3):
            w[_COM + d] /= mo[_MASS]
        for j in range(s, e):
            sx, sy, sz = x[j, 0] - w[_COM], x[j, 1] - w[_COM + 1], x[j, 2] - w[_COM + 2]
            mo[_S] += mass[j] * sx * sx
            mo[_S + 1] += mass[j] * sy * sy
            mo[_S + 2] += mass[j] * sz * sz
            mo[_S + 3] += mass[j] * sx * sy
            mo[_S + 4] += mass[j] * sx * sz
            mo[_S + 5] += mass[j] * sy * sz
        mo[_TRACE] = mo[_S] + mo[_S + 1] + mo[_S + 2]
        for d in range(3):
            w[_CENTRE + d] = box[k, d]
        # a body on the cell's boundary counts as inside whatever the rounding of its centre and width
        w[_HALF] = box[k, 3] * (1.0 + 1e-9)
        w[_OPEN2] = (2.0 * box[k, 3] / theta) ** 2 if theta > 0.0 else np.inf


@kernel
def _groups(node_i, wanted_before, size):
    """The groups, in tree order: the largest nodes of at most ``size`` bodies (or leaves) that hold a
    wanted body (``wanted_before[j]``: wanted sorted bodies before j)."""
    groups = np.empty(node_i.shape[0], np.int64)
    ng = k = 0
    while k < node_i.shape[0]:
        s, c, skip = node_i[k, _START], node_i[k, _COUNT], node_i[k, _SKIP]
        if c <= size or skip == k + 1:
            if wanted_before[s + c] > wanted_before[s]:
                groups[ng] = k
                ng += 1
            k = skip
        else:
            k += 1
    return groups[:ng]


@kernel
def _group_box(pos, box):
    """Centre and half-widths of the bounding box of the group's bodies ``pos`` (3, c), into ``box`` (6,)."""
    for d in range(3):
        lo, hi = pos[d].min(), pos[d].max()
        box[d], box[3 + d] = 0.5 * (lo + hi), 0.5 * (hi - lo)


@kernel
def _accepts(w, box):
    """Whether every body in the group box ``box`` takes the node with walk row ``w`` as a multipole: the
    box lies outside the node's cell, and its nearest point is farther than the opening distance from the
    centre of mass (so each body's own distance is)."""
    d2 = 0.0
    apart = False
    for d in range(3):
        gap = abs(w[_COM + d] - box[d]) - box[3 + d]
        if gap > 0.0:
            d2 += gap * gap
        apart = apart or abs(w[_CENTRE + d] - box[d]) > w[_HALF] + box[3 + d]
    return apart and d2 > w[_OPEN2]


@kernel
def _grown(a, used):
    """``a`` with twice the room, its first ``used`` entries kept."""
    b = np.empty(2 * a.size, a.dtype)
    b[:used] = a[:used]
    return b


@kernel
def _interactions(node_i, walk, box, cells, leaves):
    """The walk for one group of bodies in ``box``: the nodes it takes as multipoles and the leaves it sums
    body by body (its own among them). Returns (cells, number of cells, leaves, number of leaves); the
    arrays grow as needed."""
    nodes = node_i.shape[0]
    nc = nl = 0
    k = 0
    while k < nodes:
        if _accepts(walk[k], box):
            if nc == cells.size:
                cells = _grown(cells, nc)
            cells[nc] = k
            nc += 1
            k = node_i[k, _SKIP]
            continue
        if node_i[k, _SKIP] == k + 1:
            if nl == leaves.size:
                leaves = _grown(leaves, nl)
            leaves[nl] = k
            nl += 1
        k += 1
    return cells, nc, leaves, nl


@kernel(error_model="numpy")  # (no ZeroDivisionError check: the loop over bodies vectorises)
def _add_multipoles(walk, moments, cells, pos, eps2, acc):
    """Add the multipoles of nodes ``cells`` at the group's bodies ``pos`` (3, c) into ``acc`` (4, c):
    acceleration / G and potential / G (the module docstring's expansion)."""
    for k in cells:
        cx, cy, cz = walk[k, _COM], walk[k, _COM + 1], walk[k, _COM + 2]
        mo = moments[k]
        m, sxx, syy, szz, sxy, sxz, syz, trace = mo[0], mo[1], mo[2], mo[3], mo[4], mo[5], mo[6], mo[7]
        for b in range(pos.shape[1]):
            dx, dy, dz = cx - pos[0, b], cy - pos[1, b], cz - pos[2, b]
            inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz + eps2)
            inv2 = inv * inv
            ux, uy, uz = dx * inv, dy * inv, dz * inv  # from the body to the centre of mass, |u| <= 1
            sux = sxx * ux + sxy * uy + sxz * uz
            suy = sxy * ux + syy * uy + syz * uz
            suz = sxz * ux + syz * uy + szz * uz
            usu = ux * sux + uy * suy + uz * suz
            radial = m * inv2 + (7.5 * usu - 1.5 * trace) * inv2 * inv2
            quad = 3.0 * inv2 * inv2
            acc[0, b] += radial * ux - quad * sux
            acc[1, b] += radial * uy - quad * suy
            acc[2, b] += radial * uz - quad * suz
            acc[3, b] -= (m + (1.5 * usu - 0.5 * trace) * inv2) * inv


@kernel(error_model="numpy")
def _add_bodies(x, mass, s, e, pos, first, eps2, acc):
    """Add the softened point masses of sorted bodies s..e-1 at the group's bodies ``pos`` (3, c), which are
    sorted bodies ``first``, ``first + 1``, ..., into ``acc`` (4, c); a body skips itself."""
    for j in range(s, e):
        xj, yj, zj, mj = x[j, 0], x[j, 1], x[j, 2], mass[j]
        for b in range(pos.shape[1]):
            dx, dy, dz = xj - pos[0, b], yj - pos[1, b], zj - pos[2, b]
            r2 = dx * dx + dy * dy + dz * dz + eps2
            itself = j == first + b
            inv = 1.0 / math.sqrt(1.0 if itself else r2)
            w = 0.0 if itself else mj * inv
            acc[0, b] += w * inv * inv * dx
            acc[1, b] += w * inv * inv * dy
            acc[2, b] += w * inv * inv * dz
            acc[3, b] -= w


@kernel
def _walk(tree, groups, eps2, out):
    """Add acceleration / G and potential / G (into ``out`` (4, n), in tree order) at every body of the
    nodes ``groups`` from every other source: each group walks the tree once for all its bodies, taking a
    node as a multipole only where every one of them would (the module docstring's walk)."""
    _, x, mass, node_i, walk, moments = tree
    cells = np.empty(1024, np.int64)
    leaves = np.empty(1024, np.int64)
    box = np.empty(6)
    for group in groups:
        s = node_i[group, _START]
        e = s + node_i[group, _COUNT]
        pos = np.ascontiguousarray(x[s:e].T)
        acc = np.zeros((4, e - s))
        _group_box(pos, box)
        cells, nc, leaves, nl = _interactions(node_i, walk, box, cells, leaves)
        _add_multipoles(walk, moments, cells[:nc], pos, eps2, acc)
        for leaf in leaves[:nl]:
            start = node_i[leaf, _START]
            _add_bodies(x, mass, start, start + node_i[leaf, _COUNT], pos, s, eps2, acc)
        out[:, s:e] += acc


@kernel(parallel=True)
def _walk_parallel(tree, groups, eps2, chunks, out):
    """`_walk` over ``chunks`` runs of the groups, in parallel (the groups write disjoint bodies)."""
    for chunk in prange(chunks):
        _walk(tree, groups[chunk * groups.size // chunks : (chunk + 1) * groups.size // chunks], eps2, out)


def _tree(position, mass, sources, theta, leaf):
    """The tree of the sources (`_Tree`), leaves of at most ``leaf`` bodies."""
    dim = position.shape[1]
    ids = np.flatnonzero(sources)
    x = np.zeros((ids.size, 3))
    x[:, :dim] = position[ids]
    lo = x.min(axis=0)
    side = float(np.max(x.max(axis=0) - lo)) or 1.0
    bits = 63 // dim
    keys = _morton_keys(x, lo, side, dim, bits)
    order = np.argsort(keys, kind="stable")
    ids, x, keys = ids[order], x[order], keys[order]
    m = mass[ids]
    node_i, box = _build(keys, dim, bits, lo, side, leaf)
    walk = np.empty((node_i.shape[0], 8))
    moments = np.empty((node_i.shape[0], 8))
    _moments(x, m, node_i, box, theta, walk, moments)
    return _Tree(ids, x, m, node_i, walk, moments)


def _sources(mass, active):
    return active & np.isfinite(mass) & (mass > 0)


def _field(tree, wanted, eps2, group):
    """(4, n): acceleration / G and potential / G at the bodies (in tree order) of the groups (of at most
    ``group`` bodies) that hold a ``wanted`` body (zero elsewhere)."""
    groups = _groups(tree.node_i, np.concatenate(([0], np.cumsum(wanted))), group)
    out = np.zeros((4, tree.mass.size))
    if tree.mass.size < _PARALLEL:
        _walk(tree, groups, eps2, out)
    else:
        _walk_parallel(tree, groups, eps2, 16 * get_num_threads(), out)
    return out


def tree_accel(position, mass, active, movable, G, eps2, theta, out, *, leaf=_LEAF, group=_GROUP):
    """Add the tree's gravitational acceleration on every movable body into ``out`` (n, dim); the sources
    are active bodies of finite, nonzero mass (movable bodies are among them). ``leaf``, ``group``: the
    most bodies in a leaf and in a group (1 and 1: each body walks the tree alone)."""
    sources = _sources(mass, active)
    if not np.any(sources):
        return
    tree = _tree(position, mass, sources, theta, leaf)
    wanted = movable[tree.ids]
    field = _field(tree, wanted, eps2, group)
    out[tree.ids[wanted]] += G * field[: position.shape[1], wanted].T


def tree_potential(position, mass, active, G, eps2, theta, *, leaf=_LEAF, group=_GROUP):
    """Potential energy (J) of the sources by the tree: half the sum over them of ``m phi`` (``leaf``,
    ``group``: as for `tree_accel`)."""
    sources = _sources(mass, active)
    if not np.any(sources):
        return 0.0
    tree = _tree(position, mass, sources, theta, leaf)
    return 0.5 * G * float(tree.mass @ _field(tree, np.ones(tree.mass.size, bool), eps2, group)[3])
