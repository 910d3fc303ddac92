"""Read IOR's text output (IOR 3.0 to 4.x) into bandwidth runs, as :func:`probes.readers.ior.parse` describes.

Also what IOR prints the same way in its JSON's ``Options`` and ``summary``, which
:mod:`probes.readers.ior_json` reads with it: sizes, the access, a run's label, the summary's figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.core.patterns import Pattern
from probes.core.records import Placement
from probes.core.run import Origin, Run
from probes.core.stats import Summary, from_reported
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers.ior_readback import direct_from_command, printed_readback, readback
from probes.readers.textlines import COUNT, checked_number, finite_number, split_words

__all__ = ["parse_text", "HEADER", "UNIT", "OPERATIONS", "SIZE", "SIZE_UNITS", "reported_summary", "run_label",
           "data_set_size", "shared_file"]

# Units. IOR's "bw(MiB/s)" column, the summary's "Max(MiB)"/"Mean(MiB)" and the JSON "bwMiB" /
# "bwMeanMIB" are 2^20 bytes per second. IOR's "MB" is NOT always 2^20: in every text file of the
# corpus (IOR 3.0.1 to 4.1.0) "Max Write: 421.05 MiB/sec (441.51 MB/sec)" has MB = 10^6
# (421.05 * 1.048576 = 441.51), and the JSON "writeMB" likewise. IOR 2.x is said to print
# "MB/s" columns meaning 2^20, but the corpus holds no IOR 2.x output to check that against,
# so a "bw(MB/s)" column is refused rather than read with a guessed base.
UNIT = "MiB/s"

HEADER = Pattern(r"^IOR-(\S+?): MPI Coordinated Test of Parallel I/O", re.MULTILINE)
_COMMAND = Pattern(r"^Command line(?: used)?\s*:\s*(.*)$")
_TEST_ID = Pattern(r"^(?:TestID\s*:\s*(\d+)|Test (\d+) started\b)")
# The option lines of the "Options:" block (3.2+, "key : value") and of the old "Summary:"
# block (3.0/3.1, tab-indented "key = value"); only the keys iobound uses.
_KEYS = ("api", "access", "ordering in a file", "ordering inter file", "task offset", "nodes", "tasks",
         "clients per node", "clients", "repetitions", "xfersize", "aggregate filesize", "stonewallingTime")
_OPTION = Pattern(r"^\s*(" + "|".join(re.escape(k) for k in _KEYS) + r")\s*[:=]\s*(.*?)\s*$")
_RESULTS_HEADER = Pattern(r"^access\s+bw\(([A-Za-z]+)/s\)")
_SUMMARY_TITLE = Pattern(r"^Summary of all tests:")
_SUMMARY_HEADER = Pattern(r"^Operation\s+Max\(MiB\)")
_ROW = Pattern(r"^(write|read)\s")
_MOVED = Pattern(r"^WARNING: Using actual aggregate bytes moved = ([0-9]{1,20})\.?\s*$")
_CLIENTS = Pattern(r"([0-9]{1,9})\s*\(([0-9]{1,9}) per node\)")
SIZE = Pattern(r"([0-9]{1,15})(\.[0-9]+)?\s*(bytes|KiB|MiB|GiB|TiB)")
SIZE_UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
OPERATIONS = {"write": Operation.WRITE, "read": Operation.READ}
# How every line the text reader looks at, but for option lines, begins (the patterns above): a log
# of 20,000 runs has a million lines, and one prefix test rejects the others without trying each pattern.
_STARTS = ("IOR-", "Command line", "Test", "access", "Summary of all tests:", "Operation", "WARNING: Using actual",
           "write", "read")


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


def parse_text(text: str, source: str) -> list[Run]:
    """The runs of IOR's text output; several IOR runs one after another are read in turn."""
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
        header = HEADER.match(line)
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
    if not COUNT.fullmatch(test_id):
        raise ToolOutputError(source, f"line {number}", f"expected a test number in column Test#; found {test_id!r}")
    test = next((t for t in run.tests if t.id == int(test_id)), None)
    if test is None:
        raise ToolOutputError(source, f"line {number}", f"expected a test {test_id} before its summary "
                              "row; found no such test in this IOR run")
    test.summary.setdefault(cells[0], (values, number))


def _bandwidth(text: str, where: str, source: str) -> float:
    """A bandwidth cell in MiB/s; ToolOutputError at ``where`` if it is no finite number."""
    return checked_number(text, where, source, "a finite bandwidth in MiB/s")


def _invocation_runs(run: _Invocation, source: str) -> list[Run]:
    where = f"line {run.line}"
    if not run.tests or not any(t.rows or t.summary for t in run.tests):
        missing = "result rows ('access bw(MiB/s) ...' table)" if not run.results_seen else "a write or read row"
        raise ToolOutputError(source, where, f"expected {missing} or the 'Summary of all tests:' table "
                              f"for this IOR-{run.version} run; found neither: the output is truncated "
                              "or the run failed")
    runs = []
    direct = direct_from_command(run.command)
    command = readback(split_words(run.command)[1:], source=source, where=f"line {run.command_line}")
    for test in run.tests:
        options = test.options
        repetitions = _int_option(options, "repetitions", source) if "repetitions" in options else None
        offset = _int_option(options, "task offset", source) if "task offset" in options else None
        handed = printed_readback(options.get("ordering inter file", ("", 0))[0], offset, command)
        for name, operation in OPERATIONS.items():
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
                reported = reported_summary(values.get("reps", "?"), *(_bandwidth(values.get(key, "?"), where, source) for key in
                                     ("Mean(MiB)", "StdDev", "Min(MiB)", "Max(MiB)")), where=where, source=source)
            workload, more, placement = _text_workload(test, operation, direct, source)
            tags = more + handed.tags(operation, workload.nodes, "write" in test.rows.keys() | test.summary.keys())
            if rows and summary is not None:
                tags += _rows_against_summary(name, samples, *summary)
            origin = Origin(path=source, line=line, tool="ior", tool_version=run.version)
            runs.append(Run(label=run_label(options, test.id, name), workload=workload,
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


def reported_summary(reps: Any, mean: float, std: float, low: float, high: float, *, where: str, source: str) -> Summary:
    """The summary table's figures for an operation whose per-iteration rows are not in the output."""
    count = str(reps)
    if not COUNT.fullmatch(count) or int(count) < 1:
        raise ToolOutputError(source, where, f"expected the number of repetitions in the summary; found {count[:40]!r}")
    try:
        return from_reported(int(count), mean, std if int(count) > 1 else None, low, high)
    except ValueError as exc:
        raise ToolOutputError(source, where, f"expected a consistent summary (min <= mean <= max); {exc}") from exc


def run_label(options: dict, test_id: int, operation: str) -> str:
    """``<api> <access>[ test N] <operation>``, from the options as IOR prints them (``(value, line)`` pairs)."""
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
    if tasks is not None and tasks < 1:  # a placement holds at least one process
        line = options.get("tasks", options.get("clients", ("", test.line)))[1]
        raise ToolOutputError(source, f"line {line}", f"expected at least 1 task; found {tasks}")
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
        data_set = data_set_size(options.get("aggregate filesize", ("", 0))[0])
    return Workload(operation=operation, transfer_size=Q_(size, "B"), nodes=nodes, ppn=ppn, access=access,
                    direct=direct, data_set=data_set, shared_file=shared_file(options.get("access", ("", 0))[0])), tags, placement


def _text_transfer_size(test: _Test, source: str) -> int:
    if "xfersize" not in test.options:
        raise ToolOutputError(source, f"line {test.line}", "expected 'xfersize' in the test's options; "
                              "found none, so the transfer size is unknown")
    value, line = test.options["xfersize"]
    match = SIZE.fullmatch(value)
    if match is None:
        raise ToolOutputError(source, f"line {line}", f"expected a transfer size such as '2 MiB' or "
                              f"'47008 bytes'; found {value!r}")
    if match[2] is None:
        size = int(match[1]) * SIZE_UNITS[match[3]]
    else:  # "45.91 KiB" is rounded: the summary table's xsize column has the bytes
        exact = {values.get("xsize") for values, _ in test.summary.values()}
        exact.discard(None)
        if len(exact) != 1 or not COUNT.fullmatch(next(iter(exact))):
            raise ToolOutputError(source, f"line {line}", f"expected an exact transfer size; found the "
                                  f"rounded {value!r} and no summary table with the bytes")
        size = int(next(iter(exact)))
    if size < 1:
        raise ToolOutputError(source, f"line {line}", f"expected a positive transfer size; found {value!r}")
    return size


def _int_option(options: dict, name: str, source: str) -> int:
    value, line = options[name]
    if not COUNT.fullmatch(value):
        raise ToolOutputError(source, f"line {line}", f"expected a whole number for {name!r}; found {value[:40]!r}")
    return int(value)


def data_set_size(text: str):
    """IOR's ``aggregate filesize`` (all tasks' bytes per repetition, rounded as printed), or None."""
    match = SIZE.fullmatch(text.strip())
    if match is None or float(match[1] + (match[2] or "")) <= 0:
        return None
    return Q_(float(match[1] + (match[2] or "")) * SIZE_UNITS[match[3]], "B")


def shared_file(access: str) -> bool | None:
    """True for ``single-shared-file``, False for ``file-per-process``, None if IOR did not say."""
    if access.startswith("single-shared-file"):
        return True
    return False if access.startswith("file-per-process") else None

