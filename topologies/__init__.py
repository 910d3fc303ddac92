"""Descriptions of storage systems: component groups, links and capacities, loaded from TOML.

:func:`open_topology` takes a file or the name of a bundled example (``lecture``);
:func:`resolve` finds either kind of file. The names below load on first use.
"""

__project__ = "iobound"

from probes.core.faces import lazy_exports

_NAMES = {
    "Topology": "topologies.topology",
    "Group": "topologies.topology",
    "Kind": "topologies.topology",
    "Component": "topologies.topology",
    "load_topology": "topologies.load",
    "open_topology": "topologies.bundled",
    "resolve": "topologies.bundled",
    "read_runs": "topologies.bundled",
    "load_example": "topologies.bundled",
    "example_names": "topologies.bundled",
    "EXAMPLES": "topologies.bundled",
    "apply_changes": "topologies.edit",
    "parse_change": "topologies.edit",
    "describe_system": "topologies.described.mlperf",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)
