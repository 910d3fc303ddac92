"""The topology of a lab that ``iobound lab up`` built: its hosts, shaped links, bridge and stores."""

from __future__ import annotations

from probes.lab import PREFIX, SWITCH, Backing, Lab
from probes.core.units import Metric
from topologies.topology import Capacity, Group, Kind, Link, Source, Topology

__all__ = ["lab_topology", "hosts_phrase"]

# Each server's store, and why its bandwidth is taken as unlimited until fio on it says otherwise.
_STORES = {Backing.TMPFS: ("tmpfs, in memory",
                           "memory: GiB/s, far above the links; fio on the store measures it (iobound probe --tmpfs STORE)"),
           Backing.FILE: ("ext4 image on a loop device",
                          "in this machine's page cache while it fits: far above the links; fio on the store measures it")}


def lab_topology(lab: Lab) -> Topology:
    """The lab as a topology: clients and servers with the shaped rate as NIC, the bridge, and the stores (unlimited).

    The rate is what tbf lets through at the link layer; TCP carries about 95 % of it as data
    (1448 of every 1514 bytes), so probe the links with iperf3 for the ceiling a benchmark can reach.
    """
    spec = lab.spec
    nic = Capacity(spec.rate, Metric.BANDWIDTH, Source("assumption", "tc tbf rate"))
    description, why = _STORES[spec.backing]
    store = Capacity(None, Metric.BANDWIDTH, Source("assumption", why))
    network = {}
    if lab.delayed:  # each host's link adds the delay to what it sends: a round trip crosses two of them
        netem = Source("assumption", f"tc netem delay of {spec.delay:~P} on each host's link")
        network["rtt"] = Capacity(2 * spec.delay, Metric.LATENCY, netem)
    groups = (Group("lab-clients", Kind.CLIENT, spec.clients, {"nic": nic}, f"namespaces {PREFIX}c1 ..."),
              Group("lab-bridge", Kind.NETWORK, 1, network, f"a Linux bridge in namespace {SWITCH}"),
              Group("lab-servers", Kind.SERVER, spec.servers, {"nic": nic}, f"namespaces {PREFIX}s1 ... with sshd"),
              Group("lab-stores", Kind.DEVICE, spec.servers, {"bandwidth": store}, description))
    links = (Link("lab-clients", "lab-bridge"), Link("lab-bridge", "lab-servers"), Link("lab-servers", "lab-stores"))
    return Topology("iobound-lab", groups, links, f"{hosts_phrase(lab)} on {spec.rate:~P} links, sshfs to {spec.backing}")


def hosts_phrase(lab: Lab) -> str:
    """The lab's hosts in words, e.g. ``2 clients and 1 server``."""
    counts = ((len(lab.clients), "client"), (len(lab.servers), "server"))
    return " and ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in counts)
