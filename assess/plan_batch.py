"""A plan's benchmark as a Slurm job (``iobound plan --emit sbatch``) or a job array over node counts (``--emit array``,
SLURM_ARRAY_TASK_ID the nodes of each task): a ``srun`` step per phase. fio runs on each node, every node starting at
one time (``IOBOUND_START``) so that a step's bytes over its time are what the nodes moved together, its JSON named by
job, step and task (``fio-%j.%s.%t.json``, :data:`probes.measure.batch.RESULT`); IOR and mdtest run their processes
under srun, rank 0's report named by job and step (``ior-%j.%s.0.txt``). Each lies beside the job's record
(``slurm-JOB.env``, :data:`probes.measure.batch.RECORD`), where ``iobound check`` finds both.
"""

from __future__ import annotations

import math

from probes.core.errors import InputError
from models.plan import Plan
from assess.plan_outputs import MPI_COMMANDS, drop_lines, hang_guard

__all__ = ["EMITS", "job_script", "sweep"]

EMITS = ("sbatch", "array")
_TOOLS = {"fio": "fio", "ior": "IOR", "mdtest": "mdtest"}


def sweep(knee: int, most: int) -> tuple[int, ...]:
    """The node counts of a sweep: 1, 2, 4, ... below the plan's nodes (where the ceiling stops growing), those, and
    one count past them where the client group has it, to show the ceiling flat beyond."""
    counts = [2 ** i for i in range(int(math.log2(knee)) + 1) if 2 ** i < knee]
    return tuple([*counts, knee, *([knee + 1] if knee < most else [])])


def job_script(plan: Plan, emit: str, counts: tuple[int, ...], path: str) -> dict[str, str]:
    """The job script of ``plan``: one allocation of the plan's nodes (``sbatch``), or an array whose task i runs on i
    nodes of an allocation of the most (``array``: one task at a time, no other job on its nodes, so the steps of the
    sweep never meet). fio runs one process a node (its job file beside the script, its data in ``path``/fio, made on
    each node first); IOR and mdtest run their processes under srun, a step per phase."""
    name = plan.benchmark.name
    if name != "fio" and name not in MPI_COMMANDS:
        raise InputError("--emit", "", f"writes the jobs of fio, IOR and mdtest; {name}'s files run under mpirun as "
                                       "written (srun in its place)")
    tool = _TOOLS.get(name, name)
    nodes = max(counts) if emit == "array" else plan.nodes
    minutes = math.ceil(hang_guard(plan.repetitions * math.fsum(p.seconds_at_efficiency[1] for p in plan.phases)) / 60)
    script = f"{name}-array.sh" if emit == "array" else f"{name}.sbatch"
    lines = ["#!/bin/sh", f"# {tool} as iobound plan planned it ({plan.nodes} nodes x {plan.ppn} ppn): sbatch {script}",
             f"#SBATCH --job-name=iobound-{name}", f"#SBATCH --nodes={nodes}", f"#SBATCH --ntasks-per-node={plan.ppn}",
             f"#SBATCH --time={minutes}", "#SBATCH --exclusive"]
    if emit == "array":  # %1: one task at a time, so that no two steps share the file system
        lines += [f"#SBATCH --array={','.join(map(str, counts))}%1",
                  f"# each task of the array runs {tool} on SLURM_ARRAY_TASK_ID nodes, one task at a time: "
                  + ", ".join(map(str, counts))]
    count = "$SLURM_ARRAY_TASK_ID" if emit == "array" else nodes  # srun's nodes and tasks: not the job's, it inherits
    lines += ["set -e", 'results="${IOBOUND_RESULTS:-$SLURM_SUBMIT_DIR/results}"', 'mkdir -p "$results"',
              "# the job's record: iobound check holds each result to the nodes and processes it had",
              'env | grep "^SLURM_" > "$results/slurm-$SLURM_JOB_ID.env"']
    if name != "fio":
        return {script: "\n".join(lines + _mpi_steps(plan, path, count)) + "\n"}
    phases = " ".join(p.phase.name for p in plan.phases)
    lines += ["# a step per phase, one fio a node (its numjobs the processes), all starting at IOBOUND_START (two seconds",
              "# on, in milliseconds since the epoch); its JSON named by job, step and task",
              f"for phase in {phases}; do",
              '  export IOBOUND_START=$(($(date +%s%3N) + 2000))  # GNU date: milliseconds',
              f"  srun --nodes={count} --ntasks={count} --ntasks-per-node=1 --output=\"$results/fio-%j.%s.%t.json\" "
              '--error="$results/fio-%j.%s.%t.err" sh "$SLURM_SUBMIT_DIR/fio-task.sh" "$phase"', "done"]
    task = ["#!/bin/sh", "# one node's fio of one phase (iobound plan's job script runs it): its folder made (a path may",
            "# name the node, /mnt/${SLURMD_NODENAME}, as job.fio can), then at IOBOUND_START, when every node starts",
            f'mkdir -p "{path}/fio"', "ms=$((IOBOUND_START - $(date +%s%3N)))",
            '[ "$ms" -le 0 ] || sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"',
            'exec fio --output-format=json --section="$1" '
            r'--filename_format="\$jobname.\$jobnum.\$filenum.$SLURMD_NODENAME" "$SLURM_SUBMIT_DIR/job.fio"']
    return {script: "\n".join(lines) + "\n", "fio-task.sh": "\n".join(task) + "\n"}


def _mpi_steps(plan: Plan, path: str, count: int | str) -> list[str]:
    """A step per phase of IOR or mdtest, every process started by srun: on ``count`` nodes, the plan's processes on
    each; rank 0's report named by job and step (task 0 for the run as a whole)."""
    name = plan.benchmark.name
    tasks = f"$(({count} * {plan.ppn}))" if isinstance(count, str) else count * plan.ppn
    lines = [f'mkdir -p "{path}/{name}"',
             f"# a step per phase, its processes started by srun with the site's MPI plugin (MpiDefault: add --mpi=pmix",
             f"# or --mpi=pmi2 where {_TOOLS[name]} was built for another); rank 0's report named by job and step"]
    for phase in plan.phases:
        words = " ".join(w for w in MPI_COMMANDS[name](plan, path, phase) if w)
        lines += [*(drop_lines(plan) if phase.phase.reads else []),
                  f"srun --nodes={count} --ntasks={tasks} --ntasks-per-node={plan.ppn} "
                  f"--output=\"$results/{name}-%j.%s.0.txt\" {words}"]
    return lines
