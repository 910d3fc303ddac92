"""Write a report of a system and its runs: one HTML page (it opens from disk) and Markdown, with PNG and SVG plots.

The report has the system, the ceilings and their formulas, the runs with their findings, an
I/O roofline over transfer size and the ceiling over node count per family of runs, and the
probe results (--probes). An existing report in DIR is replaced only with --force.
Example:  iobound report lecture lecture-results.csv -o lecture-report
"""

from __future__ import annotations

import argparse
from pathlib import Path

from probes.errors import InputError
from probes.probeset import read_probe_set
from assess.cli.check import add_judging_arguments, judged
from assess.cli.status import EXIT_OK
from assess.report import FIGURES, build_report, to_html, to_markdown

# What a report writes into its directory.
_WRITES = ("report.html", "report.md", FIGURES)


def configure(parser: argparse.ArgumentParser) -> None:
    add_judging_arguments(parser)
    parser.add_argument("-o", "--output", required=True, metavar="DIR", type=Path,
                        help="directory to write report.html, report.md and figures/ into (made if missing)")
    parser.add_argument("--probes", action="append", default=[], metavar="FILE",
                        help="probe set whose measurements to plot with their intervals (repeatable)")
    parser.add_argument("--force", action="store_true", help="replace a report already in DIR")


def run(args: argparse.Namespace) -> int:
    directory: Path = args.output
    _refuse_to_overwrite(directory, args.force)
    measurements = [m for path in args.probes for m in read_probe_set(path).values()]
    topology, judgements = judged(args)
    figures = directory / FIGURES
    figures.mkdir(parents=True, exist_ok=True)
    for old in [*figures.glob("*.png"), *figures.glob("*.svg")]:  # a replaced report's plots (--force)
        old.unlink()
    report = build_report(topology, judgements, directory, measurements=measurements,
                          clients=tuple(args.clients) if args.clients else None)
    (directory / "report.html").write_text(to_html(report, directory), encoding="utf-8")
    (directory / "report.md").write_text(to_markdown(report), encoding="utf-8")
    drawn = len(list(figures.glob("*.png")))
    print(f"wrote {directory / 'report.html'} (open it in a browser), {directory / 'report.md'} and "
          f"{drawn} plots as PNG and SVG in {figures}")
    return EXIT_OK


def _refuse_to_overwrite(directory: Path, force: bool) -> None:
    """InputError before any work if DIR is a file, or holds a report and --force was not given."""
    if directory.exists() and not directory.is_dir():
        raise InputError(str(directory), "", "is a file; -o takes the directory to write the report into")
    found = [name for name in _WRITES if (directory / name).exists()]
    if found and not force:
        raise InputError(str(directory), "", f"already holds a report ({', '.join(found)}); choose another "
                         "directory, or replace it with --force")
    figures = directory / FIGURES
    others = [p.name for p in figures.iterdir() if p.suffix not in (".png", ".svg")] if figures.is_dir() else []
    if others:
        raise InputError(str(figures), "", f"holds files a report did not write ({', '.join(sorted(others)[:3])}); "
                         "choose another directory")
