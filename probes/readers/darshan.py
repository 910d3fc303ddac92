"""Read a Darshan log (the binary log Darshan 3.x writes for every job) into bandwidth runs, one per module.

Darshan records what a real application's job did: per module (POSIX, MPI-IO, STDIO) the bytes, the
time, the access sizes, which files were shared across processes; on Lustre the stripes and the OSTs.
PyDarshan (``pip install 'iobound[darshan]'``) reads the log; this module turns what it reports into
the common results form, so that ``iobound read`` and ``check`` take a job like a benchmark.

Why a child process: PyDarshan does not check darshan-util's return codes, and a corrupt or truncated
log kills the interpreter (SIGSEGV after "failed to read name hash", in most of 90 mutated copies of a
sample log) or silently stops a module's records short ("failed to read module POSIX data"). The log is
therefore read by PyDarshan in a child Python, which hands back plain numbers as JSON; a crash or an
``Error:`` line of darshan-util becomes one line of refusal, and :func:`runs_from` builds the runs.

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

and for every run of a module:

- ``estimate``: which bandwidth estimate the sample is.
- ``transfer_size``: how the workload's transfer size was chosen: the most frequent common access size in
  the histogram's bin with the most requests, or else the mean request size (bytes / requests).
- ``access``: how random or sequential was judged (POSIX's sequential requests), or that the module does
  not record it (sequential assumed).
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from probes.core.errors import ToolOutputError
from probes.core.records import Job, Lustre, Placement
from probes.core.run import Origin, Run
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload

__all__ = ["looks_like", "parse", "read_here", "read_apart", "runs_from", "limit_memory", "FORMAT", "INSTALL"]

# What iobound read says it reads.
FORMAT = "Darshan log (3.x; pip install 'iobound[darshan]')"
INSTALL = "pip install 'iobound[darshan]'"
# The bandwidth's unit: darshan-util divides the bytes by 1048576.0 (darshan-logutils-accumulator.c).
UNIT = "MiB/s"
ESTIMATE = ("agg_perf_by_slowest (darshan-util, the 'I/O performance estimate' of PyDarshan and "
            "darshan-parser --perf): all the module's bytes / io_time")

# A log opens with its format version ("3.21", NUL-padded to 8 bytes) and the 64-bit magic number 6567223
# (darshan-log-format.h), little- or big-endian as the writing machine was. All 16 bytes are ASCII or NUL, so
# the sniff works on the decoded head of the file as well as on its bytes.
_HEADER = re.compile(r"\A[0-9]\.[0-9]{2}\x00{4}(?:75d\x00{5}|\x00{5}d57)")
MODULES = ("POSIX", "MPI-IO", "STDIO")
# Per module, the counters' prefix and its requests (every kind of read and write it counts).
_PREFIX = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO"}
_REQUESTS = {"POSIX": ("POSIX_{}S",), "STDIO": ("STDIO_{}S",),
             "MPI-IO": ("MPIIO_INDEP_{}S", "MPIIO_COLL_{}S", "MPIIO_SPLIT_{}S", "MPIIO_NB_{}S")}
# Metadata and other counters in a job's record, where the module records them.
_COUNTS = {"POSIX": {"opens": ("POSIX_OPENS", "POSIX_FILENOS"), "stats": ("POSIX_STATS",), "seeks": ("POSIX_SEEKS",),
                     "syncs": ("POSIX_FSYNCS", "POSIX_FDSYNCS")},
           "MPI-IO": {"opens": ("MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS"), "syncs": ("MPIIO_SYNCS",)},
           "STDIO": {"opens": ("STDIO_OPENS", "STDIO_FDOPENS"), "seeks": ("STDIO_SEEKS",), "syncs": ("STDIO_FLUSHES",)}}
# The names Darshan gives the standard streams' records: no file system serves their opens.
STREAMS = ("<STDIN>", "<STDOUT>", "<STDERR>")
# The access-size histogram's bins (DARSHAN_BUCKET_INC) and the largest size each holds.
BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS")
_BIN_TOPS = (100, 2**10, 10 * 2**10, 100 * 2**10, 2**20, 4 * 2**20, 10 * 2**20, 100 * 2**20, 2**30, math.inf)
_HISTOGRAM = {"POSIX": "POSIX_SIZE_{}_{}", "MPI-IO": "MPIIO_SIZE_{}_AGG_{}"}
# darshan-util's file categories (enum darshan_file_category in darshan-logutils.h).
_ALL, _UNIQUE, _SHARED, _PARTLY_SHARED = 0, 4, 5, 6
# The child's time limit: a minute to start Python and PyDarshan, and 10 s per MiB of log (the largest sample
# log, 449 KiB of 2,048 processes' records, reads in under a second).
_START, _PER_MIB = 60, 10
_CHILD = "from probes.readers.darshan import _child; _child()"
# The address space the child may take: PyDarshan and its libraries map about 1 GiB; a log that inflates beyond
# what a job's records hold stops there with MemoryError, not with the machine's memory.
_CHILD_MEMORY = 4 * 2**30


def looks_like(head: str | bytes) -> bool:
    """Whether the file's first bytes are a Darshan 3.x log's header (its text decoding or its bytes).

    Examples
    --------
    >>> looks_like("3.21\\x00\\x00\\x00\\x0075d\\x00\\x00\\x00\\x00\\x00\\x01")
    True
    >>> looks_like("IOR-3.3.0: MPI Coordinated Test of Parallel I/O")
    False
    """
    if isinstance(head, (bytes, bytearray)):
        head = bytes(head[:16]).decode("latin-1")
    return _HEADER.match(head) is not None


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
        raise ToolOutputError(source, "", "not a Darshan log (expected its header: a version such as '3.21' and "
                              "Darshan's magic number)")
    with tempfile.TemporaryDirectory(prefix="iobound-darshan-") as folder:
        path = Path(folder) / "job.darshan"
        path.write_bytes(data)
        summary = _read_in_child(path, len(data), source)
    return runs_from(summary, source=source)


def _read_in_child(path: Path, size: int, source: str) -> dict:
    """What :func:`_extract` finds in the log, read by PyDarshan in a child Python (see the module's docstring)."""
    root = str(Path(__file__).resolve().parents[2])  # the folder that holds the probes package
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH")))))
    limit = _START + _PER_MIB * size / 2**20
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, env=env, timeout=limit)
    except subprocess.TimeoutExpired:
        raise ToolOutputError(source, "", f"PyDarshan did not finish reading the log within {limit:.0f} s") from None
    errors = done.stderr.decode("utf-8", "replace").strip().splitlines()
    said = _said(errors)
    if done.returncode < 0:
        number = -done.returncode
        name = signal.Signals(number).name if number in set(signal.Signals) else f"signal {number}"
        raise ToolOutputError(source, "", f"darshan-util crashed reading the log ({name}"
                              + (f" after: {said}" if said else "") + "): the log is corrupt or truncated")
    if said is not None:
        raise ToolOutputError(source, "", f"darshan-util: {said}: the log is corrupt or truncated")
    if done.returncode == 0:
        return json.loads(done.stdout)
    last = errors[-1] if errors else f"exit status {done.returncode}"
    if "ModuleNotFoundError" in last and "darshan" in last:
        raise ToolOutputError(source, "", f"a Darshan log; reading it needs PyDarshan: {INSTALL}")
    raise ToolOutputError(source, "", f"PyDarshan cannot read the log ({last}): the log is corrupt or in a format "
                          "it does not know")


def _said(errors: list[str]) -> str | None:
    """What darshan-util said went wrong, from the lines it wrote to stderr; None where it said nothing.

    darshan-util says it there ("Error: unable to inflate darshan log data.") and PyDarshan carries on; a module's
    records then stop short, or the interpreter dies of what follows.
    """
    return next((line.strip().removeprefix("Error:").strip().rstrip(".") for line in errors
                 if line.startswith("Error")), None)


def read_here(path: str) -> dict:
    """What :func:`_extract` finds in a log, read by PyDarshan in this process: for a worker that imported it once
    and reads many logs (``iobound review --darshan``), whose pool replaces it where a log kills it.

    darshan-util's stderr is caught for the log's read alone, so that its ``Error:`` line refuses the log as the
    child's does (see the module's docstring).

    Raises
    ------
    ToolOutputError
        One line: the file is no Darshan log, darshan-util said an error, or PyDarshan raised.
    """
    with open(path, "rb") as file:
        head = file.read(16)
    if not looks_like(head):
        raise ToolOutputError(path, "", "not a Darshan log (expected its header: a version such as '3.21' and "
                              "Darshan's magic number)")
    failure = None
    with tempfile.TemporaryFile() as caught:
        saved = os.dup(2)
        os.dup2(caught.fileno(), 2)
        try:
            found = _extract(path)
        except Exception as exc:  # noqa: BLE001 - whatever PyDarshan raises on a log it cannot read becomes the refusal
            failure = f"{type(exc).__name__}: {exc}".splitlines()[0]
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        caught.seek(0)
        said = _said(caught.read().decode("utf-8", "replace").splitlines())
    if said is not None:
        raise ToolOutputError(path, "", f"darshan-util: {said}: the log is corrupt or truncated")
    if failure is not None:
        raise ToolOutputError(path, "", f"PyDarshan cannot read the log ({failure}): the log is corrupt or in a format "
                              "it does not know")
    return found


def read_apart(path: str) -> dict:
    """What :func:`_extract` finds in a log, read in a child Python of its own: for the log that killed a worker,
    so that the refusal says how it died (the signal, and what darshan-util said before).

    Raises
    ------
    ToolOutputError
        As :func:`read_here`, and where the child crashed.
    """
    return _read_in_child(Path(path), os.path.getsize(path), path)


def limit_memory() -> None:
    """Cap this process's address space as the child's (see ``_CHILD_MEMORY``): a log that inflates beyond what a
    job's records hold stops with MemoryError, not with the machine's memory."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (_CHILD_MEMORY, _CHILD_MEMORY))


def _child() -> None:
    """In the child: read the log named by argv[1] with PyDarshan and write what :func:`_extract` finds as JSON."""
    limit_memory()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever PyDarshan or darshan-util print goes to stderr; stdout carries only the JSON
    json.dump(_extract(sys.argv[1]), out)
    out.close()


def _extract(path: str) -> dict:
    """The numbers iobound uses from a log, as plain JSON values: job, modules, derived metrics, Lustre, DXT hosts, and
    the bytes each of the log's mount points moved.

    The records stay numpy arrays and go to darshan-util's accumulator as they are: PyDarshan's ``to_df`` and
    ``accumulate_records`` pass them through pandas and back, which took most of the read's time.
    """
    import darshan
    from darshan.backend import cffi_backend as backend

    # Closed here, not by the garbage collector: PyDarshan's __del__ closes the log through cffi, whose lock a
    # collection can find held by the read it interrupts (the process then hangs).
    with darshan.DarshanReport(path, read_all=False) as report:
        return _found(report, backend)


def _found(report, backend) -> dict:
    """:func:`_extract`'s numbers from an open report."""
    job = report.metadata["job"]
    found = {"job": {"nprocs": int(job["nprocs"]), "jobid": int(job["jobid"]), "run_time": float(job["run_time"]),
                     "log_ver": str(job.get("log_ver", "")), "lib_ver": str(job["metadata"].get("lib_ver", ""))},
             "modules": {name: {"partial": bool(info["partial_flag"])} for name, info in report.modules.items()},
             "io": {}, "lustre": [], "hosts": {}, "mounts": {}}
    mounts = sorted((m for m, _ in report.mounts), key=len, reverse=True)
    for module in MODULES:
        if module not in report.modules:
            continue
        ids, ranks, counters, fcounters = _records(report, backend, module)
        if not ids:
            continue
        names = backend.counter_names(module), backend.fcounter_names(module)
        files = [report.name_records[i] for i in ids]
        metrics, summed, fsummed = _accumulated(backend, module, ids, ranks, counters, fcounters, int(job["nprocs"]))
        found["io"][module] = {
            "counters": {k: int(v) for k, v in zip(names[0], summed)},
            "fcounters": {k: float(v) for k, v in zip(names[1], fsummed)},
            "derived": {name: float(getattr(metrics, name)) for name in (
                "total_bytes", "agg_perf_by_slowest", "agg_time_by_slowest", "unique_md_only_time_by_slowest")},
            "categories": [{"count": int(c.count), "read": int(c.total_read_volume_bytes),
                            "written": int(c.total_write_volume_bytes)} for c in metrics.category_counters],
            "streams": _streams(module, files, names, counters, fcounters),
        }
        _by_mount(found["mounts"], module, files, mounts, names[0], counters)
    if "LUSTRE" in report.modules:
        report.mod_read_all_lustre_records(dtype="dict", warnings=False)
        for record in report.records["LUSTRE"]:
            found["lustre"].append([{"stripe_size": int(c["counters"]["LUSTRE_COMP_STRIPE_SIZE"]),
                                     "stripe_count": int(c["counters"]["LUSTRE_COMP_STRIPE_COUNT"]),
                                     "osts": [int(o) for o in c["ost_ids"]]} for c in record["components"]])
    for module in ("DXT_POSIX", "DXT_MPIIO"):
        if module in report.modules:
            found["hosts"].update(_hosts(report, backend, module))
    return found


def _records(report, backend, module: str) -> tuple[list, list, object, object]:
    """A module's records that have names (as PyDarshan's ``mod_read_all_records`` keeps them): their ids, ranks,
    counters and floating counters (one row per record), read from darshan-util without a dict per record."""
    import numpy as np

    ffi, lib = backend.ffi, backend.libdutil
    if not report.name_records_read:
        report.read_name_records()
    index, struct = backend.log_get_modules(report.log)[module]["idx"], backend._structdefs[module]
    ids, ranks, counters, fcounters = [], [], [], []
    buf = ffi.new("void **")
    while lib.darshan_log_get_record(report.log["handle"], index, buf) >= 1:
        record = ffi.cast(struct, buf)[0]
        if record.base_rec.id in report.name_records:
            ids.append(record.base_rec.id)
            ranks.append(record.base_rec.rank)
            counters.append(np.frombuffer(ffi.buffer(record.counters), dtype=np.int64).copy())
            fcounters.append(np.frombuffer(ffi.buffer(record.fcounters), dtype=np.float64).copy())
        lib.darshan_free(buf[0])
        buf[0] = ffi.NULL  # darshan-util writes into the buffer it is given: NULL has it allocate the next
    return ids, ranks, (np.stack(counters) if ids else None), (np.stack(fcounters) if ids else None)


def _hosts(report, backend, module: str) -> dict[str, str]:
    """The host of each rank a DXT module recorded, without the trace segments PyDarshan unpacks with each record."""
    ffi, lib = backend.ffi, backend.libdutil
    index, struct = backend.log_get_modules(report.log)[module]["idx"], backend._structdefs[module]
    hosts = {}
    buf = ffi.new("void **")
    while lib.darshan_log_get_record(report.log["handle"], index, buf) >= 1:
        record = ffi.cast(struct, buf)[0]
        hosts[str(record.base_rec.rank)] = ffi.string(record.hostname).decode("utf-8")
        lib.darshan_free(buf[0])
        buf[0] = ffi.NULL
    return hosts


def _accumulated(backend, module: str, ids: list, ranks: list, counters, fcounters, nprocs: int):
    """darshan-util's accumulator over a module's records: its derived metrics and the summary record's counters and
    floating counters (what PyDarshan's ``accumulate_records`` gives, from the arrays themselves).

    Raises
    ------
    RuntimeError
        If darshan-util's accumulator refuses the module or its records.
    """
    import numpy as np

    ffi, lib = backend.ffi, backend.libdutil
    packed = np.recarray(len(ids), dtype=[("id", "<u8", (1,)), ("rank", "<i8", (1,)),
                                          ("counters", "<i8", (counters.shape[1],)),
                                          ("fcounters", "<f8", (fcounters.shape[1],))])
    packed.id, packed.rank = np.array(ids, dtype="<u8").reshape(-1, 1), np.array(ranks, dtype="<i8").reshape(-1, 1)
    packed.counters, packed.fcounters = counters, fcounters
    accumulator = ffi.new("darshan_accumulator *")
    if lib.darshan_accumulator_create(backend.mod_name_to_idx(module), nprocs, accumulator) != 0:
        raise RuntimeError(f"darshan-util's accumulator does not take the {module} module")
    try:
        if lib.darshan_accumulator_inject(accumulator[0], packed.tobytes(), len(ids)) != 0:
            raise RuntimeError(f"darshan-util's accumulator refused the {module} records")
        metrics = ffi.new("struct darshan_derived_metrics *")
        summary = ffi.new(backend._structdefs[module].replace("**", "*"))
        if lib.darshan_accumulator_emit(accumulator[0], metrics, summary) != 0:
            raise RuntimeError(f"darshan-util's accumulator could not sum the {module} records")
    finally:
        lib.darshan_accumulator_destroy(accumulator[0])
    record = backend._make_generic_record(summary, module, dtype="numpy")
    return metrics, record["counters"], record["fcounters"]


def _streams(module: str, names: list, columns: tuple, counters, fcounters) -> dict:
    """The opens, stats and metadata seconds of a module's records of the standard streams (all processes')."""
    streams = [name in STREAMS for name in names]
    counts = _COUNTS[module]

    def total(array, names, wanted):
        return sum(array[streams, names.index(k)].clip(min=0).sum() for k in wanted if k in names)

    return {name: int(total(counters, columns[0], counts.get(name, ()))) for name in ("opens", "stats")} | \
        {"meta_time": float(total(fcounters, columns[1], (f"{_PREFIX[module]}_F_META_TIME",)))}


def _by_mount(moved: dict, module: str, names: list, mounts: list, columns: tuple, counters) -> None:
    """Add to ``moved`` the bytes a module's records read and wrote under each of the log's mount points (the longest
    that holds the file's name; records of no mount point, such as the standard streams, are left out). POSIX and
    STDIO only: MPI-IO's bytes go through POSIX again."""
    if module == "MPI-IO":
        return
    prefix = _PREFIX[module]
    both = counters[:, columns.index(f"{prefix}_BYTES_READ")].clip(min=0) + \
        counters[:, columns.index(f"{prefix}_BYTES_WRITTEN")].clip(min=0)
    per_file: dict[str, int] = {}  # a file's records of many ranks share its mount point: look it up once
    for name, count in zip(names, both.tolist()):
        per_file[name] = per_file.get(name, 0) + count
    for name, count in per_file.items():
        if count > 0 and (mount := _mount_of(name, mounts)) is not None:
            moved[mount] = moved.get(mount, 0) + count


def _mount_of(name: str, mounts: list[str]) -> str | None:
    """The longest of ``mounts`` (longest first) that holds the file ``name``; None for a name under none of them."""
    return next((m for m in mounts if name == m or name.startswith(m if m.endswith("/") else m + "/")), None)


def runs_from(found: dict, *, source: str) -> list[Run]:
    """The runs of what :func:`_extract` found in a log: a pure function of its JSON, the reader's other half.

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
        runs.append(_module_run(module, io, processes, nodes, ppn, counted, tuple(tags), origin))
    if not runs:
        held = ", ".join(found["modules"]) or "none"
        reason = "; ".join(skipped) if skipped else f"no POSIX, MPI-IO or STDIO records (modules: {held})"
        raise ToolOutputError(source, "modules", f"{reason}; iobound reads the bytes and I/O time of those modules")
    if skipped:
        runs = [replace(run, tags=run.tags + (("no_bandwidth", "; ".join(skipped)),)) for run in runs]
    return runs


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
    prefix = _PREFIX[module]
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
    counts = {name: [counters[k] for k in _COUNTS[module].get(name, ()) if counters.get(k, -1) >= 0]
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
        common = [(counters[f"{_PREFIX[module]}_ACCESS{i}_ACCESS"], counters[f"{_PREFIX[module]}_ACCESS{i}_COUNT"])
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
