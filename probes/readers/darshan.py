"""Read a Darshan log (the binary log Darshan 3.x writes for every job) into bandwidth runs, one per module.

Darshan records what a real application's job did: per module (POSIX, MPI-IO, STDIO) the bytes, the
time, the access sizes, which files were shared across processes; on Lustre the stripes and the OSTs.
PyDarshan (``pip install 'iobound[darshan]'``) reads the log; this module turns what it reports into
the common results form, so that ``iobound read`` and ``check`` take a job like a benchmark.

The log is read by PyDarshan in a child Python (:mod:`probes.readers.darshan_extract` says why), which hands
back plain numbers as JSON; a crash or an ``Error:`` line of darshan-util becomes one line of refusal, and
:func:`runs_from` builds the runs.

Runs
----
One per module (POSIX, MPI-IO, STDIO) that moved bytes, labelled ``"<module> <operation>"``:
``"POSIX write"``, ``"MPI-IO read"``, ``"STDIO read+write"``. The operation is write or read where the
module moved bytes one way only, else read+write with the share of its bytes read. One sample: the
bandwidth Darshan derives, ``agg_perf_by_slowest`` in MiB/s (2^20 bytes per second): all the module's
bytes over the I/O time of the slowest process (darshan-util's accumulator; the "I/O performance
estimate" of PyDarshan's summary and ``agg_perf_by_slowest`` of ``darshan-parser --perf``). The
workload: the dominant transfer size (see the ``transfer_size`` tag), nodes and processes per node where
the log records the nodes (else nodes None, ppn 1 and the job's processes in the run's placement, as for
io500), random access where fewer than half the POSIX requests went forward in the file, shared_file where
most of the bytes went to files shared across processes, the data set (the bytes moved), direct I/O unknown.

Records and tags
----------------
Every run's placement holds the job's processes, and its :class:`probes.core.records.Job` what the log
counted: the job's id, wall time, log format and Lustre files (stripe sizes and counts, the OSTs they were
striped over: where the LUSTRE module recorded them), and the module's bytes, times, requests, metadata
counters (a counter Darshan did not record, -1 in the log, is None; Darshan 3.x records no creates),
access-size histogram (requests per Darshan bin: a bin holds sizes above the previous bin's bound up to its
own, K, M, G being 2^10, 2^20, 2^30 bytes, ``DARSHAN_BUCKET_INC``: 100 B goes to 0_100, 101 B to 100_1K,
1 MiB to 100K_1M), common access sizes, file categories and (POSIX) the file system's block size as Darshan
found it (``st_blksize`` or Lustre's stripe size) with the requests that did not start on it.

The tags say in words, for every run of a job:

- ``nodes``: only where the nodes are not the workload's: ``"unknown: the log does not record them;
  check --nodes N gives them"``, or why the hosts DXT names do not give them.
- ``nodes_from``: where the workload's nodes come from (the distinct hosts DXT recorded for every rank).
- ``partial``: the modules whose records the runtime cut short (it ran out of memory): their counts are
  lower bounds.
- ``no_bandwidth``: the POSIX, MPI-IO or STDIO modules with records but no run, and why (``"STDIO: moved
  no bytes"``).
- ``unmodelled``: the modules whose I/O goes around those three (DFS and DAOS, DAOS's file system and object
  store) that moved bytes, and what they moved: iobound does not model them, so that I/O is not judged.

and for every run of a module:

- ``estimate``: which bandwidth estimate the sample is.
- ``transfer_size``: how the workload's transfer size was chosen: the most frequent common access size in
  the histogram's bin with the most requests, or else the mean request size (bytes / requests).
- ``access``: how random or sequential was judged (POSIX's sequential requests), or that the module does
  not record it (sequential assumed).
- ``no_ceiling``: where the job moved more bytes through one of the ``unmodelled`` modules than through this
  one: the run's rate is not what the job's I/O got, so it is held to no ceiling (``iobound check`` says so).
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import replace
from pathlib import Path

from probes.core.errors import ToolOutputError
from probes.core.records import Job, Lustre, Placement
from probes.core.run import Origin, Run
from probes.core.units import Q_, Metric, format_quantity
from probes.core.workload import Access, Operation, Workload
from probes.readers.darshan_extract import COUNTS, INSTALL, MODULES, NOT_A_LOG, PREFIX, looks_like, read_in_child

__all__ = ["looks_like", "parse", "runs_from", "FORMAT", "INSTALL"]

# What iobound read says it reads.
FORMAT = "Darshan log (3.x; pip install 'iobound[darshan]')"
# The bandwidth's unit: darshan-util divides the bytes by 1048576.0 (darshan-logutils-accumulator.c).
UNIT = "MiB/s"
ESTIMATE = ("agg_perf_by_slowest (darshan-util, the 'I/O performance estimate' of PyDarshan and "
            "darshan-parser --perf): all the module's bytes / io_time")

# Per module, its requests (every kind of read and write it counts).
_REQUESTS = {"POSIX": ("POSIX_{}S",), "STDIO": ("STDIO_{}S",),
             "MPI-IO": ("MPIIO_INDEP_{}S", "MPIIO_COLL_{}S", "MPIIO_SPLIT_{}S", "MPIIO_NB_{}S")}
# The access-size histogram's bins (DARSHAN_BUCKET_INC) and the largest size each holds.
BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS")
_BIN_TOPS = (100, 2**10, 10 * 2**10, 100 * 2**10, 2**20, 4 * 2**20, 10 * 2**20, 100 * 2**20, 2**30, math.inf)
_HISTOGRAM = {"POSIX": "POSIX_SIZE_{}_{}", "MPI-IO": "MPIIO_SIZE_{}_AGG_{}"}
# darshan-util's file categories (enum darshan_file_category in darshan-logutils.h).
_ALL, _UNIQUE, _SHARED, _PARTLY_SHARED = 0, 4, 5, 6


def parse(data: bytes, *, source: str) -> list[Run]:
    """The runs of the job a Darshan log records: one per module (POSIX, MPI-IO, STDIO) that moved bytes.

    Parameters
    ----------
    data : the log's bytes (the registry reads them within :func:`probes.core.inputs.open_input`'s limit).
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        As the module's docstring says: labelled ``"<module> <operation>"``, one sample in MiB/s.

    Raises
    ------
    ToolOutputError
        One line: if PyDarshan is not installed (saying ``pip install 'iobound[darshan]'``), if darshan-util
        cannot read the log (corrupt, truncated, a format it does not know), or if the log holds no bytes
        moved through POSIX, MPI-IO or STDIO.
    """
    import importlib.util

    if importlib.util.find_spec("darshan") is None:
        raise ToolOutputError(source, "", f"a Darshan log; reading it needs PyDarshan: {INSTALL}")
    if not looks_like(data):
        raise ToolOutputError(source, "", NOT_A_LOG)
    with tempfile.TemporaryDirectory(prefix="iobound-darshan-") as folder:
        path = Path(folder) / "job.darshan"
        path.write_bytes(data)
        summary = read_in_child(path, len(data), source)
    return runs_from(summary, source=source)


def runs_from(found: dict, *, source: str) -> list[Run]:
    """The runs of what :func:`probes.readers.darshan_extract.extract` found in a log: a pure function of its JSON, the reader's other half.

    Raises
    ------
    ToolOutputError
        If no POSIX, MPI-IO or STDIO module moved bytes (the message names the modules the log holds).
    """
    job = found["job"]
    processes = job["nprocs"]
    if processes < 1:
        raise ToolOutputError(source, "job", f"the log records {processes} processes; expected at least 1")
    nodes, ppn, tags = _placement(processes, found["hosts"])
    counted = dict(job_id=job["jobid"], run_time=Q_(job["run_time"], "s"), log_format=job["log_ver"],
                   lustre=_lustre(found["lustre"]))
    partial = [name for name, info in found["modules"].items() if info["partial"]]
    if partial:
        tags.append(("partial", ",".join(partial) + ": the runtime ran out of memory for records; counts are lower bounds"))
    beside = {module: sum(moved) for module, moved in found["beside"].items() if sum(moved) > 0}
    unmodelled = _unmodelled(found["beside"]) if beside else ""
    if unmodelled:
        tags.append(("unmodelled", unmodelled))
    origin = Origin(path=source, line=None, tool="darshan", tool_version=job["lib_ver"] or None)
    runs, skipped = [], []
    for module in MODULES:
        io = found["io"].get(module)
        if io is None:
            continue
        why = _unreadable(module, io)
        if why:
            skipped.append(f"{module}: {why}")
            continue
        minor = _minor(module, io["derived"]["total_bytes"], beside)
        own = tags + [("no_ceiling", minor)] if minor else tags
        runs.append(_module_run(module, io, processes, nodes, ppn, counted, tuple(own), origin))
    if not runs:
        held = ", ".join(found["modules"]) or "none"
        reason = "; ".join(skipped) if skipped else f"no POSIX, MPI-IO or STDIO records (modules: {held})"
        raise ToolOutputError(source, "modules", f"{reason}; iobound reads the bytes and I/O time of those modules"
                              + (f" (not {unmodelled})" if unmodelled else ""))
    if skipped:
        runs = [replace(run, tags=run.tags + (("no_bandwidth", "; ".join(skipped)),)) for run in runs]
    return runs


def _unmodelled(beside: dict[str, list[int]]) -> str:
    """The modules beside POSIX, MPI-IO and STDIO that moved bytes, what they moved, and why they are not judged."""
    moved = ", ".join(f"{module} ({_size(read)} read, {_size(written)} written)" for module, (read, written)
                      in beside.items() if read + written > 0)
    return f"{moved}: DAOS's own interfaces (its file system, its objects), which iobound does not model"


def _minor(module: str, moved: float, beside: dict[str, int]) -> str:
    """Why a module's run is held to no ceiling ("" where it is not): the job moved more through a module iobound
    does not model (DFS, DAOS) than through this one, whose rate is then not what the job's I/O got."""
    largest = max(beside, key=beside.get, default=None)
    if largest is None or moved >= beside[largest]:
        return ""
    return f"{module} moved {_size(moved)}, the job {_size(beside[largest])} through {largest}, which iobound does not model"


def _size(moved: float) -> str:
    return format_quantity(Q_(moved, "B"), Metric.SIZE)


def _unreadable(module: str, io: dict) -> str:
    """Why a module gives no bandwidth ("" when it gives one)."""
    moved = io["derived"]["total_bytes"]
    perf, seconds = io["derived"]["agg_perf_by_slowest"], io["derived"]["agg_time_by_slowest"]
    if moved <= 0:
        return "moved no bytes"
    if not (math.isfinite(perf) and perf > 0 and math.isfinite(seconds) and seconds > 0):
        return f"moved {moved:.0f} B but recorded no I/O time to divide by"
    return ""


def _module_run(module: str, io: dict, processes: int, nodes: int | None, ppn: int, counted: dict, job_tags: tuple,
                origin: Origin) -> Run:
    """The run of one module: ``counted`` holds what the log records of the whole job (Job's first fields)."""
    counters, fcounters, derived = io["counters"], io["fcounters"], io["derived"]
    prefix = PREFIX[module]
    read, written = counters[f"{prefix}_BYTES_READ"], counters[f"{prefix}_BYTES_WRITTEN"]
    ops = [op for op, moved in (("READ", read), ("WRITE", written)) if moved > 0]
    if len(ops) == 2:
        operation, share = Operation.MIXED, read / (read + written)
    else:
        operation, share = Operation(ops[0].lower()), None
    requests = {op: sum(max(counters.get(name.format(op), 0), 0) for name in _REQUESTS[module]) for op in ("READ", "WRITE")}
    size, how, histograms, common = _transfer_size(module, counters, ops, read + written,
                                                   sum(requests[op] for op in ops))
    categories = io["categories"]
    access, access_tag = _access(module, counters, ops, categories[_ALL]["count"])
    shared = [categories[i] for i in (_SHARED, _PARTLY_SHARED)]
    unique = categories[_UNIQUE]
    shared_bytes = sum(c["read"] + c["written"] for c in shared)
    unique_bytes = unique["read"] + unique["written"]
    slowest = derived["unique_md_only_time_by_slowest"]
    counts = {name: [counters[k] for k in COUNTS[module].get(name, ()) if counters.get(k, -1) >= 0]
              for name in ("opens", "stats", "seeks", "syncs")}
    aligned = counters.get("POSIX_FILE_ALIGNMENT", -1) > 0 and counters.get("POSIX_FILE_NOT_ALIGNED", -1) >= 0
    job = Job(**counted, module=module, bytes_read=Q_(read, "B"), bytes_written=Q_(written, "B"),
              io_time=Q_(derived["agg_time_by_slowest"], "s"),
              **{f"{name}_time": Q_(fcounters[f"{prefix}_F_{name.upper()}_TIME"], "s") for name in ("read", "write", "meta")},
              meta_time_by_slowest=Q_(slowest, "s") if math.isfinite(slowest) and slowest >= 0 else None,
              requests_read=requests["READ"], requests_written=requests["WRITE"],
              **{name: sum(values) if values else None for name, values in counts.items()},
              access_sizes_read=histograms.get("READ", ()), access_sizes_write=histograms.get("WRITE", ()),
              common_access_sizes=common, files=categories[_ALL]["count"], shared_files=sum(c["count"] for c in shared),
              unique_files=unique["count"], shared_bytes=Q_(shared_bytes, "B"), unique_bytes=Q_(unique_bytes, "B"),
              file_alignment=Q_(counters["POSIX_FILE_ALIGNMENT"], "B") if aligned else None,
              unaligned_requests=counters["POSIX_FILE_NOT_ALIGNED"] if aligned else None,
              stream_opens=io["streams"]["opens"], stream_stats=io["streams"]["stats"],
              stream_meta_time=Q_(io["streams"]["meta_time"], "s"))
    tags = [("estimate", ESTIMATE), ("transfer_size", how), ("access", access_tag)]
    # Darshan calls a one-process job's files shared (opened by every process): they are that process's own.
    workload = Workload(operation=operation, transfer_size=size, nodes=nodes, ppn=ppn, access=access,
                        data_set=Q_(read + written, "B"), read_share=share,
                        shared_file=processes > 1 and shared_bytes > unique_bytes)
    label = f"{module} {operation.value}"
    return Run(label=label, workload=workload, metric=Metric.BANDWIDTH, samples=(derived["agg_perf_by_slowest"],),
               unit=UNIT, origin=origin, tags=job_tags + tuple(tags), durations=(derived["agg_time_by_slowest"],),
               placement=Placement(processes), job=job)


def _transfer_size(module: str, counters: dict, ops: list[str], moved: int, requests: int):
    """The dominant transfer size, how it was chosen, the histogram (requests per bin, per operation) and Darshan's
    common access sizes (bytes, count).

    The histogram's bin with the most requests of the run's operations is the dominant one; the size is the most
    frequent of Darshan's common access sizes in that bin, else the mean request size (bytes / requests).
    """
    histograms: dict[str, tuple[tuple[str, int], ...]] = {}
    common: list[tuple[int, int]] = []
    pattern = _HISTOGRAM.get(module)
    counts = [0] * len(BINS)
    if pattern is not None:
        for op in ("READ", "WRITE"):
            row = [max(counters.get(pattern.format(op, b), 0), 0) for b in BINS]
            histograms[op] = tuple(zip(BINS, row))
            if op in ops:
                counts = [a + n for a, n in zip(counts, row)]
        common = [(counters[f"{PREFIX[module]}_ACCESS{i}_ACCESS"], counters[f"{PREFIX[module]}_ACCESS{i}_COUNT"])
                  for i in range(1, 5)]
        common = [(size, count) for size, count in common if size > 0 and count > 0]
        if any(counts):
            top = max(range(len(BINS)), key=lambda i: (counts[i], i))
            low = _BIN_TOPS[top - 1] if top else 0
            inside = [(count, size) for size, count in common if low < size <= _BIN_TOPS[top]]
            if inside:
                count, size = max(inside)
                return (Q_(size, "B"), f"common access size {size} B (counted {count} times) in the dominant bin {BINS[top]} "
                        f"({counts[top]} of {sum(counts)} requests)", histograms, tuple(common))
            mean = _mean(moved, requests)
            return (mean, f"mean request size (no common access size in the dominant bin {BINS[top]}, "
                    f"{counts[top]} of {sum(counts)} requests)", histograms, tuple(common))
    return _mean(moved, requests), f"mean request size ({module} records no access sizes)", histograms, tuple(common)


def _mean(moved: int, requests: int):
    return Q_(max(round(moved / requests), 1), "B") if requests > 0 else None


def _access(module: str, counters: dict, ops: list[str], files: int) -> tuple[Access, str]:
    """Random where fewer than half the POSIX requests that follow another went forward in the file (Darshan's
    sequential requests: offset above the previous one's; a file's first request follows none, so one per file is
    left out of the count)."""
    if module != "POSIX":
        return Access.SEQUENTIAL, f"{module} does not record whether requests follow each other: sequential assumed"
    total = sum(max(counters[f"POSIX_{op}S"], 0) for op in ops)
    forward = sum(max(counters[f"POSIX_SEQ_{op}S"], 0) for op in ops)
    following = total - files
    random = following > 0 and 2 * forward < following
    return (Access.RANDOM if random else Access.SEQUENTIAL,
            f"{'random' if random else 'sequential'}: {forward} of {total} requests in {files} file(s) went forward "
            "in the file")


def _placement(processes: int, hosts: dict) -> tuple[int | None, int, list[tuple[str, str]]]:
    """Nodes and processes per node from the hosts DXT recorded, where it recorded every rank; else unknown."""
    unknown = "unknown: the log does not record them; check --nodes N gives them"
    if not hosts:
        return None, 1, [("nodes", unknown)]
    ranks = {int(rank) for rank in hosts}
    names = set(hosts.values())
    if ranks != set(range(processes)):
        return None, 1, [("nodes", f"unknown: DXT names {len(names)} host(s) for {len(ranks)} of the {processes} "
                                   "processes only; check --nodes N gives them")]
    if processes % len(names):
        return None, 1, [("nodes", f"unknown: DXT names {len(names)} hosts holding the {processes} processes unevenly; "
                                   "check --nodes N gives them")]
    return len(names), processes // len(names), [("nodes_from", f"{len(names)} distinct hosts DXT recorded for "
                                                                f"every one of the {processes} processes")]


def _lustre(records: list) -> Lustre | None:
    """Where the job's Lustre files lay: stripe settings and the OSTs they were striped over."""
    components = [c for record in records for c in record]
    if not components:
        return None
    sizes = sorted({c["stripe_size"] for c in components if c["stripe_size"] > 0})
    counts = sorted({c["stripe_count"] for c in components if c["stripe_count"] > 0})
    osts = sorted({o for c in components for o in c["osts"] if o >= 0})
    return Lustre(files=len(records), stripe_sizes=tuple(Q_(s, "B") for s in sizes), stripe_counts=tuple(counts),
                  osts=tuple(osts))
