"""Read any results file iobound knows, choosing the reader from the file's content, not its name.

One module per tool's output (``probes.readers.ior``, ``...fio``, ``...iperf3`` ...), each with
``looks_like(text)``, ``parse(text, source=...)`` and ``FORMAT``; a probe hands what its tool
printed to the same reader. The registry imports them when a file is first read, so a command
that reads none pays nothing for their patterns.

A binary format (a Darshan log) has a reader of the same shape whose ``looks_like`` judges the
file's first bytes (as decoded text: its header is ASCII) and whose ``parse`` takes the file's
bytes, read within the same limit as a text.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Iterable, Mapping

from probes.core.errors import ToolOutputError
from probes.core.inputs import format_size, open_input

if TYPE_CHECKING:
    from probes.core.run import Run

__all__ = ["read_results", "read_text", "READERS", "BINARY_READERS", "FORMATS"]

# In the order their sniffs are tried, each module imported when its turn comes: the name iobound read shows, and the
# module. A results table goes first: its sniff is a CSV header with its columns, which no tool's output begins with,
# and a table (iobound's own example and the format a user writes by hand) is then read without the others' imports.
_MODULES = {"table": "table", "fio": "fio", "fio-text": "fio_text", "ior": "ior", "mdtest": "mdtest", "io500": "io500",
            "elbencho": "elbencho", "hyperfine": "hyperfine", "iperf3": "iperf3", "iperf2": "iperf2", "ping": "ping",
            "mlperf": "mlperf", "gdsio": "gdsio", "dlio-log": "dlio_log", "kv-cache": "kvcache", "lmcache": "lmcache"}
# Binary formats, by the name iobound read shows: their sniffs are tried first, on the file's first bytes.
_BINARY = {"darshan": "darshan"}
# Outputs one file may hold one after another, each read by its own reader: a job's log or an io500
# driver log with the IOR and the mdtest runs of each phase. The first reader's sniff chooses the file;
# the others' runs are read too, never dropped without a word.
_TOGETHER = {"ior": {"mdtest": ("mdtest-", "SUMMARY")}}  # the other tool, and words its output holds (cheap to look for)
# Every tool prints what it is within its first lines: a larger file whose first 4 MiB no reader knows is refused
# without reading the rest (sniffing 4 MiB takes under a second; a whole 1 GiB file, minutes).
_SNIFF = 4 * 2**20


@functools.cache
def _reader(name: str) -> ModuleType:
    """The reader module of format ``name`` (text or binary), imported at its first use."""
    return importlib.import_module(f"{__name__}.{_MODULES.get(name) or _BINARY[name]}")


def _readers() -> dict[str, ModuleType]:
    return {name: _reader(name) for name in _MODULES}


def _binary() -> dict[str, ModuleType]:
    return {name: _reader(name) for name in _BINARY}


def __getattr__(name: str):
    """``READERS`` (name -> reader module of a text format, in the order they are tried), ``BINARY_READERS`` (of
    a binary format) and ``FORMATS`` (what each reads)."""
    if name == "READERS":
        return _readers()
    if name == "BINARY_READERS":
        return _binary()
    if name == "FORMATS":
        return _formats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _formats() -> tuple[str, ...]:
    return tuple(module.FORMAT for module in (*_readers().values(), *_binary().values()))


def read_results(path: str | Path, *, aliases: Mapping[str, str] | None = None) -> list[Run]:
    """The runs in a results file; ``aliases`` say what ambiguous units in a results table mean.

    The file is opened as :func:`probes.core.inputs.open_input` says (a regular file, no larger than
    the limit). A file larger than 4 MiB is read whole only if some reader knows its first 4 MiB:
    a big file in no format iobound reads is refused in a second, not after reading it all. A file
    whose first bytes a binary reader knows (a Darshan log) is handed to it as bytes.

    Raises
    ------
    ToolOutputError
        If the file cannot be read, is not a regular file, is larger than the limit, is in no
        format iobound knows, or is malformed.
    """
    source = str(path)
    with open_input(path, error=ToolOutputError) as file:
        text, whole = file.head(_SNIFF)
        binary = next((module for module in _binary().values() if module.looks_like(text)), None)
        if binary is not None:
            text = None  # the head goes before the bytes come
            return binary.parse(file.data(), source=source)
        if whole:
            return read_text(text, source=source, aliases=aliases)
        known = tuple(name for name, module in _readers().items() if module.looks_like(text))
        if not known:
            raise _unknown(text, source, f" (judged by its first {format_size(_SNIFF)})")
        text = None  # the head goes before the whole text comes
        text = file.text()
    return read_text(text, source=source, aliases=aliases, only=known)


def read_text(text: str, *, source: str, aliases: Mapping[str, str] | None = None,
              only: Iterable[str] | None = None) -> list[Run]:
    """The runs in ``text``, read by the reader whose sniff takes it (``source`` names it in messages and origins;
    ``only`` names the readers to try, for a large text whose beginning rules the others out).

    A file that holds IOR's output and mdtest's (an io500 driver log, a job's log) gives the runs
    of both, in the order of their lines.

    Raises
    ------
    ToolOutputError
        If the text is in no format iobound knows, or is malformed.
    """
    name = next((name for name in _MODULES if (only is None or name in only) and _reader(name).looks_like(text)), None)
    if name is None:
        raise _unknown(text, source)
    units = {"aliases": aliases} if name == "table" else {}  # only a table names its units itself
    runs = _reader(name).parse(text, source=source, **units)
    others = [_reader(other) for other, words in _TOGETHER.get(name, {}).items()
              if any(word in text for word in words) and _reader(other).looks_like(text)]
    if not others:
        return runs
    from probes.core.run import distinct_labels

    runs += [run for other in others for run in other.parse(text, source=source)]
    return distinct_labels(sorted(runs, key=lambda run: run.origin.line or 0))


def _unknown(text: str, source: str, judged: str = "") -> ToolOutputError:
    """The error of a text no reader takes: a CSV with other columns is told the columns a results table has."""
    from probes.readers.table import REQUIRED, WORKLOAD_COLUMNS, foreign_header

    header = foreign_header(text)
    if header is not None:
        return ToolOutputError(source, "line 1", f"a CSV with the columns {', '.join(header)[:200]}, not a results "
                               f"table{judged}: expected the columns {', '.join(REQUIRED)} (and optionally "
                               f"{', '.join(WORKLOAD_COLUMNS)}), or another format iobound reads")
    return ToolOutputError(source, "", f"not a format iobound reads{judged}; expected " + " or ".join(_formats()))
