"""The vocabulary of the models' formulas: symbols of groups and workloads, figures as floats, formulas with numbers put in.

Every model states its limits as formula text over these symbols, stage by stage and layer by layer, and computes with
floats in one canonical unit per metric (:func:`probes.core.units.canonical`); units come back once, at the end. The
text marks each symbol's name (:func:`mark`), so that a name with "-" or "[0]" (a group's, a link's) reads back as a
name; sympy parses it (:func:`algebra`) only where algebra is asked for, so showing a formula loads no sympy.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from probes.core.units import canonical, format_quantity
from probes.core.workload import Workload
from topologies.topology import Group

if TYPE_CHECKING:  # sympy loads with the first algebra asked for: a formula's text and a ceiling's value need none
    import sympy as sp
    from pint import Quantity

__all__ = ["mark", "count", "shown", "marked_names", "algebra", "put_numbers", "numbers", "least_of", "quotient", "workload_values",
           "least", "count_symbol", "SIZE", "PPN", "DEPTH"]

_MARKED = re.compile("\x01([^\x02]*)\x02")


def mark(name: str) -> str:
    """A symbol's name as formula text marks it."""
    return f"\x01{name}\x02"


# A workload's transfer size, processes per node and queue depth, as formula text.
SIZE, PPN, DEPTH = mark("s"), mark("p"), mark("q")


def count(group: str) -> str:
    """``n_<group>``, how many members of a group a workload uses, as formula text."""
    return mark(f"n_{group}")


def shown(text: str) -> str:
    """Formula text for people: ``NIC_compute*n_compute``."""
    return _MARKED.sub(r"\1", text)


def marked_names(text: str) -> list[str]:
    """The names of the symbols in formula text, each once, in the order they stand."""
    return list(dict.fromkeys(_MARKED.findall(text)))


def least_of(texts: list[str]) -> str:
    """The least of some formula texts: the one, or ``Min(a, b)``."""
    return texts[0] if len(texts) == 1 else f"Min({', '.join(texts)})"


def quotient(numerator: str, denominator: str) -> str:
    """``numerator/denominator``, the denominator in brackets unless it is one symbol."""
    return f"{numerator}/{denominator if _MARKED.fullmatch(denominator) else f'({denominator})'}"


@functools.lru_cache(maxsize=4096)
def algebra(text: str) -> sp.Expr:
    """The formula as a sympy expression, every symbol positive (as sympy's ``Symbol(name, positive=True)``); each text
    parsed once (sympy's expressions are immutable): a sizing search asks the same layers' of hundreds of designs."""
    import sympy as sp
    from sympy.parsing.sympy_parser import parse_expr

    names = marked_names(text)
    local = {f"x{i}_": sp.Symbol(name, positive=True) for i, name in enumerate(names)}
    local |= {"Min": sp.Min, "Max": sp.Max}
    index = {name: i for i, name in enumerate(names)}
    return parse_expr(_MARKED.sub(lambda m: f"x{index[m.group(1)]}_", text), local_dict=local)


def put_numbers(text: str, values: dict[str, Quantity | int | float]) -> str:
    """Formula text with the numbers put in: ``110 MiB/s × 10`` for ``NIC_compute*n_compute``."""
    spaced = text.replace("*", " × ").replace("/", " / ")
    return _MARKED.sub(lambda m: _number(values[m.group(1)]), spaced)


def _number(value) -> str:
    return str(value) if isinstance(value, (int, float)) else format_quantity(value)


def numbers(expression: sp.Expr, values: dict) -> str:
    """A sympy expression with the numbers put in, in sympy's order (the sizing's closed forms)."""
    printer = _marking()()
    return put_numbers(printer.doprint(expression), {str(symbol): value for symbol, value in values.items()})


def workload_values(workload: Workload, nodes: dict[str, int]) -> dict[str, Quantity | int]:
    """The values of the workload's symbols by name: n per client group, s, p and q."""
    values: dict[str, Quantity | int] = {f"n_{name}": n for name, n in nodes.items()}
    values |= {"p": workload.ppn, "q": workload.queue_depth}
    if workload.transfer_size is not None:
        values["s"] = workload.transfer_size
    return values


@functools.cache
def _marking() -> type:
    """A sympy printer that marks every symbol's name as formula text does."""
    from sympy.printing.str import StrPrinter

    class Marking(StrPrinter):
        def _print_Symbol(self, symbol):
            return mark(symbol.name)

    return Marking


@functools.lru_cache(maxsize=4096)
def count_symbol(group: str) -> sp.Symbol:
    """``n_<group>`` as a sympy symbol: the sizing's unknowns."""
    import sympy as sp

    return sp.Symbol(f"n_{group}", positive=True)


def least(groups, key: str) -> tuple[Quantity, Group] | None:
    """The group that states the smallest ``key`` (``rtt``, ``latency``) and that value; None if none states it."""
    stated = [(c.value, g) for g in groups if (c := g.capacity(key)) is not None and c.value is not None]
    return min(stated, key=lambda pair: canonical(pair[0])) if stated else None
