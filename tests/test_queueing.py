"""Closed queueing networks: hand-worked MVA and bounds, degenerate cases, and properties on random networks."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from models.queueing import MVA_LIMIT, Station, bounds, mva, schweitzer

REL = 1e-9


def network(specs):
    return [Station(f"s{i}", service, members) for i, (service, members) in enumerate(specs)]


specs = st.lists(st.tuples(st.floats(1e-6, 1), st.integers(1, 64)), min_size=1, max_size=6)
thinks = st.floats(0, 1)
populations = st.integers(1, 300)
properties = settings(max_examples=60, deadline=None)


# --- closed forms and worked examples -------------------------------------------------------------

def test_one_queue_without_think_time_runs_at_its_service_rate_from_the_first_request():
    curve = mva([Station("disk", 0.004)], 50)
    np.testing.assert_allclose(curve.throughput, 250, rtol=1e-12)
    np.testing.assert_allclose(curve.response, 0.004 * np.arange(1, 51), rtol=1e-12)  # n requests, n services each
    np.testing.assert_allclose(curve.queue[:, 0], np.arange(1, 51), rtol=1e-12)
    np.testing.assert_allclose(curve.utilisation, 1, rtol=1e-12)


def test_one_queue_with_think_time_matches_the_machine_repairman_recursion():
    d, z = 0.02, 0.05
    curve = mva([Station("server", d)], 2, think=z)
    # n=1: nobody to queue behind, X = 1/(D+Z); the queue holds X*D = D/(D+Z).
    # n=2: the arrival finds D/(D+Z) ahead, R = D*(1 + D/(D+Z)), X = 2/(R+Z).
    assert curve.throughput[0] == pytest.approx(1 / (d + z), rel=1e-12)
    assert curve.response[1] == pytest.approx(d * (1 + d / (d + z)), rel=1e-12)
    assert curve.throughput[1] == pytest.approx(2 / (d * (1 + d / (d + z)) + z), rel=1e-12)
    # With one queue, the optimistic balanced bound at N=2 is this very recursion: it is tight.
    assert bounds([Station("server", d)], 2, think=z).balanced_upper == pytest.approx(curve.throughput[1], rel=1e-12)


def test_two_stations_worked_by_hand():
    # D1 = 0.2, D2 = 0.1, Z = 0. R_k(n) = D_k (1 + Q_k(n-1)), X(n) = n / sum R_k, Q_k(n) = X(n) R_k(n).
    # n=1: R = 0.2 + 0.1 = 0.3,               X = 10/3, Q = (2/3, 1/3)
    # n=2: R = 0.2*5/3 + 0.1*4/3 = 7/15,      X = 30/7, Q = (10/7, 4/7)
    # n=3: R = 0.2*17/7 + 0.1*11/7 = 9/14,    X = 14/3, Q = (34/15, 11/15)
    curve = mva([Station("cpu", 0.2), Station("disk", 0.1)], 3)
    f = Fraction
    expected_x = [f(10, 3), f(30, 7), f(14, 3)]
    expected_r = [f(3, 10), f(7, 15), f(9, 14)]
    expected_q = [[f(2, 3), f(1, 3)], [f(10, 7), f(4, 7)], [f(34, 15), f(11, 15)]]
    np.testing.assert_allclose(curve.throughput, [float(x) for x in expected_x], rtol=1e-12)
    np.testing.assert_allclose(curve.response, [float(r) for r in expected_r], rtol=1e-12)
    np.testing.assert_allclose(curve.queue, [[float(q) for q in row] for row in expected_q], rtol=1e-12)
    np.testing.assert_allclose(curve.utilisation[:, 0], 0.2 * curve.throughput, rtol=1e-12)


def test_bounds_of_the_worked_example_by_hand():
    # D = 0.3, D_max = 0.2, K = 2 queues, D_avg = 0.15, Z = 0, N = 3:
    # upper = min(3/0.3, 1/0.2) = 5, lower = 3/(3*0.3) = 10/3,
    # balanced: 3/(0.3 + 2*0.15) = 5 (capped at 5), 3/(0.3 + 2*0.2) = 30/7; knee = 0.3/0.2 = 1.5.
    b = bounds([Station("cpu", 0.2), Station("disk", 0.1)], 3)
    assert (b.total_demand, b.max_demand, b.queues, b.bottleneck) == (pytest.approx(0.3), 0.2, 2, ("cpu",))
    assert b.upper == pytest.approx(5) and b.lower == pytest.approx(10 / 3)
    assert b.balanced_upper == pytest.approx(5) and b.balanced_lower == pytest.approx(30 / 7)
    assert b.knee == pytest.approx(1.5)
    assert b.response_lower == pytest.approx(0.6) and b.response_upper == pytest.approx(0.7)  # max(D, 3*0.2), 0.3+2*0.2
    assert b.balanced_lower < mva([Station("cpu", 0.2), Station("disk", 0.1)], 3).throughput[-1] < b.balanced_upper


def test_bounds_with_think_time_by_hand():
    # Same stations, Z = 0.3, N = 2: D+Z = 0.6.
    # optimistic: 2 / (0.6 + 1*0.15 * 0.3/0.6) = 2/0.675;  pessimistic: 2 / (0.6 + 1*0.2 * 0.6/(0.6+0.3)) = 2/(0.6 + 2/15).
    # Exact MVA: n=1 Q = (1/3, 1/6); n=2 R = 0.2*4/3 + 0.1*7/6 = 0.38333..., X = 2/0.68333... = 2.9268...
    stations = [Station("cpu", 0.2), Station("disk", 0.1)]
    b = bounds(stations, 2, think=0.3)
    assert b.balanced_upper == pytest.approx(2 / 0.675) and b.balanced_lower == pytest.approx(2 / (0.6 + 2 / 15))
    assert b.upper == pytest.approx(2 / 0.6) and b.lower == pytest.approx(2 / 0.9) and b.knee == pytest.approx(3)
    x = mva(stations, 2, think=0.3).throughput[-1]
    assert x == pytest.approx(2 / (0.2 * 4 / 3 + 0.1 * 7 / 6 + 0.3), rel=1e-12)
    assert b.balanced_lower < x < b.balanced_upper


def test_members_spread_the_demand_and_count_as_queues():
    b = bounds([Station("server", 0.01, members=5), Station("disk", 0.008, members=2)], 10, think=0.001)
    assert b.max_demand == pytest.approx(0.004) and b.bottleneck == ("disk",) and b.queues == 7
    assert b.upper == pytest.approx(250) and b.total_demand == pytest.approx(0.018)


def test_tied_stations_are_both_bottlenecks():
    assert bounds([Station("a", 0.2, 2), Station("b", 0.1), Station("c", 0.05)], 4).bottleneck == ("a", "b")


@pytest.mark.parametrize("service, members", [(0.006, 3), (0.5, 7), (1e-5, 64)])
def test_a_station_of_m_members_is_m_stations_of_a_member_each(service, members):
    others = [Station("net", 0.001), Station("disk", 0.02, 4)]
    grouped = mva([Station("x", service, members), *others], 120, think=0.003)
    split = mva([*(Station(f"x{i}", service / members) for i in range(members)), *others], 120, think=0.003)
    np.testing.assert_allclose(grouped.throughput, split.throughput, rtol=1e-12)
    np.testing.assert_allclose(grouped.response, split.response, rtol=1e-12)
    for i in range(members):
        np.testing.assert_allclose(grouped.queue[:, 0], split.queue[:, i], rtol=1e-12)
    np.testing.assert_allclose(grouped.queue[:, 1:], split.queue[:, members:], rtol=1e-12)


def test_schweitzer_is_exact_for_one_request_and_for_balanced_queues():
    # Balanced: K queues of demand d, Z = 0: exact X(N) = N / ((N + K - 1) d), and Schweitzer's guess Q = N/K is exact.
    assert schweitzer([Station("d", 0.05, 8)], 37).throughput[0] == pytest.approx(37 / ((37 + 7) * 0.05 / 8), rel=1e-10)
    stations = [Station("a", 0.3, 2), Station("b", 0.1)]
    assert schweitzer(stations, 1, think=0.2).throughput[0] == pytest.approx(1 / 0.6, rel=1e-10)


def test_throughput_reaches_the_bottleneck_rate_at_very_large_populations():
    stations = [Station("client", 1e-4, 64), Station("server", 3e-4, 5), Station("disk", 2e-3, 20)]
    curve = schweitzer(stations, 2_000_000, think=2e-4)
    assert curve.throughput[0] == pytest.approx(20 / 2e-3, rel=1e-4)
    assert curve.utilisation[0, 2] == pytest.approx(1, rel=1e-4)
    assert curve.population.tolist() == [2_000_000]


# --- degenerate cases and errors ------------------------------------------------------------------

def test_zero_service_everywhere_leaves_the_think_time():
    stations = [Station("a", 0.0), Station("b", 0.0, 3)]
    curve = mva(stations, 5, think=0.5)
    np.testing.assert_allclose(curve.throughput, np.arange(1, 6) / 0.5)
    np.testing.assert_array_equal(curve.queue, 0)
    b = bounds(stations, 5, think=0.5)
    assert b.upper == b.lower == b.balanced_upper == b.balanced_lower == pytest.approx(10)
    assert b.knee == math.inf and b.bottleneck == ()
    assert schweitzer(stations, 5, think=0.5).throughput[0] == pytest.approx(10)


@pytest.mark.parametrize("analysis", [bounds, mva, schweitzer])
def test_zero_service_and_zero_think_time_is_unbounded(analysis):
    with pytest.raises(ValueError, match="unbounded"):
        analysis([Station("a", 0.0)], 3)


@pytest.mark.parametrize("analysis", [bounds, mva, schweitzer])
@pytest.mark.parametrize("population", [0, -2, 1.5, True])
def test_population_must_be_a_whole_number_of_at_least_one(analysis, population):
    with pytest.raises(ValueError, match="population"):
        analysis([Station("a", 0.1)], population)


@pytest.mark.parametrize("think", [-0.1, math.nan, math.inf])
def test_think_time_must_be_finite_and_not_negative(think):
    with pytest.raises(ValueError, match="think time"):
        bounds([Station("a", 0.1)], 3, think=think)


@pytest.mark.parametrize("service, members, what", [
    (-1.0, 1, "service"), (math.nan, 1, "service"), (math.inf, 1, "service"), ("0.1", 1, "service"),
    (0.1, 0, "members"), (0.1, 2.5, "members"), (0.1, True, "members")])
def test_station_rejects_impossible_values_naming_the_station(service, members, what):
    with pytest.raises(ValueError, match=f"station 'disk': {what}"):
        Station("disk", service, members)


def test_a_network_needs_stations_with_distinct_names():
    with pytest.raises(ValueError, match="at least one station"):
        mva([], 3, think=1.0)
    with pytest.raises(ValueError, match="repeated: disk"):
        bounds([Station("disk", 0.1), Station("net", 0.1), Station("disk", 0.2)], 3)


def test_exact_mva_refuses_populations_beyond_its_limit_and_names_schweitzer():
    with pytest.raises(ValueError, match="schweitzer"):
        mva([Station("a", 0.1)], MVA_LIMIT + 1)


# --- properties on random networks ----------------------------------------------------------------

@properties
@given(specs, thinks, populations)
def test_exact_throughput_lies_within_the_asymptotic_and_balanced_bounds(spec, think, population):
    stations = network(spec)
    curve = mva(stations, population, think)
    for n in range(1, population + 1):
        b, x, r = bounds(stations, n, think), curve.throughput[n - 1], curve.response[n - 1]
        assert b.lower * (1 - REL) <= b.balanced_lower * (1 + REL)
        assert b.balanced_lower * (1 - REL) <= x <= b.balanced_upper * (1 + REL)
        assert b.balanced_upper <= b.upper * (1 + REL)
        assert b.response_lower * (1 - REL) <= r <= b.response_upper * (1 + REL)
        assert r >= max(b.total_demand, n * b.max_demand - think) * (1 - REL)


@properties
@given(specs, thinks, populations)
def test_throughput_never_falls_as_requests_are_added(spec, think, population):
    x = mva(network(spec), population, think).throughput
    assert np.all(np.diff(x) >= -REL * x[1:])


@properties
@given(specs, thinks, populations)
def test_littles_law_and_utilisation(spec, think, population):
    stations = network(spec)
    curve = mva(stations, population, think)
    n, x = curve.population, curve.throughput
    members = np.array([s.members for s in stations])
    demand = np.array([s.demand for s in stations])
    np.testing.assert_allclose(x * (curve.response + think), n, rtol=REL)  # the whole network
    np.testing.assert_allclose(x * think + curve.queue @ members, n, rtol=REL)  # the delay plus every queue
    np.testing.assert_allclose(curve.utilisation, x[:, None] * demand, rtol=1e-12)
    assert np.all(curve.utilisation <= 1 + REL)
    assert np.all(curve.queue >= curve.utilisation * (1 - REL))  # a busy member holds at least the one it serves


@properties
@given(specs, thinks)
def test_throughput_approaches_the_bottleneck_rate(spec, think):
    stations = network(spec)
    b = bounds(stations, 1, think)
    assume(b.knee <= 100)
    # At 50 times the knee, X >= N/(D + Z + N*D_max) = (1/D_max) * 50/51 (the pessimistic balanced bound).
    population = 50 * math.ceil(b.knee)
    x = mva(stations, population, think).throughput[-1]
    assert 50 / 51 * (1 - REL) <= x * b.max_demand <= 1 + REL


@properties
@given(specs, thinks, populations, st.data())
def test_slowing_a_station_never_raises_throughput_or_its_bound(spec, think, population, data):
    stations = network(spec)
    i = data.draw(st.integers(0, len(stations) - 1))
    factor = data.draw(st.floats(1, 10))
    slower = list(stations)
    slower[i] = Station(stations[i].name, stations[i].service * factor, stations[i].members)
    before, after = mva(stations, population, think), mva(slower, population, think)
    assert np.all(after.throughput <= before.throughput * (1 + REL))
    assert bounds(slower, population, think).upper <= bounds(stations, population, think).upper * (1 + REL)


@properties
@given(specs, thinks, populations)
def test_schweitzer_stays_within_a_few_percent_of_exact_mva(spec, think, population):
    stations = network(spec)
    exact = mva(stations, population, think)
    approx = schweitzer(stations, population, think)
    # A targeted search over this domain found at most 6.8% (one bottleneck with think time, near the knee).
    assert approx.throughput[0] == pytest.approx(exact.throughput[-1], rel=0.08)
    assert approx.throughput[0] * (approx.response[0] + think) == pytest.approx(population, rel=1e-9)
    assert np.all(approx.utilisation <= 1 + REL)
