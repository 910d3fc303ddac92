"""Read any results file iobound knows, choosing the reader from the file's content, not its name.

One module per tool's output (``probes.readers.ior``, ``...fio``, ``...iperf3`` ...), each with
``looks_like(text)``, ``parse(text, source=...)`` and ``FORMAT``; a probe hands what its tool
printed to the same reader. The registry imports them when a file is first read, so a command
that reads none pays nothing for their patterns.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Mapping

from probes.core.errors import ToolOutputError

if TYPE_CHECKING:
    from probes.core.run import Run

__all__ = ["read_results", "READERS", "FORMATS"]

# In the order their sniffs are tried: the name iobound read shows, and the module.
_MODULES = {"fio": "fio", "fio-text": "fio_text", "ior": "ior", "mdtest": "mdtest", "io500": "io500",
            "elbencho": "elbencho", "hyperfine": "hyperfine", "iperf3": "iperf3", "iperf2": "iperf2", "ping": "ping",
            "table": "table"}


@functools.cache
def _readers() -> dict[str, ModuleType]:
    return {name: importlib.import_module(f"{__name__}.{module}") for name, module in _MODULES.items()}


def __getattr__(name: str):
    """``READERS`` (name -> reader module, in the order they are tried) and ``FORMATS`` (what each reads)."""
    if name == "READERS":
        return _readers()
    if name == "FORMATS":
        return tuple(module.FORMAT for module in _readers().values())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    readers = _readers()
    for module in readers.values():
        if module.looks_like(text):
            units = {"aliases": aliases} if module is readers["table"] else {}  # only a table names its units itself
            return module.parse(text, source=source, **units)
    raise ToolOutputError(source, "", "not a format iobound reads; expected " + " or ".join(m.FORMAT for m in readers.values()))
