"""Inside a batch job, --nodes and --ppn default to the job's own, and the command says where each value came from.

The runs ``check`` judges were made by some job, not necessarily the one it runs in: they take its nodes only where
they name it as theirs (a Darshan log of its id) or ``--nodes job`` asks, and never where they state their own.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from probes.core.workload import MOST_COUNT
from assess.cli.inputs import checked

if TYPE_CHECKING:
    from probes.core.run import Run
    from probes.measure.batch import Job, Sourced

__all__ = ["job_defaults", "JOB_HELP", "JOB", "nodes_arg", "asked_nodes", "of_this_job"]

# For the help of an option the job gives: what it defaults to inside one.
JOB_HELP = "inside a Slurm or PBS job, the job's"
# check --nodes job: the nodes of the batch job it runs in.
JOB = "job"


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


def nodes_arg(text: str) -> int | str:
    """A node count, or :data:`JOB` (the nodes of the batch job this runs in)."""
    if text.strip() == JOB:
        return JOB
    return checked(text, int, lambda v: 1 <= v <= MOST_COUNT, f"a whole number from 1 to {MOST_COUNT:,}, or {JOB}")


def asked_nodes() -> Sourced[int]:
    """The node count of the job this runs in, as ``--nodes job`` asks, saying so on stderr.

    Raises
    ------
    InputError
        Outside a job, in one that states no node count, or if a variable of the job is not in its scheduler's form.
    """
    from probes.core.errors import InputError
    from probes.measure.batch import Sourced, current_job

    job = current_job()
    if job is None:
        raise InputError("--nodes job", "", "this runs in no Slurm or PBS job (neither SLURM_JOB_ID nor PBS_NODEFILE "
                         "is set): give the node count")
    if job.nodes is None:
        raise InputError("--nodes job", "", f"{job.phrase()} does not state its node count: give it")
    sys.stderr.write(f"iobound: {job.phrase()}: nodes {job.nodes.value} from {job.nodes.source} (--nodes job)\n")
    return Sourced(job.nodes.value, f"--nodes job: {_nodes_of(job)}")


def of_this_job(runs: list[Run]) -> list[Run]:
    """The runs, with those that name the job this runs in as theirs (:meth:`probes.measure.batch.Job.produced`) and
    state no node count placed on its nodes, saying so on stderr; the others, and all outside a job, as they are.
    A run whose processes its nodes do not divide stays as it is, and stderr says so.

    Raises
    ------
    InputError
        If a run names a job and a variable of the job this runs in is not in its scheduler's form.
    """
    from probes.core.errors import InputError
    from probes.measure.batch import Sourced, current_job
    from assess.check import placed_on

    job = current_job() if any(run.job is not None for run in runs) else None  # else the environment is not read
    if job is None or job.nodes is None:
        return runs
    nodes = Sourced(job.nodes.value, f"{_nodes_of(job)}, the job the log names as its own")
    made, said = [], {}
    for run in runs:
        placed = run
        if job.produced(run):
            try:
                placed = placed_on(run, nodes)
            except InputError:
                said.setdefault(run.origin.path, f"its {job.nodes.value} nodes ({job.nodes.source}) do not divide the "
                                f"{run.placement.processes} processes of {run.origin.path}, a log of this job: placed "
                                "as outside it")
            else:
                if placed is not run:
                    said.setdefault(run.origin.path, f"nodes {job.nodes.value} from {job.nodes.source} for "
                                    f"{run.origin.path}, a log of this job (its job id)")
        made.append(placed)
    for line in said.values():
        sys.stderr.write(f"iobound: {job.phrase()}: {line}\n")
    return made


def _nodes_of(job: Job) -> str:
    """The job's node count and where it came from, e.g. ``Slurm job 42's 4 nodes (SLURM_JOB_NUM_NODES)``."""
    return f"{job.phrase()}'s {job.nodes.value} nodes ({job.nodes.source})"
