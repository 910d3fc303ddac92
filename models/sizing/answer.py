"""The answer to a sizing question: each configuration (a design with its counts) predicted by the full model, with
what it survives, its fabric and its bill; the cheapest of each family; what stops a target none meets; and the
versioned document (``iobound/sizing``) of it all."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from probes.core.units import Metric, Q_, canonical, quantity_json
from models.ceiling import TIE, Ceiling
from models.predict import Model
from topologies.catalogues.catalogue import NAMES, Part
from topologies.topology import Capacity, Component, Group, Kind, Source, Topology

from models.sizing.bill import Bill
from models.sizing.designs import Design, Plan
from models.sizing.fabric import Fabric
from models.sizing.forms import Bound, closed_forms
from models.sizing.question import Question, Target

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Configuration", "Shortfall", "Sizing", "SIZING_VERSION", "DAY"]

DAY = Q_(24, "hour")  # a rebuild longer than this is warned of: a second failure meanwhile is likely enough to matter

# sizing format history:
#   1.0  first version
#   1.1  capacities gain range, groups nics, operations, transfers and on, ceilings low and assumed, workloads read_share
#        (topology 1.1, prediction 1.3)
#   1.2  policy (margin, ha, spares, fs_overhead, fill, oversubscription, client_family), targets needed (with the
#        margin), refused networks; configurations gain total, spares, survives, rebuild, capacity, fabric, bill and
#        totals (rack units, power, cooling); alternatives (the cheapest of each family), prices_not_from_file
#   1.3  fabric gains gateway and gateways (a network of another fabric than the clients' is reached through
#        gateways), and is given when either a switch or a gateway is known; configurations gain failover (each
#        target's ceiling, least and most, while one server of a pair or a controller is down), total_range (the hardware at
#        the low and high ends of its parts' price ranges) and bill lines unit_price_range
#   1.4  a configuration's topology groups may carry request_size (topology 1.2)
SIZING_VERSION = "1.4"


@dataclass(frozen=True)
class Configuration:
    """A design with its counts and price, predicted by the full model: one ceiling per target, in order, the
    spare drives, the network's switches and the bill of materials."""

    plan: Plan
    counts: dict[str, int]
    price: float
    topology: Topology
    ceilings: tuple[Ceiling, ...]
    usable: Quantity
    spares: int = 0
    fabric: Fabric | None = None
    bill: Bill = Bill(())

    @classmethod
    def of(cls, plan: Plan, counts: tuple[int, ...]) -> Configuration:
        """The plan's design with ``counts``: its switches, spares and bill, predicted by the full model."""
        question, design = plan.question, plan.design
        servers, drives, *mds = counts
        fabric = Fabric.of(plan, servers, sum(mds))
        spares = servers * design.server.slots - drives if question.whole_enclosures else servers * question.spares
        bill = Bill.of(plan, counts, spares, fabric)
        per_server = design.server.price + design.ports * (design.network.price or 0.0) + \
            spares * design.device.price / servers
        prices = {NAMES["servers"]: per_server}
        if design.metadata is not None:
            prices[f"{NAMES['metadata']}1"] = design.metadata_price - design.port_price + (design.network.price or 0.0)
        topology = _priced(plan.topology(counts), fabric, prices)
        model = Model(topology)
        ceilings = tuple(model.ceiling(t.workload) for t in question.targets)
        usable = design.device.capacity("size").value * drives * question.efficiency
        return cls(plan, dict(zip(design.groups, counts)), bill.total, topology, ceilings, usable, spares, fabric, bill)

    @property
    def design(self) -> Design:
        return self.plan.design

    @property
    def question(self) -> Question:
        return self.plan.question

    def met(self, targets: tuple[Target, ...]) -> bool:
        """Every target reached with its margin."""
        return all(canonical(c.value) >= self.question.need(t) * (1 - TIE) for c, t in zip(self.ceilings, targets))

    @property
    def raw(self) -> Quantity:
        """The data drives' raw capacity (spares hold none)."""
        return self.design.device.capacity("size").value * self.counts[NAMES["devices"]]

    @property
    def survives(self) -> int:
        """Enclosures (each server with its drives) that may fail at once without losing data: each replica on its
        own share of them, a parity group spread evenly over a share, losing at most its parity strips."""
        cost = self.question.write_cost
        data, parity = cost.parity or (1, 0)
        share = self.counts[NAMES["servers"]] // cost.replicas
        per_domain = math.ceil((data + parity) / share) if share else data + parity + 1
        return cost.replicas * (parity // per_domain + 1) - 1

    @property
    def rebuild(self) -> Quantity:
        """The time to rebuild one drive at the stated rate, or at the drive's sustained write (its least)."""
        rate = self.question.rebuild_rate or self.design.device.capacity("bandwidth", "write").ends[0]
        return (self.design.device.capacity("size").value / rate).to("hour")

    @property
    def total(self) -> float:
        """The hardware's price: the sum of the bill's hardware lines (the topology's groups add up to it too)."""
        return self.bill.total

    @property
    def total_range(self) -> tuple[float, float]:
        """The hardware's price with every part at the low, then the high end of its price range."""
        return self.bill.total_range

    def expansion(self) -> tuple[int, int, Quantity, float]:
        """The next step of growth: servers (a pair with --ha, enough for one more parity group) with their data
        drives, the usable capacity they add and their price (spares and NIC ports included; the switch is taken
        to have ports free)."""
        q, design = self.question, self.design
        step = q.step(design.server)
        servers = step
        while servers * (design.server.slots - q.spares) < q.group:
            servers += step
        drives = servers * (design.server.slots - q.spares) // q.group * q.group
        bought = servers * design.server.slots if q.whole_enclosures else drives + servers * q.spares
        price = servers * (design.server.price + design.ports * (design.network.price or 0.0)) + bought * design.device.price
        return servers, drives, design.device.capacity("size").value * drives * q.efficiency, price

    @cached_property
    def failover(self) -> tuple[tuple[Ceiling, Ceiling], ...]:
        """Each target's ceiling while one server (of an HA pair) or one controller (of a dual-controller part) of each
        such group is down and its partner serves both shares: (least, most). At least, the partner doing double duty
        sets the pace of I/O spread evenly, so the group counts at half; at most, the load rebalances over what is
        left. Groups neither paired nor dual-controller are as they are (their failure takes a share offline
        instead). Empty when no group is either."""
        lost = {g.name: 1.0 if self.question.step(part) == 2 else 0.5 if part.controllers == 2 else 0.0
                for g in self.topology.groups if g.kind is Kind.SERVER and (part := self._part(g.name)) is not None}
        if not any(lost.values()):
            return ()

        def degraded(most: bool) -> Topology:
            def factor(group: Group) -> float:
                return (group.count - lost[group.name]) / group.count if most else 0.5
            return replace(self.topology, groups=tuple(_scaled(g, factor(g)) if lost.get(g.name) else g
                                                       for g in self.topology.groups))
        least, most = Model(degraded(False)), Model(degraded(True))
        return tuple((least.ceiling(t.workload), most.ceiling(t.workload)) for t in self.question.targets)

    def _part(self, group: str) -> Part:
        """The catalogue part a server group of this design is built of."""
        return self.design.server if group == NAMES["servers"] else self.design.metadata

    @cached_property
    def bounds(self) -> tuple[Bound, ...]:
        """The closed forms behind the counts (sympy; worked out when asked for)."""
        return closed_forms(self.plan, tuple(self.counts[g] for g in self.design.groups))


    def to_dict(self) -> dict:
        """The configuration as the sizing document gives it."""
        question, design, fabric = self.question, self.design, self.fabric
        return {
            "price": self.total,
            "total": self.total,
            "total_range": list(self.total_range),
            "family": design.family,
            "counts": self.counts,
            "spares": self.spares,
            "parts": {"network": design.network.name, "ports_per_server": design.ports, "server": design.server.name,
                      "device": design.device.name,
                      "metadata_server": design.metadata.name if design.metadata else None},
            "usable": quantity_json(self.usable),
            "capacity": {"raw": quantity_json(self.raw), "parity_efficiency": 1 / question.write_cost.space,
                         "fs_overhead": question.fs_overhead, "fill": question.fill,
                         "usable": quantity_json(self.usable)},
            "survives": self.survives,
            "rebuild": {"value": self.rebuild.m_as("s"), "unit": "s"},
            "fabric": None if fabric is None or (fabric.switch is None and fabric.gateway is None) else {
                "switch": fabric.switch and fabric.switch.name, "ports": fabric.ports, "leaves": fabric.leaves,
                "spines": fabric.spines, "oversubscription": fabric.oversubscription,
                "limit": quantity_json(fabric.limit),
                "gateway": fabric.gateway and fabric.gateway.name, "gateways": fabric.gateways},
            "bill": [line.to_dict() for line in self.bill],
            "totals": self.bill.totals(),
            "ceilings": [ceiling.to_dict() for ceiling in self.ceilings],
            "failover": [{"least": least.to_dict(), "most": most.to_dict()} for least, most in self.failover],
            "bounds": [{"group": b.group, "needed": b.needed, "formula": b.formula, "numbers": b.numbers, "why": b.why}
                       for b in self.bounds],
            "topology": self.topology.to_dict(),
        }


def _priced(topology: Topology, fabric: Fabric, prices: dict[str, float]) -> Topology:
    """``topology`` with its network's ``fabric`` (a limit where leaves are oversubscribed, the switches' price) and
    every other group's full price per member (spares, ports, metadata drives)."""
    def priced(group: Group) -> Group:
        if group.name == NAMES["network"]:
            limit = {} if fabric.limit is None else {"bandwidth": Capacity(fabric.limit, Metric.BANDWIDTH, Source(
                "assumption", fabric.limited_by))}
            return replace(group, capacities=group.capacities | limit, price=fabric.price,
                           description=f"{group.description}; {fabric}".lstrip("; "))
        return replace(group, price=prices.get(group.name, group.price))
    return replace(topology, groups=tuple(priced(g) for g in topology.groups))


def _scaled(group: Group, factor: float) -> Group:
    """``group`` with every rate and bandwidth of a member times ``factor`` (latencies and sizes as they are)."""
    def times(c: Capacity) -> Capacity:
        if c.metric in (Metric.LATENCY, Metric.SIZE) or c.value is None:
            return c
        return replace(c, value=c.value * factor, range=c.range and (c.range[0] * factor, c.range[1] * factor))
    return replace(group, capacities={k: times(c) for k, c in group.capacities.items()})


@dataclass(frozen=True)
class Shortfall:
    """A layer no count can lift to a target (it does not grow with any part bought): the best any design had."""

    target: Target
    layer: str
    limit: Quantity
    components: tuple[Component, ...]


@dataclass(frozen=True)
class Sizing:
    """The answer: the cheapest configurations that meet every target, how many designs were tried and met them,
    the cheapest of each family, the networks refused for their fabric, and, when none does, what stops each target."""

    question: Question
    configurations: tuple[Configuration, ...]
    designs: int
    feasible: int
    shortfalls: tuple[Shortfall, ...]
    alternatives: tuple[Configuration, ...] = ()
    refused: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """The body of the ``sizing`` document (format :data:`SIZING_VERSION`)."""
        question, catalogue = self.question, self.question.catalogue
        return {
            "catalogue": list(catalogue.files) if catalogue else [],
            "currency": question.currency,
            "prices_not_from_file": list(catalogue.unpriced_by_file(catalogue.every)) if catalogue else [],
            "targets": [{"workload": t.workload.to_dict(), "target": quantity_json(t.value),
                         "required": quantity_json(t.required),
                         "needed": quantity_json(t.required * (1 + question.margin))} for t in question.targets],
            "usable": quantity_json(question.usable),
            "redundancy": str(question.write_cost),
            "policy": {"margin": question.margin, "ha": question.ha, "spares": question.spares,
                       "fs_overhead": question.fs_overhead, "fill": question.fill,
                       "oversubscription": question.oversubscription, "client_family": question.client_family},
            "refused": list(self.refused),
            "designs": self.designs,
            "solved": self.feasible,
            "configurations": [c.to_dict() for c in self.configurations],
            "alternatives": [{"family": c.design.family, "price": c.total, "counts": c.counts,
                              "server": c.design.server.name, "device": c.design.device.name,
                              "network": c.design.network.name} for c in self.alternatives],
            "shortfalls": [{"target": str(s.target), "layer": s.layer, "limit": quantity_json(s.limit),
                            "components": [str(c) for c in s.components]} for s in self.shortfalls],
        }
