"""A probe session: the probes' repetitions interleaved over one time budget, saved to a probe set file as they go."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable, Mapping, Protocol, Sequence

from probes.core import machine
from probes.core.errors import ProbeError
from probes.core.host import this_host
from probes.core.measurement import Measurement, Provenance
from probes.core.stats import load as load_statistics
from probes.measure.probe import MAX_REPETITIONS, MIN_REPETITIONS, TARGET, Probe
from probes.measure.probeset import ProbeSetFile
from probes.measure.tool import locate, tool_version

__all__ = ["Reporter", "Outcome", "run_probes", "measure", "BUDGET"]

# Default seconds for all repetitions of a probe session: the default single-node set, with
# iobound's start-up and the last repetitions' overrun, then finishes within 90 s.
BUDGET = 85.0

# Seconds a repetition is assumed to take before one of its tool has been timed: a default 1 s run and its start-up.
_FIRST_GUESS = 1.5
# Seconds set between an interrupted session's last repetition and a resumed one's first.
_RESUMED = 1.0


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
               budget: float = BUDGET, seed: int = 0, helpers: Callable[[], Iterable[int]] | None = None) -> Outcome:
    """Measure ``probes`` interleaved, saving after every repetition, within ``budget`` seconds in all.

    Repetitions go round the probes, in order for the first rounds (every probe's minimum
    repetitions, whatever the budget) and then in an order shuffled each round (``seed``), to every
    probe that has not yet reached ``target`` on a steady machine while its next repetition fits in
    what is left of the budget. So a figure's repetitions span the whole session, and its interval
    and drift tests (:attr:`Measurement.unstable`) see how the machine changed over it, not one
    moment of it. Each repetition records its start and what other processes took of the CPUs: those ``helpers``
    returns (PIDs, asked at each repetition's start and end) are not others but part of what is measured (a lab's
    sshd, sshfs and ssh), their CPU time counted as the probes' own.

    Every tool is looked up before the first measurement, so a missing one stops the run at once with
    how to install it; each probe's own check (a peer's server answering) runs before any budget is
    spent. A probe that fails is reported and the others go on. Probes finished in ``store`` with the
    same commands are not run again; unfinished ones are continued.
    """
    for tool in sorted({p.tool for p in probes}):
        locate(tool)
    store.refuse_conflicts([name for p in probes for name in store.conflicts(p)])
    load_statistics()  # before the clock: the budget is for the probes, not for importing scipy.stats
    failures: list[tuple[Probe, ProbeError]] = []
    running: list[_Running] = []
    for index, probe in enumerate(probes):
        done = store.done(probe)
        if done is not None:
            reporter.started(index, len(probes), probe)
            reporter.finished(done, True)
            continue
        try:
            if probe.check is not None:
                probe.check()
        except ProbeError as exc:
            reporter.started(index, len(probes), probe)
            failures.append((probe, exc))
            reporter.failed(probe, exc)
            continue
        running.append(_Running(index, probe, store.partial(probe), target, helpers))
    clock = time.monotonic()
    order = random.Random(seed)
    rounds = 0
    while True:
        wanted = [r for r in running if r.wants()]
        if not wanted:
            break
        if rounds >= MIN_REPETITIONS:
            order.shuffle(wanted)
        for r in wanted:
            left = budget - (time.monotonic() - clock)
            if r.count >= MIN_REPETITIONS and r.estimate() > left:
                r.stopped = True
                continue
            reporter.started(r.index, len(probes), r.probe)
            try:
                measurements = r.repeat(clock)
            except ProbeError as exc:
                r.failed = True
                failures.append((r.probe, exc))
                reporter.failed(r.probe, exc)
                continue
            store.record(measurements)
            reporter.repetition(measurements)
        rounds += 1
    for r in running:
        if not r.failed:
            measurements = r.measurements(True)
            store.record(measurements)
            reporter.started(r.index, len(probes), r.probe)
            reporter.finished(measurements, False)
    return Outcome(tuple(store.measurements.values()), tuple(failures))


def measure(probe: Probe, *, target: float = TARGET, budget: float = 10.0, max_repetitions: int = MAX_REPETITIONS,
            previous: Mapping[str, Measurement] | None = None,
            progress: Callable[[list[Measurement]], None] | None = None) -> list[Measurement]:
    """One probe alone, as a session of one: repeated until it reaches ``target`` on a steady machine, or its next
    repetition would pass ``budget`` seconds (at least :data:`MIN_REPETITIONS` whatever the budget).

    ``previous`` holds the incomplete measurements of an interrupted run with the same commands,
    which are continued; ``progress`` gets the measurements so far after every repetition.
    """
    load_statistics()  # before the clock: the budget is for repetitions, not for importing scipy.stats
    running = _Running(0, probe, dict(previous or {}), target)
    clock = time.monotonic()
    while running.wants() and running.count < max_repetitions:
        if running.count >= MIN_REPETITIONS and running.estimate() > budget - (time.monotonic() - clock):
            break
        measurements = running.repeat(clock)
        if progress:
            progress(measurements)
    return running.measurements(True)


class _Running:
    """One probe's repetitions in a session: samples per output, when each began, and the neighbours' CPU use."""

    def __init__(self, index: int, probe: Probe, previous: dict[str, Measurement], target: float,
                 helpers: Callable[[], Iterable[int]] | None = None):
        self.index, self.probe, self.target, self.helpers = index, probe, target, helpers
        self.samples = {o.name: list(previous[o.name].samples) if o.name in previous else [] for o in probe.outputs}
        old = previous.get(probe.name)
        self.times = list(old.times) if old and old.times else []
        self.others = list(old.others) if old and old.others else []
        if len(self.times) != len(self.samples[probe.name]):  # an older file's samples: no times to test them by
            self.times, self.others = [], []
        self.offset = max(self.times, default=-_RESUMED) + _RESUMED  # a resumed session's times follow the old ones
        self.started_at = old.provenance.started_at if old else datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.spent = old.provenance.duration if old else 0.0
        self.version = tool_version(probe.tool)
        self.seconds: list[float] = []
        self.failed = self.stopped = False
        self.parameters = dict(probe.parameters) | {"cpus": machine.cpus()}  # the CPUs it shares with the neighbours

    @property
    def count(self) -> int:
        return len(self.samples[self.probe.name])

    def wants(self) -> bool:
        """Whether another repetition is due: fewer than the minimum, or short of the target or steady state."""
        if self.failed or self.stopped or self.count >= MAX_REPETITIONS:
            return False
        if self.count < MIN_REPETITIONS:
            return True
        return not self.measurements(False)[0].reached

    def estimate(self) -> float:
        """The seconds the next repetition should take: the mean of this session's, a first guess before any."""
        return sum(self.seconds) / len(self.seconds) if self.seconds else _FIRST_GUESS

    def repeat(self, clock: float) -> list[Measurement]:
        """One repetition, with its start and the neighbours' CPU use; the measurements so far."""
        began = time.monotonic()
        helpers = self.helpers or tuple  # no helpers: none of the others is part of what is measured
        before = machine.snapshot(helpers())
        values = self.probe.once()
        taken = machine.share(before, machine.snapshot(helpers()))
        self.seconds.append(time.monotonic() - began)
        for output in self.probe.outputs:
            self.samples[output.name].append(float(values[output.name]))
        self.times.append(self.offset + began - clock)
        self.others.append(taken.others)
        return self.measurements(False)

    def measurements(self, complete: bool) -> list[Measurement]:
        probe = self.probe
        provenance = Provenance(probe.tool, self.version, probe.commands, this_host(), self.started_at,
                                self.spent + sum(self.seconds))
        timed = len(self.times) == self.count
        return [Measurement(o.name, o.description, o.metric, o.unit, tuple(self.samples[o.name]), provenance,
                            self.target if o is probe.outputs[0] else None, complete, self.parameters,
                            tuple(self.times) if timed else (), tuple(self.others) if timed else ())
                for o in probe.outputs if self.samples[o.name]]
