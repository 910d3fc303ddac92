"""Findings about a KV-cache offload figure (LMCache's store and retrieve lines, kv-cache.py's storage tier): a
"storage" rate above what the node's storage tiers give came from memory, and the memory tier whose rate explains
it is named.

A verdict rests on the storage tier's rate as the topology states it: above a stated rate (a data sheet, a
measurement, a link's nameplate) is an error; above the greatest of a range (a drive class's catalogue entries) a
warning; within a range, the figure implies the least rate the storage needs, which the finding says (info).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from probes.core.run import Run
from probes.core.units import Q_, Metric, format_quantity, quantity_json
from probes.core.workload import Operation
from assess.findings.ceiling import summary_in
from assess.findings.finding import Finding, Judgement, Severity

if TYPE_CHECKING:
    from models.kvcache import Served
    from topologies.topology import Topology

__all__ = ["KV_CODES", "is_kv_storage", "kv_judgement"]

# Codes (stable): MEMORY-SERVED error on a stated storage rate, warning on a range's greatest, info within a range.
KV_CODES = ("MEMORY-SERVED",)
# The tiers a KV-cache tool names that claim storage: kv-cache.py's "storage" (its --cache-dir) and LMCache's
# offload (its backends, which its lines do not name).
_STORAGE = ("storage", "offload")
_SEVERITY = {"stated": Severity.ERROR, "range": Severity.WARNING, "implied": Severity.INFO}


def is_kv_storage(run: Run) -> bool:
    """Whether the run is a KV-cache tool's figure for its storage (not its GPU's or host's memory)."""
    return dict(run.tags).get("kv_tier") in _STORAGE and run.workload is not None


def kv_judgement(topology: Topology, run: Run, tolerance: float) -> Judgement:
    """The run's greatest repetition (every one stored or fetched its blocks) against the node's storage tiers."""
    from models.kvcache import served_by  # the KV-cache model loads for a KV-cache tool's run alone

    measured = Q_(summary_in(run, Metric.BANDWIDTH).max, "B/s")
    workload = run.workload
    served = served_by(topology, measured, workload.operation, workload.transfer_size, tolerance)
    finding = _finding(run, served)
    said = "judged against the node's KV-cache tiers" + ("" if served.storage else ", which give no storage rate for it")
    return Judgement(run, measured, None, None, None, (finding,) if finding else (), said)


def _finding(run: Run, served: Served) -> Finding | None:
    if served.beyond is None:
        return None
    storage, memory = served.storage, served.memory
    moved = "stored" if run.workload.operation is Operation.WRITE else "fetched"
    shown = format_quantity(served.measured.to("GB/s"), unit="GB/s")
    by = (f"the {memory.tier.tier.value} tier {memory.tier.name!r} ({memory.span()}; {memory.said}) explains it"
          if memory else "no memory tier the topology states reaches it either")
    if served.beyond == "implied":
        message = (f"{run.label}: {shown} {moved} is within the range of the storage tier {storage.tier.name!r} "
                   f"({storage.span()}; {storage.said}): the storage gave it only if it moves at least {shown}; "
                   f"below that, memory served it ({by})")
    else:
        given = "states" if served.beyond == "stated" else "can give at most (the greatest of its range)"
        message = (f"{run.label}: {shown} {moved} is more than the storage tier {storage.tier.name!r} {given}, "
                   f"{storage.span()} ({storage.said}): memory served it, not storage; {by}")
    evidence = {"measured": quantity_json(served.measured), "storage_tier": storage.tier.name,
                "storage": [quantity_json(storage.least), quantity_json(storage.most)], "storage_stated": storage.stated,
                "memory_tier": memory.tier.name if memory else None, "beyond": served.beyond}
    return Finding("MEMORY-SERVED", _SEVERITY[served.beyond], run.label, message,
                   "read it as a memory copy (GPU to host, or the page cache), not as the storage's rate: measure the "
                   "storage tier with the KV-cache of the faster tiers too small to hold the working set, or the "
                   "storage's own put time (LMCache's put_time) apart from the copy out of the GPU (offload_time)",
                   evidence)
