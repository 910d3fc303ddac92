"""What a lab is made of: the spec file (hosts per role, each link's rate and delay, each server's store) and its hosts.

A spec states a setting for every host, for a role (``[clients]``, ``[servers]``) or for one host
(``[hosts.s2]``); the narrowest one that states it wins::

    rate = "1 Gbit/s"          # every host's link, each way, unless its role or the host says otherwise
    [clients]
    count = 3
    rate = "500 Mbit/s"
    [servers]
    count = 2                  # 0: a client-only experiment
    backing = "tmpfs"
    [hosts.s2]
    backing = "file"

``clients = 3`` is short for a ``[clients]`` table with only a count.
"""

from __future__ import annotations

import enum
import ipaddress
import os
import tomllib
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.inputs import read_input
from probes.core.units import Q_, Metric, parse_quantity

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Backing", "Role", "Settings", "Spec", "Host", "HostGroup", "parse_spec", "spec_from", "hosts", "groups",
           "PREFIX", "SWITCH", "SUBNET"]

# Every namespace of the lab carries this prefix; nothing else on the machine may.
PREFIX = "iobl-"
SWITCH = f"{PREFIX}sw"
# The lab's addresses, in its namespaces only: clients from .11, servers from .111.
SUBNET = ipaddress.ip_network("10.77.0.0/24")
_MOST_HOSTS = 50
# Parsed where used: a spec's defaults and bounds should not load pint for `iobound lab --help`.
_STORE_SIZE, _LEAST_RATE, _LEAST_SIZE = "1 GiB", "1 Mbit/s", "16 MiB"
_LINK, _STORE = ("rate", "delay"), ("backing", "size")
_TOP = ("clients", "servers", "hosts", *_LINK, *_STORE)


class Backing(enum.StrEnum):
    """What holds a server's store: memory, or an ext4 image on a loop device."""

    TMPFS = "tmpfs"
    FILE = "file"


class Role(enum.StrEnum):
    """What a host of the lab does: mount the servers' stores, or export its own."""

    CLIENT = "client"
    SERVER = "server"

    @property
    def table(self) -> str:
        """The spec's key for the role: ``clients`` or ``servers``."""
        return f"{self.value}s"


_FIRST = {Role.CLIENT: 11, Role.SERVER: 111}
_LEAST = {Role.CLIENT: 1, Role.SERVER: 0}
_KEYS = {Role.CLIENT: _LINK, Role.SERVER: _LINK + _STORE}


@dataclass(frozen=True)
class Settings:
    """What a spec says of some hosts' links and stores; None leaves a setting to the wider level (role, whole spec)."""

    rate: Quantity | None = None
    delay: Quantity | None = None
    backing: Backing | None = None
    size: Quantity | None = None

    def over(self, wider: Settings) -> Settings:
        """These settings, with ``wider``'s where these state nothing."""
        return Settings(*(mine if mine is not None else theirs
                          for mine, theirs in ((getattr(self, f.name), getattr(wider, f.name)) for f in fields(self))))

    def to_dict(self) -> dict:
        """The settings stated, as a spec file says them (quantities as text)."""
        stated = ((f.name, getattr(self, f.name)) for f in fields(self))
        return {key: value.value if isinstance(value, Backing) else f"{value:~P}"
                for key, value in stated if value is not None}


@dataclass(frozen=True)
class Spec:
    """What to build: hosts per role, and the settings the spec states for all (``common``), a role, or one host."""

    clients: int
    servers: int
    common: Settings = Settings()
    roles: dict[Role, Settings] = field(default_factory=dict)
    overrides: dict[str, Settings] = field(default_factory=dict)

    def settings(self, role: Role, name: str) -> Settings:
        """Host ``name``'s settings: its own, else its role's, else the spec's, else the defaults (a 1 GiB tmpfs)."""
        found = self.overrides.get(name, Settings()).over(self.roles.get(role, Settings())).over(self.common)
        if role is Role.CLIENT:
            return Settings(found.rate, found.delay)
        return found.over(Settings(backing=Backing.TMPFS, size=Q_(_STORE_SIZE)))

    def to_dict(self) -> dict:
        """The spec as its file says it (quantities as text), for the state file and JSON output."""
        doc = self.common.to_dict()
        for role, count in ((Role.CLIENT, self.clients), (Role.SERVER, self.servers)):
            stated = self.roles.get(role, Settings()).to_dict()
            doc[role.table] = {"count": count, **stated} if stated else count
        return doc | ({"hosts": {name: s.to_dict() for name, s in self.overrides.items()}} if self.overrides else {})


@dataclass(frozen=True)
class Host:
    """One host of the lab: ``c1`` or ``s1``, its namespace and address, its link (rate each way, the one-way delay
    added to what it sends) and, for a server, its store."""

    name: str
    role: Role
    namespace: str
    address: str
    rate: Quantity
    delay: Quantity | None = None
    backing: Backing | None = None
    size: Quantity | None = None


@dataclass(frozen=True)
class HostGroup:
    """Hosts of one role with the same settings, as the lab's topology states them: a role's hosts that the spec
    does not single out (``lab-clients``, ``lab-servers``), or one host it does (``lab-s2``)."""

    name: str
    role: Role
    hosts: tuple[Host, ...]

    @property
    def store(self) -> str:
        """The name of the group of its servers' stores."""
        return "lab-stores" if self.name == "lab-servers" else f"{self.name}-store"


def hosts(spec: Spec) -> tuple[Host, ...]:
    """The hosts of ``spec`` in order, clients first: names, namespaces, addresses and settings follow from it alone."""
    made = []
    for name, role in _names(spec).items():
        own = spec.settings(role, name)
        made.append(Host(name, role, f"{PREFIX}{name}", str(SUBNET[_FIRST[role] + int(name[1:]) - 1]), own.rate,
                         own.delay, own.backing, own.size))
    return tuple(made)


def groups(spec: Spec) -> tuple[HostGroup, ...]:
    """The hosts in groups, clients first: each role's hosts without settings of their own, then each host with."""
    found = []
    for role in Role:
        members = [h for h in hosts(spec) if h.role is role]
        plain = tuple(h for h in members if h.name not in spec.overrides)
        found += [HostGroup(f"lab-{role.table}", role, plain)] if plain else []
        found += [HostGroup(f"lab-{h.name}", role, (h,)) for h in members if h.name in spec.overrides]
    return tuple(found)


def parse_spec(path: str | os.PathLike) -> Spec:
    """Read a lab spec (TOML: clients, servers, rate, and optionally delay, backing, size, per role and per host).

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
    _only(doc, _TOP, source, "", "a lab spec has")
    counts, roles = {}, {}
    for role in Role:
        key = role.table
        if key not in doc:
            raise InputError(source, key, 'missing; e.g. clients = 3, servers = 2, rate = "1 Gbit/s"')
        table = doc[key] if isinstance(doc[key], dict) else {"count": doc[key]}
        _only(table, ("count", *_KEYS[role]), source, key, f"[{key}] has", role)
        if "count" not in table:
            raise InputError(source, f"{key}.count", f"missing; e.g. [{key}] count = 2")
        where = f"{key}.count" if isinstance(doc[key], dict) else key
        counts[role] = _count(table["count"], _LEAST[role], source, where)
        roles[role] = _settings(table, source, key)
    common = _settings(doc, source, "")
    hosts_table = doc.get("hosts", {})
    if not isinstance(hosts_table, dict):
        raise InputError(source, "hosts", "must be tables of hosts, e.g. [hosts.s2] with rate, delay, backing, size")
    spec = Spec(counts[Role.CLIENT], counts[Role.SERVER], common, {r: s for r, s in roles.items() if s != Settings()})
    names = _names(spec)
    overrides = {}
    for name, table in hosts_table.items():
        if name not in names:
            raise InputError(source, f"hosts.{name}", f"no such host; this lab's hosts are {', '.join(names)}")
        if not isinstance(table, dict):
            raise InputError(source, f"hosts.{name}", f"must be a table ([hosts.{name}]) of rate, delay, backing, size")
        _only(table, _KEYS[names[name]], source, f"hosts.{name}", f"[hosts.{name}] has", names[name])
        if (stated := _settings(table, source, f"hosts.{name}")) != Settings():
            overrides[name] = stated
    spec = Spec(spec.clients, spec.servers, common, spec.roles, overrides)
    unset = [name for name, role in names.items() if spec.settings(role, name).rate is None]
    if unset:
        raise InputError(source, "rate", f"missing for {', '.join(unset)}; state it for all (rate = \"1 Gbit/s\"), "
                                         "per role ([clients] rate = ...) or per host ([hosts.c1] rate = ...)")
    return spec


def _names(spec: Spec) -> dict[str, Role]:
    """Each host's name and role, clients first: ``c1`` ... then ``s1`` ..."""
    return {f"{role[0]}{i}": role for role, count in ((Role.CLIENT, spec.clients), (Role.SERVER, spec.servers))
            for i in range(1, count + 1)}


def _only(table: dict, allowed: tuple[str, ...], source: str, where: str, has: str, role: Role | None = None) -> None:
    """InputError for a key of ``table`` not in ``allowed``; a store's key on a client says a client has none."""
    for key in table:
        if key not in allowed:
            place = f"{where}.{key}" if where else key
            if role is Role.CLIENT and key in _STORE:
                raise InputError(source, place, "a client has no store: backing and size are a server's "
                                                "([servers] or [hosts.sN])")
            raise InputError(source, place, f"unknown key; {has} {', '.join(allowed)}")


def _count(value, least: int, source: str, where: str) -> int:
    """A host count from ``least`` to the most a lab has, or InputError."""
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= _MOST_HOSTS:
        raise InputError(source, where, f"must be a whole number from {least} to {_MOST_HOSTS}. Got {value!r} instead.")
    return value


def _settings(table: dict, source: str, where: str) -> Settings:
    """The settings ``table`` states (rate, delay, backing, size), each checked; InputError naming a bad one."""
    def place(key: str) -> str:
        return f"{where}.{key}" if where else key

    rate = _quantity(table["rate"], Metric.BANDWIDTH, source, place("rate")) if "rate" in table else None
    if rate is not None and rate < Q_(_LEAST_RATE):
        raise InputError(source, place("rate"), f"must be at least {_LEAST_RATE}. Got {rate:~P} instead.")
    delay = _quantity(table["delay"], Metric.LATENCY, source, place("delay")) if "delay" in table else None
    backing = table.get("backing")
    if backing is not None and backing not in tuple(Backing):
        raise InputError(source, place("backing"),
                         f"must be \"tmpfs\" or \"file\" (an ext4 image). Got {backing!r} instead.")
    size = _quantity(table["size"], Metric.SIZE, source, place("size")) if "size" in table else None
    if size is not None and size < Q_(_LEAST_SIZE):
        raise InputError(source, place("size"), f"must be at least {_LEAST_SIZE}. Got {size:~P} instead.")
    return Settings(rate, delay, None if backing is None else Backing(backing), size)


def _quantity(value, metric: Metric, source: str, key: str) -> Quantity:
    """``value`` as a quantity of ``metric``, or InputError naming the file and key."""
    try:
        return parse_quantity(value, metric, what=key.rsplit(".", 1)[-1], positive=True)
    except ValueError as exc:  # UnitError: says what is wrong with the value
        raise InputError(source, key, str(exc)) from None
