"""What every reader must do with garbage: give runs that make sense, or refuse it in one ToolOutputError that
names the source (and the place, and what it expected there); never another exception. The readers' fuzz tests
check their inputs here, real outputs mangled among them."""

from __future__ import annotations

import math
import re
from typing import Callable

import pytest
from hypothesis import strategies as st

import probes.readers
from probes.core.errors import ToolOutputError
from probes.core.run import Run
from probes.core.units import Metric

SOURCE = "fuzz.txt"


def _unique_labels(runs: list[Run]) -> None:
    assert len({run.label for run in runs}) == len(runs)


def _sized(runs: list[Run]) -> None:
    assert all(run.workload.transfer_size.magnitude > 0 for run in runs)


def _fio(runs: list[Run]) -> None:
    _unique_labels(runs)
    _sized(runs)


def _fio_text(runs: list[Run]) -> None:
    _fio(runs)
    assert all(run.durations[0] > 0 and run.workload.data_set.magnitude > 0 for run in runs)


def _io500(runs: list[Run]) -> None:
    assert all(len(run.samples) == 1 for run in runs)


def _mdtest(runs: list[Run]) -> None:
    for run in runs:
        assert run.metric is Metric.OPERATION_RATE and math.isfinite(run.summary.mean)
        assert run.summary.min <= run.summary.mean <= run.summary.max


def _network(runs: list[Run]) -> None:
    assert all(run.samples and len(run.durations) in (0, len(run.samples)) for run in runs)


def _sampled(runs: list[Run]) -> None:
    assert all(run.samples for run in runs)


def _measured(runs: list[Run]) -> None:
    assert all(run.samples and run.samples[0] > 0 for run in runs)


# What each reader's runs hold besides what every reader's do, by the reader's name in probes.readers.
RUNS: dict[str, Callable[[list[Run]], None]] = {
    "fio": _fio, "fio-text": _fio_text, "ior": _sized,
    "io500": _io500, "mdtest": _mdtest, "iperf3": _network, "iperf2": _network, "ping": _network,
    "mlperf": _sampled, "darshan": _measured}
# What each reader's refusal says after the source's name, where it says more than that the text is bad.
REFUSALS = {"fio-text": r"line [0-9]+: expected", "mdtest": "line ", "mlperf": r"[^\n]*\Z", "darshan": r"[^\n]*\Z"}


def read_or_refuse(name: str, text: str | bytes, *, read: Callable[..., list[Run]] | None = None,
                   source: str = SOURCE) -> list[Run] | None:
    """The runs reader ``name`` of probes.readers (or ``read``, another entry point) reads in ``text``, each checked
    as sane; None where it refused the text as it must: in a ToolOutputError that begins with ``source``."""
    if read is None:
        read = {**probes.readers.READERS, **probes.readers.BINARY_READERS}[name].parse
    try:
        runs = read(text, source=source)
    except ToolOutputError as exc:
        assert re.match(re.escape(f"{source}: ") + REFUSALS.get(name, ""), str(exc)), str(exc)
        return None
    assert runs
    for run in runs:
        assert all(math.isfinite(s) and s >= 0 for s in run.samples)
        assert all(math.isfinite(d) and d >= 0 for d in run.durations)
    RUNS.get(name, lambda runs: None)(runs)
    return runs


def mangled(data: st.DataObject, text: str, junk: list[str], *, within: int | None = None,
            junk_size: int = 8) -> tuple[str, str]:
    """``text`` with a span of it (of ``within`` characters at most) replaced by junk, random text or one of
    ``junk``; and ``text`` cut where that span ends."""
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text) if within is None else min(len(text), start + within)))
    return text[:start] + data.draw(st.text(max_size=junk_size) | st.sampled_from(junk)) + text[end:], text[:end]


def refusal(read: Callable[..., list[Run]], text: str, *, source: str, where: str) -> str:
    """The message ``read`` refuses ``text`` with: a ToolOutputError naming ``source`` and ``where`` (a line, a
    field), saying what it expected there."""
    with pytest.raises(ToolOutputError) as err:
        read(text, source=source)
    message = str(err.value)
    assert message.startswith(f"{source}: {where}: expected"), message
    assert (err.value.source, err.value.where) == (source, where)
    return message
