"""The example systems bundled with iobound, found by name (``lecture``) or file name."""

from __future__ import annotations

from pathlib import Path

from topologies.load import load_topology
from topologies.topology import Topology

__all__ = ["EXAMPLES", "example_path", "example_names", "load_example"]

EXAMPLES = Path(__file__).with_name("examples")


def example_names() -> list[str]:
    """File names of the bundled examples, e.g. ``lecture.toml``, ``lecture-results.csv``."""
    return sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".toml", ".csv"))


def example_path(name: str) -> Path | None:
    """The bundled file called ``name`` (with or without ``.toml``), or None."""
    for candidate in (name, f"{name}.toml"):
        if candidate in example_names():
            return EXAMPLES / candidate
    return None


def load_example(name: str) -> Topology:
    """Load a bundled topology by name; raises KeyError for an unknown name."""
    path = example_path(name)
    if path is None or path.suffix != ".toml":
        raise KeyError(f"no bundled topology {name!r}; the examples are: {', '.join(example_names())}")
    return load_topology(path)
