"""iobound's command line as a test runs it in-process."""

from __future__ import annotations

from assess.cli import main


def command_refusal(argv: list[str], capsys) -> str:
    """The one line iobound refuses ``argv`` with: exit 2, from the command itself or from an option's type (which
    argparse reports by the usage, then one line), never a traceback."""
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code
    assert status == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.rstrip("\n").splitlines()[-1]
