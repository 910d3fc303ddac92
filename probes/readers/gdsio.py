"""Read gdsio's results (NVIDIA GPUDirect Storage's benchmark) into bandwidth runs, one per line it printed.

gdsio prints one line a run: ``IoType: READ XferType: GPUD Threads: 8 DataSetSize: .../...(KiB) IOSize: 1024(KiB)
Throughput: 2.308903 GiB/sec, Avg_Latency: ... usecs ops: ... total_time ... secs``. A saved log often keeps the
command line before it (``gdsio -D DIR -d GPU -w THREADS -s SIZE -i IOSIZE -x XFER -I IOTYPE``), and a thread may
quote only the Throughput part: the command then says what the run was, where it stands right before it (a line of
words between, "switching -x 2 the throughput is far better:", may say the run was another). ``-x`` names the path the data took:
GPU_DIRECT (GDS, storage to GPU memory), CPU_ONLY (storage to host memory), or a bounce through host memory.
"""

from __future__ import annotations

import re

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Metric, Q_
from probes.core.workload import MOST_COUNT, Access, Operation, Workload
from probes.readers.textlines import COUNT, beginning, binary_size, checked_number, line_of, split_words

__all__ = ["looks_like", "parse", "FORMAT", "XFER_TYPES"]

FORMAT = "gdsio output (GPUDirect Storage)"
UNIT = "GiB/s"  # gdsio prints "GiB/sec"

# -x's numbers, the names gdsio prints for them, and the path the data takes: "gds" storage to GPU memory directly,
# "bounce" storage to host memory then to the GPU, "host" storage to host memory only (gdsio's usage text).
XFER_TYPES = {0: ("GPUD", "gds"), 1: ("CPUONLY", "host"), 2: ("CPU_GPU", "bounce"), 3: ("CPU_ASYNC_GPU", "bounce"),
              4: ("CPU_CACHED_GPU", "bounce"), 5: ("GPU_DIRECT_ASYNC", "gds"), 6: ("GPU_BATCH", "gds"),
              7: ("GPU_BATCH_STREAM", "gds")}
_NAMES = {name: number for number, (name, _) in XFER_TYPES.items()} | {"GPU_DIRECT": 0, "CPU_ONLY": 1, "GPUD_ASYNC": 5}
# -I's numbers and the IoType gdsio prints for them.
_IO_TYPES = {0: "READ", 1: "WRITE", 2: "RANDREAD", 3: "RANDWRITE"}
# Options that take a value (gdsio's usage); the others (-p -b -V -U -R -F -J) are switches.
_VALUED = set("fDdnmwsoixBITkaP")
_SWITCHES = set("pbVURFJ")

# A command line: gdsio followed by its options (gdsio takes no other word), after a prompt or a path perhaps; a line
# of words that names gdsio ("the read test with gdsio gives:") is none.
_COMMAND = Pattern(r"^[^\n]*?(?:^|[ \t/#$])gdsio[ \t]+-[^\n]*$", re.MULTILINE)
_RESULT = Pattern(
    r"(?:IoType:\s*(?P<io>\w+)\s+XferType:\s*(?P<xfer>\w+)\s+Threads:\s*(?P<threads>\d{1,9})\s+(?:IoDepth:\s*\d+\s+)?"
    r"DataSetSize:\s*\d+/\d+\(KiB\)\s+IOSize:\s*(?P<iosize>\d{1,9})\(KiB\)\s+)?"
    r"Throughput:\s*(?P<rate>[\d.]{1,30})\s*GiB/sec,\s*Avg_Latency:\s*[\d.]+\s*usecs(?:\s+ops:\s*\d+\s+total_time\s+(?P<time>[\d.]{1,30})\s*secs)?")


def looks_like(text: str) -> bool:
    """Whether ``text`` holds gdsio's result lines."""
    return _RESULT.search(text) is not None


def parse(text: str, *, source: str) -> list[Run]:
    """One bandwidth run per result line, in GiB/s, described by the line's own fields and the command line before it.

    Returns
    -------
    list of Run
        Labelled ``gdsio read GPUD`` (repeated labels get their line); the workload (read or write, sequential or
        random, the io size, the threads as processes on one node); tags ``xfer_type``, ``path`` (gds, bounce, host),
        ``gpu`` (-d) and ``command`` where the command line is there.

    Raises
    ------
    ToolOutputError
        If no result line is found, a command line has an option gdsio does not take or a value it cannot read,
        or a result line's run cannot be told (a bare Throughput line with no command line right before it: only
        blank lines and gdsio's result lines may stand between them).
    """
    commands = [(m.start(), m.group(0).strip(), line_of(text, m.start()), m.end()) for m in _COMMAND.finditer(text)]
    runs = [_run(m, [c for c in commands if c[0] < m.start()][-1:], text, source) for m in _RESULT.finditer(text)]
    if not runs:
        raise ToolOutputError(source, "", f"no gdsio result line (Throughput: ... GiB/sec) (it begins {beginning(text)})")
    return distinct_labels(runs)


def _run(found: re.Match, command: list[tuple[int, str, int, int]], text: str, source: str) -> Run:
    line = line_of(text, found.start())
    where = f"line {line}"
    if command and found["io"] is None and (words := _words_between(text[command[0][3]:found.start()])):
        raise ToolOutputError(source, where, f"cannot tell the run of a bare Throughput line: {words!r} stands between "
                              f"it and the command line (line {command[0][2]}), and may say its run was another; put "
                              "gdsio's 'IoType: ... XferType: ...' line, or its command line right before it")
    options, notes = _options(command[0][1], f"line {command[0][2]}", source) if command else ({}, [])
    io = found["io"] or _IO_TYPES.get(_number(options.get("I", ""), "-I", where, source))
    xfer = _NAMES.get(found["xfer"]) if found["xfer"] else _number(options.get("x", ""), "-x", where, source)
    if io is None or xfer is None or io not in _IO_TYPES.values() or xfer not in XFER_TYPES:
        raise ToolOutputError(source, where, "cannot tell the run's I/O type and transfer type: expected gdsio's "
                              "'IoType: ... XferType: ...' or its command line (-I 0-3, -x 0-7) before the line")
    size = int(found["iosize"]) * 1024 if found["iosize"] else binary_size(options.get("i", ""))
    threads = int(found["threads"]) if found["threads"] else _number(options.get("w", "1"), "-w", where, source)
    if not (threads and 1 <= threads <= MOST_COUNT) or size == 0:
        raise ToolOutputError(source, where, f"expected at least one thread and an io size above 0; found {threads} "
                              f"threads of {size} B")
    rate = checked_number(found["rate"], where, source, "a throughput in GiB/s")
    time = checked_number(found["time"], where, source, "a total time in s") if found["time"] else None
    workload = Workload(Operation.READ if "READ" in io else Operation.WRITE, None if size is None else Q_(size, "B"),
                        nodes=1, ppn=threads, access=Access.RANDOM if io.startswith("RAND") else Access.SEQUENTIAL,
                        direct=xfer != 4)
    name, path = XFER_TYPES[xfer]
    tags = (("xfer_type", name), ("path", path), ("gpu", options.get("d", "")),
            *((("command", command[0][1]),) if command else ()), *(("note", note) for note in notes))
    return Run(label=f"gdsio {workload.operation.value} {name}", workload=workload, metric=Metric.BANDWIDTH,
               samples=(rate,), unit=UNIT, origin=Origin(source, line, "gdsio"), tags=tags,
               durations=(time,) if time is not None else ())


def _words_between(text: str) -> str:
    """The first line of ``text`` that is neither blank (nor only marks, as a quote's fence) nor gdsio's result."""
    return next((line.strip()[:60] for line in text.splitlines()
                 if any(c.isalnum() for c in line) and not _RESULT.search(line)), "")


def _number(text: str, option: str, where: str, source: str) -> int | None:
    """An option's whole number (a count as tools print them: ASCII digits, not str.isdigit's ² that int() refuses)."""
    if text == "":
        return None
    if not COUNT.fullmatch(text):
        raise ToolOutputError(source, where, f"{option} takes a whole number; found {text[:20]!r}")
    return int(text)


def _options(command: str, where: str, source: str) -> tuple[dict[str, str], list[str]]:
    """A gdsio command line's options (the last of a repeated one wins, as getopt gives them), and what was read
    otherwise than written: an -I given a size where -i is missing is the io size (-I takes 0 to 3)."""
    words = split_words(command)
    words = words[next(i for i, w in enumerate(words) if w.endswith("gdsio")) + 1:]
    options: dict[str, str] = {}
    notes = []
    index = 0
    while index < len(words):
        word = words[index]
        letter = word[1:2] if word.startswith("-") and len(word) >= 2 else ""
        if letter in _SWITCHES and len(word) == 2:
            options[letter] = ""
        elif letter in _VALUED:
            value = word[2:] or (words[index + 1] if index + 1 < len(words) else "")
            index += 0 if word[2:] else 1
            if letter == "I" and not COUNT.fullmatch(value) and binary_size(value) is not None and "i" not in options:
                notes.append(f"-I {value} read as -i {value} (the io size): -I takes 0 to 3")
                letter = "i"
            options[letter] = value
        else:
            raise ToolOutputError(source, where, f"gdsio takes no option {word[:20]!r}")
        index += 1
    return options, notes
