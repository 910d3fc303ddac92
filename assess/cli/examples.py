"""List the bundled example systems and results, with the path of each file to copy and edit.

Example:  iobound examples
"""

from __future__ import annotations

import argparse


# examples format history:
#   1.0  first version
EXAMPLES_VERSION = "1.0"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope
    from topologies.bundled import EXAMPLES, example_names

    if args.json:
        files = [{"name": name, "path": str(EXAMPLES / name)} for name in example_names()]
        print(dumps(envelope("examples", EXAMPLES_VERSION, {"files": files})))
        return 0
    for name in example_names():
        print(f"{name:24} {EXAMPLES / name}")
    return 0
