"""The Ceiling type: the most a workload can reach on a topology, which components bind, and why."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from probes.units import Metric, Quantity, format_quantity, quantity_json
from probes.workload import Workload

__all__ = ["LayerLimit", "Ceiling"]

# How close (relative) two limits must be to count as the same: float noise only.
TIE = 1e-9


@dataclass(frozen=True)
class LayerLimit:
    """What one layer alone allows (every other layer taken as unlimited); ``value`` None: it cannot limit alone."""

    layer: str
    value: Quantity | None
    components: tuple[str, ...]
    formula: str
    numbers: str

    def to_dict(self) -> dict:
        return {"layer": self.layer, "limit": quantity_json(self.value), "components": list(self.components),
                "formula": self.formula, "numbers": self.numbers}


@dataclass(frozen=True)
class Ceiling:
    """The predicted maximum of a workload's bandwidth on a topology.

    ``binding`` names the components whose capacity sets ``value`` (``group.capacity``);
    ``layers`` gives every layer's own limit; ``formula`` is the sympy expression,
    ``symbols`` what each of its symbols stands for, and ``numbers`` the same with the
    values put in. The expression holds at these values only: with others, another
    cut may bind, so predict again rather than substitute.
    """

    workload: Workload
    value: Quantity
    binding: tuple[str, ...]
    binding_layers: tuple[str, ...]
    layers: tuple[LayerLimit, ...]
    formula: str
    numbers: str
    symbols: dict[str, Quantity | int]
    assumptions: tuple[str, ...]
    metric: Metric = Metric.BANDWIDTH
    expression: sp.Expr = field(default=sp.nan, compare=False, repr=False)
    substitutions: dict = field(default_factory=dict, compare=False, repr=False)

    def evaluate(self) -> float:
        """The formula's value in B/s: equal to ``value``, which the tests check."""
        return float(self.expression.subs(self.substitutions))

    def __str__(self) -> str:
        return f"{format_quantity(self.value)} ({', '.join(self.binding_layers)})"

    def to_dict(self) -> dict:
        return {
            "workload": self.workload.to_dict(),
            "metric": self.metric.name.lower(),
            "ceiling": quantity_json(self.value),
            "binding": list(self.binding),
            "binding_layers": list(self.binding_layers),
            "layers": [layer.to_dict() for layer in self.layers],
            "formula": self.formula,
            "numbers": self.numbers,
            "symbols": {name: v if isinstance(v, int) else quantity_json(v) for name, v in self.symbols.items()},
            "assumptions": list(self.assumptions),
        }
