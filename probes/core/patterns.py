"""Regular expressions compiled at their first use, not at import.

``iobound read`` tries every reader's sniff, so it imports every reader: compiling all of their 140 patterns at import
cost each command that reads a file about 40 ms, though a file in one format matches the patterns of one reader.
"""

from __future__ import annotations

import functools
import re

__all__ = ["Pattern"]


class Pattern:
    """``re.compile(source, flags)``, compiled when one of its attributes (``match``, ``search``, ``sub``, ``pattern``
    ...) is first asked for; each is then the compiled pattern's own, kept as an attribute of this one.

    >>> number = Pattern(r"[0-9]+")
    >>> number.findall("4 KiB, 16 KiB")
    ['4', '16']
    """

    def __init__(self, source: str, flags: int = 0):
        self._source, self._flags = source, flags

    @functools.cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self._source, self._flags)

    def __getattr__(self, name: str):
        if name.startswith("_"):  # its own (not yet set in a copy) or a protocol's (__setstate__): not the pattern's
            raise AttributeError(name)
        found = getattr(self.compiled, name)
        setattr(self, name, found)  # asked for again: found as a plain attribute, at no cost
        return found

    def __repr__(self) -> str:
        return f"Pattern({self._source!r}, {self._flags!r})"
