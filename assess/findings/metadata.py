"""IMPLAUSIBLE-HARDWARE of a metadata run: each process waits for its create or remove, so a process that completes
one faster than any network's round trip and a server core's time to answer it did what no part of any date does
(what bounds it: ``topologies/catalogues/metadata_bounds.toml``, its ``round_trip`` and ``per_core``)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from probes.core.units import Metric, Q_, format_quantity, quantity_json
from topologies.catalogues.metadata_bounds import WRITING, bounds
from assess.findings.bands import TOLERANCE
from assess.findings.ceiling import summary_in
from assess.findings.finding import Finding, Severity

if TYPE_CHECKING:
    from pint import Quantity

    from probes.core.run import Run
    from models.ceiling import Ceiling

__all__ = ["too_fast"]

# Far above a float's rounding: a run within it of the least time is judged in pint's arithmetic, as the finding says.
_MARGIN = 1e-9


@functools.cache
def _least_time() -> tuple[Quantity, Quantity, Quantity, float]:
    """The fastest round trip, a core's least time to answer, their sum, and that sum in seconds: read from the table
    once."""
    table = bounds()
    trip, answer = Q_(table["round_trip"]["fastest"]), 1 / Q_(table["per_core"]["range"][1]) * Q_(1, "op")
    return trip, answer, trip + answer, (trip + answer).m_as("s")


def too_fast(run: Run, ceiling: Ceiling, tolerance: float = TOLERANCE) -> Finding | None:
    """IMPLAUSIBLE-HARDWARE where a create or remove run's processes each complete one (times their queue depth) in
    less than the shortest round trip of any network plus one core's least time to answer a request; None where
    they do not, where the run's processes are not known, or where its ``ceiling`` has no round trips (no network
    between the clients and their metadata servers: a local file system).

    Only operations that change the namespace: a stat or a read may be answered from the client's own cache."""
    workload = run.workload
    summary = summary_in(run, Metric.OPERATION_RATE)
    if workload is None or workload.operation.value not in WRITING or workload.nodes is None or summary is None \
            or "round trips" not in {layer.layer for layer in ceiling.layers}:
        return None
    trip, answer, least, seconds = _least_time()
    processes = workload.nodes * workload.ppn * workload.queue_depth
    if summary.max > 0 and processes / summary.max * (1 + tolerance) >= seconds * (1 + _MARGIN):
        return None  # plainly no faster than the least time (in floats: pint's arithmetic cost a tenth of a review)
    table = bounds()
    rate = Q_(summary.max, "op/s")
    each = (processes * Q_(1, "op") / rate).to("us")
    if each * (1 + tolerance) >= least:
        return None
    operation = workload.operation.value
    left = max(each - answer, Q_(0, "us"))
    said = (f"needs one {operation} every {format_quantity(each)} of each of its {processes:,} processes (in flight): "
            f"a round trip under {format_quantity(left)} beside a core's {format_quantity(answer.to('us'))} to answer "
            f"it (the fastest published RPC stack's, metadata_bounds.toml); no network to date carries one in under "
            f"{format_quantity(trip)} ({table['round_trip']['source']})")
    evidence = {"measured": quantity_json(rate), "processes": processes, "per_process": quantity_json(each),
                "round_trip": quantity_json(trip), "answer": quantity_json(answer), "needs": said,
                "source": table["round_trip"]["source"]}
    return Finding(
        "IMPLAUSIBLE-HARDWARE", Severity.WARNING, run.label,
        f"{operation} of {format_quantity(rate)} {said}.",
        "check the result (units, a count of operations over the wrong time, an aggregate counted twice) and the "
        "processes stated; or the clients changed the namespace without asking a server (a cache of their own)",
        evidence)
