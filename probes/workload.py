"""What a benchmark asked for: the operation, transfer size and concurrency of one run."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from probes.errors import UnitError
from probes.units import Metric, Quantity, format_quantity, quantity_from_json, quantity_json, require

__all__ = ["Operation", "Access", "Workload"]


class Operation(enum.Enum):
    """The data operation a run performs; metadata operations come with the metadata models."""

    WRITE = "write"
    READ = "read"


class Access(enum.Enum):
    """Whether requests follow each other in the file (sequential) or jump (random)."""

    SEQUENTIAL = "sequential"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class Workload:
    """One benchmark configuration.

    ``nodes=None`` means every client node of the topology; ``direct=None`` that the
    benchmark's output did not say whether the page cache was bypassed.
    """

    operation: Operation
    transfer_size: Quantity
    nodes: int | None = None
    ppn: int = 1
    queue_depth: int = 1
    access: Access = Access.SEQUENTIAL
    direct: bool | None = None

    def __post_init__(self):
        require(self.transfer_size, Metric.SIZE, what="The transfer size")
        if self.transfer_size.magnitude <= 0:
            raise UnitError(f"The transfer size must be positive. Got {self.transfer_size:~P} instead.")
        for name in ("ppn", "queue_depth") + (("nodes",) if self.nodes is not None else ()):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"The {name} of a workload must be a whole number of at least 1. Got {value!r} instead.")

    def describe(self) -> str:
        """A short label such as ``read 1 MiB seq, 10 nodes x 4 ppn``."""
        nodes = "all nodes" if self.nodes is None else f"{self.nodes} node{'s' if self.nodes != 1 else ''}"
        size = format_quantity(self.transfer_size, Metric.SIZE)
        depth = f", qd {self.queue_depth}" if self.queue_depth != 1 else ""
        access = "rand" if self.access is Access.RANDOM else "seq"
        return f"{self.operation.value} {size} {access}, {nodes} x {self.ppn} ppn{depth}"

    def to_dict(self) -> dict:
        return {
            "operation": self.operation.value,
            "transfer_size": quantity_json(self.transfer_size),
            "nodes": self.nodes,
            "ppn": self.ppn,
            "queue_depth": self.queue_depth,
            "access": self.access.value,
            "direct": self.direct,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Workload":
        return cls(
            operation=Operation(d["operation"]),
            transfer_size=quantity_from_json(d["transfer_size"], Metric.SIZE, what="transfer_size"),
            nodes=d.get("nodes"),
            ppn=d.get("ppn", 1),
            queue_depth=d.get("queue_depth", 1),
            access=Access(d.get("access", "sequential")),
            direct=d.get("direct"),
        )

