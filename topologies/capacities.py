"""One capacity as a topology file (or a catalogue) states it: a figure within the bounds physics allows, a range,
``"unlimited"``, a table with its source and note, or a probe set's measurement; with the checks of a table's keys
that the loader shares.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probes.core.errors import InputError, TopologyError, UnitError
from probes.core.units import Metric, family_unit, format_quantity, parse_quantity
from topologies.topology import Capacity, Source

if TYPE_CHECKING:
    from pint import Quantity

    from probes.core.measurement import Measurement

__all__ = ["SOURCE_KINDS", "BOUNDS", "parse_capacity", "parse_figure", "only_keys", "string_at"]

SOURCE_KINDS = ("datasheet", "measured", "assumption", "probe")

# What physical sense allows, so that a slip of the keyboard (10^21 members, 1e300 MiB/s) is refused, not solved:
# no group above ten million members, no bandwidth above 1 EB/s nor a rate above 10^15 op/s (1 EB/s of 1-byte
# operations), no latency under a nanosecond or over an hour, no size under a byte or over a zettabyte.
BOUNDS: dict[Metric, tuple[str | None, str | None]] = {
    Metric.BANDWIDTH: (None, "1 EB/s"), Metric.OPERATION_RATE: (None, "1e15 op/s"),
    Metric.LATENCY: ("1 ns", "1 h"), Metric.SIZE: ("1 B", "1 ZB")}



def only_keys(table: dict, allowed: tuple[str, ...], source: str, where: str) -> None:
    """Refuse a key of ``table`` (at ``where``) that is not ``allowed``, naming the ones that are."""
    for key in table:
        if key not in allowed:
            place = f"{where}.{key}" if where else key
            raise TopologyError(source, place, f"unknown key {key!r}; expected one of: {', '.join(allowed)}")


def string_at(value: Any, source: str, where: str) -> str:
    """``value`` when it is a string; else an error naming ``where``."""
    if not isinstance(value, str):
        raise TopologyError(source, where, f"must be a string. Got {value!r} instead.")
    return value


def parse_capacity(value: Any, metric: Metric, source: str, where: str) -> Capacity:
    """One capacity as a file states it: a quantity, "unlimited", a table with its source, or a probe set."""
    origin = Source("unstated")
    if isinstance(value, dict) and "probe" in value:
        return _probed(value, metric, source, where)
    if isinstance(value, dict):
        only_keys(value, ("value", "range", "source", "note"), source, where)
        if ("value" in value) == ("range" in value):
            raise TopologyError(source, where, "a capacity table needs a value or a range (not both), e.g. "
                                "{ value = \"110 MiB/s\", source = \"measured\" }, { range = [\"25 Gbit/s\", \"100 Gbit/s\"], "
                                "source = \"assumption\" }, or a probe set, e.g. { probe = \"node01.json\", measurement = \"iperf3.send.p1\" }")
        kind = value.get("source", "unstated")
        if "source" in value and kind not in SOURCE_KINDS:
            raise TopologyError(source, f"{where}.source", f"must be one of {', '.join(SOURCE_KINDS)}. Got {kind!r} instead.")
        origin = Source(kind, string_at(value.get("note", ""), source, f"{where}.note"))
        if "range" in value:
            return _ranged(value["range"], metric, origin, source, f"{where}.range")
        value = value["value"]
    if value == "unlimited":
        return Capacity(None, metric, origin)
    if isinstance(value, str) and ".." in value:
        return _ranged(_span(value), metric, origin, source, where)
    return Capacity(parse_figure(value, metric, source, where), metric, origin)


def parse_figure(value: Any, metric: Metric, source: str, where: str) -> Quantity:
    """One figure of ``metric``, within :data:`BOUNDS`."""
    memory = where.endswith((".memory", ".memory.range"))  # may be none: a store in memory (tmpfs) has no cache before it
    try:
        quantity, within = (_figure if isinstance(value, str) else _figure.__wrapped__)(value, metric, not memory)
    except UnitError as exc:
        raise TopologyError(source, where, str(exc)) from exc
    if within or (memory and quantity.magnitude == 0):
        return quantity
    shown = " and ".join(f"{word} {bound}" for word, bound in zip(("at least", "at most"), BOUNDS[metric]) if bound)
    raise TopologyError(source, where, f"must be {shown}, beyond which no part is. Got {value!r} instead.")


@functools.lru_cache(maxsize=4096)
def _figure(value: Any, metric: Metric, positive: bool) -> tuple[Quantity, bool]:
    """A figure parsed, and whether it lies within BOUNDS: each text once (a list states the same in many rows)."""
    quantity = parse_quantity(value, metric, what="the value", positive=positive)
    least, most = (None if end is None else parse_quantity(end, metric, what="a bound") for end in BOUNDS[metric])
    return quantity, not ((least is not None and quantity < least) or (most is not None and quantity > most))


def _span(text: str) -> list[str]:
    """``"25..100 Gbit/s"`` as its two ends; a bare first number takes the second's unit."""
    if text.count("..") > 1:
        return [text]  # not two ends: the range's own check says so
    first, _, second = (part.strip() for part in text.partition(".."))
    bare = re.fullmatch(r"[0-9][0-9,]*(\.[0-9]+)?([eE][-+]?[0-9]+)?", first)
    unit = re.sub(r"^[0-9][0-9,]*(\.[0-9]+)?([eE][-+]?[0-9]+)?\s*", "", second)
    return [f"{first} {unit}" if bare else first, second]


def _ranged(ends: Any, metric: Metric, origin: Source, source: str, where: str) -> Capacity:
    """A capacity known only to lie between two values: ``["25 Gbit/s", "100 Gbit/s"]``."""
    if where.endswith("block_size") or where.endswith("block_size.range"):
        raise TopologyError(source, where, "a block size is what the file system uses, not a limit: state one value")
    if not (isinstance(ends, list) and len(ends) == 2):
        raise TopologyError(source, where, "a range is two values, least first, e.g. [\"25 Gbit/s\", \"100 Gbit/s\"] "
                            f"or \"25..100 Gbit/s\". Got {ends!r} instead.")
    low, high = (parse_figure(end, metric, source, where) for end in ends)
    if low > high:
        raise TopologyError(source, where, f"a range gives its least value first. Got {ends[0]!r} before {ends[1]!r}.")
    return Capacity(low, metric, origin) if low == high else Capacity.ranged(low, high, metric, origin)


def _probed(value: dict, metric: Metric, source: str, where: str) -> Capacity:
    """A capacity taken from a probe set: the mean of the named measurement, its precision in the note."""
    only_keys(value, ("probe", "measurement", "note"), source, where)
    path, name = value["probe"], value.get("measurement")
    if not isinstance(path, str) or not isinstance(name, str):
        raise TopologyError(source, where, "a probed capacity names a probe set and a measurement, "
                            "e.g. { probe = \"node01.json\", measurement = \"iperf3.send.p1\" }")
    file = Path(source).parent / path
    try:
        measurements = _probe_set(str(file), os.stat(file).st_mtime_ns)
    except OSError as exc:
        raise TopologyError(source, f"{where}.probe", f"cannot read the probe set {str(file)!r} ({exc.strerror or exc})") from None
    except InputError as exc:
        raise TopologyError(source, f"{where}.probe", f"the probe set is unusable: {exc}") from None
    if name not in measurements:
        raise TopologyError(source, f"{where}.measurement", f"{str(file)!r} has no measurement {name!r}; "
                            f"it has: {', '.join(sorted(measurements)) or 'none'}")
    measurement = measurements[name]
    if not measurement.complete:
        raise TopologyError(source, f"{where}.measurement", f"{name!r} in {str(file)!r} is from an interrupted probe run; "
                            "finish it with iobound probe --resume")
    if measurement.metric is not metric:
        raise TopologyError(source, f"{where}.measurement", f"{name!r} is a {measurement.metric.label}, "
                            f"but this capacity is a {metric.label}")
    note = f"{path}: {name}, {_precision(measurement)}"
    extra = string_at(value.get("note", ""), source, f"{where}.note")
    origin = Source("probe", f"{note}; {extra}" if extra else note)
    s = measurement.summary
    scale = measurement.value / s.mean  # the summary is in the measurement's unit
    if measurement.unstable:  # its interval is of no steady state: every value it took stands
        return Capacity.ranged(s.min * scale, s.max * scale, metric, origin)
    if s.ci_low is None or not 0 < s.ci_low < s.ci_high:  # one sample, or an interval reaching zero: the mean alone
        return Capacity(measurement.value, metric, origin)
    return Capacity.ranged(s.ci_low * scale, s.ci_high * scale, metric, origin)


@functools.lru_cache(maxsize=32)
def _probe_set(path: str, mtime_ns: int) -> dict[str, Measurement]:
    """A probe set read once per load, even when many capacities name it (re-read when the file changes)."""
    from probes.measure.probeset import read_probe_set  # only a topology that names a probe set needs the probes

    return read_probe_set(path)


def _precision(measurement: Measurement) -> str:
    s = measurement.summary
    shown = format_quantity(measurement.value, unit=family_unit(measurement.value))  # in the unit family it was measured in
    width = measurement.half_width
    if measurement.unstable:
        return f"mean {shown} of {s.n}, UNSTABLE-MACHINE ({measurement.unstable}): its least to greatest value"
    missed = "" if measurement.reached else ", short of its precision target"
    return f"mean {shown} of {s.n}" + ("" if width is None else f" (95 % CI ± {width:.1%}{missed})")
