"""The batch job this runs in, as its scheduler describes it: Slurm's variables or PBS's node file.

Inside a job its shape is what a command defaults to: the node count, the processes per node and
the hosts. Each value keeps where it came from, so that a command can say it ("nodes 4 from
SLURM_JOB_NUM_NODES"). Slurm states them in its own forms: ``SLURM_TASKS_PER_NODE=2(x3),1`` (two
tasks on each of three nodes, then one), ``SLURM_JOB_NODELIST=n[01-03,07]`` (expanded by ``scontrol
show hostnames``); PBS lists a host per process, one a line, in ``PBS_NODEFILE``.
"""

from __future__ import annotations

import math
import os
import re
import socket
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from probes.core.errors import InputError, ProbeError, ToolFailedError, ToolNotFoundError
from probes.measure.tool import run_tool

if TYPE_CHECKING:  # a job's defaults (predict, plan) need no runs
    from probes.core.run import Run

__all__ = ["Sourced", "Job", "current_job", "tasks_per_node", "hostnames", "step_tasks", "reachable_address",
           "controller_route", "RECORD", "RESULT", "recorded_job", "steps_together"]

T = TypeVar("T")
# Seconds scontrol may take to expand a node list (it reads the list alone; no controller is asked).
SCONTROL = 10.0
_TASKS = re.compile(r"(\d+)(?:\(x(\d+)\))?")
# A job's record, its Slurm variables one a line as ``env`` prints them, written by a job script iobound plan emits
# beside its results; a result's name tags it with its job, step and task: ``fio-4242.0.1.json``.
RECORD = "slurm-{job}.env"
RESULT = re.compile(r"-(?P<job>\d+)\.(?P<step>\d+)\.(?P<task>\d+)\.[^.]+$")


@dataclass(frozen=True)
class Sourced(Generic[T]):
    """A value and where it came from: a variable (``SLURM_JOB_NUM_NODES``), a file (``PBS_NODEFILE``) or an option."""

    value: T
    source: str


@dataclass(frozen=True)
class Job:
    """The job this runs in: its scheduler and id, its nodes, processes per node and hosts, each with its source.

    ``ppn`` is the most processes any node has (a note says so where nodes differ); ``hosts`` is the
    node list as the scheduler gives it (Slurm's compressed form is expanded by :meth:`host_names`).
    """

    scheduler: str
    id: str | None
    nodes: Sourced[int] | None
    ppn: Sourced[int] | None
    hosts: Sourced[str] | None

    def host_names(self) -> Sourced[tuple[str, ...]] | None:
        """The job's hosts one by one, and where they came from; ProbeError if scontrol cannot expand Slurm's list."""
        if self.hosts is None:
            return None
        if self.scheduler == "slurm":
            return Sourced(hostnames(self.hosts.value), f"scontrol show hostnames {self.hosts.source}")
        return Sourced(tuple(self.hosts.value.split(",")), self.hosts.source)

    def phrase(self) -> str:
        """The job in words, e.g. ``Slurm job 42``."""
        return f"{'Slurm' if self.scheduler == 'slurm' else 'PBS'} job {self.id or '(no id)'}"

    def produced(self, run: Run) -> bool:
        """Whether ``run`` names this job as the one that produced it: a Darshan log of its id (``123.server``, PBS's
        id, is Darshan's 123)."""
        return run.job is not None and self.id is not None and str(run.job.job_id) == self.id.split(".")[0]

    def to_dict(self) -> dict:
        """The job as a probe set records it: scheduler, id, nodes, ppn and the hosts one by one, with their sources
        (the hosts null where scontrol cannot expand the node list: a probe needs them not)."""
        try:
            names = self.host_names()
        except ProbeError:
            names = None
        return {"scheduler": self.scheduler, "id": self.id,
                **{key: None if found is None else {"value": found.value, "source": found.source}
                   for key, found in (("nodes", self.nodes), ("ppn", self.ppn))},
                "nodelist": None if self.hosts is None else self.hosts.value,
                "hosts": None if names is None else {"value": list(names.value), "source": names.source}}


def current_job(environ: Mapping[str, str] = os.environ) -> Job | None:
    """The Slurm job (SLURM_JOB_ID set) or PBS job (PBS_NODEFILE set) of ``environ``; None outside a job.

    Raises
    ------
    InputError
        If a variable of the job is not in its scheduler's form, or PBS's node file cannot be read or is empty.
    """
    if "SLURM_JOB_ID" in environ:
        return _slurm(environ)
    if "PBS_NODEFILE" in environ:
        return _pbs(environ)
    return None


def tasks_per_node(text: str, source: str = "SLURM_TASKS_PER_NODE") -> list[int]:
    """Slurm's tasks per node, one count per node: ``2(x3),1`` is [2, 2, 2, 1]; InputError if it is not that form."""
    counts = []
    for item in text.split(","):
        found = _TASKS.fullmatch(item.strip())
        if found is None or int(found[1]) == 0 or found[2] == "0":
            raise InputError(source, "", f"{text!r} is not Slurm's tasks per node, e.g. 2(x3),1 (two tasks on each of "
                                         "three nodes, then one)")
        counts += [int(found[1])] * int(found[2] or 1)
    return counts


def hostnames(nodelist: str) -> tuple[str, ...]:
    """Slurm's node list (``n[01-03,07]``) one host at a time, as ``scontrol show hostnames`` expands it.

    Raises
    ------
    ProbeError
        If scontrol is not installed (saying how to install it), fails (it needs Slurm's configuration, as on the
        job's nodes), or takes longer than ``SCONTROL`` seconds.
    """
    try:
        done = run_tool(["scontrol", "show", "hostnames", nodelist], timeout=SCONTROL)
    except ToolNotFoundError:
        raise ProbeError(f"the job's node list {nodelist!r} is read by scontrol, which is not installed here; install "
                         "it with: apt-get install slurm-client (or load the site's Slurm module)") from None
    except ToolFailedError as exc:
        said = (exc.stderr or "").strip().splitlines()[-1:]
        why = f"no answer within {SCONTROL:g} s" if exc.timeout is not None or not said else said[0]
        raise ProbeError(f"scontrol could not read the job's node list {nodelist!r} ({why}); run this where Slurm's "
                         "configuration is found, as on the job's nodes (or name it with SLURM_CONF)") from None
    return tuple(line.strip() for line in done.stdout.splitlines() if line.strip())


def step_tasks(environ: Mapping[str, str] = os.environ) -> int:
    """How many tasks srun started in this job step (SLURM_STEP_NUM_TASKS); 1 outside a task srun started."""
    found = _count(environ, "SLURM_STEP_NUM_TASKS")
    return found.value if found else 1


def reachable_address(environ: Mapping[str, str] = os.environ) -> str | None:
    """The address of this host that the job's launch node reaches it by (the route to SLURM_LAUNCH_NODE_IPADDR), for
    peers to whom its name does not resolve; None outside a task srun started."""
    launch = environ.get("SLURM_LAUNCH_NODE_IPADDR")
    return _route_to(launch) if launch else None


def controller_route() -> str | None:
    """The address of this host on the way to Slurm's controller (SlurmctldHost, as ``scontrol show config`` names
    it): the network the job's nodes, which reach the controller too, can reach this host on; None where scontrol, the
    controller or a route gives none (within ``SCONTROL`` seconds)."""
    try:
        done = run_tool(["scontrol", "show", "config"], timeout=SCONTROL)
    except (ToolNotFoundError, ToolFailedError):
        return None
    found = re.search(r"^SlurmctldHost\[0\]\s*=\s*([^\s(]+)(?:\(([^)]+)\))?", done.stdout, re.MULTILINE)
    if found is None:
        return None
    try:
        address = found[2] or socket.getaddrinfo(found[1], None, proto=socket.IPPROTO_TCP)[0][4][0]
    except OSError:
        return None
    return _route_to(address)


def _route_to(peer: str) -> str | None:
    """This host's address on the route to ``peer`` (an IP address), as the kernel picks it; None without a route."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in peer else socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((peer, 9))  # a datagram socket sends nothing on connect: the kernel picks the route
            return probe.getsockname()[0]
    except OSError:
        return None


def recorded_job(result: Path) -> Job | None:
    """The job that produced ``result``, as the record beside it says (its name tagged with the job's id, see
    :data:`RESULT`); None for a result without a tag or a record. InputError, naming the record and the variable, if
    the record is not Slurm's."""
    found = RESULT.search(result.name)
    record = result.parent / RECORD.format(job=found["job"]) if found else None
    if record is None or not record.is_file():
        return None
    lines = record.read_text(encoding="utf-8", errors="replace").splitlines()
    environ = dict(line.split("=", 1) for line in lines if "=" in line)
    if environ.get("SLURM_JOB_ID") != found["job"]:
        raise InputError(str(record), "", f"is the record of job {found['job']} but says SLURM_JOB_ID="
                                     f"{environ.get('SLURM_JOB_ID', '(none)')}")
    try:
        return _slurm(environ)
    except InputError as exc:  # named by its variable alone, as in the job's environment: the record holds it
        raise InputError(str(record), exc.source, exc.detail) from None


def steps_together(runs: list[Run]) -> list[Run]:
    """The runs with those of one job step made one per label: files tagged alike but for the task (:data:`RESULT`),
    the job's record beside them, one run of the label in each. Each is a node's share, all started together (as
    iobound plan's job script starts them): the step moved their bytes in its time (:func:`_together`), on their
    nodes together, with their data sets; its run keeps its first task's file as its origin (the record beside it)."""
    steps: dict[tuple, list[Run]] = {}
    for run in runs:
        path = Path(run.origin.path)
        found = RESULT.search(path.name) if run.workload is not None else None
        recorded = found and (path.parent / RECORD.format(job=found["job"])).is_file()
        key = (str(path.parent), found["job"], found["step"], run.label) if recorded else (id(run),)
        steps.setdefault(key, []).append(run)
    made = []
    for group in steps.values():  # a label twice in one file is no node of its own: left as read
        made += [_together(group)] if len({r.origin.path for r in group}) == len(group) > 1 else group
    return made


def _together(tasks: list[Run]) -> Run:
    """One step's runs, a task's each, as the step's: the bytes of all over the time from the first task's start to
    the last one's end. A task's output is written as it ends (its file's time), its start that less its duration;
    where a file holds several repetitions, the time of the longest task (the tasks started together); where a task
    states no time, their rates summed (the most they can have moved together)."""
    first, w = tasks[0], tasks[0].workload
    if len({len(t.samples) for t in tasks}) != 1 or not first.samples:
        return first
    data = [t.workload.data_set for t in tasks]
    workload = replace(w, nodes=sum(t.workload.nodes or 1 for t in tasks),
                       data_set=None if None in data else sum(data[1:], data[0]))
    if not all(len(t.durations) == len(t.samples) for t in tasks):
        return replace(first, workload=workload, samples=tuple(map(math.fsum, zip(*(t.samples for t in tasks)))),
                       durations=())
    moved = [[rate * time for rate, time in zip(t.samples, t.durations)] for t in tasks]
    durations = list(map(max, zip(*(t.durations for t in tasks))))
    if len(first.samples) == 1:
        ends = [Path(t.origin.path).stat().st_mtime for t in tasks]
        durations = [max(ends) - min(end - t.durations[0] for end, t in zip(ends, tasks))]
    samples = tuple(math.fsum(each) / time for each, time in zip(zip(*moved), durations))
    return replace(first, workload=workload, samples=samples, durations=tuple(durations))


def _slurm(environ: Mapping[str, str]) -> Job:
    """The job Slurm's variables describe (those an allocation sets; a step's own count is its tasks)."""
    tasks = None
    if "SLURM_TASKS_PER_NODE" in environ:
        tasks = Sourced(tasks_per_node(environ["SLURM_TASKS_PER_NODE"]), "SLURM_TASKS_PER_NODE")
    nodes = _count(environ, "SLURM_JOB_NUM_NODES") or _count(environ, "SLURM_NNODES")
    if nodes is None and tasks is not None:
        nodes = Sourced(len(tasks.value), tasks.source)
    ppn = _count(environ, "SLURM_NTASKS_PER_NODE")
    if ppn is None and tasks is not None:
        even = len(set(tasks.value)) == 1
        ppn = Sourced(max(tasks.value), tasks.source if even else
                      f"{tasks.source}={environ['SLURM_TASKS_PER_NODE']}, the most on one node")
    listed = next((Sourced(environ[name], name) for name in ("SLURM_JOB_NODELIST", "SLURM_NODELIST")
                   if environ.get(name)), None)
    return Job("slurm", environ["SLURM_JOB_ID"], nodes, ppn, listed)


def _pbs(environ: Mapping[str, str]) -> Job:
    """The job of PBS's node file: a host per process, so nodes are its distinct hosts and ppn the most of one."""
    path = environ["PBS_NODEFILE"]
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            listed = [line.strip() for line in f if line.strip()]
    except OSError as exc:
        raise InputError(path, "", f"PBS_NODEFILE names it, but it cannot be read: {exc.strerror}") from None
    if not listed:
        raise InputError(path, "", "PBS_NODEFILE names it, but it lists no host")
    counts = Counter(listed)
    even = len(set(counts.values())) == 1
    return Job("pbs", environ.get("PBS_JOBID"), Sourced(len(counts), "PBS_NODEFILE"),
               Sourced(max(counts.values()), "PBS_NODEFILE" if even else "PBS_NODEFILE, the most on one node"),
               Sourced(",".join(counts), "PBS_NODEFILE"))


def _count(environ: Mapping[str, str], name: str) -> Sourced[int] | None:
    """A positive count from variable ``name``; None if unset; InputError if it is no count."""
    text = environ.get(name)
    if text is None:
        return None
    if not text.strip().isdigit() or int(text) == 0:
        raise InputError(name, "", f"{text!r} is not a count of 1 or more")
    return Sourced(int(text), name)
