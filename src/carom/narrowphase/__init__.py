"""Narrow phase: for a pair of shapes, the gap, whether they touch, and when they first touch.

One module per pair of shape families, each a set of small pure kernels over plain arrays:

* `spheres` — sphere–sphere and sphere–wall (disks in 2D): gaps, the touching rule (`spheres.slack`),
  exact contact times on parabolic paths, and the curvature term of a sliding contact;
* `roots` — the polynomial root finding they share;
* `polygons` — convex polygon–polygon, polygon–disk and polygon–wall contact manifolds (up to two points);
* `rotation` — the first contact time of turning polygons, disks and walls (conservative advancement).

`polygons` and `rotation` are the groundwork for rigid polygons: `World` does not use them yet.
"""
