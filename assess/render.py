"""Text for people: aligned tables, and the envelope of versioned JSON for machines."""

from __future__ import annotations

import json
from typing import Sequence

import probes

__all__ = ["table", "envelope", "dumps"]


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> str:
    """An aligned plain-text table; columns listed in ``right`` are right-aligned (numbers)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells):
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(headers), line("-" * w for w in widths), *(line(r) for r in rows)])


def envelope(kind: str, version: str, body: dict) -> dict:
    """Wrap machine output with its format name and version, so readers can check what they got."""
    return {"format": f"iobound/{kind}", "format_version": version, "iobound_version": probes.__version__, **body}


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)
