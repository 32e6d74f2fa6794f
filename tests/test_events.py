"""The event-driven engine against exact physics (docs/physics.md: Impact law; Motion between impacts)."""

import math

import numpy as np
import pytest
from conftest import closed_form_impact
from hypothesis import given, settings
from hypothesis import strategies as st

from carom import EventWorld, InelasticCollapseWarning

# ------------------------------------------------------------------ two-body impacts


@pytest.mark.parametrize("e", [1.0, 0.6, 0.0])
def test_oblique_impact_time_normal_and_velocities_are_exact(e):
    x1, v1 = np.array([-1.37, 0.05, -0.02]), np.array([1.3, 0.1, 0.0])
    x2, v2 = np.array([0.5, 0.0, 0.1]), np.array([-0.4, 0.0, 0.05])
    t_hit, n, w1, w2 = closed_form_impact(x1, v1, 2.0, 0.3, x2, v2, 0.7, 0.45, e)
    w = EventWorld(dim=3)
    w.add_body(position=x1, velocity=v1, mass=2.0, radius=0.3, restitution=e)
    w.add_body(position=x2, velocity=v2, mass=0.7, radius=0.45, restitution=e)
    impacts = []
    w.on_impact(impacts.append)
    w.run(until=t_hit + 1.0)
    (imp,) = impacts
    assert imp.time == pytest.approx(t_hit, rel=1e-14)
    np.testing.assert_allclose(imp.normal, n, atol=1e-14)
    mu = 2.0 * 0.7 / 2.7
    assert imp.impulse == pytest.approx(mu * (1 + e) * imp.approach_speed, rel=1e-14)
    np.testing.assert_allclose(w.velocities, [w1, w2], rtol=0, atol=1e-14)
    np.testing.assert_allclose(w.positions, [x1 + v1 * t_hit + w1 * 1.0, x2 + v2 * t_hit + w2 * 1.0], atol=1e-13)


@pytest.mark.parametrize("b", [0.0, 0.1, 0.3, 0.55, 0.79])
def test_equal_masses_elastic_leave_at_right_angles(b):
    w = EventWorld(dim=2)
    w.add_body(position=(-2.0, b), velocity=(1.0, 0.0), mass=1.0, radius=0.4)
    w.add_body(position=(0.0, 0.0), mass=1.0, radius=0.4)
    w.run(until=4.0)
    v1, v2 = w.velocities
    assert abs(v1 @ v2) < 1e-15
    assert v1 @ v1 + v2 @ v2 == pytest.approx(1.0, rel=1e-15)
    assert w.collision_count == 1


def test_fixed_body_reflects_with_restitution():
    # the exact M -> inf limit: V = -e U along the normal, tangential part untouched
    w = EventWorld(dim=3)
    w.add_body(position=(-3.0, 0.3, 0.0), velocity=(2.0, 0.0, 0.0), mass=1.0, radius=0.5, restitution=0.5)
    w.add_body(position=(0.0, 0.0, 0.0), radius=1.0, fixed=True, restitution=0.8)
    w.run(until=3.0)
    n = np.array([-math.sqrt(1.5**2 - 0.3**2), 0.3, 0.0]) / 1.5
    u = np.array([2.0, 0.0, 0.0])
    expected = u - (1 + 0.5) * (u @ n) * n
    np.testing.assert_allclose(w.velocities[0], expected, atol=1e-14)
    np.testing.assert_array_equal(w.velocities[1], 0.0)


def test_head_on_wall_bounces_at_the_exact_time():
    w = EventWorld(dim=3)
    w.add_body(position=(0.0, 0.0, 0.0), velocity=(3.0, 0.0, 0.0), mass=1.0, radius=0.25, restitution=0.7)
    w.add_wall(point=(2.0, 0.0, 0.0), normal=(-1.0, 0.0, 0.0), restitution=0.9)
    times = []
    w.on_impact(lambda imp: times.append((imp.time, imp.j, imp.normal.tolist(), imp.restitution)))
    w.run(until=2.0)
    assert times == [(pytest.approx(1.75 / 3.0, rel=1e-15), -1, [1.0, 0.0, 0.0], 0.7)]
    np.testing.assert_allclose(w.velocities[0], [-2.1, 0.0, 0.0], rtol=1e-15)
    assert w.positions[0, 0] == pytest.approx(1.75 - 2.1 * (2.0 - 1.75 / 3.0), rel=1e-14)


# ------------------------------------------------------------------ contacts at one instant


def row_of_balls(n, velocities, e=1.0, gap=0.0):
    """n equal balls (radius 0.5) on the x axis, touching (gap 0) or spaced by ``gap``."""
    w = EventWorld(dim=3)
    x = np.zeros((n, 3))
    x[:, 0] = np.arange(n) * (1.0 + gap)
    v = np.zeros((n, 3))
    v[: len(velocities), 0] = velocities
    w.add_bodies(x, v, masses=1.0, radii=0.5, restitution=e)
    return w


@pytest.mark.parametrize("n_in", [1, 2])
def test_newtons_cradle_n_in_n_out(n_in):
    # ball 0 (and 1) arrive at 1 m/s on a touching row: as many leave from the far end, at the same speed
    w = row_of_balls(6 + n_in, [1.0] * n_in, gap=0.0)
    w.bodies.position[:n_in, 0] -= 0.5  # the incoming balls start 0.5 m short of the row
    w.run(until=0.75)
    vx = w.velocities[:, 0]
    expected = np.zeros(6 + n_in)
    expected[-n_in:] = 1.0
    np.testing.assert_allclose(vx, expected, atol=1e-15)


def test_three_ball_chain_inelastic_is_the_sequential_result():
    # e = 0.9, ball 0 at 1 m/s hits two touching balls at rest. Rounds: 0-1, then 1-2, then 0-1 again:
    # (0.05, 0.95, 0) -> (0.05, 0.0475, 0.9025) -> (0.047625, 0.049875, 0.9025).
    for tc in (0.0, 1.0):  # the TC model never acts within one instant
        w = row_of_balls(3, [1.0], e=0.9)
        w.tc = tc
        w.bodies.position[0, 0] -= 0.25
        w.run(until=0.5)
        np.testing.assert_allclose(w.velocities[:, 0], [0.047625, 0.049875, 0.9025], rtol=1e-14)
        assert w.collision_count == 3


def test_symmetric_impact_on_two_touching_balls_stays_symmetric():
    # A ball hits the touching pair B, C exactly between them: solved together, B and C leave mirror images.
    w = EventWorld(dim=2)
    w.add_body(position=(-2.0, 0.0), velocity=(1.0, 0.0), mass=1.0, radius=0.5)
    w.add_body(position=(math.sqrt(0.75), 0.5), mass=1.0, radius=0.5)
    w.add_body(position=(math.sqrt(0.75), -0.5), mass=1.0, radius=0.5)
    w.run(until=3.0)
    va, vb, vc = w.velocities
    # one impulse P = 0.4 sqrt(3) on each of the normals (cos 30, +-sin 30): Newton's law at both contacts,
    # (v_A' - v_B') . n_B = -n_B . v_A, gives 2.5 P = sqrt(3); not B first and then C
    p = 0.4 * math.sqrt(3.0)
    np.testing.assert_allclose(va, [1.0 - p * math.sqrt(3.0), 0.0], atol=1e-15)
    np.testing.assert_allclose(vb, [p * math.sqrt(0.75), p * 0.5], atol=1e-15)
    np.testing.assert_allclose(vc, [p * math.sqrt(0.75), -p * 0.5], atol=1e-15)
    # momentum and (e = 1, all contacts active) energy are conserved
    np.testing.assert_allclose(va + vb + vc, [1.0, 0.0], atol=1e-15)
    assert va @ va + vb @ vb + vc @ vc == pytest.approx(1.0, rel=1e-14)


def test_long_touching_chain_outgrows_the_contact_arrays():
    # 200 touching balls: the impulse travels down the chain in 200 rounds at one instant.
    w = row_of_balls(201, [1.0])
    w.bodies.position[0, 0] -= 0.5
    w.run(until=0.75)
    expected = np.zeros(201)
    expected[-1] = 1.0
    np.testing.assert_allclose(w.velocities[:, 0], expected, atol=1e-15)
    assert w._contact_capacity > 64


# ------------------------------------------------------------------ gravity: exact parabolas


def test_projectile_is_an_exact_parabola():
    w = EventWorld(dim=3, gravity=(0.0, 0.0, -9.81))
    w.add_body(position=(0.0, 0.0, 100.0), velocity=(3.0, -1.0, 20.0), mass=2.0, radius=0.1)
    w.run(until=3.7)
    t = 3.7
    np.testing.assert_allclose(w.positions[0], [3.0 * t, -t, 100.0 + 20.0 * t - 0.5 * 9.81 * t * t], rtol=1e-15)
    np.testing.assert_allclose(w.velocities[0], [3.0, -1.0, 20.0 - 9.81 * t], rtol=1e-15)
    assert w.total_energy() == pytest.approx(0.5 * 2.0 * (9 + 1 + 400) + 2.0 * 9.81 * 100.0, rel=1e-14)


def test_bouncing_ball_impact_times_apexes_and_rest():
    # REFERENCE: impacts at t0 + 2 t0 e (1 - e^n) / (1 - e); all bounces end at t0 (1 + e) / (1 - e).
    g, h0, e, r = 9.81, 1.0, 0.8, 0.05
    w = EventWorld(dim=3, gravity=(0.0, 0.0, -g))
    w.add_body(position=(0.0, 0.0, h0 + r), mass=1.0, radius=r, restitution=e)
    w.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0))
    times = []
    w.on_impact(lambda imp: times.append(imp.time))
    t0 = math.sqrt(2 * h0 / g)
    t_end = t0 * (1 + e) / (1 - e)
    w.run(until=t_end + 1.0)
    k = np.arange(len(times))
    np.testing.assert_allclose(times, t0 + 2 * t0 * e * (1 - e**k) / (1 - e), rtol=1e-12)
    # bounces stop when the approach speed sqrt(2 g h0) e^k falls below Config.resting_speed
    assert len(times) == math.ceil(math.log(1e-3 / math.sqrt(2 * g * h0)) / math.log(e))
    events = w.event_count
    assert w.positions[0, 2] == pytest.approx(r, abs=1e-9)
    assert abs(w.velocities[0, 2]) < 1e-12
    w.run(until=t_end + 100.0)  # at rest on the floor: nothing more happens
    assert w.event_count == events
    assert w.positions[0, 2] == pytest.approx(r, abs=1e-9)


def test_ball_slides_down_a_tilted_plane_with_g_sin_theta():
    # smooth ball released touching a 30 degree incline rests on it: it slides with a = g sin(30 deg)
    g, theta = 9.81, math.radians(30.0)
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    w = EventWorld(dim=3, gravity=(0.0, 0.0, -g))
    w.add_wall(point=(0.0, 0.0, 0.0), normal=n)
    x0 = 0.5 * n + np.array([5.0, 0.0, 5.0 * math.tan(theta)])
    w.add_body(position=x0, mass=1.0, radius=0.5, restitution=0.5)
    w.run(until=1.0)
    down = np.array([-math.cos(theta), 0.0, -math.sin(theta)])
    np.testing.assert_allclose(w.positions[0], x0 + 0.5 * g * math.sin(theta) * down, atol=1e-13)
    assert w.collision_count == 0


def test_ball_falling_onto_a_fixed_sphere_meets_it_at_the_quartic_root():
    # free fall (acceleration g) against a fixed body (acceleration 0): |x(t)|^2 = S^2 is a quartic.
    g = 9.81
    w = EventWorld(dim=3, gravity=(0.0, 0.0, -g))
    w.add_body(position=(0.0, 0.0, 0.0), radius=1.0, fixed=True)
    w.add_body(position=(0.4, 0.0, 3.0), velocity=(0.1, 0.0, 0.0), mass=1.0, radius=0.5)
    times = []
    w.on_impact(lambda imp: times.append(imp.time))
    w.run(until=0.8)
    f = np.polynomial.Polynomial([0.4**2 + 9.0 - 1.5**2, 2 * 0.4 * 0.1, 0.1**2 - 3.0 * g, 0.0, g * g / 4])
    t_hit = min(r.real for r in f.roots() if abs(r.imag) < 1e-12 and r.real > 0)
    assert times[0] == pytest.approx(t_hit, rel=1e-13)


# ------------------------------------------------------------------ resting under gravity: hops


def ball_on_fixed_sphere():
    """A ball (e = 0.5) resting on top of a fixed sphere, touching, under gravity."""
    w = EventWorld(dim=3, gravity=(0.0, 0.0, -9.81))
    w.add_body(position=(0.0, 0.0, 0.0), radius=1.0, fixed=True)
    w.add_body(position=(0.0, 0.0, 1.5), mass=1.0, radius=0.5, restitution=0.5)
    return w


def two_balls_stacked_on_a_floor():
    """Two balls (e = 0.5, masses 1 and 2) stacked on a floor, touching, under gravity."""
    w = EventWorld(dim=3, gravity=(0.0, 0.0, -9.81))
    w.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0))
    w.add_body(position=(0.0, 0.0, 0.5), mass=1.0, radius=0.5, restitution=0.5)
    w.add_body(position=(0.0, 0.0, 1.5), mass=2.0, radius=0.5, restitution=0.5)
    return w


@pytest.mark.parametrize("make", [ball_on_fixed_sphere, two_balls_stacked_on_a_floor])
def test_bodies_resting_on_a_body_under_gravity_hop_in_place(make):
    # Two bodies pressed together by gravity have no resting force in the event engine: each time they
    # meet the pair "hops", leaving at the resting speed v_rest (their opening speed 2 sqrt(2 g tol S) =
    # 2.8e-4 m/s is smaller). A hop of period 2 v_rest / g rises at most v_rest^2 / (2 g) = 5.1e-8 m,
    # and gives the pair at most the kinetic energy of its bodies at v_rest. They must stay in place for
    # a second without an error (without hops: "crushed" at t = 0).
    w = make()
    g, v_rest = 9.81, w.config.resting_speed
    x0, e0 = w.positions.copy(), w.total_energy()
    movable = ~w.fixed
    # the rise of a hop, and the contact tolerance of each of the (at most two) contacts below a body
    rise = v_rest**2 / (2 * g) + 2 * w.config.contact_tolerance * 2.0
    gain = 0.5 * w.masses[movable].sum() * v_rest**2 + 1e-12 * abs(e0)  # and round-off of the energy
    with pytest.warns(InelasticCollapseWarning, match="[1-9][0-9]* hops of bodies pressed together"):
        for k in range(100):
            w.run(until=0.01 * (k + 1))
            assert np.abs(w.positions[:, 2] - x0[:, 2]).max() <= rise
            np.testing.assert_array_equal(w.positions[:, :2], 0.0)  # every normal is vertical
            assert w.total_energy() - e0 <= gain
    assert w.time == 1.0
    np.testing.assert_array_equal(w.velocities[:, :2], 0.0)
    assert np.abs(w.velocities[movable, 2]).max() <= v_rest + 1e-12  # never faster than a hop (or its return)


# ------------------------------------------------------------------ inelastic collapse


def collapsing_row(tc=0.0):
    """McNamara & Young: three bodies in a row collapse (infinitely many impacts in finite time) for
    e < 7 - 4 sqrt(3) = 0.072; here ball 0 hits ball 1, which is 0.1 m short of ball 2."""
    w = EventWorld(dim=3, tc=tc)
    w.add_bodies([[0.0, 0, 0], [1.5, 0, 0], [2.6, 0, 0]], [[1.0, 0, 0], [0.0, 0, 0], [0.0, 0, 0]], masses=1.0,
                 radii=0.5, restitution=0.05)  # fmt: skip
    return w


def test_three_body_inelastic_collapse_ends_in_resting_contacts():
    w = collapsing_row()
    with pytest.warns(InelasticCollapseWarning, match="made resting"):
        w.run(until=10.0)
    assert w.event_count < 100
    # the three end up moving together (relative speeds within the contact solver's tolerance, 1e-13 of the
    # speed scale per round) with their momentum
    np.testing.assert_allclose(w.velocities[:, 0], 1.0 / 3.0, rtol=1e-11)
    assert w.momentum()[0] == pytest.approx(1.0, rel=1e-14)


def test_tc_model_makes_rapid_impacts_elastic():
    w = collapsing_row(tc=1e-3)
    with pytest.warns(InelasticCollapseWarning, match="elastic by the TC model"):
        w.run(until=10.0)
    assert w.event_count < 100
    assert w.momentum()[0] == pytest.approx(1.0, rel=1e-14)


def test_tc_model_makes_only_the_impact_within_tc_elastic():
    # e = 0.5, equal masses. Ball 0 (1 m/s) hits ball 1 at t = 0.5: (0.25, 0.75, 0). Ball 1 hits ball 2,
    # 0.075 m ahead, 0.1 s later, within tc = 0.15 s of its last impact: elastic, (0.25, 0, 0.75). Ball 0
    # meets ball 1 again 0.2 s later, more than tc after both their impacts: e = 0.5, (0.0625, 0.1875, 0.75).
    # (Were the second impact inelastic: (0.25, 0.1875, 0.5625), and then ball 0 would hit ball 1 again.)
    w = EventWorld(dim=3, tc=0.15)
    w.add_bodies([[0.0, 0, 0], [1.5, 0, 0], [2.575, 0, 0]], [[1.0, 0, 0], [0.0, 0, 0], [0.0, 0, 0]], masses=1.0,
                 radii=0.5, restitution=0.5)  # fmt: skip
    impacts = []
    w.on_impact(lambda imp: impacts.append((imp.i, imp.j, imp.restitution, imp.approach_speed)))
    with pytest.warns(InelasticCollapseWarning, match="1 impacts made elastic by the TC model"):
        w.run(until=10.0)
    # speeds are sums of powers of 2 (exact in floating point); only the timing carries round-off
    assert impacts == [(0, 1, 0.5, 1.0), (1, 2, 1.0, 0.75), (0, 1, 0.5, 0.25)]
    np.testing.assert_array_equal(w.velocities[:, 0], [0.0625, 0.1875, 0.75])
    assert w.kinetic_energy() == 0.5 * (0.0625**2 + 0.1875**2 + 0.75**2)


# ------------------------------------------------------------------ restart, callbacks, input


def small_gas(seed=1, n=60):
    from carom.canonical import hard_sphere_gas

    return hard_sphere_gas(n, 0.3, dim=3, seed=seed)


def test_split_runs_and_restarts_are_bitwise_identical():
    a = small_gas()
    a.run(until=3.0)
    b = small_gas()
    b.run(until=1.0)
    state = b.get_state()
    b.run(until=3.0)
    c = small_gas()
    c.set_state(state)
    c.run(until=3.0)
    for w in (b, c):
        np.testing.assert_array_equal(w.positions, a.positions)
        np.testing.assert_array_equal(w.velocities, a.velocities)
        assert (w.collision_count, w.event_count) == (a.collision_count, a.event_count)


def test_impact_log_survives_overflow_and_reports_in_time_order():
    w = small_gas()
    w.config = w.config.replace(impact_log_capacity=3)
    impacts = []
    w.on_impact(impacts.append)
    w.run(until=2.0)
    assert len(impacts) == w.collision_count > 100
    times = [imp.time for imp in impacts]
    assert times == sorted(times)
    for imp in impacts:
        assert imp.impulse > 0 and imp.approach_speed > 0 and imp.restitution == 1.0
        assert np.linalg.norm(imp.normal) == pytest.approx(1.0, rel=1e-15)


def test_advance_counts_events():
    w = small_gas()
    w.advance(n_events=500)
    assert w.event_count == 500
    t = w.time
    w.advance(n_events=0)
    assert (w.event_count, w.time) == (500, t)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: EventWorld(tc=-1.0), "tc must be >= 0"),
        (lambda: EventWorld(impact_mode="merge"), "impact_mode='bounce' only"),
        (lambda: EventWorld(dim=2).add_periodic_box((0, 0), (1, -1)), "lower must be below upper"),
        (lambda: EventWorld(dim=2).advance(n_events=-1), "n_events must be an integer >= 0"),
        (lambda: EventWorld(dim=2).run(until=-1.0), "until must be >= the current time"),
        (lambda: EventWorld(dim=2).pressure(), "needs a run first"),
    ],
)
def test_bad_input_names_the_field(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_periodic_box_checks_overlaps_through_the_boundary_and_its_size():
    w = EventWorld(dim=2)
    w.add_periodic_box((0.0, 0.0), (10.0, 10.0))
    w.add_body(position=(0.2, 5.0), mass=1.0, radius=0.5)
    with pytest.raises(ValueError, match="overlap through the periodic box"):
        w.add_body(position=(9.7, 5.0), mass=1.0, radius=0.5)
    small = EventWorld(dim=2)
    small.add_periodic_box((0.0, 0.0), (1.5, 1.5))
    small.add_body(position=(0.5, 0.5), mass=1.0, radius=0.5)
    with pytest.raises(ValueError, match="must exceed twice the largest diameter"):
        small.run(until=1.0)


def test_periodic_boundary_wraps_and_collides_with_the_nearest_image():
    w = EventWorld(dim=2)
    w.add_periodic_box((0.0, 0.0), (10.0, 10.0))
    w.add_body(position=(9.0, 5.0), velocity=(1.0, 0.0), mass=1.0, radius=0.5)
    w.add_body(position=(2.0, 5.0), mass=1.0, radius=0.5)
    w.run(until=3.5)  # through x = 10 at t = 1, contact with body 1 (image at 12) at t = 2
    np.testing.assert_allclose(w.velocities, [[0.0, 0.0], [1.0, 0.0]], atol=1e-15)
    np.testing.assert_allclose(w.positions, [[1.0, 5.0], [3.5, 5.0]], atol=1e-13)


# ------------------------------------------------------------------ kernels against their closed forms
# The pair test and the next cell crossing are written without branches (docs/performance.md): a miss
# is an added inf, a face behind the body a select. These check them against the plain formulas.

finite = st.floats(-3.0, 3.0, allow_nan=False)
speed = st.one_of(st.sampled_from([0.0, -0.0, 1e-300, -1e-300]), finite)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.tuples(finite, finite, finite), st.tuples(speed, speed, speed), st.floats(0.1, 2.0),
       st.sampled_from([math.inf, 0.5, 2.0]))  # fmt: skip
def test_pair_delay_is_the_closing_root_or_inf(x, v, contact_distance, horizon):
    from carom.events.predict import pair_delay
    from carom.events.state import make_params

    p = make_params(EventWorld(dim=3), 1.0, 0.0)
    slack = p.tol * contact_distance / 2  # `touch_slack` of two equal balls near the origin
    delay = pair_delay(*x, *v, 0.0, 0.0, 0.0, contact_distance, slack, horizon, p)
    xx, xv, vv = np.dot(x, x), np.dot(x, v), np.dot(v, v)
    reach = contact_distance + slack
    if xx <= reach * reach:
        return  # touching: decided by `_pair_state` (now, or never in straight relative flight)
    c0 = xx - contact_distance**2
    disc = xv * xv - vv * c0
    if xv < 0.0 and disc > 0.0 and c0 / (math.sqrt(disc) - xv) <= horizon:
        root = c0 / (math.sqrt(disc) - xv)
        assert delay == root
        gap = np.linalg.norm(np.add(x, np.multiply(v, root))) - contact_distance  # they touch then
        assert abs(gap) <= 1e-9 * (1.0 + np.sqrt(vv) * root)
    else:
        assert delay == math.inf


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.tuples(*[st.integers(1, 5)] * 3), st.tuples(*[st.booleans()] * 3), st.tuples(*[st.floats(-0.1, 1.1)] * 3),
       st.tuples(*[st.sampled_from([-1, 0, 0, 1])] * 3), st.tuples(speed, speed, speed))  # fmt: skip
def test_next_crossing_without_acceleration_is_the_nearest_face_ahead(shape, periodic, where, off, v):
    """Against `face_time` on both faces of every axis (the form used under acceleration), on grids with
    periodic and closed axes, bodies anywhere in their cell, on a face or a little past one (``where`` is
    the position in the cell, in cell widths)."""
    from carom.events.cells import face_time, next_crossing
    from carom.events.state import CELL, Geometry, V, X, new_body

    width = (0.7, 1.0, 1.3)
    geo = Geometry(lower=(-1.0, 0.0, 2.0), width=width, shape=shape, periodic=periodic,
                   length=tuple(w * n for w, n in zip(width, shape, strict=True)))  # fmt: skip
    body, link = new_body(1)
    for d in range(3):
        cell = min(max(math.floor(where[d] * shape[d]) + off[d], 0), shape[d] - 1)
        link[0, CELL + d] = cell
        body[0, X + d] = geo.lower[d] + (cell + where[d]) * width[d]
        body[0, V + d] = v[d]
    expected, face = math.inf, 0
    for d in range(3):
        c, s, w = link[0, CELL + d], body[0, X + d], v[d]
        if c < shape[d] - 1 or periodic[d]:
            top = geo.lower[d] + geo.length[d] if c == shape[d] - 1 else geo.lower[d] + (c + 1) * width[d]
            t = face_time(top - s, -w, -0.0)
            if t < expected:
                expected, face = t, 2 * d + 1
        if c > 0 or periodic[d]:
            t = face_time(s - (geo.lower[d] + c * width[d]), w, 0.0)
            if t < expected:
                expected, face = t, 2 * d
    delay, got_face = next_crossing(body, link, geo, 0)
    assert delay == expected
    assert math.isinf(delay) or got_face == face


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(1, 70), st.lists(st.tuples(st.integers(0, 69), st.sampled_from([math.inf, 0.5, 1.0, 2.5])),
                                    min_size=1, max_size=60))  # fmt: skip
def test_calendar_root_and_runner_up_follow_every_update(n, updates):
    """The tournament tree's root is the body with the earliest key (lowest id on ties) after every update,
    and `runner_up` (the prefetch hint for the next event) the body with the next key: checked against a
    sort, with ties, keys of inf and unused leaves (n not a power of two)."""
    from carom.events.calendar import new_calendar, rebuild_calendar, runner_up, update_key

    key, tree = new_calendar(n)
    key[:n] = np.arange(n) % 3
    rebuild_calendar(key, tree)
    for b, value in updates:
        update_key(key, tree, b % n, value)
        order = sorted(range(n), key=lambda k: (key[k], k))
        assert tree[1] == order[0]
        if n > 1:
            c = runner_up(key, tree, tree[1])
            assert key[c] == key[order[1]] if key[order[1]] < math.inf else c == order[0]  # none: b itself
