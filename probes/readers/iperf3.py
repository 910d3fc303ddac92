"""Read iperf3's saved results (``-J`` JSON of 3.x, and its text output) into bandwidth runs, one per test direction.

:mod:`probes.measure.iperf3` runs iperf3 itself and keeps the receiver's total; this reader takes outputs
made elsewhere and keeps every measured interval as a sample, so their spread shows.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.readers.jsonfields import check, number as json_number
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Metric
from probes.readers.textlines import beginning, line_of

__all__ = ["looks_like", "parse", "received", "INTERVAL", "INTERVAL_LIKE", "RATE_UNITS", "UDP_RECEIVED", "Interval", "interval",
           "rate_in", "hosts_label", "interval_style", "against_total", "FORMAT"]

# What iobound read says it reads.
FORMAT = "iperf3 output (-J JSON or text)"

# Units. iperf3's JSON "bits_per_second" is bits per second with no prefix (SI: "bit/s").
# Its text prints figures with unit_snprintf (esnet/iperf src/units.c): rates in bits take
# 1000-based prefixes ("Mbits/sec" = 10^6 bit/s), byte counts 1024-based ones ("MBytes" =
# 2^20 B; with -f M the rate is "MBytes/sec" = MiB/s). The corpus agrees:
# freekds_iperf3_text_udp_wan_1Mbps.txt line 8, "4.00-5.00 sec 128 KBytes 1.05 Mbits/sec 16":
# 16 datagrams of 8192 B are 128 x 1024 B and 1,048,576 bit/s (an 8000 B datagram with
# kB = 1000 would also give 128 KBytes but 1.02 Mbits/sec); freekds_iperf3_text_udp_lan.txt
# line 4, 953 datagrams = 7,806,976 B print "7.45 MBytes" (/ 2^20; / 10^6 would be 7.81);
# cloudpilot_iperf3_text_tcp_omit3_aws.txt line 8, "1.00-2.00 sec 3.75 MBytes 31.5 Mbits/sec":
# 3.75 x 2^20 x 8 bit = 31.46 Mbit (3.75 x 10^6 x 8 would be 30.0). iperf 2 prints the same way.
BIT_RATE = "bit/s"
# Rate columns as printed by iperf 2 and 3: the pint unit, and its size in bytes or bits.
RATE_UNITS = {
    "bits/sec": ("bit/s", "bit", 1), "Kbits/sec": ("kbit/s", "bit", 10**3), "Mbits/sec": ("Mbit/s", "bit", 10**6),
    "Gbits/sec": ("Gbit/s", "bit", 10**9), "Tbits/sec": ("Tbit/s", "bit", 10**12),
    "Bytes/sec": ("B/s", "byte", 1), "KBytes/sec": ("KiB/s", "byte", 2**10), "MBytes/sec": ("MiB/s", "byte", 2**20),
    "GBytes/sec": ("GiB/s", "byte", 2**30), "TBytes/sec": ("TiB/s", "byte", 2**40),
}
# Transfer columns ("3.75 MBytes"): 1024-based, as the rates in bytes are.
BYTE_UNITS = {"Bytes": 1, "KBytes": 2**10, "MBytes": 2**20, "GBytes": 2**30, "TBytes": 2**40}
_NUMBER = r"\d+(?:\.\d+)?"
# One interval or summary line of iperf 2 or 3: "[  5]   0.00-1.00   sec  3.75 MBytes  31.4 Mbits/sec ...",
# "[SUM][TX-C] ...", "[  3]  0.0- 1.0 sec  30.4 MBytes   255 Mbits/sec"; what follows the rate is ``rest``.
INTERVAL = re.compile(
    r"\[\s*(?P<id>\d+|SUM(?:-\d+)?)\](?:\[(?P<role>[TR]X-[CS])\])?\s+(?P<start>" + _NUMBER + r")\s*-\s*(?P<end>"
    + _NUMBER + r")\s+sec\s+(?P<transfer>" + _NUMBER + r")\s+(?P<transfer_unit>[KMGT]?Bytes)\s+(?P<rate>" + _NUMBER
    + r")\s+(?P<unit>[KMGT]?(?:bits|Bytes)/sec)(?P<rest>.*)$")
# A line that starts like an interval line: if INTERVAL does not match it, it is malformed, not something else.
INTERVAL_LIKE = re.compile(r"\[\s*(?:\d+|SUM)[^\]]*\].*\bsec\b.*Bytes")

_JSON_OPENING = re.compile(r"^[ \t\ufeff]*\{", re.MULTILINE)
_CONNECTING = re.compile(r"^Connecting to host (\S+), port \d+", re.MULTILINE)
_LISTENING = re.compile(r"^Server listening on \d+", re.MULTILINE)
_CONNECTED = re.compile(r"\[\s*\d+\] local (\S+) port \d+ connected to (\S+) port \d+")
_ACCEPTED = re.compile(r"^Accepted connection from \S+, port \d+")
_REVERSE = re.compile(r"^Reverse mode, remote host \S+ is sending")
_STARTING = re.compile(r"^Starting Test: protocol: (\w+), (\d+) streams")
_HEADER = re.compile(r"^\[ ID\](?:\[Role\])? Interval\s+Transfer\s+(?:Bitrate|Bandwidth)(.*)$", re.MULTILINE)
# How iperf3 and iperf 2 print an interval's times, which tells their texts apart where no other line does
# (an output cut at the top): iperf3 "%6.2f-%-6.2f sec", two decimals and the end padded to 6 characters
# ("0.00-1.00   sec", "9.00-10.00  sec"); iperf 2.0.5 "%4.1f-%4.1f sec" (" 0.0- 1.0 sec"), 2.0.10 on
# "%4.2f-%4.2f sec" and, built with fast sampling (2.1's default), "%4.4f-%4.4f sec" ("0.0000-0.5000
# sec"): one space before "sec" always (iperf2 source, include/headers.h IPERFTimeFrmt).
# (Searched from the "]" on, a literal the search skips to quickly, then checked to start its line: a
# pattern anchored at every line's start costs a second on a 50 MB output of another tool.)
_TIMES = re.compile(r"\](?:\[[TR]X-[CS]\])?\s+\d+\.(\d+)\s*-\s*(\d+)\.(\d+)( +)sec\s")
_LINE_ID = re.compile(r"\[\s*(?:\d+|SUM(?:-\d+)?)")
_VERSION = re.compile(r"^iperf (3\.\S+)")
_FAILURE = re.compile(r"^iperf3: ((?:error|interrupt) - .*?)\s*$")
_SIDE = re.compile(r"\s(sender|receiver)\s*$")
_RETRANSMITS = re.compile(r"^\s+(\d+)\s")
# A UDP receiver's cells after the rate: "0.018 ms  1/181 (0.55%)" (iperf 2 pads: "1/  181").
UDP_RECEIVED = re.compile(r"(" + _NUMBER + r") ms\s+(\d+)/\s*(\d+)\s+\(([^)%]*)%\)")


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like iperf3's JSON (``-J``) or text output: a cheap sniff, not a validation.

    Examples
    --------
    >>> looks_like("Connecting to host 10.0.0.2, port 5201\\n")
    True
    >>> looks_like('{"start": {"connecting_to": {}, "test_start": {}}, "intervals": [], "end": {}}')
    True
    >>> looks_like("Client connecting to 10.0.0.2, TCP port 5001\\n")
    False
    """
    # A run that never connected has no test_start, but its "connected" list is there (empty).
    if '"intervals"' in text and ('"test_start"' in text or '"connected"' in text) and _JSON_OPENING.search(text):
        return True
    return _text_marker(text) is not None


def _text_marker(text: str) -> int | None:
    """Where the first line only iperf3's text prints starts, if any; in a text cut before those lines (it starts
    at the interval header or the intervals), the first header or interval line, if they are iperf3's."""
    found = [m.start() for m in (_CONNECTING.search(text), _LISTENING.search(text), _CONNECTED.search(text)) if m]
    if found:
        return min(found)
    if interval_style(text) != "iperf3":
        return None
    header = _HEADER.search(text)
    first = next(_interval_times(text))[0]
    return first if header is None else min(header.start(), first)


def _interval_times(text: str):
    """Each interval line's start and the match of its times (fractional digits, the end's whole part and its
    fractional digits, the blanks before "sec")."""
    for match in _TIMES.finditer(text):
        line = text.rfind("\n", 0, match.start()) + 1
        if _LINE_ID.fullmatch(text, line, match.start()):
            yield line, match


def interval_style(text: str) -> str | None:
    """``"iperf3"`` or ``"iperf2"``: whose interval lines ``text`` holds, told by how they print times; None if none.

    A line whose end is 100 s or more looks the same from both; the first line that tells decides.

    >>> interval_style("[  5]   0.00-1.00   sec   304 MBytes  2.54 Gbits/sec\\n")
    'iperf3'
    >>> interval_style("[  3]  0.0- 1.0 sec  30.4 MBytes   255 Mbits/sec\\n")
    'iperf2'
    """
    for _, match in _interval_times(text):
        start, whole, end, spaces = len(match[1]), match[2], len(match[3]), len(match[4])
        if start != end:
            continue
        if start in (1, 4):
            return "iperf2"
        if start == 2 and len(whole) <= 2:
            return "iperf3" if spaces >= 2 else "iperf2"
    return None


def parse(text: str, *, source: str) -> list[Run]:
    """One bandwidth run per iperf3 test and direction; samples are the intervals the test measured.

    Parameters
    ----------
    text : what iperf3 printed: its ``-J`` JSON (several objects one after another are read
        in turn), or its text output (several tests, client or server side).
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled like ``"iperf3 TCP 4 streams 10.0.0.1 -> 10.0.0.2"`` (the protocol is left out
        where the text does not show it, ``<->`` where it does not show who sent). JSON runs
        are in bit/s; text runs in the rate unit the text printed (``Mbits/sec`` is
        ``Mbit/s``). One sample per interval, omitted (``-O``) intervals left out, durations the
        intervals' seconds. With ``--bidir`` each direction is a run.

    Raises
    ------
    ToolOutputError
        If the text is not iperf3's output, is invalid JSON, has malformed interval lines, or
        holds a test with neither intervals nor a summary (iperf3's error is quoted if it printed
        one: a ``-J`` document of a run that never connected is "iperf3 JSON with no measurement",
        with its ``error``).

    Notes
    -----
    - Tags: ``protocol``, ``streams``, ``reverse``, the ``sum_sent`` and ``sum_received`` totals,
      TCP ``retransmits``, UDP ``jitter_ms``, ``lost_packets`` and ``lost_percent`` (as the receiver
      reported them), ``omitted`` intervals and iperf3's ``error`` (an interrupted test keeps the
      intervals it measured). A test that printed no intervals (``-i 0``) gives one sample, its
      receiver's total, and says so in the tag ``intervals``.
    - A text cut before its first lines (it starts at the interval header or the intervals) is
      read where its interval lines are iperf3's (see :func:`interval_style`), and tagged
      ``connection``: the hosts are not shown.
    - Where the intervals' bytes do not add up to the total of the side that printed them
      (text: the Transfer column, within its rounding; JSON: the byte counts), the run is tagged
      ``inconsistent`` with both figures (see :func:`against_total`).
    """
    opening = _JSON_OPENING.search(text)
    marker = _text_marker(text)
    if opening is not None and (marker is None or opening.start() < marker):
        return distinct_labels(_parse_json(text, opening.start(), source))
    if marker is None:
        found = beginning(text)
        raise ToolOutputError(source, "line 1", "expected iperf3's output (its -J JSON, or text with a line "
                              f"'Connecting to host ...' or '[  5] local ... connected to ...'); found {found}")
    return distinct_labels(_parse_text(text, source))


def received(text: str, *, source: str) -> float:
    """The receiver's throughput in bit/s (``end.sum_received``) of one ``iperf3 -J`` test: the figure a probe keeps.

    :mod:`probes.measure.iperf3` hands its output here; the receiver's total counts what
    arrived, where the intervals of :func:`parse` are the client's view.

    Raises
    ------
    ToolOutputError
        If the text is not one iperf3 JSON test, reports an error (``"error"``), or received nothing.
    """
    opening = _JSON_OPENING.search(text)
    if opening is None:
        raise ToolOutputError(source, "line 1", f"expected iperf3's -J JSON; found {beginning(text)}")
    documents = _documents(text, opening.start(), source)
    if len(documents) != 1:
        raise ToolOutputError(source, f"line {documents[1][1]}", "expected the JSON of one test; found another")
    fields = _Fields(source, "")
    document = check(documents[0][0], dict, "the JSON", source)
    if isinstance(document.get("error"), str):
        raise ToolOutputError(source, "error", f"iperf3 reported: {_one_line(document['error'])}")
    total = fields.object(fields.object(document, "end", "end"), "sum_received", "end.sum_received")
    rate = fields.number(total, "bits_per_second", "end.sum_received.bits_per_second")
    if rate == 0:
        raise ToolOutputError(source, "end.sum_received.bits_per_second", "expected a throughput; nothing was received")
    return rate


# ---------------------------------------------------------------------------------------------
# Shared with probes.readers.iperf2: interval lines and their rates


@dataclass(frozen=True)
class Interval:
    """One interval or summary line of iperf 2 or 3, with its numbers still as printed."""

    line: int
    id: str
    role: str
    start: Decimal
    end: Decimal
    rate: str
    unit: str
    rest: str
    transfer: str = "0"
    transfer_unit: str = "Bytes"

    @property
    def seconds(self) -> float:
        return float(self.end - self.start)

    def shown(self) -> str:
        """The figure as a tag shows it: ``"30.4 Mbit/s over 0.00-10.00 s"``."""
        return f"{self.rate} {RATE_UNITS[self.unit][0]} over {self.start}-{self.end} s"

    @property
    def moved(self) -> Decimal:
        """The bytes of the Transfer column, as printed."""
        return Decimal(self.transfer) * BYTE_UNITS[self.transfer_unit]

    @property
    def moved_rounding(self) -> Decimal:
        """How far the printed Transfer may be from the bytes counted: half its last digit (iperf rounds to 3 or 4 figures)."""
        exponent = Decimal(self.transfer).as_tuple().exponent
        return Decimal(5).scaleb(exponent - 1) * BYTE_UNITS[self.transfer_unit]


def against_total(lines: list[Interval], total: Interval, what: str) -> str | None:
    """How the interval lines of a test disagree with its total line, beyond what printing explains; None if they agree.

    Both count the bytes one side moved: the intervals' Transfer column adds up to the total's,
    within half a last printed digit of each figure. Where the intervals leave part of the total's
    time uncovered (the last, partial interval is not always printed) the total may hold more,
    at most what that time carries at the highest rate an interval reached. Intervals reaching
    outside the total's time are not the same span: nothing is compared. ``what`` names the
    total ("the sender's total").

    Returns
    -------
    str or None
        ``"the intervals add up to 36.2 MBytes over 0.00-10.00 s; the sender's total says 44.5
        MBytes over 0.00-10.00 s"``, for the tag ``inconsistent``.
    """
    steps = {Decimal(1).scaleb(min(item.start.as_tuple().exponent, item.end.as_tuple().exponent, 0))
             for item in (*lines, total)}
    step = max(steps)  # the times' printed resolution: 0.01 s for iperf3, 0.1 s for iperf 2.0
    if not lines or any(item.start < total.start or item.end > total.end + step for item in lines):
        return None
    counted = sum((item.moved for item in lines), Decimal(0))
    rounding = sum((item.moved_rounding for item in lines), total.moved_rounding)
    covered = sum((item.end - item.start for item in lines), Decimal(0))
    uncovered = max(total.end - total.start - covered, Decimal(0)) + 2 * step
    peak = max((item.moved / (item.end - item.start) for item in lines if item.end > item.start), default=Decimal(0))
    low, high = counted - rounding, counted + rounding + peak * uncovered
    if low <= total.moved <= high:
        return None
    size = BYTE_UNITS[total.transfer_unit]
    figure = float(counted / size)
    if not math.isfinite(figure):
        return None
    return (f"the intervals add up to {figure:.3g} {total.transfer_unit} over {lines[0].start}-{lines[-1].end} s; "
            f"{what} says {total.transfer} {total.transfer_unit} over {total.start}-{total.end} s")


def interval(line: str, number: int, source: str) -> Interval | None:
    """The interval line ``line`` (line ``number``), None if it is none; a malformed one is refused."""
    match = INTERVAL.search(line)
    if match is None:
        if INTERVAL_LIKE.search(line):
            raise ToolOutputError(source, f"line {number}", "expected an interval line '[ ID] start-end sec "
                                  f"<transfer> <rate> <unit>/sec'; found {line.strip()[:80]!r}")
        return None
    start, end = Decimal(match["start"]), Decimal(match["end"])
    if end < start:
        raise ToolOutputError(source, f"line {number}", f"expected an interval that ends after it starts; found "
                              f"{match['start']}-{match['end']} sec")
    return Interval(number, match["id"], match["role"] or "", start, end, match["rate"], match["unit"], match["rest"],
                    match["transfer"], match["transfer_unit"])


def rate_in(item: Interval, unit: str, source: str) -> float:
    """The rate of ``item`` in ``unit`` (a key of RATE_UNITS), scaled exactly; bits and bytes never mix."""
    _, kind, size = RATE_UNITS[item.unit]
    _, wanted_kind, wanted_size = RATE_UNITS[unit]
    if kind != wanted_kind:
        raise ToolOutputError(source, f"line {item.line}", f"expected a rate in {wanted_kind}s per second like the "
                              f"lines before; found {item.rate} {item.unit}")
    value = float(Decimal(item.rate) * size / wanted_size)
    if not math.isfinite(value):
        raise ToolOutputError(source, f"line {item.line}", f"expected a finite rate; found {item.rate[:40]} {item.unit}")
    return value


# ---------------------------------------------------------------------------------------------
# JSON output (-J)


def _parse_json(text: str, start: int, source: str) -> list[Run]:
    documents = _documents(text, start, source)
    runs = []
    for document, line in documents:
        prefix = "" if len(documents) == 1 else f"object at line {line}: "
        runs.extend(_document_runs(document, line, prefix, source))
    return runs


def _documents(text: str, start: int, source: str) -> list[tuple[Any, int]]:
    """The JSON values one after another from ``start`` on, each with the line it starts at."""
    documents = []
    decoder = json.JSONDecoder()
    position = start
    while position < len(text):
        line = line_of(text, position)
        try:
            document, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise ToolOutputError(source, f"line {exc.lineno}", f"expected iperf3's JSON; found invalid JSON "
                                  f"({exc.msg}, column {exc.colno}): the output is cut or mangled") from None
        except RecursionError:
            raise ToolOutputError(source, f"line {line}", "expected iperf3's JSON; found arrays or objects "
                                  "nested too deep to read") from None
        documents.append((document, line))
        rest = text[position:].lstrip()
        if rest and not rest.startswith("{"):
            after = line_of(text, len(text) - len(rest))
            raise ToolOutputError(source, f"line {after}", f"expected another iperf3 JSON object or the end; "
                                  f"found {rest.splitlines()[0][:60]!r}")
        position = len(text) - len(rest)
    return documents


@dataclass
class _Fields:
    """Reads fields of one JSON object; errors name the path, prefixed for files of several objects."""

    source: str
    prefix: str

    def object(self, parent: dict, key: str, path: str, required: bool = True) -> dict:
        if key not in parent and not required:
            return {}
        return check(parent.get(key), dict, self.prefix + path, self.source)

    def number(self, parent: dict, key: str, path: str) -> float:
        return json_number(parent.get(key), self.prefix + path, self.source)


def _document_runs(document: Any, line: int, prefix: str, source: str) -> list[Run]:
    fields = _Fields(source, prefix)
    document = check(document, dict, prefix + "the JSON", source)
    if "start" not in document:
        found = ("--json-stream events, which iobound does not read" if "event" in document else
                 "an object with " + (", ".join(repr(k) for k in list(document)[:6]) or "nothing"))
        raise ToolOutputError(source, f"line {line}", f"expected iperf3's -J JSON, an object with 'start', "
                              f"'intervals' and 'end'; found {found}")
    start = fields.object(document, "start", "start")
    intervals = check(document.get("intervals", []), list, prefix + "intervals", source)
    end = fields.object(document, "end", "end", required=False)
    error = document.get("error")
    test = fields.object(start, "test_start", "start.test_start", required=False)
    version = start.get("version")
    version = version.split(" ", 1)[-1] if isinstance(version, str) else None
    origin = Origin(path=source, line=line, tool="iperf3", tool_version=version)
    directions = [("sum", "")] + ([("sum_bidir_reverse", "_bidir_reverse")] if test.get("bidir") else [])
    runs = []
    for key, suffix in directions:
        samples, durations, omitted = _json_samples(intervals, key, fields)
        tags = _json_tags(test, end, suffix, fields)
        if not samples:
            total = end.get("sum_received" + suffix)
            if not isinstance(total, dict) or "bits_per_second" not in total or "seconds" not in total:
                raise ToolOutputError(source, prefix + ("error" if isinstance(error, str) else "intervals"),
                                      _no_measurement(start, error))
            samples = [fields.number(total, "bits_per_second", f"end.sum_received{suffix}.bits_per_second")]
            durations = [fields.number(total, "seconds", f"end.sum_received{suffix}.seconds")]
            tags.append(("intervals", "none reported; the sample is the receiver's total over the whole test"))
        else:
            disagreement = _json_consistency(start, test, intervals, end, key, suffix)
            tags += [("inconsistent", disagreement)] if disagreement else []
        if omitted:
            tags.append(("omitted", f"{omitted} interval(s) of the -O warm-up left out"))
        if isinstance(error, str):
            tags.append(("error", _one_line(error)))
        runs.append(Run(label=_json_label(start, test, bool(suffix)), workload=None, metric=Metric.BANDWIDTH,
                        samples=tuple(samples), unit=BIT_RATE, origin=origin, tags=tuple(tags),
                        durations=tuple(durations)))
    return runs


def _one_line(text: str) -> str:
    """iperf3's own message on one line: its newlines and runs of blanks as single spaces."""
    return " ".join(text.split())


def _no_measurement(start: dict, error: Any) -> str:
    """Why an iperf3 JSON document holds no figure: iperf3's own error where it gave one (a run that never connected)."""
    never = ", no connection in start.connected" if start.get("connected") == [] else ""
    why = f"iperf3 reported: {_one_line(error)}" if isinstance(error, str) else "the test did not run or was cut"
    return f"expected a measurement; found iperf3 JSON with none (no interval, no receiver total{never}): {why}"


def _json_consistency(start: dict, test: dict, intervals: list, end: dict, key: str, suffix: str) -> str | None:
    """Where the intervals' bytes do not add up to the end total of the side that counted them, both figures.

    iperf3 counts the bytes of the intervals and of ``end.sum_sent`` (or ``sum_received``) on the
    same counter of one side, so they agree exactly in every real output (the corpus: to the byte);
    only time the intervals leave uncovered may add to the total, at most at their highest rate.
    Intervals say which side they count (``"sender"``, iperf 3.9 on), else the client sends unless
    reversed. None where they agree, or where the figures needed are not all there.
    """
    sums = [item.get(key) for item in intervals if isinstance(item, dict)]
    sums = [s for s in sums if isinstance(s, dict) and s.get("omitted") is not True]
    figures = [(s.get("bytes"), s.get("seconds")) for s in sums]
    if not figures or not all(_finite(b) and _finite(t) and t >= 0 for b, t in figures):
        return None
    said = {s.get("sender") for s in sums}
    if said <= {True, False} and len(said) == 1:
        sends = said.pop()
    elif "connecting_to" in start or "accepted_connection" in start:
        sends = ("connecting_to" in start) != (bool(test.get("reverse")) != bool(suffix))
    else:
        return None
    name = ("sum_sent" if sends else "sum_received") + suffix
    total = end.get(name)
    if not isinstance(total, dict) or not _finite(total.get("bytes")) or not _finite(total.get("seconds")):
        return None
    counted = sum(b for b, _ in figures)
    covered = sum(t for _, t in figures)
    peak = max((b / t for b, t in figures if t > 0), default=0.0)
    uncovered = max(total["seconds"] - covered, 0.0)
    slack = 1e-9 * max(counted, total["bytes"], 1)  # float sums of whole byte counts
    if counted - slack <= total["bytes"] <= counted + peak * uncovered + slack:
        return None
    return (f"the intervals add up to {counted:,.0f} bytes over {covered:.3f} s; end.{name} says "
            f"{total['bytes']:,.0f} bytes over {total['seconds']:.3f} s")


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _json_samples(intervals: list, key: str, fields: _Fields) -> tuple[list[float], list[float], int]:
    """bits_per_second and seconds of each interval's ``key`` sum, omitted ones left out (and counted)."""
    samples, durations, omitted = [], [], 0
    for i, item in enumerate(intervals):
        item = check(item, dict, f"{fields.prefix}intervals[{i}]", fields.source)
        path = f"intervals[{i}].{key}"
        total = fields.object(item, key, path)
        if total.get("omitted", False) is True:
            omitted += 1
            continue
        samples.append(fields.number(total, "bits_per_second", f"{path}.bits_per_second"))
        durations.append(fields.number(total, "seconds", f"{path}.seconds"))
    return samples, durations, omitted


def _json_tags(test: dict, end: dict, suffix: str, fields: _Fields) -> list[tuple[str, str]]:
    protocol = test.get("protocol")
    tags = [("protocol", protocol)] if isinstance(protocol, str) else []
    if isinstance(test.get("num_streams"), int):
        tags.append(("streams", str(test["num_streams"])))
    if test.get("reverse") in (0, 1):
        tags.append(("reverse", "yes" if test["reverse"] else "no"))
    if test.get("bidir"):
        tags.append(("bidir", "yes"))
    for name in ("sum_sent", "sum_received"):
        total = fields.object(end, name + suffix, f"end.{name}{suffix}", required=False)
        if "bits_per_second" in total:
            tags.append((name, f"{fields.number(total, 'bits_per_second', f'end.{name}{suffix}.bits_per_second')!r} bit/s"))
    sent = end.get("sum_sent" + suffix)
    if isinstance(sent, dict) and "retransmits" in sent:
        tags.append(("retransmits", str(sent["retransmits"])))
    received = end.get("sum_received" + suffix)
    udp = received if isinstance(received, dict) and "jitter_ms" in received else end.get("sum")
    if protocol == "UDP" and isinstance(udp, dict):
        tags.extend((name, str(udp[name])) for name in ("jitter_ms", "lost_packets", "lost_percent") if name in udp)
    return tags


def _json_label(start: dict, test: dict, bidir_reverse: bool) -> str:
    """``iperf3 TCP 4 streams A -> B``: the client sends unless reversed; a server's output is the other side."""
    connected = start.get("connected")
    first = connected[0] if isinstance(connected, list) and connected and isinstance(connected[0], dict) else {}
    local, remote = first.get("local_host"), first.get("remote_host")
    protocol = test.get("protocol")
    streams = test.get("num_streams")
    words = ["iperf3"] + ([protocol] if isinstance(protocol, str) else [])
    if isinstance(streams, int):
        words.append(f"{streams} stream{'s' if streams != 1 else ''}")
    client = True if "connecting_to" in start else False if "accepted_connection" in start else None
    if isinstance(local, str) and isinstance(remote, str):
        reverse = bool(test.get("reverse")) != bidir_reverse
        sends = None if client is None else client != reverse
        words.append(hosts_label(local, remote, sends))
    return " ".join(words)


def hosts_label(local: str, remote: str, sends: bool | None) -> str:
    """``local -> remote`` when this side sends, the other way when it receives, ``<->`` when unknown."""
    if sends is None:
        return f"{local} <-> {remote}"
    return f"{local} -> {remote}" if sends else f"{remote} -> {local}"


# ---------------------------------------------------------------------------------------------
# Text output


@dataclass
class _Test:
    """One iperf3 test as read from the text, client or server side (``client`` None: not shown)."""

    line: int
    client: bool | None
    reverse: bool = False
    hosts: tuple[str, str] | None = None
    protocol: str | None = None
    header: str | None = None
    columns: str = ""
    summary_mode: bool = False
    error: str | None = None
    intervals: dict[str, dict[str, list[Interval]]] = field(default_factory=dict)
    summaries: dict[str, dict[str, list[tuple[Interval, str | None]]]] = field(default_factory=dict)
    omitted: dict[str, int] = field(default_factory=dict)
    cut_line: int | None = None


def _parse_text(text: str, source: str) -> list[Run]:
    tests: list[_Test] = []
    version = None
    quoting_server = False  # after "Server output:" (--get-server-output) the server's own text follows
    # A last line without its newline may be cut before "(omitted)" or "sender": it is not read.
    unterminated = sum(1 for _ in iter_lines(text)) if text and text[-1] not in "\r\n" else None
    for number, line in enumerate(iter_lines(text), start=1):
        if _CONNECTING.match(line):
            tests.append(_Test(number, client=True))
            quoting_server = False
            continue
        if quoting_server:
            continue
        if line.startswith("Server output:"):
            quoting_server = True
            continue
        if _ACCEPTED.match(line):
            tests.append(_Test(number, client=False))
            continue
        if (found := _VERSION.match(line)) and version is None:
            version = found[1]
            continue
        item = interval(line, number, source)
        if item is None:
            _setting(tests, line, number)
            continue
        if not tests:
            tests.append(_Test(number, client=None))
        if number == unterminated:
            tests[-1].cut_line = number
            continue
        _add(tests[-1], item)
    runs = []
    for test in tests:
        runs.extend(_test_runs(test, version, source))
    if not runs:
        raise ToolOutputError(source, "line 1", "expected at least one iperf3 test with interval or summary "
                              "lines; found none")
    return runs


def _setting(tests: list[_Test], line: str, number: int) -> None:
    """Note what a line that is no interval says about the current test."""
    if not tests:
        if not (_CONNECTED.search(line) or _HEADER.match(line)):
            return
        tests.append(_Test(number, client=None))
    test = tests[-1]
    if _REVERSE.match(line):
        test.reverse = True
    elif (match := _CONNECTED.search(line)) and test.hosts is None:
        test.hosts = (match[1], match[2])
    elif match := _STARTING.match(line):
        test.protocol = match[1]
    elif match := _HEADER.match(line):
        test.columns += match[1]
        if test.intervals or test.omitted:
            test.summary_mode = True
        elif test.header is None:
            test.header = match[1]
    elif match := _FAILURE.match(line):
        test.error = match[1]


def _add(test: _Test, item: Interval) -> None:
    side = _SIDE.search(item.rest)
    if side or test.summary_mode:
        test.summaries.setdefault(item.role, {}).setdefault(item.id, []).append((item, side[1] if side else None))
    elif "(omitted)" in item.rest:
        test.omitted[item.role] = test.omitted.get(item.role, 0) + 1
    else:
        test.intervals.setdefault(item.role, {}).setdefault(item.id, []).append(item)


def _test_runs(test: _Test, version: str | None, source: str) -> list[Run]:
    roles = list(dict.fromkeys([*test.intervals, *test.summaries]))
    if not roles:
        said = f"; iperf3 said: {test.error}" if test.error else ""
        omitted = " but intervals of the -O warm-up" if test.omitted else ""
        raise ToolOutputError(source, f"line {test.line}", "expected interval or summary lines for the iperf3 test "
                              f"starting here; found none{omitted}: the output is truncated or the test failed{said}")
    return [_role_run(test, role, version, source) for role in roles]


def _role_run(test: _Test, role: str, version: str | None, source: str) -> Run:
    by_id = test.intervals.get(role, {})
    summaries = test.summaries.get(role, {})
    streams = {i for i in by_id if i != "SUM"} or {i for i in summaries if i != "SUM"}
    key = "SUM" if "SUM" in by_id or "SUM" in summaries else next(iter(streams), "SUM")
    if len(streams) > 1 and key != "SUM":
        first = min((items[0].line for items in by_id.values()), default=test.line)
        raise ToolOutputError(source, f"line {first}", f"expected [SUM] lines adding up the {len(streams)} streams; "
                              "found none: the output is truncated")
    lines = by_id.get(key, [])
    totals = summaries.get(key, [])
    tags = _text_tags(test, role, len(streams), totals)
    if not lines:
        lines = [_whole_test(totals, test, source)]
        tags.append(("intervals", "none printed; the sample is the summary line over the whole test"))
    else:
        tags += _consistency(test, role, lines, totals)
    unit = lines[0].unit
    samples = tuple(rate_in(item, unit, source) for item in lines)
    origin = Origin(path=source, line=lines[0].line, tool="iperf3", tool_version=version)
    return Run(label=_text_label(test, role, len(streams)), workload=None, metric=Metric.BANDWIDTH,
               samples=samples, unit=RATE_UNITS[unit][0], origin=origin, tags=tuple(tags),
               durations=tuple(item.seconds for item in lines))


def _consistency(test: _Test, role: str, lines: list[Interval], totals: list[tuple[Interval, str | None]]) -> list[tuple[str, str]]:
    """The tag ``inconsistent`` where the intervals do not add up to the total of the side that printed them."""
    side = {True: "sender", False: "receiver"}.get(_sends(test, role))
    total = next((item for item, said in totals if said is not None and said == side), None)
    if total is None:
        return []
    disagreement = against_total(lines, total, f"the {side}'s total")
    return [("inconsistent", disagreement)] if disagreement else []


def _whole_test(totals: list[tuple[Interval, str | None]], test: _Test, source: str) -> Interval:
    """The receiver's summary line (else the only one) of a test that printed no intervals."""
    by_side = {side: item for item, side in totals}
    chosen = by_side.get("receiver") or (totals[0][0] if len(totals) == 1 else None)
    if chosen is None:
        raise ToolOutputError(source, f"line {test.line}", "expected interval lines or a receiver summary line; "
                              f"found {len(totals)} summary lines and no receiver line")
    return chosen


def _text_protocol(test: _Test) -> str | None:
    """As the text shows it: 'Starting Test' (-V), UDP's jitter or datagram columns, TCP's retransmissions."""
    if test.protocol:
        return test.protocol
    if "Jitter" in test.columns or "Datagrams" in test.columns:
        return "UDP"
    return "TCP" if "Retr" in test.columns else None


def _sends(test: _Test, role: str) -> bool | None:
    """Whether the side that printed the text sends: the bidir role, the client unless -R, else the columns."""
    if role:
        return role.startswith("TX")
    if test.client is True:
        return not test.reverse
    header = test.header or ""
    if "Retr" in header or "Total Datagrams" in header:
        return True
    if "Jitter" in header:
        return False
    # A server prints the summary of its own side only: "receiver" where it received.
    sides = {side for totals in test.summaries.get(role, {}).values() for _, side in totals}
    return {frozenset({"sender"}): True, frozenset({"receiver"}): False}.get(frozenset(sides))


def _text_label(test: _Test, role: str, streams: int) -> str:
    protocol = _text_protocol(test)
    words = ["iperf3"] + ([protocol] if protocol else []) + [f"{streams} stream{'s' if streams != 1 else ''}"]
    if test.hosts:
        words.append(hosts_label(*test.hosts, _sends(test, role)))
    return " ".join(words)


def _text_tags(test: _Test, role: str, streams: int, totals: list[tuple[Interval, str | None]]) -> list[tuple[str, str]]:
    protocol = _text_protocol(test)
    tags = [("protocol", protocol)] if protocol else []
    tags.append(("streams", str(streams)))
    if test.client is True:
        tags.append(("reverse", "yes" if test.reverse else "no"))
    if role:
        tags.append(("bidir", role))
    for item, side in totals:
        if side is None:
            tags.append(("summary", f"{item.shown()} ({' '.join(item.rest.split())})"))
            continue
        tags.append(("sum_sent" if side == "sender" else "sum_received", item.shown()))
        retransmits = _RETRANSMITS.match(item.rest)
        if side == "sender" and retransmits and protocol != "UDP":
            tags.append(("retransmits", retransmits[1]))
        udp = UDP_RECEIVED.search(item.rest)
        if side == "receiver" and udp:
            tags += [("jitter_ms", udp[1]), ("lost_packets", udp[2]), ("lost_percent", udp[4])]
    if not totals:
        tags.append(("summary", "none: the output ends before the test's summary lines"))
    if test.omitted.get(role):
        tags.append(("omitted", f"{test.omitted[role]} interval(s) of the -O warm-up left out"))
    if test.error:
        tags.append(("error", test.error))
    if test.client is None and test.hosts is None:
        tags.append(("connection", f"not shown: the output starts at line {test.line} without iperf3's 'Connecting to "
                                   "host' or 'Accepted connection' line, so the hosts are unknown"))
    if test.cut_line:
        tags.append(("cut_line", f"line {test.cut_line} ends the output without a newline and may be cut "
                                 "short: it is left out"))
    return tags
