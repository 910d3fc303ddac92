"""Size a system to targets: which catalogue parts, how many, cheapest first, and what binds each.

Targets are OP=VALUE: a bandwidth (20GiB/s), an operation rate of a data operation (IOPS,
random at --iops-size), or of a metadata operation (create=200000op/s). The clients exist:
give their count and NIC. Each configuration is predicted with the full model: its ceiling
per target, the binding component, and every layer's headroom. Parts count at their
sustained figures (an HDD over its whole platter, a link after protocol overhead), each
target needs --margin of headroom (20 % by default), parity spreads over enough enclosures
to survive one, every enclosure is filled (hot spares, data drives in whole parity groups),
and the answer has a bill of materials with switches, rack units and power (--bom writes it
as CSV). Exits 1 when no allowed design meets the targets, and says which layer stops each.
Examples:
  iobound size --list
  iobound size --clients 512 --client-nic 25Gbit/s --target write=20GiB/s --target read=40GiB/s \\
      --target create=200000op/s --usable 2PB --parity 8+2
  iobound size --clients 16 --client-nic 100Gbit/s --target read=50GB/s --devices nvme-gen4-7.68tb \\
      --prices quotes.toml -o sized.toml
  iobound size --clients 64 --client-nic 400Gbit/s --target accelerators=512:unet3d:h100
  iobound size --clients 64 --client-nic 2x200Gbit/s --target read=100GB/s --devices nvme-gen5-7.68tb --ha --bom gpu.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import time
from typing import TYPE_CHECKING

from probes.core.errors import InputError, UnitError
from probes.core.units import Metric, canonical, format_quantity, parse_quantity, quantity_json
from probes.core.workload import Access, Operation, Workload
from assess.cli.inputs import add_input_limit, count_arg, list_arg, operation_arg, size_arg
from assess.cli.status import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from pint import Quantity

    from models.sizing import Configuration, Question, Sizing, Target
    from topologies.catalogues.catalogue import Catalogue


# sizing format history:
#   1.0  first version
#   1.1  capacities gain range, groups nics, operations, transfers and on, ceilings low and assumed, workloads read_share
#        (topology 1.1, prediction 1.3)
#   1.2  policy (margin, ha, spares, fs_overhead, fill, oversubscription, client_family), targets needed (with the
#        margin), refused networks; configurations gain total, spares, survives, rebuild, capacity, fabric, bill and
#        totals (rack units, power, cooling); alternatives (the cheapest of each family), prices_not_from_file
#   1.3  fabric gains gateway and gateways (a network of another fabric than the clients' is reached through
#        gateways), and is given when either a switch or a gateway is known; configurations gain failover (each
#        target's ceiling, least and most, while one server of a pair or a controller is down), total_range (the hardware at
#        the low and high ends of its parts' price ranges) and bill lines unit_price_range
SIZING_VERSION = "1.3"
BTU_PER_HOUR = "BTU/hour"  # cooling, as data centres quote it


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list", action="store_true", help="list the catalogue's parts and stop")
    parser.add_argument("--clients", type=count_arg, metavar="N", help="client nodes that exist")
    parser.add_argument("--client-nic", metavar="[Nx]RATE", help="each client's NIC ports, e.g. 25Gbit/s or 2x200Gbit/s")
    parser.add_argument("--client-fabric", choices=("ethernet", "infiniband"), default="ethernet",
                        help="the clients' network (default ethernet); networks of another are reached through the "
                        "catalogue's gateways, or refused where none joins the two")
    parser.add_argument("--target", action="append", default=[], metavar="OP=VALUE",
                        help="e.g. write=20GiB/s, read=1000000op/s (IOPS), create=200000op/s, or "
                             "accelerators=N:MODEL:ACCELERATOR[:AU] (MLPerf Storage training, e.g. "
                             "accelerators=512:unet3d:h100) (repeatable)")
    parser.add_argument("--accelerators-table", metavar="FILE",
                        help="your own [model.accelerator] entries for accelerator targets (form of models/accelerators.toml)")
    parser.add_argument("--usable", type=size_arg, metavar="SIZE", help="usable capacity after redundancy, e.g. 2PB")
    parser.add_argument("--replicas", type=int, default=1, metavar="N", help="copies of each byte (default 1)")
    parser.add_argument("--parity", metavar="K+M", help="data + parity strips, e.g. 8+2")
    parser.add_argument("--write-amplification", type=float, default=1.0, metavar="X",
                        help="other bytes written per byte (journaling; default 1)")
    parser.add_argument("--margin", default="20%", metavar="PCT",
                        help="headroom every target needs above it (default 20%%)")
    parser.add_argument("--ha", action="store_true", help="servers in HA pairs (a dual-controller part is one by itself)")
    parser.add_argument("--spares", metavar="N",
                        help="hot spare drives per enclosure (default 1 with redundancy, 0 without)")
    parser.add_argument("--fs-overhead", default="5%", metavar="PCT",
                        help="capacity the file system keeps for itself (default 5%%)")
    parser.add_argument("--fill", default="80%", metavar="PCT",
                        help="how full the file system may run (default 80%%)")
    parser.add_argument("--rebuild-rate", metavar="RATE",
                        help="how fast a failed drive is rebuilt (default: the drive's sustained write)")
    parser.add_argument("--oversubscription", default="1:1", metavar="N:1",
                        help="leaf downlinks over uplinks (default 1:1, non-blocking)")
    parser.add_argument("--growth", metavar="PCT/year", help="data growth, e.g. 30%%/year")
    parser.add_argument("--years", type=count_arg, default=3, metavar="N", help="years of growth to show (default 3)")
    parser.add_argument("--bom", metavar="FILE", help="write the cheapest configuration's bill of materials as CSV (a new file)")
    for kind in ("networks", "servers", "devices", "metadata-servers"):
        parser.add_argument(f"--{kind}", type=list_arg(str), metavar="NAME[,NAME]",
                            help=f"allowed {kind.replace('-', ' ')} (default: all of the catalogue)")
    parser.add_argument("--catalogue", action="append", default=[], metavar="FILE",
                        help="your own parts (same form as the bundled catalogue; replaces parts of the same name)")
    parser.add_argument("--prices", metavar="FILE", help="your prices: [kind.name] tables with price (and currency), "
                        "and [lines.NAME] software or support priced per TB, server or node")
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
    from topologies.catalogues.catalogue import load_catalogue
    from topologies.save import check_new, save_topology
    from models.sizing import size

    catalogue = load_catalogue(tuple(args.catalogue), args.prices)
    if args.list:
        print(render_catalogue(catalogue))
        return EXIT_OK
    question = _question(args, catalogue)
    for path in (args.output, args.bom):
        if path:
            check_new(path)  # before the work, not after it
    if args.output and args.output == args.bom:
        raise InputError(args.bom, "", "-o and --bom name the same file; give each its own")
    started = time.perf_counter()
    sizing = size(question, args.top)
    elapsed = time.perf_counter() - started
    if args.output and sizing.configurations:
        save_topology(sizing.configurations[0].topology, args.output, header=_header(question, catalogue))
    if args.bom and sizing.configurations:
        write_bom(sizing.configurations[0], catalogue.currency, args.bom)
    if args.json:
        print(dumps(envelope("sizing", SIZING_VERSION, _document(sizing, catalogue))))
    else:
        print(render(sizing, catalogue, elapsed))
        for path, what in ((args.output, "the cheapest configuration"), (args.bom, "its bill of materials")):
            if path and sizing.configurations:
                print(f"\nwrote {what} to {path}")
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
    ports, nic = _client_nic(args.client_nic)
    clients = Group("compute", Kind.CLIENT, args.clients,
                    {"nic": Capacity(nic, Metric.BANDWIDTH, Source("assumption", "iobound size --client-nic"))}, nics=ports)
    cost = {"replicas": args.replicas, "write_amplification": args.write_amplification}
    write_cost = parse_write_cost(cost | ({"parity": args.parity} if args.parity else {}), "--replicas/--parity", "redundancy")
    targets = tuple(_target(text, args) for text in args.target)
    kinds = [(t.workload.operation, Metric.of(t.value)) for t in targets]
    if len(set(kinds)) < len(kinds):
        raise InputError("--target", "", "one target per operation and kind (bandwidth, IOPS); one is named twice")

    def allowed(kind: Kind, names: list[str] | None) -> tuple:
        return catalogue.of_kind(kind) if names is None else tuple(catalogue.part(kind, n) for n in dict.fromkeys(names))

    servers = allowed(Kind.SERVER, args.metadata_servers)
    redundant = write_cost.replicas > 1 or bool(write_cost.parity and write_cost.parity[1])
    fill = _option("--fill", args.fill, _share)
    if fill == 0:
        raise InputError("--fill", "", "a file system filled to 0% holds nothing; give the share it may fill, e.g. 80%")
    return Question(targets, clients, allowed(Kind.NETWORK, args.networks), allowed(Kind.SERVER, args.servers),
                    allowed(Kind.DEVICE, args.devices), tuple(p for p in servers if any(
                        k.endswith("metadata") for k in p.capacities)) if args.metadata_servers is None else servers,
                    args.usable, write_cost, catalogue.currency, margin=_option("--margin", args.margin, _share),
                    ha=args.ha, spares=int(redundant) if args.spares is None else _option("--spares", args.spares, _spares),
                    whole_enclosures=True, fs_overhead=_option("--fs-overhead", args.fs_overhead, _share), fill=fill,
                    client_family=args.client_fabric,
                    oversubscription=_option("--oversubscription", args.oversubscription, _oversubscription),
                    rebuild_rate=args.rebuild_rate and _option("--rebuild-rate", args.rebuild_rate, _rate),
                    growth=_option("--growth", args.growth, _growth) if args.growth else 0.0,
                    years=args.years if args.growth else 0, catalogue=catalogue)


def _option(name: str, text: str, parse):
    """An option's value read by ``parse``; its mistake as one line naming the option."""
    try:
        return parse(text)
    except ValueError as exc:
        raise InputError(name, "", str(exc)) from None


def _client_nic(text: str) -> tuple[int, Quantity]:
    """--client-nic [Nx]RATE: the ports of each client and the rate of one."""
    match = re.fullmatch(r"\s*(\d+)\s*[x×]\s*(.+)", text)
    ports, rate = (int(match.group(1)), match.group(2)) if match else (1, text)
    if not 1 <= ports <= 64:
        raise InputError("--client-nic", "", f"the ports per client must be from 1 to 64. Got {ports} instead.")
    try:
        return ports, parse_quantity(rate.strip(), Metric.BANDWIDTH, what="--client-nic", positive=True)
    except UnitError as exc:
        raise InputError("--client-nic", "", str(exc)) from None


def _share(text: str) -> float:
    """A share such as 20% (or 0.2), from 0 up to below 100 %."""
    try:
        value = float(text[:-1]) / 100 if text.strip().endswith("%") else float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value < 1:
        raise ValueError(f"must be a share such as 20% (or 0.2), from 0 to below 100%. Got {text!r} instead.")
    return value


def _growth(text: str) -> float:
    """Growth per year: 30%/year (or 30%)."""
    share = text.strip().removesuffix("/year").removesuffix("/yr")
    try:
        value = float(share[:-1]) / 100 if share.endswith("%") else math.nan
    except ValueError:
        value = math.nan
    if not 0 < value <= 10:
        raise ValueError(f"must be a yearly growth such as 30%/year. Got {text!r} instead.")
    return value


def _oversubscription(text: str) -> float:
    """An oversubscription N:1 (or N), at least 1."""
    head, sep, tail = text.partition(":")
    try:
        value = float(head) / (float(tail) if sep else 1.0)
    except (ValueError, ZeroDivisionError):
        value = math.nan
    if not 1 <= value <= 64:
        raise ValueError(f"must be a ratio such as 3:1, from 1:1 (non-blocking) to 64:1. Got {text!r} instead.")
    return value


def _spares(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 16:
        raise ValueError(f"must be a whole number of spares from 0 to 16. Got {text!r} instead.")
    return value


def _rate(text: str):
    return parse_quantity(text, Metric.BANDWIDTH, what="the rate", positive=True)


def _target(text: str, args: argparse.Namespace) -> Target:
    """One --target OP=VALUE: a bandwidth or an operation rate, measured by the workload it implies."""
    from models.sizing import Target

    name, sep, value = text.partition("=")
    where = f"--target {text}"
    if name.strip() == "accelerators":
        return _accelerator_target(value, where, args)
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


def _accelerator_target(value: str, where: str, args: argparse.Namespace) -> Target:
    """accelerators=N:MODEL:ACCELERATOR[:AU]: the read bandwidth N accelerators demand at the AU (the workload's minimum
    by default), each one process reading a sample at a time, spread over the clients."""
    from models.accelerators import UnknownWorkloadError, entry, workload
    from models.sizing import Target

    fields = [f.strip() for f in value.split(":")]
    if len(fields) not in (3, 4) or not fields[0].isdigit() or int(fields[0]) < 1:
        raise InputError(where, "", "must look like accelerators=N:MODEL:ACCELERATOR[:AU], e.g. accelerators=512:unet3d:h100")
    count = int(fields[0])
    try:
        demand = entry(fields[1], fields[2], extra=args.accelerators_table)
        au = float(fields[3]) if len(fields) == 4 else demand.min_au
    except UnknownWorkloadError as exc:
        raise InputError(where, "", str(exc)) from None
    except ValueError:
        raise InputError(where, "", f"the AU must be a fraction such as 0.9. Got {fields[3]!r} instead.") from None
    if not 0 < au <= 1:
        raise InputError(where, "", f"the AU must be a fraction above 0 and at most 1 (0.9 for 90 %). Got {au!r} instead.")
    needed = (demand.per_accelerator * (count * au)).to("GB/s")
    return Target(workload(demand, count, args.clients), needed,
                  f"{count} {demand.accelerator} x {demand.model} at {au:.0%} AU")


def _header(question: Question, catalogue: Catalogue) -> str:
    return (f"Sized by iobound size: {_asked(question)}.\n"
            f"Parts from {', '.join(catalogue.files)}; prices in {catalogue.currency or 'no stated currency'}.")


def _asked(question: Question) -> str:
    parts = [str(t) for t in question.targets]
    if question.usable is not None:
        parts.append(f"usable {format_quantity(question.usable, unit=question.usable.units)} ({question.write_cost})")
    clients = question.clients
    nic = clients.capacity("nic").value
    ports = f"{clients.nics} x " if clients.nics > 1 else ""
    return f"{', '.join(parts)} for {clients.count} clients x {ports}{format_quantity(nic, unit=nic.units)}"


def _ratio(a, b) -> float:
    return canonical(a) / canonical(b)


def _money(amount: float | None, currency: str) -> str:
    return "not stated" if amount is None else f"{currency} {amount:,.0f}".strip()


def _spread(configuration: Configuration, currency: str) -> str:
    """`` (street prices USD low..high)`` where the parts' prices are ranges; nothing when every price is one figure."""
    low, high = configuration.total_range
    if low == high:
        return ""
    return f" (street prices {_money(low, currency)}..{high:,.0f})"


def _summary(configuration: Configuration) -> str:
    design, counts = configuration.design, configuration.counts
    pairs = " (HA pairs)" if configuration.question.step(design.server) == 2 else ""
    text = (f"{counts['storage']} x {design.server.name}{pairs} with {design.ports} x {design.network.name} each, "
            f"{counts['drives']} x {design.device.name}" + (f" + {configuration.spares} spares" if configuration.spares else ""))
    return text + (f", {counts['mds1']} x {design.metadata.name} as metadata servers" if design.metadata else "")


def _power(configuration: Configuration) -> tuple[Quantity, Quantity]:
    """Typical and maximum power of the whole bill (parts without a stated power count nothing)."""
    from probes.core.units import Q_

    typical = sum((line.power[0] * line.count for line in configuration.bill if line.power), Q_(0, "W"))
    most = sum((line.power[1] * line.count for line in configuration.bill if line.power), Q_(0, "W"))
    return typical.to("kW"), most.to("kW")


def _rack_units(configuration: Configuration) -> float:
    return math.fsum(line.rack_units * line.count for line in configuration.bill)


def _both(size: Quantity) -> str:
    """A capacity in decimal and binary units: TB and TiB differ by 10 %."""
    return f"{format_quantity(size, unit='TB')} ({format_quantity(size, unit='TiB')})"


def render(sizing: Sizing, catalogue: Catalogue, elapsed: float) -> str:
    question = sizing.question
    currency = catalogue.currency
    unpriced = catalogue.unpriced_by_file(catalogue.every)
    lines = [f"asked:     {_asked(question)}",
             f"parts:     {', '.join(catalogue.files)} (prices in {currency or 'no stated currency'}; "
             + (f"{len(unpriced)} parts not in {catalogue.prices_file} keep the catalogue's indicative prices)"
                if unpriced else "the bundled ones are indicative: give yours with --prices)"),
             f"searched:  {sizing.designs} designs (network x server x ports x device) in {elapsed:.2f} s"
             + (f"; {sizing.feasible} meet the targets, the others did not or cannot cost less than those shown"
                if sizing.configurations else ""),
             f"margin:    every target needs {question.margin:.0%} headroom (--margin); parts count at their sustained "
             "figures, ranges at their least"]
    if sizing.refused:
        unpriced = [g.name for g in catalogue.gateways if g.price is None and question.client_family in g.joins]
        lines.append(f"refused:   {', '.join(sizing.refused)}: not {question.client_family}, the clients' fabric "
                     + (f"(the gateways that would join the two have no price: {', '.join(unpriced)}; give them one "
                        "with --prices)" if unpriced else "(no gateway in the catalogue joins the two)"))
    if not question.redundant:
        lines.append("WARNING:   no redundancy asked for (--parity, --replicas): one drive or server failure loses data")
    if not sizing.configurations:
        lines += ["", "no allowed design meets the targets; what stops each (the best any design allows):"]
        lines += [f"  {s.target}: {s.layer} allow at most {s.target.shown(s.limit)} ({', '.join(map(str, s.components))})"
                  + (f": the target, but not its {question.margin:.0%} margin (--margin)"
                     if canonical(s.limit) >= canonical(s.target.required) * (1 - 1e-9) else "")
                  for s in sizing.shortfalls]
        if any(s.layer in ("requests in flight", "round trips") for s in sizing.shortfalls):
            lines.append("  (requests in flight and round trips grow with --ppn and --queue-depth)")
        return "\n".join(lines)
    best, *others = sizing.configurations
    headroom = ["headroom of every layer (its limit over the target):", _headroom(best, question), ""] \
        if question.targets else []
    lines += [f"workloads: {'; '.join(t.workload.describe() for t in question.targets) or 'none (capacity only)'}",
              "prices:    the bill below; the clients' NICs exist, their switch ports are bought", "",
              f"#1  {_money(best.total, currency)}{_spread(best, currency)}: {_summary(best)}", _targets(best, question), "",
              *_resilience(best), "", *_capacity(best), "", "bill of materials:", _bill_table(best, currency), "",
              *headroom, "closed forms (the counts each limit asks for; <- where it sets the count):"]
    lines += [f"  {b.formula} = ⌈{b.numbers}⌉ = {b.needed}{'  <-' if b.needed == best.counts[b.group] else ''}"
              f"   ({b.why})" for b in best.bounds]
    if len(sizing.alternatives) > 1:
        lines += ["", "the cheapest of each family:", _alternatives(sizing.alternatives, question, currency)]
    for rank, other in enumerate(others, start=2):
        binds = "; ".join(f"{t.workload.operation.value}: {', '.join(c.binding_layers)}"
                          for t, c in zip(question.targets, other.ceilings))
        lines += ["", f"#{rank}  {_money(other.total, currency)}: {_summary(other)}", f"    binds: {binds}"]
    return "\n".join(lines)


def _resilience(configuration: Configuration) -> list[str]:
    """Failure domains, what the design survives, spares and the rebuild time, with warnings."""
    from models.sizing import DAY

    q, design = configuration.question, configuration.design
    servers = configuration.counts["storage"]
    ha = q.step(design.server) == 2 or design.server.controllers == 2
    if not q.redundant:
        return ["failures:  none survived: without redundancy one failed drive loses data, one failed server stops "
                f"access to its share ({servers} enclosures, no parity, no replicas)"] + _network(configuration)
    lines = [f"failures:  {servers} enclosures (a server with its drives) are the failure domains; "
             f"{q.write_cost} needs at least {q.domains}; the data survives {configuration.survives} "
             f"enclosure failure{'s' if configuration.survives != 1 else ''}"
             + (", and a failed server of any HA pair (its partner takes over)" if q.step(design.server) == 2 else
                ", and a failed controller (two per part)" if design.server.controllers == 2 else
                "; a failed server takes its drives offline until it is back (--ha pairs them)")]
    rebuild = configuration.rebuild
    rate = "--rebuild-rate" if q.rebuild_rate else "the drive's sustained write, least"
    lines.append(f"spares:    {configuration.spares} hot spare drives ({q.spares} or more per enclosure); rebuilding "
                 f"one {format_quantity(design.device.capacity('size').value, unit='TB')} drive takes "
                 f"{rebuild.m_as('hour'):.1f} h at {format_quantity(q.rebuild_rate or design.device.capacity('bandwidth', 'write').ends[0])} ({rate})")
    if rebuild > DAY:
        lines.append("WARNING:   a rebuild takes over a day: a second failure meanwhile is likely enough to plan for "
                     "(declustered parity rebuilds from every drive; smaller drives rebuild sooner)")
    if not ha:
        lines.append("note:      no HA: a server failure stops access to its enclosure (ask --ha for pairs)")
    return lines + _failover(configuration) + _network(configuration)


def _failover(configuration: Configuration) -> list[str]:
    """Each target's ceiling while a partner serves a failed server's share, and whether the margin holds then."""
    q = configuration.question
    if not configuration.failover:
        return []
    shown = []
    for target, (least, most) in zip(q.targets, configuration.failover):
        span = target.shown(least.value) if canonical(least.value) >= canonical(most.value) * (1 - 1e-9) else \
            target.shown(least.value, most.value)
        short = ("below the target" if canonical(least.value) < canonical(target.required) * (1 - 1e-9) else
                 f"under its {q.margin:.0%} margin" if canonical(least.value) < q.need(target) * (1 - 1e-9) else "")
        shown.append(f"{target.workload.operation.value} {span}" + (f" (at least: {short})" if short else ""))
    return [f"failover:  one server of a pair (or one controller) down, its partner serving both shares: "
            f"{'; '.join(shown)} (least: the partner sets the pace of evenly spread I/O; most: the load rebalances)"]


def _network(configuration: Configuration) -> list[str]:
    fabric = configuration.fabric
    if fabric is None or (fabric.switch is None and fabric.gateway is None):
        return []
    return [f"network:   {fabric}" + (f"; the way to the clients carries at most {format_quantity(fabric.limit)} "
                                      f"({fabric.limited_by})" if fabric.limit is not None else "")]


def _capacity(configuration: Configuration) -> list[str]:
    """Raw to usable, each factor stated, in TB and TiB; and with --growth, when it runs out and the next step."""
    q = configuration.question
    data, parity = q.write_cost.parity or (1, 0)
    lines = [f"capacity:  raw {_both(configuration.raw)} x parity efficiency {1 / q.write_cost.space:.3g} "
             f"({q.write_cost}) x (1 - {q.fs_overhead:.0%} file-system overhead) x {q.fill:.0%} fill target "
             f"= usable {_both(configuration.usable)}"]
    if q.growth and q.usable is not None:
        ratio = _ratio(configuration.usable, q.usable)
        runs_out = math.log(ratio) / math.log(1 + q.growth) if ratio > 1 else 0.0
        needs = "; ".join(f"year {y}: {format_quantity(q.usable * (1 + q.growth) ** y, unit='TB')}"
                          for y in range(1, q.years + 1))
        servers, drives, adds, price = configuration.expansion()
        lines += [f"growth:    {q.growth:.0%}/year from {format_quantity(q.usable, unit='TB')}: {needs}",
                  f"           the design holds it for {runs_out:.1f} years; next step: +{servers} x "
                  f"{configuration.design.server.name} with {drives} x {configuration.design.device.name} "
                  f"(+{format_quantity(adds, unit='TB')} usable, {_money(price, q.currency)})"]
    return lines


def _bill_table(configuration: Configuration, currency: str) -> str:
    from assess.render import table

    rows = []
    for line in configuration.bill:
        typical, most = line.power or (None, None)
        rows.append((line.part, line.what, f"{line.count:,.6g}", _money(line.unit_price, currency),
                     _money(line.total, currency), f"{line.rack_units * line.count:g}" if line.rack_units else "-",
                     "-" if typical is None else f"{(typical * line.count).m_as('W'):,.0f} / {(most * line.count).m_as('W'):,.0f}",
                     line.source))
    typical, most = _power(configuration)
    software = math.fsum(line.total or 0.0 for line in configuration.bill if not line.hardware)
    rows.append(("total", "hardware", "", "", _money(configuration.total, currency), f"{_rack_units(configuration):g}",
                 f"{typical.m_as('W'):,.0f} / {most.m_as('W'):,.0f}",
                 f"cooling {most.to(BTU_PER_HOUR).magnitude:,.0f} BTU/h at most"))
    low, high = configuration.total_range
    if low != high:
        rows.append(("", "street prices", "", "", f"{_money(low, currency)}..{high:,.0f}", "", "",
                     "every part at the low, then the high end of its price range"))
    if software:
        rows.append(("total", "with software and support", "", "", _money(configuration.total + software, currency), "", "", ""))
    return table(("part", "what", "count", "each", "total", "rack units", "power W (typ / max)", "price source"), rows,
                 right=(2, 3, 4, 5, 6))


def _alternatives(alternatives: tuple[Configuration, ...], question: Question, currency: str) -> str:
    from assess.render import table

    rows = []
    for c in alternatives:
        typical, most = _power(c)
        rows.append((c.design.family, _money(c.total, currency),
                     *(t.shown(ceiling.value) for t, ceiling in zip(question.targets, c.ceilings)),
                     format_quantity(c.usable, unit="TB"), f"{typical.m_as('kW'):.1f} / {most.m_as('kW'):.1f}",
                     f"{_rack_units(c):g}", _summary(c)))
    return table(("family", "price", *(t.workload.operation.value for t in question.targets), "usable", "kW typ / max",
                  "RU", "parts"), rows, right=tuple(range(1, len(question.targets) + 5)))


def write_bom(configuration: Configuration, currency: str, path: str) -> None:
    """The bill of materials as CSV a spreadsheet opens: one line per part, then the totals; a new file only."""
    try:
        with open(path, "x", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["part", "what", "count", "unit price", "total", "currency", "rack units", "power typical W",
                             "power max W", "source", "total low", "total high"])
            for line in configuration.bill:
                typical, most = line.power or (None, None)
                writer.writerow([line.part, line.what, f"{line.count:g}", _cell(line.unit_price), _cell(line.total),
                                 currency, f"{line.rack_units * line.count:g}",
                                 "" if typical is None else f"{(typical * line.count).m_as('W'):g}",
                                 "" if most is None else f"{(most * line.count).m_as('W'):g}", line.source,
                                 *map(_cell, line.total_range)])
            typical, most = _power(configuration)
            writer.writerow(["total", "hardware", "", "", _cell(configuration.total), currency,
                             f"{_rack_units(configuration):g}", f"{typical.m_as('W'):g}", f"{most.m_as('W'):g}",
                             "sum of the lines above that are hardware", *map(_cell, configuration.total_range)])
    except FileExistsError:
        raise InputError(path, "", "exists already; give a new file name (nothing was overwritten)") from None
    except OSError as exc:
        raise InputError(path, "", f"cannot be written: {exc.strerror}") from None


def _cell(amount: float | None) -> str:
    return "" if amount is None else f"{amount:.2f}"


def _targets(configuration: Configuration, question: Question) -> str:
    """Each target beside its prediction in the same unit, the margin it needs, and the headroom it has."""
    from assess.render import table
    from probes.core.units import display_unit

    rows = []
    for t, c in zip(question.targets, configuration.ceilings):
        shown = t.shown(c.value)
        same = Metric.of(t.value) is Metric.of(c.value)
        unit = display_unit(c.value) if same else None
        target = format_quantity(t.value, unit=unit) if same else format_quantity(t.value, unit=t.value.units)
        headroom = _ratio(c.value, t.required) - 1
        rows.append((f"{t.label}: {t.workload.operation.value}" if t.label else t.workload.operation.value, target, shown,
                     f"{headroom:+.1%}", "yes" if headroom >= question.margin * (1 - 1e-9) else "NO",
                     ", ".join(c.binding_layers), ", ".join(map(str, c.binding))))
    if question.usable is not None:
        rows.append(("usable", format_quantity(question.usable, unit=question.usable.units),
                     format_quantity(configuration.usable, unit=question.usable.units),
                     f"{_ratio(configuration.usable, question.usable) - 1:+.1%}", "-", "drives' size", "drives.size"))
    return table(("target", "asked", "predicted", "headroom", f"≥ {question.margin:.0%}", "binding layer", "components"),
                 rows, right=(1, 2, 3))


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

    def figures(p) -> str:
        shown = []
        for key, c in p.capacities.items():
            if c.value is None:
                continue
            figure = f"{format_quantity(c.ends[0])}..{format_quantity(c.ends[1])}" if c.range else format_quantity(c.value)
            peak = p.peaks.get(key) or next((v for k, v in p.peaks.items() if k.endswith(key)), None)
            shown.append(f"{key} {figure}" + (f" (peak {format_quantity(peak.value)})" if peak is not None else ""))
        return "; ".join(shown)

    blocks = [f"catalogue: {', '.join(catalogue.files)} (prices in {catalogue.currency or 'no stated currency'})"]
    for title, parts in (("networks", catalogue.of_kind(Kind.NETWORK)), ("servers", catalogue.of_kind(Kind.SERVER)),
                         ("devices", catalogue.of_kind(Kind.DEVICE)), ("switches", catalogue.switches),
                         ("gateways", catalogue.gateways)):
        rows = [(p.name, "-" if p.price is None else f"{p.price:,.0f}", figures(p)
                 + (f"; {p.slots} x {p.slot} bays, {p.nic_slots} NIC ports" if p.slots else f"; {p.slot}" if p.slot else "")
                 + (f"; {p.ports} port{'s' if p.ports != 1 else ''}" + (" a side" if p.joins else "") if p.ports else "")
                 + (f"; {p.family}" if p.family else "") + (f"; joins {' and '.join(p.joins)}" if p.joins else ""),
                 p.published or "-", p.price_observed or "not observed") for p in parts]
        blocks += ["", table((title, "price", "figures (sustained, data-sheet peak beside)", "published", "price seen"),
                             rows, right=(1,))]
    return "\n".join(blocks + ["", "sources: each part's source, sustained.source and price_source in the catalogue file"])


def _document(sizing: Sizing, catalogue: Catalogue) -> dict:
    question = sizing.question

    def watts(q) -> dict:
        return {"value": q.m_as("W"), "unit": "W"}

    def configuration(c: Configuration) -> dict:
        typical, most = _power(c)
        return {
            "price": c.total,
            "total": c.total,
            "total_range": list(c.total_range),
            "family": c.design.family,
            "counts": c.counts,
            "spares": c.spares,
            "parts": {"network": c.design.network.name, "ports_per_server": c.design.ports, "server": c.design.server.name,
                      "device": c.design.device.name,
                      "metadata_server": c.design.metadata.name if c.design.metadata else None},
            "usable": quantity_json(c.usable),
            "capacity": {"raw": quantity_json(c.raw), "parity_efficiency": 1 / question.write_cost.space,
                         "fs_overhead": question.fs_overhead, "fill": question.fill, "usable": quantity_json(c.usable)},
            "survives": c.survives,
            "rebuild": {"value": c.rebuild.m_as("s"), "unit": "s"},
            "fabric": None if c.fabric is None or (c.fabric.switch is None and c.fabric.gateway is None) else {
                "switch": c.fabric.switch and c.fabric.switch.name, "ports": c.fabric.ports, "leaves": c.fabric.leaves,
                "spines": c.fabric.spines, "oversubscription": c.fabric.oversubscription,
                "limit": quantity_json(c.fabric.limit),
                "gateway": c.fabric.gateway and c.fabric.gateway.name, "gateways": c.fabric.gateways},
            "bill": [{"part": line.part, "what": line.what, "count": line.count, "unit_price": line.unit_price,
                      "unit_price_range": line.unit_range and list(line.unit_range),
                      "total": line.total, "source": line.source, "hardware": line.hardware,
                      "rack_units": line.rack_units * line.count,
                      "power_typical": None if line.power is None else watts(line.power[0] * line.count),
                      "power_max": None if line.power is None else watts(line.power[1] * line.count)} for line in c.bill],
            "totals": {"rack_units": _rack_units(c), "power_typical": watts(typical), "power_max": watts(most),
                       "cooling": {"value": most.to(BTU_PER_HOUR).magnitude, "unit": BTU_PER_HOUR}},
            "ceilings": [ceiling.to_dict() for ceiling in c.ceilings],
            "failover": [{"least": least.to_dict(), "most": most.to_dict()} for least, most in c.failover],
            "bounds": [{"group": b.group, "needed": b.needed, "formula": b.formula, "numbers": b.numbers, "why": b.why}
                       for b in c.bounds],
            "topology": c.topology.to_dict(),
        }
    return {
        "catalogue": list(catalogue.files),
        "currency": catalogue.currency,
        "prices_not_from_file": list(catalogue.unpriced_by_file(catalogue.every)),
        "targets": [{"workload": t.workload.to_dict(), "target": quantity_json(t.value),
                     "required": quantity_json(t.required),
                     "needed": quantity_json(t.required * (1 + question.margin))} for t in question.targets],
        "usable": quantity_json(question.usable),
        "redundancy": str(question.write_cost),
        "policy": {"margin": question.margin, "ha": question.ha, "spares": question.spares,
                   "fs_overhead": question.fs_overhead, "fill": question.fill,
                   "oversubscription": question.oversubscription, "client_family": question.client_family},
        "refused": list(sizing.refused),
        "designs": sizing.designs,
        "solved": sizing.feasible,
        "configurations": [configuration(c) for c in sizing.configurations],
        "alternatives": [{"family": c.design.family, "price": c.total, "counts": c.counts,
                          "server": c.design.server.name, "device": c.design.device.name,
                          "network": c.design.network.name} for c in sizing.alternatives],
        "shortfalls": [{"target": str(s.target), "layer": s.layer, "limit": quantity_json(s.limit),
                        "components": [str(c) for c in s.components]} for s in sizing.shortfalls],
    }
