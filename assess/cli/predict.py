"""Predict the ceiling of a workload: its value, the binding component, every layer's limit, the formula.

Example:  iobound predict lecture --op read --transfer-size 1MiB --nodes 10 --ppn 4
"""

from __future__ import annotations

import argparse

from probes.units import format_quantity
from probes.workload import Access, Operation, Workload
from models.ceiling import Ceiling
from models.predict import predict
from assess.cli.inputs import count_arg, open_topology, size_arg
from assess.render import dumps, envelope, table

# prediction format history:
#   1.0  first version
#   1.1  workload gains data_set and shared_file (null when not known)
FORMAT_VERSION = "1.1"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topology", metavar="TOPOLOGY", help="topology file (TOML) or a bundled example name, e.g. lecture")
    parser.add_argument("--op", required=True, choices=[o.value for o in Operation], help="the data operation")
    parser.add_argument("--transfer-size", required=True, type=size_arg, metavar="SIZE", help="size of one request, e.g. 1MiB, 64KiB")
    parser.add_argument("--nodes", type=count_arg, help="client nodes that run it (default: all of the client group)")
    parser.add_argument("--ppn", type=count_arg, default=1, help="processes per node (default 1)")
    parser.add_argument("--queue-depth", type=count_arg, default=1, help="requests in flight per process (default 1)")
    parser.add_argument("--access", choices=[a.value for a in Access], default="sequential", help="default sequential")
    parser.add_argument("--clients", action="append", metavar="GROUP", help="client group that runs it (repeatable; default all)")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def run(args: argparse.Namespace) -> int:
    topology = open_topology(args.topology)
    workload = Workload(Operation(args.op), args.transfer_size, nodes=args.nodes, ppn=args.ppn,
                        queue_depth=args.queue_depth, access=Access(args.access))
    ceiling = predict(topology, workload, clients=tuple(args.clients) if args.clients else None)
    if args.json:
        print(dumps(envelope("prediction", FORMAT_VERSION, {"topology": {"name": topology.name, "path": topology.path},
                                                           **ceiling.to_dict()})))
    else:
        print(render(ceiling, f"{topology.name} ({topology.path})"))
    return 0


def render(ceiling: Ceiling, system: str) -> str:
    """The prediction as people read it."""
    rows = [
        (layer.layer, "-" if layer.value is None else format_quantity(layer.value), layer.formula, layer.numbers,
         "<- binds" if layer.layer in ceiling.binding_layers else "")
        for layer in ceiling.layers
    ]
    lines = [
        f"system:    {system}",
        f"workload:  {ceiling.workload.describe()}",
        f"ceiling:   {format_quantity(ceiling.value)}, bound by {', '.join(ceiling.binding_layers)} ({', '.join(ceiling.binding)})",
        "",
        table(("layer", "limit", "formula", "with numbers", ""), rows, right=(1,)),
        "",
        f"formula:   {ceiling.formula}",
        f"           = {ceiling.numbers}",
        "where:     " + ", ".join(f"{name} = {value}" for name, value in ceiling.symbols.items()),
    ]
    if ceiling.assumptions:
        lines += ["assumptions:", *(f"  - {a}" for a in ceiling.assumptions)]
    return "\n".join(lines)
