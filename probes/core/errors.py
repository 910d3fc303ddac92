"""The errors iobound raises for bad input; each says where the problem is and what was expected.

Every class also inherits the builtin a caller would naturally catch (pint's pattern),
so ``except ValueError`` still works for library users.
"""

from __future__ import annotations

import shlex

__all__ = ["IoboundError", "UnitError", "InputError", "ToolOutputError", "TopologyError", "ProbeError",
           "ToolNotFoundError", "ToolFailedError"]


class IoboundError(Exception):
    """Base class of every error iobound raises on purpose; the CLI prints these without a traceback."""


class UnitError(IoboundError, ValueError):
    """Raised when a quantity has no unit, the wrong kind of unit, or an ambiguous one."""


class InputError(IoboundError, ValueError):
    """Raised when a file the user gave cannot be used; names the file, the place in it and the problem."""

    def __init__(self, source: str, where: str, detail: str):
        self.source, self.where, self.detail = source, where, detail
        place = f"{source}: {where}" if where else source
        super().__init__(f"{place}: {detail}")

    def __reduce__(self):
        return type(self), (self.source, self.where, self.detail)


class ToolOutputError(InputError):
    """Raised when a benchmark's output (fio JSON, a results table ...) is malformed or truncated."""


class TopologyError(InputError):
    """Raised when a topology file is malformed or describes a system that cannot carry data."""


class ProbeError(IoboundError, RuntimeError):
    """Raised when a probe cannot measure: a tool is missing, fails, hangs, or a target is unsafe."""


class ToolNotFoundError(ProbeError):
    """Raised when a measurement tool is not installed; the message says how to install it."""

    def __init__(self, tool: str, hint: str):
        self.tool, self.hint = tool, hint
        super().__init__(f"{tool} is not installed or not on PATH; {hint}")

    def __reduce__(self):
        return type(self), (self.tool, self.hint)


class ToolFailedError(ProbeError):
    """Raised when a tool exits with an error or runs past its time limit; shows argv, status and stderr's end."""

    def __init__(self, argv: tuple[str, ...], status: int | None, stderr: str, timeout: float | None = None):
        self.argv, self.status, self.stderr, self.timeout = tuple(argv), status, stderr, timeout
        tail = " | ".join(line.strip() for line in stderr.strip().splitlines()[-5:] if line.strip())  # one line
        what = f"did not finish within {timeout:g} s and was stopped" if timeout is not None else f"exited with status {status}"
        super().__init__(f"{shlex.join(self.argv)} {what}" + (f"; its stderr ends: {tail}" if tail else ""))

    def __reduce__(self):
        return type(self), (self.argv, self.status, self.stderr, self.timeout)

