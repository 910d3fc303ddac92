"""Removing a lab: its mounts, the processes in its namespaces, the namespaces, and waiting for its loop devices.

Only what is the lab's is touched: mounts strictly inside the folders ``up`` makes in the state
directory, namespaces named with its prefix, and processes found by membership in those
namespaces (/proc/PID/ns/net against the namespace's own inode), never by their command line.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

from probes.core.errors import ProbeError
from probes.lab.command import execute
from probes.lab.layout import down_command
from probes.lab.network import delete, identity, namespaces
from probes.lab.state import inside
from probes.measure.mountinfo import Mount, mounts

__all__ = ["remove", "lab_mounts", "members", "loops"]

# Seconds a process has to end after SIGTERM (then SIGKILL), and the kernel to let go of a loop device.
_GRACE = 2.0


def remove(root: Path, names: Iterable[str], *, mounted: bool) -> list[str]:
    """Remove the lab of ``root``: its mounts (if ``mounted``), every process in namespaces ``names``, the namespaces.

    Returns what was removed, one line each.

    Raises
    ------
    ProbeError
        If something could not be removed (it says what, and how to try again).
    """
    names = [name for name in names if name in set(namespaces())]
    ids = {name: found for name in names if (found := identity(name)) is not None}
    removed = []
    for _ in range(3):  # an sshfs still connecting may mount late: stop it, then unmount what it made
        removed += _unmount(root) if mounted else []
        if not members(ids):
            break
        removed += _stop(ids)
    removed += _unmount(root) if mounted else []
    removed += [f"namespace {name}" for name in names if delete(name)]
    deadline = time.monotonic() + _GRACE
    while loops(root) and time.monotonic() < deadline:  # a loop device goes once the last mount of it has
        time.sleep(0.05)
    left = [f"namespace {name}" for name in names if name in set(namespaces())]
    left += [f"process {pid} in {name}" for pid, name in members(ids).items()]
    left += [f"mount {m.point}" for m in lab_mounts(root)] if mounted else []
    left += [f"loop device {device} ({backing})" for device, backing in loops(root)]
    if left:
        raise ProbeError(f"could not remove {'; '.join(left)}; the state is kept: try '{down_command(root)}' again")
    return removed


def lab_mounts(root: Path) -> list[Mount]:
    """The mounts strictly inside the folders the lab mounts things in, deepest first."""
    return sorted((m for m in mounts() if inside(root, m.point)), key=lambda m: -len(m.point.parts))


def members(ids: dict[str, tuple[int, int]]) -> dict[int, str]:
    """The live processes (pid: namespace) in the network namespaces ``ids`` (name: its device and inode), but this one.

    A zombie has let go of its namespaces, so it is not found.
    """
    inodes = {ident: name for name, ident in ids.items()}
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            where = os.stat(f"/proc/{entry}/ns/net")
        except OSError:
            continue  # ended meanwhile, or a zombie
        name = inodes.get((where.st_dev, where.st_ino))
        if name is not None:
            found[int(entry)] = name
    return found


def loops(root: Path) -> list[tuple[str, str]]:
    """The loop devices (device, backing file) of the lab's ext4 images: their files lie in its state directory."""
    found = []
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        try:
            path = Path(backing.read_text().strip())
        except OSError:
            continue  # detached meanwhile
        if path.is_relative_to(root):
            found.append((f"/dev/{backing.parts[3]}", str(path)))
    return found


def _unmount(root: Path) -> list[str]:
    """Unmount (lazily, so a busy one goes too) every mount of the lab, the deepest first."""
    return [f"{m.fstype} mount {m.point}" for m in lab_mounts(root)
            if execute("umount", "--lazy", m.point, check=False).returncode == 0]


def _stop(ids: dict[str, tuple[int, int]]) -> list[str]:
    """Stop every process in the namespaces ``ids``: SIGTERM, then SIGKILL for those still there after the grace time.

    They are looked up again before each signal, so a process that ended is never confused with a new one.
    """
    stopped = {}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        found = members(ids)
        for pid, name in found.items():
            stopped.setdefault(pid, f"process {pid} ({_comm(pid)}) in {name}")
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + _GRACE
        while members(ids) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not members(ids):
            break
    return [what for _, what in sorted(stopped.items())]


def _comm(pid: int) -> str:
    """The command name of ``pid``; empty if it has ended."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""
