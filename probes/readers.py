"""Read any results file iobound knows, choosing the reader from the file's content, not its name."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from probes import fio, ior, table
from probes.errors import ToolOutputError
from probes.run import Run

__all__ = ["read_results", "FORMATS"]

FORMATS = ("fio JSON output (--output-format=json)", "IOR output (text, or -O summaryFormat=json)",
           "a results CSV with columns " + ", ".join(table.REQUIRED))


def read_results(path: str | Path, *, aliases: Mapping[str, str] | None = None) -> list[Run]:
    """The runs in a results file.

    Raises
    ------
    ToolOutputError
        If the file cannot be read, is in no format iobound knows, or is malformed.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ToolOutputError(source, "", f"cannot read the file ({exc.strerror or exc})") from exc
    if fio.looks_like(text):
        return fio.parse(text, source=source)
    if ior.looks_like(text):
        return ior.parse(text, source=source)
    if table.looks_like(text):
        return table.parse(text, source=source, aliases=aliases)
    raise ToolOutputError(source, "", "not a format iobound reads; expected " + " or ".join(FORMATS))
