"""A package's face: the names scripts and notebooks use, imported on first use (PEP 562) so a face costs no start-up."""

from __future__ import annotations

import importlib
from typing import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each of ``names`` (name -> module) is imported when first asked for."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(names[name]), name)
        namespace[name] = value  # asked once: later look-ups find it without coming here
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
