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
    from topologies.edit import Change

__all__ = ["Upgrade", "Ranking", "upgrades", "WHATIF_VERSION", "whatif_body"]


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
    before = [model.ceiling(w, clients) for w in workloads]
    extra = [(group, Model(_one_more(topology, group))) for group in topology.groups if group.kind is not Kind.CLIENT]
    rankings = []
    for ceiling in before:
        options = []
        for group, bigger in extra:
            after = bigger.ceiling(ceiling.workload, clients)
            options.append(Upgrade(group.name, group.kind, group.price, after, _gain(ceiling, after)))
        rankings.append(Ranking(ceiling, tuple(sorted(options, key=_rank))))
    return tuple(rankings)


def _one_more(topology: Topology, group: Group) -> Topology:
    return replace(topology, groups=tuple(replace(g, count=g.count + 1) if g is group else g for g in topology.groups))


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
