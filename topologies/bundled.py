"""The example systems and results bundled with iobound, and the rule every command and notebook follows: a file, or else a bundled example of that name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from probes.core.errors import InputError, TopologyError

if TYPE_CHECKING:  # the loader loads with the first topology: reading a results file needs none
    from probes.core.run import Run
    from topologies.topology import Kind, Topology

__all__ = ["EXAMPLES", "example_path", "example_names", "load_example", "resolve", "open_topology", "group_counts",
           "read_runs"]

EXAMPLES = Path(__file__).with_name("examples")


def example_names() -> list[str]:
    """File names of the bundled examples, e.g. ``lecture.toml``, ``lecture-results.csv``."""
    return sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".toml", ".csv"))


def example_path(name: str) -> Path | None:
    """The bundled file called ``name`` (with or without ``.toml``), or None."""
    for candidate in (name, f"{name}.toml"):
        if candidate in example_names():
            return EXAMPLES / candidate
    return None


def load_example(name: str) -> Topology:
    """Load a bundled topology by name; raises KeyError for an unknown name."""
    path = example_path(name)
    if path is None or path.suffix != ".toml":
        raise KeyError(f"no bundled topology {name!r}; the examples are: {', '.join(example_names())}")
    from topologies.load import load_topology

    return load_topology(path)


def resolve(word: str) -> Path:
    """A file the user named, or else the bundled example of that name; an existing file always wins."""
    path = Path(word)
    if os.path.lexists(path):  # a link that loops or leads nowhere is the user's file too: its opener says what is wrong
        return path
    bundled = example_path(word)
    if bundled is not None:
        return bundled
    raise InputError(word, "", f"no such file, and no bundled example of that name (examples: {', '.join(example_names())})")


def open_topology(word: str, nodes: int | None = None) -> Topology:
    """The topology in a file or bundled example (``lecture``), or the one a submission's description gives (an io500
    folder, its system-information.txt or io500.sh; an MLPerf Storage system description); its ``path`` says which.
    ``nodes``: the client nodes, where an io500 description does not state them."""
    from topologies.load import load_topology

    path = resolve(word)
    if path.suffix == ".toml":  # a topology: no description's readers and tables to load
        return load_topology(path)
    from topologies.described.io500 import described_topology, is_description
    from topologies.described.mlperf import is_system_description, system_topology

    if is_system_description(path):
        return system_topology(path)
    return described_topology(path, nodes) if is_description(path) else load_topology(path)


def group_counts(word: str) -> tuple[Path, dict[Kind, list[tuple[str, int]]]]:
    """The topology file or bundled example, and each kind's groups in it with their member counts, in file order;
    the capacities are not read: they may name a probe set not measured yet (the one a cluster probe that takes its
    roles from this file is about to write)."""
    from topologies.load import group_tables, read_toml
    from topologies.topology import Kind

    path = resolve(word)
    groups = list(group_tables(read_toml(path, "the topology file", TopologyError), str(path)))
    return path, {kind: [(name, count) for of, name, _, _, count in groups if of is kind] for kind in Kind}


def read_runs(word: str, aliases: Mapping[str, str] | None = None) -> list[Run]:
    """The runs of a results file or bundled example (``lecture-results.csv``); ``aliases`` say what ambiguous units mean."""
    from probes.readers import read_results  # every reader's patterns: only a command that reads results pays for them

    return read_results(resolve(word), aliases=aliases)
