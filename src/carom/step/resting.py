"""Resting contact within a step: which contacts rest, their resting speed, and their normal forces.
"""

from __future__ import annotations

import math

import numpy as np

from ..contact.law import approach_speed
from ..contact.layout import APPROACH, IMPULSE, RESTITUTION, TARGET
from ..contact.solver import solve_accelerated
from ..jit import inlined, kernel
from ..materials import KEY_BASE, pair_restitution
from ..narrowphase.spheres import centripetal
from .gather import GAP, RESTING

#: Resting forces need not be more exact than the motion they act on: a solve stops once every contact's
#: acceleration is within this fraction of ``u_max / h`` (the fastest normal speed among its contacts over
#: the time left), if that is looser than ``Config.force_tolerance``. The velocity it leaves is then off by
#: at most this fraction of that speed: while a pile settles the solve is cheap, and as it comes to rest
#: (``u_max -> 0``) the tolerance tightens to ``force_tolerance``, so a still pile does not creep.
MOTION_FRACTION = 1e-3

#: The step-start inelastic velocity solve (`carom.step.drift`) stops once no contact's approach speed moves by
#: more than this fraction of the resting gap per step (``VELOCITY_SINK_FRACTION slop / dt``). An approach u
#: it leaves sinks its contact by up to ``u h / 2`` in the step (the force only stops it by the end), and the
#: sinks add up from step to step; at the whole resting gap per step (the fraction 1) a settled 3D pile sank
#: past the gap every 3-4 steps, the projection lifted all of it with no kinetic energy to pay (steps
#: gaining up to 0.019 J), it fell back, and it never slept.
VELOCITY_SINK_FRACTION = 0.01

#: A force solve that stalls short of its tolerance (`carom.contact.solver.STALL_SWEEPS`) may stop once the
#: acceleration error it leaves could sink no contact by more than this fraction of the resting gap within
#: the step: what the position projection then lifts back adds at most this fraction of its energy
#: allowance (every body lifted by the resting gap), and the velocity error is at most twice this fraction
#: of the resting gap per step.
SINK_FRACTION = 3e-3


def stall_tolerance(slop: float, dt: float) -> float:
    """The acceleration error (m/s^2) a stalled force solve may leave in a step of dt seconds,
    ``2 SINK_FRACTION slop / dt^2``, for ``slop`` (m) the resting gap times the smallest radius."""
    return 2.0 * SINK_FRACTION * slop / (dt * dt)


@kernel
def contact_forces(sel, ci, cj, cn, cw, x, v, a, inv_mass, work, h, iterations, tol, stall_tol,
                   warm=False):  # fmt: skip
    """Normal forces of the resting contacts ``sel`` for the h seconds left in the step, added to the
    accelerations ``a`` (bodies of inverse mass 0 in ``inv_mass`` are held): their targets
    (`normal_targets`), then the solve, which may stop at a stall within ``stall_tol`` (m/s^2).
    With ``warm``, the forces in the IMPULSE column (already applied to ``a``) are the starting point.
    ``work``: a `carom.contact.solver.SolverWork`."""
    tol = normal_targets(sel, ci, cj, cn, cw, x, v, h, tol)
    return solve_accelerated(sel, ci, cj, cn, cw[:, TARGET], a, inv_mass, cw[:, IMPULSE], work,
                             iterations, tol, np.bool_(warm), stall_tol)  # fmt: skip


@kernel
def normal_targets(sel, ci, cj, cn, cw, x, v, h, tol):
    """Each resting contact's target (``cw[:, TARGET]``) for the h seconds left, and the tolerance of its
    force solve (m/s^2): ``tol``, or `MOTION_FRACTION` of the contacts' speeds over h if looser.

    A contact of gap g (0 while touching) and approach speed u is a constraint on the normal acceleration
    of approach, ``a_n <= kappa + |v_t|^2 / D`` (the last term: the gap a sliding pair opens by curvature),
    force >= 0, complementary. ``kappa = 2 (g - u h) / h^2`` keeps the gap >= 0 at the end of the step;
    it is raised to ``-u / h`` when that asks more than stopping the approach by then, so the force never
    turns an approach into a separation: what closes within the step is left to the position projection.
    A touching pair at rest has kappa = 0 (the gap does not start to close): exact resting contact."""
    u_max = 0.0
    for c in sel:
        u = approach_speed(c, ci, cj, cn, v)
        u_max = max(u_max, abs(u))
        kappa = 0.0
        if h > 0.0:
            kappa = max(2.0 * (cw[c, GAP] - u * h) / (h * h), -max(u, 0.0) / h)
        cw[c, TARGET] = -(kappa + centripetal(c, ci, cj, cn, x, v))
    if h > 0.0:
        tol = max(tol, MOTION_FRACTION * u_max / h)
    return tol


@inlined
def joins_resting_set(c, ci, cj, cn, cw, v, a_smooth, resting_speed):
    """Whether contact c belongs in the resting set: left free, it would touch (or part) no faster than
    ``resting_speed``, ``u^2 + 2 max(a_n, 0) g <= resting_speed^2`` for approach speed u, approach
    acceleration a_n from the smooth forces and gap g. A ball hovering above a floor is thus admitted only
    if it would land no faster than the speed below which its impact would be inelastic anyway."""
    u = approach_speed(c, ci, cj, cn, v)
    a_n = approach_speed(c, ci, cj, cn, a_smooth)
    return u * u + 2.0 * max(a_n, 0.0) * cw[c, GAP] <= resting_speed * resting_speed


@inlined
def pair_resting_speed(i, j, a, a_smooth, rested, dt, resting_speed):
    """Approach speed (m/s) below which contact i-j is resting: ``resting_speed``, raised to
    ``dt (|a_s,i| + |a_s,j|)`` (``a_s`` the smooth acceleration, gravity say) over the bodies that rest on
    something (they carry a contact force now, ``a != a_s``, or did at the end of the last step,
    ``rested``): contact forces are held constant between events, so they are only right to about the
    speed the smooth forces give in one step. Free bodies (a bouncing ball) keep the plain threshold,
    and exact impacts."""
    scale = 0.0
    for b in (i, j):
        if b >= 0:
            resting = rested[b]
            s = 0.0
            for d in range(a.shape[1]):
                resting = resting or a[b, d] != a_smooth[b, d]
                s += a_smooth[b, d] ** 2
            if resting:
                scale += math.sqrt(s)
    return max(resting_speed, dt * scale)


@inlined
def mark_rested(n, force_keys, force_values, wall_force, walls_held, rested):
    """Mark in ``rested`` which of the n bodies carried a resting-contact force at the end of the last step
    (from its forces: pairs by key, `carom.materials.pair_key`; walls by row, read only if ``walls_held``)."""
    rested[:] = False
    for k in range(len(force_keys)):
        if force_values[k] != 0.0:
            rested[force_keys[k] // KEY_BASE] = True
            rested[force_keys[k] % KEY_BASE] = True
    if walls_held:
        for b in range(n):
            for k in range(wall_force.shape[1]):
                rested[b] = rested[b] or wall_force[b, k] != 0.0


@inlined
def rest_limit(c, ci, cj, a, a_smooth, rested, dt, resting_speed, speed_tol, restitution, wall_e, rule, keys, values):
    """The speed (m/s) below which contact c may join the resting set: its resting speed if e < 1; if the
    pair is perfectly elastic, only the round-off speed ``speed_tol``, so that no elastic approach is ever
    absorbed (an elastic gas keeps its energy; elastic bodies at rest still carry forces)."""
    if pair_restitution(ci[c], cj[c], restitution, wall_e, rule, keys, values) == 1.0:
        return speed_tol
    return pair_resting_speed(ci[c], cj[c], a, a_smooth, rested, dt, resting_speed)


@kernel
def inelastic_selection(sel, ci, cj, cn, cw, v, a, a_smooth, rested, T, resting_speed, nc, every):
    """Select, for one perfectly inelastic solve, every touching contact except resting ones approaching
    slower than their resting speed (with ``every``, those too: past Config.max_rounds the touching
    cluster is solved as one system); returns how many."""
    ns = 0
    for c in range(nc):
        if cw[c, GAP] != 0.0:
            continue
        u = approach_speed(c, ci, cj, cn, v)
        if every or cw[c, RESTING] == 0.0 or u > pair_resting_speed(ci[c], cj[c], a, a_smooth, rested, T,
                                                                     resting_speed):  # fmt: skip
            sel[ns] = c
            ns += 1
            cw[c, APPROACH] = u
            cw[c, RESTITUTION] = 0.0
            cw[c, TARGET] = 0.0
    return ns
