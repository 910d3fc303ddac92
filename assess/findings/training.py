"""Findings about an MLPerf Storage (DLIO) training run on its own: its accelerator utilisation and its cache evidence.

The reader (``probes.readers.mlperf``) gives each training run a record of the mean AU, the config's minimum,
DLIO's own verdict (``train_au_meet_expectation``), its ``potential_caching`` flags and the hosts' memory
against each host's share of the data set; these findings turn the record into words, as the benchmark names them.
"""

from __future__ import annotations

from probes.core.records import Training, record_json
from probes.core.run import Run
from probes.core.units import Metric, format_quantity, quantity_json
from assess.findings.finding import Finding, Severity

__all__ = ["training_findings", "TRAINING_CODES"]

# Codes (stable): AU-BELOW-MINIMUM error (the run fails the benchmark's AU rule); POTENTIAL-CACHING warning.
TRAINING_CODES = ("AU-BELOW-MINIMUM", "POTENTIAL-CACHING")


def training_findings(run: Run) -> list[Finding]:
    """The AU and caching findings of a DLIO training run; none for other runs (they carry no training record)."""
    if run.training is None:
        return []
    return [f for f in (_au(run, run.training), _caching(run, run.training)) if f is not None]


def _au(run: Run, training: Training) -> Finding | None:
    """AU below the config's ``metric.au``: MLPerf Storage's "train_au_meet_expectation: fail", an invalid result."""
    mean, minimum = training.au_mean, training.au_minimum
    if mean >= minimum:
        return None
    accelerators = training.accelerators
    verdict = training.au_expectation or "not stated"
    return Finding("AU-BELOW-MINIMUM", Severity.ERROR, run.label,
                   f"{run.label}: the mean accelerator utilisation (AU) is {mean:.2f} %, below the {minimum:g} % the "
                   f"benchmark requires ({training.au_minimum_source}); DLIO reports "
                   f"train_au_meet_expectation: {verdict}. The storage did not keep "
                   f"{accelerators} emulated accelerators busy, so this is no valid MLPerf Storage result for that many.",
                   "run fewer accelerators (the most this storage feeds: iobound predict TOPOLOGY --accelerators N "
                   "--model M --accelerator A), or more read threads (reader.read_threads) if the clients' threads bind",
                   {"au_mean_percent": mean, "au_minimum_percent": minimum, "accelerators": accelerators,
                    "au_per_epoch": list(training.au_per_epoch), "dlio_verdict": training.au_expectation})


def _caching(run: Run, training: Training) -> Finding | None:
    """DLIO's own flag that a host's memory exceeds its share of the data set, or the same from the host figures."""
    caching = training.caching
    flags, memory, share = caching.potential_caching, caching.host_memory, caching.data_per_host
    larger = memory is not None and share is not None and memory >= share
    hosts = sum(flags) if isinstance(flags, tuple) else 0
    if not hosts and not larger and flags is not True:
        return None
    shown = (f"each host has {format_quantity(memory, Metric.SIZE)} of memory for its "
             f"{format_quantity(share, Metric.SIZE)} share of the data set" if memory is not None and share is not None
             else "the hosts' memory and data share are not both stated")
    flagged = (f"DLIO's potential_caching flags {hosts} of {len(flags)} hosts" if isinstance(flags, tuple) else
               f"DLIO's potential_caching is {'not stated' if flags is None else 'yes' if flags else 'no'}")
    return Finding("POTENTIAL-CACHING", Severity.WARNING, run.label,
                   f"{run.label}: {flagged}, and {shown}: from the second epoch on, the page cache can serve reads the "
                   "storage never sees, so the bandwidth may be the memory's, not the storage's.",
                   "use a data set larger than the hosts' memory (MLPerf Storage sizes it at five times: mlpstorage "
                   "datasize), limit the page cache, or read with O_DIRECT (reader.odirect)",
                   {"potential_caching": record_json(flags), "host_memory": quantity_json(memory),
                    "data_per_host": quantity_json(share)})
