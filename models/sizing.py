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
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import sympy as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from probes.errors import InputError
from probes.units import Q_, Metric, Quantity, format_quantity
from probes.workload import Workload
from models.ceiling import TIE, Ceiling
from models.flow import canonical, count_symbol, numbers
from models.predict import Model
from topologies.catalogue import NAMES, Part, assemble
from topologies.topology import Group, Topology, WriteCost

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

    def __str__(self) -> str:
        return f"{self.workload.operation.value} {_as_given(self.value)}"


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


@dataclass(frozen=True)
class Design:
    """One choice of part types; its counts are what the integer programme decides."""

    network: Part
    ports: int
    server: Part
    device: Part
    metadata: tuple[Part, ...]

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups whose counts vary, in the order of the programme's variables."""
        return (NAMES["servers"], NAMES["devices"]) + tuple(f"{NAMES['metadata']}{i}" for i in range(1, len(self.metadata) + 1))

    def topology(self, question: Question, counts: tuple[int, ...]) -> Topology:
        servers, devices, *mds = counts
        return assemble(question.clients, self.network, self.ports, self.server, servers, self.device, devices,
                        tuple(zip(self.metadata, mds)), question.write_cost, question.currency)

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
    components: tuple[str, ...]


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
    """Every combination of the allowed parts that fits together (devices in bays of their slot).

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
    return [Design(n, ports, s, d, metadata) for n, (s, d) in itertools.product(question.networks, pairs)
            for ports in range(1, s.nic_slots + 1)]


def size(question: Question, top: int = 5) -> Sizing:
    """The ``top`` cheapest configurations that meet every target (see the module's description)."""
    solved, shortfalls = [], {}
    candidates = sorted(designs(question), key=lambda d: (_least_price(question, d), str(d)))
    for design in candidates:
        prices = sorted(p for p, _, _ in solved)
        if len(prices) >= top and _least_price(question, design) > prices[top - 1]:
            break  # this design and every later one cost more than the top already found
        outcome = _solve(question, design)
        if isinstance(outcome, list):
            for short in outcome:
                key = (str(short.target), short.layer)
                if key not in shortfalls or canonical(short.limit) > canonical(shortfalls[key].limit):
                    shortfalls[key] = short
        else:
            solved.append((outcome[0], design, outcome[1]))
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
    drives = 1
    if question.usable is not None:
        per_device = canonical(design.device.capacity("size").value) / question.write_cost.space
        drives = max(1, math.ceil(canonical(question.usable) / per_device - 1e-9))
    servers = math.ceil(drives / design.server.slots)
    return drives * design.device.price + servers * (design.server.price + design.ports * design.network.price)


@dataclass(frozen=True)
class _Row:
    """One linear constraint: ``coefficients · counts >= right`` (from a layer, the capacity, or the bays)."""

    coefficients: tuple[float, ...]
    right: float


def _solve(question: Question, design: Design) -> tuple[float, tuple[int, ...]] | list[Shortfall]:
    """The cheapest counts of ``design`` and their price, or the layers that no count lifts to a target."""
    groups = design.groups
    unit = design.topology(question, (1,) * len(groups))
    rows, shortfalls = [], []
    for target, ceiling in zip(question.targets, _unit_ceilings(question, design)):
        need = canonical(target.required)
        for layer in ceiling.layers:
            if layer.value is None:
                continue
            form = _linear_form(layer.expression, tuple(count_symbol(g) for g in groups))
            if form is None:
                continue  # not linear in the counts: the full model's check of the answer judges it
            constant, coefficients = _evaluate(form, layer.values)
            if not any(coefficients) and constant < need * (1 - TIE):
                shortfalls.append(Shortfall(target, layer.layer, layer.value, layer.components))
            elif any(coefficients):
                rows.append(_Row(coefficients, need - constant))
    if shortfalls:
        return shortfalls
    zeros = (0.0,) * (len(groups) - 2)
    if question.usable is not None:
        per_device = canonical(design.device.capacity("size").value) / question.write_cost.space
        rows.append(_Row((0.0, per_device) + zeros, canonical(question.usable)))
    rows.append(_Row((float(design.server.slots), -1.0) + zeros, 0.0))  # drives fit the bays
    prices = [unit.group(name).price for name in groups]
    counts = _cheapest(tuple(prices), tuple(rows), (1, 1) + (0,) * len(zeros))
    return math.fsum(p * n for p, n in zip(prices, counts)), counts


def _cheapest(prices: tuple[float, ...], rows: tuple[_Row, ...], lower: tuple[int, ...]) -> tuple[int, ...]:
    """The cheapest whole counts meeting every row: one ``milp`` per block of variables no row links to another
    (the metadata servers' block is the same in many designs and solved once)."""
    block_of = list(range(len(prices)))
    for row in rows:
        linked = [block_of[i] for i, c in enumerate(row.coefficients) if c]
        block_of = [linked[0] if b in linked else b for b in block_of]
    counts = list(lower)
    for block in dict.fromkeys(block_of):
        members = [i for i, b in enumerate(block_of) if b == block]
        own = tuple(_Row(tuple(r.coefficients[i] for i in members), r.right) for r in rows
                    if any(r.coefficients[i] for i in members))
        if own:
            for i, n in zip(members, _milp(tuple(prices[i] for i in members), own, tuple(lower[i] for i in members))):
                counts[i] = n
    return tuple(counts)


@functools.lru_cache(maxsize=4096)
def _milp(prices: tuple[float, ...], rows: tuple[_Row, ...], lower: tuple[int, ...]) -> tuple[int, ...]:
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
    found = []
    for target, ceiling in zip(question.targets, _unit_ceilings(question, design)):
        symbol = sp.Symbol(f"T_{target.workload.operation.value}", positive=True)
        for layer in ceiling.layers:
            free = [g for g in groups if count_symbol(g) in layer.expression.free_symbols]
            if layer.value is None or len(free) != 1:
                continue
            n = count_symbol(free[0])
            per_member = sp.diff(layer.expression, n)
            if n in per_member.free_symbols:
                continue
            form = sp.ceiling((symbol - layer.expression.subs(n, 0)) / per_member)
            values = {**layer.values, symbol: target.required}
            needed = math.ceil(float(form.args[0].subs({s: canonical(v) for s, v in values.items()})) - 1e-9)
            found.append(Bound(free[0], max(needed, 0), f"{n} ≥ {sp.sstr(form)}", numbers(form.args[0], values),
                               f"{target}: {layer.layer}"))
    if question.usable is not None:
        device = design.device.capacity("size").value
        needed = math.ceil(canonical(question.usable) * question.write_cost.space / canonical(device) - 1e-9)
        found.append(Bound(groups[1], needed, f"{count_symbol(groups[1])} ≥ ceiling(U*space/size)",
                           f"{_as_given(question.usable)} × {question.write_cost.space:g} / {_as_given(device)}",
                           f"usable {_as_given(question.usable)} ({question.write_cost})"))
    found.append(Bound(groups[0], math.ceil(counts[1] / design.server.slots), f"{count_symbol(groups[0])} ≥ "
                       f"ceiling({count_symbol(groups[1])}/bays)", f"{counts[1]} / {design.server.slots}", "drive bays"))
    return tuple(found)


def _as_given(q: Quantity) -> str:
    """A quantity in the unit it was given in (2 PB, not 1.78 PiB)."""
    return format_quantity(q, unit=f"{q.units:~}")


def _unit_ceilings(question: Question, design: Design) -> list[Ceiling]:
    """Each target's ceiling on the design with one of every part (data targets: without the metadata servers,
    which they never reach), caches left out: sizing is for the storage path."""
    ones = (1,) * len(design.groups)
    data = Model(design.topology(question, ones[:2] + (0,) * (len(ones) - 2)))
    metadata = Model(design.topology(question, ones)) if question.needs_metadata else data
    return [(metadata if t.workload.operation.is_metadata else data).ceiling(t.workload, caches=False)
            for t in question.targets]


@functools.lru_cache(maxsize=4096)
def _linear_form(expression: sp.Expr, variables: tuple[sp.Symbol, ...]):
    """``expression`` as constant + Σ coefficient × variable, compiled once per shape; None if it is not linear."""
    coefficients = [sp.diff(expression, v) for v in variables]
    if any(c.free_symbols & set(variables) for c in coefficients):
        return None
    constant = expression.subs({v: 0 for v in variables})
    parameters = tuple(sorted(expression.free_symbols - set(variables), key=str))
    return parameters, sp.lambdify(parameters, [constant, *coefficients], modules="math")


def _evaluate(form, values: dict) -> tuple[float, tuple[float, ...]]:
    parameters, function = form
    constant, *coefficients = function(*(canonical(values[p]) for p in parameters))
    return float(constant), tuple(float(c) for c in coefficients)
