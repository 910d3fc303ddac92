"""Topologies built from what a system's description states: an io500 submission's, an MLPerf Storage system's, a lab's.

Each builder turns a parsed description into a topology: its stated figures as values citing their
field, the rest as ranges marked assumption. :mod:`.io500` builds from
:mod:`probes.readers.io500_system`'s descriptions, :mod:`.mlperf` (with :mod:`.mlperf_parts`) from
:mod:`probes.readers.mlperf_system`'s, :mod:`.lab` from a lab ``iobound lab up`` built; :mod:`.kvcache` reads
a serving node's KV-cache tiers from its topology file's ``[kv_cache]`` tables. The names below load on first use.
"""

from probes.core.faces import lazy_exports

_EXPORTS = {
    "topologies.described.io500": ("Described", "describe", "described_topology"),
    "topologies.described.mlperf": ("System", "describe_system", "system_topology"),
    "topologies.described.lab": ("lab_topology",),
}
__all__ = sorted(name for names in _EXPORTS.values() for name in names)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
