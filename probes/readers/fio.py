"""Read fio's JSON output (``--output-format=json``, fio 2.1.4 to 3.41) into bandwidth runs.

One :class:`~probes.core.run.Run` per job and direction, so fio results are assessed like any other
benchmark's; what the output does not say is refused, never guessed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, TYPE_CHECKING

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.readers.jsonfields import JSON_OPENING, check, field, number
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers.textlines import line_of

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["looks_like", "parse", "totals", "FORMAT"]

# What iobound read says it reads.
FORMAT = "fio JSON output (--output-format=json)"

# The JSON object starts at a line opening it (JSON_OPENING): fio may print error lines before it
# ("fio: pid=19192, err=42/file:io_u.c:2074, ..."), so the object need not start the text.
_WHOLE_NUMBER = Pattern(r"\s*([0-9]{1,20})\s*")
# A size as fio reads it, case-insensitive: "4096", "512b", "4k", "4kb", "1m", "4KiB".
# fio's parse.c reads "4ki" as 4 * kb_base but its HOWTO gives it the opposite base, as
# "4kib" has: such a size is refused, not guessed.
_SIZE = Pattern(r"\s*([0-9]{1,20})(?:([kmgtp])(ib|b)?|b)?\s*", re.IGNORECASE)
_PREFIXES = "kmgtp"
_RW_MODES = frozenset(
    {"read", "write", "trim", "rw", "readwrite", "randread", "randwrite", "randtrim", "randrw",
     "trimwrite", "randtrimwrite"}
)
# fio's defaults for options a job does not list (fio HOWTO: bs, kb_base).
_DEFAULT_BS = 4096
_DEFAULT_KB_BASE = 1024
# The entry fio's client adds after the per-host ones: their sum, listing no job options.
_ALL_CLIENTS = "All clients"


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like fio's JSON output: a cheap sniff, not a validation."""
    return '"fio version"' in text and ('"jobs"' in text or '"client_stats"' in text)


def parse(text: str, *, source: str) -> list[Run]:
    """One bandwidth run per fio job (or client entry) and direction that moved data.

    Parameters
    ----------
    text : what fio printed with ``--output-format=json``; lines before the JSON object
        (fio's error messages) are skipped.
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled ``"<jobname> <read|write>"`` (``" (<hostname>)"`` added for client/server
        runs; repeated names get ``" #1"``, ``" #2"``...), metric bandwidth in B/s, one sample each.

    Raises
    ------
    ToolOutputError
        If the text is not fio's JSON output, is malformed or truncated (the error names the
        line and column, or the field such as ``jobs[2].read``), lists no jobs or no job that
        moved data, or leaves the workload unknown: no options at all (fio 2.1.4 does not list
        them), a range or mix of block sizes, or reads and writes summed as ``mixed``.

    Notes
    -----
    - Bandwidth is ``bw_bytes`` (B/s) where fio writes it; older fio (2.x, early 3.x such as
      3.1) only has ``bw`` in KiB/s, truncated to a whole number, read as ``bw * 1024``.
    - A job's ``job options`` are merged over the top-level ``global options`` (a dict, or in
      client/server runs of recent fio a list with one dict per server, matched by hostname
      and port). fio lists only the options given, and not always all of them: fio 2.17
      leaves out ``time_based``, and fio around 3.0 a ``numjobs`` set in the global section.
      Options fio does not list take its defaults: ``rw=read``, ``bs=4096``, ``iodepth=1``,
      ``numjobs=1``, buffered I/O, ``kb_base=1024``.
    - Sizes follow fio: with the default ``kb_base=1024``, ``4k`` is 4096 B but ``4KiB``
      is 4000 B (fio's compatibility rule); ``kb_base=1000`` swaps them. ``bs=4k,64k``
      gives reads 4 KiB and writes 64 KiB.
    - Processes per node are ``numjobs`` when ``group_reporting`` sums the clones into one
      entry, else 1 (each clone is its own entry). fio's JSON does not list a ``--group_reporting``
      given on its command line: where it lists none, a job of ``numjobs`` clones with one entry
      for its name and group was summed. fio also sums other jobs of the same group into that
      entry; the output does not say how many.
    - The client's ``"All clients"`` entry is the sum of the host entries and is left out.
    - A job that ended with an error keeps its runs, tagged ``("fio_error", "<errno>")``.
    - ``loops`` above 1 tags the runs ``("loops", "<n>")``: one result sums the passes; ``end_fsync`` or
      ``fsync_on_close`` tags the write ``("fsync", "fio end_fsync=1")``.
    - fio writes one figure three times (``bw``, ``bw_bytes``, ``io_bytes`` / ``runtime``); where
      they disagree beyond fio's own truncations, the run is tagged ``("inconsistent", ...)`` with
      both figures (see :func:`_disagreement`): a hand-edited or mangled output.

    Examples
    --------
    >>> text = '''{"fio version": "fio-3.36", "jobs": [{"jobname": "seq",
    ...   "job options": {"rw": "read", "bs": "1m", "direct": "1"},
    ...   "read": {"io_bytes": 1073741824, "bw_bytes": 524288000},
    ...   "write": {"io_bytes": 0, "bw_bytes": 0}}]}'''
    >>> [(run.label, run.samples, run.workload.describe()) for run in parse(text, source="x.json")]
    [('seq read', (524288000.0,), 'read 1 MiB seq direct, 1 node x 1 ppn')]
    """
    document = _decode(text, source)
    version = field(document, "fio version", str, "", source)
    entries = []
    for key in ("jobs", "client_stats"):
        if key in document:
            for index, entry in enumerate(field(document, key, list, "", source)):
                where = f"{key}[{index}]"
                entries.append((where, check(entry, dict, where, source), key == "client_stats"))
    if not entries:
        raise ToolOutputError(source, "jobs", "expected at least one job in 'jobs' or 'client_stats'; "
                              "found no jobs")
    origin = Origin(path=source, line=None, tool="fio", tool_version=version)
    known: dict[tuple, _Settings] = {}
    named = Counter(_clone_key(entry) for _, entry, client in entries if not client)
    runs = [run for where, entry, client in entries
            for run in _entry_runs(document, entry, where, client, origin, known, named[_clone_key(entry)] == 1)]
    if not runs:
        raise ToolOutputError(source, "jobs", "expected a job that read or wrote data; found none")
    return distinct_labels(runs)


def _clone_key(entry: dict) -> tuple:
    """What fio's clones of one job share in its JSON: the job's name and group (None where a value is not one)."""
    name, group = entry.get("jobname"), entry.get("groupid")
    return (name if isinstance(name, str) else None, group if isinstance(group, int) else None)


def _decode(text: str, source: str) -> dict:
    """The one JSON object in ``text``, skipping the lines fio printed before it."""
    opening = JSON_OPENING.search(text)
    if opening is None:
        first = text.strip().split("\n", 1)[0][:60]
        found = f"{first!r} and no line starting with '{{'" if first else "an empty text"
        raise ToolOutputError(source, "line 1",
                              f"expected fio's JSON output (a line starting with '{{'); found {found}")
    line = line_of(text, opening.start())
    try:
        document, end = json.JSONDecoder().raw_decode(text, opening.end() - 1)
    except json.JSONDecodeError as exc:
        raise ToolOutputError(
            source, f"line {exc.lineno}, column {exc.colno}",
            f"expected valid JSON, found a syntax error ({exc.msg}): the output is malformed or "
            "truncated",
        ) from None
    except (ValueError, RecursionError) as exc:  # a number too long for int(), or nesting too deep
        raise ToolOutputError(source, f"line {line}",
                              f"expected fio's JSON, found a value Python cannot read ({exc})") from None
    second = JSON_OPENING.search(text, end)
    if second is not None:
        raise ToolOutputError(
            source, f"line {text.count(chr(10), 0, second.start()) + 1}",
            "expected one JSON object; found a second one (fio --status-interval prints one per "
            "interval): keep only the last",
        )
    return document


def _entry_runs(document: dict, entry: dict, where: str, client: bool, origin: Origin,
                known: dict[tuple, _Settings] | None = None, alone: bool = False) -> list[Run]:
    """The runs of one entry of ``jobs`` or ``client_stats``: its read and its write, if they moved data.

    ``known`` holds what the sets of options met so far in the file say (see :class:`_Settings`); ``alone``, that no
    other entry has its job name and group (its clones, if any, were summed into it).
    """
    source = origin.path
    name = field(entry, "jobname", str, where, source)
    if client and name == _ALL_CLIENTS:
        return []
    host = f" ({field(entry, 'hostname', str, where, source)})" if client else ""
    # Options already met in this file were checked and read then: only new ones are read (see _Settings).
    key = _settings_key(document, entry)
    key = None if key is None else (*key, alone)
    settings = None if known is None or key is None else known.get(key)
    options = None if settings is not None else _options(document, entry, where, source)
    if options == {}:
        raise ToolOutputError(
            source, f"{where}.job options",
            f"expected the options of job {name!r} (block size, queue depth, access pattern); found "
            f"none in this {origin.tool_version} output, and iobound does not guess them",
        )
    if "mixed" in entry and "read" not in entry:
        raise ToolOutputError(
            source, f"{where}.mixed",
            "expected separate 'read' and 'write' sections; found 'mixed' (unified_rw_reporting "
            "sums reads and writes, and a run is one or the other)",
        )
    for spread in ("bsrange", "bssplit"):
        if options is not None and spread in options:
            raise ToolOutputError(
                source, options[spread][1],
                f"expected one block size per direction; found {spread}={options[spread][0]!r}, so "
                "the transfer size varies from one I/O to the next",
            )
    error = field(entry, "error", int, where, source) if "error" in entry else 0
    if settings is None:
        settings = _Settings(options, source, alone)
        if known is not None and key is not None:
            known[key] = settings
    runs = []
    for index, operation in enumerate((Operation.READ, Operation.WRITE)):
        path = f"{where}.{operation.value}"
        stats = field(entry, operation.value, dict, where, source)
        moved, runtime, bandwidth = _moved(stats, path, source)
        if moved == 0 and bandwidth == 0:
            continue
        tags = (("fio_error", str(error)),) if error else ()
        disagreement = _disagreement(stats)
        tags += (("inconsistent", disagreement),) if disagreement else ()
        tags += settings.tags[operation]
        workload = settings.workloads.get(index)
        if workload is None:  # the first job of these options to move data this way
            options = options or _options(document, entry, where, source)
            workload = settings.workloads[index] = settings.workload(operation, index, options, source)
        runs.append(Run(
            label=f"{name} {operation.value}{host}", workload=workload, metric=Metric.BANDWIDTH,
            samples=(bandwidth,), unit="B/s", origin=origin,
            tags=tags, durations=(runtime,) if runtime > 0 else (),
        ))
    return runs


class _Settings:
    """What one set of job options says of a job's workloads, worked out once per file for all that list it.

    A file of thousands of jobs (fio's numjobs clones, or the same job on many files) repeats one set of
    options: reading them anew for each took a third of the time of reading such a file. Each direction's
    workload is made at the first job that moves data that way, from that job's options, so an error
    names the job, as when each job's options were read for itself. Options that were refused stop the
    file at their first job, so a set met again was read without error.
    """

    def __init__(self, options: dict[str, tuple[Any, str]], source: str, alone: bool = False):
        self.access = _access(options, source)
        self.kb_base = _kb_base(options, source)
        self.queue_depth = _count(options, "iodepth", source)
        grouped = _flag(options, "group_reporting", source)
        if grouped is None:  # fio's JSON leaves out a --group_reporting given on its command line: clones summed
            grouped = alone  # into one entry are the sign of it
        self.ppn = _count(options, "numjobs", source) if grouped else 1
        direct = _flag(options, "direct", source)
        if direct is None:  # buffered=0 is direct=1; fio's default is buffered I/O
            direct = _flag(options, "buffered", source) is False
        self.direct = direct
        self.data_set = _data_set(options, self.ppn, self.kb_base, source)
        # as tags: the passes over the data set the result sums (loops), and an fsync before the writes' clock stops
        fsync = next((f"fio {name}=1" for name in ("end_fsync", "fsync_on_close") if _flag(options, name, source)), "")
        loops = _count(options, "loops", source)
        passes = (("loops", str(loops)),) if loops > 1 else ()
        self.tags = {Operation.WRITE: ((("fsync", fsync),) if fsync else ()) + passes, Operation.READ: passes}
        self.workloads: dict[int, Workload] = {}  # by direction, as made

    def workload(self, operation: Operation, index: int, options: dict[str, tuple[Any, str]], source: str) -> Workload:
        """The workload of direction ``index`` (0 read, 1 write) of ``bs=read,write,trim``."""
        return Workload(
            operation=operation,
            transfer_size=Q_(_block_size(options, index, self.kb_base, source), "B"),
            nodes=1,
            ppn=self.ppn,
            queue_depth=self.queue_depth,
            access=self.access,
            direct=self.direct,
            data_set=self.data_set,
        )


def _settings_key(document: dict, entry: dict) -> tuple | None:
    """What a job's options are made of, as a key: the global options (one object for the whole file), the host
    and port whose global options a client/server entry takes, and the job's own options; None if unhashable."""
    shared, own = document.get("global options"), entry.get("job options")
    host = (entry.get("hostname"), entry.get("port")) if isinstance(shared, list) else None
    key = (id(shared), host, tuple(own.items()) if isinstance(own, dict) else own)
    try:
        hash(key)
    except TypeError:  # a list or object among the values: read them as they come
        return None
    return key


def _moved(stats: dict, path: str, source: str) -> tuple[float, float, float]:
    """One direction's bytes, seconds and bytes per second, in whichever fields this fio version writes."""
    # fio 3 writes io_bytes in bytes beside io_kbytes; fio 2.x wrote io_bytes in KiB, and no io_kbytes.
    moved = _number(stats, "io_bytes", path, source) * (1 if "io_kbytes" in stats else 1024)
    runtime = _number(stats, "runtime", path, source) / 1000 if "runtime" in stats else 0.0
    if "bw_bytes" in stats:
        bandwidth = _number(stats, "bw_bytes", path, source)
    elif runtime > 0:  # fio 2.x and 3.1 write bw in whole KiB/s only: the bytes over the time are exact
        bandwidth = moved / runtime
    else:
        bandwidth = 1024 * _number(stats, "bw", path, source)
    return moved, runtime, bandwidth


def _disagreement(stats: dict) -> str | None:
    """Where one direction's ``bw``, ``bw_bytes`` and ``io_bytes`` / ``runtime`` disagree beyond fio's rounding, both
    figures (for the tag ``inconsistent``); None where they agree or fewer than two are written.

    fio computes them from the same counters in every release (stat.c): ``bw_bytes`` =
    floor(1000 x io_bytes / runtime in ms), ``bw`` = floor(bw_bytes / 1024) in KiB/s, and fio 2.x
    writes ``io_bytes`` in KiB, truncated. So a real output agrees to within those truncations:
    a byte per second, a KiB/s, and 1023 bytes of io_bytes in fio 2. (A field that is no number
    here is refused where the reader uses it, or left out of the comparison.)
    """
    figures = []  # (name, bytes per second as printed, the lowest and highest rate fio could have computed it from)
    runtime, moved = stats.get("runtime"), stats.get("io_bytes")
    if _plain(runtime) and _plain(moved) and runtime > 0:
        kib = "io_kbytes" not in stats  # fio 2.x: io_bytes in KiB, truncated
        low = 1000 * moved * (1024 if kib else 1) / runtime
        figures.append(("io_bytes / runtime", low, low, low + (1000 * 1023 / runtime if kib else 0)))
    value = stats.get("bw_bytes")
    if _plain(value):
        figures.append(("bw_bytes", value, value, value + 1))  # floor() of the rate
    value = stats.get("bw")
    if _plain(value):
        figures.append(("bw", 1024 * value, 1024 * value, 1024 * value + 1025))  # floor(bw_bytes / 1024), itself a floor
    for (name, shown, low, high), (other, other_shown, other_low, other_high) in zip(figures, figures[1:]):
        slack = 1e-9 * max(high, other_high)
        if low > other_high + slack or other_low > high + slack:
            return (f"{name} {shown / 2**20:,.1f} MiB/s vs {other} {other_shown / 2**20:,.1f} MiB/s "
                    f"({shown:,.0f} and {other_shown:,.0f} B/s)")
    return None


def _plain(value: Any) -> bool:
    """A JSON number fio could have written: not a bool, finite, from 0 to 2**64."""
    return type(value) in (int, float) and 0 <= value < 2.0**64


def totals(text: str, *, source: str) -> tuple[float, float, float]:
    """Operations and bytes per second of the first job, reads and writes summed, and fio's own context switches per
    second of the run (``ctx`` over the longer direction's runtime; 0 where fio did not count them): what a probe
    repetition keeps.

    :mod:`probes.measure.fio` hands its output here, as a user's file goes through :func:`parse`.

    Raises
    ------
    ToolOutputError
        If the text is not fio's JSON output or its first job lacks a read or write section.
    """
    document = _decode(text, source)
    job = check(next(iter(field(document, "jobs", list, "", source)), None), dict, "jobs[0]", source)
    iops = bandwidth = runtime = 0.0
    for direction in ("read", "write"):
        path = f"jobs[0].{direction}"
        stats = field(job, direction, dict, "jobs[0]", source)
        iops += _number(stats, "iops", path, source)
        bandwidth += _moved(stats, path, source)[2]
        runtime = max(runtime, _number(stats, "runtime", path, source) / 1000)
    switches = _number(job, "ctx", "jobs[0]", source) if "ctx" in job else 0.0
    return iops, bandwidth, switches / runtime if runtime > 0 else 0.0


def _options(document: dict, entry: dict, where: str, source: str) -> dict[str, tuple[Any, str]]:
    """The job's options over the global ones: name -> (value, where it was read)."""
    sections = []
    if "global options" in document:
        shared = document["global options"]
        if isinstance(shared, list):  # fio >= 3.39 with several servers: one dict per server
            for index, server in enumerate(shared):
                server = check(server, dict, f"global options[{index}]", source)
                if all(server.get(key) == entry.get(key) for key in ("hostname", "port")):
                    own = {k: v for k, v in server.items() if k not in ("hostname", "port")}
                    sections.append((f"global options[{index}]", own))
        else:
            sections.append(("global options", check(shared, dict, "global options", source)))
    if "job options" in entry:
        path = f"{where}.job options"
        sections.append((path, check(entry["job options"], dict, path, source)))
    return {name: (value, f"{path}.{name}") for path, section in sections
            for name, value in section.items()}


def _option(options: dict, name: str, source: str) -> tuple[str, str] | None:
    if name not in options:
        return None
    value, where = options[name]
    return check(value, str, where, source), where


def _access(options: dict, source: str) -> Access:
    value, where = _option(options, "rw", source) or ("read", "")
    mode = value.split(":", 1)[0].strip()  # "randread:8" sets an offset increment
    if mode not in _RW_MODES:
        raise ToolOutputError(source, where,
                              f"expected one of {', '.join(sorted(_RW_MODES))}; found {value!r}")
    return Access.RANDOM if mode.startswith("rand") else Access.SEQUENTIAL


def _kb_base(options: dict, source: str) -> int:
    value, where = _option(options, "kb_base", source) or (str(_DEFAULT_KB_BASE), "")
    if value.strip() not in ("1000", "1024"):
        raise ToolOutputError(source, where, f"expected 1000 or 1024; found {value!r}")
    return int(value)


def _count(options: dict, name: str, source: str) -> int:
    value, where = _option(options, name, source) or ("1", "")
    match = _WHOLE_NUMBER.fullmatch(value)
    if match is None or int(match[1]) < 1:
        raise ToolOutputError(source, where, f"expected a whole number of at least 1; found {value!r}")
    return int(match[1])


def _flag(options: dict, name: str, source: str) -> bool | None:
    got = _option(options, name, source)
    if got is None:
        return None
    value, where = got
    if not value.strip():  # a flag given without a value, such as --group_reporting
        return True
    match = _WHOLE_NUMBER.fullmatch(value)
    if match is None:
        raise ToolOutputError(source, where, f"expected 0 or 1; found {value!r}")
    return int(match[1]) != 0


def _block_size(options: dict, index: int, kb_base: int, source: str) -> int:
    """Bytes per I/O in direction ``index`` (0 read, 1 write) of ``bs=read,write,trim``."""
    got = _option(options, "bs", source)
    if got is None:
        return _DEFAULT_BS
    value, where = got
    # fio drops one trailing comma; a later direction without a value takes the last one given.
    parts = value.removesuffix(",").split(",")
    text = parts[min(index, len(parts) - 1)]
    if not text.strip():  # ",64k": the read size keeps fio's default
        return _DEFAULT_BS
    size = _bytes(text, kb_base)
    if size is None:
        raise ToolOutputError(source, where,
                              f"expected a block size such as '4k' or '1m'; found {value!r}")
    return size


def _data_set(options: dict, jobs: int, kb_base: int, source: str) -> Quantity | None:
    """The bytes the job's files hold (``size``; times the jobs it reports for, unless they share a ``filename``)."""
    got = _option(options, "size", source)
    size = _bytes(got[0], kb_base) if got else None
    if size is None:  # not given, or a percentage of the device
        return None
    return Q_(size * (1 if "filename" in options else jobs), "B")


def _bytes(text: str, kb_base: int) -> int | None:
    """A size as fio reads it, or None if it is not one (or is zero)."""
    match = _SIZE.fullmatch(text)
    if match is None or int(match[1]) == 0:
        return None
    number, prefix, suffix = match.groups()
    if prefix is None:
        return int(number)
    # With kb_base=1024, "k" is 1024 and "KiB" 1000; kb_base=1000 swaps them (fio's parse.c).
    base = {1000: 1024, 1024: 1000}[kb_base] if (suffix or "").lower() == "ib" else kb_base
    return int(number) * base ** (_PREFIXES.index(prefix.lower()) + 1)


def _number(obj: dict, key: str, path: str, source: str) -> float:
    # fio writes 64-bit counters: anything larger (or inf, NaN, negative) is not its output.
    return number(field(obj, key, (int, float), path, source), f"{path}.{key}", source,
                  expected="a number from 0 to 2**64", below=2.0**64)
