"""Read iperf3's ``-J`` JSON into bandwidth runs, as :func:`probes.readers.iperf3.parse` describes, and the receiver's
total that :mod:`probes.measure.iperf3` keeps (:func:`received`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.run import Origin, Run
from probes.core.units import Metric
from probes.readers.iperf_intervals import hosts_label
from probes.readers.jsonfields import JSON_OPENING, check, number as json_number
from probes.readers.textlines import beginning, line_of

__all__ = ["parse_json", "received", "BIT_RATE"]

# Units. iperf3's JSON "bits_per_second" is bits per second with no prefix (SI: "bit/s").
BIT_RATE = "bit/s"


def received(text: str, *, source: str) -> float:
    """The receiver's throughput in bit/s (``end.sum_received``) of one ``iperf3 -J`` test: the figure a probe keeps.

    :mod:`probes.measure.iperf3` hands its output here; the receiver's total counts what
    arrived, where the intervals of :func:`probes.readers.iperf3.parse` are the client's view.

    Raises
    ------
    ToolOutputError
        If the text is not one iperf3 JSON test, reports an error (``"error"``), or received nothing.
    """
    opening = JSON_OPENING.search(text)
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


def parse_json(text: str, start: int, source: str) -> list[Run]:
    """The runs of the iperf3 JSON objects from ``start`` on, one after another."""
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

