"""Pictures of a run: `plot` (energy, momentum, impacts against time) and `render` (an animation)."""

from .animation import render
from .plot import plot

__all__ = ["plot", "render"]
