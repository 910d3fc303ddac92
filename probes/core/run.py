"""A measured benchmark result: the workload, one sample per repetition, and where it was read."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from probes.core.outputs import csv_text
from probes.core.records import Checkpoint, Job, Placement, Training, record_json
from probes.core.samples import Repeated
from probes.core.stats import Summary
from probes.core.units import Metric
from probes.core.workload import Workload

__all__ = ["Origin", "Run", "distinct_labels", "RESULTS_VERSION", "results_body", "results_csv"]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a run was read: the file, the line (1-based, when the format has lines) and the tool."""

    path: str
    line: int | None
    tool: str
    tool_version: str | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True, slots=True)
class Run(Repeated):
    """One benchmark result. ``samples`` are in ``unit``, one per repetition, in the order measured.

    ``workload`` is None for what is not a storage workload (a network test, a timed
    command). A tool that printed only a summary of its repetitions (mdtest) gives
    ``reported`` and no samples. ``durations`` are seconds per repetition, where known.
    ``tags`` are free-form labels for people; what only some tools report is in typed records
    (:mod:`probes.core.records`), None where the tool reports none.
    """

    label: str
    workload: Workload | None
    metric: Metric
    samples: tuple[float, ...]
    unit: str
    origin: Origin
    tags: tuple[tuple[str, str], ...] = field(default=())
    reported: Summary | None = None
    durations: tuple[float, ...] = ()
    placement: Placement | None = None
    job: Job | None = None
    training: Training | None = None
    checkpoint: Checkpoint | None = None

    def __post_init__(self):
        self._check(f"Run {self.label!r}")
        if self.samples and self.reported is not None:
            raise ValueError(f"Run {self.label!r} has both samples and a reported summary; it takes one or the other.")

    def to_dict(self) -> dict:
        s = self.summary
        return {
            "label": self.label,
            "workload": None if self.workload is None else self.workload.to_dict(),
            "metric": self.metric.name.lower(),
            "unit": self.unit,
            "samples": list(self.samples),
            "summary": {"n": s.n, "mean": s.mean, "std": s.std, "min": s.min, "max": s.max,
                        "ci95": None if s.ci_low is None else [s.ci_low, s.ci_high],
                        "source": "samples" if self.samples else "reported by the tool"},
            "durations_s": list(self.durations),
            "origin": {"path": self.origin.path, "line": self.origin.line,
                       "tool": self.origin.tool, "tool_version": self.origin.tool_version},
            "tags": dict(self.tags),
            **{name: record_json(getattr(self, name)) for name in RECORDS},
        }


def distinct_labels(runs: list[Run]) -> list[Run]:
    """The runs with every shared label made unique: ``(line N)`` added where the origin has a line, else ``#n``."""
    shared = Counter(run.label for run in runs)
    seen: Counter[str] = Counter()
    distinct = []
    for run in runs:
        if shared[run.label] == 1:
            distinct.append(run)
            continue
        seen[run.label] += 1
        suffix = f"(line {run.origin.line})" if run.origin.line else f"#{seen[run.label]}"
        distinct.append(replace(run, label=f"{run.label} {suffix}"))
    return distinct


# results format history (the body is results_body's; results_csv writes the same runs as a table):
#   1.0  first version
#   1.1  workloads gain shared_directory (null when not known); so does the CSV
#   1.2  workloads gain read_share (operation read+write; null otherwise), and so does the CSV, whose
#        runs' tags follow its columns
#   1.3  a run's typed records beside its tags, null where its tool reports none: placement (the processes a
#        result states, and how check placed them), job (a Darshan log's counters), training and checkpoint
#        (DLIO's); their values leave the tags. The CSV gives a placement's processes a column of its own
RESULTS_VERSION = "1.3"
# The records a run may carry (Run's fields), in the order results documents give them.
RECORDS = ("placement", "job", "training", "checkpoint")
CSV_COLUMNS = ("run", "op", "transfer_size", "nodes", "ppn", "queue_depth", "access", "direct", "shared_file",
               "shared_directory", "read_share", "data_set", "duration", "value", "unit", "statistic", "n", "tool", "tool_version", "source")


def results_body(runs: list[Run], errors: list[str]) -> dict:
    """The body of an iobound/results document: every run read, and the files that could not be read."""
    return {"runs": [r.to_dict() for r in runs], "errors": list(errors)}


def results_csv(runs: list[Run]) -> str:
    """A results table: a row per repetition (or one row with the reported mean), with units spelled out;
    the runs' tags follow as columns of their own, which reading the table back keeps as tags, and so do the
    processes of their placements (a ``processes`` column, read back as the placement)."""
    placed = ("processes",) if any(r.placement for r in runs) else ()
    tags = tuple(dict.fromkeys(key for r in runs for key, _ in r.tags if key not in CSV_COLUMNS + placed))
    columns = CSV_COLUMNS + placed + tags
    rows: list = [columns]
    for r in runs:
        w = r.workload
        fields = {key: value for key, value in r.tags if key in tags}
        fields |= {"processes": r.placement.processes} if r.placement else {}
        fields |= {"run": r.label, "unit": r.unit, "tool": r.origin.tool, "tool_version": r.origin.tool_version or "",
                   "source": str(r.origin)}
        if w is not None:
            fields |= {"op": w.operation.value, "nodes": w.nodes or "", "ppn": w.ppn, "queue_depth": w.queue_depth,
                       "access": w.access.value, "direct": _flag(w.direct), "shared_file": _flag(w.shared_file),
                       "shared_directory": _flag(w.shared_directory), "read_share": w.read_share or "",
                       "transfer_size": _bytes(w.transfer_size), "data_set": _bytes(w.data_set)}
        if r.samples:
            durations = r.durations or ("",) * len(r.samples)
            for value, seconds in zip(r.samples, durations):
                rows.append([{**fields, "value": value, "duration": f"{seconds} s" if seconds != "" else ""}.get(c, "")
                             for c in columns])
        else:
            row = {**fields, "value": r.summary.mean, "statistic": "mean", "n": r.summary.n}
            rows.append([row.get(c, "") for c in columns])
    return csv_text(rows, preamble=f"# iobound/results {RESULTS_VERSION} as CSV\n")


def _flag(value: bool | None) -> str:
    return "" if value is None else str(value).lower()


def _bytes(size) -> str:
    """A size in bytes, exact: ``2097152 B``, not a rounded ``2.09715e+06 B``."""
    if size is None:
        return ""
    value = size.m_as("B")
    return f"{int(value) if float(value).is_integer() else value!r} B"
