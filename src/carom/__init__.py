"""carom: bodies moving and colliding — exact impacts with restitution, forces and walls."""

from .config import G, Config
from .forces import Atmosphere, Force, NBodyGravity, Thrust
from .model import Impact
from .solver import resolve_impact
from .world import ContactWarning, World

__all__ = [
    "G",
    "Atmosphere",
    "Config",
    "ContactWarning",
    "Force",
    "Impact",
    "NBodyGravity",
    "Thrust",
    "World",
    "resolve_impact",
]
__version__ = "0.1.0"
