"""Scaling: where adding client nodes stops helping (the knee), and throughput over the requests in flight.

The ceiling over a client group's node count is concave: it grows in proportion while
something of each node binds (its NIC, its requests in flight) and flattens where a shared
component takes over (the servers: in a GPFS study on 64 nodes, reads stopped scaling at
8 nodes with 8 I/O servers). :func:`knee` finds that point. :func:`queueing_network` turns the flow network
into the stations of a closed queueing network, so :mod:`models.queueing` can bound and
draw throughput over concurrency with operational analysis and mean value analysis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.workload import Workload
from models.ceiling import TIE, Ceiling
from models.flow import Scale
from models.queueing import Station

if TYPE_CHECKING:
    from pint import Quantity
    from models.predict import Model

__all__ = ["Knee", "knee", "QueueingNetwork", "queueing_network"]


@dataclass(frozen=True)
class Knee:
    """Up to ``nodes`` client nodes the ceiling grows in proportion (``before`` binds); beyond, ``after`` binds.

    ``before`` is empty when a shared component binds from one node on; ``full`` is the
    ceiling with every node of the group.
    """

    group: str
    nodes: int
    per_node: Quantity
    before: tuple[str, ...]
    after: tuple[str, ...]
    full: Quantity

    def to_dict(self) -> dict:
        return {"group": self.group, "nodes": self.nodes, "before": list(self.before), "after": list(self.after)}

    def __str__(self) -> str:
        if not self.before:
            return f"does not grow with the nodes of {self.group}: {', '.join(self.after)} bind(s) from one node on"
        return (f"grows with the nodes up to {self.nodes} of {self.group} ({', '.join(self.before)}); beyond, "
                f"{', '.join(self.after)} bind(s)")


def knee(model: Model, workload: Workload, clients: tuple[str, ...] | None = None) -> Knee | None:
    """The most nodes of the (single) client group over which the ceiling still grows in proportion.

    Returns None when it grows in proportion up to the whole group (no knee inside it).
    Bisection over the node count: the ceiling is concave in it, so ceiling(n) / n never rises.
    """
    chosen, counts = model.nodes(workload, clients)
    if len(chosen) != 1:
        raise InputError(model.topology.path, "clients", "the knee is over one client group's nodes; name one")
    group, count = chosen[0], model.topology.group(chosen[0]).count

    def at(n: int) -> Ceiling:
        return model.ceiling(replace(workload, nodes=n), chosen)

    one = at(1)
    per_node = one.value.m_as(one.metric.unit)

    def proportional(ceiling: Ceiling, n: int) -> bool:
        return ceiling.value.m_as(ceiling.metric.unit) >= n * per_node * (1 - TIE)

    full = at(count)
    if proportional(full, count):
        return None
    low, high = 1, count  # proportional at low, not at high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if proportional(at(middle), middle) else (low, middle)
    before = one.binding_layers if low > 1 else ()
    return Knee(group, low, one.value, before, at(high).binding_layers, full.value)


@dataclass(frozen=True)
class QueueingNetwork:
    """The stations a request visits, the delay it spends outside them (s), and the requests in flight."""

    stations: tuple[Station, ...]
    think: float
    population: int
    transfer_size: float  # bytes per request: requests/s times this is B/s


def queueing_network(model: Model, workload: Workload, clients: tuple[str, ...] | None = None) -> QueueingNetwork:
    """The workload's flow network as a closed queueing network.

    Each stage that carries flow becomes a station of its group's members; a request's
    service at one member is its share of the traffic (the maximum flow's split) times its
    bytes over the member's capacity, so the busiest station's demand gives back the
    maximum flow. The think time is the round trip and fixed latencies of the request
    stage. Stations are visited in turn (store and forward), so the curve is a pessimistic
    companion of the ceiling, which lets pipelined stages overlap.

    Raises
    ------
    InputError
        For metadata operations and unknown transfer sizes: a request has no bytes to move.
    """
    if workload.operation.is_metadata or workload.transfer_size is None:
        raise InputError(model.topology.path, "", "the queueing network needs a data workload with a transfer size")
    chosen, counts = model.nodes(workload, clients)
    network = model.network(replace(model.shape(workload), unbounded=""), chosen)  # with its request stage
    capacities = network.capacities(workload, counts)
    cut = network.graph.solve(capacities)
    size = workload.transfer_size.m_as("B")
    stations, think = [], 0.0
    for stage, capacity, flow in zip(network.stages, capacities, cut.flows):
        if stage is None or flow <= 0 or capacity == math.inf:
            continue
        if stage.scale == Scale.REQUESTS:
            think = max(think, stage.fixed)
            continue
        members = counts.get(stage.group) or (model.topology.group(stage.group).count if stage.group else 1)
        share = flow / cut.value
        stations.append(Station(", ".join(map(str, stage.components)), share * size * members / capacity, members))
    population = sum(counts[name] for name in chosen) * workload.ppn * workload.queue_depth
    return QueueingNetwork(tuple(stations), think, population, size)
