"""The storage bandwidth an emulated accelerator demands in MLPerf Storage training, per model and accelerator.

DLIO stands in for an accelerator by sleeping ``computation_time`` per batch, so one accelerator at
100 % accelerator utilisation (AU) reads ``batch_size x record_length`` bytes every
``computation_time`` seconds, and N accelerators at AU ``a`` read ``a x N`` times that. The figures
per model and accelerator are data, not code: ``accelerators.toml`` beside this module, each entry
with the configs that state it; a user's file of the same form adds entries or replaces them.

The table is read once, when first asked for; importing this module reads nothing.

>>> round(demand("unet3d", "h100", 8, au=0.9).m_as("GiB/s"), 2)
21.3
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from probes.core.errors import InputError, IoboundError, UnitError
from probes.core.units import Q_, Metric, parse_quantity

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["TABLE", "Demand", "UnknownWorkloadError", "table", "known", "entry", "demand"]

TABLE = Path(__file__).with_name("accelerators.toml")
_KEYS = {"record_length", "batch_size", "computation_time", "min_au", "samples_per_file", "source", "note"}
_REQUIRED = ("record_length", "batch_size", "computation_time", "min_au", "source")


class UnknownWorkloadError(IoboundError, LookupError):
    """Raised when the table has no entry for a model, or for an accelerator of it; the message lists those it has."""


@dataclass(frozen=True, slots=True)
class Demand:
    """What one emulated accelerator of ``model`` reads: ``batch_size`` records of ``record_length`` every
    ``computation_time``; ``min_au`` is the least mean AU (a fraction) a run must reach."""

    model: str
    accelerator: str
    record_length: Quantity
    batch_size: int
    computation_time: Quantity
    min_au: float
    samples_per_file: int | None
    source: str
    note: str = ""

    @property
    def per_accelerator(self) -> Quantity:
        """The bandwidth one accelerator reads at 100 % AU, in B/s."""
        return Q_(self.batch_size * self.record_length.m_as("B") / self.computation_time.m_as("s"), "B/s")


@functools.cache
def _bundled() -> dict[tuple[str, str], Demand]:
    return _entries(TABLE.read_text(encoding="utf-8"), str(TABLE))


@functools.cache
def _extended(path: str) -> dict[tuple[str, str], Demand]:
    from probes.core.inputs import read_input

    return {**_bundled(), **_entries(read_input(path, what="the accelerator table"), path)}


def table(extra: str | Path | None = None) -> Mapping[tuple[str, str], Demand]:
    """Every entry, by (model, accelerator): the bundled table, with ``extra`` (a file of the same form) on top.

    Raises
    ------
    InputError
        If a file cannot be read, is not TOML, or an entry lacks a field, has one iobound does not know,
        or a value of the wrong kind; the message names the file and ``[model.accelerator].field``.
    """
    return _bundled() if extra is None else _extended(str(extra))


def known(extra: str | Path | None = None) -> dict[str, tuple[str, ...]]:
    """The models of the table, each with its accelerators.

    >>> known()["unet3d"]
    ('v100', 'a100', 'h100', 'b200')
    """
    models: dict[str, tuple[str, ...]] = {}
    for model, accelerator in table(extra):
        models[model] = models.get(model, ()) + (accelerator,)
    return models


def entry(model: str, accelerator: str, *, extra: str | Path | None = None) -> Demand:
    """The entry for ``model`` on ``accelerator`` (names matched without regard to case).

    Raises
    ------
    UnknownWorkloadError
        If the table has no such model, or no such accelerator for it; the message lists what it has.
    """
    name, kind = str(model).strip().lower(), str(accelerator).strip().lower()
    models = known(extra)
    if name not in models:
        listing = "; ".join(f"{m} ({', '.join(a)})" for m, a in models.items())
        raise UnknownWorkloadError(f"The model must be one of: {listing}. Got {model!r} instead.")
    if kind not in models[name]:
        raise UnknownWorkloadError(f"The accelerator of model {name!r} must be one of: {', '.join(models[name])}. "
                                   f"Got {accelerator!r} instead.")
    return table(extra)[name, kind]


def demand(model: str, accelerator: str, count: int = 1, au: float = 1.0, *,
           extra: str | Path | None = None) -> Quantity:
    """The bandwidth ``count`` emulated accelerators read at accelerator utilisation ``au``, in B/s.

    ``au x count x batch_size x record_length / computation_time``: MLPerf Storage's own definition
    of AU read backwards. Pass ``entry(...).min_au`` for the least a passing run reads.

    Raises
    ------
    UnknownWorkloadError
        If the table has no such model or accelerator.
    ValueError
        If ``count`` is not a whole number of at least 1, or ``au`` is not above 0 and at most 1.

    Examples
    --------
    >>> round(demand("resnet50", "h100").m_as("MB/s"), 1)
    204.8
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"The number of accelerators must be a whole number of at least 1. Got {count!r} instead.")
    if isinstance(au, bool) or not isinstance(au, (int, float)) or not 0 < au <= 1:
        raise ValueError(f"The accelerator utilisation must be a fraction above 0 and at most 1 (0.9 for 90 %). "
                         f"Got {au!r} instead.")
    return entry(model, accelerator, extra=extra).per_accelerator * (count * au)


def _entries(text: str, source: str) -> dict[tuple[str, str], Demand]:
    import tomllib

    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise InputError(source, "", f"expected a TOML table of [model.accelerator] entries; {exc}") from None
    entries = {}
    for model, accelerators in document.items():
        if not isinstance(accelerators, dict):
            raise InputError(source, model, "expected [model.accelerator] tables; found a value")
        for accelerator, body in accelerators.items():
            where = f"[{model}.{accelerator}]"
            if not isinstance(body, dict):
                raise InputError(source, where, "expected a table of fields; found a value")
            entries[model.lower(), accelerator.lower()] = _entry(model.lower(), accelerator.lower(), body, source, where)
    return entries


def _entry(model: str, accelerator: str, body: dict, source: str, where: str) -> Demand:
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        raise InputError(source, f"{where}.{unknown[0]}", f"expected one of {', '.join(sorted(_KEYS))}")
    missing = [key for key in _REQUIRED if key not in body]
    if missing:
        raise InputError(source, f"{where}.{missing[0]}", "expected this field; it is missing")
    try:
        record = parse_quantity(body["record_length"], Metric.SIZE, what=f"{where}.record_length", positive=True)
        time = parse_quantity(body["computation_time"], Metric.LATENCY, what=f"{where}.computation_time", positive=True)
    except UnitError as exc:
        raise InputError(source, where, str(exc)) from None
    batch = _count(body["batch_size"], f"{where}.batch_size", source)
    per_file = None if "samples_per_file" not in body else _count(body["samples_per_file"], f"{where}.samples_per_file", source)
    au = body["min_au"]
    if isinstance(au, bool) or not isinstance(au, (int, float)) or not 0 < au <= 1 or math.isnan(au):
        raise InputError(source, f"{where}.min_au", f"expected a fraction above 0 and at most 1 (0.9 for 90 %); found {au!r}")
    for key in ("source", "note"):
        if not isinstance(body.get(key, ""), str):
            raise InputError(source, f"{where}.{key}", f"expected text; found {body[key]!r}")
    return Demand(model, accelerator, record, batch, time, float(au), per_file, body["source"], body.get("note", ""))


def _count(value, where: str, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(source, where, f"expected a whole number of at least 1; found {value!r}")
    return value
