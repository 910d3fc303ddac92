"""The html report of a reviewed list: its summary, the distribution of efficiencies per phase and the whole list in a
sortable table first, then the results above their stated hardware (errors), the phases possible only if the
hardware is better than its least (folded: thousands of rows), and a page per submission with its topology,
assumptions, ceilings and findings (in the style of ``iobound report``)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Sequence

from matplotlib.figure import Figure

import probes
from probes.core.outputs import new_folder
from probes.core.units import format_quantity
from assess import plots
from assess.plotdata import Estimate, Strips
from assess.render import TOPOLOGY_HEADERS, share, topology_rows
from assess.report import FIGURES, Plot, Report, Section, Table, to_html
from assess.review import UNJUDGED, VERDICTS, Phase, Reviewed

__all__ = ["write_pages", "efficiencies", "PAGES"]

PAGES = "submissions"  # the folder of the pages per submission, inside the report's
_PHASE_HEADERS = ("phase", "measured", "ceiling (least–most)", "efficiency", "verdict", "implies or why not judged")
_EFFICIENCY = ("Efficiency: the result over its ceiling's most, then over its least where the ceiling is a range "
               "(least–most): 0.012–100% is 0.012 % of the most and at the least.")
_LIST_HEADERS = ("id", "list", "status", "system", "file system", "clients", "data servers", "network", "judged",
                 "verdict", "strongest phase", "efficiency")



def write_pages(reviewed: Sequence[Reviewed], directory: Path, source: str) -> Path:
    """Write index.html, its figure and a page per submission into the new folder ``directory``, which appears whole
    or not at all; returns the index."""
    with new_folder(directory) as staged:
        (staged / FIGURES).mkdir()
        (staged / PAGES).mkdir()
        strips = efficiencies(reviewed, source)
        figure = Figure(figsize=plots.figure_size(strips), layout="constrained")
        plots.plot_strips(strips, figure.add_subplot())
        plots.save(figure, staged / FIGURES / "efficiencies")
        names = _page_names(reviewed)
        (staged / "index.html").write_text(to_html(_index(reviewed, source, dict(zip(map(id, reviewed), names))), staged),
                                           encoding="utf-8")
        for r, name in zip(reviewed, names):
            (staged / PAGES / name).write_text(to_html(_submission(r), staged), encoding="utf-8")
    return directory / "index.html"


def efficiencies(reviewed: Sequence[Reviewed], source: str) -> Strips:
    """Each judged phase's result over its ceiling's high end, per phase in io500's order, coloured by its verdict."""
    rows: dict[str, list[Estimate]] = {}
    for r in reviewed:
        for p in r.phases:
            if p.efficiency is not None and p.efficiency > 0:
                rows.setdefault(p.label, []).append(
                    Estimate(f"{r.submission.id} {p.label}", p.efficiency, severity=p.severity,
                             codes=(p.verdict,)))
    return Strips(f"{Path(source).name}: result / the ceiling's most, per phase", "efficiency (result / high ceiling)",
                  tuple((name, tuple(found)) for name, found in rows.items()), 1.0)


def _index(reviewed: Sequence[Reviewed], source: str, pages: dict[int, str]) -> Report:
    verdicts = Counter(r.verdict for r in reviewed)
    phases = Counter(p.verdict for r in reviewed for p in r.phases)
    order = (*VERDICTS, "within", UNJUDGED)
    summary = (f"{len(reviewed)} submissions; by their strongest verdict: "
               + ", ".join(f"{verdicts[v]} {v}" for v in order if verdicts[v])
               + ". Phases: " + ", ".join(f"{phases[v]} {v}" for v in order if phases[v]) + ".")
    how = ("Each submission's own hardware description (client nodes, data and metadata servers, devices, network) "
           "becomes a topology; every figure it does not state is a range (ports per node, what a device moves, "
           "whether a device count is per server or in all), so a phase is impossible (ABOVE-CEILING) only above "
           "the most its stated hardware allows at every range's favourable end. POSSIBLE-IF: within the ranges, "
           "if the hardware is better than its least; the column says what it needs. Metadata phases are judged "
           "by what bounds the servers (round trips, cores, the journal, one directory's lock, a find's reading: "
           "metadata_bounds.toml); the published io500 rates of their file system are shown beside them as "
           "information (PUBLISHED-BAND), never as a ceiling, and never with the system's own runs.")
    above = [(r, p) for r in reviewed for p in r.phases if p.verdict == "ABOVE-CEILING"]
    possible = [(r, p) for r in reviewed for p in r.phases if p.verdict in ("IMPLAUSIBLE-HARDWARE", "POSSIBLE-IF")]
    listing = Table(_LIST_HEADERS, tuple(_list_row(r) for r in reviewed), "list", right=(0, 5, 6, 11),
                    links=tuple(f"{PAGES}/{pages[id(r)]}" for r in reviewed), sortable=True)
    thin = Counter(r.thin for r in reviewed if r.thin)
    sections = [
        Section("Summary", (summary, how)),
        Section("Efficiency per phase", (Plot(f"{FIGURES}/efficiencies",
                                              "Each judged phase's result over the most its stated hardware allows "
                                              "(1: at that ceiling), coloured by its verdict."),)),
        Section("The list", ("Click a heading to sort; a submission's id opens its page.", listing, _EFFICIENCY)),
        Section("Results that need more than the stated hardware",
                (f"{len(above)} phase(s) above the most their stated hardware allows (ABOVE-CEILING, an error).",
                 *([_needs(above, pages, "above")] if above else ()))),
        Section(f"Results possible only if the hardware is better than its least ({len(possible)})",
                ("POSSIBLE-IF; IMPLAUSIBLE-HARDWARE where no part of its class that had shipped by its date was that "
                 "good. Click a heading to sort.", _needs(possible, pages, "needs")), folded=True),
    ]
    if thin:
        sections.append(Section(f"Too thin to judge ({sum(thin.values())})",
                                (Table(("submissions", "what the description lacks"),
                                       tuple((str(n), why) for why, n in thin.most_common()), "thin", right=(0,)),),
                                folded=True))
    return Report(f"iobound review: {Path(source).name}", f"{source} · {len(reviewed)} submissions · "
                  f"iobound {probes.__version__}", tuple(sections))


def _submission(r: Reviewed) -> Report:
    s, d = r.submission, r.described
    facts = (f"List {s.list_name}, status {s.status or '-'}; file system {s.description.get('filesystem_type') or '-'}; "
             f"{s.description.get('client_nodes') or '?'} client nodes x {s.description.get('client_procs_per_node') or '?'} "
             f"processes; data servers {s.description.get('ds_nodes') or '?'} with {s.description.get('ds_storage_devices') or '?'} "
             f"{s.description.get('ds_storage_type') or '?'} devices on {s.description.get('ds_network') or '?'}; "
             f"metadata servers {s.description.get('md_nodes') or '?'} ({s.description.get('md_storage_type') or '?'}).")
    assumed = ("unknown: no ior-easy-write or no client nodes" if r.assumption is None else str(r.assumption))
    sections = [Section("Submission", (facts, f"Verdict: {r.verdict}.", "io500's assumption that the easy write's "
                                       f"files exceed the clients' memory: {assumed}.", "← the list: ../index.html"))]
    if d.topology is not None:
        sections.append(Section("Topology from its description", (
            Table(TOPOLOGY_HEADERS, tuple(topology_rows(d.topology)), "system", (2,)),
            "Links: " + "; ".join(f"{link.a} – {link.b}" for link in d.topology.links) + ".")))
    sections.append(Section("Assumptions", tuple(d.assumptions) or ("none",)))
    if d.missing:
        sections.append(Section("Not stated", tuple(d.missing)))
    sections.append(Section("Phases", (Table(_PHASE_HEADERS, tuple(
        (p.label, "-" if p.measured is None else format_quantity(p.measured), _interval(p), _efficiency(p), p.verdict, p.implies or p.reason)
        for p in r.phases), "phases", right=(1, 3)), _EFFICIENCY)))
    findings = [f"{f.severity.label} {f.code} {j.run.label}: {f.message}" for j in r.judgements for f in j.findings
                if f.code in VERDICTS]
    if findings:
        sections.append(Section("Findings", tuple(findings)))
    return Report(f"{s.id}: {s.description.title}", f"io500 list {s.list_name} · iobound {probes.__version__}",
                  tuple(sections))


def _efficiency(p: Phase) -> str:
    """The result over its ceiling's most, and over its least where the ceiling is a range (:data:`_EFFICIENCY`)."""
    return "-" if p.efficiency is None else share(p.efficiency, p.high, p.low)


def _interval(p) -> str:
    if p.high is None:
        return "-"
    return format_quantity(p.high) if p.low == p.high else f"{format_quantity(p.low)}–{format_quantity(p.high)}"


def _needs(phases: list[tuple[Reviewed, Phase]], pages: dict[int, str], key: str) -> Table:
    """The phases that need more than the least of their stated hardware, each linked to its submission's page."""
    return Table(("id", "system", "phase", "measured", "ceiling (least–most)", "verdict", "implies"),
                 tuple(_need_row(r, p) for r, p in phases), key,
                 links=tuple(f"{PAGES}/{pages[id(r)]}" for r, _ in phases), sortable=True)


def _need_row(r: Reviewed, p) -> tuple[str, ...]:
    return (r.submission.id, r.submission.description.title, p.label, format_quantity(p.measured), _interval(p),
            p.verdict, p.implies)


def _list_row(r: Reviewed) -> tuple[str, ...]:
    d = r.submission.description
    phase = next((p for p in r.phases if p.verdict == r.verdict and p.high is not None), None)
    return (r.submission.id, r.submission.list_name, r.submission.status, d.title, d.get("filesystem_type"),
            d.get("client_nodes"), d.get("ds_nodes"), d.get("ds_network"),
            f"{sum(p.verdict != UNJUDGED for p in r.phases)}/{len(r.phases)}", r.verdict,
            "-" if phase is None else f"{phase.label} {format_quantity(phase.measured)}",
            "-" if phase is None else _efficiency(phase))


def _page_names(reviewed: Sequence[Reviewed]) -> list[str]:
    """Each submission's page: its id made safe as a file name, with its row where ids repeat or are empty."""
    safe = [re.sub(r"[^A-Za-z0-9_.-]", "_", r.submission.id) or "unnamed" for r in reviewed]
    counts = Counter(safe)
    return [f"{name}.html" if counts[name] == 1 else f"{name}-row{row}.html" for row, name in enumerate(safe, 1)]
