"""Which single purchase raises a ceiling most for its price: one more member of a group, predicted again.

An upgrade here is one more member of a network, server or device group (count + 1): a
part one can buy at the group's ``price`` per member. Swapping a part for a faster one (a
faster NIC) is left out: a topology's groups do not say which catalogue part they are, so
``iobound whatif --set`` answers such questions one at a time. Client groups are left out too: more clients change
the workload, not the system. Every gain is the model's ceiling with the extra member
minus the ceiling without it, not a derivative, so a step that moves the binding layer counts
only as far as the next layer allows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from probes.core.units import canonical, quantity_json
from probes.core.workload import Workload
from models.ceiling import TIE, Ceiling
from models.predict import Model
from topologies.topology import Group, Kind, Topology

if TYPE_CHECKING:
    from pint import Quantity

    from models.accelerators import Demand, Feeding
    from topologies.edit import Change

__all__ = ["Upgrade", "Ranking", "upgrades", "WHATIF_VERSION", "whatif_body", "MoreAccelerators", "accelerator_upgrades",
           "WHATIF_ACCELERATORS_VERSION", "accelerators_body", "Restoration", "restorations", "MOST_ADDED"]

MOST_ADDED = 100_000  # members a restoration may add to one group: beyond it, another layer is taken to bind


@dataclass(frozen=True)
class Upgrade:
    """One more member of ``group`` for one workload: its price (None when not stated) and the new ceiling."""

    group: str
    kind: Kind
    price: float | None
    ceiling: Ceiling
    gain: Quantity

    @property
    def per_price(self) -> float | None:
        """Gain per unit of price in the metric's canonical unit (B/s or op/s); None when unpriced, inf when free."""
        if self.price is None:
            return None
        gain = self.gain.m_as(self.ceiling.metric.unit)
        return gain / self.price if self.price else math.inf if gain > 0 else 0.0

    def to_dict(self) -> dict:
        per_price = self.per_price
        return {"group": self.group, "kind": self.kind.singular, "price": self.price, "ceiling": quantity_json(self.ceiling.value),
                "binding": [str(c) for c in self.ceiling.binding], "gain": quantity_json(self.gain),
                "gain_per_price": per_price if per_price is not None and math.isfinite(per_price) else None}


@dataclass(frozen=True)
class Ranking:
    """A workload's ceiling as the topology is, and every single upgrade: best gain per price first, unpriced after by gain."""

    ceiling: Ceiling
    upgrades: tuple[Upgrade, ...]

    def to_dict(self) -> dict:
        return {"workload": self.ceiling.workload.to_dict(), "ceiling": quantity_json(self.ceiling.value),
                "upgrades": [u.to_dict() for u in self.upgrades]}


def upgrades(topology: Topology, workloads: list[Workload], clients: tuple[str, ...] | None = None) -> tuple[Ranking, ...]:
    """For each workload, the gain of one more member of each non-client group, ranked by gain per price.

    Parameters
    ----------
    topology : the system as it is.
    workloads : the workloads to rank upgrades for; one :class:`Ranking` each, in this order.
    clients : the client groups that run them (default: all), as for :meth:`Model.ceiling`.

    Returns
    -------
    tuple of Ranking
        Priced upgrades first, highest gain per price first; then the unpriced ones by
        gain; ties in file order.
    """
    model = Model(topology)
    before = model.ceilings((w, clients) for w in workloads)
    extra = [(group, Model(_one_more(topology, group))) for group in topology.groups if group.kind is not Kind.CLIENT]
    rankings = []
    for ceiling in before:
        options = []
        for group, bigger in extra:
            after = bigger.ceiling(ceiling.workload, clients)
            options.append(Upgrade(group.name, group.kind, group.price, after, _gain(ceiling, after)))
        rankings.append(Ranking(ceiling, tuple(sorted(options, key=_rank))))
    return tuple(rankings)


@dataclass(frozen=True)
class MoreAccelerators:
    """One more member of ``group``: how many accelerators the system feeds after it (``after``), at either end."""

    group: str
    kind: Kind
    price: float | None
    after: Feeding

    def gain(self, before: Feeding) -> tuple[int, int]:
        """Accelerators more than ``before`` feeds: (with every range at its least favourable end, at its most)."""
        return self.after.least - before.least, self.after.most - before.most

    def to_dict(self, before: Feeding) -> dict:
        least, most = self.gain(before)
        return {"group": self.group, "kind": self.kind.singular, "price": self.price, "most": self.after.most,
                "least": self.after.least, "gain": most, "gain_least": least, "binds": self.after.binds()}


def accelerator_upgrades(topology: Topology, demand: Demand, *, au: float | None = None, read_threads: int | None = None,
                         clients: tuple[str, ...] | None = None) -> tuple[Feeding, tuple[MoreAccelerators, ...]]:
    """How many accelerators the topology feeds, and how many one more member of each non-client group adds.

    The answer to "how many more GPUs if I add a server?": :func:`models.accelerators.feed` on the
    topology as it is and with each group one member larger; most accelerators gained first.
    """
    from models.accelerators import feed

    before = feed(Model(topology), demand, au=au, read_threads=read_threads, clients=clients)
    options = [MoreAccelerators(group.name, group.kind, group.price,
                                feed(Model(_one_more(topology, group)), demand, au=au, read_threads=read_threads,
                                     clients=clients))
               for group in topology.groups if group.kind is not Kind.CLIENT]
    return before, tuple(sorted(options, key=lambda o: (-o.gain(before)[1], -o.gain(before)[0])))


def _one_more(topology: Topology, group: Group, added: int = 1) -> Topology:
    return replace(topology, groups=tuple(replace(g, count=g.count + added) if g is group else g for g in topology.groups))


@dataclass(frozen=True)
class Restoration:
    """How many more members of ``group`` bring a workload's ceiling back to a target (None: no count does, another
    layer binds), the ceiling then, and the system's price and raw capacity before and after."""

    group: str
    kind: Kind
    added: int | None
    ceiling: Ceiling | None
    price: tuple[float | None, float | None]
    capacity: tuple[Quantity | None, Quantity | None]


def restorations(topology: Topology, workload: Workload, target: Quantity,
                 clients: tuple[str, ...] | None = None) -> tuple[Ceiling, tuple[Restoration, ...]]:
    """For each non-client group, the fewest members added that lift ``workload``'s ceiling to ``target``: the answer
    to "how many drives (or servers) restore my target?". Counts are found by doubling, then bisection (a ceiling
    never falls as a group grows); the cheapest restoration first, those no count restores last."""
    before = Model(topology).ceiling(workload, clients)
    need = canonical(target) * (1 - TIE)

    def ceiling(group: Group, added: int) -> Ceiling:
        return Model(_one_more(topology, group, added)).ceiling(workload, clients)

    found = []
    for group in topology.groups:
        if group.kind is Kind.CLIENT:
            continue
        if canonical(before.value) >= need:
            added = 0
        elif canonical(ceiling(group, MOST_ADDED).value) < need:
            added = None
        else:
            low, high = 0, 1
            while canonical(ceiling(group, high).value) < need:
                low, high = high, high * 2
            while high - low > 1:
                middle = (low + high) // 2
                low, high = (middle, high) if canonical(ceiling(group, middle).value) < need else (low, middle)
            added = high
        after = None if added is None else _one_more(topology, group, added)
        found.append(Restoration(group.name, group.kind, added, None if after is None else ceiling(group, added),
                                 (_price(topology), None if after is None else _price(after)),
                                 (_raw(topology), None if after is None else _raw(after))))
    return before, tuple(sorted(found, key=lambda r: (r.added is None, r.price[1] if r.price[1] is not None else math.inf)))


def _price(topology: Topology) -> float | None:
    """The system's price: every priced group's members; None when no group states one."""
    priced = [g.price * g.count for g in topology.groups if g.price is not None]
    return math.fsum(priced) if priced else None


def _raw(topology: Topology) -> Quantity | None:
    """The devices' raw capacity, where they state their size."""
    sizes = [g.capacity("size").value * g.count for g in topology.of_kind(Kind.DEVICE)
             if g.capacity("size") is not None and g.capacity("size").value is not None]
    return sum(sizes[1:], sizes[0]) if sizes else None


def _gain(before: Ceiling, after: Ceiling) -> Quantity:
    """How much higher ``after`` is; zero when the two differ by float noise only (the model's TIE)."""
    gain = after.value - before.value
    return gain * 0 if math.isclose(canonical(after.value), canonical(before.value), rel_tol=TIE) else gain


def _rank(upgrade: Upgrade) -> tuple[int, float]:
    """Priced before unpriced; within each, the larger gain per price (or gain) first (``sorted`` keeps file order on ties)."""
    per_price = upgrade.per_price
    return (0, -per_price) if per_price is not None else (1, -upgrade.gain.m_as(upgrade.ceiling.metric.unit))


# whatif format history (the body is whatif_body's):
#   1.0  first version
#   1.1  the ceilings before and after gain low and assumed, workloads read_share (as prediction 1.3)
WHATIF_VERSION = "1.1"
# whatif-accelerators format history (the body is accelerators_body's):
#   1.0  first version: the accelerators fed as the system is, and after one more member of each group
WHATIF_ACCELERATORS_VERSION = "1.0"


def accelerators_body(topology: Topology, before: Feeding, options: tuple[MoreAccelerators, ...]) -> dict:
    """The body of an iobound/whatif-accelerators document."""
    d = before.demand
    return {"topology": {"name": topology.name, "path": topology.path},
            "workload": {"model": d.model, "accelerator": d.accelerator, "au": before.au, "read_threads": before.read_threads},
            "most": before.most, "least": before.least, "binds": before.binds(),
            "upgrades": [o.to_dict(before) for o in options]}


def whatif_body(topology: Topology, changed: Topology, edited: list[tuple[Change, tuple[str, ...]]],
                before: list[Ceiling], rankings: tuple[Ranking, ...]) -> dict:
    """The body of an iobound/whatif document: the changes made, the ceilings before and after, the upgrades ranked."""
    return {
        "topology": {"name": topology.name, "path": topology.path},
        "currency": changed.currency,
        "changes": [{"set": c.text, "groups": list(groups), "key": c.place.key, "value": c.value} for c, groups in edited],
        "before": [c.to_dict() for c in before],
        "after": [r.ceiling.to_dict() for r in rankings],
        "upgrades": [r.to_dict() for r in rankings],
    }
