"""Read any results file iobound knows, choosing the reader from the file's content, not its name."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from probes.readers import elbencho, fio, fio_text, hyperfine, io500, ior, iperf2, iperf3, mdtest, ping, table
from probes.core.errors import ToolOutputError
from probes.core.run import Run

__all__ = ["read_results", "READERS", "FORMATS"]

# In the order their sniffs are tried: each module has looks_like(text) and parse(text, source=...).
READERS = {"fio": fio, "fio-text": fio_text, "ior": ior, "mdtest": mdtest, "io500": io500, "elbencho": elbencho,
           "hyperfine": hyperfine, "iperf3": iperf3, "iperf2": iperf2, "ping": ping, "table": table}
FORMATS = tuple(module.FORMAT for module in READERS.values())


def read_results(path: str | Path, *, aliases: Mapping[str, str] | None = None) -> list[Run]:
    """The runs in a results file; ``aliases`` say what ambiguous units in a results table mean.

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
    for module in READERS.values():
        if module.looks_like(text):
            if module is table:
                return table.parse(text, source=source, aliases=aliases)
            return module.parse(text, source=source)
    raise ToolOutputError(source, "", "not a format iobound reads; expected " + " or ".join(FORMATS))
