"""Measurement: one metric of one component, its raw samples, and exactly how and where it was measured."""

from __future__ import annotations

from dataclasses import dataclass, field

from probes.core.host import Host
from probes.core.samples import Repeated
from probes.core.units import Metric

__all__ = ["Provenance", "Measurement"]


@dataclass(frozen=True, slots=True)
class Provenance:
    """The tool, its version, the exact commands of one repetition, the host, the start (UTC, ISO 8601) and total seconds."""

    tool: str
    tool_version: str
    commands: tuple[tuple[str, ...], ...]
    host: Host
    started_at: str
    duration: float

    def to_dict(self) -> dict:
        return {"tool": self.tool, "tool_version": self.tool_version, "commands": [list(c) for c in self.commands],
                "host": self.host.to_dict(), "started_at": self.started_at, "duration_s": self.duration}

    @classmethod
    def from_dict(cls, doc: dict) -> "Provenance":
        return cls(doc["tool"], doc["tool_version"], tuple(tuple(c) for c in doc["commands"]),
                   Host.from_dict(doc["host"]), doc["started_at"], float(doc["duration_s"]))


@dataclass(frozen=True, slots=True)
class Measurement(Repeated):
    """Repetitions of one figure, e.g. ``iperf3.send.p1`` in bit/s; ``samples`` are in ``unit``, in the order measured.

    ``target`` is the relative half-width of the 95 % interval the repetitions aimed for (None for
    a figure that rode along with another's repetitions);
    ``complete`` is False while a probe run that was interrupted has yet to finish it.
    ``times`` are the seconds from the session's start at which each repetition began, and
    ``others`` what other processes took of the CPUs during it (in CPUs), where the session knew.
    """

    name: str
    description: str
    metric: Metric
    unit: str
    samples: tuple[float, ...]
    provenance: Provenance
    target: float | None = None
    complete: bool = True
    parameters: dict = field(default_factory=dict)
    times: tuple[float, ...] = ()
    others: tuple[float, ...] = ()

    def __post_init__(self):
        self._check(f"Measurement {self.name!r}")
        for name in ("times", "others"):
            if getattr(self, name) and len(getattr(self, name)) != len(self.samples):
                raise ValueError(f"Measurement {self.name!r} has {len(self.samples)} samples but "
                                 f"{len(getattr(self, name))} {name}.")

    @property
    def unstable(self) -> str:
        """UNSTABLE-MACHINE: why its repetitions do not measure the machine in one steady state, or "": a trend, a
        change or values that follow the neighbours (:func:`probes.core.stats.drift`), or neighbours that took a busy
        machine's share of the CPUs (:data:`probes.core.machine.BUSY`) during them, whose work its figure then holds."""
        from probes.core.machine import BUSY
        from probes.core.stats import drift

        if not self.times:
            return ""
        drifted = drift(self.samples, self.times, self.others, rises=self.metric is Metric.LATENCY)
        if drifted or not self.others:
            return drifted
        taken = sum(self.others) / len(self.others)
        cpus = max(int(self.parameters.get("cpus", self.provenance.host.cpus)), 1)  # those it ran on (--cpus)
        if taken / cpus < BUSY:
            return ""
        return (f"other processes took {taken:.2f} of its {cpus} CPUs during its repetitions ({taken / cpus:.0%}): "
                "its figure holds their work as much as the machine's")

    @property
    def half_width(self) -> float | None:
        """Half-width of the 95 % confidence interval relative to the mean; None with fewer than two samples."""
        return self.summary.relative_half_width

    @property
    def reached(self) -> bool:
        """Whether the repetitions met the target precision on a steady machine: never with UNSTABLE-MACHINE, nor
        (where their times are known) with fewer repetitions than a drift test needs to see that machine."""
        from probes.core.stats import DRIFT_LEAST

        return self.target is None or (self.half_width is not None and self.half_width <= self.target
                                       and (not self.times or self.summary.n >= DRIFT_LEAST) and not self.unstable)

    def to_dict(self) -> dict:
        s = self.summary
        return {
            "name": self.name, "description": self.description, "metric": self.metric.name.lower(),
            "unit": self.unit, "samples": list(self.samples),
            "summary": {"n": s.n, "mean": s.mean, "std": s.std, "min": s.min, "max": s.max, "cv": s.cv,
                        "ci95": None if s.ci_low is None else [s.ci_low, s.ci_high],
                        "relative_half_width": self.half_width},
            "target": self.target, "reached": self.reached, "complete": self.complete, "unstable": self.unstable or None,
            "parameters": self.parameters, "provenance": self.provenance.to_dict(),
            "times_s": list(self.times), "others_cpus": list(self.others),
        }

    @classmethod
    def from_dict(cls, doc: dict) -> "Measurement":
        """Read back what :meth:`to_dict` wrote; KeyError, ValueError or TypeError for anything else."""
        return cls(doc["name"], doc["description"], Metric[doc["metric"].upper()], doc["unit"],
                   tuple(float(x) for x in doc["samples"]), Provenance.from_dict(doc["provenance"]),
                   doc.get("target"), bool(doc.get("complete", True)), dict(doc.get("parameters", {})),
                   tuple(float(x) for x in doc.get("times_s", ())), tuple(float(x) for x in doc.get("others_cpus", ())))

