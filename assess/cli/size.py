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
  iobound size --clients 16 --client-nic 400Gbit/s --target checkpoint=llama3-70b:60s
  iobound size --clients 64 --client-nic 2x200Gbit/s --target read=100GB/s --devices nvme-gen5-7.68tb --ha --bom gpu.csv
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from probes.core.errors import InputError, UnitError
from probes.core.units import Q_, Metric, format_quantity, parse_quantity
from probes.core.workload import MOST_COUNT, Access, Operation, Workload
from assess.cli.job import JOB_HELP, job_defaults
from assess.cli.inputs import (add_input_limit, count_arg, growth_arg, list_arg, operation_arg, ports_arg, rate_arg,
                               ratio_arg, share_arg, size_arg, spares_arg, transfer_arg)
from assess.cli.status import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from models.sizing import Question, Target
    from topologies.catalogues.catalogue import Catalogue


# The years of growth shown where --growth is given without --years (None by default: --years alone is refused).
YEARS = 3


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list", action="store_true", help="list the catalogue's parts and stop")
    parser.add_argument("--clients", type=count_arg, metavar="N", help="client nodes that exist")
    parser.add_argument("--client-nic", type=ports_arg, metavar="[Nx]RATE", help="each client's NIC ports, e.g. 25Gbit/s or 2x200Gbit/s")
    parser.add_argument("--client-fabric", choices=("ethernet", "infiniband"), default="ethernet",
                        help="the clients' network (default ethernet); networks of another are reached through the "
                        "catalogue's gateways, or refused where none joins the two")
    parser.add_argument("--target", action="append", default=[], metavar="OP=VALUE",
                        help="e.g. write=20GiB/s, read=1000000op/s (IOPS), create=200000op/s, or "
                             "accelerators=N:MODEL:ACCELERATOR[:AU] (MLPerf Storage training, e.g. "
                             "accelerators=512:unet3d:h100), or checkpoint=MODEL|SIZE:TIME[:RANKS] (a save and a restore "
                             "each within TIME, e.g. checkpoint=llama3-70b:60s) (repeatable)")
    parser.add_argument("--accelerators-table", metavar="FILE",
                        help="your own [model.accelerator] entries for accelerator targets (form of models/accelerators.toml)")
    parser.add_argument("--usable", type=size_arg, metavar="SIZE", help="usable capacity after redundancy, e.g. 2PB")
    parser.add_argument("--replicas", type=int, default=1, metavar="N", help="copies of each byte (default 1)")
    parser.add_argument("--parity", metavar="K+M", help="data + parity strips, e.g. 8+2")
    parser.add_argument("--write-amplification", type=float, default=1.0, metavar="X",
                        help="other bytes written per byte (journaling; default 1)")
    parser.add_argument("--margin", type=share_arg, default="20%", metavar="PCT",
                        help="headroom every target needs above it (default 20%%)")
    parser.add_argument("--ha", action="store_true", help="servers in HA pairs (a dual-controller part is one by itself)")
    parser.add_argument("--spares", type=spares_arg, metavar="N",
                        help="hot spare drives per enclosure (default 1 with redundancy, 0 without)")
    parser.add_argument("--fs-overhead", type=share_arg, default="5%", metavar="PCT",
                        help="capacity the file system keeps for itself (default 5%%)")
    parser.add_argument("--fill", type=share_arg, default="80%", metavar="PCT",
                        help="how full the file system may run (default 80%%)")
    parser.add_argument("--rebuild-rate", type=rate_arg, metavar="RATE",
                        help="how fast a failed drive is rebuilt (default: the drive's sustained write)")
    parser.add_argument("--oversubscription", type=ratio_arg, default="1:1", metavar="N:1",
                        help="leaf downlinks over uplinks (default 1:1, non-blocking)")
    parser.add_argument("--growth", type=growth_arg, metavar="PCT/year", help="data growth, e.g. 30%%/year")
    parser.add_argument("--years", type=count_arg, metavar="N", help=f"years of growth to show (default {YEARS})")
    parser.add_argument("--bom", metavar="FILE", help="write the cheapest configuration's bill of materials as CSV (a new file)")
    for kind in ("networks", "servers", "devices", "metadata-servers"):
        parser.add_argument(f"--{kind}", type=list_arg(str), metavar="NAME[,NAME]",
                            help=f"allowed {kind.replace('-', ' ')} (default: all of the catalogue)")
    parser.add_argument("--catalogue", action="append", default=[], metavar="FILE",
                        help="your own parts (same form as the bundled catalogue; replaces parts of the same name)")
    parser.add_argument("--prices", metavar="FILE", help="your prices: [kind.name] tables with price (and currency), "
                        "and [lines.NAME] software or support priced per TB, server or node")
    add_input_limit(parser)
    parser.add_argument("--transfer-size", type=transfer_arg, default="1MiB", metavar="SIZE",
                        help="request size of the bandwidth targets, sequential (default 1MiB)")
    parser.add_argument("--iops-size", type=transfer_arg, default="4KiB", metavar="SIZE",
                        help="request size of IOPS targets, random (default 4KiB)")
    parser.add_argument("--ppn", type=count_arg, metavar="N", help=f"processes per client node (default 1; {JOB_HELP})")
    parser.add_argument("--queue-depth", type=count_arg, default=1, metavar="N", help="requests in flight per process (default 1)")
    parser.add_argument("--top", type=count_arg, default=5, metavar="K", help="configurations to show (default 5)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the cheapest configuration as a topology file (a new file)")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope
    from assess.sizing import header, render, render_catalogue, write_bom
    from topologies.catalogues.catalogue import load_catalogue
    from probes.core.outputs import check_new
    from topologies.save import save_topology
    from models.sizing import SIZING_VERSION, size

    if args.ppn is None:
        job_defaults(args, nodes=False)
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
    group, count = max(sizing.configurations[0].counts.items(), key=lambda kv: kv[1]) if sizing.configurations else ("", 0)
    if count > MOST_COUNT:  # a topology could not hold the answer, nor a site build it
        raise InputError("--usable" if question.usable is not None else "--target", "", f"the cheapest design needs "
                         f"{count:,} of {group}, more than the {MOST_COUNT:,} members a group of a topology holds: ask less")
    if args.output and sizing.configurations:
        save_topology(sizing.configurations[0].topology, args.output, header=header(question, catalogue))
    if args.bom and sizing.configurations:
        write_bom(sizing.configurations[0], catalogue, args.bom)
    if args.json:
        print(dumps(envelope("sizing", SIZING_VERSION, sizing.to_dict())))
    else:
        print(render(sizing, catalogue, elapsed))
        for path, what in ((args.output, "the cheapest configuration"), (args.bom, "its bill of materials")):
            if path and sizing.configurations:
                print(f"\nwrote {what} to {path}")
    return EXIT_OK if sizing.configurations else EXIT_FINDINGS


def _question(args: argparse.Namespace, catalogue: Catalogue) -> Question:
    """The sizing question of the command line; each mistake is named by its option."""
    from topologies.write_cost import parse_write_cost
    from topologies.topology import Capacity, Group, Kind, Source
    from models.sizing import Question

    if args.clients is None or args.client_nic is None:
        raise InputError("--clients", "", "give the clients that exist: --clients N --client-nic RATE (e.g. 25Gbit/s)")
    if not args.target and args.usable is None:
        raise InputError("--target", "", "give at least one target (e.g. --target read=40GiB/s) or --usable")
    if args.growth and args.usable is None:
        raise InputError("--growth", "", "grows the usable capacity: give it with --usable (e.g. --usable 2PB)")
    if args.years is not None and not args.growth:
        raise InputError("--years", "", "counts years of growth: give it with --growth (e.g. --growth 30%/year)")
    ports, nic = args.client_nic
    clients = Group("compute", Kind.CLIENT, args.clients,
                    {"nic": Capacity(nic, Metric.BANDWIDTH, Source("assumption", "iobound size --client-nic"))}, nics=ports)
    cost = {"replicas": args.replicas, "write_amplification": args.write_amplification}
    write_cost = parse_write_cost(cost | ({"parity": args.parity} if args.parity else {}), "--replicas/--parity", "redundancy")
    targets = tuple(t for text in args.target for t in (_checkpoint_targets(text.partition("=")[2], text, args)
                    if text.partition("=")[0].strip() == "checkpoint" else (_target(text, args),)))
    kinds = [(t.workload.operation, Metric.of(t.value)) for t in targets]
    if len(set(kinds)) < len(kinds):
        raise InputError("--target", "", "one target per operation and kind (bandwidth, IOPS); one is named twice")

    def allowed(kind: Kind, names: list[str] | None) -> tuple:
        return catalogue.of_kind(kind) if names is None else tuple(catalogue.part(kind, n) for n in dict.fromkeys(names))

    servers = allowed(Kind.SERVER, args.metadata_servers)
    redundant = write_cost.replicas > 1 or bool(write_cost.parity and write_cost.parity[1])
    if args.fill == 0:
        raise InputError("--fill", "", "a file system filled to 0% holds nothing; give the share it may fill, e.g. 80%")
    return Question(targets, clients, allowed(Kind.NETWORK, args.networks), allowed(Kind.SERVER, args.servers),
                    allowed(Kind.DEVICE, args.devices), tuple(p for p in servers if any(
                        k.endswith("metadata") for k in p.capacities)) if args.metadata_servers is None else servers,
                    args.usable, write_cost, catalogue.currency, margin=args.margin, ha=args.ha,
                    spares=int(redundant) if args.spares is None else args.spares, whole_enclosures=True,
                    fs_overhead=args.fs_overhead, fill=args.fill, client_family=args.client_fabric,
                    oversubscription=args.oversubscription, rebuild_rate=args.rebuild_rate, growth=args.growth or 0.0,
                    years=(args.years or YEARS) if args.growth else 0, catalogue=catalogue)


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


def _checkpoint_targets(value: str, where: str, args: argparse.Namespace) -> tuple[Target, Target]:
    """checkpoint=MODEL|SIZE:TIME[:RANKS]: a save (write) and a restore (read) of the checkpoint each within TIME,
    its ranks (a model's closed count by default) spread over the clients, writing and reading in large requests;
    the save's says how fast each client must generate the tensors, the restore's the memory each then holds."""
    from models.checkpoints import MODELS, LLM, llm, memory
    from models.sizing import Target

    fields = [f.strip() for f in value.split(":")]
    if len(fields) not in (2, 3) or (len(fields) == 3 and not (fields[2].isdigit() and int(fields[2]) >= 1)):
        raise InputError(f"--target {where}", "", "must look like checkpoint=MODEL|SIZE:TIME[:RANKS], RANKS at least "
                         "1, e.g. checkpoint=llama3-70b:60s or checkpoint=1TiB:30s:64")
    found = llm(fields[0]) if fields[0].lower().replace("_", "-") in MODELS else None
    try:
        size = found.size if found else parse_quantity(fields[0], Metric.SIZE, what="the checkpoint", positive=True)
    except UnitError as exc:
        raise InputError(f"--target {where}", "", f"{exc} (or a model: {', '.join(MODELS)})") from None
    try:
        within = parse_quantity(fields[1], Metric.LATENCY, what="the time", positive=True)
    except UnitError as exc:
        raise InputError(f"--target {where}", "", str(exc)) from None
    ranks = int(fields[2]) if len(fields) == 3 else found.ranks if isinstance(found, LLM) else args.clients
    try:
        shares = found.shares(ranks) if found else (int(size.m_as("B") / ranks),) * ranks
    except ValueError as exc:
        raise InputError(f"--target {where}", "", str(exc)) from None
    size = Q_(sum(shares), "B") if found else size  # a model's over the ranks asked, as predict --checkpoint takes it
    nodes = max(1, min(ranks, args.clients))
    rate = (size / within).to("GB/s")
    name = found.name if found else format_quantity(size)
    held = memory(shares, nodes)
    labels = (f"{name} checkpoint saved in {format_quantity(within)}, each client generating "
              f"{format_quantity(rate / nodes, unit='GB/s')}",
              f"{name} checkpoint restored in {format_quantity(within)}, each client holding "
              f"{format_quantity(held.restore)}")
    return tuple(Target(Workload(op, args.transfer_size, nodes=nodes, ppn=-(-ranks // nodes), data_set=size), rate,
                        label) for op, label in zip((Operation.WRITE, Operation.READ), labels))
