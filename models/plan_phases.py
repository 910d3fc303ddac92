"""The benchmarks a plan is made for: the phases each runs, in order, and the flags each has against each cache.

A phase reads data another phase wrote (``reads``) or makes its own; its flags are the benchmark's own
spelling of the means that keep a cache from serving it: a read by another node, an fsync before the
clock stops, direct I/O, and dropping the page caches between phases (root only). What a flag defeats
is in :data:`DEFEATS`; a cache no flag defeats can only be outgrown by the data set.
"""

from __future__ import annotations

from dataclasses import dataclass

from probes.core.workload import Operation

__all__ = ["BENCHMARKS", "Benchmark", "Phase", "DEFEATS", "CLIENT", "SERVER", "CONTROLLER", "DROP_CACHES", "DROPPED"]

# The caches on a workload's path, by where they sit.
CLIENT, SERVER, CONTROLLER = "client page cache", "server memory", "controller cache"
# What each means defeats, for reads and for writes: direct I/O passes only the client's page cache by (seeds/001:
# O_DIRECT reads of 1,480 MiB/s through 10 GbE, served from the servers' memory); an fsync forces the write through
# the page caches but a controller acknowledges it from its own (battery-backed) cache.
DEFEATS = {
    "other_node": {"read": (CLIENT,), "write": ()},
    "fsync": {"read": (), "write": (CLIENT, SERVER)},  # of data: a file's creation is no data to flush
    "direct": {"read": (CLIENT,), "write": (CLIENT,)},
    "drop_clients": {"read": (CLIENT,), "write": ()},
    "drop_servers": {"read": (SERVER,), "write": ()},
}
# A cache dropped between two runs of a benchmark that has no flag for it.
DROPPED = "caches dropped"
# The command that drops a Linux node's page cache, dentries and inodes (root only).
DROP_CACHES = "sync; echo 3 > /proc/sys/vm/drop_caches"


@dataclass(frozen=True)
class Phase:
    """One phase of a benchmark: its name as the benchmark prints it, its operation, the phase whose data it reads
    (None: it writes or creates its own), its transfer size where the benchmark fixes it, and whether it shares one
    file (or, for metadata, one directory)."""

    name: str
    operation: Operation
    reads: str | None = None
    transfer: str | None = None
    shared: bool = False

    @property
    def is_metadata(self) -> bool:
        return self.operation.is_metadata


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's phases and its spelling of each means (empty where it has none: dropping the caches is then a
    command between its runs); ``stonewall``: seconds after which its writing phases stop by time (None: they run
    their data set to the end)."""

    name: str
    phases: tuple[Phase, ...]
    other_node: str = ""
    fsync: str = ""
    direct: str = ""
    drop: str = ""
    stonewall: float | None = None

    def flag(self, means: str, ppn: int = 1) -> str:
        """The benchmark's flag for ``means`` (a key of :data:`DEFEATS`), with the processes per node put in; for
        dropping caches without a flag of its own, the words that say so (:func:`flags_of` leaves them out)."""
        if means.startswith("drop") and not self.drop:
            return DROPPED
        text = {"other_node": self.other_node, "fsync": self.fsync, "direct": self.direct,
                "drop_clients": self.drop, "drop_servers": self.drop}[means]
        return text.format(ppn=ppn)


_W, _R = Operation.WRITE, Operation.READ
_DATA = (Phase("write", _W), Phase("read", _R, reads="write"))
# io500's phases in the order it runs them (its sources, io500.c): the hard IOR phases move 47,008-byte records
# into one shared file; mdtest-hard writes 3,901 bytes into each file of one shared directory.
_IO500 = (
    Phase("ior-easy-write", _W), Phase("mdtest-easy-write", Operation.CREATE),
    Phase("ior-hard-write", _W, transfer="47008 B", shared=True),
    Phase("mdtest-hard-write", Operation.CREATE, shared=True), Phase("find", Operation.FIND),
    Phase("ior-easy-read", _R, reads="ior-easy-write"), Phase("mdtest-easy-stat", Operation.STAT, reads="mdtest-easy-write"),
    Phase("ior-hard-read", _R, reads="ior-hard-write", transfer="47008 B", shared=True),
    Phase("mdtest-hard-stat", Operation.STAT, reads="mdtest-hard-write", shared=True),
    Phase("mdtest-easy-delete", Operation.REMOVE, reads="mdtest-easy-write"),
    Phase("mdtest-hard-read", Operation.OPEN, reads="mdtest-hard-write", shared=True),
    Phase("mdtest-hard-delete", Operation.REMOVE, reads="mdtest-hard-write", shared=True),
)

BENCHMARKS = {
    "ior": Benchmark("ior", _DATA, other_node="-C -Q 1", fsync="-e", direct="-B"),
    "mdtest": Benchmark("mdtest", (Phase("create", Operation.CREATE), Phase("stat", Operation.STAT, reads="create"),
                                   Phase("remove", Operation.REMOVE, reads="create")),
                        other_node="-N {ppn}"),
    # io500 reads with -C -Q 1 and stats with -N 1 itself, and drops the caches between phases when asked (its ini)
    "io500": Benchmark("io500", _IO500, other_node="(io500's own -C -Q 1, -N 1)", fsync="(io500's own -e)",
                       direct="API = POSIX --posix.odirect", drop="drop-caches = TRUE", stonewall=300.0),
    "fio": Benchmark("fio", _DATA, fsync="end_fsync=1", direct="direct=1", drop="exec_prerun"),
    "elbencho": Benchmark("elbencho", _DATA, other_node="--rotatehosts 1", fsync="--sync", direct="--direct",
                          drop="--dropcache"),
    # MLPerf Storage writes its data set once (datagen) and reads it over the epochs of a training run
    "mlperf": Benchmark("mlperf", (Phase("datagen", _W), Phase("training", _R, reads="datagen")),
                        ),
}
