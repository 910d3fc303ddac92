"""Predict the ceiling of a workload: its value, the binding component, every layer's limit, the formula.

Give several values, comma-separated, to sweep: every combination is one row.
Examples:
  iobound predict lecture --op read --transfer-size 1MiB --nodes 10 --ppn 4 --explain
  iobound predict lecture --op read,write --transfer-size 4KiB,64KiB,1MiB --nodes 1,2,4,8 --direct
  iobound predict lecture --op read --transfer-size 64KiB --direct --curve
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from probes.core.units import Q_, Metric, format_quantity
from probes.core.workload import Operation, Workload
from assess.cli.inputs import add_input_limit, add_set_argument, edited_topology
from assess.cli.workloads import add_workload_arguments, workloads_of

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from models.ceiling import Ceiling
    from models.predict import Model


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topology", metavar="TOPOLOGY", help="topology file (TOML) or a bundled example name, e.g. lecture")
    add_set_argument(parser)
    add_input_limit(parser)
    add_workload_arguments(parser)
    parser.add_argument("--explain", action="store_true", help="show the formula, its numbers and each parameter's effect")
    parser.add_argument("--curve", action="store_true",
                        help="throughput over the requests in flight: bounds and mean value analysis")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope
    from models.ceiling import PREDICTION_VERSION, SWEEP_VERSION, prediction_body, sweep_body
    from models.predict import Model
    from models.scaling import knee
    from models.sensitivity import sensitivity

    topology = edited_topology(args)
    model = Model(topology)
    workloads, clients = workloads_of(args, topology)
    system = {"name": topology.name, "path": topology.path}
    if len(workloads) > 1:
        ceilings = [model.ceiling(w, clients) for w in workloads]
        if args.json:
            print(dumps(envelope("prediction-sweep", SWEEP_VERSION, sweep_body(system, ceilings))))
        else:
            print(render_sweep(ceilings, f"{topology.name} ({topology.path})"))
        return 0
    (workload,) = workloads
    ceiling = model.ceiling(workload, clients)
    found = knee(model, workload, clients) if _one_group(model, workload, clients) and \
        workload.operation is not Operation.MIXED else None
    effects = sensitivity(ceiling)
    curve = _curve(model, workload, clients) if args.curve else None
    if args.json:
        print(dumps(envelope("prediction", PREDICTION_VERSION, prediction_body(system, ceiling, found, effects, curve))))
        return 0
    print(render(ceiling, f"{topology.name} ({topology.path})", explain=args.explain, knee=found, effects=effects))
    if curve is not None:
        print("\n" + render_curve(curve, ceiling.metric))
    return 0


def _one_group(model: Model, workload: Workload, clients) -> bool:
    return len(model.nodes(workload, clients)[0]) == 1


def render(ceiling: Ceiling, system: str, *, explain: bool = False, knee=None, effects=()) -> str:
    """The prediction as people read it."""
    from assess.render import table

    low = {layer.layer: layer.value for layer in ceiling.low.layers} if ceiling.low else None

    def limit(value) -> str:
        return "-" if value is None else format_quantity(value)
    rows = [
        (layer.layer, *((limit(low.get(layer.layer)),) if low else ()), limit(layer.value),
         ceiling.marked(layer.components), *((layer.formula, layer.numbers) if explain else ()),
         "<- binds" if layer.layer in ceiling.binding_layers else "")
        for layer in ceiling.layers
    ]
    ends = ("least", "most") if low else ("limit",)
    headers = ("layer", *ends, "components", *(("formula", "with numbers") if explain else ()), "")
    lines = [
        f"system:    {system}",
        f"workload:  {ceiling.workload.describe()}",
        f"ceiling:   {ceiling.shown}, bound by {', '.join(ceiling.binding_layers)} ({ceiling.marked(ceiling.binding)})",
    ]
    if ceiling.low:
        lines += [f"           with every range at its least favourable end: {format_quantity(ceiling.low.value)}, bound by "
                  f"{', '.join(ceiling.low.binding_layers)} ({ceiling.marked(ceiling.low.binding)})"]
    lines += ["", table(headers, rows, right=tuple(range(1, len(ends) + 1)))]
    if ceiling.caches:
        lines += ["", "if a cache serves the data instead:"]
        lines += [f"  {c.layer}: {'not stated' if c.value is None else format_quantity(c.value)}; {c.reason}"
                  for c in ceiling.caches]
    if knee is not None:
        lines += ["", f"scaling:   {knee}"]
    if explain:
        lines += [
            "",
            f"formula:   {ceiling.formula}",
            f"           = {ceiling.numbers}" + (" (every range at its most favourable end)" if ceiling.low else ""),
            *([f"           = {ceiling.low.numbers} (at its least favourable end)"] if ceiling.low else []),
            "where:     " + ", ".join(f"{name} = {_shown(value)}" for name, value in ceiling.symbols.items()),
            "effect of 1 % more of each parameter on the ceiling (elasticity):",
            *(f"  {e.symbol:<16} {e.elasticity:+.3f} %" for e in effects if e.elasticity),
            "  (the others: none at this point)" if any(not e.elasticity for e in effects) else "",
        ]
    if ceiling.assumptions:
        lines += ["", "assumptions:", *(f"  - {a}" for a in ceiling.assumptions)]
    return "\n".join(lines)


def _shown(value) -> str:
    return str(value) if isinstance(value, (int, float)) else format_quantity(value)


def render_sweep(ceilings: list[Ceiling], system: str) -> str:
    """One row per workload of a sweep."""
    from assess.render import table

    rows = [(c.workload.describe(), c.shown, ", ".join(c.binding_layers), c.marked(c.binding)) for c in ceilings]
    return "\n".join([f"system:    {system}", "", table(("workload", "ceiling", "bound by", "components"), rows, right=(1,))])


def _curve(model: Model, workload: Workload, clients) -> dict:
    """Throughput over 1..N requests in flight: the bounds, and MVA (exact up to its limit, else Schweitzer at N)."""
    from models.queueing import MVA_LIMIT, bounds, mva, schweitzer
    import numpy as np
    from models.scaling import queueing_network

    net = queueing_network(model, workload, clients)
    n = net.population
    limits = bounds(net.stations, n, net.think)
    points = sorted({int(round(x)) for x in np.geomspace(1, max(n, 1), num=min(n, 12))} | {n})
    if n <= MVA_LIMIT:
        solved = mva(net.stations, n, net.think)
        exact = {int(p): float(x) for p, x in zip(solved.population, solved.throughput)}
        method = "exact mean value analysis"
    else:
        exact = {n: float(schweitzer(net.stations, n, net.think).throughput[-1])}
        points, method = [n], "Schweitzer's approximate mean value analysis"
    rows = []
    for p in points:
        b = bounds(net.stations, p, net.think)
        rows.append({"requests": p, "upper": b.upper * net.transfer_size, "lower": b.lower * net.transfer_size,
                     "mva": exact.get(p, float("nan")) * net.transfer_size})
    return {"method": method, "knee_requests": limits.knee, "bottleneck": list(limits.bottleneck), "think": net.think,
            "points": rows}


def render_curve(curve: dict, metric: Metric) -> str:
    from assess.render import table

    def shown(x):
        return format_quantity(Q_(x, metric.unit))
    rows = [(str(p["requests"]), shown(p["lower"]), shown(p["mva"]), shown(p["upper"])) for p in curve["points"]]
    return "\n".join([
        f"throughput over requests in flight ({curve['method']}): every stage a queue a request visits in turn, "
        "so its bounds are below the ceiling, which lets pipelined stages overlap:",
        table(("requests", "serial: lower bound", "MVA", "upper bound"), rows, right=(0, 1, 2, 3)),
        f"knee: {curve['knee_requests']:.1f} requests in flight, where {', '.join(curve['bottleneck'])} saturate(s)",
    ])
