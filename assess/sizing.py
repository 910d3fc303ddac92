"""A sizing answer as people read it: the text ``iobound size`` prints (the cheapest configuration with its targets,
failures, capacity, bill and closed forms; the others and the cheapest of each family), the bill of materials as CSV
a spreadsheet opens, and the parts catalogue."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import probes
from probes.core.outputs import SPREADSHEET_BOM, csv_text, write_new
from probes.core.units import Metric, canonical, display_unit, format_quantity
from assess.render import table
from models.sizing import DAY, Configuration, Question, Sizing
from topologies.catalogues.catalogue import BUNDLED
from topologies.topology import Kind

if TYPE_CHECKING:
    from pint import Quantity

    from topologies.catalogues.catalogue import Catalogue

__all__ = ["render", "render_catalogue", "write_bom", "header"]


def header(question: Question, catalogue: Catalogue) -> str:
    """What a sized topology file says of itself: the question it answers and where its parts come from."""
    return (f"Sized by iobound size: {_asked(question)}.\n"
            f"Parts from {_parts(catalogue)}; prices in {catalogue.currency or 'no stated currency'}.")


def _parts(catalogue: Catalogue) -> str:
    """The files the parts come from: the bundled catalogue by its name (not where it is installed), the user's as
    given."""
    return ", ".join(f"the catalogue bundled with iobound {probes.__version__}" if file == str(BUNDLED) else file
                     for file in catalogue.files)


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


def _both(size: Quantity) -> str:
    """A capacity in decimal and binary units: TB and TiB differ by 10 %."""
    return f"{format_quantity(size, unit='TB')} ({format_quantity(size, unit='TiB')})"


def render(sizing: Sizing, catalogue: Catalogue, elapsed: float) -> str:
    question = sizing.question
    currency = catalogue.currency
    unpriced = catalogue.unpriced_by_file(catalogue.every)
    lines = [f"asked:     {_asked(question)}",
             f"parts:     {_parts(catalogue)} (prices in {currency or 'no stated currency'}; "
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
        lines.append("WARNING:   no redundancy asked for (--parity, --replicas): one failed drive loses data")
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
    """Failure domains, what the design survives (its drives by redundancy, its servers by HA) and what it does not,
    spares and the rebuild time, with warnings; with HA, the ceilings during a failover."""
    q, design = configuration.question, configuration.design
    servers, taken_over = configuration.counts["storage"], _taken_over(configuration)
    if not q.redundant:
        if taken_over is None:
            return ["failures:  none survived: without redundancy one failed drive loses data, one failed server stops "
                    f"access to its share ({servers} enclosures, no parity, no replicas)"] + _network(configuration)
        return [f"failures:  survived: {taken_over}; not survived: one failed drive loses data, as "
                f"there is no redundancy ({servers} enclosures, no parity, no replicas: HA guards the servers, not "
                "the drives)"] + _failover(configuration) + _network(configuration)
    lines = [f"failures:  {servers} enclosures (a server with its drives) are the failure domains; "
             f"{q.write_cost} needs at least {q.domains}; the data survives {configuration.survives} "
             f"enclosure failure{'s' if configuration.survives != 1 else ''}"
             + (f", and {taken_over}" if taken_over else
                "; a failed server takes its drives offline until it is back (--ha pairs them)")]
    rebuild = configuration.rebuild
    rate = "--rebuild-rate" if q.rebuild_rate else "the drive's sustained write, least"
    lines.append(f"spares:    {configuration.spares} hot spare drives ({q.spares} or more per enclosure); rebuilding "
                 f"one {format_quantity(design.device.capacity('size').value, unit='TB')} drive takes "
                 f"{rebuild.m_as('hour'):.1f} h at {format_quantity(q.rebuild_rate or design.device.capacity('bandwidth', 'write').ends[0])} ({rate})")
    if rebuild > DAY:
        lines.append("WARNING:   a rebuild takes over a day: a second failure meanwhile is likely enough to plan for "
                     "(declustered parity rebuilds from every drive; smaller drives rebuild sooner)")
    if taken_over is None:
        lines.append("note:      no HA: a server failure stops access to its enclosure (ask --ha for pairs)")
    return lines + _failover(configuration) + _network(configuration)


def _taken_over(configuration: Configuration) -> str | None:
    """The storage server failure HA survives: one server of a pair, or one controller of a dual-controller part;
    None without either."""
    server = configuration.design.server
    if configuration.question.step(server) == 2:
        return "a failed server of any HA pair (its partner takes over its drives; both of a pair down take them offline)"
    if server.controllers == 2:
        return "a failed controller (two per part; both down take its drives offline)"
    return None


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
    rows = []
    for line in configuration.bill:
        typical, most = line.total_power or (None, None)
        rows.append((line.part, line.what, f"{line.count:,.6g}", _money(line.unit_price, currency),
                     _money(line.total, currency), f"{line.total_rack_units:g}" if line.rack_units else "-",
                     "-" if typical is None else f"{typical.m_as('W'):,.0f} / {most.m_as('W'):,.0f}", line.source))
    bill = configuration.bill
    typical, most = bill.power
    rows.append(("total", "hardware", "", "", _money(bill.total, currency), f"{bill.rack_units:g}",
                 f"{typical.m_as('W'):,.0f} / {most.m_as('W'):,.0f}", f"cooling {bill.cooling.magnitude:,.0f} BTU/h at most"))
    low, high = configuration.total_range
    if low != high:
        rows.append(("", "street prices", "", "", f"{_money(low, currency)}..{high:,.0f}", "", "",
                     "every part at the low, then the high end of its price range"))
    if bill.software:
        rows.append(("total", "with software and support", "", "", _money(bill.total + bill.software, currency), "", "", ""))
    return table(("part", "what", "count", "each", "total", "rack units", "power W (typ / max)", "price source"), rows,
                 right=(2, 3, 4, 5, 6))


def _alternatives(alternatives: tuple[Configuration, ...], question: Question, currency: str) -> str:
    rows = []
    for c in alternatives:
        typical, most = c.bill.power
        rows.append((c.design.family, _money(c.total, currency),
                     *(t.shown(ceiling.value) for t, ceiling in zip(question.targets, c.ceilings)),
                     format_quantity(c.usable, unit="TB"), f"{typical.m_as('kW'):.1f} / {most.m_as('kW'):.1f}",
                     f"{c.bill.rack_units:g}", _summary(c)))
    return table(("family", "price", *(t.workload.operation.value for t in question.targets), "usable", "kW typ / max",
                  "RU", "parts"), rows, right=tuple(range(1, len(question.targets) + 5)))


def write_bom(configuration: Configuration, catalogue: Catalogue, path: str) -> None:
    """The bill of materials as CSV a spreadsheet opens (UTF-8 it knows as such by its byte-order mark): the question
    it answers, the configuration, where its parts come from and when, then one line per part and the totals; a new
    file only."""
    question, currency = configuration.question, catalogue.currency
    sized = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows: list[list] = [["asked", _asked(question)],
                        ["answer", f"{_money(configuration.total, currency)}: {_summary(configuration)}"],
                        ["parts", f"{_parts(catalogue)}; prices in {currency or 'no stated currency'}"],
                        ["sized", f"{sized} by iobound {probes.__version__} size"],
                        [],
                        ["part", "what", "count", "unit price", "total", "currency", "rack units", "power typical W",
                         "power max W", "source", "total low", "total high"]]
    for line in configuration.bill:
        typical, most = line.total_power or (None, None)
        rows.append([line.part, line.what, f"{line.count:g}", _cell(line.unit_price), _cell(line.total), currency,
                     f"{line.total_rack_units:g}", "" if typical is None else f"{typical.m_as('W'):g}",
                     "" if most is None else f"{most.m_as('W'):g}", line.source, *map(_cell, line.total_range)])
    typical, most = configuration.bill.power
    rows.append(["total", "hardware", "", "", _cell(configuration.total), currency, f"{configuration.bill.rack_units:g}",
                 f"{typical.m_as('W'):g}", f"{most.m_as('W'):g}", "sum of the lines above that are hardware",
                 *map(_cell, configuration.total_range)])
    write_new(path, csv_text(rows, preamble=SPREADSHEET_BOM, line_end="\r\n"))


def _cell(amount: float | None) -> str:
    return "" if amount is None else f"{amount:.2f}"


def _targets(configuration: Configuration, question: Question) -> str:
    """Each target beside its prediction in the same unit, the margin it needs, and the headroom it has."""
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
