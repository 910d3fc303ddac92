"""Judging measured runs against predicted ceilings, plots, reports, and the iobound command line.

:func:`read_runs` reads a results file or a bundled example and :func:`open_topology` a system;
:func:`check_runs` judges runs against it; :mod:`assess.plotdata` prepares and :mod:`assess.plots`
draws the plots.
The names below load on first use.
"""

__project__ = "iobound"

from probes.core.faces import lazy_exports

_NAMES = {
    "read_runs": "topologies.bundled",
    "open_topology": "topologies.bundled",
    "check_runs": "assess.check",
    "Judgement": "assess.findings",
    "Finding": "assess.findings",
    "Severity": "assess.findings",
    "drawing": "assess.plotdata",
    "probe_charts": "assess.plotdata",
    "families": "assess.plotdata",
    "ratios": "assess.plotdata",
    "roofline": "assess.plotdata",
    "scaling": "assess.plotdata",
    "Chart": "assess.plotdata",
    "Dots": "assess.plotdata",
    "Estimate": "assess.plotdata",
    "Line": "assess.plotdata",
    "plot_chart": "assess.plots",
    "plot_dots": "assess.plots",
    "plot_sizes": "assess.plots",
    "access_sizes": "assess.plotdata",
    "plot_drawing": "assess.plots",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
