"""How the lab runs a command: never through a shell, always within a time limit."""

from __future__ import annotations

import os

from probes.measure.tool import ToolOutput, run_tool

__all__ = ["execute", "COMMAND"]

# Seconds a command of ip, tc, mount or ssh-keygen may take.
COMMAND = 10.0


def execute(*argv: str | os.PathLike, timeout: float = COMMAND, check: bool = True) -> ToolOutput:
    """Run a command of the lab within ``timeout`` seconds; with ``check`` it must succeed (else ToolFailedError)."""
    return run_tool([str(a) for a in argv], timeout=timeout, check=check)
