"""Print what iobound reads in benchmark outputs: tool and version, workload, samples and units, in one form.

Takes any mix of IOR, mdtest, io500, fio (JSON and text), iperf3, iperf2, ping, elbencho,
hyperfine and results CSV files; the format is found from the content. A file that
cannot be read is reported and the others are still printed (exit status 2).
Example:  iobound read ior.txt mdtest.txt --json
"""

from __future__ import annotations

import argparse

from probes.core.errors import IoboundError
from assess.cli.inputs import add_input_limit, add_unit_alias
from assess.cli.status import EXIT_INPUT, EXIT_OK
from assess.cli.terminal import say_error


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="FILE", nargs="+", help="benchmark outputs or results tables")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print versioned JSON (iobound/results)")
    form.add_argument("--csv", action="store_true", help="print one CSV row per repetition (iobound check reads it back)")
    add_unit_alias(parser)
    add_input_limit(parser)


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope, runs_table
    from probes.core.run import RESULTS_VERSION, results_body, results_csv
    from topologies.bundled import read_runs

    runs, failed = [], []
    for word in args.results:
        try:
            runs.extend(read_runs(word, dict(args.unit_alias)))
        except IoboundError as exc:
            failed.append(str(exc))
    if args.json:
        print(dumps(envelope("results", RESULTS_VERSION, results_body(runs, failed))))
    elif args.csv:
        print(results_csv(runs), end="")
    elif runs:
        print(runs_table(runs))
    for message in failed:
        say_error(message)
    return EXIT_INPUT if failed else EXIT_OK
