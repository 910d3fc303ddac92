"""Operational analysis of a closed queueing network: how throughput grows with the requests in flight.

N requests (nodes × processes per node × queue depth) circulate: each visits every
:class:`Station` once, one member of it chosen evenly, then spends the think time Z
(network round trip, fixed per-request overheads) in a delay that does not queue.
:func:`bounds` brackets the throughput X(N) from the demands alone; :func:`mva` gives
it exactly for n = 1..N, :func:`schweitzer` approximately for one large N.
Times are in seconds, throughputs in requests per second (Lazowska et al.,
"Quantitative System Performance", ch. 5-6).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from models.ceiling import TIE

if TYPE_CHECKING:  # numpy loads with the first analysis: a prediction builds stations, and the knee needs none
    import numpy as np

__all__ = ["Station", "Bounds", "Curve", "bounds", "mva", "schweitzer", "MVA_LIMIT"]

# Exact MVA steps through every population up to N (~7 µs each, ~1.5 s at the limit); beyond this, use schweitzer().
MVA_LIMIT = 200_000


@dataclass(frozen=True)
class Station:
    """``members`` identical queues (each its own queue, not a multi-server one); alone, a request needs ``service`` s at one."""

    name: str
    service: float
    members: int = 1

    def __post_init__(self):
        if not _real(self.service) or not math.isfinite(self.service) or self.service < 0:
            raise ValueError(f"station {self.name!r}: service must be a finite number of seconds >= 0. Got {self.service!r} instead.")
        if not _whole(self.members) or self.members < 1:
            raise ValueError(f"station {self.name!r}: members must be a whole number >= 1. Got {self.members!r} instead.")

    @property
    def demand(self) -> float:
        """Seconds of work one request brings to each member on average: service / members."""
        return self.service / self.members


@dataclass(frozen=True)
class Bounds:
    """What the demands alone say about throughput X(N) (requests/s) and response time R(N) (s) at population N."""

    population: int
    total_demand: float  # D: the time one request needs when it meets no queue (sum of services)
    think: float  # Z
    max_demand: float  # D_max: the largest demand on one queue
    queues: int  # K: every member counts as a queue
    bottleneck: tuple[str, ...]  # the stations whose members carry D_max (none when D_max = 0)
    upper: float  # X(N) <= min(N/(D+Z), 1/D_max): no queueing, or the busiest queue always busy
    lower: float  # X(N) >= N/(N*D + Z): every request queues behind all the others
    balanced_upper: float  # X(N) <= the same system with its demand spread evenly over the K queues
    balanced_lower: float  # X(N) >= the same system with D spread over D/D_max queues of D_max each
    knee: float  # N* = (D+Z)/D_max: where the two asymptotes meet; beyond it, more requests only queue

    @property
    def response_lower(self) -> float:
        """R(N) >= max(D, N*D_max - Z, balanced): Little's law applied to :attr:`balanced_upper`."""
        return self.population / self.balanced_upper - self.think

    @property
    def response_upper(self) -> float:
        """R(N) <= the balanced pessimistic bound (below N*D): Little's law applied to :attr:`balanced_lower`."""
        return self.population / self.balanced_lower - self.think


@dataclass(frozen=True, eq=False)
class Curve:
    """Throughput (requests/s) and response time (s) at each population, and each station's load per member.

    ``queue`` and ``utilisation`` have one row per population and one column per station.
    """

    stations: tuple[Station, ...]
    think: float
    population: np.ndarray
    throughput: np.ndarray
    response: np.ndarray
    queue: np.ndarray  # mean requests at (in service or waiting for) one member
    utilisation: np.ndarray  # busy fraction of one member: X * demand


def bounds(stations: Sequence[Station], population: int, think: float = 0.0) -> Bounds:
    """Asymptotic and balanced-job bounds on throughput at ``population`` requests in flight, from the demands alone.

    >>> b = bounds([Station("server", 0.01, members=5), Station("disk", 0.008, members=2)], 10, think=0.001)
    >>> round(b.upper), b.bottleneck, round(b.knee, 2)
    (250, ('disk',), 4.75)
    """
    stations, demand, members = _network(stations, population, think)
    n, z = population, float(think)
    total, most = float(members @ demand), float(demand.max())
    queues = int(members.sum())
    ceiling = 1 / most if most > 0 else math.inf
    optimistic = n / (total + z + (n - 1) * (total / queues) * total / (total + z))
    return Bounds(
        population=n, total_demand=total, think=z, max_demand=most, queues=queues,
        bottleneck=tuple(s.name for s, d in zip(stations, demand) if most > 0 and d >= most * (1 - TIE)),
        upper=min(n / (total + z), ceiling), lower=n / (n * total + z),
        balanced_upper=min(optimistic, ceiling),
        balanced_lower=n / (total + z + (n - 1) * most * n * total / (n * total + z)),
        knee=(total + z) / most if most > 0 else math.inf)


def mva(stations: Sequence[Station], population: int, think: float = 0.0) -> Curve:
    """Exact mean value analysis for every population 1..N, one step per population, all members of a station alike.

    Raises ValueError beyond :data:`MVA_LIMIT`, where :func:`schweitzer` answers for one N instead.
    """
    import numpy as np

    stations, demand, members = _network(stations, population, think)
    if population > MVA_LIMIT:
        raise ValueError(f"population {population} is beyond exact MVA's limit of {MVA_LIMIT:,} (it steps through every "
                         f"population up to N); use schweitzer() for an approximate answer at this population")
    throughput, response = np.empty(population), np.empty(population)
    queue = np.empty((population, len(stations)))
    q = np.zeros(len(stations))
    for i in range(population):
        residence = demand + demand * q  # at one member, whose queue the request finds as with one request fewer
        r = response[i] = float(members @ residence)
        x = throughput[i] = (i + 1) / (think + r)
        q = queue[i] = x * residence
    return _curve(stations, think, np.arange(1, population + 1), throughput, response, queue, demand)


def schweitzer(stations: Sequence[Station], population: int, think: float = 0.0, *,
               tol: float = 1e-12, max_iter: int = 200) -> Curve:
    """Bard–Schweitzer approximate MVA at the single ``population``: cheap at any N, within about 7% of exact MVA (worst near the knee).

    It takes a queue seen on arrival to be (N-1)/N of the mean queue. Its fixed point solves
    N = X*Z + sum(members * Q(X)) with Q = X*d / (1 - X*d*(N-1)/N), increasing in X, so it is
    found by bracketed root finding to relative tolerance ``tol`` in at most ``max_iter`` steps.
    """
    import numpy as np

    stations, demand, members = _network(stations, population, think)
    n, share = population, (population - 1) / population
    known = bounds(stations, population, think)

    def queued(x: float) -> np.ndarray:
        return x * demand / (1 - share * x * demand)

    def excess(x: float) -> float:  # requests the network would hold at throughput x, beyond N
        return x * think + float(members @ queued(x)) - n

    hi = known.upper  # excess(hi) >= 0 in exact arithmetic; <= 0 here means the root is hi, to rounding
    from scipy.optimize import brentq  # only a fit of the Schweitzer point needs a root finder

    x = hi if excess(hi) <= 0 else brentq(excess, 0.0, hi, xtol=tol * known.lower, rtol=tol, maxiter=max_iter)
    q = queued(x)
    response = float((members * demand) @ (1 + share * q))
    return _curve(stations, think, np.array([n]), np.array([x]), np.array([response]), q[None, :], demand)


def _curve(stations, think, population, throughput, response, queue, demand) -> Curve:
    utilisation = throughput[:, None] * demand
    return Curve(stations, float(think), population, throughput, response, queue, utilisation)


def _network(stations: Sequence[Station], population: int, think: float) -> tuple[tuple[Station, ...], np.ndarray, np.ndarray]:
    """Check what every analysis takes; the stations, their demands per member and their member counts."""
    import numpy as np

    stations = tuple(stations)
    if not stations:
        raise ValueError("a queueing network needs at least one station")
    names = [s.name for s in stations]
    if len(set(names)) < len(names):
        raise ValueError(f"station names must be unique; repeated: {', '.join(sorted({n for n in names if names.count(n) > 1}))}")
    if not _whole(population) or population < 1:
        raise ValueError(f"population (requests in flight) must be a whole number >= 1. Got {population!r} instead.")
    if not _real(think) or not math.isfinite(think) or think < 0:
        raise ValueError(f"think time must be a finite number of seconds >= 0. Got {think!r} instead.")
    demand = np.array([s.demand for s in stations], dtype=float)
    if think == 0 and not demand.any():
        raise ValueError("every station has zero service and the think time is zero: throughput is unbounded")
    return stations, demand, np.array([s.members for s in stations], dtype=float)


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _whole(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
