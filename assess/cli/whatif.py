"""What if a part changed: the ceilings before and after --set changes, and which single upgrade helps most per price.

--set GROUP.KEY=VALUE changes one key of a group (GROUP a group's name, or clients,
networks, servers, devices for every group of that kind); setting nic replaces read_nic
and write_nic too. The upgrade table adds one member to each network, server and device
group in turn (of the topology after the changes) and ranks them by gain per price.
Examples:
  iobound whatif lecture --set clients.nic=1250MB/s --op read --transfer-size 1MiB
  iobound whatif lecture --set compute.nic=25Gbit/s --set ssd.count=10 --op read,write --transfer-size 1MiB
  iobound whatif lecture --op write --transfer-size 64KiB --direct
  iobound whatif narval --model unet3d --accelerator h100     (how many more GPUs per added server?)
  iobound whatif sized.toml --set drives.bandwidth=150MB/s --target read=40GiB/s --transfer-size 1MiB
      (how many more of each part bring the read back to 40 GiB/s, and what it costs)
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Q_, format_quantity
from assess.cli.inputs import edited_topology, operation_arg
from assess.cli.workloads import (TRAINING_OPTIONS, add_modelled_system, add_training_arguments, refuse_unused,
                                  workloads_of)

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from models.ceiling import Ceiling
    from models.accelerators import Feeding
    from models.upgrades import MoreAccelerators, Ranking, Upgrade
    from topologies.edit import Change
    from topologies.topology import Topology


def configure(parser: argparse.ArgumentParser) -> None:
    add_modelled_system(parser)
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")
    parser.add_argument("--target", metavar="OP=VALUE", help="how many more members of each group restore this target "
                        "(after the --set changes), e.g. read=40GiB/s; with its price and capacity before and after")
    add_training_arguments(parser)


def execute(args: argparse.Namespace) -> int:
    if args.model or args.accelerator:
        return _accelerators(args)
    if args.target:
        return _restore(args)
    if args.op is None:
        raise InputError("--op", "", "give the operation (--op read, write ...), or --model and --accelerator to ask "
                         "how many more accelerators each upgrade feeds")
    from assess.render import dumps, envelope
    from topologies.bundled import open_topology
    from topologies.edit import apply_changes, parse_change, targets
    from models.predict import Model
    from models.upgrades import WHATIF_VERSION, upgrades, whatif_body

    topology = open_topology(args.topology)
    changes = tuple(parse_change(text) for text in args.changes)
    changed = apply_changes(topology, changes) if changes else topology
    workloads, clients = workloads_of(args, topology)
    model = Model(topology)
    before = model.ceilings((w, clients) for w in workloads)
    # Without --nodes each side runs on all of its client group, so a changed count is seen.
    rankings = upgrades(changed, workloads_of(args, changed)[0], clients)
    edited = [(change, tuple(g.name for g in targets(topology, change))) for change in changes]
    if args.json:
        print(dumps(envelope("whatif", WHATIF_VERSION, whatif_body(topology, changed, edited, before, rankings))))
        return 0
    print(render(topology, edited, before, rankings, changed.currency))
    return 0


def render(topology: Topology, edited: list[tuple[Change, tuple[str, ...]]], before: list[Ceiling],
           rankings: tuple[Ranking, ...], currency: str) -> str:
    """The changes, the ceilings before and after, and per workload the upgrades ranked, as people read them."""
    shown = [f"{change.text} ({', '.join(groups)})" for change, groups in edited] or ["none: the topology as it is"]
    lines = [f"system:    {topology.name} ({topology.path})", f"changes:   {shown[0]}", *(f"           {s}" for s in shown[1:]),
             "", _ceilings(before, [r.ceiling for r in rankings], bool(edited))]
    for ranking in rankings:
        ceiling = ranking.ceiling
        lines += ["", f"one more member, {ceiling.workload.describe()} (ceiling {format_quantity(ceiling.value)}):",
                  _upgrades(ranking.upgrades, currency)]
    return "\n".join(lines)


def _ceilings(before: list[Ceiling], after: list[Ceiling], changed: bool) -> str:
    """One row per workload: the ceiling and what binds it, before and after when something changed."""
    from assess.render import table

    if not changed:
        rows = [(c.workload.describe(), format_quantity(c.value), ", ".join(c.binding_layers)) for c in before]
        return table(("workload", "ceiling", "bound by"), rows, right=(1,))
    rows = [(_workload(b, a), format_quantity(b.value), format_quantity(a.value), f"{(a.value / b.value).m_as('') - 1:+.1%}",
             f"{', '.join(b.binding_layers)} -> {', '.join(a.binding_layers)}") for b, a in zip(before, after)]
    return table(("workload", "before", "after", "change", "bound by (before -> after)"), rows, right=(1, 2, 3))


def _workload(before: Ceiling, after: Ceiling) -> str:
    """The workload of a row; both when a changed client count changed how many nodes run it."""
    shown = before.workload.describe()
    return shown if after.workload == before.workload else f"{shown} (after: {after.workload.describe()})"


def _upgrades(options: tuple[Upgrade, ...], currency: str) -> str:
    """The upgrades of one workload, best first; gain per 1,000 of the currency (per unit of price without one)."""
    from assess.render import table

    scale, per = (1000, f"1,000 {currency}") if currency else (1, "unit of price")
    rows = []
    for u in options:
        metric = u.ceiling.metric
        per_price = u.per_price
        rate = "-" if per_price is None else "free" if per_price == float("inf") else \
            format_quantity(Q_(per_price * scale, metric.unit), metric)
        price = "not stated" if u.price is None else f"{u.price:,g} {currency}".rstrip()
        rows.append((f"{u.group} ({u.kind.singular})", price, format_quantity(u.gain, metric), rate,
                     format_quantity(u.ceiling.value, metric)))
    return table(("group", "price (+1 member)", "gain", f"gain per {per}", "new ceiling"), rows, right=(1, 2, 3, 4))


def _accelerators(args: argparse.Namespace) -> int:
    """How many accelerators the system feeds, and how many more one more member of each group feeds."""
    from assess.render import dumps, envelope
    from models.accelerators import entry
    from models.upgrades import WHATIF_ACCELERATORS_VERSION, accelerator_upgrades, accelerators_body

    if not (args.model and args.accelerator):
        raise InputError("--model", "", "give both the training workload and its accelerator: --model unet3d --accelerator h100")
    refuse_unused(args, "whatif", "--model and --accelerator", TRAINING_OPTIONS, what="workload or target")
    topology = edited_topology(args)
    demand = entry(args.model, args.accelerator, extra=args.accelerators_table)
    clients = tuple(args.clients) if args.clients else None
    before, options = accelerator_upgrades(topology, demand, au=args.au, read_threads=args.read_threads, clients=clients)
    if args.json:
        print(dumps(envelope("whatif-accelerators", WHATIF_ACCELERATORS_VERSION, accelerators_body(topology, before, options))))
        return 0
    print(render_accelerators(topology, before, options, topology.currency))
    return 0


def _fed(least: int, most: int) -> str:
    return str(most) if least == most else f"{least} to {most}"


def render_accelerators(topology: Topology, before: Feeding, options: tuple[MoreAccelerators, ...], currency: str) -> str:
    """The accelerators fed now, and per group the accelerators one more member adds, as people read them."""
    from assess.render import table

    d = before.demand
    rows = []
    for o in options:
        least, most = o.gain(before)
        price = "not stated" if o.price is None else f"{o.price:,g} {currency}".rstrip()
        rows.append((f"{o.group} ({o.kind.singular})", price, f"+{most}" if least == most else f"+{least} to +{most}", _fed(o.after.least, o.after.most),
                     o.after.binds()))
    return "\n".join([
        f"system:    {topology.name} ({topology.path})",
        f"workload:  {d.model} on {d.accelerator} at {before.au:.0%} AU: {format_quantity(before.per_accelerator.to('GB/s'))} "
        "per accelerator",
        f"fed now:   {_fed(before.least, before.most)} accelerators; what stops one more: {before.binds()}", "",
        "one more member of each group:",
        table(("group", "price (+1 member)", "accelerators gained", "fed after", "then stopped by"), rows, right=(1, 2, 3))])


def _restore(args: argparse.Namespace) -> int:
    """How many more members of each group bring a target back, after the --set changes."""
    from probes.core.units import Metric, UnitError, parse_quantity
    from models.upgrades import restorations

    name, sep, value = args.target.partition("=")
    where = f"--target {args.target}"
    if args.json:
        raise InputError(where, "", "prints text only for now; leave out --json")
    try:
        operation = operation_arg(name.strip())
        quantity = parse_quantity(value.strip(), what="the target", positive=True) if sep else None
    except (argparse.ArgumentTypeError, UnitError) as exc:
        raise InputError(where, "", f"must look like OP=VALUE, e.g. read=40GiB/s: {exc}") from None
    if quantity is None or Metric.of(quantity) not in (Metric.BANDWIDTH, Metric.OPERATION_RATE):
        raise InputError(where, "", "must look like OP=VALUE with a bandwidth or an operation rate, e.g. read=40GiB/s")
    if args.op and args.op != [operation]:
        raise InputError(where, "", f"names {operation.value}; leave out --op or give the same")
    args.op = [operation]
    topology = edited_topology(args)
    workloads, clients = workloads_of(args, topology)
    if len(workloads) != 1:
        raise InputError(where, "", "restores one workload: give one --transfer-size, --nodes, --ppn and --queue-depth")
    (workload,) = workloads
    if Metric.of(quantity) is Metric.OPERATION_RATE and not operation.is_metadata:
        from probes.core.units import Q_, canonical

        quantity = Q_(canonical(quantity) * canonical(workload.transfer_size), "B/s")  # IOPS x transfer size
    before, found = restorations(topology, workload, quantity, clients)
    print(render_restorations(topology, args.target, before, found, topology.currency))
    return 0


def render_restorations(topology: Topology, target: str, before: Ceiling, found, currency: str) -> str:
    """Per group: how many more restore the target, the ceiling then, and the price and raw capacity before and after."""
    from assess.render import table

    def money(amount) -> str:
        return "not stated" if amount is None else f"{amount:,.0f} {currency}".rstrip()

    def size(q) -> str:
        return "-" if q is None else format_quantity(q, unit="TB")

    rows = [(f"{r.group} ({r.kind.singular})", "no count does" if r.added is None else f"+{r.added:,}",
             "-" if r.ceiling is None else format_quantity(r.ceiling.value),
             "-" if r.ceiling is None else r.ceiling.binds,
             f"{money(r.price[0])} -> {money(r.price[1])}" if r.added is not None else money(r.price[0]),
             f"{size(r.capacity[0])} -> {size(r.capacity[1])}" if r.added is not None else size(r.capacity[0]))
            for r in found]
    return "\n".join([
        f"system:    {topology.name} ({topology.path})",
        f"target:    {target}; now {format_quantity(before.value)}, bound by {before.binds}", "",
        "members added to one group to reach it (the others as they are):",
        table(("group", "added", "ceiling then", "bound by then", "price before -> after", "raw capacity before -> after"),
              rows, right=(1, 2)),
        "", "bays and power: a topology file states neither, so more drives may need more enclosures; iobound size "
            "counts both in its bill of materials"])
