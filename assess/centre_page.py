"""The html report of a centre's Darshan review (``review --darshan ... --html DIR``): how its jobs spread over the
fractions of their ceilings, the jobs that lost the most time against them, how often each finding fires, the stripe
settings in use, the file systems, and the logs not judged or unreadable; drawn and written by ``iobound report``'s
machinery (:mod:`assess.report`, :mod:`assess.plots`)."""

from __future__ import annotations

from pathlib import Path

import probes
from probes.core.outputs import new_folder
from probes.core.units import Q_, format_quantity
from assess import plots
from assess.centre import (BAND_HEADERS, BANDS, TOP_HEADERS, Centre, band_rows, most_first, top_rows)
from assess.darshan_review import JUDGED, UNJUDGED, Basis
from assess.findings import Severity
from assess.plotdata import Bars, Estimate
from assess.render import duration
from assess.report import FIGURES, Drawer, Report, Section, Table, to_html

__all__ = ["write_centre_page"]

_HOW = ("Each log is judged as iobound check judges it: the job's run that moved the most bytes against the ceiling "
        "of the resources it used (its OSTs, nodes and NICs, on its file system's topology). Its fraction is its rate "
        "over that ceiling's most; the time it lost is its I/O time beyond what the ceiling allows.")


def write_centre_page(centre: Centre, source: str, basis: Basis, directory: Path) -> Path:
    """Write index.html and its figures into the new folder ``directory``, which appears whole or not at all; returns
    the index."""
    with new_folder(directory) as staged:
        (staged / FIGURES).mkdir()
        report = _report(centre, source, basis, Drawer(staged))
        (staged / "index.html").write_text(to_html(report, staged), encoding="utf-8")
    return directory / "index.html"


def _report(centre: Centre, source: str, basis: Basis, draw: Drawer) -> Report:
    total = sum(centre.statuses.values())
    summary = (f"{total} logs ({centre.judged_now} judged now, {total - centre.judged_now} from the index): "
               f"{centre.by_status}. Judged on {basis.said}.")
    sections = [Section("Summary", (summary, _HOW))]
    if centre.statuses[JUDGED]:
        bands = Bars("jobs by the fraction of their ceiling they reached", "jobs",
                     tuple(Estimate(band, centre.bands[band], severity=Severity.ERROR if band == BANDS[-1] else None)
                           for band in BANDS))
        worst = centre.worst
        lost = Bars("the jobs that lost the most time against their ceilings", "time lost (s)",
                    tuple(Estimate(f"{r.job_id} {Path(r.path).name}", r.time_lost) for r in worst))
        sections += [
            Section("Jobs by the fraction of their ceiling", (
                draw("fractions", plots.plot_bars, bands, "The judged jobs per band of their rate over their ceiling's "
                     "most (red: above the ceiling, ABOVE-CEILING)."),
                Table(BAND_HEADERS, tuple(band_rows(centre)), "fractions", right=(1, 2)))),
            Section("Time lost against the ceilings", (
                f"{duration(centre.time_lost)} in all; the {len(worst)} jobs that lost the most:",
                draw("time-lost", plots.plot_bars, lost, "The jobs that lost the most time against their ceilings "
                     "(job id and log)."),
                Table(TOP_HEADERS, tuple(top_rows(centre)), "top", right=(0, 1), sortable=True)))]
    if centre.findings:
        found = most_first(centre.findings)
        sections.append(Section("Findings", (
            draw("findings", plots.plot_bars, Bars("how often each finding fires", "jobs",
                                                   tuple(Estimate(code, n) for code, n in found)),
                 "The jobs each finding fires for (a job counts once for each of its findings)."),
            Table(("finding", "jobs"), tuple((code, str(n)) for code, n in found), "findings", right=(1,)))))
    if centre.stripe_counts or centre.stripe_sizes:
        counts = sorted(centre.stripe_counts.items())
        sections.append(Section("Lustre stripe settings in use", (
            *([draw("stripe-counts", plots.plot_bars,
                    Bars("jobs per stripe count", "jobs", tuple(Estimate(f"{k} OSTs", n) for k, n in counts)),
                    "The jobs using each stripe count (a job counts once for each count among its files).")]
              if counts else []),
            Table(("stripe count", "jobs"), tuple((str(k), str(n)) for k, n in counts), "stripe-counts", right=(0, 1)),
            Table(("stripe size", "jobs"), tuple((format_quantity(Q_(k, "B")), str(n))
                                                 for k, n in sorted(centre.stripe_sizes.items())),
                  "stripe-sizes", right=(0, 1)))))
    if centre.file_systems:
        sections.append(Section("File systems", (
            "The jobs by the mount point under which they moved the most bytes.",
            Table(("file system", "jobs"), tuple((fs, str(n)) for fs, n in most_first(centre.file_systems)),
                  "file-systems", right=(1,)))))
    if centre.unjudged:
        sections.append(Section(f"Not judged ({centre.statuses[UNJUDGED]})", (
            Table(("jobs", "why"), tuple((str(n), why) for why, n in most_first(centre.unjudged)), "unjudged",
                  right=(0,)),), folded=True))
    if centre.unreadable:
        sections.append(Section(f"Unreadable logs ({len(centre.unreadable)})", (
            Table(("log", "why"), tuple(sorted(centre.unreadable)), "unreadable", sortable=True),), folded=True))
    return Report(f"iobound review: the Darshan logs of {Path(source).name}",
                  f"{source} · {total} logs · iobound {probes.__version__}", tuple(sections))
