"""Storage devices probed with fio and direct=1: 4 KiB random IOPS and 1 MiB sequential bandwidth, on a raw device or a file.

A write destroys what a device holds, so write probes are refused on a device in use, or
holding a partition table, a signature or any data that none names (bytes other than zero where it is sampled),
unless the user confirms (never if it is in use).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from probes.core.errors import ProbeError, ToolFailedError
from probes.measure.fio import fio_argv, run_fio
from probes.measure.mountinfo import mounts, unescape
from probes.measure.probe import Output, Probe
from probes.measure.tool import run_tool
from probes.core.units import Metric

__all__ = ["Target", "inspect_target", "check_writable", "device_probes", "DEFAULT_SIZE"]

# The size of a file iobound creates to probe: well beyond a disk's own cache.
DEFAULT_SIZE = 2**30
# A device that no signature names is read in this many blocks of SAMPLE bytes spread over it (4 MiB in all).
SAMPLES, SAMPLE = 64, 2**16
# (fio rw, bs, its label, queue depth, output stem, metric): random 4 KiB for IOPS, sequential 1 MiB for bandwidth.
READS = (("randread", "4k", "4 KiB", 32, "randread.4k.iops", Metric.OPERATION_RATE),
         ("read", "1m", "1 MiB", 8, "read.1m.bandwidth", Metric.BANDWIDTH))
WRITES = (("randwrite", "4k", "4 KiB", 32, "randwrite.4k.iops", Metric.OPERATION_RATE),
          ("write", "1m", "1 MiB", 8, "write.1m.bandwidth", Metric.BANDWIDTH))


@dataclass(frozen=True)
class Target:
    """What a probe path is and why writing to it is unsafe: ``in_use`` (mounted, swap, held) and ``data`` (what a write destroys)."""

    path: str
    kind: str  # "block", "file" or "absent"
    size: int
    in_use: tuple[str, ...] = ()
    data: tuple[str, ...] = ()


def inspect_target(path: str, *, sample: bool = True) -> Target:
    """Look at ``path`` without writing: its kind and size, what uses it and what it holds; refuse anything else.
    ``sample``: a block device that no signature names is read at :data:`SAMPLES` places for data of another kind."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        parent = Path(path).absolute().parent
        if not parent.is_dir():
            raise ProbeError(f"{path} does not exist, nor does its directory {parent}") from None
        if _under(parent, "/dev") and not _under(parent, "/dev/shm"):
            raise ProbeError(f"{path} does not exist: there is no such device") from None
        return Target(path, "absent", 0)
    if stat.S_ISREG(st.st_mode):
        swapped = ("is an active swap file",) if any(_same_file(s, st) for s in _swaps()) else ()
        return Target(path, "file", st.st_size, swapped, (f"{_mib(st.st_size)} of data",) if st.st_size else ())
    if not stat.S_ISBLK(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "a character device" if stat.S_ISCHR(st.st_mode) else "not a file"
        raise ProbeError(f"{path} is {what}; a device probe needs a block device or a regular file")
    try:
        with open(path, "rb", buffering=0) as f:
            head, size = f.read(8192), f.seek(0, os.SEEK_END)
    except OSError as exc:
        hint = "; probing a device needs root (or the disk group)" if exc.errno == errno.EACCES else ""
        raise ProbeError(f"cannot read {path}: {exc.strerror}{hint}") from None
    found = _contents(path, head)
    if sample and not found:
        found = _unnamed(path, size)
    return Target(path, "block", size, _in_use(path, st.st_rdev), found)


def check_writable(target: Target, *, destroy: bool = False) -> None:
    """Raise ProbeError naming every reason a write probe on ``target`` is unsafe; ``destroy`` waives data, never use."""
    if target.in_use:
        held = f" and holds {_join(target.data)}" if target.data else ""
        raise ProbeError(f"{target.path} {_join(target.in_use)}{held}; a write probe is refused on a device in use, even with "
                         "--destroy-data, because its writes and the kernel's would corrupt each other. "
                         "Unmount it (or stop what holds it) first.")
    if target.data and not destroy:
        it = "it" if len(target.data) == 1 else "them"
        raise ProbeError(f"{target.path} holds {_join(target.data)}; a write probe would destroy {it}. "
                         "Add --destroy-data to confirm.")


def device_probes(path: str, *, write: bool = False, destroy: bool = False, runtime: float = 1.0,
                  size: int | None = None) -> list[Probe]:
    """fio direct=1 read probes of ``path`` (a block device or a file), and with ``write`` the write probes once deemed safe.

    A missing or empty file is first created at ``size`` bytes (default :data:`DEFAULT_SIZE`).
    """
    target = inspect_target(path)
    if write:
        check_writable(target, destroy=destroy)
    if target.kind != "block":
        _prepare_file(target, size or DEFAULT_SIZE)
    label = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(path).name) or "device"
    probes = []
    kind = "block" if target.kind == "block" else "file"
    for rw, bs, label_bs, iodepth, stem, metric in READS + (WRITES if write else ()):
        reading = rw in ("randread", "read")
        argv = fio_argv(f"iobound-{rw}-{bs}", rw=rw, bs=bs, runtime=runtime, filename=path, direct=True,
                        ioengine="libaio", iodepth=iodepth, readonly=reading)
        where = f"fio {rw} on {path}, {label_bs} blocks, queue depth {iodepth}, direct"
        output = Output(f"device.{label}.{stem}", f"{where}: {metric.label}", metric, metric.unit)
        probes.append(Probe(where, "fio", (argv,), (output,), _once(argv, runtime, output, None if reading else target, destroy),
                            {"path": path, "kind": kind, "rw": rw, "bs": bs, "iodepth": iodepth,
                             "ioengine": "libaio", "direct": True}))
    return probes


def _once(argv, runtime, output, planned: Target | None, destroy):
    def once():
        if planned:  # refused if since planned it was mounted, made swap, or (a device) given a file system
            now = inspect_target(planned.path, sample=False)  # (its data may be this probe's own writes)
            new = tuple(r for r in now.data if r not in planned.data) if now.kind == "block" else ()
            check_writable(replace(now, data=new), destroy=destroy)
        result = run_fio(argv, runtime=runtime)
        return {output.name: result.iops if output.metric is Metric.OPERATION_RATE else result.bandwidth}
    return once


def _prepare_file(target: Target, size: int) -> None:
    """Check the file system takes O_DIRECT and refuse sparse files (holes read as zeros, measuring no device); create or fill an empty file."""
    filling = not target.size
    try:
        os.close(os.open(target.path, (os.O_WRONLY | os.O_CREAT if filling else os.O_RDONLY) | os.O_DIRECT, 0o600))
        if not filling and os.stat(target.path).st_blocks * 512 < target.size:
            raise ProbeError(f"{target.path} is sparse: reading its holes measures no device. Remove it and iobound "
                             "creates a filled file, or fill it yourself")
        if filling:
            block = os.urandom(2**20)  # not a pattern a compressing device could shortcut
            with open(target.path, "r+b") as f:
                for offset in range(0, size, len(block)):
                    f.write(block[: size - offset])
                os.fsync(f.fileno())
    except OSError as exc:
        if target.kind == "absent":
            with contextlib.suppress(OSError):
                os.unlink(target.path)
        if exc.errno == errno.EINVAL:
            raise ProbeError(f"{target.path} is on a file system without O_DIRECT support (tmpfs before Linux 6.6, ramfs): "
                             "direct=1 cannot run there; use a file on a disk's file system or the block device") from None
        raise ProbeError(f"cannot {'create' if filling else 'open'} {target.path}: {exc.strerror}") from None


def _in_use(path: str, rdev: int) -> tuple[str, ...]:
    """Why the kernel uses the device or one of its partitions: mounts, holders (device-mapper, LVM, md), swap."""
    sysfs = Path(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}").resolve()
    devices = {rdev: ("", sysfs)} | {_makedev(p.parent.joinpath("dev").read_text()): (f" (partition {p.parent.name})", p.parent)
                                     for p in sysfs.glob("*/partition")}
    reasons = []
    for mount in mounts():
        dev = mount.device
        if dev not in devices and mount.source.startswith("/dev/"):  # btrfs, for one, shows an anonymous major:minor
            with contextlib.suppress(OSError):
                dev = os.stat(mount.source).st_rdev
        if dev in devices:
            reasons.append(f"is mounted on {mount.point}{devices[dev][0]}")
    for part, directory in devices.values():
        reasons += [f"is held by {h.name}{part} (device-mapper, LVM or md)" for h in directory.joinpath("holders").iterdir()]
    if any(stat.S_ISBLK(s.st_mode) and s.st_rdev in devices for s in _swaps()):
        reasons.append("is active swap")
    if not reasons:
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_EXCL))
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                reasons.append("is opened exclusively by the kernel or a program")
    return tuple(dict.fromkeys(reasons))


def _contents(path: str, head: bytes) -> tuple[str, ...]:
    """What a block device holds: blkid's partition table and signature, or an MBR or GPT found in ``head``."""
    output = run_tool(["blkid", "-p", "-o", "export", path], timeout=60, check=False)
    if output.returncode not in (0, 2, 8):
        raise ToolFailedError(output.argv, output.returncode, output.stderr)
    found = ["several conflicting signatures (blkid -p finds an ambivalent result)"] if output.returncode == 8 else []
    values = dict(line.split("=", 1) for line in output.stdout.splitlines() if "=" in line)
    table = values.get("PTTYPE") or ("gpt" if b"EFI PART" in (head[512:520], head[4096:4104]) else
                                     "dos" if head[510:512] == b"\x55\xaa" and any(head[450:512:16]) else None)
    if table:
        found.append(f"a {table} partition table")
    if "TYPE" in values:
        kind = "file system" if values.get("USAGE") == "filesystem" else "signature"
        found.append(f"{'an' if values['TYPE'][0] in 'aeiouAEIOU' else 'a'} {values['TYPE']} {kind}")
    return tuple(found)


def _unnamed(path: str, size: int) -> tuple[str, ...]:
    """Data on a device that no signature names (raw dm-crypt, a database's raw volume, an old array member): bytes
    other than zero in any of :data:`SAMPLES` blocks spread over it. A new or zeroed device reads as zeros."""
    places = sorted({size * i // SAMPLES // SAMPLE * SAMPLE for i in range(SAMPLES)})
    with open(path, "rb", buffering=0) as f:
        holding = sum(any(os.pread(f.fileno(), SAMPLE, place)) for place in places)
    if not holding:
        return ()
    return (f"data that no signature names (bytes other than zero in {holding} of the {len(places)} places read)",)


def _swaps() -> list[os.stat_result]:
    """The files and devices in active use as swap (/proc/swaps)."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/swaps").read_text().splitlines()[1:]:
            with contextlib.suppress(OSError):
                found.append(os.stat(unescape(line.split()[0])))
    return found


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _makedev(majmin: str) -> int:
    major, minor = majmin.strip().split(":")
    return os.makedev(int(major), int(minor))


def _under(path: Path, top: str) -> bool:
    return path == Path(top) or Path(top) in path.parents


def _mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


def _join(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
