"""Matplotlib drawings of the data in :mod:`assess.plotdata`: each takes ``ax=None`` (a new figure) and returns the axes.

One visual vocabulary in every plot and lab (:data:`STYLES`): the ceiling a wide grey band, each layer's
limit a thin solid line in the layer's own colour, a cache a dashed one, a model's curve (MVA, a fit) thin
black, its bounds and intervals dotted, and the runs as dots. Findings colour the runs: red an error
(a run above what the system allows), orange a warning, blue otherwise. :func:`save` writes a figure as PNG and SVG.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Callable

import matplotlib
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import TICKDOWN, TICKLEFT, TICKRIGHT, TICKUP, Line2D
from matplotlib.ticker import FuncFormatter, Locator, NullLocator
from matplotlib.transforms import Bbox, blended_transform_factory, offset_copy

from models import layers, metadata
from assess.plotdata import Bars, Chart, Dots, Drawing, Estimate, Sizes, Strips
from assess.findings import Severity

__all__ = ["plot_chart", "plot_dots", "plot_strips", "plot_bars", "plot_drawing", "plot_sizes", "figure_size",
           "layer_colour", "save", "COLOURS", "BINDING", "STYLES"]

# The colour of a measured point by its worst finding (None: no finding).
COLOURS = {Severity.ERROR: "tab:red", Severity.WARNING: "tab:orange", Severity.INFO: "tab:blue", None: "tab:blue"}
_RUNS = {Severity.ERROR: "runs (error found)", Severity.WARNING: "runs (warning found)", Severity.INFO: "runs",
         None: "runs"}
# Findings of one severity told apart where many are drawn together (a list's phases).
_CODE_COLOURS = {"IMPLAUSIBLE-HARDWARE": "tab:brown", "POSSIBLE-IF": "tab:orange", "FAR-BELOW": "tab:purple", "AT-CEILING": "tab:blue",
                 "BELOW-CEILING": "tab:cyan", "within": "tab:green"}
# How each style of :class:`Line` is drawn; a layer's and a cache's colour is the layer's (:func:`layer_colour`).
STYLES = {"ceiling": dict(color="black", linewidth=6, alpha=0.25, zorder=1),  # under the layers: the binding one shows
          "layer": dict(linewidth=1.3, linestyle="-", zorder=2),
          "cache": dict(linewidth=1.3, linestyle="--", zorder=2),
          "model": dict(color="black", linewidth=1.6, linestyle="-", zorder=3),
          "bound": dict(color="black", linewidth=1.0, linestyle=":", zorder=3)}
# The resolution of a saved PNG, in dots per inch.
_DPI = 120
# zlib's effort on a saved PNG: 3 compresses a plot in half the time of PIL's 6, into a file under a tenth larger.
_PNG_EFFORT = 3
# Glyphs drawn as the font shapes them, not snapped to the pixel grid: FreeType's hinting took a third of a report's
# drawing, and at 120 dpi the text reads the same.
_TEXT = {"text.hinting": "no_hinting"}
# The colour of what binds the ceiling, in the topology drawing.
BINDING = "tab:red"
# Each layer keeps its colour from plot to plot (in this order; "client cache" is the cache line's).
_LAYER_ORDER = (*layers.LAYERS, *metadata.LAYERS, "combined cut", "client cache")
# tab20's dark shades, then its light ones, without grey (the ceiling's colour).
_PALETTE = [to_hex(c) for c in (*matplotlib.colormaps["tab20"].colors[0::2], *matplotlib.colormaps["tab20"].colors[1::2])
            if to_hex(c) not in ("#7f7f7f", "#c7c7c7")]


def figure_size(data: Chart | Dots | Strips | Bars | Drawing) -> tuple[float, float]:
    """Inches that fit a plot of ``data``: dots and bars grow with their rows, a drawing with its tallest column."""
    if isinstance(data, (Dots, Strips, Bars)):
        return 7.5, 1.3 + 0.3 * len(data.rows)
    if isinstance(data, Drawing):
        return 7.5, 1.6 + 0.9 * max(Counter(n.kind for n in data.nodes).values(), default=1)
    return 7.5, 4.5


def _axes(ax: Axes | None, data: Chart | Dots | Drawing) -> Axes:
    """``ax``, or the axes of a new figure of the data's size (pyplot's, so that notebooks show it)."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figure_size(data), layout="constrained")[1]


def _numbers(axis, scale: str) -> None:
    """Plain numbers with thousands separators on an axis ("1,024", not "10^3" or an offset "1e6").

    A log axis of under two decades shows few major ticks: the minor ones at 2 and 5 times a power of ten are labelled
    too (all of them, where fewer than two such fall in a narrow span): labelling every minor tick printed "0.6",
    "0.7", "0.8" and "0.9" over each other. A log axis's minor ticks are marked by :class:`_MinorMarks`; matplotlib
    makes ticks only where they carry a label.
    """
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.10g}"))
    if scale != "log":
        return
    axis.set_major_locator(_InView(axis.get_major_locator()))
    minor = _InView(axis.get_minor_locator())
    axis.axes.add_artist(_MinorMarks(axis, minor))
    axis.set_tick_params(which="minor", tick1On=False, tick2On=False)  # their marks are _MinorMarks'
    low, high = sorted(axis.axes.get_xlim() if axis.axis_name == "x" else axis.axes.get_ylim())
    if not 0 < low or high / low >= 100:
        axis.set_minor_locator(NullLocator())
        return
    steps = [m * 10.0 ** k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
             for m in _LABELLED]
    every = sum(low <= step <= high for step in steps) < 2

    def labelled(value: float) -> bool:
        return every or _leading(value) in _LABELLED

    axis.set_minor_locator(_InView(minor.inner, labelled))
    axis.set_minor_formatter(FuncFormatter(lambda value, _: f"{value:,.10g}" if labelled(value) else ""))


class _MinorMarks(Artist):
    """The marks of an axis's minor ticks, drawn as one line of markers where matplotlib's ticks would draw them (at
    the places of ``locator`` in view but those of the major ticks), with their marker, size, width and colour:
    matplotlib makes five artists for each tick, and the forty-odd minor ticks of a roofline's log axes took a third
    of drawing it."""

    def __init__(self, axis, locator: Locator):
        super().__init__()
        self.axis, self.locator = axis, locator
        locator.set_axis(axis)
        name, x = f"{axis.axis_name}tick", axis.axis_name == "x"
        marker = {"out": TICKDOWN if x else TICKLEFT, "in": TICKUP if x else TICKRIGHT,
                  "inout": "|" if x else "_"}[matplotlib.rcParams[f"{name}.direction"]]
        colour = matplotlib.rcParams[f"{name}.color"]
        along = axis.axes.get_xaxis_transform if x else axis.axes.get_yaxis_transform
        self.marks = Line2D([], [], linestyle="none", marker=marker, color=colour, markeredgecolor=colour,
                            markersize=matplotlib.rcParams[f"{name}.minor.size"],
                            markeredgewidth=matplotlib.rcParams[f"{name}.minor.width"], transform=along("tick1"))
        self.marks.set_figure(axis.axes.figure)
        self.set_zorder(axis.get_zorder())
        self.set_in_layout(False)

    def draw(self, renderer) -> None:
        if not self.get_visible():
            return
        places = _in_view(self.axis, np.asarray(self.locator(), dtype=float), 1e-10)  # as matplotlib draws a tick
        transform = self.axis.get_transform()
        low, high = sorted(transform.transform(self.axis.get_view_interval()))
        majors = transform.transform(self.axis.get_majorticklocs())
        places = places[~np.isclose(transform.transform(places)[:, None], majors[None, :], rtol=0,
                                    atol=(high - low) * 1e-5).any(axis=1)]
        fixed = np.zeros(len(places))
        self.marks.set_data((places, fixed) if self.axis.axis_name == "x" else (fixed, places))
        self.marks.draw(renderer)
        self.stale = False


class _InView(Locator):
    """A locator's places within the axis's view (and a hair past its ends), and of those only the ``labelled`` ones
    where given: matplotlib makes a tick, five artists, for every place a log locator names, a decade or two past each
    end too, and draws only those in view. The ticks drawn are the same; the ones never drawn made a fifth of drawing
    a roofline."""

    def __init__(self, inner: Locator, labelled: Callable[[float], bool] | None = None):
        self.inner, self.labelled = inner, labelled

    def set_axis(self, axis) -> None:
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def __call__(self):
        places = _in_view(self.axis, np.asarray(self.inner()), 1e-6)  # matplotlib draws a tick within 1e-10 of it
        return places if self.labelled is None else places[[self.labelled(p) for p in places]]

    def tick_values(self, vmin, vmax):
        return self.inner.tick_values(vmin, vmax)

    def nonsingular(self, v0, v1):
        return self.inner.nonsingular(v0, v1)

    def view_limits(self, vmin, vmax):
        return self.inner.view_limits(vmin, vmax)


def _in_view(axis, places: np.ndarray, slack: float) -> np.ndarray:
    """``places`` within the axis's view or ``slack`` of its span past an end, measured on the axis's scale."""
    transform = axis.get_transform()
    low, high = sorted(transform.transform(axis.get_view_interval()))
    shown = transform.transform(places)
    hair = (high - low) * slack
    return places[(shown >= low - hair) & (shown <= high + hair)]


# The leading digits of the minor ticks labelled on a log axis of under two decades.
_LABELLED = (1, 2, 5)


def _leading(value: float) -> int:
    """The leading digit of a positive number: 2 for 0.2, 2,000 or 2."""
    return round(value / 10.0 ** math.floor(math.log10(value))) if value > 0 else 0


def plot_chart(chart: Chart, ax: Axes | None = None) -> Axes:
    """The ceiling (a wide band), each layer's limit (thin), caches (dashed), models and their bounds, and the runs."""
    ax = _axes(ax, chart)
    ceiling = next((line for line in chart.lines if line.style == "ceiling"), None)
    for line in chart.lines:
        if line.style == "least" and ceiling is not None:  # the interval the ranges leave: shaded down to its least
            ax.fill_between(line.x, line.y, ceiling.y, color="black", alpha=0.08, zorder=0, label=line.label)
            continue
        style = STYLES[line.style]
        if line.style in ("layer", "cache"):
            style = {"color": layer_colour(line.label), **style}
        ax.plot(line.x, line.y, label=line.label, **style)
    xs = [x for line in chart.lines for x in line.x] + [x for x, _ in chart.points]
    for x, estimate in chart.points:  # each run named beside its dot, on the side towards the middle
        _point(ax, x, estimate.value, estimate, vertical=True)
        left = _fraction(x, min(xs), max(xs), chart.xscale) > 0.5
        ax.annotate(estimate.label, (x, estimate.value), xytext=(-5 if left else 5, 4), textcoords="offset points",
                    ha="right" if left else "left", fontsize=7, color=COLOURS[estimate.severity], parse_math=False)
    for severity, label in _RUNS.items():  # one legend entry per colour, not per run
        if any(e.severity is severity for _, e in chart.points):
            ax.plot([], [], marker="o", linestyle="none", color=COLOURS[severity], label=label)
    for i, (x, label) in enumerate(chart.marks):  # each mark's label a line under the one before
        ax.axvline(x, color="grey", linestyle=":", linewidth=1)
        ax.annotate(label, (x, 1), xycoords=("data", "axes fraction"), xytext=(3, -12 * (i + 1)),
                    textcoords="offset points", fontsize=8, color="grey")
    ax.set(xscale=chart.xscale, yscale=chart.yscale)
    _labels(ax, chart.title, chart.xlabel, chart.ylabel)
    _numbers(ax.xaxis, chart.xscale)
    _numbers(ax.yaxis, chart.yscale)
    if chart.lines or chart.points:
        ax.legend(fontsize=7, loc="best")
    return ax


def _fraction(x: float, low: float, high: float, scale: str) -> float:
    """Where ``x`` lies from ``low`` (0) to ``high`` (1), on a log scale or a linear one."""
    if scale == "log" and low > 0:
        low, high, x = math.log(low), math.log(high), math.log(max(x, low))
    return 0.5 if high == low else (x - low) / (high - low)


def plot_sizes(sizes: Sizes, ax: Axes | None = None) -> Axes:
    """The roofline (as :func:`plot_chart`) with the job's requests per size bin as grey bars on a second axis."""
    ax = plot_chart(sizes.chart, _axes(ax, sizes.chart))
    bars = ax.twinx()
    bars.bar([low for low, _, _ in sizes.bins], [n for _, _, n in sizes.bins],
             width=[high - low for low, high, _ in sizes.bins], align="edge", color="grey", alpha=0.3, zorder=0)
    bars.set_ylabel("requests (bars)")
    _numbers(bars.yaxis, "linear")
    ax.set_zorder(bars.get_zorder() + 1)  # the lines and points over the bars
    ax.patch.set_visible(False)
    return ax


def plot_dots(dots: Dots, ax: Axes | None = None) -> Axes:
    """One row per estimate with its interval; the reference and its band behind; each row's finding codes in a column
    right of the axes (texts the layout makes room for: codes beside the dots ran off the figure)."""
    ax = _axes(ax, dots)
    if dots.reference is not None:
        ax.axvline(dots.reference, color="black", linewidth=1)
        if dots.band:
            ax.axvspan(dots.reference * (1 - dots.band), dots.reference * (1 + dots.band), color="grey", alpha=0.2)
    for row, estimate in enumerate(dots.rows):
        _point(ax, estimate.value, row, estimate, vertical=False)
    ax.set_yticks(range(len(dots.rows)), [e.label for e in dots.rows], fontsize=7, parse_math=False)
    ax.set_ylim(len(dots.rows) - 0.5, -0.5)  # the first row on top
    # each row's codes beside the axes' right edge, a tick label's pad away (texts, which the layout makes room for:
    # a secondary axis of labels took a sixth of drawing the plot)
    beside = offset_copy(blended_transform_factory(ax.transAxes, ax.transData), ax.figure,
                         x=matplotlib.rcParams["ytick.major.pad"], units="points")
    for row, estimate in enumerate(dots.rows):
        if estimate.codes:
            ax.text(1, row, _codes(estimate.codes), transform=beside, fontsize=7, color=COLOURS[estimate.severity],
                    va="center", ha="left", parse_math=False, clip_on=False)
    ax.set_xscale(dots.xscale)
    if dots.xscale == "linear":
        ax.set_xlim(left=0)
    _labels(ax, dots.title, dots.xlabel, "")
    _numbers(ax.xaxis, dots.xscale)
    return ax


def _codes(codes: tuple[str, ...], per_line: int = 2) -> str:
    """Finding codes, two to a line (a row is about two lines high)."""
    return "\n".join(" ".join(codes[i:i + per_line]) for i in range(0, len(codes), per_line))


def plot_strips(strips: Strips, ax: Axes | None = None) -> Axes:
    """Each row's values as points spread a little up and down (so that equal values stay visible), coloured by
    their worst finding and named in the legend by their first code; the reference line behind them."""
    ax = _axes(ax, strips)
    if strips.reference is not None:
        ax.axvline(strips.reference, color="black", linewidth=1)
    shown: set = set()
    for row, (_, estimates) in enumerate(strips.rows):
        for i, estimate in enumerate(estimates):
            jitter = ((i * 0.618034) % 1 - 0.5) * 0.6  # spread evenly, the same at every drawing
            name = estimate.codes[0] if estimate.codes else "no finding"
            label = name if name not in shown else None
            shown.add(name)
            ax.plot(estimate.value, row + jitter, marker="o", markersize=3, alpha=0.6, linestyle="none",
                    color=_CODE_COLOURS.get(name, COLOURS[estimate.severity]), gid=estimate.label, label=label)
    ax.set_yticks(range(len(strips.rows)), [f"{name} ({len(e)})" for name, e in strips.rows], fontsize=7,
                  parse_math=False)
    ax.set_ylim(len(strips.rows) - 0.5, -0.5)
    ax.set_xscale(strips.xscale)
    _labels(ax, strips.title, strips.xlabel, "")
    _numbers(ax.xaxis, strips.xscale)
    if shown:
        ax.legend(fontsize=7, loc="best")
    return ax


def plot_bars(bars: Bars, ax: Axes | None = None) -> Axes:
    """One bar per row, the first on top, coloured by its row's worst finding, its value written at its end."""
    ax = _axes(ax, bars)
    rows = range(len(bars.rows))
    drawn = ax.barh(rows, [e.value for e in bars.rows], height=0.6, color=[COLOURS[e.severity] for e in bars.rows])
    ax.bar_label(drawn, labels=[f"{e.value:,.0f}" if e.value >= 100 else f"{e.value:.3g}" for e in bars.rows], padding=3, fontsize=7)
    ax.set_yticks(rows, [e.label for e in bars.rows], fontsize=7, parse_math=False)
    ax.set_ylim(len(bars.rows) - 0.5, -0.5)  # the first row on top
    ax.set_xscale(bars.xscale)
    if bars.xscale == "linear":
        ax.set_xlim(left=0, right=max((e.value for e in bars.rows), default=1) * 1.15 or 1)  # room for the labels
    _labels(ax, bars.title, bars.xlabel, "")
    _numbers(ax.xaxis, bars.xscale)
    return ax


def plot_drawing(drawing: Drawing, ax: Axes | None = None) -> Axes:
    """Groups as boxes in columns by kind, links as lines; what binds the ceiling in red."""
    ax = _axes(ax, drawing)
    where = {n.name: (n.x, n.y) for n in drawing.nodes}
    for edge in drawing.edges:
        (xa, ya), (xb, yb) = where[edge.a], where[edge.b]
        ax.plot((xa, xb), (ya, yb), color=BINDING if edge.binding else "grey",
                linewidth=3 if edge.binding else 1.2, zorder=1)
    for node in drawing.nodes:
        ax.text(node.x, node.y, node.label, ha="center", va="center", fontsize=8, zorder=2, parse_math=False,
                bbox=dict(boxstyle="round", facecolor="mistyrose" if node.binding else "white",
                          edgecolor=BINDING if node.binding else "grey", linewidth=2 if node.binding else 1))
    xs = [n.x for n in drawing.nodes] or [0.0]
    ys = [n.y for n in drawing.nodes] or [0.0]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(min(ys) - 0.7, max(ys) + 0.7)
    ax.set_axis_off()
    _labels(ax, drawing.title, "", "")
    if drawing.caption:
        ax.annotate(drawing.caption, (0.5, 0), xycoords="axes fraction", ha="center", fontsize=8, color=BINDING,
                    parse_math=False)
    return ax


def _labels(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    """Title and axis labels, with a "$" in a user's name shown as it is (not as matplotlib's math).

    The title stands where matplotlib would place it (no plot here has ticks above its axes or an offset such as
    "1e6" on them), told so: found out, it would measure the y axis again at every draw (about a tenth of a report).
    """
    ax.set_title(title, fontsize=10, parse_math=False, y=1.0)
    ax.set_xlabel(xlabel, parse_math=False)
    ax.set_ylabel(ylabel, parse_math=False)


def layer_colour(label: str) -> str:
    """The colour of a layer's line (a cache line "if client cache serves" takes its cache's), the same in every plot."""
    name = label.removeprefix("if ").removesuffix(" serves")
    index = _LAYER_ORDER.index(name) if name in _LAYER_ORDER else len(_LAYER_ORDER) + sum(map(ord, name))
    return _PALETTE[index % len(_PALETTE)]


def save(figure: Figure, stem: Path, *, svg: bool = True) -> tuple[Path, ...]:
    """Write ``figure``, one plot (with its twin and secondary axes), to ``stem``.png and, with ``svg``, ``stem``.svg
    (its text as SVG text), the same bytes for the same figure; returns the paths written.

    It is laid out once, at the PNG's resolution (:func:`_fit`), its layout engine set aside meanwhile: constrained
    layout measured every label twice before each file was drawn, and savefig alone lays out again for each file.
    """
    paths = (stem.with_suffix(".png"), stem.with_suffix(".svg")) if svg else (stem.with_suffix(".png"),)
    engine, dpi = figure.get_layout_engine(), figure.dpi
    if not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)  # made without pyplot: the layout is measured by the renderer the PNG is drawn with
    with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        figure.set_layout_engine(None)  # None: savefig draws once; "none" would still lay out in a dry draw
    figure.set_dpi(_DPI)
    try:
        with matplotlib.rc_context(_TEXT):  # the PNG's text measured and drawn alike
            _fit(figure)
            figure.savefig(paths[0], dpi=_DPI, pil_kwargs={"compress_level": _PNG_EFFORT})
        # the SVG's text as text (searchable, smaller): outlining it glyph by glyph took a quarter of drawing an SVG;
        # its clip paths named from a fixed salt and no date written, so that the same figure gives the same file
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "iobound"}):
            for path in paths[1:]:
                figure.savefig(path, dpi=_DPI, metadata={"Date": None})
    finally:
        figure.set_dpi(dpi)
        if engine is not None:
            figure.set_layout_engine(engine)
    return paths


def _fit(figure: Figure, pad: float = 3.0) -> None:
    """Place the plot so that what lies around its axes (tick labels, axis labels, the title, secondary axes, texts
    placed outside) just fits in the figure, ``pad`` points from its edges, as constrained layout would.

    Measured once, as tight_layout does but in one pass, and leaving out the legend and lines, which lie inside the
    axes; the labels measured are the ones the PNG's draw then finds measured in its renderer's cache.
    """
    renderer = figure.canvas.get_renderer()
    shown = [ax for ax in figure.axes if ax.get_visible()]
    if not shown:
        return
    axes = Bbox.union([ax.bbox for ax in shown])
    around = Bbox.union([ax.get_tightbbox(renderer, bbox_extra_artists=[*ax.texts, *ax.child_axes],
                                          for_layout_only=True) for ax in shown])
    gap = pad * figure.dpi / 72
    width, height = figure.bbox.width, figure.bbox.height
    left, right = (axes.x0 - around.x0 + gap) / width, 1 - (around.x1 - axes.x1 + gap) / width
    bottom, top = (axes.y0 - around.y0 + gap) / height, 1 - (around.y1 - axes.y1 + gap) / height
    if left < right and bottom < top:  # else labels wider than the figure: left where matplotlib put them
        figure.subplots_adjust(left=left, right=right, bottom=bottom, top=top)


def _point(ax: Axes, x: float, y: float, estimate: Estimate, *, vertical: bool) -> None:
    """A measured value (its label as the marker's gid) with its interval as an error bar, vertical or horizontal."""
    colour = COLOURS[estimate.severity]
    if estimate.low is not None and math.isfinite(estimate.low):
        spread = ((estimate.value - estimate.low,), (estimate.high - estimate.value,))
        ax.errorbar(x, y, **({"yerr": spread} if vertical else {"xerr": spread}), fmt="none", ecolor=colour,
                    capsize=3, zorder=4)
    ax.plot(x, y, marker="o", linestyle="none", color=colour, zorder=5, gid=estimate.label)
