"""Every job of a centre judged: a Darshan log read, placed on the topology of its file system, and judged as
``iobound check`` judges it, down to one record per log that an index keeps and a centre's summary counts.

A log's file system is the mount point (of those the log recorded) under which its files moved the most bytes;
a mount table maps mount points to topologies, so that one review covers a centre's several file systems. The
logs of a batch that share a topology are judged in one :func:`assess.check.check_runs` call: its model, the part
of each set of OSTs and each workload's ceiling are then computed once for the batch, and each log's judgements
are those ``iobound check TOPOLOGY LOG`` gives (a Darshan job's runs are no witness, and sibling runs lie in one
file).

The functions here run where the logs are read: in a worker of the process pool or of Dask
(:mod:`assess.darshan_engines`), each of which imports PyDarshan and loads each topology once.
"""

from __future__ import annotations

import hashlib
import math
import os
import tomllib
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

from probes.core.errors import InputError, IoboundError, ToolOutputError
from probes.core.run import Run
from topologies.topology import Topology
from assess.findings import Judgement

__all__ = ["LogFile", "Basis", "JobResult", "basis_of", "listed", "judge_batch", "judge_apart", "JUDGED", "UNJUDGED",
           "UNREADABLE"]

# A log's status in the index: judged against a ceiling; read but not judged (no bytes moved, no file system of the
# mount table, no ceiling), with the reason; or unreadable (not a Darshan log, corrupt, truncated), with the reason.
JUDGED, UNJUDGED, UNREADABLE = "judged", "unjudged", "unreadable"


@dataclass(frozen=True)
class LogFile:
    """A log as the index keys it: its path and, for telling a changed log from the one judged, size and mtime."""

    path: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Basis:
    """What logs are judged against: one topology for every log, or a mount table's (mount point, topology) pairs.

    ``fingerprint`` names the topologies' contents and iobound's version: a log judged on another basis is judged
    again.
    """

    topology: str | None = None
    mounts: tuple[tuple[str, str], ...] = ()
    fingerprint: str = ""

    @property
    def said(self) -> str:
        """The basis in words: its topology, or each mount point → its topology."""
        return self.topology or ", ".join(f"{m} → {t}" for m, t in self.mounts)

    def topology_for(self, mount: str | None) -> tuple[str | None, str]:
        """The topology file judging a job whose bytes went mostly under ``mount``, or None and why not."""
        if self.topology is not None:
            return self.topology, ""
        if mount is None:
            return None, "its files lie under no mount point the log recorded: no file system to judge it on"
        from probes.readers.darshan_extract import mount_of

        found = mount_of(mount, sorted((m for m, _ in self.mounts), key=len, reverse=True))
        if found is None:
            return None, f"its file system {mount} is in no entry of the mount table"
        return dict(self.mounts)[found], ""


@dataclass(frozen=True)
class JobResult:
    """One log as judged: the job's rate, the ceiling of the part it used, the fraction, its findings, its stripes.

    The job's headline is its run that moved the most bytes (POSIX before MPI-IO and STDIO where equal); ``time_lost``
    is that run's I/O time beyond what its ceiling allows (io_time x (1 - fraction), none above the ceiling).
    """

    path: str
    size: int
    mtime_ns: int
    status: str
    reason: str = ""
    job_id: int | None = None
    processes: int | None = None
    file_system: str | None = None
    topology: str | None = None
    run: str | None = None
    rate: float | None = None  # B/s
    ceiling: float | None = None  # B/s, the ceiling's high end (what the fraction is over)
    ceiling_low: float | None = None  # B/s, its least end where a figure is a range
    fraction: float | None = None
    io_time: float | None = None  # s
    time_lost: float | None = None  # s
    binding: tuple[str, ...] = ()
    part: str | None = None
    findings: tuple[str, ...] = ()  # codes, of every run of the job, once each
    worst: str | None = None  # the gravest finding's severity (info, warning, error)
    stripe_counts: tuple[int, ...] = ()
    stripe_sizes: tuple[int, ...] = ()  # B
    runs: tuple[dict, ...] = ()  # per run: label, rate, ceiling, fraction, findings, why it has no ceiling

    @classmethod
    def of(cls, log: LogFile, status: str, reason: str = "", **figures) -> JobResult:
        """``log``'s result: its status, why (for a log not judged), and what was found of it."""
        return cls(log.path, log.size, log.mtime_ns, status, reason, **figures)

    def to_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> JobResult:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


def basis_of(word: str) -> Basis:
    """The basis a review's TOPOLOGY names: a mount table (a TOML file with a ``[mounts]`` table of mount point =
    topology file, relative to the table's folder) or a topology (a file or a bundled example).

    Raises
    ------
    InputError
        One line: a mount table that is empty, names a topology that does not load, or is not TOML.
    """
    from topologies.bundled import resolve
    from topologies.load import load_topology

    path = resolve(word)
    table = _mount_table(path)
    if table is None:
        load_topology(path)  # a topology that does not load is refused before any log is read
        topologies = (str(path.resolve()),)
        basis = Basis(topology=topologies[0])
    else:
        if not table:
            raise InputError(word, "mounts", "the mount table maps no mount point to a topology; give lines such as "
                             "\"/lus/scratch\" = \"scratch.toml\"")
        pairs = []
        for mount, file in table.items():
            if not isinstance(file, str) or not mount.startswith("/"):
                raise InputError(word, f"mounts.{mount}", "expected an absolute mount point = a topology file (a "
                                 f"string); got {file!r}")
            target = path.parent / file if not Path(file).is_absolute() else Path(file)
            target = target if target.exists() else resolve(file)
            load_topology(target)
            pairs.append((mount, str(target.resolve())))
        topologies = tuple(t for _, t in pairs)
        basis = Basis(mounts=tuple(sorted(pairs)))
    return Basis(basis.topology, basis.mounts, _fingerprint(basis, topologies))


def _mount_table(path: Path) -> dict | None:
    """The ``[mounts]`` table of a TOML file that holds one, else None (a topology)."""
    if path.suffix != ".toml":
        return None
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # the topology loader says what is wrong with it
    mounts = document.get("mounts")
    return mounts if isinstance(mounts, dict) else None


def _fingerprint(basis: Basis, topologies: tuple[str, ...]) -> str:
    import probes

    digest = hashlib.sha256(f"{probes.__version__}\n{basis.topology}\n{basis.mounts}\n".encode())
    for file in topologies:
        digest.update(Path(file).read_bytes())
    return digest.hexdigest()[:16]


# Per worker process: the topologies it loaded, by file (each loaded once however many logs it judges).
_LOADED: dict[str, Topology] = {}


def _topology(file: str) -> Topology:
    from topologies.load import load_topology

    if file not in _LOADED:
        _LOADED[file] = load_topology(file)
    return _LOADED[file]


def judge_batch(logs: list[LogFile], basis: Basis) -> list[JobResult]:
    """Each log read by PyDarshan in this process and judged; one result per log, in order (never an exception
    for a bad log: it is a result that says why)."""
    from probes.readers.darshan_extract import read_here

    read: list[tuple[LogFile, dict | None, str]] = []
    for log in logs:
        try:
            with _deadline(log.size):
                read.append((log, read_here(log.path), ""))
        except (OSError, ToolOutputError, MemoryError) as exc:
            read.append((log, None, _reason(exc)))
    return _judged(read, basis)


@contextmanager
def _deadline(size: int):
    """In a pool worker (a process's main thread), SIGALRM ends the process if the log's read outlasts the one-log
    child's limit (:func:`probes.readers.darshan_extract.time_limit`): a log that hangs darshan-util (a heap it corrupted) is then a
    worker that died, which the pool replaces. Elsewhere (a Dask worker's thread) the scheduler sees to it."""
    import signal
    import threading

    from probes.readers.darshan_extract import time_limit

    here = threading.current_thread() is threading.main_thread()
    if here:
        signal.alarm(math.ceil(time_limit(size)))
    try:
        yield
    finally:
        if here:
            signal.alarm(0)


def judge_apart(log: LogFile, basis: Basis) -> JobResult:
    """A log read in a child Python of its own (:func:`probes.readers.darshan_extract.read_apart`) and judged here: for a log
    whose read killed a worker, so that its result says how it died."""
    from probes.readers.darshan_extract import read_apart

    try:
        return _judged([(log, read_apart(log.path), "")], basis)[0]
    except (OSError, ToolOutputError) as exc:
        return JobResult.of(log, UNREADABLE, _reason(exc))


def _reason(exc: BaseException) -> str:
    """The one line that says why a log is unreadable, without the path its result already names."""
    if isinstance(exc, ToolOutputError):
        return f"{exc.where}: {exc.detail}" if exc.where else exc.detail
    if isinstance(exc, MemoryError):
        return "reading it took more memory than a job's records hold: the log is corrupt"
    return f"{exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)


def _judged(read: list[tuple[LogFile, dict | None, str]], basis: Basis) -> list[JobResult]:
    """The results of logs read (what each found, or why it is unreadable), judged per topology in one call each."""
    from probes.readers.darshan import runs_from

    results: dict[int, JobResult] = {}
    groups: dict[str, list[tuple[int, list[Run], dict]]] = {}
    for index, (log, found, why) in enumerate(read):
        if found is None:
            results[index] = JobResult.of(log, UNREADABLE, why)
            continue
        mount = max(found["mounts"], key=lambda m: (found["mounts"][m], m)) if found["mounts"] else None
        file, why_not = basis.topology_for(mount)
        job = found["job"]
        known = dict(job_id=job["jobid"], processes=job["nprocs"], file_system=mount)
        if file is None:
            results[index] = JobResult.of(log, UNJUDGED, why_not, **known)
            continue
        try:
            runs = runs_from(found, source=log.path)
        except ToolOutputError as exc:
            results[index] = JobResult.of(log, UNJUDGED, _reason(exc), **known)
            continue
        groups.setdefault(file, []).append((index, runs, known))
    for file, members in groups.items():
        topology = _topology(file)
        known_of = {i: known for i, _, known in members}
        for index, judgements in _checked(topology, [(i, runs) for i, runs, _ in members]):
            log, known = read[index][0], known_of[index]
            if isinstance(judgements, str):
                results[index] = JobResult.of(log, UNJUDGED, judgements, topology=topology.name, **known)
            else:
                results[index] = _result(log, known["file_system"], topology, judgements)
    return [results[i] for i in range(len(read))]


def _checked(topology: Topology, logs: list[tuple[int, list[Run]]]):
    """Each log's judgements on ``topology`` (or why it has none), judged in one call; where one log does not fit the
    topology, each log alone, so that only that one says why."""
    from assess.check import check_runs

    runs = [run for _, own in logs for run in own]
    try:
        judgements = check_runs(topology, runs)
    except IoboundError:
        for index, own in logs:
            try:
                yield index, check_runs(topology, own)
            except IoboundError as exc:
                yield index, str(exc)
        return
    start = 0
    for index, own in logs:
        yield index, judgements[start:start + len(own)]
        start += len(own)


def _result(log: LogFile, mount: str | None, topology: Topology, judgements: list[Judgement]) -> JobResult:
    """A judged log's result: the headline run's figures, every run's in brief, the findings of them all."""
    job = judgements[0].run.job
    codes = tuple(dict.fromkeys(f.code for j in judgements for f in j.findings))
    lustre = job.lustre
    stripes = dict(stripe_counts=tuple(lustre.stripe_counts) if lustre else (),
                   stripe_sizes=tuple(int(s.m_as("B")) for s in lustre.stripe_sizes) if lustre else ())
    runs = tuple(_run(j) for j in judgements)
    worst = max((j.worst for j in judgements if j.worst is not None), default=None)
    known = dict(job_id=job.job_id, processes=judgements[0].run.placement.processes, file_system=mount,
                 topology=topology.name, findings=codes, worst=worst and worst.label, runs=runs, **stripes)
    ceiled = [j for j in judgements if j.ceiling is not None]
    if not ceiled:
        return JobResult.of(log, UNJUDGED, judgements[0].no_ceiling, **known)
    head = max(ceiled, key=lambda j: j.run.workload.data_set.m_as("B"))  # max keeps the first (POSIX) of equals
    io_time = head.run.job.io_time.m_as("s")
    fraction = head.ratio
    return JobResult.of(log, JUDGED, run=head.run.label, rate=head.measured.m_as("B/s"),
                        ceiling=head.ceiling.value.m_as("B/s"), ceiling_low=head.ceiling.least.m_as("B/s"),
                        fraction=fraction, io_time=io_time,
                        time_lost=io_time * (1 - fraction) if math.isfinite(fraction) and fraction < 1 else 0.0,
                        binding=tuple(str(c) for c in head.ceiling.binding),
                        part=head.part.said if head.part else None, **known)


def _run(j: Judgement) -> dict:
    return {"label": j.run.label, "rate": None if j.measured is None else j.measured.m_as("B/s"),
            "ceiling": None if j.ceiling is None else j.ceiling.value.m_as("B/s"), "fraction": j.ratio,
            "findings": [f.code for f in j.findings], "no_ceiling": j.no_ceiling or None}


def listed(source: str, *, manifest: bool, stat: bool = True) -> Iterator[LogFile | tuple[str, str]]:
    """The logs under a folder (every file, links followed, each folder entered once, in sorted order) or named by a
    manifest (one path a line, relative to the manifest's folder; blank lines and ``#`` comments skipped), each with
    its size and mtime; a path that cannot be opened, or that is no regular file (a FIFO, whose read would wait for a
    writer for ever; a device), comes as (path, why). Without ``stat``, only the paths (to count them).

    Raises
    ------
    InputError
        If the folder or manifest cannot be read.
    """
    from probes.core.inputs import kind_of, not_regular, read_input

    root = Path(source)
    if manifest:
        lines = read_input(root, what="the manifest").splitlines()
        paths = (str(root.parent / line.strip()) for line in lines if line.strip() and not line.lstrip().startswith("#"))
    else:
        if not root.is_dir():
            raise InputError(source, "", "not a folder: give the folder that holds the logs (or --manifest FILE)")
        paths = _walk(root)
    for path in paths:
        if not stat:
            yield path
            continue
        try:
            found = os.stat(path)
        except OSError as exc:
            yield path, exc.strerror or str(exc)
            continue
        kind = kind_of(found)
        yield (path, not_regular(kind)) if kind is not None else LogFile(path, found.st_size, found.st_mtime_ns)


def _walk(root: Path):
    """Every file under ``root`` in sorted order, folders entered one at a time (memory flat in the number of files)
    and each once: a link to a folder already entered (a loop, ``up -> ..``, or a second name) is not entered again."""
    entered: set[tuple[int, int]] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        identity = _identity(folder)
        if identity in entered:
            dirs.clear()
            continue
        if identity is not None:
            entered.add(identity)
        dirs.sort()
        for name in sorted(files):
            yield os.path.join(folder, name)


def _identity(folder: str) -> tuple[int, int] | None:
    """The folder's (device, inode), the same under every name it has; None where it cannot be stat'ed."""
    try:
        found = os.stat(folder)
    except OSError:
        return None
    return found.st_dev, found.st_ino
