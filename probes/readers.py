"""Read any results file iobound knows, choosing the reader from the file's content, not its name."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from probes import elbencho, fio, fiotext, hyperfine, io500, ior, mdtest, table
from probes.errors import ToolOutputError
from probes.run import Run

__all__ = ["read_results", "FORMATS"]

FORMATS = ("fio JSON output (--output-format=json)", "fio normal text output", "IOR output (text, or -O summaryFormat=json)",
           "mdtest output", "io500 results (result.txt, result_summary.txt, io500.sh summaries)",
           "elbencho output", "hyperfine --export-json",
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
    if fiotext.looks_like(text):
        return fiotext.parse(text, source=source)
    if ior.looks_like(text):
        return ior.parse(text, source=source)
    if mdtest.looks_like(text):
        return mdtest.parse(text, source=source)
    if io500.looks_like(text):
        return io500.parse(text, source=source)
    if elbencho.looks_like(text):
        return elbencho.parse(text, source=source)
    if hyperfine.looks_like(text):
        return hyperfine.parse(text, source=source)
    if table.looks_like(text):
        return table.parse(text, source=source, aliases=aliases)
    raise ToolOutputError(source, "", "not a format iobound reads; expected " + " or ".join(FORMATS))
