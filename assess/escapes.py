"""Control characters in text read from files, written as escapes (``\\x1b``): a label, a system's name or a
description shown on the terminal cannot retitle, clear or recolour it, and a table is aligned as it is shown."""

from __future__ import annotations

import re

__all__ = ["escaped"]

# A control character other than a line's end, a carriage return or a tab (C1 controls too, which some terminals obey);
# the escape sequences iobound itself writes pass whole: its two colours and their end (render.paint), and the clearing
# of a progress line (progress).
_CONTROL = re.compile(r"\x1b\[(?:0|31|33)m|\x1b\[K|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def escaped(text: str) -> str:
    """``text`` with each control character written as ``\\xNN``, iobound's own colours and line clearing kept."""
    return _CONTROL.sub(_visible, text)


def _visible(match: re.Match) -> str:
    text = match[0]
    return text if len(text) > 1 else f"\\x{ord(text):02x}"
