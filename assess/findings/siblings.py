"""Findings about a run beside others: unit mix-ups, random reads as fast as sequential, reads far above writes.

Runs are siblings when one file holds both and their workloads differ at most in the
operation: IOR's write and read of one test, fio's jobs of one file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from probes.core.run import Run
from probes.core.stats import Summary
from probes.core.units import Q_, format_quantity
from probes.core.workload import Access, Operation
from assess.findings import TOLERANCE, Finding, Severity, bandwidth_summary

__all__ = ["UNIT_FACTORS", "SMALL_RANDOM", "READ_OVER_WRITE", "unit_factor", "sibling_findings", "ceiling_mixup"]

# Ratios that mean one figure was written in another unit than the other: kB vs KiB, MB vs MiB,
# GB vs GiB, bit vs byte, Mbit vs MiB (8 x 1.048576) and a missing or extra thousand.
UNIT_FACTORS = {1.024: "kB vs KiB", 1.048576: "MB vs MiB", 1.073741824: "GB vs GiB", 8.0: "bits vs bytes",
                8.388608: "Mbit vs MiB", 1000.0: "a factor 1000 (k or M dropped or added)"}
# How close a ratio must come to a factor (relative) to be taken for it: printed figures
# have 3 to 6 digits, so 0.2 % is loose enough to catch them and tight enough to be rare by chance.
CLOSE = 0.002
# Random reads of at most this size should be slower than sequential reads on any device with seeks or readahead.
SMALL_RANDOM = Q_(64, "KiB")
# Tags that note something about one run, not what kind of run it is: a write fsync'ed on close and the
# read of its files by another node are still the write and read of the same files.
NOTES = {"reads_own_writes", "read_by_other_node", "fsync", "json_repaired", "fio_error", "invalid", "statistic"}
# Reads this many times faster than the writes of the same files come from somewhere other than the storage.
READ_OVER_WRITE = 4.0


@dataclass(frozen=True)
class _Figure:
    run: Run
    summary: Summary  # in B/s

    @property
    def noise(self) -> float:
        """The relative half-width of the mean's interval; for a single value, the 5 % of a quiet system (TOLERANCE)."""
        width = self.summary.relative_half_width
        return TOLERANCE if width is None else width


def unit_factor(ratio: float, noise: float) -> tuple[float, str] | None:
    """The unit factor (and what it means) that ``ratio`` or its inverse matches, if any.

    A factor counts only when it stands out of the noise (the relative uncertainty of the
    ratio): a ratio of 1.048 between figures known to ±5 % says nothing about units.
    """
    if not ratio > 0 or not math.isfinite(ratio):
        return None
    for value in (ratio, 1 / ratio):
        for factor, meaning in UNIT_FACTORS.items():
            if abs(value / factor - 1) <= CLOSE and abs(value - 1) > 2 * noise:
                return factor, meaning
    return None


def ceiling_mixup(run: Run, ratio: float, noise: float, over_least: float | None = None) -> Finding | None:
    """UNIT-MIXUP when a run's ratio to its ceiling is a unit factor: the run or the topology is in the wrong unit.

    A ceiling that is a range (``over_least``: the ratio to its least end) must give the same factor at both ends: a
    ratio to one end of a range three decades wide says nothing of a unit."""
    match = unit_factor(ratio, noise)
    if match is None or (over_least is not None and unit_factor(over_least, noise) != match):
        return None
    factor, meaning = match
    return Finding("UNIT-MIXUP", Severity.WARNING, run.label,
                   f"{run.label} is {ratio:.4g}x its ceiling, which is {meaning} ({factor:g}): the run or a capacity "
                   "of the topology is likely written in the other unit.",
                   "check the unit the tool printed against the one in the results or topology file",
                   {"ratio": ratio, "factor": factor, "meaning": meaning})


def sibling_findings(runs: list[Run]) -> dict[int, list[Finding]]:
    """Findings by the index of the run they concern."""
    figures = {i: _Figure(run, s) for i, run in enumerate(runs)
               if run.workload is not None and (s := bandwidth_summary(run)) is not None}
    found: dict[int, list[Finding]] = {}
    for i, finding in [*_mixups(figures), *_random_reads(figures), *_reads_over_writes(figures)]:
        found.setdefault(i, []).append(finding)
    return found


def _same(a: Run, b: Run, *, but_operation: bool = False) -> bool:
    """Same file, same tags (the system a table row names, IOR's tasks) but notes, same records (a Darshan job's
    module, a DLIO run's figures), same workload (but the operation)."""
    other = b.workload
    if but_operation:
        other = replace(other, operation=a.workload.operation, data_set=a.workload.data_set)
    return a.origin.path == b.origin.path and a.workload == other and _kind(a) == _kind(b)


def _kind(run: Run) -> tuple:
    return {k: v for k, v in run.tags if k not in NOTES}, run.placement, run.job, run.training, run.checkpoint


def _partners(figures: dict[int, _Figure], chosen, partner):
    """Each figure ``chosen`` accepts, with the first other figure (earlier ones first) that ``partner`` pairs with it."""
    for i, a in figures.items():
        if chosen(a):
            b = next((b for j, b in figures.items() if j != i and partner(a, b, j < i)), None)
            if b is not None:
                yield i, a, b


def _mixups(figures: dict[int, _Figure]):
    """A run whose mean is a unit factor away from an earlier run of the same workload."""
    def partner(a, b, earlier):
        return earlier and _same(a.run, b.run) and unit_factor(a.summary.mean / b.summary.mean, max(a.noise, b.noise))

    for i, a, b in _partners(figures, lambda a: True, partner):
        factor, meaning = unit_factor(a.summary.mean / b.summary.mean, max(a.noise, b.noise))
        yield i, Finding("UNIT-MIXUP", Severity.WARNING, a.run.label,
                         f"{a.run.label} ({format_quantity(Q_(a.summary.mean, 'B/s'))}) is "
                         f"{a.summary.mean / b.summary.mean:.4g}x {b.run.label} "
                         f"({format_quantity(Q_(b.summary.mean, 'B/s'))}), the same workload: "
                         f"{meaning} ({factor:g}), likely a unit mixed up.",
                         "check the unit each figure was written in", {"sibling": b.run.label, "factor": factor})


def _random_reads(figures: dict[int, _Figure]):
    """Small random reads at or above sequential reads of the same file, nodes and processes, beyond noise."""
    def small_random(f):
        w = f.run.workload
        return (w.operation is Operation.READ and w.access is Access.RANDOM and w.transfer_size is not None
                and w.transfer_size <= SMALL_RANDOM)

    def faster_than(small, seq, earlier):
        v, w = seq.run.workload, small.run.workload
        if v.operation is not Operation.READ or v.access is not Access.SEQUENTIAL or (v.nodes, v.ppn) != (w.nodes, w.ppn) \
                or small.run.origin.path != seq.run.origin.path or _kind(small.run) != _kind(seq.run):
            return False
        low = small.summary.ci_low if small.summary.ci_low is not None else small.summary.mean
        high = seq.summary.ci_high if seq.summary.ci_high is not None else seq.summary.mean
        return low >= high

    for i, small, seq in _partners(figures, small_random, faster_than):
        yield i, Finding(
            "RANDOM-NOT-SLOWER", Severity.WARNING, small.run.label,
            f"{small.run.label} reads {format_quantity(Q_(small.summary.mean, 'B/s'))} in random "
            f"{format_quantity(small.run.workload.transfer_size)} requests, at or above the sequential "
            f"{format_quantity(Q_(seq.summary.mean, 'B/s'))} of {seq.run.label}: no device seeks that fast, "
            "so the data came from a cache (or the file is sparse).",
            "read a data set larger than the memory, written in full (no holes), with caches dropped",
            {"sequential": seq.run.label, "random_B_s": small.summary.mean, "sequential_B_s": seq.summary.mean})


def _reads_over_writes(figures: dict[int, _Figure]):
    """Reads of the same files (same file, same workload but the operation) far faster than their writes."""
    def ratio(read, write):
        return read.summary.mean / write.summary.mean if write.summary.mean else math.inf

    def slow_write(read, write, earlier):
        return (write.run.workload.operation is Operation.WRITE and _same(read.run, write.run, but_operation=True)
                and ratio(read, write) > READ_OVER_WRITE)

    for i, read, write in _partners(figures, lambda f: f.run.workload.operation is Operation.READ, slow_write):
        yield i, Finding(
            "READ-FAR-FASTER", Severity.WARNING, read.run.label,
            f"{read.run.label} ({format_quantity(Q_(read.summary.mean, 'B/s'))}) is {ratio(read, write):.3g}x "
            f"{write.run.label} ({format_quantity(Q_(write.summary.mean, 'B/s'))}) of the same files: more "
            f"than the {READ_OVER_WRITE:g}x devices show: the reads were served from a cache, the files "
            "are sparse (holes read as zeros without touching the disks), or the writes were held back.",
            "drop caches (clients and servers) between write and read, read from another node, and "
            "write files in full", {"write": write.run.label, "ratio": ratio(read, write)})
