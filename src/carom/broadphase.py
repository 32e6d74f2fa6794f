"""Broad phase: which pairs of bodies could touch within the coming interval.

Every *small* body sweeps a sphere of radius ``R + margin`` around its position at the start of the
interval, with one common ``margin`` (m) that bounds how far any small body can travel in it; a pair is a
candidate when the two swept spheres overlap: ``|x_i - x_j| <= R_i + R_j + 2 margin``. *Large* bodies
(planets, fixed obstacles, bullets — whose swept sphere is far larger than the typical one) would make
cells huge; they are instead paired with every other active body: O(n) per large body.

Small bodies are binned into cubic cells a little wider than the largest swept diameter, so every
candidate of a body lies in its own cell or in one of the 3^d - 1 cells around it. The cost is O(n) for
bounded density, in three stages:

1. *Bin*: a counting sort of the small bodies by cell, copying position and radius into one packed
   row per body, so that the bodies of a cell, and of the cells beside it, are close in memory. While
   the bounding box of the small bodies holds at most ``DENSE_CELLS_PER_BODY`` cells per body, the
   cells form a dense grid with a linear index, fastest axis last, padded by one empty layer so that
   a neighbour cell is found by adding a fixed offset, with no bounds check. A dilute gas gets there
   with wider cells (any width above the largest swept diameter is correct). In a sparse scene (a
   planet and a distant moon, clusters far apart), where wide cells would pile bodies up, cells are
   instead hashed into a table of two to four buckets per body, and no grid of the bounding box is
   allocated. The hash keeps some locality: a block of 4^d cells picks a region of 4^d consecutive
   buckets, in the same order as a dense grid.
2. *Pairs*: every pair of neighbouring cells is visited once, from a *half shell* of the lower one
   (the cell itself and the 13 cells ahead of it in 3D, 4 in 2D). As the rows of consecutive cells
   along the fastest axis are consecutive, the half shell is read as a few runs of rows, a run being up
   to three cells along that axis: 5 runs in 3D, 2 in 2D (a hashed run is split where it leaves a
   block). The pairs that pass the distance test go to a fixed-capacity buffer; when it overflows, the
   pass keeps counting, and the buffer is regrown to the count outside the kernel and the pass retried
   (the pairs-per-body ratio is remembered for the next call).
3. *Lists*: the pairs, in both directions, are counting-sorted by neighbour id, then stably by body
   id, giving CSR rows already in id order (sorting each row instead costs a branch misprediction or
   more per entry); they are merged with the ids of the large bodies.

The counting sorts are two-level, so that no pass writes at random over memory much larger than the
caches (at 1e6 bodies a cache or TLB miss per body costs more than all the arithmetic): records are
first split by the top bits of their key into ``COARSE_BUCKETS`` streams, each written in order, and
each bucket is then sorted in cache. Scratch arrays are kept between calls, per thread (``_Workspace``):
in this environment a freshly mapped page costs about 1.6 µs, more than the work on the bodies in it.

The result is a symmetric neighbour list in CSR form: the candidates of body i are
``neighbours[start[i]:start[i + 1]]``, in increasing id order. The distance test is evaluated with the
same operations for (i, j) and (j, i), so the lists do not depend on which body of a pair finds the other.
"""

from __future__ import annotations

import threading

import numpy as np

from .jit import inlined, kernel

#: Bodies whose swept radius exceeds this many times the median are "large" (paired with all).
LARGE_FACTOR = 4.0
#: The cell grid is dense (linear index, no hashing) while the bounding box of the small bodies, padded
#: by one layer, holds at most this many cells per small body (4 bytes each); beyond, cells are widened
#: or hashed. A gas of equal spheres at packing fraction 0.2 has about 2 cells per body, at 0.02 about 16.
DENSE_CELLS_PER_BODY = 16.0
#: Cells may be widened up to this factor to keep the grid of a dilute scene dense, unless that puts
#: more than ``CROWDED`` bodies in a body's cell, on average (a clustered scene, not a dilute one): the
#: cells are then hashed instead. Hashing costs about as much as testing 30 extra pairs per body.
MAX_STRETCH = 8.0
CROWDED = 3.0
#: Cells are widened so that no axis spans more than this many: cell coordinates then fit a 64-bit
#: integer with room to spare, and their round-off (relative 1e-16 of the coordinate) stays far below
#: the width of the safety slack added to every cell.
MAX_CELLS_PER_AXIS = 2.0**40
#: Coarse buckets of the two-level counting sorts: few enough that the first level's write streams
#: (two per bucket) stay in the L1 cache, so that a bucket's records, n / COARSE_BUCKETS, fit the L2.
COARSE_BUCKETS = 256
#: Rows of a run that `_pairs_dense` lists with a fixed loop (runs are mostly shorter).
RUN_SLOTS = 4

_EPS = float(np.finfo(np.float64).eps)
_LOW32 = np.int64(0xFFFFFFFF)
# odd 64-bit multipliers of the spatial hash (splitmix64)
_H0 = np.uint64(0x9E3779B97F4A7C15)
_H1 = np.uint64(0xBF58476D1CE4E5B9)


class _Workspace(threading.local):
    """Scratch arrays kept between calls, one set per thread, grown with headroom and shrunk when four
    times too large: about 150 to 250 bytes per body (150 to 250 MB at 1e6 bodies)."""

    def __init__(self):
        self.arrays = {}
        #: pairs per small body that the pair buffer is sized for; raised when a scene needs more
        self.pairs_per_body = 2.0

    def take(self, name, size, dtype, width=None):
        """A C-contiguous, uninitialised array of ``size`` (rows of ``width``), reusing storage: a fresh array
        per call costs a page fault per 4 kB."""
        need = size * (width or 1)
        a = self.arrays.get(name)
        if a is None or a.dtype != dtype or a.size < need or a.size > 4 * need + 65536:
            a = np.empty(need + need // 4 + 64, dtype=dtype)
            self.arrays[name] = a
        return a[:need] if width is None else a[:need].reshape(size, width)


_workspace = _Workspace()


# ---------------------------------------------------------------- binning
@kernel
def _extremes(values, mask):
    """Smallest and largest of ``values[mask]`` (inf, -inf if none) and how many there are."""
    lo = np.inf
    hi = -np.inf
    count = 0
    for i in range(len(values)):
        if mask[i]:
            lo = min(lo, values[i])
            hi = max(hi, values[i])
            count += 1
    return lo, hi, count


@kernel
def _bounding_box(position, small):
    """Lower and upper corner of the positions of the small bodies; False if one is not finite."""
    n, dim = position.shape
    lo = np.full(dim, np.inf)
    hi = np.full(dim, -np.inf)
    finite = True
    for i in range(n):
        if small[i]:
            for d in range(dim):
                v = position[i, d]
                if not np.isfinite(v):
                    finite = False
                lo[d] = min(lo[d], v)
                hi[d] = max(hi[d], v)
    return lo, hi, finite


@kernel
def _cell_coordinate(x, lo, inv_cell, top):
    # Monotone in x, so no coordinate exceeds that of the box corner; the clamp is only a guard.
    return min(np.int64(np.floor((x - lo) * inv_cell)), top)


@kernel
def _bucket_shift(n_keys):
    """log2 of the keys per coarse bucket: the fewest that make at most ``COARSE_BUCKETS`` buckets."""
    shift = 0
    while ((n_keys - 1) >> shift) >= COARSE_BUCKETS:
        shift += 1
    return shift


@kernel
def _sort_by_key(key, n_keys, position, radius, small, staged, tag, first, packed, ids, row_key):
    """Two-level counting sort of the small bodies by ``key`` (stable: ids ascend within a key).

    Fills ``first`` (the rows of key k are ``first[k]:first[k + 1]``), the packed rows ``(x, y, z, R)``
    (missing axes are 0: adding 0.0 to a sum of squares leaves it unchanged), the id and the key of each
    row. ``staged`` and ``tag`` are scratch, one row per small body.
    """
    n, dim = position.shape
    shift = _bucket_shift(n_keys)
    n_coarse = ((n_keys - 1) >> shift) + 1
    coarse = np.zeros(n_coarse + 1, dtype=np.int64)
    for i in range(n):
        if small[i]:
            coarse[(key[i] >> shift) + 1] += 1
    for b in range(n_coarse):
        coarse[b + 1] += coarse[b]
    cursor = coarse[:-1].copy()
    for i in range(n):
        if small[i]:
            k = key[i]
            s = cursor[k >> shift]
            cursor[k >> shift] = s + 1
            for d in range(dim):
                staged[s, d] = position[i, d]
            for d in range(dim, 3):
                staged[s, d] = 0.0
            staged[s, 3] = radius[i]
            tag[s] = (np.int64(k) << 32) | i
    fill = np.empty(1 << shift, dtype=np.int64)
    for b in range(n_coarse):
        k0 = b << shift
        k1 = min(k0 + (1 << shift), n_keys)
        fill[: k1 - k0] = 0
        for s in range(coarse[b], coarse[b + 1]):
            fill[(tag[s] >> 32) - k0] += 1
        row = coarse[b]
        for k in range(k0, k1):
            first[k] = row
            row += fill[k - k0]
            fill[k - k0] = first[k]
        for s in range(coarse[b], coarse[b + 1]):
            k = tag[s] >> 32
            t = fill[k - k0]
            fill[k - k0] = t + 1
            for d in range(4):
                packed[t, d] = staged[s, d]
            ids[t] = tag[s] & _LOW32
            row_key[t] = k
    first[n_keys] = coarse[n_coarse]


@kernel
def _crowding(first, row_key):
    """Mean number of bodies in a body's cell (itself included)."""
    total = 0
    for k in row_key:
        total += first[k + 1] - first[k]
    return total / max(len(row_key), 1)


@kernel
def _keys_dense(position, small, lo, inv_cell, shape, stride, key):
    """Linear cell index of each small body in the padded grid (coordinates shifted by the padding)."""
    n, dim = position.shape
    for i in range(n):
        if small[i]:
            c = np.int64(0)
            for d in range(dim):
                k = _cell_coordinate(position[i, d], lo[d], inv_cell, shape[d] - 1)
                c += (k + (d > 0)) * stride[d]
            key[i] = c


@kernel
def _region(cell, bits):
    """First bucket of the region of 4^d buckets of the block of 4^d cells holding ``cell``."""
    h = np.uint64(0)
    for d in range(len(cell)):
        h = (h + np.uint64(cell[d] >> 2)) * _H0
        h ^= h >> np.uint64(29)
    h *= _H1
    h ^= h >> np.uint64(32)
    return np.int64(h >> np.uint64(64 - bits + 2 * len(cell))) << (2 * len(cell))


@kernel
def _hash(cell, bits):
    """Bucket of a cell in a table of 2**bits. Locality-preserving: the cells of a block of 4^d share a
    region of 4^d consecutive buckets (the block's hash picks the region, the cell's place in the block
    the bucket, fastest axis last), so cells next to each other along the fastest axis mostly have
    consecutive buckets, and their rows are consecutive."""
    local = np.int64(0)
    for d in range(len(cell)):
        local = (local << 2) | (cell[d] & 3)
    return _region(cell, bits) | local


@kernel
def _keys_hashed(position, small, lo, inv_cell, top, bits, cells, key):
    """Cell coordinates of each small body and their bucket in a table of 2**bits."""
    n, dim = position.shape
    for i in range(n):
        if small[i]:
            for d in range(dim):
                cells[i, d] = _cell_coordinate(position[i, d], lo[d], inv_cell, top)
            key[i] = _hash(cells[i], bits)


@kernel
def _half_shell(dim):
    """The offsets (dim,) of the half shell: cells whose first nonzero offset, slowest axis first, is +1.
    With the cell itself they cover every pair of neighbouring cells once."""
    shell = np.empty(((3**dim - 1) // 2, dim), dtype=np.int64)
    k = 0
    for o in range(3**dim):
        rest = o
        lead = 0
        for d in range(dim - 1, -1, -1):
            step = rest % 3 - 1
            rest //= 3
            shell[k, d] = step
            if step != 0:
                lead = step  # ends as the step along the slowest axis that moves
        if lead > 0:
            k += 1
    return shell


# ---------------------------------------------------------------- pairs
@kernel
def _close(packed, p, q, margin):
    # The same operations whichever body is p: (a - b)^2 == (b - a)^2 and R_p + R_q == R_q + R_p in
    # floating point, so the test is symmetric, and it is the definition evaluated as written.
    reach = packed[p, 3] + packed[q, 3] + 2.0 * margin
    dist2 = (packed[p, 0] - packed[q, 0]) ** 2
    dist2 += (packed[p, 1] - packed[q, 1]) ** 2
    dist2 += (packed[p, 2] - packed[q, 2]) ** 2
    return dist2 <= reach * reach


@inlined
def _append_run(near, count, q0, q1):
    """Append rows q0:q1 to ``near[:count]``; returns the new count. The first RUN_SLOTS slots are written
    whatever the run's length (a fixed loop, no branch to mispredict on it; ``near`` has room)."""
    for k in range(RUN_SLOTS):
        near[count + k] = q0 + k
    for q in range(q0 + RUN_SLOTS, q1):
        near[count + q - q0] = q
    return count + max(q1 - q0, 0)


@kernel
def _pairs_dense(first, packed, ids, row_key, centres, margin, pairs, near):
    """Candidate pairs among the small bodies of a dense grid, each once, as ``i << 32 | j``.

    Along the fastest axis the rows of consecutive cells are consecutive, so a body's half shell is read
    as runs of rows: the rest of its own cell and the next cell, then runs of three cells centred on
    ``cell + centre`` for the half shell of the slower axes (1 run in 2D, 4 in 3D). The runs are listed in
    ``near`` (scratch of ``len(row_key) + (len(centres) + 1) * RUN_SLOTS``) and tested in one loop: a loop
    per run of one or two rows mispredicted its exit each time.

    Returns the number of pairs. Every pair tested is written to the next free slot, which is taken
    only if it passes (an unconditional store: no branch to mispredict). The buffer holds
    ``len(pairs) - 1`` pairs; once it is full, writes go to its spare last slot, and pairs are counted
    but not kept.
    """
    m = len(row_key)
    capacity = len(pairs) - 1
    count = 0
    for p in range(m):
        c = row_key[p]
        listed = _append_run(near, np.int64(0), np.int64(p + 1), first[c + 2])  # one signature: int64 counts, rows
        for centre in centres:
            listed = _append_run(near, listed, np.int64(first[c + centre - 1]), first[c + centre + 2])
        i = np.int64(ids[p]) << 32
        for k in range(listed):
            q = near[k]
            pairs[min(count, capacity)] = i | ids[q]
            count += _close(packed, p, q, margin)
    return count


@inlined
def _scan_rows(packed, ids, row_cell, p, q0, q1, probe, z_lo, margin, pairs, count):
    """Test body p against those of the rows q0:q1 that lie in the column ``probe`` (slow axes), from
    cell z_lo to the cell after p's along the fastest axis (a bucket may hold rows of other cells)."""
    dim = len(probe)
    z_hi = row_cell[p, dim - 1] + 1
    capacity = len(pairs) - 1
    i = np.int64(ids[p]) << 32
    for q in range(q0, q1):
        inside = z_lo <= row_cell[q, dim - 1] <= z_hi
        for d in range(dim - 1):
            inside &= row_cell[q, d] == probe[d]
        if inside:
            pairs[min(count, capacity)] = i | ids[q]
            count += _close(packed, p, q, margin)
    return count


@kernel
def _pairs_hashed(first, packed, ids, row_cell, bits, margin, pairs):
    """As ``_pairs_dense``, for hashed cells. The runs along the fastest axis are the same; their cells
    are looked up bucket by bucket, consecutive buckets (cells of one block) read as one range of rows,
    and every row is checked to lie in the run (a bucket may hold rows of other cells too)."""
    m, dim = row_cell.shape
    fast = dim - 1
    shell = _half_shell(fast)
    probe = np.empty(dim, dtype=np.int64)
    count = 0
    for p in range(m):
        z = row_cell[p, fast]
        for run in range(len(shell) + 1):
            for d in range(fast):
                probe[d] = row_cell[p, d] + (shell[run - 1, d] if run else 0)
            # run 0: the rest of the body's own cell (rows after it) and the next cell along the axis
            z_lo = z if run == 0 else z - 1
            probe[fast] = z_lo
            b_last = _hash(probe, bits)
            q0 = p + 1 if run == 0 else first[b_last]
            for zz in range(z_lo + 1, z + 3):
                b = b_last + 1  # the next cell, in the same block
                if zz <= z + 1 and zz & 3 == 0:
                    probe[fast] = zz
                    b = _hash(probe, bits)
                if zz > z + 1 or b != b_last + 1:  # a range of consecutive buckets ends
                    q1 = first[b_last + 1]
                    count = _scan_rows(packed, ids, row_cell, p, q0, q1, probe, z_lo, margin, pairs, count)
                    q0 = first[b] if zz <= z + 1 else 0
                b_last = b
    return count


# ---------------------------------------------------------------- lists
@kernel
def _assemble(active, large, pairs, count, entries, by_row):
    """CSR lists (start, neighbours) from ``count`` unordered small-body pairs and the large bodies.

    Rows come out sorted with no per-row sort: the directed entries ``row << 32 | col`` are put in col
    order, then counting-sorted by row, stably. Both sorts are two-level: entries are split into the
    streams of coarse buckets of col; each bucket is sorted by col in cache and its entries, now in col
    order, split into the streams of coarse buckets of row; each of those is sorted by row in cache,
    into the final rows, and merged with the ids of the large bodies. ``entries`` and ``by_row`` are
    scratch of ``2 count``.
    """
    n = len(active)
    large_ids = np.flatnonzero(large & active)
    n_large = len(large_ids)
    n_active = 0
    for i in range(n):
        n_active += active[i]
    start = np.empty(n + 1, dtype=np.int64)
    total = 2 * count + n_large * (n_active - n_large) + n_large * (n_active - 1)
    neighbours = np.empty(total, dtype=np.int64)
    start[0] = 0
    if n == 0:
        return start, neighbours
    shift = _bucket_shift(n)
    n_coarse = ((n - 1) >> shift) + 1
    # entries per coarse bucket: the same by row as by col (both directions are listed)
    coarse = np.zeros(n_coarse + 1, dtype=np.int64)
    for k in range(count):
        coarse[(pairs[k] >> (32 + shift)) + 1] += 1
        coarse[((pairs[k] & _LOW32) >> shift) + 1] += 1
    widest = 0
    for b in range(n_coarse):
        widest = max(widest, coarse[b + 1])
        coarse[b + 1] += coarse[b]
    cursor = coarse[:-1].copy()
    for k in range(count):
        i = pairs[k] >> 32
        j = pairs[k] & _LOW32
        s = cursor[j >> shift]
        cursor[j >> shift] = s + 1
        entries[s] = pairs[k]
        s = cursor[i >> shift]
        cursor[i >> shift] = s + 1
        entries[s] = (j << 32) | i
    fill = np.empty((1 << shift) + 1, dtype=np.int64)
    local = np.empty(widest, dtype=np.int64)
    cursor[:] = coarse[:-1]
    for b in range(n_coarse):
        c0 = b << shift
        e0 = coarse[b]
        e1 = coarse[b + 1]
        fill[: (1 << shift) + 1] = 0
        for s in range(e0, e1):
            fill[(entries[s] & _LOW32) - c0 + 1] += 1
        for c in range(1 << shift):
            fill[c + 1] += fill[c]
        for s in range(e0, e1):
            c = (entries[s] & _LOW32) - c0
            local[fill[c]] = entries[s]
            fill[c] += 1
        for t in range(e1 - e0):
            r = local[t] >> (32 + shift)
            s = cursor[r]
            cursor[r] = s + 1
            by_row[s] = local[t]
    head = 0
    for b in range(n_coarse):
        i0 = b << shift
        i1 = min(i0 + (1 << shift), n)
        fill[: i1 - i0] = 0
        for s in range(coarse[b], coarse[b + 1]):
            fill[(by_row[s] >> 32) - i0] += 1
        for i in range(i0, i1):
            start[i] = head
            if not active[i]:
                pass
            elif large[i]:
                head += n_active - 1
            else:
                head += fill[i - i0] + n_large
            fill[i - i0] = start[i]
        for s in range(coarse[b], coarse[b + 1]):
            i = (by_row[s] >> 32) - i0
            neighbours[fill[i]] = by_row[s] & _LOW32
            fill[i] += 1
        if n_large == 0:
            continue
        for i in range(i0, i1):
            if not active[i]:
                continue
            s = start[i]
            if large[i]:
                for j in range(n):
                    if j != i and active[j]:
                        neighbours[s] = j
                        s += 1
                continue
            # merge the large ids in from the back of the row
            e = fill[i - i0]
            w = e + n_large - 1
            a = e - 1
            c = n_large - 1
            while c >= 0:
                if a >= s and neighbours[a] > large_ids[c]:
                    neighbours[w] = neighbours[a]
                    a -= 1
                else:
                    neighbours[w] = large_ids[c]
                    c -= 1
                w -= 1
    start[n] = head
    return start, neighbours


# ---------------------------------------------------------------- wrapper
def _grid(lo, hi, base):
    """Cells at least ``base`` wide over the box lo..hi: (1 / width, cells per axis, cells per axis with
    the padding, padded cell count). The width has a slack for round-off: a cell coordinate is off by
    at most about 3 eps times itself (in cells), so two bodies within ``base`` are never more than one
    cell apart."""
    extent = float((hi - lo).max())
    inv_cell = 1.0 / (base * (1.0 + 8.0 * _EPS * (extent / base + 1.0)))
    shape = np.floor((hi - lo) * inv_cell).astype(np.int64) + 1
    padded = shape + 2  # one empty layer above the slowest axis, and on both sides of the others
    padded[0] -= 1
    return inv_cell, shape, padded, float(np.prod(padded.astype(np.float64)))


def _bin_dense(position, radius, small, m, lo, inv_cell, shape, padded):
    """Sort the small bodies by cell of a dense grid; returns what ``_pairs_dense`` needs."""
    n, dim = position.shape
    ws = _workspace
    stride = np.ones(dim, dtype=np.int64)
    for d in range(dim - 2, -1, -1):
        stride[d] = stride[d + 1] * padded[d + 1]
    n_keys = int(stride[0] * padded[0])
    key = ws.take("key", n, np.int64)
    _keys_dense(position, small, lo, inv_cell, shape, stride, key)
    first = ws.take("first", n_keys + 1, np.int32)
    packed = ws.take("packed", m, np.float64, 4)
    ids = ws.take("ids", m, np.int32)
    row_key = ws.take("row_key", m, np.int32)
    _sort_by_key(
        key, n_keys, position, radius, small,
        ws.take("staged", m, np.float64, 4), ws.take("tag", m, np.int64), first, packed, ids, row_key,
    )  # fmt: skip
    # centres of the runs: the half shell of the slower axes, as linear offsets
    centres = _half_shell(dim - 1) @ stride[:-1] if dim > 1 else np.zeros(0, dtype=np.int64)
    near = ws.take("near", m + (len(centres) + 1) * RUN_SLOTS, np.int64)
    return first, packed, ids, row_key, centres, near


def _bin_hashed(position, radius, small, m, lo, inv_cell, shape):
    """Sort the small bodies by hashed cell; returns what ``_pairs_hashed`` needs."""
    n, dim = position.shape
    ws = _workspace
    # 2 to 4 buckets per body; keys stay below 2**31 (they share an int64 with an id)
    bits = min(max(2 * dim + 1, int(2 * m - 1).bit_length() + 1), 31)
    n_keys = 1 << bits
    key = ws.take("key", n, np.int64)
    cells = ws.take("cells", n, np.int64, dim)
    _keys_hashed(position, small, lo, inv_cell, int(shape.max()) - 1, bits, cells, key)
    first = ws.take("first", n_keys + 1, np.int32)
    packed = ws.take("packed", m, np.float64, 4)
    ids = ws.take("ids", m, np.int32)
    _sort_by_key(
        key, n_keys, position, radius, small,
        ws.take("staged", m, np.float64, 4), ws.take("tag", m, np.int64), first, packed, ids,
        ws.take("row_key", m, np.int32),
    )  # fmt: skip
    return first, packed, ids, cells[ids], bits


def _small_pairs(position, radius, small, m, largest_radius, margin):
    """Every pair of the ``m`` small bodies that passes the distance test, once each, as ``i << 32 | j``
    (a view of a scratch array) and their number."""
    lo, hi, finite = _bounding_box(position, small)
    if not finite:
        raise ValueError("broadphase: an active body has a position that is not finite")
    if m < 2:
        return np.empty(0, dtype=np.int64), 0
    dim = position.shape[1]
    # Cells as wide as the largest swept diameter (cells along an axis are kept below 2**40).
    extent = float((hi - lo).max())
    base = max(2.0 * (largest_radius + margin), extent / MAX_CELLS_PER_AXIS)
    if base == 0.0:
        base = 1.0  # points that are all at one place, with no reach
    inv_cell, shape, padded, n_cells = _grid(lo, hi, base)
    limit = min(DENSE_CELLS_PER_BODY * m + 64, 2.0**31 - 2)
    binned = None
    if n_cells <= limit:
        binned = _bin_dense(position, radius, small, m, lo, inv_cell, shape, padded)
    else:
        # A dilute scene: wider cells (any width above the reach is correct) bring the grid down to the
        # limit, unless that takes them too wide, or piles the bodies up (a clustered scene).
        stretch = (n_cells / limit) ** (1.0 / dim)
        while stretch <= MAX_STRETCH:
            wide = _grid(lo, hi, base * stretch)
            if wide[3] <= limit:
                binned = _bin_dense(position, radius, small, m, lo, *wide[:3])
                if _crowding(binned[0], binned[3]) > CROWDED:
                    binned = None
                break
            stretch *= 1.25
    dense = binned is not None
    if not dense:
        binned = _bin_hashed(position, radius, small, m, lo, inv_cell, shape)
    ws = _workspace
    capacity = int(ws.pairs_per_body * m) + 64
    while True:
        pairs = ws.take("pairs", capacity + 1, np.int64)
        if dense:
            count = _pairs_dense(*binned[:5], margin, pairs, binned[5])
        else:
            count = _pairs_hashed(*binned, margin, pairs)
        if count <= capacity:
            return pairs, count
        ws.pairs_per_body = max(ws.pairs_per_body, 1.25 * count / m)
        capacity = count


def candidates(position, radius, active, motion_bound, safety):
    """Candidate lists for the next interval, given each body's displacement bound ``motion_bound`` (m).

    ``position`` is (n, d) with d = 1, 2 or 3; ``radius``, ``active`` and ``motion_bound`` are (n,).
    Returns ``(start, neighbours, margin, large)``: the CSR lists (int64), the common sweep margin of small
    bodies (m) and the mask of large bodies. A small body that moves farther than ``margin`` from where
    it was must trigger a rebuild.
    """
    position = np.asarray(position, dtype=np.float64)
    radius = np.asarray(radius, dtype=np.float64)
    motion_bound = np.asarray(motion_bound, dtype=np.float64)
    n = len(radius)
    if position.ndim != 2 or position.shape[0] != n or not 1 <= position.shape[1] <= 3:
        raise ValueError(f"broadphase: position must be (n, 1..3) with n = {n}, got {position.shape}")
    if np.shape(active) != (n,) or motion_bound.shape != (n,):
        raise ValueError("broadphase: radius, active and motion_bound must all have shape (n,)")
    if n >= 2**31:
        raise ValueError("broadphase: at most 2**31 - 1 bodies (ids are stored in 32 bits)")
    swept = radius + safety * motion_bound
    live = np.array(active, dtype=np.bool_)
    large = np.zeros(n, dtype=np.bool_)
    lowest, highest, n_live = _extremes(swept, live)
    # The median is at least the lowest swept radius, so no body is large unless the highest exceeds
    # LARGE_FACTOR times the lowest (rounding is monotone, so this holds in floating point too): the
    # median, the costliest step of a uniform scene, is then skipped.
    if n_live and highest > LARGE_FACTOR * lowest:
        large = live & (swept > LARGE_FACTOR * np.median(swept[live]))
    small = live & ~large
    _, largest_motion, m = _extremes(motion_bound, small)
    _, largest_radius, _ = _extremes(radius, small)
    margin = float(safety * largest_motion) if m else 0.0
    pairs, count = _small_pairs(position, radius, small, m, largest_radius, margin)
    entries = _workspace.take("entries", 2 * count, np.int64)
    by_row = _workspace.take("by_row", 2 * count, np.int64)
    start, neighbours = _assemble(live, large, pairs, count, entries, by_row)
    return start, neighbours, margin, large
