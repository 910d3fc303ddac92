"""A probe session: probes measured one after another into a probe set file, sharing one time budget."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, Sequence

from probes.core.errors import ProbeError
from probes.core.measurement import Measurement
from probes.core.stats import load as load_statistics
from probes.measure.probe import MIN_REPETITIONS, TARGET, Probe, measure
from probes.measure.probeset import ProbeSetFile
from probes.measure.tool import locate

__all__ = ["Reporter", "Outcome", "run_probes", "BUDGET"]

# Default seconds for all repetitions of a probe session: the default single-node set, with
# iobound's start-up and the last repetitions' overrun, then finishes within 90 s.
BUDGET = 85.0

# Seconds a repetition is assumed to take before one of its tool has been timed: a default 1 s run and its start-up.
_FIRST_GUESS = 1.5


class Reporter(Protocol):
    """What a probe session tells its user as it goes (the CLI draws progress bars from it)."""

    def started(self, index: int, total: int, probe: Probe) -> None: ...

    def repetition(self, measurements: list[Measurement]) -> None: ...

    def finished(self, measurements: list[Measurement], reused: bool) -> None: ...

    def failed(self, probe: Probe, error: ProbeError) -> None: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a probe session produced: every measurement of the set, and the probes that failed with why."""

    measurements: tuple[Measurement, ...]
    failures: tuple[tuple[Probe, ProbeError], ...]


def run_probes(probes: Sequence[Probe], store: ProbeSetFile, reporter: Reporter, *, target: float = TARGET,
               budget: float = BUDGET) -> Outcome:
    """Measure ``probes`` in order, saving after every repetition, within ``budget`` seconds in all.

    Every probe's minimum repetitions are set aside first (timed from the same tool's
    repetitions so far); what is left over is shared equally among the probes still to run.

    Every tool is looked up before the first measurement, so a missing one stops the run at once with
    how to install it. A probe that fails (a peer that does not answer, a tool error) is reported
    and the others go on. Probes finished in ``store`` with the same commands are not run again.
    """
    for tool in sorted({p.tool for p in probes}):
        locate(tool)
    store.refuse_conflicts([name for p in probes for name in store.conflicts(p)])
    load_statistics()  # before the clock: the budget is for the probes, not for importing scipy.stats
    clock = time.monotonic()
    failures = []
    timing: dict[str, list[float]] = {}  # tool -> [repetitions, seconds]

    def minimum(p: Probe) -> float:
        reps, seconds = timing.get(p.tool, (0, 0.0))
        return MIN_REPETITIONS * (seconds / reps if reps else _FIRST_GUESS)

    for index, probe in enumerate(probes):
        reporter.started(index, len(probes), probe)
        done = store.done(probe)
        if done is not None:
            reporter.finished(done, True)
            continue
        rest = [p for p in probes[index:] if store.done(p) is None]  # finished ones cost nothing
        spare = budget - (time.monotonic() - clock) - sum(minimum(p) for p in rest)
        share = max(minimum(probe) + spare / len(rest), 0.0)  # over budget: each takes its minimum only
        previous = store.partial(probe)
        before = len(previous[probe.name].samples) if probe.name in previous else 0
        started = time.monotonic()
        try:
            measurements = measure(probe, target=target, budget=share, previous=previous,
                                   progress=lambda ms: (store.record(ms), reporter.repetition(ms)))
        except ProbeError as exc:
            failures.append((probe, exc))
            reporter.failed(probe, exc)
            continue
        store.record(measurements)
        reporter.finished(measurements, False)
        tool = timing.setdefault(probe.tool, [0, 0.0])
        tool[0] += len(measurements[0].samples) - before
        tool[1] += time.monotonic() - started
    return Outcome(tuple(store.measurements.values()), tuple(failures))
