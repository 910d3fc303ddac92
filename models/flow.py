"""The flow network of a topology under one workload, whose minimum cut is the bandwidth ceiling.

Each group becomes a chain of stages, one per capacity that applies (a client's
own throughput, its message rate, its NIC; a server's NIC, then its own throughput;
a device's bandwidth, then its IOPS for random access). Links join the chains in the
direction data moves: clients → networks → servers → devices for writes, reversed
for reads. Every stage carries its sympy term, so the cut's value has a formula.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import sympy as sp

from probes.errors import TopologyError
from probes.units import Metric, Quantity, format_quantity
from probes.workload import Access, Operation, Workload
from topologies.topology import Group, Kind, Topology

__all__ = ["Stage", "FlowNetwork", "canonical", "CLIENTS", "STORAGE", "SIZE", "PPN", "DEPTH"]

CLIENTS, STORAGE = "⊤clients", "⊥storage"  # reserved node names; no group name starts with these marks
SIZE, PPN, DEPTH = sp.symbols("s p q", positive=True)

# Per kind, in the order data passes them when writing: (capacity key, layer name).
_STAGES = {
    Kind.CLIENT: (("bandwidth", "client throughput"), ("messages", "network message rate"), ("nic", "client NICs")),
    Kind.NETWORK: (("bandwidth", "network fabric"),),
    Kind.SERVER: (("nic", "server NICs"), ("bandwidth", "server throughput")),
    Kind.DEVICE: (("bandwidth", "devices"), ("iops", "device IOPS")),
}
_SYMBOL = {"nic": "NIC", "bandwidth": "B", "iops": "IOPS", "rtt": "RTT"}


@dataclass(frozen=True)
class Stage:
    """One capacity on the data path: ``factors`` multiplied, divided by ``divisor`` when there is one."""

    group: str
    key: str
    layer: str
    factors: tuple[sp.Symbol, ...]
    divisor: sp.Symbol | None
    values: dict[sp.Symbol, Quantity | int]

    @property
    def component(self) -> str:
        return f"{self.group}.{self.key}"

    @property
    def term(self) -> sp.Expr:
        product = sp.Mul(*self.factors)
        return product / self.divisor if self.divisor is not None else product

    @property
    def capacity(self) -> float:
        """Bytes per second."""
        return float(self.term.subs({s: canonical(v) for s, v in self.values.items()}))

    def numbers(self) -> str:
        """The term with the numbers put in, e.g. ``10 × 110 MiB/s``."""
        text = " × ".join(_shown(self.values[f]) for f in self.factors)
        return f"{text} / {_shown(self.values[self.divisor])}" if self.divisor is not None else text


def canonical(value: Quantity | int) -> float:
    """A count as it is, a quantity as a float in its metric's canonical unit (B/s, op/s, s, B)."""
    if isinstance(value, int):
        return float(value)
    return value.m_as(Metric.of(value).unit)


def _shown(value: Quantity | int) -> str:
    return str(value) if isinstance(value, int) else format_quantity(value)


class FlowNetwork:
    """A directed graph between CLIENTS and STORAGE, edges in the direction data moves, stages on edges.

    ``source`` and ``sink`` are CLIENTS and STORAGE for a write, the other way round for a read.
    """

    def __init__(self, topology: Topology, workload: Workload, clients: tuple[str, ...] | None = None):
        self.topology, self.workload = topology, workload
        self.clients = self._clients(clients)
        self.graph = nx.DiGraph()
        self.stages: list[Stage] = []
        self.assumptions: list[str] = []
        for group in topology.groups:
            if group.kind is not Kind.CLIENT or group.name in self.clients:
                self._chain(group)
        self._connect()
        self.source, self.sink = CLIENTS, STORAGE
        if workload.operation is Operation.READ:
            self.graph = self.graph.reverse(copy=True)
            self.source, self.sink = STORAGE, CLIENTS

    def _clients(self, chosen: tuple[str, ...] | None) -> tuple[str, ...]:
        names = tuple(g.name for g in self.topology.of_kind(Kind.CLIENT))
        chosen = chosen or names
        for name in chosen:
            if name not in names:
                raise TopologyError(self.topology.path, "clients", f"no client group {name!r}; the client groups are: {', '.join(names)}")
        if self.workload.nodes is not None:
            if len(chosen) != 1:
                raise TopologyError(self.topology.path, "clients", f"{self.workload.nodes} nodes of which client group? "
                                    f"There are several ({', '.join(chosen)}); name one")
            count = self.topology.group(chosen[0]).count
            if self.workload.nodes > count:
                raise TopologyError(self.topology.path, f"clients.{chosen[0]}.count",
                                    f"the workload uses {self.workload.nodes} nodes but the group has {count}")
        return tuple(chosen)

    def _count(self, group: Group) -> int:
        if group.kind is Kind.CLIENT and self.workload.nodes is not None:
            return self.workload.nodes
        return group.count

    def _stage(self, group: Group, key: str, layer: str) -> Stage | None:
        op = self.workload.operation.value
        n = sp.Symbol(f"n_{group.name}", positive=True)
        values: dict[sp.Symbol, Quantity | int] = {n: self._count(group), SIZE: self.workload.transfer_size,
                                                     PPN: self.workload.ppn, DEPTH: self.workload.queue_depth}
        if key == "messages":
            networks = [(g.capacity("rtt").value, g.name) for g in self.topology.neighbours(group.name, Kind.NETWORK)
                        if g.capacity("rtt") and g.capacity("rtt").value is not None]
            if not networks:
                return None
            rtt_value, network = min(networks, key=lambda pair: pair[0].m_as("s"))
            rtt = sp.Symbol(f"RTT_{network}", positive=True)
            values[rtt] = rtt_value
            self.assumptions.append(
                f"{group.name}: each process keeps {self.workload.queue_depth} request(s) in flight and every request "
                f"waits at least one round trip of {network} ({format_quantity(rtt_value)}), so a node issues at most "
                "ppn × queue depth / RTT requests per second (Little's law)"
            )
            return Stage(group.name, key, layer, (n, PPN, DEPTH, SIZE), rtt, values)
        capacity = group.capacity(key, op)
        if key == "iops" and self.workload.access is not Access.RANDOM:
            if capacity is not None:
                self.assumptions.append(f"{group.name}: sequential access, so device IOPS do not limit")
            return None
        if capacity is None or capacity.value is None:
            if key in ("bandwidth",) and group.kind in (Kind.NETWORK, Kind.SERVER, Kind.CLIENT):
                self.assumptions.append(f"{group.name}: no {key} stated; treated as unlimited")
            return None
        symbol = sp.Symbol(f"{_SYMBOL[key]}_{group.name}", positive=True)
        values[symbol] = capacity.value
        factors = (n, symbol, SIZE) if key == "iops" else (n, symbol)
        return Stage(group.name, key, layer, factors, None, values)

    def _chain(self, group: Group) -> None:
        nodes = [f"{group.name}#{i}" for i in range(len(_STAGES[group.kind]) + 1)]
        for (key, layer), u, v in zip(_STAGES[group.kind], nodes, nodes[1:]):
            stage = self._stage(group, key, layer)
            if stage is None:
                self.graph.add_edge(u, v)
            else:
                self.stages.append(stage)
                self.graph.add_edge(u, v, capacity=stage.capacity, stage=stage)
        if group.kind is Kind.CLIENT:
            self.graph.add_edge(CLIENTS, nodes[0])
        elif group.kind is Kind.DEVICE or (group.kind is Kind.SERVER and not self.topology.of_kind(Kind.DEVICE)):
            self.graph.add_edge(nodes[-1], STORAGE)

    def _connect(self) -> None:
        active = {g.name for g in self.topology.groups if g.kind is not Kind.CLIENT or g.name in self.clients}
        last = {g.name: len(_STAGES[g.kind]) for g in self.topology.groups}
        for index, link in enumerate(self.topology.links):
            if not {link.a, link.b} <= active:
                continue
            a, b = self.topology.group(link.a), self.topology.group(link.b)
            directions = [(a, b)] if a.kind.rank < b.kind.rank else [(b, a)] if b.kind.rank < a.kind.rank else [(a, b), (b, a)]
            for u, v in directions:
                start, end = f"{u.name}#{last[u.name]}", f"{v.name}#0"
                if link.bandwidth is None or link.bandwidth.value is None:
                    self.graph.add_edge(start, end)
                    continue
                symbol = sp.Symbol(f"B_link{index}", positive=True)
                stage = Stage(f"link {u.name}-{v.name}", "bandwidth", "links", (symbol,), None, {symbol: link.bandwidth.value})
                self.stages.append(stage)
                middle = f"link{index}:{u.name}>{v.name}"
                self.graph.add_edge(start, middle, capacity=stage.capacity, stage=stage)
                self.graph.add_edge(middle, end)

    def layers(self) -> dict[str, list[Stage]]:
        """The stages grouped by layer, in path order."""
        grouped: dict[str, list[Stage]] = {}
        for stage in self.stages:
            grouped.setdefault(stage.layer, []).append(stage)
        return grouped

    def min_cut(self, only: set[str] | None = None) -> tuple[float, list[Stage]] | None:
        """The minimum cut (bytes per second, the cut's stages); with ``only``, every other layer is unlimited.

        Returns None when nothing in ``only`` separates the clients from the storage.
        """
        graph = self.graph
        if only is not None:
            graph = graph.copy()
            for _, _, data in graph.edges(data=True):
                if "stage" in data and data["stage"].layer not in only:
                    del data["capacity"]
        try:
            value, (reach, _) = nx.minimum_cut(graph, self.source, self.sink)
        except nx.NetworkXUnbounded:
            return None
        cut = [data["stage"] for u in reach for v, data in graph[u].items() if v not in reach and "capacity" in data]
        return value, cut
