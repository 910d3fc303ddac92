"""Read DLIO's output log of a checkpointing run into a save run and a restore run, one sample per checkpoint.

DLIO prints, on rank 0, one ``[OUTPUT]`` line per event (dlio_benchmark/main.py, checkpointing/base_checkpointing.py,
utils/statscounter.py)::

    [OUTPUT] 2025-03-19T09:21:48.328425 Running DLIO [Checkpointing] with 2 process(es)
    [OUTPUT] 2025-03-19T00:34:26.552583 Total checkpoint size: 35.5107 GB
    [OUTPUT] 2025-03-19T09:23:25.328675 Finished saving checkpoint 1 for epoch 1 in 77.1101 s; Throughput: 1.1394 GB/s
    [OUTPUT] 2025-03-19T08:16:29.693366 Finished loading checkpoint 2 for epoch 1 in 341.1706 s; Throughput: 0.2575 GB/s

Its "GB" is GiB (the size is summed over ranks and divided by 2^30; the throughput is that size over rank 0's
duration), as in its summary.json (:mod:`probes.readers.mlperf`).
"""

from __future__ import annotations

import re

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.core.records import Caching, Checkpoint, Placement
from probes.core.run import Origin, Run
from probes.core.units import Q_, Metric
from probes.core.workload import Operation, Workload
from probes.readers.mlperf import CHECKPOINT_UNIT as UNIT, CHECKPOINT_NOTE as _NOTE  # DLIO's, as in its summary
from probes.readers.textlines import line_of

__all__ = ["looks_like", "parse", "FORMAT"]

FORMAT = "DLIO output log of a checkpointing run ([OUTPUT] ... Finished saving/loading checkpoint ...)"

_FIGURE = r"([0-9]{1,15}(?:\.[0-9]{1,15})?)"  # a decimal figure as DLIO prints it (a mangled one matches no line)
_RUNNING = Pattern(r"^\[OUTPUT\] \S+ Running DLIO \[([^\]]*)\] with ([0-9]{1,9}) process\(es\)", re.MULTILINE)
_SIZE = Pattern(rf"^\[OUTPUT\] \S+ Total checkpoint size: {_FIGURE} GB", re.MULTILINE)
_FINISHED = Pattern(rf"^\[OUTPUT\] \S+ Finished (saving|loading) checkpoint ([0-9]{{1,9}}) for epoch [0-9]+ "
                       rf"in {_FIGURE} s; Throughput: {_FIGURE} GB/s", re.MULTILINE)


def looks_like(text: str) -> bool:
    """Whether ``text`` is a DLIO log with a finished checkpoint in it."""
    return _RUNNING.search(text) is not None and _FINISHED.search(text) is not None


def parse(text: str, *, source: str) -> list[Run]:
    """A ``checkpoint write`` run of the saves and a ``checkpoint read`` run of the loads, in GiB/s, one sample and
    one duration per checkpoint; their processes (one per emulated accelerator) from the "Running DLIO" line.

    Raises
    ------
    ToolOutputError
        If the log does not say how many processes ran, holds no finished checkpoint, or a checkpoint's duration
        or throughput is not above zero.
    """
    running = _RUNNING.search(text)
    if running is None:
        raise ToolOutputError(source, "Running DLIO", "expected the line 'Running DLIO [...] with N process(es)'")
    processes = int(running.group(2))
    if processes < 1:
        raise ToolOutputError(source, "Running DLIO", f"expected at least one process; found {processes}")
    stated = _SIZE.search(text)
    found: dict[str, list[tuple[float, float, int]]] = {"saving": [], "loading": []}
    for match in _FINISHED.finditer(text):
        seconds, rate = float(match.group(3)), float(match.group(4))
        line = line_of(text, match.start())
        if seconds <= 0 or rate <= 0:
            raise ToolOutputError(source, f"line {line}", f"expected a duration and a throughput above zero; found "
                                  f"{seconds} s and {rate} GB/s")
        found[match.group(1)].append((seconds, rate, line))
    if not any(found.values()):
        raise ToolOutputError(source, "Finished saving", "expected at least one finished checkpoint")
    runs = []
    for verb, operation, direction in (("saving", Operation.WRITE, "write"), ("loading", Operation.READ, "read")):
        done = found[verb]
        if not done:
            continue
        size = float(stated.group(1)) if stated else sum(s * r for s, r, _ in done) / len(done)
        whence = "the log's Total checkpoint size" if stated else "each checkpoint's duration x its throughput, mean"
        workload = Workload(operation=operation, transfer_size=None, data_set=Q_(size, "GiB"))
        record = Checkpoint(accelerators=processes, size=Q_(size, "GiB"), checkpoints=len(done), fsync=None,
                            caching=Caching())
        runs.append(Run(label=f"dlio checkpoint {direction}", workload=workload, metric=Metric.BANDWIDTH,
                        samples=tuple(r for _, r, _ in done), unit=UNIT, durations=tuple(s for s, _, _ in done),
                        origin=Origin(path=source, line=done[0][2], tool="dlio", tool_version=None),
                        tags=(("units", _NOTE), ("size", f"{size:.4g} GiB from {whence}")),
                        placement=Placement(processes), checkpoint=record))
    return runs
