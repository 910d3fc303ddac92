"""Judge a whole io500 list: every submission's phases against the hardware its own description states.

Each row's description becomes a topology (every unstated figure a range: ``iobound topology
from-io500`` shows one); its phases are judged as ``check`` judges any run. One line per
submission; below the table, the phases that need more than the stated hardware (ABOVE-CEILING, an
error: exit 1), then those that need more of a drive or port than any part of its class had done by the
system's date (IMPLAUSIBLE-HARDWARE). Metadata phases are judged by what bounds the servers; the published
io500 rates of their kind are shown beside them as information (PUBLISHED-BAND), never with the submission's
own runs. Each submission also says whether io500's assumption held, that the easy write's files exceed the
clients' memory (client_volatile_memory_capacity), or what memory would break it where that is not stated.
Example:  iobound review io500-db-2017-2019_submissions.csv --html list-report
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Iterable, Iterator

from assess.cli.darshan_review import add_darshan_arguments
from assess.cli.inputs import add_input_limit
from assess.cli.status import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from collections import Counter

    from pint import Quantity

    from assess.review import Reviewed

_FAIL_ON = ("info", "warning", "error", "never")
_CSV_HEADERS = ("id", "list", "status", "system", "filesystem", "phase", "measured", "unit", "ceiling_low",
                "ceiling_high", "ceiling_unit", "efficiency", "verdict", "implies", "no_ceiling",
                "easy_write_per_node_GiB", "client_memory_GiB", "easy_write_past_client_memory")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("list", metavar="LIST.csv", nargs="?",
                        help="the io500 list database's submissions table as CSV (or --darshan, --manifest)")
    parser.add_argument("--fail-on", choices=list(_FAIL_ON), default="error",
                        help="exit with status 1 if a finding of this severity or worse is raised (default: error)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print versioned JSON instead of text")
    output.add_argument("--csv", action="store_true", help="print CSV instead of text: one row per phase")
    parser.add_argument("--html", metavar="DIR", help="also write a report to the new folder DIR (index.html and its "
                                                      "figures; for an io500 list, a page per submission)")
    parser.add_argument("--progress", action="store_true", help="show progress on stderr even where it is not a "
                                                                 "terminal (on one it is shown anyway)")
    add_input_limit(parser)
    add_darshan_arguments(parser)


def execute(args: argparse.Namespace) -> int:
    """Judge the list a submission at a time, as it is read (twice: see :func:`assess.review.review`): the JSON and
    the CSV are written as each is judged; the text keeps a line per submission; the HTML report keeps them all.
    Darshan logs (``--darshan``, ``--manifest``) are judged by :mod:`assess.cli.darshan_review`."""
    if args.darshan or args.manifest:
        from assess.cli.darshan_review import execute_darshan
        return execute_darshan(args)
    if args.list is None:
        from probes.core.errors import InputError
        raise InputError("review", "", "give an io500 list (LIST.csv), or Darshan logs with --darshan DIR TOPOLOGY or "
                         "--manifest FILE TOPOLOGY")
    import sys
    from pathlib import Path

    from probes.core.document import dumps_listed
    from probes.readers.io500_system import ListFile
    from assess.findings import Severity
    from assess.progress import PassProgress
    from assess.render import envelope
    from assess.review import REVIEW_VERSION, review, review_body, severity

    if args.html:
        from probes.core.outputs import check_new
        check_new(Path(args.html), "folder")  # before the work, not after it
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    failed = False
    progress = PassProgress("review", "submissions", asked=args.progress)

    def judged():
        nonlocal failed
        for r in review(ListFile(args.list), progress=progress):
            found = severity(r)
            failed |= threshold is not None and found is not None and found >= threshold
            yield r

    reviewed = list(judged()) if args.html else judged()
    try:
        if args.json:
            head = envelope("review", REVIEW_VERSION, review_body(args.list, ()))
            for piece in dumps_listed(head, "submissions", (r.to_dict() for r in reviewed)):
                sys.stdout.write(piece)
            sys.stdout.write("\n")
        elif args.csv:
            for piece in _csv(reviewed):
                sys.stdout.write(piece)
        else:
            text = render(reviewed, args.list)
            progress.close()  # the live line cleared before the text
            print(text)
    finally:
        progress.close()
    if args.html:
        from assess.review_page import write_pages
        index = write_pages(reviewed, Path(args.html), args.list)
        if not args.json and not args.csv:
            print(f"\nwrote {index}")
    return EXIT_FINDINGS if failed else EXIT_OK


def render(reviewed: Iterable[Reviewed], source: str) -> str:
    """The list, one line per submission; then what needs more than the stated hardware; then counts. Each submission
    is gone through once and only what is printed kept of it (a list of any length)."""
    from collections import Counter

    from assess.render import table
    from assess.review import UNJUDGED, VERDICTS

    rows, strongest, thin, verdicts = [], {"ABOVE-CEILING": [], "IMPLAUSIBLE-HARDWARE": []}, Counter(), Counter()
    assumed, stated, unstated, unread = Counter(), [], [], []
    for r in reviewed:
        if r.assumption is not None:
            assumed[r.assumption.state] += 1
            if r.assumption.memory is None:
                unstated.append(r.assumption.written)
            else:
                stated.append(f"  {r.submission.id} {r.submission.description.title}: {r.assumption}")
        rows.append((r.submission.id, r.submission.list_name, r.submission.description.title[:40],
                     r.submission.description.get("filesystem_type")[:16],
                     f"{sum(p.verdict != UNJUDGED for p in r.phases)}/{len(r.phases)}", r.verdict, _headline(r)))
        for p in r.phases:
            verdicts[p.verdict] += 1
            if p.measured is None:
                unread.append(f"  {r.submission.id} {r.submission.description.title}: {p.label}: {p.reason}")
            if p.verdict in strongest:
                strongest[p.verdict].append(f"  {r.submission.id} {r.submission.description.title}: {p.label} "
                                            f"{_figure(p.measured)} {_where(p)}: {p.implies}")
        if r.thin:
            thin[r.thin] += 1
    lines = [f"list: {source} ({len(rows)} submissions)", "",
             table(("id", "list", "system", "file system", "judged", "verdict", "its strongest phase"), rows, right=(4,)),
             "its strongest phase: its result in its ceiling's least–most (the result over that most–over that least)"]
    for verdict, heading in (("ABOVE-CEILING", "needs more than the stated hardware (ABOVE-CEILING):"),
                            ("IMPLAUSIBLE-HARDWARE", "needs more of a drive or port than any part of its class that "
                                                     "had shipped by the system's date (IMPLAUSIBLE-HARDWARE):")):
        if strongest[verdict]:
            lines += ["", heading, *strongest[verdict]]
    if unread:
        lines += ["", "phases not judged, their cell in the list holding no result:", *unread]
    if thin:
        lines += ["", "too thin to judge (the fields they lack):"]
        lines += [f"  {count} submission(s): {why}" for why, count in thin.most_common()]
    if stated:
        lines += ["", "the easy write's files against the client memory stated:"]
        lines += stated
    order = (*VERDICTS, "within", UNJUDGED)
    lines += ["", _assumption_count(assumed, unstated)]
    lines += ["phases: " + ", ".join(f"{verdicts[v]} {v}" for v in order if verdicts[v])]
    return "\n".join(lines)


def _assumption_count(assumed: Counter, unstated: list[Quantity]) -> str:
    """io500's assumption across the list: how often it held, did not, was not shown, and where memory is not stated
    what memory per client node would break it (the least and most of those submissions' data written per node)."""
    said = (f"the easy write's files exceeded client memory (io500's assumption): held in {assumed['held']}, "
            f"not in {assumed['not held']}, not shown in {assumed['not shown']}, memory not stated in "
            f"{assumed['memory not stated']}")
    if unstated:
        said += (f" (would break above {_figure(min(unstated))} to {_figure(max(unstated))} of memory per client node, "
                 "as each wrote)")
    return said


def _headline(r: Reviewed) -> str:
    """The phase that decides the submission's verdict: its result, ceiling interval and efficiency."""
    phase = next((p for p in r.phases if p.verdict == r.verdict), None)
    if phase is None or phase.high is None:
        return r.thin.split(";")[0] if r.thin else "-"
    from assess.render import share

    return (f"{phase.label} {_figure(phase.measured)} in {_figure(phase.low)}–{_figure(phase.high)} "
            f"({share(phase.efficiency, phase.high, phase.low)})")


def _where(phase) -> str:
    """``> 373 GiB/s`` for a phase above its ceiling, ``in 11.2–373 GiB/s`` for one within it."""
    if phase.verdict == "IMPLAUSIBLE-HARDWARE":
        return f"in {_figure(phase.low)}–{_figure(phase.high)}"
    return f"> {_figure(phase.high)}"


def _figure(q) -> str:
    from probes.core.units import format_quantity

    return format_quantity(q)


def _csv(reviewed: Iterable[Reviewed]) -> Iterator[str]:
    """The CSV, one row per phase: the header, then each submission's rows as it comes."""
    from probes.core.outputs import csv_text

    yield csv_text([_CSV_HEADERS])
    for r in reviewed:
        s = r.submission
        rows = []
        for p in r.phases:
            unit = p.high.units if p.high is not None else None
            rows.append((s.id, s.list_name, s.status, s.description.title, s.description.get("filesystem_type"),
                         p.label, *(("", "") if p.measured is None else (f"{p.measured.magnitude:g}", f"{p.measured.units:~P}")),
                         "" if unit is None else f"{p.low.m_as(unit):.6g}",
                         "" if unit is None else f"{p.high.magnitude:.6g}", "" if unit is None else f"{unit:~P}",
                         "" if p.efficiency is None else f"{p.efficiency:.4f}", p.verdict, p.implies, p.reason,
                         *_assumed(r)))
        yield csv_text(rows)


def _assumed(r: Reviewed) -> tuple[str, str, str]:
    """io500's assumption as the CSV gives it: the GiB written per client node (a least where its time is not
    stated: "≥ 75"), each node's memory in GiB and the assumption's state; empty where it is not known."""
    a = r.assumption
    if a is None:
        return "", "", ""
    memory = "" if a.memory is None else f"{a.memory.m_as('GiB'):.6g}"
    return f"{'≥ ' if a.least else ''}{a.written.m_as('GiB'):.6g}", memory, a.state
