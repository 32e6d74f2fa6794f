"""Barnes–Hut tree gravity (`NBodyGravity(tree=True)`, carom.gravity_tree) against the direct sum
(docs/physics.md: Forces)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carom
from carom.forces import _nbody_accel, _nbody_potential
from carom.gravity_tree import tree_accel, tree_potential


def cloud(n, dim, seed):
    """A Plummer sphere (3D) or its profile in a plane (2D) of scale radius 1, and masses about 1/n."""
    rng = np.random.default_rng(seed)
    r = 1.0 / np.sqrt(rng.uniform(0.0, 1.0, n) ** (-2.0 / 3.0) - 1.0)
    u = rng.normal(size=(n, dim))
    return r[:, None] * u / np.linalg.norm(u, axis=1)[:, None], rng.uniform(0.5, 1.5, n) / n


def field(x, m, force, fixed=False):
    """Accelerations (n, dim) and potential energy of ``force`` on a world of point-like bodies."""
    w = carom.World(dim=x.shape[1])
    w.add_bodies(x, masses=m, radii=1e-9, fixed=fixed)
    out = np.zeros_like(x)
    w.add_force(force).accelerate(w, 0.0, out)
    return out, force.potential_energy(w)


def relative_errors(a, exact):
    return np.linalg.norm(a - exact, axis=1) / np.linalg.norm(exact, axis=1)


@pytest.mark.parametrize("dim", [2, 3])
def test_opening_angle_zero_is_the_direct_sum(dim):
    # every cell opened: the same pair terms as the direct sum, added in another order (round-off only)
    x, m = cloud(1500, dim, seed=1)
    exact, pe = field(x, m, carom.NBodyGravity(G=1.0, softening=0.01))
    tree, pe_tree = field(x, m, carom.NBodyGravity(G=1.0, softening=0.01, tree=True, opening_angle=0.0))
    assert relative_errors(tree, exact).max() < 1e-12  # measured 3e-14
    assert pe_tree == pytest.approx(pe, rel=1e-12)


# Errors at opening_angle 0.5 on these clouds of 2000 bodies (softening 0.01), measured over seeds 0-2 and
# n = 2000, 4000: median 5e-5..9e-5 (2D and 3D); 99th percentile 5e-4..6e-4 (3D), 8e-4..1.5e-3 (2D); worst
# 9e-4..2.3e-3 (3D), 3e-3..1e-1 (2D: bodies near the centre, where the net pull nearly cancels). Dropping
# the quadrupole gives medians of 3e-4..4e-4 (3D) and 2.5e-3..4e-3 (2D), flipping its sign 6e-4..8e-4
# and 5e-3..8e-3: the median bound (twice the worst median measured) tells them apart.
@pytest.mark.parametrize(("dim", "p99", "worst"), [(3, 1.5e-3, 5e-3), (2, 3e-3, 5e-2)])
def test_force_errors_at_opening_angle_one_half(dim, p99, worst):
    x, m = cloud(2000, dim, seed=0)
    exact, pe = field(x, m, carom.NBodyGravity(G=1.0, softening=0.01))
    tree, pe_tree = field(x, m, carom.NBodyGravity(G=1.0, softening=0.01, tree=True))
    err = relative_errors(tree, exact)
    assert np.median(err) < 1.5e-4
    assert np.percentile(err, 99) < p99
    assert err.max() < worst
    assert pe_tree == pytest.approx(pe, rel=5e-5)  # measured 3e-7 and 4e-6 (up to 1e-5 over the seeds)


@pytest.mark.parametrize("dim", [2, 3])
def test_momentum_balance(dim):
    # Direct pair terms cancel in sum m a; a multipole taken by one body is not the exact reverse of what
    # the cell's bodies take from it, so the tree leaves a small net force: measured 5e-7..2.2e-5 of
    # sum m |a| at opening_angle 0.5 (seeds 0-2, n = 2000, 4000), 7e-17 at 0.
    x, m = cloud(2000, dim, seed=0)
    for theta, bound in ((0.0, 1e-14), (0.5, 1e-4)):
        a, _ = field(x, m, carom.NBodyGravity(G=1.0, softening=0.01, tree=True, opening_angle=theta))
        net = np.linalg.norm((m[:, None] * a).sum(axis=0))
        assert net < bound * (m * np.linalg.norm(a, axis=1)).sum()


@pytest.mark.parametrize("dim", [2, 3])
def test_quadrupole_error_falls_as_the_cube_of_the_cluster_size(dim):
    # A body and a cluster of 3 bodies of size s at distance 1, softening 1: the body takes the cluster as a
    # multipole (leaves and groups of one body, opening angle 0.5). The expansion of the softened potential
    # to second order leaves an error O(s^3): halving s divides it by 8. Without the quadrupole (or with
    # it reversed, or unsoftened) the error is O(s^2) and halves s only divide it by 4.
    rng = np.random.default_rng(3)
    shape = rng.uniform(-1.0, 1.0, (3, dim))
    mass = np.array([1.0, 2.0, 3.0, 1.5])
    target = np.zeros(dim)
    errors = []
    for s in (0.05, 0.025, 0.0125):
        x = np.vstack([target, np.eye(dim)[0] + s * shape])
        active, movable = np.ones(4, bool), np.array([True, False, False, False])
        exact, tree = np.zeros((4, dim)), np.zeros((4, dim))
        _nbody_accel(x, mass, active, movable, 1.0, 1.0, exact)
        tree_accel(x, mass, active, movable, 1.0, 1.0, 0.5, tree, leaf=1, group=1)
        errors.append(np.linalg.norm(tree[0] - exact[0]) / np.linalg.norm(exact[0]))
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert errors[0] < 1e-3 and np.all((ratios > 7.0) & (ratios < 9.0)), (errors, ratios)


@pytest.mark.parametrize("dim", [2, 3])
def test_softening_is_kept(dim):
    # Two bodies closer than the softening: the tree gives the softened pull G m / (r^2 + eps^2)^(3/2) r,
    # whether the other body is summed as a body (the defaults: one leaf) or taken as a cell of one body
    # (leaves and groups of one body, at an opening angle that takes every cell it may).
    x = np.zeros((2, dim))
    x[1, 0] = 0.3
    m = np.array([2.0, 5.0])
    pull = 1.5 / (0.3**2 + 0.8**2) ** 1.5 * 0.3
    a, pe = field(x, m, carom.NBodyGravity(G=1.5, softening=0.8, tree=True, opening_angle=10.0))
    np.testing.assert_allclose(a[:, 0], [pull * 5.0, -pull * 2.0], rtol=1e-14)
    assert pe == pytest.approx(-1.5 * 10.0 / math.sqrt(0.3**2 + 0.8**2), rel=1e-14)
    active = np.ones(2, bool)
    cells = np.zeros((2, dim))
    tree_accel(x, m, active, active, 1.5, 0.64, 10.0, cells, leaf=1, group=1)
    np.testing.assert_allclose(cells, a, rtol=1e-14)
    assert tree_potential(x, m, active, 1.5, 0.64, 10.0, leaf=1, group=1) == pytest.approx(pe, rel=1e-14)


def test_a_body_inside_a_cell_opens_it():
    # Two bodies at any opening angle: the root cell holds both, so each opens it and takes the other alone
    # (exactly). Taking the root would pull each towards the common centre of mass with both masses.
    x = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, 0.2]])
    m = np.array([1.0, 3.0])
    active = np.ones(2, bool)
    exact, tree = np.zeros((2, 3)), np.zeros((2, 3))
    _nbody_accel(x, m, active, active, 1.0, 0.0, exact)
    for leaf, group in ((1, 1), (16, 256)):
        tree[:] = 0.0
        tree_accel(x, m, active, active, 1.0, 0.0, 1e6, tree, leaf=leaf, group=group)
        np.testing.assert_allclose(tree, exact, rtol=1e-15)


@settings(max_examples=60, deadline=None)
@given(
    dim=st.sampled_from([2, 3]),
    n=st.integers(1, 64),
    sizes=st.sampled_from([(1, 1), (2, 4), (16, 256)]),
    softening=st.sampled_from([0.0, 0.05]),
    seed=st.integers(0, 2**32 - 1),
)
def test_tree_at_opening_angle_zero_matches_the_direct_sum(dim, n, sizes, softening, seed):
    # Random sets with fixed bodies of finite mass (they attract, do not move), fixed bodies of no mass
    # and of infinite mass (neither attracts), and clusters; each body's force to round-off of the sum of
    # the magnitudes of its terms; the potential energy likewise.
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (n, dim)) * rng.choice([1e-3, 1.0, 1e3], (n, 1))
    m = rng.uniform(0.1, 10.0, n)
    fixed = rng.random(n) < 0.3
    m[fixed & (rng.random(n) < 0.3)] = np.inf
    m[fixed & (rng.random(n) < 0.2)] = 0.0
    active, movable = np.ones(n, bool), ~fixed
    exact, tree = np.zeros((n, dim)), np.zeros((n, dim))
    eps2 = softening**2
    _nbody_accel(x, m, active, movable, 2.0, eps2, exact)
    tree_accel(x, m, active, movable, 2.0, eps2, 0.0, tree, leaf=sizes[0], group=sizes[1])
    finite = np.where(np.isfinite(m), m, 0.0)
    r2 = ((x[:, None] - x[None]) ** 2).sum(-1) + eps2
    np.fill_diagonal(r2, np.inf)
    scale = 2.0 * (finite[None] / r2).sum(axis=1)
    assert np.all(np.linalg.norm(tree - exact, axis=1) <= 1e-12 * scale)
    assert not np.any(tree[fixed])
    pe, pe_tree = _nbody_potential(x, m, active, 2.0, eps2), tree_potential(x, m, active, 2.0, eps2, 0.0)
    pair_sum = (finite[:, None] * finite[None] / np.sqrt(r2)).sum()
    assert abs(pe_tree - pe) <= 1e-12 * pair_sum


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"opening_angle": -0.1}, "NBodyGravity opening_angle must be >= 0, got -0.1"),
        ({"opening_angle": math.nan}, "NBodyGravity opening_angle must be finite, got nan"),
        ({"opening_angle": "wide"}, "NBodyGravity opening_angle must be a number, got 'wide'"),
        ({"tree": 1}, "NBodyGravity tree must be True or False, got 1"),
        ({"tree": "yes"}, "NBodyGravity tree must be True or False, got 'yes'"),
    ],
)
def test_bad_tree_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        carom.NBodyGravity(**kwargs)


def test_tree_gravity_in_a_scene_file_and_back(tmp_path):
    text = """
[world]
dim = 3
[run]
until = 0.1
dt = 0.01
[[bodies]]
position = [0.0, 0.0, 0.0]
mass = 1.0
radius = 0.1
[[bodies]]
position = [1.0, 0.0, 0.0]
mass = 2.0
radius = 0.1
[[forces]]
kind = "gravity"
G = 1.0
tree = true
opening_angle = 0.3
"""
    w = carom.Scene.from_toml(text).build()
    (force,) = w.forces
    assert (force.tree, force.opening_angle) == (True, 0.3)
    back = carom.Scene.load(w.to_scene(until=1.0, dt=0.01).save(tmp_path / "again.toml"))
    assert [repr(f) for f in back.forces] == [repr(force)]
    with pytest.raises(carom.SceneError, match="opening_angle must be >= 0, got -1"):
        carom.Scene.from_toml(text.replace("0.3", "-1.0")).build()
    with pytest.raises(carom.SceneError, match="tree"):
        carom.Scene.from_toml(text.replace("tree = true", "tree = 1"))


def test_a_world_steps_under_tree_gravity_as_under_the_direct_sum():
    # Three bodies make one leaf, which the tree sums body by body: the direct sum to round-off, so the
    # leapfrog runs the same orbits with the same energy (the tree reached through World.run and
    # World.total_energy).
    runs = []
    for tree in (False, True):
        w = carom.World(dim=3)
        w.add_force(carom.NBodyGravity(G=1.0, softening=0.01, tree=tree))
        w.add_body(position=(0, 0, 0), velocity=(0, -0.1, 0), mass=3.0, radius=0.01)
        w.add_body(position=(1, 0, 0), velocity=(0, 1.5, 0.1), mass=1.0, radius=0.01)
        w.add_body(position=(-1.5, 0.3, 0), velocity=(0, -0.9, 0), mass=0.5, radius=0.01)
        w.run(until=1.0, dt=1e-3)
        runs.append((w.positions.copy(), w.total_energy()))
    np.testing.assert_allclose(runs[1][0], runs[0][0], atol=1e-10)
    assert runs[1][1] == pytest.approx(runs[0][1], rel=1e-12)
