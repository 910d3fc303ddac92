"""Text for people: aligned tables, and the envelope of versioned JSON for machines."""

from __future__ import annotations

from typing import Sequence

from probes.document import dumps, envelope

__all__ = ["table", "envelope", "dumps"]


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> str:
    """An aligned plain-text table; columns listed in ``right`` are right-aligned (numbers)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells):
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(headers), line("-" * w for w in widths), *(line(r) for r in rows)])
