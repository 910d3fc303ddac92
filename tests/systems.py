"""Topologies for the tests: TOML text or a dict of its tables, with its links given as chains of group names."""

from __future__ import annotations

import copy
import itertools
import tomllib
from pathlib import Path
from typing import Iterable

import tomli_w

from topologies.load import load_topology, topology_from_dict
from topologies.topology import Topology


def topology(document: str | dict, *, links: str | Iterable[str] = (), path: Path | None = None,
             source: str = "<topology>", name: str = "topology") -> Topology:
    """The topology ``document`` (TOML text, or the dict TOML reads) describes, with the links of ``links`` after
    its own: each chain of group names ("c net s d") links its neighbours (c-net, net-s, s-d). Given a ``path``,
    it is written there as a topology file and loaded from it (its probe files found beside it)."""
    doc = tomllib.loads(document) if isinstance(document, str) else copy.deepcopy(document)
    doc["links"] = [*doc.get("links", []), *({"between": list(pair)} for pair in _pairs(links))]
    if path is None:
        return topology_from_dict(doc, source=source, name=name)
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return load_topology(path)


def links_toml(*chains: str) -> str:
    """The ``[[links]]`` tables of the chains of group names, as TOML text for a file a test writes or edits."""
    return "".join(f'[[links]]\nbetween = ["{a}", "{b}"]\n' for a, b in _pairs(chains))


def _pairs(chains: str | Iterable[str]) -> list[tuple[str, str]]:
    """The neighbours of each chain of group names: "c net s d" gives (c, net), (net, s), (s, d)."""
    return [pair for chain in ([chains] if isinstance(chains, str) else chains) for pair in itertools.pairwise(chain.split())]
