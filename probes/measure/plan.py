"""Which probes a node runs: network to a peer, the memory path on tmpfs, storage devices, and where asked how fast
it generates checkpoint tensors, in that order."""

from __future__ import annotations

import os
from dataclasses import dataclass

from probes.measure.device import device_probes
from probes.core.errors import ProbeError
from probes.measure.generation import generation_probes
from probes.measure.iperf3 import DEFAULT_PORT, iperf3_probes
from probes.measure.memory import TMPFS, tmpfs_probes
from probes.measure.ping import ping_probes
from probes.measure.probe import Probe

__all__ = ["Plan", "plan_probes"]


@dataclass(frozen=True, slots=True)
class Plan:
    """What to probe. ``jobs`` and ``streams`` of 0 mean one per CPU; ``runtime`` is seconds per repetition;
    ``generation`` asks for the checkpoint tensors' generation (``jobs`` processes)."""

    peer: str | None = None
    port: int = DEFAULT_PORT
    streams: int = 0
    tmpfs: str | None = TMPFS
    jobs: int = 0
    devices: tuple[str, ...] = ()
    write: bool = False
    destroy: bool = False
    runtime: float = 1.0
    generation: bool = False

    @property
    def parallel(self) -> tuple[int, int]:
        """The parallel stream and fio job counts: as stated, else one per CPU and at least two."""
        default = max(os.cpu_count() or 1, 2)
        return self.streams or default, self.jobs or default


def plan_probes(plan: Plan, scratch: str | None) -> list[Probe]:
    """The probes of ``plan``; ``scratch`` is the directory on tmpfs for the memory probes (None: no memory probes)."""
    streams, jobs = plan.parallel
    probes: list[Probe] = []
    if plan.peer:
        probes += ping_probes(plan.peer)
        probes += iperf3_probes(plan.peer, port=plan.port, streams=sorted({1, streams}), time=plan.runtime)
    if scratch:
        probes += tmpfs_probes(scratch, jobs=tuple(sorted({1, jobs})), runtime=plan.runtime)
    for device in plan.devices:
        probes += device_probes(device, write=plan.write, destroy=plan.destroy, runtime=plan.runtime)
    if plan.generation:
        probes += generation_probes(jobs=tuple(sorted({1, jobs})), runtime=plan.runtime)
    names = [o.name for p in probes for o in p.outputs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ProbeError(f"two probes would be saved as {twice[0]}: devices need different file names")
    return probes
