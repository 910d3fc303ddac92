"""Judge a whole io500 list: every submission's phases against the hardware its own description states.

Each row's description becomes a topology (every unstated figure a range: ``iobound topology
from-io500`` shows one); its phases are judged as ``check`` judges any run. One line per
submission; below the table, the phases that need more than the stated hardware (ABOVE-CEILING, an
error: exit 1), then those that need more of a drive or port than any part of its class had done by the
system's date (IMPLAUSIBLE-HARDWARE). Metadata phases are judged by what bounds the servers; the published
io500 rates of their kind are shown beside them as information (PUBLISHED-BAND), never with the submission's
own runs.
Example:  iobound review io500-db-2017-2019_submissions.csv --html list-report
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from assess.cli.darshan_review import add_darshan_arguments
from assess.cli.inputs import add_input_limit
from assess.cli.status import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from assess.review import Reviewed

_FAIL_ON = ("info", "warning", "error", "never")
_CSV_HEADERS = ("id", "list", "status", "system", "filesystem", "phase", "measured", "unit", "ceiling_low",
                "ceiling_high", "ceiling_unit", "efficiency", "verdict", "implies", "no_ceiling")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("list", metavar="LIST.csv", nargs="?",
                        help="the io500 list database's submissions table as CSV (or --darshan, --manifest)")
    parser.add_argument("--fail-on", choices=list(_FAIL_ON), default="error",
                        help="exit with status 1 if a finding of this severity or worse is raised (default: error)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print versioned JSON instead of text")
    output.add_argument("--csv", action="store_true", help="print CSV instead of text: one row per phase")
    parser.add_argument("--html", metavar="DIR", help="also write a report to the new folder DIR (index.html, a page "
                                                      "per submission)")
    add_input_limit(parser)
    add_darshan_arguments(parser)


def execute(args: argparse.Namespace) -> int:
    if args.darshan or args.manifest:
        from assess.cli.darshan_review import execute_darshan
        return execute_darshan(args)
    if args.list is None:
        from probes.core.errors import InputError
        raise InputError("review", "", "give an io500 list (LIST.csv), or Darshan logs with --darshan DIR TOPOLOGY or "
                         "--manifest FILE TOPOLOGY")
    from pathlib import Path

    from probes.core.inputs import open_input
    from probes.core.errors import ToolOutputError
    from probes.readers.io500_system import read_list
    from assess.findings import Severity
    from assess.render import dumps, envelope
    from assess.review import REVIEW_VERSION, review, review_body, severity

    if args.html:
        from probes.core.outputs import check_new
        check_new(Path(args.html), "folder")  # before the work, not after it
    with open_input(args.list, error=ToolOutputError) as file:
        submissions = read_list(file.text(), source=args.list)
    reviewed = review(submissions)
    if args.json:
        print(dumps(envelope("review", REVIEW_VERSION, review_body(args.list, reviewed))))
    elif args.csv:
        print(_csv(reviewed), end="")
    else:
        print(render(reviewed, args.list))
    if args.html:
        from assess.review_page import write_pages
        index = write_pages(reviewed, Path(args.html), args.list)
        if not args.json and not args.csv:
            print(f"\nwrote {index}")
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    failed = threshold is not None and any((s := severity(r)) is not None and s >= threshold for r in reviewed)
    return EXIT_FINDINGS if failed else EXIT_OK


def render(reviewed: list[Reviewed], source: str) -> str:
    """The list, one line per submission; then what needs more than the stated hardware; then counts."""
    from collections import Counter

    from assess.render import table
    from assess.review import UNJUDGED, VERDICTS

    rows = [(r.submission.id, r.submission.list_name, r.submission.description.title[:40],
             r.submission.description.get("filesystem_type")[:16],
             f"{sum(p.verdict != UNJUDGED for p in r.phases)}/{len(r.phases)}", r.verdict, _headline(r))
            for r in reviewed]
    lines = [f"list: {source} ({len(reviewed)} submissions)", "",
             table(("id", "list", "system", "file system", "judged", "verdict", "its strongest phase"), rows, right=(4,))]
    for verdict, heading in (("ABOVE-CEILING", "needs more than the stated hardware (ABOVE-CEILING):"),
                            ("IMPLAUSIBLE-HARDWARE", "needs more of a drive or port than any part of its class that "
                                                     "had shipped by the system's date (IMPLAUSIBLE-HARDWARE):")):
        above = [(r, p) for r in reviewed for p in r.phases if p.verdict == verdict]
        if above:
            lines += ["", heading]
            lines += [f"  {r.submission.id} {r.submission.description.title}: {p.label} {_figure(p.measured)} "
                      f"{_where(p)}: {p.implies}" for r, p in above]
    thin = Counter(r.thin for r in reviewed if r.thin)
    if thin:
        lines += ["", "too thin to judge (the fields they lack):"]
        lines += [f"  {count} submission(s): {why}" for why, count in thin.most_common()]
    verdicts = Counter(p.verdict for r in reviewed for p in r.phases)
    order = (*VERDICTS, "within", UNJUDGED)
    lines += ["", "phases: " + ", ".join(f"{verdicts[v]} {v}" for v in order if verdicts[v])]
    return "\n".join(lines)


def _headline(r: Reviewed) -> str:
    """The phase that decides the submission's verdict: its result, ceiling interval and efficiency."""
    phase = next((p for p in r.phases if p.verdict == r.verdict), None)
    if phase is None or phase.high is None:
        return r.thin.split(";")[0] if r.thin else "-"
    return (f"{phase.label} {_figure(phase.measured)} in {_figure(phase.low)}–{_figure(phase.high)} "
            f"({phase.efficiency:.0%})")


def _where(phase) -> str:
    """``> 373 GiB/s`` for a phase above its ceiling, ``in 11.2–373 GiB/s`` for one within it."""
    if phase.verdict == "IMPLAUSIBLE-HARDWARE":
        return f"in {_figure(phase.low)}–{_figure(phase.high)}"
    return f"> {_figure(phase.high)}"


def _figure(q) -> str:
    from probes.core.units import format_quantity

    return format_quantity(q)


def _csv(reviewed: list[Reviewed]) -> str:
    from probes.core.outputs import csv_text

    rows: list = [_CSV_HEADERS]
    for r in reviewed:
        s = r.submission
        for p in r.phases:
            unit = p.high.units if p.high is not None else None
            rows.append((s.id, s.list_name, s.status, s.description.title, s.description.get("filesystem_type"),
                         p.label, f"{p.measured.magnitude:g}", f"{p.measured.units:~P}",
                         "" if unit is None else f"{p.low.m_as(unit):.6g}",
                         "" if unit is None else f"{p.high.magnitude:.6g}", "" if unit is None else f"{unit:~P}",
                         "" if p.efficiency is None else f"{p.efficiency:.4f}", p.verdict, p.implies, p.reason))
    return csv_text(rows)
