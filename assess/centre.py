"""A centre's jobs in sum: how they spread over fractions of their ceilings, the jobs that lost the most time against
their ceilings, how often each finding fires, the stripe settings in use; and the review's text, JSON and CSV.

:class:`Centre` takes the jobs' results one at a time and keeps counts and the top jobs only, so that a summary of a
hundred thousand logs holds as little as one of a thousand (the unreadable logs are all named: there are few).
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from probes.core.units import Q_, format_quantity
from assess.render import duration
from assess.darshan_review import JUDGED, UNJUDGED, UNREADABLE, Basis, JobResult

__all__ = ["Centre", "most_first", "band_rows", "top_rows", "BAND_HEADERS", "TOP_HEADERS", "BANDS",
           "FRACTIONS", "TOP", "render", "centre_head", "csv_row", "DARSHAN_REVIEW_VERSION", "CSV_HEADERS"]

# The bands of the fraction of its ceiling a job reached: the lower bound of each (the last, above the ceiling).
FRACTIONS = (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 1.0)
# The jobs the summary names, by time lost against their ceilings.
TOP = 10
CSV_HEADERS = ("path", "status", "reason", "job_id", "processes", "file_system", "topology", "run", "rate_MiB_s",
               "ceiling_MiB_s", "fraction", "io_time_s", "time_lost_s", "findings", "stripe_counts", "stripe_sizes_B")


def most_first(counts: Counter) -> list[tuple]:
    """``counts``' keys and counts, the most first and ties by key: the same whatever order the jobs came in (a pool
    and Dask finish them in different orders)."""
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))


def _band(fraction: float) -> str:
    """``10–25 %``: the band of :data:`FRACTIONS` that holds ``fraction`` (``≥ 100 %`` above the ceiling)."""
    bounds = [b for b in FRACTIONS if fraction >= b]
    low = bounds[-1] if bounds else 0.0
    if low >= FRACTIONS[-1]:
        return f"≥ {FRACTIONS[-1]:.0%}"
    high = FRACTIONS[FRACTIONS.index(low) + 1]
    return f"{low:.0%}–{high:.0%}"


BANDS = tuple(_band(b) for b in FRACTIONS)


@dataclass
class Centre:
    """The running sum of a review: counts by status, band, finding and stripe setting; the top jobs by time lost;
    every unreadable log with its reason; and the logs judged now against those that stood in the index. The time lost
    is summed exactly (a float's sum depends on the order of its terms, which the engines do not keep)."""

    top: int = TOP
    statuses: Counter = field(default_factory=Counter)
    bands: Counter = field(default_factory=Counter)
    findings: Counter = field(default_factory=Counter)
    severities: Counter = field(default_factory=Counter)  # jobs by their gravest finding's severity
    stripe_counts: Counter = field(default_factory=Counter)
    stripe_sizes: Counter = field(default_factory=Counter)
    file_systems: Counter = field(default_factory=Counter)
    unjudged: Counter = field(default_factory=Counter)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    lost: list[tuple[float, str, JobResult]] = field(default_factory=list)  # a heap of the top jobs by time lost
    lost_sum: Fraction = Fraction(0)
    judged_now: int = 0

    def add(self, result: JobResult, *, now: bool) -> None:
        self.statuses[result.status] += 1
        self.judged_now += now
        if result.status == UNREADABLE:
            self.unreadable.append((result.path, result.reason))
            return
        self.file_systems[result.file_system or "(none)"] += 1
        self.findings.update(result.findings)
        if result.worst:
            self.severities[result.worst] += 1
        self.stripe_counts.update(result.stripe_counts)
        self.stripe_sizes.update(result.stripe_sizes)
        if result.status == UNJUDGED:
            self.unjudged[result.reason.split(";")[0]] += 1
            return
        self.bands[_band(result.fraction)] += 1
        self.lost_sum += Fraction(result.time_lost)
        entry = (result.time_lost, result.path, result)
        if len(self.lost) < self.top:
            heapq.heappush(self.lost, entry)
        elif entry[:2] > self.lost[0][:2]:
            heapq.heapreplace(self.lost, entry)

    @property
    def by_status(self) -> str:
        """``120 judged, 3 unjudged, 1 unreadable``: the logs by status."""
        return ", ".join(f"{self.statuses[s]} {s}" for s in (JUDGED, UNJUDGED, UNREADABLE))

    @property
    def time_lost(self) -> float:
        """Seconds lost against the ceilings by every judged job."""
        return float(self.lost_sum)

    @property
    def worst(self) -> list[JobResult]:
        """The top jobs by time lost against their ceilings, the most first."""
        return [r for _, _, r in sorted(self.lost, key=lambda e: (-e[0], e[1]))]

    def to_dict(self) -> dict:
        """Counts keyed by data (codes, mount points, stripe settings) are lists of records, never maps."""
        return {"logs": sum(self.statuses.values()), "judged_now": self.judged_now,
                "statuses": {s: self.statuses[s] for s in (JUDGED, UNJUDGED, UNREADABLE)},
                "fractions": [{"from": low, "to": high, "jobs": self.bands[band]}
                              for band, low, high in zip(BANDS, FRACTIONS, (*FRACTIONS[1:], None))],
                "time_lost_s": self.time_lost,
                "top_time_lost": [{"path": r.path, "job_id": r.job_id, "run": r.run, "time_lost_s": r.time_lost,
                                   "fraction": r.fraction} for r in self.worst],
                "findings": [{"code": code, "jobs": n} for code, n in most_first(self.findings)],
                "stripe_counts": [{"stripe_count": k, "jobs": n} for k, n in sorted(self.stripe_counts.items())],
                "stripe_sizes": [{"stripe_size": k, "jobs": n} for k, n in sorted(self.stripe_sizes.items())],
                "file_systems": [{"mount": fs, "jobs": n} for fs, n in most_first(self.file_systems)],
                "unjudged": [{"reason": why, "jobs": n} for why, n in most_first(self.unjudged)],
                "unreadable": [{"path": p, "reason": why} for p, why in sorted(self.unreadable)]}


BAND_HEADERS = ("fraction", "jobs", "share")
TOP_HEADERS = ("time lost", "fraction", "job", "run", "log")


def band_rows(centre: Centre) -> list[tuple[str, str, str]]:
    """The judged jobs per band of the fraction of their ceilings: :data:`BAND_HEADERS`."""
    judged = max(centre.statuses[JUDGED], 1)
    return [(band, str(centre.bands[band]), f"{centre.bands[band] / judged:.0%}") for band in BANDS]


def top_rows(centre: Centre) -> list[tuple[str, ...]]:
    """The jobs that lost the most time against their ceilings, the most first: :data:`TOP_HEADERS`."""
    return [(duration(r.time_lost), f"{r.fraction:.1%}", str(r.job_id), r.run or "", r.path) for r in centre.worst]


def render(centre: Centre, source: str, basis: Basis, shown: int = 20) -> str:
    """The review in words: the logs by status, the spread over fractions of the ceilings, the top jobs by time lost,
    the findings, the stripe settings, the file systems, and every unreadable log with its reason (the first
    ``shown``; --json has them all)."""
    from assess.render import table

    total = sum(centre.statuses.values())
    lines = [f"logs: {source} ({total} logs; {centre.judged_now} judged now, {total - centre.judged_now} from the "
             f"index)", f"judged on: {basis.said}", "", centre.by_status]
    judged = centre.statuses[JUDGED]
    if judged:
        lines += ["", "jobs by the fraction of their ceiling they reached:",
                  table(BAND_HEADERS, band_rows(centre), right=(1, 2))]
        lines += ["", f"time lost against the ceilings: {duration(centre.time_lost)} in all; the most:",
                  table(TOP_HEADERS, top_rows(centre), right=(0, 1))]
    if centre.findings:
        lines += ["", "findings (jobs they fire for):",
                  *(f"  {code:24} {count}" for code, count in most_first(centre.findings))]
    if centre.stripe_counts or centre.stripe_sizes:
        lines += ["", "Lustre stripe settings in use (jobs):",
                  "  counts: " + ", ".join(f"{k}: {v}" for k, v in sorted(centre.stripe_counts.items())),
                  "  sizes: " + ", ".join(f"{format_quantity(Q_(k, 'B'))}: {v}"
                                          for k, v in sorted(centre.stripe_sizes.items()))]
    if centre.file_systems:
        lines += ["", "file systems (jobs, by the mount point under which they moved the most bytes):",
                  *(f"  {fs}: {n}" for fs, n in most_first(centre.file_systems))]
    if centre.unjudged:
        lines += ["", "not judged (why):", *(f"  {n}: {why}" for why, n in most_first(centre.unjudged))]
    if centre.unreadable:
        lines += ["", "unreadable logs:"]
        lines += [f"  {path}: {why}" for path, why in sorted(centre.unreadable)[:shown]]
        if len(centre.unreadable) > shown:
            lines.append(f"  and {len(centre.unreadable) - shown} more (--json or --csv names them all)")
    return "\n".join(lines)



# darshan-review format history:
#   1.0  first version: the basis (topology or mount table), index, every job's result and the centre's summary
#   1.1  the jobs in the order the review came to them (written as each is judged, not held to be sorted by path);
#        the centre's summary after them
DARSHAN_REVIEW_VERSION = "1.1"


def centre_head(source: str, index: str, basis: Basis) -> dict:
    """The keys of an iobound/darshan-review document before its jobs (each :meth:`JobResult.to_dict`, as judged) and
    the centre's sums after them (``centre``: :meth:`Centre.to_dict`)."""
    return {"logs": source, "index": index, "topology": basis.topology,
            "mounts": [{"mount": m, "topology": t} for m, t in basis.mounts]}


def csv_row(j: JobResult) -> tuple:
    """A log's row of the review's CSV (under :data:`CSV_HEADERS`)."""
    def mib(value):
        return "" if value is None else f"{value / 2**20:.6g}"

    return (j.path, j.status, j.reason, j.job_id, j.processes, j.file_system, j.topology, j.run, mib(j.rate),
            mib(j.ceiling), "" if j.fraction is None else f"{j.fraction:.6g}",
            "" if j.io_time is None else f"{j.io_time:.6g}", "" if j.time_lost is None else f"{j.time_lost:.6g}",
            " ".join(j.findings), " ".join(map(str, j.stripe_counts)), " ".join(map(str, j.stripe_sizes)))
