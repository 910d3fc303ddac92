"""The data behind each plot, prepared apart from the drawing so that it is tested by value.

An I/O roofline (every layer's ceiling over transfer size, the measured runs on it), the
ceiling over node count with its knee, each run's share of its ceiling with its findings,
probe results with their intervals, and the topology with the components that bind.
Values are in the unit the axis shows: the one :func:`display_unit` picks for its largest.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable, Sequence, TYPE_CHECKING

from probes.core.measurement import Measurement
from probes.core.stats import Summary
from probes.core.units import Q_, Metric, display_unit
from probes.core.workload import Workload
from models.ceiling import Ceiling
from models.predict import Model
from models.scaling import Knee, knee
from topologies.topology import Component, Group, Kind, Topology
from assess.findings import Judgement, Severity, TOLERANCE, ceiling_metric, summary_in
from assess.findings.application import BIN_BOUNDS, histogram

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Estimate", "Line", "Chart", "Dots", "Strips", "Bars", "Node", "Edge", "Drawing", "Sizes", "families",
           "roofline", "scaling", "ratios", "probe_charts", "drawing", "sweep_sizes", "access_sizes"]


@dataclass(frozen=True)
class Estimate:
    """A value with its 95 % interval where known, and the worst finding and the codes about it."""

    label: str
    value: float
    low: float | None = None
    high: float | None = None
    severity: Severity | None = None
    codes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Line:
    """A curve; ``y`` is NaN where it sets no limit. ``style``: "ceiling", "least" (its low end, with ranges), "layer",
    "cache", "model" (a model's curve: MVA, a fit) or "bound" (a model's bound or interval)."""

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    style: str = "layer"


@dataclass(frozen=True)
class Chart:
    """Lines, measured points (x, estimate) and marked x values (x, label), on labelled axes."""

    title: str
    xlabel: str
    ylabel: str
    lines: tuple[Line, ...]
    points: tuple[tuple[float, Estimate], ...] = ()
    marks: tuple[tuple[float, str], ...] = ()
    xscale: str = "linear"
    yscale: str = "linear"


@dataclass(frozen=True)
class Dots:
    """One row per estimate, on one value axis; ``reference`` ± ``band`` is drawn behind them (1 ± 5 % for ratios)."""

    title: str
    xlabel: str
    rows: tuple[Estimate, ...]
    reference: float | None = None
    band: float = 0.0
    xscale: str = "linear"


@dataclass(frozen=True)
class Strips:
    """Many values per row on one value axis (a list's efficiencies per phase), each coloured by its finding;
    ``reference`` (1: at the ceiling) is drawn behind them."""

    title: str
    xlabel: str
    rows: tuple[tuple[str, tuple[Estimate, ...]], ...]
    reference: float | None = None
    xscale: str = "log"


@dataclass(frozen=True)
class Bars:
    """An amount per row as a bar on one value axis (a centre's jobs per band of the fraction of their ceilings, per
    finding), each coloured by its row's worst finding."""

    title: str
    xlabel: str
    rows: tuple[Estimate, ...]
    xscale: str = "linear"


@dataclass(frozen=True)
class Node:
    """A group placed in its kind's column; ``binding`` when one of its capacities sets the ceiling."""

    name: str
    kind: Kind
    label: str
    x: float
    y: float
    binding: bool


@dataclass(frozen=True)
class Edge:
    """A link; ``binding`` when its own bandwidth sets the ceiling."""

    a: str
    b: str
    binding: bool


@dataclass(frozen=True)
class Drawing:
    """The topology's groups by kind, left to right along the write path, with what binds the ceiling."""

    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    caption: str


@dataclass(frozen=True)
class Sizes:
    """A job's requests per access-size bin (``bins``: low and high end in the chart's x unit, requests), drawn as
    bars under the roofline of its workload (``chart``)."""

    chart: Chart
    bins: tuple[tuple[float, float, int], ...]


def families(judgements: Iterable[Judgement], over: str, *, least: int = 2) -> dict[Workload, list[Judgement]]:
    """Judged runs with a ceiling grouped by their workload with field ``over`` (transfer_size, nodes) left open.

    Over nodes the data set is left open too (weak scaling grows it with the nodes). Families
    with fewer than ``least`` values of ``over`` are left out (2: a sweep to draw); the ones with
    the most runs come first.
    """
    found: dict[Workload, list[Judgement]] = defaultdict(list)
    opened = {over: None, **({"data_set": None} if over == "nodes" else {})}
    for j in judgements:
        if j.ceiling is not None and getattr(j.run.workload, over) is not None:
            found[replace(j.run.workload, **opened)].append(j)
    swept = {f: js for f, js in found.items() if len({getattr(j.run.workload, over) for j in js}) >= least}
    return dict(sorted(swept.items(), key=lambda item: -len(item[1])))


def sweep_sizes(sizes: Iterable[Quantity], low: str = "4 KiB", high: str = "64 MiB") -> list[Quantity]:
    """Powers of two bytes from ``low`` (or the smallest size) to ``high`` (or the largest), and the sizes given."""
    given = sorted({q.m_as("B") for q in sizes})
    start = min([Q_(low).m_as("B"), *given])
    stop = max([Q_(high).m_as("B"), *given])
    points = {2.0 ** k for k in range(math.floor(math.log2(start)), math.ceil(math.log2(stop)) + 1)}
    return [Q_(b, "B") for b in sorted(points | set(given))]


def roofline(model: Model, family: Workload, judged: Sequence[Judgement] = (), *,
             clients: tuple[str, ...] | None = None, sizes: Sequence[Quantity] | None = None) -> Chart:
    """Every layer's ceiling and the cache ceilings over the transfer size of ``family``, and the runs on it."""
    sizes = sizes or sweep_sizes(j.run.workload.transfer_size for j in judged)
    ceilings = model.ceilings((replace(family, transfer_size=s), clients) for s in sizes)
    x_unit = display_unit(min(sizes), Metric.SIZE)  # "4 ... 65,536 KiB" reads better than "0.0039 MiB"
    xs = tuple(s.m_as(x_unit) for s in sizes)
    return _chart(f"{model.topology.name}: {family.describe().replace('? B ', '')}", f"transfer size ({x_unit:~P})",
                  xs, ceilings,
                  [(j.run.workload.transfer_size.m_as(x_unit), j) for j in judged], xscale="log", yscale="log")


def scaling(model: Model, family: Workload, judged: Sequence[Judgement] = (), *,
            clients: tuple[str, ...] | None = None) -> Chart:
    """The ceiling and every layer's over the node count of one client group, the knee marked, with the runs.

    Where the ceiling grows in proportion over the whole group, the plot goes on past the group's count (marked) to
    twice the knee the group would reach with more nodes, the servers then binding: so that it shows where adding
    nodes stops helping.

    Raises
    ------
    InputError
        If several client groups run the workload: the node count is one group's.
    """
    open_nodes = replace(family, nodes=None)
    found = knee(model, open_nodes, clients)  # names the one group, or says to
    chosen, _ = model.nodes(open_nodes, clients)
    group = model.topology.group(chosen[0])
    count = top = group.count
    marks: tuple[tuple[float, str], ...] = ()
    if found is None:
        found = _beyond(model, open_nodes, group)
        if found is not None:
            top = 2 * found.nodes
            model = Model(_resized(model.topology, group, top))
            marks = ((float(count), f"{group.name} has {count}"),)
    turn = () if found is None else (found.nodes, found.nodes + 1)  # the corner is drawn where it is
    nodes = sorted({*_counts(top), *turn, *(j.run.workload.nodes for j in judged)} - {top + 1})
    ceilings = model.ceilings((replace(family, nodes=n), chosen) for n in nodes)
    marks += () if found is None else ((float(found.nodes), f"knee: {found.nodes} nodes"),)
    return _chart(f"{model.topology.name}: {family.describe().replace('all nodes x ', '')}",
                  f"client nodes of {', '.join(chosen)}",
                  tuple(map(float, nodes)), ceilings, [(float(j.run.workload.nodes), j) for j in judged],
                  marks=marks, caches=False)


def ratios(judgements: Iterable[Judgement], system: str, tolerance: float = TOLERANCE) -> Dots:
    """Each run's measured share of its ceiling (its most, where the ceiling is a range, as the axis says) with the
    interval of that share, and its findings."""
    rated = [j for j in judgements if j.ratio is not None]
    rows = tuple(Estimate(j.run.label, j.ratio, *(j.ratio_interval or (None, None)), *_worst(j)) for j in rated)
    ranged = any(j.ceiling.low is not None for j in rated)
    return Dots(f"{system}: measured / ceiling", "measured / ceiling" + (" (its most, where a range)" if ranged else ""),
                rows, 1.0, tolerance, _scale(rows))


def access_sizes(model: Model, judgement: Judgement, *, clients: tuple[str, ...] | None = None,
                 low: str = "16 B", high: str = "4 GiB") -> Sizes | None:
    """The access-size histogram Darshan recorded for a job's run under the roofline of its workload (every layer's
    ceiling over the transfer size), from ``low`` to ``high``; None without a histogram or a ceiling.

    Darshan's first bin (up to 100 B) is drawn from ``low`` and its last (over 1 GiB) to ``high``.
    """
    counts = histogram(judgement.run)
    if counts is None or judgement.ceiling is None or judgement.run.workload.transfer_size is None:
        return None
    sizes = sweep_sizes([judgement.run.workload.transfer_size], low, high)
    chart = roofline(model, replace(judgement.run.workload, transfer_size=None), [judgement], clients=clients, sizes=sizes)
    unit = display_unit(min(sizes), Metric.SIZE)  # the roofline's x unit
    ends = Q_(low).m_as(unit), Q_(high).m_as(unit)
    bins = tuple((max(Q_(bottom, "B").m_as(unit), ends[0]), min(Q_(top, "B").m_as(unit), ends[1]), counts[name])
                 for name, (bottom, top) in BIN_BOUNDS.items())
    return Sizes(replace(chart, title=f"{judgement.run.label}: requests by size under the ceiling"), bins)


def probe_charts(measurements: Iterable[Measurement], system: str) -> list[Dots]:
    """One chart per metric of a probe set: each measurement's mean and 95 % interval, in one unit."""
    by_metric: dict[Metric, list[Measurement]] = defaultdict(list)
    for m in measurements:
        by_metric[m.metric].append(m)
    charts = []
    for metric, found in by_metric.items():
        unit = display_unit(max(Q_(m.summary.mean, m.unit) for m in found), metric)
        rows = tuple(_estimate(m.name, m.summary, Q_(1, m.unit).m_as(unit)) for m in found)
        charts.append(Dots(f"{system}: probes, {metric.label}", f"{metric.label} ({unit:~P}), mean and 95 % interval",
                           rows, xscale=_scale(rows)))
    return charts


def drawing(topology: Topology, ceiling: Ceiling | None = None) -> Drawing:
    """The groups in columns clients → networks → servers → devices; what binds ``ceiling`` is marked."""
    binding = set(ceiling.binding) if ceiling else set()
    keys: dict[str, list[str]] = defaultdict(list)  # the binding capacities of each group
    for component in sorted(binding):
        keys[component.group].append(component.key)
    nodes = []
    for kind in Kind:
        members = topology.of_kind(kind)
        for i, g in enumerate(members):
            label = f"{g.name}\n{g.count} × {kind.singular}"
            if g.name in keys:
                label += f"\nbinds: {', '.join(keys[g.name])}"
            nodes.append(Node(g.name, kind, label, float(kind.rank), (len(members) - 1) / 2 - i, g.name in keys))
    edges = tuple(Edge(link.a, link.b, Component.of_link(i) in binding) for i, link in enumerate(topology.links))
    caption = "" if ceiling is None else (f"{ceiling.workload.describe()}: {ceiling} binds at "
                                          f"{', '.join(map(str, ceiling.binding))}")
    return Drawing(topology.name, tuple(nodes), edges, caption)


def _chart(title: str, xlabel: str, xs: tuple[float, ...], ceilings: list[Ceiling],
           measured: list[tuple[float, Judgement]], *, marks=(), caches: bool = True, **scales) -> Chart:
    """Lines of the ceiling, each layer and (with ``caches``) each cache that may serve, and the runs as points."""
    metric = ceilings[0].metric
    values = [c.value for c in ceilings] + [j.measured for _, j in measured]
    unit = display_unit(max(values, key=lambda q: q.m_as(metric.unit)), metric)

    def y(q: Quantity | None) -> float:
        return math.nan if q is None else q.m_as(unit)

    layers = list(dict.fromkeys(layer.layer for c in ceilings for layer in c.layers))
    lines = [Line("ceiling", xs, tuple(y(c.value) for c in ceilings), "ceiling")]
    if any(c.low is not None for c in ceilings):  # figures stated as ranges: the ceiling's least too
        lines.append(Line("ceiling, every range at its least", xs, tuple(y(c.least) for c in ceilings), "least"))
    for name in layers:
        found = [{layer.layer: layer.value for layer in c.layers}.get(name) for c in ceilings]
        lines.append(Line(name, xs, tuple(map(y, found))))
    if caches:
        for name in dict.fromkeys(cache.layer for c in ceilings for cache in c.caches):
            found = [next((k.value for k in c.caches if k.layer == name and k.applies is not False), None)
                     for c in ceilings]
            if any(v is not None for v in found):
                lines.append(Line(f"if {name} serves", xs, tuple(map(y, found)), "cache"))
    factor = Q_(1, metric.unit).m_as(unit)
    points = [(x, _estimate(j.run.label, summary_in(j.run, ceiling_metric(j.run)), factor, *_worst(j)))
              for x, j in measured]
    return Chart(title, xlabel, f"{metric.label} ({unit:~P})", tuple(lines), tuple(points), tuple(marks), **scales)


def _estimate(label: str, s: Summary, factor: float, severity: Severity | None = None,
              codes: tuple[str, ...] = ()) -> Estimate:
    """A summary's mean and interval times ``factor`` (into the axis's unit)."""
    low, high = (None, None) if s.ci_low is None else (s.ci_low * factor, s.ci_high * factor)
    return Estimate(label, s.mean * factor, low, high, severity, codes)


def _scale(rows: Sequence[Estimate]) -> str:
    """"log" when the values span more than 10x (a linear axis squashes 80,000 beside 850,000), else "linear"."""
    values = [r.value for r in rows if r.value > 0]
    return "log" if values and len(values) == len(rows) and max(values) > 10 * min(values) else "linear"


def _worst(j: Judgement) -> tuple[Severity | None, tuple[str, ...]]:
    """The most severe finding's severity and every finding's code."""
    return j.worst, tuple(f.code for f in j.findings)


def _beyond(model: Model, family: Workload, group: Group, most: int = 2 ** 20) -> Knee | None:
    """The knee ``group`` would reach with more nodes (doubled until the ceiling stops growing in proportion with
    them); None where no count up to ``most`` has one (nothing shared binds)."""
    count = group.count * 2
    while count <= most:
        found = knee(Model(_resized(model.topology, group, count)), family, (group.name,))
        if found is not None:
            return found
        count *= 2
    return None


def _resized(topology: Topology, group: Group, count: int) -> Topology:
    """The topology with ``count`` members in ``group``."""
    return replace(topology, groups=tuple(replace(g, count=count) if g is group else g for g in topology.groups))


def _counts(count: int, most: int = 64) -> list[int]:
    """Every node count up to ``most``; beyond, about ``most`` counts spread evenly on a log scale, ends included."""
    if count <= most:
        return list(range(1, count + 1))
    return sorted({round(count ** (i / (most - 1))) for i in range(most)} | {1, count})
