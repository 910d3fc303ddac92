"""The machine a measurement was taken on: hostname, kernel, CPU model and count, memory."""

from __future__ import annotations

import functools
import os
import platform
from dataclasses import asdict, dataclass

__all__ = ["Host", "this_host"]


@dataclass(frozen=True, slots=True)
class Host:
    """What identifies a machine in a probe set; ``memory`` is in bytes (MemTotal)."""

    hostname: str
    kernel: str
    cpu_model: str
    cpus: int
    memory: int

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: dict) -> "Host":
        return cls(**{key: doc[key] for key in cls.__slots__})

    def __str__(self) -> str:
        return f"{self.hostname} ({self.cpus} × {self.cpu_model}, {self.memory / 2**30:.1f} GiB, Linux {self.kernel})"


@functools.cache
def this_host() -> Host:
    """The host this process runs on, read from uname, /proc/cpuinfo and /proc/meminfo."""
    uname = os.uname()
    return Host(uname.nodename, uname.release, _cpu_model() or platform.processor() or uname.machine,
                os.cpu_count() or 1, _memory())


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Processor", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return ""


def _memory() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
