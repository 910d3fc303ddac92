"""What only some tools report about a run, as typed records a Run carries beside its free-form tags.

A Darshan log records a job's counters (:class:`Job`), DLIO a training run's accelerator utilisation
(:class:`Training`) or a checkpoint's size (:class:`Checkpoint`), and io500, IOR or a Darshan log may state
how many processes ran without saying how they spread over nodes (:class:`Placement`). Sizes and times are
quantities, counts ints; what a tool did not record is None.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING

from probes.core.units import quantity_json

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Placement", "Lustre", "Job", "Caching", "Training", "Checkpoint", "record_json"]


@dataclass(frozen=True, slots=True)
class Placement:
    """The processes a result states where it may not say how they spread over nodes (io500's procs, IOR's tasks
    that do not divide, a Darshan log's, DLIO's accelerators without hosts), and how check placed them.

    >>> Placement(0)
    Traceback (most recent call last):
    ...
    ValueError: A placement's processes must be a whole number of at least 1. Got 0 instead.
    """

    processes: int
    placed: str | None = None

    def __post_init__(self):
        if self.processes < 1:
            raise ValueError(f"A placement's processes must be a whole number of at least 1. Got {self.processes!r} instead.")


@dataclass(frozen=True, slots=True)
class Lustre:
    """The job's files the LUSTRE module recorded: their count, distinct stripe sizes and counts (ascending) and
    the OST indices they were striped over (ascending; empty where their data is on the MDT or released)."""

    files: int
    stripe_sizes: tuple[Quantity, ...]
    stripe_counts: tuple[int, ...]
    osts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Job:
    """What a Darshan log records of a job (``job_id`` to ``lustre``) and of the module one run is (the rest).

    ``io_time`` is darshan-util's ``agg_time_by_slowest`` (the time the run's sample divides by); ``read_time``,
    ``write_time`` and ``meta_time`` are summed over all processes, ``meta_time_by_slowest`` the slowest
    process's in unique files. Counters the module does not record (``opens`` ... ``syncs``, the alignment) are
    None. ``access_sizes_read`` and ``_write`` are requests per Darshan size bin, ``(bin, count)`` in the bins'
    order, empty where the module records no histogram; ``common_access_sizes`` are Darshan's most frequent
    exact request sizes, ``(bytes, count)``. The file categories: ``shared_files`` are shared across processes
    wholly or partly, ``unique_files`` used by one process. ``stream_opens``, ``stream_stats`` and
    ``stream_meta_time`` are what of ``opens``, ``stats`` and ``meta_time`` went to the standard streams
    (Darshan's ``<STDIN>``, ``<STDOUT>``, ``<STDERR>``), which no file system serves.
    """

    job_id: int
    run_time: Quantity
    log_format: str
    lustre: Lustre | None
    module: str
    bytes_read: Quantity
    bytes_written: Quantity
    io_time: Quantity
    read_time: Quantity
    write_time: Quantity
    meta_time: Quantity
    meta_time_by_slowest: Quantity | None
    requests_read: int
    requests_written: int
    opens: int | None
    stats: int | None
    seeks: int | None
    syncs: int | None
    access_sizes_read: tuple[tuple[str, int], ...]
    access_sizes_write: tuple[tuple[str, int], ...]
    common_access_sizes: tuple[tuple[int, int], ...]
    files: int
    shared_files: int
    unique_files: int
    shared_bytes: Quantity
    unique_bytes: Quantity
    file_alignment: Quantity | None
    unaligned_requests: int | None
    stream_opens: int
    stream_stats: int
    stream_meta_time: Quantity


@dataclass(frozen=True, slots=True)
class Caching:
    """DLIO's evidence that the hosts' page cache may serve reads: its ``potential_caching`` flags (one per host,
    or one for all from DLIO before per-host lists), the most memory a host reported, each host's share of the
    data set; None where the summary states none."""

    potential_caching: tuple[bool, ...] | bool | None = None
    host_memory: Quantity | None = None
    data_per_host: Quantity | None = None


@dataclass(frozen=True, slots=True)
class Training:
    """A DLIO training run: its emulated accelerators, what each reads (batches of records, the computation time
    in between: None where no config states it), and the accelerator utilisation (AU) in percent, per epoch,
    mean and the least the benchmark requires (and where that was read), with DLIO's own verdict
    (``train_au_meet_expectation``, None where not stated)."""

    accelerators: int
    record_length: Quantity
    batch_size: int | None
    computation_time: Quantity | None
    read_threads: int | None
    files: int
    samples_per_file: int
    au_per_epoch: tuple[float, ...]
    au_mean: float
    au_minimum: float
    au_minimum_source: str
    au_expectation: str | None
    caching: Caching


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A DLIO checkpoint run: its emulated accelerators (one rank each), the whole checkpoint's size over all ranks,
    how many were written or read and whether each was fsync'ed (None where no config states it), and DLIO's cache
    evidence."""

    accelerators: int
    size: Quantity
    checkpoints: int | None
    fsync: bool | None
    caching: Caching


def record_json(value):
    """A record (or any value inside one) as JSON values: quantities as ``{"value", "unit"}``, tuples as lists.

    >>> from probes.core.units import Q_
    >>> record_json(Placement(8))
    {'processes': 8, 'placed': None}
    >>> record_json(Caching((True, False), Q_(2, "GiB")))
    {'potential_caching': [True, False], 'host_memory': {'value': 2147483648.0, 'unit': 'B'}, 'data_per_host': None}
    """
    if is_dataclass(value):
        return {f.name: record_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [record_json(item) for item in value]
    if hasattr(value, "magnitude"):
        return quantity_json(value)
    return value
