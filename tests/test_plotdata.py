"""The data behind the plots (assess.plotdata), checked by value, and the plots (assess.plots) through their artists."""

from __future__ import annotations

import math
from dataclasses import replace

import matplotlib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure

from probes.core.errors import InputError
from probes.core.measurement import Measurement, Provenance
from probes.core.run import Origin, Run
from probes.core.units import Q_, Metric
from probes.core.workload import Operation, Workload
from probes.core.host import Host
from models.predict import Model
from assess import plotdata, plots
from assess.check import check_runs
from assess.findings import Severity

matplotlib.use("Agg")

# 16 clients of 100 MiB/s behind 2 servers of 400 MiB/s: reads grow with the nodes up to 8.
TOY = """
clients.c = { count = 16, nic = "100 MiB/s" }
networks.n = { rtt = "0.1 ms" }
servers.s = { count = 2, nic = "400 MiB/s" }
devices.d = { count = 2, bandwidth = "1 GiB/s" }
"""


@pytest.fixture(scope="module")
def toy(topology):
    return topology(TOY, links="c n s d", name="toy")


def _run(label: str, workload: Workload, mibs: tuple[float, ...]) -> Run:
    return Run(label, workload, Metric.BANDWIDTH, mibs, "MiB/s", Origin("results.csv", None, "test"))


DIRECT = Workload(Operation.READ, Q_(4, "KiB"), nodes=4, direct=True)


@pytest.fixture(scope="module")
def judged(toy):
    runs = [_run("small", DIRECT, (100, 104, 102)),
            _run("large", replace(DIRECT, transfer_size=Q_(16, "MiB")), (390, 395, 398)),
            _run("cached", replace(DIRECT, transfer_size=Q_(1, "MiB")), (900, 950, 1000)),
            _run("8 nodes", Workload(Operation.READ, Q_(1, "MiB"), nodes=8), (780, 790, 800)),
            _run("16 nodes", Workload(Operation.READ, Q_(1, "MiB"), nodes=16), (790, 795, 800))]
    return check_runs(toy, runs)


def test_sweep_sizes_are_powers_of_two_with_the_measured_sizes_and_the_bounds():
    sizes = [q.m_as("B") for q in plotdata.sweep_sizes([Q_(3, "KiB"), Q_(1, "MiB")])]
    assert sizes == sorted(sizes) and sizes[0] == 2048 and sizes[-1] == 64 * 2 ** 20
    assert 3072 in sizes and all(math.log2(s).is_integer() for s in sizes if s != 3072)


def test_roofline_has_every_layer_and_the_request_time_limit_known_by_hand(toy):
    chart = plotdata.roofline(Model(toy), replace(DIRECT, transfer_size=None),
                             sizes=[Q_(4, "KiB"), Q_(1, "MiB"), Q_(16, "MiB")])
    lines = {line.label: line for line in chart.lines}
    assert set(lines) == {"ceiling", "requests in flight", "client NICs", "server NICs", "devices"}
    assert chart.ylabel == "bandwidth (MiB/s)" and chart.xlabel == "transfer size (KiB)"
    assert chart.xscale == chart.yscale == "log" and lines["ceiling"].x == (4, 1024, 16384)
    # 4 requests in flight, each 0.1 ms + 4 KiB / 100 MiB/s: 4 x 4 KiB / 0.139 ms = 112.4 MiB/s
    assert lines["requests in flight"].y[0] == pytest.approx(4 * 4 / 1024 / (0.1e-3 + 4 / 1024 / 100))
    assert lines["client NICs"].y == (400, 400, 400) and lines["devices"].y == (2048, 2048, 2048)


def test_the_ceiling_line_is_the_least_layer_at_every_size(toy, judged):
    family, runs = next((f, js) for f, js in plotdata.families(judged, "transfer_size").items() if f.direct)
    chart = plotdata.roofline(Model(toy), family, runs)
    ceiling = next(line for line in chart.lines if line.style == "ceiling")
    layers = [line for line in chart.lines if line.style == "layer"]
    for i, value in enumerate(ceiling.y):
        assert value == pytest.approx(min(line.y[i] for line in layers if not math.isnan(line.y[i])))
    assert sorted(x for x, _ in chart.points) == [4, 1024, 16384]


def test_measured_points_carry_their_interval_and_worst_finding(toy, judged):
    family, runs = next((f, js) for f, js in plotdata.families(judged, "transfer_size").items() if f.direct)
    points = {e.label: (x, e) for x, e in plotdata.roofline(Model(toy), family, runs).points}
    x, cached = points["cached"]
    assert x == 1024 and cached.value == pytest.approx(950) and cached.low < 950 < cached.high
    assert cached.severity is Severity.ERROR and "ABOVE-CEILING" in cached.codes


def test_scaling_marks_the_knee_where_the_servers_take_over(toy, judged):
    family = replace(judged[3].run.workload, nodes=None)
    runs = plotdata.families(judged, "nodes")[family]
    chart = plotdata.scaling(Model(toy), family, runs)
    ceiling = next(line for line in chart.lines if line.style == "ceiling")
    assert chart.marks == ((8.0, "knee: 8 nodes"),)
    assert ceiling.x == tuple(map(float, range(1, 17)))
    assert ceiling.y[:8] == pytest.approx([100 * n for n in range(1, 9)]) and set(ceiling.y[8:]) == {800}
    assert sorted(x for x, _ in chart.points) == [8, 16] and chart.xlabel == "client nodes of c"


def test_families_are_sweeps_with_the_swept_field_left_open(judged):
    (family, runs), = plotdata.families(judged, "transfer_size").items()  # the others have one size each
    assert family == replace(DIRECT, transfer_size=None) and [j.run.label for j in runs] == ["small", "large", "cached"]
    every = plotdata.families(judged, "transfer_size", least=1)
    assert sum(map(len, every.values())) == len(judged) and len(next(iter(every.values()))) == 3  # largest first
    assert [j.run.label for j in plotdata.families(judged, "nodes")[replace(
        judged[3].run.workload, nodes=None)]] == ["8 nodes", "16 nodes"]


def test_ratios_give_each_run_its_share_of_the_ceiling(judged):
    dots = plotdata.ratios(judged, "toy")
    rows = {e.label: e for e in dots.rows}
    assert dots.reference == 1.0 and dots.band == 0.05 and len(rows) == len(judged)
    assert rows["16 nodes"].value == pytest.approx(795 / 800)
    assert rows["16 nodes"].low < rows["16 nodes"].value < rows["16 nodes"].high
    assert rows["cached"].severity is Severity.ERROR and rows["16 nodes"].codes == ("AT-CEILING",)


def _measurement(name: str, metric: Metric, unit: str, samples: tuple[float, ...]) -> Measurement:
    host = Host("node", "6.1", "cpu", 2, 2 ** 30)
    return Measurement(name, name, metric, unit, samples, Provenance("fio", "3.33", (("fio",),), host, "now", 1.0))


def test_probe_charts_are_one_per_metric_in_one_unit_with_intervals():
    charts = plotdata.probe_charts([_measurement("net", Metric.BANDWIDTH, "B/s", (1e9, 1.1e9, 1.05e9)),
                                   _measurement("disk", Metric.BANDWIDTH, "MiB/s", (270, 272, 268)),
                                   _measurement("rtt", Metric.LATENCY, "s", (1e-4, 1.1e-4, 0.9e-4))], "node")
    bandwidth, latency = charts
    assert bandwidth.xlabel.startswith("bandwidth (MiB/s)") and latency.xlabel.startswith("latency (µs)")
    net, disk = bandwidth.rows
    assert net.value == pytest.approx(1.05e9 / 2 ** 20) and disk.value == pytest.approx(270)
    assert disk.low < 270 < disk.high and latency.rows[0].value == pytest.approx(100)
    assert bandwidth.xscale == "linear"
    (wide,) = plotdata.probe_charts([_measurement("ops", Metric.OPERATION_RATE, "op/s", (2e4, 2.1e4, 1.9e4)),
                                    _measurement("calls", Metric.OPERATION_RATE, "op/s", (1e6, 1.1e6, 0.9e6))], "node")
    assert wide.xscale == "log" and plots.plot_dots(wide, _axes()).get_xscale() == "log"


def test_drawing_marks_the_binding_group_or_link(toy, topology):
    model = Model(toy)
    drawn = plotdata.drawing(toy, model.ceiling(Workload(Operation.READ, Q_(1, "MiB"), nodes=16)))
    assert {n.name for n in drawn.nodes if n.binding} == {"s"}
    assert next(n.label for n in drawn.nodes if n.name == "s") == "s\n2 × server\nbinds: nic"
    assert [n.x for n in drawn.nodes] == [0, 1, 2, 3] and not any(e.binding for e in drawn.edges)
    linked = topology(TOY + '[[links]]\nbetween = ["n", "s"]\nbandwidth = "300 MiB/s"', links=("c n", "s d"))
    drawn = plotdata.drawing(linked, Model(linked).ceiling(Workload(Operation.READ, Q_(1, "MiB"), nodes=16)))
    assert [(e.a, e.b) for e in drawn.edges if e.binding] == [("n", "s")]
    assert "300 MiB/s" in drawn.caption


def _axes():
    return Figure().add_subplot()


def test_plot_chart_draws_every_line_and_point_with_labels_and_units(toy, judged):
    family, runs = next((f, js) for f, js in plotdata.families(judged, "transfer_size").items() if f.direct)
    chart = plotdata.roofline(Model(toy), family, runs)
    ax = plots.plot_chart(chart, _axes())
    drawn = {line.get_label(): line for line in ax.get_lines()}
    for line in chart.lines:
        assert tuple(drawn[line.label].get_ydata()) == pytest.approx(line.y, nan_ok=True)
    assert drawn["ceiling"].get_linewidth() > drawn["client NICs"].get_linewidth()
    assert ax.get_ylabel() == "bandwidth (MiB/s)" and ax.get_xscale() == "log" and ax.get_title().startswith("toy:")
    marker = next(line for line in ax.get_lines() if line.get_gid() == "cached")
    assert tuple(marker.get_ydata()) == pytest.approx((950,))
    assert to_rgba(marker.get_color()) == to_rgba(plots.COLOURS[Severity.ERROR])
    assert "runs (error found)" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_plot_chart_marks_the_knee(toy, judged):
    family = replace(judged[3].run.workload, nodes=None)
    runs = plotdata.families(judged, "nodes")[family]
    ax = plots.plot_chart(plotdata.scaling(Model(toy), family, runs), _axes())
    assert "knee: 8 nodes" in [t.get_text() for t in ax.texts]
    assert any(tuple(line.get_xdata()) == (8, 8) for line in ax.get_lines())


def test_plot_dots_rows_are_labelled_with_their_findings(judged):
    dots = plotdata.ratios(judged, "toy")
    ax = plots.plot_dots(dots, _axes())
    assert [t.get_text() for t in ax.get_yticklabels()] == [e.label for e in dots.rows]
    texts = {t.get_text().replace("\n", " "): t for t in ax.texts}  # a column on the right, row by row
    assert set(texts) == {" ".join(e.codes) for e in dots.rows if e.codes}
    assert to_rgba(texts["ABOVE-CEILING HIGH-VARIATION"].get_color()) == to_rgba(plots.COLOURS[Severity.ERROR])
    assert ax.get_xlabel() == "measured / ceiling" and ax.get_title() == "toy: measured / ceiling"


def test_plot_drawing_shows_each_group_and_the_binding_one_in_red(toy):
    drawn = plotdata.drawing(toy, Model(toy).ceiling(Workload(Operation.READ, Q_(1, "MiB"), nodes=16)))
    ax = plots.plot_drawing(drawn, _axes())
    boxes = {t.get_text().split("\n")[0]: t for t in ax.texts if t.get_bbox_patch() is not None}
    assert set(boxes) == {"c", "n", "s", "d"}
    assert to_rgba(boxes["s"].get_bbox_patch().get_edgecolor()) == to_rgba(plots.BINDING)
    assert to_rgba(boxes["c"].get_bbox_patch().get_edgecolor()) != to_rgba(plots.BINDING)
    assert len(ax.get_lines()) == 3


def test_plots_without_axes_make_their_own_figure(judged):
    ax = plots.plot_dots(plotdata.ratios(judged, "toy"))
    assert ax.figure is not None and len(ax.figure.axes) == 1
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_save_writes_png_and_svg_the_same_for_the_same_figure(tmp_path, judged):
    figure = Figure()
    plots.plot_dots(plotdata.ratios(judged, "toy"), figure.add_subplot())
    png, svg = plots.save(figure, tmp_path / "ratios")
    assert png.read_bytes().startswith(b"\x89PNG") and "<svg" in svg.read_text()
    again = Figure()
    plots.plot_dots(plotdata.ratios(judged, "toy"), again.add_subplot())
    assert [p.read_bytes() for p in plots.save(again, tmp_path / "again")] == [png.read_bytes(), svg.read_bytes()]
    assert plots.save(figure, tmp_path / "alone", svg=False) == (tmp_path / "alone.png",)
    assert not (tmp_path / "alone.svg").exists()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(12, 26), min_size=1, max_size=4))
def test_roofline_ceiling_never_exceeds_a_layer(toy, powers):
    sizes = [Q_(2 ** p, "B") for p in powers]
    chart = plotdata.roofline(Model(toy), replace(DIRECT, transfer_size=None), sizes=sizes)
    ceiling = chart.lines[0]
    for line in chart.lines[1:]:
        assert all(c <= v * (1 + 1e-9) for c, v in zip(ceiling.y, line.y) if not math.isnan(v))


def test_each_layer_has_its_own_colour_in_every_plot(toy, judged):
    from models import layers, metadata

    known = [*layers.LAYERS, *metadata.LAYERS, "combined cut"]
    assert len({plots.layer_colour(name) for name in known}) == len(known)
    assert plots.layer_colour("if client cache serves") == plots.layer_colour("client cache")
    model = Model(toy)
    roof = plots.plot_chart(plotdata.roofline(model, replace(DIRECT, transfer_size=None)), _axes())
    knee = plots.plot_chart(plotdata.scaling(model, Workload(Operation.READ, Q_(1, "MiB"))), _axes())
    colour = [{line.get_label(): to_rgba(line.get_color()) for line in ax.get_lines()} for ax in (roof, knee)]
    assert colour[0]["client NICs"] == colour[1]["client NICs"] == to_rgba(plots.layer_colour("client NICs"))


def test_user_text_with_dollars_is_not_read_as_math(judged):
    dots = replace(plotdata.ratios(judged, "cost $5 vs $6"), rows=(plotdata.Estimate("run_$a_b$", 1.0),))
    ax = plots.plot_dots(dots, _axes())
    assert [t.get_parse_math() for t in ax.get_yticklabels()] == [False]
    assert ax.title.get_text() == "cost $5 vs $6: measured / ceiling" and not ax.title.get_parse_math()


def test_scaling_draws_the_knee_at_a_sampled_count_and_needs_one_client_group(toy, topology):
    big = topology(TOY.replace("count = 16", "count = 300"), links="c n s d", name="big")
    chart = plotdata.scaling(Model(big), Workload(Operation.READ, Q_(1, "MiB")))
    assert chart.marks == ((8.0, "knee: 8 nodes"),) and {8.0, 9.0} <= set(chart.lines[0].x)
    two = topology(TOY + '[clients.gpu]\ncount = 2\nnic = "1 GiB/s"\n', links=("c n s d", "gpu n"))
    with pytest.raises(InputError, match="one client group"):
        plotdata.scaling(Model(two), Workload(Operation.READ, Q_(1, "MiB")))
