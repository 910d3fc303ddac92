"""mdtest's text read as printed: its runs, their tests and each test's SUMMARY tables.

:func:`probes.readers.mdtest.parse` makes runs of them; :mod:`probes.readers.mdtest` tells the format's history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.core.patterns import Pattern
from probes.core.workload import Operation

__all__ = ["read_invocations", "Invocation", "Block", "Table", "HEADER", "PHASES", "STONEWALL"]

# Phase -> (operation, object, what the command line must ask for: -C, -T, -E, -r, -U).
PHASES = {
    "Directory creation": (Operation.CREATE, "directory", "create"),
    "Directory stat": (Operation.STAT, "directory", "stat"),
    "Directory rename": (Operation.RENAME, "directory", "rename"),
    "Directory removal": (Operation.REMOVE, "directory", "remove"),
    "File creation": (Operation.CREATE, "file", "create"),
    "File stat": (Operation.STAT, "file", "stat"),
    "File read": (Operation.OPEN, "file", "read"),
    "File removal": (Operation.REMOVE, "file", "remove"),
    "Tree creation": (Operation.CREATE, "tree", "create"),
    "Tree removal": (Operation.REMOVE, "tree", "remove"),
}
STONEWALL = "File create (stonewall)"
_LAST_ROW = "Tree removal"  # every release ends its tables with it: a table without it is cut
_NAMES = "|".join(re.escape(name) for name in (*PHASES, STONEWALL))
_ORDER = {name: i for i, name in enumerate(PHASES)}  # the order every release prints its rows in

HEADER = Pattern(r"^mdtest-(\S+) was launched with (\d{1,9}) total task\(s\)(?: on (\d{1,9}) node\(s\))?",
                    re.MULTILINE)
_COMMAND = Pattern(r"^Command line used:\s*(.*?)\s*$")
_TASKS = Pattern(r"^(\d{1,9}) tasks, (\d{1,20}) (files/directories|files|directories|file)\s*$")
_SUMMARY = Pattern(r"^SUMMARY(?: (rate|time))?(?: \(in ([^)]*)\))?:(?: \(of (\d{1,9}) iterations?\))?\s*$")
_COLUMNS = Pattern(r"^\s+Operation\b(.*)$")
_RULE = Pattern(r"^\s+-{3,}[\s-]*$")
_ROW = Pattern(rf"^\s+({_NAMES})\s*(:?)(.*)$")
_VERBOSE = Pattern(rf"^V-1:.*?\b({_NAMES})\s*:\s*(\d{{1,15}}\.\d{{3}}) sec,\s*\d+\.\d+ ops/sec\s*$")
_FAILURE = Pattern(r"\bFAILED\b|\bERROR\b|MPI_ABORT|exit codes?: [1-9]")
_VALUE = Pattern(r"\d{1,15}\.\d{3}")  # mdtest prints every figure with %.3f
_EXPECTED_COLUMNS = ["Max", "Min", "Mean", "Std", "Dev"]


@dataclass
class Table:
    """One SUMMARY table: its kind ("rate", "time"; "" for 1.9.3's "SUMMARY:") and rows by phase."""

    kind: str
    line: int
    iterations: int | None
    columns: bool = False
    rows: dict[str, tuple[list[str], bool, int]] = field(default_factory=dict)  # values, colon, line
    closed: bool = False


@dataclass
class Block:
    """One mdtest test on a number of tasks ("96 tasks, 3072 files/directories") and its tables."""

    tasks: int
    items: str
    line: int
    tables: list[Table] = field(default_factory=list)
    verbose: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class Invocation:
    """One mdtest run, from its launch line: version, tasks, nodes, command line, tests, failure line."""

    version: str
    line: int
    tasks: int
    nodes: int | None
    command: str | None = None
    command_line: int = 0
    blocks: list[Block] = field(default_factory=list)
    failure: tuple[str, int] | None = None


def read_invocations(text: str, source: str) -> list[Invocation]:
    """Every mdtest run in ``text``, from its launch line on; a SUMMARY table cut or malformed is refused."""
    invocations: list[Invocation] = []
    for number, line in enumerate(iter_lines(text), start=1):
        header = HEADER.match(line)
        if header:
            _close(invocations, source)
            nodes = int(header[3]) if header[3] else None
            invocations.append(Invocation(header[1], number, int(header[2]), nodes))
        elif invocations:
            _line(invocations[-1], line, number, source)
    _close(invocations, source)
    if not invocations:
        raise ToolOutputError(source, "line 1", "expected mdtest's launch line; found none")
    return invocations


def _line(run: Invocation, line: str, number: int, source: str) -> None:
    """Take one line of an mdtest run: command, test, SUMMARY heading or row, verbose or failure line."""
    table = run.blocks[-1].tables[-1] if run.blocks and run.blocks[-1].tables else None
    if table is not None and not table.closed:
        _table_line(table, line, number, source)
        return
    command = _COMMAND.match(line)
    if command and run.command is None:
        run.command, run.command_line = command[1], number
        return
    tasks = _TASKS.match(line)
    if tasks:
        run.blocks.append(Block(int(tasks[1]), f"{tasks[2]} {tasks[3]}", number))
        return
    summary = _SUMMARY.match(line)
    if summary:
        _open_table(run, summary, number, source)
        return
    verbose = _VERBOSE.match(line)
    if verbose and run.blocks:
        run.blocks[-1].verbose.setdefault(verbose[1], []).append(float(verbose[2]))
        return
    if run.failure is None and _FAILURE.search(line):
        run.failure = (line.strip()[:160], number)


def _open_table(run: Invocation, summary: re.Match, number: int, source: str) -> None:
    kind, unit, iterations = summary[1] or "", summary[2], summary[3]
    if not run.blocks:
        raise ToolOutputError(source, f"line {number}", "expected the line 'N tasks, M files' before the "
                              "SUMMARY table; found the table first")
    allowed = {"": (None,), "rate": (None, "ops/sec"), "time": (None, "ms/op")}[kind]
    if unit not in allowed:
        raise ToolOutputError(source, f"line {number}", f"expected a SUMMARY {kind or 'rate'} table in "
                              f"{' or '.join(u for u in allowed if u) or 'ops/sec'}; found '(in {unit})'")
    block = run.blocks[-1]
    if any(t.kind == kind for t in block.tables):
        raise ToolOutputError(source, f"line {number}", f"expected one SUMMARY {kind or 'rate'} table per "
                              f"test (line {block.line}); found a second one")
    block.tables.append(Table(kind, number, int(iterations) if iterations else None))


def _table_line(table: Table, line: str, number: int, source: str) -> None:
    """A line inside an open SUMMARY table: the column header, its rule, or a phase row."""
    where = f"line {number}"
    columns = _COLUMNS.match(line)
    if columns and not table.columns:
        if columns[1].split() != _EXPECTED_COLUMNS:
            raise ToolOutputError(source, where, "expected the columns 'Operation Max Min Mean Std Dev'; "
                                  f"found {line.strip()[:80]!r}, a layout iobound does not read")
        table.columns = True
        return
    if table.columns and _RULE.match(line):
        return
    row = _ROW.match(line)
    if row is None or not table.columns:
        what = "row" if table.columns else "column header ('Operation Max Min Mean Std Dev')"
        found = repr(line.strip()[:60]) if line.strip() else "an empty line"
        raise ToolOutputError(source, where, f"expected a {what} of the SUMMARY table of line {table.line} "
                              f"(up to its '{_LAST_ROW}' row); found {found}: the table is cut or malformed")
    name, colon, values = row[1], row[2] == ":", row[3].split()
    _check_values(name, values, where, source)
    earlier = [r for r in table.rows if r in _ORDER and _ORDER[r] >= _ORDER.get(name, -1)]
    if name in _ORDER and earlier and name not in table.rows:
        raise ToolOutputError(source, where, f"expected the rows of the SUMMARY table of line {table.line} in "
                              f"mdtest's order; found {name!r} after {earlier[-1]!r}: the table is cut or malformed")
    if name == _LAST_ROW and "Tree creation" not in table.rows:
        raise ToolOutputError(source, where, f"expected a 'Tree creation' row before {_LAST_ROW!r} in the SUMMARY "
                              f"table of line {table.line}, as every release prints; found none: the table is cut")
    table.rows.setdefault(name, (values, colon, number))
    table.closed = name == _LAST_ROW


def _check_values(name: str, values: list[str], where: str, source: str) -> None:
    stonewall = name == STONEWALL
    if len(values) != 4 or not all(_VALUE.fullmatch(v) or (stonewall and v == "NA") for v in values) \
            or (stonewall and not _VALUE.fullmatch(values[2])):
        shown = " ".join(values)[:80]
        raise ToolOutputError(source, where, f"expected 4 figures (Max Min Mean Std Dev, 3 decimals) for "
                              f"{name!r}; found {shown!r}: the row is cut or malformed")


def _close(invocations: list[Invocation], source: str) -> None:
    """Refuse a SUMMARY table left open by the end of the text or by the next mdtest run."""
    if not invocations or not invocations[-1].blocks or not invocations[-1].blocks[-1].tables:
        return
    table = invocations[-1].blocks[-1].tables[-1]
    if not table.closed:
        raise ToolOutputError(source, f"line {table.line}", f"expected the SUMMARY table to end with its "
                              f"'{_LAST_ROW}' row; found {len(table.rows)} row(s) and then the end of the "
                              "run: the output is truncated")

