"""What reaches the terminal: text read from files shown as text, never obeyed as the terminal's commands."""

from __future__ import annotations

import sys
from typing import Iterable, TextIO

from assess.escapes import escaped

__all__ = ["Shown", "say_error"]

# An error's most characters: one that quotes what it read (a job name of ten megabytes) keeps its start and its end.
LONGEST = 2000


def say_error(message: object) -> None:
    """``iobound: error: MESSAGE`` on the standard error in one write (lines of MPI ranks sharing it stay whole), its
    middle left out where it is longer than :data:`LONGEST` characters, saying how much."""
    text = str(message)
    if len(text) > LONGEST:
        text = f"{text[:LONGEST // 2]} … ({len(text) - LONGEST:,} characters left out) … {text[-LONGEST // 2:]}"
    sys.stderr.write(f"iobound: error: {text}\n")


class Shown:
    """A text stream that writes the control characters of what it is given as escapes (``\\x1b``), so that a label,
    a system's name or a description read from a file cannot retitle, clear or recolour the user's terminal."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(escaped(text))

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
