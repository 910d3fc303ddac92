"""Read MLPerf Storage v3.0's KV-cache benchmark (kv-cache.py) results into bandwidth runs: one per tier and operation.

kv-cache.py writes its results as JSON (``--output``); ``summary.cache_stats`` holds each tier's bytes moved over
the run's duration as ``tier_{gpu,cpu,storage}_{read,write}_bandwidth_gbps``. Their "gbps" are GiB/s: its
kv_cache/cache.py computes ``bytes / 1024**3 / duration``. A tier that moved nothing (0) gives no run. The storage
tier is the directory given as ``--cache-dir`` (the NVMe tier); ``summary.storage_throughput_tokens_per_sec``, the
tokens over the time spent in storage I/O, is kept as a tag.
"""

from __future__ import annotations

from probes.core.errors import ToolOutputError
from probes.core.run import Origin, Run
from probes.core.units import Metric
from probes.core.workload import Operation, Workload
from probes.readers.jsonfields import JSON_OPENING, field, json_object, number

__all__ = ["looks_like", "parse", "FORMAT", "UNIT"]

# What iobound read says it reads.
FORMAT = "MLPerf Storage kv-cache.py results JSON"
UNIT = "GiB/s"
_TIERS = ("gpu", "cpu", "storage")


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like kv-cache.py's results: a cheap sniff, not a validation."""
    return JSON_OPENING.match(text) is not None and '"cache_stats"' in text and "_bandwidth_gbps" in text


def parse(text: str, *, source: str) -> list[Run]:
    """A run per tier and operation that moved data, its one sample the tier's mean rate over the run in GiB/s.

    Raises
    ------
    ToolOutputError
        If the text is not kv-cache.py's JSON, or a rate is missing or not a number of at least 0.
    """
    document = json_object(text, source, "kv-cache.py's results JSON (--output)")
    summary = field(document, "summary", dict, "", source)
    stats = field(summary, "cache_stats", dict, "summary", source)
    elapsed = summary.get("elapsed_time")  # since its modular version; the first wrote none
    durations = (number(elapsed, "summary.elapsed_time", source),) if elapsed is not None else ()
    tokens = summary.get("storage_throughput_tokens_per_sec")
    runs = []
    for tier in _TIERS:
        for operation in (Operation.READ, Operation.WRITE):
            key = f"tier_{tier}_{operation.value}_bandwidth_gbps"
            rate = number(field(stats, key, (int, float), "summary.cache_stats", source), f"summary.cache_stats.{key}", source)
            if rate == 0:
                continue
            tags = (("kv_tier", tier),) + ((("storage_tokens_per_s", f"{tokens:.6g}"),)
                                            if tier == "storage" and isinstance(tokens, (int, float)) else ())
            runs.append(Run(label=f"kv-cache {tier} {operation.value}", workload=Workload(operation, None, nodes=1),
                            metric=Metric.BANDWIDTH, samples=(rate,), unit=UNIT, origin=Origin(source, None, "kv-cache.py"),
                            tags=tags, durations=durations))
    if not runs:
        raise ToolOutputError(source, "summary.cache_stats", "expected a tier that moved data; every tier's rate is 0")
    return runs
