"""Small facts about a tool's text output that every reader needs: line numbers, how it starts, its command's words."""

from __future__ import annotations

import shlex

__all__ = ["line_of", "beginning", "split_words"]


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
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()
