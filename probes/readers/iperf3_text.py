"""Read iperf3's text output (client or server side, several tests) into bandwidth runs, as
:func:`probes.readers.iperf3.parse` describes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.core.patterns import Pattern
from probes.core.run import Origin, Run
from probes.core.units import Metric
from probes.readers.iperf_intervals import (RATE_UNITS, UDP_RECEIVED, Interval, against_total, hosts_label, interval,
                                            interval_style, interval_times, rate_in)

__all__ = ["parse_text", "text_marker"]

_CONNECTING = Pattern(r"^Connecting to host (\S+), port \d+", re.MULTILINE)
_LISTENING = Pattern(r"^Server listening on \d+", re.MULTILINE)
_CONNECTED = Pattern(r"\[\s*\d+\] local (\S+) port \d+ connected to (\S+) port \d+")
_ACCEPTED = Pattern(r"^Accepted connection from \S+, port \d+")
_REVERSE = Pattern(r"^Reverse mode, remote host \S+ is sending")
_STARTING = Pattern(r"^Starting Test: protocol: (\w+), (\d+) streams")
_HEADER = Pattern(r"^\[ ID\](?:\[Role\])? Interval\s+Transfer\s+(?:Bitrate|Bandwidth)(.*)$", re.MULTILINE)
_VERSION = Pattern(r"^iperf (3\.\S+)")
_FAILURE = Pattern(r"^iperf3: ((?:error|interrupt) - .*?)\s*$")
_SIDE = Pattern(r"\s(sender|receiver)\s*$")
_RETRANSMITS = Pattern(r"^\s+(\d+)\s")


def text_marker(text: str) -> int | None:
    """Where the first line only iperf3's text prints starts, if any; in a text cut before those lines (it starts
    at the interval header or the intervals), the first header or interval line, if they are iperf3's."""
    found = [m.start() for m in (_CONNECTING.search(text), _LISTENING.search(text), _CONNECTED.search(text)) if m]
    if found:
        return min(found)
    if interval_style(text) != "iperf3":
        return None
    header = _HEADER.search(text)
    first = next(interval_times(text))[0]
    return first if header is None else min(header.start(), first)


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


def parse_text(text: str, source: str) -> list[Run]:
    """The runs of iperf3's text output: a run per test (client or server side) and bidir role."""
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

