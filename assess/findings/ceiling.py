"""Findings about a run against its ceiling (the CEILING_CODES of :mod:`assess.findings.finding`), and its figures in the
ceiling's metric."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

from probes.core.run import Run
from probes.core.stats import CONFIDENCE, Summary
from probes.core.units import Metric, Q_, format_percent, format_quantity, magnitude_in, quantity_json
from models.ceiling import Ceiling, Implied
from models.layers import NETWORK_LAYERS, SERVER_LAYERS
from assess.findings.bands import BELOW, FAR_BELOW, TOLERANCE
from assess.findings.finding import Finding, Judgement, Severity

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["judge", "left_out", "bandwidth_factor", "bandwidth_summary", "ceiling_metric", "summary_in", "metric_factor"]

# Above a stated figure by less than this, the figure may be what is wrong (a data sheet's write rate given for reads);
# far above, only a cache or a miscount explains it.
_UNDERSTATED = 1.5
# A page: transfers that are not whole pages fill blocks in part.
_PAGE = 4096


def bandwidth_factor(run: Run) -> float | None:
    """What turns the run's values into B/s (an op/s rate times the transfer size); None if they are no bandwidth."""
    if run.metric is Metric.BANDWIDTH:
        return magnitude_in(Q_(1, run.unit), "B/s")
    workload = run.workload
    if run.metric is Metric.OPERATION_RATE and workload and workload.transfer_size is not None \
            and not workload.operation.is_metadata:
        return (Q_(1, run.unit) * workload.transfer_size / Q_(1, "op")).m_as("B/s")
    return None


def bandwidth_summary(run: Run) -> Summary | None:
    """The run's summary in B/s, from its samples or from the summary its tool reported; None if no bandwidth."""
    return summary_in(run, Metric.BANDWIDTH)


def ceiling_metric(run: Run) -> Metric:
    """What the run's ceiling measures: metadata operations per second, or bandwidth."""
    return Metric.OPERATION_RATE if run.workload and run.workload.operation.is_metadata else Metric.BANDWIDTH


def metric_factor(run: Run, metric: Metric) -> float | None:
    """What turns the run's values into the metric's canonical unit (B/s, op/s); None if they are not of that metric."""
    if metric is Metric.BANDWIDTH:
        return bandwidth_factor(run)
    return magnitude_in(Q_(1, run.unit), metric.unit) if run.metric is metric else None


def summary_in(run: Run, metric: Metric) -> Summary | None:
    """The run's summary in the metric's canonical unit (B/s, op/s); None if its values are not of that metric. Found
    once per run (by its identity, among up to :data:`_MOST_SUMMARIES`): judging a list asks it of each run at every
    step (witnesses, verdicts, bands, io500's assumption)."""
    key = (id(run), metric)
    found = _SUMMARIES.get(key)
    if found is not None and found[0] is run:
        return found[1]
    factor = metric_factor(run, metric)
    summary = None if factor is None else run.summary.scaled(factor)
    if len(_SUMMARIES) >= _MOST_SUMMARIES:
        _SUMMARIES.clear()  # all at once: one step, whatever other threads judge meanwhile
    _SUMMARIES[key] = run, summary  # the run kept with it: its id is not another's while it is kept
    return summary


_SUMMARIES: dict[tuple[int, Metric], tuple[Run, Summary | None]] = {}
_MOST_SUMMARIES = 8192


def judge(run: Run, ceiling: Ceiling, *, tolerance: float = TOLERANCE, far_below: float = FAR_BELOW, below: float = BELOW,
          implied: Callable[[float], tuple[Implied, ...]] | None = None,
          stated: Callable[[], float] | None = None) -> Judgement:
    """Compare a run with its ceiling, an interval when the topology states figures as ranges.

    A ceiling bounds every repetition, so one repetition above it (by more than
    ``tolerance``, the noise of the measurements behind the ceiling) is impossible; with
    ranges, only above the high end (every range at its most favourable) is, and with figures
    assumed as one value, only above what the stated figures allow (``stated()``, B/s or op/s:
    every such figure unlimited). A run between the low and the high end, or above the high end
    within the stated figures', is possible only if the hardware is better than assumed:
    ``implied(value)`` says what it needs of each assumed figure (POSSIBLE-IF). A run is at the
    ceiling when its mean is within ``tolerance`` of it, below it under ``below`` of it, and far
    below when even the top of its 95 % confidence interval (the value itself, for a single
    sample) is under ``far_below`` of the low end. An operation rate (op/s) counts as the
    bandwidth it implies: rate x transfer size. Metadata runs are compared in op/s.
    """
    metric = ceiling.metric
    summary = summary_in(run, metric)
    limit, least = magnitude_in(ceiling.value, metric.unit), magnitude_in(ceiling.least, metric.unit)
    measured = Q_(summary.mean, metric.unit)
    ratio = summary.mean / limit
    interval = None if summary.ci_low is None else (summary.ci_low / limit, summary.ci_high / limit)
    evidence = {"measured": quantity_json(measured), "ceiling": quantity_json(ceiling.value),
                "ceiling_low": quantity_json(ceiling.least), "ratio": ratio,
                "ratio_ci95": list(interval) if interval else None, "samples": summary.n,
                "binding": [str(c) for c in ceiling.binding], "assumed": [str(c) for c in ceiling.assumed]}
    where = f"{', '.join(ceiling.binding_layers)} ({ceiling.marked(ceiling.binding)})"
    lowest = ceiling.low or ceiling
    where_least = f"{', '.join(lowest.binding_layers)} ({ceiling.marked(lowest.binding)})"
    op = ceiling.workload.operation.value
    top = interval[1] if interval else ratio
    findings = []
    most = stated() if stated and summary.max / limit > 1 + tolerance else limit
    if summary.max / limit > 1 + tolerance and summary.max / most <= 1 + tolerance:  # above assumed figures alone
        fastest = Q_(summary.max, metric.unit)
        needs = implied(summary.max) if implied else ()
        findings.append(_possible(run.label, op, fastest, ceiling, needs, evidence, Q_(most, metric.unit)))
    elif summary.max / limit > 1 + tolerance:
        if interval and interval[0] > 1 + tolerance:
            certainty = f"with {CONFIDENCE:.0%} confidence: its mean's interval is {interval[0]:.2f}-{interval[1]:.2f}x"
        elif summary.n == 1:
            certainty = f"beyond the {tolerance:.0%} noise of a single value"
        else:
            certainty = (f"in its fastest repetition, {format_quantity(Q_(summary.max, metric.unit))} "
                         f"({summary.max / limit:.2f}x), beyond {tolerance:.0%} noise")
        findings.append(_above(run.label, op, Q_(summary.max, metric.unit), measured, ratio, ceiling, certainty, evidence))
    elif ceiling.low is not None and summary.max / least > 1 + tolerance:
        fastest = Q_(summary.max, metric.unit)
        needs = implied(summary.max) if implied else ()
        findings.append(_possible(run.label, op, fastest, ceiling, needs, evidence))
    elif abs(summary.mean / least - 1) <= tolerance and ceiling.low is None:
        findings.append(Finding(
            "AT-CEILING", Severity.INFO, run.label,
            f"{op} of {format_quantity(measured)} is at the ceiling of {format_quantity(ceiling.value)} "
            f"({ratio:.0%}) set by {where}.",
            f"this run is limited by {where}; more needs more or faster of them", evidence))
    elif abs(summary.mean / least - 1) <= tolerance:  # at the low end of an interval: consistent, not shown to bind
        findings.append(Finding(
            "AT-CEILING", Severity.INFO, run.label,
            f"{op} of {format_quantity(measured)} is at the ceiling's least, {format_quantity(ceiling.least)} "
            f"({summary.mean / least:.0%}), which {where_least} set with every range at its least favourable end: consistent "
            f"with those figures at their least, not shown to be limited by them (its most is {format_quantity(ceiling.value)}).",
            "state the figures that decide it (a datasheet or a probe: iobound probe), then check again", evidence))
    elif top * limit / least < far_below:
        findings.append(_far_below(run.label, op, measured, summary.mean / least, ceiling, where_least, evidence))
    elif summary.mean / least < below:  # against the least the ranges allow: what they do not explain
        findings.append(_below(run.label, op, measured, summary.mean / least, ceiling, where_least, evidence))
    return Judgement(run, measured, ceiling, ratio, interval, tuple(findings))


def left_out(ceiling: Ceiling) -> str:
    """What the ceiling leaves out of what its workload does ("" where it models it): small or unaligned transfers to
    one shared file (ior-hard), the metadata servers' own time where no server states a rate. (One directory shared
    by every process is modelled: its lock, or the one server that holds it.)"""
    workload = ceiling.workload
    if not workload.operation.is_metadata:
        size = workload.transfer_size
        if workload.shared_file and (size is None or size.m_as("B") % _PAGE):
            shown = "transfers" if size is None else f"{format_quantity(size, unit='B')} transfers"
            return (f"what {shown} interleaved in one shared file cost: the processes' contention for its locks or "
                    f"extents, and the read-modify-write of blocks they fill in part")
        return ""
    if all(layer.layer != "metadata servers" for layer in ceiling.layers):
        return "the metadata servers' own time (no server states a metadata rate)"
    return ""


def _far_below(label, op, measured, share: float, ceiling: Ceiling, where: str, evidence) -> Finding:
    """FAR-BELOW: a warning where the ceiling models what the run does; information naming what it leaves out elsewhere."""
    said = (f"{op} of {format_quantity(measured)} reaches only {format_percent(share)}% of the {format_quantity(ceiling.least)} "
            f"that {where} would allow{_at_least(ceiling)}")
    missing = left_out(ceiling)
    if missing:
        return Finding("FAR-BELOW", Severity.INFO, label, f"{said}; the model leaves out {missing}, "
                       "which commonly cost as much: not judged.",
                       "to judge it, state what the model leaves out, or compare with the same phase on like systems",
                       evidence | {"left_out": missing})
    return Finding("FAR-BELOW", Severity.WARNING, label, f"{said}.",
                   "something the model leaves out costs more than the hardware: check the transfer size against the "
                   "file system's block or stripe size, contention between processes, and the client's settings", evidence)


def _at_least(ceiling: Ceiling) -> str:
    """Where a ceiling is an interval, that the figure is its low end."""
    return "" if ceiling.low is None else f" even{_below_least(ceiling)}"


def _below(label, op, measured, share: float, ceiling: Ceiling, where: str, evidence) -> Finding:
    """BELOW-CEILING: 50-90 % of the ceiling (its least, with ranges), which costs the model does not count commonly explain."""
    if ceiling.metric is Metric.OPERATION_RATE:
        costs = "the metadata servers' CPU and journal, lock contention in shared directories, and the client's own cache misses"
    else:
        costs = ("the file service's CPU (checksums, copies, a user-space daemon), protocol overhead per request, "
                 "lock contention on a shared file, and small or misaligned transfers")
    return Finding(
        "BELOW-CEILING", Severity.INFO, label,
        f"{op} of {format_quantity(measured)} reaches {share:.0%} of the {format_quantity(ceiling.least)} that "
        f"{where} would allow{_below_least(ceiling)}: {'at least ' if ceiling.low else ''}{1 - share:.0%} goes to "
        f"something the model leaves out, commonly {costs}.",
        "profile the servers during the run (CPU, interrupts) and compare with a transfer size matched to the "
        "file system's blocks; this is common and not an error", evidence)


def _below_least(ceiling: Ceiling) -> str:
    """Where a ceiling is an interval, that the figure is its least."""
    return "" if ceiling.low is None else f" with every range at its least favourable end (at most {format_quantity(ceiling.value)})"


def _possible(label, op, fastest, ceiling: Ceiling, needs: tuple[Implied, ...], evidence,
              stated: Quantity | None = None) -> Finding:
    """POSSIBLE-IF: above the ceiling's low end, within its high end, or above the high end within what the
    ``stated`` figures alone allow (every figure assumed as one value unlimited): the hardware it implies."""
    low = ceiling if stated is not None else ceiling.low
    caches = [c for c in ceiling.caches if c.value is not None and fastest <= c.value and c.applies is not False]
    cache = f", or if the {caches[0].layer} serves it" if caches else ""
    if needs:
        condition = f"possible only if {' and '.join(map(str, needs))}{cache}"
    else:  # every range alone at its least still allows it: only some of them together, low, do not
        condition = (f"no one figure decides it alone (each at its least allows it, the others at their most), "
                     f"but {ceiling.marked(low.binding)} cannot all be at their least{cache}")
    where = f"({', '.join(low.binding_layers)}: {ceiling.marked(low.binding)})"
    if stated is None:
        place = (f"above the ceiling's least of {format_quantity(low.value)} {where} and within its most of "
                 f"{format_quantity(ceiling.value)}")
    else:
        most = ("the stated ones alone limit nothing" if stated.m == math.inf else
                f"the stated ones alone allow {format_quantity(stated)}")
        place = f"above the ceiling of {format_quantity(ceiling.value)} {where}, which rests on assumed figures ({most})"
    return Finding(
        "POSSIBLE-IF", Severity.WARNING, label,
        f"{op} of {format_quantity(fastest)} is {place}: {condition}.",
        "state the figures that decide it (a datasheet or a probe: iobound probe), then check again",
        evidence, needs)


def _above(label, op, fastest, measured, ratio, ceiling: Ceiling, certainty: str, evidence) -> Finding:
    exceeded = [layer for layer in ceiling.layers if layer.value is not None and layer.value < fastest]
    names = ", ".join(f"{layer.layer} ({format_quantity(layer.value)})" for layer in exceeded)
    # beyond the network, or with no server at all (a local disk), only the client's own memory is left
    client = any(layer.layer in NETWORK_LAYERS for layer in exceeded) or \
        not any(layer.layer in SERVER_LAYERS for layer in ceiling.layers)
    if ceiling.metric is Metric.OPERATION_RATE:
        why = ("likely answered by the client without the servers (attributes or entries cached on the client), "
               "or a per-process rate counted as the aggregate")
        remedy = "check which rate the tool printed (mdtest's SUMMARY is aggregate), and work on files other nodes created"
    elif op == "read":
        cache = "the client's page cache" if client else "a server-side cache (server memory or controller cache)"
        why = (f"likely served from {cache}: data read back soon after it was written, a data set smaller "
               "than the memory, or O_DIRECT not honoured all the way down")
        remedy = ("drop caches on clients and servers between write and read, read data written by another node, "
                  "and use a data set several times (10x) larger than the aggregate memory")
    else:
        cache = "the client's page cache" if client else "a server-side write-back cache"
        why = f"likely absorbed by {cache} before it reached the storage"
        remedy = "include the time to flush (fsync on close, IOR -e), or write a data set much larger than the memory"
    stated = [c for layer in exceeded for c in layer.components if c not in ceiling.assumed]
    if stated and ratio < _UNDERSTATED:  # a little above a stated figure: the figure may be what is wrong
        why += (f"; or the figure stated for {', '.join(map(str, dict.fromkeys(stated)))} is below what the hardware "
                "does (compare it with the part's data sheet or a probe)")
        remedy += "; check the stated figures the run exceeds"
    return Finding(
        "ABOVE-CEILING", Severity.ERROR, label,
        f"{op} of {format_quantity(measured)} is {ratio:.2f}x the ceiling of {format_quantity(ceiling.value)} "
        f"({certainty}): more than {names} can {'complete' if ceiling.metric is Metric.OPERATION_RATE else 'carry'}; "
        f"{why}{_caches(ceiling, fastest)}.",
        remedy, {**evidence, "exceeded_layers": [layer.layer for layer in exceeded]})


def _caches(ceiling: Ceiling, fastest: Quantity) -> str:
    """What the caches' own ceilings say of a run above the storage path's: which could serve it, or none."""
    stated = [c for c in ceiling.caches if c.value is not None]
    if not stated:
        return ""
    able = [c for c in stated if fastest <= c.value]
    if not able:
        shown = ", ".join(f"{c.layer} {format_quantity(c.value)}" for c in stated)
        return f"; it is faster even than the caches ({shown}): check the units and how the tool computed it"
    c = able[0]
    fits = "" if c.ratio is None else f", the data set {c.ratio:.2g}x its memory"
    return f"; the {c.layer} ({format_quantity(c.value)}{fits}) can serve it"
