"""PUBLISHED-BAND: a metadata phase beside the published io500 figures per server of its kind, as information.

What like systems measured is no ceiling (newer hardware is faster than every past run), so it never raises an
error or a warning; and a band never holds the judged system's own runs (:func:`band` leaves them out).
"""

from __future__ import annotations

import functools

from probes.core.run import Run
from probes.core.units import Q_, Metric, format_quantity, quantity_json
from topologies.catalogues.metadata_rates import Band, band
from assess.findings.ceiling import summary_in
from assess.findings.finding import Finding, Severity

__all__ = ["BAND_CODES", "band_finding"]

BAND_CODES = ("PUBLISHED-BAND",)


def _phase(label: str) -> str | None:
    """The io500 phase a run's label names as the table's sources do (``easy-write``, ``find``); None for another."""
    if label.startswith("find"):
        return "find"
    name = label.removeprefix("mdtest-")
    return name if name.split("-")[0] in ("easy", "hard") and name != label else None


@functools.lru_cache(maxsize=1024)
def _band(service: str, devices: str, phase: str, system: str) -> Band | None:
    """:func:`band`, found once for each: a list's review asks it of every metadata phase of every submission."""
    return band(service, devices, phase, system)


def band_finding(run: Run, service: str, devices: str, servers: int, system: str) -> Finding | None:
    """The run's rate per server beside the published band of its phase, service and devices (leaving out
    ``system``'s own runs); None for a run of no io500 metadata phase, or where no other system's figure is left."""
    phase = _phase(run.label)
    summary = summary_in(run, Metric.OPERATION_RATE)
    found = _band(service, devices, phase, system) if phase and summary is not None else None
    if found is None:
        return None
    measured = Q_(summary.mean / servers, "op/s")
    where = "within" if found.low <= measured <= found.high else "outside"
    own = ", leaving out this system's own" if found.left_out else ""
    shown = format_quantity(found.low) if found.low == found.high else \
        f"{format_quantity(found.low)} to {format_quantity(found.high)}"
    return Finding(
        "PUBLISHED-BAND", Severity.INFO, run.label,
        f"{run.label} of {format_quantity(measured)} per {found.basis} ({servers} of them) is {where} what "
        f"{found.systems} system(s) of {service} on {devices} devices published per {found.basis}, {shown} "
        f"(io500 lists{own}): typical figures, not a ceiling.",
        "for information only: a result outside the band is judged by its ceiling, not by the band",
        {"per_server": quantity_json(measured), "band_low": quantity_json(found.low),
         "band_high": quantity_json(found.high), "systems": found.systems, "left_out_own": found.left_out})
