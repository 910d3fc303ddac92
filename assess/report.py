"""A report of a system and its runs: the system, the ceilings and formulas, the runs with their findings, plots.

:func:`build_report` assesses and draws (the figures are saved as PNG and SVG);
:func:`to_html` gives one page that needs no other file (the PNGs are inlined) and
:func:`to_markdown` the same text, its figures linked as SVG files.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from matplotlib.figure import Figure as MplFigure

import probes
from probes.measurement import Measurement
from probes.units import format_quantity
from models.predict import Model
from topologies.topology import Topology
from assess import figures, plots
from assess.findings import CODES, Judgement, Severity
from assess.render import JUDGEMENT_HEADERS, TOPOLOGY_HEADERS, judgement_rows, topology_rows

__all__ = ["Table", "Plot", "Section", "Report", "build_report", "to_html", "to_markdown", "MOST_PLOTS", "FIGURES"]

# Rooflines and scaling plots drawn at most, each: one per family of runs, the first ones.
MOST_PLOTS = 6
# The folder of the figures, inside the report's.
FIGURES = "figures"


@dataclass(frozen=True)
class Table:
    """A table; ``key`` names it in the page (``id``), ``right`` lists the columns of numbers."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    key: str = ""
    right: tuple[int, ...] = ()


@dataclass(frozen=True)
class Plot:
    """A figure saved as ``stem``.png and ``stem``.svg (relative to the report), with its caption."""

    stem: str
    caption: str


@dataclass(frozen=True)
class Section:
    """A heading and its blocks: paragraphs (str), tables and plots, in order."""

    heading: str
    blocks: tuple[str | Table | Plot, ...]


@dataclass(frozen=True)
class Report:
    title: str
    subtitle: str
    sections: tuple[Section, ...]


def build_report(topology: Topology, judgements: Sequence[Judgement], directory: Path, *,
                 measurements: Sequence[Measurement] = (), clients: tuple[str, ...] | None = None) -> Report:
    """The report's sections, its figures saved under ``directory``/figures (which must exist)."""
    model = Model(topology)
    draw = _Drawer(directory)
    judged = [j for j in judgements if j.ceiling is not None]
    common = max(judged, key=lambda j: sum(k.ceiling.binding == j.ceiling.binding for k in judged), default=None)
    system = [f"{topology.description}" if topology.description else "",
              Table(TOPOLOGY_HEADERS, tuple(topology_rows(topology)), "system", (2,)),
              "Links: " + "; ".join(f"{link.a} – {link.b}" + (f" ({link.bandwidth})" if link.bandwidth else "")
                                    for link in topology.links) + ".",
              draw("topology", plots.plot_drawing, figures.drawing(topology, common.ceiling if common else None),
                   "The system along the write path; in red, what binds the most runs' ceiling.")]
    sections = [Section("System", tuple(b for b in system if b))]
    same: dict[tuple[str, ...], list[str]] = {}  # workloads with one ceiling, formula and numbers share a row
    for c in {j.ceiling.workload: j.ceiling for j in judged}.values():
        key = (format_quantity(c.value), ", ".join(c.binding_layers), ", ".join(c.binding), c.formula, c.numbers)
        same.setdefault(key, []).append(c.workload.describe())
    sections.append(Section("Ceilings", (
        "What the workloads of the runs can reach at most, the layer and components that bind, and why.",
        Table(("workloads", "ceiling", "binding", "components", "formula", "numbers"),
              tuple(("; ".join(workloads), *key) for key, workloads in same.items()), "ceilings", (1,)),
        *(f"Assumed: {a}" for a in sorted({a for j in judged for a in j.ceiling.assumptions})),
    )))
    sections.append(_runs_section(judgements, draw, topology.name))
    sections.append(_sweeps(model, judgements, draw, clients))
    if measurements:
        charts = figures.probe_charts(measurements, topology.name)
        sections.append(Section("Probes", tuple(
            draw(f"probes-{i}", plots.plot_dots, chart, "Mean of each probe with its 95 % confidence interval.")
            for i, chart in enumerate(charts, 1))))
    return Report(f"iobound report: {topology.name}", f"{topology.path} · {len(judgements)} runs · "
                  f"iobound {probes.__version__}", tuple(sections))


def _runs_section(judgements: Sequence[Judgement], draw: _Drawer, system: str) -> Section:
    """The runs' table, every finding worst first with the remedies, and measured / ceiling per run."""
    findings = sorted((f for j in judgements for f in j.findings), key=lambda f: (-f.severity, CODES.index(f.code)))
    blocks: list = [Table(JUDGEMENT_HEADERS, tuple(judgement_rows(judgements)), "runs", (1, 2, 3))]
    counts = ", ".join(f"{sum(f.severity is s for f in findings)} {s.label}" for s in reversed(Severity))
    blocks.append(f"{len(judgements)} runs checked: {counts}.")
    if findings:
        blocks.append(Table(("severity", "code", "run", "message"),
                            tuple((f.severity.label, f.code, f.run, f.message) for f in findings), "findings"))
        remedies = dict.fromkeys((f.code, f.remedy) for f in findings)
        blocks.append(Table(("code", "what to do"), tuple(remedies), "remedies"))
    dots = figures.ratios(judgements, system)
    if dots.rows:
        blocks.append(draw("ratios", plots.plot_dots, dots, "Each run against its ceiling (1 is the ceiling, the "
                           "band its noise): red is impossible, orange worth a look."))
    return Section("Runs", tuple(blocks))


def _sweeps(model: Model, judgements: Sequence[Judgement], draw: _Drawer, clients) -> Section:
    """Rooflines over transfer size and ceilings over node count, a plot per family of runs (the first ones)."""
    blocks: list = []
    for over, prepare, what in (("transfer_size", figures.roofline, "roofline"), ("nodes", figures.scaling, "nodes")):
        found = [(family, js) for family, js in figures.families(judgements, over).items()
                 if not family.operation.is_metadata or over == "nodes"]
        for i, (family, js) in enumerate(found[:MOST_PLOTS], 1):
            caption = ("Every layer's ceiling over the transfer size (the thick line is the least), dashed where a "
                       "cache could serve, and the runs measured." if over == "transfer_size" else
                       "The ceiling over the client nodes, every layer's limit, the knee where adding nodes stops "
                       "helping, and the runs measured.")
            blocks.append(draw(f"{what}-{i}", plots.plot_chart, prepare(model, family, js, clients=clients), caption))
        if len(found) > MOST_PLOTS:
            blocks.append(f"{len(found) - MOST_PLOTS} more families of runs are not drawn here.")
    return Section("Over transfer size and node count", tuple(blocks) or ("No run has a transfer size or node count.",))


class _Drawer:
    """Draws a figure with a plot function, saves it under the report's figures folder, and returns its Plot."""

    def __init__(self, directory: Path):
        self.directory = directory

    def __call__(self, name: str, plot: Callable, data, caption: str) -> Plot:
        size = (7.5, 4.5) if plot is plots.plot_chart else (7.5, 1.2 + 0.32 * len(getattr(data, "rows", ())) or 3)
        figure = MplFigure(figsize=size, layout="constrained")
        plot(data, figure.add_subplot())
        plots.save(figure, self.directory / FIGURES / name)
        return Plot(f"{FIGURES}/{name}", caption)


def to_html(report: Report, directory: Path) -> str:
    """One page with its styles and images inside it (PNG as data URIs), so that it opens from anywhere."""
    esc = html.escape
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(report.title)}</title>",
             f"<style>{_STYLE}</style></head><body>", f"<h1>{esc(report.title)}</h1>",
             f"<p class=\"sub\">{esc(report.subtitle)}</p>"]
    for section in report.sections:
        parts.append(f"<h2>{esc(section.heading)}</h2>")
        for block in section.blocks:
            if isinstance(block, Table):
                head = "".join(f"<th>{esc(h)}</th>" for h in block.headers)
                body = "".join("<tr>" + "".join(f"<td{' class=num' if i in block.right else ''}>{esc(c)}</td>"
                                                for i, c in enumerate(row)) + "</tr>" for row in block.rows)
                parts.append(f"<table id=\"{esc(block.key)}\"><thead><tr>{head}</tr></thead>"
                             f"<tbody>{body}</tbody></table>")
            elif isinstance(block, Plot):
                data = base64.b64encode((directory / f"{block.stem}.png").read_bytes()).decode("ascii")
                parts.append(f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{esc(block.caption)}\">"
                             f"<figcaption>{esc(block.caption)} <a href=\"{esc(block.stem)}.svg\">SVG</a></figcaption>"
                             "</figure>")
            else:
                parts.append(f"<p>{esc(block)}</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def to_markdown(report: Report) -> str:
    """The same report in Markdown, its figures linked as the SVG files beside it."""
    lines = [f"# {report.title}", "", report.subtitle, ""]
    for section in report.sections:
        lines += [f"## {section.heading}", ""]
        for block in section.blocks:
            if isinstance(block, Table):
                lines.append("| " + " | ".join(block.headers) + " |")
                rule = ("---:" if i in block.right else "---" for i in range(len(block.headers)))
                lines.append("|" + "|".join(rule) + "|")
                lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.rows]
            elif isinstance(block, Plot):
                lines.append(f"![{block.caption}]({block.stem}.svg)")
            else:
                lines.append(block)
            lines.append("")
    return "\n".join(lines)


def _cell(text: str) -> str:
    """A table cell's text with what would break a Markdown row escaped."""
    return text.replace("|", "\\|").replace("\n", " ")


_STYLE = ("body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}"
          "table{border-collapse:collapse;margin:1em 0;font-size:90%}"
          "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}"
          "td.num{text-align:right;white-space:nowrap}th{background:#eee}.sub{color:#666}"
          "figure{margin:1em 0}img{max-width:100%}figcaption{font-size:90%;color:#444}")
