"""Resolution: what happens at an event, and the re-prediction of what it changed.

An *instant* (a contact event) is solved as `World` solves one: the touching contacts of the two bodies
are gathered; in rounds, the contacts that approach now (or are pressed together) are solved together
by `carom.contact.solver.solve_contacts`, and every body that received an impulse adds its own touching contacts
(an impulse travels down a touching chain one ball per round: Newton's cradle). Then bodies touching walls
without moving off them rest on them (acceleration-level contact problem: gravity less the walls' normal
reaction, so the body slides along exactly), and only the gathered bodies are predicted again. Positions
do not change at an instant, so gathering a body lists the bodies around it with their relative positions
(``Contacts.near``); its new prediction runs over that list with the new velocities, without walking
the cells again.

Impact law per contact (approach speed u; e from the pair's restitution rule or override):

* separation ``e u`` (an *impact*, counted and reported);
* ``e < 1`` and ``u <= resting_speed``: separation 0, *resting* (not counted, as in `World`). This ends
  the Zeno sequence of a ball bouncing on a floor, and inelastic collapse in free gases: a cluster whose
  relative speeds decay geometrically sticks once they fall below ``resting_speed``.
* two bodies pressed together by gravity (one fixed, or resting on a wall, the other free) approaching
  slower than ``resting_speed``: separation ``resting_speed`` (a *hop*, not counted). A body resting on
  another is then carried by hops of period ``2 resting_speed / a_n``, whose mean momentum transfer is
  exactly the normal force ``m a_n``; at most ``mu resting_speed^2 / 2`` of energy is added per contact.
* TC model (Luding & McNamara 1998), when ``tc > 0``: a pair impact of a body that had another impact
  less than ``tc`` earlier is elastic.
* after ``max_rounds`` rounds at one instant, separation 0 (a `ContactWarning`). If contacts still
  approach after ``max_rounds`` more such rounds, no velocities satisfy them all: a body is crushed
  between bodies or walls that close in on it (a moving fixed body). The instant is undone and the run
  stops (status CRUSHED, a `carom.ContactError`). Crushed elastically, a body instead gains twice the
  fixed body's speed at each bounce: an event of a body faster than ``Params.max_speed`` stops the run
  before it is resolved (status RUNAWAY).

A crossing event moves the body to its new cell and predicts it against the slab that came into reach.
"""

from __future__ import annotations

import math

import numpy as np

from ..contact.law import approach_speed
from ..contact.layout import APPROACH, IMPULSE, RESTITUTION, TARGET
from ..contact.log import log_impact
from ..contact.solver import solve_contacts, solve_one
from ..errors import CONTACTS_FULL, CRUSHED, LOG_FULL, OK, RUNAWAY
from ..intrinsics import prefetch
from ..jit import inlined, kernel
from ..materials import pair_restitution
from ..narrowphase.spheres import touch_slack, wall_touch_slack
from .calendar import update_key
from .cells import cells_around, move_to_cell, next_crossing, prefetch_first
from .predict import (
    advance,
    flight,
    nearest_image,
    opening_speed,
    pair_state,
    predict_body,
    relative_state,
    scan_cells,
    scan_near,
    set_event,
    set_prediction,
    wall_state,
)
from .state import (
    CAPPED,
    CI,
    CJ,
    COUNT,
    CX_TIME,
    EV_TIME,
    FACE,
    HOPPED,
    IMPACTS,
    INV_MASS,
    KIND,
    LAST_IMPACT,
    N_LOG,
    NEXT,
    NORMAL,
    PARTNER,
    RADIUS,
    RESTED,
    TB,
    TC_USED,
    VIRIAL,
    WALL_E,
    WALL_NORMAL,
    A,
    E,
    V,
    X,
)  # fmt: skip

IMPACT, RESTING, HOP, ELASTIC_TC = 0, 1, 2, 3
JOINED, IMPACTED, GATHERED = 0, 1, 2  # columns of Contacts.flags


@inlined
def _add_contact(cint, cflt, nc, i, j, n0, n1, n2):
    """Append contact (i, j, unit normal from i towards j); -1 when the arrays are full."""
    if nc == len(cint):
        return -1
    cint[nc, CI] = i
    cint[nc, CJ] = j
    cflt[nc, NORMAL] = n0
    cflt[nc, NORMAL + 1] = n1
    cflt[nc, NORMAL + 2] = n2
    return nc + 1


@inlined
def _join(body, ct, sums, b, t, n_cl):
    """Move body b to t and add it to the cluster (its velocity saved), once. Returns n_cl."""
    if ct.flags[b, JOINED]:
        return n_cl
    advance(body, b, t, sums)
    ct.cluster[n_cl] = b
    for d in range(3):
        ct.saved_v[n_cl, d] = body[b, V + d]
    ct.flags[b, JOINED] = True
    return n_cl + 1


@inlined
def _gather(body, link, head, chain, geo, walls, p, ct, sums, b, t, n_cl, nc):
    """Add body b to the cluster and add its touching contacts with bodies whose contacts are not
    gathered yet and with walls; list the bodies around it, for its prediction once the instant is
    solved. Returns (n_cl, nc); nc = -1 if the contact arrays are full."""
    n_cl = _join(body, ct, sums, b, t, n_cl)
    ct.flags[b, GATHERED] = True
    cint, cflt, flags, near, near_x = ct.cint, ct.cflt, ct.flags, ct.near, ct.near_x
    row, start = ct.used
    end = start
    n_cells = cells_around(link, geo, b, np.int64(-1), np.int64(0), ct.cells)
    prefetch_first(body, head, chain, ct.cells, n_cells)
    for m in range(n_cells):
        j = np.int64(head[ct.cells[m]])
        while j >= 0:
            if j != b:
                if end == len(near):
                    return n_cl, -1
                near[end] = j
                end += 1
            j = np.int64(chain[j, NEXT])
    for k in range(start, end):  # the rows read below, and the count of the one that becomes a partner
        prefetch(body, near[k])
        prefetch(link, near[k])
    ct.lists[row, 0], ct.lists[row, 1], ct.lists[row, 2] = b, start, end
    ct.used[0], ct.used[1] = row + 1, end
    xb0, xb1, xb2 = body[b, X], body[b, X + 1], body[b, X + 2]
    p0, p1, p2 = geo.periodic
    l0, l1, l2 = geo.length
    for k in range(start, end):
        j = near[k]
        xj0, xj1, xj2 = flight(body, j, t - body[j, TB], p)[:3]
        x0 = near_x[k, 0] = nearest_image(xj0 - xb0, p0, l0)
        x1 = near_x[k, 1] = nearest_image(xj1 - xb1, p1, l1)
        x2 = near_x[k, 2] = nearest_image(xj2 - xb2, p2, l2)
        xx = x0 * x0 + x1 * x1 + x2 * x2
        reach = body[b, RADIUS] + body[j, RADIUS] + touch_slack(body[b, RADIUS], body[j, RADIUS], p.size, p.tol)
        if (0.0 < xx <= reach * reach and not flags[j, GATHERED]
                and (body[b, INV_MASS] != 0.0 or body[j, INV_MASS] != 0.0)):  # fmt: skip
            dist = math.sqrt(xx)
            nc = _add_contact(cint, cflt, nc, b, j, x0 / dist, x1 / dist, x2 / dist)
            if nc < 0:
                return n_cl, nc
            advance(body, j, t, sums)
    if body[b, INV_MASS] != 0.0:
        for k in range(walls.shape[0]):
            if wall_state(body, walls, p, b, k, t)[0]:
                n = walls[k, WALL_NORMAL : WALL_NORMAL + 3]
                nc = _add_contact(cint, cflt, nc, b, -1 - k, -n[0], -n[1], -n[2])
                if nc < 0:
                    return n_cl, nc
    return n_cl, nc


@inlined
def _now(body, geo, walls, p, cint, c, t):
    """Whether contact c takes part in the current round (the same test as the prediction's)."""
    i = cint[c, CI]
    j = cint[c, CJ]
    if j >= 0:
        x0, x1, x2, v0, v1, v2, a0, a1, a2 = relative_state(body, geo, p, i, j, t)
        ri, rj = body[i, RADIUS], body[j, RADIUS]
        return pair_state(x0, x1, x2, v0, v1, v2, a0, a1, a2, ri + rj, touch_slack(ri, rj, p.size, p.tol), p)[1]
    # walls: approaching only; a body pressed onto a wall is given a resting acceleration instead
    return -wall_state(body, walls, p, i, -1 - j, t)[3] > p.speed_tol


@inlined
def _impact_law(body, walls, keys, values, p, cint, cflt, c, t, capped):
    """(separation speed asked of contact c, how to book it: IMPACT, RESTING, HOP or ELASTIC_TC); sets
    the contact's restitution column."""
    i = cint[c, CI]
    j = cint[c, CJ]
    u = cflt[c, APPROACH]
    e = pair_restitution(i, j, body[:, E], walls[:, WALL_E], p.rule, keys, values)
    cflt[c, RESTITUTION] = e
    if capped:
        cflt[c, RESTITUTION] = 0.0
        return 0.0, IMPACT if (u > p.resting_speed or e == 1.0) else RESTING
    if j >= 0:
        kind = IMPACT
        if p.tc > 0.0 and (t - p.tc < body[i, LAST_IMPACT] < t or t - p.tc < body[j, LAST_IMPACT] < t):
            e = cflt[c, RESTITUTION] = 1.0
            kind = ELASTIC_TC
        pressing = 0.0
        for d in range(3):
            pressing += (body[i, A + d] - body[j, A + d]) * cflt[c, NORMAL + d]
        if pressing > p.accel_tol:
            hop = max(p.resting_speed, opening_speed(pressing, touch_slack(body[i, RADIUS], body[j, RADIUS], p.size,
                                                                            p.tol)))  # fmt: skip
            return (hop, HOP) if e * u < hop else (e * u, kind)
        if kind == ELASTIC_TC:
            return u, kind
    if e < 1.0 and u <= p.resting_speed:
        cflt[c, RESTITUTION] = 0.0
        return 0.0, RESTING
    return e * u, IMPACT


@inlined
def _book(body, cint, cflt, ct, log, tally, c, t):
    """Book contact c after its round: the virial, counts, and the log for counted impacts. Returns
    False if the log is full."""
    impulse = cflt[c, IMPULSE]
    i = cint[c, CI]
    j = cint[c, CJ]
    kind = cint[c, KIND]
    if j >= 0:
        ct.staged[-1] += impulse * (body[i, RADIUS] + body[j, RADIUS])
    if kind == IMPACT or kind == ELASTIC_TC:
        ct.staged[IMPACTS] += 1.0
        ct.staged[TC_USED] += kind == ELASTIC_TC
        ct.flags[i, IMPACTED] = True
        if j >= 0:
            ct.flags[j, IMPACTED] = True
        if len(log.time):
            if tally[N_LOG] == len(log.time):
                return False
            flip = 0 <= j < i  # report body pairs as i < j (the normal from i towards j)
            tally[N_LOG] = log_impact(log, tally[N_LOG], t, j if flip else i, i if flip else j,
                                      cflt[c, NORMAL : NORMAL + 3], -1.0 if flip else 1.0, impulse, cflt[c, APPROACH],
                                      cflt[c, RESTITUTION])  # fmt: skip
    elif j >= 0:
        ct.staged[RESTED if kind == RESTING else HOPPED] += 1.0
    return True


# a call, not inlined: it runs only when an instant needs too many rounds
@kernel(refcounts=False)
def _gather_cluster(body, link, head, chain, geo, walls, p, ct, sums, t, n_cl, nc):
    """Gather every body that touches one already gathered, until the whole touching cluster's contacts are
    listed. Returns (n_cl, nc); nc = -1 if the contact arrays are full."""
    c = 0
    while c < nc:
        for b in (ct.cint[c, CI], ct.cint[c, CJ]):
            if b >= 0 and body[b, INV_MASS] != 0.0 and not ct.flags[b, GATHERED]:
                n_cl, nc = _gather(body, link, head, chain, geo, walls, p, ct, sums, b, t, n_cl, nc)
                if nc < 0:
                    return n_cl, nc
        c += 1
    return n_cl, nc


@inlined
def _rounds(body, link, head, chain, geo, walls, keys, values, p, ct, log, tally, sums, t, n_cl, nc):
    """Solve the gathered contacts in rounds, gathering every body that receives an impulse. Counts go to
    ``ct.staged``, impacts to the log. Returns (status, n_cl, nc)."""
    cint, cflt, selected = ct.cint, ct.cflt, ct.selected
    velocity = body[:, V : V + 3]
    rounds = 0
    while True:
        ns = 0
        for c in range(nc):
            if _now(body, geo, walls, p, cint, c, t):
                selected[ns] = c
                cflt[c, APPROACH] = approach_speed(c, cint[:, CI], cint[:, CJ], cflt[:, NORMAL : NORMAL + 3], velocity)
                ns += 1
        if ns == 0:
            return OK, n_cl, nc
        rounds += 1
        if rounds > 2 * p.max_rounds:
            return CRUSHED, n_cl, nc
        capped = rounds > p.max_rounds
        if capped:
            # the whole touching cluster, every contact in it at once, perfectly inelastic (round by round
            # the impulse would still reach one body further each time: a long chain would look crushed)
            ct.staged[CAPPED] = 1.0
            n_cl, nc = _gather_cluster(body, link, head, chain, geo, walls, p, ct, sums, t, n_cl, nc)
            if nc < 0:
                return CONTACTS_FULL, n_cl, nc
            for c in range(nc):
                selected[c] = c
                cflt[c, APPROACH] = approach_speed(c, cint[:, CI], cint[:, CJ], cflt[:, NORMAL : NORMAL + 3], velocity)
            ns = nc
        for s in range(ns):
            c = selected[s]
            cflt[c, TARGET], cint[c, KIND] = _impact_law(body, walls, keys, values, p, cint, cflt, c, t, capped)
            for b in (cint[c, CI], cint[c, CJ]):
                if b >= 0 and body[b, INV_MASS] != 0.0:
                    n_cl = _join(body, ct, sums, b, t, n_cl)
        if ns == 1:  # most instants of a gas: one pair (the call and the second sweep would cost more)
            solve_one(selected[0], cint[:, CI], cint[:, CJ], cflt[:, NORMAL : NORMAL + 3], cflt[:, TARGET], velocity,
                       body[:, INV_MASS], cflt[:, IMPULSE])  # fmt: skip
        else:
            solve_contacts(selected[:ns], cint[:, CI], cint[:, CJ], cflt[:, NORMAL : NORMAL + 3], cflt[:, TARGET],
                            velocity, body[:, INV_MASS], cflt[:, IMPULSE], p.lcp_iterations, p.lcp_tol_v)  # fmt: skip
        for s in range(ns):
            c = selected[s]
            if cflt[c, IMPULSE] <= 0.0:
                continue
            if not _book(body, cint, cflt, ct, log, tally, c, t):
                return LOG_FULL, n_cl, nc
            for b in (cint[c, CI], cint[c, CJ]):
                if b >= 0 and body[b, INV_MASS] != 0.0 and not ct.flags[b, GATHERED]:
                    n_cl, nc = _gather(body, link, head, chain, geo, walls, p, ct, sums, b, t, n_cl, nc)
                    if nc < 0:
                        return CONTACTS_FULL, n_cl, nc


@kernel(refcounts=False)
def rest_on_walls(body, walls, p, wall_idx, wall_flt, b, t):
    """Give body b (at time t) its acceleration: gravity, less the reaction of every wall it touches
    without moving off it (an acceleration-level contact problem; mass drops out against walls). Its
    normal velocity into a wall that carries it is zeroed, so that it slides exactly along the wall."""
    if body[b, INV_MASS] == 0.0:
        return
    k_walls = walls.shape[0]
    m = 0
    for k in range(k_walls):
        touching, _, _, ns, _ = wall_state(body, walls, p, b, k, t)
        pressing = 0.0
        for d in range(3):
            pressing -= p.gravity[d] * walls[k, WALL_NORMAL + d]
        hop = opening_speed(pressing, wall_touch_slack(body[b, RADIUS], p.size, p.tol))
        rests = ns <= p.speed_tol or (pressing > p.accel_tol and ns < hop)
        if touching and rests:
            wall_idx[m, 1] = -1 - k
            wall_idx[m, 2] = m
            for d in range(3):
                wall_flt[m, d] = -walls[k, WALL_NORMAL + d]
            m += 1
    rate = wall_flt[k_walls : k_walls + 1, 0:3]
    for d in range(3):
        rate[0, d] = p.gravity[d]
    if m:
        solve_contacts(wall_idx[:m, 2], wall_idx[:, 0], wall_idx[:, 1], wall_flt[:, 0:3], wall_flt[:, 3], rate,
                        wall_flt[k_walls, 3:4], wall_flt[:, 4], p.lcp_iterations, p.lcp_tol_a)  # fmt: skip
        for c in range(m):
            if wall_flt[c, 4] > 0.0:
                ns = 0.0
                for d in range(3):
                    ns += body[b, V + d] * wall_flt[c, d]
                for d in range(3):
                    body[b, V + d] -= ns * wall_flt[c, d]
    for d in range(3):
        body[b, A + d] = rate[0, d]


@inlined
def _repredict(body, link, head, chain, geo, walls, p, ct, key, tree, b, start, end, t):
    """New pair event and cell crossing of body b (which is at time t), from the bodies ``ct.near[start:
    end]`` listed around it (start = -1: from its cells)."""
    if start < 0:
        predict_body(body, link, head, chain, geo, walls, p, ct.cells, ct.rel, b, t)
    else:
        best, partner = scan_near(body, p, ct.rel, ct.near, ct.near_x, start, end, b, t)
        set_prediction(body, link, walls, p, b, t, best, partner)
    delay, face = next_crossing(body, link, geo, b)
    body[b, CX_TIME] = t + delay
    link[b, FACE] = face
    update_key(key, tree, b, min(body[b, EV_TIME], body[b, CX_TIME]))


@inlined
def _speed2(body, b):
    """|v|^2 of body b at its own time (m^2/s^2)."""
    return body[b, V] ** 2 + body[b, V + 1] ** 2 + body[b, V + 2] ** 2


@inlined
def solve_instant(body, link, head, chain, geo, walls, keys, values, p, ct, log, tally, sums, i, t):
    """Solve body i's pair event at time t: gather the touching contacts and solve them in rounds. Returns
    (status, bodies in the cluster). OK: `commit_instant` completes the instant. CONTACTS_FULL / LOG_FULL:
    everything undone (the caller grows the arrays and calls again). CRUSHED / RUNAWAY: undone too (the
    caller stops)."""
    j = link[i, PARTNER]
    if _speed2(body, i) > p.max_speed**2 or (j >= 0 and _speed2(body, j) > p.max_speed**2):
        return RUNAWAY, 0
    n_log = tally[N_LOG]
    ct.staged[:] = 0.0
    ct.used[:] = 0
    n_cl, nc = _gather(body, link, head, chain, geo, walls, p, ct, sums, i, t, np.int64(0), np.int64(0))
    if nc >= 0 and j >= 0 and body[j, INV_MASS] != 0.0:
        n_cl, nc = _gather(body, link, head, chain, geo, walls, p, ct, sums, j, t, n_cl, nc)
    status = CONTACTS_FULL
    if nc >= 0:
        status, n_cl, nc = _rounds(body, link, head, chain, geo, walls, keys, values, p, ct, log, tally, sums,
                                   t, n_cl, nc)  # fmt: skip
    if status != OK:
        for q in range(n_cl):
            b = ct.cluster[q]
            for d in range(3):
                body[b, V + d] = ct.saved_v[q, d]
            ct.flags[b] = False
        tally[N_LOG] = n_log
    return status, n_cl


@inlined
def commit_instant(body, link, head, chain, geo, walls, p, ct, key, tree, tally, sums, n_cl, t):
    """Complete an instant that `solve_instant` solved at time t, with ``n_cl`` bodies in its cluster: book its
    counts, rest its bodies on walls, predict each of them again.

    Two stages rather than one for Numba's sake: inlining a function costs about the product of its
    blocks and its variables, so the instant inlined into the loop in one piece took 79 s and 3.0 GB to
    compile, in two 68 s and 2.3 GB (same machine code speed, same results)."""
    for k in (IMPACTS, TC_USED, RESTED, HOPPED, CAPPED):
        tally[k] += int(ct.staged[k])
    sums[VIRIAL] += ct.staged[-1]
    for q in range(n_cl):
        b = ct.cluster[q]
        if p.has_gravity:
            rest_on_walls(body, walls, p, ct.wall_idx, ct.wall_flt, b, t)
        link[b, COUNT] += 1
        if ct.flags[b, IMPACTED]:
            body[b, LAST_IMPACT] = t
    for g in range(ct.used[0]):
        _repredict(body, link, head, chain, geo, walls, p, ct, key, tree, ct.lists[g, 0], ct.lists[g, 1],
                   ct.lists[g, 2], t)  # fmt: skip
    for q in range(n_cl):
        b = ct.cluster[q]
        if not ct.flags[b, GATHERED]:
            _repredict(body, link, head, chain, geo, walls, p, ct, key, tree, b, np.int64(-1), np.int64(-1), t)
        ct.flags[b] = False


@inlined
def cross_face(body, link, head, chain, geo, p, cells, rel, key, tree, sums, b, t):
    """Body b crosses a cell face at time t: move it to the next cell and predict it against the slab of
    cells that came into reach."""
    advance(body, b, t, sums)
    move_to_cell(body, link, head, chain, geo, b)
    face = link[b, FACE]
    best, partner = scan_cells(body, link, head, chain, geo, p, cells, rel, b, t, face >> 1, 1 if face & 1 else -1,
                          body[b, EV_TIME])  # fmt: skip
    if partner >= 0:
        set_event(body, link, b, best, partner)
    delay, face = next_crossing(body, link, geo, b)
    body[b, CX_TIME] = t + delay
    link[b, FACE] = face
    update_key(key, tree, b, min(body[b, EV_TIME], body[b, CX_TIME]))
