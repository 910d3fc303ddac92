"""Inside a batch job, --nodes and --ppn default to the job's own, and the command says where each value came from."""

from __future__ import annotations

import argparse
import sys

__all__ = ["job_defaults", "JOB_HELP"]

# For the help of an option the job gives: what it defaults to inside one.
JOB_HELP = "inside a Slurm or PBS job, the job's"


def job_defaults(args: argparse.Namespace, *, nodes: bool = True, ppn: bool = True, listed: bool = False) -> None:
    """Fill ``args.nodes`` and ``args.ppn`` (those asked for) that the command line left unset (None): from the job this
    runs in, else as outside a job (nodes unknown, one process per node); a list of one value where ``listed``.

    Inside a job it says on stderr where each value came from, e.g. ``iobound: Slurm job 42: nodes 4 from
    SLURM_JOB_NUM_NODES, ppn 2 from --ppn``; outside one it says nothing.

    Raises
    ------
    InputError
        If a variable of the job is not in its scheduler's form (:func:`probes.measure.batch.current_job`).
    """
    from probes.measure.batch import current_job

    job = current_job()
    said = []
    for name, default in [("nodes", None)] * nodes + [("ppn", 1)] * ppn:
        given = getattr(args, name)
        if given is not None:
            said.append(f"{name} {_shown(given)} from --{name}")
            continue
        found = getattr(job, name) if job else None
        value = found.value if found else default
        setattr(args, name, [value] if listed else value)
        if found:
            said.append(f"{name} {value} from {found.source}")
        elif job:
            said.append(f"{name} {'unknown' if value is None else value}: the job does not state it")
    if job:
        sys.stderr.write(f"iobound: {job.phrase()}: {', '.join(said)}\n")


def _shown(value) -> str:
    """An option's value as typed: a list comma-separated."""
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)
