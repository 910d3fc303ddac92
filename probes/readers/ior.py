"""Read IOR's output (text of IOR 3.0 to 4.x, and ``-O summaryFormat=json``) into bandwidth runs.

One :class:`~probes.core.run.Run` per test and operation (write, read), one sample per iteration,
in MiB/s as IOR prints them; what the output does not say is refused, never guessed.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.readers.jsonfields import check, describe
from probes.readers.jsonfields import field as json_field, number as json_number
from probes.core.records import Placement
from probes.core.run import Origin, Run, distinct_labels
from probes.core.stats import Summary, from_reported
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers.textlines import beginning, finite_number, line_of, split_words

__all__ = ["looks_like", "parse", "FORMAT", "Readback", "readback"]

# What iobound read says it reads.
FORMAT = "IOR output (text, or -O summaryFormat=json)"

# Units. IOR's "bw(MiB/s)" column, the summary's "Max(MiB)"/"Mean(MiB)" and the JSON "bwMiB" /
# "bwMeanMIB" are 2^20 bytes per second. IOR's "MB" is NOT always 2^20: in every text file of the
# corpus (IOR 3.0.1 to 4.1.0) "Max Write: 421.05 MiB/sec (441.51 MB/sec)" has MB = 10^6
# (421.05 * 1.048576 = 441.51), and the JSON "writeMB" likewise. IOR 2.x is said to print
# "MB/s" columns meaning 2^20, but the corpus holds no IOR 2.x output to check that against,
# so a "bw(MB/s)" column is refused rather than read with a guessed base.
UNIT = "MiB/s"

_HEADER = re.compile(r"^IOR-(\S+?): MPI Coordinated Test of Parallel I/O", re.MULTILINE)
_JSON_OPENING = re.compile(r"^[ \t\ufeff]*\{", re.MULTILINE)
_COMMAND = re.compile(r"^Command line(?: used)?\s*:\s*(.*)$")
_TEST_ID = re.compile(r"^(?:TestID\s*:\s*(\d+)|Test (\d+) started\b)")
# The option lines of the "Options:" block (3.2+, "key : value") and of the old "Summary:"
# block (3.0/3.1, tab-indented "key = value"); only the keys iobound uses.
_KEYS = ("api", "access", "ordering in a file", "ordering inter file", "task offset", "nodes", "tasks",
         "clients per node", "clients", "repetitions", "xfersize", "aggregate filesize", "stonewallingTime")
_OPTION = re.compile(r"^\s*(" + "|".join(re.escape(k) for k in _KEYS) + r")\s*[:=]\s*(.*?)\s*$")
_RESULTS_HEADER = re.compile(r"^access\s+bw\(([A-Za-z]+)/s\)")
_SUMMARY_TITLE = re.compile(r"^Summary of all tests:")
_SUMMARY_HEADER = re.compile(r"^Operation\s+Max\(MiB\)")
_ROW = re.compile(r"^(write|read)\s")
_MOVED = re.compile(r"^WARNING: Using actual aggregate bytes moved = ([0-9]{1,20})\.?\s*$")
_COUNT = re.compile(r"[0-9]{1,9}")
_CLIENTS = re.compile(r"([0-9]{1,9})\s*\(([0-9]{1,9}) per node\)")
_SIZE = re.compile(r"([0-9]{1,15})(\.[0-9]+)?\s*(bytes|KiB|MiB|GiB|TiB)")
_SIZE_UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
# IOR 3.0/3.1 print the offset in the ordering: "constant task offsets = 1", "random task offsets >= 1, seed=0".
_OLD_OFFSET = re.compile(r"task offsets (?:=|>=) ([0-9]{1,9})")
# IOR's short options that take a value (its option table, 3.x and 4.x); the others are flags, and
# flags may be grouped ("-Ce"). Options of the -O directive string that IOR names the same way.
_VALUED = frozenset("ADGJMNOQTUXabdfijlost")
_DIRECTIVES = {"reorderTasks": "C", "reorderTasksConstant": "C", "reorderTasksRandom": "Z",
               "taskPerNodeOffset": "Q", "fsync": "e", "fsyncPerWrite": "Y"}
_OPERATIONS = {"write": Operation.WRITE, "read": Operation.READ}
# How every line the text reader looks at, but for option lines, begins (the patterns above): a log
# of 20,000 runs has a million lines, and one prefix test rejects the others without trying each pattern.
_STARTS = ("IOR-", "Command line", "Test", "access", "Summary of all tests:", "Operation", "WARNING: Using actual",
           "write", "read")


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like IOR's text or JSON output: a cheap sniff, not a validation.

    Examples
    --------
    >>> looks_like("IOR-3.3.0: MPI Coordinated Test of Parallel I/O\\nBegan : today\\n")
    True
    >>> looks_like('{"Version": "3.3.0", "Began": "today", "tests": []}')
    True
    >>> looks_like("access,rank,runtime\\nwrite,0,1.0\\n")
    False
    """
    if _HEADER.search(text):
        return True
    return ('"Version"' in text and '"Began"' in text and ('"tests"' in text or '"Command line"' in text)
            and _JSON_OPENING.search(text) is not None)


def parse(text: str, *, source: str) -> list[Run]:
    """One bandwidth run per IOR test and operation (write, read), in MiB/s.

    Parameters
    ----------
    text : what IOR printed: its text output (several runs one after another are read in
        turn; lines around them, such as launcher or ssh messages, are skipped), or its
        ``-O summaryFormat=json`` output.
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled ``"<api> <access> <write|read>"`` (``" test N"`` added for test ids other
        than 0; repeated labels get ``" (line N)"``), metric bandwidth in MiB/s, one sample
        per iteration in the order run; the origin's line is the first result row.

    Raises
    ------
    ToolOutputError
        If the text is not IOR's output, is truncated (an IOR run with no result rows and no
        summary, or fewer rows than its repetitions; the error names the line of the run's
        header), has a malformed row, JSON that cannot be repaired, or leaves the workload
        unknown (no transfer size, no processes per node).

    Notes
    -----
    - Samples are the per-iteration rows (text ``write``/``read`` rows, JSON ``Results``).
      Where an operation has none, but the ``Summary of all tests`` table (or the JSON
      ``summary``) has it, the run's one sample is the summary's mean and it is tagged
      ``("summary_only", ...)`` with the repetitions, min, max and standard deviation: the
      per-iteration values are not invented from them. Max-only lines (``Max Write:``) are
      never read as samples.
    - Nodes are ``nodes`` where printed; IOR 3.0 to 3.2 print only tasks and clients per
      node, so nodes are tasks / clients per node (tagged ``("nodes", "tasks / clients per
      node")``). Processes per node are ``clients per node`` (IOR counts them on node 0:
      ``nodes x clients per node`` may differ from ``tasks``; every run is tagged with its tasks).
      Where the tasks are not a multiple of the clients per node (tasks spread unevenly), nodes
      stay unknown (None), the tag ``nodes`` says so, and the tasks are the run's placement.
    - IOR prints each figure twice: the per-iteration rows and the ``Summary of all tests``
      (max, min, mean over them). Where the summary's max, min or mean is not that of the rows
      within IOR's rounding (two decimals), the run is tagged ``inconsistent`` with both figures.
    - Access is random where IOR says so (``ordering in a file : random``, ``random
      offsets``, ``randomOffset: 1``); "random task offset" orders tasks, not offsets.
    - Direct I/O is true where the output shows it (``useO_DIRECT`` in the JSON parameters,
      ``-B``, ``--posix.odirect`` or ``useO_DIRECT=1`` on the command line), else unknown.
    - IOR releases print invalid JSON at times; trailing commas, missing commas between
      values and bare ``nan``/``inf`` numbers are repaired and the repair is tagged
      ``("json_repaired", ...)`` on every run; anything else is refused.
    - Who reads what was written, and fsync (see :class:`Readback`): a read whose tasks read
      what a task on another node wrote (``-C`` or ``-Z``, ``-Q`` nodes on) is tagged
      ``("read_by_other_node", "IOR -C -Q 1")``; a read of the same test's writes on the writing
      nodes (no reordering, or ``-C -Q 1`` on one node) ``("reads_own_writes", why)``; a write
      flushed before its phase ends (``-e`` fsync on close, ``-Y`` after every write)
      ``("fsync", "IOR -e")``. The reordering is the one the options block prints; fsync is
      read from the command line (text) or ``Parameters`` (JSON).
    """
    header = _HEADER.search(text)
    # Only a JSON opening before the first header counts: no need to look through the whole log for one.
    opening = _JSON_OPENING.search(text, 0, len(text) if header is None else header.start())
    if opening is not None:
        return distinct_labels(_parse_json(text, opening, source))
    if header is None:
        found = beginning(text)
        raise ToolOutputError(source, "line 1", "expected IOR's output (a line 'IOR-<version>: MPI "
                              f"Coordinated Test of Parallel I/O' or its JSON); found {found}")
    return distinct_labels(_parse_text(text, source))


# ---------------------------------------------------------------------------------------------
# Who reads what was written


@dataclass(frozen=True)
class Readback:
    """How an IOR run hands its data from writers to readers, which decides the caches a read or write can use.

    ``reorder`` is ``"-C"`` (each task reads what the task ``offset`` nodes on wrote),
    ``"-Z"`` (a random task at least ``offset`` nodes on) or ``""`` (its own data);
    ``fsync`` is ``"-e"`` (fsync on close), ``"-Y"`` (after every write) or ``""``. IOR shifts
    readers by ``offset`` x the tasks per node, so only with more than one node, and an
    offset that is not a multiple of the nodes, does the reader sit on another node; the
    page cache of that node never held the data (IOR's tutorial, "First Steps with IOR").
    """

    reorder: str = ""
    offset: int = 1
    fsync: str = ""

    def tags(self, operation: Operation, nodes: int | None, wrote: bool) -> list[tuple[str, str]]:
        """The tags of one run: ``fsync`` for writes; ``read_by_other_node``, or ``reads_own_writes`` when the
        same test ``wrote`` the data on the readers' nodes. ``nodes=None`` (not stated) counts as several."""
        if operation is Operation.WRITE:
            return [("fsync", f"IOR {self.fsync}")] if self.fsync else []
        shift = f"{self.reorder} -Q {self.offset}"
        if self.reorder and self.offset >= 1 and (
                nodes is None or nodes > 1 and (self.reorder == "-Z" or self.offset % nodes)):
            return [("read_by_other_node", f"IOR {shift}")]
        if not wrote:
            return []
        if not self.reorder:
            return [("reads_own_writes", "each task reads what it wrote in this test (no -C task reordering)")]
        on = f" on {nodes} node{'s' if nodes != 1 else ''}" if nodes else ""
        return [("reads_own_writes", f"{shift}{on} leaves each task reading what was written on its own node")]


def readback(words: list[str], *, source: str, where: str) -> Readback:
    """The :class:`Readback` an IOR command line asks for; ``words`` are its arguments after the program.

    The last of repeated options counts, as in IOR's parser; ``-O`` directives
    (``reorderTasks=1``, ``taskPerNodeOffset=2``, ``fsync=1`` ...) count like the options.

    Raises
    ------
    ToolOutputError
        If ``-Q`` is not a whole number (``where`` names the line).

    Examples
    --------
    >>> readback("-w -C -Q 1 -g -k -e -t 2m".split(), source="x", where="line 1")
    Readback(reorder='-C', offset=1, fsync='-e')
    """
    chosen: dict[str, str] = {}
    for letter, value in _short_options(words):
        if letter == "O":
            for directive in (value or "").split(","):
                key, _, given = directive.partition("=")
                if key.strip() in _DIRECTIVES:
                    chosen[_DIRECTIVES[key.strip()]] = given.strip()
        elif letter in "CZQeY":
            chosen[letter] = "1" if value is None else value
    offset = chosen.get("Q", "1")
    if not _COUNT.fullmatch(offset):
        raise ToolOutputError(source, where, f"expected a whole number of nodes after ior's -Q; found {offset[:40]!r}")
    on = {letter for letter, value in chosen.items() if value not in ("0", "")}
    reorder = "-C" if "C" in on else "-Z" if "Z" in on else ""
    fsync = "-Y" if "Y" in on else "-e" if "e" in on else ""
    return Readback(reorder, int(offset), fsync)


def _short_options(words: list[str]):
    """Each short option of an IOR command line as (letter, value or None), in order: ``-Ce`` gives C and e;
    ``-Q 1``, ``-Q=1`` and ``-Q1`` give Q with "1"; long options (``--posix.odirect``) are skipped."""
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if len(word) < 2 or not word.startswith("-") or word.startswith("--"):
            continue
        letters, equals, given = word[1:].partition("=")
        for position, letter in enumerate(letters):
            if letter in _VALUED:
                value = letters[position + 1:] or (given if equals else None)
                if value is None and index < len(words):
                    value, index = words[index], index + 1
                yield letter, value
                break
            yield letter, given if equals and position == len(letters) - 1 else None


def _ordering(text: str, offset: str | int | None, command: Readback) -> Readback:
    """The readback IOR printed ("ordering inter file", "task offset"), with the command line's fsync."""
    text = str(text)
    if not text:
        return command
    reorder = "-C" if "constant" in text else "-Z" if "random" in text else ""
    old = _OLD_OFFSET.search(text)
    if offset is None and old:
        offset = old[1]
    return replace(command, reorder=reorder, offset=int(offset) if offset is not None else command.offset)


# ---------------------------------------------------------------------------------------------
# Text output


@dataclass
class _Test:
    """One IOR test as read from the text: options, per-iteration rows and summary rows."""

    id: int
    line: int
    options: dict[str, tuple[str, int]] = field(default_factory=dict)
    rows: dict[str, list[tuple[float, int, float | None]]] = field(default_factory=dict)
    summary: dict[str, tuple[dict[str, str], int]] = field(default_factory=dict)
    # Bytes moved by a run stopped by stonewalling, from IOR's warning before the operation's first row.
    moved: dict[str, int] = field(default_factory=dict)
    pending_moved: int | None = None


@dataclass
class _Invocation:
    version: str
    line: int
    command: str = ""
    command_line: int = 0
    tests: list[_Test] = field(default_factory=list)
    results_seen: bool = False


def _parse_text(text: str, source: str) -> list[Run]:
    invocations: list[_Invocation] = []
    mode = ""  # "results" after a results header, "summary" after the summary title
    columns: list[str] = []
    for number, line in enumerate(iter_lines(text), start=1):
        if not line.startswith(_STARTS):  # most lines: only an option line (in no table) is read among them
            if mode == "" and invocations:
                option = _OPTION.match(line)
                if option:
                    _option(invocations[-1], option, number)
            continue
        header = _HEADER.match(line)
        if header:
            invocations.append(_Invocation(header[1], number))
            mode = ""
            continue
        if not invocations:
            continue
        run = invocations[-1]
        stripped = line.strip()
        command = _COMMAND.match(line)
        if command and not run.command:
            run.command, run.command_line = command[1], number
            continue
        test_id = _TEST_ID.match(line)
        if test_id:
            run.tests.append(_Test(int(test_id[1] or test_id[2]), number))
            mode = ""
            continue
        results = _RESULTS_HEADER.match(line)
        if results:
            if results[1] != "MiB":
                raise ToolOutputError(source, f"line {number}", f"expected a bw(MiB/s) column; found "
                                      f"bw({results[1]}/s), whose base (10^6 or 2^20) iobound does not guess")
            columns = stripped.split()
            mode = "results"
            run.results_seen = True
            continue
        if _SUMMARY_TITLE.match(line):
            mode = "summary"
            columns = []
            continue
        if mode == "summary" and _SUMMARY_HEADER.match(line):
            columns = stripped.split()
            continue
        moved = _MOVED.match(line)
        if moved and run.tests:
            run.tests[-1].pending_moved = int(moved[1])
            continue
        if _ROW.match(line) and mode in ("results", "summary"):
            _row(run, mode, columns, stripped, number, source)
            continue
        option = _OPTION.match(line) if mode == "" else None
        if option:
            _option(run, option, number)
    if not invocations:
        raise ToolOutputError(source, "line 1", "expected IOR's header line; found none")
    runs = []
    for invocation in invocations:
        runs.extend(_invocation_runs(invocation, source))
    return runs


def _option(run: _Invocation, option: re.Match, number: int) -> None:
    """Keep an option of the options block that iobound uses (the first of each name counts)."""
    if not run.tests:  # IOR 3.0/3.1 print "Test 0 started" before; be lenient
        run.tests.append(_Test(0, number))
    run.tests[-1].options.setdefault(option[1], (option[2], number))


def _row(run: _Invocation, mode: str, columns: list[str], row: str, number: int, source: str) -> None:
    cells = row.split()
    if mode == "results":
        if not run.tests:
            raise ToolOutputError(source, f"line {number}", "expected the test's options before its "
                                  "result rows; found a result row first")
        if len(cells) != len(columns):
            raise ToolOutputError(source, f"line {number}", f"expected {len(columns)} columns "
                                  f"({' '.join(columns)}); found {len(cells)}: the row is cut or malformed")
        bandwidth = _bandwidth(cells[1], f"line {number}", source)
        total = cells[columns.index("total(s)")] if "total(s)" in columns else ""
        seconds = finite_number(total)
        test = run.tests[-1]
        test.rows.setdefault(cells[0], []).append((bandwidth, number, seconds))
        if test.pending_moved is not None:
            test.moved.setdefault(cells[0], test.pending_moved)
            test.pending_moved = None
        return
    if not columns:
        raise ToolOutputError(source, f"line {number}", "expected the 'Operation Max(MiB) ...' header "
                              "of the summary table; found a row first")
    if len(cells) != len(columns):
        raise ToolOutputError(source, f"line {number}", f"expected {len(columns)} columns in the summary "
                              f"row; found {len(cells)}: the row is cut or malformed")
    values = dict(zip(columns, cells))
    test_id = values.get("Test#", "0")
    if not _COUNT.fullmatch(test_id):
        raise ToolOutputError(source, f"line {number}", f"expected a test number in column Test#; found {test_id!r}")
    test = next((t for t in run.tests if t.id == int(test_id)), None)
    if test is None:
        raise ToolOutputError(source, f"line {number}", f"expected a test {test_id} before its summary "
                              "row; found no such test in this IOR run")
    test.summary.setdefault(cells[0], (values, number))


def _bandwidth(text: str, where: str, source: str) -> float:
    value = finite_number(text)
    if value is None:
        raise ToolOutputError(source, where, f"expected a finite bandwidth in MiB/s; found {text[:40]!r}")
    return value


def _invocation_runs(run: _Invocation, source: str) -> list[Run]:
    where = f"line {run.line}"
    if not run.tests or not any(t.rows or t.summary for t in run.tests):
        missing = "result rows ('access bw(MiB/s) ...' table)" if not run.results_seen else "a write or read row"
        raise ToolOutputError(source, where, f"expected {missing} or the 'Summary of all tests:' table "
                              f"for this IOR-{run.version} run; found neither: the output is truncated "
                              "or the run failed")
    runs = []
    direct = _direct_from_command(run.command)
    command = readback(split_words(run.command)[1:], source=source, where=f"line {run.command_line}")
    for test in run.tests:
        options = test.options
        repetitions = _int_option(options, "repetitions", source) if "repetitions" in options else None
        offset = _int_option(options, "task offset", source) if "task offset" in options else None
        handed = _ordering(options.get("ordering inter file", ("", 0))[0], offset, command)
        for name, operation in _OPERATIONS.items():
            rows = test.rows.get(name, [])
            summary = test.summary.get(name)
            if not rows and summary is None:
                continue
            reported, durations = None, ()
            if rows:
                if repetitions is not None and len(rows) < repetitions:
                    raise ToolOutputError(
                        source, f"line {rows[-1][1]}",
                        f"expected {repetitions} {name} rows (repetitions : {repetitions}, line "
                        f"{options['repetitions'][1]}); found {len(rows)}: the output is truncated")
                samples = tuple(bw for bw, _, _ in rows)
                line = rows[0][1]
                if all(seconds is not None for _, _, seconds in rows):
                    durations = tuple(seconds for _, _, seconds in rows)
            else:
                values, line = summary
                samples = ()
                where = f"line {line}"
                reported = _reported(values.get("reps", "?"), *(_bandwidth(values.get(key, "?"), where, source) for key in
                                     ("Mean(MiB)", "StdDev", "Min(MiB)", "Max(MiB)")), where=where, source=source)
            workload, more, placement = _text_workload(test, operation, direct, source)
            tags = more + handed.tags(operation, workload.nodes, "write" in test.rows.keys() | test.summary.keys())
            if rows and summary is not None:
                tags += _rows_against_summary(name, samples, *summary)
            origin = Origin(path=source, line=line, tool="ior", tool_version=run.version)
            runs.append(Run(label=_label(options, test.id, name), workload=workload,
                            metric=Metric.BANDWIDTH, samples=samples, unit=UNIT, origin=origin,
                            tags=tuple(tags), reported=reported, durations=durations, placement=placement))
    return runs


def _row_rounding(value: float) -> float:
    """Half the last digit of a row's bandwidth as IOR prints it: PPDouble gives 6 decimals under 1, 2 under 3600,
    none above (IOR's ior-output.c); the summary table prints every figure with 2."""
    return 5e-7 if value < 1 else 0.005 if value < 3600 else 0.5


def _rows_against_summary(name: str, samples: tuple[float, ...], values: dict[str, str], line: int) -> list[tuple[str, str]]:
    """The tag ``inconsistent`` where the summary table's max, min or mean is not that of the operation's rows,
    beyond the rounding of both."""
    mean_rounding = sum(map(_row_rounding, samples)) / len(samples)
    figures = {"Max(MiB)": (max(samples), _row_rounding(max(samples))),
               "Min(MiB)": (min(samples), _row_rounding(min(samples))),
               "Mean(MiB)": (sum(samples) / len(samples), mean_rounding)}
    disagree = []
    for column, (counted, rounding) in figures.items():
        printed = finite_number(values.get(column, ""))
        if printed is not None and abs(printed - counted) > (rounding + 0.005) * (1 + 1e-9):
            kind = column.split("(")[0].lower()
            disagree.append(f"the {name} rows' {kind} is {counted:,.2f} MiB/s; the summary's {column} at line {line} "
                            f"says {printed:,.2f} MiB/s")
    return [("inconsistent", "; ".join(disagree))] if disagree else []


def _reported(reps: Any, mean: float, std: float, low: float, high: float, *, where: str, source: str) -> Summary:
    """The summary table's figures for an operation whose per-iteration rows are not in the output."""
    count = str(reps)
    if not _COUNT.fullmatch(count) or int(count) < 1:
        raise ToolOutputError(source, where, f"expected the number of repetitions in the summary; found {count[:40]!r}")
    try:
        return from_reported(int(count), mean, std if int(count) > 1 else None, low, high)
    except ValueError as exc:
        raise ToolOutputError(source, where, f"expected a consistent summary (min <= mean <= max); {exc}") from exc


def _label(options: dict, test_id: int, operation: str) -> str:
    api = options.get("api", ("", 0))[0].split(" ", 1)[0]
    access = options.get("access", ("", 0))[0].split(",", 1)[0].strip()
    words = [w for w in (api, access) if w] + ([f"test {test_id}"] if test_id else []) + [operation]
    return " ".join(words)


def _text_workload(test: _Test, operation: Operation, direct: bool | None,
                   source: str) -> tuple[Workload, list[tuple[str, str]], Placement | None]:
    """The test's workload, its tags, and its tasks as a placement where they do not give the nodes."""
    options = test.options
    tags: list[tuple[str, str]] = []
    placement = None
    nodes = _int_option(options, "nodes", source) if "nodes" in options else None
    ppn = _int_option(options, "clients per node", source) if "clients per node" in options else None
    tasks = _int_option(options, "tasks", source) if "tasks" in options else None
    if "clients" in options:  # IOR 3.0/3.1: "clients = 96 (12 per node)"
        value, line = options["clients"]
        match = _CLIENTS.fullmatch(value)
        if match is None:
            raise ToolOutputError(source, f"line {line}", f"expected 'clients = N (M per node)'; found {value!r}")
        tasks, ppn = int(match[1]), int(match[2])
    if ppn is None or ppn < 1:
        raise ToolOutputError(source, f"line {test.line}", "expected 'clients per node' in the test's "
                              "options; found none, so the processes per node are unknown")
    if nodes is None and tasks is None:
        raise ToolOutputError(source, f"line {test.line}", "expected 'nodes' or 'tasks' in the test's options; "
                              "found neither, so the processes are unknown")
    if nodes is None and (tasks % ppn or tasks < ppn):
        # IOR counts its clients per node on node 0 only: tasks spread unevenly over the nodes do not divide.
        tags.append(("nodes", f"not stated: {tasks} tasks are not a multiple of the {ppn} clients per node IOR "
                              "counted on node 0, so the tasks are spread unevenly and the node count is unknown"))
        placement = Placement(tasks)
    elif nodes is None:
        nodes = tasks // ppn
        tags.append(("nodes", "tasks / clients per node"))
    if nodes is not None and nodes < 1:
        raise ToolOutputError(source, f"line {options['nodes'][1]}", "expected at least 1 node; found 0")
    if tasks is not None:
        tags.append(("tasks", str(tasks)))
    if "api" in options:
        tags.append(("api", options["api"][0]))
    ordering = options.get("ordering in a file", ("", 0))[0]
    access = Access.RANDOM if "random" in ordering else Access.SEQUENTIAL
    size = _text_transfer_size(test, source)
    if operation.value in test.moved:
        data_set = Q_(test.moved[operation.value], "B") if test.moved[operation.value] > 0 else None
    elif options.get("stonewallingTime", ("0", 0))[0] not in ("0", ""):
        data_set = None  # stopped at a deadline, and IOR did not say how much it moved
    else:
        data_set = _data_set(options.get("aggregate filesize", ("", 0))[0])
    return Workload(operation=operation, transfer_size=Q_(size, "B"), nodes=nodes, ppn=ppn, access=access,
                    direct=direct, data_set=data_set, shared_file=_shared(options.get("access", ("", 0))[0])), tags, placement


def _text_transfer_size(test: _Test, source: str) -> int:
    if "xfersize" not in test.options:
        raise ToolOutputError(source, f"line {test.line}", "expected 'xfersize' in the test's options; "
                              "found none, so the transfer size is unknown")
    value, line = test.options["xfersize"]
    match = _SIZE.fullmatch(value)
    if match is None:
        raise ToolOutputError(source, f"line {line}", f"expected a transfer size such as '2 MiB' or "
                              f"'47008 bytes'; found {value!r}")
    if match[2] is None:
        size = int(match[1]) * _SIZE_UNITS[match[3]]
    else:  # "45.91 KiB" is rounded: the summary table's xsize column has the bytes
        exact = {values.get("xsize") for values, _ in test.summary.values()}
        exact.discard(None)
        if len(exact) != 1 or not _COUNT.fullmatch(next(iter(exact))):
            raise ToolOutputError(source, f"line {line}", f"expected an exact transfer size; found the "
                                  f"rounded {value!r} and no summary table with the bytes")
        size = int(next(iter(exact)))
    if size < 1:
        raise ToolOutputError(source, f"line {line}", f"expected a positive transfer size; found {value!r}")
    return size


def _int_option(options: dict, name: str, source: str) -> int:
    value, line = options[name]
    if not _COUNT.fullmatch(value):
        raise ToolOutputError(source, f"line {line}", f"expected a whole number for {name!r}; found {value[:40]!r}")
    return int(value)


def _direct_from_command(command: str) -> bool | None:
    """True if the command line asks for O_DIRECT; None (unknown) otherwise: a script may set it."""
    words = split_words(command)
    for word in words:
        if word == "-B" or word.startswith("--posix.odirect") or word.replace(" ", "") == "useO_DIRECT=1":
            return True
        if word.startswith("useO_DIRECT=") and word.split("=", 1)[1].strip() not in ("", "0"):
            return True
    return None


# ---------------------------------------------------------------------------------------------
# JSON output


def _parse_json(text: str, opening: re.Match, source: str) -> list[Run]:
    document, repairs = _decode(text, opening, source)
    if not isinstance(document, dict):
        raise ToolOutputError(source, "line 1", "expected IOR's JSON object; found another JSON value")
    version = document.get("Version")
    if not isinstance(version, str) or "tests" not in document:
        present = ", ".join(repr(k) for k in list(document)[:8]) or "nothing"
        raise ToolOutputError(source, "tests" if isinstance(version, str) else "Version",
                              f"expected IOR's JSON with 'Version' and 'tests'; found {present}")
    tests = check(document["tests"], list, "tests", source)
    summary = document.get("summary", [])
    summary = check(summary, list, "summary", source)
    command = document.get("Command line", "")
    command = command if isinstance(command, str) else ""
    direct_command = _direct_from_command(command)
    handed = readback(split_words(command)[1:], source=source, where="Command line")
    origin = Origin(path=source, line=None, tool="ior", tool_version=version)
    runs = []
    for index, test in enumerate(tests):
        where = f"tests[{index}]"
        test = check(test, dict, where, source)
        runs.extend(_json_test_runs(test, where, summary, direct_command, handed, repairs, origin))
    if not runs:
        raise ToolOutputError(source, "tests", "expected at least one test with write or read results "
                              "('Results' or 'summary'); found none: the output is truncated or the run failed")
    return runs


def _json_test_runs(test: dict, where: str, summary: list, direct_command: bool | None, command: Readback,
                    repairs: str, origin: Origin) -> list[Run]:
    source = origin.path
    parameters = check(test.get("Parameters", {}), dict, f"{where}.Parameters", source)
    options = check(test.get("Options", {}), dict, f"{where}.Options", source)
    test_id = test.get("TestID", parameters.get("testID", 0))
    results: list[tuple[str, dict]] = []

    def flatten(node: Any, path: str) -> None:
        if isinstance(node, list):
            for i, child in enumerate(node):
                flatten(child, f"{path}[{i}]")
        else:
            results.append((path, check(node, dict, path, source)))

    flatten(check(test.get("Results", []), list, f"{where}.Results", source), f"{where}.Results")
    handed = _json_readback(parameters, options, command, where, source)
    runs = []
    for name, operation in _OPERATIONS.items():
        samples, durations = [], []
        for path, result in results:
            if result.get("access") == name:
                samples.append(_json_number(result, "bwMiB", path, source))
                durations.append(result.get("totalTime"))
        reported = None
        entry = next(((i, s) for i, s in enumerate(summary) if isinstance(s, dict)
                      and s.get("operation") == name and s.get("TestID", 0) == test_id), None)
        if not samples:
            if entry is None:
                continue
            i, values = entry
            path = f"summary[{i}]"
            reported = _reported(values.get("repetitions", "?"), *(_json_number(values, key, path, source) for key in
                                 ("bwMeanMIB", "bwStdMIB", "bwMinMIB", "bwMaxMIB")), where=path, source=source)
        if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) for t in durations):
            durations = []
        workload, more = _json_workload(parameters, options, where, operation, direct_command, source)
        more += handed.tags(operation, workload.nodes, "write" in {r.get("access") for _, r in results} | {
            s.get("operation") for s in summary if isinstance(s, dict) and s.get("TestID", 0) == test_id})
        if samples and entry is not None:
            more += _json_against_summary(name, samples, *entry)
        if repairs:
            more.append(("json_repaired", repairs))
        api = str(parameters.get("api", options.get("api", "")))
        access = str(options.get("access", "file-per-process" if parameters.get("filePerProc") == 1
                                 else "single-shared-file" if parameters.get("filePerProc") == 0 else ""))
        label_options = {"api": (api, 0), "access": (access, 0)}
        runs.append(Run(label=_label(label_options, test_id if isinstance(test_id, int) else 0, name),
                        workload=workload, metric=Metric.BANDWIDTH, samples=tuple(samples), unit=UNIT,
                        origin=origin, tags=tuple(more), reported=reported,
                        durations=tuple(float(t) for t in durations)))
    return runs


def _json_against_summary(name: str, samples: list[float], index: int, values: dict) -> list[tuple[str, str]]:
    """The tag ``inconsistent`` where the JSON summary's max, min or mean is not that of the ``Results``: IOR
    writes both with 4 decimals (%.4f), so they agree within 0.0001 MiB/s."""
    figures = {"bwMaxMIB": max(samples), "bwMinMIB": min(samples), "bwMeanMIB": sum(samples) / len(samples)}
    disagree = []
    for key, counted in figures.items():
        printed = values.get(key)
        if isinstance(printed, (int, float)) and not isinstance(printed, bool) and math.isfinite(printed) \
                and abs(printed - counted) > 1.0001e-4 * max(1.0, abs(counted) * 1e-9):
            disagree.append(f"the {name} Results' {key[2:-3].lower()} is {counted:,.4f} MiB/s; summary[{index}].{key} "
                            f"says {printed:,.4f} MiB/s")
    return [("inconsistent", "; ".join(disagree))] if disagree else []


def _json_readback(parameters: dict, options: dict, command: Readback, where: str, source: str) -> Readback:
    """The readback of one JSON test: ``Options`` as IOR prints them, else ``Parameters``; fsync from ``Parameters``."""
    if "fsyncPerWrite" in parameters or "fsync" in parameters:
        fsync = "-Y" if parameters.get("fsyncPerWrite") else "-e" if parameters.get("fsync") else ""
        command = replace(command, fsync=fsync)
    if "task offset" in options:
        offset = _json_count(options, "task offset", f"{where}.Options", source)
    elif "taskPerNodeOffset" in parameters:
        offset = _json_count(parameters, "taskPerNodeOffset", f"{where}.Parameters", source)
    else:
        offset = None
    if "ordering inter file" in options:
        return _ordering(options["ordering inter file"], offset, command)
    if "reorderTasks" in parameters or "reorderTasksRandom" in parameters:
        reorder = "-C" if parameters.get("reorderTasks") else "-Z" if parameters.get("reorderTasksRandom") else ""
        return replace(command, reorder=reorder, offset=command.offset if offset is None else offset)
    return command


def _json_workload(parameters: dict, options: dict, where: str, operation: Operation,
                   direct_command: bool | None, source: str) -> tuple[Workload, list[tuple[str, str]]]:
    tags: list[tuple[str, str]] = []
    if "transferSize" in parameters:
        size = _json_count(parameters, "transferSize", f"{where}.Parameters", source)
    elif "xfersize" in options:
        value = options["xfersize"]
        match = _SIZE.fullmatch(value) if isinstance(value, str) else None
        if match is None or match[2] is not None:
            raise ToolOutputError(source, f"{where}.Options.xfersize",
                                  f"expected an exact transfer size such as '2 MiB'; found {describe(value)}")
        size = int(match[1]) * _SIZE_UNITS[match[3]]
    else:
        raise ToolOutputError(source, f"{where}.Parameters.transferSize", "expected the transfer size; "
                              "found neither 'transferSize' nor 'xfersize'")
    # The "Options" block is what IOR prints in its text output; "Parameters" the raw settings.
    if "nodes" in options:
        nodes = _json_count(options, "nodes", f"{where}.Options", source)
    else:
        nodes = _json_count(parameters, "nodes", f"{where}.Parameters", source)
    if "clients per node" in options:
        ppn = _json_count(options, "clients per node", f"{where}.Options", source)
    else:
        ppn = _json_count(parameters, "tasksPerNode", f"{where}.Parameters", source)
    if "tasks" in options:
        tags.append(("tasks", str(_json_count(options, "tasks", f"{where}.Options", source))))
    api = parameters.get("api", options.get("api"))
    if isinstance(api, str):
        tags.append(("api", api))
    random = parameters.get("randomOffset", 0)
    ordering = options.get("ordering in a file", "")
    access = Access.RANDOM if (random not in (0, None, False)) or "random" in str(ordering) else Access.SEQUENTIAL
    direct = direct_command
    if "useO_DIRECT" in parameters:
        direct = bool(parameters["useO_DIRECT"]) or direct_command is True
    aggregate = options.get("aggregate filesize")
    if parameters.get("deadlineForStonewalling", 0) not in (0, None) or options.get("stonewallingTime", 0) not in (0, None):
        aggregate = None  # stopped at a deadline: the planned size was not all moved
    shared = parameters.get("filePerProc")
    workload = Workload(operation=operation, transfer_size=Q_(size, "B"), nodes=nodes, ppn=ppn, access=access,
                        direct=direct, data_set=_data_set(aggregate) if isinstance(aggregate, str) else None,
                        shared_file=(shared == 0) if shared in (0, 1) else _shared(str(options.get("access", ""))))
    return workload, tags


def _data_set(text: str):
    """IOR's ``aggregate filesize`` (all tasks' bytes per repetition, rounded as printed), or None."""
    match = _SIZE.fullmatch(text.strip())
    if match is None or float(match[1] + (match[2] or "")) <= 0:
        return None
    return Q_(float(match[1] + (match[2] or "")) * _SIZE_UNITS[match[3]], "B")


def _shared(access: str) -> bool | None:
    """True for ``single-shared-file``, False for ``file-per-process``, None if IOR did not say."""
    if access.startswith("single-shared-file"):
        return True
    return False if access.startswith("file-per-process") else None


def _json_count(obj: dict, key: str, path: str, source: str) -> int:
    value = json_field(obj, key, int, path, source)
    if not 1 <= value < 2**63:
        raise ToolOutputError(source, f"{path}.{key}", f"expected a whole number of at least 1; found {describe(value)}")
    return value


def _json_number(obj: dict, key: str, path: str, source: str) -> float:
    return json_number(json_field(obj, key, (int, float), path, source), f"{path}.{key}", source,
                       expected="a finite bandwidth of at least 0")


# Repairs of IOR's invalid JSON, each applied outside strings only. Every repair keeps the line
# breaks, so a later syntax error's line is the line in the file.
_STRING = r'"(?:\\.|[^"\\\n])*"'
_TRAILING_COMMA = re.compile(_STRING + r"|(,)(\s*[}\]])")
# A value's end, then a line break, then a value's start, with no comma between.
_MISSING_COMMA = re.compile(_STRING + r"((?=\s*\n\s*[\"{\[]))?|([}\]0-9el])(\s*\n\s*)(?=[\"{\[])")
_BARE_NAN = re.compile(_STRING + r"|(?<=[:\[,\s])(-?(?:nan|inf|NaN|Infinity|-nan))(?=\s*[,}\]])")


def _decode(text: str, opening: re.Match, source: str) -> tuple[Any, str]:
    start = opening.end() - 1
    prefix = "\n" * text.count("\n", 0, start)  # keep line numbers
    body = prefix + text[start:]
    repairs: list[str] = []
    for attempt in range(len(_REPAIRS) + 1):
        try:
            document, end = json.JSONDecoder().raw_decode(body, len(prefix))
        except json.JSONDecodeError as exc:
            if attempt == len(_REPAIRS):
                raise ToolOutputError(
                    source, f"line {exc.lineno}, column {exc.colno}",
                    f"expected valid JSON, found a syntax error ({exc.msg}) that iobound cannot repair"
                    + (f" (after repairing: {'; '.join(repairs)})" if repairs else "")
                    + ": the output is malformed or truncated") from None
            body, note = _repair(body, *_REPAIRS[attempt])
            if note:
                repairs.append(note)
            continue
        except (ValueError, RecursionError) as exc:
            raise ToolOutputError(source, "line 1", f"expected IOR's JSON, found a value Python cannot "
                                  f"read ({exc})") from None
        rest = body[end:].strip()
        if rest:
            line = line_of(body, end)
            raise ToolOutputError(source, f"line {line}", f"expected one JSON object; found more after it "
                                  f"({rest[:30]!r})")
        return document, "; ".join(repairs)
    raise AssertionError("unreachable")  # pragma: no cover


def _lines_of(body: str, positions: list[int]) -> str:
    lines = [line_of(body, p) for p in positions[:3]]
    more = ", ..." if len(positions) > 3 else ""
    return ", ".join(map(str, lines)) + more


def _repair(body: str, pattern: re.Pattern, fix, what: str) -> tuple[str, str]:
    """Apply one repair at every match ``fix`` accepts (it returns the new text and where, or None); say what it did."""
    positions: list[int] = []

    def replace(m: re.Match) -> str:
        done = fix(m)
        if done is None:
            return m.group(0)
        text, at = done
        positions.append(at)
        return text

    fixed = pattern.sub(replace, body)
    return fixed, (f"{what.format(n=len(positions))} (line {_lines_of(body, positions)})" if positions else "")


def _missing_comma(m: re.Match) -> tuple[str, int] | None:
    if m.group(2) is None:  # a string, followed by a line break and a value or not
        return None if m.group(1) is None else (m.group(0) + ",", m.end())
    return m.group(2) + "," + m.group(3), m.end(2)


# The repairs, tried one more at a time while the JSON does not decode.
_REPAIRS = (
    (_TRAILING_COMMA, lambda m: None if m.group(1) is None else (m.group(2), m.start(1)), "removed {n} trailing comma(s)"),
    (_MISSING_COMMA, _missing_comma, "inserted {n} missing comma(s)"),
    (_BARE_NAN, lambda m: None if m.group(1) is None else ("null", m.start(1)), "read {n} bare nan/inf value(s) as null"),
)
