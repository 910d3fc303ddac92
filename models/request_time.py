"""The least time one request takes on its way from a client to the storage, for Little's law's limit.

A flow network (see :mod:`models.flow`) bounds the requests a client group keeps in flight by
this time: round trips, fixed costs and the bytes through the slowest stage, walked from the
client through its tiers of networks and servers to the devices.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, NamedTuple

from probes.core.units import Q_, Metric, canonical, format_quantity
from models.formulas import SIZE, least, least_of, mark, shown
from models.layers import SYMBOL
from topologies.topology import Component, Group, Kind, Topology
from topologies.write_cost import Forwarding

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["RequestTime"]


def _tiers(topology: Topology, client: str, kind: Kind) -> list[list[Group]]:
    """The groups of ``kind`` a client's data reaches, in tiers by how many groups lie between (nearest first)."""
    distance = topology.reachable(client)
    reached = sorted((distance[g.name], i, g) for i, g in enumerate(topology.of_kind(kind)) if g.name in distance)
    tiers: dict[int, list[Group]] = {}
    for d, _, group in reached:
        tiers.setdefault(d, []).append(group)
    return list(tiers.values())


def _crossed(topology: Topology, client: str, tier: list[Group], sinks: set[str]) -> bool:
    """Whether every way from the client to the storage (``sinks``) crosses a group of ``tier``: only then does a
    request surely pay that tier's round trip and latency (a ceiling takes the quickest way)."""
    return not topology.reachable(client, frozenset(g.name for g in tier)).keys() & sinks


class _Sized(NamedTuple):
    """The size of the requests a tier takes (B), whether it collects smaller ones into it (a storing gateway), and
    the group that states it, with its figure."""

    size: float
    collects: bool
    group: str
    stated: Quantity


def _sized(groups) -> _Sized | None:
    """What a tier of groups states of its request size: None where one of them states none (requests pass as they
    come) or they forward differently; of several sizes the largest, the fewest requests (a ceiling is an upper bound)."""
    stated = [_Sized(canonical(g.request_size), g.forwarding is Forwarding.STORE, g.name, g.request_size)
              for g in groups if g.request_size is not None]
    if len(stated) < len(groups) or len({x.collects for x in stated}) > 1:
        return None
    return max(stated, key=lambda x: x.size)


def _pieces(sizes: list[_Sized]) -> tuple[float | None, float, tuple[_Sized, ...]]:
    """How many pieces a request of s bytes is, where the ``sizes`` on its way (nearest the client first) cut it:
    s / ``collected`` from the last storing gateway on (it takes requests of its size whatever comes; None if there is
    none), else max(1, s / ``split``) (infinite where no size is stated); and the sizes whose least sets it."""
    last = max((i for i, x in enumerate(sizes) if x.collects), default=None)
    counted = tuple(sizes[last or 0:])
    least = min((x.size for x in counted), default=math.inf)
    return (least, math.inf, counted) if last is not None else (None, least, counted)


class _Term(NamedTuple):
    """One term of a request's time: its symbols (prefix, group), the groups whose ``request_size`` makes a fixed
    time count once per piece, and whether a storing gateway set those pieces (s / R) or they split (max(1, s / R))."""

    names: tuple[tuple[str, str], ...]
    sizes: tuple[str, ...] = ()
    collected: bool = False

    @property
    def fixed(self) -> bool:
        return len(self.names) == 1 and self.names[0][0] in ("RTT", "L")

    @property
    def formula(self) -> str:
        """The term as formula text (:mod:`models.formulas`)."""
        if not self.fixed:
            return f"{SIZE}/{_name(*self.names)}"
        if not self.sizes:
            return _name(*self.names)
        pieces = f"{SIZE}/{_name(*(('R', g) for g in self.sizes))}"
        return f"{_name(*self.names)}*{pieces if self.collected else f'Max(1, {pieces})'}"


def _seconds_per_byte(start, chosen, end) -> float:
    """The time per byte through the client (``start``), one (group, limits) per server tier and the devices (``end``):
    each segment between storing groups takes its slowest stage's time, and the segments add."""
    total, segment = 0.0, [start]
    for group, limits in chosen:
        segment.append(limits)
        if group.forwarding is Forwarding.STORE:
            total += _segment(segment)
            segment = [limits]
    return total + _segment(segment + end)


def _segment(stages) -> float:
    speeds = [x[0] for stage in stages if stage is not None for x in stage]
    return 1 / min(speeds) if speeds else 0.0


class RequestTime:
    """The least time one request of s bytes takes: round trip, fixed costs, and its bytes through the slowest stage.

    Every hop may state a ``latency``, the fixed time a request costs there besides moving its
    bytes: the client itself (its call into the file system), each tier of networks (a switch, a
    proxy's buffer copy), each tier of servers, and the devices; of each tier the least counts.
    It is paid once per request that hop takes: where clients or servers state the
    ``request_size`` they read and write with, a larger request is taken in pieces of it, and a
    storing gateway collects smaller ones into requests of its size (issue 32). A network's
    requests are those of the servers it carries them to, the devices' those of the last server.

    Pipelined stages overlap, so the bytes take s / (the slowest per-member bandwidth on the
    way); a server group that stores and forwards (a gateway) receives a request whole before
    passing it on, so the segments before and after it add. Server groups are taken in tiers
    by their distance from the client (a gateway before the storage servers); of the tiers the
    groups that together make a request quickest, and of the devices the fastest group (an
    upper bound when groups differ, and monotone in every figure). With
    ``cached`` the servers' memory serves it: no devices. The result is ``fixed + s · per_byte`` s,
    plus t · max(1, s / R) for each (t, R) of ``split``;
    ``recipe`` lists its terms (a fixed time's symbol, or the bytes' time over the tied slowest
    stages), ``formula`` their sum as formula text and ``named`` the values of its symbols.
    """

    def __init__(self, topology: Topology, client: Group, op: str, cached: bool, served: frozenset[str] | None = None):
        self.recipe: list[_Term] = []
        self.values: dict[tuple[str, str], Quantity] = {}
        self.components: list[Component] = []
        self.parts: list[str] = []
        self.fixed = self.per_byte = 0.0
        self.split: list[tuple[float, float]] = []  # (seconds, bytes): paid once per piece of at most those bytes
        tiers = _tiers(topology, client.name, Kind.SERVER)
        devices = [] if cached else [tuple(g for g in topology.of_kind(Kind.DEVICE) if g.serves(op) and (
            served is None or g.name in served))]
        # where the data ends: the devices, the servers' memory, or the servers that hold it where there are no devices
        sinks = {g.name for g in devices[0]} if topology.of_kind(Kind.DEVICE) and not cached else \
            {g.name for g in topology.of_kind(Kind.SERVER) if cached or g.name in topology.holders}
        # a request and its answer cross each tier of networks every way to the storage crosses: a round trip of each
        networks = [n for n in _tiers(topology, client.name, Kind.NETWORK) if _crossed(topology, client.name, n, sinks)]
        crossed = [t for t in tiers if _crossed(topology, client.name, t, sinks)]
        # the request sizes on the way: a tier's requests are those the sizes up to it made (a network's, those of the
        # servers it carries them to), each fixed time paid once per piece
        distance = topology.reachable(client.name)
        sized = [(distance[t[0].name], x) for t in crossed if (x := _sized(t)) is not None]
        own = [x] if (x := _sized([client])) is not None else []

        def sizes(upto: float) -> list[_Sized]:
            return own + [x for d, x in sized if d <= upto]

        def receiver(groups) -> float:
            return min((distance[t[0].name] for t in crossed if distance[t[0].name] > distance[groups[0].name]),
                       default=math.inf)

        for groups in networks:
            nearest = least(groups, "rtt")
            if nearest:
                rtt, network = nearest
                self._fixed(("RTT", network.name), rtt, Component(network.name, "rtt"), f"one round trip of {network.name}",
                            sizes(receiver(groups)))
        for groups, upto in [([client], -1)] + [(n, receiver(n)) for n in networks] + \
                [(t, distance[t[0].name]) for t in crossed] + [(d, math.inf) for d in devices]:
            self._latency(groups, sizes(upto))
        start, end = self._limits(client, op), [self._fastest(d, op) for d in devices]
        choices = itertools.product(*(self._candidates(groups, op) for groups in tiers))
        stream = [start]
        for group, limits in min(choices, key=lambda chosen: _seconds_per_byte(start, chosen, end)):
            stream.append(limits)
            if group.forwarding is Forwarding.STORE:
                self._bytes(stream)
                stream = [limits]
                self.parts.append(f"{group.name} receives each request whole before passing it on")
        self._bytes(stream + end)
        self.described = ", ".join(self.parts)
        self.formula = " + ".join(term.formula for term in self.recipe)

    @property
    def named(self) -> dict[str, Quantity]:
        """The values of the formula's symbols by name."""
        return {f"{prefix}_{group}": value for (prefix, group), value in self.values.items()}

    def _latency(self, groups, sizes: list[_Sized]) -> None:
        """The smallest stated latency of one tier of groups, added to every request (once per piece, see :meth:`_fixed`)."""
        smallest = least(groups, "latency")
        if smallest:
            latency, group = smallest
            self._fixed(("L", group.name), latency, Component(group.name, "latency"), f"the latency of {group.name}", sizes)

    def _fixed(self, name: tuple[str, str], value: Quantity, component: Component, words: str,
               sizes: list[_Sized]) -> None:
        """A fixed time of each request, paid once per piece where the ``sizes`` on its way cut or collect it."""
        collected, split, counted = _pieces(sizes)
        self.recipe.append(_Term((name,), tuple(x.group for x in counted), collected is not None))
        self.values[name] = value
        for x in counted:
            self.values["R", x.group] = x.stated
        self.components.append(component)
        seconds = canonical(value)
        if collected is not None:
            self.per_byte += seconds / collected
            self.parts.append(f"{words} per {_bytes(collected)} it takes")
        elif split < math.inf:
            self.split.append((seconds, split))
            self.parts.append(f"{words} per piece of at most {_bytes(split)}")
        else:
            self.fixed += seconds
            self.parts.append(words)

    @staticmethod
    def _limits(group: Group, op: str) -> list[tuple[float, str, Group, Quantity]] | None:
        """What sets how fast a member of ``group`` moves one stream: (B/s, key, group, value) of each limit at that speed.

        A member's speed is the least of its NIC (one port: a stream crosses one) and its own bandwidth; where both state it, both
        are returned, since raising one alone leaves the member as slow. None if nothing limits it.
        """
        stated = [(canonical(c.value), key, group, c.value) for key in ("nic", "bandwidth")
                  if (c := group.capacity(key, op)) is not None and c.value is not None]
        if not stated:
            return None
        speed = min(x[0] for x in stated)
        return [x for x in stated if math.isclose(x[0], speed, rel_tol=1e-9)]

    @classmethod
    def _candidates(cls, groups, op: str) -> list[tuple[Group, list | None]]:
        """The groups of a tier worth trying, with their limits: with no storing group, only the fastest (a
        pipeline takes the fastest way); with one, every group, since a store's hop may cost more than it gains."""
        limits = [(g, cls._limits(g, op)) for g in groups]
        if any(g.forwarding is Forwarding.STORE for g in groups):
            return limits
        return [max(limits, key=lambda pair: math.inf if pair[1] is None else pair[1][0][0])]

    @classmethod
    def _fastest(cls, groups, op: str) -> list[tuple[float, str, Group, Quantity]] | None:
        """The limits of the group whose members move one stream fastest; None if one of them has no limit."""
        best = None
        for group in groups:
            limits = cls._limits(group, op)
            if limits is None:
                return None  # a group that nothing limits: some path has no per-member limit of this kind
            if best is None or limits[0][0] > best[0][0]:
                best = limits
        return best

    def _bytes(self, segment: list) -> None:
        """Add the time of s bytes through a segment of pipelined stages: s over the slowest of them."""
        limits = [x for stage in segment if stage is not None for x in stage]
        if not limits:
            return
        slowest = min(x[0] for x in limits)
        names = []
        for speed, key, group, value in limits:
            if math.isclose(speed, slowest, rel_tol=1e-9):  # all that tie: raising one alone changes nothing
                names.append((SYMBOL[key], group.name))
                self.values[names[-1]] = value
                self.components.append(Component(group.name, key))
        self.recipe.append(_Term(tuple(names)))
        self.parts.append(f"s / {shown(_name(*names))} for its bytes")
        self.per_byte += 1 / slowest


def _bytes(size: float) -> str:
    return format_quantity(Q_(size, "B"), Metric.SIZE)


def _name(*names: tuple[str, str]) -> str:
    """``NIC_compute``, or ``Min(B_ssd, NIC_compute)`` for stages that tie (in the order of their names), as formula
    text."""
    return least_of([mark(name) for name in sorted(f"{prefix}_{group}" for prefix, group in names)])
