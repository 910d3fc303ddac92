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
from typing import TYPE_CHECKING, Callable, Mapping

from probes.core.errors import InputError, IoboundError, UnitError
from probes.core.units import Q_, Metric, parse_quantity

if TYPE_CHECKING:
    from pint import Quantity

    from models.ceiling import Ceiling
    from models.predict import Model
    from probes.core.workload import Workload

__all__ = ["TABLE", "Demand", "UnknownWorkloadError", "table", "known", "entry", "demand", "Feeding", "workload",
           "feed", "checkpoint", "Checkpoint", "BINDS"]

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
    return entry(model, accelerator, extra=extra).per_accelerator * _checked(count, au)


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


# -- the accelerator as a workload on a topology -------------------------------------------------------------------

# What each layer of the model is, said as a buyer says it.
BINDS = {"client NICs": "the client NICs", "client throughput": "the clients", "network fabric": "the network",
         "links": "the network links", "server NICs": "the servers (their NICs)",
         "server throughput": "the servers", "server cache": "the servers' caches", "devices": "the drives",
         "device IOPS": "the drives' IOPS", "requests in flight": "the per-client read threads (requests in flight)"}
# No search beyond this many accelerators: a million emulated accelerators is past any system described.
_MOST = 10**6


@dataclass(frozen=True)
class Feeding:
    """How many accelerators of ``demand`` a topology feeds at AU ``au``, with every range at either end.

    ``needed`` is what ``count`` accelerators read (None without a count) and ``ceiling`` the topology's
    ceiling for them; ``most``/``least`` the most accelerators fed with every range at its most / least
    favourable end, and ``limit``/``limit_low`` the ceilings at one more than that, whose binding layers
    say what stops the next accelerator.
    """

    demand: Demand
    au: float
    count: int | None
    needed: Quantity | None
    ceiling: Ceiling | None
    most: int
    least: int
    limit: Ceiling
    limit_low: Ceiling
    read_threads: int | None

    @property
    def per_accelerator(self) -> Quantity:
        """What one accelerator reads at the required AU."""
        return self.demand.per_accelerator * self.au

    def binds(self, low: bool = False) -> str:
        """What stops one more accelerator, in words: the binding layers at ``most + 1`` (``least + 1`` if ``low``)."""
        ceiling = self.limit_low.low or self.limit_low if low else self.limit
        return ", ".join(BINDS.get(layer, layer) for layer in ceiling.binding_layers)


def workload(demand: Demand, count: int, nodes: int | None, read_threads: int | None = None) -> Workload:
    """``count`` emulated accelerators as a storage workload: one process each, reading one sample at a time.

    Spread over ``nodes`` client nodes (None: all of them, concurrency unknown). With ``read_threads``
    (DLIO's reader.read_threads per process) the samples are read in shuffled order with that many
    requests in flight per process, so Little's law bounds them; without, reads count as buffered
    sequential, which no time per request bounds.
    """
    from probes.core.workload import Access, Operation, Workload

    used = None if nodes is None else max(1, min(count, nodes))
    ppn = -(-count // used) if used else 1
    if read_threads is None:
        return Workload(Operation.READ, demand.record_length, nodes=used, ppn=ppn)
    return Workload(Operation.READ, demand.record_length, nodes=used, ppn=ppn, queue_depth=read_threads,
                    access=Access.RANDOM)


def feed(model: Model, demand: Demand, count: int | None = None, *, au: float | None = None,
         read_threads: int | None = None, clients: tuple[str, ...] | None = None) -> Feeding:
    """How many ``demand`` accelerators the model's topology feeds at ``au`` (the entry's minimum AU by default).

    The most accelerators N with ``au x N x per_accelerator`` at or under the ceiling of N of them, at
    either end of the topology's ranges: the demand grows linearly in N, the ceiling no faster once every
    client node reads (its layers are fixed, and the requests in flight grow with N as the demand does), so
    the accelerators fed are a prefix of 1, 2, ... and a doubling search followed by bisection finds its end.

    Raises
    ------
    ValueError
        If ``count`` or ``read_threads`` is not a whole number of at least 1, or ``au`` is not in (0, 1].
    TopologyError
        If ``clients`` names no client group of the topology.
    """
    au = demand.min_au if au is None else au
    _checked(1 if count is None else count, au)
    if read_threads is not None and (isinstance(read_threads, bool) or not isinstance(read_threads, int) or read_threads < 1):
        raise ValueError(f"The read threads must be a whole number of at least 1. Got {read_threads!r} instead.")
    names, counts = model.nodes(workload(demand, 1, None), clients)
    nodes = counts[names[0]] if len(names) == 1 else None
    per = (demand.per_accelerator * au).m_as("B/s")
    ceilings: dict[int, Ceiling] = {}

    def ceiling(n: int) -> Ceiling:
        if n not in ceilings:
            ceilings[n] = model.ceiling(workload(demand, n, nodes, read_threads), names, caches=False)
        return ceilings[n]

    def most(end: Callable[[Ceiling], Quantity]) -> int:
        def fed(n: int) -> bool:
            return n * per <= end(ceiling(n)).m_as("B/s") * (1 + 1e-9)
        if not fed(1):
            return 0
        low, high = 1, 2
        while high <= _MOST and fed(high):
            low, high = high, high * 2
        if high > _MOST:
            return _MOST
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if fed(middle) else (low, middle)
        return low

    best = most(lambda c: c.value)
    least = most(lambda c: c.least)
    asked = ceiling(count) if count is not None else None
    needed = demand.per_accelerator * (count * au) if count is not None else None
    return Feeding(demand, au, count, needed, asked, best, least, ceiling(best + 1), ceiling(least + 1), read_threads)


def _checked(count: int, au: float) -> float:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"The number of accelerators must be a whole number of at least 1. Got {count!r} instead.")
    if isinstance(au, bool) or not isinstance(au, (int, float)) or not 0 < au <= 1:
        raise ValueError(f"The accelerator utilisation must be a fraction above 0 and at most 1 (0.9 for 90 %). "
                         f"Got {au!r} instead.")
    return count * au


@dataclass(frozen=True)
class Checkpoint:
    """Writing (and reading back) a checkpoint of ``size`` from ``count`` ranks: each direction's ceiling and time.

    ``write``/``read`` are the ceilings; the times are the size over them, the shortest with every range
    at its most favourable end, the longest at its least.
    """

    size: Quantity
    count: int
    write: Ceiling
    read: Ceiling

    @staticmethod
    def _times(size: Quantity, ceiling: Ceiling) -> tuple[Quantity, Quantity]:
        return (size / ceiling.value).to("s"), (size / ceiling.least).to("s")

    @property
    def write_time(self) -> tuple[Quantity, Quantity]:
        return self._times(self.size, self.write)

    @property
    def read_time(self) -> tuple[Quantity, Quantity]:
        return self._times(self.size, self.read)


def checkpoint(model: Model, size: Quantity, count: int, *, clients: tuple[str, ...] | None = None) -> Checkpoint:
    """The time ``count`` ranks (one per accelerator) take to write a checkpoint of ``size`` in all, and to read it.

    Each rank writes its shard in large buffered sequential requests (DLIO's checkpointing, whose "GB" is
    GiB): the ceiling is the workload's bandwidth over ``count`` processes spread over the client nodes, and
    the time the size over it. The write pays the servers' write cost (replicas, parity) as any write does.

    Raises
    ------
    ValueError
        If ``count`` is not a whole number of at least 1.
    """
    from probes.core.units import Metric, require
    from probes.core.workload import Operation, Workload

    _checked(count, 1.0)
    require(size, Metric.SIZE, what="The checkpoint size", positive=True)
    names, counts = model.nodes(Workload(Operation.WRITE, None), clients)
    nodes = max(1, min(count, counts[names[0]])) if len(names) == 1 else None
    ppn = -(-count // nodes) if nodes else 1
    write, read = (model.ceiling(Workload(op, None, nodes=nodes, ppn=ppn, data_set=size), names, caches=False)
                   for op in (Operation.WRITE, Operation.READ))
    return Checkpoint(size, count, write, read)
