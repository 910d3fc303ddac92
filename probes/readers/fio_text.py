"""Read fio's normal (human-readable) output, fio 2.x and 3.x, into bandwidth runs like :mod:`probes.readers.fio` reads its JSON.

One :class:`~probes.core.run.Run` per job result block and direction (read, write), one sample (fio
runs a job once), in the binary unit fio printed; what the output does not say is refused or
left unknown, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.core.patterns import Pattern
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers.textlines import beginning, line_of

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["looks_like", "parse", "FORMAT"]

# What iobound read says it reads.
FORMAT = "fio normal text output"

# Units. fio (stat.c show_ddir_status) prints "BW=<bw> (<alt>)": with the default kb_base=1024
# <bw> has binary prefixes (KiB/s, MiB/s, GiB/s: 2^10, 2^20, 2^30 B/s) and <alt> decimal ones
# (kB/s, MB/s: 10^3, 10^6 B/s); kb_base=1000 swaps the two. Every corpus file bears this out:
# "BW=179MiB/s (188MB/s)" (179 * 1.048576 = 187.7), "BW=1548KiB/s (1585kB/s)" (1548 * 1.024 =
# 1585.2). The run takes the binary one, wherever it stands, in the unit printed (unit_base=1
# prints bits: Kibit/s). fio prints 4 significant digits (sig_figs), so values are rounded.
_SIZE = r"([0-9]{1,20}(?:\.[0-9]{1,20})?)((?:[kMGTPE]|[KMGTPE]i)?B)"
_BYTES = {"B": 1, **{p + "B": 1000 ** (i + 1) for i, p in enumerate("kMGTPE")},
          **{p + "iB": 1024 ** (i + 1) for i, p in enumerate("KMGTPE")}}
_RATE = Pattern(r"([0-9]{1,20}(?:\.[0-9]{1,20})?)((?:[kMGTPE]|[KMGTPE]i)?(?:B|bit)/s)")
_AMOUNT = Pattern(_SIZE)
_RANGE = Pattern(_SIZE + "-" + _SIZE)

# "<job>: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) ..., ioengine=libaio, iodepth=32", printed
# once per job definition before the run ("..." stands for its numjobs clones); "<host> " before
# it in client/server runs.
_DESCRIPTION = Pattern(r"(?P<host><[^>\n]*> )?(?P<name>.*?): \(g=(?P<group>[0-9]{1,9})\): (?P<rest>.*)")
_SETTINGS = Pattern(r"rw=(?P<rw>[a-z]+), bs=(?P<bs>.*), ioengine=.*, iodepth=(?P<depth>[0-9]{1,9})\s*")
# "<job>: (groupid=0, jobs=8): err= 0: pid=12567: <date>"; err=N (<what>) when the job failed.
_HEADER = Pattern(r"(?P<name>.*?): \(groupid=(?P<group>[0-9]{1,9}), jobs=(?P<jobs>[0-9]{1,9})\): "
                     r"err=\s*(?P<error>-?[0-9]{1,9})(?: \(.*\))?: pid=[0-9]{1,12}")
# "  read: IOPS=243k, BW=949MiB/s (995MB/s)(5120MiB/5393msec)", maybe "; 0 zone resets" after.
_DIRECTION_START = Pattern(r"\s*(read|write|trim|mixed)\s*:")
_DIRECTION = Pattern(r"\s*(?P<op>read|write|trim|mixed): IOPS=[0-9.]{1,20}[kMGTPE]?, BW=(?P<bw>\S+) "
                        r"\((?P<alt>[^()]*)\)\((?P<io>[^/()]*)/(?P<msec>[0-9]{1,15})msec\).*")
# fio 2.0 to 2.16 (stat.c show_ddir_status): "  read : io=65536KB, bw=38871KB/s, iops=9717, runt=  1686msec".
# Its sizes and rates (num2str, up to 6 digits) take prefixes K, M, G, then P and E for the 4th and 5th
# step (its table has no T), in steps of kb_base: 1024 by default, 1000 with kb_base=1000; the text
# never says which. The real fio 2.2.10 outputs in tests/data bear it out: 256 MiB in 106 msec print
# "io=262144KB, bw=2415.1MB/s" (2^20 B), and with --kb_base=1000 two jobs of 128m (128 x 10^6 B) print
# "io=256000KB, bw=448336KB/s" (10^3 B). Its one decimal is the remainder's leading digit, not a decimal
# fraction ("complete with carry rounding error"): a figure with a decimal is within 0.1 % of fio's.
_OLD_DIRECTION = Pattern(r"\s*(read|write|trim|mixed)\s*: io=")
_FIO2_DIRECTION = Pattern(r"\s*(?P<op>read|write|trim|mixed)\s*: io=(?P<io>[0-9]{1,20}(?:\.[0-9]{1,3})?)"
                             r"(?P<io_prefix>[KMGPE]?)B, bw=(?P<bw>[0-9]{1,20}(?:\.[0-9]{1,3})?)(?P<bw_prefix>[KMGPE]?)"
                             r"(?P<bw_unit>B|bit)/s, iops=[0-9.]{1,20}[KMGPE]?, runt=\s*(?P<msec>[0-9]{1,15})msec.*")
_FIO2_STEPS = {"": 0, "K": 1, "M": 2, "G": 3, "P": 4, "E": 5}
_FIO2_UNITS = {1024: ("", "Ki", "Mi", "Gi", "Ti", "Pi"), 1000: ("", "k", "M", "G", "T", "P")}
# kb_base where the text shows it: a job file or command line printed beside the output.
_KB_BASE = Pattern(r"(?:^|[\s-])kb_base\s*=\s*(\S+)", re.MULTILINE)
_FIO2_DEFAULT_KB_BASE = 1024
# fio 2's job description: "bs=4K-4K/4K-4K/4K-4K" (read, write, trim; init.c fio_uint_to_kmg, always 1024-based).
_FIO2_BS = Pattern(r"([0-9]{1,20})([KMGPE]?)-([0-9]{1,20})([KMGPE]?)")
_GROUP_STATUS = Pattern(r"Run status group ([0-9]{1,9}) \(all jobs\):")
_DISK_STATS = "Disk stats (read/write):"
_VERSION = Pattern(r"(fio-[0-9]\S*)\s*")
_CLIENT_PROBE = Pattern(r"hostname=.*, fio=(fio-[0-9][^,]*),.*")
_ERROR_LINE = Pattern(r"(?:fio: |error: |\S+: verify failed at file )")
_SNIFF = Pattern(r"\(g=[0-9]{1,9}\): rw=[a-z]|\(groupid=[0-9]{1,9}, jobs=[0-9]{1,9}\): err="
                    r"|^Run status group [0-9]{1,9} \(all jobs\):|^fio: pid=[0-9]{1,12}, err=[0-9]"
                    r"|^\S+: verify failed at file ", re.MULTILINE)
_SNIFF_WORDS = ("(g=", "(groupid=", "Run status group ", "fio: pid=", ": verify failed at file ")
_JOB_FILE_SECTION = Pattern(r"\s*\[[^\]\n]+\]\s*(?:[#;].*)?")
_LOG_ROW = Pattern(r"\s*[0-9]{1,20}(?:,\s*-?[0-9]{1,20}){2,5}\s*")
_RW_MODES = frozenset({"read", "write", "trim", "rw", "readwrite", "randread", "randwrite", "randrw",
                       "randtrim", "trimwrite", "randtrimwrite"})
# The block fio's client adds after the per-host ones: their sum.
_ALL_CLIENTS = "All clients"
_OPERATIONS = {"read": Operation.READ, "write": Operation.WRITE}


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like fio's normal output (or its error messages alone), not its JSON."""
    # Each of _SNIFF's patterns holds one of _SNIFF_WORDS: looking for those first spares the pattern's
    # slow scan of a large output of another tool (a second on a 50 MB IOR log).
    return ('"fio version"' not in text and any(word in text for word in _SNIFF_WORDS)
            and _SNIFF.search(text) is not None)


@dataclass
class _Direction:
    """One "read:"/"write:" line of a job's result block, read."""

    operation: str
    line: int
    bandwidth: float
    unit: str
    moved: Quantity
    seconds: float
    note: tuple[tuple[str, str], ...] = ()


@dataclass
class _Block:
    """One job's result block: "<job>: (groupid=N, jobs=N): err=..." and its direction lines."""

    name: str
    group: int
    jobs: int
    error: int
    line: int
    directions: list[_Direction] = field(default_factory=list)


@dataclass
class _Invocation:
    """One fio run in the text: its job descriptions, result blocks and version."""

    descriptions: dict[tuple[str, int], list[tuple[int, str]]] = field(default_factory=dict)
    blocks: list[_Block] = field(default_factory=list)
    group_status: dict[int, int] = field(default_factory=dict)
    version: str | None = None
    client: bool = False


@dataclass(frozen=True)
class _Settings:
    """What a job description line says: access, block size per direction (min, max), queue depth."""

    rw: str
    sizes: tuple[tuple[Quantity, Quantity], ...]
    depth: int


def parse(text: str, *, source: str) -> list[Run]:
    """One bandwidth run per fio job result block and direction (read, write) that moved data.

    Parameters
    ----------
    text : what fio printed with ``--output-format=normal`` (the default); lines around it
        (wrapper scripts, job files, error messages) are skipped, and several fio runs one
        after another are read in turn.
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled ``"<jobname> <read|write>"`` as :func:`probes.readers.fio.parse` labels the same job
        (repeated labels get ``" (line N)"``), metric bandwidth in the binary unit fio printed
        (``KiB/s``, ``MiB/s`` ...), one sample; ``durations`` the direction's run time
        (``.../28584msec``), the workload's ``data_set`` the amount it moved (``5120MiB``).

    Raises
    ------
    ToolOutputError
        If the text holds no job results (the error says what it is instead: a job file, a
        fio log, fio's error messages alone), a result line is cut or malformed, the job's
        description line is missing, or the workload is unknown: a range of block sizes,
        ``bs_is_seq_rand``, reads and writes summed as ``mixed``, or a group report summing
        jobs of different workloads. Several status dumps of one run (``--status-interval``) are
        refused, as :mod:`probes.readers.fio` refuses them, and fio 2 output beside two different
        ``kb_base`` settings.

    Notes
    -----
    - Workload from the description line: ``rw`` gives the access, ``bs=(R) a-a, (W) b-b``
      the transfer size per direction, ``iodepth`` the queue depth. fio does not print
      ``direct`` there, so ``direct`` is None (unknown), where the JSON reader knows it.
    - Processes per node are the block's ``jobs=N``: with ``group_reporting`` fio sums the
      group's jobs into one block (one run), without it each job process has its own
      block with ``jobs=1`` (one run each, same label, told apart by line).
    - "Run status group" lines sum a group again and "Disk stats" describe the devices:
      context, not runs. The client's "All clients" block sums the host blocks and is left
      out, as the JSON reader leaves it out; the text does not say which host a block is from.
    - A job that ended with an error keeps its runs, tagged ``("fio_error", "<errno>")``;
      trim lines give no run (no such operation in a workload).
    - fio 2.0 to 2.16 print "read : io=65536KB, bw=38871KB/s, ..., runt= 1686msec", whose KB
      and MB follow ``kb_base``, which the output does not print: they are read with fio 2's
      default of 1024 (KB is KiB) unless the text shows ``kb_base=`` (a job file or command line
      beside the output), and every such run is tagged ``kb_base`` saying which and why. The
      description line's block sizes ("bs=4K-4K/4K-4K/4K-4K") are 1024-based whatever kb_base is.

    Examples
    --------
    >>> text = '''seq: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, (W) 1024KiB-1024KiB, (T) 1024KiB-1024KiB, ioengine=psync, iodepth=1
    ... fio-3.36
    ... seq: (groupid=0, jobs=1): err= 0: pid=7: Mon Jan  1 00:00:00 2024
    ...   read: IOPS=500, BW=500MiB/s (524MB/s)(1024MiB/2048msec)
    ... '''
    >>> [(r.label, r.samples, r.unit, r.durations, r.workload.describe()) for r in parse(text, source="x.txt")]
    [('seq read', (500.0,), 'MiB/s', (2.048,), 'read 1 MiB seq, 1 node x 1 ppn')]
    """
    invocations, errors = _scan(text, source)
    if not any(invocation.blocks for invocation in invocations):
        raise _no_results(text, errors, source)
    runs = [run for invocation in invocations for run in _invocation_runs(invocation, source)]
    if not runs:
        first = next(invocation.blocks[0].line for invocation in invocations if invocation.blocks)
        raise ToolOutputError(source, f"line {first}", "expected a job that read or wrote data; found none (only "
                              "failed jobs, trims or the client's 'All clients' sum)")
    return distinct_labels(runs)


@dataclass
class _KbBase:
    """fio 2's KB base for a text, looked for once, when its first fio 2 result line is read."""

    text: str
    source: str
    found: tuple[int, tuple[tuple[str, str], ...]] | None = None

    def get(self) -> tuple[int, tuple[tuple[str, str], ...]]:
        """(kb_base, the tag saying where it comes from): the text's ``kb_base=`` if it shows one, else fio 2's 1024."""
        if self.found is None:
            shown = {}
            for match in _KB_BASE.finditer(self.text):
                value = match[1].strip("'\",;")
                if value not in ("1000", "1024"):
                    raise ToolOutputError(self.source, f"line {line_of(self.text, match.start(1))}",
                                          f"expected kb_base=1000 or kb_base=1024; found kb_base={value[:20]}")
                shown.setdefault(int(value), line_of(self.text, match.start(1)))
            if len(shown) > 1:
                lines = " and ".join(f"kb_base={b} at line {n}" for b, n in sorted(shown.items(), key=lambda i: i[1]))
                raise ToolOutputError(self.source, f"line {min(shown.values())}", f"expected one kb_base for fio 2's "
                                      f"KB and MB; found {lines}, and the output does not say which job took which")
            if shown:
                (base, line), = shown.items()
                self.found = (base, (("kb_base", f"{base}, as line {line} sets it: fio 2's KB and MB are {base} and "
                                                 f"{base}^2 bytes"),))
            else:
                self.found = (_FIO2_DEFAULT_KB_BASE, (("kb_base", "1024 assumed: fio 2's default, which its output does "
                                                                  "not print; with kb_base=1000 its KB and MB would be "
                                                                  "10^3 and 10^6 bytes"),))
        return self.found


def _scan(text: str, source: str) -> tuple[list[_Invocation], list[tuple[int, str]]]:
    """The fio runs in ``text``, and fio's error lines (line, text) met on the way."""
    kb_base = _KbBase(text, source)
    invocations = [_Invocation()]
    errors: list[tuple[int, str]] = []
    block: _Block | None = None
    for number, line in enumerate(iter_lines(text), start=1):
        invocation = invocations[-1]
        description = _DESCRIPTION.fullmatch(line) if "(g=" in line else None
        probe = _CLIENT_PROBE.fullmatch(line) if line.startswith("hostname=") else None
        version = probe or _VERSION.fullmatch(line)
        if (description or version) and invocation.blocks:
            invocation = _Invocation()  # a description or version line after results: another fio run
            invocations.append(invocation)
        if description:
            key = (description["name"], int(description["group"]))
            invocation.descriptions.setdefault(key, []).append((number, description["rest"]))
            invocation.client |= description["host"] is not None
            block = None
        elif "(groupid=" in line and (header := _HEADER.match(line)):
            block = _Block(header["name"], int(header["group"]), int(header["jobs"]), int(header["error"]), number)
            invocation.blocks.append(block)
        elif block is not None and _DIRECTION_START.match(line):
            block.directions.append(_direction(line, number, source, kb_base))
        elif status := _GROUP_STATUS.match(line):
            _group_status(invocation, int(status[1]), number, source)
            block = None
        elif line.startswith(_DISK_STATS):
            block = None
        elif version:
            invocation.version = invocation.version or version[1]
            invocation.client |= probe is not None
        elif _ERROR_LINE.match(line):
            errors.append((number, line.strip()))
    return invocations, errors


def _group_status(invocation: _Invocation, group: int, number: int, source: str) -> None:
    """Note a "Run status group N" line; a second one for N in a local run is another status dump."""
    first = invocation.group_status.setdefault(group, number)
    if first != number and not invocation.client:
        raise ToolOutputError(
            source, f"line {number}",
            f"expected one status of run status group {group}; found a second one (the first at line "
            f"{first}): fio --status-interval prints one per interval, keep only the last")


def _direction(line: str, number: int, source: str, kb_base: _KbBase) -> _Direction:
    """A direction line "read: IOPS=..., BW=... (...)(<io>/<N>msec)" (fio 2: "read : io=..., bw=..."), read."""
    where = f"line {number}"
    match = _DIRECTION.fullmatch(line)
    if match is None:
        if _OLD_DIRECTION.match(line):
            return _fio2_direction(line, where, source, kb_base)
        raise ToolOutputError(source, where, "expected '<read|write>: IOPS=..., BW=... (...)(<io>/<N>msec)'; "
                              f"found {line.strip()[:70]!r}: the line is cut or malformed")
    bandwidth, unit = _binary_rate(match["bw"], match["alt"], where, source)
    moved = _amount(match["io"], where, source)
    milliseconds = int(match["msec"])
    if milliseconds == 0:
        raise ToolOutputError(source, where, "expected a run time of at least 1 msec; found 0msec")
    return _Direction(match["op"], number, bandwidth, unit, moved, milliseconds / 1000)


def _fio2_direction(line: str, where: str, source: str, kb_base: _KbBase) -> _Direction:
    """A fio 2 direction line, "  read : io=65536KB, bw=38871KB/s, iops=9717, runt=  1686msec", in kb_base's units."""
    match = _FIO2_DIRECTION.fullmatch(line)
    if match is None:
        raise ToolOutputError(source, where, "expected fio 2's '<read|write> : io=<N>KB, bw=<N>KB/s, iops=<N>, "
                              f"runt=<N>msec'; found {line.strip()[:70]!r}: the line is cut or malformed")
    base, note = kb_base.get()
    prefixes = _FIO2_UNITS[base]
    milliseconds = int(match["msec"])
    if milliseconds == 0:
        raise ToolOutputError(source, where, "expected a run time of at least 1 msec; found runt=0msec")
    if float(match["io"]) == 0:
        raise ToolOutputError(source, where, f"expected the amount moved; found io={match['io']}{match['io_prefix']}B")
    io = int(match["io"]) if match["io"].isdigit() else float(match["io"])
    moved = Q_(io, prefixes[_FIO2_STEPS[match["io_prefix"]]] + "B")
    unit = prefixes[_FIO2_STEPS[match["bw_prefix"]]] + match["bw_unit"] + "/s"
    return _Direction(match["op"], int(where.split()[-1]), float(match["bw"]), unit, moved, milliseconds / 1000, note)


def _binary_rate(first: str, second: str, where: str, source: str) -> tuple[float, str]:
    """The bandwidth of "BW=<first> (<second>)" in binary units, as (value, unit)."""
    rates = []
    for text in (first, second):
        match = _RATE.fullmatch(text)
        if match is None:
            raise ToolOutputError(source, where, f"expected a bandwidth such as '179MiB/s'; found {text[:30]!r}")
        rates.append((float(match[1]), match[2]))
    binary = [(value, unit) for value, unit in rates if unit[1:2] == "i" or unit.startswith(("B/", "bit/"))]
    if not binary:
        raise ToolOutputError(source, where, f"expected one bandwidth in binary units (KiB/s, MiB/s ...); "
                              f"found {first!r} and {second!r}")
    return binary[0]


def _amount(text: str, where: str, source: str) -> Quantity:
    """The amount a direction moved, "5120MiB", as printed."""
    match = _AMOUNT.fullmatch(text)
    if match is None or float(match[1]) == 0:
        raise ToolOutputError(source, where, f"expected the amount moved, such as '5120MiB'; found {text[:30]!r}")
    number = int(match[1]) if match[1].isdigit() else float(match[1])
    return Q_(number, match[2])


def _invocation_runs(invocation: _Invocation, source: str) -> list[Run]:
    """The runs of one fio run's result blocks, leaving out the client's sum of all hosts."""
    return [run for block in invocation.blocks if block.name != _ALL_CLIENTS
            for run in _block_runs(invocation, block, source)]


def _block_runs(invocation: _Invocation, block: _Block, source: str) -> list[Run]:
    """The runs of one result block: its read and its write."""
    operations = {d.operation for d in block.directions}
    if not operations:
        if block.error:  # a job that failed before moving data
            return []
        raise ToolOutputError(source, f"line {block.line}", f"expected the read or write line of job "
                              f"{block.name!r} after its header; found none: the output is truncated")
    if operations == {"mixed"}:
        raise ToolOutputError(source, f"line {block.directions[0].line}", "expected separate 'read' and 'write' "
                              "lines; found 'mixed' (unified_rw_reporting sums reads and writes, and a run is one "
                              "or the other)")
    settings = _block_settings(invocation, block, source)
    origin = Origin(path=source, line=None, tool="fio", tool_version=invocation.version)
    tags = (("fio_error", str(block.error)),) if block.error else ()
    runs = []
    for direction in block.directions:
        if direction.operation not in _OPERATIONS:
            continue
        workload = Workload(
            operation=_OPERATIONS[direction.operation],
            transfer_size=_transfer_size(settings, direction.operation, block, source),
            nodes=1,
            ppn=block.jobs,
            queue_depth=settings.depth,
            access=Access.RANDOM if settings.rw.startswith("rand") else Access.SEQUENTIAL,
            direct=None,
            data_set=direction.moved,
        )
        runs.append(Run(
            label=f"{block.name} {direction.operation}", workload=workload, metric=Metric.BANDWIDTH,
            samples=(direction.bandwidth,), unit=direction.unit,
            origin=replace(origin, line=direction.line),
            tags=tags + direction.note, durations=(direction.seconds,),
        ))
    return runs


def _block_settings(invocation: _Invocation, block: _Block, source: str) -> _Settings:
    """The workload of a block from the description lines of its job (and, for a group report, its group)."""
    where = f"line {block.line}"
    if block.jobs < 1:
        raise ToolOutputError(source, where, "expected jobs=1 or more; found jobs=0")
    own = invocation.descriptions.get((block.name, block.group))
    if not own:
        raise ToolOutputError(source, where, f"expected the line '{block.name}: (g={block.group}): rw=..., bs=..., "
                              "iodepth=...' that fio prints before the run; found none: the start of the output is "
                              "missing")
    lines = own
    if block.jobs > 1:  # group_reporting: the block sums every job of the group
        lines = [entry for (_, group), entries in invocation.descriptions.items() if group == block.group
                 for entry in entries]
    described = {entry: _settings(*entry, source) for entry in lines}
    if len(set(described.values())) > 1:
        numbers = ", ".join(str(number) for number, _ in sorted(described))
        raise ToolOutputError(source, where, f"expected one workload for job {block.name!r}; found job "
                              f"descriptions that differ (lines {numbers}) for what this block reports together")
    return described[own[0]]


def _settings(number: int, rest: str, source: str) -> _Settings:
    """A description line's "rw=..., bs=..., ioengine=..., iodepth=N", read."""
    where = f"line {number}"
    if "bs(seq/rand)=" in rest:
        raise ToolOutputError(source, where, "expected block sizes per direction; found bs(seq/rand) (fio 2's "
                              "bs_is_seq_rand: sizes per sequential or random I/O, which a job may mix)")
    match = _SETTINGS.fullmatch(rest)
    if match is None:
        raise ToolOutputError(source, where, "expected 'rw=<mode>, bs=(R) <min>-<max>, (W) ..., ioengine=<engine>, "
                              f"iodepth=<N>'; found {rest[:70]!r}: the line is cut or malformed")
    if match["rw"] not in _RW_MODES:
        raise ToolOutputError(source, where, f"expected one of {', '.join(sorted(_RW_MODES))}; found rw={match['rw']}")
    if "bs_is_seq_rand" in match["bs"]:
        raise ToolOutputError(source, where, "expected block sizes per direction; found bs_is_seq_rand (sizes per "
                              "sequential or random I/O, which a job may mix)")
    fio2 = [_FIO2_BS.fullmatch(part) for part in match["bs"].split("/")]
    if len(fio2) == 3 and all(fio2):  # fio 2: "4K-4K/4K-4K/4K-4K", K = 1024 whatever kb_base is (fio_uint_to_kmg)
        sizes = tuple((Q_(int(m[1]) * 1024 ** _FIO2_STEPS[m[2]], "B"), Q_(int(m[3]) * 1024 ** _FIO2_STEPS[m[4]], "B"))
                      for m in fio2)
    else:
        sizes = tuple((_size(low, low_unit), _size(high, high_unit))
                      for low, low_unit, high, high_unit in _RANGE.findall(match["bs"]))
    if len(sizes) < 2 or any(s.magnitude == 0 for pair in sizes for s in pair):
        raise ToolOutputError(source, where, f"expected block sizes such as 'bs=(R) 4096B-4096B, (W) 4096B-4096B'; "
                              f"found bs={match['bs'][:60]!r}")
    depth = int(match["depth"])
    if depth < 1:
        raise ToolOutputError(source, where, "expected iodepth=1 or more; found iodepth=0")
    return _Settings(match["rw"], sizes, depth)


def _size(number: str, unit: str) -> Quantity:
    """A block size as printed ("64.0KiB"), in whole bytes where it is whole (65536 B), as fio's JSON reader gives it."""
    value = float(number) * _BYTES[unit]
    return Q_(int(value), "B") if value.is_integer() else Q_(float(number), unit)


def _transfer_size(settings: _Settings, operation: str, block: _Block, source: str) -> Quantity:
    low, high = settings.sizes[0 if operation == "read" else 1]
    if low != high:
        raise ToolOutputError(source, f"line {block.line}", f"expected one block size for the {operation}s of job "
                              f"{block.name!r}; found the range {low:~P} to {high:~P} (bsrange or bssplit), so the "
                              "transfer size varies from one I/O to the next")
    return low


def _no_results(text: str, errors: list[tuple[int, str]], source: str) -> ToolOutputError:
    """The error for a text with no job results, saying what the text is instead."""
    def meaningful():  # the lines that are neither blank nor comments, walked anew each time
        return ((n, line) for n, line in enumerate(iter_lines(text), start=1)
                if line.strip() and line.lstrip()[:1] not in "#;")

    first = next(meaningful(), None)
    if first and _JOB_FILE_SECTION.fullmatch(first[1]):
        return ToolOutputError(source, f"line {first[0]}", "expected fio's output; found a fio job file "
                               f"(section {first[1].strip()}), which says what to run, not what was measured")
    if first and all(_LOG_ROW.fullmatch(line) for _, line in meaningful()):
        return ToolOutputError(source, "line 1", "expected fio's output; found a fio log (write_bw_log, "
                               "write_iops_log or write_lat_log rows: time, value, direction, block size), "
                               "samples over time rather than the job's result")
    if '"fio version"' in text:
        return ToolOutputError(source, "line 1", "expected fio's normal output; found its JSON output "
                               "(--output-format=json), which the fio JSON reader reads")
    if errors:
        number, message = errors[0]
        return ToolOutputError(source, f"line {number}", "expected fio's job results ('<job>: (groupid=N, jobs=N): "
                               f"err=...'); found only fio's error messages, the first {message[:90]!r}: the run failed")
    found = beginning(first[1] if first else "")
    return ToolOutputError(source, "line 1", "expected fio's job results ('<job>: (groupid=N, jobs=N): err=...'); "
                           f"found none (the text starts with {found}): the output is truncated or the run failed")
