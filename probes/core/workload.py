"""What a benchmark asked for: the operation, transfer size and concurrency of one run."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from probes.core.errors import UnitError
from probes.core.units import Q_, Metric, format_quantity, quantity_from_json, quantity_json, require

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Operation", "Access", "Workload", "MOST_COUNT", "MOST_TRANSFER", "checked_transfer_size"]

# No count a workload states (nodes, processes per node, queue depth, processes) beyond this: a slip, not a system
# (the largest machines have some 160,000 nodes and ten million cores).
MOST_COUNT = 10**7
# No request larger than this: a request is held in one process's memory, and no node has a PiB of it.
MOST_TRANSFER = "1 PiB"


def checked_transfer_size(size: Quantity) -> Quantity:
    """``size`` if a request can be that large; UnitError beyond :data:`MOST_TRANSFER` (a slip of the unit)."""
    most = Q_(MOST_TRANSFER)
    if size > most:
        raise UnitError(f"The transfer size must be at most {MOST_TRANSFER}: a request is held in one process's "
                        f"memory. Got {format_quantity(size, Metric.SIZE)} instead.")
    return size


class Operation(enum.Enum):
    """What a run does: move data (write, read) or one metadata operation per file or directory.

    ``open`` is mdtest's "File read": open, read the file's few bytes, close; ``read+write``
    reads and writes at once (its workload says what share of the bytes it reads).
    """

    WRITE = "write"
    READ = "read"
    MIXED = "read+write"
    CREATE = "create"
    STAT = "stat"
    OPEN = "open"
    RENAME = "rename"
    REMOVE = "remove"
    FIND = "find"

    @property
    def is_metadata(self) -> bool:
        return self not in (Operation.WRITE, Operation.READ, Operation.MIXED)


class Access(enum.Enum):
    """Whether requests follow each other in the file (sequential) or jump (random)."""

    SEQUENTIAL = "sequential"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class Workload:
    """One benchmark configuration.

    ``None`` means the output did not say: ``nodes=None`` every client node of the
    topology, ``transfer_size=None`` an unknown size (or none: metadata operations),
    ``direct=None`` unknown page-cache use. ``data_set`` is the bytes all processes
    together write or read in one repetition, ``shared_file`` whether they share one file,
    ``shared_directory`` whether metadata operations of all processes go to one directory,
    ``read_share`` the share of the bytes a ``read+write`` workload reads (0.7: 70 % reads).
    """

    operation: Operation
    transfer_size: Quantity | None
    nodes: int | None = None
    ppn: int = 1
    queue_depth: int = 1
    access: Access = Access.SEQUENTIAL
    direct: bool | None = None
    data_set: Quantity | None = None
    shared_file: bool | None = None
    shared_directory: bool | None = None
    read_share: float | None = None

    def __post_init__(self):
        mixed = self.operation is Operation.MIXED
        if mixed != (self.read_share is not None) or (mixed and not 0 < self.read_share < 1):
            raise ValueError("A read+write workload needs the share of its bytes it reads, between 0 and 1 "
                             f"(and no other workload has one). Got {self.read_share!r} for {self.operation.value}.")
        for name, what in (("transfer_size", "The transfer size"), ("data_set", "The data set")):
            value = getattr(self, name)
            if value is None:
                continue
            require(value, Metric.SIZE, what=what, positive=True)
        for name in ("ppn", "queue_depth") + (("nodes",) if self.nodes is not None else ()):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"The {name} of a workload must be a whole number of at least 1. Got {value!r} instead.")

    def describe(self) -> str:
        """A short label such as ``read 1 MiB seq, 10 nodes x 4 ppn``."""
        nodes = "all nodes" if self.nodes is None else f"{self.nodes} node{'s' if self.nodes != 1 else ''}"
        depth = f", qd {self.queue_depth}" if self.queue_depth != 1 else ""
        if self.operation.is_metadata:
            return f"{self.operation.value}, {nodes} x {self.ppn} ppn{depth}"
        size = "? B" if self.transfer_size is None else format_quantity(self.transfer_size, Metric.SIZE)
        access = ("rand" if self.access is Access.RANDOM else "seq") + (" direct" if self.direct else "")
        share = f" ({self.read_share:.0%} reads)" if self.read_share is not None else ""
        return f"{self.operation.value}{share} {size} {access}, {nodes} x {self.ppn} ppn{depth}"

    def to_dict(self) -> dict:
        return {
            "operation": self.operation.value,
            "transfer_size": None if self.transfer_size is None else quantity_json(self.transfer_size),
            "nodes": self.nodes,
            "ppn": self.ppn,
            "queue_depth": self.queue_depth,
            "access": self.access.value,
            "direct": self.direct,
            "data_set": None if self.data_set is None else quantity_json(self.data_set),
            "shared_file": self.shared_file,
            "shared_directory": self.shared_directory,
            "read_share": self.read_share,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Workload":
        return cls(
            operation=Operation(d["operation"]),
            transfer_size=_size(d.get("transfer_size"), "transfer_size"),
            nodes=d.get("nodes"),
            ppn=d.get("ppn", 1),
            queue_depth=d.get("queue_depth", 1),
            access=Access(d.get("access", "sequential")),
            direct=d.get("direct"),
            data_set=_size(d.get("data_set"), "data_set"),
            shared_file=d.get("shared_file"),
            shared_directory=d.get("shared_directory"),
            read_share=d.get("read_share"),
        )


def _size(value, what: str) -> Quantity | None:
    return None if value is None else quantity_from_json(value, Metric.SIZE, what=what)

