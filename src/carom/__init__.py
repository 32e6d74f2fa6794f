"""carom: bodies moving and colliding — exact impacts with restitution, forces and walls.

Two engines share one model (`carom.model.Model`): `World` steps time (forces, resting contact, piles)
and resolves every impact at the instant it happens; `EventWorld` jumps from collision to collision
(hard spheres and disks). `Scene` reads and writes scene files, `record` writes a world's run to the
trajectory file that ``carom run`` writes, and `load` reads it back (``load(path).world()`` goes on).
`examples` holds the example scenes (``carom.Scene.load(carom.examples.path("pile"))``); `orbits` the
two-body orbit utilities (Kepler's equation, the state on an orbit, the elements of a state).
"""

__version__ = "0.1.0"  # (before the imports: `carom.io.runner` reads it)

from . import examples, orbits
from .config import Config, G
from .contact.law import resolve_impact
from .errors import ContactError, ContactWarning, InelasticCollapseWarning
from .events import EventWorld
from .forces import Atmosphere, Force, NBodyGravity, Thrust
from .io import Trajectory, load
from .io.runner import Recording, record
from .model import Impact
from .scenefile import Scene, SceneError
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
    "Recording",
    "Scene",
    "SceneError",
    "Thrust",
    "Trajectory",
    "World",
    "examples",
    "load",
    "orbits",
    "record",
    "resolve_impact",
]
