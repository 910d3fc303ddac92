"""Write a topology as the TOML that :mod:`topologies.load` reads, without overwriting anything."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import tomli_w

from probes.core.outputs import write_new
from probes.core.units import Metric, canonical, parse_quantity, registry
from topologies.topology import Capacity, Group, Kind, Topology
from topologies.write_cost import Forwarding, WriteCost

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["topology_document", "document_text", "save_topology", "save_document"]


def topology_document(topology: Topology) -> dict:
    """The topology as the loader's document (nested dicts): ``topology_from_dict`` of it gives it back."""
    doc: dict = {"name": topology.name}
    if topology.description:
        doc["description"] = topology.description
    if topology.currency:
        doc["currency"] = topology.currency
    for kind in Kind:
        groups = {g.name: _group(g, topology.group(g.on) if g.on else None) for g in topology.of_kind(kind)}
        if groups:
            doc[kind.value] = groups
    doc["links"] = [{"between": [link.a, link.b], **({"bandwidth": _capacity(link.bandwidth)} if link.bandwidth else {})}
                    for link in topology.links]
    if topology.kv_cache:  # a serving node's tiers, each rate as read (a catalogue's range written out as one)
        doc["kv_cache"] = {t.name: {"tier": t.tier.value, "count": t.count, **({"size": _capacity(t.size)} if t.size else {}),
                                    **({"description": t.description} if t.description else {}),
                                    **{key: _capacity(c) for key, c in t.rates.items()}} for t in topology.kv_cache}
    return doc


def save_topology(topology: Topology, path: str | Path, *, header: str = "") -> Path:
    """Write ``topology`` to a new file ``path`` (a ``header`` becomes comment lines at its top).

    Raises
    ------
    InputError
        If ``path`` exists (nothing is overwritten) or cannot be written.
    """
    return save_document(topology_document(topology), path, header=header)


def document_text(doc: dict, *, header: str = "") -> str:
    """The TOML of the loader's document ``doc``, each line of ``header`` a comment line above it."""
    comments = "".join(f"# {' '.join(line.split())}".rstrip() + "\n" for line in header.splitlines())
    return comments + ("\n" if comments else "") + tomli_w.dumps(doc)


def save_document(doc: dict, path: str | Path, *, header: str = "") -> Path:
    """Write the loader's document ``doc`` (a topology as TOML tables, probe links too) to a new file ``path``; each
    line of ``header`` becomes a comment line at its top.

    Raises
    ------
    InputError
        If ``path`` exists (nothing is overwritten) or cannot be written.
    """
    return write_new(path, document_text(doc, header=header))


def _group(group: Group, host: Group | None = None) -> dict:
    """A group's table; a converged server group's without what it takes from its ``host`` nodes (read again on load)."""
    body: dict = {"count": group.count}
    if group.description:
        body["description"] = group.description
    if group.price is not None:
        body["price"] = group.price
    body |= {key: _capacity(c) for key, c in group.capacities.items() if not (host and host.capacities.get(key) == c)}
    body |= {key: value for key, value in (("nics", group.nics), ("operations", list(group.operations)), ("on", group.on))
             if value and value != 1}
    if group.transfers:
        body["transfers"] = f"{group.transfers[0]} {_quantity(group.transfers[1])}"
    if group.request_size is not None:
        body["request_size"] = _quantity(group.request_size)
    if group.kind is Kind.SERVER:
        body |= _write_cost(group.write_cost)
        if group.forwarding is not Forwarding.PIPELINE:
            body["forwarding"] = group.forwarding.value
    return body


def _write_cost(cost: WriteCost) -> dict:
    out: dict = {}
    if cost.replicas != 1:
        out["replicas"] = cost.replicas
    if cost.parity:
        out["parity"] = f"{cost.parity[0]}+{cost.parity[1]}"
    if cost.amplification != 1:
        out["write_amplification"] = cost.amplification
    return out


def _capacity(capacity: Capacity) -> str | dict:
    value = "unlimited" if capacity.value is None else _quantity(capacity.value)
    stated = {"range": [_quantity(end) for end in capacity.range]} if capacity.range else {"value": value}
    if capacity.source.kind == "unstated":
        return stated if capacity.range else value
    return stated | {"source": capacity.source.kind, **({"note": capacity.source.note} if capacity.source.note else {})}


# The units a figure may be written in beside its own, as people write them: decimal and binary multiples.
_WRITTEN = {
    Metric.BANDWIDTH: ("B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s", "PiB/s",
                       "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"),
    Metric.SIZE: ("B", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB"),
    Metric.OPERATION_RATE: ("op/s", "kop/s", "Mop/s"),
    Metric.LATENCY: ("s", "ms", "µs", "ns"),
}
_SHORT = 6  # the most characters of a number kept in its own unit ("376.6 Gbit/s", "5600 MB/s")


def _quantity(q: Quantity) -> str:
    """A quantity as a person writes it that the loader parses back to the same figure: in its own unit while its
    number is short ("376.6 Gbit/s"), else in the unit that states it exactly in the fewest digits ("75 GB/s", not
    "75000000000.0 B / s")."""
    own = _written(q.magnitude, q.units)
    if len(own.split(" ")[0]) <= _SHORT:
        return own
    exact = canonical(q)
    candidates = [_written(q.m_as(unit), registry().Unit(unit)) for unit in _WRITTEN.get(Metric.of(q), ())]
    shortest = min((text for text in candidates if canonical(parse_quantity(text, what="a figure")) == exact),
                   key=lambda text: len(text.split(" ")[0]), default=own)
    return shortest if len(shortest.split(" ")[0]) < len(own.split(" ")[0]) else own


def _written(magnitude: float, unit) -> str:
    """``magnitude`` in ``unit`` as a person writes it: a whole number without its point, the unit as symbols."""
    number = float(magnitude)
    text = str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)
    return f"{text} {unit:~P}"
