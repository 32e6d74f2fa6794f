"""The event loop: take the earliest event, process it, repeat.

Each body has one entry in the calendar, keyed by the earlier of its pending pair event and its next
cell crossing. A popped pair event whose partner has changed trajectory since the prediction is *stale*:
the body is simply predicted again (its key was a lower bound of its true next event, so nothing was
missed). Per contact event the work is O(bodies in the 3^d cells of the two bodies) for the predictions
plus O(log n) for the calendar.

The stages of one event (`resolve._instant` and `resolve._commit`, `resolve._cross`, `predict._predict`
and what they call once) are inlined into the loop (``forceinline=True``): a call that hands over the
engine's arrays costs more than most events' arithmetic (see `carom.events.state`). The scans over bodies
stay calls.

Beyond the caches an event is a chain of cache misses, each waiting for the one before (the body's rows,
its partner's, their cells, the bodies in them); the loop starts loading the rows of the calendar's
runner-up, most often the next event's body, and the partner's cells early, so that misses overlap
(docs/performance.md).

Every kernel of the engine is compiled without Numba's reference counting (``_nrt=False``): they allocate
nothing (every array comes from the caller), and with it each array handed between the inlined helpers
cost a call to ``NRT_incref``/``NRT_decref``, some 430 calls per event, a third of its cost.
"""

from __future__ import annotations

import math

from ..config import ROUNDOFF
from ..errors import OK, STALLED
from ..intrinsics import prefetch
from ..jit import kernel
from ..kinematics import moved
from .calendar import rebuild_calendar, runner_up, update_key
from .cells import next_crossing, prefetch_around
from .predict import body_kinetic, predict_body
from .resolve import commit_instant, cross_face, rest_on_walls, solve_instant
from .state import COUNT, CX_TIME, EV_TIME, EVENTS, FACE, PARTNER, PARTNER_COUNT, PREVIOUS, STILL, TB, A, V, X


@kernel(refcounts=False)
def start_events(body, link, head, chain, geo, walls, p, ct, key, tree, t):
    """Resting accelerations, first predictions and the calendar, every body being at time t."""
    n = len(body)
    for b in range(n):
        if p.has_gravity:
            rest_on_walls(body, walls, p, ct.wall_idx, ct.wall_flt, b, t)
    for b in range(n):
        predict_body(body, link, head, chain, geo, walls, p, ct.cells, ct.rel, b, t)
        delay, face = next_crossing(body, link, geo, b)
        body[b, CX_TIME] = t + delay
        link[b, FACE] = face
        key[b] = min(body[b, EV_TIME], body[b, CX_TIME])
    rebuild_calendar(key, tree)


@kernel(refcounts=False)
def run_events(body, link, head, chain, geo, walls, keys, values, p, ct, log, key, tree, tally, sums, t_end,
         max_events):  # fmt: skip
    """Process events up to time t_end, at most ``max_events`` of them. Returns (status, time of the last
    event processed or -inf); a status other than OK stops at the event of body ``tree[1]``, undone: grow
    an array and call again, or (CRUSHED, RUNAWAY, STALLED) stop the run.

    More than ``p.max_still`` events in a row whose times do not advance beyond round-off stop the run
    (STALLED): a body's next event then comes sooner than the clock can tell (a body crushed ever faster),
    and the run would repeat it forever."""
    last = -math.inf
    done = 0
    while done < max_events:
        b = tree[1]
        t = key[b]
        if t > t_end or t == math.inf:
            break
        c = runner_up(key, tree, b)  # most likely the next event's body: start loading its rows
        prefetch(body, c)
        prefetch(link, c)
        prefetch(chain, c)
        crossing = body[b, CX_TIME] <= body[b, EV_TIME]
        if not crossing:
            j = link[b, PARTNER]
            if j >= 0 and link[b, PARTNER_COUNT] != link[j, COUNT]:
                predict_body(body, link, head, chain, geo, walls, p, ct.cells, ct.rel, b, t)
                update_key(key, tree, b, min(body[b, EV_TIME], body[b, CX_TIME]))
                continue
            if j >= 0:
                prefetch_around(link, head, geo, j)  # for the partner's gather, which comes after b's
        if t - sums[PREVIOUS] <= ROUNDOFF * abs(t):
            tally[STILL] += 1
            if tally[STILL] > p.max_still:
                return STALLED, last
        else:
            tally[STILL] = 0
        sums[PREVIOUS] = t
        if crossing:
            cross_face(body, link, head, chain, geo, p, ct.cells, ct.rel, key, tree, sums, b, t)
        else:
            status, n_cl = solve_instant(body, link, head, chain, geo, walls, keys, values, p, ct, log, tally,
                                         sums, b, t)  # fmt: skip
            if status != OK:
                return status, last
            commit_instant(body, link, head, chain, geo, walls, p, ct, key, tree, tally, sums, n_cl, t)
        tally[EVENTS] += 1
        done += 1
        last = t
    return OK, last


@kernel(refcounts=False)
def synced(body, t, x_out, v_out):
    """Every body's position and velocity at time t, into x_out, v_out ((n, dim) arrays)."""
    for b in range(len(body)):
        h = t - body[b, TB]
        for d in range(x_out.shape[1]):
            x_out[b, d] = moved(body[b, X + d], body[b, V + d], body[b, A + d], h)
            v_out[b, d] = body[b, V + d] + body[b, A + d] * h


@kernel(refcounts=False)
def kinetic_pending(body, t):
    """Sum over bodies of the integral of m |v|^2 from each body's own time to t (J s)."""
    total = 0.0
    for b in range(len(body)):
        total += body_kinetic(body, b, t - body[b, TB])
    return total
