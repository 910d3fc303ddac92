"""Judging measured runs against predicted ceilings, and the iobound command line."""

__project__ = "iobound"
