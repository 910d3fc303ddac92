"""The dated catalogue of achievable rates (achievable.toml): network ports, PCIe links and drives that shipped,
each with its first year, its nameplate, what it achieves and its source; and the fastest part of a class that
had shipped by a year, for telling an implied figure from any part that existed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from probes.core.units import Q_

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["ACHIEVABLE", "Shipped", "Parts", "Fastest", "Peer", "catalogue", "link", "drive_classes", "port_families",
           "year_of", "link_bound", "fastest", "generations", "socket_links", "peer", "gpu_ingress"]

ACHIEVABLE = Path(__file__).with_name("achievable.toml")
WIDTHS = (1, 2, 4, 8, 16)
PCIE = re.compile(r"pcie-(\d\.\d)-x(\d+)")
# A stated port speed close enough to a generation's nameplate to be it (FDR's 54.54 Gbit/s written "56Gb").
_SPEED_MATCH = 0.1
# The families a stated speed of an RDMA network may be (hardware.toml's family "rdma").
_RDMA = ("infiniband", "omni-path", "slingshot")
# Words of a drive's description that bound its link: a PCIe generation, a width, a form factor of four lanes.
_GENERATION = re.compile(r"(?:pcie|pci-e|pci express|gen)\s*-?\s*([1-6])(?:\.0)?(?![\d.])")
_LANES = re.compile(r"(?<![a-z0-9])x\s*(1|2|4|8|16)(?![\d])")
_FOUR_LANES = re.compile(r"(?<![a-z0-9])(?:u\.2|u\.3|m\.2|e1\.s|e3\.s)(?![a-z0-9])")
# Dates as descriptions write them: 2019-08-01, 04/2012, 1/2019, 10/18, 2018.
_YEAR = re.compile(r"(?<!\d)(19[89]\d|20[0-4]\d)(?!\d)")
_SHORT_YEAR = re.compile(r"(?<!\d)\d{1,2}/(\d{2})(?!\d)")


@dataclass(frozen=True)
class Shipped:
    """One part that shipped: a ``port``, ``drive`` or PCIe ``link``; ``kind`` its class (nvme, infiniband-edr,
    pcie-3.0), ``family`` what names any generation of it (infiniband, nvme, pcie); the ``year`` it first shipped;
    what its interface allows (``nameplate``) and what it achieves (``read``, ``write``; a port's and a link's are
    one figure), its random rates where stated, its ``interface`` (a drive's link, a port's protocol) and ``source``."""

    name: str
    part: str
    kind: str
    family: str
    year: int
    nameplate: Quantity
    read: Quantity
    write: Quantity
    interface: str
    source: str
    random_read: Quantity | None = None
    random_write: Quantity | None = None

    def rate(self, operation: str) -> Quantity:
        """What it achieves for ``operation`` (read or write; a port or a link carries either)."""
        return self.write if operation == "write" else self.read


@functools.cache
def _table() -> dict:
    import tomllib

    return tomllib.loads(ACHIEVABLE.read_text(encoding="utf-8"))


@functools.cache
def catalogue() -> tuple[Shipped, ...]:
    """Every part of achievable.toml: the network ports, the PCIe links of each generation and width, the drives."""
    table = _table()
    ports = []
    for p in table["ports"]:
        best = max((Q_(p[k]), k) for k in ("rdma", "tcp") if k in p)
        ports.append(Shipped(p["name"], p["network"], "port", p["family"], p["year"], Q_(p["nameplate"]), best[0], best[0],
                             best[1].upper(), p["source"]))
    links = [link(generation, width) for generation in table["pcie"] for width in WIDTHS]
    drives = [Shipped(d["name"], d["class"], "drive", d["class"], d["year"], _interface(d["interface"])[0],
                      Q_(d["read"]), Q_(d["write"]), _interface(d["interface"])[1], d["source"],
                      *(Q_(d[k]) if k in d else None for k in ("random_read", "random_write")))
              for d in table["drives"]]
    return tuple(ports + links + drives)


def link(generation: str, lanes: int) -> Shipped:
    """A PCIe link of ``generation`` ("3.0") and ``lanes``: per-lane figures times its width."""
    body = _table()["pcie"][generation]
    rate = Q_(body["achievable"]) * lanes
    return Shipped(f"PCIe {generation} x{lanes}", f"pcie-{generation}", "link", "pcie", body["year"],
                   Q_(body["nameplate"]) * lanes, rate, rate, f"PCIe {generation} x{lanes}", body["source"])


def generations() -> tuple[str, ...]:
    """The PCIe generations the catalogue holds, oldest first ("1.0" ... "6.0")."""
    return tuple(_table()["pcie"])


def socket_links() -> tuple[Shipped, ...]:
    """The links between the two sockets of a server, per platform: all its links together, one way, for memory
    traffic (``read``; ``nameplate`` their data rate)."""
    return tuple(Shipped(s["name"], s["class"], "socket", s["family"], s["year"],
                         Q_(s["nameplate"]) * s["links"], Q_(s["achievable"]), Q_(s["achievable"]),
                         f"{s['links']} x {s['nameplate']}", s["source"]) for s in _table()["sockets"])


@dataclass(frozen=True)
class Peer:
    """What peer-to-peer traffic achieves where it crosses a CPU (nvidia-smi's PHB, SYS): the least and the most
    published (None: not bounded there but by the links), and where they were."""

    least: Quantity
    most: Quantity | None
    source: str


def peer(connection: str) -> Peer | None:
    """The published range of peer-to-peer traffic across ``connection`` (PHB, SYS); None where none is published."""
    body = _table()["peer"].get(connection)
    return None if body is None else Peer(Q_(body["least"]), Q_(body["most"]) if "most" in body else None, body["source"])


def gpu_ingress(generation: str) -> tuple[Quantity, str] | None:
    """What a GPU's x16 link of ``generation`` was measured to take in from a peer, with its source; None if unmeasured."""
    found = _table()["gpu_ingress"].get(generation)
    return None if found is None else (Q_(found[0]), found[1])


def _interface(name: str) -> tuple[Quantity, str]:
    """A drive's interface: what it carries at most (its nameplate) and its name as people write it."""
    found = PCIE.fullmatch(name)
    if found:
        return link(found[1], int(found[2])).nameplate, f"PCIe {found[1]} x{found[2]}"
    rate, said = _table()["interfaces"][name]
    return Q_(rate), said.split(":")[0]


def drive_classes(device_classes: tuple[str, ...]) -> tuple[str, ...]:
    """The catalogue's drive classes that hardware.toml's device classes (a description's words) may be; none for a
    class it holds no part of (cloud disks)."""
    table = _table()["classes"]
    return tuple(dict.fromkeys(c for name in device_classes for c in table.get(name, ())))


@functools.cache
def port_families() -> tuple[str, ...]:
    """Every network family the catalogue holds ports of (ethernet, infiniband, ...): a port of any network."""
    return tuple(sorted({p.family for p in catalogue() if p.kind == "port"}))


def year_of(text: str) -> int | None:
    """The year a date as descriptions write it names (2019-08-01, 04/2012, 1/2019, 10/18, isc19, SC18); None if none."""
    text = text.strip().lower()
    found = _YEAR.search(text)
    if found:
        return int(found[1])
    short = _SHORT_YEAR.search(text) or re.fullmatch(r"(?:isc|sc)(\d{2})\*?", text)
    return 2000 + int(short[1]) if short else None


def link_bound(words: str) -> tuple[str | None, int | None]:
    """The PCIe generation ("3.0") and lanes a drive's words bound ("PCIe 3.0 x8", "Gen4", "U.2"); None where unsaid."""
    words = words.lower()
    generation = _GENERATION.search(words)
    lanes = _LANES.search(words)
    return (f"{generation[1]}.0" if generation and f"{generation[1]}.0" in _table()["pcie"] else None,
            int(lanes[1]) if lanes else 4 if _FOUR_LANES.search(words) else None)


@dataclass(frozen=True)
class Parts:
    """What each member of a topology's group is built of, as its description names it: ``kind`` "drive" (a device
    group's) or "port" (a group's NICs); ``classes``, the catalogue's classes it may be (a drive's class; a port's
    network or family); at most ``most`` of them a member; the ``year`` by which they had shipped, and where it was
    read (``dated``; a year None: not stated, so any part to date); ``said``, a part as a person names it ("NVMe
    drive"); a drive's ``link`` as its words bound it, a port's stated ``speed``."""

    kind: str
    classes: tuple[str, ...]
    most: int
    year: int | None
    dated: str
    said: str
    link: tuple[str | None, int | None] = (None, None)
    speed: Quantity | None = None


@dataclass(frozen=True)
class Fastest:
    """The fastest part of a class by a year: the part, what it achieves there (``rate``), and the link that caps it
    where the description's words bound one below its own (``capped``)."""

    part: Shipped
    rate: Quantity
    capped: Shipped | None = None

    def __str__(self) -> str:
        part = self.part
        cap = f", on the {self.capped.name} its description names" if self.capped else ""
        return f"{part.name} ({part.interface}, {part.year}{cap})"


def _candidates(parts: Parts) -> list[Shipped]:
    if parts.kind == "drive":
        return [p for p in catalogue() if p.kind == "drive" and p.part in parts.classes]
    families = _RDMA if parts.classes == ("rdma",) else parts.classes
    return [p for p in catalogue() if p.kind == "port" and (p.part in families or p.family in families)
            and (parts.speed is None or abs((p.nameplate / parts.speed).m_as("") - 1) <= _SPEED_MATCH)]


def _capped(part: Shipped, rate: Quantity, bound: tuple[str | None, int | None]) -> tuple[Quantity, Shipped | None]:
    """A drive's rate on the link its description's words bound (an older generation, fewer lanes), where lower."""
    own = PCIE.fullmatch(part.interface.lower().replace("pcie ", "pcie-").replace(" x", "-x"))
    if own is None or bound == (None, None):
        return rate, None
    generation = min(own[1], bound[0] or own[1])
    lanes = min(int(own[2]), bound[1] or int(own[2]))
    carried = link(generation, lanes)
    return (carried.read, carried) if carried.read < rate else (rate, None)


@functools.lru_cache(maxsize=4096)
def fastest(parts: Parts, operation: str) -> Fastest | None:
    """The fastest part of ``parts``'s classes for ``operation`` that had shipped by its year (of a class none of
    whose parts had shipped yet, its first ones; any to date where no year is stated), on the link its words bound; None
    where the catalogue holds no part of them. A later year never gives a slower part."""
    candidates = _candidates(parts)
    if not candidates:
        return None

    def named(p: Shipped) -> str:  # the class the description names it by: its own (a generation), or its family
        return p.part if p.part in parts.classes else p.family

    first: dict[str, int] = {}
    for p in candidates:
        first[named(p)] = min(p.year, first.get(named(p), p.year))
    shipped = [p for p in candidates if parts.year is None or p.year <= max(parts.year, first[named(p)])]
    found = [Fastest(p, *_capped(p, p.rate(operation), parts.link)) for p in shipped]
    return max(found, key=lambda f: (f.rate, -f.part.year))
