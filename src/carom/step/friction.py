"""Friction in the drift: spin kept in time, friction at impacts and in lasting contact, regime events.

Within a drift each body turns with a constant angular acceleration between its events (`spin_to`, lazily,
like `carom.kinematics.advance` for its centre). Friction enters at three places, all through
`carom.contact.friction`:

* **impacts** — each round's normal impulses (Newton) and tangential ones (Coulomb, ``mu_k``) are solved
  together (`solve_joint` on the velocities);
* **lasting contact** — after each force solve of the resting set, its friction forces and rolling torques
  (static up to ``mu_s N`` or kinetic ``mu_k N``); the contacts of a cluster (a pile) are held, their normal
  and friction rows solved together (`solve_joint` on the accelerations); then the lone sticking contacts
  pushed past the static cone start to slide;
* **regime events** — a sliding contact's slip and a rolling one's rolling rate are linear in time under
  constant forces: the instant either reaches zero is an event of the body (partner `REGIME`), at which
  its contacts' forces are solved again, now sticking (static friction) or at rest. Sliding turns to
  rolling, and rolling to rest, at their exact times, whatever the step.

Every solve here gives the same answer whatever the order of its contacts (to round-off): a lone contact's
rows couple to no other's, and the joint solve moves every contact at once, from the same rates.

What each held contact adds to the accelerations of its bodies is recorded (by candidate entry, and by
body and wall) so that it can be taken off exactly when the contact is solved again.
"""

from __future__ import annotations

import math

import numpy as np

from ..contact.friction import (
    MU_K,
    MU_R,
    MU_S,
    MU_SP,
    R_EFF,
    _clamp,
    apply_friction,
    body_change,
    breakaways,
    contact_coefficients,
    friction_modes,
    regime_time,
    rolling,
    slip,
    solve_friction,
    spinning,
)
from ..contact.law import apply_impulse, approach_speed
from ..contact.layout import IMPULSE, TARGET
from ..contact.solver import alone, mark_clustered, nesterov_momentum, tally_contacts
from ..jit import inlined, kernel
from ..kinematics import spin_to
from .predict import NO_PARTNER
from .resting import MOTION_FRACTION

#: Event partner of a change of friction regime (`carom.step.predict` partners are bodies or -1 - wall).
REGIME = NO_PARTNER - 1

#: Gauss-Seidel sweeps of the friction solve of lone contacts given their normal forces (one is exact: the
#: rows of a lone contact decouple from every other's), the accelerated sweeps of a joint solve of normal and
#: friction rows (`solve_joint`), and the plain projected-gradient sweeps that end it.
FRICTION_SWEEPS = 100
JOINT_SWEEPS = 1000
POLISH_SWEEPS = 20
#: Times sticking contacts pushed past the static cone are turned to sliding and all solved again.
BREAKAWAY_ROUNDS = 2
#: A held contact slipping slower than this many times the force tolerance's worth of speed over the step
#: (``tol_a h``, m/s: what the joint solve may leave) sticks: static friction, not kinetic. (With the plain
#: speed tolerance, the 1e-10 m/s a solve leaves made a stack's contacts slide at its next step: three disks
#: that static friction holds fell apart whenever mu_k < mu_s.)
STICK_FACTOR = 1e3


@inlined
def spin_contacts(sel, ci, cj, t, bodies, tw):
    """Turn both bodies of every contact in ``sel`` to time t."""
    for c in sel:
        spin_to(ci[c], t, bodies.w, bodies.alpha, bodies.orientation, tw)
        if cj[c] >= 0:
            spin_to(cj[c], t, bodies.w, bodies.alpha, bodies.orientation, tw)


@kernel
def impact_coefficients(sel, ci, cj, radius, fr, fw):
    """Set up a round of impacts at the contacts ``sel`` for `impact_friction`: their coefficients as the
    Coulomb impulse model has them (the kinetic cone, no rolling or spinning impulse), no friction impulse
    yet. Returns whether any of them has friction (else the round is a smooth one)."""
    rough = False
    for c in sel:
        contact_coefficients(c, ci, cj, radius, fr, fw.coef)
        rough = rough or fw.coef[c, MU_K] != 0.0
        fw.coef[c, MU_S] = fw.coef[c, MU_K]
        fw.coef[c, MU_R] = 0.0
        fw.coef[c, MU_SP] = 0.0
        fw.spin[c] = 0.0
        for d in range(3):
            fw.force[c, d] = 0.0
            fw.torque[c, d] = 0.0
            fw.slide[c, d] = 0.0
            fw.roll[c, d] = 0.0
        for d in range(fw.bias.shape[1]):
            fw.bias[c, d] = 0.0
    return rough


@kernel
def impact_friction(sel, ci, cj, cn, cw, t, bodies, fw, per_body, iterations, tol):
    """The normal and friction impulses of one round of impacts (set up by `impact_coefficients`), solved
    together (`solve_joint` on the velocities, every contact at once, so in any order the same): Newton's
    rows to their targets (``cw[:, TARGET]``), Coulomb's with tangential restitution 0 within the cone
    ``mu_k P_n``. The normal impulses start from those in ``cw[:, IMPULSE]`` (applied to the velocities
    already), the friction from 0. ``per_body`` is a (bodies,) array that must be all zero (it is left so)."""
    spin_contacts(sel, ci, cj, t, bodies, fw.tw)
    solve_joint(sel, ci, cj, cn, cw, bodies, bodies.v, bodies.w, fw, per_body, min(iterations, JOINT_SWEEPS), tol)


@kernel
def force_friction(sel, ci, cj, cn, cw, t, h, bodies, fr, fw, per_body, iterations, tol_a, slip_tol, warm=False):
    """The friction forces and torques of the resting contacts ``sel`` (their normal forces solved already by
    `contact_forces` for the h seconds left, in ``cw[:, IMPULSE]``, added to the accelerations).

    A contact whose movable bodies touch nothing else in ``sel`` (a ball on a floor) is kinetic where it slides,
    rolls or spins, static otherwise (`friction_modes`; slower than ``slip_tol``, m/s, it sticks), so that
    its changes of regime are exact events. Contacts in a cluster are held over the h seconds instead
    (`_hold_clusters`), and their normal and friction rows solved together with the lone contacts'
    (`solve_joint`: every contact at once, so the answer does not depend on their order). Lone sticking
    contacts driven past the static cone then slide (`breakaways`; a held contact at its cone's edge slides
    already), and all is solved again. With ``warm``, the forces in ``fw.force``, ``fw.torque`` (applied to
    the accelerations already; `start_held`) are where the held contacts start, and the others start from
    0."""
    spin_contacts(sel, ci, cj, t, bodies, fw.tw)
    for c in sel:
        contact_coefficients(c, ci, cj, bodies.radius, fr, fw.coef)
    friction_modes(sel, ci, cj, cn, bodies.radius, bodies.v, bodies.w, fw, slip_tol, h, not warm)
    clustered = _hold_clusters(sel, ci, cj, cn, bodies, fw, per_body, h, max(slip_tol, STICK_FACTOR * tol_a * h))
    if warm:
        for c in sel:
            _trim_start(c, ci, cj, cn, bodies, fw)
    sweeps = min(iterations, FRICTION_SWEEPS)
    for _attempt in range(BREAKAWAY_ROUNDS):
        solve_friction(sel, ci, cj, cn, bodies.radius, bodies.inv_mass, bodies.inv_inertia, bodies.a, bodies.alpha,
                       cw[:, IMPULSE], fw, sweeps, tol_a)  # fmt: skip
        if clustered:
            joint_tol = max(tol_a, MOTION_FRACTION * _fastest(sel, ci, cj, cn, bodies) / h) if h > 0.0 else tol_a
            solve_joint(sel, ci, cj, cn, cw, bodies, bodies.a, bodies.alpha, fw, per_body,
                        min(iterations, JOINT_SWEEPS), joint_tol)  # fmt: skip
        if breakaways(sel, ci, cj, cn, bodies.radius, bodies.a, bodies.alpha, cw[:, IMPULSE], fw, tol_a) == 0:
            break


@kernel
def start_held(c, held, ci, cj, cn, bodies, fw):
    """Contact c's friction force and torque start at ``held`` (6: force, torque on body j, N and N m; the
    last step's), less any force along its normal now, applied to the accelerations. Its earlier ones must
    be off them."""
    dim = bodies.a.shape[1]
    along = 0.0
    for d in range(dim):
        along += held[d] * cn[c, d]
    for d in range(3):
        fw.force[c, d] = held[d] - (along * cn[c, d] if d < dim else 0.0)
        fw.torque[c, d] = held[3 + d]
    apply_friction(c, (fw.force[c, 0], fw.force[c, 1], fw.force[c, 2]), (fw.torque[c, 0], fw.torque[c, 1],
                   fw.torque[c, 2]), ci, cj, cn, bodies.radius, bodies.a, bodies.alpha, bodies.inv_mass,
                   bodies.inv_inertia)  # fmt: skip


@inlined
def _trim_start(c, ci, cj, cn, bodies, fw):
    """Of contact c's starting friction (`start_held`), take off what its solve would not move: all of it
    unless it is held with its cluster (a lone contact starts from 0, so that its regimes stay exact), the
    force without friction, the rolling torque without rolling resistance, the spinning torque (about the
    normal, 3D) without spinning friction."""
    held = fw.held[c]
    t = (fw.force[c, 0], fw.force[c, 1], fw.force[c, 2])
    tau = (fw.torque[c, 0], fw.torque[c, 1], fw.torque[c, 2])
    keep_t = held and (fw.coef[c, MU_S] != 0.0 or fw.coef[c, MU_K] != 0.0)
    keep_roll = held and fw.coef[c, MU_R] != 0.0
    keep_spin = held and fw.coef[c, MU_SP] != 0.0 and bodies.alpha.shape[1] == 3
    kept_tau = (tau[0] if keep_roll else 0.0, 0.0, 0.0)
    if bodies.alpha.shape[1] == 3:
        along = tau[0] * cn[c, 0] + tau[1] * cn[c, 1] + tau[2] * cn[c, 2]
        spin = along if keep_spin else 0.0
        roll = 1.0 if keep_roll else 0.0
        kept_tau = (spin * cn[c, 0] + roll * (tau[0] - along * cn[c, 0]),
                    spin * cn[c, 1] + roll * (tau[1] - along * cn[c, 1]),
                    spin * cn[c, 2] + roll * (tau[2] - along * cn[c, 2]))  # fmt: skip
    kept_t = t if keep_t else (0.0, 0.0, 0.0)
    off_t = (kept_t[0] - t[0], kept_t[1] - t[1], kept_t[2] - t[2])
    off_tau = (kept_tau[0] - tau[0], kept_tau[1] - tau[1], kept_tau[2] - tau[2])
    if off_t != (0.0, 0.0, 0.0) or off_tau != (0.0, 0.0, 0.0):
        apply_friction(c, off_t, off_tau, ci, cj, cn, bodies.radius, bodies.a, bodies.alpha, bodies.inv_mass,
                       bodies.inv_inertia)  # fmt: skip
    for d in range(3):
        fw.force[c, d] = kept_t[d]
        fw.torque[c, d] = kept_tau[d]


@kernel
def _hold_clusters(sel, ci, cj, cn, bodies, fw, per_body, h, stick):
    """Hold the contacts of ``sel`` that share a movable body with another contact of ``sel`` at the level of
    velocities: no kinetic row along the present slip (rolling, spinning); static rows that take all of it
    out over the h seconds left (``fw.bias``), as far as the cone allows, and that cone the kinetic one
    where the contact slides now, faster than ``stick`` (m/s: what the joint solve may leave of a slip; a
    slower one is a held contact's creep, and static friction holds it whenever some admissible split of
    the cluster's forces can). (On accelerations, kinetic friction along the slip can push a wedged
    contact ever harder, a problem without a solution: Painleve's paradox. A dense pile then gained up to
    42 J in a step.) ``per_body`` is a (bodies,) array that must be all zero (it is left so). Returns
    whether any contact is held so."""
    clustered = mark_clustered(sel, ci, cj, bodies.inv_mass, per_body, fw.held)
    for c in sel:
        if not fw.held[c]:
            continue
        s = slip(c, ci, cj, cn, bodies.radius, bodies.v, bodies.w) if fw.coef[c, MU_K] != 0.0 else (0.0, 0.0, 0.0)
        if s[0] * s[0] + s[1] * s[1] + s[2] * s[2] > stick * stick:
            fw.coef[c, MU_S] = fw.coef[c, MU_K]
        q = rolling(c, ci, cj, cn, bodies.w) if fw.coef[c, MU_R] != 0.0 else (0.0, 0.0, 0.0)
        for d in range(3):
            fw.slide[c, d] = 0.0
            fw.roll[c, d] = 0.0
            fw.bias[c, d] = s[d] / h if h > 0.0 else 0.0
            fw.bias[c, 3 + d] = q[d] / h if h > 0.0 else 0.0
        fw.bias[c, 6] = spinning(c, ci, cj, cn, bodies.w) / h if h > 0.0 and fw.coef[c, MU_SP] != 0.0 else 0.0
        fw.spin[c] = 0.0
    return clustered


@kernel
def _fastest(sel, ci, cj, cn, bodies):
    """The fastest normal speed or slip (m/s) among the contacts ``sel``: the joint solve need not be more
    exact than ``MOTION_FRACTION`` of it per second left (`carom.step.resting.MOTION_FRACTION`), and as the
    contacts come to rest its tolerance tightens to the force tolerance."""
    fastest = 0.0
    for c in sel:
        s = slip(c, ci, cj, cn, bodies.radius, bodies.v, bodies.w)
        speed = math.sqrt(s[0] ** 2 + s[1] ** 2 + s[2] ** 2)
        fastest = max(fastest, abs(approach_speed(c, ci, cj, cn, bodies.v)), speed)
    return fastest


@inlined
def _block_bound(c, ci, cj, bodies, per_body, turning):
    """A bound (1/kg) on the absolute row sums of contact c's rows of the Delassus operator, the variables
    being forces and torques over R_eff (N), the rates m/s^2 (Gershgorin's circles): each contact sharing a
    body b brings ``dim`` rows that move it, entries at most ``1/m_b``, and ``turning`` rows that turn it
    (tangential, rolling, spinning), entries at most ``R_b^2/I_b``."""
    dim = bodies.a.shape[1]
    i, j = ci[c], cj[c]
    bound = per_body[i] * (dim * bodies.inv_mass[i] + turning * bodies.radius[i] ** 2 * bodies.inv_inertia[i])
    if j >= 0:
        bound += per_body[j] * (dim * bodies.inv_mass[j] + turning * bodies.radius[j] ** 2 * bodies.inv_inertia[j])
    return bound


@inlined
def _own_bounds(c, ci, cj, bodies, fw):
    """The diagonal entries (1/kg) of contact c's rows, into ``fw.joint[c, 14:17]``: normal ``1/m_i + 1/m_j``,
    tangential ``k_t``, torque over R_eff ``R_eff^2 k_r`` (`carom.contact.friction`). For balls the normal
    row couples to no other row of the contact, nor the tangential rows to each other: a lone contact
    (`carom.contact.solver.alone`) without torque rows is solved exactly by a step of their inverses."""
    i, j = ci[c], cj[c]
    inv_mass, inv_inertia, radius = bodies.inv_mass, bodies.inv_inertia, bodies.radius
    k_n = inv_mass[i] + (inv_mass[j] if j >= 0 else 0.0)
    k_t = inv_mass[i] + radius[i] ** 2 * inv_inertia[i]
    k_r = inv_inertia[i]
    if j >= 0:
        k_t += inv_mass[j] + radius[j] ** 2 * inv_inertia[j]
        k_r += inv_inertia[j]
    fw.joint[c, 14] = k_n
    fw.joint[c, 15] = k_t
    fw.joint[c, 16] = fw.coef[c, R_EFF] ** 2 * k_r


@inlined
def _bound(c, fw, d):
    """Contact c's step bound (1/kg) for its force d of 7: normal, friction (3), torque over R_eff (3)."""
    return fw.joint[c, 14 if d == 0 else (15 if d < 4 else 16)]


@inlined
def _trial(c, ci, cj, cn, cw, bodies, v, w, fw, out):
    """Contact c's forces after a projected gradient step from its extrapolated ones (``fw.joint[c, :7]``,
    whose effect the rates ``v``, ``w`` hold), of the inverse of its bounds (`_bound`), projected onto its
    cones, into ``out`` (7): normal, friction (3), torque (3). The step of a torque is ``R_eff^2`` over its
    bound (the variable being torque over R_eff); a sliding (rolling, spinning) contact carries its kinetic
    force along its direction, as in `solve_friction`."""
    y = fw.joint[c]  # (its first 7 columns)
    lip_n, lip_t, lip_r = fw.joint[c, 14], fw.joint[c, 15], fw.joint[c, 16]
    n_force = max(0.0, y[0] + (approach_speed(c, ci, cj, cn, v) + cw[c, TARGET]) / lip_n)
    out[0] = n_force
    mu = fw.coef[c, MU_S]
    if fw.slide[c, 0] != 0.0 or fw.slide[c, 1] != 0.0 or fw.slide[c, 2] != 0.0:
        f = fw.coef[c, MU_K] * n_force
        out[1], out[2], out[3] = f * fw.slide[c, 0], f * fw.slide[c, 1], f * fw.slide[c, 2]
    elif mu != 0.0:
        s0, s1, s2 = slip(c, ci, cj, cn, bodies.radius, v, w)
        out[1], out[2], out[3] = _clamp(y[1] + (s0 + fw.bias[c, 0]) / lip_t, y[2] + (s1 + fw.bias[c, 1]) / lip_t,
                                        y[3] + (s2 + fw.bias[c, 2]) / lip_t, mu * n_force)  # fmt: skip
    else:
        out[1], out[2], out[3] = 0.0, 0.0, 0.0
    r_eff = fw.coef[c, R_EFF]
    step = r_eff * r_eff / lip_r if lip_r > 0.0 else 0.0  # (no bound: the torque turns nothing, and stays)
    q0 = q1 = q2 = 0.0
    if fw.coef[c, MU_R] != 0.0:
        limit = fw.coef[c, MU_R] * n_force * r_eff
        if fw.roll[c, 0] != 0.0 or fw.roll[c, 1] != 0.0 or fw.roll[c, 2] != 0.0:
            q0, q1, q2 = limit * fw.roll[c, 0], limit * fw.roll[c, 1], limit * fw.roll[c, 2]
        else:
            p0, p1, p2 = y[4], y[5], y[6]
            if w.shape[1] == 3:
                pn = p0 * cn[c, 0] + p1 * cn[c, 1] + p2 * cn[c, 2]
                p0, p1, p2 = p0 - pn * cn[c, 0], p1 - pn * cn[c, 1], p2 - pn * cn[c, 2]
            r0, r1, r2 = rolling(c, ci, cj, cn, w)
            q0, q1, q2 = _clamp(p0 + (r0 + fw.bias[c, 3]) * step, p1 + (r1 + fw.bias[c, 4]) * step,
                                p2 + (r2 + fw.bias[c, 5]) * step, limit)  # fmt: skip
    if w.shape[1] == 3 and fw.coef[c, MU_SP] != 0.0:
        limit = fw.coef[c, MU_SP] * n_force * r_eff
        if fw.spin[c] != 0.0:
            rn = limit * fw.spin[c]
        else:
            pn = y[4] * cn[c, 0] + y[5] * cn[c, 1] + y[6] * cn[c, 2]
            rn = min(max(pn + (spinning(c, ci, cj, cn, w) + fw.bias[c, 6]) * step, -limit), limit)
        q0, q1, q2 = q0 + rn * cn[c, 0], q1 + rn * cn[c, 1], q2 + rn * cn[c, 2]
    out[4], out[5], out[6] = q0, q1, q2


@inlined
def _apply_forces(c, ci, cj, cn, bodies, v, w, d):
    """Apply the change ``d`` (7: normal, friction, torque) of contact c's forces to the rates ``v``, ``w``."""
    if d[0] != 0.0:
        apply_impulse(c, d[0], ci, cj, cn, v, bodies.inv_mass)
    apply_friction(c, (d[1], d[2], d[3]), (d[4], d[5], d[6]), ci, cj, cn, bodies.radius, v, w, bodies.inv_mass,
                   bodies.inv_inertia)  # fmt: skip


@kernel
def solve_joint(sel, ci, cj, cn, cw, bodies, v, w, fw, per_body, iterations, tol):
    """The normal and friction rows of the contacts ``sel`` solved together, on accelerations (forces) or
    velocities (impulses) ``v``, ``w``: each contact's normal force to its target (``cw[:, TARGET]``, into
    ``cw[:, IMPULSE]``), its friction force and torque within their cones (into ``fw.force``, ``fw.torque``),
    all starting from the values there (applied to the rates already), until no force moves the rates by
    more than ``tol`` (m/s^2, m/s) in a sweep. Every contact steps at once from the same rates, so the
    answer does not depend on the contacts' order (Gauss-Seidel, contact after contact, stopped at a
    tolerance, gives one that does: a symmetric pile drifted sideways).

    At most ``iterations`` sweeps of accelerated projected gradient (`_gradient_sweeps` with momentum),
    each contact stepping by the inverse of a Gershgorin bound of its own rows (`_block_bound`), or of its
    diagonal if it is alone (`_own_bounds`: solved exactly in the first sweep, whatever the rest, unless
    torque rows couple to its tangential ones); then, if short of ``tol``, at most `POLISH_SWEEPS` without
    momentum (momentum leaves the last iterate of a solve stopped short no fixed point of anything, and a
    pile stopped there could gain energy); then `_refine`. ``per_body`` is a (bodies,) array that must be
    all zero (it is left so). Returns the sweeps used."""
    tally_contacts(sel, ci, cj, per_body, 1.0)
    dim = v.shape[1]
    rolls = False
    spins = False
    for c in sel:
        rolls = rolls or fw.coef[c, MU_R] != 0.0
        spins = spins or fw.coef[c, MU_SP] != 0.0
    rows = (dim - 1.0) + ((dim - 1.0) if rolls else 0.0) + (1.0 if spins and dim == 3 else 0.0)
    for c in sel:
        bound = _block_bound(c, ci, cj, bodies, per_body, rows)
        if alone(c, ci, cj, bodies.inv_mass, per_body):
            _own_bounds(c, ci, cj, bodies, fw)
            if fw.coef[c, MU_R] != 0.0 or (dim == 3 and fw.coef[c, MU_SP] != 0.0):
                fw.joint[c, 15] = fw.joint[c, 16] = bound
        else:
            fw.joint[c, 14] = fw.joint[c, 15] = fw.joint[c, 16] = bound
    tally_contacts(sel, ci, cj, per_body, -1.0)
    sweeps, done = _gradient_sweeps(sel, ci, cj, cn, cw, bodies, v, w, fw, iterations, tol, True)
    if not done:
        more, _ = _gradient_sweeps(sel, ci, cj, cn, cw, bodies, v, w, fw, POLISH_SWEEPS, tol, False)
        sweeps += more
    return sweeps + _refine(sel, ci, cj, cn, cw, bodies, v, w, fw, per_body, POLISH_SWEEPS)


@inlined
def _change(c, fw, d, step):
    """How much a change ``step`` of contact c's force d (of 7) moves the rates by its bound (`_bound`):
    m/s^2 (m/s), a torque's over R_eff."""
    r_eff = fw.coef[c, R_EFF]
    scale = 1.0 if d < 4 else (1.0 / r_eff if r_eff > 0.0 else 0.0)
    return abs(step) * _bound(c, fw, d) * scale


@kernel
def _gradient_sweeps(sel, ci, cj, cn, cw, bodies, v, w, fw, iterations, tol, momentum):
    """`solve_joint`'s sweeps from the forces in ``cw[:, IMPULSE]``, ``fw.force``, ``fw.torque`` (its bounds
    in ``fw.joint[:, 14:17]``): projected gradient steps, Nesterov's accelerated ones with adaptive restart
    (as `carom.contact.solver.solve_accelerated`) with ``momentum``. Returns the sweeps used and whether
    they reached ``tol``."""
    trial = fw.block[0]
    delta = fw.block[1]
    for c in sel:
        _hold(c, cw, fw, 0)
    theta = 1.0
    for sweep in range(iterations):
        worst = 0.0
        restart = 0.0
        for c in sel:
            if fw.joint[c, 14] == 0.0:  # (between fixed bodies: nothing moves)
                for d in range(7):
                    fw.joint[c, 7 + d] = fw.joint[c, d]
                continue
            _trial(c, ci, cj, cn, cw, bodies, v, w, fw, trial)
            r_eff = fw.coef[c, R_EFF]
            scale = 1.0 / (r_eff * r_eff) if r_eff > 0.0 else 0.0
            for d in range(7):
                fw.joint[c, 7 + d] = trial[d]
                step = trial[d] - fw.joint[c, d]
                worst = max(worst, _change(c, fw, d, step))
                restart -= _bound(c, fw, d) * (1.0 if d < 4 else scale) * step * (trial[d] - _force(c, cw, fw, d))
        if worst <= tol:
            for c in sel:
                for d in range(7):
                    delta[d] = fw.joint[c, 7 + d] - fw.joint[c, d]  # (the rates hold the extrapolated forces)
                _take(c, cw, fw, 7)
                _apply_forces(c, ci, cj, cn, bodies, v, w, delta)
            return sweep + 1, True
        beta, theta = nesterov_momentum(theta, restart > 0.0 or not momentum)
        for c in sel:
            for d in range(7):
                x = _force(c, cw, fw, d)
                y = fw.joint[c, 7 + d] + beta * (fw.joint[c, 7 + d] - x)
                delta[d] = y - fw.joint[c, d]
                fw.joint[c, d] = y
            _take(c, cw, fw, 7)
            _apply_forces(c, ci, cj, cn, bodies, v, w, delta)
    for c in sel:  # the rates of the last iterate
        for d in range(7):
            delta[d] = _force(c, cw, fw, d) - fw.joint[c, d]
        _apply_forces(c, ci, cj, cn, bodies, v, w, delta)
    return iterations, False


@kernel
def _refine(sel, ci, cj, cn, cw, bodies, v, w, fw, per_body, iterations):
    """End `solve_joint` with Jacobi steps: every contact steps at once, from the same rates, by the
    inverses of its diagonal entries (`_own_bounds`); then (`_damp`) by those over the count of row groups
    acting on its busiest body (`_groups`). Each pass takes at most ``iterations`` steps, while each step
    shrinks the largest change of a rate that the next would make (`_jacobi`). The plain steps solve
    exactly each contact whose neighbours' forces do not move it (two balls sliding side by side on a
    floor: the contact between them carries nothing), which the bounded steps of the gradient only
    approach; where contacts push on each other they overshoot. The damped steps lower the solve's energy
    (by Cauchy-Schwarz the Delassus operator is at most its diagonal times that count) and converge
    there (a ball between a floor and another). ``per_body`` as in `solve_joint`. Returns the steps used."""
    for c in sel:
        _own_bounds(c, ci, cj, bodies, fw)
    steps = _jacobi(sel, ci, cj, cn, cw, bodies, v, w, fw, iterations)
    if _damp(sel, ci, cj, bodies, fw, per_body, v.shape[1]):
        steps += _jacobi(sel, ci, cj, cn, cw, bodies, v, w, fw, iterations)
    return steps


@kernel
def _damp(sel, ci, cj, bodies, fw, per_body, dim):
    """Multiply the step bounds of each contact (``fw.joint[:, 14:17]``) by the count of row groups
    (`_groups`) acting on its busiest movable body. Returns whether any count is over 1."""
    for c in sel:
        g = _groups(c, fw, dim)
        per_body[ci[c]] += g
        if cj[c] >= 0:
            per_body[cj[c]] += g
    damped = False
    for c in sel:
        i, j = ci[c], cj[c]
        busiest = max(per_body[i] if bodies.inv_mass[i] != 0.0 else 1.0,
                      per_body[j] if j >= 0 and bodies.inv_mass[j] != 0.0 else 1.0)  # fmt: skip
        damped = damped or busiest > 1.0
        for d in range(14, 17):
            fw.joint[c, d] *= busiest
    for c in sel:
        g = _groups(c, fw, dim)
        per_body[ci[c]] -= g
        if cj[c] >= 0:
            per_body[cj[c]] -= g
    return damped


@kernel
def _jacobi(sel, ci, cj, cn, cw, bodies, v, w, fw, iterations):
    """At most ``iterations`` steps in which every contact steps at once, from the same rates, by the
    inverses of its bounds (``fw.joint[:, 14:17]``), while each step shrinks the largest change of a rate
    that the next would make; a step that does not is taken back. Returns the steps used."""
    trial = fw.block[0]
    delta = fw.block[1]
    for c in sel:
        _hold(c, cw, fw, 0)
    last = math.inf
    for sweep in range(iterations + 1):
        worst = 0.0
        for c in sel:
            if fw.joint[c, 14] == 0.0:
                for d in range(7):
                    fw.joint[c, 7 + d] = fw.joint[c, d]
                continue
            _trial(c, ci, cj, cn, cw, bodies, v, w, fw, trial)
            for d in range(7):
                fw.joint[c, 7 + d] = trial[d]
                worst = max(worst, _change(c, fw, d, trial[d] - fw.joint[c, d]))
        if worst >= last:  # the last step did not help: back to where it started
            for c in sel:
                _move(c, ci, cj, cn, cw, bodies, v, w, fw, 17, delta)
            return sweep + 1
        if worst == 0.0 or sweep == iterations:
            return sweep + 1
        last = worst
        for c in sel:
            _hold(c, cw, fw, 17)
            _move(c, ci, cj, cn, cw, bodies, v, w, fw, 7, delta)
            for d in range(7):
                fw.joint[c, d] = fw.joint[c, 7 + d]
    return iterations


@inlined
def _groups(c, fw, dim):
    """Contact c's groups of rows each orthogonal within (in the bodies' inverse masses), that together
    act on a body: normal and tangential (1), and the torque rows (1 more) where it rolls or spins."""
    return 2.0 if fw.coef[c, MU_R] != 0.0 or (dim == 3 and fw.coef[c, MU_SP] != 0.0) else 1.0


@inlined
def _move(c, ci, cj, cn, cw, bodies, v, w, fw, first, delta):
    """Contact c's forces become ``fw.joint[c, first:first + 7]``, and the rates follow."""
    for d in range(7):
        delta[d] = fw.joint[c, first + d] - _force(c, cw, fw, d)
    _take(c, cw, fw, first)
    _apply_forces(c, ci, cj, cn, bodies, v, w, delta)


@inlined
def _hold(c, cw, fw, first):
    """Keep contact c's forces in ``fw.joint[c, first:first + 7]``."""
    fw.joint[c, first] = cw[c, IMPULSE]
    for d in range(3):
        fw.joint[c, first + 1 + d] = fw.force[c, d]
        fw.joint[c, first + 4 + d] = fw.torque[c, d]


@inlined
def _force(c, cw, fw, d):
    """Contact c's force d of 7: normal, friction (3), torque (3)."""
    if d == 0:
        return cw[c, IMPULSE]
    return fw.force[c, d - 1] if d < 4 else fw.torque[c, d - 4]


@inlined
def _take(c, cw, fw, first):
    """Contact c's forces become ``fw.joint[c, first:first + 7]``."""
    cw[c, IMPULSE] = fw.joint[c, first]
    for d in range(3):
        fw.force[c, d] = fw.joint[c, first + 1 + d]
        fw.torque[c, d] = fw.joint[c, first + 4 + d]


@inlined
def _held_rows(c, ci, cj, ck, start, nbrs):
    """Where contact c's contributions are kept: the candidate entries of j in i's row and of i in j's row
    (-1, -1 for a wall)."""
    j = cj[c]
    if j < 0:
        return -1, -1
    lo = start[j]
    return ck[c], lo + np.searchsorted(nbrs[lo : start[j + 1]], ci[c])


@kernel
def take_off_held(c, ci, cj, ck, start, nbrs, bodies, fw):
    """Take what held contact c added (friction and rolling torque) off its bodies' accelerations."""
    i, j = ci[c], cj[c]
    m_i, m_j = _held_rows(c, ci, cj, ck, start, nbrs)
    _take_off(bodies.a, i, j, m_i, m_j, fw.pair_a, fw.wall_a)
    _take_off(bodies.alpha, i, j, m_i, m_j, fw.pair_alpha, fw.wall_alpha)


@inlined
def _take_off(rate, i, j, m_i, m_j, pair, wall):
    """Subtract from ``rate`` what one contact recorded in ``pair`` (rows m_i, m_j) or ``wall`` (j < 0)."""
    for d in range(rate.shape[1]):
        if j < 0:
            rate[i, d] -= wall[i, -1 - j, d]
        else:
            rate[i, d] -= pair[m_i, d]
            rate[j, d] -= pair[m_j, d]


@kernel
def record_held(c, held, ci, cj, ck, cn, start, nbrs, bodies, fw):
    """Record what contact c adds to its bodies' accelerations: its friction force and rolling torque if
    ``held`` (in the resting set), else nothing."""
    i, j = ci[c], cj[c]
    m_i, m_j = _held_rows(c, ci, cj, ck, start, nbrs)
    dim, rot = bodies.a.shape[1], bodies.alpha.shape[1]
    t = (fw.force[c, 0], fw.force[c, 1], fw.force[c, 2]) if held else (0.0, 0.0, 0.0)
    tau = (fw.torque[c, 0], fw.torque[c, 1], fw.torque[c, 2]) if held else (0.0, 0.0, 0.0)
    for d in range(3):
        if j < 0:
            fw.wall_held[i, -1 - j, d] = t[d]
            fw.wall_held[i, -1 - j, 3 + d] = tau[d]
        else:
            fw.pair_held[m_i, d] = t[d]
            fw.pair_held[m_i, 3 + d] = tau[d]
            fw.pair_held[m_j, d] = -t[d]
            fw.pair_held[m_j, 3 + d] = -tau[d]
    dv, dw = body_change(i, -1.0, t, tau, cn, c, bodies.radius[i], bodies.inv_mass, bodies.inv_inertia, dim)
    for d in range(3):
        if j < 0:
            fw.wall_a[i, -1 - j, d] = dv[d] if d < dim else 0.0
            fw.wall_alpha[i, -1 - j, d] = dw[d] if d < rot else 0.0
        else:
            fw.pair_a[m_i, d] = dv[d] if d < dim else 0.0
            fw.pair_alpha[m_i, d] = dw[d] if d < rot else 0.0
    if j >= 0:
        dv, dw = body_change(j, 1.0, t, tau, cn, c, -bodies.radius[j], bodies.inv_mass, bodies.inv_inertia, dim)
        for d in range(3):
            fw.pair_a[m_j, d] = dv[d] if d < dim else 0.0
            fw.pair_alpha[m_j, d] = dw[d] if d < rot else 0.0


@kernel
def note_regimes(sel, ci, cj, cn, t, bodies, fw, slip_tol):
    """Each resting contact's next change of regime (`regime_time`) as an event of one of its movable bodies
    (the earliest per body, in ``fw.regime``)."""
    for c in sel:
        dt = regime_time(c, ci, cj, cn, bodies.radius, bodies.v, bodies.w, bodies.a, bodies.alpha, fw, slip_tol)
        if dt == math.inf:
            continue
        b = ci[c] if bodies.inv_mass[ci[c]] != 0.0 or cj[c] < 0 else cj[c]
        fw.regime[b] = min(fw.regime[b], t + dt)


@kernel(refcounts=False)
def clear_held(fw):
    """Zero the held contributions at the end of a drift, once carried out (`carom.step.drift`)."""
    fw.pair_a[:] = 0.0
    fw.pair_alpha[:] = 0.0
    fw.wall_a[:] = 0.0
    fw.wall_alpha[:] = 0.0
    fw.pair_held[:] = 0.0
    fw.wall_held[:] = 0.0
