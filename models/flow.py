"""The flow network of a topology for one shape of workload, whose minimum cut is the ceiling.

Each group becomes a chain of stages, one per capacity that applies (a client's own throughput, the requests it keeps
in flight, its NIC; a server's NIC, then its own throughput; a device's bandwidth, then its IOPS for random access).
Links join the chains in the direction data moves: clients → networks → servers → (networks →) devices for writes,
reversed for reads. The network is built once per shape (operation, access, which limits and device tiers apply) and
solved for many workloads: a stage's capacity is a number times what the workload changes (nodes, transfer size,
processes, queue depth). Every stage also keeps the recipe of its formula text, written when a formula is asked for, so
a cut's value has one without a sweep paying for it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from probes.core.units import Metric, canonical
from probes.core.workload import Access, Operation, Workload
from models.ceiling import rate
from models.formulas import DEPTH, PPN, SIZE, count, mark, quotient, shown
from models.layers import STAGES, SYMBOL
from models.skeleton import CLIENTS, STORAGE, numbered, skeleton
from models.request_time import RequestTime
from topologies.topology import Component, Group, Kind, Topology

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Stage", "Shape", "FlowNetwork", "Limit", "Scale", "UNKNOWN_CONCURRENCY"]

UNKNOWN_CONCURRENCY = ("the number of nodes that ran it is not known (nor, then, its processes), so the limit of "
                       "the requests in flight is left out (an upper bound)")


class Scale:
    """What a stage's capacity is proportional to, besides its constant: nothing, nodes, transfer size, requests."""

    CONSTANT, NODES, SIZE, REQUESTS = "constant", "nodes", "size", "requests"


@dataclass(frozen=True)
class Shape:
    """What decides which stages a flow network has: the same shape, the same graph.

    ``unbounded`` says why the time per request does not bound the throughput ("" when it does: direct or random I/O on
    a known number of nodes); ``sized``: the transfer size is known; ``cached``: servers serve from memory, devices are
    left out."""

    operation: Operation
    access: Access
    sized: bool
    cached: bool = False
    unbounded: str = ""
    tiers: frozenset[str] | None = None  # the device groups that take its requests (None: all that serve its operation)

    def __hash__(self) -> int:  # found once: every network built looks up each group's chain by its shape
        if "_hash" not in self.__dict__:
            self.__dict__["_hash"] = hash((self.operation, self.access, self.sized, self.cached, self.unbounded, self.tiers))
        return self.__dict__["_hash"]

    @property
    def requests(self) -> bool:
        """Whether the time per request bounds the throughput."""
        return not self.unbounded

    @classmethod
    def of(cls, workload: Workload, cached: bool = False) -> "Shape":
        why = ""
        if not (workload.direct or workload.access is Access.RANDOM):
            why = ("buffered sequential I/O: readahead and write-behind keep more requests in flight than "
                   "ppn × queue depth, so the time per request does not bound it")
        elif workload.nodes is None:
            why = UNKNOWN_CONCURRENCY
        return cls(workload.operation, workload.access, workload.transfer_size is not None, cached, why)


@dataclass(frozen=True)
class Stage:
    """One capacity on the data path: ``constant`` (B/s) times what ``scale`` names of the workload.

    ``components`` are where its figures are stated in the topology file (``compute.nic``, ``ethernet.rtt``,
    ``links[i].bandwidth``); ``group`` is the group whose member count the workload may change; ``term`` is the capacity
    as formula text (:mod:`models.formulas`) and ``constants`` the topology's values of its symbols by name, which
    ``recipe`` writes when a formula is first asked for (a sweep of ceilings needs none). For :attr:`Scale.REQUESTS` the
    capacity is n·p·q·s / (``fixed`` + s·``per_byte`` + the ``split`` times), each split time (t, R) paid once per piece
    of at most R bytes: t·max(1, s / R)."""

    components: tuple[Component, ...]
    layer: str
    group: str
    recipe: Callable[[], tuple[str, dict[str, Quantity | int]]] = field(compare=False, repr=False)
    scale: str = Scale.CONSTANT
    constant: float = 1.0
    fixed: float = 0.0
    per_byte: float = 0.0
    split: tuple[tuple[float, float], ...] = ()

    @functools.cached_property
    def _made(self) -> tuple[str, dict[str, Quantity | int]]:
        return self.recipe()

    @property
    def term(self) -> str:
        return self._made[0]

    @property
    def constants(self) -> dict[str, Quantity | int]:
        return self._made[1]

    def capacity(self, nodes: int, size: float | None, ppn: int, depth: int) -> float:
        """The capacity in B/s for a workload on ``nodes`` members of the group with transfer ``size`` (B)."""
        if self.scale == Scale.CONSTANT:
            return self.constant
        if self.scale == Scale.NODES:
            return self.constant * nodes
        if self.scale == Scale.SIZE:
            return self.constant * size
        seconds = self.fixed + size * self.per_byte
        for fixed, piece in self.split:
            seconds += fixed * max(1.0, size / piece)
        return nodes * ppn * depth * size / seconds


@dataclass(frozen=True)
class Limit:
    """A minimum cut of a flow network: its value in B/s (math.inf when nothing limits the way), its stages, and
    the components that state them."""

    value: float
    stages: tuple[Stage, ...]
    components: tuple[Component, ...]

    @functools.cached_property
    def quantity(self) -> Quantity:
        """The value as a quantity, made once: a sweep asks for it in every ceiling the cut is part of."""
        return rate(self.value, Metric.BANDWIDTH)


class FlowNetwork:
    """A directed graph between CLIENTS and STORAGE for one shape, edges in the direction data moves.

    ``source`` and ``sink`` are CLIENTS and STORAGE for a write, the other way round for a read. Solve it for a workload
    with :meth:`capacities` and :meth:`limit`."""

    def __init__(self, topology: Topology, shape: Shape, clients: tuple[str, ...], shared: dict | None = None):
        """``shared``: what the networks of ``topology`` share, filled as made (None: made here): a group's chain
        is the same in every network of one shape whatever its clients (networks with the same edges and layers share
        their graph in any topology: :func:`models.skeleton.skeleton`)."""
        self.topology, self.shape, self.clients = topology, shape, clients
        self._shared = {} if shared is None else shared
        self.op = shape.operation.value
        self.edges: list[tuple[str, str]] = []
        self.stages: list[Stage | None] = []  # per edge; None: unlimited
        self.assumptions, self.unstated, self.sizeless = [], [], []  # what its chains note: lists of text
        self._chains: dict[str, tuple[int, list[list]]] = {}  # per group, where its chain's edges start, and its parts
        active = [g for g in topology.groups if (g.kind is not Kind.CLIENT or g.name in clients)
                  and not (g.kind is Kind.DEVICE and (shape.cached or not g.serves(self.op) or
                                                      (shape.tiers is not None and g.name not in shape.tiers)))]
        for group in active:
            self._chain(group)
        self._connect({g.name for g in active})
        if self.unstated:
            self.assumptions.append(f"not stated, so taken as unlimited: {', '.join(self.unstated)}")
        if self.sizeless:
            self.assumptions.append("the transfer size is not known, so limits per request are left out (an upper "
                                    f"bound): {', '.join(self.sizeless)}")
        if shape.unbounded:
            self.assumptions.append(shape.unbounded)
        self.noted = tuple(dict.fromkeys(self.assumptions))  # each assumption once, in the order noted
        self.graph, self._edges_of, self.in_series, self._figures_of = skeleton(
            numbered(self.edges), tuple(s and s.layer for s in self.stages), shape.operation is Operation.READ)
        self._limits: dict[tuple, Limit] = {}
        self._solved()

    def _solved(self) -> None:  # what the workload does not change, filled in once: unlimited edges, constant stages
        self._constant = [math.inf if s is None else s.constant if s.scale == Scale.CONSTANT else 0.0 for s in self.stages]
        self._varying = [(i, s) for i, s in enumerate(self.stages) if s is not None and s.scale != Scale.CONSTANT]

    @property
    def limited(self) -> list[Stage]:
        """The stages in path order."""
        return [s for s in self.stages if s is not None]

    @functools.cached_property
    def constants(self) -> dict[str, Quantity | int]:
        """The topology's values of every stage's symbols by name, merged once."""
        merged: dict[str, Quantity | int] = {}
        for stage in self.limited:
            merged |= stage.constants
        return merged

    def layers(self) -> list[str]:
        """The names of the layers that have stages, in path order."""
        return list(self._edges_of)

    def capacities(self, workload: Workload, nodes: dict[str, int]) -> list[float]:
        """Each edge's capacity (B/s) for ``workload`` (infinite where nothing limits it)."""
        size = None if workload.transfer_size is None else canonical(workload.transfer_size)
        capacities = self._constant.copy()
        for i, s in self._varying:
            capacities[i] = s.capacity(nodes.get(s.group, 0), size, workload.ppn, workload.queue_depth)
        return capacities

    def only(self, capacities: list[float], layer: str) -> list[float]:
        """``capacities`` with every stage of another layer unlimited: what the layer allows alone."""
        kept = [math.inf] * len(capacities)
        for i in self._edges_of[layer]:
            kept[i] = capacities[i]
        return kept

    def forget_cuts(self) -> None:
        """Forget the cuts found so far (see :meth:`limit`)."""
        self._limits.clear()

    def limit(self, capacities: list[float], layer: str | None = None) -> Limit:
        """The minimum cut for ``capacities``; with ``layer``, for that layer's stages alone (see :meth:`only`), the sum
        of its edges when they are in series.

        Found once per distinct figures of the edges it depends on: a sweep repeats them (a layer of constant capacities,
        the same node counts), and the same figures give the same cut.
        """
        key = (layer, tuple(capacities) if layer is None else self._figures_of[layer](capacities))
        found = self._limits.get(key)
        if found is None:
            series = None if layer is None else self.in_series[layer]
            if series:
                value, edges = math.fsum(capacities[i] for i in series), series
            else:
                cut = self.graph.solve(capacities if layer is None else self.only(capacities, layer))
                value, edges = cut.value, cut.edges
            stages = tuple(self.stages[i] for i in edges)
            found = self._limits[key] = Limit(value, stages, tuple(dict.fromkeys(c for s in stages for c in s.components)))
        return found

    def _add(self, u: str, v: str, stage: Stage | None) -> None:
        self.edges.append((u, v))
        self.stages.append(stage)

    def _chain(self, group: Group) -> None:
        """Add the group's chain of stages, and what it notes, made once per shape (see ``shared``)."""
        made = self._shared.get((self.shape, group.name))
        if made is None:
            before = [len(part) for part in self._parts]
            self._make_chain(group)
            made = self._shared[self.shape, group.name] = [part[n:] for part, n in zip(self._parts, before)]
        else:
            for part, added in zip(self._parts, made):
                part += added
        self._chains[group.name] = len(self.edges) - len(made[0]), made

    def rechained(self, topology: Topology, name: str) -> FlowNetwork | None:
        """This network on ``topology``, whose figures are its own's but group ``name``'s (a search for an implied figure
        varies one): that chain made again, the rest kept; this network where the group has no chain in it; None where
        more would change (a time per request reads figures across the path; the chain made again has other edges,
        notes or unlimited stages)."""
        if any(s is not None and s.scale == Scale.REQUESTS for s in self.stages):
            return None
        if name not in self._chains:
            return self  # none of its figures is on this network's ways
        made = object.__new__(FlowNetwork)
        made.__dict__.update({k: v for k, v in self.__dict__.items() if k != "constants"}, topology=topology, _limits={})
        made.edges, made.stages, made.assumptions, made.unstated, made.sizeless = chain = [[], [], [], [], []]
        made._make_chain(topology.group(name))
        start, was = self._chains[name]
        if chain[:1] + chain[2:] != was[:1] + was[2:] or [s and s.layer for s in chain[1]] != [s and s.layer for s in was[1]]:
            return None
        made.edges, made.assumptions, made.unstated, made.sizeless = self.edges, self.assumptions, self.unstated, self.sizeless
        made.stages = self.stages[:start] + chain[1] + self.stages[start + len(was[1]):]
        made._chains = self._chains | {name: (start, chain)}
        made._solved()
        return made

    @property
    def _parts(self) -> tuple[list, ...]:
        """What a group's chain adds to: the edges, their stages and the notes."""
        return self.edges, self.stages, self.assumptions, self.unstated, self.sizeless

    def _make_chain(self, group: Group) -> None:
        keys = STAGES[group.kind]
        if group.kind is Kind.SERVER and not self.shape.cached:
            keys = keys[:-1]
        nodes = [f"{group.name}#{i}" for i in range(len(keys) + 1)]
        for (key, layer), u, v in zip(keys, nodes, nodes[1:]):
            self._add(u, v, self._stage(group, key, layer))
        if group.kind is Kind.CLIENT:
            self._add(CLIENTS, nodes[0], None)
        elif group.kind is Kind.DEVICE or (group.kind is Kind.SERVER and (self.shape.cached or group.name in self.topology.holders)):
            self._add(nodes[-1], STORAGE, None)

    def _stage(self, group: Group, key: str, layer: str) -> Stage | None:
        if key == "requests":
            return self._requests(group, layer)
        capacity = group.capacity(key, self.op)
        if key == "iops" and self.shape.access is not Access.RANDOM:
            if capacity is not None:
                self.assumptions.append(f"{group.name}: sequential access, so device IOPS do not limit")
            return None
        if capacity is None or capacity.value is None:
            if capacity is None:
                self.unstated.append(str(Component(group.name, key)))
            return None
        if key == "iops" and not self._sized([Component(group.name, "iops")]):
            return None
        ports = group.nics if key == "nic" else 1  # every port of a member carries its nic's rate
        factor, why = self._write_cost(group, key)
        constant = canonical(capacity.value) * ports / factor
        value = capacity.value

        def recipe() -> tuple[str, dict[str, Quantity | int]]:
            symbol = f"{SYMBOL[key]}_{group.name}"
            constants: dict[str, Quantity | int] = {symbol: value}
            term = f"{mark(symbol)}*{count(group.name)}" + (f"*{SIZE}" if key == "iops" else "")
            if ports > 1:
                constants[f"ports_{group.name}"] = ports
                term += f"*{mark(f'ports_{group.name}')}"
            if factor != 1:
                cost = f"{'k' if key == 'iops' else 'w' if group.kind is Kind.DEVICE else 'r'}_{why}"  # distinct
                constants[cost] = factor
                term = quotient(term, mark(cost))
            if group.kind is not Kind.CLIENT:
                constants[f"n_{group.name}"] = group.count
            return term, constants

        if group.kind is Kind.CLIENT:
            return Stage((Component(group.name, key),), layer, group.name, recipe,
                         Scale.SIZE if key == "iops" else Scale.NODES, constant)
        scale = Scale.SIZE if key == "iops" else Scale.CONSTANT
        return Stage((Component(group.name, key),), layer, group.name, recipe, scale, constant * group.count)

    def _write_cost(self, group: Group, key: str) -> tuple[float, str]:
        """For writes, bytes a stage moves per byte written, and the server group that says so (1, "" if none)."""
        if self.shape.operation is not Operation.WRITE or key == "memory_bandwidth":
            return 1.0, ""
        if group.kind is Kind.SERVER and group.write_cost.servers != 1:
            self._note_cost(group)
            return float(group.write_cost.servers), group.name
        if group.kind is Kind.DEVICE or (group.kind is Kind.NETWORK and group.name not in self.topology.front_end):
            def cost(g: Group) -> float:  # small random writes rewrite parity strips; bytes scale by the ratio
                return g.write_cost.device_requests if key == "iops" else g.write_cost.devices
            feeders = self._feeders(group.name)
            servers = [g for g in feeders if cost(g) != 1]
            if servers and len(servers) == len(feeders):
                cheapest = min(servers, key=cost)  # a ceiling takes the cheapest path
                self._note_cost(cheapest)
                return cost(cheapest), cheapest.name
        return 1.0, ""

    def _feeders(self, name: str) -> list[Group]:
        """The server groups that hand data to group ``name``: linked to it, or through a back-end fabric."""
        before = set(self._into.get(name, ()))
        for fabric in [u for u in before if self.topology.group(u).kind is Kind.NETWORK]:
            before |= set(self._into.get(fabric, ()))
        servers, rank = self.topology.of_kind(Kind.SERVER), self._server_rank
        return [servers[i] for i in sorted(rank[name] for name in before if name in rank)]

    @functools.cached_property
    def _server_rank(self) -> dict[str, int]:
        """Each server group's place among the server groups, so that feeders keep the topology's order."""
        return {g.name: i for i, g in enumerate(self.topology.of_kind(Kind.SERVER))}

    @functools.cached_property
    def _into(self) -> dict[str, list[str]]:
        """Per group, the groups that hand it data, once per network."""
        into: dict[str, list[str]] = {}
        for u, v, _ in self.topology.data_links():
            into.setdefault(v, []).append(u)
        return into

    def _note_cost(self, server: Group) -> None:
        cost = server.write_cost
        self.assumptions.append(f"{server.name}: each byte written costs {cost}: the servers carry it "
                                f"{cost.servers}x and their devices store {cost.devices:g} bytes; a write smaller than "
                                f"a stripe takes {cost.device_requests:g} device writes")

    def _sized(self, components: list[Component]) -> bool:
        """Whether the transfer size is known; noted when it is not."""
        if not self.shape.sized:
            self.sizeless.append(", ".join(map(str, components)))
        return self.shape.sized

    def _requests(self, group: Group, layer: str) -> Stage | None:
        """Little's law: n·p·q requests in flight, each taking at least a round trip, the fixed costs and its bytes' time."""
        if not self.shape.requests:
            return None
        time = RequestTime(self.topology, group, self.op, self.shape.cached, self.shape.tiers)
        if not time.recipe:
            return None
        if not self._sized(time.components):
            return None
        self.assumptions.append(
            f"{group.name}: each process keeps q request(s) in flight and each request takes at least "
            f"{time.described}, so the group moves at most n·p·q·s / ({shown(time.formula)}) (Little's law)")

        def recipe() -> tuple[str, dict[str, Quantity | int]]:
            return quotient(f"{count(group.name)}*{PPN}*{DEPTH}*{SIZE}", time.formula), time.named

        return Stage(tuple(time.components), layer, group.name, recipe, Scale.REQUESTS, fixed=time.fixed,
                     per_byte=time.per_byte, split=tuple(time.split))

    def _connect(self, active: set[str]) -> None:
        for u, v, index in self.topology.data_links():
            if not {u, v} <= active:
                continue
            start, end = f"{u}#{self._length(u)}", f"{v}#0"
            bandwidth = self.topology.links[index].bandwidth
            if bandwidth is None or bandwidth.value is None:
                self._add(start, end, None)
                continue
            middle = f"links[{index}]:{u}>{v}"

            def recipe(index=index, value=bandwidth.value) -> tuple[str, dict[str, Quantity | int]]:
                return mark(f"B_links[{index}]"), {f"B_links[{index}]": value}

            self._add(start, middle, Stage((Component.of_link(index),), "links", "", recipe,
                                           constant=canonical(bandwidth.value)))
            self._add(middle, end, None)

    def _length(self, name: str) -> int:
        kind = self.topology.group(name).kind
        return len(STAGES[kind]) - (kind is Kind.SERVER and not self.shape.cached)
