"""Progress of a probe session on stderr: a live line on a terminal, one line per finished probe otherwise."""

from __future__ import annotations

import sys
from typing import TextIO

from probes.core.errors import ProbeError
from probes.core.measurement import Measurement
from probes.measure.probe import Probe
from probes.core.units import format_quantity

__all__ = ["ProbeProgress", "figure"]


def figure(m: Measurement) -> str:
    """``877,692 op/s ± 2.1 % (n=5)``: the mean, the 95 % interval's half-width and the repetitions."""
    width = m.half_width
    spread = "" if width is None else f" ± {width:.1%}"
    return f"{format_quantity(m.value, m.metric)}{spread} (n={m.summary.n})"


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
        bar = "#" * min(first.summary.n, 20)
        self._line(f"{self.prefix} |{bar:<20}| {first.summary.n} ({aim})", False)

    def finished(self, measurements: list[Measurement], reused: bool) -> None:
        first = measurements[0]
        note = " (from the file, not run again)" if reused else "" if first.reached else \
            f" (target ± {first.target:.1%} not reached within the time budget)"
        self._line(f"{self.prefix}: {figure(first)}{note}", True)

    def failed(self, probe: Probe, error: ProbeError) -> None:
        self._line(f"{self.prefix}: FAILED (the reason follows the table)", True)
