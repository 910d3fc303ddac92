"""Ceilings and implied figures solved so far, by the content of the model's topology and what was asked: a list
states the same hardware in many rows and lists a submission again, so its models ask the same. The most recent
4,096 are kept."""

from __future__ import annotations

import collections
from dataclasses import replace
from typing import Callable

from topologies.topology import Capacity, Source, Topology

__all__ = ["content", "once", "forget"]

_SOLVED: collections.OrderedDict[tuple, object] = collections.OrderedDict()
_MOST = 4096


def content(topology: Topology) -> str:
    """What a model reads of ``topology``, as text: its groups and links with every figure's value, range, metric and
    kind of source; not the names, descriptions and notes that only say where a figure comes from."""
    def bare(capacity: Capacity | None) -> Capacity | None:
        return None if capacity is None else replace(capacity, source=Source(capacity.source.kind))

    return repr((tuple(replace(g, description="", capacities={k: bare(c) for k, c in g.capacities.items()})
                       for g in topology.groups),
                 tuple(replace(link, bandwidth=bare(link.bandwidth)) for link in topology.links)))


def once(key: tuple, solve: Callable[[], object]):
    """What ``solve()`` gives, solved once for ``key`` (its first part a model's :func:`content`) among the last
    4,096 asked."""
    if key in _SOLVED:
        _SOLVED.move_to_end(key)
        return _SOLVED[key]
    found = _SOLVED[key] = solve()
    if len(_SOLVED) > _MOST:
        _SOLVED.popitem(last=False)
    return found


def forget() -> None:
    """Forget everything solved (a timed pass then solves each again)."""
    _SOLVED.clear()
