"""A measured benchmark result: the workload, one sample per repetition, and where it was read."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from probes.core.samples import Repeated
from probes.core.stats import Summary
from probes.core.units import Metric
from probes.core.workload import Workload

__all__ = ["Origin", "Run", "distinct_labels"]


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
