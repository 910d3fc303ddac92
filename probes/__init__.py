"""The base layer of iobound: units, measured values, the probes that run tools and the readers of what tools print.

Rooms: :mod:`probes.core` (units, statistics, workloads, runs, measurements, errors),
:mod:`probes.measure` (fio, iperf3 and ping probes, probe sets), :mod:`probes.readers`
(one reader per tool's output; :func:`read_results` picks one by content) and
:mod:`probes.lab` (a storage lab in network namespaces). The names below are the face
scripts and notebooks import from; each loads on first use.
"""

__project__ = "iobound"
__version__ = "0.1.0"

from probes.core.faces import lazy_exports  # noqa: E402 (after __version__, which setup.cfg reads)

_EXPORTS = {
    "probes.core.units": ("ureg", "Q_", "Quantity", "Metric", "parse_quantity", "format_quantity"),
    "probes.core.workload": ("Workload", "Operation", "Access"),
    "probes.core.run": ("Run",),
    "probes.core.measurement": ("Measurement",),
    "probes.core.stats": ("Summary",),
    "probes.core.errors": ("IoboundError", "InputError", "UnitError", "ToolOutputError"),
    "probes.readers": ("read_results",),
    "probes.readers.mlperf_system": ("read_mlperf_description",),
    "probes.measure.probeset": ("read_probe_set",),
}
__all__ = sorted(name for names in _EXPORTS.values() for name in names)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
