"""The one pint registry of iobound, loaded at its first use without the libraries pint would import for nothing.

Every quantity of iobound holds a Python number: numpy's numbers meet one as Python's do (see
:mod:`probes.core.fast_quantity`), and numpy loads only for the commands that compute with arrays.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING

from probes.core.fast_quantity import fast_quantity_class

if TYPE_CHECKING:
    import pint

__all__ = ["registry", "pint_module"]


@functools.cache
def pint_module():
    """pint without dask, scipy and numpy, which pint.compat imports where installed for what iobound never asks of it:
    dask.base (half a second), scipy (``to_preferred``'s optimiser) and numpy (arrays as magnitudes: iobound's are
    Python numbers; 0.2 s of every command's start). A None in sys.modules makes pint find none of them, for its own
    import only, whether or not one is loaded already: pint is the same in every process, whatever came first."""
    kept = {name: sys.modules.get(name) for name in ("dask", "scipy", "numpy")}
    sys.modules.update(dict.fromkeys(kept))
    try:
        import pint
    finally:
        for name, module in kept.items():
            if module is None:
                del sys.modules[name]
            else:
                sys.modules[name] = module
    return pint


@functools.cache
def registry() -> pint.UnitRegistry:
    """The one registry, built at its first use from pint's own cache of its parsed definitions (ms, not 0.1 s)."""
    pint = pint_module()

    class Registry(pint.UnitRegistry):
        """pint's registry, parsing each units expression once (pint caches only single unit names): a third of a list."""

        @functools.lru_cache(maxsize=4096)  # noqa: B019 (one registry per process, never freed)
        def parse_units_as_container(self, input_string, as_delta=None, case_sensitive=None):
            return super().parse_units_as_container(input_string, as_delta, case_sensitive)

    try:
        units = Registry(cache_folder=":auto:")
    except Exception:  # no writable cache folder, or a cache file cut short by a start beside this one
        units = Registry()
    units.define("operation = [operation] = op")
    # Kernel events such as context switches: counted, but neither operations nor bytes.
    units.define("event = [event] = ev")
    units.Quantity = fast_quantity_class(units, units.Quantity)  # compared and hashed as pint does, its factors found once
    return units
