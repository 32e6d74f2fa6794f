"""The impact law of planar rigid bodies: K contact points at one instant, with restitution and friction.

A body has a centroid ``x`` (m), a velocity ``v`` (m/s), an angular velocity ``w`` (rad/s, counter-
clockwise), an inverse mass (1/kg) and an inverse moment of inertia about its centroid (1/(kg m^2)); a
fixed body has both inverses 0 (it keeps its velocity: a piston). Contact ``c`` joins body ``ci[c]`` and
body ``cj[c]`` (``cj < 0``: a wall, at rest) at the world point ``point[c]``, with the unit normal
``normal[c]`` from i towards j, restitution ``e`` and friction ``mu``; its tangent is ``t = (-n_y, n_x)``.

Rates of contact c: the velocity of i's material point at the contact past j's,
``g = (v_i + w_i x r_i) - (v_j + w_j x r_j)`` (``r = p - x``, ``w x r = w (-r_y, r_x)``), split into the
approach speed ``u = g . n`` (positive approaching, as in `carom.contact.law`) and the slip ``s = g . t``.
An impulse ``P n + T t`` acts on j at the point and its opposite on i; in contact space the rates change by
``g' = g - W L`` with ``L = (P_1, T_1, P_2, T_2, ...)`` and ``W = J M^-1 J^T`` the Delassus matrix.

The law (docs/polygons.md, "Impact law"), in rounds as for disks (`carom.contact.solver`): the contacts
approaching now are solved together; every contact is checked again and the new approaching ones form the
next round. Each round asks, at every contact of the round:

* Newton's restitution ``u' <= -e u`` with ``P >= 0``, equality where ``P > 0``;
* Coulomb friction, tangential restitution 0: ``|T| <= mu P``, ``s' = 0`` inside the cone, ``T = mu P
  sign(s')`` on its edge (the model of the disk engine);
* no energy created: where Newton's law with friction would raise the kinetic energy (Kane & Levinson's
  rod), the round's restitution targets are scaled by the largest factor in [0, 1] that creates none
  (the factor 0, perfectly inelastic, always dissipates). Frictionless rounds always dissipate, so the
  cap never changes their exact answers.

Each round is a linear complementarity problem solved *exactly* by enumerating the contact modes (off,
on and sticking, on and sliding either way; off or on without friction) and keeping, among the modes whose
linear system is regular and whose answer satisfies every inequality, the one of least kinetic energy.
Velocities are unique for frictionless rounds, impulses not always (more contacts than degrees of freedom:
a box landing flat with friction); a mode with a singular system is skipped, and another mode then gives
the same velocities (a basic solution exists, as for any positive semidefinite LCP). Rounds whose
enumeration would exceed ``max_modes`` use block Gauss–Seidel, each contact's block solved exactly.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import ContactError
from ..jit import inlined, kernel
from .solver import nesterov_momentum

#: Relative round-off of a computed kinetic energy (a sum of a few terms, each to a few ulps): a round whose
#: energy rises by more than this is capped, to no rise at all.
ENERGY_ROUNDOFF = 1e-14
#: A contact approaches when its approach speed exceeds this fraction of the largest contact speed.
APPROACH_ROUNDOFF = 1e-12
#: `hold_impulses` checks its progress every this many sweeps, and stops where the least of the worst changes
#: of a window is above STALL_PROGRESS times the last window's: Gauss-Seidel with Coulomb friction can cycle
#: (its residual stalled at 3e-7 m/s for 10,000 sweeps in a pyramid with a box tipping over), and what the
#: next sweeps would remove is then less than what they cost. A converging solve gains far more than 1% a
#: window (a 20-row pyramid from rest: about 10x per 300 sweeps).
STALL_WINDOW = 100
STALL_PROGRESS = 0.99
STALL_CEILING = 1e3
#: `hold_impulses` turns to the accelerated projected gradient when this many sweeps leave it far from its
#: tolerance (`STALL_CEILING` times it), and runs it to HANDOVER times that tolerance: Gauss-Seidel's sweeps
#: contract an error spread over a stack slowly (about 1 - 1/depth^2 a sweep), so from a gradient answer at
#: the tolerance itself they still ran 1,300-1,700 sweeps on a 50-row pyramid; from 1e-2 of it, one.
ACCELERATE_AFTER = 32
HANDOVER = 1e-2
#: Clusters of fewer contacts than this stay with Gauss-Seidel alone: too shallow for its sweeps to grow much,
#: and where so few do not converge they cycle (Coulomb friction with wedged bodies), which the gradient does
#: not cure (a hopper of boxes and disks sent 2,842 such solves of 2-11 contacts to it, and its steps then
#: gained up to 2.5e-5 J where they gain 1.3e-10 J).
ACCELERATE_CONTACTS = 128
#: Relative slack of the equations and inequalities a mode's answer must satisfy; relative rank cut-off.
_SLACK = 1e-11
_RANK = 1e-13
#: Bisection steps of the energy cap (the factor to 2^-40).
_CAP_STEPS = 40
#: Modes of one contact: off; on without friction (T = 0); on and sticking; sliding with T = +mu P, -mu P.
_OFF, _SMOOTH, _STICK, _SLIDE_UP, _SLIDE_DOWN = range(5)
#: Most sweeps of the block Gauss-Seidel fallback.
_BLOCK_SWEEPS = 10_000


class RigidBodies(NamedTuple):
    """Planar rigid bodies: n centroids, velocities and inverse mass properties (fixed body: inverses 0)."""

    position: np.ndarray  # (n, 2) m, the centroid
    velocity: np.ndarray  # (n, 2) m/s
    angular_velocity: np.ndarray  # (n,) rad/s, counter-clockwise
    inv_mass: np.ndarray  # (n,) 1/kg
    inv_inertia: np.ndarray  # (n,) 1/(kg m^2), about the centroid


class RigidContacts(NamedTuple):
    """K contact points at one instant; ``body_j < 0`` is a wall (at rest)."""

    body_i: np.ndarray  # (K,) int
    body_j: np.ndarray  # (K,) int
    point: np.ndarray  # (K, 2) m, world coordinates
    normal: np.ndarray  # (K, 2) unit, from body i towards body j
    restitution: np.ndarray  # (K,) in [0, 1]
    friction: np.ndarray  # (K,) Coulomb mu >= 0


class RigidImpact(NamedTuple):
    """What `resolve_rigid_impact` returns."""

    velocity: np.ndarray  # (n, 2) m/s after
    angular_velocity: np.ndarray  # (n,) rad/s after
    impulse: np.ndarray  # (K, 2) N s: normal P and tangential T on body j (along t = (-n_y, n_x))
    rounds: int  # rounds solved


def resolve_rigid_impact(bodies: RigidBodies, contacts: RigidContacts, max_rounds: int = 20,
                         max_modes: int = 4096) -> RigidImpact:  # fmt: skip
    """The velocities after the impact of planar rigid bodies at K contact points, and the impulses.

    Rounds of the law in the module's docstring (at most ``max_rounds`` with restitution, then as many
    perfectly inelastic over every contact); each round solved exactly by enumerating at most
    ``max_modes`` contact modes, else by block Gauss–Seidel. Raises ``ValueError`` on bad input and
    `carom.ContactError` when contacts still approach after ``2 max_rounds`` rounds (no velocities satisfy
    them, as for a body between a moving fixed body and a wall)."""
    b = _checked_bodies(bodies)
    c = _checked_contacts(contacts, len(b.inv_mass))
    if max_rounds < 1 or max_modes < 1:
        raise ValueError(f"max_rounds and max_modes must be >= 1, got {max_rounds!r}, {max_modes!r}")
    v = b.velocity.copy()
    w = b.angular_velocity.copy()
    impulse = np.zeros((len(c.body_i), 2))
    rounds = resolve_rounds(c.body_i, c.body_j, c.point, c.normal, c.restitution, c.friction, b.position, v, w,
                            b.inv_mass, b.inv_inertia, impulse, max_rounds, max_modes)  # fmt: skip
    if rounds < 0:
        raise ContactError(f"contacts still approach after 2 max_rounds={2 * max_rounds} rounds (the last half "
                           "perfectly inelastic): no velocities satisfy them all")  # fmt: skip
    return RigidImpact(v, w, impulse, rounds)


def _float_array(name: str, value, shape: tuple) -> np.ndarray:
    a = np.array(value, dtype=np.float64)
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a.tolist()!r}")
    return a


def _checked_bodies(bodies: RigidBodies) -> RigidBodies:
    n = len(np.atleast_1d(bodies.inv_mass))
    out = RigidBodies(
        position=_float_array("position", bodies.position, (n, 2)),
        velocity=_float_array("velocity", bodies.velocity, (n, 2)),
        angular_velocity=_float_array("angular_velocity", bodies.angular_velocity, (n,)),
        inv_mass=_float_array("inv_mass", bodies.inv_mass, (n,)),
        inv_inertia=_float_array("inv_inertia", bodies.inv_inertia, (n,)),
    )
    for name in ("inv_mass", "inv_inertia"):
        bad = np.flatnonzero(getattr(out, name) < 0)
        if len(bad):
            raise ValueError(f"{name} must be >= 0, got {float(getattr(out, name)[bad[0]])!r} for body {bad[0]}")
    return out


def _checked_contacts(contacts: RigidContacts, n: int) -> RigidContacts:
    k = len(np.atleast_1d(contacts.body_i))
    body_i = np.array(contacts.body_i, dtype=np.int64).reshape(-1)
    body_j = np.array(contacts.body_j, dtype=np.int64).reshape(-1)
    if body_i.shape != (k,) or body_j.shape != (k,):
        raise ValueError(f"body_i and body_j must have shape ({k},), got {body_i.shape}, {body_j.shape}")
    out = RigidContacts(body_i, body_j, _float_array("point", contacts.point, (k, 2)),
                        _float_array("normal", contacts.normal, (k, 2)),
                        _float_array("restitution", contacts.restitution, (k,)),
                        _float_array("friction", contacts.friction, (k,)))  # fmt: skip
    for c in range(k):
        i, j = body_i[c], body_j[c]
        if not 0 <= i < n:
            raise ValueError(f"body_i[{c}] must be a body id in [0, {n}), got {i}")
        if j >= n or j == i:
            raise ValueError(f"body_j[{c}] must be another body id below {n} or a wall (< 0), got {j}")
        size = math.hypot(*out.normal[c])
        if abs(size - 1.0) > 1e-9:
            raise ValueError(f"normal[{c}] must be a unit vector, got {out.normal[c].tolist()} (length {size!r})")
        if not 0.0 <= out.restitution[c] <= 1.0:
            raise ValueError(f"restitution[{c}] must be in [0, 1], got {float(out.restitution[c])!r}")
        if out.friction[c] < 0.0:
            raise ValueError(f"friction[{c}] must be >= 0, got {float(out.friction[c])!r}")
    return out


@kernel
def contact_rates(ci, cj, point, normal, x, v, w, out):
    """``out[c] = (u, s)``: approach speed and slip of every contact (m/s), from the body rates."""
    for c in range(len(ci)):
        i, j = ci[c], cj[c]
        g0 = v[i, 0] - w[i] * (point[c, 1] - x[i, 1])
        g1 = v[i, 1] + w[i] * (point[c, 0] - x[i, 0])
        if j >= 0:
            g0 -= v[j, 0] - w[j] * (point[c, 1] - x[j, 1])
            g1 -= v[j, 1] + w[j] * (point[c, 0] - x[j, 0])
        out[c, 0] = g0 * normal[c, 0] + g1 * normal[c, 1]
        out[c, 1] = -g0 * normal[c, 1] + g1 * normal[c, 0]


@inlined
def approach_floor(rates):
    """The approach speed (m/s) below which contacts with these ``rates`` (k, 2) do not approach: round-off,
    `APPROACH_ROUNDOFF` of the largest rate."""
    scale = 0.0
    for c in range(rates.shape[0]):
        scale = max(scale, abs(rates[c, 0]), abs(rates[c, 1]))
    return APPROACH_ROUNDOFF * scale


@inlined
def round_selection(rates, floor, inelastic, sel):
    """A round's contacts into ``sel``: those approaching faster than ``floor`` (m/s), or, ``inelastic`` (past
    the rounds allowed), all of them while any does. Returns how many (0: none approaches)."""
    m = 0
    for c in range(rates.shape[0]):
        if rates[c, 0] > floor:
            sel[m] = c
            m += 1
    if m and inelastic:
        m = rates.shape[0]
        for c in range(m):
            sel[c] = c
    return m


@inlined
def _row(c, d, body, ci, cj, point, normal, x):
    """Contact c's row d (0 normal, 1 tangent) on ``body``: (sign, direction x, direction y, arm x direction);
    sign 0 if the body is not in the contact."""
    dx = normal[c, 0] if d == 0 else -normal[c, 1]
    dy = normal[c, 1] if d == 0 else normal[c, 0]
    if body == ci[c]:
        sign = 1.0
    elif body == cj[c]:
        sign = -1.0
    else:
        return 0.0, dx, dy, 0.0
    rx = point[c, 0] - x[body, 0]
    ry = point[c, 1] - x[body, 1]
    return sign, dx, dy, rx * dy - ry * dx


@kernel
def delassus(sel, ci, cj, point, normal, x, inv_mass, inv_inertia):
    """The (2k, 2k) matrix ``W = J M^-1 J^T`` of the contacts ``sel`` (rows: normal, tangent per contact)."""
    k = len(sel)
    W = np.zeros((2 * k, 2 * k))
    for a in range(2 * k):
        ca = sel[a // 2]
        for b in range(a, 2 * k):
            cb = sel[b // 2]
            total = 0.0
            for side in range(2):
                body = ci[ca] if side == 0 else cj[ca]
                if body < 0 or (side == 1 and body == ci[ca]):
                    continue
                sa, ax, ay, ra = _row(ca, a % 2, body, ci, cj, point, normal, x)
                sb, bx, by, rb = _row(cb, b % 2, body, ci, cj, point, normal, x)
                if sb != 0.0:
                    total += sa * sb * (inv_mass[body] * (ax * bx + ay * by) + inv_inertia[body] * ra * rb)
            W[a, b] = total
            W[b, a] = total
    return W


@kernel
def _solve_min_norm(A, b, out):
    """The least-norm solution of ``A out = b`` (rows equilibrated first; LAPACK's SVD least squares with
    singular values below `_RANK` of the largest taken as 0). Returns False if the system is inconsistent
    (a residual beyond `_SLACK` of its row's scale): a mode whose equations no impulses satisfy."""
    m = len(b)
    for r in range(m):
        s = 0.0
        for q in range(m):
            s = max(s, abs(A[r, q]))
        if s == 0.0:
            return False
        A[r, :] /= s
        b[r] /= s
    out[:] = np.linalg.lstsq(A.copy(), b.copy(), rcond=_RANK)[0]
    largest = 0.0
    for q in range(m):
        largest = max(largest, abs(out[q]))
    for r in range(m):  # each row's entries are at most 1 now
        res = b[r]
        for q in range(m):
            res -= A[r, q] * out[q]
        if abs(res) > _SLACK * (abs(b[r]) + largest):
            return False
    return True


@kernel
def _mode_system(W, g, target, mu, modes, A, b):
    """The linear equations of one mode assignment: per contact, off (``P = T = 0``) or on (``u' = -target``)
    with ``T = 0`` (smooth), ``s' = 0`` (stick) or ``T = +-mu P`` (slide)."""
    m = len(g)
    A[:, :] = 0.0
    for c in range(m // 2):
        n, t = 2 * c, 2 * c + 1
        if modes[c] == _OFF:
            A[n, n] = 1.0
            A[t, t] = 1.0
            b[n] = 0.0
            b[t] = 0.0
            continue
        A[n, :] = W[n, :]
        b[n] = g[n] + target[c]
        if modes[c] == _STICK:
            A[t, :] = W[t, :]
            b[t] = g[t]
        else:
            A[t, t] = 1.0
            A[t, n] = 0.0 if modes[c] == _SMOOTH else (-mu[c] if modes[c] == _SLIDE_UP else mu[c])
            b[t] = 0.0


@kernel
def _mode_holds(W, g, target, mu, modes, lam):
    """Whether the impulses ``lam`` of a mode assignment satisfy every inequality of the law (to `_SLACK`)."""
    m = len(g)
    v_scale = 0.0
    p_scale = 0.0
    for a in range(m):
        v_scale = max(v_scale, abs(g[a]))
        p_scale = max(p_scale, abs(lam[a]))
    for c in range(m // 2):
        v_scale = max(v_scale, target[c])
    tol_v = _SLACK * v_scale
    tol_p = _SLACK * p_scale
    for c in range(m // 2):
        n, t = 2 * c, 2 * c + 1
        after_n = g[n]
        after_t = g[t]
        for a in range(m):
            after_n -= W[n, a] * lam[a]
            after_t -= W[t, a] * lam[a]
        mode = modes[c]
        if mode == _OFF:
            if after_n > -target[c] + tol_v:
                return False
            continue
        if lam[n] < -tol_p:
            return False
        if mode == _STICK and abs(lam[t]) > mu[c] * lam[n] + tol_p:
            return False
        if mode == _SLIDE_UP and after_t < -tol_v:
            return False
        if mode == _SLIDE_DOWN and after_t > tol_v:
            return False
    return True


@kernel
def _energy_change(W, g, lam):
    """Kinetic energy change (J) of impulses ``lam``: ``-lam . g + lam W lam / 2``."""
    m = len(g)
    total = 0.0
    for a in range(m):
        wl = 0.0
        for q in range(m):
            wl += W[a, q] * lam[q]
        total += lam[a] * (0.5 * wl - g[a])
    return total


@kernel
def solve_modes(W, g, target, mu, out):
    """Exact solve of one round by enumerating every contact's modes (`_mode_system`): ``out`` gets the
    impulses of the valid mode assignment of least kinetic energy. Returns False if no assignment is valid.

    ``W`` (2k, 2k) Delassus matrix, ``g`` (2k,) rates before (u, s per contact), ``target`` (k,) the
    separation speeds asked (``e u``), ``mu`` (k,)."""
    k = len(target)
    m = 2 * k
    radix = np.empty(k, np.int64)
    for c in range(k):
        radix[c] = 2 if mu[c] == 0.0 else 4
    modes = np.zeros(k, np.int64)
    digits = np.zeros(k, np.int64)
    A = np.empty((m, m))
    b = np.empty(m)
    lam = np.empty(m)
    found = False
    best = math.inf
    best_size = math.inf
    while True:
        for c in range(k):
            modes[c] = _OFF if digits[c] == 0 else (_SMOOTH if radix[c] == 2 else _STICK + digits[c] - 1)
        _mode_system(W, g, target, mu, modes, A, b)
        solved = _solve_min_norm(A, b, lam)
        for c in range(k):  # exact zeros where the mode says so (least squares leaves round-off)
            if modes[c] == _OFF:
                lam[2 * c] = 0.0
            if modes[c] == _OFF or modes[c] == _SMOOTH:
                lam[2 * c + 1] = 0.0
        if solved and _mode_holds(W, g, target, mu, modes, lam):
            de = _energy_change(W, g, lam)
            size = 0.0
            for a in range(m):
                size += lam[a] * lam[a]
            tie = _SLACK * max(abs(de), abs(best)) if found else 0.0
            if not found or de < best - tie or (de <= best + tie and size < best_size):
                best = min(de, best)
                best_size = size
                found = True
                out[:] = lam
        c = 0
        while c < k and digits[c] == radix[c] - 1:
            digits[c] = 0
            c += 1
        if c == k:
            return found
        digits[c] += 1


@kernel
def solve_blocks(W, g, target, mu, out, sweeps, tol):
    """Block Gauss–Seidel on the contacts of one round, each contact's (normal, tangent) block solved exactly
    (`solve_modes` with one contact) given the others' impulses. ``tol`` (m/s) bounds the last sweep's largest
    change of a rate. Returns the sweeps used."""
    k = len(target)
    out[:] = 0.0
    wc = np.empty((2, 2))
    gc = np.empty(2)
    local = np.empty(2)
    for sweep in range(sweeps):
        worst = 0.0
        for c in range(k):
            n, t = 2 * c, 2 * c + 1
            for d in range(2):
                rate = g[n + d]
                for a in range(2 * k):
                    if a != n and a != t:
                        rate -= W[n + d, a] * out[a]
                gc[d] = rate
                wc[d, 0] = W[n + d, n]
                wc[d, 1] = W[n + d, t]
            if not solve_modes(wc, gc, target[c : c + 1], mu[c : c + 1], local):
                local[:] = 0.0
            change = max(abs(local[0] - out[n]) * W[n, n], abs(local[1] - out[t]) * W[t, t])
            worst = max(worst, change)
            out[n] = local[0]
            out[t] = local[1]
        if worst <= tol:
            return sweep + 1
    return sweeps


@kernel
def _solve_round(W, g, target, mu, out, max_modes):
    count = 1
    for c in range(len(target)):
        count *= 2 if mu[c] == 0.0 else 4
        if count > max_modes:
            break
    if count <= max_modes and solve_modes(W, g, target, mu, out):
        return
    scale = 0.0
    for a in range(len(g)):
        scale = max(scale, abs(g[a]))
    solve_blocks(W, g, target, mu, out, _BLOCK_SWEEPS, APPROACH_ROUNDOFF * scale)


@kernel
def apply_rigid_impulses(sel, lam, ci, cj, point, normal, x, v, w, inv_mass, inv_inertia):
    """Apply the impulses ``lam`` (P, T per contact of ``sel``): ``P n + T t`` on body j, its opposite on i."""
    for s in range(len(sel)):
        c = sel[s]
        fx = lam[2 * s] * normal[c, 0] - lam[2 * s + 1] * normal[c, 1]
        fy = lam[2 * s] * normal[c, 1] + lam[2 * s + 1] * normal[c, 0]
        for side in range(2):
            body = ci[c] if side == 0 else cj[c]
            if body < 0:
                continue
            sign = -1.0 if side == 0 else 1.0
            rx = point[c, 0] - x[body, 0]
            ry = point[c, 1] - x[body, 1]
            v[body, 0] += sign * inv_mass[body] * fx
            v[body, 1] += sign * inv_mass[body] * fy
            w[body] += sign * inv_inertia[body] * (rx * fy - ry * fx)


@kernel
def kinetic_energy(bodies, v, w, inv_mass, inv_inertia):
    """Kinetic energy (J) of the listed bodies (a body appearing twice counts twice; fixed ones not)."""
    total = 0.0
    for b in bodies:
        if inv_mass[b] > 0.0:
            total += 0.5 * (v[b, 0] ** 2 + v[b, 1] ** 2) / inv_mass[b]
        if inv_inertia[b] > 0.0:
            total += 0.5 * w[b] ** 2 / inv_inertia[b]
    return total


@kernel
def _round_bodies(sel, ci, cj):
    """The distinct bodies of the contacts ``sel``."""
    out = np.empty(2 * len(sel), np.int64)
    n = 0
    for c in sel:
        for body in (ci[c], cj[c]):
            if body < 0:
                continue
            seen = False
            for q in range(n):
                seen = seen or out[q] == body
            if not seen:
                out[n] = body
                n += 1
    return out[:n]


@kernel
def _energy_after(lam, sel, ci, cj, point, normal, x, v, w, inv_mass, inv_inertia, bodies):
    vt = v.copy()
    wt = w.copy()
    apply_rigid_impulses(sel, lam, ci, cj, point, normal, x, vt, wt, inv_mass, inv_inertia)
    return kinetic_energy(bodies, vt, wt, inv_mass, inv_inertia)


@kernel
def solve_rigid_round(sel, ci, cj, point, normal, restitution, friction, x, v, w, inv_mass, inv_inertia, rates,
                      impulse, max_modes, inelastic):  # fmt: skip
    """Solve one round: the contacts ``sel`` (approaching; ``rates`` holds every contact's (u, s) now) together,
    with targets ``e u`` (0 if ``inelastic``), the rebound capped so that no kinetic energy is created; apply
    the impulses to ``v``, ``w`` and add them to ``impulse``. Returns the cap's factor on the targets (1: none)."""
    k = len(sel)
    W = delassus(sel, ci, cj, point, normal, x, inv_mass, inv_inertia)
    g = np.empty(2 * k)
    target = np.empty(k)
    mu = np.empty(k)
    for s in range(k):
        c = sel[s]
        g[2 * s] = rates[c, 0]
        g[2 * s + 1] = rates[c, 1]
        target[s] = 0.0 if inelastic else restitution[c] * max(rates[c, 0], 0.0)
        mu[s] = friction[c]
    lam = np.empty(2 * k)
    _solve_round(W, g, target, mu, lam, max_modes)
    bodies = _round_bodies(sel, ci, cj)
    before = kinetic_energy(bodies, v, w, inv_mass, inv_inertia)
    limit = before * (1.0 + ENERGY_ROUNDOFF)
    factor = 1.0
    if _energy_after(lam, sel, ci, cj, point, normal, x, v, w, inv_mass, inv_inertia, bodies) > limit:
        scaled = np.empty(k)
        trial = np.empty(2 * k)
        low, high = 0.0, 1.0
        _solve_round(W, g, 0.0 * target, mu, lam, max_modes)
        for _ in range(_CAP_STEPS):
            mid = 0.5 * (low + high)
            for s in range(k):
                scaled[s] = mid * target[s]
            _solve_round(W, g, scaled, mu, trial, max_modes)
            if _energy_after(trial, sel, ci, cj, point, normal, x, v, w, inv_mass, inv_inertia, bodies) > before:
                high = mid
            else:
                low = mid
                lam[:] = trial
        factor = low
    apply_rigid_impulses(sel, lam, ci, cj, point, normal, x, v, w, inv_mass, inv_inertia)
    for s in range(k):
        impulse[sel[s], 0] += lam[2 * s]
        impulse[sel[s], 1] += lam[2 * s + 1]
    return factor


@kernel
def resolve_rounds(ci, cj, point, normal, restitution, friction, x, v, w, inv_mass, inv_inertia, impulse,
                   max_rounds, max_modes):  # fmt: skip
    """The engine's kernel: resolve the impact of the K contacts in rounds (`solve_rigid_round`), updating
    ``v``, ``w`` and accumulating the impulses in ``impulse`` (K, 2). After ``max_rounds`` rounds, every
    contact is solved perfectly inelastic together, for at most as many rounds again. A contact approaches
    when its approach speed exceeds `APPROACH_ROUNDOFF` of the largest contact speed at the start. Returns
    the rounds used, or -1 if contacts still approach (crushed)."""
    k = len(ci)
    rates = np.empty((k, 2))
    contact_rates(ci, cj, point, normal, x, v, w, rates)
    floor = approach_floor(rates)
    sel = np.empty(k, np.int64)
    for rnd in range(2 * max_rounds):
        if rnd:
            contact_rates(ci, cj, point, normal, x, v, w, rates)
        inelastic = rnd >= max_rounds
        ns = round_selection(rates, floor, inelastic, sel)
        if ns == 0:
            return rnd
        solve_rigid_round(sel[:ns], ci, cj, point, normal, restitution, friction, x, v, w, inv_mass, inv_inertia,
                          rates, impulse, max_modes, inelastic)  # fmt: skip
    contact_rates(ci, cj, point, normal, x, v, w, rates)
    for c in range(k):
        if rates[c, 0] > floor:
            return -1
    return 2 * max_rounds


@inlined
def _held_block(u0, s0, wnn, wnt, wtt, mu):
    """One contact's impulses (P, T) with the others' fixed, its own taken out: rates ``u0``, ``s0`` (m/s)
    before it, its block of W. Perfectly inelastic (``u' <= 0``, equality where P > 0) with Coulomb friction
    (stick, ``s' = 0`` inside the cone; else slide on its edge against the slip after)."""
    if u0 <= 0.0:
        return 0.0, 0.0
    if mu == 0.0:
        return u0 / wnn, 0.0
    det = wnn * wtt - wnt * wnt
    if det > 1e-14 * wnn * wtt:
        p = (wtt * u0 - wnt * s0) / det
        t = (wnn * s0 - wnt * u0) / det
        if p >= 0.0 and abs(t) <= mu * p:
            return p, t
    for sign in (1.0, -1.0):
        k = wnn + sign * mu * wnt
        if k > 0.0:
            p = u0 / k
            t = sign * mu * p
            if sign * (s0 - wnt * p - wtt * t) >= 0.0:
                return p, t
    return u0 / wnn, 0.0


@kernel
def hold_impulses(ci, cj, point, normal, friction, bias, x, v, w, inv_mass, inv_inertia, impulse, sweeps, tol,
                  accelerate=False):  # fmt: skip
    """Impulses of held contacts by projected block Gauss-Seidel in body velocities: each contact's (normal,
    tangent) pair solved exactly given the others (`_held_block`), sweep after sweep, until no rate changes
    by more than ``tol`` (m/s). The rates constrained are those of ``v``, ``w`` plus ``bias`` (K, 2) (m/s):
    ``u + bias_n <= 0``, and ``s + bias_t = 0`` while sticking (bias 0: perfectly inelastic). ``impulse``
    (K, 2) is the warm start, applied to ``v``, ``w`` first, and holds the result; ``v``, ``w`` are updated.
    Stops early where the sweeps stall (`STALL_WINDOW`). O(K) per sweep.

    With ``accelerate``, on `ACCELERATE_CONTACTS` contacts or more: a warm start from the last step converges
    in a few sweeps, but where the first `ACCELERATE_AFTER` sweeps leave a change above `STALL_CEILING` times
    ``tol`` (a stack at its first step, or jolted), an accelerated projected gradient (`_held_accelerated`)
    takes over from where they stopped, and Gauss-Seidel then finishes from its answer: Gauss-Seidel's sweeps
    grow as the square of a stack's height, the gradient's about as the height (a 40-row pyramid from rest:
    10,174 sweeps, stopped by the stall rule short of ``tol``, against 2,510). Closer to the answer
    Gauss-Seidel goes on alone. Returns the sweeps used, both kinds counted."""
    k = len(ci)
    arms = np.zeros((k, 4))  # r_i x n, r_i x t, r_j x n, r_j x t
    block = np.empty((k, 3))  # W_nn, W_nt, W_tt
    for c in range(k):
        nx, ny = normal[c, 0], normal[c, 1]
        wnn = wnt = wtt = 0.0
        for side in range(2):
            b = ci[c] if side == 0 else cj[c]
            if b < 0:
                continue
            rx = point[c, 0] - x[b, 0]
            ry = point[c, 1] - x[b, 1]
            an = rx * ny - ry * nx
            at = rx * nx + ry * ny  # r x t with t = (-ny, nx)
            arms[c, 2 * side] = an
            arms[c, 2 * side + 1] = at
            wnn += inv_mass[b] + inv_inertia[b] * an * an
            wnt += inv_inertia[b] * an * at
            wtt += inv_mass[b] + inv_inertia[b] * at * at
        block[c, 0], block[c, 1], block[c, 2] = wnn, wnt, wtt
        _push_held(c, ci, cj, normal, arms, v, w, inv_mass, inv_inertia, impulse[c, 0], impulse[c, 1])
    if not accelerate or k < ACCELERATE_CONTACTS:
        used, _, _ = _held_sweeps(ci, cj, point, normal, friction, bias, x, v, w, inv_mass, inv_inertia, impulse, arms,
                                  block, sweeps, tol)  # fmt: skip
        return used
    used, done, worst = _held_sweeps(ci, cj, point, normal, friction, bias, x, v, w, inv_mass, inv_inertia, impulse,
                                     arms, block, min(sweeps, ACCELERATE_AFTER), tol)  # fmt: skip
    if done or used >= sweeps:
        return used
    if worst > STALL_CEILING * tol:  # far from the answer: the gradient phase, then Gauss-Seidel from its answer
        used += _held_accelerated(ci, cj, normal, friction, bias, v, w, inv_mass, inv_inertia, impulse, arms,
                                  sweeps - used, HANDOVER * tol)  # fmt: skip
    more, _, _ = _held_sweeps(ci, cj, point, normal, friction, bias, x, v, w, inv_mass, inv_inertia, impulse, arms,
                              block, max(sweeps - used, ACCELERATE_AFTER), tol)  # fmt: skip
    return used + more


@inlined
def _held_rates(c, ci, cj, point, bias, x, v, w, normal):
    """Contact c's approach speed ``u`` and slip ``s`` (m/s) at ``v``, ``w``, plus its ``bias``."""
    i, j = ci[c], cj[c]
    nx, ny = normal[c, 0], normal[c, 1]
    gx = v[i, 0] - w[i] * (point[c, 1] - x[i, 1])
    gy = v[i, 1] + w[i] * (point[c, 0] - x[i, 0])
    if j >= 0:
        gx -= v[j, 0] - w[j] * (point[c, 1] - x[j, 1])
        gy -= v[j, 1] + w[j] * (point[c, 0] - x[j, 0])
    return gx * nx + gy * ny + bias[c, 0], -gx * ny + gy * nx + bias[c, 1]


@inlined
def _armed_rates(c, ci, cj, normal, arms, bias, v, w):
    """`_held_rates` from the contact's arms (`hold_impulses`' ``arms``) instead of its point: the same to
    round-off, with fewer reads."""
    i, j = ci[c], cj[c]
    nx, ny = normal[c, 0], normal[c, 1]
    u = v[i, 0] * nx + v[i, 1] * ny + w[i] * arms[c, 0]
    s = -v[i, 0] * ny + v[i, 1] * nx + w[i] * arms[c, 1]
    if j >= 0:
        u -= v[j, 0] * nx + v[j, 1] * ny + w[j] * arms[c, 2]
        s -= -v[j, 0] * ny + v[j, 1] * nx + w[j] * arms[c, 3]
    return u + bias[c, 0], s + bias[c, 1]


@kernel
def _held_sweeps(ci, cj, point, normal, friction, bias, x, v, w, inv_mass, inv_inertia, impulse, arms, block, sweeps,
                 tol):  # fmt: skip
    """`hold_impulses`' Gauss-Seidel sweeps, from ``impulse`` already applied to ``v``, ``w``: (sweeps used,
    whether they converged or stalled, the last sweep's largest change of a rate in m/s)."""
    window_best = math.inf  # the least worst change of the sweeps since the last check
    last_best = math.inf
    worst = math.inf
    for sweep in range(sweeps):
        worst = 0.0
        for c in range(len(ci)):
            u, s = _held_rates(c, ci, cj, point, bias, x, v, w, normal)
            wnn, wnt, wtt = block[c, 0], block[c, 1], block[c, 2]
            p0, t0 = impulse[c, 0], impulse[c, 1]
            p, t = _held_block(u + wnn * p0 + wnt * t0, s + wnt * p0 + wtt * t0, wnn, wnt, wtt, friction[c])
            dp, dt = p - p0, t - t0
            if dp != 0.0 or dt != 0.0:
                _push_held(c, ci, cj, normal, arms, v, w, inv_mass, inv_inertia, dp, dt)
                impulse[c, 0], impulse[c, 1] = p, t
                worst = max(worst, abs(dp) * wnn, abs(dt) * wtt)
        if worst <= tol:
            return sweep + 1, True, worst
        window_best = min(window_best, worst)
        if (sweep + 1) % STALL_WINDOW == 0:
            if window_best > STALL_PROGRESS * last_best and window_best <= STALL_CEILING * tol:
                return sweep + 1, True, worst
            last_best, window_best = window_best, math.inf
    return sweeps, False, worst


@inlined
def _cone_projection(p, t, mu):
    """The nearest point (Euclidean) to (p, t) in the Coulomb cone ``p >= 0``, ``|t| <= mu p``."""
    if mu == 0.0:
        return max(p, 0.0), 0.0
    if abs(t) <= mu * p:
        return p, t
    if mu * abs(t) <= -p:
        return 0.0, 0.0
    along = (p + mu * abs(t)) / (1.0 + mu * mu)
    return along, math.copysign(mu * along, t)


@kernel
def _held_accelerated(ci, cj, normal, friction, bias, v, w, inv_mass, inv_inertia, impulse, arms, sweeps, tol):
    """`hold_impulses`' problem by accelerated projected gradient (Nesterov's method with adaptive restart, as
    `carom.contact.solver.solve_accelerated`), from ``impulse`` already applied to ``v``, ``w``; both hold the
    result. Every contact steps at once by the inverse of L_c, the Gershgorin bound of its two rows of the
    Delassus operator W (`_row_sum_bounds`), so that diag(L) - W is diagonally dominant: a metric in which
    the method converges. The step follows De Saxce's modified rates ``(u - mu |s|, s)`` and is projected onto
    each contact's Coulomb cone, so its fixed points are Coulomb's law itself: sticking, or sliding on the
    cone's edge without separating (with the plain rates they would be the cone complementarity problem's,
    which separates a sliding contact at ``mu |s|``). Stops where no contact's step moves its rates by more
    than ``tol`` (m/s). Returns the sweeps used."""
    k = len(ci)
    lip = _row_sum_bounds(ci, cj, normal, arms, inv_mass, inv_inertia)
    trial = np.empty((k, 2))
    y = impulse.copy()  # the extrapolated point, whose impulses ``v``, ``w`` hold
    theta = 1.0
    for sweep in range(sweeps):
        worst = 0.0
        restart = 0.0
        for c in range(k):
            if lip[c] == 0.0:
                trial[c, 0], trial[c, 1] = 0.0, 0.0
                continue
            u, s = _armed_rates(c, ci, cj, normal, arms, bias, v, w)
            # (De Saxce's modified rate u - mu |s|: its fixed point is Coulomb's law, sliding without separating)
            p, t = _cone_projection(y[c, 0] + (u - friction[c] * abs(s)) / lip[c], y[c, 1] + s / lip[c], friction[c])
            trial[c, 0], trial[c, 1] = p, t
            dp, dt = p - y[c, 0], t - y[c, 1]
            worst = max(worst, lip[c] * max(abs(dp), abs(dt)))
            restart -= lip[c] * (dp * (p - impulse[c, 0]) + dt * (t - impulse[c, 1]))
        if worst <= tol:
            impulse[:] = trial
            _move_held(ci, cj, normal, arms, v, w, inv_mass, inv_inertia, y, impulse)
            return sweep + 1
        beta, theta = nesterov_momentum(theta, restart > 0.0)
        for c in range(k):
            p, t = trial[c, 0], trial[c, 1]
            yp, yt = _cone_projection(p + beta * (p - impulse[c, 0]), t + beta * (t - impulse[c, 1]), friction[c])
            if yp != y[c, 0] or yt != y[c, 1]:
                _push_held(c, ci, cj, normal, arms, v, w, inv_mass, inv_inertia, yp - y[c, 0], yt - y[c, 1])
                y[c, 0], y[c, 1] = yp, yt
            impulse[c, 0], impulse[c, 1] = p, t
    _move_held(ci, cj, normal, arms, v, w, inv_mass, inv_inertia, y, impulse)
    return sweeps


@kernel
def _row_sum_bounds(ci, cj, normal, arms, inv_mass, inv_inertia):
    """(K,) per contact: the larger of its two rows' sums of ``|W_rs|`` over every row s of the Delassus
    operator ``W = J M^-1 J^T``, each body's share summed apart (an upper bound where two contacts share both
    bodies): for rows r, s through body b, ``|d_r . d_s / m_b + a_r a_s / I_b|``, d the unit direction and a
    the arm ``r x d`` (`hold_impulses`' ``arms``). O(sum over bodies of their contact count squared)."""
    k, n = len(ci), len(inv_mass)
    start = np.zeros(n + 1, dtype=np.int64)  # body b's (contact, side) entries: start[b]:start[b + 1]
    for c in range(k):
        for side in range(2):
            b = ci[c] if side == 0 else cj[c]
            if b >= 0:
                start[b + 1] += 1
    for b in range(n):
        start[b + 1] += start[b]
    filled = start[:-1].copy()
    entry = np.empty((start[n], 2), dtype=np.int64)
    for c in range(k):
        for side in range(2):
            b = ci[c] if side == 0 else cj[c]
            if b >= 0:
                entry[filled[b], 0], entry[filled[b], 1] = c, side
                filled[b] += 1
    sums = np.zeros((k, 2))
    for b in range(n):
        if inv_mass[b] == 0.0 and inv_inertia[b] == 0.0:
            continue
        for e in range(start[b], start[b + 1]):
            c, side = entry[e, 0], entry[e, 1]
            for r in range(2):
                dx, dy = (normal[c, 0], normal[c, 1]) if r == 0 else (-normal[c, 1], normal[c, 0])
                arm = arms[c, 2 * side + r]
                total = 0.0
                for f in range(start[b], start[b + 1]):
                    c2, side2 = entry[f, 0], entry[f, 1]
                    nx, ny = normal[c2, 0], normal[c2, 1]
                    total += abs(inv_mass[b] * (dx * nx + dy * ny) + inv_inertia[b] * arm * arms[c2, 2 * side2])
                    total += abs(inv_mass[b] * (-dx * ny + dy * nx) + inv_inertia[b] * arm * arms[c2, 2 * side2 + 1])
                sums[c, r] += total
    out = np.empty(k)
    for c in range(k):
        out[c] = max(sums[c, 0], sums[c, 1])
    return out


@inlined
def _move_held(ci, cj, normal, arms, v, w, inv_mass, inv_inertia, applied, wanted):
    """Change ``v``, ``w`` from holding the impulses ``applied`` to holding ``wanted`` (both (K, 2))."""
    for c in range(len(ci)):
        dp, dt = wanted[c, 0] - applied[c, 0], wanted[c, 1] - applied[c, 1]
        if dp != 0.0 or dt != 0.0:
            _push_held(c, ci, cj, normal, arms, v, w, inv_mass, inv_inertia, dp, dt)


@inlined
def _push_held(c, ci, cj, normal, arms, v, w, inv_mass, inv_inertia, p, t):
    """Apply ``p n + t t`` at contact c: on body j, its opposite on body i."""
    nx, ny = normal[c, 0], normal[c, 1]
    fx = p * nx - t * ny
    fy = p * ny + t * nx
    for side in range(2):
        b = ci[c] if side == 0 else cj[c]
        if b < 0:
            continue
        sign = -1.0 if side == 0 else 1.0
        v[b, 0] += sign * inv_mass[b] * fx
        v[b, 1] += sign * inv_mass[b] * fy
        w[b] += sign * inv_inertia[b] * (p * arms[c, 2 * side] + t * arms[c, 2 * side + 1])
