"""What if a part changed: the ceilings before and after --set changes, and which single upgrade helps most per price.

--set GROUP.KEY=VALUE changes one key of a group (GROUP a group's name, or clients,
networks, servers, devices for every group of that kind); setting nic replaces read_nic
and write_nic too. The upgrade table adds one member to each network, server and device
group in turn (of the topology after the changes) and ranks them by gain per price.
Examples:
  iobound whatif lecture --set clients.nic=1250MB/s --op read --transfer-size 1MiB
  iobound whatif lecture --set compute.nic=25Gbit/s --set ssd.count=10 --op read,write --transfer-size 1MiB
  iobound whatif lecture --op write --transfer-size 64KiB --direct
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from probes.core.units import Q_, format_quantity
from assess.cli.inputs import add_input_limit, add_set_argument
from assess.cli.workloads import add_workload_arguments, workloads_of

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from models.ceiling import Ceiling
    from models.upgrades import Ranking, Upgrade
    from topologies.edit import Change
    from topologies.topology import Topology


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topology", metavar="TOPOLOGY", help="topology file (TOML) or a bundled example name, e.g. lecture")
    add_set_argument(parser)
    add_input_limit(parser)
    add_workload_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def execute(args: argparse.Namespace) -> int:
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
    before = [model.ceiling(w, clients) for w in workloads]
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
