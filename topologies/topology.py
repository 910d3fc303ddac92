"""The Topology type: groups of identical components, the links between them, and their capacities.

A group of 64 identical clients is one :class:`Group` with ``count = 64``; each capacity is per member, with its source.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING

from probes.core.units import Metric, family_unit, format_quantity, quantity_json
from probes.core.workload import MOST_COUNT as MOST_MEMBERS  # one bound for every count: a slip, not a system
from topologies.write_cost import Forwarding, WriteCost

if TYPE_CHECKING:
    import networkx as nx
    from pint import Quantity, Unit

__all__ = ["TOPOLOGY_VERSION", "MOST_MEMBERS", "Kind", "Source", "Capacity", "Component", "Group", "Link", "Topology", "CAPACITY_KEYS", "PER_OPERATION",
           "capacity_keys", "capacity_json", "lookup"]


class Kind(enum.Enum):
    """The role of a group; its value is the TOML table that lists such groups; ``rank`` orders the kinds along the
    write path: clients → networks → servers → devices."""

    CLIENT = "clients"
    NETWORK = "networks"
    SERVER = "servers"
    DEVICE = "devices"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def singular(self) -> str:
        return self.value[:-1]


_RANK = {kind: i for i, kind in enumerate(Kind)}

# The capacities a group of each kind may state, per member, with their metric. A server's ``block_size`` is the
# file system's block or stripe size it serves (not a limit, a fit); ``latency`` (any kind) is the fixed time one
# request costs there besides moving its bytes; ``metadata`` the metadata operations per second one (metadata) server
# completes, ``directory`` the rate one directory sustains when every process works in it (a lock serialises them),
# ``journal`` the creates and removes per second its metadata devices make durable; ``memory_bandwidth`` how fast the
# page cache serves data; a client's ``checkpoint_generation`` how fast it makes the checkpoint tensors it saves.
CAPACITY_KEYS: dict[Kind, dict[str, Metric]] = {
    Kind.CLIENT: {"nic": Metric.BANDWIDTH, "bandwidth": Metric.BANDWIDTH, "memory": Metric.SIZE,
                  "memory_bandwidth": Metric.BANDWIDTH, "latency": Metric.LATENCY, "checkpoint_generation": Metric.BANDWIDTH},
    Kind.NETWORK: {"bandwidth": Metric.BANDWIDTH, "rtt": Metric.LATENCY, "latency": Metric.LATENCY},
    Kind.SERVER: {"nic": Metric.BANDWIDTH, "bandwidth": Metric.BANDWIDTH, "memory": Metric.SIZE,
                  "memory_bandwidth": Metric.BANDWIDTH, "block_size": Metric.SIZE, "latency": Metric.LATENCY,
                  "metadata": Metric.OPERATION_RATE, "directory": Metric.OPERATION_RATE, "journal": Metric.OPERATION_RATE},
    Kind.DEVICE: {"bandwidth": Metric.BANDWIDTH, "iops": Metric.OPERATION_RATE, "size": Metric.SIZE,
                  "latency": Metric.LATENCY},
}
# Keys that may also be given per operation as OPERATION_KEY (read_nic, create_metadata, create_directory).
_METADATA_OPERATIONS = ("create", "stat", "open", "rename", "remove", "find")
PER_OPERATION = {"nic": ("read", "write"), "bandwidth": ("read", "write"), "iops": ("read", "write"),
                 "memory_bandwidth": ("read", "write"), **dict.fromkeys(("metadata", "directory"), _METADATA_OPERATIONS)}


def capacity_keys(kind: Kind) -> dict[str, Metric]:
    """Every capacity key a group of ``kind`` may state, per-operation variants included, with its metric."""
    keys = CAPACITY_KEYS[kind]
    return keys | {f"{op}_{key}": keys[key] for key, ops in PER_OPERATION.items() if key in keys for op in ops}


def lookup(capacities: dict[str, Capacity], key: str, operation: str | None = None) -> Capacity | None:
    """The capacity ``key`` for an operation: ``read_nic`` before ``nic``, None if not stated."""
    if operation and f"{operation}_{key}" in capacities:
        return capacities[f"{operation}_{key}"]
    return capacities.get(key)


_LINK = re.compile(r"links\[(\d+)\]")  # how a link is named where a capacity is stated: links[i]


@dataclass(frozen=True, slots=True, order=True)
class Component:
    """Where a capacity is stated: ``key`` of the group ``group`` (``compute.nic``), or of a link (``links[0].bandwidth``).
    The model names what binds a ceiling with these, and findings, plots and ``--set`` read them; ``str()`` gives the
    ``group.key`` a topology file and a person use."""

    group: str
    key: str
    link: int | None = None  # the index of the ``[[links]]`` entry when a link's; ``group`` then reads ``links[i]``

    def __str__(self) -> str:
        return f"{self.group}.{self.key}"

    @classmethod
    def of_link(cls, index: int, key: str = "bandwidth") -> Component:
        """``key`` (the bandwidth) of the ``index``-th ``[[links]]`` entry."""
        return cls(f"links[{index}]", key, index)

    @classmethod
    def parse(cls, text: str) -> Component | None:
        """``GROUP.KEY`` or ``links[i].KEY`` as a component (the first dot splits), or None when either side is empty.

        Examples
        --------
        >>> Component.parse("links[2].bandwidth").link
        2
        """
        group, dot, key = (part.strip() for part in text.partition("."))
        if not (dot and group and key):
            return None
        link = _LINK.fullmatch(group)
        return cls.of_link(int(link[1]), key) if link else cls(group, key)


@dataclass(frozen=True, slots=True)
class Source:
    """Where a capacity comes from: ``datasheet``, ``measured``, ``assumption``, ``probe`` or ``unstated``."""

    kind: str
    note: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.note}" if self.note else self.kind


@dataclass(frozen=True, slots=True)
class Capacity:
    """One per-member capacity; ``value is None`` means the file says it is unlimited.

    A figure nobody stated exactly is a ``range`` (least, greatest); its ``value`` is then the
    end most favourable to a ceiling (the greatest, the least for a latency), so whatever reads
    ``value`` alone still gets an upper bound. In JSON an unlimited capacity has
    ``"value": null``; a capacity not stated is absent.
    """

    value: Quantity | None
    metric: Metric
    source: Source
    range: tuple[Quantity, Quantity] | None = None

    @property
    def ends(self) -> tuple[Quantity, Quantity]:
        """(least favourable, most favourable) to a ceiling: a ceiling rises with a bandwidth or a rate, falls with a latency."""
        low, high = self.range or (self.value, self.value)
        return (high, low) if self.metric is Metric.LATENCY else (low, high)

    @property
    def assumed(self) -> bool:
        """Whether the figure is an assumption: its source says so, or it is a range nobody named a source for. A
        measured, probed or data-sheet figure is stated, also as a range (a measurement's interval, its spread)."""
        return self.source.kind == "assumption" or (self.range is not None and self.source.kind == "unstated")

    @classmethod
    def ranged(cls, low: Quantity, high: Quantity, metric: Metric, source: Source) -> Capacity:
        """A capacity known to lie between ``low`` and ``high``; its value the end most favourable to a ceiling."""
        return cls(low if metric is Metric.LATENCY else high, metric, source, (low, high))

    def at(self, value: Quantity) -> Capacity:
        """The same capacity with one value in place of its range (its source kept)."""
        return Capacity(value, self.metric, self.source)

    @property
    def unit(self) -> Unit:
        """The unit its figures are shown in: its greatest's own (bits or bytes, decimal or binary) at the prefix that
        keeps about three significant digits (a probed ``19.8 to 20.9 Gbit/s``, not its bit/s)."""
        return family_unit(self.range[1] if self.range else self.value)

    def span(self) -> str:
        """The range as stated (its one value without a range), in :attr:`unit`: ``10 to 100 Gbit/s``."""
        low, high = self.range or (self.value, self.value)
        if low == high:  # a range of one figure (a table's entry resting on one submission)
            return format_quantity(high, unit=self.unit)
        number = format_quantity(low, unit=self.unit).split(" ")[0]
        return f"{number} to {format_quantity(high, unit=self.unit)}"

    def __str__(self) -> str:
        if self.range:
            shown = self.span()
        else:
            shown = "unlimited" if self.value is None else format_quantity(self.value, self.metric)
        return f"{shown} ({self.source})"


@dataclass(frozen=True)
class Group:
    """``count`` identical components of one kind; ``capacities`` maps keys such as ``nic`` to values."""

    name: str
    kind: Kind
    count: int
    capacities: dict[str, Capacity] = field(default_factory=dict)
    description: str = ""
    write_cost: WriteCost = WriteCost()
    forwarding: Forwarding = Forwarding.PIPELINE
    price: float | None = None  # per member, in the topology's currency
    nics: int = 1  # network ports per member, each of ``nic`` (rails)
    operations: tuple[str, ...] = ()  # a device tier's data operations (all when empty): writes to a buffer, reads from flash
    on: str = ""  # a server group's: the client group whose nodes it runs on (converged), "" for nodes of its own
    transfers: tuple[str, Quantity] | None = None  # a device tier's: the requests it takes, ("<", 4 KiB) for under 4 KiB
    request_size: Quantity | None = None  # a client's or server's: the size it reads and writes with (None: as they come)

    def capacity(self, key: str, operation: str | None = None) -> Capacity | None:
        """The capacity ``key`` for an operation: ``read_nic`` before ``nic``, None if not stated."""
        return lookup(self.capacities, key, operation)

    def serves(self, operation: str, size: Quantity | None = None) -> bool:
        """Whether data of ``operation`` (read, write) in requests of ``size`` passes this group: a device tier may
        serve only some (any size may, when it is not known)."""
        if self.operations and operation not in self.operations:
            return False
        if self.transfers is None or size is None:
            return True
        sign, bound = self.transfers
        return {"<": size < bound, "<=": size <= bound, ">": size > bound, ">=": size >= bound}[sign]


@dataclass(frozen=True)
class Link:
    """Groups ``a`` and ``b`` are connected; ``bandwidth`` is the total of all links between them (not per member)."""

    a: str
    b: str
    bandwidth: Capacity | None = None


# topology format history (the body is Topology.to_dict):
#   1.0  first version
#   1.1  a capacity gains "range": [least, greatest] (null for a single value; "value" is then its favourable end);
#        a group gains nics (ports per member), operations and transfers (a device tier's, null for all) and on
#        (a converged server group's client group, null for nodes of its own)
#   1.2  a group gains request_size (a client's or server's, in B; null where requests pass as they come)
#   1.3  kv_cache, where the topology states them: the tiers a serving node offloads its KV-cache to, with sizes and rates
TOPOLOGY_VERSION = "1.3"


@dataclass(frozen=True)
class Topology:
    """A storage system: its groups in file order, the links between them, and where it was read."""

    name: str
    groups: tuple[Group, ...]
    links: tuple[Link, ...]
    description: str = ""
    path: str = "<topology>"
    currency: str = ""  # of the groups' prices
    kv_cache: tuple = ()  # the KVTier's a serving node offloads its KV-cache to (topologies.described.kvcache)

    def group(self, name: str) -> Group:
        return self._named[name]

    @cached_property
    def _named(self) -> dict[str, Group]:
        return {g.name: g for g in self.groups}

    def of_kind(self, kind: Kind) -> tuple[Group, ...]:
        return self._kinds[kind]

    @cached_property
    def _kinds(self) -> dict[Kind, tuple[Group, ...]]:
        return {kind: tuple(g for g in self.groups if g.kind is kind) for kind in Kind}

    def graph(self) -> nx.Graph:
        """The groups as nodes (attributes ``kind`` and ``count``) and the links as edges."""
        import networkx as nx  # only the drawing of a topology needs a graph library
        graph = nx.Graph(name=self.name)
        for g in self.groups:
            graph.add_node(g.name, kind=g.kind, count=g.count)
        for link in self.links:
            graph.add_edge(link.a, link.b, link=link)
        return graph

    def data_links(self) -> list[tuple[str, str, int]]:
        """Every link as ``(from, to, index)`` in the direction writes move data, walking out from the clients.

        Data moves up the kinds (client → network → server → device); both ways between the networks clients reach
        without a server (leaves and spines); between two servers, or two back-end networks, from the one nearer the
        clients to the farther (both ways at the same distance); and from a server into a network no client reaches
        without crossing a server (a back-end fabric to enclosures), from which it moves on to servers and devices
        behind it. Groups no client reaches keep the first rule, both ways between equals.
        """
        return list(self._directed)

    @cached_property
    def front_end(self) -> frozenset[str]:
        """The groups clients reach without moving from a server into a network; a network outside it is a back end."""
        return frozenset(self._walk([g.name for g in self.of_kind(Kind.CLIENT)], frozenset(), fabric=False))

    @cached_property
    def holders(self) -> frozenset[str]:
        """The server groups that hold the data themselves, where no devices are stated: each that passes it to no
        server farther from the clients, directly or over a network (a gateway passes it on; two servers side by side
        both keep theirs)."""
        if self.of_kind(Kind.DEVICE):
            return frozenset()
        distance = self.distance
        return frozenset(g.name for g in self.of_kind(Kind.SERVER) if not any(
            self._named[v].kind is Kind.SERVER and distance.get(v, 0) > distance.get(g.name, 0) for v in self.reachable(g.name)))

    @cached_property
    def distance(self) -> dict[str, int]:
        """How many links each group lies from the nearest client group, along the ways data moves."""
        return self._walk([g.name for g in self.of_kind(Kind.CLIENT)], self.front_end, fabric=True)

    @cached_property
    def _directed(self) -> tuple[tuple[str, str, int], ...]:
        front, distance, far = self.front_end, self.distance, len(self.groups) + 1
        directed = []
        for index, link in enumerate(self.links):
            for u, v in ((link.a, link.b), (link.b, link.a)):
                kind = self._named[u].kind
                both_ways = kind is not self._named[v].kind or (kind is Kind.NETWORK and {u, v} <= front)
                if self._step(u, v, front, True) and (both_ways or distance.get(u, far) <= distance.get(v, far)):
                    directed.append((u, v, index))
        return tuple(directed)

    def _step(self, u: str, v: str, front: frozenset[str], fabric: bool) -> bool:
        """Whether writes may move from group ``u`` to its neighbour ``v``; ``fabric``: into back-end networks too."""
        a, b = self._named[u].kind, self._named[v].kind
        if fabric and a is Kind.SERVER and b is Kind.NETWORK:
            return v not in front
        if fabric and a is Kind.NETWORK and u not in front and b in (Kind.SERVER, Kind.NETWORK):
            return v not in front
        return b.rank > a.rank or a is b

    def _walk(self, start: list[str], front: frozenset[str], fabric: bool) -> dict[str, int]:
        """Breadth-first distances from the groups ``start`` along the steps :meth:`_step` allows."""
        around: dict[str, list[str]] = {}
        for link in self.links:
            around.setdefault(link.a, []).append(link.b)
            around.setdefault(link.b, []).append(link.a)
        distance = dict.fromkeys(start, 0)
        todo = list(start)
        for u in todo:  # the loop sees names appended while it runs
            for v in around.get(u, ()):
                if v not in distance and self._step(u, v, front, fabric):
                    distance[v] = distance[u] + 1
                    todo.append(v)
        return distance

    def reachable(self, name: str, avoiding: frozenset[str] = frozenset()) -> dict[str, int]:
        """The groups data written from group ``name`` reaches along :meth:`data_links`, each with how many links
        away; with ``avoiding``, without passing those groups (is a tier on every way?)."""
        key = (name, avoiding)
        if key not in self._reached:
            self._reached[key] = self._reach(name, avoiding)
        return self._reached[key]

    @cached_property
    def _reached(self) -> dict[tuple[str, frozenset[str]], dict[str, int]]:
        return {}

    @cached_property
    def _ahead(self) -> dict[str, list[str]]:
        """Per group, the groups it hands data to."""
        ahead: dict[str, list[str]] = {}
        for u, v, _ in self._directed:
            ahead.setdefault(u, []).append(v)
        return ahead

    def _reach(self, name: str, avoiding: frozenset[str]) -> dict[str, int]:
        distance, todo = {name: 0}, [name]
        for u in todo:  # breadth first: the loop sees names appended while it runs
            for v in self._ahead.get(u, ()):
                if v not in distance and v not in avoiding:
                    distance[v] = distance[u] + 1
                    todo.append(v)
        return distance

    def to_dict(self) -> dict:
        """The topology as JSON-ready data: every capacity per member, canonical units, with its source."""
        return {
            "name": self.name, "description": self.description, "path": self.path, "currency": self.currency,
            "groups": [{"name": g.name, "kind": g.kind.singular, "count": g.count, "description": g.description,
                        "price": g.price, "nics": g.nics, "operations": list(g.operations) or None, "on": g.on or None,
                        "transfers": None if g.transfers is None else [g.transfers[0], quantity_json(g.transfers[1])],
                        "request_size": None if g.request_size is None else quantity_json(g.request_size),
                        "capacities": {key: capacity_json(c) for key, c in g.capacities.items()},
                        **({"write_cost": {"replicas": g.write_cost.replicas,
                                           "parity": list(g.write_cost.parity) if g.write_cost.parity else None,
                                           "amplification": g.write_cost.amplification},
                            "forwarding": g.forwarding.value} if g.kind is Kind.SERVER else {})}
                       for g in self.groups],
            "links": [{"between": [link.a, link.b], "bandwidth": capacity_json(link.bandwidth)} for link in self.links],
            **({"kv_cache": [tier.to_dict() for tier in self.kv_cache]} if self.kv_cache else {}),
        }

    def capacity_at(self, place: Component, operation: str | None = None) -> Capacity | None:
        """The capacity stated at ``place`` (per operation first), None if not stated."""
        if place.link is not None:
            return self.links[place.link].bandwidth if place.link < len(self.links) else None
        group = self._named.get(place.group)
        return group.capacity(place.key, operation) if group else None

    def ranged(self) -> dict[Component, Capacity]:
        """Every capacity stated as a range, groups' and links', by where it is stated."""
        found = {Component(g.name, key): c for g in self.groups for key, c in g.capacities.items() if c.range}
        return found | {Component.of_link(i): link.bandwidth for i, link in enumerate(self.links)
                        if link.bandwidth is not None and link.bandwidth.range}

    def assumed(self) -> dict[Component, Capacity]:
        """Every capacity assumed as one value (source ``assumption``, no range, not unlimited), groups' and links'."""
        found = {Component(g.name, key): c for g in self.groups for key, c in g.capacities.items() if _one_assumed(c)}
        return found | {Component.of_link(i): link.bandwidth for i, link in enumerate(self.links) if _one_assumed(link.bandwidth)}

    def replaced(self, changes: dict[Component, Capacity]) -> Topology:
        """The topology with the capacities at ``changes`` replaced (each must be stated already)."""
        by_group: dict[str, dict[str, Capacity]] = {}
        links = self.links
        for place, capacity in changes.items():
            if place.link is None:
                by_group.setdefault(place.group, {})[place.key] = capacity
            elif links is self.links:
                links = tuple(replace(link, bandwidth=changes[Component.of_link(i)]) if Component.of_link(i) in changes
                              else link for i, link in enumerate(self.links))
        named = self._named  # the model asks thousands: copy what changes
        made_groups = {name: _with(group, capacities=group.capacities | {key: capacity for key, capacity in keys.items()
                                                                         if key in group.capacities})
                       for name, keys in by_group.items() if (group := named.get(name)) is not None}
        groups = tuple(made_groups.get(g.name, g) for g in self.groups)
        made = _with(self, groups=groups, links=links)  # the same links: the ways data moves, found once, are kept
        found = self.__dict__
        made.__dict__.update({k: found[k] for k in _WAYS if k in found})
        made.__dict__["_named"] = named | made_groups  # the same groups by name and kind, in the same order
        kinds = made.__dict__["_kinds"] = dict(self._kinds)
        for group in made_groups.values():
            kinds[group.kind] = tuple(made_groups.get(g.name, g) for g in kinds[group.kind])
        return made

    def at_ends(self, favourable: bool) -> Topology:
        """The topology with every range at its most (``favourable``) or least favourable end to a ceiling."""
        return self.replaced({place: c.at(c.ends[favourable]) for place, c in self.ranged().items()})

    def block_size(self) -> Quantity | None:
        """The file system's block or stripe size, when the servers that state one (not as an assumption) agree on it; else None."""
        sizes = [c.value for g in self.of_kind(Kind.SERVER) if (c := g.capacity("block_size")) is not None
                 and c.value is not None and c.source.kind != "assumption"]
        return sizes[0] if sizes and all(size == sizes[0] for size in sizes) else None

    def neighbours(self, name: str, kind: Kind) -> tuple[Group, ...]:
        """The groups of ``kind`` linked to group ``name``."""
        linked = {link.b if link.a == name else link.a for link in self.links if name in (link.a, link.b)}
        return tuple(g for g in self.of_kind(kind) if g.name in linked)


# What a topology found of the ways data moves, which its groups' figures do not change: a replaced one keeps them.
_WAYS = ("front_end", "holders", "distance", "_directed", "_reached", "_ahead")


def _with(made: Group | Topology, **changes) -> Group | Topology:
    """A group or topology with ``changes`` to its fields, as dataclasses.replace makes it (neither checks itself after
    __init__) but without passing every field through __init__ again: a search for an implied figure makes thousands."""
    copy = object.__new__(type(made))
    copy.__dict__.update({name: made.__dict__[name] for name in _FIELDS[type(made)]}, **changes)
    return copy


_FIELDS = {kind: tuple(f.name for f in fields(kind)) for kind in (Group, Topology)}


def capacity_json(c: Capacity | None) -> dict | None:
    """A capacity as JSON-ready data: its value and range in canonical units, metric and source; None as null."""
    return None if c is None else {"value": quantity_json(c.value), "range": [quantity_json(v) for v in c.range] if c.range
                                   else None, "metric": c.metric.name.lower(), "source": c.source.kind, "note": c.source.note}


def _one_assumed(capacity: Capacity | None) -> bool:
    """Whether a capacity is one assumed value: not a range, not unlimited."""
    return capacity is not None and capacity.assumed and capacity.range is None and capacity.value is not None
