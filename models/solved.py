"""Ceilings and implied figures solved so far, by the content of the model's topology and what was asked: a list
states the same hardware in many rows and lists a submission again, so its models ask the same. The most recent
4,096 are kept."""

from __future__ import annotations

import collections
from dataclasses import fields
from typing import Callable

from topologies.topology import Capacity, Topology
from models.skeleton import skeleton

__all__ = ["Content", "content", "once", "forget"]

_SOLVED: collections.OrderedDict[tuple, object] = collections.OrderedDict()
_MOST = 4096


def content(topology: Topology) -> Content:
    """What a model reads of ``topology``, as a key: its groups and links with every figure's value (its number, of
    which type, and units), range, metric and kind of source; not the names, descriptions and notes that only say where
    a figure comes from. Plain values, not text: formatting each figure with pint cost a tenth of judging a list."""
    return Content((tuple(tuple(_plain(getattr(g, f.name)) for f in fields(g) if f.name != "description")
                          for g in topology.groups), tuple((link.a, link.b, _plain(link.bandwidth)) for link in topology.links)))


class Content(tuple):
    """A model's content (:func:`content`), hashed once: every ceiling and implied figure asked is looked up by it."""

    def __hash__(self) -> int:
        if "_hash" not in self.__dict__:
            self.__dict__["_hash"] = tuple.__hash__(self)
        return self.__dict__["_hash"]


def _plain(value):
    """``value`` as hashable plain data: a capacity as its figures and kind of source, a quantity as its number's type,
    number and units (so that 1 and 1.0, or 1 GB and 1000 MB, stay apart as their text did)."""
    if isinstance(value, Capacity):
        return _plain(value.value), value.metric, value.source.kind, _plain(value.range)
    if isinstance(value, dict):
        return tuple((key, _plain(item)) for key, item in value.items())
    if isinstance(value, tuple):
        return tuple(map(_plain, value))
    if hasattr(value, "_units") and hasattr(value, "_magnitude"):  # a pint quantity
        return type(value._magnitude), value._magnitude, value._units
    return value


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
    """Forget everything solved, and the networks' structures found (:func:`models.skeleton.skeleton`), as a new process
    starts: a timed pass then solves each again from cold."""
    _SOLVED.clear()
    skeleton.cache_clear()
