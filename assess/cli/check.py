"""Check measured results against the topology's ceilings, and say what is impossible, at the limit, far below or unsound.

Reads every format ``iobound read`` knows, in any mix. With --plan, says instead whether each run followed the plan
(iobound plan --json or -o): its data set, flags, repetitions, nodes and processes, and what its result means given
the share a cache could still serve; then every word after the options is a results file.
Examples:
  iobound check lecture lecture-results.csv
  iobound check --plan plan/plan.json ior-output.txt
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from assess.cli.inputs import add_input_limit, add_set_argument, add_unit_alias, edited_topology, fraction_arg
from assess.cli.job import JOB, nodes_arg
from assess.cli.status import EXIT_FINDINGS, EXIT_OK
from assess.findings import BELOW, FAR_BELOW, TOLERANCE

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from assess.findings.finding import Judgement
    from topologies.topology import Topology


# Facts of one code told in full; the runs of the rest are counted (the table has their codes, --json every message).
_SHOWN = 3
_FAIL_ON = ("info", "warning", "error", "never")


def configure(parser: argparse.ArgumentParser) -> None:
    add_judging_arguments(parser)
    parser.add_argument("--fail-on", choices=list(_FAIL_ON), default="error",
                        help="exit with status 1 if a finding of this severity or worse is raised (default: error)")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")
    parser.add_argument("--plan", metavar="PLAN.json",
                        help="say whether the runs followed this plan (exit status 1 if one differs from it)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour errors red and warnings yellow: auto (default) on a terminal unless NO_COLOR is "
                             "set, always, or never")


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
    parser.add_argument("--nodes", type=nodes_arg, metavar="N",
                        help="client nodes that ran a result stating only its processes (a Darshan log without DXT "
                             f"hosts, io500's procs): N nodes, processes / N on each, or '{JOB}': the nodes of the "
                             "Slurm or PBS job this runs in; also an io500 description's client nodes where it states "
                             "none (the web form's); default: where a result states no node count, a Darshan log "
                             "of the job this runs in (its job id) on the job's nodes, any other on all nodes of its "
                             "one client group")


def judged(args: argparse.Namespace) -> tuple[Topology, list[Judgement]]:
    """The topology and its runs judged, as the options of :func:`add_judging_arguments` say."""
    from topologies.bundled import read_runs
    from assess.check import check_runs
    from probes.core.errors import InputError
    from assess.cli.job import asked_nodes, of_this_job

    if args.far_below >= args.below:
        raise InputError("--far-below", "", f"must be less than --below ({args.below:g}): a run under it is far below "
                         f"the ceiling, one under --below below it. Got {args.far_below:g} instead.")
    nodes = asked_nodes() if args.nodes == JOB else args.nodes
    count = nodes.value if args.nodes == JOB else nodes
    description = _description(args.topology, count)
    topology = edited_topology(args, count, description and description.topology)
    runs = [r for word in _result_words(args) for r in read_runs(word, dict(args.unit_alias))]
    if nodes is None:  # the job this runs in places the runs that name it as theirs, and no other
        runs = of_this_job(runs)
    return topology, check_runs(topology, runs, clients=tuple(args.clients) if args.clients else None,
                                nodes=nodes, tolerance=args.tolerance, far_below=args.far_below, below=args.below,
                                hardware=description and description.parts)


def _description(word: str, nodes: int | None):
    """An io500 description described, read once for its topology and for what it says its drives and ports are,
    and of what date, so that a figure a run implies is held to the parts that existed; None for any other file."""
    from topologies.bundled import resolve

    path = resolve(word)
    if path.suffix == ".toml":  # a topology: the descriptions' readers need not load
        return None
    from topologies.described.io500 import described, is_description
    from topologies.described.mlperf import is_system_description

    if is_system_description(path) or not is_description(path):
        return None
    return described(path, nodes)


def _result_words(args: argparse.Namespace) -> list[str]:
    """The results files as the user named them, or those beside the submission named as the topology."""
    return args.results or [str(path) for path in _submission_results(args.topology)]


def _names(args: argparse.Namespace) -> dict[str, str]:
    """Where each bundled example the user named (the topology, the results) is installed, to its name."""
    from pathlib import Path

    from topologies.bundled import resolve

    return {str(path): word for word in (args.topology, *_result_words(args)) if (path := resolve(word)) != Path(word)}


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
    import sys

    from assess.check import CHECK_VERSION, check_body
    from assess.findings import Severity
    from assess.render import as_given, colour_wanted, dumps, envelope

    if args.plan:
        return _against_plan(args)
    topology, judgements = judged(args)
    if args.json:
        print(dumps(envelope("check", CHECK_VERSION, check_body(topology, judgements))))
    else:
        names = _names(args)
        where = as_given(str(topology.path), names)  # a bundled example by its name alone
        system = topology.name if where == topology.name else f"{topology.name} ({where})"
        print(as_given(render(judgements, system, colour_wanted(args.color, sys.stdout)), names))
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    failed = threshold is not None and any(f.severity >= threshold for j in judgements for f in j.findings)
    return EXIT_FINDINGS if failed else EXIT_OK


def _against_plan(args: argparse.Namespace) -> int:
    """Each run of the results (every word after the options) against the phase of the plan it ran."""
    from probes.core.document import read_document
    from probes.measure.batch import steps_together
    from topologies.bundled import read_runs
    from assess.plan_check import PLAN_CHECK_VERSION, followed, plan_check_body, render as render_plan
    from assess.cli.plan import PLAN_VERSION
    from assess.render import dumps, envelope

    plan = read_document(args.plan, "plan", (PLAN_VERSION,))
    runs = [r for word in (args.topology, *args.results) for r in read_runs(word, dict(args.unit_alias))]
    found = followed(plan, steps_together(runs))  # a Slurm step's tasks as one run on their nodes
    if args.json:
        print(dumps(envelope("plan-check", PLAN_CHECK_VERSION, plan_check_body(args.plan, found))))
    else:
        print(render_plan(found, args.plan))
    return EXIT_FINDINGS if any(f.deviates for f in found) else EXIT_OK


def render(judgements: list[Judgement], system: str, colour: bool = False) -> str:
    """One row per run, marked by its worst finding; each fact the findings state once, worst first, with the runs it
    holds for; each distinct remedy once; and a count by severity. ``colour`` paints errors red and warnings yellow."""
    from assess.render import (JUDGEMENT_HEADERS, JUDGEMENT_RIGHT, checked, facts, judgement_rows, log_notes,
                               marks_legend, paint, ratio_legend, table)

    lines = [f"system: {system}", "", table(JUDGEMENT_HEADERS, judgement_rows(judgements, colour), right=JUDGEMENT_RIGHT)]
    lines += [legend for legend in (marks_legend(judgements), ratio_legend(judgements)) if legend]
    parts: dict[tuple[str, str], list[str]] = {}
    for j in judgements:
        if j.part is not None and j.ceiling is not None:
            parts.setdefault((j.run.origin.path, j.part.said), []).append(j.run.label)
    if parts:
        lines += ["", "jobs judged over:", *(f"  {path} ({', '.join(labels)}): {said}"
                                            for (path, said), labels in parts.items())]
    lines += log_notes([j.run for j in judgements])
    told = facts(judgements)
    if told:
        lines.append("")
    shown: dict[str, list[int]] = {}  # per code, the runs of each fact told of it
    for fact in told:
        f = fact.finding
        others = shown.setdefault(f.code, [])
        others.append(len(fact.judgements))
        if len(others) <= _SHOWN:
            lines += [f"{paint(f'{f.severity.label:7}', f.severity, colour)} {f.code}  {_which(fact, judgements)}",
                      f"        {fact.message}"]
    for code, runs in shown.items():
        if len(runs) > _SHOWN:
            lines.append(f"{'':7} {code} also for {sum(runs[_SHOWN:])} more run(s): see the table's findings "
                         "column (--json has every message)")
    remedies = dict.fromkeys((fact.finding.code, fact.finding.remedy) for fact in told if fact.finding.remedy)
    if remedies:
        lines += ["", "what to do:", *(f"  {code}: {remedy}" for code, remedy in remedies)]
    lines += ["", checked(judgements, colour)]
    return "\n".join(lines)


def _which(fact, judgements: list[Judgement]) -> str:
    """The runs a fact holds for and where they were read: one by its name and line, several by their names (every
    run, or as many as the table's findings column shows) and files."""
    where = fact.judgements[0].run.origin if len(fact.judgements) == 1 else \
        ", ".join(dict.fromkeys(j.run.origin.path for j in fact.judgements))
    return f"{fact.runs(len(judgements), _SHOWN)}  ({where})"
