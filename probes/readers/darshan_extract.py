"""What PyDarshan finds in a Darshan log: the numbers iobound uses, as plain JSON values, read in a child Python
(one log: ``iobound read`` and ``check``) or in this process (a worker of ``iobound review --darshan`` that imported
PyDarshan once and reads many logs); :mod:`probes.readers.darshan` turns them into runs.

Why a child, or a worker its pool replaces: PyDarshan does not check darshan-util's return codes, and a corrupt or
truncated log kills the interpreter (SIGSEGV after "failed to read name hash", in most of 90 mutated copies of a
sample log) or silently stops a module's records short ("failed to read module POSIX data"). A crash or an
``Error:`` line of darshan-util becomes one line of refusal.

The records stay numpy arrays and go to darshan-util's accumulator as they are (PyDarshan's ``to_df`` and
``accumulate_records`` pass them through pandas and back, which took most of the read's time), and a DXT module's
hosts are read without the trace segments PyDarshan unpacks with each record.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern

__all__ = ["looks_like", "extract", "read_in_child", "time_limit", "mount_of", "read_here", "read_apart", "limit_memory", "MODULES", "BESIDE", "PREFIX",
           "COUNTS", "STREAMS", "INSTALL", "NOT_A_LOG"]

INSTALL = "pip install 'iobound[darshan]'"
NOT_A_LOG = "not a Darshan log (expected its header: a version such as '3.21' and Darshan's magic number)"
# A log opens with its format version ("3.21", NUL-padded to 8 bytes) and the 64-bit magic number 6567223
# (darshan-log-format.h), little- or big-endian as the writing machine was. All 16 bytes are ASCII or NUL, so
# the sniff works on the decoded head of the file as well as on its bytes.
_HEADER = Pattern(r"\A[0-9]\.[0-9]{2}\x00{4}(?:75d\x00{5}|\x00{5}d57)")
MODULES = ("POSIX", "MPI-IO", "STDIO")
# Modules whose I/O goes around POSIX, MPI-IO and STDIO (DAOS's file system and its object store, in user space):
# the bytes they moved are read to say what is not judged.
BESIDE = ("DFS", "DAOS")
# Per module, the counters' prefix.
PREFIX = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO"}
# Metadata and other counters in a job's record, where the module records them.
COUNTS = {"POSIX": {"opens": ("POSIX_OPENS", "POSIX_FILENOS"), "stats": ("POSIX_STATS",), "seeks": ("POSIX_SEEKS",),
                     "syncs": ("POSIX_FSYNCS", "POSIX_FDSYNCS")},
           "MPI-IO": {"opens": ("MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS"), "syncs": ("MPIIO_SYNCS",)},
           "STDIO": {"opens": ("STDIO_OPENS", "STDIO_FDOPENS"), "seeks": ("STDIO_SEEKS",), "syncs": ("STDIO_FLUSHES",)}}
# The names Darshan gives the standard streams' records: no file system serves their opens.
STREAMS = ("<STDIN>", "<STDOUT>", "<STDERR>")
# The child's time limit: a minute to start Python and PyDarshan, and 10 s per MiB of log (the largest sample
# log, 449 KiB of 2,048 processes' records, reads in under a second).
_START, _PER_MIB = 60, 10
_CHILD = "from probes.readers.darshan_extract import _child; _child()"
# The address space the child may take: PyDarshan and its libraries map about 1 GiB; a log that inflates beyond
# what a job's records hold stops there with MemoryError, not with the machine's memory.
_CHILD_MEMORY = 4 * 2**30



def looks_like(head: str | bytes) -> bool:
    """Whether the file's first bytes are a Darshan 3.x log's header (its text decoding or its bytes)."""
    if isinstance(head, (bytes, bytearray)):
        head = bytes(head[:16]).decode("latin-1")
    return _HEADER.match(head) is not None


def time_limit(size: int) -> float:
    """Seconds a read of a log of ``size`` bytes may take, in a child or in a pool's worker: a start, and per MiB."""
    return _START + _PER_MIB * size / 2**20


def read_in_child(path: Path, size: int, source: str) -> dict:
    """What :func:`extract` finds in the log, read by PyDarshan in a child Python (see the module's docstring)."""
    root = str(Path(__file__).resolve().parents[2])  # the folder that holds the probes package
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH")))))
    limit = time_limit(size)
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
    """What :func:`extract` finds in a log, read by PyDarshan in this process: for a worker that imported it once
    and reads many logs (``iobound review --darshan``), whose pool replaces it where a log kills it.

    darshan-util's stderr is caught for the log's read alone, so that its ``Error:`` line refuses the log as the
    child's does (see the module's docstring).

    Raises
    ------
    ToolOutputError
        One line: the file is no Darshan log, darshan-util said an error, or PyDarshan raised.
    """
    _sniffed(path)
    failure = None
    with tempfile.TemporaryFile() as caught:
        saved = os.dup(2)
        os.dup2(caught.fileno(), 2)
        try:
            found = extract(path)
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
    """What :func:`extract` finds in a log, read in a child Python of its own: for the log that killed a worker,
    so that the refusal says how it died (the signal, and what darshan-util said before).

    Raises
    ------
    ToolOutputError
        As :func:`read_here`, and where the child crashed.
    """
    _sniffed(path)
    return read_in_child(Path(path), os.path.getsize(path), path)


def _sniffed(path: str) -> None:
    """Refuse a file that is no regular one (a FIFO put in a log's place would hold darshan-util's read for ever) or
    whose first bytes are no Darshan log's header, before darshan-util reads it.

    Raises
    ------
    ToolOutputError
        If the file is not a Darshan log.
    """
    from probes.core.inputs import kind_of, not_regular

    with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as file:  # a FIFO's open waits not
        if (kind := kind_of(os.fstat(file.fileno()))) is not None:
            raise ToolOutputError(path, "", not_regular(kind))
        head = file.read(16)
    if not looks_like(head):
        raise ToolOutputError(path, "", NOT_A_LOG)


def limit_memory() -> None:
    """Cap this process's address space as the child's (see ``_CHILD_MEMORY``): a log that inflates beyond what a
    job's records hold stops with MemoryError, not with the machine's memory. A lower cap already set (``ulimit -v``
    on a login node or in a job) stays: a process may lower its hard limit, never raise it."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    capped = [_CHILD_MEMORY if now == resource.RLIM_INFINITY else min(now, _CHILD_MEMORY) for now in (soft, hard)]
    resource.setrlimit(resource.RLIMIT_AS, (min(capped), capped[1]))


def _child() -> None:
    """In the child: read the log named by argv[1] with PyDarshan and write what :func:`extract` finds as JSON."""
    limit_memory()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever PyDarshan or darshan-util print goes to stderr; stdout carries only the JSON
    json.dump(extract(sys.argv[1]), out)
    out.close()


def extract(path: str) -> dict:
    """The numbers iobound uses from a log, as plain JSON values: job, modules, derived metrics, the bytes read and
    written through the modules beside them (DFS, DAOS), Lustre, DXT hosts, and the bytes each of the log's mount
    points moved.

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
    """:func:`extract`'s numbers from an open report."""
    job = report.metadata["job"]
    found = {"job": {"nprocs": int(job["nprocs"]), "jobid": int(job["jobid"]), "run_time": float(job["run_time"]),
                     "log_ver": str(job.get("log_ver", "")), "lib_ver": str(job["metadata"].get("lib_ver", ""))},
             "modules": {name: {"partial": bool(info["partial_flag"])} for name, info in report.modules.items()},
             "io": {}, "beside": {}, "lustre": [], "hosts": {}, "mounts": {}}
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
    for module in BESIDE:
        if module in report.modules:
            _, _, counters, _ = _records(report, backend, module)
            names = backend.counter_names(module)
            found["beside"][module] = [0 if counters is None else int(counters[:, names.index(f"{module}_BYTES_{op}")]
                                                                      .clip(min=0).sum()) for op in ("READ", "WRITTEN")]
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
    counts = COUNTS[module]

    def total(array, names, wanted):
        return sum(array[streams, names.index(k)].clip(min=0).sum() for k in wanted if k in names)

    return {name: int(total(counters, columns[0], counts.get(name, ()))) for name in ("opens", "stats")} | \
        {"meta_time": float(total(fcounters, columns[1], (f"{PREFIX[module]}_F_META_TIME",)))}


def _by_mount(moved: dict, module: str, names: list, mounts: list, columns: tuple, counters) -> None:
    """Add to ``moved`` the bytes a module's records read and wrote under each of the log's mount points (the longest
    that holds the file's name; records of no mount point, such as the standard streams, are left out). POSIX and
    STDIO only: MPI-IO's bytes go through POSIX again."""
    if module == "MPI-IO":
        return
    prefix = PREFIX[module]
    both = counters[:, columns.index(f"{prefix}_BYTES_READ")].clip(min=0) + \
        counters[:, columns.index(f"{prefix}_BYTES_WRITTEN")].clip(min=0)
    per_file: dict[str, int] = {}  # a file's records of many ranks share its mount point: look it up once
    for name, count in zip(names, both.tolist()):
        per_file[name] = per_file.get(name, 0) + count
    for name, count in per_file.items():
        if count > 0 and (mount := mount_of(name, mounts)) is not None:
            moved[mount] = moved.get(mount, 0) + count


def mount_of(name: str, mounts: list[str]) -> str | None:
    """The longest of ``mounts`` (longest first) that holds the file ``name``; None for a name under none of them."""
    return next((m for m in mounts if name == m or name.startswith(m if m.endswith("/") else m + "/")), None)
