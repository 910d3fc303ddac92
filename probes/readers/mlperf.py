"""Read DLIO / MLPerf Storage results: a run's ``summary.json``, with the DLIO configuration found beside it.

MLPerf Storage runs DLIO, which emulates accelerators: each MPI rank reads a batch, then sleeps
``computation_time`` in place of the accelerator's work. A training run gives its bandwidth and its
samples per second, with the accelerator utilisation (AU) per epoch in its training record; a checkpoint
run gives one run per direction (write, read). The run's ``config.yaml``, ``overrides.yaml`` and
``per_epoch_stats.json`` are read from the summary's folder (or its ``dlio_config/``, ``.hydra/`` or
``configs/``) when they are there, and a tag says which were found.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.inputs import read_input
from probes.core.patterns import Pattern
from probes.core.records import Caching, Checkpoint, Placement, Training
from probes.core.run import Origin, Run, distinct_labels
from probes.core.units import Q_, Metric
from probes.core.workload import MOST_TRANSFER, Operation, Workload
from probes.readers.dlio_config import Config, folder_of, positive, whole
from probes.readers.jsonfields import check, describe, field, json_object, number

__all__ = ["looks_like", "parse", "FORMAT", "DEFAULT_AU"]

# What iobound read says it reads.
FORMAT = "DLIO / MLPerf Storage summary.json (with the run's config.yaml and overrides.yaml beside it)"

# Units, from DLIO's statscounter.py (argonne-lcf/dlio_benchmark) and the corpus:
# - "train_io_mean_MB_per_second" = mean samples/s x record_length / 1024 / 1024: MiB/s, computed from the
#   nominal record length of the configuration, not from bytes read. In every run of the corpus the
#   summary's MB/s / samples/s x 2^20 is the config's record length to nine digits.
# - The checkpoint "GB" (checkpoint_size_GB, *_checkpoint_io_mean_GB_per_second) is 2^30 B: DLIO sums the
#   ranks' tensor bytes and divides by 1024^3, and its log says "GiB/second"; the size is the whole
#   checkpoint over all ranks, the duration rank 0's (Llama3-8B: 104.70 GiB in 22.61 s, 4.64 GiB/s).
# - host_memory_GB and data_size_per_host_GB are psutil's bytes / 1024^3: GiB.
TRAIN_UNIT = "MiB/s"
SAMPLE_UNIT = "ev/s"
CHECKPOINT_UNIT = "GiB/s"
_UNITS_NOTE = ("DLIO's 'MB/s' is MiB/s: samples/s x the nominal record length / 2^20, not bytes read; "
               "its 'GB' (host memory, data per host) is GiB")
CHECKPOINT_NOTE = ("DLIO's checkpoint 'GB' is GiB (2^30 B): the size is the whole checkpoint over all ranks, "
                    "the duration rank 0's")
# The least AU a run must reach where its config states no metric.au: DLIO's default (ConfigArguments.au =
# 0.90); DLIO of MLPerf Storage v0.5 compared the mean AU with a fixed 90 %.
DEFAULT_AU = 0.90
# An accelerator's utilisation: the share of the time it computed, in percent (a little over 100: rounding).
_PERCENT = {"expected": "a percentage from 0 to 100", "below": 100.000001}
# The submission-level report of v0.5 and v1.0 (report.py), up to two folders above a run's summary
# (v0.5: <workload>/run<N>/<host>/summary.json); v0.5 summaries state no hosts, but the report does.
_REPORT = "mlperf_storage_report.json"
# An accelerator named at the end of a workload (unet3d_h100, dlrm_mi355); "llama3_8b" names none.
_WORKLOAD = Pattern(r"(.+?)_([a-z]{1,3}[0-9]{2,4}[a-z]?)")
_OPENING = Pattern(r"[ \t\r\n\ufeff]*\{")
# How closely the figures DLIO prints twice must agree: it computes both from the same floats.
_SAME = 1e-6
# Sizes over durations of a checkpoint: DLIO's mean of per-checkpoint rates differs from the ratio of the
# means by the spread of the durations (under 1 % in the corpus); more than 5 % is not that.
_CHECKPOINT_SPREAD = 0.05


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like a DLIO ``summary.json``: a cheap sniff, not a validation."""
    return (_OPENING.match(text) is not None and '"num_accelerators"' in text and '"metric"' in text
            and '"num_files_train"' in text)


def parse(text: str, *, source: str) -> list[Run]:
    """The runs of one DLIO summary: training bandwidth and samples/s, and checkpoint writes and reads.

    Parameters
    ----------
    text : a DLIO ``summary.json`` (MLPerf Storage v0.5 to v3.0).
    source : the summary's path: names it in messages and origins, and the DLIO configuration is
        looked for beside it (a ``source`` that is no file's path finds none).

    Returns
    -------
    list of Run
        For training, ``"<model>[ <accelerator>] train read"`` (bandwidth in MiB/s, one sample per
        epoch: that epoch's samples/s x the record length DLIO used) and ``"... train samples"``
        (samples/s as events per second: a count of samples, not I/O operations a ceiling bounds); for checkpointing,
        ``"<model> checkpoint write"`` and ``"... checkpoint read"`` in GiB/s. Durations are the
        epochs' (``per_epoch_stats.json``) or the checkpoints' mean duration.

        A training run's figures are in its :class:`probes.core.records.Training` (the accelerators, what
        each reads, the AU per epoch, its mean and the least required, DLIO's verdict, its cache
        evidence), a checkpoint's in its :class:`probes.core.records.Checkpoint`; what a run does not
        state is None there, never guessed. Where the hosts are not stated, the accelerators are the
        run's placement. Tags (short, for tables) say the rest in words: ``model``, ``accelerator``
        (``not stated`` where none is named) and where each was read (``accelerator_source``,
        ``hosts_source``, ``record_length_source``, ``transfer_size_source``), ``spread`` where the
        accelerators do not divide over the hosts, ``host_memory_reported``, ``units``, ``found`` (the
        files read with the summary), and ``inconsistent`` where DLIO's figures disagree.

    Raises
    ------
    ToolOutputError
        One line naming the file and the field: the summary or a file beside it is not valid
        JSON/YAML, a field is missing or not a number, a count is not a whole number, the summary
        holds neither training nor checkpoint metrics, or the record length cannot be told.

    Notes
    -----
    - The record length is the one DLIO used: its MB/s over its samples/s x 2^20; the config's is
      compared with it. Where samples/s is 0, the config's is used.
    - Nodes are ``num_hosts`` (v1.0 on) or a report's ``num_client_hosts`` whose runs include this
      summary's figures (v0.5, which ran one DLIO job per host in some submissions: a summary the
      report's figures do not match states no hosts). Processes per node are the accelerators per host.
    - Per-host arrays (``host_memory_GB``, ``potential_caching``) list 0 for hosts DLIO did not collect
      from; the records hold what the hosts that reported state.
    """
    summary = json_object(text, source, "DLIO's summary.json")
    metric = field(summary, "metric", dict, "", source)
    run = _Context(summary, source)
    runs: list[Run] = []
    if "train_au_percentage" in metric or "train_throughput_samples_per_second" in metric:
        runs += run.training(metric)
    for prefix, operation in (("save", Operation.WRITE), ("load", Operation.READ)):
        if f"{prefix}_checkpoint_io_mean_GB_per_second" in metric:
            runs.append(run.checkpoint(metric, prefix, operation))
    if not runs:
        present = ", ".join(repr(k) for k in list(metric)[:6]) or "nothing"
        raise ToolOutputError(source, "metric", "expected training metrics (train_au_percentage ...) or checkpoint "
                              f"metrics (save_checkpoint_io_mean_GB_per_second ...); found {present} "
                              "(a data-generation run measures nothing)")
    return distinct_labels(runs)


def _numbers(metric: dict, key: str, source: str, **bounds) -> tuple[float, ...]:
    values = field(metric, key, list, "metric", source)
    if not values:
        raise ToolOutputError(source, f"metric.{key}", "expected one value per epoch; found an empty list")
    return tuple(number(v, f"metric.{key}[{i}]", source, **bounds) for i, v in enumerate(values))


def _mean_agrees(values: tuple[float, ...], stated: float) -> bool:
    return math.isclose(sum(values) / len(values), stated, rel_tol=_SAME, abs_tol=1e-9)


def _figure(value: float) -> str:
    """A figure as messages show it: up to 10 significant digits, no float noise (146600628, 114660.07)."""
    return f"{value:.10g}"


class _Context:
    """What every run of one summary shares: the workload's shape, the configuration and the common tags."""

    def __init__(self, summary: dict, source: str):
        self.summary, self.source = summary, source
        self.folder = folder_of(source)
        self.config = Config(self.folder)
        self.accelerators = whole(field(summary, "num_accelerators", int, "", source), "num_accelerators", source)
        self.model, self.accelerator, accelerator_source = self._names()
        self.hosts, hosts_source = self._hosts()
        self.tags: list[tuple[str, str]] = [
            ("model", self.model), ("accelerator", self.accelerator or "not stated"),
            ("accelerator_source", accelerator_source), ("hosts_source", hosts_source)]
        self.inconsistent: list[str] = []
        self.caching, self.reported = self._caching()

    def _names(self) -> tuple[str, str | None, str]:
        """The model, the accelerator its timings stand for, and where the accelerator was read."""
        workload = self.config.workload
        named = self.summary.get("model")
        named = None if named is None else check(named, str, "model", self.source)
        if workload:
            match = _WORKLOAD.fullmatch(workload)
            if match:
                return match[1], match[2], f"overrides.yaml workload={workload}"
        model = workload or self.config.model() or named or "dlio"
        why = f"not named (workload={workload})" if workload else "not named (no overrides.yaml)"
        if named is not None and "num_hosts" not in self.summary:  # a v0.5 summary
            return model, "v100", f"{why}; MLPerf Storage v0.5 timed its workloads for V100"
        return model, None, why

    def _hosts(self) -> tuple[int | None, str]:
        if "num_hosts" in self.summary:
            return whole(self.summary["num_hosts"], "num_hosts", self.source), "summary num_hosts"
        if self.folder is None:
            return None, "the summary states none (v0.5)"
        mean = self.summary.get("metric", {}).get("train_throughput_mean_samples_per_second")
        for folder in (self.folder, self.folder.parent, self.folder.parent.parent):
            if (folder / _REPORT).is_file():
                return _report_hosts(folder / _REPORT, mean)
        return None, "the summary states none (v0.5) and no report is beside it"

    def workload(self, operation: Operation, transfer_size, data_set) -> tuple[Workload, list[tuple[str, str]]]:
        """The workload (one process per accelerator), and a ``spread`` tag where they do not divide over the hosts."""
        hosts, count = self.hosts, self.accelerators
        tags = []
        if hosts and count % hosts:
            tags.append(("spread", f"{count} processes over {hosts} hosts, unevenly: ppn is the most on one host"))
        workload = Workload(operation=operation, transfer_size=transfer_size, nodes=hosts,
                            ppn=-(-count // hosts) if hosts else 1, direct=self._direct(), data_set=data_set)
        return workload, tags

    def placement(self) -> Placement | None:
        """The accelerators' processes, where the hosts they spread over are not stated."""
        return Placement(self.accelerators) if self.hosts is None else None

    def _direct(self) -> bool | None:
        """O_DIRECT reads where the config asks for them (reader.odirect); DLIO's default reads through the page cache."""
        if not self.config.path:
            return None
        value, where = self.config.get("reader.odirect")
        if value is not None and not isinstance(value, bool):
            raise ToolOutputError(self.config.path, where, f"expected true or false; found {describe(value)}")
        return value is True

    def origin(self) -> Origin:
        return Origin(path=self.source, line=None, tool="dlio", tool_version=None)

    def common_tags(self) -> list[tuple[str, str]]:
        found = ", ".join(self.config.found) if self.config.found else "nothing beside the summary"
        tags = self.tags + [("found", found)] + self.reported
        if self.inconsistent:
            tags.append(("inconsistent", "; ".join(self.inconsistent)))
        return tags

    def _caching(self) -> tuple[Caching, list[tuple[str, str]]]:
        """DLIO's evidence of caching (hosts' memory against each host's share of the data set), and a tag where
        some hosts reported no memory."""
        tags = []
        caching = self.summary.get("potential_caching")
        if isinstance(caching, list) and caching:
            flags = tuple(bool(whole(v, f"potential_caching[{i}]", self.source, least=0)) for i, v in enumerate(caching))
        elif isinstance(caching, bool) or caching is None:  # a bool: DLIO before per-host lists, one flag
            flags = caching
        else:
            raise ToolOutputError(self.source, "potential_caching", f"expected a list of 0 and 1 per host; found "
                                  f"{describe(caching)}")
        memory, most = self.summary.get("host_memory_GB"), None
        if memory is not None:
            values = [number(v, f"host_memory_GB[{i}]", self.source)
                      for i, v in enumerate(check(memory, list, "host_memory_GB", self.source))]
            reported = [v for v in values if v > 0]
            most = Q_(max(reported), "GiB") if reported else None
            if len(reported) < len(values):
                tags.append(("host_memory_reported", f"{len(reported)} of {len(values)} hosts (DLIO lists 0 for hosts "
                                                     "it did not collect from)"))
        share = None
        if "data_size_per_host_GB" in self.summary:
            share = Q_(number(self.summary["data_size_per_host_GB"], "data_size_per_host_GB", self.source), "GiB")
        return Caching(flags, most, share), tags

    # -- training ---------------------------------------------------------------------------------

    def training(self, metric: dict) -> list[Run]:
        source, config = self.source, self.config
        au = _numbers(metric, "train_au_percentage", source, **_PERCENT)
        rates = _numbers(metric, "train_throughput_samples_per_second", source)
        if len(au) != len(rates):
            raise ToolOutputError(source, "metric.train_throughput_samples_per_second", f"expected one value per epoch "
                                  f"({len(au)}, as train_au_percentage); found {len(rates)}")
        au_mean = number(field(metric, "train_au_mean_percentage", (int, float), "metric", source),
                         "metric.train_au_mean_percentage", source, **_PERCENT)
        rate_mean = number(field(metric, "train_throughput_mean_samples_per_second", (int, float), "metric", source),
                           "metric.train_throughput_mean_samples_per_second", source)
        io_mean = number(field(metric, "train_io_mean_MB_per_second", (int, float), "metric", source),
                         "metric.train_io_mean_MB_per_second", source)
        for values, stated, key in ((au, au_mean, "train_au_mean_percentage"),
                                    (rates, rate_mean, "train_throughput_mean_samples_per_second")):
            if not _mean_agrees(values, stated):
                self.inconsistent.append(f"metric.{key} {stated:.6g} is not the mean of the epochs' "
                                         f"{sum(values) / len(values):.6g}")
        record, record_source = self._record_length(io_mean, rate_mean)
        files = whole(field(self.summary, "num_files_train", int, "", source), "num_files_train", source)
        per_file = whole(field(self.summary, "num_samples_per_file", int, "", source), "num_samples_per_file", source)
        batch = config.whole("reader.batch_size")
        threads = config.whole("reader.read_threads", least=0)
        compute = config.positive("a computation time in seconds", "train.computation_time")
        stated_transfer = config.whole("reader.transfer_size", least=0)
        minimum, minimum_source = self._au_minimum()
        expectation = metric.get("train_au_meet_expectation")
        if expectation is not None:
            check(expectation, str, "metric.train_au_meet_expectation", source)
            if (expectation == "success") != (au_mean >= minimum * 100):
                self.inconsistent.append(f"DLIO says {expectation!r} for a mean AU of {au_mean:.2f} % against a "
                                         f"minimum of {minimum:.0%}")
        transfer = Q_(stated_transfer if stated_transfer else record, "B")
        data_set = Q_(files * per_file * record, "B")
        workload, shape = self.workload(Operation.READ, transfer, data_set)
        epochs = len(rates)
        durations = config.durations if len(config.durations) == epochs else ()
        if config.durations and not durations:
            self.inconsistent.append(f"{config.durations_path} has {len(config.durations)} epochs, the summary "
                                     f"{epochs}: its durations are not used")
        tags = shape + [("record_length_source", record_source),
                        ("transfer_size_source", "reader.transfer_size" if stated_transfer else
                         "the record length: DLIO reads a sample at a time; its requests are not in the summary"),
                        ("units", _UNITS_NOTE)]
        tags = self.common_tags() + tags
        training = Training(accelerators=self.accelerators, record_length=Q_(record, "B"), batch_size=batch,
                            computation_time=None if compute is None else Q_(compute, "s"), read_threads=threads, files=files,
                            samples_per_file=per_file, au_per_epoch=au, au_mean=au_mean,
                            au_minimum=round(minimum * 100, 10),  # a percent without float noise: 90, not 90.00000000000001
                            au_minimum_source=minimum_source, au_expectation=expectation, caching=self.caching)
        label = f"{self.model}{' ' + self.accelerator if self.accelerator else ''} train"
        bandwidth = tuple(rate * record / 2**20 for rate in rates)
        read = Run(label=f"{label} read", workload=workload, metric=Metric.BANDWIDTH, samples=bandwidth,
                   unit=TRAIN_UNIT, origin=self.origin(), tags=tuple(tags), durations=durations,
                   placement=self.placement(), training=training)
        samples = Run(label=f"{label} samples", workload=workload, metric=Metric.EVENT_RATE, samples=rates,
                      unit=SAMPLE_UNIT, origin=self.origin(),
                      tags=tuple(tags + [("operation", "one sample of record_length bytes: DLIO's samples/s")]),
                      durations=durations, placement=self.placement(), training=training)
        return [read, samples]

    def _record_length(self, io_mean: float, rate_mean: float) -> tuple[float, str]:
        """The record length DLIO computed its MB/s with, checked against the config's, and where it was read."""
        stated = self.config.positive("a record length in bytes", "dataset.record_length_bytes", "dataset.record_length")
        if rate_mean > 0 and io_mean > 0:
            used = io_mean * 2**20 / rate_mean
            if not 1 <= used <= Q_(MOST_TRANSFER).m_as("B"):
                raise ToolOutputError(self.source, "metric.train_throughput_mean_samples_per_second", f"expected a "
                                      f"rate that with train_io_mean_MB_per_second ({_figure(io_mean)}) gives a sample "
                                      f"of 1 B to {MOST_TRANSFER}; found {_figure(rate_mean)}, a sample of "
                                      f"{used:.3g} B")
            agrees = stated is not None and math.isclose(used, stated, rel_tol=_SAME)
            if stated is not None and not agrees:
                self.inconsistent.append(f"the config's record length is {_figure(stated)} B, but the summary's MB/s / "
                                         f"samples/s x 2^20 gives {_figure(used)} B (used: DLIO computed with it)")
            return used, "summary MB/s / samples/s x 2^20" + (", as the config states" if agrees else "")
        if stated is None:
            raise ToolOutputError(self.source, "metric.train_io_mean_MB_per_second", "expected a figure above 0 to tell "
                                  "the record length from, or a config.yaml beside the summary stating "
                                  "dataset.record_length; found neither")
        return stated, "config (the summary's samples/s is 0)"

    def _au_minimum(self) -> tuple[float, str]:
        value, where = self.config.get("metric.au")
        if value is None:
            why = "no config beside the summary" if not self.config.path else "the config states no metric.au"
            return DEFAULT_AU, f"DLIO's default ({why})"
        au = number(value, where, self.config.path, expected="a fraction from 0 to 1", below=1.000001)
        return au, f"config {where}"

    # -- checkpointing ---------------------------------------------------------------------------

    def checkpoint(self, metric: dict, prefix: str, operation: Operation) -> Run:
        source = self.source
        key = f"{prefix}_checkpoint_io_mean_GB_per_second"
        rate = number(metric[key], f"metric.{key}", source)
        seconds = positive(field(metric, f"{prefix}_checkpoint_duration_mean_seconds", (int, float), "metric", source),
                            f"metric.{prefix}_checkpoint_duration_mean_seconds", source, "a duration in seconds")
        size = positive(field(metric, "checkpoint_size_GB", (int, float), "metric", source),
                         "metric.checkpoint_size_GB", source, "a size")
        spread = metric.get(f"{prefix}_checkpoint_io_stdev_GB_per_second")
        spread = None if spread is None else number(spread, f"metric.{prefix}_checkpoint_io_stdev_GB_per_second", source)
        direction = "write" if operation is Operation.WRITE else "read"
        count = self.config.whole(f"checkpoint.num_checkpoints_{direction}", least=0)
        inconsistent = []
        if rate > 0 and abs(size / seconds / rate - 1) > _CHECKPOINT_SPREAD:
            inconsistent.append(f"{size:.4g} GiB in {seconds:.4g} s is {size / seconds:.4g} GiB/s, but the summary "
                                f"says {rate:.4g} GiB/s")
        fsync, _ = self.config.get("checkpoint.fsync")
        over = f"{count} checkpoints" if count else "its checkpoints"
        about = f" (standard deviation {spread:.4g} GiB/s)" if spread is not None else ""
        workload, shape = self.workload(operation, None, Q_(size, "GiB"))
        tags = [t for t in self.common_tags() if t[0] != "inconsistent"]
        tags += shape + [("summary_only", f"DLIO's mean over {over}{about}; summary.json holds no per-checkpoint figures"),
                         ("units", CHECKPOINT_NOTE)]
        if inconsistent:
            tags.append(("inconsistent", "; ".join(inconsistent)))
        checkpoint = Checkpoint(accelerators=self.accelerators, size=Q_(size, "GiB"), checkpoints=count or None,
                                fsync=fsync if isinstance(fsync, bool) else None, caching=self.caching)
        return Run(label=f"{self.model} checkpoint {direction}", workload=workload, metric=Metric.BANDWIDTH,
                   samples=(rate,), unit=CHECKPOINT_UNIT, origin=self.origin(), tags=tuple(tags), durations=(seconds,),
                   placement=self.placement(), checkpoint=checkpoint)


def _report_hosts(path: Path, mean: Any) -> tuple[int | None, str]:
    """The report's ``num_client_hosts`` if one of its runs is this summary (the same samples/s), else None."""
    source = str(path)
    try:
        report = json.loads(read_input(path, error=ToolOutputError, what="the MLPerf Storage report"))
    except (ValueError, RecursionError):
        return None, f"the summary states none (v0.5); {path.name} above it is not valid JSON"
    overall = report.get("overall") if isinstance(report, dict) else None
    runs = report.get("runs") if isinstance(report, dict) else None
    hosts = overall.get("num_client_hosts") if isinstance(overall, dict) else None
    if hosts is None or not isinstance(runs, dict):
        return None, f"the summary states none (v0.5), nor does {path.name}"
    hosts = whole(hosts, "overall.num_client_hosts", source)
    rates = [r.get("train_throughput_samples_per_second") for r in runs.values() if isinstance(r, dict)]
    if isinstance(mean, (int, float)) and any(isinstance(r, (int, float)) and math.isclose(r, mean, rel_tol=_SAME)
                                              for r in rates):
        return hosts, f"{path.name} num_client_hosts (one of its runs is this summary)"
    return None, (f"the summary states none (v0.5); {path.name}'s runs do not include this summary's figures "
                  "(one DLIO job per host?), so its host count is not this run's")
