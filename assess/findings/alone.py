"""Findings about one run on its own: its repetitions, their spread and length, its data set, the tool's own marks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from probes.core.run import Run
from probes.core.stats import CONFIDENCE, t_quantile
from probes.core.units import Q_, Metric, format_quantity
from probes.core.workload import Operation
from models.caches import Memory
from probes.measure.probe import TARGET  # the relative half-width a repetition count should reach
from assess.findings import Finding, Severity
from assess.findings.application import is_job
from assess.findings.training import training_findings

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Limits", "run_findings", "repetitions_needed"]



@dataclass(frozen=True)
class Limits:
    """Where a run's quality becomes a finding.

    The coefficients of variation are kept apart for writes and reads, as an IOR study on a
    quiet Lustre system measured them: writes varied 5-7 %, reads under 2 %. A run noisier
    than 10 % (writes, metadata) or 5 % (reads) is noisier than such a system's.
    """

    repetitions: int = 3
    cv_write: float = 0.10
    cv_read: float = 0.05
    cv_other: float = 0.10
    min_duration: float = 10.0
    data_set_factor: float = 2.0
    read_data_set_factor: float = 10.0

    def cv(self, operation: Operation | None) -> float:
        if operation is Operation.READ:
            return self.cv_read
        return self.cv_write if operation is Operation.WRITE else self.cv_other


def repetitions_needed(cv: float, target: float = TARGET, confidence: float = CONFIDENCE) -> int:
    """The fewest repetitions whose mean's confidence interval is within ``target`` of it at this variation."""
    n = 2
    while n < 10_000 and t_quantile(n - 1, confidence) * cv / math.sqrt(n) > target:
        n += 1
    return n


def run_findings(run: Run, *, memory: Memory | None = None, block_size: Quantity | None = None,
                 limits: Limits = Limits()) -> list[Finding]:
    """Every finding that needs nothing but the run and, for the data set and block size, the system's memory and FS;
    an MLPerf Storage run's own (its AU, its cache) too.

    A job's log (an application that ran once, as its work needed) gets none of those about a benchmark's method:
    its repetitions, the length of its run, its data set against the memory.
    """
    benchmark = not is_job(run)
    checks = (benchmark and _repetitions(run, limits), _variation(run, limits), _max_headline(run),
              benchmark and _short(run, limits), benchmark and _data_set(run, memory, limits), _own_writes(run),
              _invalid(run), _cut_short(run), _inconsistent(run), _misfit(run, block_size))
    return [f for f in checks if f] + training_findings(run)


def _repetitions(run: Run, limits: Limits) -> Finding | None:
    s = run.summary
    if s.n >= limits.repetitions:
        return None
    spread = "one value: no spread and no confidence interval" if s.n == 1 else \
        f"{s.n} values: a confidence interval from {s.n - 1} degree(s) of freedom is too wide to judge by"
    needed = f"; this spread (cv {s.cv:.1%}) calls for {repetitions_needed(s.cv)}" if s.cv else ""
    if run.origin.tool == "io500":  # its rules run each phase once: said, not warned
        return Finding("FEW-REPETITIONS", Severity.INFO, run.label,
                       f"{run.label} has {s.n} repetition{'s' if s.n != 1 else ''} ({spread}), as io500's rules "
                       "run each phase once.",
                       f"to see its spread, repeat the whole io500 run at least {limits.repetitions} times",
                       {"repetitions": s.n, "minimum": limits.repetitions})
    return Finding("FEW-REPETITIONS", Severity.WARNING, run.label,
                   f"{run.label} has {s.n} repetition{'s' if s.n != 1 else ''} ({spread}).",
                   f"repeat it at least {limits.repetitions} times (IOR -i, mdtest -i, fio loops){needed}",
                   {"repetitions": s.n, "minimum": limits.repetitions})


def _variation(run: Run, limits: Limits) -> Finding | None:
    s = run.summary
    operation = run.workload.operation if run.workload else None
    threshold = limits.cv(operation)
    if s.cv is None or s.cv <= threshold:
        return None
    needed = repetitions_needed(s.cv)
    what = operation.value + "s" if operation else "its repetitions"
    return Finding("HIGH-VARIATION", Severity.WARNING, run.label,
                   f"{run.label} varies by {s.cv:.1%} (coefficient of variation over {s.n} repetitions, "
                   f"{_range(run)}), above the {threshold:.0%} that {what} on a quiet system stay under.",
                   f"find what disturbs it (other jobs, caches, a failing component); with this spread {needed} "
                   f"repetitions give a mean within ±{TARGET:.0%} at {CONFIDENCE:.0%} confidence",
                   {"cv": s.cv, "threshold": threshold, "repetitions": s.n, "repetitions_needed": needed})


def _max_headline(run: Run) -> Finding | None:
    statistic = dict(run.tags).get("statistic", "").lower()
    if statistic not in ("max", "maximum", "best", "peak"):
        return None
    return Finding("MAX-HEADLINE", Severity.WARNING, run.label,
                   f"{run.label} is the {statistic} of its repetitions, not their mean: it overstates what the "
                   "system sustains and hides the spread.",
                   "report the mean with its standard deviation or confidence interval (and min-max beside it)",
                   {"statistic": statistic})


def _short(run: Run, limits: Limits) -> Finding | None:
    if not run.durations:
        return None
    mean = sum(run.durations) / len(run.durations)
    if mean >= limits.min_duration:
        return None
    return Finding("SHORT-RUN", Severity.WARNING, run.label,
                   f"{run.label} ran {mean:.3g} s per repetition (mean of {len(run.durations)}), under "
                   f"{limits.min_duration:g} s: opening files, start-up and write-back caches weigh in its figure.",
                   "run each repetition longer (more data, or a stonewall deadline such as IOR -D / fio runtime), "
                   f"{limits.min_duration:g} s at least",
                   {"mean_duration_s": mean, "minimum_s": limits.min_duration})


def _data_set(run: Run, memory: Memory | None, limits: Limits) -> Finding | None:
    workload = run.workload
    if memory is None or workload is None or workload.data_set is None or workload.operation.is_metadata:
        return None
    memory, why = _caching(run, memory)
    total, which = memory.total, memory.whose
    if total is None or total.magnitude == 0:  # no memory to cache in (a lab's tmpfs servers)
        return None
    ratio = (workload.data_set / total).m_as("")
    evidence = {"data_set_B": workload.data_set.m_as("B"), "memory_B": total.m_as("B"), "ratio": ratio, "memory_of": which}
    shown = f"{format_quantity(workload.data_set, Metric.SIZE)} is {ratio:.2g}x the {which} memory ({format_quantity(total, Metric.SIZE)})"
    if ratio < limits.data_set_factor:
        return Finding("SMALL-DATA-SET", Severity.WARNING, run.label,
                       f"{run.label}: its data set of {shown}, under the {limits.data_set_factor:g}x that keeps "
                       f"caches from holding it{why}.",
                       f"use a data set at least {limits.data_set_factor:g}x the aggregate memory "
                       f"({limits.read_data_set_factor:g}x for reads), or drop caches and use fresh data sets", evidence)
    if workload.operation is Operation.READ and ratio < limits.read_data_set_factor:
        return Finding("SMALL-DATA-SET", Severity.INFO, run.label,
                       f"{run.label}: its data set of {shown}{why}; for reads, {limits.read_data_set_factor:g}x and "
                       "reading the oldest data set first keep every cache out.",
                       f"read data sets {limits.read_data_set_factor:g}x the aggregate memory, oldest first", evidence)
    return None


def _caching(run: Run, memory: Memory) -> tuple[Memory, str]:
    """The memory that can cache the run's data, and why the clients' is left out where it is.

    A task that reads what a task on another node wrote (IOR -C/-Z, mdtest -N) finds nothing in
    its own node's page cache, and a write flushed before its phase ends (IOR -e, -Y) gains
    nothing from the clients' write-back cache: only the servers' memory counts then.
    """
    tags = dict(run.tags)
    operation = run.workload.operation
    if memory.clients is None:
        return memory, ""
    if operation is Operation.READ and "read_by_other_node" in tags:
        return Memory(None, memory.servers), ("; the clients' memory is left out, as each task reads what a task "
                                              f"on another node wrote ({tags['read_by_other_node']})")
    if operation is Operation.WRITE and "fsync" in tags:
        return Memory(None, memory.servers), ("; the clients' memory is left out, as the writes are flushed to "
                                              f"the servers before the phase ends ({tags['fsync']})")
    return memory, ""


def _own_writes(run: Run) -> Finding | None:
    tags = dict(run.tags)
    note = tags.get("reads_own_writes")
    if note is None or "read_by_other_node" in tags:
        return None
    return Finding("OWN-WRITES", Severity.WARNING, run.label,
                   f"{run.label} reads what the same tasks have just written ({note}): their node's caches "
                   "may still hold it, and the read then never reaches the storage.",
                   "let another node read it back (IOR -C -Q 1 on two nodes or more, mdtest -N set to the "
                   "processes per node) or drop the caches between write and read", {"note": note})


def _invalid(run: Run) -> Finding | None:
    reason = dict(run.tags).get("invalid")
    if reason is None:
        return None
    return Finding("TOOL-INVALID", Severity.WARNING, run.label,
                   f"{run.origin.tool} marked {run.label} invalid: {reason}.",
                   "rerun it under the benchmark's rules before comparing it with anything", {"reason": reason})


def _cut_short(run: Run) -> Finding | None:
    reason = dict(run.tags).get("cut_short")
    if reason is None:
        return None
    return Finding("CUT-SHORT", Severity.WARNING, run.label, f"{run.label} comes from a file that ends early: {reason}.",
                   "judge the files the whole run wrote (io500's result.txt or result_summary.txt), or run it again",
                   {"reason": reason})


def _inconsistent(run: Run) -> Finding | None:
    """The tool printed the same figure twice (fio's bw and io_bytes / runtime, IOR's rows and Summary, iperf's
    intervals and total) and its reader found them apart beyond rounding: the tag ``inconsistent`` names both."""
    both = dict(run.tags).get("inconsistent")
    if both is None:
        return None
    return Finding("INCONSISTENT-OUTPUT", Severity.WARNING, run.label,
                   f"{run.origin.tool}'s output for {run.label} disagrees with itself: {both}.",
                   "find out which figure is right (a hand-edited, merged or mangled file?) before judging the run; "
                   "rerun it if in doubt", {"figures": both})


def _misfit(run: Run, block_size: Quantity | None) -> Finding | None:
    workload = run.workload
    if block_size is None or workload is None or workload.transfer_size is None or workload.operation.is_metadata:
        return None
    size, block = round(workload.transfer_size.m_as("B")), round(block_size.m_as("B"))
    if size % block == 0 or block % size == 0:
        return None
    return Finding("TRANSFER-MISFIT", Severity.WARNING, run.label,
                   f"{run.label} moves {format_quantity(workload.transfer_size, Metric.SIZE)} per request, neither a "
                   f"multiple nor a divisor of the file system's {format_quantity(block_size, Metric.SIZE)} blocks: "
                   "requests straddle blocks (read-modify-write on writes), and throughput peaks where they match (lecture "
                   "\"Performance Analysis\", Parallel Storage Systems, 2024).",
                   f"use a transfer size that is a multiple of {format_quantity(block_size, Metric.SIZE)}",
                   {"transfer_size_B": size, "block_size_B": block})


def _range(run: Run) -> str:
    s = run.summary
    return f"{format_quantity(Q_(s.min, run.unit), run.metric)} to {format_quantity(Q_(s.max, run.unit), run.metric)}"
