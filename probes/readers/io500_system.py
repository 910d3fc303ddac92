"""Read the hardware descriptions io500 submissions carry, and the io500 list database's rows.

Three forms state the same fields (client nodes, processes per node, data and metadata servers with
their devices and networks):

- ``io500_info_*="..."`` shell variables: the info creator's ``system-information.txt`` and newer
  ``io500.sh`` scripts (``io500_info_ds_nodes="42"``);
- the submission web form's JSON (``{"DATA": {"type": "Site", ...}}``), a tree of the site, its
  machine's node groups and its storage system's server groups, read into the same names;
- a row of the list database's ``submissions`` table (``information_ds_nodes``), which also holds
  every phase's result as the list published it: ior phases in GiB/s, mdtest and find in kIOPS.

A field keeps the name both forms share (``ds_nodes``, ``md_storage_type``, ``client_procs_per_node``)
and where it was read, so that a topology built from it can cite each figure.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator

from probes.core.errors import ToolOutputError
from probes.core.inputs import iter_lines, open_input
from probes.core.patterns import Pattern
from probes.core.run import Run
from probes.readers.io500 import phase_run

__all__ = ["Description", "Submission", "looks_like_info", "looks_like_form", "looks_like_list", "read_info", "read_form",
           "read_description", "read_list", "iter_list", "ListFile", "LIST_PHASES", "count"]

# The list database's phase columns, in the order io500 runs them, with the unit the list keeps.
LIST_PHASES = {"ior_easy_write": "GiB/s", "mdtest_easy_write": "kop/s", "ior_hard_write": "GiB/s",
               "mdtest_hard_write": "kop/s", "find_easy": "kop/s", "find_hard": "kop/s", "ior_easy_read": "GiB/s",
               "mdtest_easy_stat": "kop/s", "ior_hard_read": "GiB/s", "mdtest_hard_stat": "kop/s",
               "mdtest_easy_delete": "kop/s", "mdtest_hard_read": "kop/s", "mdtest_hard_delete": "kop/s"}
_INFO = Pattern(r"\s*(?:export\s+)?io500_info_([\w-]+)=(?:\"([^\"]*)\"|'([^']*)'|(\S*))\s*(?:#.*)?")
_INFO_SNIFF = Pattern(r"^\s*(?:export\s+)?io500_info_[\w-]+=", re.MULTILINE)
_LIST_COLUMNS = ("information_system", "information_client_nodes", "ior_easy_write")
# A count's parts: "16 + 8", "12 All Flash, 56 Hybrid": a number, and words that say what it counts.
_PARTS = Pattern(r"\s*(?:[,;+&]|\band\b)\s*")
# A number with a minus before it (ASCII, or the typographic signs a word processor puts there).
_NEGATIVE = Pattern(r"\s*[-\u2212\u2012\u2013]\s*\d")
_COUNTED = Pattern(r"(\d{1,7})(?:\s+[A-Za-z][A-Za-z -]*)?")
_PREFIX = "information_"
_FORM_SNIFF = Pattern(r'\s*\{\s*"DATA"\s*:\s*\{')
# What marks a storage system's server group of the web form as its metadata servers (Lustre's MDS).
_FORM_METADATA = ("mds", "metadata")


@dataclass(frozen=True)
class Description:
    """A submission's hardware as stated: field name -> text, with where each field was read."""

    fields: dict[str, str]
    source: str
    where: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> str:
        """The field's text, stripped; "" where the description leaves it out."""
        return self.fields.get(name, "").strip()

    def cite(self, name: str) -> str:
        """Where ``name`` was read, for a capacity's note: ``io500 ds_network (system-information.txt:31)``, or the
        option that gave it (``client_nodes (--nodes)``)."""
        place = self.where.get(name, "")
        if place.startswith("--"):
            return f"{name} given with {place}"
        return f"io500 {name} ({self.source}{':' + place if place else ''})"

    def given(self, name: str, value: str, where: str) -> Description:
        """This description with ``name`` stated as ``value`` (from ``where``, e.g. ``--nodes``) where it is not."""
        if self.get(name):
            return self
        return replace(self, fields=self.fields | {name: value}, where=self.where | {name: where})

    @property
    def title(self) -> str:
        """The system and its institution, as the submission names them."""
        system, institution = self.get("system"), self.get("institution")
        return f"{system} ({institution})" if system and institution else system or institution or self.source


@dataclass(frozen=True)
class Submission:
    """One row of the list database: its id, the list it appeared on, its description and its phases' runs."""

    id: str
    list_name: str
    status: str
    description: Description
    runs: tuple[Run, ...]


def looks_like_info(text: str) -> bool:
    """Whether ``text`` sets io500_info_* variables (system-information.txt, io500.sh)."""
    return _INFO_SNIFF.search(text) is not None


def looks_like_form(text: str) -> bool:
    """Whether ``text`` is the io500 web form's JSON description (``{"DATA": {"type": "Site", ...}}``)."""
    return _FORM_SNIFF.match(text) is not None


def looks_like_list(text: str) -> bool:
    """Whether ``text`` is a CSV of the list database's submissions table (its header names its columns)."""
    header = next(iter_lines(text), "")
    return all(column in header for column in _LIST_COLUMNS)


def read_info(text: str, *, source: str) -> Description:
    """The io500_info_* variables of a system-information.txt or io500.sh; the last assignment of a name wins.

    Raises
    ------
    ToolOutputError
        If the text sets no io500_info_* variable.
    """
    fields, where = {}, {}
    for number, line in enumerate(iter_lines(text), start=1):
        match = _INFO.fullmatch(line)
        if match:
            name = match[1].replace("-", "_")
            fields[name] = next(value for value in match.groups()[1:] if value is not None)
            where[name] = str(number)
    if not fields:
        raise ToolOutputError(source, "", "expected io500_info_* variables (io500_info_ds_nodes=\"...\"), as the io500 "
                              "info creator writes them to system-information.txt; found none")
    return Description(fields, source, where)


def read_description(text: str, *, source: str) -> Description:
    """A single description: the web form's JSON (:func:`read_form`) or io500_info_* variables (:func:`read_info`)."""
    return read_form(text, source=source) if looks_like_form(text) else read_info(text, source=source)


def read_form(text: str, *, source: str) -> Description:
    """The io500 web form's JSON description in the info variables' names: the system and its institution, the
    storage system's software, its data and metadata servers (count, memory, network), and the fabric of the
    machine's nodes, which stands for the servers' (its speed unstated) where the form states none.

    The form lists the machine's node groups (``node_groups``), not the nodes that ran io500, so
    ``client_nodes`` stays unstated (``check --nodes`` gives it); where one group states an
    interconnect, it is the clients' network (``client_network``). Each field's place is its path
    in the form's tree (``Site/StorageSystem lustre06/Lustre/OSS lustre06-oss``).

    Raises
    ------
    ToolOutputError
        If the text is not the form's JSON (it wraps long lines inside strings: a line break counts
        as the space it replaced), or states no system, storage system or server.
    """
    try:
        data = json.loads(" ".join(text.splitlines()))["DATA"]
        if not isinstance(data, dict):
            raise TypeError("DATA is not an object")
    except (ValueError, KeyError, TypeError) as exc:
        raise ToolOutputError(source, "", f"is not the io500 web form's JSON description ({exc})") from None
    fields, where, groups, networks, counted = {}, {}, [], [], []

    def put(name: str, value, place: str) -> None:
        if isinstance(value, list):  # ["196", "GB"]: a number and its unit
            value = " ".join(str(v) for v in value)
        if isinstance(value, (str, int, float)) and str(value).strip() and name not in fields:
            fields[name], where[name] = str(value).strip(), place

    put("institution", _attributes(data).get("institution"), "Site")
    for node, place in _tree(data, "Site"):
        kind, att = str(node.get("type", "")), _attributes(node)
        link = _attributes(_child(node, "Interconnect"))
        network = f"{link.get('type', '')} {link.get('speed', '')}".strip()
        if _NEGATIVE.match(str(link.get("speed", ""))):
            raise ToolOutputError(source, f"{place}/Interconnect speed", f"a port's speed must be more than zero. Got "
                                  f"{link['speed']!r} instead.")
        storage = "/StorageSystem" in place
        if any(place.startswith(f"{group}/") for group in counted):
            continue  # a part of a server group already counted (its disks, its processors)
        if kind == "Supercomputer":
            put("system", att.get("name"), place)
        elif kind == "Nodes" and not storage:
            groups.append(f"{att.get('name', '?')}: {att.get('count', '?')}" + (f" ({network})" if network else ""))
            if network:
                networks.append((network, f"{place}/Interconnect"))
            if link.get("type"):
                put("node_fabric", link["type"], f"{place}/Interconnect")
        elif kind == "StorageSystem":
            put("filesystem_type", att.get("software") or att.get("type"), place)
            put("storage_install_date", att.get("installation date"), place)
            put("storage_refresh_date", att.get("refresh date"), place)
            put("filesystem_name", att.get("name"), place)
            put("filesystem_version", att.get("version"), place)
        elif att.get("count") and storage:
            counted.append(place)
            side = "md" if any(word in kind.lower() for word in _FORM_METADATA) else "ds"
            put(f"{side}_nodes", att.get("count"), place)
            put(f"{side}_volatile_memory_capacity", _attributes(_child(node, "Memory")).get("net capacity"),
                f"{place}/Memory")
            if network:
                put(f"{side}_network", network, f"{place}/Interconnect")
    if groups:
        fields["node_groups"], where["node_groups"] = "; ".join(groups), "Site/Supercomputer"
    if len(networks) == 1:  # one node group on the fabric: the clients' network, as io500's clients run there
        put("client_network", *networks[0])
    for side in ("ds", "md"):  # where the form states no servers' network: the nodes' fabric, its speed unstated
        if f"{side}_nodes" in fields and "node_fabric" in fields:
            put(f"{side}_network", fields["node_fabric"], where["node_fabric"] + " (the nodes' fabric; the servers' "
                "ports and speed are not stated)")
    if not any(name in fields for name in ("system", "filesystem_type", "ds_nodes", "md_nodes")):
        raise ToolOutputError(source, "", "the io500 web form's JSON states no system, storage system or servers")
    return Description(fields, source, where)


def _attributes(node) -> dict:
    att = node.get("att") if isinstance(node, dict) else None
    return att if isinstance(att, dict) else {}


def _child(node: dict, kind: str) -> dict:
    return next((c for c in node.get("childs") or () if isinstance(c, dict) and c.get("type") == kind), {})


def _tree(node: dict, path: str):
    """Every node below ``node`` of the form's tree, with its path (``Site/StorageSystem lustre06/Lustre``)."""
    for child in node.get("childs") or ():
        if isinstance(child, dict):
            name = _attributes(child).get("name")
            place = f"{path}/{child.get('type', '?')}" + (f" {name}" if name else "")
            yield child, place
            yield from _tree(child, place)


def read_list(text: str, *, source: str) -> list[Submission]:
    """Every row of the list database's submissions table, with its description and one run per phase it reports.

    Raises
    ------
    ToolOutputError
        If the header lacks the table's columns, or a phase's value is not a number.
    """
    return list(iter_list(io.StringIO(text), source=source))


def iter_list(lines: Iterable[str], *, source: str) -> Iterator[Submission]:
    """The submissions of the list's ``lines`` (each with its end, cut at "\\n" alone), one at a time as its row is
    read: a list of any size in the memory of one row (:func:`read_list` holds them all).

    Raises
    ------
    ToolOutputError
        When it comes to it: if the header lacks the table's columns, or a row is not whole, or a phase's value is
        not a number.
    """
    lines = iter(lines)
    header = next(lines, "")
    if not looks_like_list(header):
        raise ToolOutputError(source, "line 1", "expected the io500 list database's submissions table as CSV, with "
                              f"columns {', '.join(_LIST_COLUMNS)}; found {(header.splitlines() or [''])[0][:80]!r}")
    # a spreadsheet saved in a locale whose decimal mark is a comma separates its fields with ";" and writes 16,85
    semicolons = header.count(";") > header.count(",")
    rows = csv.DictReader(itertools.chain((header,), lines), delimiter=";" if semicolons else ",")
    try:
        for row in rows:
            yield _submission(_whole(row, rows, source), source, rows.line_num, decimal="," if semicolons else ".")
    except csv.Error as exc:
        raise ToolOutputError(source, f"line {rows.line_num}", f"is not CSV the list database writes: {exc}") from None


class ListFile:
    """The list database's CSV at ``path``, read a row at a time each time it is gone through (``iobound review``
    goes through it twice): a list of any size in the memory of the rows in flight.

    Raises (when gone through)
    ------
    ToolOutputError
        If the file cannot be read, or as :func:`iter_list` says.
    """

    def __init__(self, path: str, *, source: str | None = None):
        self.path, self.source = path, source or str(path)

    def __iter__(self) -> Iterator[Submission]:
        with open_input(self.path, error=ToolOutputError) as file:
            yield from iter_list(file.lines(), source=self.source)


def _whole(row: dict[str, str | None], rows: csv.DictReader, source: str) -> dict[str, str | None]:
    """``row`` as read, where it has the header's every column and no more.

    Raises
    ------
    ToolOutputError
        If the row is short or long (a line cut off, a stray line, a quote left open), naming its line.
    """
    fields = len(rows.fieldnames or ())
    found = fields + len(row.get(None) or ()) if None in row else sum(value is not None for value in row.values())
    if found != fields:
        first = next((value for value in row.values() if isinstance(value, str)), "")
        raise ToolOutputError(source, f"line {rows.line_num}", f"is a row of {found} field(s), the header names "
                              f"{fields}: not a whole submission (it starts {first[:40]!r})")
    return row


def _submission(row: dict[str, str | None], source: str, line: int, decimal: str = ".") -> Submission:
    row = {key: value or "" for key, value in row.items() if key is not None}
    where = f"line {line}"
    fields = {key.removeprefix(_PREFIX): value for key, value in row.items() if key.startswith(_PREFIX)}
    description = Description(fields, source, {name: str(line) for name in fields})
    nodes, ppn = count(fields.get("client_nodes", "")), count(fields.get("client_procs_per_node", ""))
    list_name = row.get("information_list_name", "") or "unlisted"
    runs = []
    for column, unit in LIST_PHASES.items():
        text = row.get(column, "").strip()
        if not text:
            continue
        try:
            value = float(text.replace(decimal, "."))
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ToolOutputError(source, where, f"expected a number for {column}; found {text[:40]!r}")
        if value <= 0:  # a phase that did not run
            continue
        run = phase_run(column.replace("_", "-"), value, unit, nodes=nodes, ppn=ppn, source=source, line=line,
                        version=f"io500 list {list_name}", tags=(("submission", row.get("id", "")),))
        if run is not None:
            runs.append(run)
    return Submission(row.get("id", ""), list_name, row.get("status", ""), description, tuple(runs))


def count(text: str) -> int | None:
    """A count as descriptions write it: "12", "1,024", "16 + 8", "12 All Flash, 56 Hybrid" (their sum); None for
    anything else ("4 x 8", "15/1", "N/A") or a total of 0."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text.strip())  # thousands: 1,024
    parts = [p for p in _PARTS.split(text) if p]
    numbers = [_COUNTED.fullmatch(p) for p in parts]
    if not parts or not all(numbers):
        return None
    return sum(int(n[1]) for n in numbers) or None
