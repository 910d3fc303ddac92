"""What a lab is made of: the spec file (host counts, link rate and delay, stores) and the hosts it lays out."""

from __future__ import annotations

import enum
import ipaddress
import os
import tomllib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.inputs import read_input
from probes.core.units import Q_, Metric, parse_quantity

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Backing", "Role", "Spec", "Host", "parse_spec", "spec_from", "hosts", "PREFIX", "SWITCH", "SUBNET"]

# Every namespace of the lab carries this prefix; nothing else on the machine may.
PREFIX = "iobl-"
SWITCH = f"{PREFIX}sw"
# The lab's addresses, in its namespaces only: clients from .11, servers from .111.
SUBNET = ipaddress.ip_network("10.77.0.0/24")
_MOST_HOSTS = 50
# Parsed where used: a spec's defaults and bounds should not load pint for `iobound lab --help`.
_STORE_SIZE, _LEAST_RATE, _LEAST_SIZE = "1 GiB", "1 Mbit/s", "16 MiB"
_KEYS = ("clients", "servers", "rate", "delay", "backing", "size")


class Backing(enum.StrEnum):
    """What holds a server's store: memory, or an ext4 image on a loop device."""

    TMPFS = "tmpfs"
    FILE = "file"


class Role(enum.StrEnum):
    """What a host of the lab does: mount the servers' stores, or export its own."""

    CLIENT = "client"
    SERVER = "server"


_FIRST = {Role.CLIENT: 11, Role.SERVER: 111}


@dataclass(frozen=True)
class Spec:
    """What to build: host counts, each link's rate (each way), its added one-way delay, and each server's store."""

    clients: int
    servers: int
    rate: Quantity
    delay: Quantity | None = None
    backing: Backing = Backing.TMPFS
    size: Quantity = field(default_factory=lambda: Q_(_STORE_SIZE))

    def to_dict(self) -> dict:
        """The spec as its file says it (quantities as text), for the state file and JSON output."""
        doc = {"clients": self.clients, "servers": self.servers, "rate": f"{self.rate:~P}",
               "backing": self.backing.value, "size": f"{self.size:~P}"}
        return doc | ({"delay": f"{self.delay:~P}"} if self.delay is not None else {})


@dataclass(frozen=True)
class Host:
    """One host of the lab: ``c1`` or ``s1``, its namespace and its address there."""

    name: str
    role: Role
    namespace: str
    address: str


def hosts(spec: Spec) -> tuple[Host, ...]:
    """The hosts of ``spec`` in order, clients first: names, namespaces and addresses follow from it alone."""
    counts = {Role.CLIENT: spec.clients, Role.SERVER: spec.servers}
    return tuple(Host(f"{role[0]}{i}", role, f"{PREFIX}{role[0]}{i}", str(SUBNET[_FIRST[role] + i - 1]))
                 for role, count in counts.items() for i in range(1, count + 1))


def parse_spec(path: str | os.PathLike) -> Spec:
    """Read a lab spec (TOML: clients, servers, rate, and optionally delay, backing, size).

    Raises
    ------
    InputError
        If the file cannot be read, is not TOML, lacks a key, has an unknown one, or a value is out of range.
    """
    source = str(path)
    try:
        doc = tomllib.loads(read_input(path, errors="strict"))
    except UnicodeDecodeError as exc:
        raise InputError(source, f"byte {exc.start}", "not UTF-8 text; a spec is TOML, which is UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(source, "", f"not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses into each nested array or table
        raise InputError(source, "", "not valid TOML iobound can read: arrays or tables nested too deeply") from None
    return spec_from(doc, source)


def spec_from(doc: dict, source: str) -> Spec:
    """A Spec from the keys of a spec file (or of the state file, which keeps them); InputError naming a bad key."""
    for key in doc:
        if key not in _KEYS:
            raise InputError(source, key, f"unknown key; a lab spec has {', '.join(_KEYS)}")
    for key in ("clients", "servers", "rate"):
        if key not in doc:
            raise InputError(source, key, 'missing; e.g. clients = 3, servers = 2, rate = "1 Gbit/s"')
    for key in ("clients", "servers"):
        value = doc[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MOST_HOSTS:
            raise InputError(source, key, f"must be a whole number from 1 to {_MOST_HOSTS}. Got {value!r} instead.")
    rate = _quantity(doc["rate"], Metric.BANDWIDTH, source, "rate")
    if rate < Q_(_LEAST_RATE):
        raise InputError(source, "rate", f"must be at least {_LEAST_RATE}. Got {rate:~P} instead.")
    delay = _quantity(doc["delay"], Metric.LATENCY, source, "delay") if "delay" in doc else None
    backing = doc.get("backing", Backing.TMPFS.value)
    if backing not in tuple(Backing):
        raise InputError(source, "backing", f"must be \"tmpfs\" or \"file\" (an ext4 image). Got {backing!r} instead.")
    size = _quantity(doc["size"], Metric.SIZE, source, "size") if "size" in doc else Q_(_STORE_SIZE)
    if size < Q_(_LEAST_SIZE):
        raise InputError(source, "size", f"must be at least {_LEAST_SIZE}. Got {size:~P} instead.")
    return Spec(doc["clients"], doc["servers"], rate, delay, Backing(backing), size)


def _quantity(value, metric: Metric, source: str, key: str) -> Quantity:
    """``value`` as a quantity of ``metric``, or InputError naming the file and key."""
    try:
        return parse_quantity(value, metric, what=key, positive=True)
    except ValueError as exc:  # UnitError: says what is wrong with the value
        raise InputError(source, key, str(exc)) from None
