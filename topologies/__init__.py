"""Descriptions of storage systems: component groups, links and capacities, loaded from TOML.

:func:`open_topology` takes a file or the name of a bundled example (``lecture``);
:func:`resolve` finds either kind of file. The names below load on first use.
"""

__project__ = "iobound"

from probes.core.faces import lazy_exports

_EXPORTS = {
    "topologies.topology": ("Topology", "Group", "Kind", "Component"),
    "topologies.load": ("load_topology",),
    "topologies.bundled": ("open_topology", "resolve", "read_runs", "load_example", "example_names", "EXAMPLES"),
    "topologies.edit": ("apply_changes", "parse_change"),
    "topologies.described.mlperf": ("describe_system",),
}
__all__ = sorted(name for names in _EXPORTS.values() for name in names)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
