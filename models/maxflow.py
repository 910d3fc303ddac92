"""Maximum flow and minimum cut on a small fixed graph, solved many times with different capacities.

networkx rebuilds its residual graph on every call, which dominates the time on the few-hundred-edge
graphs of a topology's groups. :class:`FlowGraph` builds its residual structure once, as plain lists of
ints (numpy costs more than it saves on arrays this small), and folds each run of edges through nodes
that only pass flow along (a group's chain of stages) into one edge, so that paths are short.
:meth:`FlowGraph.solve` then runs Dinic's algorithm on it in pure Python.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import compress

__all__ = ["Cut", "FlowGraph"]

# A residual at most this fraction of the flow pushed so far counts as zero: float noise from adding
# and subtracting the same amounts must not open augmenting paths or move the cut.
NOISE = 1e-12


@dataclass(frozen=True)
class Cut:
    """A maximum flow, and the minimum cut nearest the source (which every maximum flow yields alike).

    ``value`` is the cut's capacity (math.inf when a path of unlimited edges joins source and sink);
    ``source_side`` the nodes reachable from the source in the final residual graph (it holds the sink
    when unbounded); ``edges`` the indices of the finite edges from ``source_side`` to the rest;
    ``flows`` the flow on each edge, or () when unbounded.
    """

    value: float
    source_side: frozenset[Hashable]
    edges: tuple[int, ...]
    flows: tuple[float, ...]


class FlowGraph:
    """A directed graph with a source and a sink, ready to solve for any capacities of its edges.

    Parameters
    ----------
    nodes : a node count (nodes are 0 .. count-1) or the node labels, which edges, source and sink then use.
    edges : (tail, head) per edge; parallel edges and self-loops are allowed.

    >>> FlowGraph(3, [(0, 1), (1, 2)], source=0, sink=2).solve([2.0, 1.0])
    Cut(value=1.0, source_side=frozenset({0, 1}), edges=(1,), flows=(1.0, 1.0))
    """

    def __init__(self, nodes: int | Sequence[Hashable], edges: Sequence[tuple[Hashable, Hashable]],
                 source: Hashable, sink: Hashable):
        self.labels = tuple(range(nodes)) if isinstance(nodes, int) else tuple(nodes)
        index = {label: i for i, label in enumerate(self.labels)}
        unknown = [x for x in (source, sink, *(x for edge in edges for x in edge)) if x not in index]
        if len(index) != len(self.labels) or unknown or source == sink:
            raise ValueError(f"need distinct nodes, edges between them and a source other than the sink; got nodes "
                             f"{self.labels!r}, source {source!r}, sink {sink!r}, unknown nodes {unknown!r}")
        self.source, self.sink = index[source], index[sink]
        self.tails, self.heads = [index[u] for u, _ in edges], [index[v] for _, v in edges]
        outs: list[list[int]] = [[] for _ in self.labels]
        indegree = [0] * len(self.labels)
        for i, (u, v) in enumerate(zip(self.tails, self.heads)):
            outs[u].append(i)
            indegree[v] += 1
        passing = [indegree[x] == len(outs[x]) == 1 and x not in (self.source, self.sink)
                   for x in range(len(self.labels))]
        self.chains: list[tuple[int, ...]] = []  # the edges each folded edge stands for, tail to head
        self.chain_of = [-1] * len(edges)  # the chain each edge is in; -1: on a cycle of passing nodes, never reached
        arcs: list[list[tuple[int, int]]] = [[] for _ in self.labels]  # (arc, its head); arc 2c: chain c, 2c + 1: back
        for i, tail in enumerate(self.tails):
            if not passing[tail]:
                chain = [i]
                while passing[self.heads[chain[-1]]]:
                    chain.append(outs[self.heads[chain[-1]]][0])
                for j in chain:
                    self.chain_of[j] = len(self.chains)
                arcs[tail].append((2 * len(self.chains), self.heads[chain[-1]]))
                arcs[self.heads[chain[-1]]].append((2 * len(self.chains) + 1, tail))
                self.chains.append(tuple(chain))
        self.arcs = [tuple(pairs) for pairs in arcs]

    def solve(self, capacities: Sequence[float]) -> Cut:
        """The maximum flow and minimum cut when edge ``i`` carries at most ``capacities[i]`` (math.inf: no limit)."""
        if len(capacities) != len(self.tails) or not min(capacities, default=0.0) >= 0 or math.isnan(sum(capacities)):
            raise ValueError(f"need {len(self.tails)} capacities, each >= 0 (math.inf for none); got {capacities!r}")
        residual = [0.0] * (2 * len(self.chains))
        residual[0::2] = [min(map(capacities.__getitem__, chain)) for chain in self.chains]
        noise = 0.0
        while True:
            level = self._levels(residual, noise)
            if level[self.sink] < 0:
                break
            amount = self._block(residual, level, noise)
            if amount == math.inf:
                level = self._levels(residual, noise)
                break
            noise += NOISE * amount
        inside, cut = self._unfold(capacities, residual, level, noise)
        side = frozenset(compress(self.labels, inside))
        if level[self.sink] >= 0:
            return Cut(math.inf, side, (), ())
        chain_flows = residual[1::2] + [0.0]  # the last entry serves edges in no chain (index -1)
        flows = tuple(map(chain_flows.__getitem__, self.chain_of))
        return Cut(math.fsum(capacities[i] for i in cut), side, cut, flows)

    def _unfold(self, capacities: Sequence[float], residual: list[float], level: list[int],
                noise: float) -> tuple[list[bool], tuple[int, ...]]:
        """Spread the folded answer over the chains: per node whether the source reaches it, and the edges cut."""
        inside = [depth >= 0 for depth in level]
        cut = []
        for c, chain in enumerate(self.chains):
            flow = residual[2 * c + 1]
            if flow > noise and inside[self.heads[chain[-1]]]:  # reached back along the chain from its head
                for i in chain[:-1]:
                    inside[self.heads[i]] = True
            elif inside[self.tails[chain[0]]]:  # reached from its tail up to the first saturated edge
                for i in chain:
                    if capacities[i] - flow <= noise:
                        if not inside[self.heads[i]]:
                            cut.append(i)
                        break
                    inside[self.heads[i]] = True
        return inside, tuple(sorted(cut))

    def _levels(self, residual: list[float], noise: float) -> list[int]:
        """Breadth-first distance from the source over arcs with residual above ``noise``; -1 where unreachable."""
        level = [-1] * len(self.arcs)
        level[self.source] = 0
        queue = [self.source]
        for u in queue:  # the loop sees nodes appended while it runs
            below = level[u] + 1
            for a, v in self.arcs[u]:
                if level[v] < 0 and residual[a] > noise:
                    level[v] = below
                    queue.append(v)
        return level

    def _block(self, residual: list[float], level: list[int], noise: float) -> float:
        """Push a blocking flow along shortest paths, depth first with current-arc pointers; return the amount pushed.

        Returns math.inf, without pushing it, on a path of unlimited arcs. Marks dead ends in ``level`` with -1.
        """
        arcs, source, sink = self.arcs, self.source, self.sink
        current = [0] * len(arcs)  # per node, the first arc not yet known to be useless this phase
        path: list[int] = []  # arcs from the source to u
        tails: list[int] = []  # their tails
        total, u = 0.0, source
        while True:
            if u == sink:
                amount = min(map(residual.__getitem__, path))
                if amount == math.inf:
                    return amount
                for a in path:
                    residual[a] -= amount
                    residual[a ^ 1] += amount
                total += amount
                k = [residual[a] <= noise for a in path].index(True)  # back to before the first saturated arc
                u = tails[k]
                del path[k:], tails[k:]
                continue
            out, below = arcs[u], level[u] + 1
            for k in range(current[u], len(out)):
                a, v = out[k]
                if level[v] == below and residual[a] > noise:
                    current[u] = k
                    path.append(a)
                    tails.append(u)
                    u = v
                    break
            else:
                if u == source:
                    return total
                level[u] = -1
                path.pop()
                u = tails.pop()
