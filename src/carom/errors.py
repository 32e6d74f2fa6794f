"""The exceptions and warnings of both engines, and the statuses their kernels return."""

from __future__ import annotations

# Statuses of the engines' kernels (the same numbers in both).
OK = 0  # finished
REBUILD = 1  # `World` drift: a body outran its sweep margin; rebuild the candidate lists and go on
CONTACTS_FULL = 2  # `EventWorld`: an instant's contact arrays are full; undone, grow them and repeat
LOG_FULL = 3  # `EventWorld`: the impact log is full; undone, grow it and repeat
CRUSHED = 4  # contacts at one instant that no velocities satisfy: `crushed_error`
RUNAWAY = 5  # `EventWorld`: a body faster than Config.max_speed_ratio times the speed scale
STALLED = 6  # a body's events come ever faster (Config.max_body_events)

class ContactWarning(UserWarning):
    """Issued when the contacts at one instant needed more rounds than ``Config.max_rounds``."""


class ContactError(RuntimeError):
    """Raised when a body is crushed between a moving fixed body and a wall or another fixed body, a
    singularity no engine can resolve: elastic, its impacts come ever faster (``Config.max_body_events``
    within one `World` step, ``Config.max_speed_ratio`` in `EventWorld`); inelastic, no velocities satisfy
    its contacts once the gap has closed (contacts still approaching after ``2 Config.max_rounds`` rounds at
    one instant). The world is left at the time of the last event (`EventWorld`: just before the event
    that stopped it), every body moved to it."""


def crushed_error(body: int, t: float, max_rounds: int, left: str) -> ContactError:
    """The error of both engines for contacts at one instant that no velocities satisfy (status CRUSHED);
    ``left`` says where the world is left."""
    return ContactError(
        f"body {body} is crushed at t={t:.17g} s: its contacts still approached after 2 Config.max_rounds="
        f"{2 * max_rounds} rounds at one instant (the last half perfectly inelastic), so no velocities satisfy "
        f"them all, as when a moving fixed body presses it against a wall. The world is left {left}."
    )


class InelasticCollapseWarning(UserWarning):
    """Issued when a run needed the remedy for inelastic collapse between bodies: impacts slower than
    ``Config.resting_speed`` made resting, hops of bodies pressed together by gravity, or impacts made
    elastic by the TC model."""


class NotInEventWorld(NotImplementedError):
    """Raised by a `World` method (``add_force``, ``step``, ``wake``, ``run(until, dt)``) called on an
    `EventWorld`, which has no forces, no time step and no sleeping islands: the message says what to use."""
