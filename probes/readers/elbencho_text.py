"""Read elbencho's console output, ``--resfile`` and mtelbencho.sh's lines into results tables: each with the setup
printed before it (threads, sizes, hosts) and its phases' rows as printed; :func:`probes.readers.elbencho.parse`
makes runs of them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.core.patterns import Pattern
from probes.readers.textlines import COUNT, binary_size, checked_number

__all__ = ["read_tables", "Setup", "Phase", "HEADER"]

# Sizes in mtelbencho.sh's data set names ("1024x1GiB").
_NAMED_SIZES = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}

HEADER = Pattern(r"^OPERATION\s+RESULT TYPE\s+FIRST DONE\s+LAST DONE\s*$", re.MULTILINE)
# A phase's first row names it and gives its elapsed time: "WRITE     Elapsed ms       :  85656  99973"
# (elbencho 1.x) or "WRITE       Elapsed time     :    2m3.241s    2m5.755s" (later releases).
_PHASE = Pattern(r"^([A-Z][A-Z0-9_+-]*)\s+Elapsed (ms|time)\s*:\s*(.*?)\s*$")
_ROW = Pattern(r"^\s+(\S.*?)\s*:\s*(.*?)\s*$")
_HUMAN_TIME = Pattern(r"(?:([0-9]{1,9})h)?(?:([0-9]{1,9})m(?!s))?(?:([0-9]{1,9}(?:\.[0-9]{1,6})?)s)?"
                         r"|([0-9]{1,12})ms")
# mtelbencho.sh (contrib/storage_sweep) prints its settings, then one line per elbencho run; its data
# sets are named "<number of files>x<size of each>" (the script's remark 7), e.g. "1024x1GiB".
_WRAPPER_SETTING = Pattern(r"^(threads|block_size)\s*:\s*(.*?)\s*$")
_WORKING_ON = Pattern(r"^Working on (\S+) with ([0-9]{1,9}) threads\.\.\.\s*$")
_DATASET_NAME = Pattern(r"([0-9]{1,12})x([0-9]{1,12})(KiB|MiB|GiB|TiB)")
# elbencho's --resfile starts each run with its argv, every argument in double quotes.
_COMMAND_LINE = Pattern(r"^COMMAND LINE:\s*(.*?)\s*$")
_VALUE_OPTIONS = {"-t": "threads", "--threads": "threads", "-b": "block", "--block": "block", "-s": "size",
                  "--size": "size", "--iodepth": "iodepth", "--hosts": "hosts"}
_FLAG_OPTIONS = {"--direct": "direct", "--rand": "rand"}
_HOST_RANGE = Pattern(r"\[([0-9,\-]+)\]")


@dataclass
class Setup:
    """What the output says about the workload of one elbencho run; None where it says nothing."""

    threads: int | None = None
    block: int | None = None
    file_size: int | None = None
    dataset: str | None = None
    iodepth: int = 1
    nodes: int | None = None
    direct: bool | None = None
    rand: bool = False
    tags: tuple[tuple[str, str], ...] = ()


@dataclass
class Phase:
    """One phase of a results table: its name, line, LAST DONE seconds and rows (value as printed, line)."""

    name: str
    line: int
    elapsed: float  # seconds, LAST DONE
    rows: dict[str, tuple[str, int]] = field(default_factory=dict)


@dataclass
class _Table:
    line: int
    setup: Setup
    phases: list[Phase] = field(default_factory=list)


def read_tables(text: str, source: str) -> list[_Table]:
    """The results tables, each with the setup printed before it and its phases closed by ``---``."""
    tables: list[_Table] = []
    wrapper = Setup()  # mtelbencho's settings, valid for every run after them
    pending = wrapper  # the setup of the next table
    phase: Phase | None = None
    for number, line in enumerate(iter_lines(text), start=1):
        if phase is not None:
            if line.strip() == "---":
                phase = None
            elif row := _ROW.match(line):
                phase.rows.setdefault(row[1], (row[2], number))
            elif _PHASE.match(line) or HEADER.match(line):
                raise ToolOutputError(source, f"line {phase.line}", f"expected the {phase.name} phase to end "
                                      f"with a '---' line; found the next results at line {number}")
            continue  # a warning elbencho prints inside the phase
        if HEADER.match(line):
            tables.append(_Table(number, pending))
            pending = wrapper
            continue
        match = _PHASE.match(line)
        if match and tables:
            phase = Phase(match[1], number, _elapsed(match[2], match[3], number, source))
            tables[-1].phases.append(phase)
            continue
        wrapper, pending = _setup_line(line, number, wrapper, pending, source)
    if phase is not None:
        raise ToolOutputError(source, f"line {phase.line}", f"expected the {phase.name} phase to end with a "
                              "'---' line; found the end of the text: the output is truncated")
    return tables


def _setup_line(line: str, number: int, wrapper: Setup, pending: Setup, source: str) -> tuple[Setup, Setup]:
    """The wrapper settings and the next run's setup, updated by one line outside the tables."""
    setting = _WRAPPER_SETTING.match(line)
    if setting:
        if setting[1] == "threads":
            wrapper = replace(wrapper, threads=_count(setting[2], f"line {number}", source) or None)
        else:
            wrapper = replace(wrapper, block=_human_size(setting[2], f"line {number}", source))
        return wrapper, replace(pending, threads=wrapper.threads, block=wrapper.block)
    working = _WORKING_ON.match(line)
    if working:
        return wrapper, _dataset_setup(wrapper, working[1], int(working[2]))
    command = _COMMAND_LINE.match(line)
    if command:
        return wrapper, _command_setup(command[1], number, source)
    return wrapper, pending


def _dataset_setup(wrapper: Setup, path: str, threads: int) -> Setup:
    """mtelbencho's "Working on <dir>/<N>x<size> with T threads...": the data set, its file size and threads."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    match = _DATASET_NAME.fullmatch(name)
    file_size = int(match[2]) * _NAMED_SIZES[match[3]] if match else None
    return replace(wrapper, threads=threads if threads > 0 else None, file_size=file_size or None,
                   dataset=name, tags=(("dataset", path),))


def _command_setup(quoted: str, number: int, source: str) -> Setup:
    """The setup in a ``--resfile``'s COMMAND LINE; elbencho's defaults (1 thread, 1M blocks) where absent."""
    where = f"line {number}"
    args = re.findall(r'"([^"]*)"', quoted)
    values: dict[str, str] = {}
    flags: set[str] = set()
    iterator = iter(args[1:])
    for arg in iterator:
        name, _, inline = arg.partition("=") if arg.startswith("--") else (arg[:2], "", arg[2:])
        if name in _FLAG_OPTIONS:
            flags.add(_FLAG_OPTIONS[name])
        elif name in _VALUE_OPTIONS:
            values[_VALUE_OPTIONS[name]] = inline or next(iterator, "")
        elif arg in ("-c", "--configfile") or arg.startswith("--configfile="):
            flags.add("configfile")
    defaults = "configfile" not in flags  # options in a config file are not in the output
    threads = _count(values["threads"], where, source) if "threads" in values else (1 if defaults else None)
    block = _human_size(values["block"], where, source) if "block" in values else (2**20 if defaults else None)
    size = _human_size(values["size"], where, source) if "size" in values else None
    iodepth = _count(values["iodepth"], where, source) if "iodepth" in values else 1
    nodes, tags = _hosts(values.get("hosts"))
    return Setup(threads=threads or None, block=block or None, file_size=size or None, iodepth=max(iodepth, 1),
                 nodes=nodes, direct=("direct" in flags) if defaults else None, rand="rand" in flags,
                 tags=tags + (("command", " ".join(args)),))


def _hosts(hosts: str | None) -> tuple[int | None, tuple[tuple[str, str], ...]]:
    """Nodes from ``--hosts`` ("node[1-4],gpu7"); unknown where a host names a port (services may share a node)."""
    if not hosts:
        return None, ()
    tags = (("threads", "per service host (elbencho -t with --hosts)"),)
    if ":" in hosts:
        return None, tags
    total = 0
    for host in re.split(r"[,\s]+(?![^\[]*\])", hosts.strip()):
        if re.search(r"[\[\]]", _HOST_RANGE.sub("", host)):
            return None, tags  # brackets elbencho would not expand
        count = 1
        for group in _HOST_RANGE.findall(host):
            count *= sum(_range_size(item) for item in group.split(",") if item)
        total += count
    return (total or None), tags


def _range_size(item: str) -> int:
    start, _, end = item.partition("-")
    if not end:
        return 1
    if not (COUNT.fullmatch(start) and COUNT.fullmatch(end)):
        return 0
    return max(int(end) - int(start) + 1, 0)


def _elapsed(kind: str, values: str, number: int, source: str) -> float:
    """The LAST DONE elapsed seconds of "Elapsed ms : 3634 3943" or "Elapsed time : 2m3.241s 2m5.755s"."""
    cells = values.split()
    if len(cells) != 2:
        raise ToolOutputError(source, f"line {number}", f"expected FIRST DONE and LAST DONE elapsed times; "
                              f"found {values[:60]!r}")
    if kind == "ms":
        return checked_number(cells[1], f"line {number}", source, "an elapsed time in ms") / 1000
    match = _HUMAN_TIME.fullmatch(cells[1])
    if match is None:
        raise ToolOutputError(source, f"line {number}", f"expected an elapsed time such as '2m3.241s' or "
                              f"'12ms'; found {cells[1][:40]!r}")
    if match[4] is not None:
        return int(match[4]) / 1000
    hours, minutes, seconds = (float(group or 0) for group in match.groups()[:3])
    return hours * 3600 + minutes * 60 + seconds


def _count(text: str, where: str, source: str) -> int:
    if not COUNT.fullmatch(text):
        raise ToolOutputError(source, where, f"expected a whole number; found {text[:40]!r}")
    return int(text)


def _human_size(text: str, where: str, source: str) -> int:
    """Bytes of an elbencho size such as "16m" or "4K" (binary suffixes, as elbencho reads them)."""
    size = binary_size(text)
    if size is None:
        raise ToolOutputError(source, where, f"expected a size such as '16m' or '4k'; found {text[:40]!r}")
    return size

