"""Mass properties of shapes.

A ball (a solid sphere in 3D, a uniform disk in 2D) of mass m and radius R has the moment of inertia
``I = k m R^2`` about its centre, ``k = 2/5`` for the sphere and ``1/2`` for the disk. Rigid polygons will
add their area, centroid and second moment here.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, forceinline=True)
def ball_inertia_factor(dim):
    """k in ``I = k m R^2`` for a ball in ``dim`` dimensions: 2/5 (solid sphere), 1/2 (uniform disk)."""
    return 0.4 if dim == 3 else 0.5
