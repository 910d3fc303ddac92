"""Compare runs like hyperfine: which is faster, by how much (with its ±), and whether the difference is noise.

Runs come from any results files iobound reads; --run picks them by label. With more than
two, each is compared with the fastest. Welch's t-test decides significance at 95 %.
Example:  iobound compare hyperfine.json
          iobound compare before.txt after.txt --run "POSIX file-per-process write"
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace

from probes.core.errors import InputError
from assess.cli.inputs import add_input_limit, add_unit_alias
from assess.cli.status import EXIT_OK
from assess.compare import compare, fastest

# compare format history:
#   1.0  first version
#   1.1  runs' workloads gain read_share (results 1.2)
#   1.2  runs gain their typed records: placement, job, training, checkpoint (results 1.3)
COMPARISON_VERSION = "1.2"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="FILE", nargs="+", help="results files holding the runs to compare")
    parser.add_argument("--run", action="append", metavar="LABEL",
                        help="compare only runs whose label contains LABEL (repeatable)")
    add_unit_alias(parser)
    add_input_limit(parser)
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope, runs_table
    from topologies.bundled import read_runs

    runs = [r for word in args.results for r in read_runs(word, dict(args.unit_alias))]
    if len(args.results) > 1:  # the same label in two files: name the file
        shared = Counter(r.label for r in runs)
        runs = [replace(r, label=f"{r.label} ({r.origin.path})") if shared[r.label] > 1 else r for r in runs]
    chosen = [r for r in runs if not args.run or any(word in r.label for word in args.run)]
    if len(chosen) < 2:
        labels = "; ".join(r.label for r in runs) or "none"
        raise InputError(" ".join(args.results), "", f"found {len(chosen)} run(s) to compare, need 2 or more; "
                         f"the runs are: {labels}")
    best = fastest(chosen)
    comparisons = [compare(best, other) for other in chosen if other is not best]
    if args.json:
        print(dumps(envelope("comparison", COMPARISON_VERSION, {"runs": [r.to_dict() for r in chosen],
                                                            "comparisons": [c.to_dict() for c in comparisons]})))
        return EXIT_OK
    print(runs_table(chosen))
    print()
    print("\n".join(c.verdict() for c in comparisons))
    return EXIT_OK

