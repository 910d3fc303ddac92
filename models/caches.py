"""The memory that can hold a workload's data: client and server page caches, summed over the nodes that run it."""

from __future__ import annotations

from dataclasses import dataclass

from probes.units import Quantity
from probes.workload import Workload
from topologies.topology import Kind, Topology

__all__ = ["Memory", "aggregate_memory"]


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

def aggregate_memory(topology: Topology, workload: Workload, clients: tuple[str, ...] | None = None) -> Memory:
    """Sum each group's ``memory`` times its members (the workload's node count for a single client group)."""
    chosen = [g for g in topology.of_kind(Kind.CLIENT) if not clients or g.name in clients]
    count = {g.name: g.count for g in topology.groups}
    if workload.nodes is not None and len(chosen) == 1:
        count[chosen[0].name] = min(workload.nodes, chosen[0].count)
    return Memory(_total(chosen, count), _total(topology.of_kind(Kind.SERVER), count))


def _total(groups, count) -> Quantity | None:
    memories = [(g.capacity("memory"), g.name) for g in groups]
    if not memories or any(m is None or m.value is None for m, _ in memories):
        return None
    return sum((m.value * count[name] for m, name in memories[1:]), memories[0][0].value * count[memories[0][1]])
