"""Text for people: aligned tables, and the envelope of versioned JSON for machines."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence, TextIO

from probes.core.document import dumps, envelope
from probes.core.units import Q_, Metric, canonical, display_unit, format_percent, format_quantity, format_value
from assess.escapes import escaped
from assess.findings import Severity

if TYPE_CHECKING:
    from pint import Quantity, Unit

    from probes.core.run import Run
    from probes.core.stats import Summary
    from topologies.topology import Topology
    from assess.findings import Finding, Judgement

__all__ = ["table", "duration", "runs_table", "log_notes", "judgement_rows", "JUDGEMENT_HEADERS", "JUDGEMENT_RIGHT", "marks_legend", "share",
           "ratio_legend", "RATIO_LEGEND", "checked",
           "Fact", "facts", "as_given", "colour_wanted", "paint", "topology_rows", "TOPOLOGY_HEADERS", "envelope",
           "dumps"]

# The first column marks a run by its worst finding, an error apart from a warning; the legend says so.
JUDGEMENT_HEADERS = ("", "run", "measured", "ceiling", "ratio", "binding", "findings")
JUDGEMENT_RIGHT = (2, 3, 4)  # measured, ceiling and ratio are numbers
_MARKS = {Severity.ERROR: "✗", Severity.WARNING: "!"}
# ANSI colours of the severities, as pytest's and hyperfine's: errors red, warnings yellow.
_COLOURS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
TOPOLOGY_HEADERS = ("group", "kind", "count", "capacity", "per member (source)")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> str:
    """An aligned plain-text table; columns listed in ``right`` are right-aligned (numbers)."""
    widths = [max(_width(cell) for cell in column) for column in zip(headers, *rows)]

    def line(cells):
        return "  ".join(_pad(str(c), w, i in right) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(headers), line("-" * w for w in widths), *(line(r) for r in rows)])


def _width(cell) -> int:
    """The columns a cell takes on a terminal: its colours take none, a control character its escape's four."""
    return len(_ANSI.sub("", escaped(str(cell))))


def _pad(cell: str, width: int, right: bool) -> str:
    spaces = " " * (width - _width(cell))
    return spaces + cell if right else cell + spaces


def colour_wanted(choice: str, stream: TextIO) -> bool:
    """Whether to colour text for ``stream`` (``--color auto|always|never``): auto colours a terminal (not a dumb one)
    unless NO_COLOR is set to anything (https://no-color.org); an explicit ``always`` wins, as pytest's ``--color=yes``."""
    if choice != "auto":
        return choice == "always"
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb" and stream.isatty()


def paint(text: str, severity: Severity | None, colour: bool) -> str:
    """``text`` in the colour of ``severity`` (errors red, warnings yellow), or as it is without colour or for info."""
    start = _COLOURS.get(severity) if colour else None
    return f"{start}{text}\x1b[0m" if start else text


def runs_table(runs: list[Run]) -> str:
    """One row per run: its summary over repetitions, what it measured and where it was read.

    The figures of one metric share one unit, chosen once for the table: the unit its largest mean
    is shown in (as on a plot's axis). A column then compares at a glance, and a table of 20,000
    runs costs no choice of unit per figure.
    """
    summaries = [r.summary for r in runs]  # a property, computed anew at each use
    units = _column_units(runs, summaries)
    rows = []
    for r, s in zip(runs, summaries):
        unit = units[r.metric]

        def shown(x):
            return format_value(x, r.unit, unit)

        mean = shown(s.mean)
        spread = "" if s.std is None else f" ± {shown(s.std)}"
        ci = "-" if s.ci_low is None else f"{shown(s.ci_low)} - {shown(s.ci_high)}" + ("†" if s.bounded else "")
        tool = " ".join(x for x in (r.origin.tool, r.origin.tool_version) if x)
        mark = "‡" if dict(r.tags).get("inconsistent") else ""
        rows.append((r.label, mean + spread + mark, str(s.n) + ("" if r.samples else "*"), ci,
                     r.workload.describe() if r.workload else "-", tool, str(r.origin)))
    lines = [table(("run", "mean ± std", "n", "95% CI", "workload", "tool", "read from"), rows, right=(1, 2))]
    if any(not r.samples for r in runs):
        lines.append("* the tool printed only a summary of its repetitions (max, min, mean, std), not each one")
    if any(s.bounded for s in summaries):
        lines.append("† the interval's low end is bounded at 0: Student's t interval reaches below zero, which a "
                     "bandwidth, rate or latency cannot (its coverage is unchanged)")
    if any(dict(r.tags).get("inconsistent") for r in runs):
        lines.append("‡ the tool's output disagrees with itself (e.g. fio's bandwidth against its bytes over its "
                     "runtime): which figure is right is unknown; --json names both (check: INCONSISTENT-OUTPUT)")
    lines += log_notes(runs)
    return "\n".join(lines)


# What a job's log says of what its runs leave out, by tag (probes.readers.darshan): the text says it as --json does.
_LOG_NOTES = {"partial": "partial records", "unmodelled": "not judged"}


def log_notes(runs: Sequence[Run]) -> list[str]:
    """A blank line and what each job's log says of what its runs leave out (records cut short: counts that are lower
    bounds; I/O through modules iobound does not model), once per log; none where no log says so."""
    notes = dict.fromkeys(f"  {r.origin.path}: {said}: {text}" for r in runs for tag, said in _LOG_NOTES.items()
                          if (text := dict(r.tags).get(tag)))
    return ["", "what the jobs' logs leave out:", *notes] if notes else []


def _column_units(runs: list[Run], summaries: list[Summary]) -> dict[Metric, Unit]:
    """Per metric of ``runs``, the unit :func:`display_unit` picks for the largest of their means."""
    stated: dict[tuple[Metric, str], float] = {}  # the largest mean in each unit the runs state
    for r, s in zip(runs, summaries):
        stated[r.metric, r.unit] = max(stated.get((r.metric, r.unit), 0.0), abs(s.mean))
    largest: dict[Metric, Quantity] = {}
    for (metric, unit), value in stated.items():
        mean = Q_(value, unit)
        if metric not in largest or canonical(mean) > canonical(largest[metric]):
            largest[metric] = mean
    return {metric: display_unit(mean, metric) for metric, mean in largest.items()}


def judgement_rows(judgements: Sequence[Judgement], colour: bool = False) -> list[tuple[str, ...]]:
    """A row per judged run under :data:`JUDGEMENT_HEADERS`: its mark, measured, ceiling, ratio, what binds, finding
    codes; ``colour`` paints the mark and the codes of errors and warnings."""
    rows = []
    for j in judgements:
        worst = j.worst
        rows.append((paint(_MARKS.get(worst, ""), worst, colour), j.run.label, _measured(j),
                     "-" if j.ceiling is None else j.ceiling.shown,
                     "-" if j.ratio is None else share(j.ratio, j.ceiling.value, j.ceiling.least),
                     f"({j.no_ceiling})" if j.ceiling is None else j.ceiling.binds,
                     " ".join(paint(f.code, f.severity, colour) for f in j.findings)))
    return rows


def marks_legend(judgements: Sequence[Judgement]) -> str:
    """What the marks :func:`judgement_rows` gives ``judgements`` mean (``marks: ✗ a run with an error, ! a run with
    a warning (its worst finding)``), or nothing when it gives none."""
    worst = {j.worst for j in judgements}
    said = [f"{mark} a run with {'an' if s is Severity.ERROR else 'a'} {s.label}" for s, mark in _MARKS.items() if s in worst]
    return f"marks: {', '.join(said)} (its worst finding)" if said else ""


# What a share of a ceiling stated as a range (least–most) is over: its most, then its least.
RATIO_LEGEND = "ratio: measured over the ceiling; where it is a range (least–most), over its most–over its least"


def share(ratio: float, most: Quantity, least: Quantity | None = None) -> str:
    """A result's share of its ceiling (``ratio``: over its ``most``) in percent; where the ceiling is a range, over its
    most and over its ``least`` (``1–3%``, as :data:`RATIO_LEGEND` says); a share that rounds to 0 % with two digits."""
    over_most = format_percent(ratio)
    if least is None or ratio == 0:  # no range, or nothing measured
        return f"{over_most}%"
    over_least = format_percent(ratio * canonical(most) / canonical(least))
    return f"{over_most}%" if over_least == over_most else f"{over_most}–{over_least}%"


def ratio_legend(judgements: Sequence[Judgement]) -> str:
    """:data:`RATIO_LEGEND` where a judged run's ceiling is a range, else nothing."""
    return RATIO_LEGEND if any(j.ceiling is not None and j.ceiling.low is not None for j in judgements) else ""


@dataclass(frozen=True)
class Fact:
    """What one finding says of one or more runs, told once: ``message`` names no run where it holds for several
    ("each run" stands for their names), ``judgements`` are the runs it holds for, in the order judged."""

    finding: Finding
    message: str
    judgements: tuple[Judgement, ...]

    def runs(self, judged: int, most: int | None = None) -> str:
        """Which runs it holds for: the one's name, every run (all ``judged`` of them), their names, or past ``most``
        names their count."""
        if len(self.judgements) == 1:
            return self.finding.run
        if len(self.judgements) == judged:
            return "every run"
        if most is not None and len(self.judgements) > most:
            return f"{len(self.judgements)} runs (the table's findings column shows which)"
        return "; ".join(j.run.label for j in self.judgements)


def facts(judgements: Sequence[Judgement]) -> list[Fact]:
    """The findings of ``judgements`` worst first, those that say the same of several runs (the same code, severity,
    remedy and message but for the run's name) folded into one fact; among those of one severity, the ones that ask
    most of an assumed figure first (a read that needs 8.94 of 2 to 25 GB/s before a create that needs 19,860 of 4,000
    to 3.8 G op/s): a text that shows the first few of each kind shows those that say most."""
    found: dict[tuple, tuple[Finding, list[Judgement]]] = {}
    for j in judgements:
        for f in j.findings:
            key = (f.code, f.severity, f.remedy, f.message.replace(f.run, "\0") if f.run else f.message)
            found.setdefault(key, (f, []))[1].append(j)
    told = [Fact(f, f.message if len(js) == 1 else key[3].replace("\0", "each run"), tuple(js))
            for key, (f, js) in found.items()]
    return sorted(told, key=lambda fact: (-fact.finding.severity, -_asked(fact.finding)))


def _asked(finding: Finding) -> float:
    """How far towards its most favourable end the figure a finding asks most of must be (0: none asked)."""
    shares = [0.0]
    for implied in finding.implied or ():
        most = implied.stated.ends[1]
        needed, most = canonical(implied.needed), canonical(most)
        shares.append(most / needed if implied.stated.metric is Metric.LATENCY else needed / most)
    return max(shares)


def as_given(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each path in ``names`` (a file read) replaced by the word the user named it by (a bundled
    example's name rather than where it is installed)."""
    for path, word in sorted(names.items(), key=lambda item: -len(item[0])):
        if path != word:
            text = text.replace(path, word)
    return text


def checked(judgements: Sequence[Judgement], colour: bool = False) -> str:
    """``26 runs checked: 1 error, 46 warnings, 1 info``: the findings counted by severity, worst first (``colour``
    paints the errors and warnings found)."""
    counts = {s: sum(f.severity is s for j in judgements for f in j.findings) for s in reversed(Severity)}
    summary = ", ".join(paint(f"{n} {s.label}{'s' if n != 1 and s is not Severity.INFO else ''}", s if n else None,
                              colour) for s, n in counts.items())
    return f"{len(judgements)} run{'s' if len(judgements) != 1 else ''} checked: {summary}"


def _measured(j: Judgement) -> str:
    s = j.run.summary
    # measured is in the ceiling's metric (B/s for op/s of data), the run's value in its own
    shown = format_quantity(j.measured) if j.measured is not None else format_quantity(j.run.value, j.run.metric)
    return shown if s.n == 1 else f"{shown} (n={s.n})"


def topology_rows(topology: Topology) -> list[tuple[str, ...]]:
    """A row per capacity of each group (a group without any gets one) under :data:`TOPOLOGY_HEADERS`."""
    rows = [(g.name, g.kind.singular, str(g.count), key, str(c)) for g in topology.groups for key, c in g.capacities.items()]
    return rows + [(g.name, g.kind.singular, str(g.count), "-", "") for g in topology.groups if not g.capacities]


def duration(seconds: float) -> str:
    """A time as a person reads it: ``12.5 s``, ``41 min``, ``3.2 h``."""
    if seconds >= 7200:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.3g} s"
