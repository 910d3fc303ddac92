"""List the bundled example systems and results, with the path of each file to copy and edit.

Example:  iobound examples
"""

from __future__ import annotations

import argparse

from topologies.examples import EXAMPLES, example_names


def configure(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    for name in example_names():
        print(f"{name:24} {EXAMPLES / name}")
    return 0
