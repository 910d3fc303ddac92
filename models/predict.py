"""Predict the bandwidth ceiling of a workload on a topology: a minimum cut, every layer's own limit, a formula."""

from __future__ import annotations

import math

import sympy as sp

from probes.errors import TopologyError
from probes.units import Q_, format_quantity
from probes.workload import Workload
from models.ceiling import TIE, Ceiling, LayerLimit
from models.flow import FlowNetwork, Stage, canonical, numbers
from topologies.topology import Topology

__all__ = ["predict", "unmodelled"]


def unmodelled(workload: Workload) -> str | None:
    """Why :func:`predict` has no ceiling for ``workload``, or None when it has one."""
    if workload.operation.is_metadata:
        return f"iobound models data bandwidth only; a {workload.operation.value} rate has no ceiling yet"
    return None


def predict(topology: Topology, workload: Workload, *, clients: tuple[str, ...] | None = None) -> Ceiling:
    """The most ``workload`` can reach on ``topology``, and the components that set it.

    The ceiling is the minimum cut of the topology's flow network (see
    :mod:`models.flow`); a layer's own limit is the minimum cut when every other
    layer is taken as unlimited. The formula is ``Min`` over the layers' limits
    (plus the cut itself when it mixes layers), so it always equals the cut.

    Parameters
    ----------
    topology : the system.
    workload : the benchmark configuration; ``nodes`` counts nodes of the client group.
    clients : names of the client groups that run the workload (default: all).

    Raises
    ------
    ValueError
        If the workload is one the model does not cover (see :func:`unmodelled`).
    TopologyError
        If no capacity limits the path, the client group is unknown, or the
        workload asks for more nodes than the group has.

    Examples
    --------
    >>> from topologies.bundled import load_example
    >>> from probes.units import Q_
    >>> from probes.workload import Operation, Workload
    >>> ceiling = predict(load_example("lecture"), Workload(Operation.READ, Q_(1, "MiB")))
    >>> str(ceiling)
    '1,100 MiB/s (client NICs)'
    """
    reason = unmodelled(workload)
    if reason:
        raise ValueError(reason)
    network = FlowNetwork(topology, workload, clients)
    overall = network.min_cut()
    if overall is None:
        raise TopologyError(topology.path, "", "no capacity limits the path from the clients to the storage; "
                            "state the bandwidth of the NICs or the devices")
    value, cut = overall
    if value <= 0:
        raise TopologyError(topology.path, "links", "the chosen clients have no path to the storage in the direction data moves")
    values = {symbol: v for stage in network.stages for symbol, v in stage.values.items()}
    layers, expressions = [], []
    for name in network.layers():
        result = network.min_cut(only={name})
        if result is None:
            layers.append(LayerLimit(name, None, (), "", "does not separate clients from storage on its own"))
            continue
        limit, stages = result
        expression = sp.Add(*(s.term for s in stages))
        expressions.append(expression)
        layers.append(LayerLimit(name, Q_(limit, "B/s"), _components(stages), sp.sstr(expression),
                                 f"{numbers(expression, values)} = {format_quantity(Q_(limit, 'B/s'))}"))
    limited = [layer for layer in layers if layer.value is not None]
    binding_layers = [layer.layer for layer in limited if math.isclose(layer.value.m_as("B/s"), value, rel_tol=TIE)]
    terms = [f"{layer.layer} {format_quantity(layer.value)}" for layer in limited]
    if not binding_layers:  # the cut mixes layers and is lower than any one of them
        binding_layers = ["combined cut"]
        mixed = sp.Add(*(s.term for s in cut))
        expressions.append(mixed)
        terms.append(f"combined cut {numbers(mixed, values)} = {format_quantity(Q_(value, 'B/s'))}")
    binding = tuple(dict.fromkeys(_components(cut) + tuple(
        c for layer in limited if layer.layer in binding_layers for c in layer.components)))
    formula = sp.Min(*expressions, evaluate=False) if len(expressions) > 1 else expressions[0]
    used = sorted(formula.free_symbols, key=str)
    return Ceiling(
        workload=workload,
        value=Q_(value, "B/s"),
        binding=binding,
        binding_layers=tuple(binding_layers),
        layers=tuple(layers),
        formula=sp.sstr(formula),
        numbers=f"min({', '.join(terms)}) = {format_quantity(Q_(value, 'B/s'))}",
        symbols={str(symbol): values[symbol] for symbol in used},
        assumptions=tuple(dict.fromkeys(network.assumptions)),
        expression=formula,
        substitutions={symbol: canonical(values[symbol]) for symbol in used},
    )


def _components(stages: list[Stage]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.component for s in stages))
