"""Write a report of a system and its runs: one HTML page (it opens from disk) and Markdown, with PNG plots.

The report has the system, the ceilings and their formulas, the runs with their findings, an
I/O roofline over transfer size and the ceiling over node count per family of runs, and the
probe results (--probes). It is written in full or not at all; a report that iobound wrote
earlier in DIR is replaced only with --force, and no other file is ever replaced. A second
report into DIR while one is being written is refused at once. --svg writes each plot as SVG too.
Example:  iobound report lecture lecture-results.csv -o lecture-report
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Iterator

from probes.core.errors import InputError
from probes.core.outputs import new_folder, staged_in, write_replacing
from probes.core.inputs import read_input
from assess.cli.check import add_judging_arguments, judged
from assess.cli.status import EXIT_OK


# The list of what a report wrote, kept beside it: --force removes these files and no others.
MANIFEST = ".iobound-report.json"


def configure(parser: argparse.ArgumentParser) -> None:
    add_judging_arguments(parser)
    parser.add_argument("-o", "--output", required=True, metavar="DIR", type=Path,
                        help="directory to write report.html, report.md and figures/ into (made if missing)")
    parser.add_argument("--probes", action="append", default=[], metavar="FILE",
                        help="probe set whose measurements to plot with their intervals (repeatable)")
    parser.add_argument("--force", action="store_true", help="replace a report that iobound wrote in DIR before")
    parser.add_argument("--svg", action="store_true",
                        help="write each plot as SVG too (vector, its text as text), beside its PNG")


def execute(args: argparse.Namespace) -> int:
    from probes.measure.probeset import read_probe_set

    from assess.report import FIGURES

    directory: Path = args.output
    with _locked(directory):
        earlier = _earlier_report(directory, args.force)
        existing = directory.is_dir()
        # the folder to build in is made before the work, so that a disk that refuses it says so at once
        with staged_in(directory) if existing else new_folder(directory, parents=True) as staged:
            measurements = [m for path in args.probes for m in read_probe_set(path).values()]
            topology, judgements = judged(args)
            written = _build(topology, judgements, measurements, args, staged)
            if existing:
                _move_in(staged, directory, earlier, written)
    plots = sum(name.endswith(".png") for name in written)
    print(f"wrote {directory / 'report.html'} (open it in a browser), {directory / 'report.md'} and "
          f"{plots} plots as PNG{' and SVG' if args.svg else ''} in {directory / FIGURES}")
    return EXIT_OK


def _build(topology, judgements, measurements, args: argparse.Namespace, staged: Path) -> list[str]:
    """Write the report into the empty folder ``staged``, and the manifest that lists its files; returns their names."""
    from assess.report import FIGURES, build_report, to_html, to_markdown

    (staged / FIGURES).mkdir()
    report = build_report(topology, judgements, staged, measurements=measurements,
                          clients=tuple(args.clients) if args.clients else None, tolerance=args.tolerance,
                          svg=args.svg)
    (staged / "report.html").write_text(to_html(report, staged), encoding="utf-8")
    (staged / "report.md").write_text(to_markdown(report), encoding="utf-8")
    written = sorted(str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file())
    (staged / MANIFEST).write_text(_manifest(written), encoding="utf-8")
    return written


def _manifest(written: list[str]) -> str:
    return json.dumps({"written": written}, indent=1) + "\n"


def _move_in(staged: Path, directory: Path, earlier: list[str], written: list[str]) -> None:
    """Put the report built in ``staged`` in place of the earlier one in ``directory``: the manifest first (listing
    both), so that whatever stops the moves leaves a report --force can replace."""
    from assess.report import FIGURES

    theirs = [name for name in written if (directory / name).exists() and name not in earlier]
    if theirs:
        raise InputError(str(directory), "", f"holds files iobound did not write ({', '.join(theirs[:3])}); "
                         "choose another directory")
    write_replacing(directory / MANIFEST, _manifest(sorted(set(written) | set(earlier))))
    for name in earlier:
        (directory / name).unlink(missing_ok=True)
    (directory / FIGURES).mkdir(exist_ok=True)
    for name in written:
        os.replace(staged / name, directory / name)
    write_replacing(directory / MANIFEST, _manifest(written))


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold ``directory`` (where it exists) for this report alone while it is written: a second report into it
    is refused at once, rather than finding the first one's files half moved in."""
    if not directory.is_dir():
        yield  # a new folder: new_folder refuses to rename onto one another report made meanwhile
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(str(directory), "", "another iobound report is being written into it now; wait for it "
                             "to end, then replace it with --force or choose another directory") from None
        yield
    finally:
        os.close(fd)


def _earlier_report(directory: Path, force: bool) -> list[str]:
    """The files of a report iobound wrote in DIR before, which --force replaces; InputError before any work if
    DIR cannot take a report, or holds one and --force was not given."""
    parent = directory
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(str(parent), "", "is a file; -o takes the directory to write the report into")
    manifest = directory / MANIFEST
    if not manifest.exists():
        theirs = [name for name in ("report.html", "report.md") if (directory / name).exists()]
        if theirs:
            raise InputError(str(directory), "", f"holds {' and '.join(theirs)} that iobound did not write; "
                             "choose another directory")
        return []
    if not force:
        raise InputError(str(directory), "", "already holds a report; choose another directory, or replace it "
                         "with --force")
    try:
        written = json.loads(read_input(manifest, errors="strict"))["written"]
    except InputError:
        raise
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise InputError(str(manifest), "", f"is not the list of a report's files ({exc}); remove the report "
                         "yourself") from None
    if not all(isinstance(name, str) and ".." not in Path(name).parts and not Path(name).is_absolute()
               for name in written):
        raise InputError(str(manifest), "written", "names files outside the report's directory")
    return written
