"""The machine's state while probes run: what other processes take of the CPUs, steal time, load and governor.

A probe's figure is honest only about the machine it was measured on, as it was then. This
reads /proc/stat (every CPU's busy and steal time) against this process's and its children's
own CPU time (getrusage), so that what neighbours take during a repetition is known apart from
what the probe's own tool takes, and from what the processes it measures take that are not its
children (a lab's sshd, sshfs and ssh: /proc/PID/stat).
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Snapshot", "Share", "snapshot", "share", "governor", "busy_now", "cpus", "BUSY"]

# Other processes taking this share of the CPUs or more make a machine busy: a probe's figures then depend on them
# (on two CPUs, one busy neighbour is half of them; short repetitions beside it ran 13 % under a 30 s run of the same
# fio command, while their interval claimed 5 %).
BUSY = 0.25
_GOVERNOR = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """CPU seconds at one moment: the machine's busy and steal time over all CPUs, ours (self and children), and each
    helper's (a process, by PID and start time, that works for the probe without being its child)."""

    wall: float
    busy: float
    steal: float
    own: float
    helpers: dict[tuple[int, int], float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Share:
    """What happened between two snapshots, in CPUs (1.0: one CPU's whole time): others' work, steal, and ours."""

    others: float
    steal: float
    own: float


def _clock_ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


def snapshot(helpers: Iterable[int] = ()) -> Snapshot:
    """The CPU times now, over the CPUs this process may run on (``--cpus`` pins it: the neighbours elsewhere do not
    count), with those of the processes ``helpers`` (PIDs); busy and steal are 0 where /proc/stat cannot be read
    (not Linux)."""
    busy = steal = 0.0
    allowed = {f"cpu{n}" for n in os.sched_getaffinity(0)} if hasattr(os, "sched_getaffinity") else None
    try:
        with open("/proc/stat", encoding="ascii") as file:
            for line in file:
                name, *fields = line.split()
                if not name.startswith("cpu") or name == "cpu" or (allowed is not None and name not in allowed):
                    continue
                ticks = [int(x) for x in fields]
                # user nice system idle iowait irq softirq steal guest guest_nice: guest time is inside user already;
                # interrupts count for no process (a probe's own network traffic is softirq), so not for the neighbours
                busy += (ticks[0] + ticks[1] + ticks[2]) / _clock_ticks()
                steal += ticks[7] / _clock_ticks()
    except (OSError, ValueError, IndexError):
        busy = steal = 0.0
    own = sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for field in ("ru_utime", "ru_stime"))
    return Snapshot(time.monotonic(), busy, steal, own, dict(found for pid in helpers if (found := _process(pid))))


def _process(pid: int) -> tuple[tuple[int, int], float] | None:
    """(PID, start time in ticks) and the CPU seconds process ``pid`` has taken (user and system), None if it ended."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            fields = file.read().rpartition(")")[2].split()  # after the command name, which may hold anything
        return (pid, int(fields[19])), (int(fields[11]) + int(fields[12])) / _clock_ticks()
    except (OSError, ValueError, IndexError):
        return None


def share(before: Snapshot, after: Snapshot) -> Share:
    """Others' CPU use, steal and ours between two snapshots, each in CPUs; others never below zero. What the helpers
    took is ours: each one's since the first snapshot, or since it started (a process that ended between them took
    its part as one of the others)."""
    wall = max(after.wall - before.wall, 1e-9)
    helped = sum(seconds - before.helpers.get(key, 0.0) for key, seconds in after.helpers.items())
    own = (after.own - before.own + helped) / wall
    others = max((after.busy - before.busy) / wall - own, 0.0)
    return Share(others, max((after.steal - before.steal) / wall, 0.0), own)


def governor() -> str:
    """The CPU frequency governor (``performance``, ``powersave``, ...), or "" where the kernel does not say."""
    try:
        return _GOVERNOR.read_text(encoding="ascii").strip()
    except OSError:
        return ""


def cpus() -> int:
    """The CPUs this process may run on (its affinity), which its probes share with the neighbours."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def busy_now(seconds: float = 0.5) -> Share:
    """What other processes take of the CPUs over the next ``seconds``, while this process sleeps."""
    before = snapshot()
    time.sleep(seconds)
    return share(before, snapshot())
