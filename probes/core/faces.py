"""A package's face: the names scripts and notebooks use, imported on first use (PEP 562) so a face costs no start-up."""

from __future__ import annotations

import importlib
from typing import Callable, Iterable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, Iterable[str]]) -> tuple[Callable[[str], object],
                                                                            Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name of ``exports`` (module -> the names it gives) is
    imported from its module when first asked for."""
    namespace = importlib.import_module(package).__dict__
    names = {name: module for module, given in exports.items() for name in given}

    def __getattr__(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(names[name]), name)
        namespace[name] = value  # asked once: later look-ups find it without coming here
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
