"""Topologies built from what a system's description states: an io500 submission's, an MLPerf Storage system's, a lab's.

Each builder turns a parsed description into a topology: its stated figures as values citing their
field, the rest as ranges marked assumption. :mod:`.io500` builds from
:mod:`probes.readers.io500_system`'s descriptions, :mod:`.mlperf` (with :mod:`.mlperf_parts`) from
:mod:`probes.readers.mlperf_system`'s, :mod:`.lab` from a lab ``iobound lab up`` built. The names
below load on first use.
"""

from probes.core.faces import lazy_exports

_NAMES = {
    "Described": "topologies.described.io500",
    "describe": "topologies.described.io500",
    "described_topology": "topologies.described.io500",
    "System": "topologies.described.mlperf",
    "describe_system": "topologies.described.mlperf",
    "system_topology": "topologies.described.mlperf",
    "lab_topology": "topologies.described.lab",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
