"""Read mdtest's text output (mdtest 1.9.3, and the mdtest of IOR 3.2 to 4.x) into operation-rate runs.

One :class:`~probes.core.run.Run` per phase of the SUMMARY table (File creation, Directory stat,
Tree removal ...) per mdtest test, in op/s as mdtest prints them. mdtest prints only a summary
over its iterations, so each run carries ``reported`` and no samples.
"""

# Format history, as read from the corpus (../shared/corpus/mdtest) and mdtest's source:
#   1.9.3 (LLNL)   "SUMMARY: (of N iterations)", rows "File creation     :  max min mean std".
#                  With barriers (the default) each iteration's value is the highest of the
#                  tasks' estimates, and max/min/mean/std are over the iterations, the std a
#                  population one (divided by N: akrr's 2 iterations 104.022 and 96.640 give 3.691).
#   IOR 3.2-3.4    "SUMMARY rate:" (and "SUMMARY time:" with -P); same rows, wider names. The
#                  version line may still say 1.9.3. Since hpc/ior#113 (2018) max/min/mean/std are
#                  over every task's own estimate in every iteration (oci-beegfs: 1 iteration,
#                  max 1913301.546, min 1913298.908), so they say little about repetitions.
#   late 3.4, 4.x  rows without ':' (hpc/ior#336, 2021): statistics over the iterations, sample
#                  std (divided by N - 1; #336's example of 2 iterations). 4.x headings read
#                  "SUMMARY rate (in ops/sec):" and "SUMMARY time (in ms/op):".
# Tree creation/removal rows are always over the iterations (task 0's timing), with the same std
# as the file rows of their release: population before #336, sample after.
#
# Units. Rates are operations per second: mdtest's verbose lines say "ops/sec", 4.x headings
# "(in ops/sec)", and io500 reports the same figures in kIOPS (summit mdtest_hard_read 15354716.853
# here, "15354.700 kiops" in io500/summit_io500-sc18_full_summary.txt). The SUMMARY time table
# holds the seconds each phase took, NOT ms/op as 4.x's heading says: rate x time = items, e.g.
# narval easy write 79439.712 op/s x 315.707 s = 25.08e6 = 640 tasks x 39187 items, lrz-daos
# Tree creation 1.755 op/s x 0.570 s = 1 directory (0.570 ms/op would be 1754 op/s). Sizes: mdtest
# prints none but -w/-e, bytes per file, which are tagged as written on the command line.

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.core.run import Origin, Run, distinct_labels
from probes.core.stats import from_reported
from probes.core.units import Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers.mdtest_tables import HEADER, PHASES, STONEWALL, Block, Invocation, Table, read_invocations
from probes.readers.textlines import beginning, split_words

__all__ = ["looks_like", "parse", "FORMAT", "stride", "stride_tags"]

# What iobound read says it reads.
FORMAT = "mdtest output"

UNIT = "op/s"

_SNIFF = Pattern(r"^mdtest-\S+ was launched with \d+ total task"
                    r"|^SUMMARY(?: rate| time)?(?: \([^)\n]*\))?: \(of \d+ iterations?\)", re.MULTILINE)
_COUNT = Pattern(r"\d{1,9}")
# Short options of mdtest that take a value (1.9.3's getopt string and 3.x/4.x's option table);
# the others are flags. -N is the stride between neighbour tasks, not a number of nodes.
_VALUED = frozenset("AabdefGiIlnNpsVwWxz")
_FLAGS = frozenset("BcCDEFghkLMPrRStTuUvXyYZ")
_PHASE_FLAGS = {"C": "create", "T": "stat", "E": "read", "r": "remove", "U": "rename"}
# With -N s, task i stats the items of task i + s, reads those of i + 2s and removes those of i + 3s
# (mdtest.c names them rank + k * nstride, modulo the tasks).
_STRIDES = {Operation.STAT: 1, Operation.OPEN: 2, Operation.REMOVE: 3}


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like mdtest's output: its launch line or a SUMMARY heading; a cheap sniff."""
    return _SNIFF.search(text) is not None


def parse(text: str, *, source: str) -> list[Run]:
    """One operation-rate run per phase of each mdtest test, in op/s.

    Parameters
    ----------
    text : what mdtest printed; several runs one after another are read in turn, and lines
        around them (launcher, wrapper or verbose messages) are skipped.
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled with the phase (``"File creation"``; ``" (N tasks)"`` added where one mdtest
        run tests several task counts; repeated labels get ``" (line N)"``), metric operation
        rate in op/s, ``reported`` = mdtest's summary, origin line = the summary row.

    Raises
    ------
    ToolOutputError
        If the text is not mdtest's output, a run has no SUMMARY table (it failed: the error
        quotes mdtest's failure line, or the output is cut), a table is cut before its Tree
        removal row or has a malformed row, or the processes per node are not shown.

    Notes
    -----
    - ``reported`` is ``from_reported(iterations, mean, std, min, max)``; the iterations come
      from "(of N iterations)", else ``-i``; if neither is printed the run is tagged
      ``("iterations", "unknown ...")`` and n = 1 with no std (a std needs a known n).
      The std is a sample std over the iterations (1.9.3's population std is converted), and
      left out where mdtest's is over every task's estimate (IOR 3.2 to 3.4); see the
      ``statistics`` tag.
    - Rows of 0.000 in every column are phases mdtest did not run; they are skipped when the
      command line shows the phase was not asked for (-C/-T/-E/-r/-U select phases, none means
      all; tree creation goes with -C, tree removal with -r). A zero row of a phase that was
      asked for, or with no command line, is kept and tagged ``zero``.
    - ``durations`` are seconds per iteration: the verbose (-v) lines of task 0 where there is one
      per iteration, else the SUMMARY time table's longest task when there was one iteration.
      With more iterations that table's summary is a ``phase_time`` tag.
    - Nodes come from "on N node(s)"; processes per node are tasks / nodes (mdtest's -N is a
      stride, not nodes). Without -u, task 0 alone builds and removes the tree, so tree runs
      have 1 node x 1 ppn. -S (one file for all tasks) sets ``shared_file`` of file runs, and no -u
      ``shared_directory``; -w/-e
      bytes per file and -u (unique directory per task) are tags, and so is the "File create
      (stonewall)" row (``stonewall``).
    - Who handles the items (see :func:`stride_tags`): stat, read and remove runs whose -N
      stride hands each task the items a task on another node created are tagged
      ``("read_by_other_node", "mdtest -N 24")``; stat and read runs of items the same tasks
      created in this test, on their own nodes, ``("reads_own_writes", why)``.
    """
    if not HEADER.search(text):
        found = beginning(text)
        raise ToolOutputError(source, "line 1", "expected mdtest's output (a line 'mdtest-<version> was "
                              f"launched with N total task(s) on M node(s)'); found {found}")
    runs = []
    for invocation in read_invocations(text, source):
        runs.extend(_invocation_runs(invocation, source))
    return distinct_labels(runs)


# ---------------------------------------------------------------------------------------------
# From tables to runs (the tables: probes.readers.mdtest_tables)


@dataclass(frozen=True)
class _Options:
    """What the command line asks for; ``known`` is False when no command line was printed."""

    known: bool
    flags: frozenset[str] = frozenset()
    values: tuple[tuple[str, str], ...] = ()

    def value(self, letter: str) -> str | None:
        return dict(self.values).get(letter)

    def requested(self, phase: str) -> bool | None:
        """Whether the phase was asked for; None when the command line is unknown."""
        if not self.known:
            return None
        chosen = {p for f, p in _PHASE_FLAGS.items() if f in self.flags}
        return not chosen or phase in chosen


def _options(command: str | None) -> _Options:
    """Flags and option values of mdtest's command line (getopt style: -n 10, -n=10, -n10, -FC)."""
    if command is None:
        return _Options(False)
    words = split_words(command)
    flags, values = set(), {}
    index = 1  # words[0] is the program
    while index < len(words):
        word = words[index]
        index += 1
        if word.startswith("--") or not word.startswith("-"):
            continue
        for position, letter in enumerate(word[1:], start=1):
            if letter in _VALUED:
                rest = word[position + 1:].removeprefix("=")
                if not rest and index < len(words):
                    rest, index = words[index], index + 1
                values.setdefault(letter, rest)
                break
            if letter not in _FLAGS:
                break
            flags.add(letter)
    return _Options(True, frozenset(flags), tuple(sorted(values.items())))


def _invocation_runs(run: Invocation, source: str) -> list[Run]:
    if not any(block.tables for block in run.blocks):
        why = (f"the run failed (line {run.failure[1]}: {run.failure[0]!r})" if run.failure
               else "the output is truncated or the run failed")
        raise ToolOutputError(source, f"line {run.line}", f"expected a SUMMARY table for this mdtest-{run.version} "
                              f"run; found none: {why}")
    options = _options(run.command)
    runs = []
    for block in run.blocks:
        runs.extend(_block_runs(run, block, options, len(run.blocks) > 1, source))
    if not runs:
        raise ToolOutputError(source, f"line {run.line}", "expected a rate of a phase the command line asks for; "
                              "found only rows of 0.000 for phases it does not ask for: the table is cut or mangled")
    return runs


def _block_runs(run: Invocation, block: Block, options: _Options, several: bool, source: str) -> list[Run]:
    rate = next((t for t in block.tables if t.kind in ("", "rate")), None)
    time = next((t for t in block.tables if t.kind == "time"), None)
    if rate is None:
        what = "only a SUMMARY time table (mdtest -Z); iobound reads rates and does not derive them" if time \
            else "no SUMMARY table: the output is truncated or the run failed"
        raise ToolOutputError(source, f"line {block.line}", f"expected a SUMMARY rate table for this test; found {what}")
    iterations, iteration_tags = _iterations(rate, options, source)
    nodes, ppn = _placement(run, block, source)
    common = [("tasks", str(block.tasks)), ("items", block.items)] + iteration_tags + _option_tags(options)
    runs = []
    for name, (values, colon, line) in rate.rows.items():
        if name == STONEWALL:
            continue
        operation, kind, phase = PHASES[name]
        high, low, mean, std = (float(v) for v in values)
        requested = options.requested(phase)
        zero = high == low == mean == std == 0
        if zero and requested is False:
            continue
        n = iterations or 1
        std, statistics = _statistics(rate.kind, colon, kind, options, n, std)
        try:
            reported = from_reported(n, mean, std, low, high)
        except ValueError as exc:
            raise ToolOutputError(source, f"line {line}", f"expected a consistent summary (min <= mean <= max); "
                                  f"{exc}") from exc
        durations, time_tags = _durations(name, n, block, time)
        tags = [("object", kind)] + common + [("statistics", statistics)] + time_tags
        tags += _stonewall(rate, time) if name == "File creation" else []
        tags += [("zero", "mdtest printed 0.000 in every column for a phase the command line asks for (or "
                          "no command line was printed): it did not run or did nothing")] if zero else []
        workload, more = _workload(operation, kind, nodes, ppn, block.tasks, options, run.version)
        if kind != "tree" and options.known:
            more += stride_tags(stride(run.command, source=source, where=f"line {run.command_line}"), operation,
                                workload.nodes, workload.ppn, created=options.requested("create") is True)
        label = f"{name} ({block.tasks} tasks)" if several else name
        runs.append(Run(label=label, workload=workload, metric=Metric.OPERATION_RATE, samples=(), unit=UNIT,
                        origin=Origin(source, line, "mdtest", run.version), tags=tuple(tags + more),
                        reported=reported, durations=durations))
    return runs


def _iterations(table: Table, options: _Options, source: str) -> tuple[int | None, list[tuple[str, str]]]:
    if table.iterations is not None:
        if table.iterations < 1:
            raise ToolOutputError(source, f"line {table.line}", "expected at least 1 iteration; found 0")
        return table.iterations, [("iterations", str(table.iterations))]
    given = options.value("i")
    if given is not None and _COUNT.fullmatch(given) and int(given) >= 1:
        return int(given), [("iterations", f"{given} (-i on the command line)")]
    return None, [("iterations", "unknown: neither '(of N iterations)' nor -i is printed; the summary "
                                 "counts as 1 repetition, without a std")]


def _statistics(kind: str, colon: bool, object_: str, options: _Options, n: int,
                std: float) -> tuple[float | None, str]:
    """The sample std for from_reported (or None) and a note saying what mdtest's max/min/std are over."""
    over = f"over the {n} iterations" if n > 1 else "over the one iteration"
    if kind == "" and object_ != "tree" and "B" in options.flags:
        return None, ("max, min and mean over every task's own estimate in every iteration (mdtest 1.9.3 "
                      "with -B, no barriers); the std is not one of repetitions and is left out")
    if kind != "" and colon and object_ != "tree":
        return None, ("max, min and mean over every task's own estimate in every iteration (the mdtest of IOR "
                      "3.2 to 3.4, hpc/ior#113); the std is not one of repetitions and is left out")
    if n == 1:
        return None, f"max, min and mean {over}"
    if kind == "" or colon:  # 1.9.3 and the tree rows of IOR 3.2-3.4 divide the variance by n
        return std * math.sqrt(n / (n - 1)), (f"max, min, mean and std {over}; mdtest's population std "
                                              "converted to a sample std")
    return std, f"max, min, mean and sample std {over}"


def _durations(name: str, n: int, block: Block, time: Table | None) -> tuple[tuple[float, ...], list[tuple[str, str]]]:
    """Seconds per iteration (verbose lines, or the time table of one iteration), else a tag of the time summary."""
    verbose = block.verbose.get(name, [])
    if len(verbose) == n and all(seconds > 0 for seconds in verbose):  # "0.000 sec" is below the resolution
        return tuple(verbose), []
    row = time.rows.get(name) if time else None
    if row is None:
        return (), []
    high, low, mean, std = (float(v) for v in row[0])
    if n == 1:
        return (high,), []
    return (), [("phase_time", f"seconds per iteration (SUMMARY time, line {row[2]}): max {high:.3f}, min "
                               f"{low:.3f}, mean {mean:.3f}, std {std:.3f}")]


def _stonewall(rate: Table, time: Table | None) -> list[tuple[str, str]]:
    row = rate.rows.get(STONEWALL)
    if row is None:
        return []
    seconds = time.rows.get(STONEWALL) if time else None
    during = f" in {seconds[0][2]} s" if seconds else ""
    return [("stonewall", f"{row[0][2]} op/s{during}: the items created before the stonewall timer, "
                          "all iterations together")]


def stride_tags(step: int, operation: Operation, nodes: int | None, ppn: int, *, created: bool) -> list[tuple[str, str]]:
    """Whose items a stat, read or remove run handles under mdtest's -N ``step``, as tags.

    ``read_by_other_node`` where every task's partner (``k`` x ``step`` tasks on: 1 for stat,
    2 for read, 3 for remove) is on another node, tasks placed in blocks of ``ppn`` per node
    (the launchers' default); ``reads_own_writes`` for stats and reads of items the same
    tasks ``created`` in this test on their own nodes. Nothing when ``nodes`` is not known.

    >>> stride_tags(24, Operation.STAT, 16, 24, created=True)
    [('read_by_other_node', 'mdtest -N 24')]
    >>> stride_tags(1, Operation.STAT, 170, 12, created=False)
    []
    """
    if operation not in _STRIDES or nodes is None:
        return []
    tasks = nodes * ppn
    shift = _STRIDES[operation] * step % tasks
    if nodes > 1 and ppn <= shift <= tasks - ppn:
        return [("read_by_other_node", f"mdtest -N {step}")]
    if not created or operation is Operation.REMOVE:
        return []
    if not step:
        return [("reads_own_writes", "each task handles the items it created in this test (no -N stride)")]
    return [("reads_own_writes", f"-N {step} with {ppn} process{'es' if ppn != 1 else ''} per node on {nodes} "
                                 f"node{'s' if nodes != 1 else ''} leaves the partner task on the same node")]


def stride(command: str, *, source: str, where: str) -> int:
    """mdtest's -N on ``command`` (the program, then its options): the stride between neighbour tasks, 0 without it.

    Raises
    ------
    ToolOutputError
        If -N is not a whole number (``where`` names the line).

    >>> stride("mdtest -n 2730 -u -F -C -T -r -N 24 -d /tmp", source="x", where="line 4")
    24
    """
    given = _options(command).value("N")
    if given is None:
        return 0
    if not _COUNT.fullmatch(given):
        raise ToolOutputError(source, where, f"expected a whole number after mdtest's -N (the stride between "
                              f"neighbour tasks); found {given[:40]!r}")
    return int(given)


def _option_tags(options: _Options) -> list[tuple[str, str]]:
    if not options.known:
        return [("directory", "unknown: no command line printed")]
    tags = [("directory", "unique per task (-u)" if "u" in options.flags else "shared by all tasks")]
    for letter, key in (("w", "write_bytes"), ("e", "read_bytes")):
        given = options.value(letter)
        if given and given.strip("0"):
            tags.append((key, f"{given} per file (-{letter})"))
    if options.value("a"):
        tags.append(("api", options.value("a")))
    return tags


def _placement(run: Invocation, block: Block, source: str) -> tuple[int, int]:
    """Nodes and processes per node of one test, from the launch line ('on N node(s)')."""
    where = f"line {run.line}"
    if run.nodes is None or run.nodes < 1:
        raise ToolOutputError(source, where, "expected 'on N node(s)' in mdtest's launch line; found none, so "
                              "the processes per node are unknown")
    if block.tasks == run.tasks and run.tasks % run.nodes == 0 and run.tasks >= run.nodes:
        return run.nodes, run.tasks // run.nodes
    if run.nodes == 1 and 1 <= block.tasks <= run.tasks:
        return 1, block.tasks
    raise ToolOutputError(source, f"line {block.line}", f"expected tasks spread evenly over the {run.nodes} "
                          f"node(s) of line {run.line}; found a test on {block.tasks} of {run.tasks} tasks, "
                          "whose processes per node are not printed")


def _workload(operation: Operation, kind: str, nodes: int, ppn: int, tasks: int, options: _Options,
              version: str) -> tuple[Workload, list[tuple[str, str]]]:
    tags: list[tuple[str, str]] = []
    if kind == "tree" and options.known and "u" not in options.flags:
        nodes, ppn = 1, 1
        tags.append(("tree", f"built and removed by task 0 alone (no -u), while the {tasks} tasks wait"))
    elif kind == "tree" and options.known:
        tags.append(("tree", "every task builds its own tree (-u); mdtest's rate counts the directories of one"))
    shared = None
    if kind == "file" and options.known:
        shared = "S" in options.flags
    # -R: random order for stat (every release) and for read (1.9.3; 4.x says "only for stat").
    random = "R" in options.flags and (operation is Operation.STAT
                                       or (operation is Operation.OPEN and version.startswith("1.")))
    return Workload(operation=operation, transfer_size=None, nodes=nodes, ppn=ppn,
                    access=Access.RANDOM if random else Access.SEQUENTIAL, shared_file=shared,
                    shared_directory=("u" not in options.flags) if options.known else None), tags

