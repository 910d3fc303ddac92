"""A report of a system and its runs: the system, the ceilings and formulas, the runs with their findings, plots.

:func:`build_report` assesses and draws (the figures are saved as PNG, and as SVG where asked);
:func:`to_html` gives one page that needs no other file (the PNGs are inlined) and
:func:`to_markdown` the same text, its figures linked as SVG files (PNG where no SVG was drawn).
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from matplotlib.figure import Figure as MplFigure

import probes
from probes.core.errors import InputError
from probes.core.measurement import Measurement
from models.predict import Model
from topologies.topology import Component, Topology
from assess import plotdata, plots
from assess.findings import TOLERANCE, Judgement
from assess.render import (JUDGEMENT_HEADERS, JUDGEMENT_RIGHT, TOPOLOGY_HEADERS, checked, facts, judgement_rows,
                           marks_legend, ratio_legend, topology_rows)

__all__ = ["Table", "Plot", "Section", "Report", "Drawer", "build_report", "to_html", "to_markdown", "MOST_PLOTS",
           "MOST_ROWS", "FIGURES", "PNG_ONLY"]

# Rooflines and node plots drawn at most, each: one per family of runs, those with the most runs.
MOST_PLOTS = 6
# Runs drawn at most against their ceilings: the most severe findings, then the farthest from it.
MOST_ROWS = 60
# The folder of the figures, inside the report's.
FIGURES = "figures"
# What a page says under plots drawn as PNG alone.
PNG_ONLY = ("The plots are PNG images, inside this page and in its figures folder; iobound report with --svg writes "
            "each as an SVG file there too.")


@dataclass(frozen=True)
class Table:
    """A table; ``key`` names it in the page (``id``), ``right`` lists the columns of numbers."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    key: str = ""
    right: tuple[int, ...] = ()
    links: tuple[str, ...] = ()  # per row, where its first cell leads (a page of its own), in the html only
    sortable: bool = False  # in the html, a click on a heading sorts the rows by that column


@dataclass(frozen=True)
class Plot:
    """A figure saved as ``stem``.png and, with ``svg``, ``stem``.svg (relative to the report), with its caption."""

    stem: str
    caption: str
    svg: bool = True


@dataclass(frozen=True)
class Section:
    """A heading and its blocks: paragraphs (str), tables and plots, in order; ``folded`` in the html, closed until
    its heading is clicked (a long table that should not come before what matters)."""

    heading: str
    blocks: tuple[str | Table | Plot, ...]
    folded: bool = False


@dataclass(frozen=True)
class Report:
    """What :func:`to_html` and :func:`to_markdown` render: a title, a line under it, and the sections."""

    title: str
    subtitle: str
    sections: tuple[Section, ...]


def build_report(topology: Topology, judgements: Sequence[Judgement], directory: Path, *,
                 measurements: Sequence[Measurement] = (), clients: tuple[str, ...] | None = None,
                 tolerance: float = TOLERANCE, svg: bool = True) -> Report:
    """The report's sections, its figures saved under ``directory``/figures (which must exist), as SVG too with
    ``svg``."""
    model = Model(topology)
    draw = Drawer(directory, svg)
    judged = [j for j in judgements if j.ceiling is not None]
    sections = [_system(topology, judged, draw), _ceilings(judged),
                _runs(judgements, draw, topology.name, tolerance), _sweeps(model, judgements, draw, clients)]
    if any(j.part is not None for j in judgements):
        sections.append(_jobs(model, judgements, draw, clients, tolerance))
    if measurements:
        hosts = ", ".join(sorted({m.provenance.host.hostname for m in measurements}))
        sections.append(Section("Probes", tuple(
            draw(f"probes-{i}", plots.plot_dots, chart, f"Mean of each probe on {hosts} with its 95 % interval.")
            for i, chart in enumerate(plotdata.probe_charts(measurements, hosts), 1))))
    return Report(f"iobound report: {topology.name}", f"{topology.path} · {len(judgements)} runs · "
                  f"iobound {probes.__version__}", tuple(sections))


def _system(topology: Topology, judged: list[Judgement], draw: Drawer) -> Section:
    """The groups and their capacities with sources, the links, and the drawing with what binds most runs."""
    binding: dict[tuple[Component, ...], list[Judgement]] = {}
    for j in judged:
        binding.setdefault(j.ceiling.binding, []).append(j)
    common = max(binding.values(), key=len)[0].ceiling if binding else None
    links = "; ".join(f"{link.a} – {link.b}" + (f" ({link.bandwidth})" if link.bandwidth else "")
                      for link in topology.links)
    blocks = [topology.description, Table(TOPOLOGY_HEADERS, tuple(topology_rows(topology)), "system", (2,)),
              f"Links: {links}.",
              draw("topology", plots.plot_drawing, plotdata.drawing(topology, common),
                   "The system along the write path; in red, what binds the ceiling of the most runs.")]
    return Section("System", tuple(b for b in blocks if b))


def _ceilings(judged: list[Judgement]) -> Section:
    """A row per distinct ceiling (workloads that share one share a row), and every assumption once."""
    same: dict[tuple[str, ...], list[str]] = {}
    for c in {j.ceiling.workload: j.ceiling for j in judged}.values():
        numbers = c.numbers if c.low is None else f"{c.numbers}; at the ranges' least: {c.low.numbers}"
        key = (c.shown, ", ".join(c.binding_layers), c.marked(c.binding), c.formula, numbers)
        same.setdefault(key, []).append(c.workload.describe())
    if not same:
        return Section("Ceilings", ("No run has a ceiling on this system: the runs table says why for each.",))
    return Section("Ceilings", (
        "What the workloads of the runs can reach at most, the layer and components that bind, and why.",
        Table(("workloads", "ceiling", "binding", "components", "formula", "numbers"),
              tuple(("; ".join(workloads), *key) for key, workloads in same.items()), "ceilings", (1,)),
        *(f"Assumed: {a}" for a in sorted({a for j in judged for a in j.ceiling.assumptions})),
    ))


def _runs(judgements: Sequence[Judgement], draw: Drawer, system: str, tolerance: float) -> Section:
    """The runs' table, every finding worst first (one that several runs share once) with the remedies, and
    measured / ceiling per run."""
    told = facts(judgements)
    legends = [legend + "." for legend in (marks_legend(judgements), ratio_legend(judgements)) if legend]
    blocks: list = [Table(JUDGEMENT_HEADERS, tuple(judgement_rows(judgements)), "runs", JUDGEMENT_RIGHT),
                    *legends, checked(judgements) + "."]
    if told:
        blocks.append(Table(("severity", "code", "run", "message"),
                            tuple((t.finding.severity.label, t.finding.code, t.runs(len(judgements)), t.message)
                                  for t in told), "findings"))
        blocks.append(Table(("code", "what to do"),
                            tuple(dict.fromkeys((t.finding.code, t.finding.remedy) for t in told)), "remedies"))
    rated = [j for j in judgements if j.ratio is not None]
    if len(rated) > MOST_ROWS:
        worst = sorted(rated, key=lambda j: (-max((f.severity for f in j.findings), default=0),
                                             -abs(math.log(j.ratio)) if j.ratio > 0 else -math.inf))[:MOST_ROWS]
        chosen = {id(j) for j in worst}
        rated = [j for j in rated if id(j) in chosen]  # in the table's order
        blocks.append(f"The plot below shows the {MOST_ROWS} runs of the most severe findings, farthest from "
                      "their ceilings; the table above has them all.")
    dots = plotdata.ratios(rated, system, tolerance)
    if dots.rows:
        blocks.append(draw("ratios", plots.plot_dots, dots, f"Each run against its ceiling (1 is the ceiling, the "
                           f"band ± {tolerance:.0%} its noise): red is impossible, orange worth a look."))
    return Section("Runs", tuple(blocks))


def _sweeps(model: Model, judgements: Sequence[Judgement], draw: Drawer, clients) -> Section:
    """Rooflines over the transfer sizes of each family of runs, and ceilings over node count with the knee."""
    blocks: list = []
    found = [(f, js) for f, js in plotdata.families(judgements, "transfer_size").items() if not f.operation.is_metadata]
    for i, (family, js) in enumerate(found[:MOST_PLOTS], 1):
        blocks.append(draw(f"roofline-{i}", plots.plot_chart, plotdata.roofline(model, family, js, clients=clients),
                           "Every layer's ceiling over the transfer size (the grey band is the least), dashed where "
                           "a cache could serve, and the runs measured."))
    # when no run sweeps the node count, the largest family shows where more nodes would stop helping
    swept = plotdata.families(judgements, "nodes") or dict(list(plotdata.families(judgements, "nodes", least=1).items())[:1])
    drawn = 0
    for family, js in swept.items():
        if drawn == MOST_PLOTS:
            break
        try:
            chart = plotdata.scaling(model, family, js, clients=clients)
        except InputError as exc:  # several client groups: the node count is one group's
            blocks.append(f"No plot over node count for {family.describe()}: {exc.detail}.")
            continue
        drawn += 1
        blocks.append(draw(f"nodes-{drawn}", plots.plot_chart, chart, "The ceiling over the client nodes, every "
                           "layer's limit, the knee where adding nodes stops helping, and the runs measured."))
    left = max(0, len(found) - MOST_PLOTS) + max(0, len(swept) - MOST_PLOTS)
    if left:
        blocks.append(f"{left} more families of runs are not drawn here.")
    return Section("Over transfer size and node count", tuple(blocks) or (
        "No runs of one workload differ in transfer size or node count, and none has a ceiling to draw over them.",))


def _jobs(model: Model, judgements: Sequence[Judgement], draw: Drawer, clients, tolerance: float) -> Section:
    """Per job (a Darshan log): the part of the system it was judged over, each module's bandwidth against its
    ceiling, and its requests by size under the roofline of that part."""
    jobs: dict[str, list[Judgement]] = {}
    for j in judgements:
        if j.part is not None:
            jobs.setdefault(j.run.origin.path, []).append(j)
    blocks: list = ["What each job did against what the part of the system it could use allows. The bandwidths are "
                    "Darshan's totals (all a module's bytes over its slowest process's I/O time): the DXT traces some "
                    "logs hold are not read, so there is no plot over time."]
    models: dict[int, Model] = {id(model.topology): model}
    for number, (path, found) in enumerate(list(jobs.items())[:MOST_PLOTS], 1):
        run = found[0].run
        blocks.append(f"{path}: job {run.job.job_id}, {run.placement.processes} processes, judged over "
                      f"{found[0].part.said}.")
        dots = plotdata.ratios(found, path.rsplit("/", 1)[-1], tolerance)
        if dots.rows:
            blocks.append(draw(f"job-{number}", plots.plot_dots, dots, "Each module's bandwidth against its ceiling "
                               f"(1 is the ceiling, the band ± {tolerance:.0%} its noise)."))
        part = models.setdefault(id(found[0].part.topology), Model(found[0].part.topology))
        for i, j in enumerate(found, 1):
            sizes = plotdata.access_sizes(part, j, clients=clients)
            if sizes is not None:
                blocks.append(draw(f"job-{number}-sizes-{i}", plots.plot_sizes, sizes, f"{j.run.label}: the requests "
                                   "Darshan counted per size bin (bars) under every layer's ceiling over the transfer "
                                   "size, and the job's bandwidth at its dominant size."))
    if len(jobs) > MOST_PLOTS:
        blocks.append(f"{len(jobs) - MOST_PLOTS} more jobs are not drawn here; the runs table has them all.")
    return Section("Applications (Darshan logs)", tuple(blocks))


class Drawer:
    """Draws a figure with a plot function, saves it under the report's figures folder (as SVG too with ``svg``), and
    returns its Plot."""

    def __init__(self, directory: Path, svg: bool = True):
        self.directory, self.svg = directory, svg

    def __call__(self, name: str, plot: Callable, data, caption: str) -> Plot:
        figure = MplFigure(figsize=plots.figure_size(data))
        plot(data, figure.add_subplot())
        plots.save(figure, self.directory / FIGURES / name, svg=self.svg)
        return Plot(f"{FIGURES}/{name}", caption, self.svg)


def to_html(report: Report, directory: Path) -> str:
    """One page with its styles and images inside it (PNG as data URIs), so that it opens from anywhere."""
    esc = html.escape
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(report.title)}</title>",
             f"<style>{_STYLE}</style></head><body>", f"<h1>{esc(report.title)}</h1>",
             f"<p class=\"sub\">{esc(report.subtitle)}</p>"]
    for section in report.sections:
        heading = f"<h2>{esc(section.heading)}</h2>"
        parts.append(f"<details><summary>{heading}</summary>" if section.folded else heading)
        for block in section.blocks:
            if isinstance(block, Table):
                parts.append(_html_table(block))
            elif isinstance(block, Plot):
                data = base64.b64encode((directory / f"{block.stem}.png").read_bytes()).decode("ascii")
                link = f" <a href=\"{esc(block.stem)}.svg\">SVG</a>" if block.svg else ""
                parts.append(f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{esc(block.caption)}\">"
                             f"<figcaption>{esc(block.caption)}{link}</figcaption></figure>")
            else:
                parts.append(f"<p>{esc(block)}</p>")
        if section.folded:
            parts.append("</details>")
    if any(isinstance(b, Plot) and not b.svg for section in report.sections for b in section.blocks):
        parts.append(f"<p class=\"sub\">{esc(PNG_ONLY)}</p>")
    if any(isinstance(b, Table) and b.sortable for section in report.sections for b in section.blocks):
        parts.append(f"<script>{_SORT}</script>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _html_table(block: Table) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in block.headers)
    rows = []
    for number, row in enumerate(block.rows):
        cells = [esc(c) for c in row]
        if number < len(block.links) and block.links[number]:
            cells[0] = f"<a href=\"{esc(block.links[number])}\">{cells[0]}</a>"
        rows.append("<tr>" + "".join(f"<td{' class=num' if i in block.right else ''}>{c}</td>"
                                     for i, c in enumerate(cells)) + "</tr>")
    return (f"<table id=\"{esc(block.key)}\"{' class=sortable' if block.sortable else ''}><thead><tr>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def to_markdown(report: Report) -> str:
    """The same report in Markdown, its figures linked as the SVG files beside it (the PNG ones where no SVG was
    drawn); user text is escaped."""
    lines = [f"# {_md(report.title)}", "", _md(report.subtitle), ""]
    for section in report.sections:
        lines += [f"## {_md(section.heading)}", ""]
        for block in section.blocks:
            if isinstance(block, Table):
                lines.append("| " + " | ".join(map(_md, block.headers)) + " |")
                rule = ("---:" if i in block.right else "---" for i in range(len(block.headers)))
                lines.append("|" + "|".join(rule) + "|")
                lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in block.rows]
            elif isinstance(block, Plot):
                lines.append(f"![{_md(block.caption)}]({block.stem}.{'svg' if block.svg else 'png'})")
            else:
                lines.append(_md(block))
            lines.append("")
    if any(isinstance(b, Plot) and not b.svg for section in report.sections for b in section.blocks):
        lines += [_md(PNG_ONLY), ""]
    return "\n".join(lines)


def _md(text: str) -> str:
    """Text shown as it is in Markdown: its markup characters escaped (CommonMark), line breaks as spaces."""
    return re.sub(r"([\\`*_\[\]<>#|!&])", r"\\\1", text).replace("\n", " ")


_STYLE = ("body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}"
          "table{border-collapse:collapse;margin:1em 0;font-size:90%}"
          "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}"
          "td.num{text-align:right;white-space:nowrap}th{background:#eee}.sub{color:#666}"
          "figure{margin:1em 0}img{max-width:100%}figcaption{font-size:90%;color:#444}"
          "table.sortable th{cursor:pointer}table.sortable th:after{content:' \\2195';color:#999}"
          "summary{cursor:pointer}summary h2{display:inline}")
# Sorts a table.sortable by the clicked column: numbers (their leading figure, commas ignored) before text, each in
# order; a second click reverses.
_SORT = ("document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){"
         "var col=th.cellIndex,body=th.closest('table').tBodies[0],rows=Array.from(body.rows),"
         "down=th.dataset.down!=='1';th.dataset.down=down?'1':'0';function key(r){var t=r.cells[col].textContent.trim(),"
         "n=parseFloat(t.replace(/,/g,''));return isNaN(n)?[1,t.toLowerCase()]:[0,n];}"
         "rows.sort(function(a,b){var x=key(a),y=key(b);if(x[0]!==y[0])return x[0]-y[0];"
         "return (x[1]<y[1]?-1:x[1]>y[1]?1:0)*(down?1:-1);});rows.forEach(function(r){body.appendChild(r);});});});")
