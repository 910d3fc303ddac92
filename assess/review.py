"""Judge a whole benchmark list: each submission's phases against the topology its own description gives.

A submission's description (the io500 list's hardware columns) becomes a topology with every unstated
figure a range (:mod:`topologies.described.io500`); its phases are judged by :func:`assess.check.check_runs`,
as ``iobound check`` judges any run. Each phase gets its ceiling interval, its efficiency (result over
the ceiling's high end), its verdict and, where the result needs more than the least the description
allows, the hardware it implies, said in ports where the network's name fixes a port's rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from probes.core.heap import set_aside
from probes.core.units import Q_, Metric, format_quantity
from probes.readers.io500 import LEAST_WRITE_SECONDS
from probes.readers.io500_system import Submission
from topologies.described.io500 import Described, describe
from topologies.topology import Kind
from models.predict import Model
from assess.check import check_runs, witnesses_of
from assess.findings.ceiling import summary_in
from assess.findings import Judgement, Severity
from assess.findings.published import band_finding
from assess.witness import written

if TYPE_CHECKING:
    from pint import Quantity

    from models.ceiling import Implied
    from probes.core.run import Run
    from assess.witness import Witness

__all__ = ["Phase", "Assumption", "Reviewed", "review", "REVIEW_VERSION", "review_body", "VERDICTS", "UNJUDGED",
           "severity"]

# The ceiling findings, the strongest first: a phase's verdict is the first it has, else "within"; its severity is
# that finding's (FAR-BELOW is information where the ceiling leaves out what makes the phase hard). IMPLAUSIBLE-HARDWARE
# is a POSSIBLE-IF that needs more of a drive or port than any part of its class had done by the description's date.
# A metadata phase's published band (PUBLISHED-BAND) is information beside its verdict, never one.
VERDICTS = ("ABOVE-CEILING", "IMPLAUSIBLE-HARDWARE", "POSSIBLE-IF", "FAR-BELOW", "AT-CEILING", "BELOW-CEILING")
WITHIN = "within"
UNJUDGED = "unjudged"


@dataclass(frozen=True)
class Phase:
    """One phase of a submission as judged: its result, ceiling interval, efficiency, verdict and what it implies."""

    label: str
    measured: Quantity | None  # None: the list's cell holds no result
    low: Quantity | None
    high: Quantity | None
    efficiency: float | None
    verdict: str
    implies: str
    reason: str  # why it has no ceiling, for an unjudged phase
    narrowed_by: tuple[dict, ...] = ()  # the ranges its verdict's least rests on that witnesses raised (Narrowing.to_dict)
    severity: Severity | None = None  # its verdict's, None for within and unjudged

    def to_dict(self) -> dict:
        return {"phase": self.label, "measured": _q(self.measured), "ceiling_low": _q(self.low), "ceiling": _q(self.high),
                "efficiency": self.efficiency, "verdict": self.verdict, "implies": self.implies or None,
                "no_ceiling": self.reason or None, "narrowed_by": list(self.narrowed_by)}


@dataclass(frozen=True)
class Assumption:
    """io500's assumption that "the 300s easy write produces sufficiently large files to prevent caching later for
    random read" (IO500/io500 PR #91), for one submission: the data its ior-easy-write left on each client node
    against each node's memory as stated. Information, never a verdict."""

    written: Quantity  # per client node: the phase's rate over its time, or at least over io500's 300 s
    least: bool  # the phase's time is not stated: ``written`` is the least it wrote
    memory: Quantity | None  # each client node's memory as its description states it
    read_above: bool  # its ior-easy-read is above what the stated hardware allows: a hint that a cache served it

    @property
    def state(self) -> str:
        """``held`` (the files exceed the memory), ``not held``, ``not shown`` (the least it wrote does not exceed
        the memory; its time would tell) or ``memory not stated``."""
        if self.memory is None:
            return "memory not stated"
        if self.written > self.memory:
            return "held"
        return "not shown" if self.least else "not held"

    def __str__(self) -> str:
        state, wrote = self.state, format_quantity(self.written, Metric.SIZE)
        if state == "memory not stated":
            said = f"{state}: it breaks {'only ' if self.least else ''}with more than {wrote} of memory per client node"
        else:
            memory = format_quantity(self.memory)
            said = f"{state}: {'≥ ' if self.least else ''}{wrote} written per client node " + \
                   ("> " if state == "held" else "≤ ") + f"{memory} of memory"
            if state == "not shown":
                said += (f"; it holds if the easy write ran more than "
                         f"{LEAST_WRITE_SECONDS * (self.memory / self.written).m_as(''):.0f} s")
        return said + ("; its ior-easy-read is above its ceiling: a cache may have served it" if self.read_above else "")

    def to_dict(self) -> dict:
        return {"state": self.state, "written_per_node": _q(self.written), "written_is_least": self.least,
                "client_memory": _q(self.memory), "easy_read_above_ceiling": self.read_above}


def _q(value: Quantity | None) -> dict | None:
    return None if value is None else {"value": value.magnitude, "unit": f"{value.units:~P}"}


@dataclass(frozen=True)
class Reviewed:
    """A submission, the topology its description gives, and its phases judged on it."""

    submission: Submission
    described: Described
    judgements: tuple[Judgement, ...]
    phases: tuple[Phase, ...]
    assumption: Assumption | None = None  # io500's, where the easy write and the client nodes are stated

    @property
    def verdict(self) -> str:
        """The strongest verdict of any phase; ``unjudged`` when no phase has a ceiling."""
        found = {p.verdict for p in self.phases}
        return next((v for v in VERDICTS if v in found), WITHIN if found - {UNJUDGED} else UNJUDGED)

    @property
    def thin(self) -> str:
        """Why the description is too thin to judge anything ("" when it gives a topology)."""
        return "" if self.described.topology else "; ".join(self.described.missing)

    def to_dict(self) -> dict:
        s, d = self.submission, self.described
        return {"id": s.id, "list": s.list_name, "status": s.status, "system": s.description.title,
                "filesystem": s.description.get("filesystem_type"), "verdict": self.verdict,
                "assumptions": list(d.assumptions), "missing": list(d.missing),
                "topology": None if d.topology is None else d.topology.to_dict(),
                "phases": [p.to_dict() for p in self.phases],
                "easy_write_past_client_memory": None if self.assumption is None else self.assumption.to_dict()}


# The submissions whose topologies and models are kept from the first pass to the second: a list of up to so many is
# described and modelled once (about 0.1 MB each).
KEPT = 512


def review(submissions: Iterable[Submission], *, progress: Callable[[str, int, int | None], None] | None = None,
           kept: int = KEPT) -> Iterator[Reviewed]:
    """Every submission judged on its own description's topology (one model per submission), each range's least end
    raised by the witnesses (:mod:`assess.witness`) of the submission and of the same system's other submissions.

    ``submissions`` is gone through twice, a submission at a time (a list, or :class:`ListFile`, which reads its file
    again): first for the witnesses of each named system, then to judge each, as it is yielded. What is held between
    the two is each system's witnesses (those alike but in the submission they come from kept twice at most), and
    the topologies and models of the first ``kept`` submissions, so that they are not made again. ``progress`` is
    told the pass (``witnesses found in``, ``judged``), the submissions done and, while judging, how many there are.
    Until the review ends, what is alive at each submission is set aside from the garbage collector's walks
    (:mod:`probes.core.heap`), the caller's too: cyclic garbage made meanwhile is collected after it.
    """
    if iter(submissions) is submissions:  # a one-pass iterator (a generator): held, as the second pass needs it again
        submissions = list(submissions)
    evidence: dict[tuple[str, str], _Evidence] = {}
    made: dict[int, tuple[Described, Model | None, tuple[Witness, ...]]] = {}
    total = 0
    with set_aside() as keep:  # what the first pass keeps, and each judged submission's
        keep()
        for total, s in enumerate(submissions, start=1):
            if any(_system(s)):
                modelled = _modelled(s)
                evidence.setdefault(_system(s), _Evidence()).add(total - 1, s.id, modelled[2])
                if len(made) < kept:
                    made[total - 1] = modelled
                    keep()
            if progress:
                progress("witnesses found in", total, None)
        for index, s in enumerate(submissions):
            described, model, found = made.pop(index) if index in made else _modelled(s)
            keep()
            system = evidence.get(_system(s)) if any(_system(s)) else None
            yield _reviewed(s, described, model, found + (system.others(index, s.runs) if system else ()))
            if progress:
                progress("judged", index + 1, total)


def _modelled(submission: Submission) -> tuple[Described, Model | None, tuple[Witness, ...]]:
    """The submission's topology, its model (None without a topology) and its witnesses found on that model."""
    described = describe(submission.description)
    if described.topology is None:
        return described, None, ()
    model = Model(described.topology)
    return described, model, witnesses_of(described.topology, submission.runs, model=model, hardware=described.parts)


class _Evidence:
    """A system's witnesses, each named for its submission; of witnesses alike in all but their submission, the first
    (a later one never narrows more): a witness alike to a run of the submission judged is that run listed again, and
    never vouches for it (:meth:`others`)."""

    def __init__(self) -> None:
        self.witnesses: list[tuple[int, Witness]] = []
        self._seen: set[tuple] = set()

    def add(self, index: int, submission: str, found: tuple[Witness, ...]) -> None:
        for w in found:
            key = _alike(w)
            if key not in self._seen:
                self._seen.add(key)
                self.witnesses.append((index, replace(w, of=f"submission {submission}")))

    def others(self, index: int, runs: tuple[Run, ...]) -> tuple[Witness, ...]:
        """The witnesses of the system's submissions but the one at ``index``, in their order, but those that are one
        of its ``runs`` listed again (the same phase with the same figures): the same measurement, which a list holds
        twice when a result is submitted to two lists, proves nothing of itself."""
        own = {(r.label, r.workload, r.samples) for r in runs}
        return tuple(w for i, w in self.witnesses
                     if i != index and (w.run.label, w.run.workload, w.run.samples) not in own)


def _alike(w: Witness) -> tuple:
    """What a witness proves and says, but for the submission it comes from."""
    def q(value) -> tuple:
        return value.magnitude, value.units  # equal where their text is, without formatting it

    return (w.run.label, w.run.workload, q(w.measured), w.why,
            tuple((n.component, tuple(map(q, n.stated.range or ())), q(n.needed)) for n in w.proves))


def _system(submission: Submission) -> tuple[str, str]:
    """What names a system across submissions: its name and institution as stated, ("", "") where it states neither."""
    d = submission.description
    return d.get("system").casefold(), d.get("institution").casefold()


def _reviewed(submission: Submission, described: Described, model: Model | None,
              witnesses: tuple[Witness, ...]) -> Reviewed:
    unread = tuple(Phase(label, None, None, None, None, UNJUDGED, "", why) for label, why in submission.unread)
    if described.topology is None:
        phases = tuple(Phase(r.label, Q_(r.samples[0], r.unit), None, None, None, UNJUDGED, "", described.missing[0])
                       for r in submission.runs)
        return Reviewed(submission, described, (), phases + unread, _assumption(submission.runs, described, phases))
    system = submission.description.title
    servers = sum(g.count for g in described.topology.of_kind(Kind.SERVER) if g.capacity("metadata") is not None)
    judgements = tuple(_banded(j, described, system, servers) for j in check_runs(
        described.topology, submission.runs, witnesses=witnesses, hardware=described.parts, model=model))
    phases = tuple(_phase(j, described) for j in judgements)
    return Reviewed(submission, described, judgements, phases + unread, _assumption(submission.runs, described, phases))


def _assumption(runs: Iterable[Run], described: Described, phases: tuple[Phase, ...]) -> Assumption | None:
    """io500's assumption for the submission: what its ior-easy-write wrote per client node (its rate over its time,
    or over the 300 s its rules ask) against the clients' memory its topology states; None without the phase or its
    client nodes."""
    run = next((r for r in runs if r.label == "ior-easy-write" and r.workload is not None), None)
    clients = () if described.topology is None else described.topology.of_kind(Kind.CLIENT)
    nodes = run.workload.nodes if run is not None and run.workload.nodes else sum(g.count for g in clients)
    summary = None if run is None else summary_in(run, Metric.BANDWIDTH)
    wrote = None if summary is None else written(run, summary.mean)
    if wrote is None or not nodes:
        return None
    stated = [g.capacity("memory") for g in clients]  # one figure for every node: one group's, not a range
    memory = stated[0].value if len(stated) == 1 and stated[0] is not None and stated[0].range is None else None
    read_above = any(p.label == "ior-easy-read" and p.verdict == "ABOVE-CEILING" for p in phases)
    return Assumption((wrote / nodes).to("GiB"), not run.durations, memory, read_above)


def _banded(j: Judgement, described: Described, system: str, servers: int) -> Judgement:
    """A metadata phase's judgement with the published band of its kind beside it (information) for its ``servers``
    metadata servers, the submission's own system left out of the band."""
    if described.band is None or j.ceiling is None or not j.run.workload.operation.is_metadata:
        return j
    found = band_finding(j.run, *described.band, servers, system) if servers else None
    return replace(j, findings=j.findings + (found,)) if found else j


def _phase(j: Judgement, described: Described) -> Phase:
    measured = Q_(j.run.samples[0], j.run.unit)
    if j.ceiling is None:
        return Phase(j.run.label, measured, None, None, None, UNJUDGED, "", _unjudged(j, described))
    codes = {f.code: f for f in j.findings}
    verdict = next((code for code in VERDICTS if code in codes), WITHIN)
    implies = ""
    if verdict == "IMPLAUSIBLE-HARDWARE":
        implies = codes[verdict].evidence["needs"]
    elif verdict == "POSSIBLE-IF":
        implies = _needs(codes[verdict].implied or (), described)
    elif verdict == "ABOVE-CEILING":
        implies = _beyond(j, described)
    narrowed = tuple(codes[verdict].evidence.get("narrowed_by", ())) if verdict in codes else ()
    return Phase(j.run.label, measured, j.ceiling.least, j.ceiling.value, j.ratio, verdict, implies, "", narrowed,
                 codes[verdict].severity if verdict in codes else None)


def _unjudged(j: Judgement, described: Described) -> str:
    """Why a phase has no ceiling, naming the description's field where one is missing."""
    fields = [m for m in described.missing if m.startswith(("md_nodes", "filesystem_type"))]
    return fields[0] if fields and j.run.workload and j.run.workload.operation.is_metadata else j.no_ceiling


def _needs(implied: Iterable[Implied], described: Described) -> str:
    """What a POSSIBLE-IF result needs of each range, in ports of the named network where it can."""
    said = []
    for need in implied:
        group, key = need.component.group, need.component.key
        port = described.ports.get(group)
        if key == "nic" and port is not None:
            said.append(_ports(need.needed / port, port, group))
        else:  # a round trip must be shorter, a rate larger
            sign = "≤" if need.stated.metric is Metric.LATENCY else "≥"
            said.append(f"{need.component} {sign} {format_quantity(need.needed)}")
    return "needs " + " and ".join(said) if said else "needs several ranges near their most at once"


def _beyond(j: Judgement, described: Described) -> str:
    """What an ABOVE-CEILING result would need of the component that binds at the high end, or a cache."""
    ceiling = j.ceiling
    share = j.measured.m_as(ceiling.metric.unit) / ceiling.value.m_as(ceiling.metric.unit)
    said = []
    operation = j.run.workload.operation.value
    for component in ceiling.binding:
        capacity = described.topology.capacity_at(component, operation)
        port = described.ports.get(component.group)
        if capacity is None or capacity.value is None:
            continue
        if component.key == "nic" and port is not None:
            said.append(_ports(capacity.value * share / port, port, component.group) + f" ({_stated(capacity)})")
        else:
            key = f"{operation}_{component.key}" if component.key == "metadata" else component.key
            unit = (capacity.range[1] if capacity.range else capacity.value).units
            latency = capacity.metric is Metric.LATENCY  # a round trip must be shorter, not larger
            needed = capacity.value / share if latency else capacity.value * share
            said.append(f"{component.group}.{key} {'≤' if latency else '≥'} {format_quantity(needed, unit=unit)} "
                        f"({_stated(capacity)})")
    return ("needs " + " and ".join(said) + ", or a cache") if said else "needs more than the stated hardware, or a cache"


def _stated(capacity) -> str:
    """``stated: assumption 100 to 800 Gbit/s``: as POSSIBLE-IF says what it implies, the source's kind first."""
    kind = "" if capacity.source.kind == "unstated" else f"{capacity.source.kind} "
    return f"stated: {kind}{capacity.span() if capacity.range else capacity}"


def _ports(share: Quantity, port: Quantity, group: str) -> str:
    """``≥ 3 ports of 100 Gbit/s per clients node (2.35 at their full rate)``: whole ports, and the share behind them."""
    needed = share.m_as("")
    return (f"≥ {math.ceil(needed - 1e-9)} ports of {port.m_as('Gbit/s'):g} Gbit/s per {group} node "
            f"({needed:.2f} at their full rate)")


# review format history:
#   1.0  first version: per submission its verdict, assumptions, missing fields, topology and phases
#   1.1  a phase gains narrowed_by: the ranges its verdict's least rests on that witnesses (runs no cache can have
#        served, of the submission or of the same system's others) raised, each with its least and the witness
#   1.2  a phase's (and a submission's) verdict may be IMPLAUSIBLE-HARDWARE; its implies then says the part, the
#        fastest of its class by the description's date and that part's source; a topology's groups may carry
#        request_size (topology 1.2)
#   1.3  a submission gains easy_write_past_client_memory: io500's assumption that the easy write's files exceed the
#        clients' memory, with the data written per client node (a least where the phase's time is not stated), the
#        memory stated per node (null where not: the state says memory not stated) and whether the ior-easy-read is
#        above its ceiling; null without the phase or its client nodes. A list's client memory may be stated in
#        client_volatile_memory_capacity (topology: the clients' memory)
#   1.4  a phase whose cell in the list holds no result (not a number, or below zero) is unjudged with measured null,
#        its no_ceiling saying where and what the cell holds: the row's other phases are judged (it stopped the review)
REVIEW_VERSION = "1.4"


def review_body(source: str, reviewed: list[Reviewed]) -> dict:
    """The body of an iobound/review document."""
    return {"list": source, "submissions": [r.to_dict() for r in reviewed]}


def severity(reviewed: Reviewed) -> Severity | None:
    """The most severe of its phases' verdicts (ABOVE-CEILING an error; FAR-BELOW information where the ceiling leaves
    out what makes the phase hard); None without one."""
    return max((p.severity for p in reviewed.phases if p.severity is not None), default=None)
