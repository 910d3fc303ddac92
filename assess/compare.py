"""Compare two runs of one metric the way hyperfine does, and say whether the difference stands out of the noise."""

from __future__ import annotations

import math
from dataclasses import dataclass

from probes.core.errors import InputError
from probes.core.run import Run
from probes.core.stats import CONFIDENCE, Summary, t_quantile
from probes.core.units import Q_, Metric

__all__ = ["Comparison", "compare", "fastest", "speed"]


def speed(run: Run) -> Summary:
    """The run's summary in its metric's canonical unit (B/s, op/s, s)."""
    return run.summary.scaled(Q_(1, run.unit).m_as(run.metric.unit))


def _lower_is_faster(metric: Metric) -> bool:
    """Times are faster when shorter; bandwidths and rates when higher."""
    return metric is Metric.LATENCY


def fastest(runs: list[Run]) -> Run:
    """The fastest of runs of one metric."""
    pick = min if _lower_is_faster(runs[0].metric) else max
    return pick(runs, key=lambda r: speed(r).mean)


@dataclass(frozen=True)
class Comparison:
    """``faster`` ran ``ratio`` times faster than ``slower``.

    ``spread`` is hyperfine's ± (the standard deviations propagated to the ratio),
    ``interval`` the 95 % confidence interval of the ratio (of the means' standard errors,
    Welch-Satterthwaite degrees of freedom), ``p_value`` Welch's two-sided t-test. Both are
    None when a run has a single value: then nothing says how large the noise is.
    """

    faster: Run
    slower: Run
    ratio: float
    spread: float | None
    interval: tuple[float, float] | None
    p_value: float | None

    @property
    def significant(self) -> bool | None:
        return None if self.p_value is None else self.p_value < 1 - CONFIDENCE

    def verdict(self) -> str:
        """One line as people say it: ``'b' ran 1.00 ± 0.01 times faster than 'a'``, and whether that is noise."""
        spread = f" ± {self.spread:.2f}" if self.spread is not None else ""
        line = f"{self.faster.label!r} ran {self.ratio:.2f}{spread} times faster than {self.slower.label!r}"
        if self.p_value is None:
            return line + ": with a single value on one side nothing says whether this is more than noise"
        interval = f"{CONFIDENCE:.0%} CI of the ratio {self.interval[0]:.3f}-{self.interval[1]:.3f}"
        if self.significant:
            return f"{line} ({interval}; Welch's t-test p = {self.p_value:.2g}): a real difference"
        return (f"{line} ({interval}; Welch's t-test p = {self.p_value:.2g}): not significant, "
                "no difference at this noise")

    def to_dict(self) -> dict:
        return {"faster": self.faster.label, "slower": self.slower.label, "ratio": self.ratio, "spread": self.spread,
                "ratio_ci95": list(self.interval) if self.interval else None, "p_value": self.p_value,
                "significant": self.significant, "verdict": self.verdict()}


def compare(a: Run, b: Run) -> Comparison:
    """Which of two runs is faster (higher rate, or shorter time), by how much, and whether it is significant.

    Raises
    ------
    InputError
        If the runs measure different metrics (a bandwidth against a time).
    """
    if a.metric is not b.metric:
        raise InputError(str(b.origin), "", f"cannot compare {b.label!r} ({b.metric.label}) with {a.label!r} "
                         f"({a.metric.label}): they measure different things")
    sa, sb = speed(a), speed(b)
    lower_is_faster = _lower_is_faster(a.metric)
    a_faster = (sa.mean < sb.mean) if lower_is_faster else (sa.mean > sb.mean)
    (fast, sf), (slow, ss) = ((a, sa), (b, sb)) if a_faster else ((b, sb), (a, sa))
    if min(sf.mean, ss.mean) <= 0:
        raise InputError(str(fast.origin), "", "cannot compare a run whose mean is zero")
    ratio = ss.mean / sf.mean if lower_is_faster else sf.mean / ss.mean
    if sf.std is None or ss.std is None:
        return Comparison(fast, slow, ratio, None, None, None)
    spread = ratio * math.hypot(sf.std / sf.mean, ss.std / ss.mean)
    ef, es = sf.std / math.sqrt(sf.n), ss.std / math.sqrt(ss.n)
    if ef == 0 and es == 0:  # no noise at all: any difference is real
        return Comparison(fast, slow, ratio, spread, (ratio, ratio), 0.0 if sf.mean != ss.mean else 1.0)
    from scipy import stats

    p_value = float(stats.ttest_ind_from_stats(sf.mean, sf.std, sf.n, ss.mean, ss.std, ss.n, equal_var=False).pvalue)
    df = (ef**2 + es**2) ** 2 / (ef**4 / (sf.n - 1) + es**4 / (ss.n - 1))
    half = t_quantile(df) * ratio * math.hypot(ef / sf.mean, es / ss.mean)
    return Comparison(fast, slow, ratio, spread, (ratio - half, ratio + half), p_value)
