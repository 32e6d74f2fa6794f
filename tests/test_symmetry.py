"""Frictional contacts solved together come out the same whatever their order: mirror images stay mirror
images, and the order in which bodies were added changes nothing beyond round-off.

Every contact of a frictional solve (impact rounds, the held forces of a cluster) steps at once from the
same rates; a solve that sweeps its contacts one after the other in list order (Gauss-Seidel) stopped at a
tolerance gives an answer that depends on that order, and a mirror-symmetric pile drifts sideways.
"""

import itertools

import numpy as np
import pytest

import carom

R, E, MU = 0.1, 0.5, 0.5


def _drop_on_two(dim, side=1.0, order=(0, 1, 2)):
    """Two balls resting on a rough floor 0.2 R apart, a third dropped from rest at 3 R above the floor midway
    between them (R = 0.1 m, e = 0.5, mu = 0.5 everywhere, gravity along the last axis); ``side`` -1 is the
    mirror image (x -> -x). Bodies are added in ``order`` (0, 1: left and right on the floor; 2: on top)."""
    w = carom.World(dim=dim, gravity=(0.0,) * (dim - 1) + (-9.81,))
    w.add_wall(point=(0.0,) * dim, normal=np.eye(dim)[dim - 1], restitution=E, static_friction=MU,
               kinetic_friction=MU)  # fmt: skip
    pos = np.zeros((3, dim))
    pos[0, 0], pos[1, 0] = -1.1 * R * side, 1.1 * R * side
    pos[:, -1] = R, R, 3 * R
    w.add_bodies(pos[list(order)], masses=1.0, radii=R, restitution=E, static_friction=MU, kinetic_friction=MU)
    return w


def _by_id(w, order):
    """Positions, velocities and angular velocities (rows as (3,) in 3D, (1,) in 2D) by the scene's own ids."""
    back = np.argsort(order)
    return w.positions[back], w.velocities[back], w.angular_velocities.reshape(len(order), -1)[back]


def _mirrored(dim, x, v, w):
    """The mirror image (x -> -x) of a state: positions and velocities flip their first coordinate; an angular
    velocity is an axial vector: in 3D its other coordinates flip, in 2D (about the normal) its sign."""
    x, v, w = x.copy(), v.copy(), w.copy()
    x[:, 0] *= -1.0
    v[:, 0] *= -1.0
    if dim == 3:
        w[:, 1:] *= -1.0
    else:
        w *= -1.0
    return x, v, w


@pytest.mark.parametrize("dim", [2, 3])
def test_a_ball_dropped_onto_two_stays_symmetric_and_mirrors_its_mirror_image(dim):
    """The scene is symmetric under x -> -x, so (i) the top ball's sideways position and velocity and its spin
    about the axes the mirror flips stay 0, and the two bottom balls mirror each other; (ii) the mirrored scene,
    its bodies added in another order, is the mirror image of the first at every instant. Over 1 s at
    dt = 1e-3 (the drop, the impacts, a few bounces, then held as a cluster by friction), both to 1e-9 (m, m/s,
    rad/s: round-off, amplified by no instability of this stack). With the held friction's closing
    Gauss-Seidel sweeps, contact after contact in list order, the top ball had drifted sideways by 1.8e-6 m
    by 0.2 s, spinning at up to 5e-3 rad/s (3D)."""
    order = (2, 1, 0)
    w, m = _drop_on_two(dim), _drop_on_two(dim, -1.0, order)
    for t in np.arange(1, 21) * 0.05:
        w.run(until=t, dt=1e-3)
        m.run(until=t, dt=1e-3)
        x, v, s = _by_id(w, (0, 1, 2))
        image = _mirrored(dim, x, v, s)  # (its bottom balls swapped: the scene itself)
        for a, b in zip((x, v, s), image, strict=True):
            np.testing.assert_allclose(a, b[[1, 0, 2]], rtol=0, atol=1e-9, err_msg=f"t = {t:.2f} s")
        for a, b in zip((x, v, s), _mirrored(dim, *_by_id(m, order)), strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-9, err_msg=f"t = {t:.2f} s")
    assert v[2, -1] == pytest.approx(0.0, abs=1e-6)  # (held at rest by the end: the test saw the held solve)


def _struck_pyramid(order):
    """3D: a pyramid of four balls (three touching on a rough floor, one in their pocket; mu = 0.5, e = 0.5),
    a fifth falling onto its top off-centre at 2 m/s, spinning, 1 mm above it: it strikes within a step of
    0.01 s, and the impact runs down the pyramid in rounds, with friction. Bodies are added in ``order``."""
    w = carom.World(dim=3, gravity=(0.0, 0.0, -9.81))
    w.add_wall(point=(0, 0, 0), normal=(0, 0, 1), restitution=E, static_friction=MU, kinetic_friction=MU)
    top = R + 2 * R * np.sqrt(2 / 3)
    pos = np.array([[-R, 0.0, R], [R, 0.0, R], [0.0, np.sqrt(3) * R, R], [0.0, R / np.sqrt(3), top],
                    [0.013, R / np.sqrt(3) - 0.007, top + 2 * R + 1e-3]])  # fmt: skip
    vel = np.zeros((5, 3))
    vel[4] = 0.0, 0.0, -2.0
    spin = np.zeros((5, 3))
    spin[4] = 3.0, -5.0, 7.0
    w.add_bodies(pos[list(order)], velocities=vel[list(order)], masses=1.0, radii=R, restitution=E,
                 static_friction=MU, kinetic_friction=MU, angular_velocities=spin[list(order)])  # fmt: skip
    return w


def test_the_order_bodies_were_added_in_changes_no_frictional_impact():
    """One step through a frictional impact on a pyramid, with the five bodies added in several orders: the
    states, mapped back by id, agree to 1e-12 (m, m/s, rad/s; speeds are ~0.1-1 m/s: round-off). The impact
    reached the whole pyramid (every ball moves). With friction and normal impulses solved by Gauss-Seidel
    sweeps in list order, these orders parted by up to 1.7e-10 m/s."""
    orders = list(itertools.permutations(range(5)))[::12]
    states = []
    for order in orders:
        w = _struck_pyramid(order)
        w.step(0.01)
        assert w.collision_count > 0
        states.append(_by_id(w, order))
    x, v, s = states[0]
    assert np.all(np.linalg.norm(v, axis=1) > 0.05)
    for other in states[1:]:
        for a, b in zip((x, v, s), other, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
