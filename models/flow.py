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
from sympy.printing.str import StrPrinter

from probes.errors import TopologyError
from probes.units import Metric, Quantity, format_quantity
from probes.workload import Access, Operation, Workload
from topologies.topology import Group, Kind, Topology

__all__ = ["Stage", "FlowNetwork", "NETWORK_LAYERS", "canonical", "numbers", "CLIENTS", "STORAGE", "SIZE", "PPN", "DEPTH"]

CLIENTS, STORAGE = "⊤clients", "⊥storage"  # reserved node names; group names hold only [A-Za-z0-9_-]
SIZE, PPN, DEPTH = sp.symbols("s p q", positive=True)

# Per kind, in the order data passes them when writing: (capacity key, layer name).
_STAGES = {
    Kind.CLIENT: (("bandwidth", "client throughput"), ("messages", "network message rate"), ("nic", "client NICs")),
    Kind.NETWORK: (("bandwidth", "network fabric"),),
    Kind.SERVER: (("nic", "server NICs"), ("bandwidth", "server throughput")),
    Kind.DEVICE: (("bandwidth", "devices"), ("iops", "device IOPS")),
}
_SYMBOL = {"nic": "NIC", "bandwidth": "B", "iops": "IOPS"}
# The layers data crosses on the network (links included): beyond them, only a client-side cache can serve it.
NETWORK_LAYERS = frozenset({"network message rate", "client NICs", "network fabric", "links", "server NICs"})


@dataclass(frozen=True)
class Stage:
    """One capacity on the data path, in bytes per second as ``term`` evaluated at ``values``.

    ``component`` names where the limiting figure is stated in the topology file:
    ``group.key`` (``compute.nic``, ``ethernet.rtt``) or ``links[i].bandwidth``.
    """

    component: str
    layer: str
    term: sp.Expr
    values: dict[sp.Symbol, Quantity | int]

    @property
    def capacity(self) -> float:
        return float(self.term.subs({s: canonical(v) for s, v in self.values.items()}))


def canonical(value: Quantity | int) -> float:
    """A count as it is, a quantity as a float in its metric's canonical unit (B/s, op/s, s, B)."""
    if isinstance(value, int):
        return float(value)
    return value.m_as(Metric.of(value).unit)


class _Placeholders(StrPrinter):
    """Prints every symbol as a numbered placeholder, so operators can be spaced before values go in."""

    def __init__(self):
        super().__init__()
        self.symbols: list[sp.Symbol] = []

    def _print_Symbol(self, symbol):
        self.symbols.append(symbol)
        return f"\x00{len(self.symbols) - 1}\x00"


def numbers(expression: sp.Expr, values: dict) -> str:
    """``expression`` with the numbers put in, in sympy's order: ``110 MiB/s × 10`` for ``NIC_compute*n_compute``."""
    printer = _Placeholders()
    text = printer.doprint(expression).replace("*", " × ").replace("/", " / ")
    for index, symbol in enumerate(printer.symbols):
        value = values[symbol]
        text = text.replace(f"\x00{index}\x00", str(value) if isinstance(value, int) else format_quantity(value))
    return text


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
        self.unstated: list[str] = []
        self.sizeless: list[str] = []
        for group in topology.groups:
            if group.kind is not Kind.CLIENT or group.name in self.clients:
                self._chain(group)
        self._connect()
        if self.unstated:
            self.assumptions.append(f"not stated, so taken as unlimited: {', '.join(self.unstated)}")
        if self.sizeless:
            self.assumptions.append("the transfer size is not known, so limits per request are left out (an upper "
                                    f"bound): {', '.join(self.sizeless)}")
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
                raise TopologyError(self.topology.path, "clients", f"the workload runs on {self.workload.nodes} node(s) but "
                                    f"there are several client groups ({', '.join(chosen)}); name one with --clients")
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
        n = sp.Symbol(f"n_{group.name}", positive=True)
        values: dict[sp.Symbol, Quantity | int] = {n: self._count(group), PPN: self.workload.ppn,
                                                     DEPTH: self.workload.queue_depth}
        if key == "messages":
            return self._messages(group, layer, n, values)
        capacity = group.capacity(key, self.workload.operation.value)
        if key == "iops" and self.workload.access is not Access.RANDOM:
            if capacity is not None:
                self.assumptions.append(f"{group.name}: sequential access, so device IOPS do not limit")
            return None
        if capacity is None or capacity.value is None:
            if capacity is None:
                self.unstated.append(f"{group.name}.{key}")
            return None
        if key == "iops" and not self._sized(f"{group.name}.iops", values):
            return None
        symbol = sp.Symbol(f"{_SYMBOL[key]}_{group.name}", positive=True)
        values[symbol] = capacity.value
        term = n * symbol * SIZE if key == "iops" else n * symbol
        return Stage(f"{group.name}.{key}", layer, term, values)

    def _sized(self, component: str, values: dict) -> bool:
        """Put the transfer size into ``values``; False (and noted) when the workload does not know it."""
        if self.workload.transfer_size is None:
            self.sizeless.append(component)
            return False
        values[SIZE] = self.workload.transfer_size
        return True

    def _messages(self, group: Group, layer: str, n: sp.Symbol, values: dict) -> Stage | None:
        """Little's law: a node with ppn x queue depth requests in flight, each waiting a round trip."""
        networks = [(g.capacity("rtt").value, g.name) for g in self.topology.neighbours(group.name, Kind.NETWORK)
                    if g.capacity("rtt") and g.capacity("rtt").value is not None]
        if not networks:
            return None
        rtt_value, network = min(networks, key=lambda pair: pair[0].m_as("s"))
        if not self._sized(f"{network}.rtt", values):
            return None
        rtt = sp.Symbol(f"RTT_{network}", positive=True)
        values[rtt] = rtt_value
        self.assumptions.append(
            f"{group.name}: each process keeps {self.workload.queue_depth} request(s) in flight and each request "
            f"takes at least one round trip of {network} ({format_quantity(rtt_value)}), so a node completes at most "
            "ppn × queue depth / RTT requests per second (Little's law)"
        )
        return Stage(f"{network}.rtt", layer, n * PPN * DEPTH * SIZE / rtt, values)

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
        for u, v, index in self.topology.data_links():
            if not {u, v} <= active:
                continue
            start, end = f"{u}#{len(_STAGES[self.topology.group(u).kind])}", f"{v}#0"
            bandwidth = self.topology.links[index].bandwidth
            if bandwidth is None or bandwidth.value is None:
                self.graph.add_edge(start, end)
                continue
            symbol = sp.Symbol(f"B_links[{index}]", positive=True)
            stage = Stage(f"links[{index}].bandwidth", "links", symbol, {symbol: bandwidth.value})
            self.stages.append(stage)
            middle = f"links[{index}]:{u}>{v}"
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
