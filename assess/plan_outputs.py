"""A plan's ready-to-run files: IOR and mdtest command lines, an io500 ini, a fio job file, an elbencho command,
and MLPerf Storage / DLIO parameters, each in the tool's own option syntax.

Each writer takes a :class:`models.plan.Plan` and the folder on the file system under test, and returns
``{file name: text}``; :func:`outputs` picks the benchmark's.
"""

from __future__ import annotations

import math
import shlex
from typing import Callable

from models.plan import Plan, PhasePlan
from models.plan_phases import DROP_CACHES

__all__ = ["outputs", "MPI_COMMANDS", "drop_lines", "hang_guard"]


def _launch(plan: Plan) -> str:
    """The MPI launch of every process: nodes x processes per node."""
    nodes = plan.nodes
    return f"mpirun -np {nodes * plan.ppn} --map-by ppr:{plan.ppn}:node"


def _size(value: float) -> str:
    """Bytes as IOR, mdtest and fio take them: the largest of k, m, g that divides them whole."""
    value = int(round(value))
    for suffix, factor in (("g", 2**30), ("m", 2**20), ("k", 2**10)):
        if value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)


def _phase(plan: Plan, name: str) -> PhasePlan:
    return next(p for p in plan.phases if p.phase.name == name)


def hang_guard(seconds: float) -> int:
    """Whole seconds to let a run of ``seconds`` predicted go on before it is taken to hang: three times that and a
    minute (fio's runtime=, a Slurm job's time limit)."""
    return math.ceil(3 * seconds + 60)


def drop_lines(plan: Plan) -> list[str]:
    """The line to run between phases where the user may drop caches."""
    where = {"clients": "every client", "all": "every client and server"}.get(plan.settings.drop)
    return [f"# as root on {where}: {DROP_CACHES}"] if where else []


def _header(plan: Plan, tool: str) -> list[str]:
    return ["#!/bin/sh", f"# {tool} as iobound plan planned it ({plan.nodes} nodes x {plan.ppn} ppn, "
            f"{plan.repetitions} repetitions): run from a node that reaches the others; one phase per line"]


def _script(plan: Plan, tool: str, command: Callable[[PhasePlan], list[str]]) -> str:
    """A shell script that runs each phase under MPI (its words from ``command``), the caches dropped before a
    phase that reads where the user may."""
    lines = _header(plan, tool)
    for phase in plan.phases:
        words = [_launch(plan), *command(phase)]
        lines += [*(drop_lines(plan) if phase.phase.reads else []), " ".join(w for w in words if w)]
    return "\n".join(lines) + "\n"


def _deadline(plan: Plan, phase: PhasePlan, option: str) -> list[str]:
    """``option`` with the stonewall the user gave put in, for a phase that writes; nothing without one."""
    stonewall = plan.settings.stonewall
    return [option.format(stonewall)] if stonewall is not None and phase.phase.reads is None else []


def ior_words(plan: Plan, path: str, phase: PhasePlan) -> list[str]:
    """IOR's command line of one phase (without its launcher)."""
    size = int(round(phase.workload.transfer_size.m_as("B")))
    return ["ior -a POSIX", "-w" if phase.phase.reads is None else "-r", *phase.flags,
            "" if phase.workload.shared_file else "-F", f"-t {_size(size)}",
            f"-b {_size(math.ceil(phase.per_process / size) * size)}", "-s 1", f"-i {plan.repetitions}", "-k",
            *_deadline(plan, phase, "-D {:g} -O stoneWallingWearOut=1"), f"-o {shlex.quote(path + '/ior/file')}"]


def mdtest_words(plan: Plan, path: str, phase: PhasePlan) -> list[str]:
    """mdtest's command line of one phase (without its launcher)."""
    letters = {"create": "-C", "stat": "-T", "remove": "-r"}
    return ["mdtest", letters[phase.phase.name], *phase.flags, "-F -u", f"-n {math.ceil(phase.per_process)}",
            f"-i {plan.repetitions}", f"-d {shlex.quote(path + '/mdtest')}"]


# The command line of one phase of the benchmarks run under MPI, a line per phase (their scripts, and their Slurm jobs).
MPI_COMMANDS: dict[str, Callable[[Plan, str, PhasePlan], list[str]]] = {"ior": ior_words, "mdtest": mdtest_words}


def ior(plan: Plan, path: str) -> dict[str, str]:
    return {"ior.sh": _script(plan, "IOR", lambda phase: ior_words(plan, path, phase))}


def mdtest(plan: Plan, path: str) -> dict[str, str]:
    return {"mdtest.sh": _script(plan, "mdtest", lambda phase: mdtest_words(plan, path, phase))}


def io500(plan: Plan, path: str) -> dict[str, str]:
    easy, hard = _phase(plan, "ior-easy-write"), _phase(plan, "ior-hard-write")
    size = int(round(easy.workload.transfer_size.m_as("B")))
    hard_size = int(round(hard.workload.transfer_size.m_as("B")))
    direct = " --posix.odirect" if plan.settings.direct else ""
    drop = plan.settings.drop == "all"
    stonewall = plan.settings.stonewall if plan.settings.stonewall is not None else plan.benchmark.stonewall
    sections = {
        "global": {"datadir": f"{path}/io500", "timestamp-datadir": "TRUE", "resultdir": "./results",
                   "timestamp-resultdir": "TRUE", "api": f"POSIX{direct}", "drop-caches": "TRUE" if drop else "FALSE",
                   "drop-caches-cmd": f"sudo -n bash -c \"{DROP_CACHES}\"", "verbosity": "1"},
        "debug": {"stonewall-time": f"{stonewall:g}"},
        "ior-easy": {"transferSize": _size(size), "blockSize": _size(math.ceil(easy.per_process / size) * size),
                     "filePerProc": "TRUE", "uniqueDir": "FALSE"},
        "mdtest-easy": {"n": str(math.ceil(_phase(plan, "mdtest-easy-write").per_process))},
        "ior-hard": {"segmentCount": str(math.ceil(hard.per_process / hard_size))},
        "mdtest-hard": {"n": str(math.ceil(_phase(plan, "mdtest-hard-write").per_process))},
        "find": {"nproc": str(plan.nodes * plan.ppn)},
    }
    text = "\n".join(f"[{name}]\n" + "".join(f"{key} = {value}\n" for key, value in pairs.items())
                     for name, pairs in sections.items())
    return {"io500.ini": f"# io500 as iobound plan planned it ({plan.nodes} nodes x {plan.ppn} ppn)\n" + text}


def fio(plan: Plan, path: str) -> dict[str, str]:
    first = plan.phases[0]
    depth = first.workload.queue_depth
    size = int(round(first.workload.transfer_size.m_as("B")))
    per_job = math.ceil(first.per_process / size) * size
    slowest = plan.repetitions * max(p.seconds_at_efficiency[1] for p in plan.phases)  # runtime= spans all loops
    stop = ("# the size ends each job: runtime= is three times the slowest predicted phase's loops and a minute, to "
            "stop a hang" if plan.settings.stonewall is None else "# the size or the stonewall's runtime=, whichever comes first, "
            "ends each job")
    lines = ["# fio as iobound plan planned it: one job file per node (fio --client=HOSTS job.fio); each job's "
             "process n writes and reads the file iobound.n.0", stop, "[global]",
             f"ioengine={'libaio' if depth > 1 else 'psync'}", f"iodepth={depth}",
             f"direct={1 if plan.settings.direct else 0}", f"bs={_size(size)}", f"size={_size(per_job)}",
             f"numjobs={plan.ppn}", f"directory={path}/fio", "filename_format=iobound.$jobnum.$filenum",
             "group_reporting=1", "invalidate=1",
             f"runtime={hang_guard(slowest) if plan.settings.stonewall is None else math.ceil(plan.settings.stonewall)}",
             f"loops={plan.repetitions}"]
    rw = {"read": "read", "write": "write"}
    for phase in plan.phases:
        access = "rand" if phase.workload.access.value == "random" else ""
        lines += ["", f"[{phase.phase.name}]", f"rw={access}{rw[phase.phase.operation.value]}", "stonewall"]
        if access and phase.phase.reads:  # uniformly, with replacement: the reads the expected cached share counts
            lines += ["norandommap=1", "randrepeat=0"]
        lines += [f for f in phase.flags if "=" in f and not f.startswith("direct")]
        if phase.phase.reads and plan.settings.drop:
            lines.append(f"exec_prerun=sh -c '{DROP_CACHES}'")
    return {"job.fio": "\n".join(lines) + "\n"}


def elbencho(plan: Plan, path: str) -> dict[str, str]:
    first = plan.phases[0]
    size = int(round(first.workload.transfer_size.m_as("B")))
    flags = " ".join(dict.fromkeys(f for p in plan.phases for f in p.flags))
    words = " ".join(w for w in (f"elbencho --hosts HOSTS -w -r -t {plan.ppn} -n 1 -N 1",
                                 f"-s {_size(math.ceil(first.per_process / size) * size)} -b {_size(size)}", flags,
                                 *_deadline(plan, first, "--timelimit {:.0f}"),
                                 f"-i {plan.repetitions}", shlex.quote(path + '/elbencho')) if w)
    return {"elbencho.sh": "\n".join(_header(plan, "elbencho") + [words]) + "\n"}


def mlperf(plan: Plan, path: str, training: tuple[str, str] = ("MODEL", "ACCELERATOR")) -> dict[str, str]:
    reads = _phase(plan, "training")
    record = int(round(reads.workload.transfer_size.m_as("B")))
    files = math.ceil(reads.amount / record)
    accelerators = plan.nodes * plan.ppn
    params = {"dataset.num_files_train": files, "dataset.num_samples_per_file": 1, "dataset.record_length": record,
              "dataset.data_folder": f"{path}/mlperf", "reader.read_threads": reads.workload.queue_depth}
    yaml = "\n".join(["# DLIO parameters as iobound plan planned them", "workload:", "  dataset:",
                      *(f"    {k.split('.')[1]}: {v}" for k, v in params.items() if k.startswith("dataset.")),
                      "  reader:", f"    read_threads: {params['reader.read_threads']}"])
    command = (f"mlpstorage training run --model {training[0]} --accelerator-type {training[1]} --num-accelerators {accelerators} --num-client-hosts {plan.nodes} "
               + " ".join(f"--param {k}={v}" for k, v in params.items()))
    return {"dlio.yaml": yaml + "\n", "mlpstorage.sh": "\n".join(_header(plan, "MLPerf Storage") + [command]) + "\n"}


WRITERS: dict[str, Callable[[Plan, str], dict[str, str]]] = {
    "ior": ior, "mdtest": mdtest, "io500": io500, "fio": fio, "elbencho": elbencho}


def outputs(plan: Plan, path: str, training: tuple[str, str] | None = None) -> dict[str, str]:
    """The ready-to-run files of ``plan``'s benchmark, for data in the folder ``path``; ``training``: MLPerf
    Storage's model and accelerator."""
    if plan.benchmark.name == "mlperf":
        return mlperf(plan, path, training) if training else mlperf(plan, path)
    return WRITERS[plan.benchmark.name](plan, path)
