"""Measured evidence that narrows ranges: runs no cache can have served (witnesses), what each proves of the figures
on its path, and the topology with those figures' least ends raised to it.

A write flushed before its phase ends (IOR -e) or a read by another node than wrote the data (IOR -C) crossed the
network: the clients' page cache cannot have served it. Its data crossed the devices too where it is larger than the
servers' memory, the one cache left on its way. What it needs of each range (every other at its most favourable end:
:func:`models.implied.implied`) the hardware has, so that range's least favourable end moves there, never past
its most favourable one. A witness never judges itself, and one above its own ceiling's high end proves nothing: the
anomaly is then the witness.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from probes.core.run import Run
from probes.core.units import Metric, Q_, canonical, format_quantity, quantity_json
from probes.core.workload import Operation
from models.ceiling import Ceiling, Implied
from models.implied import implied
from topologies.topology import Capacity, Component, Kind, Source, Topology
from assess.findings import CEILING_CODES, Finding, summary_in

if TYPE_CHECKING:
    from pint import Quantity

    from models.predict import Model

__all__ = ["Witness", "Narrowing", "uncached", "witness", "narrowed", "cited", "written"]

_OPERATIONS = frozenset(op.value for op in Operation)


@dataclass(frozen=True, eq=False)
class Witness:
    """A run no cache on its path can have served, and what it proves: the least of each range it crossed.

    ``of`` names the result it came from where that is another than the one judged (a list's other submission of the
    same system), "" for the same result.
    """

    run: Run
    measured: Quantity  # its mean, B/s
    why: str
    proves: tuple[Implied, ...]
    of: str = ""

    @property
    def name(self) -> str:
        return self.run.label + (f" of {self.of}" if self.of else "")

    def __str__(self) -> str:
        return self._said

    @functools.cached_property
    def _said(self) -> str:  # said once: a list's review cites a witness in every phase whose ranges it raised
        return f"{self.name} ({format_quantity(self.measured)}, {self.why})"

    @functools.cached_property
    def raising(self) -> tuple[Implied, ...]:
        """What it proves past its range's least favourable end and not past its most favourable one: what it raises
        of a range stated alike (found once: a list's review asks it for each of the system's submissions)."""
        return tuple(need for need in self.proves if _moves(need.stated, need.needed))


@dataclass(frozen=True)
class Narrowing:
    """A range whose least favourable end a witness moved: where, the range as stated, its new end, and the witness."""

    component: Component
    stated: Capacity
    least: Quantity
    witness: Witness

    def __str__(self) -> str:
        return self._said

    @functools.cached_property
    def _said(self) -> str:  # said once: a list's review cites a narrowing in every phase whose least it raised
        sign = "≤" if self.stated.metric is Metric.LATENCY else "≥"
        return f"{self.component} {sign} {format_quantity(self.least, unit=self.stated.unit)} (of {self.stated.span()})"

    def to_dict(self) -> dict:
        return {"component": str(self.component), "least": quantity_json(self.least),
                "range": [quantity_json(v) for v in self.stated.range], "witness": self.witness.name,
                "witness_measured": quantity_json(self.measured), "why": self.witness.why}

    @property
    def measured(self) -> Quantity:
        return self.witness.measured


def uncached(run: Run) -> str:
    """Why the clients' caches cannot have served the run ("" where they may have): a write flushed before its phase
    ended, or a read by another node than wrote the data."""
    workload, tags = run.workload, dict(run.tags)
    if workload is None or workload.operation.is_metadata:
        return ""
    if workload.operation is Operation.WRITE and "fsync" in tags:
        return f"flushed before the phase ended ({tags['fsync']})"
    if workload.operation is Operation.READ and "read_by_other_node" in tags:
        return f"read by another node than wrote it ({tags['read_by_other_node']})"
    return ""


def witness(model: Model, run: Run, ceiling: Ceiling, clients: tuple[str, ...] | None) -> Witness | None:
    """The run as a witness on ``model`` (``ceiling``: its own there), or None: where a cache may have served all of
    it, where it is above its ceiling's high end (it is then the anomaly, not evidence), or where it proves nothing
    of a range."""
    why, workload = uncached(run), run.workload
    summary = summary_in(run, Metric.BANDWIDTH)
    if not why or ceiling.metric is not Metric.BANDWIDTH or summary is None or summary.mean > canonical(ceiling.value):
        return None
    data_set = workload.data_set or written(run, summary.mean)
    memory = model.memory(model.nodes(workload, clients)[1]).servers
    past = data_set is not None and memory is not None and data_set > memory
    if past:
        why += (f", {format_quantity(data_set, Metric.SIZE)} past the servers' "
                f"{format_quantity(memory, Metric.SIZE)} of memory")
    proves = tuple(need for need in implied(model, workload, clients, summary.mean)
                   if need.stated.range is not None and (past or not _behind_servers(model.topology, need.component)))
    return Witness(run, Q_(summary.mean, "B/s"), why, proves) if proves else None


def written(run: Run, rate: float) -> Quantity | None:
    """The bytes a run moved: its rate over its mean duration; for an io500 write phase whose time is not stated (a
    list's row), at least its rate over the 5 minutes io500's rules ask of it; None where neither is known."""
    if run.durations:
        return Q_(rate * sum(run.durations) / len(run.durations), "B")
    if run.origin.tool == "io500" and run.workload.operation is Operation.WRITE:
        from probes.readers.io500 import LEAST_WRITE_SECONDS  # io500's reader, loaded only for its rows

        return Q_(rate * LEAST_WRITE_SECONDS, "B")
    return None


def _behind_servers(topology: Topology, component: Component) -> bool:
    """Whether the servers' memory stands in front of the component (a device): data may stop there before it."""
    return component.link is None and topology.group(component.group).kind is Kind.DEVICE


def narrowed(topology: Topology, witnesses: Iterable[Witness], judged: Run) -> tuple[Topology, tuple[Narrowing, ...]]:
    """``topology`` with each range's least favourable end moved to the most any witness but ``judged`` proves of it
    (never past its most favourable end), and those moves; a range stated otherwise here than where the witness was
    judged (another system's figure) is left as it is."""
    best: dict[Component, Narrowing] = {}
    for w in witnesses:
        if w.run == judged:
            continue
        for need in w.raising:
            stated = topology.capacity_at(need.component)
            if stated is None or stated.range != need.stated.range:
                continue
            held = best.get(need.component)
            if held is None or _better(stated.metric, need.needed, held.least):
                best[need.component] = Narrowing(need.component, stated, need.needed, w)
    if not best:
        return topology, ()
    return topology.replaced({c: _raised(n) for c, n in best.items()}), tuple(best.values())


def _better(metric: Metric, value: Quantity, than: Quantity) -> bool:
    """Whether ``value`` is more favourable to a ceiling than ``than``: greater, or less for a latency."""
    return value < than if metric is Metric.LATENCY else value > than


def _moves(stated: Capacity, needed: Quantity) -> bool:
    """Whether ``needed`` lies past the range's least favourable end and not past its most favourable one."""
    worst, best = stated.ends
    return _better(stated.metric, needed, worst) and not _better(stated.metric, needed, best)


def _raised(n: Narrowing) -> Capacity:
    stated = n.stated
    low, high = (stated.range[0], n.least) if stated.metric is Metric.LATENCY else (n.least, stated.range[1])
    note = f"{stated.source.note}; " if stated.source.note else ""
    return Capacity.ranged(low, high, stated.metric, Source(stated.source.kind, f"{note}narrowed by {n.witness}"))


def _as_used(component: Component, operation: Operation) -> Component | None:
    """The component as a ceiling of ``operation`` names it (``storage.write_bandwidth`` as ``storage.bandwidth``);
    None for another operation's figure (``storage.read_bandwidth`` for a write)."""
    own, _, base = component.key.partition("_")
    if own not in _OPERATIONS:
        return component
    return replace(component, key=base) if own == operation.value or operation is Operation.MIXED else None


def cited(finding: Finding, ceiling: Ceiling, narrowings: tuple[Narrowing, ...]) -> Finding:
    """A ceiling finding that rests on the ceiling's least, saying which witnesses raised the ranges on its path (the
    finding as it is where none did, or where it stands on the high end alone: ABOVE-CEILING)."""
    if not narrowings or finding.code not in CEILING_CODES or finding.code == "ABOVE-CEILING":
        return finding
    path = {c for layer in ceiling.layers for c in layer.components} | set(ceiling.binding)
    used = [n for n in narrowings if _as_used(n.component, ceiling.workload.operation) in path]
    if not used:
        return finding
    said = "; ".join(f"{', '.join(str(n) for n in used if n.witness is w)} by {w}"
                     for w in dict.fromkeys(n.witness for n in used))
    return Finding(finding.code, finding.severity, finding.run,
                   f"{finding.message} Measured evidence raised the least of its ranges: {said}.",
                   finding.remedy, finding.evidence | {"narrowed_by": [n.to_dict() for n in used]}, finding.implied)
