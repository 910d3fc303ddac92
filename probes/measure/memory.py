"""The client's memory path, probed with fio on tmpfs: 1-byte operations (the per-call cost) and 1 MiB (memory bandwidth)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from probes.core.errors import ProbeError
from probes.measure.fio import fio_argv, lay_out, run_fio
from probes.core.host import this_host
from probes.measure.mountinfo import holding
from probes.measure.probe import Output, Probe
from probes.core.units import Metric

__all__ = ["tmpfs_probes", "scratch_directory", "TMPFS"]

TMPFS = "/dev/shm"


def tmpfs_probes(directory: str, *, jobs: tuple[int, ...] = (1,), runtime: float = 1.0,
                 operations: tuple[str, ...] = ("read", "write")) -> list[Probe]:
    """fio on ``directory`` (a tmpfs): bs=1 for operations and context switches per second, bs=1m for bandwidth.

    The lecture's figures for a 2019 node: about 1,000,000 op/s and 330,000 context switches/s
    at 1 byte, about 4 GiB/s at 1 MiB.
    """
    probes = []
    for numjobs in jobs:
        size = _file_size(numjobs)
        for rw in operations:
            for bs, label in (("1", "1 B"), ("1m", "1 MiB")):
                stem = f"tmpfs.{rw}.bs{bs}.jobs{numjobs}"
                argv = fio_argv(f"iobound-{rw}-{bs}", rw=rw, bs=bs, runtime=runtime, numjobs=numjobs,
                                directory=directory, size=f"{size}")
                where = f"fio {rw} on tmpfs, {label} per call, {numjobs} job{'s' if numjobs > 1 else ''}"
                if bs == "1":
                    outputs = (Output(f"{stem}.iops", f"{where}: operations", Metric.OPERATION_RATE, "op/s"),
                               Output(f"{stem}.ctx", f"{where}: context switches of fio's jobs (fio's ctx)",
                                      Metric.EVENT_RATE, "ev/s"),
                               Output(f"{stem}.machine_ctx", f"{where}: context switches of the whole machine "
                                      "(/proc/stat: other processes' too)", Metric.EVENT_RATE, "ev/s"))
                else:
                    outputs = (Output(f"{stem}.bandwidth", f"{where}: bandwidth", Metric.BANDWIDTH, "B/s"),)
                probes.append(Probe(where, "fio", (argv,), outputs, _once(argv, runtime, outputs, directory, numjobs, size),
                                    {"directory": directory, "rw": rw, "bs": bs, "numjobs": numjobs, "size": size}))
    return probes


def _once(argv, runtime, outputs, directory, numjobs, size):
    def once():
        lay_out(directory, numjobs, size)
        result = run_fio(argv, runtime=runtime)
        figures = {"iops": result.iops, "bandwidth": result.bandwidth, "ctx": result.context_switches,
                   "machine_ctx": result.machine_context_switches}
        return {o.name: figures[o.name.rsplit(".", 1)[1]] for o in outputs}
    return once


def _file_size(numjobs: int) -> int:
    """128 MiB a job, less if that would take more than an eighth of memory: larger than CPU caches, small for RAM."""
    return max(min(128 * 2**20, this_host().memory // 8 // numjobs), 4 * 2**20)


@contextmanager
def scratch_directory(tmpfs: str | None, key: str) -> Iterator[str | None]:
    """A directory of iobound's own on ``tmpfs`` for the probe run ``key`` (its output file), removed afterwards.

    The name follows from ``key``, so a resumed run uses the same fio commands while runs
    for other files never share a directory; a second run with the same key at the same
    time is refused. With ``tmpfs=None`` (no memory probes) it yields None.
    """
    if tmpfs is None:
        yield None
        return
    base = Path(tmpfs)
    if not base.is_dir():
        raise ProbeError(f"{tmpfs} is not a directory; the memory probes need a tmpfs (give one with --tmpfs)")
    kind = _filesystem(str(base))
    if kind not in ("tmpfs", "ramfs"):
        raise ProbeError(f"{tmpfs} is on {kind}, not a tmpfs: the memory probes would measure a disk (give a tmpfs with --tmpfs)")
    digest = hashlib.sha256(os.path.abspath(key).encode()).hexdigest()[:12]
    path = base / f"iobound-probe-{digest}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        own = path.lstat()
        if not stat.S_ISDIR(own.st_mode) or own.st_uid != os.geteuid() or own.st_mode & 0o077:
            # Anyone may create this name in a shared tmpfs: files laid out in another's directory could be links.
            raise ProbeError(f"{path} exists but is not a private directory of this user; remove it and try again")
        lock = open(path / ".lock", "w")
    except OSError as exc:
        raise ProbeError(f"cannot make a scratch directory in {tmpfs}: {exc.strerror or exc}") from None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ProbeError(f"another iobound probe for {key} is running (it holds {path})") from None
        try:
            yield str(path)
        finally:
            shutil.rmtree(path, ignore_errors=True)


def _filesystem(path: str) -> str:
    """The type of the file system ``path`` is on, from the mount point that holds it in /proc/self/mountinfo."""
    try:
        found = holding(os.path.realpath(path))
    except (OSError, ValueError, IndexError):
        found = None
    return found.fstype if found else "an unknown file system"
