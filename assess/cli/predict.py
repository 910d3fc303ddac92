"""Predict the ceiling of a workload: its value, the binding component, every layer's limit, the formula.

Give several values, comma-separated, to sweep: every combination is one row.
Examples:
  iobound predict lecture --op read --transfer-size 1MiB --nodes 10 --ppn 4 --explain
  iobound predict lecture --op read,write --transfer-size 4KiB,64KiB,1MiB --nodes 1,2,4,8 --direct
  iobound predict lecture --op read --transfer-size 64KiB --direct --curve
  iobound predict system.json --accelerators 64 --model unet3d --accelerator h100
  iobound predict system.json --checkpoint 105GiB --accelerators 8
  iobound predict topo.txt --gpudirect --gdsio gdsio.log --year 2023
  iobound predict system.json --checkpoint llama3-70b
  iobound predict node.toml --kv-cache 32MiB --request-rate 200 --kv-model llama3.1-8b
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Q_, Metric, format_quantity
from probes.core.workload import Operation, Workload
from assess.cli import gpudirect
from assess.cli.inputs import count_arg, edited_topology, size_arg
from assess.cli.kvcache import add_kv_arguments, kv_cache
from assess.cli.workloads import (TRAINING_OPTIONS, add_modelled_system, add_training_arguments, refuse_unused,
                                  workloads_of)

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from models.accelerators import Feeding
    from models.ceiling import Ceiling
    from models.predict import Model


def configure(parser: argparse.ArgumentParser) -> None:
    add_modelled_system(parser)
    parser.add_argument("--explain", action="store_true", help="show the formula, its numbers and each parameter's effect")
    parser.add_argument("--curve", action="store_true",
                        help="throughput over the requests in flight: bounds and mean value analysis")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")
    group = add_training_arguments(parser)
    group.add_argument("--accelerators", type=count_arg, metavar="N",
                       help="emulated accelerators (one process each): the bandwidth they demand, and the most fed")
    group.add_argument("--checkpoint", type=_checkpoint_arg, metavar="MODEL|SIZE",
                       help="what binds a save and a restore, and how long each takes: a model's checkpoint (llama3-8b, "
                            "llama3-70b, llama3-405b, llama3-1t; its closed ranks unless --accelerators) or SIZE in all "
                            "(e.g. 105GiB) from --accelerators ranks")
    gpudirect.add_arguments(parser)
    add_kv_arguments(parser)


def _checkpoint_arg(text: str):
    """A model of the checkpoint table (llama3-8b ...) or a size (a number with a unit)."""
    from models.checkpoints import MODELS, llm

    if text.strip()[:1].isdigit():
        return size_arg(text)
    if text.strip().lower().replace("_", "-") not in MODELS:
        raise argparse.ArgumentTypeError(f"must be a model ({', '.join(MODELS)}) or a size such as 105GiB. "
                                         f"Got {text!r} instead.")
    return llm(text)


def execute(args: argparse.Namespace) -> int:
    if args.gpudirect:
        return gpudirect.execute(args)
    if args.kv_cache is not None:
        return kv_cache(args)
    if args.checkpoint is not None or args.model or args.accelerator:
        return _accelerators(args)
    if args.op is None:
        raise InputError("--op", "", "give the operation (--op read, write ...), or --model and --accelerator for "
                         "accelerators, or --checkpoint SIZE --accelerators N")
    return _workloads(args)


def _workloads(args: argparse.Namespace) -> int:
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
        ceilings = model.ceilings((w, clients) for w in workloads)
        if args.json:
            print(dumps(envelope("prediction-sweep", SWEEP_VERSION, sweep_body(system, ceilings))))
        else:
            print(render_sweep(ceilings, f"{topology.name} ({topology.path})"))
        return 0
    (workload,) = workloads
    ceiling = model.ceiling(workload, clients)
    sought = _one_group(model, workload, clients) and workload.operation is not Operation.MIXED
    found = knee(model, workload, clients) if sought else None
    effects = sensitivity(ceiling) if args.json or args.explain else ()  # shown only there; it needs sympy
    curve = _curve(model, workload, clients) if args.curve else None
    if args.json:
        print(dumps(envelope("prediction", PREDICTION_VERSION, prediction_body(system, ceiling, found, effects, curve))))
        return 0
    scaling = str(found) if found else _no_knee(model, workload, clients) if sought else None
    print(render(ceiling, f"{topology.name} ({topology.path})", explain=args.explain, scaling=scaling, effects=effects))
    if curve is not None:
        print("\n" + render_curve(curve, ceiling.metric))
    return 0


def _one_group(model: Model, workload: Workload, clients) -> bool:
    return len(model.nodes(workload, clients)[0]) == 1


def _no_knee(model: Model, workload: Workload, clients) -> str:
    """What scaling says where the ceiling grows in proportion up to every node of the (one) client group."""
    (group,), _ = model.nodes(workload, clients)
    count = model.topology.group(group).count
    whole = model.ceiling(replace(workload, nodes=count), (group,))
    return (f"grows with the nodes up to all {count} of {group} ({', '.join(whole.binding_layers)}): no knee within "
            "the group")


def render(ceiling: Ceiling, system: str, *, explain: bool = False, scaling: str | None = None, effects=()) -> str:
    """The prediction as people read it; ``scaling`` says where adding nodes stops helping (the knee), if sought."""
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
    if scaling is not None:
        lines += ["", f"scaling:   {scaling}"]
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

    rows = [(c.workload.describe(), c.shown, c.binds, c.binds_marked) for c in ceilings]
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


# accelerators format history (the body is _feeding_body's):
#   1.0  first version: the demand, the ceiling for the accelerators asked about, the most fed at either end
ACCELERATORS_VERSION = "1.0"


def _accelerators(args: argparse.Namespace) -> int:
    """The accelerator question (how many are fed) or the checkpoint question (how long one takes)."""
    from assess.render import dumps, envelope
    from models.accelerators import entry, feed
    from models.predict import Model

    if args.checkpoint is not None:
        refuse_unused(args, "predict", "--checkpoint", frozenset({"accelerators", "checkpoint"}))
    else:
        refuse_unused(args, "predict", "--model and --accelerator", TRAINING_OPTIONS | {"accelerators"})
    topology = edited_topology(args)
    model = Model(topology)
    clients = tuple(args.clients) if args.clients else None
    system = {"name": topology.name, "path": topology.path}
    if args.checkpoint is not None:
        from assess.checkpoints import CHECKPOINT_VERSION, checkpoint_body, render_checkpoint
        from models.checkpoints import LLM, saving

        if args.accelerators is None and not isinstance(args.checkpoint, LLM):
            raise InputError("--checkpoint", "", "give the ranks that write it: --accelerators N")
        try:
            found = saving(model, args.checkpoint, args.accelerators, clients=clients)
        except ValueError as exc:
            raise InputError("--accelerators", "", str(exc)) from None
        kind, version, body, render = "checkpoint", CHECKPOINT_VERSION, checkpoint_body, render_checkpoint
    else:
        if not (args.model and args.accelerator):
            raise InputError("--model", "", "give both the training workload and its accelerator: --model unet3d "
                             "--accelerator h100")
        demand = entry(args.model, args.accelerator, extra=args.accelerators_table)
        try:
            found = feed(model, demand, args.accelerators, au=args.au, read_threads=args.read_threads, clients=clients)
        except ValueError as exc:
            raise InputError("--au", "", str(exc)) from None
        kind, version, body, render = "accelerators", ACCELERATORS_VERSION, _feeding_body, render_feeding
    if args.json:
        print(dumps(envelope(kind, version, body(system, found))))
    else:
        print(render(found, f"{topology.name} ({topology.path})"))
    return 0


def _rate(q) -> str:
    """A bandwidth both ways: in the decimal units buyers quote and the binary ones DLIO reports (its "MB/s" is MiB/s)."""
    return f"{format_quantity(q.to('GB/s'), unit='GB/s')} ({format_quantity(q.to('GiB/s'), unit='GiB/s')})"


def render_feeding(found: Feeding, system: str) -> str:
    """How many accelerators the system feeds, as people read it."""
    d = found.demand
    at = f"{found.au:.0%} AU"
    lines = [f"system:      {system}",
             f"workload:    {d.model} on {d.accelerator}: {d.batch_size} x {format_quantity(d.record_length)} every "
             f"{format_quantity(d.computation_time)} per accelerator; minimum AU {d.min_au:.0%} ({d.source})",
             f"one accelerator reads {_rate(d.per_accelerator)} at 100 % AU, {_rate(found.per_accelerator)} at {at}"]
    if found.read_threads:
        lines.append(f"read threads: {found.read_threads} per accelerator (requests in flight, Little's law)")
    if found.count is not None:
        ceiling = found.ceiling
        fed = found.needed <= ceiling.least
        maybe = not fed and found.needed <= ceiling.value
        verdict = "yes" if fed else "only if the ranges are high enough" if maybe else "no"
        lines += ["", f"{found.count} accelerators demand {_rate(found.needed)} at {at}",
                  f"the storage's ceiling for them: {ceiling.shown}, bound by {ceiling.binds} "
                  f"({ceiling.binds_marked})",
                  f"fed at {at}: {verdict} (ceiling over demand: {(ceiling.least / found.needed).m_as(''):.2f}"
                  + (f" to {(ceiling.value / found.needed).m_as(''):.2f}" if ceiling.low else "") + ")"]
    most = f"{found.most}" if found.most == found.least else f"{found.least} to {found.most}"
    lines += ["", f"most accelerators fed at {at}: {most}"
              + (" (every range at its least favourable end to its most)" if found.most != found.least else ""),
              f"what stops one more: {found.binds()}"
              + (f" (at the least favourable end: {found.binds(low=True)})"
                 if found.binds(low=True) != found.binds() else "")]
    if found.limit.assumptions:
        lines += ["", "assumptions:", *(f"  - {a}" for a in dict.fromkeys(found.limit.assumptions))]
    return "\n".join(lines)


def _feeding_body(system: dict, found: Feeding) -> dict:
    from probes.core.units import quantity_json

    d = found.demand
    return {"system": system,
            "demand": {"model": d.model, "accelerator": d.accelerator, "record_length": quantity_json(d.record_length),
                       "batch_size": d.batch_size, "computation_time": quantity_json(d.computation_time),
                       "min_au": d.min_au, "source": d.source, "per_accelerator": quantity_json(d.per_accelerator)},
            "au": found.au, "read_threads": found.read_threads, "accelerators": found.count,
            "needed": quantity_json(found.needed), "ceiling": found.ceiling.to_dict() if found.ceiling else None,
            "most": found.most, "least": found.least, "binds": found.binds(), "binds_low": found.binds(low=True),
            "limit": found.limit.to_dict()}
