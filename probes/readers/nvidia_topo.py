"""Read ``nvidia-smi topo -m`` into how each pair of its devices (GPUs, NICs) is connected.

The matrix names, per pair, what lies between them: NVLink (``NV4``), one PCIe switch (``PIX``), several (``PXB``),
a host bridge (``PHB``), the host bridges of one NUMA node (``NODE``) or the link between sockets (``SYS``; before
2017 written ``SOC``). It is no benchmark result (read_results does not take it): :mod:`topologies.described.pcie`
turns it into PCIe paths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.readers.textlines import beginning

__all__ = ["PcieMatrix", "parse", "FORMAT", "CONNECTIONS"]

FORMAT = "nvidia-smi topo -m"

# What a cell may say, as nvidia-smi's legend explains it (NV# is NVLink with # links).
CONNECTIONS = {
    "X": "itself",
    "PIX": "at most one PCIe switch (no host bridge)",
    "PXB": "several PCIe switches (no host bridge)",
    "PHB": "a PCIe host bridge (the CPU's root complex)",
    "NODE": "the host bridges within one NUMA node",
    "SYS": "PCIe and the link between sockets (QPI, UPI, Infinity Fabric)",
}
_OLD_NAMES = {"SOC": "SYS"}  # nvidia-smi before 2017 (driver 384) wrote the socket link SOC
_CELL = Pattern(r"X|PIX|PXB|PHB|NODE|SYS|SOC|NV\d{1,2}")
# A device's name: GPU0, NIC3, mlx5_0 ... (a row starts with one; the header lists them).
_DEVICE = Pattern(r"[A-Za-z][\w.:-]*")
# The legend's NIC lines (drivers from 2021): "  NIC0: mlx5_0".
_LEGEND = Pattern(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class PcieMatrix:
    """The devices of one ``topo -m`` in its order, what connects each pair (``connection``), each device's NUMA
    node where printed, and the NICs' own names (NIC0 is mlx5_0) where its legend gives them."""

    devices: tuple[str, ...]
    connections: dict[tuple[str, str], str]
    numa: dict[str, str]
    nic_names: dict[str, str]
    source: str

    def connection(self, a: str, b: str) -> str:
        """What lies between devices ``a`` and ``b``: PIX, PXB, PHB, NODE, SYS or NV#."""
        return self.connections[self.name(a), self.name(b)]

    def name(self, device: str) -> str:
        """The matrix's name of ``device`` (its own, or a NIC's as the legend names it: mlx5_0 for NIC0)."""
        if device in self.devices:
            return device
        found = [nic for nic, own in self.nic_names.items() if own == device]
        if not found:
            raise ToolOutputError(self.source, "", f"no device {device!r} in the matrix; it has {', '.join(self.devices)}")
        return found[0]

    def kind(self, device: str) -> str:
        """``gpu`` or ``nic`` (a row named GPU#, or NIC#, mlx5_#, or any other adapter the matrix lists)."""
        return "gpu" if self.name(device).startswith("GPU") else "nic"


def _header(text: str) -> tuple[int, list[str]] | None:
    """The header line's index and the device columns it names (GPU0 ... up to CPU Affinity), None where no line of
    the first 40 is one followed by the row of its first device."""
    lines = text.splitlines()
    for index, line in enumerate(lines[:40]):
        words = line.split()
        if words and words[0].startswith("GPU") and index + 1 < len(lines):
            devices = []
            for word in words:
                if word in ("CPU", "NUMA") or not _DEVICE.fullmatch(word):
                    break
                devices.append(word)
            if devices and lines[index + 1].split()[:1] == devices[:1]:
                return index, devices
    return None


def parse(text: str, *, source: str) -> PcieMatrix:
    """The matrix of ``text`` as printed by ``nvidia-smi topo -m`` (spaces or tabs between cells).

    Raises
    ------
    ToolOutputError
        If no header of device columns is found, a row's cell is not one the legend knows, a device's row is
        missing, or the matrix is not symmetric.
    """
    found = _header(text)
    if found is None:
        raise ToolOutputError(source, "", f"not {FORMAT} output: no header of GPU columns (it begins {beginning(text)})")
    start, devices = found
    lines = text.splitlines()
    connections: dict[tuple[str, str], str] = {}
    numa: dict[str, str] = {}
    for number, line in enumerate(lines[start + 1:start + 1 + len(devices)], start + 2):
        words = line.split()
        if not words or words[0] not in devices:
            raise ToolOutputError(source, f"line {number}", f"expected the row of {devices[len(numa)]}; found "
                                  f"{line.strip()[:60]!r}")
        cells = words[1:1 + len(devices)]
        for column, cell in zip(devices, cells):
            if not _CELL.fullmatch(cell):
                raise ToolOutputError(source, f"line {number}", f"{words[0]} to {column}: expected one of "
                                      f"{', '.join(CONNECTIONS)} or NV#; found {cell!r}")
            connections[words[0], column] = _OLD_NAMES.get(cell, cell)
        if len(cells) < len(devices):
            raise ToolOutputError(source, f"line {number}", f"the row of {words[0]} has {len(cells)} cells of "
                                  f"{len(devices)}")
        rest = words[1 + len(devices):]
        numa[words[0]] = rest[1] if len(rest) >= 2 and rest[1].isdigit() else ""
    missing = [d for d in devices if (d, d) not in connections]
    if missing:
        raise ToolOutputError(source, "", f"no row for {', '.join(missing)}")
    for (a, b), cell in connections.items():
        if connections[b, a] != cell:
            raise ToolOutputError(source, "", f"{a} to {b} is {cell} but {b} to {a} is {connections[b, a]}")
    return PcieMatrix(tuple(devices), connections, numa, dict(_LEGEND.findall(text)), source)
