"""A configuration's bill of materials: every part with its count, its price (and the street prices it may turn out
to be), its rack units and power; the totals those add up to, and the software and support lines of a prices file."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from probes.core.units import Q_, canonical
from topologies.catalogues.catalogue import Part

from models.sizing.designs import Plan
from models.sizing.fabric import Fabric

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["BillLine", "Bill", "BTU_PER_HOUR"]

BTU_PER_HOUR = "BTU/hour"  # cooling, as data centres quote it


@dataclass(frozen=True)
class BillLine:
    """One line of the bill of materials: a part, how many, its price each (and the street prices it may turn out to
    be), and its rack units and power each."""

    part: str
    what: str
    count: float
    unit_price: float | None
    source: str
    rack_units: float = 0.0
    power: tuple[Quantity, Quantity] | None = None
    hardware: bool = True  # False for software and support lines
    unit_range: tuple[float, float] | None = None

    @property
    def total(self) -> float | None:
        return None if self.unit_price is None else self.count * self.unit_price

    @property
    def total_range(self) -> tuple[float, float] | tuple[None, None]:
        """The line's total at the low and the high end of its price range (its price at both without one); none
        without a price."""
        if self.unit_price is None:
            return None, None
        low, high = self.unit_range or (self.unit_price,) * 2
        return self.count * low, self.count * high

    @property
    def total_rack_units(self) -> float:
        return self.rack_units * self.count

    @property
    def total_power(self) -> tuple[Quantity, Quantity] | None:
        """Typical and maximum power of all the line's parts; None where the part states none."""
        return None if self.power is None else (self.power[0] * self.count, self.power[1] * self.count)

    def to_dict(self) -> dict:
        power = self.total_power
        return {"part": self.part, "what": self.what, "count": self.count, "unit_price": self.unit_price,
                "unit_price_range": self.unit_range and list(self.unit_range), "total": self.total,
                "source": self.source, "hardware": self.hardware, "rack_units": self.total_rack_units,
                "power_typical": None if power is None else _watts(power[0]),
                "power_max": None if power is None else _watts(power[1])}


@dataclass(frozen=True)
class Bill:
    """The lines of a configuration's bill, and what they add up to: price, rack units, power and cooling."""

    lines: tuple[BillLine, ...]

    def __iter__(self) -> Iterator[BillLine]:
        return iter(self.lines)

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def total(self) -> float:
        """The hardware's price: the sum of the hardware lines (the topology's groups add up to it too)."""
        return math.fsum(line.total or 0.0 for line in self.lines if line.hardware)

    @property
    def total_range(self) -> tuple[float, float]:
        """The hardware's price with every part at the low, then the high end of its price range."""
        ends = [line.total_range for line in self.lines if line.hardware and line.unit_price is not None]
        return math.fsum(e[0] for e in ends), math.fsum(e[1] for e in ends)

    @property
    def software(self) -> float:
        """The software and support lines' price, apart from the hardware."""
        return math.fsum(line.total or 0.0 for line in self.lines if not line.hardware)

    @property
    def rack_units(self) -> float:
        return math.fsum(line.total_rack_units for line in self.lines)

    @property
    def power(self) -> tuple[Quantity, Quantity]:
        """Typical and maximum power of the whole bill (parts without a stated power count nothing)."""
        powers = [line.total_power for line in self.lines if line.power]
        return sum((p[0] for p in powers), Q_(0, "W")).to("kW"), sum((p[1] for p in powers), Q_(0, "W")).to("kW")

    @property
    def cooling(self) -> Quantity:
        """The heat to take away at maximum power."""
        return self.power[1].to(BTU_PER_HOUR)

    def totals(self) -> dict:
        """The totals as the sizing document gives them."""
        typical, most = self.power
        return {"rack_units": self.rack_units, "power_typical": _watts(typical), "power_max": _watts(most),
                "cooling": {"value": self.cooling.magnitude, "unit": BTU_PER_HOUR}}

    @classmethod
    def of(cls, plan: Plan, counts: tuple[int, ...], spares: int, fabric: Fabric) -> Bill:
        """The bill of ``counts`` of the plan's design: every part with its count, price, rack units and power;
        then the priced lines (software, support) of a prices file, per TB usable, per server or per client node."""
        question, design = plan.question, plan.design
        servers, drives, *mds = counts
        metadata = sum(mds)

        def line(part: Part, count: float, what: str) -> BillLine:
            return BillLine(part.name, what, count, part.price, part.price_source or "not stated", part.rack_units,
                            part.power, unit_range=part.price_range)

        def pairs(part: Part) -> str:
            return " (HA pairs)" if question.step(part) == 2 else ""

        lines = [line(design.server, servers, "storage server" + pairs(design.server)),
                 line(design.device, drives, "data drive"),
                 line(design.network, servers * design.ports + metadata, "network port (NIC and cable)")]
        if spares:
            lines.insert(2, line(design.device, spares, "hot spare drive"))
        if design.metadata is not None and metadata:
            lines.append(line(design.metadata, metadata, "metadata server" + pairs(design.metadata)))
            if design.metadata_drive is not None:
                lines.append(line(design.metadata_drive, metadata * design.metadata.metadata_drives, "metadata drive"))
        if fabric.switch is not None:
            lines.append(line(fabric.switch, fabric.switches, "switch" if not fabric.spines else
                              f"switch ({fabric.leaves} leaves, {fabric.spines} spines)"))
        if fabric.gateway is not None:
            lines.append(line(fabric.gateway, fabric.gateways, f"gateway ({design.network.family} servers to "
                              f"{question.client_family} clients)"))
        if question.catalogue is not None:
            usable = canonical(design.device.capacity("size").value) * drives * question.efficiency / 1e12
            per = {"TB": usable, "server": servers + metadata, "node": question.clients.count}
            lines += [BillLine(extra.name, extra.description or f"per {extra.per}", per[extra.per], extra.price,
                               extra.source, hardware=False) for extra in question.catalogue.lines]
        return cls(tuple(lines))


def _watts(power: Quantity) -> dict:
    return {"value": power.m_as("W"), "unit": "W"}
