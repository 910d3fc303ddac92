"""Read iperf 2's text output (client or server side) into bandwidth runs: one per connection, or per group of parallel streams.

iperf 2 has no JSON; its interval lines are those of iperf3 (both print with unit_snprintf),
so the line reading and the rate units are shared with iperf3's reader (:mod:`probes.readers.iperf_intervals`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines
from probes.core.patterns import Pattern
from probes.readers.iperf_intervals import (RATE_UNITS, UDP_RECEIVED, Interval, against_total, hosts_label, interval,
                                            interval_style, rate_in)
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Metric
from probes.readers.textlines import beginning

__all__ = ["looks_like", "parse", "FORMAT"]

# What iobound read says it reads.
FORMAT = "iperf 2 text output"

# Units: as in iperf3 (see probes.readers.iperf_intervals), "Mbits/sec" is 10^6 bit/s and "KBytes" 2^10 B.
# The corpus agrees: congestion-control_iperf2_server_tcp_mininet.txt line 7,
# "0.0- 1.0 sec 177 KBytes 1.45 Mbits/sec": 177 x 1024 x 8 bit = 1.450 Mbit (177 x 1000 x 8
# would be 1.416); bufferbloat_iperf2_client_tcp_mininet_1.5Mbps.txt line 7, "30.4 MBytes
# 255 Mbits/sec" in 1 s: 30.4 x 2^20 x 8 = 255.0 Mbit. Samples keep the unit of a run's
# first line; lines in another prefix ("0.00 bits/sec" among "Mbits/sec") are scaled exactly.
_CLIENT = Pattern(r"^Client connecting to (\S+), (TCP|UDP) port (\d+)", re.MULTILINE)
_SERVER = Pattern(r"^Server listening on (TCP|UDP) port (\d+)", re.MULTILINE)
_CONNECTION = Pattern(r"\[\s*(\d+)\] local (\S+) port (\d+) connected with (\S+) port (\d+)(.*)$", re.MULTILINE)
_SERVER_REPORT = Pattern(r"\[\s*(\d+)\] Server Report:")
_VERSION = Pattern(r"^iperf version (\S+)")


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like iperf 2's text output: a cheap sniff, not a validation."""
    return bool(_CLIENT.search(text) or _SERVER.search(text) or _CONNECTION.search(text)
                or interval_style(text) == "iperf2")


def parse(text: str, *, source: str) -> list[Run]:
    """One bandwidth run per connection, or per group of parallel streams ([SUM] lines), in the printed rate unit.

    Parameters
    ----------
    text : what iperf 2 printed, client or server side; a server's log of many connections
        gives a run for each.
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled like ``"iperf2 TCP 1 stream 10.0.0.1 -> 10.0.0.2"``; one sample per interval
        line (``-i``), durations the intervals' seconds. A connection that printed only its
        final line has that one sample (tagged ``intervals``). The final line (``0.0-10.0
        sec``) is the tag ``summary``, or says that it is missing (the test was stopped before
        it). Parallel streams (``-P``) are one run of their ``[SUM]`` lines, labelled with the
        number of streams those lines add up.

    Raises
    ------
    ToolOutputError
        If the text is not iperf 2's output, has malformed interval lines, or holds no interval line.

    Notes
    -----
    - Who sends is read from the ports: a connection to the port the client connected to is
      sent by this host, one to the port the server listens on is received (``(reverse)``
      turns it round). iperf 2 prints its version only with ``-v``: the origin's version is
      None otherwise.
    - A line starting at 0 s is a connection's (or a [SUM]'s) final line when intervals came
      before it, or when it is the only line of its connection (a test without ``-i``).
      A [SUM] line adds up the connections whose lines came since the one before it; the
      connection lines of a new test (or a header) start a new group.
    - Interval lines alone (a server's report or a run stopped by a signal, cut before its
      header) are read, and tagged ``connection``: who sent to whom, and the protocol, are
      not shown.
    - Where the intervals' Transfer column does not add up to the final line's, beyond the
      rounding of what iperf printed, the run is tagged ``inconsistent`` with both figures
      (see :func:`probes.readers.iperf_intervals.against_total`).
    """
    if not looks_like(text):
        found = beginning(text)
        raise ToolOutputError(source, "line 1", "expected iperf 2's output (a line 'Client connecting to <host>, "
                              f"TCP port <n>', 'Server listening on TCP port <n>', '[  3] local ... connected "
                              f"with ...' or interval lines '[  3]  0.0- 1.0 sec ...'); found {found}")
    sections, version = _read(text, source)
    runs = [run for section in sections for run in _section_runs(section, version, source)]
    if not runs:
        raise ToolOutputError(source, "line 1", "expected interval lines ('[  3]  0.0- 1.0 sec  1.10 MBytes  "
                              "9.23 Mbits/sec'); found none: the output is truncated or the test failed")
    return distinct_labels(sorted(runs, key=lambda run: run.origin.line))


@dataclass(eq=False)  # told apart by identity: two connections may print the same lines
class _Stream:
    """One connection: its interval lines, final line, and (UDP) the server's report on it."""

    id: str
    local: tuple[str, str] | None = None
    remote: tuple[str, str] | None = None
    extra: str = ""
    lines: list[Interval] = field(default_factory=list)
    summary: Interval | None = None
    server_report: Interval | None = None
    report_next: bool = False
    grouped: bool = False


@dataclass(eq=False)
class _Group:
    """Parallel streams added up in [SUM] lines, and the streams in them."""

    lines: list[Interval] = field(default_factory=list)
    summary: Interval | None = None
    members: list[_Stream] = field(default_factory=list)


@dataclass
class _Section:
    """What one 'Client connecting to' or 'Server listening on' header (or both, iperf -d) covers."""

    protocol: str | None = None
    connect_port: str | None = None
    listen_port: str | None = None
    headed: bool = False
    streams: list[_Stream] = field(default_factory=list)
    current: dict[str, _Stream] = field(default_factory=dict)
    groups: list[_Group] = field(default_factory=list)
    open_group: _Group | None = None
    pending: list[_Stream] = field(default_factory=list)
    reported: bool = False


def _read(text: str, source: str) -> tuple[list[_Section], str | None]:
    sections: list[_Section] = []
    version = None
    for number, line in enumerate(iter_lines(text), start=1):
        if match := _VERSION.match(line):
            version = version or match[1]
            continue
        header = _CLIENT.match(line) or _SERVER.match(line)
        if header:
            _header(sections, header)
            continue
        if not sections:
            sections.append(_Section())
        section = sections[-1]
        if match := _CONNECTION.search(line):
            stream = _Stream(match[1], (match[2], match[3]), (match[4], match[5]), match[6])
            section.streams.append(stream)
            section.current[stream.id] = stream
            section.pending.clear()  # a new connection: the lines before it are no part of its [SUM]
            section.open_group = None
        elif match := _SERVER_REPORT.search(line):
            (section.current.get(match[1]) or _stream(section, match[1])).report_next = True
        elif item := interval(line, number, source):
            section.reported = True
            _add(section, item)
    for section in sections:
        _settle(section)
    return sections, version


def _header(sections: list[_Section], header: re.Match) -> None:
    """Start a section; a client header right after a server's (iperf -d, -r) joins it. Connections announced
    just before the header, with nothing reported yet (iperf 2.1 may print one before it), belong to it."""
    client = header.re is _CLIENT.compiled  # the compiled pattern, not its lazy wrapper
    last = sections[-1] if sections else None
    taken = last is not None and (last.reported or (last.connect_port if client else last.listen_port) is not None)
    if last is None or taken:
        section = _Section()
        if last is not None:
            waiting = [s for s in last.streams if not (s.lines or s.summary or s.server_report or s.report_next)]
            for stream in waiting:
                last.streams.remove(stream)
                if last.current.get(stream.id) is stream:
                    del last.current[stream.id]
                section.current[stream.id] = stream
            section.streams += waiting
        sections.append(section)
    section = sections[-1]
    section.headed = True
    if client:
        section.protocol, section.connect_port = header[2], header[3]
    else:
        section.protocol, section.listen_port = header[1], header[2]


def _stream(section: _Section, id: str) -> _Stream:
    """The open stream ``id``: after its final line only its server report joins it; a later line opens a new
    stream, as does a line whose connection line is not in the text (then without addresses)."""
    stream = section.current.get(id)
    if stream is None or stream.summary is not None and not stream.report_next:
        stream = _Stream(id)
        section.streams.append(stream)
        section.current[id] = stream
    return stream


def _add(section: _Section, item: Interval) -> None:
    if item.id.startswith("SUM"):
        _add_sum(section, item)
        return
    stream = _stream(section, item.id)
    if stream.report_next:
        stream.server_report, stream.report_next = item, False
        return
    if item.start == 0 and stream.lines:
        stream.summary = item
    else:
        stream.lines.append(item)
    if stream not in section.pending:
        section.pending.append(stream)


def _add_sum(section: _Section, item: Interval) -> None:
    """A [SUM] line: its streams are those whose lines came since the [SUM] line before it."""
    group = section.open_group
    if group is None or (section.pending and not any(s in group.members for s in section.pending)):
        group = section.open_group = _Group()
        section.groups.append(group)
    for stream in section.pending:
        if stream not in group.members:
            group.members.append(stream)
            stream.grouped = True
    section.pending.clear()
    if item.start == 0 and group.lines:
        group.summary = item
        section.open_group = None
    else:
        group.lines.append(item)


def _settle(section: _Section) -> None:
    """A connection (or [SUM]) whose only line starts at 0 s printed no intervals: that line is its final one."""
    for owner in (*section.streams, *section.groups):
        if owner.summary is None and len(owner.lines) == 1 and owner.lines[0].start == 0:
            owner.summary = owner.lines.pop()


def _section_runs(section: _Section, version: str | None, source: str) -> list[Run]:
    runs = []
    for group in section.groups:
        sends = {_sends(section, stream) for stream in group.members}
        hosts = _hosts(group.members[0], sends.pop() if len(sends) == 1 else None) if group.members else None
        tags = _tags(section, len(group.members), group.lines, group.summary, None)
        runs.append(_run(section, group.lines or [group.summary], len(group.members), hosts, tags, version, source))
    for stream in section.streams:
        if stream.grouped or not (stream.lines or stream.summary):
            continue
        tags = _tags(section, 1, stream.lines, stream.summary, stream.server_report)
        runs.append(_run(section, stream.lines or [stream.summary], 1, _hosts(stream, _sends(section, stream)), tags,
                         version, source))
    return runs


def _run(section: _Section, lines: list[Interval], streams: int, hosts: str | None,
         tags: list[tuple[str, str]], version: str | None, source: str) -> Run:
    unit = lines[0].unit
    words = ["iperf2"] + ([section.protocol] if section.protocol else [])
    words.append(f"{streams} stream{'s' if streams != 1 else ''}" if streams else "[SUM]")
    words += [hosts] if hosts else []
    origin = Origin(path=source, line=lines[0].line, tool="iperf2", tool_version=version)
    return Run(label=" ".join(words), workload=None, metric=Metric.BANDWIDTH,
               samples=tuple(rate_in(item, unit, source) for item in lines), unit=RATE_UNITS[unit][0],
               origin=origin, tags=tuple(tags), durations=tuple(item.seconds for item in lines))


def _sends(section: _Section, stream: _Stream) -> bool | None:
    """Whether this host sends on ``stream``, from the ports; None where they do not tell."""
    if stream.local is None or stream.remote is None or "full-duplex" in stream.extra:
        return None
    if section.connect_port is not None and stream.remote[1] == section.connect_port:
        outgoing = True
    elif section.listen_port is not None and stream.local[1] == section.listen_port:
        outgoing = False
    else:
        return None
    return outgoing != ("(reverse)" in stream.extra)


def _hosts(stream: _Stream, sends: bool | None) -> str | None:
    if stream.local is None or stream.remote is None:
        return None
    return hosts_label(stream.local[0], stream.remote[0], sends)


def _tags(section: _Section, streams: int, lines: list[Interval], summary: Interval | None,
          server_report: Interval | None) -> list[tuple[str, str]]:
    tags = [("protocol", section.protocol)] if section.protocol else []
    tags.append(("streams", str(streams)) if streams else ("streams", "not shown: the [SUM] lines' connections are "
                                                                      "not in the text"))
    if summary is None:
        tags.append(("summary", "none: the output ends before the test's final line"))
    else:
        tags.append(("summary", summary.shown()))
        tags += _udp(summary)
        if not lines:
            tags.append(("intervals", "none printed (no -i): the sample is the final line over the whole test"))
        elif disagreement := against_total(lines, summary, "the final line"):
            tags.append(("inconsistent", disagreement))
    if server_report is not None:
        tags.append(("server_report", f"{server_report.shown()} ({' '.join(server_report.rest.split())})"))
        tags += _udp(server_report)
    if not section.headed and not any(s.local for s in section.streams):
        tags.append(("connection", "not shown: the text holds iperf 2's interval lines without its 'Client "
                                   "connecting to' or 'Server listening on' header or connection lines, so the "
                                   "hosts, who sent and the protocol are unknown"))
    return tags


def _udp(item: Interval) -> list[tuple[str, str]]:
    """Jitter and loss where the line has them (a UDP receiver's line)."""
    match = UDP_RECEIVED.search(item.rest)
    if match is None:
        return []
    return [("jitter_ms", match[1]), ("lost_packets", f"{match[2]} of {match[3]}"), ("lost_percent", match[4])]
