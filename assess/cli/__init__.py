"""The iobound command line: one subcommand per question, ``main(argv) -> exit status``.

Each command is a module of this package whose docstring is its help; only the command that
runs is imported, and each imports its heavy libraries where it uses them, so every command
starts at once. Exit statuses are in :mod:`assess.cli.status`; ``--debug`` shows the traceback
of an error.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import re
import signal
import sys
import threading
from types import ModuleType
from typing import Sequence

import probes
from probes.core.errors import IoboundError
from probes.core.inputs import input_limit
from probes.core.registry import lean
from assess.cli.terminal import Shown, say_error
from assess.cli.status import EXIT_BUG, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBE_FAILED

__all__ = ["main", "build_parser", "COMMANDS", "command", "EXIT_OK", "EXIT_FINDINGS", "EXIT_INPUT", "EXIT_BUG",
           "EXIT_PROBE_FAILED", "EXIT_INTERRUPTED"]

# The commands in the order --help lists them; each is the module assess.cli.<name>.
COMMANDS = ("probe", "predict", "plan", "check", "review", "read", "compare", "fit", "topology", "examples", "size", "whatif",
            "report", "lab")


# A module's docstring: the string literal its source opens with (only that literal is parsed).
_DOCSTRING = re.compile(r'\A\s*(?:#[^\n]*\n\s*)*("""|\'\'\')(?:\\.|(?!\1).)*\1', re.DOTALL)


def command(name: str) -> ModuleType:
    """The module of command ``name``: its docstring, ``configure(parser)`` and ``execute(args)``."""
    return importlib.import_module(f"{__name__}.{name}")


def _docstring(name: str) -> str:
    """A command's docstring read from its source, so that listing the commands imports none of them."""
    spec = importlib.util.find_spec(f"{__name__}.{name}")
    found = _DOCSTRING.match(spec.loader.get_source(spec.name))
    return ast.literal_eval(found[0]) if found else command(name).__doc__  # any other form: import it


class _Intermixed(argparse.ArgumentParser):
    """A command's parser that takes its options between its positional arguments too (``check lecture --fail-on never
    results.csv``), as argparse's parse_intermixed_args does; a command it cannot mix (one with commands of its own)
    is parsed as argparse does by default."""

    _mixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._mixing:  # parse_known_intermixed_args parses in two passes, each through this method
            return super().parse_known_args(args, namespace)
        self._mixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        except TypeError:  # sub-commands or positionals in a group: argparse cannot mix those
            return super().parse_known_args(args, namespace)
        finally:
            self._mixing = False


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; only ``chosen`` (all, when None) gets its options, which imports its module."""
    parser = argparse.ArgumentParser(
        prog="iobound",
        description="Model a storage system, predict what a benchmark can show, and catch results too good to be true.",
        epilog="Exit status: 0 ok, 1 findings at or above --fail-on (check), 2 bad input or usage, 3 internal error, "
               "4 some probes failed (the others are saved), 130 interrupted (143 on SIGTERM, 129 on SIGHUP).",
    )
    parser.add_argument("--version", action="version", version=f"iobound {probes.__version__}")
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: --debug may stand before or after the command without one resetting the other.
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error")
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Intermixed)
    for name in COMMANDS:
        configured = chosen is None or name == chosen
        doc = command(name).__doc__ if configured else _docstring(name)
        sub = commands.add_parser(name, parents=[common], help=doc.strip().splitlines()[0], description=doc,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        if configured:
            command(name).configure(sub)
    return parser


def _drop_stdout() -> None:
    """Point the standard output's descriptor at /dev/null, so that what is still buffered fails no second time at exit."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)


# A value with a minus before a digit ("-1GiB", "-100Gbit/s"): argparse takes it for an option unless it is a bare number.
_NEGATIVE = re.compile(r"-\d")


def _joined(argv: list[str]) -> list[str]:
    """``argv`` with each long option followed by a negative value ("--data-set -1GiB") joined into one word
    ("--data-set=-1GiB"), so that argparse hands the value to the option's type, which says what is wrong with it,
    rather than reporting the option as missing its value."""
    out: list[str] = []
    for word in argv:
        if out and _NEGATIVE.match(word) and out[-1].startswith("--") and "=" not in out[-1] and out[-1] != "--":
            out[-1] += "=" + word
        else:
            out.append(word)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run iobound with ``argv`` (default: the process's arguments) and return the exit status."""
    lean()  # a command's start: pint without the libraries only a library's user needs
    argv = _joined(sys.argv[1:] if argv is None else list(argv))
    # The first word that is not an option names the command (the top level has only flags).
    chosen = next((word for word in argv if not word.startswith("-")), "")
    args = build_parser(chosen if chosen in COMMANDS else "").parse_args(argv)
    debug = getattr(args, "debug", False)
    # SIGTERM and SIGHUP (a closed ssh session) unwind like Ctrl-C, so tools and servers are stopped; the exit
    # status then says which signal it was, as a shell reports a process a signal ended: 143, 129 (Ctrl-C: 130).
    received: list[int] = []

    def interrupt(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt

    handled = (signal.SIGTERM, signal.SIGHUP) if threading.current_thread() is threading.main_thread() else ()
    previous = {sig: signal.signal(sig, interrupt) for sig in handled}
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Shown(sys.stdout), Shown(sys.stderr)  # what files hold is shown, never obeyed
    try:
        with input_limit(getattr(args, "max_input_size", None)):
            status = command(args.command).execute(args)
            sys.stdout.flush()  # here, so that a full disk behind a redirection is an error, not a lost end
        return 128 + received[0] if received and status == EXIT_INTERRUPTED else status
    except KeyboardInterrupt:
        sys.stderr.write(f"\niobound: {'stopped by ' + signal.Signals(received[0]).name if received else 'interrupted'}\n")
        return 128 + received[0] if received else EXIT_INTERRUPTED
    except IoboundError as exc:
        if debug:
            raise
        say_error(exc)
        return EXIT_INPUT
    except BrokenPipeError:  # output piped into head and closed early
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:
        if debug:
            raise
        from probes.core.outputs import WRITE_ERRORS  # tempfile, shutil and csv: only a command that writes pays

        if isinstance(exc, OSError) and exc.filename is None and exc.errno in WRITE_ERRORS:
            # a write that names no file is the standard output's (the command's files name theirs): a redirection
            # to a full disk or a read-only file system is the user's to fix, not a bug
            sys.stderr.write(f"iobound: error: standard output: cannot be written: {exc.strerror}\n")
            _drop_stdout()
            return EXIT_INPUT
        # a bug of iobound's, not the user's: say so in one line
        print(f"iobound: internal error: {type(exc).__name__}: {exc} (please report it; --debug shows the traceback)",
              file=sys.stderr)
        return EXIT_BUG
    finally:
        sys.stdout, sys.stderr = streams
        for sig, handler in previous.items():
            signal.signal(sig, handler)

