"""Judging measured runs against predicted ceilings, plots, reports, and the iobound command line.

:func:`read_runs` reads a results file or a bundled example and :func:`open_topology` a system;
:func:`check_runs` judges runs against it; :mod:`assess.plotdata` prepares and :mod:`assess.plots`
draws the plots.
The names below load on first use.
"""

__project__ = "iobound"

from probes.core.faces import lazy_exports

_EXPORTS = {
    "topologies.bundled": ("read_runs", "open_topology"),
    "assess.check": ("check_runs",),
    "assess.findings": ("Judgement", "Finding", "Severity"),
    "assess.plotdata": ("drawing", "probe_charts", "families", "ratios", "roofline", "scaling", "Chart", "Dots",
                        "Estimate", "Line", "access_sizes"),
    "assess.plots": ("plot_chart", "plot_dots", "plot_sizes", "plot_drawing"),
}
__all__ = sorted(name for names in _EXPORTS.values() for name in names)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
