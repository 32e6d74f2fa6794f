"""Struct-of-arrays state of bodies and walls, grown by doubling.

Every per-body quantity is one NumPy array indexed by body id; vectors are ``(capacity, dim)`` so 2D and
3D share kernels through the trailing dimension. Only ``[:n]`` is meaningful. Ids are stable for the
life of a world: a body merged into another stays in the arrays with ``active = False``.

Rotation fields are stored from the start so that spin, friction and rigid polygons fit without a
rewrite: ``orientation`` (unit quaternion w, x, y, z in 3D; angle in rad in 2D), ``angular_velocity``
(rad/s; 3 components in 3D, 1 in 2D) and ``inv_inertia`` (1/(kg m^2), about the centre, isotropic for
spheres and disks: I = 2/5 m r^2 and 1/2 m r^2 unless given). ``shape`` is `SHAPE_SPHERE` (a sphere or
disk) or `SHAPE_POLYGON` (a rigid convex polygon in 2D: its position is its centroid, its radius its
circumradius; its outline is the world's, `carom.model.Model`). Friction coefficients are per body (and per
wall), combined per contact by the world's rule.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

SHAPE_SPHERE = 0
SHAPE_POLYGON = 1


class BodyState:
    """Per-body arrays. Units: position m, velocity m/s, mass kg, radius m."""

    _VECTOR = ("position", "velocity")
    _SCALAR: ClassVar[dict] = {
        "mass": np.float64,  # kg; +inf for a fixed body given no mass
        "inv_mass": np.float64,  # 1/kg; 0 for fixed bodies (infinite inertial mass)
        "radius": np.float64,  # m
        "restitution": np.float64,  # coefficient of restitution in [0, 1]
        "drag_coefficient": np.float64,  # Cd, dimensionless
        "inv_inertia": np.float64,  # 1/(kg m^2); 0 for fixed bodies
        "static_friction": np.float64,  # mu_s >= 0
        "kinetic_friction": np.float64,  # mu_k in [0, mu_s]
        "rolling_resistance": np.float64,  # mu_r >= 0: the normal force acts mu_r R ahead of the contact
        "spinning_friction": np.float64,  # mu_sp >= 0: a torque up to mu_sp N R about the normal (3D)
        "fixed": np.bool_,
        "active": np.bool_,
        "shape": np.int8,
    }

    def __init__(self, dim: int, capacity: int = 16):
        self.dim = dim
        self.n = 0
        self.rot_dim = 3 if dim == 3 else 1
        self.orient_dim = 4 if dim == 3 else 1
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        old = {name: getattr(self, name, None) for name in self.names()}
        self.capacity = capacity
        for name in self._VECTOR:
            setattr(self, name, np.zeros((capacity, self.dim)))
        self.angular_velocity = np.zeros((capacity, self.rot_dim))
        self.orientation = np.zeros((capacity, self.orient_dim))
        for name, dtype in self._SCALAR.items():
            setattr(self, name, np.zeros(capacity, dtype=dtype))
        for name, arr in old.items():
            if arr is not None:
                getattr(self, name)[: self.n] = arr[: self.n]

    def names(self) -> tuple[str, ...]:
        return (*self._VECTOR, "angular_velocity", "orientation", *self._SCALAR)

    def append(self, shape: int = SHAPE_SPHERE, **values) -> int:
        """Store one body (already validated) of this ``shape`` code; return its id."""
        if self.n == self.capacity:
            self._allocate(2 * self.capacity)
        i = self.n
        for name, value in values.items():
            getattr(self, name)[i] = value
        if self.dim == 3:
            self.orientation[i] = (1.0, 0.0, 0.0, 0.0)
        self.active[i] = True
        self.shape[i] = shape
        self.n += 1
        return i

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the meaningful part of every array (for checkpoints and tests)."""
        return {name: getattr(self, name)[: self.n].copy() for name in self.names()}

    #: Fields a state saved before they existed may lack (they are then 0: smooth bodies).
    _OPTIONAL = ("static_friction", "kinetic_friction", "rolling_resistance", "spinning_friction")

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        n = len(arrays["mass"])
        self.n = 0
        self._allocate(max(16, n))
        for name in self.names():
            if name in arrays or name not in self._OPTIONAL:
                getattr(self, name)[:n] = np.asarray(arrays[name]).reshape(getattr(self, name)[:n].shape)
        self.n = n


class WallState:
    """Infinite planes ``normal . (x - point) = 0``; bodies live where ``normal . (x - point) > 0``."""

    def __init__(self, dim: int):
        self.dim = dim
        self.point = np.zeros((0, dim))  # m
        self.normal = np.zeros((0, dim))  # unit vectors
        self.restitution = np.zeros(0)
        self.static_friction = np.zeros(0)  # mu_s
        self.kinetic_friction = np.zeros(0)  # mu_k

    @property
    def n(self) -> int:
        return len(self.restitution)

    def append(self, point: np.ndarray, normal: np.ndarray, restitution: float, static_friction: float = 0.0,
               kinetic_friction: float = 0.0) -> int:  # fmt: skip
        self.point = np.vstack([self.point, point[None, :]])
        self.normal = np.vstack([self.normal, normal[None, :]])
        self.restitution = np.append(self.restitution, restitution)
        self.static_friction = np.append(self.static_friction, static_friction)
        self.kinetic_friction = np.append(self.kinetic_friction, kinetic_friction)
        return self.n - 1


