"""Check measured runs against the ceilings of a topology: one Judgement per run, with every finding about it."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Iterable

from probes.core.errors import InputError, TopologyError
from probes.core.run import Run
from probes.core.workload import Workload
from probes.core.units import Metric
from models.caches import Memory
from models.ceiling import Ceiling
from models.predict import Model, unmodelled
from topologies.topology import Kind, Topology
from assess.findings import BELOW, FAR_BELOW, TOLERANCE, Judgement, ceiling_metric, judge, summary_in
from assess.findings.alone import Limits, run_findings
from assess.findings.siblings import ceiling_mixup, sibling_findings

__all__ = ["check_runs", "CHECK_VERSION", "check_body"]


def check_runs(topology: Topology, runs: Iterable[Run], *, clients: tuple[str, ...] | None = None,
               tolerance: float = TOLERANCE, far_below: float = FAR_BELOW, below: float = BELOW,
               limits: Limits = Limits()) -> list[Judgement]:
    """Judge each run against its ceiling (predicted once per distinct workload), on its own and beside the others."""
    runs = [_placed(topology, run, clients) for run in runs]
    block = topology.block_size()
    ceilings: dict[Workload, Ceiling] = {}
    model = Model(topology)
    judgements = []
    for run in runs:
        reason = _no_ceiling(topology, run, clients)
        if reason:
            judgement = Judgement(run, None, None, None, None, (), reason)
        else:
            if run.workload not in ceilings:
                try:
                    ceilings[run.workload] = model.ceiling(run.workload, clients)
                except TopologyError as exc:
                    raise InputError(str(run.origin), "", f"run {run.label!r} does not fit the topology: {exc}") from exc
            judgement = judge(run, ceilings[run.workload], tolerance=tolerance, far_below=far_below, below=below,
                              implied=functools.partial(model.implied, run.workload, clients))
            spread = max((abs(x - judgement.ratio) for x in judgement.ratio_interval or ()), default=0.0)
            noise = max(tolerance, spread / judgement.ratio) if judgement.ratio > 0 else tolerance
            mixup = ceiling_mixup(run, judgement.ratio, noise)
            if mixup:
                judgement = replace(judgement, findings=judgement.findings + (mixup,))
        own = tuple(run_findings(run, memory=_memory(model, run, clients), block_size=block, limits=limits))
        judgements.append(replace(judgement, findings=judgement.findings + own))
    for index, found in sibling_findings(runs).items():
        judgements[index] = replace(judgements[index], findings=judgements[index].findings + tuple(found))
    return judgements


def _placed(topology: Topology, run: Run, clients: tuple[str, ...] | None) -> Run:
    """A run that states only its total processes (io500's procs), spread over all nodes of its one client group
    when they divide evenly: its processes per node then count (round trips, requests in flight)."""
    processes = dict(run.tags).get("processes")
    workload = run.workload
    groups = clients or tuple(g.name for g in topology.of_kind(Kind.CLIENT))
    if workload is None or workload.nodes is not None or processes is None or len(groups) != 1 \
            or groups[0] not in {g.name for g in topology.of_kind(Kind.CLIENT)}:
        return run
    nodes = topology.group(groups[0]).count
    total = int(processes) if processes.isdigit() else 0
    if total < 1:
        raise InputError(str(run.origin), "processes", f"must be a whole number of at least 1. Got {processes!r} instead.")
    if total % nodes:
        return run
    placed = f"{total} processes on the {nodes} nodes of {groups[0]}, {total // nodes} each (the result states no node count)"
    return replace(run, workload=replace(workload, nodes=nodes, ppn=total // nodes), tags=run.tags + (("placed", placed),))


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


def _memory(model: Model, run: Run, clients: tuple[str, ...] | None) -> Memory | None:
    """The memory that may cache the run's data: its clients' and the servers'; None without a workload that fits."""
    if run.workload is None:
        return None
    try:
        return model.memory(model.nodes(run.workload, clients)[1])
    except TopologyError:  # more nodes than the group has: its ceiling says so where it has one
        return None


# check format history (the body is check_body's; each run's part is Judgement.to_dict):
#   1.0  first version
#   1.1  runs without a ceiling (ceiling, measured and ratio null; no_ceiling says why); run-level and
#        sibling findings; runs carry durations and a reported summary
#   1.2  a ceiling may be an interval (its low end, which capacities are assumed: prediction 1.3); findings
#        POSSIBLE-IF (evidence: implied) and BELOW-CEILING; workloads gain read_share
CHECK_VERSION = "1.2"


def check_body(topology: Topology, judgements: list[Judgement]) -> dict:
    """The body of an iobound/check document: the system and every run with its ceiling and findings."""
    return {"topology": {"name": topology.name, "path": topology.path}, "runs": [j.to_dict() for j in judgements]}
