"""A benchmark planned from the system: the data set against every cache on its path, the flags that defeat
the caches it cannot outgrow, nodes and processes up to the knee, repetitions for a target interval, and each
phase's time at the ceiling and which limit, size or time, ends it.

The caches are counted from the topology: the clients' memory (of the nodes that run), each server group's
on the way to the data (the nearest servers' memory, any farther tier's as a controller's cache). A memory
the topology does not state is a range (:data:`NODE_MEMORY`), never a guess. A cache can hold at most its
memory of a data set, so the share it may serve is at most memory / data set; a sequential read in the
order of the writes finds none of it once the data set is larger (seeds/000, 001: data sets 2x the aggregate
memory, new data for every read). Direct I/O passes only the client's cache by (seeds/001), so a read of
data in the servers' memory needs a data set larger than that memory, or the servers' caches dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Q_, canonical
from probes.core.workload import Access, Operation, Workload
from models.plan_phases import CLIENT, CONTROLLER, DEFEATS, DROPPED, SERVER, Benchmark, Phase
from topologies.topology import Kind, Topology

if TYPE_CHECKING:
    from pint import Quantity
    from models.ceiling import Ceiling
    from models.predict import Model

__all__ = ["NODE_MEMORY", "ENTRY_FOOTPRINT", "cached_share", "Cache", "Settings", "PhasePlan", "Plan", "plan",
           "caches_on_path", "repetitions", "scale", "expected_share"]

# A node's memory where the topology states none (assumption): from a small virtual machine to a large-memory node.
NODE_MEMORY = ("16 GiB", "2 TiB")
# What one file costs a metadata cache (assumption): an inode and a directory entry, from a local file system's
# (about 0.5 KiB) to a parallel file system client's with its locks and layout (about 4 KiB).
ENTRY_FOOTPRINT = ("512 B", "4 KiB")
# The most processes per node a plan tries, in powers of two.
MOST_PPN = 64
# How far a data set outgrows every cache on its path: 5 % past their memory, so that what a cache keeps of its own
# (its metadata, another job's pages) leaves it no room for a whole data set (seeds/000 and 001 used 2x; this counts).
PAST_MEMORY = 1.05
# How long a stonewalled phase's data set lasts at the ceiling, past the stonewall: 10 %, so that the stonewall,
# not the data set, ends it even where the ceiling is reached (io500 sizes its phases so).
PAST_STONEWALL = 1.1


@dataclass(frozen=True)
class Cache:
    """One memory on the path that may serve a phase: where it sits, its group and members, its bytes in all
    (least, most; equal where stated), the means that defeats it in this phase (a key of
    :data:`models.plan_phases.DEFEATS`; "" where none does) and the benchmark's flag for it."""

    layer: str
    group: str
    members: int
    memory: tuple[float, float]
    stated: bool
    means: str = ""
    defeated_by: str = ""

    def to_dict(self) -> dict:
        return {"layer": self.layer, "group": self.group, "members": self.members, "memory_bytes": list(self.memory),
                "stated": self.stated, "means": self.means or None, "defeated_by": self.defeated_by or None}


@dataclass(frozen=True)
class Settings:
    """What the user asks of a plan: the most share a cache may still serve, the efficiency the times are also
    given at, the noise (coefficient of variation; None: not known) and the interval's half-width (relative) the
    repetitions aim at, the least time a phase runs, the stonewall (None: the benchmark's), the slowest rank's lag
    behind the mean, where the user may drop caches (``"clients"``, ``"all"`` or ""), direct I/O, and what one
    reading process asks for (B/s; MLPerf Storage's accelerator at its AU), None where it reads as fast as it can."""

    cached_share: float = 0.1
    efficiency: float = 0.8
    noise: float | None = None
    interval: float = 0.05
    min_time: float = 30.0
    stonewall: float | None = None
    imbalance: float = 0.1
    drop: str = ""
    direct: bool = False
    demand: float | None = None


@dataclass(frozen=True)
class PhasePlan:
    """One phase as planned: its workload and ceiling, its data set (bytes; for metadata, files) in all, per node
    and per process, the caches on its path, the share they may still serve (least, most), the flags it needs and
    what it cannot defeat, its time at the ceiling and at the efficiency (least, most), what ends it, the
    slowest rank's wear-out after a stonewall, what it leaves for a later phase to read: its whole data set,
    or the least it writes by the stonewall (the share it may be served from a cache counts that), and for a read,
    the share a cache is expected to serve over its passes (least, most: :func:`expected_share`; None otherwise)."""

    phase: Phase
    workload: Workload
    ceiling: Ceiling
    amount: float
    per_node: float
    per_process: float
    caches: tuple[Cache, ...]
    cached_share: tuple[float, float]
    flags: tuple[str, ...]
    notes: tuple[str, ...]
    seconds: tuple[float, float]
    seconds_at_efficiency: tuple[float, float]
    ends_by: str
    wear_out: float | None
    written: float
    expected_share: tuple[float, float] | None = None

    @property
    def unit(self) -> str:
        return "files" if self.phase.is_metadata else "B"


@dataclass(frozen=True)
class Plan:
    """A benchmark's plan on a topology: its phases, nodes and processes per node and why, repetitions, the
    bytes it stores against the devices' capacity (None: not stated), and the transfer size's fit ("" for a
    benchmark of metadata alone)."""

    benchmark: Benchmark
    settings: Settings
    phases: tuple[PhasePlan, ...]
    nodes: int
    ppn: int
    scaling: str
    repetitions: int
    repetitions_why: str
    stored: float
    capacity: float | None
    transfer_fit: str


def caches_on_path(topology: Topology, counts: dict[str, int], metadata: bool) -> tuple[Cache, ...]:
    """The memories a workload on the client nodes ``counts`` passes: the clients', then each server group on the
    way (the metadata servers for ``metadata``, else the data servers), the nearest as server memory and any
    farther as a controller's cache."""
    low, high = (canonical(Q_(v)) for v in NODE_MEMORY)
    found = [_cache(CLIENT, topology.group(name), n, low, high) for name, n in counts.items()]
    reached: dict[str, int] = {}
    for name in counts:
        for group, hops in topology.reachable(name).items():
            reached[group] = min(hops, reached.get(group, hops))
    servers = [g for g in topology.of_kind(Kind.SERVER) if g.name in reached]
    serving = [g for g in servers if (g.capacity("metadata") is not None) == metadata] or servers
    nearest = min((reached[g.name] for g in serving), default=0)
    for g in serving:
        layer = SERVER if reached[g.name] == nearest else CONTROLLER
        found.append(_cache(layer, g, g.count, low, high))
    return tuple(found)


def _cache(layer: str, group, members: int, low: float, high: float) -> Cache:
    stated = group.capacity("memory")
    if stated is None or stated.value is None:
        return Cache(layer, group.name, members, (low * members, high * members), False)
    ends = stated.range or (stated.value, stated.value)
    return Cache(layer, group.name, members, tuple(canonical(v) * members for v in ends), True)


def repetitions(noise: float | None, interval: float) -> tuple[int, str]:
    """The least repetitions whose 95 % interval of the mean is within ``interval`` (relative) of it, for runs that
    vary by ``noise`` (a coefficient of variation): Student's t(n-1) x noise / sqrt(n) <= interval."""
    if noise is None:
        return 3, ("noise not known: 3 repetitions, the least that shows a spread; plan again with --noise from "
                   "their spread, or --probes")
    if noise == 0:
        return 2, "no noise: 2 repetitions show that it is none"
    from probes.core.stats import t_quantile

    for n in range(2, 10_000):
        if t_quantile(n - 1) * noise / math.sqrt(n) <= interval:
            return n, (f"noise {noise:.1%}: {n} repetitions give a 95 % interval within ±{interval:.1%} of the mean "
                       f"(t({n - 1}) x {noise:.1%} / sqrt({n}))")
    return 10_000, f"noise {noise:.1%} is too large for ±{interval:.1%}: 10,000 repetitions and still short"


def scale(model: Model, workload: Workload, clients: tuple[str, ...] | None, *, nodes_given: bool,
          ppn_given: bool) -> tuple[Workload, str]:
    """The workload with the least nodes (of one client group) and processes per node at which its ceiling stops
    growing, where the user did not give them, and why, in words."""
    from models.ceiling import TIE

    chosen, _ = model.nodes(workload, clients)
    reasons = []

    def value(w: Workload) -> float:
        return canonical(model.ceiling(w, clients, caches=False).value)

    if len(chosen) == 1 and workload.nodes is not None:
        count = model.topology.group(chosen[0]).count
        if not nodes_given:  # the least nodes that reach the whole group's ceiling
            full = value(workload)
            low, high = 0, count  # the ceiling at high reaches full; at low (0: none) it does not
            while high - low > 1:
                middle = (low + high) // 2
                low, high = (low, middle) if value(replace(workload, nodes=middle)) >= full * (1 - TIE) else (middle, high)
            from models.scaling import knee

            short = high < count and workload.operation is not Operation.MIXED  # the sentence names the knee only then
            found = knee(model, workload, clients) if short else None
            workload = replace(workload, nodes=high)
            reasons.append(f"{high} of {count} nodes of {chosen[0]} reach the ceiling of all {count}: it "
                           f"{found}" if found else
                           f"the ceiling grows up to all {count} nodes of {chosen[0]}")
    if not ppn_given:
        best, at = -1.0, 1
        for ppn in (2 ** i for i in range(int(math.log2(MOST_PPN)) + 1)):
            v = value(replace(workload, ppn=ppn))
            if v > best * (1 + TIE):
                best, at = v, ppn
        workload = replace(workload, ppn=at)
        reasons.append(f"{at} process{'es' if at > 1 else ''} per node: more, up to {MOST_PPN}, do not raise the ceiling")
    return workload, "; ".join(reasons) or "nodes and processes per node as given"


def cached_share(memories: list[tuple[float, float]], amount: float, metadata: bool) -> tuple[float, float]:
    """The least and most share of ``amount`` (bytes, or files where ``metadata``) the caches of ``memories`` (each its
    least and most bytes) could serve: the least memory over the largest footprint; the most, the most over the least."""
    footprint = [canonical(Q_(v)) for v in reversed(ENTRY_FOOTPRINT)] if metadata else [1.0, 1.0]
    return tuple(min(1.0, math.fsum(m[end] for m in memories) / (amount * footprint[end])) for end in (0, 1))


def plan(model: Model, benchmark: Benchmark, workload: Workload, settings: Settings,
         clients: tuple[str, ...] | None = None, *, nodes_given: bool = False, ppn_given: bool = False,
         ops: tuple[Operation, ...] | None = None) -> Plan:
    """The plan of ``benchmark`` for ``workload`` (its nodes, processes, transfer size) on ``model``'s topology."""
    topology = model.topology
    block = topology.block_size()
    size = workload.transfer_size or block or Q_(1, "MiB")
    workload = replace(workload, transfer_size=size)
    workload, why = scale(model, workload, clients, nodes_given=nodes_given, ppn_given=ppn_given)
    phases = [p for p in benchmark.phases if ops is None or p.operation in ops or
              (p.reads and any(q.name == p.reads and q.operation in ops for q in benchmark.phases))]
    if not phases:
        names = ", ".join(dict.fromkeys(p.operation.value for p in benchmark.phases))
        raise InputError("--op", "", f"{benchmark.name} runs no {', '.join(o.value for o in ops or ())}: its phases "
                         f"are {names}")
    reps, reps_why = repetitions(settings.noise, settings.interval)
    done: dict[str, PhasePlan] = {}
    for phase in phases:
        readers = tuple(p for p in phases if p.reads == phase.name)
        done[phase.name] = _phase(model, benchmark, phase, workload, settings, clients, done.get(phase.reads or ""),
                                  readers, reps)
    space = max((g.write_cost.space for g in topology.of_kind(Kind.SERVER)), default=1.0)
    stored = space * math.fsum(p.amount for p in done.values() if not p.phase.is_metadata and p.phase.reads is None)
    nodes = sum(model.nodes(workload, clients)[1].values())  # of every client group that runs it
    data = any(not p.is_metadata for p in phases)
    return Plan(benchmark, settings, tuple(done.values()), nodes, workload.ppn, why, reps, reps_why, stored,
                _capacity(topology), _fit(size, block) if data else "")


def _phase(model: Model, benchmark: Benchmark, phase: Phase, base: Workload, settings: Settings,
           clients: tuple[str, ...] | None, source: PhasePlan | None, readers: tuple[Phase, ...],
           passes: int) -> PhasePlan:
    """One phase: its ceiling, its data set (that of the phase it reads, else sized here for itself and the
    ``readers`` of its data), caches, flags, times, and for a read the share a cache serves over its ``passes``."""
    op = phase.operation
    size = None if op.is_metadata else (Q_(phase.transfer) if phase.transfer else base.transfer_size)
    workload = replace(base, operation=op, transfer_size=size, direct=settings.direct or None,
                       shared_file=phase.shared if not op.is_metadata else None,
                       shared_directory=phase.shared if op.is_metadata else None, data_set=None)
    ceiling = model.ceiling(workload, clients, caches=False)
    high, low = canonical(ceiling.value), canonical(ceiling.least)
    _, counts = model.nodes(workload, clients)
    path = caches_on_path(model.topology, counts, op.is_metadata)
    caches, flags, notes = _defeats(benchmark, phase, path, settings, workload)
    processes = sum(counts.values()) * workload.ppn
    stonewall = settings.stonewall if settings.stonewall is not None else benchmark.stonewall
    # what no flag defeats when this phase's data is read: its own caches, or its readers'
    open_ = max(_open(c) for c in [caches, *(_defeats(benchmark, r, path, settings, workload)[0] for r in readers)])
    amount = source.written if source else _amount(high, caches, open_, settings, stonewall, op.is_metadata, workload,
                                                  processes, base.data_set)
    if any(not c.stated for c in caches) and not op.is_metadata and source is None:
        notes.append("a memory on the path is not stated, so it is taken at its largest "
                     f"({NODE_MEMORY[1]} a node): state it (--set GROUP.memory=SIZE) for a smaller data set")
    if stonewall is not None and source is None and not op.is_metadata:
        notes.append(_io500_assumption(amount, low, settings, stonewall, caches))
    asked = settings.demand * processes if settings.demand and phase.reads else math.inf
    if asked < math.inf:
        notes.append(_fed(asked, high, low, processes))
    seconds = (amount / min(high, asked), amount / min(low, asked))
    at_eff = tuple(s / settings.efficiency for s in seconds)
    ends_by, wear, written = "size", None, amount
    if stonewall is not None and phase.reads is None and at_eff[1] > stonewall:  # reads read all that was written
        # at the ceiling's least favourable end it outlasts the stonewall; at its most, perhaps not
        ends_by = "time" if at_eff[0] > stonewall else "time or size, as the ranges fall"
        wear = stonewall * settings.imbalance / (1 - settings.imbalance)
        written = min(amount, low * settings.efficiency * stonewall)  # the least it leaves: the ceiling's low end
    left = [c for c in caches if not c.means]
    share = cached_share([c.memory for c in left], written, op.is_metadata)
    expected = None
    if phase.reads is not None and not op.is_metadata:
        random = workload.access is Access.RANDOM
        expected = tuple(expected_share(math.fsum(c.memory[end] for c in left), written, passes, random)
                         for end in (0, 1))
        notes.append(_expectation(expected, passes, random))
    nodes = sum(counts.values())
    return PhasePlan(phase, replace(workload, data_set=None if op.is_metadata else Q_(amount, "B")), ceiling, amount,
                     amount / nodes, amount / processes, caches, share, tuple(flags), tuple(notes), seconds, at_eff,
                     ends_by, wear, written, expected)


def expected_share(memory: float, data: float, passes: int, random: bool) -> float:
    """The share of ``passes`` reads of a data set of ``data`` bytes a cache of ``memory`` bytes serves, empty at the
    start (the pages the writes left dropped, as fio's invalidate=1 and sshfs's auto_cache on a changed file do).

    Read in order, a pass finds nothing of a data set larger than the cache (least recently used: each page is
    evicted before its reuse); one that fits is read from the cache from the second pass on. Read uniformly at random
    with replacement (fio's norandommap), with d = data and m = memory / data: after r passes (r x d reads) it holds
    d (1 - e^-r) distinct bytes, so it fills after r* = -ln(1 - m) passes, having served r* - m of them; then each
    read finds it with the chance m (in steady state a cache of m finds m of any policy's reads)."""
    if data <= 0 or memory <= 0:
        return 0.0
    if not random:
        return (passes - 1) / passes if memory >= data else 0.0
    fill = memory / data
    full = -math.log1p(-fill) if fill < 1 else math.inf  # passes until the cache is full
    if passes <= full:
        return (passes - (1 - math.exp(-passes))) / passes
    return ((full - fill) + (passes - full) * fill) / passes


def _expectation(share: tuple[float, float], passes: int, random: bool) -> str:
    """The expected share in words, and the reads it counts."""
    shown = f"{share[0]:.0%}" if math.isclose(*share, abs_tol=0.005) else f"{share[0]:.0%} to {share[1]:.0%}"
    how = ("read uniformly at random (fio's norandommap): a cache of m of the data set serves m of the reads once "
           "full, fewer while it fills" if random else
           "read in order: a cache smaller than the data set evicts each page before its reuse")
    return (f"expected from a cache: {shown} of {passes} pass{'es' if passes > 1 else ''} over the data set from an "
            f"empty cache, {how}")


def _defeats(benchmark: Benchmark, phase: Phase, caches: tuple[Cache, ...], settings: Settings,
             workload: Workload) -> tuple[tuple[Cache, ...], list[str], list[str]]:
    """Each cache with the means that defeats it in this phase, the flags that takes, and notes on what is left."""
    kind = "write" if phase.operation is Operation.WRITE else "read"
    usable = {"direct": settings.direct and bool(benchmark.direct),  # first: asked for, it stands in every phase
              # a node count of None: every node of several client groups
              "other_node": bool(benchmark.other_node) and (workload.nodes or 2) > 1 and phase.reads is not None,
              "fsync": bool(benchmark.fsync) and phase.operation is Operation.WRITE,
              "drop_clients": settings.drop in ("clients", "all") and phase.reads is not None,
              "drop_servers": settings.drop == "all" and phase.reads is not None}
    flags, out = [], []
    for cache in caches:
        means = next((m for m, ok in usable.items() if ok and cache.layer in DEFEATS[m][kind]), "")
        flag = benchmark.flag(means, workload.ppn) if means else ""
        if flag and flag != DROPPED:
            flags.append(flag)
        out.append(replace(cache, means=means, defeated_by=flag))
    notes = []
    left = [c for c in out if not c.means and c.layer != CLIENT]
    if settings.direct and phase.reads is not None and left:
        notes.append("O_DIRECT is not enough: it passes the client's page cache only, and the data read was just "
                     f"written, so {', '.join(f'{c.layer} of {c.group}' for c in left)} may still hold it "
                     "(seeds/001: O_DIRECT reads faster than the network); outgrow them or drop their caches")
    if not settings.drop and phase.reads is not None:
        notes.append("where you are root on the clients and the servers, drop their caches before it: "
                     "--drop-caches all")
    return tuple(out), list(dict.fromkeys(flags)), notes


def _open(caches: tuple[Cache, ...]) -> float:
    """The most bytes the caches no flag defeats hold."""
    return math.fsum(c.memory[1] for c in caches if not c.means)


def _amount(ceiling: float, caches: tuple[Cache, ...], open_: float, settings: Settings, stonewall: float | None,
            metadata: bool, workload: Workload, processes: int, given: Quantity | None) -> float:
    """A data set (bytes; files for metadata) that outgrows every cache on the path (a read in the order of the
    writes then finds none of it), leaves the caches no flag defeats at most ``cached_share`` of it, and runs at
    least the least time (past the stonewall, where the benchmark has one); a whole number of transfers (files)
    per process. Metadata phases are sized by time: the flags defeat their caches. A data set the user ``given``
    is kept (rounded to whole transfers)."""
    least_time = max(settings.min_time, stonewall or 0.0)
    amount = ceiling * least_time * (PAST_STONEWALL if stonewall else 1.0)
    if not metadata:
        every = math.fsum(c.memory[1] for c in caches)
        amount = max(amount, every * PAST_MEMORY, open_ / settings.cached_share if settings.cached_share else 0.0)
        amount = canonical(given) if given is not None else amount
    step = (canonical(workload.transfer_size) if workload.transfer_size is not None and not metadata else 1.0) * processes
    return math.ceil(amount / step) * step


def _io500_assumption(amount: float, ceiling: float, settings: Settings, stonewall: float,
                      caches: tuple[Cache, ...]) -> str:
    """Whether the data a stonewalled write leaves (the least it writes until the stonewall at the efficiency,
    at the ceiling's least favourable end, and at most its data set) outgrows every cache: the assumption io500's
    later read phases rest on (IO500/io500 PR #91)."""
    written = min(amount, ceiling * settings.efficiency * stonewall)
    every = math.fsum(c.memory[1] for c in caches)
    least = math.fsum(c.memory[0] for c in caches)
    from probes.core.units import format_quantity

    shown = format_quantity(Q_(written, "B"))
    if written > every:
        return f"by the stonewall it writes at least {shown}, more than every cache on its path ({format_quantity(Q_(every, 'B'))}): its reads cannot be served from memory"
    return (f"by the stonewall it may write only {shown}, not more than the caches on its path "
            f"({format_quantity(Q_(least, 'B'))} to {format_quantity(Q_(every, 'B'))}): a later read may come from memory")


def _fed(asked: float, high: float, low: float, processes: int) -> str:
    """Whether the storage delivers what the reading processes ask for (MLPerf Storage's accelerators), which then
    bounds the phase's time: MLPerf's own sizing gives only the compute-bound time."""
    from probes.core.units import format_quantity

    shown = format_quantity(Q_(asked, "B/s"))
    if low >= asked:
        return f"the {processes} readers ask for {shown}: the storage delivers it, so they, not it, set the time"
    if high >= asked:
        return f"the {processes} readers ask for {shown}: the storage delivers it only at the ranges' favourable end"
    return (f"the {processes} readers ask for {shown}: the storage delivers at most {high / asked:.0%} of it, so it "
            "sets the time, and the accelerators wait")


def _capacity(topology: Topology) -> float | None:
    """The devices' bytes in all, where every device group states its size; else None."""
    sizes = [(g.capacity("size"), g.count) for g in topology.of_kind(Kind.DEVICE)]
    if not sizes or any(c is None or c.value is None for c, _ in sizes):
        return None
    return math.fsum(canonical(c.value) * n for c, n in sizes)


def _fit(size: Quantity, block: Quantity | None) -> str:
    """The transfer size against the file system's block or stripe size, in words."""
    from probes.core.units import format_quantity

    shown = format_quantity(size)
    if block is None:
        return f"transfer size {shown}: the topology states no block or stripe size (set servers' block_size)"
    ratio = canonical(size) / canonical(block)
    if ratio >= 1 and abs(ratio - round(ratio)) < 1e-9:
        return f"transfer size {shown} is {round(ratio)} x the block size {format_quantity(block)}: whole blocks"
    return (f"transfer size {shown} is not a whole number of blocks of {format_quantity(block)}: each request "
            "touches part of a block (a read-modify-write for writes); use the block size or a multiple")
