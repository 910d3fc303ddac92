"""Typical metadata rates per metadata server, by metadata service and device class, from published io500 figures.

Topologies written from io500 system descriptions state metadata servers as counts ("4 MDS",
"150 MD nodes, NVMe") but never as rates. ``metadata_rates.toml`` beside this module holds, per
service (``lustre``, ``beegfs``, ``gpfs``, ``daos``, ``wekaio`` ...) and device class of the
metadata storage (``hdd``, ``ssd``, ``nvme``, ``pmem``, and ``any`` spanning them all), a range
per operation -- create, stat, open, remove, find -- with the runs behind it. A server group's
``metadata = { typical = "beegfs", devices = "nvme" }`` expands to these ranges.

How the table was made (the file's header says the same, with the sources):

- Each range spans the io500 figures per server, least to greatest: create from mdtest-easy-write
  and mdtest-hard-write, stat from mdtest-easy-stat and mdtest-hard-stat, open from
  mdtest-hard-read, remove from mdtest-easy-delete and mdtest-hard-delete, find from the find phase.
- Per server is the phase's rate over the metadata servers the submission counts; DAOS and WekaIO
  have no dedicated metadata servers, so theirs is per data server (the entry's ``basis``).
- Data: the io500 list database of the SC17 to SC19 lists, and the result files of three later
  submissions (Narval SC21, BeeGFS on Oracle Cloud ISC20, SuperMUC-NG Phase2 DAOS ISC25).
- Kept: the newest VALID version of each submission (the SC18 figures were re-issued for the SC18*
  list), counted once; only submissions that count their metadata servers (md_nodes of at least 1;
  ds_nodes for DAOS and WekaIO); no phase figure of 0 (a phase that did not run).
- Left out as served from client caches: a stat or open figure more than 100 times the median per
  server of the same phase in the same system's other submissions. Two figures: Cambridge's Data
  Accelerator (Lustre, ISC19) mdtest-easy-stat and CERN's Bytecollider (CephFS, SC18) mdtest-hard-read.
- The hard phases work in one shared directory, which BeeGFS and Lustre (without striped
  directories) keep on one metadata server, so on systems with many servers their per-server
  figure, and with it the low end, is far below the easy phases'.
- An entry with one or two systems behind it says so in its note: treat it as indicative.

These are what was measured, not what the hardware allows: they are no ceiling. :func:`band` gives one
phase's figures as a band shown beside a verdict as information, leaving out the judged system's own runs.

The table is read once, when first asked for; importing this module reads nothing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from probes.core.units import Q_, Metric, parse_quantity

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["TABLE", "OPERATIONS", "ANY", "ALIASES", "Band", "band", "known", "typical_metadata", "entry"]

TABLE = Path(__file__).with_name("metadata_rates.toml")
OPERATIONS = ("create", "stat", "open", "remove", "find")
ANY = "any"  # the device class that spans every class of a service, and runs whose devices were not stated
# Other names people write for a service.
ALIASES = {"spectrum-scale": "gpfs", "spectrumscale": "gpfs", "gridscaler": "gpfs", "weka": "wekaio",
           "wekafs": "wekaio", "ceph": "cephfs"}


@functools.cache
def _table() -> dict:
    import tomllib

    return tomllib.loads(TABLE.read_text(encoding="utf-8"))


def known() -> dict[str, tuple[str, ...]]:
    """The services the table has rates for, each with its device classes (``any`` last).

    Examples
    --------
    >>> known()["beegfs"]
    ('ssd', 'nvme', 'pmem', 'any')
    """
    return {service: tuple(classes) for service, classes in _table().items()}


def _listing() -> str:
    return "; ".join(f"{service} ({', '.join(classes)})" for service, classes in known().items())


def entry(service: str, devices: str) -> dict:
    """The table's entry for ``service`` and ``devices`` as written: ranges, note, sources, ends.

    Names are matched without regard to case; :data:`ALIASES` gives other names of services.

    Raises
    ------
    LookupError
        If the service, or the device class for it, is not in the table; the message lists those that are.
    """
    name = str(service).strip().lower()
    name = ALIASES.get(name, name)
    table = _table()
    if name not in table:
        raise LookupError(f"The typical metadata service must be one of: {_listing()}. Got {service!r} instead.")
    classes = table[name]
    kind = str(devices).strip().lower()
    if kind not in classes:
        raise LookupError(f"The devices of typical metadata service {name!r} must be one of: {', '.join(classes)} "
                          f"({ANY!r} when they are not known). Got {devices!r} instead.")
    return classes[kind]


@functools.cache
def _rates(service: str, devices: str) -> tuple[tuple[str, Quantity, Quantity, str], ...]:
    body = entry(service, devices)
    where = f"[{service}.{devices}] of {TABLE.name}"
    rows = []
    for operation in OPERATIONS:
        if operation not in body:
            continue
        low, high = (parse_quantity(text, Metric.OPERATION_RATE, what=f"{operation} in {where}") for text in body[operation])
        note = f"{body['ends'][operation]}; {body['note']} ({where})"
        rows.append((operation, low, high, note))
    return tuple(rows)


def typical_metadata(service: str, devices: str) -> dict[str, tuple[Quantity, Quantity, str]]:
    """Per operation, the least and greatest published rate per metadata server, and a note naming the runs.

    Parameters
    ----------
    service : the metadata service: ``lustre``, ``beegfs``, ``gpfs``, ``daos``, ``wekaio`` ...
        (:func:`known` lists them all; :data:`ALIASES` holds other names such as ``spectrum-scale``).
    devices : the device class of the metadata storage: ``hdd``, ``ssd``, ``nvme``, ``pmem``, or
        ``any`` when it is not known.

    Returns
    -------
    dict
        ``{"create": (low, high, note), "stat": ..., "open": ..., "remove": ..., "find": ...}`` with
        ``low`` and ``high`` in op/s per server (per data server where the entry's basis says so)
        and ``note`` one line naming the runs that set the ends and how many systems stand behind them.

    Raises
    ------
    LookupError
        If the service, or the device class for it, is not in the table; the message lists those that are.

    Examples
    --------
    >>> rates = typical_metadata("beegfs", "nvme")
    >>> low, high, note = rates["create"]
    >>> low.m_as("op/s"), high.m_as("op/s")
    (16.16, 76080)
    >>> note.split(";")[0]
    'low BeeGFS on Oracle Cloud (OCI) ISC20 hard-write, high bracewell (CSIRO) SC19 easy-write'
    """
    name = str(service).strip().lower()
    kind = str(devices).strip().lower()
    entry(name, kind)  # raises, naming what is known, before anything is cached
    name = ALIASES.get(name, name)
    return {operation: (low, high, note) for operation, low, high, note in _rates(name, kind)}


# A source's system ("io500 SC18 (revised figures), Mistral (DKRZ), list id 199, ..."), and each phase's figure in
# it ("easy-write 13.47 = 13,470", op/s per server after the equals sign; "(left out: ...)" after one left out).
_SYSTEM = re.compile(r"^io500 [^,]+, (.+?), (?:list id|IO500/submission-data)")
_FIGURE = re.compile(r"\b((?:easy|hard)-(?:write|stat|read|delete)|find) [\d,.]+ = ([\d,.]+)( \(left out)?")


@dataclass(frozen=True)
class Band:
    """The published figures per server of one io500 phase, for one service and device class: a typical range."""

    low: Quantity
    high: Quantity
    systems: int  # how many systems stand behind it
    basis: str  # per what: "metadata server", or "data server" for services without metadata servers
    left_out: bool  # whether runs of the judged system were left out of it


def _key(name: str) -> str:
    return re.sub(r"\W", "", name.lower())


def _keys(name: str) -> set[str]:
    """A system's name as the list keys it, with and without its institution in parentheses."""
    return {_key(name), _key(name.rsplit(" (", 1)[0])} - {""}


def band(service: str, devices: str, phase: str, system: str = "") -> Band | None:
    """The published figures per server of io500 ``phase`` (``easy-write``, ``hard-stat``, ``find`` ...) for the
    service and device class, leaving out every run of ``system`` (as the list names it, "Mistral (DKRZ)", or its
    system's name alone); None where no other system's run is left.

    Raises
    ------
    LookupError
        If the service, or the device class for it, is not in the table.
    """
    body = entry(service, devices)
    own = _keys(system)
    figures, systems, left = [], set(), False
    for keys, key, published in _sources(tuple(body["sources"]), phase):
        if keys & own:
            left = True
            continue
        if published:
            figures += published
            systems.add(key)
    if not figures:
        return None
    return Band(Q_(min(figures), "op/s"), Q_(max(figures), "op/s"), len(systems), body["basis"], left)


@functools.lru_cache(maxsize=256)
def _sources(sources: tuple[str, ...], phase: str) -> tuple[tuple[frozenset[str], str, tuple[float, ...]], ...]:
    """Each source's system (its keys, and its key) and its figures of ``phase`` (but those left out), read once for
    each entry and phase: a list's review asks a band of every metadata phase of every submission."""
    read = []
    for source in sources:
        named = _SYSTEM.match(source)
        name = named[1] if named else source
        read.append((frozenset(_keys(name)), _key(name), tuple(
            float(value.replace(",", "")) for which, value, cached in _FIGURE.findall(source)
            if which == phase and not cached)))
    return tuple(read)
