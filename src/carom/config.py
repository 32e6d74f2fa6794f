"""Every tolerance and default of carom, in one place.

Units are SI (metres, kilograms, seconds) unless a field says otherwise. A `Config` is frozen; pass a
modified copy to a world: ``carom.World(config=carom.Config(resting_speed=1e-4))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from numbers import Real

#: Newtonian constant of gravitation, m^3 kg^-1 s^-2 (CODATA 2018).
G = 6.67430e-11

#: Round-off allowance of every touching test, per metre of coordinate magnitude: positions of
#: magnitude |x| are only known to about eps |x| (1e-9 m on the surface of the Earth), so bodies there
#: touch within a few units in the last place of their coordinates, however small contact_tolerance is.
ROUNDOFF = 4.0 * 2.220446049250313e-16

RESTITUTION_RULES = ("min", "max", "mean", "product")
#: How two friction coefficients combine: ``geometric`` is ``sqrt(mu_a mu_b)`` (as Box2D).
FRICTION_RULES = ("geometric", "min", "max", "mean", "product")
IMPACT_MODES = ("bounce", "merge")
INTEGRATORS = ("leapfrog", "euler", "ias15")
#: IAS15's default tolerance (`World(integrator="ias15", epsilon=...)`; Rein & Spiegel 2015).
IAS15_EPSILON = 1e-9


@dataclass(frozen=True)
class Config:
    """Numerical tolerances. The defaults suit bodies from millimetres to planets."""

    #: Two bodies (or a body and a wall) *touch* when their gap is at most this fraction of the smaller
    #: radius (of the body's radius, for a wall), plus ``ROUNDOFF`` times their coordinates' magnitude; the
    #: same rule in both engines. Touching contacts are solved together; overlaps smaller than this are
    #: never reported. Dimensionless.
    contact_tolerance: float = 1e-9
    #: Normal approach speed (m/s) below which an impact with e < 1 is treated as *resting contact*:
    #: it is made perfectly inelastic (e = 0), is not counted as an impact, and the contact then carries
    #: a normal force. This ends the Zeno sequence of ever-smaller bounces of an inelastic ball, which
    #: otherwise has infinitely many impacts before t0 (1 + e) / (1 - e).
    resting_speed: float = 1e-3
    #: Contacts closer than this fraction of the smaller radius (of the body's radius, for a wall) that
    #: approach or separate slower than ``resting_speed`` form a step's *resting set*: one perfectly
    #: inelastic velocity solve and one force solve over all of them at the start of the step, and no
    #: events among them within it (a pile is held by forces, not by millions of micro-impacts). A slow
    #: pair still this far apart keeps falling freely: its force only stops it closing by more than the gap.
    resting_gap: float = 1e-4
    #: Resting-contact forces are solved until no sweep of the accelerated projected-gradient solver
    #: changes a body's acceleration by more than this fraction of the acceleration scale (the largest
    #: smooth acceleration, gravity in a pile, and at least ``resting_speed / dt``). Looser, a settled pile
    #: keeps creeping (at 1e-3, a 1,000-disk pile at dt = 1/60 s by a few mm/s, too fast to sleep).
    force_tolerance: float = 1e-8
    #: Approach speeds below this fraction of the largest speed in a contact cluster count as zero
    #: (round-off); applies for every e, including e = 1. Dimensionless.
    speed_tolerance: float = 1e-12
    #: Rounds of "solve together every contact that approaches now" allowed at one instant before the
    #: remaining approaching contacts are solved as one perfectly inelastic system (a warning is issued).
    #: If contacts still approach after as many more rounds, no velocities satisfy them all (a body crushed
    #: against a wall by a moving fixed body), and the run stops with a `ContactError`.
    max_rounds: int = 10_000
    #: Events one body may take part in within one step. An endless cascade (a body crushed by a moving
    #: fixed body against a wall: its collisions come ever faster) stops there with a `ContactError`.
    #: `EventWorld`: more than this plus 10 per body events in a row at times the clock cannot tell apart
    #: (within round-off of each other) stop the run the same way.
    max_body_events: int = 1_000_000
    #: `EventWorld` only: a body faster than this many times the scene's speed scale (its largest speed, or
    #: ``sqrt(|g| L)`` over the scene's extent L if larger, when the engine was built) stops the run with a
    #: `ContactError`. Only a body crushed elastically by a moving fixed body gains speed without bound
    #: (each bounce off it adds twice its speed), its impacts then coming ever faster. Dimensionless.
    max_speed_ratio: float = 1e6
    #: `World`: an island of touching bodies on a support (a wall or a fixed body) falls asleep once every
    #: body in it has moved slower than ``sleep_speed`` (m/s) for ``sleep_time`` (s): it is frozen and costs
    #: nothing until something may touch it (`carom.step.sleep`). ``sleep_time = inf`` turns sleeping off.
    sleep_time: float = 0.5
    sleep_speed: float = 1e-3
    #: Sweeps and relative tolerance for each contact complementarity problem.
    lcp_iterations: int = 10_000
    lcp_tolerance: float = 1e-13
    #: Sweeps of each of the end-of-step overlap projection's first passes (positions; a lift against the
    #: forces is paid from the kinetic energy of the bodies moved).
    projection_iterations: int = 200
    #: Impacts buffered inside a kernel before they are handed to Python (callbacks, logs).
    impact_log_capacity: int = 4096
    #: A body's sweep margin is this many times its displacement bound over a step (headroom for a speed
    #: increase in an impact inside the step; a body that outruns it triggers a broad-phase rebuild).
    sweep_safety: float = 1.5

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, Real):
                raise ValueError(f"Config.{f.name} must be a number, got {value!r}")
            if math.isnan(value) or value < 0 or (math.isinf(value) and f.name != "sleep_time"):
                allowed = ">= 0 (inf: never sleep)" if f.name == "sleep_time" else "finite and >= 0"
                raise ValueError(f"Config.{f.name} must be {allowed}, got {value!r}")
        for name in ("max_rounds", "lcp_iterations", "impact_log_capacity", "max_body_events"):
            if getattr(self, name) < 1:
                raise ValueError(f"Config.{name} must be >= 1, got {getattr(self, name)!r}")
        if self.max_speed_ratio < 1:
            raise ValueError(f"Config.max_speed_ratio must be >= 1, got {self.max_speed_ratio!r}")
        if self.sweep_safety < 1:
            raise ValueError(f"Config.sweep_safety must be >= 1, got {self.sweep_safety!r}")

    def replace(self, **changes) -> Config:
        """A copy with some fields changed."""
        return replace(self, **changes)


DEFAULT = Config()
