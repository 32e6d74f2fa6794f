"""Narrow phase: for a pair of shapes, the gap, whether they touch, and when they first touch.

One module per pair of shape families, each a set of small pure kernels over plain arrays:

* `spheres` — sphere–sphere and sphere–wall (disks in 2D): gaps, the touching rule (`spheres.slack`),
  exact contact times on parabolic paths, and the curvature term of a sliding contact;
* `roots` — the polynomial root finding they share.

A new shape (rigid polygons) adds its own module here, for its pairs with every existing shape.
"""
