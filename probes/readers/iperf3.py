"""Read iperf3's saved results (``-J`` JSON of 3.x, and its text output) into bandwidth runs, one per test direction.

:mod:`probes.measure.iperf3` runs iperf3 itself and keeps the receiver's total; this reader takes outputs
made elsewhere and keeps every measured interval as a sample, so their spread shows.
"""

from __future__ import annotations

from probes.core.errors import ToolOutputError
from probes.core.run import Run, distinct_labels
from probes.readers.iperf3_json import parse_json, received
from probes.readers.iperf3_text import parse_text, text_marker
from probes.readers.iperf_intervals import (INTERVAL, INTERVAL_LIKE, RATE_UNITS, UDP_RECEIVED, Interval, against_total,
                                            hosts_label, interval, interval_style, rate_in)
from probes.readers.jsonfields import JSON_OPENING
from probes.readers.textlines import beginning

__all__ = ["looks_like", "parse", "received", "INTERVAL", "INTERVAL_LIKE", "RATE_UNITS", "UDP_RECEIVED", "Interval", "interval",
           "rate_in", "hosts_label", "interval_style", "against_total", "FORMAT"]

# What iobound read says it reads.
FORMAT = "iperf3 output (-J JSON or text)"


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like iperf3's JSON (``-J``) or text output: a cheap sniff, not a validation."""
    # A run that never connected has no test_start, but its "connected" list is there (empty).
    if '"intervals"' in text and ('"test_start"' in text or '"connected"' in text) and JSON_OPENING.search(text):
        return True
    return text_marker(text) is not None


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
    opening = JSON_OPENING.search(text)
    marker = text_marker(text)
    if opening is not None and (marker is None or opening.start() < marker):
        return distinct_labels(parse_json(text, opening.start(), source))
    if marker is None:
        found = beginning(text)
        raise ToolOutputError(source, "line 1", "expected iperf3's output (its -J JSON, or text with a line "
                              f"'Connecting to host ...' or '[  5] local ... connected to ...'); found {found}")
    return distinct_labels(parse_text(text, source))
