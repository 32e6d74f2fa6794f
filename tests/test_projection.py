"""The time-stepped engine's end-of-step position projection: overlaps made between steps, or by pushing a
body out of one overlap into its neighbour, are removed without touching any velocity; a body lifted against
a force pays for the height from its kinetic energy, so pushing bodies apart adds no energy."""

import math

import numpy as np
import pytest
from conftest import min_gap
from hypothesis import given, settings
from hypothesis import strategies as st

import carom
from carom.contact.projection import kinetic_energy, pay_for_lift


@pytest.mark.parametrize("separating", [0.0, 0.01])
def test_overlap_made_between_steps_is_pushed_apart_by_the_next_step_without_forces(separating):
    # With no force at all the step skips the position projection unless an overlap is already there: one
    # made by hand (deeper than resting_gap R, with a wall and a pair) must still be removed, positions only.
    w = carom.World(dim=2)
    w.add_wall(point=(0, 0), normal=(0, 1))
    w.add_body(position=(0, 1), velocity=(-separating, 0), mass=1.0, radius=0.5)
    w.add_body(position=(2, 1), velocity=(separating, 0), mass=3.0, radius=0.5)
    w.add_body(position=(5, 1), velocity=(0, separating), mass=1.0, radius=0.5)
    w.positions[1, 0] = 0.9  # 0.1 into body 0
    w.positions[2, 1] = 0.45  # 0.05 into the wall
    p0, e0 = w.momentum(), w.kinetic_energy()
    com0 = (w.positions[0] + 3.0 * w.positions[1]) / 4.0
    w.step(1e-3)
    slop = w.config.resting_gap * 0.5
    # the pair is pushed apart by mass-weighted displacements: its centre of mass moves only by its momentum
    com = (w.positions[0] + 3.0 * w.positions[1]) / 4.0
    np.testing.assert_allclose(com, com0 + 1e-3 * (w.velocities[0] + 3.0 * w.velocities[1]) / 4.0, rtol=0, atol=1e-14)
    assert np.linalg.norm(w.positions[1] - w.positions[0]) >= 1.0 - slop
    assert w.positions[2, 1] >= 0.5 - slop
    np.testing.assert_array_equal(w.momentum(), p0)
    assert w.kinetic_energy() == e0


@pytest.mark.parametrize("gap", [2e-4, 0.02])
def test_a_body_pushed_out_of_an_overlap_is_not_pushed_into_its_neighbour(gap):
    # Bodies 0 and 1 overlap by 0.1 (made by hand); body 2 lies a small gap beyond body 1. Pushing 1 out of
    # 0 closes that gap, so the projection must move body 2 as well: it leaves no overlap deeper than its
    # slop anywhere (the earlier, single-pass projection left 1 about 0.05 into 2), and touches no velocity.
    w = carom.World(dim=2)
    for position in ((0, 0), (0, 5), (1.9 + gap, 0)):
        w.add_body(position=position, velocity=(0, 0), mass=1.0, radius=0.5)
    w.positions[1] = (0.9, 0)
    com0 = w.positions.mean(axis=0)
    w.step(1e-3)
    slop = w.config.resting_gap * 0.5
    assert min_gap(w) >= -slop
    np.testing.assert_allclose(w.positions.mean(axis=0), com0, rtol=0, atol=1e-14)  # equal masses: mean fixed
    np.testing.assert_array_equal(w.velocities, 0.0)


def test_a_chain_pushed_off_a_fixed_body_is_not_pushed_into_the_body_beyond_it():
    # Body 0 is fixed; 1 overlaps it, 2 overlaps 1 and 3 overlaps 2, each by d (made by hand), so clearing
    # them moves body 3 by about 3 d. Body 4 lies 2.5 d beyond body 3: farther than the first candidate
    # lists reach (2 d), yet closed by that push. The projection must find it from the new positions.
    d = 0.01
    w = carom.World(dim=2)
    w.add_body(position=(0, 0), velocity=(0, 0), radius=0.5, fixed=True)
    for k in range(1, 4):
        w.add_body(position=(0, 5 * k), velocity=(0, 0), mass=1.0, radius=0.5)
    w.add_body(position=(4 - 0.5 * d, 0), velocity=(0, 0), mass=1.0, radius=0.5)
    for k in range(1, 4):
        w.positions[k] = (k * (1 - d), 0)
    w.step(1e-3)
    assert min_gap(w) >= -w.config.resting_gap * 0.5
    assert w.positions[0, 0] == 0.0  # the fixed body does not move
    np.testing.assert_array_equal(w.velocities, 0.0)


def _sunk_on_a_floor(dim, speed, depth=1e-3, g=9.81):
    """A 2 kg body of radius 0.5 m on a floor, moving along it at ``speed``, made to sink ``depth`` into it
    by hand; in 3D it rolls (friction 0.5, spin speed / R), in 2D it slides (smooth)."""
    w = carom.World(dim=dim, gravity=np.eye(dim)[-1] * -g)
    mu = 0.5 if dim == 3 else 0.0
    w.add_wall(point=np.zeros(dim), normal=np.eye(dim)[-1], static_friction=mu)
    spin = (0.0, speed / 0.5, 0.0) if dim == 3 else 0.0  # about +y: rolling towards +x
    w.add_body(position=np.eye(dim)[-1] * 0.5, velocity=np.eye(dim)[0] * speed, mass=2.0, radius=0.5,
               static_friction=mu, angular_velocity=spin)  # fmt: skip
    w.positions[0, -1] -= depth
    w.wake()
    return w


@pytest.mark.parametrize("dim", [2, 3])
def test_a_lift_against_gravity_is_paid_from_the_kinetic_energy_of_the_body_lifted(dim):
    """Sunk 1e-3 m (20 resting gaps) into the floor while it slides (2D) or rolls (3D) at 0.3 m/s, a body is
    lifted out by the projection by l, which would add m g l (0.019 J) of potential energy. It is taken from
    its kinetic energy: the total energy after the step is the energy before to round-off, the body keeps
    its direction, its speed is sqrt(v^2 - 2 g l / (1 + k)) (k = 2/5 rolling, 0 sliding) and a rolling
    body still rolls (its spin scaled alike)."""
    w = _sunk_on_a_floor(dim, 0.3)
    e0, height = w.total_energy(), w.positions[0, -1]
    w.step(1e-2)
    lift = w.positions[0, -1] - height
    assert lift > 0.9e-3  # out to half the band: resting_gap R / 2
    assert w.total_energy() == pytest.approx(e0, rel=1e-13, abs=0)
    k = 0.4 if dim == 3 else 0.0
    expected = math.sqrt(0.3**2 - 2 * 9.81 * lift / (1 + k))
    np.testing.assert_allclose(w.velocities[0], np.eye(dim)[0] * expected, rtol=1e-12, atol=1e-15)
    if dim == 3:
        np.testing.assert_allclose(w.angular_velocities[0], (0.0, expected / 0.5, 0.0), rtol=1e-12, atol=1e-15)


def test_a_lift_beyond_the_kinetic_energy_takes_all_of_it_and_no_more():
    """Moving at 0.01 m/s (1e-4 J), the sunk body of the test above cannot pay for its lift (0.019 J): it is
    stopped, and the step gains exactly the rest, m g l minus the kinetic energy it had (the limit stated in
    docs/physics.md: height gained by bodies with too little kinetic energy)."""
    w = _sunk_on_a_floor(2, 0.01)
    e0, kinetic, height = w.total_energy(), w.kinetic_energy(), w.positions[0, -1]
    w.step(1e-2)
    lift = w.positions[0, -1] - height
    np.testing.assert_array_equal(w.velocities, 0.0)
    assert w.total_energy() - e0 == pytest.approx(2.0 * 9.81 * lift - kinetic, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.sampled_from([2, 3]), st.integers(0, 2**32 - 1))
def test_pay_for_lift_takes_the_rise_from_the_moved_bodies_by_one_factor(n, dim, seed):
    """`pay_for_lift` on random bodies (some fixed, some not moved), moves and accelerations: bodies not moved
    and fixed bodies keep their velocities and spins bit for bit; the moved ones are all scaled by one factor
    in [0, 1]; the kinetic energy falls by the potential energy gained, ``-m a . dx`` summed, or by all of it
    if it is less (none if the bodies were lowered), to round-off."""
    rng = np.random.default_rng(seed)
    inv_mass = np.where(rng.random(n) < 0.2, 0.0, 1.0 / rng.uniform(0.1, 10.0, n))
    inv_inertia = np.where(inv_mass == 0.0, 0.0, 1.0 / rng.uniform(0.01, 1.0, n))
    x0 = rng.normal(size=(n, dim))
    x = x0 + np.where(rng.random((n, 1)) < 0.3, 0.0, rng.normal(scale=10.0 ** rng.uniform(-6, 0), size=(n, dim)))
    v = rng.normal(scale=10.0 ** rng.uniform(-3, 1), size=(n, dim))
    w = rng.normal(size=(n, 3 if dim == 3 else 1))
    accel = rng.normal(size=(n, dim)) * 9.81
    v1, w1 = v.copy(), w.copy()
    movable = inv_mass != 0.0
    moved = np.flatnonzero(np.any(x != x0, axis=1) & movable)
    still = np.ones(n, dtype=bool)
    still[moved] = False
    before = kinetic_energy(v, w, inv_mass, inv_inertia, moved) if len(moved) else 0.0
    rise = -sum(accel[b] @ (x[b] - x0[b]) / inv_mass[b] for b in moved)
    taken = pay_for_lift(x0, x, v1, w1, inv_mass, accel, lambda b: kinetic_energy(v1, w1, inv_mass, inv_inertia, b))
    np.testing.assert_array_equal(v1[still], v[still])
    np.testing.assert_array_equal(w1[still], w[still])
    expected = min(max(rise, 0.0), before)
    assert taken == pytest.approx(expected, rel=1e-12, abs=1e-12 * (before + abs(rise)))
    if len(moved):
        after = kinetic_energy(v1, w1, inv_mass, inv_inertia, moved)
        assert after == pytest.approx(before - expected, rel=1e-9, abs=1e-12 * (before + abs(rise)))
        factor = math.sqrt(after / before)
        assert 0.0 <= factor <= 1.0
        np.testing.assert_allclose(v1[moved], factor * v[moved], rtol=1e-9, atol=1e-15 * np.abs(v).max())
        np.testing.assert_allclose(w1[moved], factor * w[moved], rtol=1e-9, atol=1e-15 * np.abs(w).max())
