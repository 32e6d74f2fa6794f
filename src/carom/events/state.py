"""The event engine's arrays and constants.

Layout: one row per body, in two arrays — ``body`` (floats) and ``link`` (integers) — with named
columns. Event-driven work visits bodies in random order, so a body's whole state sitting in two cache
lines beats one array per field; and kernels pass a handful of arrays rather than dozens (in Numba every
array handed to a call is passed field by field: a call handing over the engine's arrays costs some 450
cycles; the kernels are compiled without reference counting, see `carom.events.loop`).
Constants travel as named tuples of scalars, which cost nothing to pass.

Kernels always work in three dimensions: a 2D world is the plane z = 0 (its z components stay exactly 0
and its cell grid has one layer), so one set of kernels with unrolled x, y, z serves both.

Each body keeps its state at its own time ``TB`` (lazy update: free flight is exact, so a body is moved
only when something happens to it), one pending *pair event* (its earliest predicted contact with a body
or wall) and one pending *cell crossing*; the calendar orders bodies by the earlier of the two. A pair
event records its partner's ``COUNT`` at prediction time: when the partner's trajectory has changed
since, its count has moved on and the event is stale.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..config import Config
from ..contact.layout import SHARED_COLUMNS

# ``body`` columns (float64). X and V start three columns each: position (m) and velocity (m/s) at time
# TB (s). The first eight columns, all that a scan for contacts reads in a gas, fill one 64-byte cache line.
X, V, TB, RADIUS = 0, 3, 6, 7
A = 8  # three columns, m/s^2: gravity, 0 for fixed bodies, its projection for bodies resting on walls
INV_MASS, E = 11, 12  # E: coefficient of restitution
LAST_IMPACT = 13  # s: time of the latest counted impact (TC model)
EV_TIME = 14  # s: absolute time of the pending pair event (inf: none)
CX_TIME = 15  # s: absolute time of the next cell crossing (inf: none)
BODY_COLUMNS = 16

# ``link`` columns (int64).
COUNT = 0  # changes of trajectory so far
PARTNER = 1  # of the pending pair event: body id, or -1 - k for wall k
PARTNER_COUNT = 2  # the partner's COUNT when predicted
FACE = 3  # of the next crossing: 2 axis + 1 upwards, 2 axis downwards
CELL = 4  # three columns: cell coordinates
LINK_COLUMNS = 7

# ``chain`` columns (int32): each cell's bodies form a doubly linked list, starting at ``head[cell]``
# (-1: none). Kept apart from ``link`` so that a scan walks compact arrays that stay in cache.
NEXT, PREV = 0, 1

# ``walls`` columns: point (m), inward unit normal, restitution.
WALL_POINT, WALL_NORMAL, WALL_E = 0, 3, 6
WALL_COLUMNS = 7

# Contacts of one instant: ``cint`` columns (body i, body j or -1 - wall, how booked) and ``cflt`` columns
# (unit normal from i towards j, approach speed m/s, separation asked m/s, impulse N s, restitution).
CI, CJ, KIND = 0, 1, 2
NORMAL = SHARED_COLUMNS  # three columns, after the shared ones (`carom.contact.layout`)
CONTACT_COLUMNS = (3, SHARED_COLUMNS + 3)


# Counters (``tally``, int64) and sums (``sums``, float64) of one call; ``staged`` holds an instant's
# counts until it is committed, its virial in the last entry. STILL counts the events in a row whose time
# did not advance beyond round-off from the one before, at time PREVIOUS (kept from call to call).
EVENTS, IMPACTS, TC_USED, RESTED, HOPPED, CAPPED, N_LOG, STILL = range(8)
KINETIC, VIRIAL, PREVIOUS = range(3)


class Geometry(NamedTuple):
    """The cell grid: cells at least one largest diameter wide, so contacts lie in the 3^d cells around a
    body. On a periodic axis the cells tile ``[lower, lower + length)``; on other axes the outermost
    cells extend to infinity (a body outside the grid lies in a border cell)."""

    lower: tuple[float, float, float]  # m
    width: tuple[float, float, float]  # m
    shape: tuple[int, int, int]  # cells per axis
    periodic: tuple[bool, bool, bool]
    length: tuple[float, float, float]  # m: box length on periodic axes, grid extent on others


class Params(NamedTuple):
    """Tolerances and settings of one call."""

    tol: float  # contact tolerance, fraction of the smaller radius (`carom.narrowphase.spheres.touch_slack`)
    size: float  # m: the largest coordinate magnitude, for the round-off part of the touching rule
    speed_tol: float  # m/s: approach speeds up to this count as zero
    accel_tol: float  # m/s^2: normal accelerations up to this count as zero
    resting_speed: float  # m/s
    max_speed: float  # m/s: a body faster than this at its event stops the run (RUNAWAY)
    max_still: int  # events in a row without time advancing beyond round-off that stop the run (STALLED)
    tc: float  # s: TC-model duration (0: off)
    max_rounds: int
    lcp_iterations: int
    lcp_tol_v: float  # m/s
    lcp_tol_a: float  # m/s^2
    rule: int  # restitution rule code (carom.materials.RULE_CODES)
    gravity: tuple[float, float, float]  # m/s^2
    has_gravity: bool


class Contacts(NamedTuple):
    """Scratch for one instant (fixed capacity: an instant that needs more is undone and repeated after the
    caller has grown them) and for the cells scanned."""

    cint: np.ndarray  # (cap, 3) int64, see CI...
    cflt: np.ndarray  # (cap, 7) float64, see NORMAL...
    selected: np.ndarray  # (cap,) int64 contacts of the current round
    cluster: np.ndarray  # (n,) int64 bodies whose velocity the current instant may change
    saved_v: np.ndarray  # (n, 3) their velocities before it (to undo it)
    flags: np.ndarray  # (n, 3) bool: joined the cluster, had a counted impact, contacts gathered
    cells: np.ndarray  # (36,) int64: cell ids to scan, then per-axis coordinates (3 x 3)
    near: np.ndarray  # (8 cap,) int64: the bodies around each gathered body, listed one body after another
    near_x: np.ndarray  # (8 cap, 3) their positions relative to it (m, nearest image)
    lists: np.ndarray  # (n, 3) int64: gathered body, start and end of its list in ``near``
    used: np.ndarray  # (2,) int64: rows of ``lists`` and entries of ``near`` in use
    rel: np.ndarray  # (3, 3) relative position, velocity, acceleration for the general solver
    staged: np.ndarray  # (8,) the instant's counts (indexed like the tally) and virial (last)
    wall_idx: np.ndarray  # (k, 3) int64: body row 0, -1 - wall, active index (walls a body rests on)
    wall_flt: np.ndarray  # (k + 1, 5): normal, 0 target, force; row k: acceleration, 1 (inverse mass)


def new_body(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(body, link) for n bodies; ``body`` rows start on 64-byte boundaries (two cache lines a body)."""
    raw = np.zeros(n * BODY_COLUMNS + 8)
    start = (-raw.ctypes.data // 8) % 8
    body = raw[start : start + n * BODY_COLUMNS].reshape(n, BODY_COLUMNS)
    body[:, [LAST_IMPACT]] = -math.inf
    body[:, [EV_TIME, CX_TIME]] = math.inf
    link = np.zeros((n, LINK_COLUMNS), dtype=np.int64)
    return body, link


def new_contacts(n: int, n_walls: int, capacity: int) -> Contacts:
    wall_flt = np.zeros((n_walls + 1, 5))
    wall_flt[n_walls, 3] = 1.0
    return Contacts(
        cint=np.zeros((capacity, CONTACT_COLUMNS[0]), dtype=np.int64), cflt=np.zeros((capacity, CONTACT_COLUMNS[1])),
        selected=np.zeros(capacity, dtype=np.int64), cluster=np.zeros(n, dtype=np.int64), saved_v=np.zeros((n, 3)),
        flags=np.zeros((n, 3), dtype=np.bool_), cells=np.zeros(36, dtype=np.int64),
        near=np.zeros(8 * capacity, dtype=np.int64), near_x=np.zeros((8 * capacity, 3)),
        lists=np.zeros((n, 3), dtype=np.int64), used=np.zeros(2, dtype=np.int64), rel=np.zeros((3, 3)),
        staged=np.zeros(8), wall_idx=np.zeros((n_walls, 3), dtype=np.int64), wall_flt=wall_flt,
    )  # fmt: skip


def scene_arrays(world) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(walls, pair-override keys, values) of ``world`` for kernels."""
    walls = np.zeros((world.walls.n, WALL_COLUMNS))
    walls[:, WALL_POINT : WALL_POINT + world.dim] = world.walls.point
    walls[:, WALL_NORMAL : WALL_NORMAL + world.dim] = world.walls.normal
    walls[:, WALL_E] = world.walls.restitution
    return (walls, *world.pair_restitution_arrays())


def make_params(world, speed_scale: float, size: float) -> Params:
    """Kernel settings for ``world`` (an `EventWorld`); ``speed_scale`` (m/s) sets the round-off floor
    of speeds, ``Config.speed_tolerance * speed_scale``, and the runaway speed, ``Config.max_speed_ratio *
    speed_scale``; ``size`` (m) that of the touching rule's round-off (`EventWorld._coordinate_size`). Both are fixed
    when the engine is built, so that a restart is exact."""
    from ..materials import RULE_CODES

    cfg: Config = world.config
    g = np.zeros(3)
    g[: world.dim] = world.gravity
    g_norm = float(np.linalg.norm(g))
    return Params(
        tol=cfg.contact_tolerance, size=size, speed_tol=cfg.speed_tolerance * speed_scale,
        accel_tol=cfg.speed_tolerance * g_norm, resting_speed=cfg.resting_speed,
        max_speed=cfg.max_speed_ratio * speed_scale, max_still=cfg.max_body_events + 10 * world.bodies.n,
        tc=world.tc,
        max_rounds=cfg.max_rounds, lcp_iterations=cfg.lcp_iterations, lcp_tol_v=cfg.lcp_tolerance * speed_scale,
        lcp_tol_a=cfg.lcp_tolerance * g_norm, rule=RULE_CODES[world.restitution_rule],
        gravity=(float(g[0]), float(g[1]), float(g[2])), has_gravity=g_norm > 0,
    )  # fmt: skip
