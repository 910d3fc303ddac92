"""A probe run: probes measured one after another into a probe set file, sharing one time budget."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, Sequence

from probes.errors import ProbeError
from probes.measurement import Measurement
from probes.probe import TARGET, Probe, measure
from probes.probeset import ProbeSetFile
from probes.runner import locate

__all__ = ["Reporter", "Outcome", "run_probes"]


class Reporter(Protocol):
    """What a probe run tells its user as it goes (the CLI draws progress bars from it)."""

    def started(self, index: int, total: int, probe: Probe) -> None: ...

    def repetition(self, measurements: list[Measurement]) -> None: ...

    def finished(self, measurements: list[Measurement], reused: bool) -> None: ...

    def failed(self, probe: Probe, error: ProbeError) -> None: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a probe run produced: every measurement of the set, and the probes that failed with why."""

    measurements: tuple[Measurement, ...]
    failures: tuple[tuple[Probe, ProbeError], ...]


def run_probes(probes: Sequence[Probe], store: ProbeSetFile, reporter: Reporter, *, target: float = TARGET,
               budget: float = 90.0) -> Outcome:
    """Measure ``probes`` in order, saving after every repetition; each gets an equal share of what is left of ``budget``.

    Every tool is looked up before anything runs, so a missing one stops the run at once with
    how to install it. A probe that fails (a peer that does not answer, a tool error) is reported
    and the others go on. Probes finished in ``store`` with the same commands are not run again.
    """
    for tool in sorted({p.tool for p in probes}):
        locate(tool)
    clock = time.monotonic()
    failures = []
    for index, probe in enumerate(probes):
        reporter.started(index, len(probes), probe)
        done = store.done(probe)
        if done is not None:
            reporter.finished(done, True)
            continue
        share = max(budget - (time.monotonic() - clock), 0.0) / (len(probes) - index)
        try:
            measurements = measure(probe, target=target, budget=share, previous=store.partial(probe),
                                   progress=lambda ms: (store.record(ms), reporter.repetition(ms)))
        except ProbeError as exc:
            failures.append((probe, exc))
            reporter.failed(probe, exc)
            continue
        store.record(measurements)
        reporter.finished(measurements, False)
    return Outcome(tuple(store.measurements.values()), tuple(failures))
