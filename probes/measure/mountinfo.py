"""The mounts of this process's mount namespace, read from /proc/self/mountinfo with the kernel's escapes undone."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Mount", "mounts", "holding", "unescape"]

MOUNTINFO = "/proc/self/mountinfo"


@dataclass(frozen=True)
class Mount:
    """One line of mountinfo: the file system's device number, where it is mounted, its type and its source."""

    device: int
    point: Path
    fstype: str
    source: str


def unescape(text: str) -> str:
    """Undo the octal escapes (``\\040`` for a space) of /proc/self/mountinfo and /proc/swaps."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def mounts(path: str | os.PathLike = MOUNTINFO) -> list[Mount]:
    """Every mount, in the kernel's order (of two on one point, the later is on top).

    A line is ``ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER-OPTIONS``.
    """
    found = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.split()
            rest = fields[fields.index("-") + 1:]
            major, minor = fields[2].split(":")
            found.append(Mount(os.makedev(int(major), int(minor)), Path(unescape(fields[4])), rest[0],
                               unescape(rest[1]) if len(rest) > 1 else ""))
    return found


def holding(path: str | os.PathLike) -> Mount | None:
    """The mount ``path`` (absolute, symlinks resolved) lies on: the deepest mount point above it, the top one there."""
    path = Path(path)
    best = None
    for mount in mounts():
        if path.is_relative_to(mount.point) and (best is None or len(mount.point.parts) >= len(best.point.parts)):
            best = mount
    return best
