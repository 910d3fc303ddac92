"""The iobound command line: one subcommand per question, ``main(argv) -> exit status``.

Exit statuses are in :mod:`assess.cli.status`; ``--debug`` shows the traceback of an error.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Sequence

import probes
from probes.core.errors import IoboundError
from assess.cli import check, compare, examples, fit, lab, predict, probe, read, report, size, topology, whatif
from assess.cli.status import EXIT_BUG, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBE_FAILED

__all__ = ["main", "build_parser", "COMMANDS", "EXIT_OK", "EXIT_FINDINGS", "EXIT_INPUT", "EXIT_BUG",
           "EXIT_PROBE_FAILED", "EXIT_INTERRUPTED"]

COMMANDS = {"probe": probe, "predict": predict, "check": check, "read": read, "compare": compare, "fit": fit,
            "topology": topology, "examples": examples, "size": size, "whatif": whatif, "report": report,
            "lab": lab}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iobound",
        description="Model a storage system, predict what a benchmark can show, and catch results too good to be true.",
        epilog="Exit status: 0 ok, 1 findings at or above --fail-on (check), 2 bad input or usage, 3 internal error, "
               "4 some probes failed (the others are saved), 130 interrupted.",
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
    # SIGTERM and SIGHUP (a closed ssh session) unwind like Ctrl-C, so tools and servers are stopped.
    handled = (signal.SIGTERM, signal.SIGHUP) if threading.current_thread() is threading.main_thread() else ()
    previous = {sig: signal.signal(sig, _interrupt) for sig in handled}
    try:
        return COMMANDS[args.command].run(args)
    except KeyboardInterrupt:
        sys.stderr.write("\niobound: interrupted\n")
        return EXIT_INTERRUPTED
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
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _interrupt(signum, frame):
    raise KeyboardInterrupt
