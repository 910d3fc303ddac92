"""The search: every design the question allows, each one's cheapest counts by integer programming, the cheapest few
predicted again with the full model.

The model predicts each target on the design with one of every part; each layer's limit is
linear in the part counts (sympy checks this, :mod:`models.sizing.forms`), so "every layer at
least its target and margin", "usable capacity at least the target" and "no more drives than
bays" are linear constraints, and the cheapest counts meet them: servers in whole HA pairs when
asked, across at least the failure domains the redundancy needs, drives in whole parity groups
(and whole enclosures when asked). Where one count alone is priced (the metadata servers; the
servers of whole enclosures, whose drives follow from their bays) its least is found directly
(:func:`_fewest`); else scipy's ``milp`` finds them.
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass

from probes.core.errors import InputError
from probes.core.heap import set_aside
from probes.core.units import canonical
from models.ceiling import TIE
from models import solved
from models.formulas import algebra, count_symbol
from models.predict import Model

from models.sizing.answer import Configuration, Shortfall, Sizing
from models.sizing.designs import Plan, designs
from models.sizing.forms import linear_form
from models.sizing.question import Question

__all__ = ["size", "clear_caches"]

# The programme prices a switch per port, the bill whole switches: so many configurations more than asked (and of each
# family) are priced whole and ranked again by their bill's total.
_TRIED = 5


def size(question: Question, top: int = 5) -> Sizing:
    """The ``top`` cheapest configurations that meet every target, and the cheapest of each family (see the
    module's description).

    The data targets and the metadata targets share no part, so each design's storage counts
    and its metadata servers (the cheapest type for its network) are two small programmes. Parts
    whose figures are ranges count at their least favourable ends.
    """
    question = question.at_least()
    priced, shortfalls, memo, best, chosen = [], {}, {}, {}, {}

    def record(found):
        for short in found:
            key = (str(short.target), short.layer)
            if key not in shortfalls or canonical(short.limit) > canonical(shortfalls[key].limit):
                shortfalls[key] = short

    candidates = sorted((Plan(question, d) for d in designs(question)), key=lambda p: (p.least_price, str(p)))
    families = {p.design.data_family for p in candidates}
    prices = []  # the solved designs' prices, kept in order
    with set_aside() as keep:  # what the designs solved so far keep, out of the garbage collector's walks
        for plan in candidates:
            keep()
            least = plan.least_price
            enough = len(prices) >= top and least > prices[top - 1]
            if enough and all(least > best.get(f, math.inf) for f in families):
                break  # this design and every later one cost more than the top and each family's cheapest
            if enough and least > best.get(plan.design.data_family, math.inf):
                continue
            data = _solve(plan, memo)
            if isinstance(data, tuple) and question.needs_metadata:
                network = id(plan.design.network)  # the metadata servers' programme depends on the network alone
                if network not in chosen:
                    options = [(_solve(plan.with_metadata(m), memo), m) for m in question.metadata]
                    solutions = [(found[0], m, found[1]) for found, m in options if isinstance(found, tuple)]
                    if not solutions:
                        record(short for found, _ in options for short in found)
                    chosen[network] = min(solutions, key=lambda s: (s[0], s[1].name)) if solutions else None
                if chosen[network] is None:
                    continue
                price, metadata, counts = chosen[network]
                plan, data = plan.with_metadata(metadata), (data[0] + price, data[1] + counts)
            if isinstance(data, tuple):
                priced.append((data[0], plan, data[1]))
                bisect.insort(prices, data[0])
                family = plan.design.data_family
                best[family] = min(best.get(family, math.inf), data[0])
            else:
                record(data)
    priced.sort(key=lambda s: (s[0], str(s[1])))
    configurations, alternatives, tried = [], {}, {}
    for price, plan, counts in priced:
        family = plan.design.family
        if len(configurations) >= top + _TRIED and tried.get(family, 0) >= _TRIED:
            continue
        configuration = Configuration.of(plan, counts)
        if not configuration.met(question.targets):
            continue
        tried[family] = tried.get(family, 0) + 1
        if len(configurations) < top + _TRIED:
            configurations.append(configuration)
        if family not in alternatives or configuration.total < alternatives[family].total:
            alternatives[family] = configuration
    configurations = sorted(configurations, key=lambda c: (c.total, str(c.design)))[:top]
    return Sizing(question, tuple(configurations), len(candidates), len(priced),
                  () if priced else tuple(shortfalls.values()),
                  tuple(sorted(alternatives.values(), key=lambda c: c.total)),
                  tuple(n.name for n in question.networks if n not in question.reachable()))


@dataclass(frozen=True)
class _Row:
    """One linear constraint: ``coefficients · counts >= right`` (from a layer, the capacity, or the bays)."""

    coefficients: tuple[float, ...]
    right: float


def _solve(plan: Plan, memo: dict) -> tuple[float, tuple[int, ...]] | list[Shortfall]:
    """The cheapest counts and their price: of the storage (servers, drives) for a design without metadata
    servers, of the metadata servers alone for one with them; or the layers no count lifts to a target."""
    question, design = plan.question, plan.design
    metadata = design.metadata is not None
    key = (id(design.network), id(design.metadata)) if metadata else \
        (id(design.network), design.ports, id(design.server), id(design.device))
    if key not in memo:
        memo[key] = _programme(plan)
    rows, shortfalls, prices, lower, steps = memo[key]
    if shortfalls:
        return list(shortfalls)
    # the metadata servers alone, or the servers of whole enclosures (their drives follow from the bays): one count
    # is priced, and its least that the others can complete is found directly
    units = (metadata or question.whole_enclosures) and _fewest(rows, lower) or _milp(prices, rows, lower)
    counts = tuple(n * s for n, s in zip(units, steps))
    if not metadata and question.whole_enclosures:  # every bay filled: as many whole groups as the bays hold
        bays = counts[0] * (design.server.slots - question.spares)
        counts = (counts[0], bays // question.group * question.group)
    return math.fsum(p * n for p, n in zip(prices, units)), counts


def _programme(plan: Plan):
    """The rows, shortfalls, prices, least counts and steps of :func:`_solve`'s programme, from the model's layers.

    Its variables count steps: servers in pairs with --ha, drives in whole redundancy groups,
    so each column is the layer's per-member coefficient times its step.
    """
    question, design = plan.question, plan.design
    metadata = design.metadata is not None
    groups = design.groups[2:] if metadata else design.groups
    steps = (question.step(design.metadata),) if metadata else (question.step(design.server), question.group)
    model = Model(plan.unit)
    rows, shortfalls = [], []
    for target in question.targets:
        if target.workload.operation.is_metadata != metadata:
            continue
        need = question.need(target)
        for layer in model.ceiling(target.workload, caches=False).layers:
            if layer.value is None:
                continue
            form = linear_form(layer.expression, tuple(count_symbol(g) for g in groups))
            if form is None:
                continue  # not linear in the counts: the full model's check of the answer judges it
            constant, coefficients = form.evaluate(layer.values)
            if not any(coefficients) and constant < need * (1 - TIE):
                shortfalls.append(Shortfall(target, layer.layer, layer.value, layer.components))
            elif any(coefficients):
                rows.append(_Row(tuple(c * s for c, s in zip(coefficients, steps)), need - constant))
    if metadata:
        return tuple(rows), tuple(shortfalls), (steps[0] * design.metadata_price,), (1,), steps
    if question.usable is not None:
        per_device = canonical(design.device.capacity("size").value) * question.efficiency
        rows.append(_Row((0.0, per_device * steps[1]), canonical(question.usable)))
    rows.append(_Row((float(design.server.slots - question.spares) * steps[0], -1.0 * steps[1]), 0.0))  # drives fit the bays
    lower = (math.ceil(question.domains / steps[0]), 1)
    prices = (steps[0] * plan.server_price,
              0.0 if question.whole_enclosures else steps[1] * design.device.price)
    return tuple(rows), tuple(shortfalls), prices, lower, steps


@functools.lru_cache(maxsize=4096)
def _milp(prices: tuple[float, ...], rows: tuple[_Row, ...], lower: tuple[int, ...]) -> tuple[int, ...]:
    """The cheapest whole counts, at least ``lower``, that meet every row (each answer kept: designs share them)."""
    import numpy as np  # scipy loads only for the programmes :func:`_fewest` leaves: not for ``iobound size``'s
    from scipy.optimize import Bounds, LinearConstraint, milp

    if not rows:
        return lower
    matrix, right = np.array([r.coefficients for r in rows]), np.array([r.right for r in rows])
    scale = np.maximum(np.abs(matrix).max(axis=1), np.abs(right))  # rows near 1: B/s and op/s differ by 10^10
    result = milp(np.array(prices), integrality=np.ones(len(prices)), bounds=Bounds(lower, np.inf),
                  constraints=LinearConstraint(matrix / scale[:, None], right / scale, np.inf))
    if result.status != 0 or result.x is None:
        raise InputError("choices", "", "no whole counts of the parts meet what is asked: a capacity or target this "
                         f"large is past what the integer programme can count ({result.message})")
    return tuple(int(round(x)) for x in result.x)


# A count within this of a whole number is that number, as milp's integrality tolerance takes it.
_WHOLE = 1e-6


def _fewest(rows: tuple[_Row, ...], lower: tuple[int, ...]) -> tuple[int, ...] | None:
    """The least first count, at least ``lower``, for which whole counts of the second (if any) meet every row, with
    the least such second count: the cheapest answer when only the first count is priced. None when a row falls as
    the first count grows, so that more may not help (milp decides those)."""
    if any(r.coefficients[0] < 0 for r in rows):
        return None

    def second(first: int) -> int | None:
        """The least second count that meets every row beside ``first``; None if none does."""
        least, most = (lower[1] if len(lower) > 1 else 0), math.inf
        for row in rows:
            a, *b = row.coefficients
            rest = row.right - a * first
            if not b or b[0] == 0:
                if rest > _WHOLE * abs(a):
                    return None
            elif b[0] > 0:
                least = max(least, math.ceil(rest / b[0] - _WHOLE))
            else:
                most = min(most, math.floor(rest / b[0] + _WHOLE))
        return least if least <= most else None

    first = lower[0]
    while second(first) is None:  # doubling, then bisection: whether a first count suffices grows with it
        if first > 10**9:
            return None
        first *= 2
    low = max(lower[0], first // 2)
    while low < first:
        middle = (low + first) // 2
        low, first = (low, middle) if second(middle) is not None else (middle + 1, first)
    return (first,) if len(lower) == 1 else (first, second(first))


def clear_caches() -> None:
    """Forget every formula parsed and compiled, every ceiling and network structure solved and every programme's
    answer, as a new process starts (the benchmark's repeats)."""
    algebra.cache_clear()
    linear_form.cache_clear()
    solved.forget()
    _milp.cache_clear()
