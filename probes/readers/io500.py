"""Read io500's result files into one run per benchmark phase, each value as io500 printed it.

io500 runs every phase once, so each run has one sample. Three eras of output are read:

- the 2017 prototype (io-500-dev's ``results.txt``): ``1/ior-easy-write BW:341025.01 MB/s time: 311s``;
- the io500.sh scripts, 2017 to 2020 (``result_summary.txt`` and the driver log
  ``io-500-summary.<date>.txt``): ``[RESULT] BW   phase 1   ior_easy_write   0.411 GB/s : time 9.73 seconds``;
- the C application, SC20 on: ``result_summary.txt`` (``[RESULT]  ior-easy-write  0.355843 GiB/s :
  time 331.771 seconds``) and the ini-like ``result.txt`` (``[ior-easy-write]`` sections with
  ``score``, ``t_delta`` and ``exe``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.core.patterns import Pattern
from probes.core.records import Placement
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers.io500_phases import PROTOTYPE_LINE, Phase, read_app_results, read_prototype, read_summary
from probes.readers.ior import Readback, readback
from probes.readers.mdtest import stride, stride_tags
from probes.readers.textlines import COUNT, beginning, binary_size, split_words

__all__ = ["looks_like", "parse", "FORMAT", "phase_run", "LEAST_WRITE_SECONDS"]

# What iobound read says it reads.
FORMAT = "io500 results (result.txt, result_summary.txt, io500.sh summaries)"

# The units io500 prints, with the evidence for each: probes.readers.io500_phases.

# io500.sh and the C app pass "-t 47008 -b 47008" to every ior-hard run, without -F (one shared
# file); the rules allow no other. The 2017 prototype used 47000, so its ior-hard size stays unknown.
_HARD_TRANSFER = 47008
_HARD_NOTE = ("47008 B into one shared file, fixed for ior-hard by io500's rules and scripts "
              "of this version; this file does not print it")
# io500's rules let no write phase of an official score run under 5 minutes (io500.sh: IO500_MIN_WRITE_RUNTIME=300 and
# "This cannot be official score. The runtime of ... seconds is below 5 minutes"; the C app's stonewall, -D 300): a
# listed write phase whose time is not stated wrote at least its rate for this long.
LEAST_WRITE_SECONDS = 300.0
# io500's scripts and C app pass "-C -Q 1" (each task reads what a task on the next node wrote) and "-e" (fsync on
# close) to every ior-easy and ior-hard run, in every version from 2017 on; a file that prints no command is read so.
_BY_RULES = Readback("-C", 1, "-e")
_RULES_NOTE = "fixed by io500's rules and scripts; this file does not print it"
# The C app's random phases name their transfer size, which its source fixes: ior-rnd4K-easy-read
# (and the older ior-rnd4K-write/-read) pass -t=4096, ior-rnd1MB-write/-read -t=1048576.
_RANDOM_SIZE = Pattern(r"rnd([0-9]{1,4})(K|MB)\b")
_RANDOM_UNITS = {"K": 2**10, "MB": 2**20}
# MPI launchers' options that say how many processes start where: their total, per node, the nodes;
# jsrun (Summit) starts resource sets, with tasks per set and sets per host.
_MPIRUN = {"-n": "total", "-np": "total", "--n": "total", "--np": "total", "-npernode": "per_node",
           "--npernode": "per_node", "-N": "per_node", "-ppn": "per_node", "-perhost": "per_node"}
_LAUNCHERS = {
    "mpirun": _MPIRUN, "mpiexec": _MPIRUN, "mpiexec.hydra": _MPIRUN, "orterun": _MPIRUN,
    "srun": {"-n": "total", "--ntasks": "total", "-N": "nodes", "--nodes": "nodes", "--ntasks-per-node": "per_node"},
    "aprun": {"-n": "total", "-N": "per_node"},
    "jsrun": {"-n": "sets", "--nrs": "sets", "-a": "per_set", "--tasks_per_rs": "per_set", "-r": "sets_per_node",
              "--rs_per_host": "sets_per_node"},
}
# The programs io500 starts under a launcher; the launcher's options end where one of them begins.
_PROGRAMS = {"ior", "mdtest", "pfind", "md-real-io"}

_OPERATIONS = {
    "mdtest-easy-write": Operation.CREATE, "mdtest-hard-write": Operation.CREATE,
    "mdtest-easy-stat": Operation.STAT, "mdtest-hard-stat": Operation.STAT,
    "mdtest-hard-read": Operation.OPEN,
    "mdtest-easy-delete": Operation.REMOVE, "mdtest-hard-delete": Operation.REMOVE,
    "find": Operation.FIND, "find-easy": Operation.FIND, "find-hard": Operation.FIND,
}
_PROTOTYPE_NAMES = {"md-easy-create": "mdtest-easy-write", "md-hard-create": "mdtest-hard-write",
                    "md-easy-stat": "mdtest-easy-stat", "md-hard-stat": "mdtest-hard-stat",
                    "md-easy-delete": "mdtest-easy-delete", "md-hard-delete": "mdtest-hard-delete"}
_IOR_PHASE = Pattern(r"ior-(easy|hard|rnd[\w-]*?)-(write|read)")

_SNIFF = Pattern(
    r"^(?:\[RESULT(?:-invalid)?\]\s+\S|IO500 version \S|version\s*=\s*io500|"
    r"\[(?:ior|mdtest)-(?:easy|hard)[\w-]*\]\s*$|[0-9]+/(?:ior|md)-[\w-]+ (?:BW|IOPs):|IO-500 (?:bw |md )?score:|"
    r"Running the IO500 Benchmark now|io500_(?:mpirun|ior_cmd|info_[\w-]+)=)|\"type\":\"IO500\"", re.MULTILINE)
_CONFIG = Pattern(r"^\[global\]\s*$", re.MULTILINE)
_APP_RESULTS = Pattern(r"^(?:version\s*=|\[run\]\s*$|score\s*=)", re.MULTILINE)
# The info creator quotes its values (io500_info_system="..."); the driver log's copies do not.
_SYSTEM_INFO = Pattern(r"^io500_info_[\w-]+=\"|\"type\":\"IO500\"", re.MULTILINE)
_DRIVER_LOG = Pattern(r"^(?:\[RESULT|System: |Running the IO500|io500_(?:mpirun|ior_cmd|workdir)=)", re.MULTILINE)


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like an io500 file: a cheap sniff, not a validation.

    Also true for io500's ``config.ini`` and ``system-information.txt``, which :func:`parse`
    then refuses with a message saying what they are.
    """
    return _SNIFF.search(text) is not None


def parse(text: str, *, source: str) -> list[Run]:
    """One run per io500 phase that has a value, labelled with the phase's name as the C app spells it.

    Parameters
    ----------
    text : an io500 results file of any era (see the module's docstring).
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        ``ior-*`` phases are bandwidths (write or read; ``ior-rnd*`` random), ``mdtest-*`` and
        ``find`` operation rates (create, stat, open for mdtest-hard-read, remove, find); one
        sample each, in the unit io500 printed, with the phase's time as its duration. Tags:
        ``("phase", name as printed)``, ``("score", ...)`` with the scores as printed,
        ``("invalid", reason)`` where io500 marked the phase invalid (``[INVALID]``,
        ``[RESULT-invalid]``, ``; ERROR INVALID ...`` in result.txt, io500.sh's "[Warning] This
        cannot be official score"), ``("error", ...)`` for result.txt's other ``; ERROR`` lines,
        ``("unscored", ...)`` for a phase outside the score, ``("cut_short", ...)`` on every phase of a file
        without io500's score (printed last: the run or the file was cut short). The version is io500's tag where printed
        (``io500-sc21``), else the era (``io500.sh``, ``prototype 2017``).

    Raises
    ------
    ToolOutputError
        If the text is an io500 configuration or system description, not results; has a
        malformed result line, value or command option; has no phase with a value (truncated,
        or the run failed); or prints a unit whose base the corpus cannot settle.

    Notes
    -----
    - Transfer sizes come from the file's own ``ior`` command (``exe`` in result.txt,
      ``[Exec]`` in the driver log); ior-hard's 47008 B is also taken from io500's rules where
      the file has no command (tagged ``("transfer_size", ...)``), except in the 2017 prototype.
    - Nodes and processes per node come from the MPI launcher that starts a phase in the
      driver log (``[Exec] mpiexec -n 2040 -npernode 12 ...``: 170 nodes x 12; mpirun, mpiexec,
      srun, aprun and jsrun are read). Where only the total is stated (``mpirun -np 2``,
      result.txt's ``procs`` under [run], else ``nproc`` under [find]) nodes stay unknown (None),
      ppn is the Workload default of 1, and the total is the run's placement (``Placement(21504)``).
    - A phase's own command gives the tags IOR and mdtest readers give (see
      :func:`probes.readers.ior.readback` and :func:`probes.readers.mdtest.stride_tags`):
      ``("fsync", "IOR -e")`` on writes, ``("read_by_other_node", "IOR -C -Q 1")`` on reads (nodes
      not stated count as several, as io500 runs are), ``("read_by_other_node", "mdtest -N 1")``
      where the placement is stated. Random phases without ``-t`` take the size their name
      states (``ior-rnd4K-easy-read``: 4096 B, tagged ``("transfer_size", ...)``).
    - Phases that are not one storage operation (the prototype's md-real-io, mdworkbench, the
      C app's timestamp) give no run.
    """
    refusal = _not_results(text)
    if refusal:
        raise ToolOutputError(source, "line 1", refusal)
    if _APP_RESULTS.search(text) and not _DRIVER_LOG.search(text):
        phases, version, tags = read_app_results(iter_lines(text), source)
    elif any(PROTOTYPE_LINE.match(line) for line in iter_lines(text)):
        phases, version, tags = read_prototype(iter_lines(text), source)
    elif looks_like(text):
        phases, version, tags = read_summary(iter_lines(text), source)
    else:
        raise ToolOutputError(source, "line 1", "expected an io500 results file ('[RESULT] ...' lines, "
                              f"'[ior-easy-write]' sections or the 2017 prototype's lines); found {beginning(text)}")
    if not any(key == "score" for key, _ in tags):  # io500 prints its score last
        tags = [*tags, ("cut_short", f"it holds {len(phases)} phase(s) and no io500 score, which io500 prints last: "
                                     "the run stopped before its end or the file was cut")]
    runs = [run for phase in phases if (run := _run(phase, version, tags, source)) is not None]
    if not runs:
        last = max(sum(1 for _ in iter_lines(text)), 1)
        raise ToolOutputError(source, f"line {last}", "expected at least one io500 phase with a "
                              "value; found none: the file is truncated or the run failed")
    return distinct_labels(runs)


def _not_results(text: str) -> str:
    """What the file is when it is io500's but not results (config, system description); else ''."""
    if _CONFIG.search(text) and not _APP_RESULTS.search(text):
        return ("expected io500 results; found an io500 configuration file (config.ini: [global] and "
                "per-phase settings), not results: io500 writes them to result.txt and result_summary.txt "
                "beside it")
    if _SYSTEM_INFO.search(text) and not _DRIVER_LOG.search(text):
        return ("expected io500 results; found an io500 system description (system-information.txt from "
                "the io500 info creator), not results: read result.txt or result_summary.txt instead")
    return ""

# ---------------------------------------------------------------------------------------------
# Phases into runs


def _run(phase: Phase, version: str, run_tags: list[tuple[str, str]], source: str) -> Run | None:
    """The run of one phase, or None for a phase that is not one storage operation."""
    name = phase.name.replace("_", "-")
    name = _PROTOTYPE_NAMES.get(name, name)
    ior = _IOR_PHASE.fullmatch(name)
    if ior is None and name not in _OPERATIONS:
        return None
    metric = Metric.BANDWIDTH if ior else Metric.OPERATION_RATE
    if (metric is Metric.BANDWIDTH) != phase.unit.endswith("B/s"):
        raise ToolOutputError(source, f"line {phase.line}", f"expected {'a bandwidth' if ior else 'an operation rate'}"
                              f" for phase {phase.name}; found a value in {phase.unit}")
    nodes, ppn, launched = _placement(phase, source)
    processes = launched or phase.processes
    tags = [("phase", phase.name)]
    if ior:
        workload, more = _ior_workload(ior[1], ior[2], phase, nodes, ppn, source)
    else:
        workload = Workload(operation=_OPERATIONS[name], transfer_size=None, nodes=nodes, ppn=ppn,
                            shared_directory=_shared_directory(name, phase))
        more = _mdtest_tags(phase, workload, source)
    tags += more
    return Run(label=name, workload=workload, metric=metric, samples=(phase.value,), unit=phase.unit,
               origin=Origin(path=source, line=phase.line, tool="io500", tool_version=version),
               tags=_merged(tags + phase.tags + run_tags),
               durations=() if phase.duration is None else (phase.duration,),
               placement=Placement(processes) if processes else None)


def phase_run(name: str, value: float, unit: str, *, nodes: int | None, ppn: int | None, source: str, line: int,
              version: str, tags: tuple[tuple[str, str], ...] = ()) -> Run | None:
    """The run of a phase known only by its name and value (a row of the io500 list), its placement as stated;
    None for a phase that is not one storage operation."""
    run = _run(Phase(name, line, value, unit, None, tags=list(tags)), version, [], source)
    if run is None or run.workload is None:
        return run
    return replace(run, workload=replace(run.workload, nodes=nodes, ppn=ppn or 1))


def _merged(tags: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The tags with the values of a repeated key joined by '; ' (two reasons a phase is invalid)."""
    joined: dict[str, str] = {}
    for key, value in tags:
        joined[key] = f"{joined[key]}; {value}" if key in joined else value
    return tuple(joined.items())


def _ior_workload(kind: str, operation: str, phase: Phase, nodes: int | None, ppn: int,
                  source: str) -> tuple[Workload, list[tuple[str, str]]]:
    words = _arguments(phase.command, "ior")
    size = _transfer_size(words, phase.command_line, source)
    shared = None if words is None else "-F" not in words
    tags = []
    if kind == "hard" and size is None and words is None and phase.hard_by_rules:
        size, shared = _HARD_TRANSFER, True
        tags.append(("transfer_size", _HARD_NOTE))
    named = _RANDOM_SIZE.match(kind)
    if named and size is None:
        size = int(named[1]) * _RANDOM_UNITS[named[2]]
        tags.append(("transfer_size", f"{size} B, fixed for {phase.name} by io500's source; this file does not print it"))
    direct = True if words and ("--posix.odirect" in words or "-B" in words) else None
    workload = Workload(operation=Operation.WRITE if operation == "write" else Operation.READ,
                        transfer_size=None if size is None else Q_(size, "B"), nodes=nodes, ppn=ppn,
                        access=Access.RANDOM if kind.startswith("rnd") else Access.SEQUENTIAL,
                        direct=direct, shared_file=shared)
    if words is not None:
        tags += readback(words, source=source, where=f"line {phase.command_line}").tags(
            workload.operation, nodes, wrote=False)
    elif phase.hard_by_rules and not named:  # ior-easy and ior-hard: io500's scripts fix -C -Q 1 -e
        tags += [(key, f"{value}, {_RULES_NOTE}") for key, value in _BY_RULES.tags(workload.operation, nodes, wrote=False)]
    return workload, tags


def _shared_directory(name: str, phase: Phase) -> bool | None:
    """Whether every process of an mdtest phase works in one directory: without -u (a directory per task) it
    does; io500's rules run the hard phases so and the easy ones with -u. None for find."""
    if not name.startswith("mdtest-"):
        return None
    words = _arguments(phase.command, "mdtest")
    return name.startswith("mdtest-hard") if words is None else "-u" not in words


def _mdtest_tags(phase: Phase, workload: Workload, source: str) -> list[tuple[str, str]]:
    """Whose items an mdtest phase stats, reads or removes under its -N stride (each io500 phase is its own run)."""
    words = _arguments(phase.command, "mdtest")
    if words is None:
        return []
    given = stride(shlex.join(["mdtest", *words]), source=source, where=f"line {phase.command_line}")
    return stride_tags(given, workload.operation, workload.nodes, workload.ppn, created=False)


def _arguments(command: str, program: str) -> list[str] | None:
    """The arguments after ``program`` (ior, mdtest) in ``command``; None without it."""
    words = split_words(command)
    for index, word in enumerate(words):
        if word.rsplit("/", 1)[-1] == program:
            return words[index + 1:]
    return None


def _placement(phase: Phase, source: str) -> tuple[int | None, int, int | None]:
    """Nodes, processes per node and, where only their total is stated, that total, from the MPI launcher that
    starts the phase's program; (None, 1, None) where no launcher says."""
    words = split_words(phase.command)
    names = [word.rsplit("/", 1)[-1] for word in words]
    options = _LAUNCHERS.get(names[0]) if names else None
    start = next((i for i, name in enumerate(names) if name in _PROGRAMS), None)
    if options is None or start is None:
        return None, 1, None
    stated: dict[str, int] = {}
    for index, word in enumerate(words[1:start], start=1):
        option, equals, value = word.partition("=")
        if option not in options:
            continue
        value = value if equals else words[index + 1] if index + 1 < start else ""
        if not COUNT.fullmatch(value) or int(value) < 1:
            raise ToolOutputError(source, f"line {phase.command_line}", f"expected a whole number of at least 1 "
                                  f"after {names[0]}'s {option}; found {value[:40]!r}")
        stated[options[option]] = int(value)
    if "sets" in stated:  # jsrun: resource sets of tasks, so many sets per host
        per_set, per_host = stated.get("per_set", 1), stated.get("sets_per_node")
        stated = {"total": stated["sets"] * per_set}
        if per_host and stated["total"] % (per_set * per_host) == 0:
            stated["per_node"] = per_set * per_host
    total, per_node, nodes = stated.get("total"), stated.get("per_node"), stated.get("nodes")
    if nodes and per_node:
        return nodes, per_node, None
    if total and per_node and total % per_node == 0:
        return total // per_node, per_node, None
    if total and nodes and total % nodes == 0:
        return nodes, total // nodes, None
    return None, 1, total


def _transfer_size(words: list[str] | None, line: int, source: str) -> int | None:
    """IOR's ``-t`` (the last one, as IOR's option parser keeps): k, m, g, t are powers of 1024."""
    value = None
    for index, word in enumerate(words or []):
        if word == "-t" and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith(("-t=", "--transferSize=")):
            value = word.split("=", 1)[1]
    if value is None:
        return None
    size = binary_size(value)
    if not size:
        raise ToolOutputError(source, f"line {line}", f"expected a transfer size after ior's -t such as "
                              f"'2m' or '47008'; found {value[:40]!r}")
    return size

