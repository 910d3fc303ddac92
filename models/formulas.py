"""The vocabulary of the models' formulas: symbols of groups and workloads, figures as floats, formulas with numbers put in.

Every model states its limits as sympy expressions over these symbols and computes with
floats in one canonical unit per metric (:func:`probes.core.units.canonical`); units come back once, at the end.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from probes.core.units import canonical, format_quantity
from probes.core.workload import Workload
from topologies.topology import Group

if TYPE_CHECKING:  # sympy loads with the first formula asked for: a ceiling's value needs none
    import sympy as sp
    from pint import Quantity

__all__ = ["workload_symbols", "numbers", "least", "group_symbol", "count_symbol", "workload_values"]


@functools.cache
def workload_symbols() -> tuple[sp.Symbol, sp.Symbol, sp.Symbol]:
    """A workload's transfer size, processes per node and queue depth: the symbols s, p and q."""
    import sympy as sp

    return sp.symbols("s p q", positive=True)


def workload_values(workload: Workload, nodes: dict[str, int]) -> dict[sp.Symbol, Quantity | int]:
    """The values of the workload's symbols: n per client group, s, p and q."""
    size, ppn, depth = workload_symbols()
    values: dict[sp.Symbol, Quantity | int] = {count_symbol(name): n for name, n in nodes.items()}
    values |= {ppn: workload.ppn, depth: workload.queue_depth}
    if workload.transfer_size is not None:
        values[size] = workload.transfer_size
    return values


@functools.cache
def _placeholders() -> type:
    """A sympy printer that prints every symbol as a numbered placeholder, so operators can be spaced before values go in."""
    from sympy.printing.str import StrPrinter

    class Placeholders(StrPrinter):
        def __init__(self):
            super().__init__()
            self.symbols: list[sp.Symbol] = []

        def _print_Symbol(self, symbol):
            self.symbols.append(symbol)
            return f"\x00{len(self.symbols) - 1}\x00"

    return Placeholders


def numbers(expression: sp.Expr, values: dict) -> str:
    """``expression`` with the numbers put in, in sympy's order: ``110 MiB/s × 10`` for ``NIC_compute*n_compute``."""
    printer = _placeholders()()
    text = printer.doprint(expression).replace("*", " × ").replace("/", " / ")
    for index, symbol in enumerate(printer.symbols):
        value = values[symbol]
        text = text.replace(f"\x00{index}\x00", str(value) if isinstance(value, (int, float)) else format_quantity(value))
    return text


@functools.lru_cache(maxsize=4096)
def count_symbol(group: str) -> sp.Symbol:
    """``n_<group>``: how many members of a group a workload uses."""
    import sympy as sp

    return sp.Symbol(f"n_{group}", positive=True)


def least(groups, key: str) -> tuple[Quantity, Group] | None:
    """The group that states the smallest ``key`` (``rtt``, ``latency``) and that value; None if none states it."""
    stated = [(c.value, g) for g in groups if (c := g.capacity(key)) is not None and c.value is not None]
    return min(stated, key=lambda pair: canonical(pair[0])) if stated else None


@functools.lru_cache(maxsize=4096)
def group_symbol(prefix: str, group: str) -> sp.Symbol:
    """``<prefix>_<group>``: one member's capacity (``NIC_compute``, ``RTT_ethernet``)."""
    import sympy as sp

    return sp.Symbol(f"{prefix}_{group}", positive=True)
