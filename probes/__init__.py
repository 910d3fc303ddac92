"""The base layer of iobound: units, measured values and the readers of what tools print."""

__project__ = "iobound"
__version__ = "0.1.0"
