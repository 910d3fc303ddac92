"""Size a system to targets: which catalogue parts, how many, cheapest first, and what binds each.

Targets are OP=VALUE: a bandwidth (20GiB/s), an operation rate of a data operation (IOPS,
random at --iops-size), or of a metadata operation (create=200000op/s). The clients exist:
give their count and NIC. Each configuration is predicted with the full model: its ceiling
per target, the binding component, and every layer's headroom. Exits 1 when no allowed
design meets the targets, and says which layer stops each.
Examples:
  iobound size --list
  iobound size --clients 512 --client-nic 25Gbit/s --target write=20GiB/s --target read=40GiB/s \\
      --target create=200000op/s --usable 2PB --parity 8+2
  iobound size --clients 16 --client-nic 100Gbit/s --target read=50GB/s --devices nvme-gen4-7.68tb \\
      --prices quotes.toml -o sized.toml
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from probes.core.errors import InputError, UnitError
from probes.core.units import Metric, canonical, format_quantity, parse_quantity, quantity_json
from probes.core.workload import Access, Operation, Workload
from assess.cli.inputs import add_input_limit, count_arg, list_arg, operation_arg, size_arg
from assess.cli.status import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from models.sizing import Configuration, Question, Sizing, Target
    from topologies.catalogue import Catalogue


# sizing format history:
#   1.0  first version
#   1.1  capacities gain range, groups nics, operations, transfers and on, ceilings low and assumed, workloads read_share
#        (topology 1.1, prediction 1.3)
SIZING_VERSION = "1.1"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list", action="store_true", help="list the catalogue's parts and stop")
    parser.add_argument("--clients", type=count_arg, metavar="N", help="client nodes that exist")
    parser.add_argument("--client-nic", metavar="RATE", help="each client's NIC, e.g. 25Gbit/s")
    parser.add_argument("--target", action="append", default=[], metavar="OP=VALUE",
                        help="e.g. write=20GiB/s, read=1000000op/s (IOPS), create=200000op/s (repeatable)")
    parser.add_argument("--usable", type=size_arg, metavar="SIZE", help="usable capacity after redundancy, e.g. 2PB")
    parser.add_argument("--replicas", type=int, default=1, metavar="N", help="copies of each byte (default 1)")
    parser.add_argument("--parity", metavar="K+M", help="data + parity strips, e.g. 8+2")
    parser.add_argument("--write-amplification", type=float, default=1.0, metavar="X",
                        help="other bytes written per byte (journaling; default 1)")
    for kind in ("networks", "servers", "devices", "metadata-servers"):
        parser.add_argument(f"--{kind}", type=list_arg(str), metavar="NAME[,NAME]",
                            help=f"allowed {kind.replace('-', ' ')} (default: all of the catalogue)")
    parser.add_argument("--catalogue", action="append", default=[], metavar="FILE",
                        help="your own parts (same form as the bundled catalogue; replaces parts of the same name)")
    parser.add_argument("--prices", metavar="FILE", help="your prices: [kind.name] tables with price (and currency)")
    add_input_limit(parser)
    parser.add_argument("--transfer-size", type=size_arg, default="1MiB", metavar="SIZE",
                        help="request size of the bandwidth targets, sequential (default 1MiB)")
    parser.add_argument("--iops-size", type=size_arg, default="4KiB", metavar="SIZE",
                        help="request size of IOPS targets, random (default 4KiB)")
    parser.add_argument("--ppn", type=count_arg, default=1, metavar="N", help="processes per client node (default 1)")
    parser.add_argument("--queue-depth", type=count_arg, default=1, metavar="N", help="requests in flight per process (default 1)")
    parser.add_argument("--top", type=count_arg, default=5, metavar="K", help="configurations to show (default 5)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the cheapest configuration as a topology file (a new file)")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope
    from topologies.catalogue import load_catalogue
    from topologies.save import check_new, save_topology
    from models.sizing import size

    catalogue = load_catalogue(tuple(args.catalogue), args.prices)
    if args.list:
        print(render_catalogue(catalogue))
        return EXIT_OK
    question = _question(args, catalogue)
    if args.output:
        check_new(args.output)  # before the work, not after it
    started = time.perf_counter()
    sizing = size(question, args.top)
    elapsed = time.perf_counter() - started
    if args.output and sizing.configurations:
        save_topology(sizing.configurations[0].topology, args.output, header=_header(question, catalogue))
    if args.json:
        print(dumps(envelope("sizing", SIZING_VERSION, _document(sizing, catalogue))))
    else:
        print(render(sizing, catalogue, elapsed))
        if args.output and sizing.configurations:
            print(f"\nwrote the cheapest configuration to {args.output}")
    return EXIT_OK if sizing.configurations else EXIT_FINDINGS


def _question(args: argparse.Namespace, catalogue: Catalogue) -> Question:
    """The sizing question of the command line; each mistake is named by its option."""
    from topologies.load import parse_write_cost
    from topologies.topology import Capacity, Group, Kind, Source
    from models.sizing import Question

    if args.clients is None or args.client_nic is None:
        raise InputError("--clients", "", "give the clients that exist: --clients N --client-nic RATE (e.g. 25Gbit/s)")
    if not args.target and args.usable is None:
        raise InputError("--target", "", "give at least one target (e.g. --target read=40GiB/s) or --usable")
    try:
        nic = parse_quantity(args.client_nic, Metric.BANDWIDTH, what="--client-nic")
    except UnitError as exc:
        raise InputError("--client-nic", "", str(exc)) from None
    clients = Group("compute", Kind.CLIENT, args.clients,
                    {"nic": Capacity(nic, Metric.BANDWIDTH, Source("assumption", "iobound size --client-nic"))})
    cost = {"replicas": args.replicas, "write_amplification": args.write_amplification}
    write_cost = parse_write_cost(cost | ({"parity": args.parity} if args.parity else {}), "--replicas/--parity", "redundancy")
    targets = tuple(_target(text, args) for text in args.target)
    kinds = [(t.workload.operation, Metric.of(t.value)) for t in targets]
    if len(set(kinds)) < len(kinds):
        raise InputError("--target", "", "one target per operation and kind (bandwidth, IOPS); one is named twice")

    def allowed(kind: Kind, names: list[str] | None) -> tuple:
        return catalogue.of_kind(kind) if names is None else tuple(catalogue.part(kind, n) for n in dict.fromkeys(names))

    servers = allowed(Kind.SERVER, args.metadata_servers)
    return Question(targets, clients, allowed(Kind.NETWORK, args.networks), allowed(Kind.SERVER, args.servers),
                    allowed(Kind.DEVICE, args.devices), tuple(p for p in servers if any(
                        k.endswith("metadata") for k in p.capacities)) if args.metadata_servers is None else servers,
                    args.usable, write_cost, catalogue.currency)


def _target(text: str, args: argparse.Namespace) -> Target:
    """One --target OP=VALUE: a bandwidth or an operation rate, measured by the workload it implies."""
    from models.sizing import Target

    name, sep, value = text.partition("=")
    where = f"--target {text}"
    try:
        operation = operation_arg(name.strip())
    except argparse.ArgumentTypeError as exc:
        raise InputError(where, "", f"the operation {exc}") from None
    if not sep or not value.strip():
        raise InputError(where, "", "must look like OP=VALUE, e.g. write=20GiB/s or create=200000op/s")
    if operation is Operation.MIXED:
        raise InputError(where, "", "size for reads and writes apart: --target read=... --target write=...")
    metrics = (Metric.OPERATION_RATE,) if operation.is_metadata else (Metric.BANDWIDTH, Metric.OPERATION_RATE)
    try:
        quantity = parse_quantity(value.strip(), what="the target", positive=True)
        if Metric.of(quantity) not in metrics:
            raise UnitError(f"{value.strip()!r} is a {Metric.of(quantity).label}")
    except UnitError as exc:
        wanted = "an operation rate such as 200000op/s" if operation.is_metadata else \
            "a bandwidth such as 20GiB/s or an operation rate (IOPS) such as 100000op/s"
        raise InputError(where, "", f"a {operation.value} target is {wanted}: {exc}") from None
    nodes = args.clients
    if operation.is_metadata:
        workload = Workload(operation, None, nodes=nodes, ppn=args.ppn, queue_depth=args.queue_depth)
    elif Metric.of(quantity) is Metric.OPERATION_RATE:
        workload = Workload(operation, args.iops_size, nodes=nodes, ppn=args.ppn, queue_depth=args.queue_depth,
                            access=Access.RANDOM)
    else:
        workload = Workload(operation, args.transfer_size, nodes=nodes, ppn=args.ppn, queue_depth=args.queue_depth)
    return Target(workload, quantity)


def _header(question: Question, catalogue: Catalogue) -> str:
    return (f"Sized by iobound size: {_asked(question)}.\n"
            f"Parts from {', '.join(catalogue.files)}; prices in {catalogue.currency or 'no stated currency'}.")


def _asked(question: Question) -> str:
    parts = [str(t) for t in question.targets]
    if question.usable is not None:
        parts.append(f"usable {format_quantity(question.usable, unit=question.usable.units)} ({question.write_cost})")
    nic = question.clients.capacity("nic").value
    return f"{', '.join(parts)} for {question.clients.count} clients x {format_quantity(nic, unit=nic.units)}"


def _ratio(a, b) -> float:
    return canonical(a) / canonical(b)


def _money(amount: float, currency: str) -> str:
    return f"{currency} {amount:,.0f}".strip()


def _bill(configuration: Configuration) -> str:
    design, counts = configuration.design, configuration.counts
    text = (f"{counts['storage']} x {design.server.name} with {design.ports} x {design.network.name} each, "
            f"{counts['drives']} x {design.device.name}")
    return text + (f", {counts['mds1']} x {design.metadata.name} as metadata servers" if design.metadata else "")


def render(sizing: Sizing, catalogue: Catalogue, elapsed: float) -> str:
    question = sizing.question
    currency = catalogue.currency
    lines = [f"asked:     {_asked(question)}",
             f"parts:     {', '.join(catalogue.files)} (prices in {currency or 'no stated currency'}; "
             "the bundled ones are indicative: give yours with --prices)",
             f"searched:  {sizing.designs} designs (network x server x ports x device) in {elapsed:.2f} s"
             + (f"; {sizing.feasible} meet the targets, the others did not or cannot cost less than those shown"
                if sizing.configurations else "")]
    if not sizing.configurations:
        lines += ["", "no allowed design meets the targets; what stops each (the best any design allows):"]
        lines += [f"  {s.target}: {s.layer} allow at most {s.target.shown(s.limit)} ({', '.join(map(str, s.components))})"
                  for s in sizing.shortfalls]
        if any(s.layer in ("requests in flight", "round trips") for s in sizing.shortfalls):
            lines.append("  (requests in flight and round trips grow with --ppn and --queue-depth)")
        return "\n".join(lines)
    best, *others = sizing.configurations
    headroom = ["headroom of every layer (its limit over the target):", _headroom(best, question), ""] \
        if question.targets else []
    lines += [f"workloads: {'; '.join(t.workload.describe() for t in question.targets) or 'none (capacity only)'}",
              "prices:    a server's include its ports (NIC, switch port, cable; a metadata server has one); "
              "the clients' ports exist", "", f"#1  {_money(best.price, currency)}: {_bill(best)}", _targets(best, question), "",
              *headroom, "closed forms (the counts each limit asks for; <- where it sets the count):"]
    lines += [f"  {b.formula} = ⌈{b.numbers}⌉ = {b.needed}{'  <-' if b.needed == best.counts[b.group] else ''}"
              f"   ({b.why})" for b in best.bounds]
    for rank, other in enumerate(others, start=2):
        binds = "; ".join(f"{t.workload.operation.value}: {', '.join(c.binding_layers)}"
                          for t, c in zip(question.targets, other.ceilings))
        lines += ["", f"#{rank}  {_money(other.price, currency)}: {_bill(other)}", f"    binds: {binds}"]
    return "\n".join(lines)


def _targets(configuration: Configuration, question: Question) -> str:
    from assess.render import table

    rows = [(str(t), t.shown(c.value), f"{_ratio(c.value, t.required) - 1:+.1%}", ", ".join(c.binding_layers),
             ", ".join(map(str, c.binding))) for t, c in zip(question.targets, configuration.ceilings)]
    if question.usable is not None:
        rows.append((f"usable {format_quantity(question.usable, unit=question.usable.units)}", format_quantity(configuration.usable, unit=question.usable.units),
                     f"{_ratio(configuration.usable, question.usable) - 1:+.1%}", "drives' size", "drives.size"))
    return table(("target", "predicted", "headroom", "binding layer", "components"), rows, right=(1, 2))


def _headroom(configuration: Configuration, question: Question) -> str:
    from assess.render import table

    names = list(dict.fromkeys(layer.layer for c in configuration.ceilings for layer in c.layers))
    rows = []
    for name in names:
        cells = []
        for target, ceiling in zip(question.targets, configuration.ceilings):
            limit = next((layer.value for layer in ceiling.layers if layer.layer == name), None)
            cells.append("-" if limit is None else f"{_ratio(limit, target.required) - 1:+.0%}")
        rows.append((name, *cells))
    return table(("layer", *(t.workload.operation.value for t in question.targets)), rows,
                 right=tuple(range(1, len(question.targets) + 1)))


def render_catalogue(catalogue: Catalogue) -> str:
    from assess.render import table
    from topologies.topology import Kind

    blocks = [f"catalogue: {', '.join(catalogue.files)} (prices in {catalogue.currency or 'no stated currency'})"]
    for kind in (Kind.NETWORK, Kind.SERVER, Kind.DEVICE):
        rows = [(p.name, "-" if p.price is None else f"{p.price:,.0f}",
                 "; ".join(f"{k} {format_quantity(c.value)}" for k, c in p.capacities.items() if c.value is not None)
                 + (f"; {p.slots} x {p.slot} bays, {p.nic_slots} NIC ports" if kind is Kind.SERVER else
                    f"; {p.slot}" if kind is Kind.DEVICE else ""), p.date)
                for p in catalogue.of_kind(kind)]
        blocks += ["", table((kind.value, "price", "figures", "date"), rows, right=(1,))]
    return "\n".join(blocks + ["", "sources: each part's source and price_source in the catalogue file"])


def _document(sizing: Sizing, catalogue: Catalogue) -> dict:
    question = sizing.question
    return {
        "catalogue": list(catalogue.files),
        "currency": catalogue.currency,
        "targets": [{"workload": t.workload.to_dict(), "target": quantity_json(t.value),
                     "required": quantity_json(t.required)} for t in question.targets],
        "usable": quantity_json(question.usable),
        "redundancy": str(question.write_cost),
        "designs": sizing.designs,
        "solved": sizing.feasible,
        "configurations": [{
            "price": c.price,
            "counts": c.counts,
            "parts": {"network": c.design.network.name, "ports_per_server": c.design.ports, "server": c.design.server.name,
                      "device": c.design.device.name,
                      "metadata_server": c.design.metadata.name if c.design.metadata else None},
            "usable": quantity_json(c.usable),
            "ceilings": [ceiling.to_dict() for ceiling in c.ceilings],
            "bounds": [{"group": b.group, "needed": b.needed, "formula": b.formula, "numbers": b.numbers, "why": b.why}
                       for b in c.bounds],
            "topology": c.topology.to_dict(),
        } for c in sizing.configurations],
        "shortfalls": [{"target": str(s.target), "layer": s.layer, "limit": quantity_json(s.limit),
                        "components": [str(c) for c in s.components]} for s in sizing.shortfalls],
    }
