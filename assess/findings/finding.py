"""What a finding is (a stable code, a severity, a sentence with its numbers, a remedy), and a run's judgement
(over a job's part of the system, for a Darshan log)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from probes.core.units import quantity_json

if TYPE_CHECKING:
    from pint import Quantity

    from probes.core.run import Run
    from models.ceiling import Ceiling, Implied
    from topologies.topology import Topology

__all__ = ["Severity", "Finding", "Part", "Judgement", "CODES", "CEILING_CODES"]


class Severity(enum.IntEnum):
    """How much a finding matters; ordered, so ``--fail-on warning`` also fails on errors."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Finding:
    """One statement about one run: ``message`` says it with numbers and units, ``remedy`` what to do.

    ``implied`` is a POSSIBLE-IF's: what the run needs of each figure stated as a range (none
    when no one figure decides it alone); its JSON is the evidence's ``implied`` list.
    """

    code: str
    severity: Severity
    run: str
    message: str
    remedy: str
    evidence: dict = field(default_factory=dict)
    implied: tuple[Implied, ...] | None = None

    def to_dict(self) -> dict:
        implied = {} if self.implied is None else {"implied": [n.to_dict() for n in self.implied]}
        return {"code": self.code, "severity": self.severity.label, "run": self.run, "message": self.message,
                "remedy": self.remedy, "evidence": self.evidence | implied}


# The codes of a benchmark's run, as the face's docstring and the README's table list them (a test holds them to
# it): against its ceiling (assess.findings.ceiling), against the parts that existed (hardware), on its own (alone),
# beside others (siblings). A job's and a
# training run's own codes are application.JOB_CODES and training.TRAINING_CODES.
CEILING_CODES = ("ABOVE-CEILING", "POSSIBLE-IF", "AT-CEILING", "BELOW-CEILING", "FAR-BELOW")
CODES = (*CEILING_CODES, "IMPLAUSIBLE-HARDWARE", "FEW-REPETITIONS", "HIGH-VARIATION", "MAX-HEADLINE", "SHORT-RUN", "SMALL-DATA-SET", "OWN-WRITES",
         "TOOL-INVALID", "CUT-SHORT", "INCONSISTENT-OUTPUT", "TRANSFER-MISFIT", "UNIT-MIXUP", "RANDOM-NOT-SLOWER", "READ-FAR-FASTER")


@dataclass(frozen=True)
class Part:
    """The part of a system a job could use: the topology its ceiling is computed on, and in words which part.

    ``targets`` is (device group, OSTs the job used, OSTs it has) where the part is a Lustre job's OSTs.
    """

    topology: Topology
    said: str
    targets: tuple[str, int, int] | None = None

    def to_dict(self) -> dict:
        group, used, of = self.targets or (None, None, None)
        return {"said": self.said, "target_group": group, "targets_used": used, "targets": of}


@dataclass(frozen=True)
class Judgement:
    """A run against its ceiling (the ratio and its confidence interval) and every finding about it.

    ``ceiling`` is None when the model has none for the run; ``no_ceiling`` then says why. ``part`` is the part of
    the system a job's ceiling is over (a Darshan log's: its Lustre OSTs, or the whole system), None for a benchmark.
    """

    run: Run
    measured: Quantity | None
    ceiling: Ceiling | None
    ratio: float | None
    ratio_interval: tuple[float, float] | None
    findings: tuple[Finding, ...]
    no_ceiling: str = ""
    part: Part | None = None

    @property
    def worst(self) -> Severity | None:
        """The severity of its gravest finding; None without findings: what marks its row."""
        return max((f.severity for f in self.findings), default=None)

    def to_dict(self) -> dict:
        return {"run": self.run.to_dict(), "measured": quantity_json(self.measured),
                "ceiling": None if self.ceiling is None else self.ceiling.to_dict(), "no_ceiling": self.no_ceiling or None,
                "ratio": self.ratio, "ratio_ci95": list(self.ratio_interval) if self.ratio_interval else None,
                "findings": [f.to_dict() for f in self.findings],
                "part": None if self.part is None else self.part.to_dict()}
