"""The Ceiling type: the most a workload can reach on a topology, which components bind, and why."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from probes.core.units import Metric, Q_, canonical, display_unit, format_quantity, quantity_json, registry
from probes.core.workload import Workload
from models.formulas import algebra, least_of, marked_names, put_numbers, shown
from topologies.topology import Capacity, Component

if TYPE_CHECKING:  # pint comes with the first quantity, sympy where algebra is asked for: a ceiling needs neither
    import sympy as sp
    from pint import Quantity

__all__ = ["LayerLimit", "CacheLimit", "Ceiling", "Implied", "TIE", "rate", "format_span", "PREDICTION_VERSION",
           "SWEEP_VERSION", "prediction_body", "sweep_body"]

# How close (relative) two limits must be to count as the same: float noise only.
TIE = 1e-9


@dataclass(frozen=True)
class LayerLimit:
    """What one layer alone allows (every other layer taken as unlimited); ``value`` None: it cannot limit alone.

    ``terms`` are the formula texts of the stages that set it (their sum is the limit, see :mod:`models.formulas`)
    and ``named`` the values of their symbols by name: ``recipe`` makes both when a formula is first asked for, so a
    sweep of ceilings writes none.
    """

    layer: str
    value: Quantity | None
    components: tuple[Component, ...]
    recipe: Callable[[], tuple[tuple[str, ...], dict[str, Quantity | int]]] | None = field(default=None, compare=False,
                                                                                            repr=False)

    @cached_property
    def _made(self) -> tuple[tuple[str, ...], dict[str, Quantity | int]]:
        return self.recipe() if self.recipe else ((), {})

    @property
    def terms(self) -> tuple[str, ...]:
        return self._made[0]

    @property
    def named(self) -> dict[str, Quantity | int]:
        return self._made[1]

    @property
    def text(self) -> str:
        """The limit as marked formula text: its terms' sum."""
        return " + ".join(self.terms)

    @cached_property
    def expression(self) -> sp.Expr:
        """The limit as a sympy expression (0 when no term sets it)."""
        return algebra(self.text) if self.terms else algebra("0")

    @property
    def values(self) -> dict[sp.Symbol, Quantity | int]:
        """The values of the expression's symbols."""
        return _symbols(self.named, marked_names(self.text))

    @property
    def formula(self) -> str:
        return shown(self.text)

    @property
    def numbers(self) -> str:
        if self.value is None:
            return "does not separate clients from storage on its own"
        return f"{put_numbers(self.text, self.named)} = {format_quantity(self.value)}"

    def to_dict(self) -> dict:
        return {"layer": self.layer, "limit": quantity_json(self.value), "components": [str(c) for c in self.components],
                "formula": self.formula, "numbers": self.numbers}


def _symbols(named: dict[str, Quantity | int], names: list[str]) -> dict[sp.Symbol, Quantity | int]:
    """``names``' values keyed by their sympy symbols (positive, as :func:`models.formulas.algebra` makes them)."""
    import sympy as sp

    return {sp.Symbol(name, positive=True): named[name] for name in names}


@dataclass(frozen=True)
class CacheLimit:
    """The ceiling if a cache serves the data, and whether it can: the data set against the memory that caches it.

    ``applies`` is True when the data set fits the memory and the I/O is buffered, False when
    it cannot (direct I/O, or a data set larger than the memory), None when not known.
    """

    layer: str
    value: Quantity | None
    memory: Quantity | None
    ratio: float | None
    applies: bool | None
    reason: str

    def to_dict(self) -> dict:
        return {"layer": self.layer, "limit": quantity_json(self.value), "memory": quantity_json(self.memory),
                "data_set_to_memory": self.ratio, "applies": self.applies, "reason": self.reason}


@dataclass(frozen=True)
class Ceiling:
    """The predicted maximum of a workload on a topology: a bandwidth, or an operation rate for metadata.

    ``binding`` names the components whose capacity sets ``value`` (``compute.nic``);
    ``layers`` gives every layer's own limit; ``expression`` is the sympy formula (``Min``
    over the layers, plus the cut itself when it mixes layers), ``symbols`` what each of its
    symbols stands for, and ``numbers`` the same with the values put in. The expression holds
    at these values only: with others, another cut may bind, so predict again rather than
    substitute. ``caches`` are the ceilings if a cache serves the data instead.
    """

    workload: Workload
    value: Quantity
    binding: tuple[Component, ...]
    binding_layers: tuple[str, ...]
    layers: tuple[LayerLimit, ...]
    assumptions: tuple[str, ...]
    metric: Metric = Metric.BANDWIDTH
    caches: tuple[CacheLimit, ...] = ()
    mixed: LayerLimit | None = field(default=None, compare=False, repr=False)  # a cut lower than any one layer
    low: Ceiling | None = field(default=None, compare=False, repr=False)  # every range at its least favourable end
    assumed: tuple[Component, ...] = ()  # of ``binding`` (and ``low.binding``): assumed figures (Capacity.assumed)

    @property
    def least(self) -> Quantity:
        """The ceiling when every figure stated as a range is at its least favourable end (``value`` without ranges)."""
        return self.value if self.low is None else self.low.value

    def marked(self, components: tuple[Component, ...]) -> str:
        """The components as text, each assumed one marked ``[assumed]``."""
        return ", ".join(f"{c} [assumed]" if c in self.assumed else str(c) for c in components)

    @cached_property
    def text(self) -> str:
        """The ceiling as marked formula text: the least of its layers' limits (in the order of ``layers``, as
        ``numbers`` has them), and of the cut itself when it mixes layers."""
        return least_of([layer.text for layer in self._limited] + ([self.mixed.text] if self.mixed else []))

    @cached_property
    def expression(self) -> sp.Expr:
        return algebra(self.text)

    @property
    def _limited(self) -> list[LayerLimit]:
        return [layer for layer in self.layers if layer.value is not None]

    @property
    def formula(self) -> str:
        return shown(self.text)

    @cached_property
    def symbols(self) -> dict[str, Quantity | int]:
        """The values of the formula's symbols by name, in the order of their names."""
        merged = {}
        for layer in self._limited + ([self.mixed] if self.mixed else []):
            merged |= layer.named
        return {name: merged[name] for name in sorted(marked_names(self.text))}

    @property
    def values(self) -> dict[sp.Symbol, Quantity | int]:
        return _symbols(self.symbols, list(self.symbols))

    @property
    def substitutions(self) -> dict[sp.Symbol, float]:
        """The symbols' values in canonical units, for ``expression.subs``."""
        return {symbol: canonical(value) for symbol, value in self.values.items()}

    @property
    def numbers(self) -> str:
        terms = [f"{layer.layer} {format_quantity(layer.value)}" for layer in self._limited]
        if self.mixed:
            terms.append(f"combined cut {self.mixed.numbers}")
        return f"min({', '.join(terms)}) = {format_quantity(self.value)}"

    def evaluate(self) -> float:
        """The formula's value in canonical units (B/s or op/s): equal to ``value``, which the tests check."""
        return float(self.expression.subs(self.substitutions))

    @property
    def shown(self) -> str:
        """The ceiling for people: ``1,100 MiB/s``, or ``550–1,100 MiB/s`` for an interval."""
        if self.low is None:
            return format_quantity(self.value)
        unit = display_unit(self.value)
        if self.low.value.m_as(unit) < 1:  # far apart: each in its own unit
            return f"{format_quantity(self.low.value)} – {format_quantity(self.value)}"
        return f"{format_quantity(self.low.value, unit=unit).split(' ')[0]}–{format_quantity(self.value, unit=unit)}"

    @property
    def binds(self) -> str:
        """The layers that bind: ``devices to client NICs`` where an interval's least and most differ in them."""
        layers = ", ".join(self.binding_layers)
        if self.low is not None and self.low.binding_layers != self.binding_layers:
            return f"{', '.join(self.low.binding_layers)} to {layers}"
        return layers

    @property
    def binds_marked(self) -> str:
        """The components that bind, each assumed one marked, as :attr:`binds` says their layers."""
        most = self.marked(self.binding)
        if self.low is not None and self.low.binding != self.binding:
            return f"{self.marked(self.low.binding)} to {most}"
        return most

    def __str__(self) -> str:
        return f"{self.shown} ({self.binds})"

    def to_dict(self) -> dict:
        return {
            "workload": self.workload.to_dict(),
            "metric": self.metric.name.lower(),
            "ceiling": quantity_json(self.value),
            "binding": [str(c) for c in self.binding],
            "binding_layers": list(self.binding_layers),
            "layers": [layer.to_dict() for layer in self.layers],
            "caches": [cache.to_dict() for cache in self.caches],
            "formula": self.formula,
            "numbers": self.numbers,
            "symbols": {name: v if isinstance(v, (int, float)) else quantity_json(v) for name, v in self.symbols.items()},
            "assumptions": list(self.assumptions),
            "assumed": [str(c) for c in self.assumed],
            "low": None if self.low is None else {
                "ceiling": quantity_json(self.low.value), "binding": [str(c) for c in self.low.binding],
                "binding_layers": list(self.low.binding_layers), "numbers": self.low.numbers},
        }


@dataclass(frozen=True)
class Implied:
    """What a run needs of one assumed figure (a range, or one value), every other at its most favourable (unlimited).

    ``needed`` is the least value (the greatest, for a latency) at which the run is possible.
    """

    component: Component
    stated: Capacity  # as the topology states it: its range and source
    needed: Quantity

    def __str__(self) -> str:
        sign = "≤" if self.stated.metric is Metric.LATENCY else "≥"
        stated = self.stated
        kind = "" if stated.source.kind == "unstated" else f"{stated.source.kind} "
        return f"{self.component} {sign} {format_quantity(self.needed, unit=stated.unit)} (stated: {kind}{stated.span()})"

    def to_dict(self) -> dict:
        return {"component": str(self.component), "needed": quantity_json(self.needed),
                "range": [quantity_json(v) for v in self.stated.range or (self.stated.value,) * 2],
                "source": self.stated.source.kind}


def rate(value: float, metric: Metric) -> Quantity:
    """A float in the metric's canonical unit as a quantity."""
    return Q_(value, _unit(metric))


def format_span(least: Quantity, most: Quantity, unit: str = "GB/s") -> str:
    """A rate's range in one unit, its number said once; one figure where both ends show the same.

    >>> format_span(Q_(7.33, "GB/s"), Q_(112e9, "B/s"))
    '7.33 to 112 GB/s'
    """
    shown = [format_quantity(q, unit=unit) for q in (least, most)]
    return shown[1] if shown[0] == shown[1] else f"{shown[0].split(' ')[0]} to {shown[1]}"


@functools.lru_cache(maxsize=None)
def _unit(metric: Metric):
    """The metric's canonical unit, parsed once."""
    return registry().Unit(metric.unit)


# prediction format history (the body is prediction_body's):
#   1.0  first version
#   1.1  workload gains data_set and shared_file (null when not known)
#   1.2  metric may be operation_rate (metadata); caches, knee and sensitivity; workload gains shared_directory
#   1.3  low: the ceiling with every range at its least favourable end (null without ranges); assumed;
#        workload gains read_share (read+write)
# prediction-sweep format history (sweep_body's):
#   1.0  first version
#   1.1  each prediction gains low and assumed, its workload read_share (as prediction 1.3)
PREDICTION_VERSION = "1.3"
SWEEP_VERSION = "1.1"


def prediction_body(system: dict, ceiling: Ceiling, knee=None, effects=(), curve: dict | None = None) -> dict:
    """The body of an iobound/prediction document: the system, the ceiling, its knee (a Knee or None), the
    elasticity of each parameter (Effects) and, when asked for, the throughput curve."""
    body = {"topology": system, **ceiling.to_dict(), "knee": None if knee is None else knee.to_dict(),
            "sensitivity": [e.to_dict() for e in effects]}
    return body | ({"curve": curve} if curve is not None else {})


def sweep_body(system: dict, ceilings: list[Ceiling]) -> dict:
    """The body of an iobound/prediction-sweep document: the system and one ceiling per workload."""
    return {"topology": system, "predictions": [c.to_dict() for c in ceilings]}
