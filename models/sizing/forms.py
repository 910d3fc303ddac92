"""Each layer's limit as a linear form in the part counts (sympy checks that it is one), compiled once per shape; and
the closed forms a configuration's counts follow from (``n_drives ≥ ceiling(T_read/B_drives)``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from probes.core.units import canonical, format_quantity
from models.ceiling import Ceiling
from models.formulas import count_symbol, numbers
from models.predict import Model

from models.sizing.designs import Plan

__all__ = ["Bound", "linear_form", "closed_forms", "unit_ceilings"]


@dataclass(frozen=True)
class Bound:
    """A closed form: the fewest members of ``group`` one layer allows for one target (or capacity, or bays)."""

    group: str
    needed: int
    formula: str
    numbers: str
    why: str


def closed_forms(plan: Plan, counts: tuple[int, ...]) -> tuple[Bound, ...]:
    """The closed forms behind ``counts``: for each target, each layer that one group's count alone lifts,
    ``n ≥ ⌈(target − constant) / per-member⌉``; and the drives for the capacity, the servers for the bays."""
    question, design = plan.question, plan.design
    groups = design.groups
    variables = tuple(count_symbol(g) for g in groups)
    found = []
    margin = f" + {question.margin:.0%} margin" if question.margin else ""
    for target, ceiling in zip(question.targets, unit_ceilings(plan)):
        symbol = sp.Symbol(f"T_{target.workload.operation.value}", positive=True)
        for layer in ceiling.layers:
            linear = None if layer.value is None else linear_form(layer.expression, variables)
            lifting = [i for i, c in enumerate(linear.coefficients) if c != 0] if linear else []
            if len(lifting) != 1:
                continue
            (i,) = lifting
            form = sp.ceiling((symbol - linear.constant) / linear.coefficients[i])
            values = {**layer.values, symbol: target.required * (1 + question.margin)}
            needed = math.ceil(float(form.args[0].subs({s: canonical(v) for s, v in values.items()})) - 1e-9)
            found.append(Bound(groups[i], max(needed, 0), f"{variables[i]} ≥ {sp.sstr(form)}",
                               numbers(form.args[0], values), f"{target}{margin}: {layer.layer}"))
    if question.usable is not None:
        device = design.device.capacity("size").value
        needed = math.ceil(canonical(question.usable) / (canonical(device) * question.efficiency) - 1e-9)
        found.append(Bound(groups[1], needed, f"{count_symbol(groups[1])} ≥ ceiling(U/(size*e))",
                           f"{format_quantity(question.usable, unit=question.usable.units)} / "
                           f"({format_quantity(device, unit=device.units)} × {question.efficiency:.3g})",
                           f"usable {format_quantity(question.usable, unit=question.usable.units)} ({question.write_cost}; "
                           "e = parity efficiency × (1 − file-system overhead) × fill)"))
    found += [Bound(group, n, f"{count_symbol(group)} ≥ {formula}", f"{n}", f"{why} ({question.write_cost})")
              for group, n, formula, why in ((groups[0], question.domains, "replicas*ceiling((data + parity)/parity)",
                                              "failure domains: one holds at most a group's parity strips"),
                                             (groups[1], question.group, "replicas*(data + parity)", "a drive per strip"))
              if n > 1]
    bays = design.server.slots - question.spares
    found.append(Bound(groups[0], math.ceil(counts[1] / bays), f"{count_symbol(groups[0])} ≥ "
                       f"ceiling({count_symbol(groups[1])}/(bays - spares))", f"{counts[1]} / {bays}", "drive bays"))
    return tuple(found)


def unit_ceilings(plan: Plan) -> list[Ceiling]:
    """Each target's ceiling on the design with one of every part, caches left out: sizing is for the storage path."""
    model = Model(plan.unit)
    return model.ceilings(((t.workload, None) for t in plan.question.targets), caches=False)


@functools.lru_cache(maxsize=4096)
def linear_form(expression: sp.Expr, variables: tuple[sp.Symbol, ...]) -> _Linear | None:
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
