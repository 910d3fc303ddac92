"""A probe: one repeatable measurement with a tool, repeated until its confidence interval is narrow enough."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from probes.core.units import Metric

__all__ = ["Output", "Probe", "MIN_REPETITIONS", "MAX_REPETITIONS", "TARGET"]

# At least three repetitions: fewer give no honest interval (the lecture and the IOR studies it cites use three or more).
MIN_REPETITIONS = 3
# Default precision target: the 95 % interval's half-width under 5 % of the mean.
TARGET = 0.05
# Repetitions of one figure at most, however noisy: beyond, more of them tell nothing new.
MAX_REPETITIONS = 100


@dataclass(frozen=True, slots=True)
class Output:
    """One figure a repetition yields, e.g. the IOPS and the context switches of one fio run."""

    name: str
    description: str
    metric: Metric
    unit: str


@dataclass(frozen=True)
class Probe:
    """What to run once per repetition; ``once`` returns one sample per output name.

    The precision target applies to the first output; the others ride along. ``check``, where
    given, raises ProbeError at once when the probe cannot run (a peer's server not answering),
    before a session spends any of its budget.
    """

    title: str
    tool: str
    commands: tuple[tuple[str, ...], ...]
    outputs: tuple[Output, ...]
    once: Callable[[], Mapping[str, float]]
    parameters: dict = field(default_factory=dict)
    check: Callable[[], None] | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return self.outputs[0].name
