"""The plots of a report as matplotlib lays them out, on the bundled lecture example and its results: no axis label
printed over another, no text past the figure's edge, every run named beside its dot, and the plot over node count
going on past its knee."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from models.predict import Model
from topologies.bundled import open_topology, read_runs
from assess import plotdata, plots
from assess.check import check_runs


@pytest.fixture(scope="module")
def lecture():
    topology = open_topology("lecture")
    return Model(topology), check_runs(topology, read_runs("lecture-results.csv"))


def _laid_out(plot, data, folder):
    """The figure as a report draws it (its size, laid out and saved by plots.save into ``folder``), drawn again to be
    measured, and its axes."""
    figure = Figure(figsize=plots.figure_size(data))
    ax = plot(data, figure.add_subplot())
    plots.save(figure, folder / "plot")
    figure.canvas.draw()
    return figure, ax


def _shown(axis) -> list[Text]:
    """The tick labels an axis draws: with text, at a tick inside its view."""
    low, high = sorted(axis.get_view_interval())
    return [tick.label1 for tick in (*axis.get_major_ticks(), *axis.get_minor_ticks())
            if tick.label1.get_visible() and tick.label1.get_text() and low <= tick.get_loc() <= high]


def _overlapping(figure, labels: list[Text]) -> list[tuple[str, str]]:
    renderer = figure.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
    return [(a, b) for i, (a, box) in enumerate(boxes) for b, other in boxes[i + 1:] if box.overlaps(other)]


def _outside(figure) -> list[str]:
    """Texts drawn past the figure's edges (beyond a pixel)."""
    renderer, edge = figure.canvas.get_renderer(), figure.bbox
    texts = [t for t in figure.findobj(Text) if t.get_visible() and t.get_text()]
    axis_labels = {id(t) for ax in figure.axes for axis in (ax.xaxis, ax.yaxis) for t in axis.get_ticklabels(which="both")}
    shown = {id(t) for ax in figure.axes for axis in (ax.xaxis, ax.yaxis) for t in _shown(axis)}
    found = []
    for t in texts:
        if id(t) in axis_labels and id(t) not in shown:
            continue  # a tick outside the view: not drawn
        box = t.get_window_extent(renderer)
        if box.x0 < edge.x0 - 1 or box.x1 > edge.x1 + 1 or box.y0 < edge.y0 - 1 or box.y1 > edge.y1 + 1:
            found.append(t.get_text())
    return found


def test_the_ratios_plot_labels_its_log_axis_without_overlap_and_keeps_the_codes_inside(lecture, tmp_path):
    _, judged = lecture
    dots = plotdata.ratios(judged, "lecture")
    figure, ax = _laid_out(plots.plot_dots, dots, tmp_path)
    assert len(_shown(ax.xaxis)) >= 3 and not _overlapping(figure, _shown(ax.xaxis))
    # the codes are a column of texts right of the axes, each at its row's height, which the layout makes room for
    codes = ax.texts
    written = [t.get_text().replace("\n", " ") for t in codes]
    assert written == [" ".join(e.codes) for e in dots.rows if e.codes]
    assert "BELOW-CEILING FEW-REPETITIONS READ-FAR-FASTER" in written
    renderer = figure.canvas.get_renderer()
    rows = ax.transData.transform([(1, row) for row in range(len(dots.rows))])[:, 1]
    for text, row in zip(codes, rows):
        box = text.get_window_extent(renderer)
        assert box.x0 > ax.bbox.x1 and box.y0 < row < box.y1, text.get_text()
    assert not _overlapping(figure, codes) and not _outside(figure)


@pytest.mark.slow
def test_the_rooflines_name_each_run_beside_its_dot_and_label_their_axes_without_overlap(lecture, tmp_path):
    model, judged = lecture
    families = [(f, js) for f, js in plotdata.families(judged, "transfer_size").items() if not f.operation.is_metadata]
    assert families
    for family, js in families:
        chart = plotdata.roofline(model, family, js)
        figure, ax = _laid_out(plots.plot_chart, chart, tmp_path)
        named = {t.get_text() for t in ax.texts}
        assert {e.label for _, e in chart.points} <= named
        assert not _overlapping(figure, _shown(ax.yaxis)) and not _overlapping(figure, _shown(ax.xaxis))
        assert not _outside(figure), family.describe()


def test_the_plot_over_node_count_goes_past_the_knee_the_group_would_reach(lecture, tmp_path):
    """Every lecture run used all 10 compute nodes, whose client NICs bind: the servers' devices take over at 12."""
    model, judged = lecture
    family, runs = next(iter(plotdata.families(judged, "nodes", least=1).items()))
    chart = plotdata.scaling(model, family, runs)
    marks = dict((label.split(":")[0], x) for x, label in chart.marks)
    ceiling = next(line for line in chart.lines if line.style == "ceiling")
    assert marks["knee"] > 10 and max(ceiling.x) >= 2 * marks["knee"]
    assert any(label == "compute has 10" for _, label in chart.marks)  # where the group ends is marked
    # beyond the knee the ceiling no longer grows
    assert ceiling.y[-1] == pytest.approx(ceiling.y[ceiling.x.index(marks["knee"]) + 1], rel=0.01)
    figure, ax = _laid_out(plots.plot_chart, chart, tmp_path)
    assert ax.get_xlim()[1] > marks["knee"] and not _outside(figure)


def test_a_log_axis_makes_ticks_only_where_it_labels_them_and_draws_matplotlibs_picture(lecture, tmp_path):
    """matplotlib makes a tick (five artists) for every place a log locator names, decades past the view too, and
    draws only those in view: the plots make ticks only in view and where they carry a label, and draw every other
    minor tick's mark in one line of markers. The picture is pixel for pixel matplotlib's own."""
    import numpy as np

    model, judged = lecture
    family, js = next((f, js) for f, js in plotdata.families(judged, "transfer_size").items()
                      if not f.operation.is_metadata)
    chart = plotdata.roofline(model, family, js)
    figure, ax = _laid_out(plots.plot_chart, chart, tmp_path)
    marked = {marks.axis.axis_name: marks.locator() for marks in ax.artists if isinstance(marks, plots._MinorMarks)}
    assert set(marked) == {"x", "y"}
    for axis in (ax.xaxis, ax.yaxis):
        low, high = sorted(axis.get_view_interval())
        places = [*axis.get_majorticklocs(), *axis.get_minorticklocs(), *marked[axis.axis_name]]
        assert places and all(low * (1 - 1e-6) <= p <= high * (1 + 1e-6) for p in places)
        assert all(axis.get_minor_formatter().format_ticks(list(axis.get_minorticklocs())))
    assert len(marked["x"]) > 20  # four decades of transfer sizes, their minor ticks unlabelled
    own, _ = _laid_out(lambda data, ax: _own_ticks(plots.plot_chart(data, ax)), chart, tmp_path)
    assert np.array_equal(np.asarray(figure.canvas.buffer_rgba()), np.asarray(own.canvas.buffer_rgba()))


def _own_ticks(ax):
    """The axes with matplotlib's own ticks back in place of the plots' (their locators keep the places in view
    alone, the minor one those labelled, and the minor ticks' marks are drawn apart)."""
    for marks in [artist for artist in ax.artists if isinstance(artist, plots._MinorMarks)]:
        axis = marks.axis
        axis.set_major_locator(axis.get_major_locator().inner)
        axis.set_minor_locator(marks.locator.inner)
        axis.set_tick_params(which="minor", tick1On=True)
        marks.remove()
    return ax


def test_a_figure_is_laid_out_once_and_drawn_once_for_each_file(lecture, tmp_path, monkeypatch):
    """Constrained layout measured every label twice before the files were drawn; the figure's size and what it
    shows are measured once now, and each file is one draw."""
    from matplotlib.axes import Axes

    model, judged = lecture
    family, js = next(iter(plotdata.families(judged, "transfer_size").items()))
    calls = {"measured": 0, "drawn": 0}

    def counted(name, method):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return method(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(Axes, "get_tightbbox", counted("measured", Axes.get_tightbbox))
    monkeypatch.setattr(Figure, "draw", counted("drawn", Figure.draw))
    figure = Figure(figsize=(7.5, 4.5), layout="constrained")
    plots.plot_chart(plotdata.roofline(model, family, js), figure.add_subplot())
    png, svg = plots.save(figure, tmp_path / "roofline")
    assert calls == {"measured": 1, "drawn": 2} and png.exists() and svg.exists()
    assert figure.get_layout_engine() is not None  # set aside while saving, and given back
