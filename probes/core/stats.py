"""Statistics over repetitions: every figure uses all samples, and one sample is never called a mean."""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass
from typing import Sequence

__all__ = ["Summary", "summarize", "from_reported", "t_quantile", "load", "CONFIDENCE", "drift", "DRIFT_LEVEL",
           "DRIFT_LEAST", "NEIGHBOURS_EXPLAIN"]

# Two-sided level of the confidence intervals iobound reports (the usual 95 %).
CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Summary:
    """n, mean, sample standard deviation, min, max and a Student-t confidence interval of the mean.

    With one sample, ``std`` and the interval are None: there is nothing to estimate them from.
    ``bounded`` is True where the interval's low end was raised to zero: the quantity cannot be
    negative and Student's t interval reached below zero (see :func:`summarize`).
    """

    n: int
    mean: float
    std: float | None
    min: float
    max: float
    ci_low: float | None
    ci_high: float | None
    bounded: bool = False

    @property
    def cv(self) -> float | None:
        """Coefficient of variation (std / mean), the relative noise of the samples."""
        return None if self.std is None or self.mean == 0 else self.std / self.mean

    @property
    def relative_half_width(self) -> float | None:
        """The interval's half-width over the mean: how precisely the mean is known; None for one sample."""
        return None if self.ci_high is None or self.mean == 0 else (self.ci_high - self.mean) / abs(self.mean)

    def scaled(self, factor: float) -> "Summary":
        """The same summary with every figure times ``factor`` (a change of unit)."""
        def times(x):
            return None if x is None else x * factor

        return Summary(self.n, self.mean * factor, times(self.std), self.min * factor, self.max * factor,
                       times(self.ci_low), times(self.ci_high), self.bounded)


def load() -> None:
    """Import what the intervals need (scipy.stats, 1 to 2 s the first time) now, not within a measurement.

    Whoever times something and summarises it as it goes (a probe session and its budget) calls this
    before its clock starts: the budget is for measuring, not for iobound's own imports.
    """
    import scipy.stats  # noqa: F401


@functools.lru_cache(maxsize=256)
def t_quantile(dof: float, confidence: float = CONFIDENCE) -> float:
    """Student's t for a two-sided interval of ``confidence`` with ``dof`` degrees of freedom (2.776 for 4 at 95 %).

    Computed once per pair: a reader summarises thousands of runs of a few repetition counts.
    """
    from scipy.stats import t  # imported here: it costs a second at start-up, and most commands never need it

    return float(t.ppf(0.5 + confidence / 2, dof))


def summarize(samples: Sequence[float], confidence: float = CONFIDENCE, *, nonnegative: bool = True) -> Summary:
    """Summarise repetitions of one measurement.

    The interval is Student's t interval of the mean, mean ± t(1 - (1 - confidence) / 2, n - 1) x
    s / sqrt(n). A quantity that cannot be negative (``nonnegative``, the default: every figure
    iobound measures is a bandwidth, a rate, a latency, a size or a duration) has the interval's
    low end bounded at zero, [max(0, mean - h), mean + h], and ``bounded`` set where that changed
    it. The mean of such a quantity is never below zero, so the bounded interval holds it exactly
    when the t interval does: its coverage is the t interval's (95 % where the mean of the
    repetitions is close to normal), it is only no longer symmetric. A log-scale interval was not
    used: it bounds the geometric mean, not the arithmetic mean shown beside it, and a sample of
    0 (an idle iperf interval) has no logarithm. Pass ``nonnegative=False`` for a signed quantity.

    >>> summarize([4.160, 4.274, 4.2]).n
    3
    >>> s = summarize([0.1, 10.0, 0.2])
    >>> (s.ci_low, s.bounded), summarize([0.1, 10.0, 0.2], nonnegative=False).ci_low < 0
    ((0.0, True), True)
    """
    values = [float(x) for x in samples]
    if not values:
        raise ValueError("A summary needs at least one sample. Got none.")
    if not all(math.isfinite(x) for x in values):
        raise ValueError(f"Samples must be finite numbers. Got {values!r} instead.")
    mean = statistics.fmean(values)
    if len(values) == 1:
        return Summary(1, mean, None, values[0], values[0], None, None)
    std = statistics.stdev(values)
    half = t_quantile(len(values) - 1, confidence) * std / math.sqrt(len(values))
    return Summary(len(values), mean, std, min(values), max(values), *_interval(mean, half, nonnegative))


def _interval(mean: float, half: float, nonnegative: bool) -> tuple[float, float, bool]:
    """The interval mean ± half, its low end bounded at zero for a quantity that cannot be negative, and whether it was."""
    if nonnegative and mean - half < 0:
        return 0.0, mean + half, True
    return mean - half, mean + half, False


def from_reported(n: int, mean: float, std: float | None, low: float, high: float,
                  confidence: float = CONFIDENCE, *, nonnegative: bool = True) -> Summary:
    """The summary a tool printed instead of its repetitions (mdtest, IOR's summary table).

    ``std`` is the sample standard deviation when ``n > 1``; the interval is then
    computed as :func:`summarize` would from the samples (bounded at zero likewise).
    """
    values = (mean, low, high) + (() if std is None else (std,))
    if n < 1 or not all(math.isfinite(x) for x in values) or not low <= mean <= high or (std or 0) < 0:
        raise ValueError(f"Not a summary of repetitions: n={n}, mean={mean}, std={std}, min={low}, max={high}.")
    if n == 1 or std is None:
        return Summary(n, mean, None, low, high, None, None)
    half = t_quantile(n - 1, confidence) * std / math.sqrt(n)
    return Summary(n, mean, std, low, high, *_interval(mean, half, nonnegative))


# A drift test's level: 1 % each, so that a dozen stable figures of a quiet machine seldom raise a false alarm.
DRIFT_LEVEL = 0.01
# Repetitions a drift test needs: fewer cannot tell a trend from noise.
DRIFT_LEAST = 6
# Of a figure's spread, the least share the neighbours must be able to explain for a correlation with them to count.
# Neighbours that take d CPUs more in one repetition than in another run at most d s of each second on the CPUs the
# probe needs, so they lower a rate (or raise a latency) by at most d of itself: 0.00 to 0.01 CPUs move a figure
# 1 % at most. Unless that bound reaches half the figure's spread (max - min over mean), something else moves it,
# and an effect that small is within its noise: a correlation then is no instability.
NEIGHBOURS_EXPLAIN = 0.5


def drift(samples: Sequence[float], times: Sequence[float], others: Sequence[float] = (), *, rises: bool = False) -> str:
    """Why repetitions taken over a session do not measure one steady state, or "" when nothing says so.

    Three tests at :data:`DRIFT_LEVEL`: a trend of value against time (Spearman's rank
    correlation), a change between the first and the second half (Welch's t test), and values that
    follow what other processes took of the CPUs during each repetition (Spearman against
    ``others``, one-sided: more of theirs, less of the figure; more of a latency where ``rises``), where their swing
    could move the figure that much (:data:`NEIGHBOURS_EXPLAIN`). Each looks at the
    order the repetitions were taken in, which an interval of their
    mean ignores: a steady neighbour shifts every value alike, a changing one shows here.

    >>> drift([10, 11, 12, 13, 14, 15, 16, 17], range(8)).startswith("a trend")
    True
    >>> drift([10, 11, 10, 11, 10, 11, 10, 11], range(8))
    ''
    """
    values = [float(x) for x in samples]
    if len(values) < DRIFT_LEAST or statistics.pstdev(values) <= 1e-9 * abs(statistics.fmean(values)):
        return ""  # too few to tell, or all alike: nothing changed
    import warnings

    from scipy.stats import spearmanr, ttest_ind

    with warnings.catch_warnings():  # values alike in one half: scipy warns of lost precision, the test says "no change"
        warnings.simplefilter("ignore", RuntimeWarning)
        return _drift(values, list(times)[:len(values)], [float(x) for x in others][:len(values)], rises, spearmanr,
                      ttest_ind)


def _drift(values: list[float], times: list[float], load: list[float], rises: bool, spearmanr, ttest_ind) -> str:
    rho, p = spearmanr(times, values)
    if p < DRIFT_LEVEL:
        span = (values[-1] - values[0]) / statistics.fmean(values)
        return f"a trend over the session (Spearman rho {rho:+.2f}, p {p:.3f}; first to last {span:+.0%})"
    half = len(values) // 2
    first, second = values[:half], values[-half:]
    change = statistics.fmean(second) / statistics.fmean(first) - 1
    if len(set(first)) == len(set(second)) == 1:  # each half alike: a step, if they differ, and no test needed
        if change:
            return f"a change between the session's halves ({change:+.0%}: each half took one value)"
    else:
        t, p = ttest_ind(first, second, equal_var=False)
        if p < DRIFT_LEVEL:
            return f"a change between the session's halves ({change:+.0%}, Welch p {p:.3f})"
    if len(load) == len(values) and len(set(load)) > 1 and _could_move(load, values):
        # one-sided: neighbours taking CPU lower a figure; a peer's server working harder for more throughput does not
        rho, p = spearmanr(load, values, alternative="greater" if rises else "less")
        if p < DRIFT_LEVEL:
            return (f"values that follow the neighbours' CPU use (Spearman rho {rho:+.2f}, p {p:.3f}; "
                    f"they took {min(load):.2f} to {max(load):.2f} CPUs)")
    return ""


def _could_move(load: list[float], values: list[float]) -> bool:
    """Whether neighbours whose CPU use swung over ``load`` (CPUs) could explain at least
    :data:`NEIGHBOURS_EXPLAIN` of the values' spread: they move a figure by at most their swing, of itself."""
    mean = abs(statistics.fmean(values))
    return mean > 0 and max(load) - min(load) >= NEIGHBOURS_EXPLAIN * (max(values) - min(values)) / mean
