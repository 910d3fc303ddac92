"""The hardware table (hardware.toml): what a description's words for a network or a storage device imply.

io500 and MLPerf Storage descriptions name their parts in free text ("InfiniBand EDR", "2x OPA",
"3DXP/NVMe SSD"); the table turns those words into a port's rate, a device class's bandwidth,
ports per node and round trips, each with its source.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from probes.core.errors import UnitError
from probes.core.units import Q_

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["HARDWARE", "Network", "hardware", "network_ports", "device_classes", "class_rate"]

HARDWARE = Path(__file__).with_name("hardware.toml")
# Where a description's free text lists several things: "3DXP/NVMe SSD", "Ethernet 10Gbps, InfiniBand", "16 + 8";
# not the slash of a rate ("100 Gbit/s Ethernet", "10 Gb/sec").
_PARTS = re.compile(r"\s*(?:[,;+&]|/(?!s(?:ec)?\b)|\band\b)\s*")
_SPEED = re.compile(r"(?<![\d.])(-\s*)?(\d+(?:\.\d+)?)\s*(g|gb|gbit|gbits|gbps|gbe|ge|gige|gigabit|gigabits|m|mb|mbit|mbps)"
                    r"(?![a-z])|(?<![\w.])(-\s*)?(\d+(?:\.\d+)?)\s+ethernet\b")
_PORTS = re.compile(r"(?<![\w.])(\d{1,2})\s*x\s*(?=[a-z0-9])|(?<=[a-z0-9])\s*x\s*(\d{1,2})(?![\w.])|"
                    r"\b(single|dual|twin|quad|octal)\b")
_PORT_WORDS = {"single": 1, "dual": 2, "twin": 2, "quad": 4, "octal": 8}
# The fastest port any network has (InfiniBand XDR, 800 GbE: 800 Gbit/s), with room: a faster one is a typo.
_FASTEST_PORT = Q_(1600, "Gbit/s")
_RDMA_WORDS = ("infiniband", "ib", "opa", "omnipath", "omni-path", "edr", "hdr", "hdr100", "ndr", "ndr200", "fdr", "qdr",
               "xdr", "rdma")
# What follows "4x" when it counts an InfiniBand port's lanes (4X EDR), not ports.
_LANES = re.compile(r"(?:sdr|ddr|qdr|fdr|fdr10|edr|hdr|hdr100|ndr|ndr200|xdr)\b")
_ADAPTERS = re.compile(r"\b(?:ports?|hcas?|hfis?|adapters?|nics?|cards?|rails?)\b")


@dataclass(frozen=True)
class Network:
    """What a network's name says: its per-port rate (low, high), ports per node if stated, and family; ``names``,
    the networks it names: hardware.toml's entries ("infiniband-edr"), or a family and its stated speed ("ethernet 10")."""

    low: Quantity
    high: Quantity
    ports: int | None
    family: str
    why: str
    names: tuple[str, ...] = ()


@functools.cache
def hardware() -> dict:
    """The table of hardware.toml: networks, devices, ports per node and round trips, by the words that name them."""
    import tomllib

    return tomllib.loads(HARDWARE.read_text(encoding="utf-8"))


def _words(text: str) -> str:
    """Lowercase, one space between words, so that phrases match whole words."""
    return " " + re.sub(r"\s+", " ", text.lower().replace("_", " ")).strip() + " "


def _matches(phrase: str, text: str) -> re.Match | None:
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", text)


def _ports(words: str) -> int | None:
    """The ports a network's words count ("2x OPA", "25GbE x2", "dual 25GbE"); None where they count none, or
    where "4x" counts an InfiniBand port's lanes ("4x EDR", as its data sheets write it)."""
    found = _PORTS.search(words)
    if found is None:
        return None
    if found[1] in ("1", "4", "8", "12") and _LANES.match(words, found.end()) and not _ADAPTERS.search(words):
        return None
    return int(found[1] or found[2]) if found[1] or found[2] else _PORT_WORDS[found[3]]


def network_ports(text: str) -> Network | None:
    """The per-port rate a network's description states or implies ("InfiniBand EDR", "2x OPA", "Ethernet
    10Gbps", "8x1gigabit", "100gE", "dual 25GbE"), as a range over every network it names; None when it names none.

    Raises
    ------
    UnitError
        If a speed it states is negative, zero or beyond any network's ("-100 GBit", "0 Gb", "40000 Gbps").
    """
    found = []
    for part in filter(None, _PARTS.split(text.strip().lower().replace("\u2212", "-"))):  # a typeset minus too
        words = _words(part)
        ports = _ports(words)
        speed = _SPEED.search(words)
        if speed:
            sign, number, unit = (speed[1], speed[2], speed[3]) if speed[2] else (speed[4], speed[5], "g")
            rate = Q_(float(number), "Mbit/s" if unit.startswith("m") else "Gbit/s")
            if sign or rate <= 0 or rate > _FASTEST_PORT:
                raise UnitError(f"{text.strip()!r} states a speed no network port has ({'-' if sign else ''}"
                                f"{rate.m_as('Gbit/s'):g} Gbit/s; none carries more than {_FASTEST_PORT.m:g} Gbit/s)")
            family = "rdma" if any(_matches(w, words) for w in _RDMA_WORDS) else "ethernet"
            found.append(Network(rate, rate, ports, family, f"{part.strip()!r} states the speed",
                                 (f"{family} {rate.m_as('Gbit/s'):g}",)))
            continue
        for name, body in hardware()["networks"].items():
            if any(_matches(word, words) for word in body["words"]):
                low, high = (Q_(body["port"]).to("Gbit/s"),) * 2 if isinstance(body["port"], str) else \
                    (Q_(body["port"][0]).to("Gbit/s"), Q_(body["port"][1]).to("Gbit/s"))
                found.append(Network(low, high, ports, body["family"],
                                     f"{part.strip()!r} is {name}: {body['source']}", (name,)))
                break
    if not found:
        return None
    return Network(min(n.low for n in found), max(n.high for n in found),
                   found[0].ports if len(found) == 1 else None,
                   "ethernet" if any(n.family == "ethernet" for n in found) else "rdma", "; ".join(n.why for n in found),
                   tuple(name for n in found for name in n.names))


def device_classes(text: str) -> tuple[str, ...]:
    """The device classes of hardware.toml a storage type names ("NVMe SSD" -> nvme; "3DXP/NVMe SSD" ->
    optane-ssd, nvme; "SSD-HDD" -> ssd, hdd); empty when it names none."""
    table = hardware()["devices"]
    classes: list[str] = []
    for part in filter(None, _PARTS.split(text.strip().lower())):
        words = _words(part)
        spans = {name: [m.span() for w in body["words"] if (m := _matches(w, words))] for name, body in table.items()}
        spans = {name: found for name, found in spans.items() if found}
        inside = {name for name, found in spans.items()
                  if all(any(o[0] <= s[0] and s[1] <= o[1] and o != s for other, of in spans.items() if other != name
                             for o in of) for s in found)}
        chosen = [name for name in spans if name not in inside]
        if any(table[name].get("flash") for name in chosen):
            chosen = [name for name in chosen if not table[name].get("generic")]
        classes += [name for name in chosen if name not in classes]
    return tuple(classes)


def class_rate(device: dict, key: str) -> tuple[Quantity, Quantity]:
    """A device class's range for ``key`` (read_bandwidth ...): its own, else its bandwidth, else the span of both."""
    found = [device[k] for k in (key, "bandwidth") if k in device][:1] or [device["read_bandwidth"], device["write_bandwidth"]]
    ends = [Q_(x) for pair in found for x in pair]
    return min(ends), max(ends)
