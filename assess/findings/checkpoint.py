"""Which part bound a measured checkpoint save or restore: the clients' generation of the tensors, or the storage.

A save writes tensors the clients generate first (DLIO's and mlpstorage's checkpointing make them up), so a save
that ran at the clients' generation rate measured the clients, not the storage: MLPerf Storage invalidated such a
result (mlcommons/storage #689). The finding says which part bound, as a finding about the run, not a verdict on the
storage; a topology that states no ``checkpoint_generation`` leaves the generation a possibility, said as such.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from probes.core.units import Q_, Metric, format_quantity, quantity_json
from probes.core.workload import Operation
from models.ceiling import format_span
from assess.findings.finding import Finding, Severity

if TYPE_CHECKING:
    from pint import Quantity

    from probes.core.run import Run
    from topologies.topology import Capacity
    from models.ceiling import Ceiling
    from models.predict import Model

__all__ = ["CHECKPOINT_CODES", "checkpoint_findings"]

# Codes (stable): CHECKPOINT-BOUND info (the part that bound a checkpoint's save or restore).
CHECKPOINT_CODES = ("CHECKPOINT-BOUND",)


def checkpoint_findings(run: Run, ceiling: Ceiling | None, model: Model, clients: tuple[str, ...] | None,
                        tolerance: float) -> list[Finding]:
    """The part that bound a DLIO checkpoint run (none for other runs, or where nothing can be said)."""
    from assess.findings.ceiling import summary_in

    if run.checkpoint is None or run.workload is None or ceiling is None:
        return []  # no ceiling: the judgement says why (more nodes than the topology has, an unknown group)
    from models.checkpoints import generated  # the checkpoint model loads for a checkpoint run alone

    summary = summary_in(run, Metric.BANDWIDTH)
    if summary is None:
        return []
    measured = Q_(summary.mean, "B/s").to("GB/s")
    _, counts = model.nodes(run.workload, clients)
    saves = run.workload.operation is Operation.WRITE
    used = _used(run, counts)
    generation, per_client = _generation(model, counts, used) if saves else (None, None)
    storage = ceiling.least.to("GB/s"), ceiling.value.to("GB/s")
    above = measured > storage[1] * (1 + tolerance)  # more than the storage takes: ABOVE-CEILING says why
    at_storage = storage[0] <= measured * (1 + tolerance) and not above
    nodes = used
    evidence = {"measured": quantity_json(measured), "storage": [quantity_json(q) for q in storage],
                "generation": None if generation is None else [quantity_json(q) for q in generation], "nodes": nodes}
    shown = format_quantity(measured, unit="GB/s")
    where = (f"{format_span(*storage)}, bound by {ceiling.binds} "
             f"({ceiling.binds_marked})")
    if generation is not None and generation[1] * (1 + tolerance) < measured:
        return [Finding("CHECKPOINT-BOUND", Severity.WARNING, run.label,
                        f"{run.label}: {shown} is above what the clients' stated generation allows "
                        f"({format_span(*generation)} from {nodes} client nodes at {per_client.span()} each): their "
                        "checkpoint_generation is too low, or this save did not generate its tensors",
                        "measure the clients' generation again (or state it as a range)",
                        evidence | {"binds": None})]
    if generation is not None and generation[0] <= measured * (1 + tolerance):
        ratio = f"{(generation[0] / measured).m_as(''):.2f} to {(generation[1] / measured).m_as(''):.2f}"
        also = f"the storage's ceiling, {where}, the save reached too: the two are co-equal" if at_storage else \
            f"the storage's ceiling is {where}"
        return [Finding("CHECKPOINT-BOUND", Severity.INFO, run.label,
                        f"{run.label}: bound by the clients' generation of the checkpoint tensors: {shown} is what "
                        f"{nodes} client nodes generate ({format_span(*generation)}, {per_client.span()} each, "
                        f"{ratio} x the measured rate); {also}. The save measured how fast the clients generate the "
                        "tensors, not how fast the storage absorbs them.",
                        "give the clients more generation (threads, cores) or more clients, and save again to "
                        "measure the storage", evidence | {"binds": "generation"})]
    if above:
        return []
    if at_storage:
        unstated = "; the clients' checkpoint_generation is not stated" if saves and generation is None else ""
        if measured * (1 + tolerance) >= storage[1]:
            return [Finding("CHECKPOINT-BOUND", Severity.INFO, run.label,
                            f"{run.label}: bound by the storage: {shown} reached its ceiling ({where}){unstated}",
                            "", evidence | {"binds": "storage"})]
        return [Finding("CHECKPOINT-BOUND", Severity.INFO, run.label,  # within a range: the storage may do more
                        f"{run.label}: {shown} is within the storage's ceiling ({where}): the storage may have bound "
                        f"it{unstated}", "state the storage's figures on its path more narrowly (a datasheet or a "
                        "probe: iobound probe) to tell", evidence | {"binds": None})]
    if saves and generation is None:
        return [Finding("CHECKPOINT-BOUND", Severity.INFO, run.label,
                        f"{run.label}: {shown} is below the storage's ceiling ({where}), and the topology states no "
                        "checkpoint_generation for its clients: their generation of the tensors may have bound it",
                        "state the clients' checkpoint_generation (measured, or a range) to tell",
                        evidence | {"binds": None})]
    return []


def _used(run: Run, counts: dict[str, int]) -> int:
    """The client nodes the run used: those its workload names (``counts``), or, where it names none, as many as its
    processes fill at its processes per node (its placement record's), never more than ``counts`` holds."""
    total = sum(counts.values())
    if run.workload.nodes is not None or run.placement is None:
        return total
    return min(total, -(-run.placement.processes // run.workload.ppn))


def _generation(model: Model, counts: dict[str, int],
                used: int) -> tuple[tuple[Quantity, Quantity] | None, Capacity | None]:
    """The clients' generation over ``used`` of the nodes in ``counts`` (client group -> nodes), (least, most), and
    the first group's per-client figure (see :func:`models.checkpoints.generated`). Where the run used fewer nodes
    than the groups hold and the groups differ, its least is that of the slowest nodes and its most of the fastest."""
    from models.checkpoints import GENERATION, generated

    whole, per_client = generated(model.topology, counts)
    if whole is None or used >= sum(counts.values()):
        return whole, per_client
    ends = {name: model.topology.group(name).capacity(GENERATION).ends for name in counts}
    least = generated(model.topology, _fill(counts, used, sorted(counts, key=lambda n: ends[n][0])))[0][0]
    most = generated(model.topology, _fill(counts, used, sorted(counts, key=lambda n: ends[n][1], reverse=True)))[0][1]
    return (least, most), per_client


def _fill(counts: dict[str, int], used: int, order: list[str]) -> dict[str, int]:
    """``used`` nodes taken from the groups in ``order``, each to its count."""
    taken = {}
    for name in order:
        taken[name] = min(counts[name], used - sum(taken.values()))
    return {name: n for name, n in taken.items() if n}
