"""The metrics iobound measures and strict parsing of "110 MiB/s", in the one pint registry (probes.core.registry).

pint treats bits and bytes as dimensionless (hgrecco/pint#593), so ``B/s`` is
compatible with ``Hz``. Every quantity is therefore tagged with a :class:`Metric`,
and :func:`require` checks both the dimension and that a bandwidth or a size is
really stated in bits or bytes. Operations get a dimension of their own, so IOPS
(``op/s``) can never pass for a bandwidth.
"""

from __future__ import annotations

import enum
import functools
import math
import re
from typing import TYPE_CHECKING, Mapping

from probes.core.errors import UnitError
from probes.core.registry import pint_module, registry

if TYPE_CHECKING:  # pint loads with the first quantity, not with this module: --help needs none
    import pint
    from pint import Quantity

__all__ = ["registry", "ureg", "Q_", "Quantity", "Metric", "parse_quantity", "parse_unit", "require", "unit_fits",
           "format_quantity", "format_percent", "format_value", "display_unit", "family_unit", "quantity_json",
           "quantity_from_json", "canonical", "magnitude_in"]


def Q_(value, unit=None) -> Quantity:
    """A quantity of the one registry: ``Q_(110, "MiB/s")``."""
    if isinstance(value, str) and unit is None:
        return _parsed(value)
    if isinstance(unit, str):  # pint would parse the text again for every quantity: a reader makes thousands
        unit = _unit(unit)
    if type(value) in (float, int) and unit is not None:
        return _made(value, getattr(unit, "_units", unit))
    return registry().Quantity(value, unit)


def _made(value: float | int, units) -> Quantity:
    """A quantity of a plain number in pint's container of units (a Unit's ``_units``, or one already), set as pint's
    constructor sets it (a number's magnitude is the number itself) without the checks that cost 20x the rest: the
    models make hundreds of thousands of quantities to judge a list."""
    cls = _quantity_class()
    if not isinstance(units, _container_class()):
        return cls(value, units)
    made = object.__new__(cls)
    made._magnitude, made._units = value, units
    return made


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> Quantity:
    """``Q_("3.5 GB/s")``, parsed once: the catalogues' figures are asked for by every description."""
    return registry().Quantity(text)


@functools.cache
def _quantity_class() -> type:
    return registry().Quantity


@functools.cache
def _container_class() -> type:
    from pint.util import UnitsContainer

    return UnitsContainer


def __getattr__(name: str):
    """``ureg`` (the registry) and ``Quantity`` (pint's class), loaded when asked for."""
    if name == "ureg":
        return registry()
    if name == "Quantity":
        return pint_module().Quantity
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Metric(enum.Enum):
    """What a number measures; its canonical unit is the one the models compute in."""

    BANDWIDTH = ("bandwidth", "B/s")
    OPERATION_RATE = ("operation rate", "op/s")
    LATENCY = ("latency", "s")
    SIZE = ("size", "B")
    EVENT_RATE = ("event rate", "ev/s")

    def __init__(self, label: str, unit: str):
        self.label = label
        self.unit = unit

    @classmethod
    def of(cls, q: Quantity) -> "Metric":
        """The metric a quantity expresses; raises UnitError if it is none of them."""
        found = _metric_of(q._units) if q._REGISTRY is registry() else next((m for m in cls if _fits(q, m)), None)
        if found is None:
            raise UnitError(f"{q:~P} is not a bandwidth, an operation rate, a latency, a size or an event rate.")
        return found


# Unit spellings whose meaning differs between tools and people: refuse to guess.
# "Mb/s" is megabit in networking but is written for megabyte in many results tables
# (the lecture's units note), and pint reads "Mb" as megabarn. "KB" is 1000 B (SI) or 1024 B (JEDEC, old fio).
_AMBIGUOUS = {
    "kb": ("kbit", "kB"), "Kb": ("kbit", "kB"), "Mb": ("Mbit", "MB"), "mb": ("Mbit", "MB"),
    "Gb": ("Gbit", "GB"), "gb": ("Gbit", "GB"), "Tb": ("Tbit", "TB"), "tb": ("Tbit", "TB"),
    "Pb": ("Pbit", "PB"), "KB": ("kB", "KiB"),
}
# Milli-bits and milli-bytes exist for pint but never in storage: a lower-case m is a typo for M.
_MILLI = {"mB": "byte", "mbit": "bit", "mbyte": "byte", "mbits": "bit"}
# Spellings that are common and unambiguous, rewritten to what pint reads.
_REWRITES = [
    (re.compile(r"(?<![A-Za-z])([kKMGT])bps\b"), lambda m: f"{m.group(1).replace('K', 'k')}bit/s"),
    (re.compile(r"(?<![A-Za-z])bps\b"), lambda m: "bit/s"),
    (re.compile(r"(?<![A-Za-z])([kKMGTP]i?B)ps\b"), lambda m: f"{m.group(1)}/s"),
    (re.compile(r"(?<![A-Za-z])GbE\b"), lambda m: "Gbit/s"),
    (re.compile(r"(?<![A-Za-z])([kKMG]?)IOPS\b", re.IGNORECASE), lambda m: f"{m.group(1).lower()}op/s"),
    (re.compile(r"(?<![A-Za-z])ops\b"), lambda m: "op"),
    (re.compile(r"(?<![A-Za-z])sec\b"), lambda m: "s"),
]
_NUMBER = re.compile(r"^\s*([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")
_WORD = re.compile(r"[A-Za-zµμ]+")


def parse_unit(text: str, *, what: str, aliases: Mapping[str, str] | None = None) -> pint.Unit:
    """Parse a unit such as ``MiB/s``, refusing ambiguous spellings unless ``aliases`` resolves them.

    Parameters
    ----------
    text : the unit as written, e.g. ``"MiB/s"``, ``"Gbit/s"``, ``"IOPS"``.
    what : names the place the unit comes from, for the error message.
    aliases : maps a unit as written to its meaning, e.g. ``{"Mb/s": "MB/s"}``; None when
        the caller offers no way to give aliases (the error then does not suggest one).

    Raises
    ------
    UnitError
        If the unit is empty, unknown, or ambiguous (``Mb/s``, ``KB``).

    Examples
    --------
    >>> parse_unit("MiB/s", what="unit")
    <Unit('mebibyte / second')>
    >>> parse_unit("Mb/s", what="unit", aliases={"Mb/s": "Mbit/s"})
    <Unit('megabit / second')>
    """
    written = text.strip()
    if aliases and written in aliases:
        written = aliases[written].strip()
    else:
        for word in _WORD.findall(written):
            if word in _AMBIGUOUS:
                bits, bytes_ = _AMBIGUOUS[word]
                hint = "" if aliases is None else f", or say which it means (--unit-alias '{written}={written.replace(word, bytes_)}')"
                raise UnitError(
                    f"The unit of {what} is ambiguous: {written!r} could mean {bits} or {bytes_}. "
                    f"Write {written.replace(word, bits)!r} or {written.replace(word, bytes_)!r} instead{hint}."
                )
            if word in _MILLI:
                raise UnitError(f"The unit of {what} is {word!r}, a thousandth of a {_MILLI[word]}; "
                                f"write {word[0].upper() + word[1:]!r} for mega.")
    if not written:
        raise UnitError(f"The unit of {what} is missing. Write it out, e.g. 'MiB/s', 'Gbit/s', 'op/s' or 'ms'.")
    for pattern, replace in _REWRITES:
        written = pattern.sub(replace, written)
    written = written.replace("μ", "µ")
    try:
        return registry().Unit(written)
    except Exception as exc:  # pint's parser raises many types (even AssertionError) for odd text
        raise UnitError(f"The unit of {what} is not one iobound knows. Got {text.strip()!r} instead.") from exc


def parse_quantity(
    text: str | int | float,
    metric: Metric | None = None,
    *,
    what: str,
    aliases: Mapping[str, str] | None = None,
    positive: bool = False,
) -> Quantity:
    """Parse ``"110 MiB/s"``, ``"1 Gbit/s"``, ``"10 GbE"``, ``"1,100 MiB/s"`` or ``"0.1 ms"``.

    A bare number is refused: its unit would be a guess. ``"10 GbE"`` is the
    Ethernet line rate, 10 Gbit/s.

    Raises
    ------
    UnitError
        If the text has no number, no unit, an ambiguous unit, or (with ``metric``) a unit of another kind.

    Examples
    --------
    >>> parse_quantity("10 GbE", Metric.BANDWIDTH, what="nic")
    <Quantity(10, 'gigabit / second')>
    """
    example = _EXAMPLE_VALUES[metric] if metric else "110 MiB/s"
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise UnitError(f"{what} must be a number with a unit, such as {example!r}. Got {text!r} instead.")
    if isinstance(text, (int, float)):
        raise UnitError(f"{what} must have a unit, such as {example!r}. Got the bare number {text!r} instead.")
    match = _NUMBER.match(text)
    if not match:
        raise UnitError(f"{what} must be a number with a unit, such as {example!r}. Got {text!r} instead.")
    number, unit_text = match.groups()
    if unit_text[:1].isdigit() or unit_text[:1] in (",", "."):
        raise UnitError(f"{what} must be a number with a unit, such as {example!r}. Got {text!r} instead.")
    value = float(number.replace(",", ""))
    if not math.isfinite(value):
        raise UnitError(f"{what} must be a finite number. Got {text!r} instead.")
    if not unit_text:
        raise UnitError(f"{what} must have a unit, such as {example!r}. Got the bare number {text!r} instead.")
    unit = parse_unit(unit_text, what=what, aliases=aliases)
    q = Q_(int(number.replace(",", "")) if number.replace(",", "").lstrip("+-").isdigit() else value, unit)
    return require(q, metric or Metric.of(q), what=what, positive=positive) if metric or positive else q


def _information(unit: pint.Unit) -> bool:
    return any(name.endswith(("byte", "bit")) for name, _ in unit._units.items())


def _fits(q: Quantity, metric: Metric) -> bool:
    if q._REGISTRY is registry():
        return _units_fit(q._units, metric)
    return _fits_units(q.units, metric)


def _fits_units(unit: pint.Unit, metric: Metric) -> bool:
    if not unit.is_compatible_with(metric.unit):
        return False
    return _information(unit) if metric in (Metric.BANDWIDTH, Metric.SIZE) else True


@functools.lru_cache(maxsize=1024)
def _units_fit(units, metric: Metric) -> bool:
    """:func:`_fits` for pint's container of a quantity's units (hashable): pint's checks once per unit."""
    return _fits_units(registry().Unit(units), metric)


@functools.lru_cache(maxsize=1024)
def _metric_of(units) -> Metric | None:
    """The metric of a quantity in pint's container of units (hashable), or None: :meth:`Metric.of` once per unit."""
    return next((metric for metric in Metric if _units_fit(units, metric)), None)


@functools.lru_cache(maxsize=1024)
def unit_fits(unit: str, metric: Metric) -> bool:
    """Whether ``unit`` (as written, e.g. ``"MiB/s"``) can state ``metric``; parsed and checked once per spelling.
    Raises pint's errors for a unit it does not know, as ``registry().Unit(unit)`` does.

    >>> unit_fits("MiB/s", Metric.BANDWIDTH), unit_fits("op/s", Metric.BANDWIDTH)
    (True, False)
    """
    return _unit(unit).is_compatible_with(metric.unit)


def require(q: Quantity, metric: Metric, *, what: str, positive: bool = False) -> Quantity:
    """Return ``q`` if it expresses ``metric`` (never negative; with ``positive``, not zero either);
    otherwise raise UnitError naming ``what``.

    Examples
    --------
    >>> require(Q_(1, "Hz"), Metric.BANDWIDTH, what="nic")
    Traceback (most recent call last):
    ...
    probes.core.errors.UnitError: nic must be a bandwidth (e.g. MiB/s or Gbit/s). Got 1 Hz instead.
    """
    pint = pint_module()

    if not isinstance(q, pint.Quantity) or not _fits(q, metric):
        shown = f"{q:~P}" if isinstance(q, pint.Quantity) else repr(q)
        raise UnitError(f"{what} must be a {metric.label} ({_EXAMPLES[metric]}). Got {shown} instead.")
    if q.magnitude < 0:
        raise UnitError(f"{what} must be a positive {metric.label}. Got {q:~P} instead.")
    if positive and q.magnitude == 0:
        raise UnitError(f"{what} must be positive. Got {q:~P} instead.")
    try:
        finite = math.isfinite(float(_magnitude_in(q, _unit(metric.unit))))
    except OverflowError:
        finite = False
    if not finite:
        raise UnitError(f"{what} is too large to compute with. Got {q:~P} instead.")
    return q


_EXAMPLE_VALUES = {
    Metric.BANDWIDTH: "110 MiB/s",
    Metric.OPERATION_RATE: "15000 op/s",
    Metric.LATENCY: "0.1 ms",
    Metric.SIZE: "1 MiB",
    Metric.EVENT_RATE: "330000 ev/s",
}
_EXAMPLES = {
    Metric.BANDWIDTH: "e.g. MiB/s or Gbit/s",
    Metric.OPERATION_RATE: "e.g. op/s or IOPS",
    Metric.LATENCY: "e.g. ms or µs",
    Metric.SIZE: "e.g. KiB or MiB",
    Metric.EVENT_RATE: "e.g. ev/s",
}

# Units figures are shown in: the smallest that keeps the number below 10,000
# (operation rates below 10 million: people say "15,000 IOPS", not "15 kIOPS").
_DISPLAY = {
    Metric.BANDWIDTH: ("MiB/s", "GiB/s", "TiB/s"),
    Metric.OPERATION_RATE: ("op/s", "Mop/s"),
    Metric.LATENCY: ("µs", "ms", "s"),
    Metric.SIZE: ("B", "KiB", "MiB", "GiB", "TiB", "PiB"),
    Metric.EVENT_RATE: ("ev/s",),
}


def format_quantity(q: Quantity, metric: Metric | None = None, unit: str | pint.Unit | None = None) -> str:
    """A figure for people, in a unit that keeps it short: whole numbers from 100 up, thousands separators.

    ``unit`` chooses the unit instead, e.g. ``q.units`` to show a figure as it was given (2 PB, not 1.78 PiB).

    >>> format_quantity(Q_(10, "Gbit/s"))
    '1,192 MiB/s'
    """
    if unit is None:
        chosen = display_unit(q, metric)
    else:
        chosen = _unit(unit) if isinstance(unit, str) else unit
    return _figure(_magnitude_in(q, chosen), chosen)


def format_percent(ratio: float) -> str:
    """``ratio`` in percent without the sign: ``25``; two digits where it would round to 0 (``0.012``) and ``<0.01``
    below that (no ``2.5e-05``), so that a share nobody reached is never shown as a bare 0."""
    if 0 < ratio < 0.0001:
        return "<0.01"
    return f"{ratio * 100:.2g}" if 0 < ratio < 0.005 else f"{ratio * 100:,.0f}"


def format_value(value: float, unit: str, shown: str | pint.Unit) -> str:
    """``format_quantity(Q_(value, unit), unit=shown)`` without building the quantity: for a table of many figures.

    >>> format_value(1536, "KiB/s", "MiB/s")
    '1.50 MiB/s'
    """
    source = _unit(unit)
    chosen = _unit(shown) if isinstance(shown, str) else shown
    if chosen._REGISTRY is not registry() or type(value) not in (int, float):
        return format_quantity(Q_(value, source), unit=chosen)
    if source._units == chosen._units:
        return _figure(value, chosen)
    factor = _scale(source._units, chosen._units)
    return _figure(value * factor if factor is not None else Q_(value, source).to(chosen).magnitude, chosen)


def _figure(value, unit: pint.Unit) -> str:
    """``value`` (in ``unit``) as :func:`format_quantity` shows it."""
    if abs(value) < 1 and value != 0:
        number = f"{value:.3g}"
    else:
        digits = 0 if abs(value) >= 100 or float(value).is_integer() else 1 if abs(value) >= 10 else 2
        number = f"{value:,.{digits}f}"
    return f"{number} {_symbol(unit)}"


def display_unit(q: Quantity, metric: Metric | None = None) -> pint.Unit:
    """The unit :func:`format_quantity` shows ``q`` in; for an axis, pass its largest value.

    >>> f"{display_unit(Q_(20, 'GB/s')):~P}"
    'GiB/s'
    """
    return _per_figure(_displayed, q, metric or Metric.of(q))


def _per_figure(find, q: Quantity, *args):
    """``find(q, *args)``, found once for each figure that is a number in units of the one registry (hashable: its
    units container, its number and the number's type, which keeps 1 and 1.0 apart): a list's review shows the same
    figures in every phase of a system."""
    if q._REGISTRY is registry() and type(q._magnitude) in (int, float):
        return _found(find, q._units, type(q._magnitude), q._magnitude, *args)
    return find(q, *args)


@functools.lru_cache(maxsize=8192)
def _found(find, units, kind: type, magnitude: float | int, *args):
    return find(_made(magnitude, units), *args)


def _displayed(q: Quantity, metric: Metric) -> pint.Unit:
    units = [_unit(u) for u in _DISPLAY[metric]]
    if metric is Metric.SIZE:  # sizes read best in the largest unit they fill: "1 MiB", "64 KiB"
        return next((u for u in reversed(units) if abs(_magnitude_in(q, u)) >= 1), units[0])
    limit = 10_000_000 if metric in (Metric.OPERATION_RATE, Metric.EVENT_RATE) else 10_000
    return next((u for u in units if abs(_magnitude_in(q, u)) < limit), units[-1])


# A unit of information in its family: bits or bytes, with a decimal (k, M, G) or a binary (Ki, Mi, Gi) prefix.
_FAMILY = re.compile(r"^(k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?(bit|B)(\W.*)?$")
_PREFIXES = {False: ("", "k", "M", "G", "T", "P", "E"), True: ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")}


def family_unit(q: Quantity) -> pint.Unit:
    """The unit of ``q``'s own family (bits or bytes, decimal or binary prefixes) in which its number is at least 1
    and under 1,000 (1,024 binary): the unit to show a figure as it was given, with the digits that mean something
    (19,792,281,596 bit/s as 19.8 Gbit/s; 75,000,000,000 B/s as 75 GB/s; 2 PB stays 2 PB). Other units are kept.

    >>> f"{family_unit(Q_(19_792_281_596, 'bit/s')):~P}"
    'Gbit/s'
    """
    return _per_figure(_family_of, q)


def _family_of(q: Quantity) -> pint.Unit:
    found = _FAMILY.match(_symbol(q.units))
    if found is None:
        return q.units
    prefix, base, rest = found.groups()
    units = [_unit(f"{p}{base}{rest or ''}") for p in _PREFIXES[bool(prefix) and prefix.endswith("i")]]
    return next((u for u in reversed(units) if abs(_magnitude_in(q, u)) >= 1), units[0])


@functools.lru_cache(maxsize=1024)
def _unit(name: str) -> pint.Unit:
    """A unit as written, parsed once: pint's parser dominates the cost of reading and formatting figures."""
    return registry().Unit(name)


# Formatting a table of thousands of figures must not cost a pint conversion per figure: pint's factor
# between two units is looked up once per pair, and a figure is then converted as pint itself does
# (magnitude x factor, the magnitude unchanged between equal units), so the digits shown are pint's.


def magnitude_in(q: Quantity, unit: str | pint.Unit):
    """``q.m_as(unit)``, with pint's factor from ``q``'s units to ``unit`` computed once per pair: the same digits."""
    return _magnitude_in(q, _unit(unit) if isinstance(unit, str) else unit)


def _magnitude_in(q: Quantity, unit: pint.Unit):
    """``q.to(unit).magnitude``, with pint's factor from ``q``'s units to ``unit`` computed once per pair."""
    magnitude = q.magnitude
    if q._REGISTRY is registry() and unit._REGISTRY is registry() and type(magnitude) in (int, float):
        if q._units is unit._units or q._units == unit._units:  # one container where both come from one parse
            return magnitude
        factor = _scale(q._units, unit._units)
        if factor is not None:
            return magnitude * factor
    return q.to(unit).magnitude


@functools.lru_cache(maxsize=1024)
def _scale(source, target) -> float | None:
    """pint's factor from units ``source`` to ``target`` (units containers); None if the conversion is no
    scaling (an offset, as from °C to K). Raises pint's DimensionalityError if they are not compatible."""
    units = registry()
    if units.Quantity(0.0, source).to(target).magnitude != 0:
        return None
    return units.Quantity(1.0, source).to(target).magnitude


def _symbol(unit: pint.Unit) -> str:
    """``f"{unit:~P}"``, formatted once per unit."""
    return _symbol_of(unit._units) if unit._REGISTRY is registry() else f"{unit:~P}"


@functools.lru_cache(maxsize=256)
def _symbol_of(units) -> str:
    return f"{registry().Unit(units):~P}"


def quantity_json(q: Quantity | None) -> dict | None:
    """A quantity for machine-readable output: ``{"value": ..., "unit": ...}`` in its metric's canonical unit.

    >>> quantity_json(Q_(1, "MiB/s"))
    {'value': 1048576.0, 'unit': 'B/s'}
    """
    if q is None:
        return None
    unit = Metric.of(q).unit
    return {"value": float(magnitude_in(q, unit)), "unit": unit}


def quantity_from_json(d: dict, metric: Metric, *, what: str) -> Quantity:
    """The inverse of :func:`quantity_json`, with the metric checked."""
    try:
        q = Q_(float(d["value"]), parse_unit(str(d["unit"]), what=what))
    except (KeyError, TypeError, ValueError) as exc:
        raise UnitError(f"{what} must be {{'value': number, 'unit': text}}. Got {d!r} instead.") from exc
    return require(q, metric, what=what)


def canonical(value: Quantity | int) -> float:
    """A count as it is, a quantity as a float in its metric's canonical unit (B/s, op/s, s, B)."""
    if isinstance(value, (int, float)):
        return float(value)
    # pint's units container (its ``_units``) is hashable and cheap; ``.units`` builds a Unit per call.
    return value.magnitude * _factor(value._units)


@functools.lru_cache(maxsize=256)
def _factor(units) -> float:
    """What one of ``units`` is in its metric's canonical unit: pint's conversion, once per unit."""
    return _scale(units, _unit(Metric.of(Q_(1.0, units)).unit)._units)
