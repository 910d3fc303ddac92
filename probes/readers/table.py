"""Read a results table: CSV with one measured value per row and its unit spelled out.

Columns (header required; ``#`` lines are comments): ``op``, ``transfer_size``,
``value`` and ``unit`` are required (``transfer_size`` may be empty: unknown, or
a metadata operation such as ``create``, counted in op/s); ``run``, ``nodes``,
``ppn``, ``queue_depth``, ``access``, ``direct``, ``shared_file`` and
``shared_directory`` (true or false), ``data_set`` (all processes' bytes, e.g.
``2 TiB``), ``duration`` (of the repetition, e.g. ``95 s``) and ``processes`` (all of them, where the result
states no node count: the run's placement) are optional; any other column is kept as a tag (e.g. ``system``). Rows with the same ``run`` are repetitions of one run; without a
``run`` column every row is a run of its own.
"""

from __future__ import annotations

import csv
from typing import Iterator, Mapping

from probes.core.errors import ToolOutputError, UnitError
from probes.core.outputs import plain_cell
from probes.core.patterns import Pattern
from probes.core.records import Placement
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Metric, Q_, parse_quantity, parse_unit, require
from probes.core.workload import MOST_COUNT, Access, Operation, Workload, checked_transfer_size

__all__ = ["looks_like", "parse", "foreign_header", "FORMAT"]

# a figure's digits grouped in threes by commas, as spreadsheets write them in English: 1,050 or 12,345.5
_GROUPED = Pattern(r"[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?")

REQUIRED = ("op", "transfer_size", "value", "unit")
FORMAT = "a results CSV with columns " + ", ".join(REQUIRED)
WORKLOAD_COLUMNS = ("run", "nodes", "ppn", "queue_depth", "access", "direct", "shared_file", "shared_directory",
                    "read_share", "data_set", "duration", "processes")
_TRUE, _FALSE = ("1", "true", "yes", "y"), ("0", "false", "no", "n")


def looks_like(text: str) -> bool:
    """True if the first row that is not a comment is a CSV header with at least two of the required columns.

    A header with only some of them is a results CSV with the wrong columns: :func:`parse` then
    says which it lacks, rather than the file going unrecognised.
    """
    try:
        header = next(_rows(text), (0, []))[1]
    except csv.Error:
        return False
    return sum(c in _columns(header) for c in REQUIRED) >= 2


def foreign_header(text: str) -> list[str] | None:
    """The header of a CSV that is not a results table (its first row not a comment, two columns or more, and the
    next row as wide), for a message that says which columns a results table has; None for any other text.

    >>> foreign_header("name,bw,size\\na,1,2\\n"), foreign_header("hello world\\n")
    (['name', 'bw', 'size'], None)
    """
    try:
        rows = _rows(text)
        (_, header), (_, first) = next(rows), next(rows)
    except (StopIteration, csv.Error):
        return None
    return [c.strip() for c in header] if len(header) >= 2 and len(first) == len(header) else None


def parse(text: str, *, source: str, aliases: Mapping[str, str] | None = None) -> list[Run]:
    """Parse a results table into runs; a label shared by several runs gets its line number added.

    Raises
    ------
    ToolOutputError
        If the header lacks a required column, or a row has a bad value, unit or
        count; the message names the line and column.
    """
    rows = _rows(text)
    try:
        header_line, header = next(rows)
    except StopIteration:
        raise ToolOutputError(source, "", "no header and no rows; expected a CSV with columns " + ", ".join(REQUIRED)) from None
    except csv.Error as exc:
        raise ToolOutputError(source, "line 1", f"not CSV ({exc})") from exc
    header = _columns(header)
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        needs = ", ".join(missing[:-1]) + " and " + missing[-1] if len(missing) > 1 else missing[0]
        raise ToolOutputError(source, f"line {header_line}", f"a results CSV needs {needs}; it has "
                              f"{', '.join(c for c in header if c) or 'no named column'}")
    if len(set(header)) != len(header):
        raise ToolOutputError(source, f"line {header_line}", "the header names a column twice")
    runs: dict[str, tuple[int, Workload, list[float], str, Metric, tuple, list[float | None], Placement | None]] = {}
    read: dict[tuple[str, str], object] = {}  # the units and transfer sizes read so far, by their text
    while True:
        try:
            line, cells = next(rows)
        except StopIteration:
            break
        except csv.Error as exc:
            raise ToolOutputError(source, "", f"not CSV after line {header_line} ({exc})") from exc
        if len(cells) != len(header):
            raise ToolOutputError(source, f"line {line}", f"has {len(cells)} cells; the header has {len(header)}")
        row = dict(zip(header, (plain_cell(c.strip()) for c in cells)))
        workload, value, unit, metric, duration, placement = _row(row, source, line, aliases, read)
        tags = tuple((k, v) for k, v in row.items() if k not in REQUIRED + WORKLOAD_COLUMNS and v)  # an empty cell says nothing
        key = row.get("run") or f"line {line}"
        if key in runs:
            first, known, samples, known_unit, _, _, durations, _ = runs[key]
            if known != workload or known_unit != unit:
                raise ToolOutputError(source, f"line {line}", f"run {key!r} was given another workload or unit on line {first}")
            samples.append(value)
            durations.append(duration)
        else:
            runs[key] = (line, workload, [value], unit, metric, tags, [duration], placement)
    if not runs:
        raise ToolOutputError(source, "", "has a header but no rows")
    return distinct_labels([
        Run(label=_label(key, tags, workload), workload=workload, metric=metric, samples=tuple(samples), unit=unit,
            origin=Origin(source, line, "table"), tags=tags,
            durations=tuple(durations) if None not in durations else (), placement=placement)
        for key, (line, workload, samples, unit, metric, tags, durations, placement) in runs.items()
    ])


def _rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """The CSV rows with the line each starts on, without blank rows and ``#`` comments."""
    reader = csv.reader(_lines(text))
    start = 1
    for cells in reader:
        if cells and any(c.strip() for c in cells) and not cells[0].lstrip().startswith("#"):
            yield start, cells
        start = reader.line_num + 1


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their ends, cut at each "\\n" as a file is (a byte-order mark dropped), one at a
    time: io.StringIO would hold a copy of the text at 4 bytes a character."""
    start, end = (1 if text.startswith("\ufeff") else 0), len(text)
    while start < end:
        stop = text.find("\n", start)
        stop = end if stop < 0 else stop + 1
        yield text[start:stop]
        start = stop


def _columns(header: list[str]) -> list[str]:
    return [c.strip().lower() for c in header]


def _row(row: dict[str, str], source: str, line: int, aliases,
         read: dict[tuple[str, str], object]) -> tuple[Workload, float, str, Metric, float | None, Placement | None]:
    """One row's workload, value, unit, metric, duration and placement; ``read`` holds the units and transfer sizes
    earlier rows gave (a sweep's rows repeat a few of them: parsed each time, they were most of a large table's time)."""
    column = "unit"
    try:
        if ("unit", row["unit"]) not in read:
            unit = parse_unit(row["unit"], what=f"the value on line {line}", aliases=aliases)
            metric = Metric.of(Q_(1, unit))
            if metric not in (Metric.BANDWIDTH, Metric.OPERATION_RATE):
                raise UnitError(f"The unit must be a bandwidth (e.g. MiB/s) or an operation rate (op/s). Got "
                                f"{row['unit']!r} instead.")
            read["unit", row["unit"]] = unit, metric
        unit, metric = read["unit", row["unit"]]
        column = "value"
        value = _number(row["value"])
        require(Q_(value, unit), metric, what="the value")
        column = "op"
        operation = Operation(row["op"].lower())
        if operation.is_metadata and metric is not Metric.OPERATION_RATE:
            raise UnitError(f"A metadata operation ({operation.value}) is counted in op/s, not in {row['unit']!r}.")
        column = "transfer_size"
        if ("size", row["transfer_size"]) not in read:
            read["size", row["transfer_size"]] = (checked_transfer_size(parse_quantity(
                row["transfer_size"], Metric.SIZE, what="the transfer size", aliases=aliases))
                if row["transfer_size"].strip() else None)
        size = read["size", row["transfer_size"]]
        column = "access"
        access = Access((row.get("access") or "sequential").lower())
        counts = {}
        for column in ("nodes", "ppn", "queue_depth"):
            if row.get(column):
                counts[column] = _count(row[column])
        column = "ppn" if "ppn" in counts else "nodes"
        if counts.get("nodes", 1) * counts.get("ppn", 1) > MOST_COUNT:
            raise ValueError(f"{counts.get('nodes', 1):,} nodes x {counts.get('ppn', 1):,} processes each")
        column = "direct"
        direct = _flag(row.get("direct", ""))
        column = "shared_file"
        shared = _flag(row.get("shared_file", ""))
        column = "shared_directory"
        shared_directory = _flag(row.get("shared_directory", ""))
        column = "read_share"
        share = float(row["read_share"]) if row.get("read_share") else None
        column = "data_set"
        data_set = parse_quantity(row["data_set"], Metric.SIZE, what="the data set", aliases=aliases) \
            if row.get("data_set") else None
        column = "duration"
        duration = parse_quantity(row["duration"], Metric.LATENCY, what="the duration").m_as("s") \
            if row.get("duration") else None
        column = "processes"
        placement = Placement(_count(row["processes"])) if row.get("processes") else None
        column = "transfer_size" if share is None and operation is not Operation.MIXED else "read_share"
        workload = Workload(operation, size, access=access, direct=direct, data_set=data_set, shared_file=shared,
                            shared_directory=shared_directory, read_share=share, **counts)
    except (ValueError, UnitError) as exc:
        raise ToolOutputError(source, f"line {line}, column {column!r}", _reason(exc, column, row.get(column, ""))) from exc
    return workload, value, f"{unit:~P}", metric, duration, placement


def _reason(exc: Exception, column: str, cell: str) -> str:
    if isinstance(exc, UnitError):
        return str(exc)
    expected = {
        "op": "one of " + ", ".join(o.value for o in Operation),
        "access": "one of " + ", ".join(a.value for a in Access),
        "value": "a finite, non-negative number, its decimals after a point (a comma only between groups of three "
                 "digits: 1,050.5)",
        "direct": "true or false",
        "shared_file": "true or false",
        "shared_directory": "true or false",
        "read_share": "the share of the bytes read, between 0 and 1, for op read+write only",
    }.get(column, f"a whole number from 1 to {MOST_COUNT:,}")
    if column in ("nodes", "ppn") and " x " in str(exc):
        return f"must make at most {MOST_COUNT:,} processes with the nodes' count. Got {exc} instead."
    return f"must be {expected}. Got {cell!r} instead."


def _number(cell: str) -> float:
    """A figure with a point for its decimals; a comma only between groups of three digits (``1,050.5``): ``1,05`` in a
    locale that writes its decimals after a comma is refused, not read as 105."""
    if "," in cell and not _GROUPED.fullmatch(cell.strip()):
        raise ValueError(cell)
    value = float(cell.replace(",", "").replace("_", ""))
    if not (value >= 0 and value != float("inf")):
        raise ValueError(cell)
    return value


def _count(cell: str) -> int:
    value = int(cell)
    if not 1 <= value <= MOST_COUNT:
        raise ValueError(cell)
    return value


def _flag(cell: str) -> bool | None:
    if not cell:
        return None
    if cell.lower() in _TRUE + _FALSE:
        return cell.lower() in _TRUE
    raise ValueError(cell)


def _label(key: str, tags: tuple, workload: Workload) -> str:
    if not key.startswith("line "):
        return key
    prefix = " ".join(v for _, v in tags if v)
    return f"{prefix + ' ' if prefix else ''}{workload.describe()}"
