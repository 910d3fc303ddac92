"""The storage network of a configuration: the switches that join its servers, and the gateways to the clients' fabric
where it is another; what the way to the clients carries."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from probes.core.units import Metric, Q_, canonical
from topologies.catalogues.catalogue import Part, least_rate

from models.sizing.designs import Plan

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Fabric"]


@dataclass(frozen=True)
class Fabric:
    """The switches that join clients, servers and metadata servers: one switch, or leaves and spines, and the
    gateways to the clients' fabric where it is another.

    ``limit`` is what the uplinks to the clients' fabric carry (the leaves' uplinks, or the
    gateways' forwarding at its least), None when neither a switch nor a gateway is known.
    """

    switch: Part | None
    ports: int  # switch ports the endpoints take (a breakout cable puts up to four slower links on one)
    leaves: int
    spines: int
    oversubscription: float
    limit: Quantity | None
    limited_leaves: int = 0
    gateway: Part | None = None
    gateways: int = 0

    @property
    def switches(self) -> int:
        """Every switch bought: leaves and spines."""
        return self.leaves + self.spines

    @property
    def price(self) -> float | None:
        """What the switches and gateways cost; None when neither part (or its price) is known."""
        parts = [(p, n) for p, n in ((self.switch, self.switches), (self.gateway, self.gateways)) if p is not None]
        if not parts or any(p.price is None for p, _ in parts):
            return None
        return math.fsum(p.price * n for p, n in parts)

    @property
    def limited_by(self) -> str:
        """What sets :attr:`limit`, in words."""
        if self.gateway is not None and not self.limited_leaves:
            return f"{self.gateways} x {self.gateway.name} between {' and '.join(self.gateway.joins)}, at their least"
        return f"uplinks of {self.limited_leaves} storage switches to the clients' fabric at {self.oversubscription:g}:1"

    def __str__(self) -> str:
        through = "" if self.gateway is None else \
            f"; {self.gateways} x {self.gateway.name} join the servers to the clients' fabric"
        if self.switch is None:
            return "no switch part stated" + through
        if not self.spines:
            return (f"1 x {self.switch.name}: {self.ports} server ports and {self.switch_uplinks} uplinks to the clients' "
                    f"fabric ({self.oversubscription:g}:1) of its {self.switch.ports} ports" + through)
        return (f"{self.leaves} leaves + {self.spines} spines of {self.switch.name} ({self.ports} server ports, "
                f"{self.oversubscription:g}:1 oversubscribed, the spines joined to the clients' fabric)" + through)

    @property
    def switch_uplinks(self) -> int:
        """Ports of a single switch that join the clients' fabric: the server ports over the oversubscription."""
        return math.ceil(self.ports / self.oversubscription)

    @classmethod
    def of(cls, plan: Plan, servers: int, metadata: int) -> Fabric:
        """The storage network of a plan's counts: every server and metadata server port on a switch of the network's part
        (breakout for slower links), joined to the clients' fabric (which exists, as their NICs do) by uplinks as fast
        as those ports over the oversubscription; one switch if all fit, else leaves and spines (half of each spine's
        ports to the leaves, half to the clients' fabric)."""
        question, design = plan.question, plan.design
        switch, o = design.switch, question.oversubscription
        if switch is None:
            fabric = cls(None, 0, 0, 0, o, None)
        else:
            rate = canonical(switch.capacity("bandwidth").value)
            each = canonical(design.network.capacity("bandwidth").value)
            per = min(4, int(rate // each)) if each <= rate else 1 / math.ceil(each / rate)  # links per switch port
            ports = math.ceil((servers * design.ports + metadata) / per)
            if ports + math.ceil(ports / o) <= switch.ports:
                fabric = cls(switch, ports, 1, 0, o, Q_(math.ceil(ports / o) * rate, "B/s"), 1)
            else:
                down = max(1, math.floor(switch.ports * o / (o + 1)))
                up = switch.ports - down
                leaves = math.ceil(ports / down)
                fabric = cls(switch, ports, leaves, math.ceil(2 * leaves * up / switch.ports), o,
                             Q_(leaves * up * rate, "B/s"), leaves)
        return fabric if design.gateway is None else fabric.through_gateways(plan, servers, metadata)

    def through_gateways(self, plan: Plan, servers: int, metadata: int) -> Fabric:
        """The fabric joined to the clients' fabric by the cheapest set of gateways that forwards the largest
        bandwidth target with its margin, or, without one, what the uplinks carry (without a switch part, the servers'
        ports over the oversubscription): two at least with --ha, so that one may fail. The full model then checks
        every target."""
        question, design = plan.question, plan.design
        needs = [question.need(t) for t in question.targets if t.metric is Metric.BANDWIDTH]
        uplinks = canonical(self.limit) if self.limit is not None else \
            (servers * design.ports + metadata) * least_rate(design.network) / question.oversubscription
        carry = min(max(needs), uplinks) if needs else uplinks
        least = 2 if question.ha else 1
        joining = [g for g in question.catalogue.gateways
                   if set(g.joins) == {design.network.family, question.client_family} and g.price is not None]
        options = [(g, max(least, math.ceil(carry / least_rate(g) - 1e-9))) for g in joining]
        gateway, count = min(options, key=lambda o: (o[0].price * o[1], o[0].name))
        forwards = count * least_rate(gateway)
        if self.limit is not None and canonical(self.limit) <= forwards:
            return replace(self, gateway=gateway, gateways=count)
        return replace(self, limit=Q_(forwards, "B/s"), gateway=gateway, gateways=count, limited_leaves=0)
