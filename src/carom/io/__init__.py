"""Trajectory files: writing a run as it goes, reading it back (`load`), and exact restart."""

from .trajectory import Trajectory, TrajectoryWriter, load, read_checkpoint

__all__ = ["Trajectory", "TrajectoryWriter", "load", "read_checkpoint"]
