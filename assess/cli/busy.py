"""Before probing: the probes pinned to the CPUs the user names (--cpus), and a busy machine said with its figures."""

from __future__ import annotations

import argparse
import os
import sys

from probes.core.errors import InputError
from assess.cli.inputs import list_arg

__all__ = ["add_cpus", "pin", "warn_if_busy"]


def _cpu(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be CPU numbers, such as 2,3. Got {text!r} instead.")
    return int(text)


def add_cpus(parser: argparse.ArgumentParser, what: str = "the probes") -> None:
    """The --cpus option: a list of CPU numbers to run ``what`` on."""
    parser.add_argument("--cpus", type=list_arg(_cpu), metavar="LIST",
                        help=f"run {what} on these CPUs only, e.g. 2,3 (those the neighbours leave free)")


def pin(cpus: list[int] | None) -> None:
    """Run this process, and so every tool it starts, on ``cpus`` only."""
    if not cpus:
        return
    try:
        os.sched_setaffinity(0, set(cpus))
    except (OSError, ValueError) as exc:
        raise InputError("--cpus", "", f"cannot run on CPUs {','.join(map(str, cpus))}: {getattr(exc, 'strerror', None) or exc} "
                         f"(this machine's CPUs: {','.join(map(str, sorted(os.sched_getaffinity(0))))})") from None


def warn_if_busy(state: dict, sharing: str = "") -> None:
    """Say before the first probe, with figures, when other processes (or the hypervisor) already take a busy share
    of the CPUs; ``sharing`` names what else shares them (the lab's links and file service)."""
    from probes.core.machine import BUSY

    cpus, others, steal = state["cpus"], state["others_cpus"], state.get("steal_cpus", 0.0)
    if others / cpus < BUSY and steal / cpus < BUSY:
        return
    stolen = f", the hypervisor steals {steal:.2f}" if steal / cpus >= BUSY else ""
    sys.stderr.write(f"iobound: warning: the machine is busy: other processes take {others:.2f} of its {cpus} "
                     f"CPUs{stolen} (load average {state['load_average'][0]:.2f}); {sharing}its figures will vary with "
                     "them (marked UNSTABLE-MACHINE while the neighbours take that much): probe at a quieter moment, "
                     "or pin the probes to free CPUs with --cpus\n")
