"""The iobound command line: one subcommand per question, ``main(argv) -> exit status``.

Exit status: 0 all good; 1 ``check`` raised a finding at or above ``--fail-on``;
2 bad input or usage (the message says what and where; ``--debug`` shows the traceback);
3 an internal error, which is a bug to report.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

import probes
from probes.errors import IoboundError
from assess.cli import check, examples, predict, probe, topology

__all__ = ["main", "build_parser", "COMMANDS", "EXIT_OK", "EXIT_FINDINGS", "EXIT_INPUT", "EXIT_BUG"]

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_BUG = 0, 1, 2, 3
COMMANDS = {"probe": probe, "predict": predict, "check": check, "topology": topology, "examples": examples}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iobound",
        description="Model a storage system, predict what a benchmark can show, and catch results too good to be true.",
        epilog="Exit status: 0 ok, 1 findings at or above --fail-on (check), 2 bad input or usage, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"iobound {probes.__version__}")
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: --debug may stand before or after the command without one resetting the other.
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error")
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in COMMANDS.items():
        summary = module.__doc__.strip().splitlines()[0]
        sub = commands.add_parser(name, parents=[common], help=summary, description=module.__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        module.configure(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run iobound with ``argv`` (default: the process's arguments) and return the exit status."""
    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    try:
        return COMMANDS[args.command].run(args)
    except IoboundError as exc:
        if debug:
            raise
        sys.stderr.write(f"iobound: error: {exc}\n")  # one write: lines of MPI ranks sharing stderr stay whole
        return EXIT_INPUT
    except BrokenPipeError:  # output piped into head and closed early
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:  # a bug of iobound's, not the user's: say so in one line
        if debug:
            raise
        print(f"iobound: internal error: {type(exc).__name__}: {exc} (please report it; --debug shows the traceback)",
              file=sys.stderr)
        return EXIT_BUG
