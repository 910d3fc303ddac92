"""The value of one figure at which a ceiling reaches a target: doubled until it does, then the least such value by
secant and halving steps (a ceiling is monotone in each figure). :func:`models.implied.implied` solves with it."""

from __future__ import annotations

from typing import Callable

from probes.core.units import Metric

__all__ = ["REACH", "reaching", "least_reaching"]

# How close to the least value that reaches a target models.implied finds it, as a share of the range:
# far below the three or four figures it is shown with.
REACH = 1e-9


def reaching(bound: Callable[[float], float], assumed: float, target: float, metric: Metric) -> float | None:
    """A value of one figure assumed as ``assumed`` at which ``bound`` reaches ``target``: doubled (halved, for a
    latency) until it does; None if it never does within a factor of 2**60."""
    step = 0.5 if metric is Metric.LATENCY else 2.0
    for k in range(1, 61):
        if bound(assumed * step ** k) >= target:
            return assumed * step ** k
    return None


def least_reaching(f: Callable[[float], float], target: float, low: float, high: float) -> float:
    """The least t in [0, 1] with f(t) >= target, within REACH, for a non-decreasing f with f(0) = low < target
    <= f(1) = high. A ceiling is piecewise linear (or smooth) in one figure, so secant steps find it in a few
    solves; a step that does not halve the bracket is followed by a halving one, so it is never slower than
    bisection by more than twice."""
    lo, hi, f_lo, f_hi = 0.0, 1.0, low, high
    secant = True
    while hi - lo > REACH:
        width = hi - lo
        t = lo + (target - f_lo) / (f_hi - f_lo) * width if secant and f_hi > f_lo else lo + width / 2
        t = min(max(t, lo + REACH / 4), hi - REACH / 4)
        value = f(t)
        if value >= target:
            hi, f_hi = t, value
            if value <= target * (1 + 1e-12) and f(max(t - REACH / 2, lo)) < target:
                return t  # on the target: nothing just below reaches it, so t is the least
        else:
            lo, f_lo = t, value
        secant = hi - lo <= width / 2
    return hi

