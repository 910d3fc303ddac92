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

_NAMES = {
    "ureg": "probes.core.units",
    "Q_": "probes.core.units",
    "Quantity": "probes.core.units",
    "Metric": "probes.core.units",
    "parse_quantity": "probes.core.units",
    "format_quantity": "probes.core.units",
    "Workload": "probes.core.workload",
    "Operation": "probes.core.workload",
    "Access": "probes.core.workload",
    "Run": "probes.core.run",
    "Measurement": "probes.core.measurement",
    "Summary": "probes.core.stats",
    "IoboundError": "probes.core.errors",
    "InputError": "probes.core.errors",
    "UnitError": "probes.core.errors",
    "ToolOutputError": "probes.core.errors",
    "read_results": "probes.readers",
    "read_mlperf_description": "probes.readers.mlperf_system",
    "read_probe_set": "probes.measure.probeset",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
