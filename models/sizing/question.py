"""A sizing question: the targets a buyer needs, the clients that exist, the parts allowed and what a design must hold
besides (margin, failure domains, spares, the capacity it may fill)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Metric, Q_, canonical, display_unit, format_quantity
from probes.core.workload import Workload
from topologies.catalogues.catalogue import Catalogue, Part
from topologies.topology import Group
from topologies.write_cost import WriteCost

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Target", "Question"]


@dataclass(frozen=True)
class Target:
    """What the buyer needs of one operation: a bandwidth, or an operation rate, measured by ``workload``."""

    workload: Workload
    value: Quantity
    label: str = ""  # what the buyer asked, where the bandwidth stands for something else ("512 h100 x unet3d ...")

    @property
    def metric(self) -> Metric:
        """The ceiling's metric: op/s for metadata, else bandwidth (an IOPS target counts its transfers' bytes)."""
        return Metric.OPERATION_RATE if self.workload.operation.is_metadata else Metric.BANDWIDTH

    @property
    def required(self) -> Quantity:
        """The target in the ceiling's metric."""
        if self.metric is Metric.BANDWIDTH and Metric.of(self.value) is Metric.OPERATION_RATE:
            return Q_(canonical(self.value) * canonical(self.workload.transfer_size), Metric.BANDWIDTH.unit)
        return self.value

    def shown(self, value: Quantity, high: Quantity | None = None) -> str:
        """A ceiling (in the ceiling's metric) in the target's own terms: op/s for an IOPS target; with ``high``, the
        span from ``value`` to it, both in the unit that shows ``high`` (``8.8..11.0 GiB/s``)."""
        def own(q: Quantity) -> Quantity:
            return Q_(canonical(q) / canonical(self.workload.transfer_size), "op/s") \
                if Metric.of(self.value) is not Metric.of(q) else q
        if high is None:
            return format_quantity(own(value))
        unit = display_unit(own(high))
        return f"{format_quantity(own(value), unit=unit).split(' ')[0]}..{format_quantity(own(high), unit=unit)}"

    def __str__(self) -> str:
        shown = f"{self.workload.operation.value} {format_quantity(self.value, unit=self.value.units)}"
        return f"{self.label}: {shown}" if self.label else shown


@dataclass(frozen=True)
class Question:
    """A sizing question: targets, usable capacity and its redundancy, the clients that exist, the parts allowed, and
    what a design must hold besides: headroom, failure domains, spares, the capacity it may fill.

    ``margin`` is the headroom every target needs (0.2: 20 % above it). ``ha`` builds servers in
    pairs (a dual-controller part is a pair by itself). ``spares`` hot spares sit in each
    enclosure; ``whole_enclosures`` fills every bay (data drives in whole parity groups, the rest
    spares). Usable capacity is raw × parity efficiency × (1 − ``fs_overhead``) × ``fill``.
    ``client_family`` is the clients' fabric: a network of another family is reached through the
    catalogue's gateways, or refused when none joins the two. ``oversubscription`` is the
    leaves' downlinks over uplinks (1: non-blocking).
    """

    targets: tuple[Target, ...]
    clients: Group
    networks: tuple[Part, ...]
    servers: tuple[Part, ...]
    devices: tuple[Part, ...]
    metadata: tuple[Part, ...] = ()
    usable: Quantity | None = None
    write_cost: WriteCost = WriteCost()
    currency: str = ""
    margin: float = 0.0
    ha: bool = False
    spares: int = 0
    whole_enclosures: bool = False
    fs_overhead: float = 0.0
    fill: float = 1.0
    client_family: str = ""
    oversubscription: float = 1.0
    rebuild_rate: Quantity | None = None
    growth: float = 0.0
    years: int = 0
    catalogue: Catalogue | None = field(default=None, repr=False, compare=False)

    @property
    def needs_metadata(self) -> bool:
        return any(t.workload.operation.is_metadata for t in self.targets)

    def need(self, target: Target) -> float:
        """What a target's ceiling must reach, margin included (canonical units)."""
        return canonical(target.required) * (1 + self.margin)

    @property
    def group(self) -> int:
        """Drives per whole redundancy group: each replica's data and parity strips."""
        data, parity = self.write_cost.parity or (1, 0)
        return self.write_cost.replicas * (data + parity)

    @property
    def efficiency(self) -> float:
        """Usable bytes per raw byte: parity efficiency × (1 − file-system overhead) × fill target."""
        return (1 - self.fs_overhead) * self.fill / self.write_cost.space

    @property
    def domains(self) -> int:
        """The fewest failure domains (enclosures) the redundancy needs to survive one: a replica on each, and a
        parity group over enough that one holds at most its parity strips."""
        data, parity = self.write_cost.parity or (1, 0)
        return self.write_cost.replicas * (math.ceil((data + parity) / parity) if parity else 1)

    @property
    def redundant(self) -> bool:
        return self.write_cost.replicas > 1 or bool(self.write_cost.parity and self.write_cost.parity[1])

    def step(self, server: Part) -> int:
        """Servers come in steps of this: 2 with --ha, unless the part has two controllers itself."""
        return 2 if self.ha and server.controllers < 2 else 1

    def at_least(self) -> Question:
        """The question with every part's figure known only as a range at its least favourable end: a design
        that meets the targets then meets them whatever the parts turn out to be."""
        def least(parts: tuple[Part, ...]) -> tuple[Part, ...]:
            return tuple(replace(p, capacities={k: c.at(c.ends[0]) if c.range else c for k, c in p.capacities.items()})
                         for p in parts)
        return replace(self, networks=least(self.networks), servers=least(self.servers), devices=least(self.devices),
                       metadata=least(self.metadata))

    def gateway(self, network: Part) -> Part | None:
        """The gateway from ``network`` to the clients' fabric at the least price per bandwidth; None on the same
        fabric."""
        if self.catalogue is None or not self.client_family or not network.family \
                or network.family == self.client_family:
            return None
        return self.catalogue.gateway(self.client_family, network.family)

    def reachable(self) -> tuple[Part, ...]:
        """The allowed networks the clients can reach: of their fabric, or of one a catalogue gateway joins to it; an
        InputError if none."""
        networks = tuple(n for n in self.networks if not self.client_family or not n.family
                         or n.family == self.client_family or self.gateway(n) is not None)
        if not networks:
            raise InputError("--client-fabric", "", f"the clients are on {self.client_family} and every allowed network "
                             f"is of another fabric ({', '.join(sorted({n.family for n in self.networks}))}); the "
                             "catalogue has no gateway between them: allow a network of the clients' fabric")
        return networks
