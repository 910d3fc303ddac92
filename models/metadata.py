"""Ceilings of metadata operations (mdtest's create, stat, remove ...): round trips, metadata servers, their journal,
one directory.

Each process waits for one operation at a time (times its queue depth), so n·p·q processes
complete at most n·p·q / (RTT + the servers' latency) operations per second. The metadata
servers (server groups that state a ``metadata`` rate) together complete the sum of their
rates when every process works in its own directory; a create or a remove is also bound by
what their devices make durable (``journal``). A directory shared by all processes bounds
them at its own ``directory`` rate where the servers state one (its lock, or striped over
several servers: then above one server's rate), else at one server's rate, where it lives;
``directory = "unlimited"`` is a directory striped over them all (DAOS's SX directories,
Lustre's striped directories).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Callable

from probes.core.errors import TopologyError
from probes.core.units import Metric, canonical
from probes.core.workload import Workload
from models.ceiling import TIE, Ceiling, LayerLimit, rate
from models.flow import UNKNOWN_CONCURRENCY
from models.formulas import DEPTH, PPN, count, least, mark, quotient, workload_values
from topologies.topology import Component, Group, Kind, Topology

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["ceiling", "bound", "unlimited", "LAYERS"]

LAYERS = ("round trips", "metadata servers", "metadata journal", "shared directory")
# The operations that make a record durable on the metadata devices: bound by the servers' journal.
_JOURNALED = ("create", "remove", "rename")


def unlimited(topology: Topology, workload: Workload, clients: tuple[str, ...]) -> str | None:
    """Why nothing in ``topology`` limits the metadata ``workload`` (no rtt, no metadata rate); None when something does."""
    rtt = workload.nodes is not None and any(g.capacity("rtt") and g.capacity("rtt").value is not None
                                             for name in clients for g in topology.neighbours(name, Kind.NETWORK))
    rates = any((c := g.capacity("metadata", workload.operation.value)) is not None and c.value is not None
                for g in topology.of_kind(Kind.SERVER))
    if rtt or rates:
        return None
    return (f"nothing limits {workload.operation.value} operations here: the topology states no metadata servers' "
            "rate (metadata = \"20 kop/s\") and " + ("no rtt of the clients' network" if workload.nodes is not None
                                                     else "the round trips need the number of nodes that ran it"))


def ceiling(topology: Topology, workload: Workload, clients: tuple[str, ...], counts: dict[str, int]) -> Ceiling:
    """The most metadata operations per second ``workload`` can complete, and what sets it.

    Raises
    ------
    TopologyError
        If the topology states nothing that limits metadata operations.
    """
    values = _Values(workload, counts)
    limits, assumptions = _limits(topology, workload, clients, counts, values)
    layers = [LayerLimit(name, rate(value, Metric.OPERATION_RATE), components,
                         lambda terms=terms: (tuple(terms()), values.made)) for name, value, components, terms in limits]
    value = min(limit[1] for limit in limits)
    binding = [layer for layer, limit in zip(layers, limits) if math.isclose(limit[1], value, rel_tol=TIE)]
    return Ceiling(workload, rate(value, Metric.OPERATION_RATE), tuple(c for layer in binding for c in layer.components),
                   tuple(layer.layer for layer in binding), tuple(layers), tuple(assumptions), Metric.OPERATION_RATE)


def bound(topology: Topology, workload: Workload, clients: tuple[str, ...], counts: dict[str, int]) -> float:
    """The value alone of :func:`ceiling` (op/s), without its layers: for solving what a run implies (thousands)."""
    return min(limit[1] for limit in _limits(topology, workload, clients, counts, _Values(workload, counts))[0])


# One limit of a metadata ceiling: its layer's name, value (op/s), components, and the maker of its terms.
_Limit = tuple[str, float, tuple[Component, ...], Callable[[], list]]


def _limits(topology: Topology, workload: Workload, clients: tuple[str, ...], counts: dict[str, int],
            values: _Values) -> tuple[list[_Limit], list[str]]:
    """The limits of :func:`ceiling` (at least one), and what it assumes."""
    op = workload.operation.value
    servers = [(g, c.value) for g in topology.of_kind(Kind.SERVER)
               if (c := g.capacity("metadata", op)) is not None and c.value is not None]
    layers, assumptions = [], []
    trips = _round_trips(topology, clients, counts, workload, values) if workload.nodes is not None else None
    if workload.nodes is None:
        assumptions.append(UNKNOWN_CONCURRENCY.replace("requests in flight", "round trips"))
    elif trips:
        layers.append(trips)
        assumptions.append("each process waits for one operation at a time (times its queue depth), and each "
                           "operation takes at least one network round trip and the servers' latency")
    if servers:
        def terms() -> list[str]:
            return [values.symbol("MD", g, v) + "*" + values.counted(g) for g, v in servers]
        total = math.fsum(g.count * canonical(v) for g, v in servers)
        layers.append(("metadata servers", total, tuple(Component(g.name, "metadata") for g, _ in servers), terms))
        journal = _journal(topology, values) if op in _JOURNALED else None
        if journal:
            layers.append(journal)
        if workload.shared_directory and _spread(servers, op):
            assumptions.append("one directory is spread over every metadata server (directory = \"unlimited\"), so "
                               "a shared directory is bound by the servers together")
        elif workload.shared_directory:
            layers.append(_directory(servers, values, op))
        elif workload.shared_directory is None:
            assumptions.append("whether all processes share one directory is not known, so a single directory's "
                               "limit is left out (an upper bound)")
    else:
        assumptions.append(f"no server states a rate of {op} operations (metadata = \"20 kop/s\", or "
                           f"{op}_metadata), so the metadata servers are taken as unlimited")
    if not layers:
        raise TopologyError(topology.path, "servers", unlimited(topology, workload, clients) or
                            f"no metadata limit applies to {op} operations")
    return layers, assumptions


def _round_trips(topology: Topology, clients: tuple[str, ...], counts: dict[str, int], workload: Workload,
                 values: _Values) -> _Limit | None:
    """n·p·q / (RTT + L) per client group, summed; None when no client group's network states its rtt."""
    latency = least(topology.of_kind(Kind.SERVER), "latency")
    waiting, components, total = [], [], 0.0
    for name in clients:
        nearest = least(topology.neighbours(name, Kind.NETWORK), "rtt")
        if nearest is None:
            continue
        waits = [("RTT", "rtt", *nearest)] + ([("L", "latency", *latency)] if latency else [])
        waiting.append((name, waits))
        components += [Component(group.name, key) for _, key, _, group in waits]
        total += counts[name] * workload.ppn * workload.queue_depth / math.fsum(canonical(v) for _, _, v, _ in waits)

    def terms() -> list[str]:
        return [quotient(f"{count(name)}*{PPN}*{DEPTH}", " + ".join(values.symbol(prefix, group, value)
                                                                  for prefix, _, value, group in waits))
                for name, waits in waiting]
    return ("round trips", total, tuple(dict.fromkeys(components)), terms) if waiting else None


def _journal(topology: Topology, values: _Values) -> _Limit | None:
    """Σ count·JOURNAL over the server groups that state what their devices make durable; None where none does."""
    stating = [(g, c.value) for g in topology.of_kind(Kind.SERVER)
               if (c := g.capacity("journal")) is not None and c.value is not None]
    if not stating:
        return None

    def terms() -> list[str]:
        return [values.symbol("J", g, v) + "*" + values.counted(g) for g, v in stating]
    total = math.fsum(g.count * canonical(v) for g, v in stating)
    return "metadata journal", total, tuple(Component(g.name, "journal") for g, _ in stating), terms


def _spread(servers: list[tuple[Group, Quantity]], op: str) -> bool:
    """Whether a metadata server states ``directory = "unlimited"``: a directory may be striped over them all."""
    return any((stated := g.capacity("directory", op)) is not None and stated.value is None for g, _ in servers)


def _directory(servers: list[tuple[Group, Quantity]], values: _Values, op: str) -> _Limit:
    """One directory: at the ``directory`` rate its servers state (its lock, or striped over them), else on one
    metadata server at that server's rate; the best group's.

    Each group's own limit rises with its figures, so their greatest does too (the ceiling stays
    monotone when a range changes which group is fastest)."""
    def own(group: Group, speed: Quantity) -> tuple[float, str, str, Quantity]:
        stated = group.capacity("directory", op)
        if stated is not None and stated.value is not None:
            return canonical(stated.value), "DIR", "directory", stated.value
        return canonical(speed), "MD", "metadata", speed
    limit, (group, _) = max(((own(g, v), (g, v)) for g, v in servers), key=lambda pair: pair[0][0])
    speed, prefix, key, value = limit
    return "shared directory", speed, (Component(group.name, key),), lambda: [values.symbol(prefix, group, value)]


class _Values:
    """The values of one metadata ceiling's symbols by name, recorded as its formulas are written: only when one is
    asked for."""

    def __init__(self, workload: Workload, counts: dict[str, int]):
        self.workload, self.counts = workload, counts

    @functools.cached_property
    def made(self) -> dict[str, Quantity | int]:
        return workload_values(self.workload, self.counts)

    def symbol(self, prefix: str, group: Group, value: Quantity) -> str:
        """The symbol PREFIX_group as formula text, its value recorded."""
        self.made[f"{prefix}_{group.name}"] = value
        return mark(f"{prefix}_{group.name}")

    def counted(self, group: Group) -> str:
        """The members of a server group, n_group, as formula text, their count recorded."""
        self.made[f"n_{group.name}"] = group.count
        return count(group.name)

