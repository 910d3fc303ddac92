"""The layers of the bottleneck model: which capacities of each kind of group data passes, in order, and their names.

Findings, plots and reports name layers by these words; the flow network builds a stage per entry.
"""

from __future__ import annotations

from topologies.topology import Kind

__all__ = ["STAGES", "SYMBOL", "LAYERS", "SERVER_LAYERS", "NETWORK_LAYERS", "DEVICE_LAYERS", "REQUESTS"]

REQUESTS = "requests in flight"
# Per kind, in the order data passes them when writing: (capacity key, layer name).
STAGES = {
    Kind.CLIENT: (("bandwidth", "client throughput"), ("requests", REQUESTS), ("nic", "client NICs")),
    Kind.NETWORK: (("bandwidth", "network fabric"),),
    Kind.SERVER: (("nic", "server NICs"), ("bandwidth", "server throughput"), ("memory_bandwidth", "server cache")),
    Kind.DEVICE: (("bandwidth", "devices"), ("iops", "device IOPS")),
}
SYMBOL = {"nic": "NIC", "bandwidth": "B", "iops": "IOPS", "memory_bandwidth": "M"}
# Every data layer's name: the stages of each kind, and the links between groups.
LAYERS = tuple(name for stages in STAGES.values() for _, name in stages) + ("links",)
# The layers of servers: without any, the storage is the clients' own (a local disk).
SERVER_LAYERS = frozenset(name for _, name in STAGES[Kind.SERVER])
# The layers of devices: a medium that reads and writes in turn (half duplex).
DEVICE_LAYERS = frozenset(name for _, name in STAGES[Kind.DEVICE])
# The layers data crosses on the network (links included): beyond them, only a client-side cache can serve it.
NETWORK_LAYERS = frozenset({REQUESTS, "client NICs", "network fabric", "links", "server NICs"})
