"""Edit a topology from the command line: ``--set GROUP.KEY=VALUE``, checked by the loader like a file.

``GROUP`` is a group's name, or a kind (clients, networks, servers, devices) for every
group of that kind; ``KEY`` any key the group's table may hold (``nic``, ``count``,
``price``, ``parity`` ...). ``links[i].bandwidth`` sets the bandwidth of the i-th
``[[links]]`` entry (from 0, as the loader's messages count them). The edited document goes through :func:`topology_from_dict`,
so a wrong key or value gets the loader's message, with the ``--set`` texts as its source.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

from probes.core.errors import InputError, TopologyError
from topologies.load import topology_from_dict
from topologies.save import topology_document
from topologies.topology import PER_OPERATION, Component, Group, Kind, Topology

__all__ = ["Change", "parse_change", "targets", "apply_changes"]

_KINDS = {kind.value: kind for kind in Kind}


@dataclass(frozen=True)
class Change:
    """One ``--set``: the capacity or key at ``place`` (a group's name, a kind for all its groups, or a link) becomes ``value``.

    ``value`` is what the topology file would hold (a TOML value: ``8``, ``"25Gbit/s"``, an
    inline table). Setting a plain key drops its per-operation variants in the group
    (``nic`` drops ``read_nic`` and ``write_nic``), so reads and writes both see the new
    value; setting ``read_nic`` changes reads only. ``text`` is the argument as given.
    """

    place: Component
    value: Any
    text: str


def parse_change(text: str) -> Change:
    """Read ``GROUP.KEY=VALUE``; VALUE is a TOML value when it parses as one (8, 1.5, "x"), else the text itself.

    Raises
    ------
    InputError
        If the text is not of the form GROUP.KEY=VALUE.
    """
    place, equals, value = text.partition("=")
    component = Component.parse(place)
    if not (equals and component and value.strip()):
        raise InputError(f"--set {text}", "", "must be GROUP.KEY=VALUE, e.g. clients.nic=25Gbit/s or ssd.count=8 "
                         "(GROUP a group's name or clients, networks, servers, devices, or links[i] for a link)")
    return Change(component, _value(value.strip()), text)


def _value(text: str) -> Any:
    """``text`` as a TOML value (``8`` an integer, ``"x"`` a string), or as it is when it is none (``25Gbit/s``)."""
    try:
        doc = tomllib.loads(f"value = {text}")
    except tomllib.TOMLDecodeError:
        return text
    return doc["value"] if len(doc) == 1 else text


def targets(topology: Topology, change: Change) -> tuple[Group, ...]:
    """The groups ``change`` edits: the group of that name, else every group of that kind; a link's, the two it joins.

    Raises
    ------
    TopologyError
        If no group has that name and it is no kind that has groups, or there is no such link.
    """
    link = change.place.link
    if link is not None:
        if link >= len(topology.links):
            raise TopologyError(topology.path, f"--set {change.text}", f"no link {change.place.group}; the topology has "
                                f"{len(topology.links)} [[links]] entries, counted from links[0]")
        return (topology.group(topology.links[link].a), topology.group(topology.links[link].b))
    target = change.place.group
    if target in {g.name for g in topology.groups}:
        return (topology.group(target),)
    chosen = topology.of_kind(_KINDS[target]) if target in _KINDS else ()
    if not chosen:
        raise TopologyError(topology.path, f"--set {change.text}", f"no group or kind {target!r}; the groups are: "
                            f"{', '.join(g.name for g in topology.groups)} (or a kind: {', '.join(_KINDS)})")
    return chosen


def apply_changes(topology: Topology, changes: tuple[Change, ...]) -> Topology:
    """The topology with ``changes`` made in order, rebuilt and checked by the loader as if it were the file.

    Raises
    ------
    TopologyError
        If a change names no group, or the result is not a valid topology (an unknown key,
        a value of the wrong kind); the message's source names the ``--set`` arguments.
    """
    doc = topology_document(topology)
    for change in changes:
        groups, link = targets(topology, change), change.place.link
        for body in [doc["links"][link]] if link is not None else [doc[g.kind.value][g.name] for g in groups]:
            key = change.place.key
            for operation in PER_OPERATION.get(key, ()):
                body.pop(f"{operation}_{key}", None)
            body[key] = change.value
    sets = " ".join(f"--set {change.text}" for change in changes)
    return topology_from_dict(doc, source=f"{topology.path} with {sets}", name=topology.name)
