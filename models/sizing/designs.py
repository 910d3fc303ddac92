"""The designs a question allows: one choice of part types each (a network, a server chassis with a number of ports,
a device that fits it, a metadata server), and a design's plan for the question: its topology and its prices."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from functools import cached_property

from probes.core.errors import InputError
from probes.core.units import canonical
from topologies.catalogues.catalogue import NAMES, Part, assemble, least_rate
from topologies.topology import Kind, Topology

from models.sizing.question import Question

__all__ = ["Design", "Plan", "designs"]


@dataclass(frozen=True)
class Design:
    """One choice of part types; its counts are what the integer programme decides."""

    network: Part
    ports: int
    server: Part
    device: Part
    metadata: Part | None = None  # one type of metadata server, like one type of storage server
    switch: Part | None = None  # the switch the network's ports plug into, when the catalogue names one
    metadata_drive: Part | None = None  # the drive a metadata server holds its metadata on
    # the gateway at the least price per bandwidth, when the clients' fabric differs: it prices a port in the search;
    # the bill's gateways are the cheapest set for the configuration (Fabric.through_gateways)
    gateway: Part | None = None

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups whose counts vary, in the order of the programme's variables."""
        return (NAMES["servers"], NAMES["devices"]) + ((f"{NAMES['metadata']}1",) if self.metadata else ())

    @property
    def family(self) -> str:
        """The design's family as buyers compare them: all-flash, hybrid (HDD data, flash metadata) or HDD, and its
        network's fabric."""
        medium = "all-flash" if self.device.medium == "flash" else \
            "hybrid" if self.metadata_drive is not None and self.metadata_drive.medium == "flash" else "HDD"
        return f"{medium}, {self.network.family or 'network'}"

    @property
    def data_family(self) -> tuple[str, str]:
        """The family the data parts decide: their medium and the network's fabric (metadata parts make it hybrid)."""
        return self.device.medium, self.network.family

    @property
    def port_price(self) -> float:
        """A network port: the NIC port and cable, a share of a switch (its price over its ports) and, across fabrics,
        of a gateway (its price over the ports' worth of bandwidth it forwards)."""
        share = self.switch.price / self.switch.ports if self.switch and self.switch.price else 0.0
        if self.gateway is not None:
            share += self.gateway.price * least_rate(self.network) / least_rate(self.gateway)
        return (self.network.price or 0.0) + share

    @property
    def metadata_price(self) -> float:
        """One metadata server as bought: the server, its port and its metadata drives."""
        drives = self.metadata.metadata_drives * self.metadata_drive.price if self.metadata_drive else 0.0
        return self.metadata.price + self.port_price + drives

    def __str__(self) -> str:
        return f"{self.server.name} ({self.ports} x {self.network.name}), {self.device.name}"


@dataclass(frozen=True)
class Plan:
    """A design for a question: what its counts build and what they cost, as the programme and the bill need them."""

    question: Question
    design: Design

    def topology(self, counts: tuple[int, ...]) -> Topology:
        """The system of ``counts`` of the design's parts, with the clients and redundancy of the question."""
        q, d = self.question, self.design
        servers, devices, *mds = counts
        return assemble(q.clients, d.network, d.ports, d.server, servers, d.device, devices,
                        tuple(zip((d.metadata,), mds)), q.write_cost, q.currency)

    @property
    def unit(self) -> Topology:
        """The system with one of every part: each layer's limit per member, as the programme reads it."""
        return self.topology((1,) * len(self.design.groups))

    def with_metadata(self, metadata: Part) -> Plan:
        """The plan with ``metadata`` as its metadata server, and the drive that server holds its metadata on."""
        catalogue = self.question.catalogue
        drive = catalogue.part(Kind.DEVICE, metadata.metadata_drive) if catalogue and metadata.metadata_drive else None
        return replace(self, design=replace(self.design, metadata=metadata, metadata_drive=drive))

    @property
    def server_price(self) -> float:
        """One storage server as bought: the chassis, its ports (and its share of a switch), its spare drives, or every
        bay's drive with whole enclosures."""
        q, d = self.question, self.design
        drives = d.server.slots if q.whole_enclosures else q.spares
        return d.server.price + d.ports * d.port_price + drives * d.device.price

    @cached_property
    def least_price(self) -> float:
        """A price no configuration of the design can go below: the servers the failure domains and the capacity need
        (and their drives)."""
        q, d = self.question, self.design
        group, bays = q.group, d.server.slots - q.spares
        drives = group
        if q.usable is not None:
            per_device = canonical(d.device.capacity("size").value) * q.efficiency
            drives = max(drives, math.ceil(canonical(q.usable) / per_device / group - 1e-9) * group)
        step = q.step(d.server)
        servers = max(q.domains, math.ceil(drives / bays))
        servers = math.ceil(servers / step) * step
        return servers * self.server_price + (0 if q.whole_enclosures else drives * d.device.price)

    def __str__(self) -> str:
        return str(self.design)


def designs(question: Question) -> list[Design]:
    """Every combination of the allowed data parts that fits together (devices in bays of their slot, networks of
    the clients' fabric); the metadata servers are chosen for each by :func:`models.sizing.size`.

    Raises
    ------
    InputError
        If the choices leave nothing to combine, e.g. only HDDs with only NVMe chassis.
    """
    for kind, parts in (("network", question.networks), ("server", question.servers), ("device", question.devices)):
        if not parts:
            raise InputError("choices", kind, f"no {kind} type is allowed; allow at least one")
    pairs = [(s, d) for s in question.servers for d in question.devices if d.fits(s)]
    if not pairs:
        raise InputError("choices", "devices", "no allowed device fits an allowed server: the servers take "
                         f"{', '.join(sorted({s.slot for s in question.servers}))} devices, the devices are "
                         f"{', '.join(sorted({d.slot for d in question.devices}))}")
    pairs = [(s, d) for s, d in pairs if s.slots > question.spares]
    if not pairs:
        raise InputError("--spares", "", f"{question.spares} hot spares per enclosure leave no bay for data in any "
                         "allowed server")
    networks = question.reachable()
    if question.needs_metadata and not any(p.capacity("metadata", op) for p in question.metadata
                                           for op in (None, *[t.workload.operation.value for t in question.targets])):
        raise InputError("choices", "metadata", "a metadata target needs metadata servers, but no allowed server "
                         "states a metadata rate")
    metadata = question.metadata if question.needs_metadata else ()
    unpriced = sorted({p.name for p in (*networks, *question.servers, *question.devices, *metadata) if p.price is None})
    if unpriced:
        catalogue = question.catalogue
        why = f" in {catalogue.currency} (the catalogue's {catalogue.unconverted} prices are not converted)" \
            if catalogue and catalogue.unconverted else ""
        raise InputError("choices", "prices", f"no price{why} for {', '.join(unpriced)}; give one with --prices, "
                         "or leave them out of the choices")
    catalogue = question.catalogue
    return [Design(n, ports, s, d, switch=catalogue.switch(n.switch) if catalogue and n.switch else None,
                   gateway=question.gateway(n))
            for n, (s, d) in itertools.product(networks, pairs) for ports in range(1, s.nic_slots + 1)]
