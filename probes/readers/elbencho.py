"""Read elbencho's results (console output, ``--resfile``, mtelbencho.sh, and the ``--csvfile`` CSV) into runs.

One :class:`~probes.core.run.Run` per rate that a phase prints (throughput, IOPS, files/s or dirs/s),
with the "LAST DONE" figure (all threads finished) as its one sample: elbencho runs each phase once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.core.patterns import Pattern
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers.elbencho_text import HEADER, Phase, Setup, read_tables
from probes.readers.textlines import beginning, checked_number, line_of

__all__ = ["looks_like", "parse", "FORMAT"]

# What iobound read says it reads.
FORMAT = "elbencho output (text or --csvfile CSV)"

# Units. elbencho's "Throughput MiB/s" and "Total MiB" are 2^20 bytes: in the corpus, the WRITE of
# 1024 files of 1 GiB (large-files sweep, line 17) prints "Total MiB : 1048576" (1024 x 2^30 B =
# 1048576 x 2^20 B), and 1048576 MiB / 99.973 s = 10488 MiB/s, the "Throughput MiB/s" it prints
# (line 16). elbencho's source (Statistics.cpp) divides by 1024*1024 for "MiB/s" and by 1000*1000
# for the "MB/s" it prints when asked for base-10 units, so "MB/s" is read as 10^6 B/s. Sizes given
# to elbencho ("-b 16m") have binary suffixes (UnitTk::numHumanToBytesBinary: k = 2^10, m = 2^20 ...):
# the same WRITE prints "IOPS : 655", and 655 x 16 MiB = 10480 MiB/s, the throughput within rounding.
_THROUGHPUT_UNITS = {"Throughput MiB/s": "MiB/s", "Throughput MB/s": "MB/s"}

# --csvfile (elbencho 1.4 on; docs/csv-docs.md, Statistics::printPhaseResultsToStringVec and
# ProgArgs::getAsStringVec): a header line, then a row per phase. Every release since writes the
# columns below under these names (later ones add columns: label, rwmix read ..., version, command);
# the command's commas are replaced by blanks, so no cell holds a comma and none is quoted.
# "MiB/s [last]" is whole MiB/s (the bytes per second divided by 1024*1024 in integers), "time ms
# [last]" whole milliseconds, "file size" and "block size" bytes; an empty cell is a figure the
# phase has none of (entries/s of a file or block device phase).
_CSV_MARK = "operation,time ms [first],time ms [last],"
_CSV_HEADER = Pattern(r"^[^\n]*" + re.escape(_CSV_MARK) + r"[^\n]*$", re.MULTILINE)
_CSV_REQUIRED = ("operation", "threads", "time ms [last]")
_CSV_FIGURES = (("MiB/s", "throughput", Metric.BANDWIDTH, "MiB/s"), ("IOPS", "IOPS", Metric.OPERATION_RATE, "op/s"),
                ("entries/s", None, Metric.OPERATION_RATE, "op/s"))
# --livecsv: progress samples while a phase runs, not its results.
_LIVE_CSV = Pattern(r"^(?:ISO Date,)?Label,Phase,RuntimeMS,Rank,", re.MULTILINE)


@dataclass(frozen=True)
class _PhaseKind:
    """What one elbencho phase does: its data operation (if any), and what its entries per second count."""

    data: Operation | None
    entries: Operation
    entry_type: str
    counts: str


# Phase names as elbencho prints them (Common.h PHASENAME_*; MKFILES is the first releases' WRITE).
# DROPCACHE and SYNC print only an elapsed time; RWMIX, MIX-T, NET, inline "+s"/"+r" and the S3
# phases mix operations or are not file-system workloads, so they are not read.
_PHASES = {
    "WRITE": _PhaseKind(Operation.WRITE, Operation.CREATE, "Files", "files created, written and closed"),
    "MKFILES": _PhaseKind(Operation.WRITE, Operation.CREATE, "Files", "files created, written and closed"),
    "READ": _PhaseKind(Operation.READ, Operation.OPEN, "Files", "files opened, read and closed"),
    "RMFILES": _PhaseKind(None, Operation.REMOVE, "Files", "files removed"),
    "STAT": _PhaseKind(None, Operation.STAT, "Files", "files stat'ed"),
    "MKDIRS": _PhaseKind(None, Operation.CREATE, "Dirs", "directories created"),
    "RMDIRS": _PhaseKind(None, Operation.REMOVE, "Dirs", "directories removed"),
}


def looks_like(text: str) -> bool:
    """Whether ``text`` holds elbencho's results table: a cheap sniff, not a validation."""
    if HEADER.search(text) is not None:
        return True
    return ((_CSV_MARK in text and _CSV_HEADER.search(text) is not None)
            or ("Phase,RuntimeMS," in text and _LIVE_CSV.search(text) is not None))


def parse(text: str, *, source: str) -> list[Run]:
    """One run per rate each elbencho phase prints, with the LAST DONE figure as its one sample.

    Parameters
    ----------
    text : elbencho's console output or ``--resfile`` text; several runs one after another (as
        mtelbencho.sh prints them) are read in turn.
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        For the phases WRITE, READ, RMFILES, STAT, MKDIRS and RMDIRS, one run per rate printed:
        ``Throughput MiB/s`` (bandwidth, in MiB/s; ``MB/s`` in base-10 mode), ``IOPS`` (blocks
        read or written per second) and ``Files/s`` or ``Dirs/s`` (op/s). Each is labelled
        ``"[<data set> ]<PHASE> <throughput|IOPS|files/s|dirs/s>"`` (repeated labels get
        ``" (line N)"``); the origin's line is the rate's row. ``durations`` holds the phase's
        LAST DONE elapsed time.

    Raises
    ------
    ToolOutputError
        If the text has no results table or no phase with a rate, a phase is not closed by its
        ``---`` line (the output is truncated), a row the reader uses is malformed, or the
        number of threads is not in the output.

    Notes
    -----
    - LAST DONE is the aggregate until the slowest thread finished (elbencho's end result);
      FIRST DONE (until the fastest finished, the "hero number") is kept in a tag.
    - Workload: threads are the processes per node (``-t`` is per host in distributed mode),
      hosts (``--hosts``) the nodes, else nodes are unknown. The transfer size is the block
      size, which elbencho reduces to the file size for smaller files; it is known when both
      are in the output. The data set is the ``Total MiB`` the phase moved.
    - Files/s of a WRITE phase counts files created, written and closed (mdtest's "file
      creation"), so its operation is ``create``; READ's counts files opened, read and closed
      (``open``); RMFILES and RMDIRS ``remove``, MKDIRS ``create``.
    - Where the output shows it (mtelbencho's settings and "Working on <dir>/<N>x<size> with T
      threads" lines, or the ``COMMAND LINE:`` of a ``--resfile``), it gives threads, block and
      file size; ``--direct`` and ``--rand`` are read from a command line only (mtelbencho
      chooses direct I/O per file size without printing it, so ``direct`` is then unknown).
    - elbencho does not print its version: ``tool_version`` is None.
    - Its ``--csvfile`` CSV gives the same runs, a row per phase: the ``[last]`` columns are
      the samples (``MiB/s``, whole MiB/s as elbencho writes them; ``IOPS``; ``entries/s``,
      files/s or dirs/s by the phase), ``[first]`` ones the tag ``first_done``; ``hosts``
      are the nodes and ``threads`` the processes per node, ``file size``, ``block size``,
      ``IO depth``, ``direct IO`` and ``random`` the workload, ``MiB [last]`` the data set,
      ``version`` the tool's version and ``label`` (``--label``) the label's prefix. A
      ``--livecsv`` file (progress during a phase) is refused, saying so.
    """
    csv_header = _CSV_HEADER.search(text)
    if csv_header is not None and HEADER.search(text) is None:
        return distinct_labels(_parse_csv(text, csv_header, source))
    if HEADER.search(text) is None and _LIVE_CSV.search(text):
        raise ToolOutputError(source, "line 1", "expected elbencho's results; found its live statistics CSV "
                              "(--livecsv), progress samples while a phase runs, not the phase's results: read the "
                              "--csvfile or --resfile instead")
    tables = read_tables(text, source)
    if not tables:
        found = beginning(text)
        raise ToolOutputError(source, "line 1", "expected elbencho's results table (a line 'OPERATION "
                              f"RESULT TYPE FIRST DONE LAST DONE'); found {found}")
    runs = [run for table in tables for phase in table.phases for run in _phase_runs(table.setup, phase, source)]
    if not runs:
        raise ToolOutputError(source, f"line {tables[0].line}", "expected a WRITE, READ, RMFILES, STAT, MKDIRS "
                              "or RMDIRS phase with a rate (Throughput, IOPS, Files/s or Dirs/s); found none")
    return distinct_labels(runs)


# ---------------------------------------------------------------------------------------------
# Runs (the tables they come from: probes.readers.elbencho_text)


def _phase_runs(setup: Setup, phase: Phase, source: str) -> list[Run]:
    kind = _PHASES.get(phase.name)
    if kind is None:
        return []
    figures = _figures(kind, phase, source)
    if not figures:
        return []
    if setup.threads is None:
        raise ToolOutputError(source, f"line {phase.line}", "expected the number of threads (mtelbencho's "
                              "'threads :' or 'Working on ... with N threads' line, or a COMMAND LINE with -t); "
                              "found none: the output does not say how many threads ran")
    moved = _last(phase, "Total MiB", source)
    data_set = Q_(moved, "MiB") if moved else None
    entries = _entries_tag(kind, phase, source)
    runs = []
    for name, metric, unit, operation, first, value, line in figures:
        if value == 0 and phase.elapsed == 0:
            continue  # a phase faster than elbencho's clock: it prints 0 to avoid a division by zero
        workload = _workload(setup, operation, data_set)
        tags = setup.tags + (("elbencho_phase", phase.name), ("first_done", f"{first} {unit}")) + entries
        if operation is kind.entries:
            tags += (("counts", kind.counts),)
        prefix = f"{setup.dataset} " if setup.dataset else ""
        runs.append(Run(label=f"{prefix}{phase.name} {name}", workload=workload, metric=metric, samples=(value,),
                        unit=unit, origin=Origin(path=source, line=line, tool="elbencho", tool_version=None),
                        tags=tags, durations=(phase.elapsed,) if phase.elapsed > 0 else ()))
    return runs


def _figures(kind: _PhaseKind, phase: Phase, source: str) -> list[tuple]:
    """(name, metric, unit, operation, FIRST DONE text, LAST DONE value, line) of each rate the phase prints."""
    wanted = []
    if kind.data is not None:
        wanted = [(row, "throughput", Metric.BANDWIDTH, unit, kind.data) for row, unit in _THROUGHPUT_UNITS.items()]
        wanted.append(("IOPS", "IOPS", Metric.OPERATION_RATE, "op/s", kind.data))
    entries = f"{kind.entry_type}/s"
    wanted.append((entries, entries.lower(), Metric.OPERATION_RATE, "op/s", kind.entries))
    figures = []
    for row, name, metric, unit, operation in wanted:
        if row in phase.rows:
            first, value, line = _pair(phase, row, source)
            figures.append((name, metric, unit, operation, first, value, line))
    return sorted(figures, key=lambda figure: figure[-1])  # in the order printed


def _pair(phase: Phase, row: str, source: str) -> tuple[str, float, int]:
    values, line = phase.rows[row]
    cells = values.split()
    if len(cells) != 2:
        raise ToolOutputError(source, f"line {line}", f"expected FIRST DONE and LAST DONE values for "
                              f"{row!r}; found {values[:60]!r}")
    checked_number(cells[0], f"line {line}", source, f"a number for {row!r}")
    return cells[0], checked_number(cells[1], f"line {line}", source, f"a number for {row!r}"), line


def _last(phase: Phase, row: str, source: str) -> float | None:
    return _pair(phase, row, source)[1] if row in phase.rows else None


def _entries_tag(kind: _PhaseKind, phase: Phase, source: str) -> tuple[tuple[str, str], ...]:
    """How many files or directories the phase handled: "Total files" (1.x) or "Files total" (later)."""
    for row in (f"Total {kind.entry_type.lower()}", f"{kind.entry_type} total"):
        if row in phase.rows:
            return (("entries_done", f"{_pair(phase, row, source)[1]:.0f} {kind.entry_type.lower()}"),)
    return ()


def _workload(setup: Setup, operation: Operation, data_set) -> Workload:
    transfer = None
    if not operation.is_metadata and setup.block and setup.file_size:
        transfer = Q_(min(setup.block, setup.file_size), "B")  # elbencho reduces the block to the file size
    return Workload(operation=operation, transfer_size=transfer, nodes=setup.nodes, ppn=setup.threads,
                    queue_depth=1 if operation.is_metadata else setup.iodepth,
                    access=Access.RANDOM if setup.rand else Access.SEQUENTIAL, direct=setup.direct,
                    data_set=data_set)


# ---------------------------------------------------------------------------------------------
# --csvfile


def _parse_csv(text: str, header: re.Match, source: str) -> list[Run]:
    """The runs of elbencho's CSV results file: a row per phase, read by the names in its header."""
    lines = enumerate(iter_lines(text), start=1)
    start = line_of(text, header.start())
    head = next((line for number, line in lines if number == start), "")
    columns = [c.strip() for c in head.split(",")]
    missing = [c for c in _CSV_REQUIRED if c not in columns]
    if missing:
        raise ToolOutputError(source, f"line {start}", f"expected elbencho's CSV columns {', '.join(_CSV_REQUIRED)}; "
                              f"found no {', '.join(missing)}")
    runs = []
    for number, line in lines:
        if not line.strip() or line.strip() == head.strip():  # a blank or repeated header line
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(columns):
            raise ToolOutputError(source, f"line {number}", f"expected {len(columns)} cells as in the header at line "
                                  f"{start}; found {len(cells)}: the row is cut or malformed")
        runs += _csv_row_runs(dict(zip(columns, cells)), number, source)
    if not runs:
        raise ToolOutputError(source, f"line {start}", "expected a WRITE, READ, RMFILES, STAT, MKDIRS or RMDIRS row "
                              "with a rate (MiB/s, IOPS or entries/s); found none")
    return runs


def _csv_row_runs(row: dict[str, str], number: int, source: str) -> list[Run]:
    where = f"line {number}"
    kind = _PHASES.get(row["operation"])
    if kind is None:
        return []
    elapsed = checked_number(row["time ms [last]"], where, source, "the phase's time in ms") / 1000

    def whole(column: str) -> int | None:
        """A count or a size in bytes; None for an empty cell (elbencho writes none where it does not apply)."""
        cell = row.get(column, "")
        if not cell:
            return None
        if not re.fullmatch(r"[0-9]{1,20}", cell):
            raise ToolOutputError(source, where, f"expected a whole number in column {column!r}; found {cell[:40]!r}")
        return int(cell)

    threads = whole("threads")
    if not threads:
        raise ToolOutputError(source, where, "expected the number of threads (column 'threads'); found "
                              f"{row['threads'][:40]!r}")
    setup = Setup(threads=threads, block=whole("block size") or None, file_size=whole("file size") or None,
                  iodepth=max(whole("IO depth") or 1, 1), nodes=whole("hosts") or None,
                  direct=row["direct IO"] == "1" if row.get("direct IO") in ("0", "1") else None,
                  rand=row.get("random") == "1")
    moved = checked_number(row["MiB [last]"], where, source, "a number of MiB") if row.get("MiB [last]") else None
    data_set = Q_(moved, "MiB") if moved else None
    entries = kind.entry_type.lower()
    tags: tuple[tuple[str, str], ...] = (("elbencho_phase", row["operation"]),)
    if row.get("entries [last]"):
        tags += (("entries_done", f"{checked_number(row['entries [last]'], where, source, 'a count'):.0f} {entries}"),)
    if row.get("command"):
        tags += (("command", " ".join(re.findall(r'"([^"]*)"', row["command"])) or row["command"]),)
    prefix = f"{row['label']} " if row.get("label") else ""
    runs = []
    for column, name, metric, unit in _CSV_FIGURES:
        value = row.get(f"{column} [last]", "")
        if not value:
            continue
        operation = kind.entries if column == "entries/s" else kind.data
        if operation is None:
            continue
        figure = checked_number(value, where, source, f"a number for {column!r}")
        if figure == 0 and elapsed == 0:
            continue  # a phase faster than elbencho's clock
        first = row.get(f"{column} [first]", "")
        more = (("first_done", f"{first} {unit}"),) if first else ()
        if operation is kind.entries:
            more += (("counts", kind.counts),)
        label = f"{prefix}{row['operation']} {name or f'{kind.entry_type.lower()}/s'}"
        runs.append(Run(label=label, workload=_workload(setup, operation, data_set), metric=metric, samples=(figure,),
                        unit=unit, origin=Origin(path=source, line=number, tool="elbencho",
                                                 tool_version=row.get("version") or None),
                        tags=tags + more, durations=(elapsed,) if elapsed > 0 else ()))
    return runs
