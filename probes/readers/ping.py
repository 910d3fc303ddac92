"""Read saved ping outputs (Linux iputils, IPv4 and IPv6, and Windows ping.exe) into round-trip-time runs, one per ping.

:mod:`probes.measure.ping` runs iputils ping and hands what it printed to this reader, as a user's
saved output is: every reply's RTT is a sample, in ms as printed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Metric
from probes.readers.textlines import beginning, line_of

__all__ = ["looks_like", "parse", "FORMAT"]

# What iobound read says it reads.
FORMAT = "ping output (Linux iputils or Windows)"

# Both ping flavours print RTTs in milliseconds: iputils "time=0.280 ms" (integers from 100 ms up,
# "time=214 ms"), Windows "time=13ms", and "time<1ms" for anything faster than 1 ms.
UNIT = "ms"
# iputils (and BSD): "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.", "PING ::1(::1) 56 data bytes".
_LINUX = Pattern(r"^PING ([^\s(]+)\s*(?:\(([^)\s]*)\))?[^\n]*?(?:bytes of data|data bytes)", re.MULTILINE)
# One iputils reply ("icmp_req" before 2012); replies may share a line in captured logs; "dup" marks a duplicate.
REPLY = Pattern(r"bytes from [^\n]*?: icmp_[rs]eq=\d+ [^\n]*?time=(?P<time>-?\d+(?:\.\d+)?) ms(?P<dup> \(DUP!\))?")
# The statistics are read wherever they stand on a line: a log may glue them to the text before them
# (a reply without its line break, "^C", a timestamp); the sniff still wants them at a line's start.
_LINUX_STATISTICS = Pattern(r"^--- (\S+) ping statistics ---", re.MULTILINE)
_LINUX_STATISTICS_ANYWHERE = Pattern(r"--- (\S+) ping statistics ---")
_LINUX_COUNTS = Pattern(r"(?<![\d.])(?P<sent>\d+) packets transmitted, (?P<received>\d+) (?:packets )?received,"
                           r"(?: \+\d+ duplicates,)?(?: \+\d+ errors,)? (?P<loss>\d+(?:\.\d+)?)% packet loss")
_LINUX_RTT = Pattern(r"(?<![\w-])(?:rtt|round-trip) (min/avg/max/\w+ = [\d./]+ ms)")
_WINDOWS = Pattern(r"^Pinging (\S+)(?: \[([^\]\s]+)\])? (?:from \S+ )?with \d+ bytes of data:", re.MULTILINE)
_WINDOWS_REPLY = Pattern(r"Reply from [^\n]*?: (?:bytes=\d+ )?time(?P<below><)?=?(?P<time>-?\d+)ms")
_WINDOWS_STATISTICS = Pattern(r"Ping statistics for ")
_WINDOWS_COUNTS = Pattern(r"\bPackets: Sent = (?P<sent>\d+), Received = (?P<received>\d+), Lost = \d+ "
                             r"\((?P<loss>\d+)% loss\)")
_WINDOWS_RTT = Pattern(r"\b(Minimum = \d+ms, Maximum = \d+ms, Average = \d+ms)")


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like ping's output (iputils or Windows): a cheap sniff, not a validation."""
    return bool(_LINUX.search(text) or _WINDOWS.search(text) or _LINUX_STATISTICS.search(text))


def parse(text: str, *, source: str) -> list[Run]:
    """One latency run per ping in the text, in ms; a sample per reply, in the order printed.

    Parameters
    ----------
    text : what ping printed: iputils (Linux, IPv4 or IPv6) or Windows ping.exe; several
        pings one after another are read in turn.
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled ``"ping <host>"`` (repeated labels get ``" (line N)"``); tags ``host``,
        ``address``, ``transmitted``, ``received``, ``loss_percent`` and the RTT summary line
        from ping's statistics.

    Raises
    ------
    ToolOutputError
        If the text is not ping's output, a reply comes before any ping header, or a ping has
        no reply with a time (all lost, or only Windows ``time<1ms`` replies).

    Notes
    -----
    - Duplicate replies (``(DUP!)``) are left out and counted in the tag ``duplicates``.
    - Output cut before the statistics is still read from its reply lines; the tag
      ``statistics`` says that the packets sent and lost are unknown. Statistics that share
      a line with other text (a log that lost a line break, a timestamp before them) are read.
    - Where the reply lines and the statistics disagree (the statistics count more
      replies than were printed), the tag ``replies_printed`` says so; samples are the printed ones.
    - Windows prints ``time<1ms`` for any reply faster than 1 ms, without its value. Such
      replies are left out rather than given an invented time, and the tag ``below_1ms``
      counts them: the samples then over-state the typical RTT.
    """
    windows = _WINDOWS.search(text)
    linux = _LINUX.search(text)
    if windows and (linux is None or windows.start() < linux.start()):
        return distinct_labels(_runs(text, _WINDOWS_FLAVOUR, source))
    if linux is None:
        if _LINUX_STATISTICS.search(text) or REPLY.search(text):
            raise ToolOutputError(source, "line 1", "expected a 'PING <host> ...' line before the replies and "
                                  "statistics; found none: the start of the output is missing")
        found = beginning(text)
        raise ToolOutputError(source, "line 1", "expected ping's output, starting 'PING <host> ...' (iputils) "
                              f"or 'Pinging <host> ...' (Windows); found {found}")
    return distinct_labels(_runs(text, _LINUX_FLAVOUR, source))


@dataclass(frozen=True)
class _Flavour:
    """The patterns of one ping implementation; each reply pattern has a group ``time`` (the RTT in ms)."""

    name: str
    header: Pattern
    reply: Pattern
    statistics: Pattern
    counts: Pattern
    rtt: Pattern


_LINUX_FLAVOUR = _Flavour("iputils", _LINUX, REPLY, _LINUX_STATISTICS_ANYWHERE, _LINUX_COUNTS, _LINUX_RTT)
_WINDOWS_FLAVOUR = _Flavour("Windows", _WINDOWS, _WINDOWS_REPLY, _WINDOWS_STATISTICS, _WINDOWS_COUNTS,
                            _WINDOWS_RTT)


def _runs(text: str, flavour: _Flavour, source: str) -> list[Run]:
    headers = list(flavour.header.finditer(text))
    starts = [h.start() for h in headers]
    first = flavour.reply.search(text)
    if first and first.start() < starts[0]:
        raise ToolOutputError(source, f"line {line_of(text, first.start())}", "expected a ping header before "
                              "this reply; found the reply first: the start of the output is missing")
    ends = starts[1:] + [len(text)]
    return [_run(text[h.start():end], h, line_of(text, h.start()), flavour, source) for h, end in zip(headers, ends)]


def _run(block: str, header: re.Match, line: int, flavour: _Flavour, source: str) -> Run:
    """The run of one ping: the text from its header to the next one (or the end)."""
    samples, duplicates, below = _samples(block, flavour)
    host, address = header[1], header[2]
    tags = [("host", host)] + ([("address", address)] if address and address != host else [])
    tags += _statistics(block, flavour, len(samples) + below)
    if duplicates:
        tags.append(("duplicates", f"{duplicates} duplicate replies (DUP!) left out"))
    if below:
        tags.append(("below_1ms", f"{below} replies printed time<1ms are left out: Windows does not say how "
                                  "far below 1 ms they were, so the samples over-state the typical RTT"))
    negative = next((m for m in flavour.reply.finditer(block) if m["time"].startswith("-")), None)
    if negative:
        raise ToolOutputError(source, f"line {line + line_of(block, negative.start()) - 1}", f"expected round-trip "
                              f"times of 0 ms or more; found {negative['time']} ms in this ping of {host} (a clock "
                              "set back while it ran?): no time of this ping can be trusted")
    if not all(map(math.isfinite, samples)):
        raise ToolOutputError(source, f"line {line}", f"expected round-trip times that are numbers; found one "
                              f"too large to compute with in this ping of {host}")
    if not samples:
        what = f"only replies printed time<1ms ({below})" if below else "no reply with a time"
        raise ToolOutputError(source, f"line {line}", f"expected replies with a round-trip time to this ping of "
                              f"{host}; found {what}")
    origin = Origin(path=source, line=line, tool="ping", tool_version=None)
    return Run(label=f"ping {host}", workload=None, metric=Metric.LATENCY, samples=tuple(samples), unit=UNIT,
               origin=origin, tags=(("format", flavour.name),) + tuple(tags))


def _samples(block: str, flavour: _Flavour) -> tuple[list[float], int, int]:
    """RTTs in ms; and the duplicate replies and Windows '<1ms' replies left out."""
    samples, duplicates, below = [], 0, 0
    for match in flavour.reply.finditer(block):
        found = match.groupdict()
        if found.get("below"):
            below += 1
        elif found.get("dup"):
            duplicates += 1
        else:
            samples.append(float(match["time"]))
    return samples, duplicates, below


def _statistics(block: str, flavour: _Flavour, printed: int) -> list[tuple[str, str]]:
    """Tags from ping's closing statistics: the last complete count line of the block, and the RTT summary."""
    counts = list(flavour.counts.finditer(block))
    if not counts:
        state = "incomplete" if flavour.statistics.search(block) else "missing"
        return [("statistics", f"{state}: the output ends before ping's packet counts; the samples are the "
                               f"{printed} reply lines, and how many packets were sent or lost is unknown")]
    count = counts[-1]
    received = count["received"]
    tags = [("transmitted", count["sent"]), ("received", received), ("loss_percent", count["loss"])]
    blocks = len(flavour.statistics.findall(block))
    if blocks > len(counts):
        tags.append(("statistics", f"{blocks - len(counts)} of {blocks} statistics blocks are cut short; "
                                   "the counts are those of the last complete one"))
    if printed != int(received):
        tags.append(("replies_printed", f"{printed} reply lines; the statistics count {received} received"))
    rtt = flavour.rtt.search(block, count.end())
    if rtt:
        tags.append(("rtt_summary", rtt[1]))
    return tags
