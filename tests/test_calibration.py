"""Calibration: known parameters come back, intervals cover the truth as often as they claim, real sweeps fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from models.calibration import TRANSFER_SIZE, USL, Law, fit, usl, usl_peak
from probes.core.errors import InputError
from probes.readers import read_results
from probes.core.units import Q_, Metric

MiB = 2**20
SIZES = 4096 * 2.0 ** np.arange(13)  # 4 KiB .. 16 MiB
T0, BANDWIDTH = 1e-4, 110 * MiB
NODES = np.arange(1.0, 65.0)
LAM, SIGMA, KAPPA = 100.0, 0.05, 0.001


def noisy(y, rng, level=0.02):
    """The values with multiplicative Gaussian noise of relative size ``level``."""
    return y * (1 + level * rng.standard_normal(y.shape))


def covers(estimate, truth) -> bool:
    return estimate.low <= truth <= estimate.high


# --- closed forms and exact recovery ---------------------------------------------------

def test_transfer_model_limits():
    """X(s) is s / t0 for tiny s, tends to B for huge s, and is B / 2 at the knee s = t0 * B."""
    assert TRANSFER_SIZE(1.0, T0, BANDWIDTH) == pytest.approx(1 / T0, rel=1 / (T0 * BANDWIDTH))
    assert TRANSFER_SIZE(1e20, T0, BANDWIDTH) == pytest.approx(BANDWIDTH, rel=1e-6)
    assert TRANSFER_SIZE(T0 * BANDWIDTH, T0, BANDWIDTH) == pytest.approx(BANDWIDTH / 2)


def test_transfer_size_exact_recovery():
    result = fit(TRANSFER_SIZE, SIZES, TRANSFER_SIZE(SIZES, T0, BANDWIDTH))
    assert result.parameters["t0"].value == pytest.approx(T0, rel=1e-6)
    assert result.parameters["B"].value == pytest.approx(BANDWIDTH, rel=1e-6)
    assert result.r_squared == pytest.approx(1.0, abs=1e-12)
    assert result.rmse < 1e-9
    assert (result.n, result.dof) == (13, 11)


def test_usl_exact_recovery_and_peak():
    result = fit(USL, NODES, USL(NODES, LAM, SIGMA, KAPPA))
    for name, truth in zip(USL.parameters, (LAM, SIGMA, KAPPA)):
        assert result.parameters[name].value == pytest.approx(truth, rel=1e-6)
    assert result.r_squared == pytest.approx(1.0, abs=1e-12)
    assert usl_peak(result) == pytest.approx(math.sqrt((1 - SIGMA) / KAPPA), rel=1e-6)  # 30.8 nodes
    assert USL(1.0, LAM, SIGMA, KAPPA) == LAM  # one node: lam itself


def test_usl_peak_only_where_the_points_show_coherency():
    """With 2 % noise the peak is found near 30.8 nodes; without a coherency term there is none."""
    rng = np.random.default_rng(17)
    assert usl_peak(fit(USL, NODES, noisy(USL(NODES, LAM, SIGMA, KAPPA), rng))) == pytest.approx(30.8, rel=0.1)
    flat = fit(USL, NODES, noisy(USL(NODES, LAM, SIGMA, 0.0), rng))
    assert flat.parameters["kappa"].low == 0.0
    assert usl_peak(flat) == math.inf


def test_repetitions_at_one_size_are_used():
    """Two sizes, two repetitions each: three points are enough for two parameters."""
    sizes = np.array([4096.0, 4096.0, 16 * MiB, 16 * MiB])
    result = fit(TRANSFER_SIZE, sizes, TRANSFER_SIZE(sizes, T0, BANDWIDTH))
    assert result.values == pytest.approx((T0, BANDWIDTH), rel=1e-6)
    assert result.n == 4


def test_units_make_quantities():
    """Parameters are plain floats in canonical units; the model names the unit, so pint can take over."""
    result = fit(TRANSFER_SIZE, SIZES, TRANSFER_SIZE(SIZES, T0, BANDWIDTH))
    b, t0 = result.parameters["B"], result.parameters["t0"]
    assert Q_(b.value, b.unit).to("MiB/s").magnitude == pytest.approx(110, rel=1e-6)
    assert Q_(t0.value, t0.unit).to("ms").magnitude == pytest.approx(0.1, rel=1e-6)
    assert usl("op/s").units == ("op/s", "", "")


# --- uncertainty -------------------------------------------------------------------------

@pytest.mark.parametrize("model, x, truth", [(TRANSFER_SIZE, SIZES, (T0, BANDWIDTH)),
                                             (USL, NODES, (LAM, SIGMA, KAPPA))])
def test_noisy_fit_covers_truth_and_narrows_with_more_points(model, x, truth):
    rng = np.random.default_rng(2024)
    few = fit(model, x, noisy(model(x, *truth), rng))
    many_x = np.repeat(x, 4)
    many = fit(model, many_x, noisy(model(many_x, *truth), rng))
    for name, value in zip(model.parameters, truth):
        assert covers(few.parameters[name], value) and covers(many.parameters[name], value)
        assert many.parameters[name].high - many.parameters[name].low < few.parameters[name].high - few.parameters[name].low
    assert 0.005 < few.rmse < 0.04  # the 2 % noise, seen again in the residuals


def test_intervals_cover_the_truth_about_95_percent_of_the_time():
    """Over 200 noisy sweeps, the t0 and B intervals and the band at an unmeasured size each hold the truth ~95 %."""
    rng = np.random.default_rng(7)
    unmeasured = 3 * 2**20  # between the measured 2 MiB and 4 MiB
    truth = TRANSFER_SIZE(unmeasured, T0, BANDWIDTH)
    hits = np.zeros(3)
    for _ in range(200):
        result = fit(TRANSFER_SIZE, SIZES, noisy(TRANSFER_SIZE(SIZES, T0, BANDWIDTH), rng))
        _, low, high = result.predict(unmeasured)
        hits += (covers(result.parameters["t0"], T0), covers(result.parameters["B"], BANDWIDTH),
                 low[0] <= truth <= high[0])
    assert np.all((hits / 200 > 0.90) & (hits / 200 < 0.99))


def test_covariance_matches_scipy_curve_fit():
    """Relative residuals are curve_fit with sigma = y: both give the same covariance."""
    y = noisy(USL(NODES, LAM, SIGMA, KAPPA), np.random.default_rng(3))
    result = fit(USL, NODES, y)
    popt, pcov = optimize.curve_fit(USL, NODES, y, p0=result.values, sigma=y, jac=USL.gradient,
                                    bounds=(USL.lower, USL.upper), method="trf")
    assert popt == pytest.approx(result.values, rel=1e-6)
    assert result.covariance == pytest.approx(pcov, rel=1e-5)


def test_prediction_band_reduces_to_parameter_intervals():
    """X(1) = lam and X(s -> inf) = B, so the band there is the interval of lam or of B."""
    rng = np.random.default_rng(11)
    scaling = fit(USL, NODES, noisy(USL(NODES, LAM, SIGMA, KAPPA), rng))
    value, low, high = scaling.predict(1.0)
    lam = scaling.parameters["lam"]
    assert (value[0], low[0], high[0]) == pytest.approx((lam.value, lam.low, lam.high), rel=1e-9)
    sweep = fit(TRANSFER_SIZE, SIZES, noisy(TRANSFER_SIZE(SIZES, T0, BANDWIDTH), rng))
    value, low, high = sweep.predict(1e30)
    b = sweep.parameters["B"]
    assert (value[0], low[0], high[0]) == pytest.approx((b.value, b.low, b.high), rel=1e-6)
    _, wide_low, wide_high = sweep.predict(1e30, observation=True)
    assert wide_low[0] < low[0] and wide_high[0] > high[0]


def test_weights_count_as_repetitions():
    """A weight of 2 on a point is the same fit as measuring that point twice."""
    y = noisy(TRANSFER_SIZE(SIZES, T0, BANDWIDTH), np.random.default_rng(5))
    weighted = fit(TRANSFER_SIZE, SIZES, y, weights=np.r_[2.0, np.ones(SIZES.size - 1)])
    repeated = fit(TRANSFER_SIZE, np.r_[SIZES[0], SIZES], np.r_[y[0], y])
    assert weighted.values == pytest.approx(repeated.values, rel=1e-9)


def test_extrapolation_is_flagged_outside_the_measured_range_only():
    result = fit(TRANSFER_SIZE, SIZES, TRANSFER_SIZE(SIZES, T0, BANDWIDTH))
    assert result.extrapolates([1024, 4096, 3 * MiB, 16 * MiB, 64 * MiB]).tolist() == [True, False, False, False, True]


# --- properties --------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(log_t0=st.floats(-6, -2), log_b=st.floats(6, 11),
       exponents=st.lists(st.integers(9, 30), min_size=5, max_size=12, unique=True))
def test_transfer_fit_reproduces_noiseless_points(log_t0, log_b, exponents):
    sizes = 2.0 ** np.array(exponents)
    y = TRANSFER_SIZE(sizes, 10**log_t0, 10**log_b)
    result = fit(TRANSFER_SIZE, sizes, y)
    assert np.max(np.abs(TRANSFER_SIZE(sizes, *result.values) / y - 1)) < 1e-6


@settings(max_examples=60, deadline=None)
@given(log_lam=st.floats(0, 6), sigma=st.floats(0, 0.5), kappa=st.floats(0, 0.01),
       counts=st.lists(st.integers(1, 256), min_size=5, max_size=12, unique=True))
def test_usl_fit_reproduces_noiseless_points(log_lam, sigma, kappa, counts):
    nodes = np.array(counts, dtype=float)
    y = USL(nodes, 10**log_lam, sigma, kappa)
    result = fit(USL, nodes, y)
    assert np.max(np.abs(USL(nodes, *result.values) / y - 1)) < 1e-6


# --- real sweeps -------------------------------------------------------------------------

def elbencho_small_files(corpus):
    """elbencho writing 1 Mi files of 1 KiB .. 512 KiB (56 threads, 8 NVMe RAID0): sizes, B/s, files/s."""
    runs = read_results(corpus / "elbencho" / "elbencho_mtelbencho_losf_write_8xnvme-raid0.txt")
    writes = [r for r in runs if dict(r.tags).get("elbencho_phase") == "WRITE"]
    throughput = [r for r in writes if r.metric is Metric.BANDWIDTH]
    sizes = np.array([r.workload.transfer_size.to("B").magnitude for r in throughput])
    rates = np.array([r.value.to("op/s").magnitude for r in writes if r.metric is Metric.OPERATION_RATE])
    return sizes, np.array([r.value.to("B/s").magnitude for r in throughput]), rates


def test_real_small_file_sweep_overhead_is_the_file_rate(corpus):
    """The fitted per-file overhead t0 is the reciprocal of the files/s elbencho itself reports (1 .. 128 KiB)."""
    sizes, throughput, rates = elbencho_small_files(corpus)
    assert sizes.size == 10
    result = fit(TRANSFER_SIZE, sizes, throughput)
    assert 1 / result.parameters["t0"].value == pytest.approx(np.median(rates[sizes <= 128 * 1024]), rel=0.1)
    assert result.r_squared > 0.9


def test_real_small_file_sweep_predicts_inside_and_warns_outside(corpus):
    """Fitted on 1 .. 64 KiB (except 8 KiB): 8 KiB falls in the interval; 512 KiB is extrapolation, and wrong."""
    sizes, throughput, _ = elbencho_small_files(corpus)
    train = (sizes <= 64 * 1024) & (sizes != 8192)
    result = fit(TRANSFER_SIZE, sizes[train], throughput[train])
    value, low, high = result.predict(8192, observation=True)
    assert low[0] <= throughput[sizes == 8192][0] <= high[0]
    assert value[0] == pytest.approx(throughput[sizes == 8192][0], rel=0.1)
    assert not result.extrapolates(8192) and result.extrapolates(512 * 1024)
    # Below the knee the sweep cannot bound the bandwidth, and the formula overshoots beyond it.
    assert result.parameters["B"].low == 0.0
    assert result.predict(512 * 1024)[0][0] > 2 * throughput[sizes == 512 * 1024][0]


# seeds/000_23797a45ea8ae13e.txt: IOR POSIX write on Lustre, transferSize 1 .. 1024 MiB, new data sets 2x memory.
SEED_000_SIZES_MIB = np.array([1, 2, 4, 8, 32, 512, 1024.0])
SEED_000_WRITE_MIB_S = np.array([891, 885, 895, 889, 881, 865, 839.0])


def test_seed_000_large_transfers_see_bandwidth_only():
    """From 1 MiB up the sweep is flat: no per-request overhead is visible and B is the measured level."""
    sizes, throughput = SEED_000_SIZES_MIB * MiB, SEED_000_WRITE_MIB_S * MiB
    result = fit(TRANSFER_SIZE, sizes, throughput)
    assert result.parameters["t0"].low == 0.0
    assert covers(result.parameters["B"], throughput.mean())
    held_out = sizes == 8 * MiB
    partial = fit(TRANSFER_SIZE, sizes[~held_out], throughput[~held_out])
    value, low, high = partial.predict(8 * MiB, observation=True)
    assert low[0] <= throughput[held_out][0] <= high[0]
    assert value[0] == pytest.approx(throughput[held_out][0], rel=0.03)


# --- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("model, x, y, needed", [
    (TRANSFER_SIZE, [4096, 8192], [1e7, 2e7], "at least 3 points"),
    (USL, [1, 2, 4], [1, 2, 3], "at least 4 points"),
    (USL, [1, 1, 2, 2], [1, 1, 2, 2], "at least 3 distinct values of N"),
])
def test_too_few_points(model, x, y, needed):
    with pytest.raises(InputError, match=needed):
        fit(model, x, y)


@pytest.mark.parametrize("x, y, weights, what", [
    ([0, 1, 2], [1, 2, 3], None, "s must be positive"),
    ([1, 2, 3], [1, -2, 3], None, "measured values must be positive"),
    ([1, 2, 3], [1, math.nan, 3], None, "measured values must be positive and finite"),
    ([1, 2, math.inf], [1, 2, 3], None, "s must be positive and finite"),
    ([1, 2, 3], [1, 2, 3], [1, 0, 1], "weights must be positive"),
    ([1, 2, 3], [1, 2], None, "one value per point"),
])
def test_bad_values(x, y, weights, what):
    with pytest.raises(InputError, match=what) as caught:
        fit(TRANSFER_SIZE, x, y, weights=weights, source="sweep.json")
    assert str(caught.value).startswith("sweep.json: transfer-size sweep: ")
    assert isinstance(caught.value, ValueError)


def test_a_fit_that_does_not_converge_says_why():
    """A sine cannot follow these points; from this start scipy runs out of evaluations, and says so."""
    aliased = Law("aliased sine", "x", "", "", ("a", "b"), ("", ""), "2 + a * sin(b * x)",
                    lambda x, y: (1.0, 3.0), (-math.inf, -math.inf), (math.inf, math.inf))
    with pytest.raises(InputError, match="did not converge: The maximum number of function evaluations"):
        fit(aliased, np.arange(1.0, 8.0), [2.09, 1.17, 0.6, 0.54, 2.53, 2.78, 2.02])
