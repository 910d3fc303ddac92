"""Run a measurement tool: no shell, a time limit, and errors that show what was run and how it ended."""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Iterable

from probes.core.errors import ToolFailedError, ToolNotFoundError

__all__ = ["ToolOutput", "run_tool", "tool_version", "install_hint", "PACKAGES"]

# The Debian or Ubuntu package of each tool iobound runs, for the message when one is missing.
PACKAGES = {"fio": "fio", "iperf3": "iperf3", "ping": "iputils-ping", "ip": "iproute2", "tc": "iproute2",
            "ssh": "openssh-client", "ssh-keygen": "openssh-client", "sshd": "openssh-server", "sshfs": "sshfs",
            "mount": "mount", "umount": "mount", "nsenter": "util-linux", "mkfs.ext4": "e2fsprogs"}


def install_hint(tools: Iterable[str]) -> str:
    """``install with: apt-get install iproute2 sshfs``: the packages of ``tools``, each once, in their order."""
    tools = list(tools)
    packages = list(dict.fromkeys(PACKAGES[t] for t in tools if t in PACKAGES))
    unknown = [t for t in tools if t not in PACKAGES]
    hints = ([f"install with: apt-get install {' '.join(packages)}"] if packages else []) + \
        ([f"install {', '.join(unknown)} and make sure {'it is' if len(unknown) == 1 else 'they are'} on PATH"]
         if unknown else [])
    return "; ".join(hints)


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What one invocation of a tool printed and how it ended; times are seconds since the epoch."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    started_at: float
    ended_at: float


def locate(tool: str) -> str:
    """The path of ``tool``, or ToolNotFoundError saying how to install it."""
    path = shutil.which(tool)
    if path is None:
        raise ToolNotFoundError(tool, install_hint([tool]))
    return path


def run_tool(argv: list[str] | tuple[str, ...], *, timeout: float, check: bool = True) -> ToolOutput:
    """Run ``argv`` (never through a shell) and wait at most ``timeout`` seconds.

    The tool runs in its own session, so on a timeout or Ctrl-C its whole process
    group (fio's job processes too) is stopped: SIGTERM, then SIGKILL.
    """
    argv = tuple(str(a) for a in argv)
    locate(argv[0])
    started = time.time()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        stderr = _rest(proc)
        raise ToolFailedError(argv, None, stderr, timeout) from None
    except BaseException:
        _stop(proc)
        _rest(proc)
        raise
    output = ToolOutput(argv, proc.returncode, stdout, stderr, started, time.time())
    if check and proc.returncode != 0:
        raise ToolFailedError(argv, proc.returncode, stderr or stdout)
    return output


def _rest(proc: subprocess.Popen) -> str:
    """What a stopped tool wrote to stderr; nothing if a child that left its group still holds the pipes."""
    try:
        return proc.communicate(timeout=5)[1] or ""
    except subprocess.TimeoutExpired:
        return ""


def _stop(proc: subprocess.Popen) -> None:
    """Stop the tool's whole process group: SIGTERM, then SIGKILL for what is left after two seconds.

    fio's job processes may outlive its main process by a moment; the group must be empty
    before the caller removes the files they write.
    """
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and _alive(proc):
            time.sleep(0.02)
        if not _alive(proc):
            break
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


def _alive(proc: subprocess.Popen) -> bool:
    """Whether a live process of the tool's group is left; zombies, waiting for a parent to reap them, do not count."""
    proc.poll()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == proc.pid and fields[0] != "Z":  # fields: state, ppid, pgrp, ...
            return True
    return False


@functools.cache
def tool_version(tool: str) -> str:
    """The version a tool reports, e.g. ``3.33`` for fio-3.33; the first line of its answer if no number is found."""
    flag = "-V" if tool == "ping" else "--version"
    output = run_tool([tool, flag], timeout=10, check=False)
    text = (output.stdout or output.stderr).strip()
    found = re.search(r"(\d+(?:\.\d+)+)", text) or re.search(r"(\d{8})", text)
    return found.group(1) if found else text.splitlines()[0] if text else "unknown"
