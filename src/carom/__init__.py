"""carom: bodies moving and colliding — exact impacts with restitution, forces and walls.

Two engines share one model (`carom.model.Model`): `World` steps time (forces, resting contact, piles)
and resolves every impact at the instant it happens; `EventWorld` jumps from collision to collision
(hard spheres and disks). `load` reads the trajectory files that ``carom run`` writes.
"""

from .config import Config, G
from .contact.law import resolve_impact
from .errors import ContactError, ContactWarning, InelasticCollapseWarning
from .events import EventWorld
from .forces import Atmosphere, Force, NBodyGravity, Thrust
from .io import Trajectory, load
from .model import Impact
from .world import World

__all__ = [
    "Atmosphere",
    "Config",
    "ContactError",
    "ContactWarning",
    "EventWorld",
    "Force",
    "G",
    "Impact",
    "InelasticCollapseWarning",
    "NBodyGravity",
    "Thrust",
    "Trajectory",
    "World",
    "load",
    "resolve_impact",
]
__version__ = "0.1.0"
