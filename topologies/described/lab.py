"""The topology of a lab ``iobound lab up`` built: its host groups, shaped links, bridge, file service and stores."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from statistics import mean


from probes.core.errors import InputError
from probes.core.units import Q_, Metric, format_quantity
from probes.lab import PREFIX, SWITCH, Backing, Lab, Role, links_phrase
from probes.lab.probing import nic_measurements
from probes.lab.service import service_measurements
from topologies.save import save_document, topology_document
from topologies.topology import Capacity, Group, Kind, Link, Source, Topology

__all__ = ["lab_topology", "save_probed", "hosts_phrase", "PAYLOAD"]

# What TCP carries of what tbf lets through: of each 1514-byte frame (Ethernet 14, IPv4 20, TCP 20 bytes of headers)
# 1448 bytes of payload with TCP's timestamps (12 bytes, on by default in Linux) to 1460 without. tbf counts every
# segment's headers, also of the large segments veth passes (GSO), so iperf3 sees 0.956 of the rate.
PAYLOAD = (1448 / 1514, 1460 / 1514)
# Each server's store, and why its bandwidth is taken as unlimited until fio on it says otherwise.
_STORES = {Backing.TMPFS: ("tmpfs, in memory",
                           "memory: GiB/s, far above the links; fio on the store measures it (iobound probe --tmpfs STORE)"),
           Backing.FILE: ("ext4 image on a loop device",
                          "in this machine's page cache while it fits: far above the links; fio on the store measures it")}
_KINDS = {Role.CLIENT: Kind.CLIENT, Role.SERVER: Kind.SERVER}
# Why a server on tmpfs has no memory to cache in: sshd's sftp-server reads the store's pages where they are.
_NO_CACHE = "the store is tmpfs: its pages are the device, with no page cache in front of them"
# The file service's figure stands for the servers' bandwidth where it fell short of the links by more than this.
_SHORT = 0.95
# Seconds of a round trip between two hosts neither of which netem delays: the veths' own, a few microseconds.
_UNDELAYED = 1e-6


def lab_topology(lab: Lab) -> Topology:
    """The lab as a topology: its host groups with what TCP carries over their shaped links as NIC, the bridge, the
    file service's bandwidth on the servers (and no memory to cache in where their stores are tmpfs), and the stores
    (unlimited).

    Raises
    ------
    InputError
        If the lab has no servers: without storage there is nothing for a topology to model.
    """
    if not lab.servers:
        raise InputError(str(lab.state_dir), "", "a lab without servers has no storage, so no topology: probe its "
                                                 "clients with iobound lab probe, or give it servers")
    network = {}
    trips = [_delay(lab, c) + _delay(lab, s) for c in lab.clients for s in lab.servers]
    if max(trips) > 0:  # a host's link delays what it sends: a round trip crosses a client's link and a server's
        netem = Source("assumption", "tc netem delays on the client's and the server's link")
        network["rtt"] = _span(Q_(max(min(trips), _UNDELAYED), "s"), Q_(max(trips), "s"), Metric.LATENCY, netem)
    groups = [Group("lab-bridge", Kind.NETWORK, 1, network, f"a Linux bridge in namespace {SWITCH}")]
    links = []
    for group in lab.groups:
        first = group.hosts[0]
        capacities = {"nic": _payload(first.rate)}
        if group.role is Role.SERVER and lab.service is not None:
            capacities["bandwidth"] = _service(lab)
        if group.role is Role.SERVER and first.backing is Backing.TMPFS:
            capacities["memory"] = Capacity(Q_(0, "B"), Metric.SIZE, Source("datasheet", _NO_CACHE))
        names = ", ".join(f"{PREFIX}{h.name}" for h in group.hosts)
        groups.append(Group(group.name, _KINDS[group.role], len(group.hosts), capacities,
                            f"namespaces {names}" + (" with sshd" if group.role is Role.SERVER else "")))
        links.append(Link(group.name, "lab-bridge") if group.role is Role.CLIENT else Link("lab-bridge", group.name))
        if group.role is Role.SERVER:
            description, why = _STORES[first.backing]
            groups.append(Group(group.store, Kind.DEVICE, len(group.hosts),
                                {"bandwidth": Capacity(None, Metric.BANDWIDTH, Source("assumption", why))},
                                f"{description}, {first.size:~P} each"))
            links.append(Link(group.name, group.store))
    ordered = sorted(groups, key=lambda g: g.kind.rank)  # clients, bridge, servers, stores: the file's order
    backings = " and ".join(dict.fromkeys(str(s.backing) for s in lab.servers))
    return Topology("iobound-lab", tuple(ordered), tuple(links),
                    f"{hosts_phrase(lab)} on {links_phrase(lab)} links, sshfs to {backings}")


def save_probed(lab: Lab, path: Path, probe_set: str, measured: Mapping[str, float], *,
                header: str) -> tuple[Path, tuple[str, ...]]:
    """Write the lab's topology to the new file ``path`` with each NIC that ``lab probe`` measured (``measured``: the
    mean of each complete measurement by name, in B/s), and the servers' bandwidth where the file service fell short
    of the links, linked to its measurement in the probe set ``probe_set`` (named relative to ``path``); the others
    stay as :func:`lab_topology` states them. ``header`` becomes comment lines at the top. Returns the path and notes
    on the file-service figures left out.

    Raises
    ------
    InputError
        If ``path`` exists (nothing is overwritten) or cannot be written.
    """
    doc = topology_document(lab_topology(lab))
    for group in lab.groups:
        table = doc[_KINDS[group.role].value][group.name]
        links = {key: {"probe": probe_set, "measurement": name}
                 for key, name in nic_measurements(group).items() if name in measured}
        table |= links
        if len(links) == 2:  # both directions probed: the spec's figure no longer stands for either
            del table["nic"]
    served, notes = _served(lab, measured)
    for group in (g for g in lab.groups if g.role is Role.SERVER and served):
        table = doc[Kind.SERVER.value][group.name]
        table |= {key: {"probe": probe_set, "measurement": name} for key, name in served.items()}
        if len(served) == 2:
            table.pop("bandwidth", None)
    return save_document(doc, path, header=header), notes


def _served(lab: Lab, measured: Mapping[str, float]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The servers' capacities the file service's figures give (key -> measurement): those that fell short of what
    the links carried, the clients' together or the servers' together (by :data:`_SHORT`). One the links bound says
    only that the service kept up with them; as a limit it would bind a faster link at the old link's rate, so up's
    figure stays, and a note says why."""
    chosen, notes = {}, []
    for key, name in service_measurements(lab).items():
        if name not in measured:
            continue
        nic = key.replace("bandwidth", "nic")
        sides = [sum(measured[nic_measurements(g)[nic]] * len(g.hosts) for g in lab.groups if g.role is role)
                 for role in Role if all(nic_measurements(g)[nic] in measured for g in lab.groups if g.role is role)]
        served = measured[name] * len(lab.servers)
        if len(sides) < len(Role) or served < _SHORT * min(sides):  # a side unprobed: the links' share is unknown
            chosen[key] = name
        else:
            carried = format_quantity(Q_(min(sides), "B/s"), Metric.BANDWIDTH)
            notes.append(f"{name}: the file service kept up with the links ({format_quantity(Q_(served, 'B/s'), Metric.BANDWIDTH)}"
                         f" of the {carried} they carried), so the servers' {key} stays up's figure")
    return chosen, tuple(notes)


def hosts_phrase(lab: Lab) -> str:
    """The lab's hosts in words, e.g. ``2 clients and 1 server``."""
    counts = ((len(lab.clients), "client"), (len(lab.servers), "server"))
    return " and ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in counts)


def _payload(rate) -> Capacity:
    """What TCP carries over a link tbf shapes to ``rate``: a range over its header overhead (:data:`PAYLOAD`)."""
    shown = format_quantity(rate, Metric.BANDWIDTH, rate.units)
    source = Source("assumption", f"TCP's payload over a tc tbf rate of {shown}: 1448 to 1460 of every 1514 bytes "
                                  "(iobound lab probe measures it)")
    return _span(rate * PAYLOAD[0], rate * PAYLOAD[1], Metric.BANDWIDTH, source)


def _service(lab: Lab) -> Capacity:
    """Each server's share of what the file service served when ``up`` measured it: the servers share this machine's
    CPUs, which encrypt and serve for all of them, so each gets its part of one server's figure."""
    service, servers = lab.service, len(lab.servers)
    low, high = min(service.samples), max(service.samples)
    cipher = lab.cipher or "ssh's default cipher"
    shown = format_quantity(Q_(mean(service.samples), "B/s"), Metric.BANDWIDTH)
    share = f"; the {servers} servers share this machine's CPUs, so each gets 1/{servers} of it" if servers > 1 else ""
    note = (f"sshfs reads by {service.streams} client{'s' if service.streams > 1 else ''} at once from "
            f"{service.server}'s sshd over unshaped veths ({cipher}), {len(service.samples)} repetitions of "
            f"{service.seconds:g} s: mean {shown}, its least to greatest value{share}")
    return _span(Q_(low / servers, "B/s"), Q_(high / servers, "B/s"), Metric.BANDWIDTH, Source("measured", note))


def _span(low, high, metric: Metric, source: Source) -> Capacity:
    """A capacity from ``low`` to ``high``; one value when they are equal."""
    return Capacity(low, metric, source) if low == high else Capacity.ranged(low, high, metric, source)


def _delay(lab: Lab, host) -> float:
    """Seconds netem adds to what ``host`` sends (0 without a delay, or without netem)."""
    delay = lab.delay(host)
    return 0.0 if delay is None else delay.m_as("s")
