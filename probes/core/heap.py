"""What a batch makes, kept out of the garbage collector's walks while it runs (gc.freeze), and given back at its end.

Each full collection walks every object alive. A batch that keeps what it makes (a sweep's ceilings, a list's
submissions) and makes next to no cyclic garbage spent a fifth to a third of its CPU there, walking the same objects
again each time the heap grew by a quarter. Set aside, they are still freed by their reference counts as ever.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Callable, Iterator

__all__ = ["set_aside"]


@contextlib.contextmanager
def set_aside() -> Iterator[Callable[[], None]]:
    """Within, ``keep()`` sets every object alive aside from the collector's walks (gc.freeze); all are given back at
    the end, or when left part way. A no-op where some are set aside already: by the process itself, or by a batch
    around this one, which gives them back."""
    if gc.get_freeze_count():
        yield _nothing
        return
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()


def _nothing() -> None:
    """What ``keep`` does where the objects are not this batch's to set aside."""
