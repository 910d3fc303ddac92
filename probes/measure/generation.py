"""How fast this client generates checkpoint tensors: random fp32 arrays filled by numpy in N processes at once.

DLIO's checkpointing makes each rank's state with ``torch.rand`` (fp16 weights, fp32 optimizer groups: 12 of its
14 bytes a parameter are fp32), in memory, before it writes a byte; a save is no faster than that. This probe fills
a 64 MiB fp32 buffer with uniform random numbers again and again, as many processes as asked, all started
together, and reports their bytes a second in all: the client's ``checkpoint_generation`` (models.checkpoints).
"""

from __future__ import annotations

import multiprocessing
import queue
import time

from probes.core.errors import ProbeError
from probes.core.units import Metric
from probes.measure.probe import Output, Probe

__all__ = ["generation_probes"]

# The buffer one process fills per call: larger than CPU caches, small beside a rank's share of a checkpoint.
_BUFFER = 64 * 2**20


def generation_probes(*, jobs: tuple[int, ...] = (1,), runtime: float = 1.0) -> list[Probe]:
    """One probe per process count: the bytes of random fp32 tensors ``jobs`` processes generate a second, together
    (the tool is this Python, numpy's version among the parameters)."""
    import numpy as np

    probes = []
    for count in jobs:
        where = f"random fp32 tensors (numpy), {count} process{'es' if count > 1 else ''}"
        output = Output(f"checkpoint.generation.jobs{count}.bandwidth", f"{where}: bytes generated",
                        Metric.BANDWIDTH, "B/s")
        probes.append(Probe(where, "python3", (), (output,), _once(count, runtime, output.name),
                            {"jobs": count, "buffer": _BUFFER, "dtype": "float32", "numpy": np.__version__}))
    return probes


# Seconds the processes wait for each other to start (numpy imported, buffers made); past it the probe fails.
_START = 60.0


def _once(count: int, runtime: float, name: str):
    def once() -> dict[str, float]:
        context = multiprocessing.get_context("fork")
        start, results = context.Barrier(count), context.Queue()
        workers = [context.Process(target=_generate, args=(start, results, runtime), daemon=True) for _ in range(count)]
        for worker in workers:
            worker.start()
        rates: list[float] = []
        try:
            while len(rates) < count:
                try:
                    rates.append(results.get(timeout=1))
                except queue.Empty:  # a worker that died (out of memory, an error) never answers
                    if not any(w.is_alive() for w in workers) and results.empty():
                        codes = sorted({w.exitcode for w in workers})
                        raise ProbeError(f"the generation probe's processes ended without a figure (exit codes "
                                         f"{codes})") from None
        finally:
            for worker in workers:
                worker.join(timeout=5)
        return {name: sum(rates)}
    return once


def _generate(start, results, runtime: float) -> None:
    """Fill one buffer with random fp32 numbers until ``runtime`` has passed; put the bytes a second on ``results``."""
    import numpy as np

    buffer = np.empty(_BUFFER // 4, dtype=np.float32)
    rng = np.random.default_rng()
    start.wait(timeout=_START)  # a sibling that died before it would leave the others waiting: the barrier breaks
    began, filled = time.perf_counter(), 0
    while time.perf_counter() - began < runtime or not filled:
        rng.random(dtype=np.float32, out=buffer)
        filled += buffer.nbytes
    results.put(filled / (time.perf_counter() - began))
