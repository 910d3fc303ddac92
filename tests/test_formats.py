"""Every versioned JSON format iobound writes keeps its keys until its version changes.

Each format's keys, as a real command writes them, are pinned in tests/data/formats.json
beside the format_version they belong to: a change of keys with no new version fails here,
and so does a new version whose keys are not pinned again (``python tests/test_formats.py``
prints the pins afresh, for a reviewer to compare).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "tests" / "data" / "formats.json"
# Maps keyed by data (symbol names, tags, capacity keys, group names), not by the format: their entries stand as ``*``.
DATA_MAPS = {"symbols", "tags", "capacities", "counts"}
# One command per format, on the bundled examples, that writes every optional part it has.
COMMANDS = {
    "prediction": ["predict", "lecture", "--op", "read", "--transfer-size", "1MiB", "--nodes", "10", "--curve", "--json"],
    "prediction-sweep": ["predict", "lecture", "--op", "read,write", "--transfer-size", "1MiB", "--json"],
    "check": ["check", "lecture", "lecture-results.csv", "--fail-on", "never", "--json"],
    "results": ["read", "lecture-results.csv", "--json"],
    "topology": ["topology", "lecture", "--json"],
    "whatif": ["whatif", "lecture", "--set", "compute.nic=2GbE", "--op", "read", "--transfer-size", "1MiB", "--json"],
    "examples": ["examples", "--json"],
    "comparison": ["compare", "lecture-results.csv", "--json"],
    "fit": ["fit", "lecture-results.csv", "--over", "transfer-size", "--op", "read", "--json"],
    "sizing": ["size", "--clients", "100", "--client-nic", "10GB/s", "--target", "read=10GB/s", "--top", "1", "--json"],
}


def key_paths(value, prefix: str = "") -> set[str]:
    """``a.b``, ``a[].c``: every key of a JSON value by where it stands; lists are merged over their items."""
    if isinstance(value, dict):
        paths = set()
        for key, inner in value.items():
            path = f"{prefix}{key}"
            paths.add(path)
            if key in DATA_MAPS and isinstance(inner, dict):
                paths |= set().union(*(key_paths(entry, path + ".*.") for entry in inner.values()))
            else:
                paths |= key_paths(inner, path + ".")
        return paths
    if isinstance(value, list):
        return set().union(*(key_paths(item, prefix.removesuffix(".") + "[].") for item in value)) if value else set()
    return set()


def written(name: str) -> dict:
    """The document the command of format ``name`` prints."""
    from assess.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(COMMANDS[name]) == 0
    doc = json.loads(out.getvalue())
    assert doc["format"] == f"iobound/{name}"
    return doc


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_formats_keys_change_only_with_its_version(name):
    pinned = json.loads(PINS.read_text(encoding="utf-8"))[name]
    doc = written(name)
    keys = key_paths(doc)
    added, removed = sorted(keys - set(pinned["keys"])), sorted(set(pinned["keys"]) - keys)
    if doc["format_version"] == pinned["version"]:
        assert not (added or removed), (f"iobound/{name} {doc['format_version']} changed its keys (added {added}, "
                                        f"removed {removed}): give it a new format_version and a line of history")
    else:
        pytest.fail(f"iobound/{name} is now {doc['format_version']} (pinned {pinned['version']}): pin its keys again "
                    "(python tests/test_formats.py > tests/data/formats.json)")


def test_results_csv_columns_are_the_results_formats():
    from probes.core.run import CSV_COLUMNS, RESULTS_VERSION

    pinned = json.loads(PINS.read_text(encoding="utf-8"))["results.csv"]
    assert (RESULTS_VERSION, list(CSV_COLUMNS)) == (pinned["version"], pinned["keys"])


def test_key_paths_merge_list_items_and_leave_data_maps_closed():
    doc = {"runs": [{"a": 1}, {"b": {"c": 2}}], "tags": {"x": 1}, "e": [], "symbols": {"n": 1, "B": {"unit": "B/s"}}}
    assert key_paths(doc) == {"runs", "runs[].a", "runs[].b", "runs[].b.c", "tags", "e", "symbols", "symbols.*.unit"}


if __name__ == "__main__":  # print the pins of the formats as the code writes them now
    from probes.core.run import CSV_COLUMNS, RESULTS_VERSION

    pins = {name: {"version": (doc := written(name))["format_version"], "keys": sorted(key_paths(doc))}
            for name in sorted(COMMANDS)}
    pins["results.csv"] = {"version": RESULTS_VERSION, "keys": list(CSV_COLUMNS)}
    json.dump(pins, sys.stdout, indent=1)
    print()
