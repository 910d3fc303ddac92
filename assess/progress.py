"""Progress of a probe session on stderr: a live line per repetition on a terminal, one line per finished probe
otherwise; and, for a figure short of its target, what caused it and what to do."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from probes.core.errors import ProbeError
from probes.core.machine import BUSY, cpus
from probes.core.stats import DRIFT_LEAST
from probes.core.measurement import Measurement
from probes.measure.probe import Probe
from probes.core.units import format_quantity

__all__ = ["ProbeProgress", "PassProgress", "figure", "diagnosis"]


def figure(m: Measurement) -> str:
    """``877,692 op/s ± 2.1 % (n=5)``: the mean, the 95 % interval's half-width and the repetitions."""
    width = m.half_width
    spread = "" if width is None else f" ± {width:.1%}"
    return f"{format_quantity(m.value, m.metric)}{spread} (n={m.summary.n})"


def diagnosis(m: Measurement) -> tuple[str, str]:
    """Why a figure missed its target, and what to do: ("", "") for one that reached it.

    The causes, first that applies: the machine changed or was busy during the session
    (UNSTABLE-MACHINE: drift, or neighbours taking its CPUs), too few repetitions to test for
    drift, or its own noise needs more repetitions than the budget gave.
    """
    from assess.findings.alone import repetitions_needed

    if m.reached:
        return "", ""
    if not m.complete:
        return "interrupted", "continue it with --resume"
    if m.unstable:
        return (f"UNSTABLE-MACHINE: {m.unstable}",
                "probe at a quieter moment, or pin the probes to CPUs the neighbours leave free with --cpus")
    if m.half_width is not None and m.half_width <= m.target:
        return (f"too few repetitions to tell drift from noise: {m.summary.n} of the {DRIFT_LEAST} a drift test needs",
                f"raise --budget (about {DRIFT_LEAST * m.provenance.duration / max(m.summary.n, 1):.0f} s for this figure)")
    cv = m.summary.cv or 0.0
    needed = repetitions_needed(cv, m.target) if cv else m.summary.n + 1
    seconds = m.provenance.duration / max(m.summary.n, 1)
    return (f"noise: its repetitions vary by {cv:.1%} (cv), and {m.summary.n} of them give ± {m.half_width or 0:.1%}",
            f"about {needed} repetitions reach ± {m.target:.1%}: raise --budget by about "
            f"{max(needed - m.summary.n, 1) * seconds:.0f} s for this figure, "
            "or average each over longer with --runtime 2")


class ProbeProgress:
    """Draws the progress of :func:`probes.measure.session.run_probes`; quiet draws nothing."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False):
        # sys.stderr as it is now, not as it was at import (a test's captured stream, closed since)
        self.stream, self.quiet = stream or sys.stderr, quiet
        self.live = self.stream.isatty() and not quiet
        self.prefix = ""

    def _line(self, text: str, final: bool) -> None:
        if self.quiet or not (final or self.live):
            return
        end = "\n" if final else ""
        clear = "\r\033[K" if self.live else ""
        self.stream.write(f"{clear}{text}{end}")
        self.stream.flush()

    def started(self, index: int, total: int, probe: Probe) -> None:
        self.prefix = f"[{index + 1:>{len(str(total))}}/{total}] {probe.title}"
        self._line(f"{self.prefix} ...", False)

    def repetition(self, measurements: list[Measurement]) -> None:
        first = measurements[0]
        width = first.half_width
        aim = f"± {width:.1%}, aiming for {first.target:.1%}" if width is not None and first.target else "first repetitions"
        busy = f"; neighbours {first.others[-1]:.1f} CPUs" if first.others and first.others[-1] / cpus() >= BUSY else ""
        self._line(f"{self.prefix}: repetition {first.summary.n}, {figure(first)} ({aim}{busy})", False)

    def finished(self, measurements: list[Measurement], reused: bool) -> None:
        first = measurements[0]
        cause, remedy = ("", "") if reused else diagnosis(first)
        note = " (from the file, not run again)" if reused else f"; {cause}: {remedy}" if cause else ""
        self._line(f"{self.prefix}: {figure(first)}{note}", True)

    def failed(self, probe: Probe, error: ProbeError) -> None:
        self._line(f"{self.prefix}: FAILED (the reason follows the table)", True)


class PassProgress:
    """Draws how far a long pass over a list has come (``review: judged 1,200 of 366,000 submissions``) on stderr: a
    live line on a terminal; elsewhere only where ``asked``, a line every ``every`` seconds and at a pass's end."""

    def __init__(self, what: str, items: str, stream: TextIO | None = None, asked: bool = False, every: float = 10.0):
        self.what, self.items = what, items
        self.stream = stream or sys.stderr  # sys.stderr as it is now (see ProbeProgress)
        self.live = self.stream.isatty()
        self.shown, self.every = self.live or asked, 0.2 if self.live else every
        self.drawn, self.last = False, -1.0

    def __call__(self, stage: str, done: int, total: int | None, detail: str = "") -> None:
        """``done`` of ``total`` (None: not known yet) have passed ``stage``; ``detail`` follows on the line."""
        now = time.monotonic()
        if not self.shown or (now - self.last < self.every and done != total):
            return
        self.last = now
        text = (f"{self.what}: {stage} {done:,}" + (f" of {total:,}" if total is not None else "") + f" {self.items}"
                + (f", {detail}" if detail else ""))
        self.stream.write(f"\r\033[K{text}" if self.live else f"{text}\n")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Clear the live line, so that what follows starts on a clean one."""
        if self.live and self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False

