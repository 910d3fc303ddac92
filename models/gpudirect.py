"""The ceilings of the two paths into a GPU's memory, GPUDirect (peer to peer) and the bounce through host memory,
each with the hop that binds it; and measured runs (gdsio's) placed against them.

A path carries no more than its slowest hop, at each end of the hops' ranges. A rate measured through a path is
one each of its hops carried: it raises the least that hop can be (a bounce run at 22 GB/s says the NIC's and the
GPU's links carry 22 GB/s, which the direct path crosses too), never its most, unless that most is only the fastest
figure published (peer traffic across a CPU), not a link's rate: then a faster run is news, not an error. The paths
are ordered only where one's most is below the other's least: the figures alone then decide which is faster.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

from probes.core.units import Q_, Metric, format_quantity
from probes.core.workload import Operation
from models.ceiling import format_span
from topologies.topology import Capacity, Source

if TYPE_CHECKING:
    from pint import Quantity

    from probes.core.run import Run
    from topologies.described.pcie import Hop, PciePaths

__all__ = ["PathCeiling", "Placed", "GpuDirect", "predict", "PATH_NAMES"]

PATH_NAMES = {"gds": "GDS (peer to peer into GPU memory)", "bounce": "bounce (into host memory, then into the GPU)"}


@dataclass(frozen=True)
class PathCeiling:
    """One path's ceiling: between ``least`` and ``most`` over its hops' ranges, and the hops that bind at each end."""

    path: str
    hops: tuple[Hop, ...]
    least: Quantity
    most: Quantity
    binding: tuple[str, ...]
    binding_least: tuple[str, ...]

    def shown(self) -> str:
        """The ceiling as people read it: ``0.2 to 11 GB/s``, one figure where the ends meet."""
        return format_span(self.least, self.most)  # the catalogue's decimal units


@dataclass(frozen=True)
class Placed:
    """A measured run on one path (``gds`` or ``bounce``), its rate, and whether it is above the path's most."""

    run: Run
    path: str
    rate: Quantity
    above: bool


@dataclass(frozen=True)
class GpuDirect:
    """Both paths' ceilings, the runs placed against them, and which path the figures make faster (``order``:
    ``gds``, ``bounce``, or "" where the ranges overlap)."""

    pcie: PciePaths
    gds: PathCeiling
    bounce: PathCeiling
    measured: tuple[Placed, ...]
    order: str


def predict(pcie: PciePaths, runs: Sequence[Run] = ()) -> GpuDirect:
    """The GDS and bounce ceilings of ``pcie``'s paths for data read into its GPU; ``runs`` (gdsio's reads into that
    GPU, GDS or bounce) raise the least of every hop they crossed, and are placed against their path."""
    placed = [(run, path, Q_(run.summary.mean, run.unit)) for run in runs if (path := _path(run, pcie)) is not None]
    hops = {hop.what: hop for hop in (*pcie.direct, *pcie.bounce)}
    for what, hop in hops.items():
        crossed = [(rate, run) for run, path, rate in placed if what in {h.what for h in _hops(pcie, path)}]
        if crossed:
            hops[what] = _raised(hop, *max(crossed, key=lambda pair: pair[0]))
    gds = _ceiling("gds", tuple(hops[h.what] for h in pcie.direct))
    bounce = _ceiling("bounce", tuple(hops[h.what] for h in pcie.bounce))
    ceilings = {"gds": gds, "bounce": bounce}
    measured = tuple(Placed(run, path, rate, rate > ceilings[path].most) for run, path, rate in placed)
    order = "bounce" if gds.most < bounce.least else "gds" if bounce.most < gds.least else ""
    return GpuDirect(pcie, gds, bounce, measured, order)


def _hops(pcie: PciePaths, path: str) -> tuple[Hop, ...]:
    return pcie.direct if path == "gds" else pcie.bounce


def _path(run: Run, pcie: PciePaths) -> str | None:
    """The path a gdsio run took into this GPU (gds, bounce), None for another GPU, a write or a host-only run."""
    tags = dict(run.tags)
    gpu = tags.get("gpu", "")
    if run.workload is None or run.workload.operation is not Operation.READ or run.metric is not Metric.BANDWIDTH:
        return None
    if gpu and f"GPU{gpu}" != pcie.gpu.name:
        return None
    return tags.get("path") if tags.get("path") in PATH_NAMES else None


def _raised(hop: Hop, rate: Quantity, run: Run) -> Hop:
    """``hop`` with its least raised to ``rate``, measured through it: never above its most, but for a most that is
    only the fastest published (peer traffic across a CPU), which a faster measurement raises."""
    low, high = hop.capacity.ends
    if rate <= low:
        return hop
    published = hop.capacity.source.kind == "measured" and rate > high
    high = rate if published else high
    note = (f"{hop.capacity.source.note}; at least the {format_quantity(rate, unit='GB/s')} measured through "
            f"it ({run.origin})" + (", above what was published" if published else ""))
    source = Source(hop.capacity.source.kind, note)
    return replace(hop, capacity=Capacity.ranged(rate, high, Metric.BANDWIDTH, source) if rate < high
                   else Capacity(high, Metric.BANDWIDTH, source))


def _ceiling(path: str, hops: tuple[Hop, ...]) -> PathCeiling:
    least = min(h.capacity.ends[0] for h in hops)
    most = min(h.capacity.ends[1] for h in hops)
    return PathCeiling(path, hops, least, most, tuple(h.what for h in hops if h.capacity.ends[1] == most),
                       tuple(h.what for h in hops if h.capacity.ends[0] == least))
