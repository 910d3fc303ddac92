"""Findings about a real application's job, read from its Darshan log: the part of the system it could use
(on Lustre, the OSTs its files were striped over) and how it used it (request sizes, shared files, metadata).

A job runs once and does what its science needs, so the findings about a benchmark's method (repetitions, run
length, data set against memory) are not said of it; these say what the application could change instead.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from probes.core.errors import TopologyError
from probes.core.records import Job
from probes.core.run import Run
from probes.core.units import Q_, Metric, format_quantity, quantity_json
from probes.core.workload import Operation, Workload
from models.ceiling import Ceiling
from models.predict import Model, unmodelled
from topologies.edit import Change, apply_changes
from topologies.topology import Component, Kind, Topology
from assess.findings.bands import FAR_BELOW, TOLERANCE
from assess.findings.finding import Finding, Part, Severity

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["JOB_CODES", "is_job", "part_of", "job_findings", "histogram", "BIN_BOUNDS", "TARGET_GROUPS", "FEW_TARGETS_GAIN",
           "MOST_BYTES", "UNALIGNED", "METADATA_SHARE", "LARGE"]

JOB_CODES = ("FEW-TARGETS", "SMALL-ACCESSES", "SHARED-FILE-CONTENTION", "METADATA-BOUND", "METADATA-HEAVY",
             "METADATA-FASTER")
# The device group that stands for a Lustre file system's OSTs, one member per OST, is named for them.
TARGET_GROUPS = ("ost", "osts")
# FEW-TARGETS when the ceiling on every OST is at least this many times the one on the OSTs the job used:
# striping wider would then at least double what the hardware allows it.
FEW_TARGETS_GAIN = 2.0
# SMALL-ACCESSES when more than this share of the bytes certainly moved in requests under the block size.
MOST_BYTES = 0.5
# SHARED-FILE-CONTENTION when more than this share of the requests did not start on a block's boundary.
UNALIGNED = 0.5
# METADATA-BOUND, -HEAVY or -FASTER when metadata of its files takes more than this share of the job's I/O time.
METADATA_SHARE = 0.5
# What to do where metadata takes most of a job's I/O time.
FEWER_FILES = ("open and stat fewer files: keep files open across steps, gather many small files into a few (HDF5, an "
               "archive), let one process stat and share the answer, and spread files over directories (lfs mkdir -c "
               "on Lustre)")
# The request size the small ones are compared with: large enough that per-request costs no longer count.
LARGE = Q_(1, "MiB")

# Darshan's access-size bins (probes.readers.darshan.BINS) and the sizes each holds: above the first, up to the second.
BIN_BOUNDS = {"0_100": (0, 100), "100_1K": (100, 2**10), "1K_10K": (2**10, 10 * 2**10), "10K_100K": (10 * 2**10, 100 * 2**10),
         "100K_1M": (100 * 2**10, 2**20), "1M_4M": (2**20, 4 * 2**20), "4M_10M": (4 * 2**20, 10 * 2**20),
         "10M_100M": (10 * 2**20, 100 * 2**20), "100M_1G": (100 * 2**20, 2**30), "1G_PLUS": (2**30, math.inf)}


def is_job(run: Run) -> bool:
    """Whether the run is what an application's job did (a Darshan log), not a benchmark's result."""
    return run.job is not None


def part_of(topology: Topology, run: Run) -> Part:
    """The part of ``topology`` a job could use: on Lustre the OSTs its files were striped over (the device group
    named ``ost`` or ``osts``, one member per OST, cut to that many, and its servers to at most one per OST used);
    otherwise, or where the topology cannot say, the whole system, with the reason."""
    lustre = run.job.lustre
    if lustre is None:
        return Part(topology, "the whole system (the log records no Lustre OSTs)")
    if not lustre.osts:  # data on the MDT, or released files: no OST holds its bytes
        return Part(topology, "the whole system (the log records Lustre files but no OST their data is on)")
    used, highest = len(lustre.osts), max(lustre.osts)
    groups = [g for g in topology.of_kind(Kind.DEVICE) if g.name.lower() in TARGET_GROUPS]
    if len(groups) != 1:
        return Part(topology, f"the whole system (its files used {used} Lustre OST(s), but the topology names no one "
                              f"device group {' or '.join(TARGET_GROUPS)}, one member per OST)")
    group = groups[0]
    if highest >= group.count:
        return Part(topology, f"the whole system (its files used OST index {highest}, beyond the {group.count} members "
                              f"of {group.name}: not the file system it ran on, or not one member per OST)")
    if used == group.count:
        return Part(topology, f"all {used} OSTs of {group.name}, every one of which its files were striped over",
                    (group.name, used, used))
    servers = [(s, used) for s in topology.neighbours(group.name, Kind.SERVER) if used < s.count]
    changes = [Change(Component(group.name, "count"), used, f"{group.name}.count={used}")]
    changes += [Change(Component(s.name, "count"), n, f"{s.name}.count={n}") for s, n in servers]
    behind = "".join(f", and at most {n} of the {s.count} {s.name} servers behind them" for s, n in servers)
    return Part(apply_changes(topology, tuple(changes)),
                f"the {used} of {group.count} OSTs of {group.name} its files were striped over{behind}",
                (group.name, used, group.count))


def job_findings(run: Run, ceiling: Ceiling | None, part: Part, model: Model, whole: Model, *,
                 clients: tuple[str, ...] | None = None, block_size: Quantity | None = None) -> list[Finding]:
    """Every finding about a job's run: ``model`` is the part's, ``whole`` the whole system's, ``ceiling`` the
    run's on the part (None where it has none), ``block_size`` the topology's file-system block size if it states one."""
    checks = (_few_targets(run, ceiling, part, whole, clients), _small_accesses(run, ceiling, model, clients, block_size),
              _contention(run), _metadata(run, model, clients))
    return [f for f in checks if f is not None]


def _few_targets(run: Run, ceiling: Ceiling | None, part: Part, whole: Model,
                 clients: tuple[str, ...] | None) -> Finding | None:
    if ceiling is None or part.targets is None or part.targets[1] >= part.targets[2]:
        return None
    group, used, of = part.targets
    everywhere = whole.ceiling(run.workload, clients)
    gain = (everywhere.least / ceiling.least).m_as("")
    if gain < FEW_TARGETS_GAIN:
        return None
    return Finding(
        "FEW-TARGETS", Severity.WARNING, run.label,
        f"{run.label}: its files were striped over {used} of the {of} OSTs ({group}), so its ceiling is "
        f"{ceiling.shown}; on all {of} it would be {everywhere.shown} ({gain:.3g}x).",
        f"stripe its files over more OSTs before they are written: lfs setstripe -c -1 (all {of}) or -c N on the "
        "output directory; files of one stripe each spread over the OSTs only when there are many more files than OSTs",
        {"group": group, "targets_used": used, "targets": of, "ceiling_used": quantity_json(ceiling.least),
         "ceiling_all": quantity_json(everywhere.least), "gain": gain})


def histogram(run: Run) -> dict[str, int] | None:
    """Requests per Darshan size bin of the run's operations (reads, writes or both), None where not recorded."""
    job = run.job
    rows = [row for row, moved in ((job.access_sizes_read, job.bytes_read), (job.access_sizes_write, job.bytes_written))
            if row and moved > 0]
    if not rows:
        return None
    counts = dict.fromkeys(BIN_BOUNDS, 0)
    for row in rows:
        for name, count in row:
            counts[name] += count
    return counts


def _small_accesses(run: Run, ceiling: Ceiling | None, model: Model, clients: tuple[str, ...] | None,
                    block_size: Quantity | None) -> Finding | None:
    """Most bytes in requests under the block size: at least that share, from what the log says for certain (the
    exact sizes Darshan counted most often, and the bytes the larger bins can hold at most)."""
    job = run.job
    counts = histogram(run)
    block, whose = _block(job, block_size)
    if ceiling is None or counts is None or block is None or run.workload.transfer_size is None:
        return None
    edge = block.m_as("B")
    moved = (job.bytes_read + job.bytes_written).m_as("B")
    most_large = sum(n * min(BIN_BOUNDS[b][1], moved) for b, n in counts.items() if BIN_BOUNDS[b][1] >= edge)
    exact = sum(size * n for size, n in job.common_access_sizes if size < edge)
    small = max(moved - most_large, min(exact, moved))
    if not moved or small / moved <= MOST_BYTES:
        return None
    requests = sum(counts.values())
    # requests in the bins wholly under the block size, and those of Darshan's exact sizes under it in the bin across it
    under = sum(n for b, n in counts.items() if BIN_BOUNDS[b][1] < edge) + \
        sum(n for size, n in job.common_access_sizes if size < edge and _bin_of(size)[1] >= edge)
    large = max(LARGE, block)
    there = model.ceiling(replace(run.workload, transfer_size=large), clients)
    size = format_quantity(run.workload.transfer_size, Metric.SIZE)
    if math.isclose(there.least.m_as("B/s"), ceiling.least.m_as("B/s"), rel_tol=0.01) and \
            math.isclose(there.value.m_as("B/s"), ceiling.value.m_as("B/s"), rel_tol=0.01):
        ceilings = (f"the ceiling is {ceiling.shown} at its {size} requests and at {format_quantity(large, Metric.SIZE)} "
                    "alike: the hardware would carry it, but every request costs system calls, RPCs and locks the "
                    "model leaves out")
    else:
        ceilings = (f"the ceiling at its {size} requests is {ceiling.shown}, at {format_quantity(large, Metric.SIZE)} "
                    f"{there.shown}")
    return Finding(
        "SMALL-ACCESSES", Severity.WARNING, run.label,
        f"{run.label}: at least {math.floor(100 * small / moved)}% of its {format_quantity(Q_(moved, 'B'), Metric.SIZE)} moved in "
        f"requests under the {format_quantity(block, Metric.SIZE)} {whose} ({under:,} of its {requests:,} requests "
        f"were under it); {ceilings}.",
        f"gather the requests into pieces of {format_quantity(large, Metric.SIZE)} or more: buffer in the application, "
        "use MPI-IO collective I/O (collective buffering, romio_cb_write and romio_cb_read = enable), or set HDF5 or "
        f"NetCDF chunks to a multiple of {format_quantity(block, Metric.SIZE)}",
        {"small_share_at_least": small / moved, "bytes": moved, "block_size_B": edge, "block_size_from": whose,
         "requests_under": under, "requests": requests, "ceiling_at_size": quantity_json(ceiling.least),
         "ceiling_at_large": quantity_json(there.least), "large_B": large.m_as("B")})


def _contention(run: Run) -> Finding | None:
    """Many processes writing shared files in small pieces that do not start on the file system's blocks."""
    job, workload = run.job, run.workload
    if job.unaligned_requests is None or not workload.shared_file or job.bytes_written <= 0 \
            or workload.transfer_size is None:
        return None
    alignment, unaligned = job.file_alignment, job.unaligned_requests
    requests = job.requests_read + job.requests_written
    if workload.transfer_size >= alignment or not requests or unaligned / requests <= UNALIGNED:
        return None
    processes = run.placement.processes
    return Finding(
        "SHARED-FILE-CONTENTION", Severity.WARNING, run.label,
        f"{run.label}: {processes} processes wrote {job.shared_files} shared file(s) in "
        f"{format_quantity(workload.transfer_size, Metric.SIZE)} pieces, {unaligned:,} of its {requests:,} requests not "
        f"starting on the file system's {format_quantity(alignment, Metric.SIZE)} blocks: processes whose pieces share "
        "a block take turns for its lock, and each partial block is read, changed and written back.",
        "let a few aggregators write whole, aligned pieces: MPI-IO collective writes with collective buffering "
        "(romio_cb_write = enable, cb_nodes about the stripe count, striping_unit the stripe size), or align each "
        f"process's part to {format_quantity(alignment, Metric.SIZE)}; or write one file per process",
        {"processes": processes, "unaligned_requests": unaligned, "requests": requests,
         "alignment_B": alignment.m_as("B"), "transfer_size_B": workload.transfer_size.m_as("B")})


def _metadata(run: Run, model: Model, clients: tuple[str, ...] | None) -> Finding | None:
    """Opens and stats of its files (not the standard streams) that take most of the I/O time in Darshan's own measure:
    METADATA-BOUND where the metadata ceiling explains that time (their rate is at it, or below it by no more than
    the model's usual omissions), METADATA-HEAVY where the servers could do them far faster (or the topology states
    no rate), METADATA-FASTER where they ran faster than the ceiling allows (its figure, or the file system, is wrong)."""
    job = run.job
    if job.module == "MPI-IO":  # MPI-IO's opens are POSIX's, counted there
        return None
    io_time = job.io_time.m_as("s")
    processes = run.placement.processes
    measured = (job.meta_time - job.stream_meta_time).m_as("s") / processes
    ops = {op: n - streams for op, n, streams in ((Operation.OPEN, job.opens, job.stream_opens),
                                                  (Operation.STAT, job.stats, job.stream_stats)) if n and n > streams}
    if not ops or io_time <= 0 or measured / io_time <= METADATA_SHARE:
        return None
    needed = _at_ceiling(run.workload, ops, model, clients)
    done = " and ".join(f"{n:,} {op.value}s" for op, n in ops.items())
    over = f"{processes} process{'es' if processes != 1 else ''}"
    took = (f"{run.label}: metadata took {measured:.3g} s per process, {measured / io_time:.0%} of its {io_time:.3g} s "
            f"I/O time (Darshan's metadata time over its {over}), for its {done}")
    evidence = {"operations": {op.value: n for op, n in ops.items()}, "io_time_s": io_time,
                "metadata_time_per_process_s": measured, "at_ceiling_s": None if needed is None else [needed[0], needed[1]]}
    if needed is None:
        return Finding("METADATA-HEAVY", Severity.WARNING, run.label,
                       f"{took}; the topology states no metadata rate to say whether its servers explain that time.",
                       FEWER_FILES, evidence)
    fastest, slowest, where = needed
    at = f"at the metadata ceiling ({where})"
    if measured * (1 + TOLERANCE) < fastest:
        return Finding(
            "METADATA-FASTER", Severity.INFO, run.label,
            f"{took}; {at} they take at least {fastest:.3g} s, {fastest / measured:.3g}x its measured time: the ceiling's metadata "
            "rate is too low, or another file system (a local disk, a memory file system) served those opens.",
            "state the metadata servers' measured rate in the topology, or check which file system holds its files "
            "(darshan-parser gives each record's mount point and file system type)", evidence)
    if measured * FAR_BELOW > slowest:
        return Finding(
            "METADATA-HEAVY", Severity.WARNING, run.label,
            f"{took}; {at} they need only {_span(fastest, slowest)}: the time went to waiting the ceiling does not count (a busy "
            "or stalled metadata server, locks in a shared directory, opens of slow or remote paths).",
            FEWER_FILES, evidence)
    return Finding("METADATA-BOUND", Severity.WARNING, run.label,
                   f"{took}; {at} they take {_span(fastest, slowest)}: metadata binds it.", FEWER_FILES, evidence)


def _at_ceiling(workload: Workload, ops: dict[Operation, int], model: Model,
                clients: tuple[str, ...] | None) -> tuple[float, float, str] | None:
    """Seconds the operations take at the metadata ceiling (at its most, and at its least with ranges) and what sets
    it; None where nothing in the topology limits them."""
    fastest = slowest = 0.0
    where = []
    for op, n in ops.items():
        asked = Workload(op, None, nodes=workload.nodes, ppn=workload.ppn)
        if unmodelled(model.topology, asked, clients):
            return None
        try:
            ceiling = model.ceiling(asked, clients)
        except TopologyError:
            return None
        fastest += n / ceiling.value.m_as("op/s")
        slowest += n / ceiling.least.m_as("op/s")
        where.append(f"{op.value} {ceiling.shown}, {', '.join(ceiling.binding_layers)}")
    return fastest, slowest, "; ".join(where)


def _span(low: float, high: float) -> str:
    return f"{low:.3g} s" if math.isclose(low, high, rel_tol=0.01) else f"{low:.3g}-{high:.3g} s"


def _block(job: Job, block_size: Quantity | None) -> tuple[Quantity | None, str]:
    """The block size small requests are measured against, and whose: the topology's, else the Lustre stripe size
    the log records (one for all files), else the alignment Darshan found."""
    if block_size is not None:
        return block_size, "file-system blocks (the topology's block_size)"
    if job.lustre is not None and len(job.lustre.stripe_sizes) == 1:
        return job.lustre.stripe_sizes[0], "Lustre stripes of its files"
    if job.file_alignment is not None:
        return job.file_alignment, "blocks of its file system (Darshan's file alignment)"
    return None, ""


def _bin_of(size: int) -> tuple[int, float]:
    """The bounds of the Darshan bin that holds requests of ``size`` bytes."""
    return next(bounds for bounds in BIN_BOUNDS.values() if size <= bounds[1])

