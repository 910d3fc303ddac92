"""Check measured results against the topology's ceilings, and say what is impossible, at the limit, far below or unsound.

Reads every format ``iobound read`` knows, in any mix.
Example:  iobound check lecture lecture-results.csv
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from assess.cli.inputs import add_input_limit, add_set_argument, add_unit_alias, count_arg, edited_topology, fraction_arg
from assess.cli.status import EXIT_FINDINGS, EXIT_OK
from assess.findings import BELOW, FAR_BELOW, TOLERANCE

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from assess.findings.finding import Judgement
    from topologies.topology import Topology


# Findings of one code shown in full; the rest are listed by run (--json has them all).
_SHOWN = 3
_FAIL_ON = ("info", "warning", "error", "never")


def configure(parser: argparse.ArgumentParser) -> None:
    add_judging_arguments(parser)
    parser.add_argument("--fail-on", choices=list(_FAIL_ON), default="error",
                        help="exit with status 1 if a finding of this severity or worse is raised (default: error)")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def add_judging_arguments(parser: argparse.ArgumentParser) -> None:
    """TOPOLOGY RESULTS... and the options of judging them, which check and report share."""
    parser.add_argument("topology", metavar="TOPOLOGY",
                        help="topology file (TOML) or a bundled example name; or an io500 submission's folder or its "
                             "system-information.txt, whose description gives the topology (every unstated figure a range)")
    parser.add_argument("results", metavar="RESULTS", nargs="*",
                        help="results files in any format iobound reads (default, for a submission's folder: its "
                             "result.txt or result_summary.txt)")
    add_set_argument(parser)
    add_input_limit(parser)
    parser.add_argument("--tolerance", type=fraction_arg, default=TOLERANCE,
                        help=f"relative noise of the measurements behind a ceiling (default {TOLERANCE})")
    parser.add_argument("--far-below", type=fraction_arg, default=FAR_BELOW,
                        help=f"flag runs under this fraction of their ceiling (default {FAR_BELOW})")
    parser.add_argument("--below", type=fraction_arg, default=BELOW,
                        help=f"note runs under this fraction of their ceiling as BELOW-CEILING (default {BELOW})")
    add_unit_alias(parser)
    parser.add_argument("--clients", action="append", metavar="GROUP", help="client group that ran the benchmarks")
    parser.add_argument("--nodes", type=count_arg, metavar="N",
                        help="client nodes that ran a result stating only its processes (a Darshan log without DXT "
                             "hosts, io500's procs): N nodes, processes / N on each; also an io500 description's "
                             "client nodes where it states none (the web form's)")


def judged(args: argparse.Namespace) -> tuple[Topology, list[Judgement]]:
    """The topology and its runs judged, as the options of :func:`add_judging_arguments` say."""
    from topologies.bundled import read_runs
    from assess.check import check_runs

    topology = edited_topology(args, args.nodes)
    words = args.results or [str(path) for path in _submission_results(args.topology)]
    runs = [r for word in words for r in read_runs(word, dict(args.unit_alias))]
    return topology, check_runs(topology, runs, clients=tuple(args.clients) if args.clients else None,
                                nodes=args.nodes, tolerance=args.tolerance, far_below=args.far_below, below=args.below,
                                hardware=_described_parts(args.topology, args.nodes))


def _described_parts(word: str, nodes: int | None):
    """What an io500 description says its drives and ports are, and of what date (None for a topology file), so
    that a figure a run implies is held to the parts that existed."""
    from topologies.bundled import resolve
    from topologies.described.io500 import described, is_description
    from topologies.described.mlperf import is_system_description

    path = resolve(word)
    if path.suffix == ".toml" or is_system_description(path) or not is_description(path):
        return None
    return described(path, nodes).parts


def _submission_results(word: str) -> tuple:
    """The results beside an io500 submission's description, for a check that names none."""
    from pathlib import Path

    from probes.core.errors import InputError
    from topologies.described.io500 import submission_files

    path = Path(word)
    found = submission_files(path)[1] if path.is_dir() else ()
    if not found:
        raise InputError(word, "", "names no results: give the results files after the topology (RESULTS), or a "
                         "submission's folder that holds result.txt or result_summary.txt")
    return found


def execute(args: argparse.Namespace) -> int:
    from assess.check import CHECK_VERSION, check_body
    from assess.findings import Severity
    from assess.render import dumps, envelope

    topology, judgements = judged(args)
    if args.json:
        print(dumps(envelope("check", CHECK_VERSION, check_body(topology, judgements))))
    else:
        print(render(judgements, f"{topology.name} ({topology.path})"))
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    failed = threshold is not None and any(f.severity >= threshold for j in judgements for f in j.findings)
    return EXIT_FINDINGS if failed else EXIT_OK


def render(judgements: list[Judgement], system: str) -> str:
    """One row per run, every finding (worst first), each distinct remedy once, and a count by severity."""
    from assess.render import JUDGEMENT_HEADERS, checked, judgement_rows, table

    lines = [f"system: {system}", "", table(JUDGEMENT_HEADERS, judgement_rows(judgements), right=(1, 2, 3))]
    parts: dict[tuple[str, str], list[str]] = {}
    for j in judgements:
        if j.part is not None:
            parts.setdefault((j.run.origin.path, j.part.said), []).append(j.run.label)
    if parts:
        lines += ["", "jobs judged over:", *(f"  {path} ({', '.join(labels)}): {said}"
                                            for (path, said), labels in parts.items())]
    located = sorted(((f, j.run.origin) for j in judgements for f in j.findings), key=lambda pair: -pair[0].severity)
    if located:
        lines.append("")
    shown: dict[str, list[str]] = {}
    for f, origin in located:
        others = shown.setdefault(f.code, [])
        others.append(f.run)
        if len(others) <= _SHOWN:
            lines += [f"{f.severity.label:7} {f.code}  {f.run}  ({origin})", f"        {f.message}"]
    for code, runs in shown.items():
        if len(runs) > _SHOWN:
            lines.append(f"{'':7} {code} also for {len(runs) - _SHOWN} more run(s): see the table's findings "
                         "column (--json has every message)")
    remedies = dict.fromkeys((f.code, f.remedy) for f, _ in located)
    if remedies:
        lines += ["", "what to do:", *(f"  {code}: {remedy}" for code, remedy in remedies)]
    lines += ["", checked(judgements)]
    return "\n".join(lines)
