"""Print what iobound reads in benchmark outputs: tool and version, workload, samples and units, in one form.

Takes any mix of IOR, mdtest, io500, fio (JSON and text), iperf3, iperf2, ping, elbencho,
hyperfine and results CSV files; the format is found from the content. A file that
cannot be read is reported and the others are still printed (exit status 2).
Example:  iobound read ior.txt mdtest.txt --json
"""

from __future__ import annotations

import argparse
import csv
import io
import sys

from probes.core.errors import IoboundError
from probes.core.run import Run
from topologies.bundled import read_runs
from assess.cli.inputs import add_unit_alias
from assess.cli.status import EXIT_INPUT, EXIT_OK
from assess.render import dumps, envelope, runs_table

# results format history:
#   1.0  first version
#   1.1  workloads gain shared_directory (null when not known); so does the CSV
FORMAT_VERSION = "1.1"
CSV_COLUMNS = ("run", "op", "transfer_size", "nodes", "ppn", "queue_depth", "access", "direct", "shared_file",
               "shared_directory", "data_set", "duration", "value", "unit", "statistic", "n", "tool", "tool_version", "source")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="FILE", nargs="+", help="benchmark outputs or results tables")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help=f"print iobound/results {FORMAT_VERSION} JSON")
    form.add_argument("--csv", action="store_true", help="print one CSV row per repetition (iobound check reads it back)")
    add_unit_alias(parser)


def execute(args: argparse.Namespace) -> int:
    runs, failed = [], []
    for word in args.results:
        try:
            runs.extend(read_runs(word, dict(args.unit_alias)))
        except IoboundError as exc:
            failed.append(str(exc))
    if args.json:
        print(dumps(envelope("results", FORMAT_VERSION, {"runs": [r.to_dict() for r in runs], "errors": failed})))
    elif args.csv:
        print(to_csv(runs), end="")
    elif runs:
        print(runs_table(runs))
    for message in failed:
        sys.stderr.write(f"iobound: error: {message}\n")
    return EXIT_INPUT if failed else EXIT_OK


def to_csv(runs: list[Run]) -> str:
    """A results table: a row per repetition (or one row with the reported mean), with units spelled out."""
    out = io.StringIO()
    out.write(f"# iobound/results {FORMAT_VERSION} as CSV\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in runs:
        w = r.workload
        fields = {"run": r.label, "unit": r.unit, "tool": r.origin.tool, "tool_version": r.origin.tool_version or "",
                  "source": str(r.origin)}
        if w is not None:
            fields |= {"op": w.operation.value, "nodes": w.nodes or "", "ppn": w.ppn, "queue_depth": w.queue_depth,
                       "access": w.access.value, "direct": _flag(w.direct), "shared_file": _flag(w.shared_file),
                       "shared_directory": _flag(w.shared_directory),
                       "transfer_size": _bytes(w.transfer_size), "data_set": _bytes(w.data_set)}
        if r.samples:
            durations = r.durations or ("",) * len(r.samples)
            for value, seconds in zip(r.samples, durations):
                writer.writerow([{**fields, "value": value, "duration": f"{seconds} s" if seconds != "" else ""}.get(c, "")
                                 for c in CSV_COLUMNS])
        else:
            row = {**fields, "value": r.summary.mean, "statistic": "mean", "n": r.summary.n}
            writer.writerow([row.get(c, "") for c in CSV_COLUMNS])
    return out.getvalue()


def _flag(value: bool | None) -> str:
    return "" if value is None else str(value).lower()


def _bytes(size) -> str:
    """A size in bytes, exact: ``2097152 B``, not a rounded ``2.09715e+06 B``."""
    if size is None:
        return ""
    value = size.m_as("B")
    return f"{int(value) if float(value).is_integer() else value!r} B"
