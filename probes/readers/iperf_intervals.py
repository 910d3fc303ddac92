"""The interval lines of iperf 2 and iperf3 and their rates: both print them with unit_snprintf.

:mod:`probes.readers.iperf3` and :mod:`probes.readers.iperf2` read their text output with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern

__all__ = ["RATE_UNITS", "BYTE_UNITS", "INTERVAL", "INTERVAL_LIKE", "UDP_RECEIVED", "Interval", "interval", "rate_in",
           "against_total", "hosts_label", "interval_style", "interval_times"]

# Units. iperf3's text prints figures with unit_snprintf (esnet/iperf src/units.c): rates in bits take
# 1000-based prefixes ("Mbits/sec" = 10^6 bit/s), byte counts 1024-based ones ("MBytes" =
# 2^20 B; with -f M the rate is "MBytes/sec" = MiB/s). The corpus agrees:
# freekds_iperf3_text_udp_wan_1Mbps.txt line 8, "4.00-5.00 sec 128 KBytes 1.05 Mbits/sec 16":
# 16 datagrams of 8192 B are 128 x 1024 B and 1,048,576 bit/s (an 8000 B datagram with
# kB = 1000 would also give 128 KBytes but 1.02 Mbits/sec); freekds_iperf3_text_udp_lan.txt
# line 4, 953 datagrams = 7,806,976 B print "7.45 MBytes" (/ 2^20; / 10^6 would be 7.81);
# cloudpilot_iperf3_text_tcp_omit3_aws.txt line 8, "1.00-2.00 sec 3.75 MBytes 31.5 Mbits/sec":
# 3.75 x 2^20 x 8 bit = 31.46 Mbit (3.75 x 10^6 x 8 would be 30.0). iperf 2 prints the same way.
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
INTERVAL = Pattern(
    r"\[\s*(?P<id>\d+|SUM(?:-\d+)?)\](?:\[(?P<role>[TR]X-[CS])\])?\s+(?P<start>" + _NUMBER + r")\s*-\s*(?P<end>"
    + _NUMBER + r")\s+sec\s+(?P<transfer>" + _NUMBER + r")\s+(?P<transfer_unit>[KMGT]?Bytes)\s+(?P<rate>" + _NUMBER
    + r")\s+(?P<unit>[KMGT]?(?:bits|Bytes)/sec)(?P<rest>.*)$")
# A line that starts like an interval line: if INTERVAL does not match it, it is malformed, not something else.
INTERVAL_LIKE = Pattern(r"\[\s*(?:\d+|SUM)[^\]]*\].*\bsec\b.*Bytes")
# How iperf3 and iperf 2 print an interval's times, which tells their texts apart where no other line does
# (an output cut at the top): iperf3 "%6.2f-%-6.2f sec", two decimals and the end padded to 6 characters
# ("0.00-1.00   sec", "9.00-10.00  sec"); iperf 2.0.5 "%4.1f-%4.1f sec" (" 0.0- 1.0 sec"), 2.0.10 on
# "%4.2f-%4.2f sec" and, built with fast sampling (2.1's default), "%4.4f-%4.4f sec" ("0.0000-0.5000
# sec"): one space before "sec" always (iperf2 source, include/headers.h IPERFTimeFrmt).
# (Searched from the "]" on, a literal the search skips to quickly, then checked to start its line: a
# pattern anchored at every line's start costs a second on a 50 MB output of another tool.)
_TIMES = Pattern(r"\](?:\[[TR]X-[CS]\])?\s+\d+\.(\d+)\s*-\s*(\d+)\.(\d+)( +)sec\s")
_LINE_ID = Pattern(r"\[\s*(?:\d+|SUM(?:-\d+)?)")
# A UDP receiver's cells after the rate: "0.018 ms  1/181 (0.55%)" (iperf 2 pads: "1/  181").
UDP_RECEIVED = Pattern(r"(" + _NUMBER + r") ms\s+(\d+)/\s*(\d+)\s+\(([^)%]*)%\)")


def interval_times(text: str):
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
    for _, match in interval_times(text):
        start, whole, end, spaces = len(match[1]), match[2], len(match[3]), len(match[4])
        if start != end:
            continue
        if start in (1, 4):
            return "iperf2"
        if start == 2 and len(whole) <= 2:
            return "iperf3" if spaces >= 2 else "iperf2"
    return None



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


def hosts_label(local: str, remote: str, sends: bool | None) -> str:
    """``local -> remote`` when this side sends, the other way when it receives, ``<->`` when unknown."""
    if sends is None:
        return f"{local} <-> {remote}"
    return f"{local} -> {remote}" if sends else f"{remote} -> {local}"

