"""Small facts about a tool's text output that every reader needs: line numbers, how it starts, its command's words."""

from __future__ import annotations

import math
import shlex

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern

__all__ = ["line_of", "beginning", "split_words", "binary_size", "finite_number", "checked_number", "COUNT"]

# A count as tools print them: a whole number of at most 9 digits (tasks, nodes, repetitions, offsets).
COUNT = Pattern(r"[0-9]{1,9}")

_NUMBER = Pattern(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_SIZE = Pattern(r"([0-9]{1,15})([kKmMgGtTpPeE]?)")
_SUFFIXES = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50, "e": 2**60}
# Where a command has no quote and no backslash, shlex.split only splits at its blanks (space, tab,
# CR, LF); shlex reads a character at a time, 20 µs a word: too slow for a log of 20,000 runs.
_QUOTING = Pattern(r"[\\'\"]")
_SHELL_WORD = Pattern(r"[^ \t\r\n]+")


def line_of(text: str, offset: int) -> int:
    """The 1-based line of ``text`` that character ``offset`` is on."""
    return text.count("\n", 0, offset) + 1


def beginning(text: str) -> str:
    """How ``text`` starts, for an error message: its first line quoted (60 characters at most), or ``an empty text``.

    >>> beginning("  \\nIOR-3.3.0: MPI\\n"), beginning("")
    ("'IOR-3.3.0: MPI'", 'an empty text')
    """
    first = text.strip().split("\n", 1)[0][:60]
    return repr(first) if first else "an empty text"


def split_words(command: str) -> list[str]:
    """A command line split as a shell would; a line cut inside a quote is split at blanks instead."""
    if not _QUOTING.search(command):
        return _SHELL_WORD.findall(command)
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def binary_size(text: str) -> int | None:
    """Bytes of a size as HPC tools write them on command lines ("16m", "4K", "47008": k, m, g ... are powers of
    1024); None if ``text`` is not one.

    >>> binary_size("2m"), binary_size(" 47008 "), binary_size("1.5g")
    (2097152, 47008, None)
    """
    match = _SIZE.fullmatch(text.strip())
    return None if match is None else int(match[1]) * _SUFFIXES[match[2].lower()]


def finite_number(text: str) -> float | None:
    """A plain decimal number (no sign, no inf or nan) as a finite float; None if ``text`` is not one."""
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def checked_number(text: str, where: str, source: str, expected: str) -> float:
    """:func:`finite_number` of ``text``, else ToolOutputError at ``where`` saying what was ``expected`` and found."""
    value = finite_number(text)
    if value is None:
        raise ToolOutputError(source, where, f"expected {expected}; found {text[:40]!r}")
    return value
