"""Check measured runs against the ceilings of a topology: one Judgement per run, with every finding about it."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Iterable

from probes.errors import InputError, TopologyError
from probes.run import Run
from probes.units import Metric, Quantity
from models.caches import aggregate_memory
from models.ceiling import Ceiling
from models.predict import Model, unmodelled
from topologies.topology import Kind, Topology
from assess.findings import FAR_BELOW, TOLERANCE, Judgement, ceiling_metric, judge, summary_in
from assess.quality import Limits, run_findings
from assess.siblings import ceiling_mixup, sibling_findings

__all__ = ["check_runs"]


def check_runs(topology: Topology, runs: Iterable[Run], *, clients: tuple[str, ...] | None = None,
               tolerance: float = TOLERANCE, far_below: float = FAR_BELOW, limits: Limits = Limits()) -> list[Judgement]:
    """Judge each run against its ceiling (predicted once per distinct workload), on its own and beside the others."""
    runs = list(runs)
    block = _block_size(topology)
    ceilings: dict[str, Ceiling] = {}
    model = Model(topology)
    judgements = []
    for run in runs:
        reason = _no_ceiling(topology, run, clients)
        if reason:
            judgement = Judgement(run, None, None, None, None, (), reason)
        else:
            key = json.dumps(run.workload.to_dict(), sort_keys=True)
            if key not in ceilings:
                try:
                    ceilings[key] = model.ceiling(run.workload, clients)
                except TopologyError as exc:
                    raise InputError(str(run.origin), "", f"run {run.label!r} does not fit the topology: {exc}") from exc
            judgement = judge(run, ceilings[key], tolerance=tolerance, far_below=far_below)
            spread = max((abs(x - judgement.ratio) for x in judgement.ratio_interval or ()), default=0.0)
            mixup = ceiling_mixup(run, judgement.ratio, max(tolerance, spread / judgement.ratio))
            if mixup:
                judgement = replace(judgement, findings=judgement.findings + (mixup,))
        memory = aggregate_memory(topology, run.workload, clients) if run.workload else None
        own = tuple(run_findings(run, memory=memory, block_size=block, limits=limits))
        judgements.append(replace(judgement, findings=judgement.findings + own))
    for index, found in sibling_findings(runs).items():
        judgements[index] = replace(judgements[index], findings=judgements[index].findings + tuple(found))
    return judgements


def _no_ceiling(topology: Topology, run: Run, clients: tuple[str, ...] | None) -> str:
    """Why a run has no ceiling to compare with, or "" when it has one."""
    if run.workload is None:
        return f"not a storage workload ({run.origin.tool} result)"
    reason = unmodelled(topology, run.workload, clients)
    if reason:
        return reason
    metric = ceiling_metric(run)
    if summary_in(run, metric) is None:
        if metric is Metric.OPERATION_RATE:
            return f"a {run.metric.label} of {run.workload.operation.value} operations, not a rate to compare"
        return f"a {run.metric.label} with no transfer size, so no bandwidth to compare"
    return ""


def _block_size(topology: Topology) -> Quantity | None:
    """The file system's block or stripe size, when the servers state one (and agree on it)."""
    sizes = {c.value.m_as("B") for g in topology.of_kind(Kind.SERVER)
             if (c := g.capacity("block_size")) is not None and c.value is not None}
    if len(sizes) != 1:
        return None
    return next(c.value for g in topology.of_kind(Kind.SERVER) if (c := g.capacity("block_size")) and c.value is not None)
