"""Read LMCache's store and retrieve log lines into bandwidth runs: one per operation and chunk of tokens.

LMCache logs every store and retrieve of KV-cache with its size, time and throughput, e.g. (its v1 cache engine)::

    LMCache INFO: Stored 2048 out of total 2048 tokens. size: 0.2188 gb, cost 14.7797 ms, throughput: 14.8007 GB/s; ...
    LMCache INFO: Retrieved 10010 out of 10010 required tokens (from 10010 total tokens). size: 1.3747 gb, cost ...

and, before it, ``Store 1792 tokens takes: 2.2906 ms, throughput: ... GB/s``; since, each line begins with its
request (``[req_id=...] Stored ... size: 0.0312 GB, cost ...``: LMCache 0.5.6's cache_engine.py), and a log written
as LMCache's formatter colours it holds an escape after ``LMCache INFO:``. Its "gb", "GB" and "GB/s" are binary:
lmcache/v1/cache_engine.py divides the bytes by 1024**3 (``tot_kv_size / tot_time / 1024**3``), so they are read
as GiB and GiB/s. The time of a store is the copy out of the GPU (offload_time) and the hand-over to the storage
backends (put_time) together: what storage the store reached, the line does not say.
"""

from __future__ import annotations

from probes.core.errors import ToolOutputError, UnitError
from probes.core.patterns import Pattern
from probes.core.run import Origin, Run
from probes.core.units import Q_, Metric
from probes.core.workload import Operation, Workload
from probes.readers.textlines import checked_number, line_of

__all__ = ["looks_like", "parse", "FORMAT", "UNIT"]

# What iobound read says it reads.
FORMAT = "LMCache store and retrieve log lines"
# LMCache's "GB/s" (bytes / 1024**3 per second).
UNIT = "GiB/s"

_NUMBER = r"([0-9.eE+-]+)"
_LINE = Pattern(r"LMCache \w+:(?:\x1b\[[0-9;]*m)? (?:\[req_id=[^\]\n]*\] )?"
                r"(?P<verb>Stored|Retrieved|Store|Retrieve) (?P<tokens>\d+) (?P<rest>[^\n]*?)"
                rf"(?:size: {_NUMBER} (?:gb|GB), cost |takes: ){_NUMBER} ms, throughput: {_NUMBER} GB/s")
_OPERATIONS = {"Stored": Operation.WRITE, "Store": Operation.WRITE, "Retrieved": Operation.READ, "Retrieve": Operation.READ}
_WORDS = {Operation.WRITE: "store", Operation.READ: "retrieve"}


def looks_like(text: str) -> bool:
    """Whether ``text`` holds an LMCache store or retrieve line: a cheap sniff, not a validation."""
    return "LMCache " in text and _LINE.search(text) is not None


def parse(text: str, *, source: str) -> list[Run]:
    """One run per operation and tokens moved (a chunk's size), its samples each line's throughput in GiB/s and its
    durations each line's cost, in the order logged; origin the first line of each.

    Raises
    ------
    ToolOutputError
        If the text holds no store or retrieve line, or a line's figure is not a number.
    """
    found: dict[tuple[Operation, int], list[tuple[int, float, float, float | None]]] = {}
    for match in _LINE.finditer(text):
        line = line_of(text, match.start())
        where = f"line {line}"
        operation, tokens = _OPERATIONS[match["verb"]], int(match["tokens"])
        size = None if match[4] is None else checked_number(match[4], where, source, "a size in gb")
        cost = checked_number(match[5], where, source, "a time in ms")
        rate = checked_number(match[6], where, source, "a throughput in GB/s")
        found.setdefault((operation, tokens), []).append((line, rate, cost / 1000, size))
    if not found:
        raise ToolOutputError(source, "", "expected LMCache's \"Stored ... throughput: ... GB/s\" or \"Retrieved ...\" "
                              "lines; found none")
    return [_run(operation, tokens, lines, source) for (operation, tokens), lines in found.items()]


def _run(operation: Operation, tokens: int, lines: list[tuple[int, float, float, float | None]], source: str) -> Run:
    """The lines of one operation and chunk as one run; its transfer the size one line moved (its first stated, else
    its throughput times its cost; none where it rounds to 0)."""
    first, rate, seconds, size = lines[0]
    moved = Q_(size if size is not None else rate * seconds, "GiB").to("B")
    try:
        workload = Workload(operation, moved if moved.magnitude >= 1 else None, nodes=1)  # "0.0000 gb": under 54 kB
    except UnitError as exc:  # a size past what can be computed with
        raise ToolOutputError(source, f"line {first}", str(exc)) from None
    return Run(label=f"lmcache {_WORDS[operation]} {tokens} tokens", workload=workload, metric=Metric.BANDWIDTH,
               samples=tuple(line[1] for line in lines), unit=UNIT, origin=Origin(source, first, "lmcache"),
               tags=(("kv_tier", "offload"), ("tokens", str(tokens))), durations=tuple(line[2] for line in lines))
