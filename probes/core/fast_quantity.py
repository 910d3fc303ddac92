"""pint's Quantity, compared and hashed with pint's conversion factor looked up once per pair of units.

pint converts both sides of every ``<``, ``==`` and ``hash`` anew (a quarter of judging a whole io500 list). A number
in units of one registry converts as pint converts it, magnitude × factor, so the factor found once gives pint's very
digits and answers; anything else (arrays, offsets such as °C, zeros, units of other dimensions) goes to pint itself.
"""

from __future__ import annotations

import functools

__all__ = ["fast_quantity_class"]

_NUMBERS = (int, float)


def fast_quantity_class(registry, base: type) -> type:
    """A subclass of ``base`` (the registry's Quantity) whose comparisons and hash take the fast way where they can."""

    @functools.lru_cache(maxsize=1024)
    def factor(source, target) -> float | int | None:
        """pint's own factor from units ``source`` to ``target`` (an int where pint's is: 8 bits a byte, exact for any
        integer); None for no scaling alone (an offset) or none at all."""
        try:
            if registry.convert(0.0, source, target) != 0:
                return None
        except Exception:  # not of one dimension: pint says so its own way
            return None
        found = registry._get_conversion_factor(source, target)
        return None if isinstance(found, Exception) else found

    @functools.lru_cache(maxsize=1024)
    def root(units):
        return registry._get_root_units(units)[1]

    @functools.lru_cache(maxsize=1024)
    def based(units):
        made = base(1.0, units).to_base_units()
        return made._units, made.units, made.dimensionless

    def number(q) -> bool:
        return type(q._magnitude) in _NUMBERS

    class Quantity(base):
        def compare(self, other, op):
            if type(other) is type(self) and number(self) and number(other):
                if _same(self._units, other._units):
                    return op(self._magnitude, other._magnitude)
                mine, theirs = root(self._units), root(other._units)
                ours = (_to(self, mine), _to(other, theirs)) if _same(mine, theirs) else (None, None)
                if None not in ours:
                    return op(*ours)
            return base.compare(self, other, op)

        def __eq__(self, other):
            if type(other) is type(self) and number(self) and number(other) and not (
                    self._magnitude == 0 and other._magnitude == 0):
                if _same(self._units, other._units):
                    return self._magnitude == other._magnitude
                if _same(root(self._units), root(other._units)) and factor(self._units, other._units) is not None:
                    return _to(self, other._units) == other._magnitude
            return base.__eq__(self, other)

        def __hash__(self):
            if not number(self):
                return base.__hash__(self)
            units, unit, dimensionless = based(self._units)
            magnitude = _to(self, units)
            if magnitude is None:
                return base.__hash__(self)
            return hash(magnitude) if dimensionless else hash((type(self), magnitude, unit))

    def _to(q, units):
        """``q``'s magnitude in ``units`` as pint's convert gives it (unchanged between equal units); None for an offset."""
        if _same(q._units, units):
            return q._magnitude
        found = factor(q._units, units)
        return None if found is None else q._magnitude * found

    def _same(units, other) -> bool:
        """Whether two containers of units are equal: at once where they are one (a unit parsed once), as most are."""
        return units is other or units == other

    Quantity.__name__ = Quantity.__qualname__ = base.__name__
    Quantity.__module__ = base.__module__
    return Quantity
