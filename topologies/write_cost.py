"""What a write costs behind a server group (copies, parity, amplification) and how the group passes requests on,
with how a topology file states them (``replicas``, ``parity``, ``write_amplification``, ``forwarding``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from probes.core.errors import TopologyError

__all__ = ["Forwarding", "WriteCost", "parse_write_cost", "parse_forwarding"]


class Forwarding(enum.Enum):
    """How a server group passes a request on: bytes stream through (pipeline) or each request is whole first (store)."""

    PIPELINE = "pipeline"
    STORE = "store"


@dataclass(frozen=True, slots=True)
class WriteCost:
    """What one byte a client writes costs behind a server: copies, parity and other amplification (journaling).
    ``parity`` is (data, parity) strips, e.g. (8, 2) for RAID 6 8+2 or erasure coding."""

    replicas: int = 1
    parity: tuple[int, int] | None = None
    amplification: float = 1.0

    @property
    def devices(self) -> float:
        """Bytes the devices store per byte written."""
        data, parity = self.parity or (1, 0)
        return self.replicas * (data + parity) / data * self.amplification

    @property
    def device_requests(self) -> float:
        """Device writes per small write (less than a stripe): the data strip and every parity strip, per replica."""
        parity = self.parity[1] if self.parity else 0
        return self.replicas * (1 + parity) * self.amplification

    @property
    def space(self) -> float:
        """Raw device bytes each byte of data occupies: the copies and the parity strips (not journaling, which is transient)."""
        data, parity = self.parity or (1, 0)
        return self.replicas * (data + parity) / data

    @property
    def servers(self) -> int:
        """Times each byte written crosses the servers (and their NICs): once per replica."""
        return self.replicas

    def __str__(self) -> str:
        parts = [f"{self.replicas} replicas"] if self.replicas > 1 else []
        if self.parity:
            parts.append(f"{self.parity[0]}+{self.parity[1]} parity")
        if self.amplification != 1:
            parts.append(f"{self.amplification:g}x amplification")
        return ", ".join(parts) or "none"


def parse_write_cost(body: dict, source: str, where: str) -> WriteCost:
    """A server group's replicas (whole number), parity ("8+2") and other write amplification (>= 1)."""
    replicas = body.get("replicas", 1)
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        raise TopologyError(source, f"{where}.replicas", f"must be a whole number of at least 1. Got {replicas!r} instead.")
    parity = body.get("parity")
    if parity is not None:
        match = re.fullmatch(r"\s*(\d+)\s*\+\s*(\d+)\s*", parity) if isinstance(parity, str) else None
        if not match or int(match[1]) < 1:
            raise TopologyError(source, f"{where}.parity", "must be data + parity strips as a string, e.g. \"8+2\" "
                                f"(RAID 6 over 10 devices). Got {parity!r} instead.")
        parity = (int(match[1]), int(match[2]))
    amplification = body.get("write_amplification", 1.0)
    if isinstance(amplification, bool) or not isinstance(amplification, (int, float)) or not 1 <= amplification < float("inf"):
        raise TopologyError(source, f"{where}.write_amplification", "must be a number of at least 1 (bytes the devices "
                            f"write per byte of data, e.g. 2 for data journaling). Got {amplification!r} instead.")
    return WriteCost(replicas, parity, float(amplification))


def parse_forwarding(body: dict, source: str, where: str) -> Forwarding:
    """A server group's ``forwarding``: "pipeline" (the default) or "store"."""
    value = body.get("forwarding", Forwarding.PIPELINE.value)
    try:
        return Forwarding(value)
    except ValueError:
        raise TopologyError(source, f"{where}.forwarding", "must be \"pipeline\" (bytes stream through) or \"store\" "
                            f"(each request is received whole before it is passed on). Got {value!r} instead.") from None
