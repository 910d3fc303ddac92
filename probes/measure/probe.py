"""A probe: one repeatable measurement with a tool, repeated until its confidence interval is narrow enough."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Mapping

from probes.core.host import this_host
from probes.core.measurement import Measurement, Provenance
from probes.measure.tool import tool_version
from probes.core.stats import load as load_statistics, summarize
from probes.core.units import Metric

__all__ = ["Output", "Probe", "measure", "MIN_REPETITIONS", "TARGET"]

# At least three repetitions: fewer give no honest interval (seeds/000 and the lecture use three or more).
MIN_REPETITIONS = 3
# Default precision target: the 95 % interval's half-width under 5 % of the mean.
TARGET = 0.05


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

    The precision target applies to the first output; the others ride along.
    """

    title: str
    tool: str
    commands: tuple[tuple[str, ...], ...]
    outputs: tuple[Output, ...]
    once: Callable[[], Mapping[str, float]]
    parameters: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.outputs[0].name


def measure(probe: Probe, *, target: float = TARGET, budget: float = 10.0, max_repetitions: int = 100,
            previous: Mapping[str, Measurement] | None = None,
            progress: Callable[[list[Measurement]], None] | None = None) -> list[Measurement]:
    """Repeat ``probe`` until the 95 % half-width is under ``target`` (relative) or ``budget`` seconds are spent.

    At least :data:`MIN_REPETITIONS` are taken whatever the budget. ``previous`` holds the
    incomplete measurements of an interrupted run with the same commands, which are continued.
    ``progress`` gets the measurements so far (``complete=False``) after every repetition.
    """
    previous = previous or {}
    samples = {o.name: list(previous[o.name].samples) if o.name in previous else [] for o in probe.outputs}
    old = previous.get(probe.name)
    started_at = old.provenance.started_at if old else datetime.now(timezone.utc).isoformat(timespec="seconds")
    spent_before = old.provenance.duration if old else 0.0
    version = tool_version(probe.tool)
    load_statistics()  # before the clock: the budget is for repetitions, not for importing scipy.stats
    clock = time.monotonic()
    done = 0

    def snapshot(complete: bool) -> list[Measurement]:
        provenance = Provenance(probe.tool, version, probe.commands, this_host(), started_at,
                                spent_before + time.monotonic() - clock)
        return [Measurement(o.name, o.description, o.metric, o.unit, tuple(samples[o.name]), provenance,
                            target if o is probe.outputs[0] else None, complete, dict(probe.parameters))
                for o in probe.outputs if samples[o.name]]

    while True:
        n = len(samples[probe.name])
        if n >= MIN_REPETITIONS:
            width = summarize(samples[probe.name]).relative_half_width
            elapsed = time.monotonic() - clock
            per_repetition = elapsed / done if done else 0.0
            if (width is not None and width <= target) or n >= max_repetitions or elapsed + per_repetition >= budget:
                break
        values = probe.once()
        for output in probe.outputs:
            samples[output.name].append(float(values[output.name]))
        done += 1
        if progress:
            progress(snapshot(False))
    return snapshot(True)
