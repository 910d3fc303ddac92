"""What Run and Measurement share: repetitions of one figure in one unit of one metric, and their summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from probes.core.stats import Summary, summarize
from probes.core.units import Q_, unit_fits

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Repeated"]


class Repeated:
    """A mixin for frozen dataclasses with ``samples``, ``unit`` and ``metric`` fields."""

    __slots__ = ()
    # The summary a tool printed when it did not print the repetitions; records that have it set a field.
    reported: Summary | None = None

    def _check(self, what: str) -> None:
        """Refuse no samples, or a unit that is not of the metric; ``what`` names the record in the message."""
        if not self.samples and self.reported is None:
            raise ValueError(f"{what} has no samples.")
        if not unit_fits(self.unit, self.metric):  # parsed once per spelling: a reader makes thousands of runs
            raise ValueError(f"{what}: unit {self.unit!r} is not a {self.metric.label}.")

    @property
    def summary(self) -> Summary:
        """Over the samples; a record without samples carries the summary its tool reported instead."""
        return self.reported if self.reported is not None else summarize(self.samples)

    @property
    def value(self) -> Quantity:
        """The mean over repetitions (the one sample if there is only one)."""
        return Q_(self.summary.mean, self.unit)
