"""What a flow network's structure alone decides, found once per structure in a process: its graph, each layer's
edges, and which layers are in series (their limit a sum, no flow to solve). Networks alike but for their groups'
names share one: their nodes are numbered, not named."""

from __future__ import annotations

import functools
import operator
from typing import Callable, NamedTuple

from models.maxflow import FlowGraph

__all__ = ["CLIENTS", "STORAGE", "Skeleton", "numbered", "skeleton"]

CLIENTS, STORAGE = "⊤clients", "⊥storage"  # reserved node names; group names hold only [A-Za-z0-9_-]


class Skeleton(NamedTuple):
    """What a network's structure alone decides: its graph, each layer's edges, the edges of each layer in series
    (None: solve it), and a picker of each layer's figures out of all edges' (the key of the cuts found)."""

    graph: FlowGraph
    edges_of: dict[str, tuple[int, ...]]
    in_series: dict[str, tuple[int, ...] | None]
    figures_of: dict[str, Callable[[list[float]], object]]


def numbered(edges: list[tuple[str, str]]) -> tuple[tuple[int, int], ...]:
    """``edges`` between nodes numbered in the order they first appear, CLIENTS 0 and STORAGE 1: networks alike but for
    their groups' names (one client group or another of the same build) then share one skeleton."""
    number = {CLIENTS: 0, STORAGE: 1}
    return tuple((number.setdefault(u, len(number)), number.setdefault(v, len(number))) for u, v in edges)


@functools.lru_cache(maxsize=1024)
def skeleton(edges: tuple[tuple[int, int], ...], layers: tuple[str | None, ...], read: bool) -> Skeleton:
    """The skeleton of a network of ``edges`` (between nodes numbered by :func:`numbered`) as writes move (reversed
    for a ``read``), each of a layer's stage or None (unlimited), made once in a process: solving what a run implies
    builds thousands of networks of a few structures, in any topology."""
    nodes = max((x for edge in edges for x in edge), default=1) + 1
    edges = [(v, u) for u, v in edges] if read else list(edges)
    source, sink = (1, 0) if read else (0, 1)
    series = _Series(edges, source, sink)
    edges_of = {layer: tuple(i for i, named in enumerate(layers) if named == layer)
                for layer in dict.fromkeys(named for named in layers if named is not None)}
    return Skeleton(FlowGraph(nodes, edges, source, sink), edges_of,
                     {layer: series.edges_of(list(found)) for layer, found in edges_of.items()},
                     {layer: operator.itemgetter(*found) for layer, found in edges_of.items()})


class _Series:
    """Which layers of a network are in series: every path from source to sink crosses exactly one of their edges.

    Then each of those edges must be cut and all of them together are a cut, so the layer's own limit is their sum, no
    flow to solve. Built once per network structure, each layer's answer found once."""

    def __init__(self, edges: list[tuple[int, int]], source: int, sink: int):
        self.edges, self.source, self.sink = edges, source, sink
        self.out: dict[int, list[tuple[int, int]]] = {}
        self.into: dict[int, list[tuple[int, int]]] = {}
        for i, (a, b) in enumerate(edges):
            self.out.setdefault(a, []).append((i, b))
            self.into.setdefault(b, []).append((i, a))
        self.ahead = self.reach({source})
        self.behind = self.reach({sink}, forward=False)
        self._found: dict[tuple[int, ...], tuple[int, ...] | None] = {}

    def reach(self, start: set[int], avoiding: set[int] = frozenset(), forward: bool = True) -> set[int]:
        """The nodes reached from ``start`` over edges not in ``avoiding`` (backwards unless ``forward``)."""
        seen, arcs = set(start), self.out if forward else self.into
        todo = list(seen)
        while todo:
            for i, v in arcs.get(todo.pop(), ()):
                if v not in seen and i not in avoiding:
                    seen.add(v)
                    todo.append(v)
        return seen

    def edges_of(self, layer: list[int]) -> tuple[int, ...] | None:
        """The layer's edges on some path from source to sink when it is in series; else None (solve)."""
        key = tuple(layer)
        if key not in self._found:
            self._found[key] = self._in_series(layer)
        return self._found[key]

    def _in_series(self, layer: list[int]) -> tuple[int, ...] | None:
        edges, inside = self.edges, set(layer)
        if self.sink in self.reach({self.source}, inside):
            return None  # some path avoids the layer: it does not limit alone (solving says so too)
        used = [i for i in layer if edges[i][0] in self.ahead and edges[i][1] in self.behind]
        after = self.reach({edges[i][1] for i in used})
        if any(edges[j][0] in after for j in used):
            return None  # a path may cross two of them: solve
        return tuple(used)
