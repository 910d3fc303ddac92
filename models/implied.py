"""What a run at a target rate needs of the figures a topology assumes: the value of each that makes a model's ceiling
reach the target, found by search (a ceiling is monotone in each figure; see :mod:`models.reaching`).

:func:`implied` says it of every assumed figure, the others at their most favourable; :func:`alone` of one, the
others unlimited. Both are asked of a :class:`models.predict.Model`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from probes.core.errors import TopologyError
from probes.core.units import Q_, Metric, magnitude_in
from probes.core.workload import Operation, Workload
from models import solved
from models.ceiling import Implied
from models.predict import Model
from models.reaching import least_reaching, reaching
from topologies.topology import Capacity, Component, Kind

if TYPE_CHECKING:
    from pint import Quantity, Unit

__all__ = ["implied", "alone"]


def implied(model: Model, workload: Workload, clients: tuple[str, ...] | None, target: float) -> tuple[Implied, ...]:
    """What a run at ``target`` (B/s or op/s) needs of each assumed figure (a range, or one value): every one
    whose least favourable end alone (a range's, or the value assumed), the others at their most favourable
    (a range's end, unlimited), puts the ceiling under ``target``, with the value that makes the ceiling
    exactly ``target`` (bisection: the ceiling is monotone in each figure). Each is necessary, not all
    together sufficient. A target above what the stated figures allow is taken at that. Solved once for models
    of the same content and a target (see :mod:`models.solved`), each figure as this topology states it."""
    found = solved.once(("implied", model.content, workload, clients, target),
                        lambda: _implied_by(model, workload, clients, target))
    own = model.ranges | model.assumed
    return tuple(need if need.stated is own[need.component] else replace(need, stated=own[need.component])
                 for need in found)


def _implied_by(model: Model, workload: Workload, clients: tuple[str, ...] | None, target: float) -> tuple[Implied, ...]:
    stated = model.stated
    most = model.stated_bound(workload, clients)
    target = min(target, most)
    read = _read(stated, workload, clients)
    found = []
    for place, capacity in (model.ranges | model.assumed).items():
        if not _concerns(place.key, workload.operation) or capacity.range and read is not None and place.group not in read:
            continue  # a range whose group the ceiling does not read: at its least, the ceiling is the most, as stated
        bound, unit, worst, least = _varying(stated, place, capacity, workload, clients)
        if least >= target:
            continue
        best = magnitude_in(capacity.ends[1], unit) if capacity.range else reaching(bound, worst, target, capacity.metric)
        if best is None:  # no value of this one alone reaches it: only with others
            continue
        high = most if capacity.range and math.isfinite(most) else bound(best)
        t = least_reaching(lambda t: bound(worst + t * (best - worst)), target, least, high)
        found.append(Implied(place, capacity, Q_(worst + t * (best - worst), unit)))
    return tuple(found)


def alone(model: Model, workload: Workload, clients: tuple[str, ...] | None, target: float,
          place: Component) -> Quantity | None:
    """What a run at ``target`` (B/s or op/s) needs of the assumed figure at ``place`` (a range, or one value)
    whatever every other assumed figure is (each unlimited), past its range's end where it must: the least any
    part there must carry. None where its least favourable end already allows ``target`` or no value of it does."""
    capacity = (model.ranges | model.assumed).get(place)
    if capacity is None or capacity.metric is Metric.LATENCY or not _concerns(place.key, workload.operation):
        return None
    free = Model(model.topology.replaced({p: Capacity(None, c.metric, c.source)
                                          for p, c in (model.ranges | model.assumed).items() if p != place}))
    bound, unit, worst, least = _varying(free, place, capacity, workload, clients)
    if least >= target:
        return None
    best = worst * target / least if least > 0 else worst  # a ceiling proportional to the figure reaches it here
    reached = bound(best)
    if math.isclose(reached, target, rel_tol=1e-9):  # proportional, as where the figure alone binds: solved
        return Q_(best, unit)
    if reached < target:
        best = reaching(bound, best, target, capacity.metric)
        if best is None:
            return None
        reached = bound(best)
    t = least_reaching(lambda t: bound(worst + t * (best - worst)), target, least, reached)
    return Q_(worst + t * (best - worst), unit)


def _read(model: Model, workload: Workload, clients: tuple[str, ...] | None) -> frozenset[str] | None:
    """The groups (and links, ``links[i]``) whose figures the ceiling of a data ``workload`` on ``model`` reads: those
    of its network's stages on some way from the source to the sink (a stage on none carries no flow), and the nodes
    that host servers; None for metadata, reads and writes at once, or clients that do not fit (any may count)."""
    if workload.operation.is_metadata or workload.operation is Operation.MIXED:
        return None
    try:
        chosen, _ = model.nodes(workload, clients)
    except TopologyError:
        return None
    network = model.network(model.shape(workload), chosen)
    graph = network.graph
    ahead, behind = _reached(graph.source, graph.tails, graph.heads), _reached(graph.sink, graph.heads, graph.tails)
    on_way = [stage for stage, u, v in zip(network.stages, graph.tails, graph.heads)
              if stage is not None and u in ahead and v in behind]
    return frozenset(c.group for stage in on_way for c in stage.components) | {
        g.on for g in model.topology.of_kind(Kind.SERVER) if g.on}


def _reached(start: int, tails: list[int], heads: list[int]) -> set[int]:
    """The nodes reached from ``start`` along the edges ``tails[i]`` to ``heads[i]``."""
    out: dict[int, list[int]] = {}
    for u, v in zip(tails, heads):
        out.setdefault(u, []).append(v)
    seen, todo = {start}, [start]
    while todo:
        for v in out.get(todo.pop(), ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def _varying(model: Model, place: Component, capacity: Capacity, workload: Workload,
             clients: tuple[str, ...] | None) -> tuple[Callable[[float], float], Unit, float, float]:
    """What a search varies: the ceiling on ``model`` with the figure at ``place`` at a value (in the capacity's unit),
    that unit, the capacity's least favourable end and the ceiling there."""
    unit = capacity.value.units
    worst = magnitude_in(capacity.ends[0], unit)
    # Varied from a model with the figure at its worst, each value's flow network is that one's with the group's chain
    # made again (an assumed figure is unlimited in ``model``: varied from it, each would build a network of its own).
    base = model.varied(place, capacity.at(Q_(worst, unit)))

    def bound(value: float) -> float:
        return base.varied(place, capacity.at(Q_(value, unit))).most(workload, clients)

    return bound, unit, worst, base.most(workload, clients)


# What only metadata operations use, and what only moving data uses: a range of one cannot imply anything of a
# workload of the other (a quick way past solving for it).
_METADATA_KEYS = ("metadata", "directory", "journal")
_DATA_KEYS = ("bandwidth", "iops", "memory_bandwidth", "memory", "nic")
_OPERATIONS = frozenset(op.value for op in Operation)


def _concerns(key: str, operation: Operation) -> bool:
    """Whether a capacity named ``key`` (nic, write_bandwidth, create_metadata ...) can bound ``operation``."""
    own, _, base = key.partition("_") if key.partition("_")[0] in _OPERATIONS else ("", "", key)
    if operation.is_metadata:
        return base not in _DATA_KEYS and own in ("", operation.value)
    if base in _METADATA_KEYS:
        return False
    return own in ("",) or operation is Operation.MIXED or own == operation.value
