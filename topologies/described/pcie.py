"""The PCIe paths between a GPU and the devices that feed it (NICs, drives), from ``nvidia-smi topo -m``.

Two paths carry data from a NIC or a drive into a GPU's memory. GPUDirect (GDS, GPUDirect RDMA) writes it there
directly, peer to peer: through the PCIe switches the matrix names (PIX, PXB), or through the CPU (PHB, NODE), or
across the link between the sockets too (SYS). The bounce path writes it into host memory and copies it from there
into the GPU: the same links, but what crosses the CPU is memory traffic, which CPUs are built to carry. Each hop
that may bind is a capacity with its source (the dated catalogue's links, socket links and published peer rates);
what nobody stated (a link's generation and width, the platform's socket link) is a range over what shipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Metric, Q_
from probes.readers.nvidia_topo import CONNECTIONS
from topologies.catalogues.achievable import WIDTHS, generations, gpu_ingress, link, peer, socket_links
from topologies.topology import Capacity, Source

if TYPE_CHECKING:
    from probes.readers.nvidia_topo import PcieMatrix

__all__ = ["Device", "Hop", "PciePaths", "paths", "FIRST_GENERATION"]

# GDS needs a GPU of compute capability 6 or later (Pascal, 2016; NVIDIA's answer in NVIDIA/MagnumIO #5), whose
# host links are PCIe 3.0 x16 or later: no GPU on a path here has an older link.
FIRST_GENERATION = "3.0"
# The widths a device's link may have where nobody states it: a data-centre GPU's is x16; a NIC is an x8 or an x16
# card; an NVMe drive has four lanes (U.2, M.2, E1.S).
_WIDTHS = {"gpu": (16, 16), "nic": (8, 16), "drive": (4, 4)}
_STATED = re.compile(r"(\d\.0)\s*x\s*(\d{1,2})")
_CONNECTIONS = tuple(c for c in CONNECTIONS if c != "X")  # what a drive not in the matrix may be from the GPU


@dataclass(frozen=True)
class Device:
    """A GPU, NIC or drive on a path, what its own PCIe link carries, and the oldest PCIe generation it may be."""

    name: str
    kind: str
    link: Capacity
    generation: str


@dataclass(frozen=True)
class Hop:
    """One stretch of a path that may bind: ``what`` it is (a link, a crossing of the CPU) and what it carries."""

    what: str
    capacity: Capacity


@dataclass(frozen=True)
class PciePaths:
    """The hops of the two paths from ``sources`` into the ``gpu``: ``direct`` (GPUDirect, peer to peer) and
    ``bounce`` (into host memory, then into the GPU); ``connection`` what lies between them (PIX ... SYS);
    ``year`` the platform's, where stated; ``assumptions`` what the ranges rest on."""

    gpu: Device
    sources: tuple[Device, ...]
    connection: str
    direct: tuple[Hop, ...]
    bounce: tuple[Hop, ...]
    year: int | None
    assumptions: tuple[str, ...]


def paths(matrix: PcieMatrix, gpu: str, sources: list[str], *, year: int | None = None,
          links: dict[str, str] | None = None) -> PciePaths:
    """The two paths from ``sources`` into ``gpu`` as ``matrix`` connects them.

    ``sources`` are the matrix's NICs by name (NIC0, mlx5_0) or devices it does not list, as ``NAME=CONNECTION``
    (a drive: ``nvme0=PIX``); ``links`` states a device's link (``{"GPU1": "4.0x16"}``); ``year`` the platform's, so
    that only what had shipped by then is in a range.

    Raises
    ------
    InputError
        If a device is not in the matrix, is not a GPU where one is asked, the sources stand at different distances
        from the GPU, a source is named twice, a stated link or connection cannot be read, ``year`` precedes the parts
        of the paths, or a link is stated for a device off the paths (one the matrix lacks: ToolOutputError).
    """
    drives = {source.partition("=")[0] for source in sources if "=" in source}
    links = {name if name in drives else matrix.name(name): said for name, said in (links or {}).items()}
    if matrix.kind(gpu) != "gpu":
        raise InputError(matrix.source, gpu, "is not a GPU of the matrix; give one of "
                         + ", ".join(d for d in matrix.devices if matrix.kind(d) == "gpu"))
    gpu = matrix.name(gpu)
    assumptions: list[str] = []
    own = Device(gpu, "gpu", *_link(gpu, "gpu", links.get(gpu), year, assumptions))
    devices, connections, groups = [], {}, []
    for source in sources:
        name, equals, said = source.partition("=")
        if equals:
            if said.upper() not in _CONNECTIONS:
                raise InputError(source, "", f"expected NAME=CONNECTION, one of {', '.join(_CONNECTIONS)}; found {said!r}")
            _once(name, connections)
            device = Device(name, "drive", *_link(name, "drive", links.get(name), year, assumptions))
            connections[name] = said.upper()
            groups.append([device])
            devices.append(device)
            continue
        name = matrix.name(name)
        _once(name, connections)
        if matrix.kind(name) == "gpu":
            raise InputError(matrix.source, name, "is a GPU: the paths modelled here run from NICs and drives")
        device = Device(name, "nic", *_link(name, "nic", links.get(name), year, assumptions))
        connections[name] = matrix.connection(name, gpu)
        # Ports on one card, or cards behind one switch (PIX), share one link towards a GPU not behind it.
        shared = next((g for g in groups if g[0].kind == "nic" and matrix.connection(g[0].name, name) == "PIX"
                       and connections[name] != "PIX"), None)
        if shared:
            shared.append(device)
        else:
            groups.append([device])
        devices.append(device)
    if not devices:
        raise InputError(matrix.source, "", "no NIC or drive to feed the GPU: name them (NIC0, nvme0=PIX)")
    if len(set(connections.values())) > 1:
        raise InputError(matrix.source, gpu, "the sources stand at different distances from it ("
                         + ", ".join(f"{n} {c}" for n, c in connections.items()) + "): give them one distance at a time")
    stray = sorted(set(links) - {gpu, *connections})
    if stray:
        raise InputError("--link", stray[0], f"is not on the paths: state the link of {gpu} or of a source ("
                         + ", ".join(connections) + ")")
    connection = next(iter(connections.values()))
    feeding = Hop(_joined(groups) + " PCIe link" + ("s" if len(groups) > 1 else "")
                  + (" (shared: PIX)" if any(len(g) > 1 for g in groups) else ""), _sum([g[0].link for g in groups]))
    into = Hop(f"{gpu}'s PCIe link", own.link)
    direct, bounce = _crossings(connection, [feeding.capacity, into.capacity], own, year, assumptions)
    return PciePaths(own, tuple(devices), connection, (feeding, *direct, into), (feeding, *bounce, into), year,
                     tuple(dict.fromkeys(assumptions)))


def _once(name: str, named: dict[str, str]) -> None:
    """Refuse a source named twice (NIC0 twice, or as NIC0 and as its legend's mlx5_0): its link would count twice."""
    if name in named:
        raise InputError("--from", name, "is named twice: each source feeds the GPU over its one link")


def _joined(groups: list[list[Device]]) -> str:
    """The sources' links as people name them: "NIC0's", "NIC0+NIC1's" for ports sharing one link."""
    return ", ".join("+".join(d.name for d in group) + "'s" for group in groups)


def _crossings(connection: str, links: list[Capacity], gpu: Device, year: int | None,
               assumptions: list[str]) -> tuple[list[Hop], list[Hop]]:
    """The hops crossing the CPU: on the direct path as peer traffic, on the bounce path as memory traffic."""
    if connection in ("PIX", "PXB"):
        return [], []
    best = min(c.ends[1] for c in links)  # peer traffic through the CPU carries no more than the links either side
    if connection in ("PHB", "NODE"):
        published = peer("PHB")
        through = Capacity.ranged(min(published.least, best), best, Metric.BANDWIDTH,
                                  Source("measured", f"peer traffic through a CPU, as published: {published.source}"))
        return [Hop(f"peer to peer through the CPU ({connection})", through)], []
    published = peer("SYS")
    across = Capacity.ranged(published.least, min(published.most, best), Metric.BANDWIDTH,
                             Source("measured", f"peer traffic across the socket link, as published: {published.source}"))
    first = link(gpu.generation, 1).year
    shipped = [s for s in socket_links() if first <= s.year <= (year or 9999)]
    if not shipped:
        raise InputError("--year", str(year), f"achievable.toml holds no socket link that shipped from {first} (PCIe "
                         f"{gpu.generation}'s first year, {gpu.name}'s) to {year}: give the platform's year")
    memory = Capacity.ranged(min(s.read for s in shipped), max(s.read for s in shipped), Metric.BANDWIDTH,
                             Source("unstated", "the platform's socket link for memory traffic, any of: "
                                    + ", ".join(f"{s.name} ({s.year})" for s in shipped) + " (achievable.toml)"))
    assumptions.append(f"the platform's socket link not stated: any that shipped {min(s.year for s in shipped)} to "
                       f"{max(s.year for s in shipped)}, from {min(shipped, key=lambda s: s.read).name} to "
                       f"{max(shipped, key=lambda s: s.read).name}")
    return [Hop("socket link, peer to peer (SYS)", across)], [Hop("socket link, memory traffic (SYS)", memory)]


def _link(name: str, kind: str, stated: str | None, year: int | None, assumptions: list[str]) -> tuple[Capacity, str]:
    """What ``name``'s own link carries and its oldest generation: the stated generation and width's, else a range
    over those shipped by ``year`` (a GPU's least: what a GPU's link of that generation was measured to take in)."""
    if stated is not None:
        found = _STATED.fullmatch(stated.strip().lower())
        if found is None or found[1] not in generations() or int(found[2]) not in WIDTHS:
            raise InputError(name, stated, f"expected a link as GENERATION x WIDTH, WIDTH one of "
                             f"{', '.join(map(str, WIDTHS))}, e.g. 4.0x16")
        rate = link(found[1], int(found[2])).read
        measured = gpu_ingress(found[1]) if kind == "gpu" and found[2] == "16" else None
        note = f"PCIe {found[1]} x{found[2]}, as stated; achievable from the catalogue"
        if measured and measured[0] < rate:
            return Capacity.ranged(measured[0], rate, Metric.BANDWIDTH,
                                   Source("datasheet", f"{note}; least: {measured[1]}")), found[1]
        return Capacity(rate, Metric.BANDWIDTH, Source("datasheet", note)), found[1]
    shipped = [g for g in generations() if g >= FIRST_GENERATION and link(g, 1).year <= (year or 9999)]
    if not shipped:
        raise InputError("--year", str(year), f"no PCIe {FIRST_GENERATION} or later had shipped by then (GPUDirect's "
                         "GPUs have such links): give the platform's year")
    narrow, wide = _WIDTHS[kind]
    low, high = link(shipped[0], narrow).read, link(shipped[-1], wide).read
    measured = gpu_ingress(shipped[0]) if kind == "gpu" else None
    if measured:
        low = min(low, measured[0])
    assumptions.append(f"{name}'s link not stated: PCIe {shipped[0]} to {shipped[-1]}, x{narrow}"
                       + (f" to x{wide}" if wide != narrow else "") + (f" (shipped by {year})" if year else ""))
    return Capacity.ranged(low, high, Metric.BANDWIDTH, Source("unstated", f"PCIe {shipped[0]} x{narrow} to {shipped[-1]} "
                           f"x{wide}" + (f"; least: {measured[1]}" if measured else ""))), shipped[0]


def _sum(capacities: list[Capacity]) -> Capacity:
    """Links side by side: their rates added, end by end; stated if every one is."""
    low = sum((c.ends[0] for c in capacities), Q_(0, "GB/s"))
    high = sum((c.ends[1] for c in capacities), Q_(0, "GB/s"))
    source = capacities[0].source if len(capacities) == 1 else Source(
        "unstated" if any(c.source.kind == "unstated" for c in capacities) else "datasheet", "the links together")
    return Capacity.ranged(low, high, Metric.BANDWIDTH, source) if low != high else Capacity(high, Metric.BANDWIDTH, source)
