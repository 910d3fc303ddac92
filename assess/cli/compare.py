"""Compare runs like hyperfine: which is faster, by how much (with its ±), and whether the difference is noise.

Runs come from any results files iobound reads; --run picks them by label. With more than
two, each is compared with the fastest. Welch's t-test decides significance at 95 %.
Example:  iobound compare hyperfine.json
          iobound compare before.txt after.txt --run "POSIX file-per-process write"
"""

from __future__ import annotations

import argparse

from probes.errors import InputError
from probes.readers import read_results
from probes.run import distinct_labels
from assess.cli.inputs import alias_arg, resolve
from assess.cli.status import EXIT_OK
from assess.compare import compare, speed
from assess.render import dumps, envelope

# compare format history:
#   1.0  first version
FORMAT_VERSION = "1.0"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="FILE", nargs="+", help="results files holding the runs to compare")
    parser.add_argument("--run", action="append", metavar="LABEL",
                        help="compare only runs whose label contains LABEL (repeatable)")
    parser.add_argument("--unit-alias", type=alias_arg, action="append", default=[], metavar="WRITTEN=MEANT",
                        help="what an ambiguous unit in a results table means (repeatable)")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def run(args: argparse.Namespace) -> int:
    runs = []
    for word in args.results:
        runs.extend(read_results(resolve(word), aliases=dict(args.unit_alias)))
    if len(args.results) > 1:  # the same label in two files: name the file
        runs = distinct_labels([r if not any(o is not r and o.label == r.label for o in runs)
                                else _relabel(r) for r in runs])
    chosen = [r for r in runs if not args.run or any(word in r.label for word in args.run)]
    if len(chosen) < 2:
        labels = "; ".join(r.label for r in runs) or "none"
        raise InputError(" ".join(args.results), "", f"found {len(chosen)} run(s) to compare, need 2 or more; "
                         f"the runs are: {labels}")
    lower_is_faster = chosen[0].metric.unit == "s"
    fastest = (min if lower_is_faster else max)(chosen, key=lambda r: speed(r).mean)
    comparisons = [compare(fastest, other) for other in chosen if other is not fastest]
    if args.json:
        print(dumps(envelope("comparison", FORMAT_VERSION, {"runs": [r.to_dict() for r in chosen],
                                                            "comparisons": [c.to_dict() for c in comparisons]})))
        return EXIT_OK
    from assess.cli.read import render

    print(render(chosen))
    print()
    print("\n".join(c.verdict() for c in comparisons))
    return EXIT_OK


def _relabel(run):
    from dataclasses import replace
    return replace(run, label=f"{run.label} ({run.origin.path})")
