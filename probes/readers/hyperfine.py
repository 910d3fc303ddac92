"""Read hyperfine's ``--export-json`` output into latency runs: one per benchmarked command.

The samples are the wall-clock time of every run of the command, in seconds; a timed command
is not a storage workload, so ``workload`` is None.
"""

from __future__ import annotations

from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.readers.jsonfields import check, describe, json_object, number
from probes.core.run import Origin, Run, distinct_labels
from probes.core.stats import from_reported
from probes.core.units import Metric

__all__ = ["looks_like", "parse", "FORMAT"]

# What iobound read says it reads.
FORMAT = "hyperfine --export-json"

# Unit. Every time in the JSON is in seconds, whatever --time-unit says: hyperfine's JsonExporter
# serialises its results as measured and ignores the display unit (src/export/json.rs), and in the
# corpus the 1BRC runs over a billion rows ("cargo run --release ... measurements_1000000000.txt")
# take "mean": 11.61, which is seconds. hyperfine does not write its version into the file.
UNIT = "s"
# Labels longer than this are cut (the full command is in the "command" tag).
LABEL_LENGTH = 60

_OPENING = Pattern(r"^[ \t\r\n\ufeff]*\{")
_RESULTS = Pattern(r'"results"\s*:\s*\[')
_COMMAND = Pattern(r'"command"\s*:\s*"')


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like hyperfine's JSON export: a cheap sniff, not a validation."""
    return (_OPENING.match(text) is not None and _RESULTS.search(text) is not None
            and _COMMAND.search(text) is not None and '"mean"' in text)


def parse(text: str, *, source: str) -> list[Run]:
    """One latency run per command in hyperfine's JSON, in seconds.

    Parameters
    ----------
    text : what ``hyperfine --export-json FILE`` wrote (any schema: with or without
        ``median``, ``exit_codes``, ``parameters``).
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled with the command (cut to 60 characters, the full text in the ``command`` tag;
        repeated labels get ``" #n"``), metric latency in s, one sample per run of the command
        (``times``, also its ``durations``), ``workload=None``. Tags: the command, how many runs
        exited with a non-zero code (or were killed by a signal, a null code), the mean user and
        system CPU time, and the parameters of a parametrised benchmark.

    Raises
    ------
    ToolOutputError
        If the text is not valid JSON, has no ``results``, a field has the wrong type, a time is
        negative or not finite, or the number of runs cannot be told.

    Notes
    -----
    Where ``times`` is absent, the run carries hyperfine's summary (mean, stddev, min, max)
    over as many runs as it has exit codes; with neither times nor exit codes the number of runs
    is unknown and the command is refused rather than given an invented count.
    """
    document = json_object(text, source, "hyperfine's JSON (--export-json)")
    results = check(document.get("results"), list, "results", source)
    if not results:
        raise ToolOutputError(source, "results", "expected at least one benchmarked command; found an empty list")
    return distinct_labels([_run(result, f"results[{index}]", source) for index, result in enumerate(results)])


def _run(result: Any, where: str, source: str) -> Run:
    check(result, dict, where, source)
    command = check(result.get("command"), str, f"{where}.command", source)
    times = _times(result, where, source)
    codes = _exit_codes(result, where, source)
    if times and codes is not None and len(codes) != len(times):
        raise ToolOutputError(source, f"{where}.exit_codes", f"expected one exit code per run ({len(times)} "
                              f"times); found {len(codes)}")
    reported = None if times else _summary(result, len(codes) if codes else None, where, source)
    tags = (("command", command), ("nonzero_exit_codes", _nonzero(codes))) + _cpu_tags(result, where, source)
    tags += _parameter_tags(result, where, source)
    return Run(label=_label(command, where), workload=None, metric=Metric.LATENCY, samples=times, unit=UNIT,
               origin=Origin(path=source, line=None, tool="hyperfine", tool_version=None), tags=tags,
               reported=reported, durations=times)


def _seconds(value: Any, where: str, source: str) -> float:
    return number(value, where, source, expected="a time of at least 0 s")


def _times(result: dict, where: str, source: str) -> tuple[float, ...]:
    """Every run's wall-clock time; () where the file has none (a ``times`` of null or absent)."""
    if result.get("times") is None:
        return ()
    times = check(result["times"], list, f"{where}.times", source)
    if not times:
        raise ToolOutputError(source, f"{where}.times", "expected the time of at least one run; found an empty list")
    return tuple(_seconds(value, f"{where}.times[{index}]", source) for index, value in enumerate(times))


def _exit_codes(result: dict, where: str, source: str) -> list[int | None] | None:
    """Each run's exit code (null: killed by a signal); None where the file has none (older hyperfine)."""
    if "exit_codes" not in result:
        return None
    codes = check(result["exit_codes"], list, f"{where}.exit_codes", source)
    for index, code in enumerate(codes):
        if code is not None:
            check(code, int, f"{where}.exit_codes[{index}]", source)
    return codes


def _nonzero(codes: list[int | None] | None) -> str:
    if codes is None:
        return "unknown: the file has no exit codes (older hyperfine)"
    signals = sum(code is None for code in codes)
    failed = sum(code is None or code != 0 for code in codes)
    return f"{failed} of {len(codes)}" + (f" ({signals} killed by a signal)" if signals else "")


def _summary(result: dict, runs: int | None, where: str, source: str):
    """hyperfine's own mean, stddev, min and max, over the runs its exit codes count."""
    if not runs:
        raise ToolOutputError(source, f"{where}.times", "expected 'times' (each run's time) or 'exit_codes' (one "
                              "per run, to count them); found neither: the number of runs is unknown, and iobound "
                              "does not guess it")
    mean, low, high = (_seconds(result.get(key), f"{where}.{key}", source) for key in ("mean", "min", "max"))
    std = None if result.get("stddev") is None or runs == 1 else _seconds(result["stddev"], f"{where}.stddev", source)
    try:
        return from_reported(runs, mean, std, low, high)
    except ValueError as exc:
        raise ToolOutputError(source, where, f"expected a consistent summary (min <= mean <= max); {exc}") from exc


def _cpu_tags(result: dict, where: str, source: str) -> tuple[tuple[str, str], ...]:
    """The mean user and system CPU time per run, where the file has them."""
    tags = []
    for key in ("user", "system"):
        if result.get(key) is not None:
            tags.append((f"{key}_mean_s", f"{_seconds(result[key], f'{where}.{key}', source):.6g}"))
    return tuple(tags)


def _parameter_tags(result: dict, where: str, source: str) -> tuple[tuple[str, str], ...]:
    """The values of a parametrised benchmark (``--parameter-scan``, ``-L``)."""
    if result.get("parameters") is None:
        return ()
    parameters = check(result["parameters"], dict, f"{where}.parameters", source)
    for name, value in parameters.items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ToolOutputError(source, f"{where}.parameters.{name}", "expected a parameter value (text or a "
                                  f"number); found {describe(value)}")
    return (("parameters", ", ".join(f"{name}={value}" for name, value in sorted(parameters.items()))),) if parameters else ()


def _label(command: str, where: str) -> str:
    """The command on one line, cut to LABEL_LENGTH characters; the result's place if it is empty."""
    flat = " ".join(command.split())
    if not flat:
        return f"{where} (empty command)"
    return flat if len(flat) <= LABEL_LENGTH else flat[:LABEL_LENGTH - 3].rstrip() + "..."
