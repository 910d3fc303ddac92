"""Size a system to targets: how many of which catalogue parts, cheapest first, by integer programming.

A design is a choice of part types: a network, a server chassis with a number of ports of
it, a device that fits the chassis, and the candidate metadata servers. The model predicts
each target on the design with one of every part; each layer's limit is linear in the part
counts (sympy checks this), so "every layer at least its target", "usable capacity at least
the target" and "no more drives than bays" are linear constraints, and scipy's ``milp``
finds the cheapest counts. The counts it finds are predicted again with the full model, and
that prediction is what is reported, with every layer's headroom.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import sympy as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from probes.core.errors import InputError
from probes.core.units import Metric, Q_, canonical, format_quantity
from probes.core.workload import Workload
from models.ceiling import TIE, Ceiling
from models.formulas import count_symbol, numbers
from models.predict import Model
from topologies.catalogue import NAMES, Part, assemble
from topologies.topology import Component, Group, Topology, WriteCost

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Target", "Question", "Design", "Bound", "Configuration", "Shortfall", "Sizing", "size", "designs"]


@dataclass(frozen=True)
class Target:
    """What the buyer needs of one operation: a bandwidth, or an operation rate, measured by ``workload``."""

    workload: Workload
    value: Quantity

    @property
    def metric(self) -> Metric:
        """The ceiling's metric: op/s for metadata, else bandwidth (an IOPS target counts its transfers' bytes)."""
        return Metric.OPERATION_RATE if self.workload.operation.is_metadata else Metric.BANDWIDTH

    @property
    def required(self) -> Quantity:
        """The target in the ceiling's metric."""
        if self.metric is Metric.BANDWIDTH and Metric.of(self.value) is Metric.OPERATION_RATE:
            return Q_(canonical(self.value) * canonical(self.workload.transfer_size), Metric.BANDWIDTH.unit)
        return self.value

    def shown(self, value: Quantity) -> str:
        """A ceiling (in the ceiling's metric) in the target's own terms: op/s for an IOPS target."""
        if Metric.of(self.value) is not Metric.of(value):
            return format_quantity(Q_(canonical(value) / canonical(self.workload.transfer_size), "op/s"))
        return format_quantity(value)

    def __str__(self) -> str:
        return f"{self.workload.operation.value} {format_quantity(self.value, unit=self.value.units)}"


@dataclass(frozen=True)
class Question:
    """A sizing question: targets, usable capacity and its redundancy, the clients that exist, and the parts allowed."""

    targets: tuple[Target, ...]
    clients: Group
    networks: tuple[Part, ...]
    servers: tuple[Part, ...]
    devices: tuple[Part, ...]
    metadata: tuple[Part, ...] = ()
    usable: Quantity | None = None
    write_cost: WriteCost = WriteCost()
    currency: str = ""

    @property
    def needs_metadata(self) -> bool:
        return any(t.workload.operation.is_metadata for t in self.targets)

    def at_least(self) -> Question:
        """The question with every part's figure known only as a range at its least favourable end: a design
        that meets the targets then meets them whatever the parts turn out to be."""
        def least(parts: tuple[Part, ...]) -> tuple[Part, ...]:
            return tuple(replace(p, capacities={k: c.at(c.ends[0]) if c.range else c for k, c in p.capacities.items()})
                         for p in parts)
        return replace(self, networks=least(self.networks), servers=least(self.servers), devices=least(self.devices),
                       metadata=least(self.metadata))


@dataclass(frozen=True)
class Design:
    """One choice of part types; its counts are what the integer programme decides."""

    network: Part
    ports: int
    server: Part
    device: Part
    metadata: Part | None = None  # one type of metadata server, like one type of storage server

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups whose counts vary, in the order of the programme's variables."""
        return (NAMES["servers"], NAMES["devices"]) + ((f"{NAMES['metadata']}1",) if self.metadata else ())

    def topology(self, question: Question, counts: tuple[int, ...]) -> Topology:
        servers, devices, *mds = counts
        return assemble(question.clients, self.network, self.ports, self.server, servers, self.device, devices,
                        tuple(zip((self.metadata,), mds)), question.write_cost, question.currency)

    def __str__(self) -> str:
        return f"{self.server.name} ({self.ports} x {self.network.name}), {self.device.name}"


@dataclass(frozen=True)
class Bound:
    """A closed form: the fewest members of ``group`` one layer allows for one target (or capacity, or bays)."""

    group: str
    needed: int
    formula: str
    numbers: str
    why: str


@dataclass(frozen=True)
class Configuration:
    """A design with its counts and price, predicted by the full model: one ceiling per target, in order."""

    design: Design
    counts: dict[str, int]
    price: float
    topology: Topology
    ceilings: tuple[Ceiling, ...]
    usable: Quantity
    question: Question = field(repr=False, compare=False)

    def met(self, targets: tuple[Target, ...]) -> bool:
        return all(canonical(c.value) >= canonical(t.required) * (1 - TIE) for c, t in zip(self.ceilings, targets))

    @cached_property
    def bounds(self) -> tuple[Bound, ...]:
        """The closed forms behind the counts (sympy; worked out when asked for)."""
        return _bounds(self.question, self.design, tuple(self.counts[g] for g in self.design.groups))


@dataclass(frozen=True)
class Shortfall:
    """A layer no count can lift to a target (it does not grow with any part bought): the best any design had."""

    target: Target
    layer: str
    limit: Quantity
    components: tuple[Component, ...]


@dataclass(frozen=True)
class Sizing:
    """The answer: the cheapest configurations that meet every target, how many designs were tried and met them,
    and, when none does, what stops each target."""

    question: Question
    configurations: tuple[Configuration, ...]
    designs: int
    feasible: int
    shortfalls: tuple[Shortfall, ...]


def designs(question: Question) -> list[Design]:
    """Every combination of the allowed data parts that fits together (devices in bays of their slot); the
    metadata servers are chosen for each by :func:`size`.

    Raises
    ------
    InputError
        If the choices leave nothing to combine, e.g. only HDDs with only NVMe chassis.
    """
    pairs = [(s, d) for s in question.servers for d in question.devices if d.fits(s)]
    for kind, parts in (("network", question.networks), ("server", question.servers), ("device", question.devices)):
        if not parts:
            raise InputError("choices", kind, f"no {kind} type is allowed; allow at least one")
    if not pairs:
        raise InputError("choices", "devices", "no allowed device fits an allowed server: the servers take "
                         f"{', '.join(sorted({s.slot for s in question.servers}))} devices, the devices are "
                         f"{', '.join(sorted({d.slot for d in question.devices}))}")
    if question.needs_metadata and not any(p.capacity("metadata", op) for p in question.metadata
                                           for op in (None, *[t.workload.operation.value for t in question.targets])):
        raise InputError("choices", "metadata", "a metadata target needs metadata servers, but no allowed server "
                         "states a metadata rate")
    metadata = question.metadata if question.needs_metadata else ()
    unpriced = sorted({p.name for p in (*question.networks, *question.servers, *question.devices, *metadata)
                       if p.price is None})
    if unpriced:
        raise InputError("choices", "prices", f"no price for {', '.join(unpriced)}; give one with --prices, "
                         "or leave them out of the choices")
    return [Design(n, ports, s, d) for n, (s, d) in itertools.product(question.networks, pairs)
            for ports in range(1, s.nic_slots + 1)]


def size(question: Question, top: int = 5) -> Sizing:
    """The ``top`` cheapest configurations that meet every target (see the module's description).

    The data targets and the metadata targets share no part, so each design's storage counts
    and its metadata servers (the cheapest type for its network) are two small programmes. Parts
    whose figures are ranges count at their least favourable ends.
    """
    question = question.at_least()
    solved, shortfalls, memo = [], {}, {}

    def record(found):
        for short in found:
            key = (str(short.target), short.layer)
            if key not in shortfalls or canonical(short.limit) > canonical(shortfalls[key].limit):
                shortfalls[key] = short

    candidates = sorted(designs(question), key=lambda d: (_least_price(question, d), str(d)))
    for design in candidates:
        prices = sorted(p for p, _, _ in solved)
        if len(prices) >= top and _least_price(question, design) > prices[top - 1]:
            break  # this design and every later one cost more than the top already found
        data = _solve(question, design, memo)
        if isinstance(data, tuple) and question.needs_metadata:
            options = [(_solve(question, replace(design, metadata=m), memo), m) for m in question.metadata]
            solutions = [(found[0], m, found[1]) for found, m in options if isinstance(found, tuple)]
            if not solutions:
                record(short for found, _ in options for short in found)
                continue
            price, metadata, counts = min(solutions, key=lambda s: (s[0], s[1].name))
            design, data = replace(design, metadata=metadata), (data[0] + price, data[1] + counts)
        if isinstance(data, tuple):
            solved.append((data[0], design, data[1]))
        else:
            record(data)
    solved.sort(key=lambda s: (s[0], str(s[1])))
    configurations = []
    for price, design, counts in solved:
        configuration = _configuration(question, design, counts, price)
        if configuration.met(question.targets):
            configurations.append(configuration)
        if len(configurations) == top:
            break
    return Sizing(question, tuple(configurations), len(candidates), len(solved),
                  () if solved else tuple(shortfalls.values()))


def _least_price(question: Question, design: Design) -> float:
    """A price no configuration of ``design`` can go below: the drives the capacity needs and the chassis for them."""
    servers, drives = _redundancy(question.write_cost)
    if question.usable is not None:
        per_device = canonical(design.device.capacity("size").value) / question.write_cost.space
        drives = max(drives, math.ceil(canonical(question.usable) / per_device - 1e-9))
    servers = max(servers, math.ceil(drives / design.server.slots))
    return drives * design.device.price + servers * (design.server.price + design.ports * design.network.price)


@dataclass(frozen=True)
class _Row:
    """One linear constraint: ``coefficients · counts >= right`` (from a layer, the capacity, or the bays)."""

    coefficients: tuple[float, ...]
    right: float


def _solve(question: Question, design: Design, memo: dict) -> tuple[float, tuple[int, ...]] | list[Shortfall]:
    """The cheapest counts and their price: of the storage (servers, drives) for a design without metadata
    servers, of the metadata servers alone for one with them; or the layers no count lifts to a target."""
    metadata = design.metadata is not None
    key = (id(design.network), id(design.metadata)) if metadata else \
        (id(design.network), design.ports, id(design.server), id(design.device))
    if key not in memo:
        memo[key] = _programme(question, design)
    rows, shortfalls, prices, lower = memo[key]
    if shortfalls:
        return list(shortfalls)
    counts = _milp(prices, rows, lower)
    return math.fsum(p * n for p, n in zip(prices, counts)), counts


def _programme(question: Question, design: Design):
    """The rows, shortfalls, prices and least counts of :func:`_solve`'s programme, from the model's layers."""
    metadata = design.metadata is not None
    groups = design.groups[2:] if metadata else design.groups
    unit = design.topology(question, (1,) * len(design.groups))
    model = Model(unit)
    rows, shortfalls = [], []
    for target in question.targets:
        if target.workload.operation.is_metadata != metadata:
            continue
        need = canonical(target.required)
        for layer in model.ceiling(target.workload, caches=False).layers:
            if layer.value is None:
                continue
            form = _linear_form(layer.expression, tuple(count_symbol(g) for g in groups))
            if form is None:
                continue  # not linear in the counts: the full model's check of the answer judges it
            constant, coefficients = form.evaluate(layer.values)
            if not any(coefficients) and constant < need * (1 - TIE):
                shortfalls.append(Shortfall(target, layer.layer, layer.value, layer.components))
            elif any(coefficients):
                rows.append(_Row(coefficients, need - constant))
    lower = (1,)
    if not metadata:
        if question.usable is not None:
            per_device = canonical(design.device.capacity("size").value) / question.write_cost.space
            rows.append(_Row((0.0, per_device), canonical(question.usable)))
        rows.append(_Row((float(design.server.slots), -1.0), 0.0))  # drives fit the bays
        lower = _redundancy(question.write_cost)
    return tuple(rows), tuple(shortfalls), tuple(unit.group(g).price for g in groups), lower


def _redundancy(cost: WriteCost) -> tuple[int, int]:
    """The fewest servers and drives the redundancy needs: a server per replica, a drive per strip of each."""
    data, parity = cost.parity or (1, 0)
    return cost.replicas, cost.replicas * (data + parity)


@functools.lru_cache(maxsize=4096)
def _milp(prices: tuple[float, ...], rows: tuple[_Row, ...], lower: tuple[int, ...]) -> tuple[int, ...]:
    """The cheapest whole counts, at least ``lower``, that meet every row (each answer kept: designs share them)."""
    if not rows:
        return lower
    matrix, right = np.array([r.coefficients for r in rows]), np.array([r.right for r in rows])
    scale = np.maximum(np.abs(matrix).max(axis=1), np.abs(right))  # rows near 1: B/s and op/s differ by 10^10
    result = milp(np.array(prices), integrality=np.ones(len(prices)), bounds=Bounds(lower, np.inf),
                  constraints=LinearConstraint(matrix / scale[:, None], right / scale, np.inf))
    if result.status != 0 or result.x is None:
        raise InputError("choices", "", f"the integer programme found no answer ({result.message})")
    return tuple(int(round(x)) for x in result.x)


def _configuration(question: Question, design: Design, counts: tuple[int, ...], price: float) -> Configuration:
    topology = design.topology(question, counts)
    model = Model(topology)
    ceilings = tuple(model.ceiling(t.workload) for t in question.targets)
    usable = design.device.capacity("size").value * counts[1] / question.write_cost.space
    return Configuration(design, dict(zip(design.groups, counts)), price, topology, ceilings, usable, question)


def _bounds(question: Question, design: Design, counts: tuple[int, ...]) -> tuple[Bound, ...]:
    """The closed forms behind ``counts``: for each target, each layer that one group's count alone lifts,
    ``n ≥ ⌈(target − constant) / per-member⌉``; and the drives for the capacity, the servers for the bays."""
    groups = design.groups
    variables = tuple(count_symbol(g) for g in groups)
    found = []
    for target, ceiling in zip(question.targets, _unit_ceilings(question, design)):
        symbol = sp.Symbol(f"T_{target.workload.operation.value}", positive=True)
        for layer in ceiling.layers:
            linear = None if layer.value is None else _linear_form(layer.expression, variables)
            lifting = [i for i, c in enumerate(linear.coefficients) if c != 0] if linear else []
            if len(lifting) != 1:
                continue
            (i,) = lifting
            form = sp.ceiling((symbol - linear.constant) / linear.coefficients[i])
            values = {**layer.values, symbol: target.required}
            needed = math.ceil(float(form.args[0].subs({s: canonical(v) for s, v in values.items()})) - 1e-9)
            found.append(Bound(groups[i], max(needed, 0), f"{variables[i]} ≥ {sp.sstr(form)}",
                               numbers(form.args[0], values), f"{target}: {layer.layer}"))
    if question.usable is not None:
        device = design.device.capacity("size").value
        needed = math.ceil(canonical(question.usable) * question.write_cost.space / canonical(device) - 1e-9)
        found.append(Bound(groups[1], needed, f"{count_symbol(groups[1])} ≥ ceiling(U*space/size)",
                           f"{format_quantity(question.usable, unit=question.usable.units)} × {question.write_cost.space:g} / "
                           f"{format_quantity(device, unit=device.units)}",
                           f"usable {format_quantity(question.usable, unit=question.usable.units)} ({question.write_cost})"))
    servers, drives = _redundancy(question.write_cost)
    found += [Bound(group, n, f"{count_symbol(group)} ≥ {formula}", f"{n}", f"{why} ({question.write_cost})")
              for group, n, formula, why in ((groups[0], servers, "replicas", "a server per replica"),
                                             (groups[1], drives, "replicas*(data + parity)", "a drive per strip"))
              if n > 1]
    found.append(Bound(groups[0], math.ceil(counts[1] / design.server.slots), f"{count_symbol(groups[0])} ≥ "
                       f"ceiling({count_symbol(groups[1])}/bays)", f"{counts[1]} / {design.server.slots}", "drive bays"))
    return tuple(found)


def _unit_ceilings(question: Question, design: Design) -> list[Ceiling]:
    """Each target's ceiling on the design with one of every part, caches left out: sizing is for the storage path."""
    model = Model(design.topology(question, (1,) * len(design.groups)))
    return [model.ceiling(t.workload, caches=False) for t in question.targets]


@functools.lru_cache(maxsize=4096)
def _linear_form(expression: sp.Expr, variables: tuple[sp.Symbol, ...]) -> _Linear | None:
    """``expression`` as constant + Σ coefficient × variable, compiled once per shape; None if it is not linear."""
    coefficients = tuple(sp.diff(expression, v) for v in variables)
    if any(c.free_symbols & set(variables) for c in coefficients):
        return None
    constant = expression.subs({v: 0 for v in variables})
    parameters = tuple(sorted(expression.free_symbols - set(variables), key=str))
    return _Linear(constant, coefficients, parameters, sp.lambdify(parameters, [constant, *coefficients], modules="math"))


@dataclass(frozen=True)
class _Linear:
    """A layer's limit as ``constant + Σ coefficients[i] × count[i]`` (sympy), and the same compiled."""

    constant: sp.Expr
    coefficients: tuple[sp.Expr, ...]
    parameters: tuple[sp.Symbol, ...]
    function: Callable

    def evaluate(self, values: dict) -> tuple[float, tuple[float, ...]]:
        """The constant and the coefficients (canonical units) at the symbols' ``values``."""
        constant, *coefficients = self.function(*(canonical(values[p]) for p in self.parameters))
        return float(constant), tuple(float(c) for c in coefficients)
