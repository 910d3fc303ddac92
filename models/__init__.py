"""Bottleneck models: the ceiling a workload can reach on a topology, and which component binds.

:class:`Model` predicts ceilings (:mod:`models.predict`); :mod:`models.scaling`,
:mod:`models.queueing` and :mod:`models.calibration` explain the knee, the requests in flight
and fitted parameters; :mod:`models.accelerators` how many accelerators a system feeds;
:mod:`models.sizing` sizes a system to targets from a catalogue of parts. The names
below load on first use.
"""

__project__ = "iobound"

from probes.core.faces import lazy_exports

_EXPORTS = {
    "models.predict": ("Model",),
    "models.ceiling": ("Ceiling",),
    "models.scaling": ("knee", "queueing_network"),
    "models.queueing": ("bounds", "mva", "schweitzer", "Station"),
    "models.calibration": ("fit", "TRANSFER_SIZE"),
    "models.accelerators": ("entry", "demand", "feed", "checkpoint"),
    "models.sizing": ("size", "Question", "Target", "Sizing"),
}
__all__ = sorted(name for names in _EXPORTS.values() for name in names)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
