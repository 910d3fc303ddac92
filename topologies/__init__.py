"""Descriptions of storage systems: component groups, links and capacities, loaded from TOML."""

__project__ = "iobound"
