"""Caches as layers a workload may reach: client and server memory, their size against the data set, their speed.

A buffered run whose data set fits the memory may be served from the page cache: the
client's (no network at all) or the servers' (the network, but no devices). A prediction
gives those ceilings beside the storage path's, with the data-set-to-memory ratio that
decides which applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from probes.core.units import Metric, Q_, canonical
from probes.core.workload import Workload
from models.ceiling import CacheLimit, rate
from topologies.topology import Kind, Topology

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Memory", "aggregate_memory", "cache_limits"]


@dataclass(frozen=True)
class Memory:
    """The memory of the clients that ran a workload and of all servers; None where the topology does not state it."""

    clients: Quantity | None
    servers: Quantity | None

    @property
    def total(self) -> Quantity | None:
        """The memory stated (clients, servers or both): a data set this size may be cached whole; None if neither is."""
        stated = [m for m in (self.clients, self.servers) if m is not None]
        return sum(stated[1:], stated[0]) if stated else None

    @property
    def whose(self) -> str:
        """Whose memory :attr:`total` counts, in words."""
        return " and ".join(w for w, m in (("clients'", self.clients), ("servers'", self.servers)) if m is not None)


def aggregate_memory(topology: Topology, counts: dict[str, int]) -> Memory:
    """Each group's ``memory`` times its members: the client groups that run a workload (``counts``: how many
    nodes of each, see :meth:`models.predict.Model.nodes`) and every server. A server group that runs on client
    nodes (``on``) counts only the members beyond the nodes the workload runs on: the rest is the clients' memory."""
    count = {g.name: max(0, g.count - counts.get(g.on, 0)) if g.on else g.count for g in topology.of_kind(Kind.SERVER)}
    count |= counts
    return Memory(_total([topology.group(name) for name in counts], count), _total(topology.of_kind(Kind.SERVER), count))


def cache_limits(topology: Topology, workload: Workload, clients: tuple[str, ...], counts: dict[str, int],
                 server: float | None, memory: Memory) -> tuple[CacheLimit, ...]:
    """The client cache's and the server cache's ceilings for ``workload``, and whether each can serve it.

    ``server`` is the cut to the servers' memory (B/s) that the model solved, None where it gives
    none; ``memory`` that of the clients and servers (:func:`aggregate_memory`). A cache whose memory and
    speed the topology leaves out is left out too.
    """
    op = workload.operation.value
    chosen = set(clients)
    speeds = [(g.capacity("memory_bandwidth", op), counts[g.name]) for g in topology.of_kind(Kind.CLIENT) if g.name in chosen]
    client = None
    if speeds and all(c is not None for c, _ in speeds):
        client = math.fsum(math.inf if c.value is None else canonical(c.value) * n for c, n in speeds)
    limits = (_limit("client cache", client, memory.clients, workload), _limit("server cache", server, memory.servers, workload))
    return tuple(c for c in limits if c.value is not None or c.memory is not None)  # a cache the topology says nothing of


def _limit(layer: str, value: float | None, memory: Quantity | None, workload: Workload) -> CacheLimit:
    shown = None if value is None or value == math.inf else rate(value, Metric.BANDWIDTH)
    ratio = (None if memory is None or workload.data_set is None or canonical(memory) == 0 else
             canonical(workload.data_set) / canonical(memory))
    if workload.direct:
        return CacheLimit(layer, shown, memory, ratio, False, "direct I/O bypasses the page cache")
    if memory is not None and canonical(memory) == 0:
        return CacheLimit(layer, shown, memory, None, False, "no memory to cache in")
    if ratio is None:
        unknown = " and ".join(w for w, x in (("the data set", workload.data_set), ("the memory", memory)) if x is None)
        return CacheLimit(layer, shown, memory, None, None, f"{unknown} not known: the cache may serve it")
    if ratio <= 1:
        return CacheLimit(layer, shown, memory, ratio, True, f"the data set is {ratio:.2g}x the memory: it fits")
    return CacheLimit(layer, shown, memory, ratio, False, f"the data set is {ratio:.2g}x the memory: it does not fit")


def _total(groups, count) -> Quantity | None:
    memories = [(g.capacity("memory"), g.name) for g in groups]
    if not memories or any(m is None or m.value is None for m, _ in memories):
        return None
    return Q_(math.fsum(canonical(m.value) * count[name] for m, name in memories), "B")
