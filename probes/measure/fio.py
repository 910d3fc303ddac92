"""Run one fio job as a probe repetition: build its argv, run it, and read IOPS, bandwidth and context switches."""

from __future__ import annotations

import os
import shlex
import threading
import time
from dataclasses import dataclass

from probes.core.errors import ProbeError, ToolOutputError
from probes.measure.tool import run_tool
from probes.readers import fio as reader

__all__ = ["FioResult", "fio_argv", "run_fio", "ContextSwitches", "lay_out"]


@dataclass(frozen=True, slots=True)
class FioResult:
    """What one fio run gave, summed over its jobs: operations and bytes per second, and context switches per second:
    fio's own (its jobs' ``ctx``) and the whole machine's (/proc/stat: the neighbours' too)."""

    iops: float
    bandwidth: float
    context_switches: float
    machine_context_switches: float


def fio_argv(name: str, *, rw: str, bs: str, runtime: float, numjobs: int = 1, directory: str | None = None,
             filename: str | None = None, size: str | None = None, direct: bool = False, ioengine: str = "psync",
             iodepth: int = 1, readonly: bool = False) -> tuple[str, ...]:
    """The argv of a time-based fio job reporting JSON for the whole group."""
    argv = ["fio", f"--name={name}", f"--rw={rw}", f"--bs={bs}", f"--ioengine={ioengine}", f"--iodepth={iodepth}",
            f"--numjobs={numjobs}", "--time_based", f"--runtime={max(round(runtime * 1000), 1)}ms", "--group_reporting",
            f"--direct={int(direct)}", "--output-format=json"]
    if directory is not None:
        argv += [f"--directory={directory}", "--filename_format=iobound.$jobnum"]
    if filename is not None:
        argv.append(f"--filename={filename}")
    if size is not None:
        argv.append(f"--size={size}")
    if readonly:
        argv.append("--readonly")
    return tuple(argv)


def lay_out(directory: str, numjobs: int, size: int) -> None:
    """Write the files a ``directory`` job uses (``iobound.<job>``) in 1 MiB blocks: fio would lay them out ``bs`` bytes at a time."""
    block = b"\xa5" * 2**20
    for job in range(numjobs):
        path = os.path.join(directory, f"iobound.{job}")
        try:
            with open(path, "ab") as f:
                while f.tell() < size:
                    f.write(block[: size - f.tell()])
        except OSError as exc:
            raise ProbeError(f"cannot lay out {path} for fio: {exc.strerror or exc}") from None


def run_fio(argv: tuple[str, ...], *, runtime: float) -> FioResult:
    """Run fio once and sum the group's reads and writes; it may take half a minute more than ``runtime`` to start and stop."""
    with ContextSwitches() as ctx:
        output = run_tool(argv, timeout=runtime * 2 + 30)
    try:
        iops, bandwidth, switches = reader.totals(output.stdout, source=shlex.join(argv))
    except ToolOutputError as exc:
        raise ProbeError(f"fio printed no result iobound can read: {exc}; its output begins: {output.stdout[:200]!r}") from None
    return FioResult(iops, bandwidth, switches, ctx.rate)


class ContextSwitches:
    """Context manager measuring the kernel's context switches per second (``ctxt`` in /proc/stat) while it is open.

    It samples every 50 ms and uses the middle 80 % of the time, so a tool's start-up and
    exit do not dilute the rate of its steady state.
    """

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.readings: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self):
        while True:
            self.readings.append((time.monotonic(), _ctxt()))
            if self._stop.wait(self.interval):
                self.readings.append((time.monotonic(), _ctxt()))
                return

    @property
    def rate(self) -> float:
        if len(self.readings) < 2:
            return 0.0
        t0, t1 = self.readings[0][0], self.readings[-1][0]
        inner = [r for r in self.readings if t0 + 0.1 * (t1 - t0) <= r[0] <= t1 - 0.1 * (t1 - t0)]
        first, last = (inner[0], inner[-1]) if len(inner) >= 2 else (self.readings[0], self.readings[-1])
        return (last[1] - first[1]) / (last[0] - first[0])


def _ctxt() -> int:
    with open("/proc/stat", encoding="ascii") as f:
        for line in f:
            if line.startswith("ctxt "):
                return int(line.split()[1])
    return 0
