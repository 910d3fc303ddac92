"""Predict the ceiling of a workload on a topology: a minimum cut, every layer's own limit, a formula.

A :class:`Model` builds the flow network of each shape of workload once (see
:mod:`models.flow`) and solves it per workload, so sweeps over thousands of workloads
cost one small maximum flow each; :func:`predict` is the one-workload form. What a run needs of the figures
a topology assumes is searched for in :mod:`models.implied`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import Callable, Iterable

from probes.core.errors import TopologyError
from probes.core.heap import set_aside
from probes.core.units import Metric, canonical
from probes.core.workload import Operation, Workload
from models import metadata
from models.caches import Memory, aggregate_memory, cache_limits
from models.ceiling import TIE, CacheLimit, Ceiling, LayerLimit, rate
from models.flow import FlowNetwork, Limit, Scale, Shape
from models.formulas import count, mark, quotient, workload_values
from models.layers import DEVICE_LAYERS, REQUESTS
from models import solved
from topologies.topology import Capacity, Component, Kind, Topology

# Layers that serve reads and writes in turn, not both at once: the devices, the requests in flight, a group's own throughput.
HALF_DUPLEX = ("devices", "device IOPS", REQUESTS, "client throughput", "server throughput")

# The metrics a ceiling is monotone in: it rises with bandwidths and rates and falls with latencies.
_MONOTONE = (Metric.BANDWIDTH, Metric.OPERATION_RATE, Metric.LATENCY)

__all__ = ["Model", "predict", "unmodelled"]


def unmodelled(topology: Topology, workload: Workload, clients: tuple[str, ...] | None = None) -> str | None:
    """Why :func:`predict` has no ceiling for ``workload`` on ``topology``, or None when it has one."""
    if workload.operation.is_metadata:
        chosen = clients or tuple(g.name for g in topology.of_kind(Kind.CLIENT))
        return metadata.unlimited(topology, workload, chosen)
    return None


class Model:
    """The bottleneck model of one topology: ceilings for any number of workloads, each shape's network built once."""

    def __init__(self, topology: Topology):
        self.topology = topology
        self._networks: dict[tuple[Shape, tuple[str, ...]], FlowNetwork] = {}
        self._shared: dict = {}  # what the networks share: the groups' chains, the graphs (see FlowNetwork)
        self._kept: dict[tuple[frozenset[str], int], dict] = {}  # the chains a changed model takes over (_chains_but)
        self._narrowed_from: tuple[Model, frozenset[str]] | None = None  # the model narrowed, and the groups raised
        self._chains_from: tuple[Model, frozenset[str]] | None = None  # a model whose networks are this one's but for
        # the chains of these groups (a varied model's origin and the group varied; a narrowed model's low end: its
        # origin's, the groups raised)
        self._low: Model | None = None
        self._stated: Model | None = None
        self._assumptions: dict[tuple[Component, str], bool] = {}
        self._memory: dict[tuple, Memory] = {}
        self._placed: dict[tuple, tuple[tuple[str, ...], dict[str, int]]] = {}  # nodes() found, shared with the
        # models made from this one (low, stated, varied): their groups and counts are its own

    @functools.cached_property
    def content(self) -> solved.Content:
        """What the model reads of its topology (:func:`models.solved.content`): what it solves serves its likes."""
        return solved.content(self.topology)

    @functools.cached_property
    def ranges(self) -> dict[Component, Capacity]:  # found when first asked: a varied model never asks
        return self.topology.ranged()

    @functools.cached_property
    def assumed(self) -> dict[Component, Capacity]:
        """Figures assumed as one value, of the metrics a ceiling is monotone in: unlimited, they leave the stated ones."""
        return {place: c for place, c in self.topology.assumed().items() if c.metric in _MONOTONE}

    @functools.cached_property
    def _assumes(self) -> bool:
        return any(c.assumed for g in self.topology.groups for c in g.capacities.values()) or any(
            link.bandwidth is not None and link.bandwidth.assumed for link in self.topology.links)

    @property
    def low(self) -> Model:
        """The model with every range at its least favourable end (this one when the topology states no range)."""
        if not self.ranges:
            return self
        if self._low is None:
            self._low = Model(self.topology.at_ends(favourable=False))
            self._low._placed = self._placed
            if self._narrowed_from is not None:  # the low end of the model narrowed, but for the groups raised
                origin, raised = self._narrowed_from
                self._low._chains_from = origin.low, raised
        return self._low

    @property
    def stated(self) -> Model:
        """The model on stated figures alone: every figure assumed as one value unlimited (ranges kept; this one without)."""
        if not self.assumed:
            return self
        if self._stated is None:
            self._stated = Model(self.topology.replaced({place: Capacity(None, c.metric, c.source)
                                                         for place, c in self.assumed.items()}))
            self._stated._placed = self._placed
        return self._stated

    def varied(self, place: Component, capacity: Capacity) -> Model:
        """The model with the figure at ``place`` replaced by ``capacity``, keeping the chains made of the other groups:
        a chain is its group's figures alone, but for the time per request (which crosses the path)."""
        model = Model(self.topology.replaced({place: capacity}))
        model._placed = self._placed
        if place.link is None:
            model._chains_from = self, frozenset((place.group,))
        else:  # a link's stage is no group's chain: every network is made again, of the chains of the groups
            model._shared = self._chains_but(frozenset((place.group,)))
        return model

    def _chains_but(self, groups: frozenset[str]) -> dict:
        """The chains made so far of the groups but ``groups`` (whose figures a model made from this one changes),
        but for those with a time per request (which crosses the path): found once for each ``groups``, a copy."""
        key = (groups, len(self._shared))
        if key not in self._kept:
            self._kept[key] = {(shape, group): parts for (shape, group), parts in self._shared.items() if group not in
                               groups and not any(s is not None and s.scale == Scale.REQUESTS for s in parts[1])}
        return dict(self._kept[key])

    def narrowed(self, topology: Topology) -> Model:
        """The model of ``topology``, this one's with ranges' least favourable ends raised (as witnesses raise them,
        :func:`assess.witness.narrowed`): the values, a range's most favourable end, are this one's, and a flow network
        reads the values alone, so it takes over this one's networks, chains and cuts found (each judged run asks)."""
        model = Model(topology)
        model._networks, model._shared, model._placed = self._networks, self._shared, self._placed
        model._narrowed_from = self, frozenset(g.name for g, was in zip(topology.groups, self.topology.groups)
                                               if g is not was)  # its low end takes over the others' chains
        return model

    def stated_bound(self, workload: Workload, clients: tuple[str, ...] | None = None) -> float:
        """The most (B/s or op/s) the stated figures alone allow (see ``stated``); inf where they limit nothing."""
        return self.stated.most(workload, clients)

    def shape(self, workload: Workload, cached: bool = False) -> Shape:
        """The shape of ``workload``'s network here: with the device tiers that take requests of its size."""
        shape = Shape.of(workload, cached)
        tiered = [g for g in self.topology.of_kind(Kind.DEVICE) if g.transfers is not None]
        if not tiered or workload.transfer_size is None:
            return shape
        return replace(shape, tiers=frozenset(g.name for g in self.topology.of_kind(Kind.DEVICE)
                                              if g.serves(workload.operation.value, workload.transfer_size)))

    def forget_cuts(self) -> None:
        """Forget the ceilings solved (every model's) and the cuts the flow networks found (each keeps the cuts it
        solves): a timed pass then solves each again."""
        solved.forget()
        for network in self._networks.values():
            network.forget_cuts()

    def network(self, shape: Shape, clients: tuple[str, ...]) -> FlowNetwork:
        """The flow network of ``shape`` for the client groups ``clients``, built on first use."""
        key = (shape, clients)
        if key not in self._networks:
            self._networks[key] = self._rechained(key) or FlowNetwork(self.topology, shape, clients, self._shared)
        return self._networks[key]

    def _rechained(self, key: tuple[Shape, tuple[str, ...]]) -> FlowNetwork | None:
        """A varied model's network, or a narrowed model's at its low end: its origin's with the chains of the groups
        changed made again (FlowNetwork.rechained); None where that will not do, the chains of the origin's other groups
        then taken over (a chain is its group's figures alone, but for the time per request, which crosses the path)."""
        if self._chains_from is None:
            return None
        origin, groups = self._chains_from
        made = origin._networks.get(key)
        for name in groups:
            made = made and made.rechained(self.topology, name)
        if made is None and not self._shared:
            self._shared = origin._chains_but(groups)
        return made

    def nodes(self, workload: Workload, clients: tuple[str, ...] | None) -> tuple[tuple[str, ...], dict[str, int]]:
        """The client groups that run ``workload`` and how many members of each.

        Raises
        ------
        TopologyError
            If a group is unknown, or the workload names a node count but several groups
            run it, or more nodes than its group has.
        """
        key = (clients, workload.nodes)
        found = self._placed.get(key)
        if found is None:  # a search for an implied figure asks thousands of times: found once
            found = self._placed[key] = self._place(workload, clients)
        return found[0], dict(found[1])

    def _place(self, workload: Workload, clients: tuple[str, ...] | None) -> tuple[tuple[str, ...], dict[str, int]]:
        topology = self.topology
        names = tuple(g.name for g in topology.of_kind(Kind.CLIENT))
        chosen = tuple(dict.fromkeys(clients)) if clients else names
        known = set(names)
        for name in chosen:
            if name not in known:
                raise TopologyError(topology.path, "clients", f"no client group {name!r}; the client groups are: {', '.join(names)}")
        counts = {name: topology.group(name).count for name in chosen}
        if workload.nodes is not None:
            if len(chosen) != 1:
                raise TopologyError(topology.path, "clients", f"the workload runs on {workload.nodes} node(s) but "
                                    f"there are several client groups ({', '.join(chosen)}); name one with --clients")
            if workload.nodes > counts[chosen[0]]:
                raise TopologyError(topology.path, f"clients.{chosen[0]}.count",
                                    f"the workload uses {workload.nodes} nodes but the group has {counts[chosen[0]]}")
            counts[chosen[0]] = workload.nodes
        return chosen, counts

    def ceiling(self, workload: Workload, clients: tuple[str, ...] | None = None, *, caches: bool = True) -> Ceiling:
        """The most ``workload`` can reach, and the components that set it (see :func:`predict`).

        With figures stated as ranges it is an interval. The ceiling is monotone in every
        figure: it rises with bandwidths, IOPS and rates, and falls with latencies and round
        trips (a maximum flow rises with every edge's capacity; a request's time rises with
        its fixed costs and falls with the bandwidths its bytes cross, taking the quickest
        group of each tier; a shared directory takes the best server's own limit). So two
        solves bound it: every range at its most favourable end (``value``), then at its
        least (``low``, None when both ends are equal).
        ``caches=False`` leaves out the cache ceilings, for callers that judge the storage path only.
        Each is solved once for models of the same content (see :mod:`models.solved`).
        """
        return solved.once(("ceiling", self.content, workload, clients, caches),
                           lambda: self._solved(workload, clients, caches))

    def ceilings(self, asked: Iterable[tuple[Workload, tuple[str, ...] | None]], *, caches: bool = True) -> list[Ceiling]:
        """The ceiling of each workload asked, on its client groups (None: all), in order: a sweep. What it has made
        is set aside from the garbage collector's walks before each (:mod:`probes.core.heap`), as a review and a sizing
        search set theirs: the collector walked the ceilings kept so far again and again, a fifth of a sweep's CPU."""
        found: list[Ceiling] = []
        with set_aside() as keep:
            for workload, clients in asked:
                keep()
                found.append(self.ceiling(workload, clients, caches=caches))
        return found

    def _solved(self, workload: Workload, clients: tuple[str, ...] | None, caches: bool) -> Ceiling:
        high = self._ceiling(workload, clients, caches)
        low = self.low._ceiling(workload, clients, False) if self.ranges else None
        if low is not None and math.isclose(canonical(low.value), canonical(high.value), rel_tol=TIE):
            low = None  # no range on its way: one figure, no interval
        if not self._assumes:
            return replace(high, low=low)
        stated = [c for ceiling in (high, low) if ceiling for c in ceiling.binding + tuple(
            c for layer in ceiling.layers for c in layer.components)]
        return replace(high, low=low, assumed=tuple(c for c in dict.fromkeys(stated) if self._assumed(c, workload)))

    def memory(self, counts: dict[str, int]) -> Memory:
        """The memory that may cache a workload on these client nodes (see :func:`models.caches.aggregate_memory`), once each."""
        key = tuple(sorted(counts.items()))
        if key not in self._memory:
            self._memory[key] = aggregate_memory(self.topology, counts)
        return self._memory[key]

    def _assumed(self, component: Component, workload: Workload) -> bool:
        key = (component, workload.operation.value)
        if key not in self._assumptions:  # asked for every component of every ceiling: once each
            ops = ("read", "write") if workload.operation is Operation.MIXED else (workload.operation.value,)
            stated = [self.topology.capacity_at(component, op) for op in ops]
            self._assumptions[key] = any(c is not None and c.assumed for c in stated)
        return self._assumptions[key]

    def bound(self, workload: Workload, clients: tuple[str, ...] | None = None) -> float:
        """The ceiling's value alone (B/s or op/s), without its layers and formula: for solving."""
        if workload.operation is Operation.MIXED:
            return canonical(self._mixed(workload, clients, False).value)
        chosen, counts = self.nodes(workload, clients)
        if workload.operation.is_metadata:
            return metadata.bound(self.topology, workload, chosen, counts)
        value = self.cut(self.network(self.shape(workload), chosen), workload, counts).value
        shared = self._shared_nodes(workload, counts)
        return min(value, shared[1]) if shared else value

    def most(self, workload: Workload, clients: tuple[str, ...] | None = None) -> float:
        """The ceiling's value alone (see :meth:`bound`); inf where nothing limits it (figures taken as unlimited)."""
        try:
            return self.bound(workload, clients)
        except TopologyError:  # nothing limits the path
            return math.inf

    def _ceiling(self, workload: Workload, clients: tuple[str, ...] | None, caches: bool) -> Ceiling:
        if workload.operation is Operation.MIXED:
            return self._mixed(workload, clients, caches)
        chosen, counts = self.nodes(workload, clients)
        if workload.operation.is_metadata:
            return metadata.ceiling(self.topology, workload, chosen, counts)
        network = self.network(self.shape(workload), chosen)
        full = network.capacities(workload, counts)
        cut = self.cut(network, workload, counts, full=full)
        value = cut.value
        shared = self._shared_nodes(workload, counts)
        if shared and shared[1] < value * (1 - TIE):  # nodes that are clients and servers at once bind
            value, cut = shared[1], None

        @functools.cache
        def values() -> dict:  # the symbols' values, made when a formula is first asked for
            return network.constants | workload_values(workload, counts)

        layers, binding_layers = [], []
        for name in network.layers():
            alone = self.cut(network, workload, counts, only=name, full=full)
            layers.append(LayerLimit(name, None, ()) if alone is None else _limit(name, alone, values))
            if alone is not None and math.isclose(alone.value, value, rel_tol=TIE):
                binding_layers.append(name)
        if shared:
            layers.append(shared[0])
            if math.isclose(shared[1], value, rel_tol=TIE):
                binding_layers.append(shared[0].layer)
        limited = [layer for layer in layers if layer.value is not None]
        binding_layers = tuple(binding_layers)
        mixed = None
        if not binding_layers:  # the cut mixes layers and is lower than any one of them
            binding_layers = ("combined cut",)
            mixed = _limit("combined cut", cut, values)
        binding = tuple(dict.fromkeys((cut.components if cut else ()) + tuple(
            c for layer in limited if layer.layer in binding_layers for c in layer.components)))
        return Ceiling(workload, cut.quantity if cut else rate(value, Metric.BANDWIDTH), binding, binding_layers, tuple(layers),
                       network.noted, Metric.BANDWIDTH,
                       self._caches(workload, chosen, counts) if caches else (), mixed)

    def _shared_nodes(self, workload: Workload, counts: dict[str, int]) -> tuple[LayerLimit, float] | None:
        """Servers on the client nodes (``on``) share each node's own throughput with its client: where some node
        runs both roles (k clients and S servers on N nodes, k + S > N), it moves its client's W / k and its
        server's W / S, so W ≤ B·k·S / (k + S). None where no node runs both or the nodes state no bandwidth."""
        best = None
        op = workload.operation.value
        converged = [server for server in self.topology.of_kind(Kind.SERVER) if server.on and server.on in counts]
        devices = [g.name for g in self.topology.of_kind(Kind.DEVICE) if g.serves(op)] if converged else []
        for server in converged:
            host = self.topology.group(server.on)
            stated = host.capacity("bandwidth", op)
            k, s = counts.get(server.on, 0), server.count
            carries = not devices or any(d in self.topology.reachable(server.name) for d in devices)  # not metadata alone
            if stated is None or stated.value is None or k + s <= host.count or not carries:
                continue
            limit = canonical(stated.value) * k * s / (k + s)
            if best is None or limit < best[-1]:
                best = (server, host, stated.value, k, s, limit)
        if best is None:
            return None
        server, host, node, k, s, limit = best

        def recipe() -> tuple[tuple[str, ...], dict]:
            b, n, m = mark(f"B_{host.name}"), count(host.name), count(server.name)
            return (quotient(f"{b}*{n}*{m}", f"{n} + {m}"),), {f"B_{host.name}": node, f"n_{host.name}": k,
                                                                   f"n_{server.name}": s}
        return LayerLimit("shared nodes (client and server)", rate(limit, Metric.BANDWIDTH),
                          (Component(host.name, "bandwidth"),), recipe), limit

    def _mixed(self, workload: Workload, clients: tuple[str, ...] | None, caches: bool) -> Ceiling:
        """Reads and writes at once, a share r of the bytes read: NICs and links carry each direction on its
        own (full duplex), so reads bound the total at R / r and writes at W / (1 - r); what serves one or the
        other at a time (half duplex: devices both directions use, the requests in flight, a group's own
        throughput) bounds it at 1 / (r / L_read + (1 - r) / L_write)."""
        share = workload.read_share
        parts = {op: self._ceiling(replace(workload, operation=op, read_share=None), clients, caches)
                 for op in (Operation.READ, Operation.WRITE)}
        limits = [("reads", canonical(parts[Operation.READ].value) / share, parts[Operation.READ].binding, None),
                  ("writes", canonical(parts[Operation.WRITE].value) / (1 - share), parts[Operation.WRITE].binding, None)]
        by_name = {op: {layer.layer: layer for layer in c.layers if layer.value is not None} for op, c in parts.items()}
        for name in HALF_DUPLEX:
            read, write = (by_name[op].get(name) for op in (Operation.READ, Operation.WRITE))
            if read is None or write is None or (name in DEVICE_LAYERS and not set(read.components) & set(write.components)):
                continue  # not on both ways, or tiers apart (writes to a buffer, reads from flash): nothing shared
            ends = (canonical(read.value), canonical(write.value))
            limits.append((f"{name}, shared by reads and writes", 1 / (share / ends[0] + (1 - share) / ends[1]),
                           tuple(dict.fromkeys(read.components + write.components)), (name, *ends)))
        layers = [LayerLimit(name, rate(value, Metric.BANDWIDTH), tuple(components), _mixed_formula(name, detail, share, parts))
                  for name, value, components, detail in limits]
        value = min(limit[1] for limit in limits)
        binding = [layer for layer, limit in zip(layers, limits) if math.isclose(limit[1], value, rel_tol=TIE)]
        assumptions = tuple(dict.fromkeys((
            f"reads and writes at once, {share:.0%} of the bytes read: the NICs and links carry each direction on "
            "its own (full duplex), the devices serve one at a time (half duplex)",
            *parts[Operation.READ].assumptions, *parts[Operation.WRITE].assumptions)))
        return Ceiling(workload, rate(value, Metric.BANDWIDTH), tuple(dict.fromkeys(c for layer in binding for c in layer.components)),
                       tuple(layer.layer for layer in binding), tuple(layers), assumptions, Metric.BANDWIDTH)

    def _caches(self, workload: Workload, chosen: tuple[str, ...], counts: dict[str, int]) -> tuple[CacheLimit, ...]:
        """The cache ceilings, the servers' memory reached through the network's cut when every server states its speed."""
        server = None
        if all(g.capacity("memory_bandwidth", workload.operation.value) is not None for g in self.topology.of_kind(Kind.SERVER)):
            try:
                server = self.cut(self.network(self.shape(workload, cached=True), chosen), workload, counts).value
            except TopologyError:
                server = None  # nothing limits the way to the servers' memory: no figure to give
        return cache_limits(self.topology, workload, chosen, counts, server, self.memory(counts))

    def cut(self, network: FlowNetwork, workload: Workload, counts: dict[str, int],
            only: str | None = None, full: list[float] | None = None) -> Limit | None:
        """The minimum cut (its value in B/s, stages and components); with ``only``, every other layer is unlimited.

        ``full`` is every edge's capacity for the workload when the caller has it already (one per layer asked).

        Returns None when ``only`` does not separate the clients from the storage.

        Raises
        ------
        TopologyError
            If nothing limits the path (no ``only``), or the clients have no path to the storage.
        """
        full = network.capacities(workload, counts) if full is None else full
        found = network.limit(full, only)
        if found.value == math.inf:
            if only is not None:
                return None
            raise TopologyError(self.topology.path, "", "no capacity limits the path from the clients to the storage; "
                                "state the bandwidth of the NICs or the devices")
        if found.value <= 0 and only is None:
            raise TopologyError(self.topology.path, "links", "the chosen clients have no path to the storage in the "
                                "direction data moves")
        return found


def predict(topology: Topology, workload: Workload, *, clients: tuple[str, ...] | None = None) -> Ceiling:
    """The most ``workload`` can reach on ``topology``, and the components that set it.

    For data, the ceiling is the minimum cut of the topology's flow network (see
    :mod:`models.flow`); a layer's own limit is the minimum cut when every other layer is
    taken as unlimited. For metadata operations it is the lowest of the metadata limits
    (see :mod:`models.metadata`). The formula is ``Min`` over the layers' limits (plus
    the cut itself when it mixes layers), so it always equals the ceiling.

    Parameters
    ----------
    topology : the system.
    workload : the benchmark configuration; ``nodes`` counts nodes of the client group.
    clients : names of the client groups that run the workload (default: all).

    Raises
    ------
    TopologyError
        If no capacity limits the path, the client group is unknown, or the
        workload asks for more nodes than the group has.

    Examples
    --------
    >>> from topologies.bundled import load_example
    >>> from probes.core.units import Q_
    >>> from probes.core.workload import Operation, Workload
    >>> ceiling = predict(load_example("lecture"), Workload(Operation.READ, Q_(1, "MiB")))
    >>> str(ceiling)
    '1,100 MiB/s (client NICs)'
    """
    return Model(topology).ceiling(workload, clients)


def _mixed_formula(name: str, detail, share: float, parts: dict) -> Callable[[], tuple[tuple, dict]]:
    """The formula of one limit of a read+write ceiling: R / r, W / (1 - r), or the devices' shared time."""
    def made() -> tuple[tuple[str, ...], dict]:
        r = mark("r")
        if name == "reads":
            return (quotient(mark("C_read"), r),), {"C_read": parts[Operation.READ].value, "r": share}
        if name == "writes":
            return (quotient(mark("C_write"), f"1 - {r}"),), {"C_write": parts[Operation.WRITE].value, "r": share}
        layer, read_value, write_value = detail
        tag = "".join(word[0].upper() for word in layer.split())  # devices: D, requests in flight: RIF ...
        read, write = f"{tag}_read", f"{tag}_write"
        return (f"1/({r}/{mark(read)} + (1 - {r})/{mark(write)})",), {
            read: rate(read_value, Metric.BANDWIDTH), write: rate(write_value, Metric.BANDWIDTH), "r": share}
    return made


def _limit(layer: str, cut: Limit, values: Callable[[], dict]) -> LayerLimit:
    return LayerLimit(layer, cut.quantity, cut.components, lambda: (tuple(s.term for s in cut.stages), values()))
