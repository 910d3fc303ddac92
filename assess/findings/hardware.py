"""IMPLAUSIBLE-HARDWARE: a run possible only if a part is faster than any part of its class that had shipped by the
system's date (the catalogue of achievable rates, :mod:`topologies.catalogues.achievable`)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Iterable, Mapping

from probes.core.units import Metric, Q_, format_quantity, quantity_json
from probes.core.workload import Operation
from assess.findings.bands import TOLERANCE
from assess.findings.ceiling import summary_in
from assess.findings.finding import Finding, Severity

if TYPE_CHECKING:
    from probes.core.run import Run
    from probes.core.workload import Workload
    from models.ceiling import Implied
    from models.ceiling import Ceiling
    from models.predict import Model
    from pint import Quantity

    from topologies.catalogues.achievable import Fastest, Parts

__all__ = ["implausible", "beyond"]

# What a drive's sequential rate bounds: its bandwidth, or its rate for the operation.
_DRIVE_KEYS = {Operation.READ: ("bandwidth", "read_bandwidth"), Operation.WRITE: ("bandwidth", "write_bandwidth")}


def implausible(run: Run, possible: Finding, ceiling: Ceiling, model: Model, clients: tuple[str, ...] | None,
                parts: Mapping[str, Parts], tolerance: float = TOLERANCE) -> Finding | None:
    """IMPLAUSIBLE-HARDWARE where a POSSIBLE-IF (``possible``) needs more of one part (a drive, a port) than the
    fastest part of its class that had shipped by the system's date achieves, every other assumed figure unlimited;
    None where every part it needs existed (or no part's class and date are known).

    What the POSSIBLE-IF implies of a figure, the others at their most, is at least what it needs with the others
    unlimited (see :func:`beyond`)."""
    operation = ceiling.workload.operation
    if ceiling.metric is not Metric.BANDWIDTH:
        return None
    target = summary_in(run, Metric.BANDWIDTH).max
    found = beyond(ceiling.workload, possible.implied or (), target, model, clients, parts, tolerance)
    if not found:
        return None
    said = "; ".join(_said(operation.value, *each) for each in found)
    evidence = {"measured": quantity_json(Q_(target, "B/s")), "needs": said,
                "implausible": [{"component": str(place), "needed": quantity_json(needed), "per_part": quantity_json(each),
                                 "parts_per_member": part.most, "year": part.year, "dated": part.dated,
                                 "fastest": best.part.name, "fastest_year": best.part.year,
                                 "fastest_rate": quantity_json(best.rate), "source": best.part.source}
                                for place, part, needed, each, best in found]}
    return Finding(
        "IMPLAUSIBLE-HARDWARE", Severity.WARNING, run.label,
        f"{operation.value} of {format_quantity(Q_(target, 'B/s'))} {said}.",
        "check the result (units, a cache, an aggregate counted twice) and the description's parts and dates: no part "
        "of the class it names did this much by then", evidence)


def beyond(workload: Workload, implied: Iterable[Implied], target: float, model: Model,
           clients: tuple[str, ...] | None, parts: Mapping[str, Parts], tolerance: float = TOLERANCE) -> list[tuple]:
    """Of the figures a run at ``target`` (B/s) ``implied`` of its parts, those that need more of one part than the
    fastest of its class by the system's date achieves, every other assumed figure unlimited: (component, parts,
    needed per member, needed per part, fastest part) each.

    What is implied of a figure, the others at their most, is at least what it needs with the others unlimited:
    where that is within its range and a part of the date reaches it, the model is not asked again."""
    from models.implied import alone

    operation = workload.operation
    if operation not in (Operation.READ, Operation.WRITE):
        return []
    found = []
    for need in implied:
        place = need.component
        part = parts.get(place.group)
        if part is None or place.key != {"port": "nic"}.get(part.kind) and place.key not in _DRIVE_KEYS[operation]:
            continue
        best, most = _fastest(part, operation.value, tolerance)
        within = need.needed < need.stated.ends[1]  # not held at its range's end: an upper bound on the need
        if best is None or within and Q_(need.needed.magnitude / part.most, need.needed.units) <= most:
            continue
        needed = alone(model, workload, clients, target, place)
        if needed is not None and needed / part.most > best.rate * (1 + tolerance):
            found.append((place, part, needed, needed / part.most, best))
    return found


@functools.lru_cache(maxsize=1024)
def _fastest(part: Parts, operation: str, tolerance: float) -> tuple[Fastest | None, Quantity | None]:
    """The fastest part of its class (:func:`fastest`) and the most a need per part may be within ``tolerance`` of it,
    found once: a list's review asks it of every witness of a system, on each of its submissions."""
    from topologies.catalogues.achievable import fastest  # the catalogue loads for a check with a system's parts alone

    best = fastest(part, operation)
    return best, None if best is None else best.rate * (1 + tolerance)


def _shown(q) -> str:
    """A rate in decimal units, as data sheets give them: GB/s, or MB/s under 1 GB/s."""
    return format_quantity(q, unit="GB/s" if q >= Q_(1, "GB/s") else "MB/s")


def _said(operation: str, place, part: Parts, needed, each, best) -> str:
    """``needs ≥ 8.3 GB/s per NVMe drive (...); the fastest NVMe drive shipping by 2019 (...) reads 3.5 GB/s``."""
    share = "" if part.most == 1 else f" ({_shown(needed)} per {place.group} member over at most {part.most} of them)"
    when = f"by {part.year} ({part.dated})" if part.year is not None else f"to date ({part.dated})"
    verb = {"drive": "reads" if operation == "read" else "writes", "port": "carries"}[part.kind]
    return (f"needs ≥ {_shown(each)} per {part.said}{share}, every other assumed figure unlimited; the fastest "
            f"{part.said} shipping {when}, {best}, {verb} {_shown(best.rate)} ({best.part.source})")
