"""The one pint registry of iobound, loaded at its first use; on a command line without the libraries pint would
import for nothing there.

Every quantity of the command line holds a Python number, and numpy loads only for the commands that compute with
arrays: there pint gets numpy where it was loaded before pint was (a report), and numpy's numbers meet a quantity alike
either way. A notebook or a script that uses iobound as a library gets pint whole: without numpy, pint's quantity of an
array forgets its unit (``Q_(array, "MiB/s").mean()`` is a bare number) and numpy's functions refuse quantities.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import types
from typing import TYPE_CHECKING

from probes.core.fast_quantity import fast_quantity_class

if TYPE_CHECKING:
    import pint

__all__ = ["registry", "pint_module"]


class _Unfound:
    """A finder on sys.meta_path that finds none of ``names`` for the thread importing pint, so that its ``import numpy``
    fails as if numpy were not installed; any other thread imports them as ever. Asked only for a library not loaded
    yet (one loaded is found in sys.modules first, and stays pint's)."""

    def __init__(self, names: tuple[str, ...]):
        self.names, self.thread = names, threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if name in self.names and threading.get_ident() == self.thread:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


_DIST_INFO = re.compile(r"([^-]+)-([^-]+)\.dist-info")  # NAME-VERSION.dist-info, as pip names it


def _version(name: str) -> str:
    """What ``importlib.metadata.version(name)`` answers, read from the name of the package's ``NAME-VERSION.dist-info``
    folder on sys.path as pip installs it, and from importlib.metadata itself where there is none."""
    for folder in sys.path:
        if (found := _installed(folder).get(_normal(name))) is not None:
            return found
    if sys.modules.get("importlib.metadata") is _METADATA:
        del sys.modules["importlib.metadata"]  # the real one, from here on
    import importlib.metadata

    return importlib.metadata.version(name)


@functools.cache
def _installed(folder: str) -> dict[str, str]:
    """The versions of the packages installed in ``folder`` (a sys.path entry), by normalised name, from the names of
    their dist-info folders; each folder listed once, as importlib.metadata lists it."""
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return {}
    return {_normal(found[1]): found[2] for found in map(_DIST_INFO.fullmatch, entries) if found}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


# What pint and the two libraries it loads (flexcache, flexparser) ask of importlib.metadata: their versions, at import.
# importlib.metadata loads email and zipfile to answer (3 % of the instructions of a check's start), so while pint loads
# this stands in for it where it is not loaded yet, as None stands in for dask.
_METADATA = types.ModuleType("importlib.metadata", "importlib.metadata's version(), as pint loads")
_METADATA.version = _version

_LEAN = threading.Event()  # set by lean(): this process is a command line


def lean() -> None:
    """Have pint load as a command line needs it (see :func:`pint_module`): asked by the command line's start, before
    its first quantity, and never by a library's user."""
    _LEAN.set()


# One thread imports pint and builds the registry, the others wait for it: functools.cache lets two threads call at once.
_LOADING = threading.RLock()


@functools.cache
def pint_module():
    """pint; on a command line (:func:`lean`) without numpy, scipy and dask, which pint.compat imports where installed
    for what the command line never asks of it: numpy (arrays as magnitudes: the command line's are Python numbers; 0.2 s
    of every command's start), scipy (``to_preferred``'s optimiser) and dask.base (half a second). pint asks whether dask
    is there with find_spec, which a finder cannot answer no: a None in sys.modules does, while pint loads (so a thread
    that imports dask in that moment is told it is absent). importlib.metadata, which pint loads only to ask its
    version, is stood in for likewise (:data:`_METADATA`)."""
    with _LOADING:
        if "pint" in sys.modules or not _LEAN.is_set():  # loaded already, or for a library's user: as pint loads
            import pint

            return pint
        unfound = _Unfound(("numpy", "scipy"))
        stand_ins = {name: module for name, module in (("dask", None), ("importlib.metadata", _METADATA))
                     if name not in sys.modules}
        sys.meta_path.insert(0, unfound)
        sys.modules.update(stand_ins)
        try:
            import pint
        finally:
            sys.meta_path.remove(unfound)
            for name, module in stand_ins.items():
                if sys.modules.get(name, 0) is module:
                    del sys.modules[name]
        return pint


@functools.cache
def registry() -> pint.UnitRegistry:
    """The one registry, built at its first use from pint's own cache of its parsed definitions (ms, not 0.1 s)."""
    with _LOADING:
        return _built()


@functools.cache
def _built() -> pint.UnitRegistry:
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
    if not pint.compat.HAS_NUMPY:  # numpy's operators hand a quantity to its own, as Python's numbers do: 2 * q, not an error
        units.Quantity.__array_ufunc__ = None
    return units
