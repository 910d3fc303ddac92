"""Bottleneck models: the ceiling a workload can reach on a topology, and which component binds.

:class:`Model` predicts ceilings (:mod:`models.predict`); :mod:`models.scaling`,
:mod:`models.queueing` and :mod:`models.calibration` explain the knee, the requests in flight
and fitted parameters; :mod:`models.accelerators` how many accelerators a system feeds;
:mod:`models.sizing` sizes a system to targets from a catalogue of parts. The names
below load on first use.
"""

__project__ = "iobound"

from probes.core.faces import lazy_exports

_NAMES = {
    "Model": "models.predict",
    "Ceiling": "models.ceiling",
    "knee": "models.scaling",
    "queueing_network": "models.scaling",
    "bounds": "models.queueing",
    "mva": "models.queueing",
    "schweitzer": "models.queueing",
    "Station": "models.queueing",
    "fit": "models.calibration",
    "TRANSFER_SIZE": "models.calibration",
    "entry": "models.accelerators",
    "demand": "models.accelerators",
    "feed": "models.accelerators",
    "checkpoint": "models.accelerators",
    "size": "models.sizing",
    "Question": "models.sizing",
    "Target": "models.sizing",
    "Sizing": "models.sizing",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
