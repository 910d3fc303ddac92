"""iobound's JSON files: a format name and version around every document, read back strictly (written by
:mod:`probes.core.outputs`)."""

from __future__ import annotations

import json
import os
from typing import Callable, Iterable, Iterator

import probes
from probes.core.errors import InputError
from probes.core.inputs import read_input

__all__ = ["envelope", "dumps", "dumps_listed", "Listed", "read_document"]


def envelope(kind: str, version: str, body: dict) -> dict:
    """Wrap a document with its format name and version, so readers can check what they got."""
    return {"format": f"iobound/{kind}", "format_version": version, "iobound_version": probes.__version__, **body}


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)


def dumps_listed(doc: dict, key: str, items: Iterable) -> Iterator[str]:
    """The pieces of ``dumps(doc)`` with ``key`` (its last) the list of ``items``, made an item at a time: a list of
    any length in the memory of one item."""
    pieces: list[str] = []
    listed = Listed(doc, key, pieces.append)
    for item in items:
        listed.add(item)
        yield from pieces
        pieces.clear()
    listed.close()
    yield from pieces


class Listed:
    """``dumps(doc)`` with ``key`` the list of the items :meth:`add` is given, handed to ``write`` a piece at a time as
    they come (the opening with the first), then the keys :meth:`close` is given after the list: a document whose
    list is made as it is written, in the memory of one item."""

    def __init__(self, doc: dict, key: str, write: Callable[[str], object]):
        head = dumps({**doc, key: []})
        self._opening, self._write, self._count = head[: head.rindex("[]")], write, 0

    def add(self, item) -> None:
        piece = json.dumps(item, indent=2, ensure_ascii=False).replace("\n", "\n    ")
        self._write(f"{self._opening}[\n    {piece}" if self._count == 0 else f",\n    {piece}")
        self._count += 1

    def close(self, after: dict | None = None) -> None:
        """The list's end, then ``after``'s keys (known only once the list is done), and the document's."""
        self._write(self._opening + "[]" if self._count == 0 else "\n  ]")
        self._write(f",{dumps(after)[1:-2]}\n}}" if after else "\n}")


def read_document(path: str | os.PathLike, kind: str, versions: tuple[str, ...]) -> dict:
    """The JSON document at ``path``, checked to be ``iobound/<kind>`` in one of ``versions``."""
    source = str(path)
    try:
        text = read_input(path, errors="strict")
    except UnicodeDecodeError as exc:
        raise InputError(source, f"byte {exc.start}", "not UTF-8 text; iobound writes its JSON files in UTF-8") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno} column {exc.colno}", f"not valid JSON: {exc.msg}") from None
    except RecursionError:  # json recurses into each nested list or object
        raise InputError(source, "", "not JSON iobound wrote: lists or objects nested too deeply") from None
    wanted = f"iobound/{kind}"
    if not isinstance(doc, dict) or doc.get("format") != wanted:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(source, "format", f"expected an {wanted} document. Got {found!r} instead.")
    if doc.get("format_version") not in versions:
        raise InputError(source, "format_version", f"version {doc.get('format_version')!r} of {wanted} cannot be read; "
                                                   f"this iobound reads {', '.join(versions)}")
    return doc
