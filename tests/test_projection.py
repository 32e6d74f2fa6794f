"""The time-stepped engine's end-of-step position projection: overlaps made between steps, or by pushing a
body out of one overlap into its neighbour, are removed without touching any velocity."""

import numpy as np
import pytest
from conftest import min_gap

import carom


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
