"""How much a ceiling moves with each parameter: the elasticity d ln C / d ln x of its formula.

An elasticity of 1 means 10 % more of the parameter gives 10 % more ceiling (the binding
NIC); 0 means it does not matter here; between them, it helps with diminishing return
(a round trip's share of a request's time). Where layers tie, raising one parameter
alone lifts only its own layer, so it has no effect. It is the slope at this point: a
large change can move the ceiling to another layer.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.ceiling import Ceiling

__all__ = ["Sensitivity", "sensitivity"]


@dataclass(frozen=True)
class Sensitivity:
    """One parameter's effect on the ceiling: the relative change per relative increase of the parameter."""

    symbol: str
    value: object
    elasticity: float

    def to_dict(self) -> dict:
        return {"symbol": self.symbol, "elasticity": self.elasticity}


def sensitivity(ceiling: Ceiling, step: float = 1e-6) -> tuple[Sensitivity, ...]:
    """Each symbol of the ceiling's formula with its elasticity, largest first (ties by name).

    The elasticity is the formula's one-sided slope upwards, (C(x·(1+h)) - C(x)) / (C(x)·h) with
    h = ``step``: where terms of a minimum tie, raising one parameter lifts only its own term,
    which a symbolic derivative (sympy takes Heaviside(0) = 1/2 there) would get wrong.
    """
    import sympy as sp  # loaded by the formula: a ceiling whose effects are not shown needs none

    symbols = sorted(ceiling.expression.free_symbols, key=str)
    at = ceiling.substitutions
    formula = sp.lambdify(symbols, ceiling.expression, modules=[{"Min": min, "Max": max}, "math"])
    base = [at[symbol] for symbol in symbols]
    here = formula(*base)
    result = []
    for i, symbol in enumerate(symbols):
        raised = list(base)
        raised[i] *= 1 + step
        result.append(Sensitivity(str(symbol), ceiling.values[symbol], (formula(*raised) - here) / here / step))
    return tuple(sorted(result, key=lambda s: (-s.elasticity, s.symbol)))
