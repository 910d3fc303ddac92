"""The errors iobound raises for bad input; each says where the problem is and what was expected.

Every class also inherits the builtin a caller would naturally catch (pint's pattern),
so ``except ValueError`` still works for library users.
"""

from __future__ import annotations

__all__ = ["IoboundError", "UnitError", "InputError", "ToolOutputError", "TopologyError"]


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
