"""Check measured runs against the ceilings of a topology: one Judgement per run, with every finding about it."""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Mapping

from probes.core.errors import InputError, TopologyError
from probes.core.run import Run
from probes.core.workload import Operation
from probes.core.units import Metric, canonical
from probes.measure.batch import Sourced, steps_together
from models.caches import Memory
from models.ceiling import Ceiling
from models.implied import implied
from models.predict import Model, unmodelled
from topologies.topology import Kind, Topology
from assess.findings import BELOW, FAR_BELOW, TOLERANCE, Judgement, Part, ceiling_metric, judge, summary_in
from assess.findings.alone import Limits, run_findings
from assess.findings.application import is_job, job_findings, part_of
from assess.findings.batch import batch_findings
from assess.findings.checkpoint import checkpoint_findings
from assess.findings.hardware import beyond, implausible
from assess.findings.kvcache import is_kv_storage, kv_judgement
from assess.findings.metadata import too_fast
from assess.findings.siblings import ceiling_mixup, sibling_findings
from assess.witness import Witness, cited, narrowed, uncached, witness

if TYPE_CHECKING:
    from topologies.catalogues.achievable import Parts

__all__ = ["check_runs", "witnesses_of", "placed_on", "CHECK_VERSION", "check_body"]


def check_runs(topology: Topology, runs: Iterable[Run], *, clients: tuple[str, ...] | None = None,
               nodes: int | Sourced[int] | None = None, tolerance: float = TOLERANCE, far_below: float = FAR_BELOW,
               below: float = BELOW, limits: Limits = Limits(), witnesses: Iterable[Witness] | None = None,
               hardware: Mapping[str, Parts] | None = None, model: Model | None = None) -> list[Judgement]:
    """Judge each run against its ceiling (predicted once per distinct workload), on its own and beside the others.

    A job's run (a Darshan log) is judged over the part of the system it could use (see
    :func:`assess.findings.application.part_of`), and gets the findings about an application. The tasks of one Slurm
    job step (files tagged alike, :func:`probes.measure.batch.steps_together`) are one run on their nodes together,
    held to the job that ran them (:mod:`assess.findings.batch`). ``nodes`` places a
    run that states only its processes on that many nodes (``check --nodes``: a bare count is its ``--nodes N``, see
    :func:`placed_on`). The runs no cache can have served
    (``witnesses``: by default those among ``runs``, see :mod:`assess.witness`) raise the least ends of the ranges on
    their path for every run but themselves. ``hardware`` says what a group's members are built of (a description's
    drives and ports, and their date): a POSSIBLE-IF that needs more of one than any such part did is also
    IMPLAUSIBLE-HARDWARE, and a witness that does narrows nothing; so is a create or remove run faster per process
    than any network's round trip (:func:`assess.findings.metadata.too_fast`). ``model``: the topology's model where
    the caller has it already (the witnesses were found on it), so that what it solved is not solved again.
    """
    runs = [_placed(topology, run, clients, nodes) for run in steps_together(list(runs))]
    block = topology.block_size()
    whole = Model(topology) if model is None else model
    parts: dict[tuple[int, ...], tuple[Part, Model]] = {}
    narrowed_models: dict[tuple, Model] = {}
    raised_by: dict[int, tuple[Topology, tuple]] = {}  # by the id of the run left out (a witness), or of None
    evidence = _plausible(_witnesses(whole, runs, clients) if witnesses is None else witnesses, whole, clients,
                          hardware, tolerance)
    judgements, jobs = [], {}
    for run in runs:
        part, model, narrowings = None, whole, ()
        if is_job(run):
            key = run.job.lustre.osts if run.job.lustre else ()
            if key not in parts:
                found = part_of(topology, run)
                parts[key] = found, (whole if found.topology is topology else Model(found.topology))
            part, model = parts[key]
        elif evidence:  # the same ranges raised for every run but the witnesses themselves: found once for them
            own = run if any(w.run == run for w in evidence) else None
            if id(own) not in raised_by:
                raised_by[id(own)] = narrowed(topology, evidence, own)
            raised, narrowings = raised_by[id(own)]
            key = tuple((n.component, canonical(n.least)) for n in narrowings)
            if key not in narrowed_models:
                narrowed_models[key] = whole.narrowed(raised) if narrowings else whole
            model = narrowed_models[key]
        if topology.kv_cache and is_kv_storage(run):  # a serving node's offload: its tiers judge it
            judgement = kv_judgement(topology, run, tolerance)
        elif reason := _no_ceiling(topology, run, clients):
            judgement = Judgement(run, None, None, None, None, (), reason, part)
        else:
            judged = _predicted(model, run, clients)
            judgement = judge(run, judged, tolerance=tolerance, far_below=far_below,
                              below=below, implied=functools.partial(implied, model, run.workload, clients),
                              stated=functools.partial(model.stated_bound, run.workload, clients))
            spread = max((abs(x - judgement.ratio) for x in judgement.ratio_interval or ()), default=0.0)
            noise = max(tolerance, spread / judgement.ratio) if judgement.ratio > 0 else tolerance
            least = canonical(judged.least)
            over_least = None if judged.low is None else judgement.ratio * canonical(judged.value) / least if least else math.inf
            mixup = ceiling_mixup(run, judgement.ratio, noise, over_least)
            findings = tuple(cited(f, judged, narrowings) for f in judgement.findings)
            possible = next((f for f in findings if f.code == "POSSIBLE-IF"), None)
            unlike = implausible(run, possible, judged, model, clients, hardware, tolerance) \
                if hardware and possible else None
            unlike = unlike or too_fast(run, judged, tolerance)  # physics: whatever the ranges say
            judgement = replace(judgement, findings=findings + tuple(f for f in (unlike, mixup) if f), part=part)
        own = run_findings(run, memory=_memory(model, run, clients), block_size=block, limits=limits)
        own += batch_findings(run, jobs)
        own += checkpoint_findings(run, judgement.ceiling, model, clients, tolerance)
        if part is not None:
            own += job_findings(run, judgement.ceiling, part, model, whole, clients=clients, block_size=block)
        judgements.append(replace(judgement, findings=judgement.findings + tuple(own)))
    for index, found in sibling_findings(runs).items():
        judgements[index] = replace(judgements[index], findings=judgements[index].findings + tuple(found))
    return judgements


def witnesses_of(topology: Topology, runs: Iterable[Run], *, clients: tuple[str, ...] | None = None,
                 nodes: int | Sourced[int] | None = None, model: Model | None = None,
                 hardware: Mapping[str, Parts] | None = None) -> tuple[Witness, ...]:
    """The runs no cache can have served, placed as :func:`check_runs` places them, with what each proves of the
    topology's ranges: a result's evidence for another result of the same system. ``model``: the topology's, to
    judge the runs on afterwards (:func:`check_runs` then solves nothing twice). ``hardware``: what the groups are
    built of; a run that needs more of a part than any of its date did is no witness (held to its own system's
    parts, it proves nothing for another submission whose parts it would seem to fit)."""
    model = Model(topology) if model is None else model
    return _plausible(_witnesses(model, [_placed(topology, run, clients, nodes) for run in runs], clients), model,
                      clients, hardware)


def _plausible(witnesses: Iterable[Witness], model: Model, clients: tuple[str, ...] | None,
               hardware: Mapping[str, Parts] | None, tolerance: float = TOLERANCE) -> tuple[Witness, ...]:
    """The witnesses that need no more of a part than its date's fastest did: one that does is itself the anomaly, and
    proves nothing."""
    if not hardware:
        return tuple(witnesses)
    return tuple(w for w in witnesses if not beyond(w.run.workload, w.proves, canonical(w.measured), model, clients,
                                                    hardware, tolerance))


def _predicted(model: Model, run: Run, clients: tuple[str, ...] | None) -> Ceiling:
    """The run's ceiling on ``model``.

    Raises
    ------
    InputError
        If the run does not fit the topology (more nodes than its group has, an unknown client group).
    """
    try:
        return model.ceiling(run.workload, clients)
    except TopologyError as exc:
        raise InputError(str(run.origin), "", f"run {run.label!r} does not fit the topology: {exc}") from exc


def _witnesses(model: Model, runs: list[Run], clients: tuple[str, ...] | None) -> tuple[Witness, ...]:
    """The two strongest witnesses among ``runs`` on ``model`` of each operation: its fastest runs no cache can have
    served that are not above their own ceilings (the second judges the first, which never judges itself; a job's run
    is none: it is judged over its own part)."""
    if not model.ranges:
        return ()
    candidates = sorted((run for run in runs if not is_job(run) and uncached(run)
                         and not _no_ceiling(model.topology, run, clients)),
                        key=lambda run: summary_in(run, Metric.BANDWIDTH).mean, reverse=True)
    found: dict[Operation, list[Witness]] = {}
    for run in candidates:
        kept = found.setdefault(run.workload.operation, [])
        if len(kept) < 2 and (w := witness(model, run, _predicted(model, run, clients), clients)) is not None:
            kept.append(w)
    return tuple(w for kept in found.values() for w in kept)


def _placed(topology: Topology, run: Run, clients: tuple[str, ...] | None,
            nodes: int | Sourced[int] | None = None) -> Run:
    """A run that states only its total processes (io500's procs, a Darshan log's), placed on nodes: on ``nodes``
    of them where given (:func:`placed_on`, an InputError where they do not divide the processes; a bare count is
    ``--nodes N``), else spread over all nodes of its one client group when they divide evenly, or one per node where
    there are fewer processes than nodes; its processes per node then count (round trips, requests in flight)."""
    if not _unplaced(run):
        return run
    if nodes is not None:
        return placed_on(run, nodes if isinstance(nodes, Sourced) else Sourced(nodes, f"--nodes {nodes}"))
    total = run.placement.processes
    groups = clients or tuple(g.name for g in topology.of_kind(Kind.CLIENT))
    if len(groups) != 1 or groups[0] not in {g.name for g in topology.of_kind(Kind.CLIENT)}:
        return run
    count = topology.group(groups[0]).count
    if total < count:  # one per node: the most nodes it could have used
        placed = (f"{total} processes on {total} of the {count} nodes of {groups[0]}, 1 each (the result states no node "
                  "count: the most nodes it could use)")
        return _on(run, total, 1, placed)
    if total % count:
        return run
    placed = f"{total} processes on the {count} nodes of {groups[0]}, {total // count} each (the result states no node count)"
    return _on(run, count, total // count, placed)


def placed_on(run: Run, nodes: Sourced[int]) -> Run:
    """``run`` on ``nodes`` nodes, its processes spread evenly, where it states only its processes (io500's procs, a
    Darshan log's), and saying from where the count came (``nodes.source``: ``--nodes 4``, a batch job's variable);
    as it is where it states its nodes.

    Raises
    ------
    InputError
        If ``nodes`` does not divide the run's processes evenly.
    """
    if not _unplaced(run):
        return run
    total, count = run.placement.processes, nodes.value
    if total % count:
        raise InputError(str(run.origin), "processes", f"the {total} processes of {run.label!r} do not divide "
                         f"evenly over {nodes.source}; give a node count that divides them")
    each = total // count
    return _on(run, count, each, f"{total} processes on {count} nodes, {each} each ({nodes.source}; the result states "
                                 "no node count)")


def _unplaced(run: Run) -> bool:
    """Whether ``run`` is a workload that states its processes but not the nodes they ran on."""
    return run.workload is not None and run.workload.nodes is None and run.placement is not None


def _on(run: Run, nodes: int, ppn: int, placed: str) -> Run:
    """The run on ``nodes`` nodes of ``ppn`` processes each, its placement saying how they were placed."""
    return replace(run, workload=replace(run.workload, nodes=nodes, ppn=ppn),
                   placement=replace(run.placement, placed=placed))


def _no_ceiling(topology: Topology, run: Run, clients: tuple[str, ...] | None) -> str:
    """Why a run has no ceiling to compare with, or "" when it has one (its reader may say why not: a Darshan log's
    run of a module that moved less than the job moved around iobound's model)."""
    if run.workload is None:
        return f"not a storage workload ({run.origin.tool} result)"
    if said := dict(run.tags).get("no_ceiling"):
        return said
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
#   1.3  a run gains part: the part of the system a job's ceiling is over (a Darshan log's Lustre OSTs, or the
#        whole system, and why), null for a benchmark; a job's findings FEW-TARGETS, SMALL-ACCESSES,
#        SHARED-FILE-CONTENTION, METADATA-BOUND, and none about a benchmark's method (repetitions, length, data set)
#   1.4  a run gains its typed records, as results 1.3 gives them: placement (the placed note leaves the tags),
#        job, training and checkpoint; the evidence of AU-BELOW-MINIMUM and POTENTIAL-CACHING gives their figures
#        as numbers (au_per_epoch a list, accelerators a count, dlio_verdict null where not stated), flags (a list
#        per host, or one) and quantities (host_memory, data_per_host), not as tags' words
#   1.5  a ceiling finding resting on the ceiling's least gains evidence narrowed_by where runs no cache can have
#        served (witnesses) raised the least of ranges on its path: each range, its new least and the witness
#   1.6  finding IMPLAUSIBLE-HARDWARE (a description's parts and date given): its evidence gains needs (the sentence)
#        and implausible, per part beyond its class: component, needed, per_part, parts_per_member, year, dated,
#        fastest, fastest_year, fastest_rate and source
#   1.7  a FAR-BELOW finding gains evidence left_out (and is info) where its ceiling leaves out what makes the run
#        hard: small or unaligned transfers interleaved in one shared file, metadata servers that state no rate
#   1.8  IMPLAUSIBLE-HARDWARE also of a create or remove run whose processes each complete one faster than any
#        network's round trip (no description needed): its evidence measured, processes, per_process, round_trip,
#        answer (a core's least time to answer), needs (the sentence) and source
#   1.9  finding MEMORY-SERVED (a KV-cache offload's storage figure, judged against the serving node's tiers: no_ceiling
#        says so): its evidence gives measured, storage_tier, storage (least and most), storage_stated, memory_tier
#        (null where no memory tier reaches the figure) and beyond (stated, range or implied)
CHECK_VERSION = "1.9"


def check_body(topology: Topology, judgements: list[Judgement]) -> dict:
    """The body of an iobound/check document: the system and every run with its ceiling and findings."""
    return {"topology": {"name": topology.name, "path": topology.path}, "runs": [j.to_dict() for j in judgements]}
