"""Findings about an MLPerf Storage (DLIO) training run on its own: its accelerator utilisation and its cache evidence.

The reader (``probes.readers.mlperf``) tags each run with the mean AU, the config's minimum, DLIO's own
verdict (``train_au_meet_expectation``), its ``potential_caching`` flags and the hosts' memory against each
host's share of the data set; these findings turn the tags into words, as the benchmark names them.
"""

from __future__ import annotations

import re

from probes.core.run import Run
from probes.core.units import Q_, Metric, format_quantity
from assess.findings.finding import Finding, Severity

__all__ = ["training_findings", "TRAINING_CODES"]

# Codes (stable): AU-BELOW-MINIMUM error (the run fails the benchmark's AU rule); POTENTIAL-CACHING warning.
TRAINING_CODES = ("AU-BELOW-MINIMUM", "POTENTIAL-CACHING")
_PERCENT = re.compile(r"\s*([0-9.]+)\s*%")
_HOSTS = re.compile(r"\s*(\d+) of (\d+) hosts")


def training_findings(run: Run) -> list[Finding]:
    """The AU and caching findings of a DLIO training run; none for other runs (they carry no ``au_mean`` tag)."""
    tags = dict(run.tags)
    if "au_mean" not in tags:
        return []
    return [f for f in (_au(run, tags), _caching(run, tags)) if f is not None]


def _percent(text: str | None) -> float | None:
    match = _PERCENT.match(text or "")
    return float(match[1]) if match else None


def _au(run: Run, tags: dict) -> Finding | None:
    """AU below the config's ``metric.au``: MLPerf Storage's "train_au_meet_expectation: fail", an invalid result."""
    mean, minimum = _percent(tags.get("au_mean")), _percent(tags.get("au_minimum"))
    if mean is None or minimum is None or mean >= minimum:
        return None
    accelerators = tags.get("accelerators", "its")
    return Finding("AU-BELOW-MINIMUM", Severity.ERROR, run.label,
                   f"{run.label}: the mean accelerator utilisation (AU) is {mean:.2f} %, below the {minimum:g} % the "
                   f"benchmark requires ({tags.get('au_minimum_source', 'metric.au')}); DLIO reports "
                   f"train_au_meet_expectation: {tags.get('au_expectation', 'not stated')}. The storage did not keep "
                   f"{accelerators} emulated accelerators busy, so this is no valid MLPerf Storage result for that many.",
                   "run fewer accelerators (the most this storage feeds: iobound predict TOPOLOGY --accelerators N "
                   "--model M --accelerator A), or more read threads (reader.read_threads) if the clients' threads bind",
                   {"au_mean_percent": mean, "au_minimum_percent": minimum, "accelerators": accelerators,
                    "au_per_epoch": tags.get("au_per_epoch"), "dlio_verdict": tags.get("au_expectation")})


def _caching(run: Run, tags: dict) -> Finding | None:
    """DLIO's own flag that a host's memory exceeds its share of the data set, or the same from the host figures."""
    flagged = _HOSTS.match(tags.get("potential_caching") or "")
    memory, share = tags.get("host_memory"), tags.get("data_per_host")
    memory_q = Q_(memory) if memory else None
    share_q = Q_(share) if share else None
    larger = memory_q is not None and share_q is not None and memory_q >= share_q
    hosts = int(flagged[1]) if flagged else 0
    if not hosts and not larger and tags.get("potential_caching") != "yes":
        return None
    shown = (f"each host has {format_quantity(memory_q, Metric.SIZE)} of memory for its "
             f"{format_quantity(share_q, Metric.SIZE)} share of the data set" if memory_q is not None and share_q is not None
             else "the hosts' memory and data share are not both stated")
    flags = f"DLIO's potential_caching flags {flagged[0].strip()}" if flagged else \
        f"DLIO's potential_caching is {tags.get('potential_caching', 'not stated')}"
    return Finding("POTENTIAL-CACHING", Severity.WARNING, run.label,
                   f"{run.label}: {flags}, and {shown}: from the second epoch on, the page cache can serve reads the "
                   "storage never sees, so the bandwidth may be the memory's, not the storage's.",
                   "use a data set larger than the hosts' memory (MLPerf Storage sizes it at five times: mlpstorage "
                   "datasize), limit the page cache, or read with O_DIRECT (reader.odirect)",
                   {"potential_caching": tags.get("potential_caching"), "host_memory": memory, "data_per_host": share})
