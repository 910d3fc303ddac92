"""Bottleneck models: the ceiling a workload can reach on a topology, and which component binds."""

__project__ = "iobound"
