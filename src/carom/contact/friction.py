"""Coulomb friction, rolling resistance and spinning friction at contacts between spheres (disks) and walls.

Conventions (`carom.contact.law`): contact c joins body ``i = ci[c]`` and body ``j = cj[c]`` (``j < 0``:
wall ``-1 - j``, at rest, not spinning), unit normal n from i towards j. The contact point sits at
``r_i = R_i n`` from i's centre and ``r_j = -R_j n`` from j's. Its **slip** is the tangential part of the
relative velocity of the two material points there, ``s = (v_i + w_i x r_i) - (v_j + w_j x r_j)`` minus
its normal part; its **rolling** rate is the tangential part of ``w_i - w_j`` (all of it in 2D, where an
angular velocity is a number, counter-clockwise positive); its **spinning** rate (3D) the normal part,
``n . (w_i - w_j)``.

A tangential impulse (or force) ``T`` acts on j at the contact point and ``-T`` on i; a rolling torque
``tau`` acts on j and ``-tau`` on i. For balls the normal and tangential directions decouple: ``T``
changes the slip by ``-k_t T`` with the scalar ``k_t = 1/m_i + 1/m_j + R_i^2/I_i + R_j^2/I_j``, and
leaves every normal speed of that contact unchanged; ``tau`` changes the rolling rate (its tangential part)
and the spinning rate (its normal part) by ``-k_r tau``, ``k_r = 1/I_i + 1/I_j``.

The same kernels serve two levels, as `carom.contact.solver` does: impulses on velocities (an impact:
the Coulomb impulse model, ``|T| <= mu_k P_n``, tangential restitution 0) and forces on accelerations
(lasting contact: static friction up to ``mu_s N``, kinetic ``mu_k N`` against the slip, and a rolling
torque up to ``mu_r N R_eff`` against the rolling, ``R_eff = R_i R_j / (R_i + R_j)``, R_i against a
wall, and in 3D a torque about the normal up to ``mu_sp N R_eff`` against the spinning). Vectors use
three slots whatever the dimension: 2D tangents use the first two, 2D rotations the
first one.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..jit import inlined, kernel
from ..materials import combine, pair_key

# Columns of a contact's coefficients (`FrictionWork.coef`).
MU_S, MU_K, MU_R, R_EFF, MU_SP = range(5)


class Friction(NamedTuple):
    """Friction coefficients of bodies and walls, how they combine, and pair overrides
    (`Model.set_pair_friction`). Where no contact can carry friction and no body spins, the kernels get
    None instead: Numba then prunes every friction branch before typing, and compiles no friction kernel."""

    static: np.ndarray  # (n,) mu_s per body
    kinetic: np.ndarray  # (n,) mu_k
    rolling: np.ndarray  # (n,) mu_r
    spinning: np.ndarray  # (n,) mu_sp
    wall_static: np.ndarray  # (k,)
    wall_kinetic: np.ndarray  # (k,)
    rule: int  # `carom.materials.RULE_CODES`
    keys: np.ndarray  # (p,) sorted pair keys of the overrides
    values: np.ndarray  # (p, 2) mu_s, mu_k


class FrictionWork(NamedTuple):
    """Per-contact friction arrays of one solve, and what the contacts held in a drift add to each body.
    ``pair_a``, ``pair_alpha``, ``wall_a`` and ``wall_alpha`` must be all zero between drifts."""

    coef: np.ndarray  # (cap, 5) mu_s, mu_k, mu_r, R_eff (m), mu_sp
    force: np.ndarray  # (cap, 3) tangential impulse (N s) or force (N) on body j
    torque: np.ndarray  # (cap, 3) rolling and spinning torque (N m) on body j
    slide: np.ndarray  # (cap, 3) unit slip direction of a sliding contact (kinetic friction), else 0
    roll: np.ndarray  # (cap, 3) unit rolling direction of a rolling contact (kinetic resistance), else 0
    spin: np.ndarray  # (cap,) sign of a spinning contact's spinning rate (kinetic spinning friction), else 0
    bias: np.ndarray  # (cap, 7) a sticking contact's slip (3), rolling (3) and spinning (1) rates to take out, per s
    held: np.ndarray  # (cap,) True where a contact is held with its cluster in this solve (it never breaks away)
    joint: np.ndarray  # (cap, 24) the joint solve's extrapolated forces (7), trial forces (7), step bounds (3,
    # 1/kg), forces before its last step (7)
    block: np.ndarray  # (2, 7) the joint solve's scratch: one contact's trial forces, their change
    pair_a: np.ndarray  # (entries, 3) m/s^2: acceleration the contact of a candidate entry adds to its row's body
    pair_alpha: np.ndarray  # (entries, 3) rad/s^2: angular acceleration, the same
    wall_a: np.ndarray  # (n, k, 3) by body and wall
    wall_alpha: np.ndarray  # (n, k, 3)
    regime: np.ndarray  # (n,) s: each body's next change of friction regime (slip or rolling reaching 0)
    tw: np.ndarray  # (n,) s: the time each body's spin was last brought to (`carom.kinematics.spin_to`)
    # the friction force (N) and torque (N m) of each held contact, the next step's warm start: by candidate
    # entry (on the row's neighbour; its opposite on the row's body), by body and wall (on the body), and
    # carried out of the drift beside the pair forces' keys (`carom.step.drift.carried_forces`)
    pair_held: np.ndarray  # (entries, 6)
    wall_held: np.ndarray  # (n, k, 6)
    out_held: np.ndarray  # (entries, 6)


def new_friction_work(cap: int, n: int, n_wall: int, n_entry: int) -> FrictionWork:
    z = np.zeros
    return FrictionWork(coef=z((cap, 5)), force=z((cap, 3)), torque=z((cap, 3)), slide=z((cap, 3)),
                        roll=z((cap, 3)), spin=z(cap), bias=z((cap, 7)), held=z(cap, np.bool_), joint=z((cap, 24)),
                        block=z((2, 7)),
                        pair_a=z((n_entry, 3)), pair_alpha=z((n_entry, 3)), wall_a=z((n, n_wall, 3)),
                        wall_alpha=z((n, n_wall, 3)), regime=np.full(n, np.inf), tw=z(n), pair_held=z((n_entry, 6)),
                        wall_held=z((n, n_wall, 6)), out_held=z((n_entry, 6)))  # fmt: skip


@inlined
def contact_coefficients(c, ci, cj, radius, fr, coef):
    """Write contact c's combined (mu_s, mu_k, mu_r, R_eff, mu_sp) into ``coef[c]``: a pair override (of mu_s,
    mu_k) if one is set, else the friction rule over the two sides (a wall's mu_r and mu_sp are the body's
    own)."""
    i, j = ci[c], cj[c]
    if j >= 0:
        mu_s = combine(fr.static[i], fr.static[j], fr.rule)
        mu_k = combine(fr.kinetic[i], fr.kinetic[j], fr.rule)
        mu_r = combine(fr.rolling[i], fr.rolling[j], fr.rule)
        mu_sp = combine(fr.spinning[i], fr.spinning[j], fr.rule)
        r_eff = radius[i] * radius[j] / (radius[i] + radius[j])
    else:
        mu_s = combine(fr.static[i], fr.wall_static[-1 - j], fr.rule)
        mu_k = combine(fr.kinetic[i], fr.wall_kinetic[-1 - j], fr.rule)
        mu_r = fr.rolling[i]
        mu_sp = fr.spinning[i]
        r_eff = radius[i]
    if len(fr.keys):
        key = pair_key(i, j)
        k = np.searchsorted(fr.keys, key)
        if k < len(fr.keys) and fr.keys[k] == key:
            mu_s = fr.values[k, 0]
            mu_k = fr.values[k, 1]
    coef[c, MU_S] = mu_s
    coef[c, MU_K] = mu_k
    coef[c, MU_R] = mu_r
    coef[c, R_EFF] = r_eff
    coef[c, MU_SP] = mu_sp


@inlined
def _spin_cross(w, b, cn, c, scale, dim):
    """``w_b x (scale n)``, n = ``cn[c]``: the velocity of the point at ``scale n`` from body b's centre due
    to its spin."""
    if dim == 3:
        return (scale * (w[b, 1] * cn[c, 2] - w[b, 2] * cn[c, 1]), scale * (w[b, 2] * cn[c, 0] - w[b, 0] * cn[c, 2]),
                scale * (w[b, 0] * cn[c, 1] - w[b, 1] * cn[c, 0]))  # fmt: skip
    return -scale * w[b, 0] * cn[c, 1], scale * w[b, 0] * cn[c, 0], 0.0


@inlined
def slip(c, ci, cj, cn, radius, v, w):
    """The slip of contact c (3 slots; m/s from velocities, m/s^2 from accelerations, curvature terms
    left out): the tangential relative velocity of body i's contact point past body j's."""
    i, j = ci[c], cj[c]
    dim = v.shape[1]
    si = _spin_cross(w, i, cn, c, radius[i], dim)
    u0 = v[i, 0] + si[0]
    u1 = v[i, 1] + si[1]
    u2 = (v[i, 2] if dim == 3 else 0.0) + si[2]
    if j >= 0:
        sj = _spin_cross(w, j, cn, c, -radius[j], dim)
        u0 -= v[j, 0] + sj[0]
        u1 -= v[j, 1] + sj[1]
        if dim == 3:
            u2 -= v[j, 2] + sj[2]
    un = u0 * cn[c, 0] + u1 * cn[c, 1] + (u2 * cn[c, 2] if dim == 3 else 0.0)
    return u0 - un * cn[c, 0], u1 - un * cn[c, 1], (u2 - un * cn[c, 2]) if dim == 3 else 0.0


@inlined
def rolling(c, ci, cj, cn, w):
    """The rolling rate of contact c (3 slots, rad/s or rad/s^2): the tangential part of ``w_i - w_j``
    (in 2D the whole angular velocity difference, in the first slot)."""
    i, j = ci[c], cj[c]
    if w.shape[1] == 1:
        return w[i, 0] - (w[j, 0] if j >= 0 else 0.0), 0.0, 0.0
    r0 = w[i, 0] - (w[j, 0] if j >= 0 else 0.0)
    r1 = w[i, 1] - (w[j, 1] if j >= 0 else 0.0)
    r2 = w[i, 2] - (w[j, 2] if j >= 0 else 0.0)
    rn = r0 * cn[c, 0] + r1 * cn[c, 1] + r2 * cn[c, 2]
    return r0 - rn * cn[c, 0], r1 - rn * cn[c, 1], r2 - rn * cn[c, 2]


@inlined
def spinning(c, ci, cj, cn, w):
    """The spinning rate of contact c (rad/s or rad/s^2): the normal part of ``w_i - w_j``, ``n . (w_i - w_j)``
    (0 in 2D, where spin is about the axis normal to the plane and every contact normal lies in it)."""
    if w.shape[1] == 1:
        return 0.0
    i, j = ci[c], cj[c]
    rn = 0.0
    for d in range(3):
        rn += (w[i, d] - (w[j, d] if j >= 0 else 0.0)) * cn[c, d]
    return rn


@inlined
def body_change(b, sign, t, tau, cn, c, arm, inv_mass, inv_inertia, dim):
    """What ``sign * T`` at the point ``arm n`` (n = ``cn[c]``) from body b's centre and ``sign * tau`` do
    to b: (the change of its velocity, of its angular velocity), 3 slots each."""
    m = sign * inv_mass[b]
    q = sign * inv_inertia[b]
    if dim == 3:
        # r x T with r = arm n
        rt0 = arm * (cn[c, 1] * t[2] - cn[c, 2] * t[1])
        rt1 = arm * (cn[c, 2] * t[0] - cn[c, 0] * t[2])
        rt2 = arm * (cn[c, 0] * t[1] - cn[c, 1] * t[0])
        return (m * t[0], m * t[1], m * t[2]), (q * (rt0 + tau[0]), q * (rt1 + tau[1]), q * (rt2 + tau[2]))
    rt = arm * (cn[c, 0] * t[1] - cn[c, 1] * t[0])
    return (m * t[0], m * t[1], 0.0), (q * (rt + tau[0]), 0.0, 0.0)


@inlined
def apply_friction(c, t, tau, ci, cj, cn, radius, v, w, inv_mass, inv_inertia):
    """Apply tangential impulse (force) ``t`` and rolling torque ``tau`` (3 slots each, on body j; their
    opposites on body i) of contact c to the rates ``v``, ``w``."""
    i, j = ci[c], cj[c]
    dim = v.shape[1]
    dv, dw = body_change(i, -1.0, t, tau, cn, c, radius[i], inv_mass, inv_inertia, dim)
    for d in range(dim):
        v[i, d] += dv[d]
    for d in range(w.shape[1]):
        w[i, d] += dw[d]
    if j >= 0:
        dv, dw = body_change(j, 1.0, t, tau, cn, c, -radius[j], inv_mass, inv_inertia, dim)
        for d in range(dim):
            v[j, d] += dv[d]
        for d in range(w.shape[1]):
            w[j, d] += dw[d]


@inlined
def _clamp(x0, x1, x2, limit):
    """(x0, x1, x2) scaled down to length ``limit`` if longer."""
    size = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    if size > limit:
        f = limit / size if size > 0.0 else 0.0
        return x0 * f, x1 * f, x2 * f
    return x0, x1, x2


@kernel
def solve_friction(sel, ci, cj, cn, radius, inv_mass, inv_inertia, a, alpha, normal, fw, iterations, tol):
    """Friction forces of the lone contacts of ``sel`` (those not held with a cluster, ``fw.held``: each
    couples to no other, so their order does not matter) given their normal forces ``normal``, by projected
    Gauss–Seidel on their tangential, rolling and spinning rows; the accelerations ``a``, ``alpha`` are
    updated in place, the forces kept in ``fw.force``, ``fw.torque`` (their starting point, already applied
    to the rates).

    A sliding contact (``fw.slide``) carries ``mu_k N`` along its slip; any other keeps its slip from
    accelerating with ``|T| <= mu_s N``; the rolling torque is ``mu_r N R_eff`` against a rolling contact's rolling
    (``fw.roll``), else what keeps it from starting, up to that; the spinning torque (3D, about the normal)
    is ``mu_sp N R_eff`` against a spinning contact's spinning (``fw.spin``), else what keeps it from
    starting, up to that. Each row is solved exactly in turn (a contact's block is diagonal for balls);
    returns the largest change of a rate in the first sweep (0:
    nothing changed)."""
    first = -1.0
    for _sweep in range(iterations):
        worst = 0.0
        for c in sel:
            mu = fw.coef[c, MU_S]
            mu_r = fw.coef[c, MU_R]
            mu_sp = fw.coef[c, MU_SP] if alpha.shape[1] == 3 else 0.0
            if fw.held[c] or (mu == 0.0 and fw.coef[c, MU_K] == 0.0 and mu_r == 0.0 and mu_sp == 0.0):
                continue
            i, j = ci[c], cj[c]
            n_force = normal[c]
            k_t = inv_mass[i] + radius[i] ** 2 * inv_inertia[i]
            k_r = inv_inertia[i]
            if j >= 0:
                k_t += inv_mass[j] + radius[j] ** 2 * inv_inertia[j]
                k_r += inv_inertia[j]
            if k_t == 0.0:
                continue
            o0, o1, o2 = fw.force[c, 0], fw.force[c, 1], fw.force[c, 2]
            if fw.slide[c, 0] != 0.0 or fw.slide[c, 1] != 0.0 or fw.slide[c, 2] != 0.0:
                f = fw.coef[c, MU_K] * n_force
                t0, t1, t2 = f * fw.slide[c, 0], f * fw.slide[c, 1], f * fw.slide[c, 2]
            else:
                s0, s1, s2 = slip(c, ci, cj, cn, radius, a, alpha)
                s0, s1, s2 = s0 + fw.bias[c, 0], s1 + fw.bias[c, 1], s2 + fw.bias[c, 2]
                t0, t1, t2 = _clamp(o0 + s0 / k_t, o1 + s1 / k_t, o2 + s2 / k_t, mu * n_force)
            d0, d1, d2 = t0 - o0, t1 - o1, t2 - o2
            # the torque: its tangential part resists rolling, its normal part (3D) spinning
            p0, p1, p2 = fw.torque[c, 0], fw.torque[c, 1], fw.torque[c, 2]
            pn = 0.0
            if mu_sp != 0.0:
                pn = p0 * cn[c, 0] + p1 * cn[c, 1] + p2 * cn[c, 2]
                p0, p1, p2 = p0 - pn * cn[c, 0], p1 - pn * cn[c, 1], p2 - pn * cn[c, 2]
            e0 = e1 = e2 = 0.0
            if mu_r != 0.0 and k_r != 0.0:
                limit = mu_r * n_force * fw.coef[c, R_EFF]
                if fw.roll[c, 0] != 0.0 or fw.roll[c, 1] != 0.0 or fw.roll[c, 2] != 0.0:
                    r0, r1, r2 = limit * fw.roll[c, 0], limit * fw.roll[c, 1], limit * fw.roll[c, 2]
                else:
                    q0, q1, q2 = rolling(c, ci, cj, cn, alpha)
                    q0, q1, q2 = q0 + fw.bias[c, 3], q1 + fw.bias[c, 4], q2 + fw.bias[c, 5]
                    r0, r1, r2 = _clamp(p0 + q0 / k_r, p1 + q1 / k_r, p2 + q2 / k_r, limit)
                e0, e1, e2 = r0 - p0, r1 - p1, r2 - p2
            if mu_sp != 0.0 and k_r != 0.0:
                limit = mu_sp * n_force * fw.coef[c, R_EFF]
                if fw.spin[c] != 0.0:
                    rn = limit * fw.spin[c]
                else:
                    rn = min(max(pn + (spinning(c, ci, cj, cn, alpha) + fw.bias[c, 6]) / k_r, -limit), limit)
                e0, e1, e2 = e0 + (rn - pn) * cn[c, 0], e1 + (rn - pn) * cn[c, 1], e2 + (rn - pn) * cn[c, 2]
            if d0 == 0.0 and d1 == 0.0 and d2 == 0.0 and e0 == 0.0 and e1 == 0.0 and e2 == 0.0:
                continue
            apply_friction(c, (d0, d1, d2), (e0, e1, e2), ci, cj, cn, radius, a, alpha, inv_mass, inv_inertia)
            fw.force[c, 0], fw.force[c, 1], fw.force[c, 2] = t0, t1, t2
            fw.torque[c, 0], fw.torque[c, 1], fw.torque[c, 2] = (fw.torque[c, 0] + e0, fw.torque[c, 1] + e1,
                                                                 fw.torque[c, 2] + e2)  # fmt: skip
            worst = max(worst, math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) * k_t,
                        math.sqrt(e0 * e0 + e1 * e1 + e2 * e2) * k_r * radius[i])  # fmt: skip
        if first < 0.0:
            first = worst
        if worst <= tol:
            break
    return first


@inlined
def _unit_or_zero(x0, x1, x2, floor):
    size = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    if size <= floor:
        return 0.0, 0.0, 0.0
    return x0 / size, x1 / size, x2 / size


@kernel
def friction_modes(sel, ci, cj, cn, radius, v, w, fw, slip_tol, h, zero=True):
    """Start a force solve for the h seconds left: each contact of ``sel`` slides (kinetic friction along its
    slip, ``fw.slide``) if its slip is faster than ``slip_tol`` (m/s), and rolls (kinetic rolling
    resistance) if its rolling rate times R_eff is, and spins (kinetic spinning friction) if its spinning rate
    times R_eff is. A slower slip (rolling, spinning) sticks: static friction takes it out over h
    (``fw.bias``), as far as the static cone allows. Forces start from 0 (with ``zero``; else from those in
    ``fw.force``, ``fw.torque``). (Without friction, rolling resistance or spinning friction, none of
    these.)"""
    for c in sel:
        s0, s1, s2 = slip(c, ci, cj, cn, radius, v, w)
        if fw.coef[c, MU_K] == 0.0:
            s0 = s1 = s2 = 0.0
        fw.slide[c, 0], fw.slide[c, 1], fw.slide[c, 2] = _unit_or_zero(s0, s1, s2, slip_tol)
        sticks = fw.slide[c, 0] == 0.0 and fw.slide[c, 1] == 0.0 and fw.slide[c, 2] == 0.0
        q0, q1, q2 = rolling(c, ci, cj, cn, w)
        if fw.coef[c, MU_R] == 0.0:
            q0 = q1 = q2 = 0.0
        fw.roll[c, 0], fw.roll[c, 1], fw.roll[c, 2] = _unit_or_zero(q0, q1, q2, slip_tol / fw.coef[c, R_EFF])
        rests = fw.roll[c, 0] == 0.0 and fw.roll[c, 1] == 0.0 and fw.roll[c, 2] == 0.0
        sigma = spinning(c, ci, cj, cn, w) if fw.coef[c, MU_SP] != 0.0 else 0.0
        fw.spin[c] = math.copysign(1.0, sigma) if abs(sigma) * fw.coef[c, R_EFF] > slip_tol else 0.0
        for d in range(3):  # (a sticking contact's slip, a resting one's rolling and spinning, taken out over h)
            fw.bias[c, d] = (s0, s1, s2)[d] / h if sticks and h > 0.0 else 0.0
            fw.bias[c, 3 + d] = (q0, q1, q2)[d] / h if rests and h > 0.0 else 0.0
        fw.bias[c, 6] = sigma / h if fw.spin[c] == 0.0 and h > 0.0 else 0.0
        if zero:
            for d in range(3):
                fw.force[c, d] = 0.0
                fw.torque[c, d] = 0.0


@kernel
def breakaways(sel, ci, cj, cn, radius, a, alpha, normal, fw, tol):
    """After a force solve: the sticking contacts whose friction reached the static cone's edge while
    their slip still accelerates (faster than ``tol``, m/s^2) start sliding, kinetic friction along that
    acceleration; the same for rolling and spinning. A contact held with its cluster (``fw.held``) does not:
    its static rows at the cone's edge are its sliding. Returns how many changed (then solve again)."""
    changed = 0
    for c in sel:
        if fw.held[c]:
            continue
        n_force = normal[c]
        mu_s, mu_r, r_eff = fw.coef[c, MU_S], fw.coef[c, MU_R], fw.coef[c, R_EFF]
        if fw.slide[c, 0] == 0.0 and fw.slide[c, 1] == 0.0 and fw.slide[c, 2] == 0.0 and mu_s > 0.0:
            f2 = fw.force[c, 0] ** 2 + fw.force[c, 1] ** 2 + fw.force[c, 2] ** 2
            if math.sqrt(f2) >= mu_s * n_force * (1.0 - 1e-9):
                s0, s1, s2 = slip(c, ci, cj, cn, radius, a, alpha)
                s0, s1, s2 = s0 + fw.bias[c, 0], s1 + fw.bias[c, 1], s2 + fw.bias[c, 2]
                u0, u1, u2 = _unit_or_zero(s0, s1, s2, tol)
                if u0 != 0.0 or u1 != 0.0 or u2 != 0.0:
                    fw.slide[c, 0], fw.slide[c, 1], fw.slide[c, 2] = u0, u1, u2
                    changed += 1
        if fw.roll[c, 0] == 0.0 and fw.roll[c, 1] == 0.0 and fw.roll[c, 2] == 0.0 and mu_r > 0.0:
            q2 = fw.torque[c, 0] ** 2 + fw.torque[c, 1] ** 2 + fw.torque[c, 2] ** 2
            if math.sqrt(q2) >= mu_r * n_force * r_eff * (1.0 - 1e-9):
                q0, q1, q2 = rolling(c, ci, cj, cn, alpha)
                q0, q1, q2 = q0 + fw.bias[c, 3], q1 + fw.bias[c, 4], q2 + fw.bias[c, 5]
                u0, u1, u2 = _unit_or_zero(q0, q1, q2, tol / r_eff)
                if u0 != 0.0 or u1 != 0.0 or u2 != 0.0:
                    fw.roll[c, 0], fw.roll[c, 1], fw.roll[c, 2] = u0, u1, u2
                    changed += 1
        mu_sp = fw.coef[c, MU_SP]
        if fw.spin[c] == 0.0 and mu_sp > 0.0 and alpha.shape[1] == 3:
            tn = fw.torque[c, 0] * cn[c, 0] + fw.torque[c, 1] * cn[c, 1] + fw.torque[c, 2] * cn[c, 2]
            if abs(tn) >= mu_sp * n_force * r_eff * (1.0 - 1e-9):
                rate = spinning(c, ci, cj, cn, alpha) + fw.bias[c, 6]
                if abs(rate) * r_eff > tol:
                    fw.spin[c] = math.copysign(1.0, rate)
                    changed += 1
    return changed


@inlined
def _zero_time(x0, x1, x2, r0, r1, r2):
    """When ``x + r t`` comes nearest to 0 (exactly 0 when the two are opposite), if ahead; else inf."""
    along = x0 * r0 + x1 * r1 + x2 * r2
    rr = r0 * r0 + r1 * r1 + r2 * r2
    if along >= 0.0 or rr == 0.0:
        return math.inf
    return -along / rr


@kernel
def regime_time(c, ci, cj, cn, radius, v, w, a, alpha, fw, slip_tol):
    """How long (s) until contact c changes regime under its present forces: a sliding contact's slip, a
    rolling one's rolling rate, or a spinning one's spinning rate, reaching 0 (each is linear in time while
    the forces are constant; the
    time of their nearest approach to 0 where they are not collinear). inf if never, or if it slips (rolls)
    no faster than ``slip_tol`` (m/s) now: it has just started to (`breakaways`), and would stick at once."""
    t = math.inf
    if fw.slide[c, 0] != 0.0 or fw.slide[c, 1] != 0.0 or fw.slide[c, 2] != 0.0:
        s0, s1, s2 = slip(c, ci, cj, cn, radius, v, w)
        if s0 * s0 + s1 * s1 + s2 * s2 > slip_tol * slip_tol:
            r0, r1, r2 = slip(c, ci, cj, cn, radius, a, alpha)
            t = min(t, _zero_time(s0, s1, s2, r0, r1, r2))
    if fw.roll[c, 0] != 0.0 or fw.roll[c, 1] != 0.0 or fw.roll[c, 2] != 0.0:
        q0, q1, q2 = rolling(c, ci, cj, cn, w)
        reach = slip_tol / fw.coef[c, R_EFF]
        if q0 * q0 + q1 * q1 + q2 * q2 > reach * reach:
            r0, r1, r2 = rolling(c, ci, cj, cn, alpha)
            t = min(t, _zero_time(q0, q1, q2, r0, r1, r2))
    if fw.spin[c] != 0.0:
        sigma = spinning(c, ci, cj, cn, w)
        if abs(sigma) * fw.coef[c, R_EFF] > slip_tol:
            t = min(t, _zero_time(sigma, 0.0, 0.0, spinning(c, ci, cj, cn, alpha), 0.0, 0.0))
    return t
