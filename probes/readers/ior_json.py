"""Read IOR's JSON output (``-O summaryFormat=json``) into bandwidth runs, as :func:`probes.readers.ior.parse` describes."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.run import Origin, Run
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers.ior_readback import Readback, direct_from_command, printed_readback, readback
from probes.readers.ior_text import (OPERATIONS, SIZE, SIZE_UNITS, UNIT, data_set_size, reported_summary, run_label,
                                     shared_file)
from probes.readers.jsonfields import check, describe
from probes.readers.jsonfields import field as json_field, number as json_number
from probes.readers.jsonrepair import decode
from probes.readers.textlines import split_words

__all__ = ["parse_json"]


def parse_json(text: str, opening: re.Match, source: str) -> list[Run]:
    """The runs of IOR's JSON, whose object opens at ``opening``; invalid JSON as IOR prints it is repaired."""
    document, repairs = decode(text, opening, source, "IOR's JSON")
    if not isinstance(document, dict):
        raise ToolOutputError(source, "line 1", "expected IOR's JSON object; found another JSON value")
    version = document.get("Version")
    if not isinstance(version, str) or "tests" not in document:
        present = ", ".join(repr(k) for k in list(document)[:8]) or "nothing"
        raise ToolOutputError(source, "tests" if isinstance(version, str) else "Version",
                              f"expected IOR's JSON with 'Version' and 'tests'; found {present}")
    tests = check(document["tests"], list, "tests", source)
    summary = document.get("summary", [])
    summary = check(summary, list, "summary", source)
    command = document.get("Command line", "")
    command = command if isinstance(command, str) else ""
    direct_command = direct_from_command(command)
    handed = readback(split_words(command)[1:], source=source, where="Command line")
    origin = Origin(path=source, line=None, tool="ior", tool_version=version)
    runs = []
    for index, test in enumerate(tests):
        where = f"tests[{index}]"
        test = check(test, dict, where, source)
        runs.extend(_json_test_runs(test, where, summary, direct_command, handed, repairs, origin))
    if not runs:
        raise ToolOutputError(source, "tests", "expected at least one test with write or read results "
                              "('Results' or 'summary'); found none: the output is truncated or the run failed")
    return runs


def _json_test_runs(test: dict, where: str, summary: list, direct_command: bool | None, command: Readback,
                    repairs: str, origin: Origin) -> list[Run]:
    source = origin.path
    parameters = check(test.get("Parameters", {}), dict, f"{where}.Parameters", source)
    options = check(test.get("Options", {}), dict, f"{where}.Options", source)
    test_id = test.get("TestID", parameters.get("testID", 0))
    results: list[tuple[str, dict]] = []

    def flatten(node: Any, path: str) -> None:
        if isinstance(node, list):
            for i, child in enumerate(node):
                flatten(child, f"{path}[{i}]")
        else:
            results.append((path, check(node, dict, path, source)))

    flatten(check(test.get("Results", []), list, f"{where}.Results", source), f"{where}.Results")
    handed = _json_readback(parameters, options, command, where, source)
    runs = []
    for name, operation in OPERATIONS.items():
        samples, durations = [], []
        for path, result in results:
            if result.get("access") == name:
                samples.append(_json_number(result, "bwMiB", path, source))
                durations.append(result.get("totalTime"))
        reported = None
        entry = next(((i, s) for i, s in enumerate(summary) if isinstance(s, dict)
                      and s.get("operation") == name and s.get("TestID", 0) == test_id), None)
        if not samples:
            if entry is None:
                continue
            i, values = entry
            path = f"summary[{i}]"
            reported = reported_summary(values.get("repetitions", "?"), *(_json_number(values, key, path, source) for key in
                                 ("bwMeanMIB", "bwStdMIB", "bwMinMIB", "bwMaxMIB")), where=path, source=source)
        if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) for t in durations):
            durations = []
        workload, more = _json_workload(parameters, options, where, operation, direct_command, source)
        more += handed.tags(operation, workload.nodes, "write" in {r.get("access") for _, r in results} | {
            s.get("operation") for s in summary if isinstance(s, dict) and s.get("TestID", 0) == test_id})
        if samples and entry is not None:
            more += _json_against_summary(name, samples, *entry)
        if repairs:
            more.append(("json_repaired", repairs))
        api = str(parameters.get("api", options.get("api", "")))
        access = str(options.get("access", "file-per-process" if parameters.get("filePerProc") == 1
                                 else "single-shared-file" if parameters.get("filePerProc") == 0 else ""))
        label_options = {"api": (api, 0), "access": (access, 0)}
        runs.append(Run(label=run_label(label_options, test_id if isinstance(test_id, int) else 0, name),
                        workload=workload, metric=Metric.BANDWIDTH, samples=tuple(samples), unit=UNIT,
                        origin=origin, tags=tuple(more), reported=reported,
                        durations=tuple(float(t) for t in durations)))
    return runs


def _json_against_summary(name: str, samples: list[float], index: int, values: dict) -> list[tuple[str, str]]:
    """The tag ``inconsistent`` where the JSON summary's max, min or mean is not that of the ``Results``: IOR
    writes both with 4 decimals (%.4f), so they agree within 0.0001 MiB/s."""
    figures = {"bwMaxMIB": max(samples), "bwMinMIB": min(samples), "bwMeanMIB": sum(samples) / len(samples)}
    disagree = []
    for key, counted in figures.items():
        printed = values.get(key)
        if isinstance(printed, (int, float)) and not isinstance(printed, bool) and math.isfinite(printed) \
                and abs(printed - counted) > 1.0001e-4 * max(1.0, abs(counted) * 1e-9):
            disagree.append(f"the {name} Results' {key[2:-3].lower()} is {counted:,.4f} MiB/s; summary[{index}].{key} "
                            f"says {printed:,.4f} MiB/s")
    return [("inconsistent", "; ".join(disagree))] if disagree else []


def _json_readback(parameters: dict, options: dict, command: Readback, where: str, source: str) -> Readback:
    """The readback of one JSON test: ``Options`` as IOR prints them, else ``Parameters``; fsync from ``Parameters``."""
    if "fsyncPerWrite" in parameters or "fsync" in parameters:
        fsync = "-Y" if parameters.get("fsyncPerWrite") else "-e" if parameters.get("fsync") else ""
        command = replace(command, fsync=fsync)
    if "task offset" in options:
        offset = _json_count(options, "task offset", f"{where}.Options", source)
    elif "taskPerNodeOffset" in parameters:
        offset = _json_count(parameters, "taskPerNodeOffset", f"{where}.Parameters", source)
    else:
        offset = None
    if "ordering inter file" in options:
        return printed_readback(options["ordering inter file"], offset, command)
    if "reorderTasks" in parameters or "reorderTasksRandom" in parameters:
        reorder = "-C" if parameters.get("reorderTasks") else "-Z" if parameters.get("reorderTasksRandom") else ""
        return replace(command, reorder=reorder, offset=command.offset if offset is None else offset)
    return command


def _json_workload(parameters: dict, options: dict, where: str, operation: Operation,
                   direct_command: bool | None, source: str) -> tuple[Workload, list[tuple[str, str]]]:
    tags: list[tuple[str, str]] = []
    if "transferSize" in parameters:
        size = _json_count(parameters, "transferSize", f"{where}.Parameters", source)
    elif "xfersize" in options:
        value = options["xfersize"]
        match = SIZE.fullmatch(value) if isinstance(value, str) else None
        if match is None or match[2] is not None:
            raise ToolOutputError(source, f"{where}.Options.xfersize",
                                  f"expected an exact transfer size such as '2 MiB'; found {describe(value)}")
        size = int(match[1]) * SIZE_UNITS[match[3]]
    else:
        raise ToolOutputError(source, f"{where}.Parameters.transferSize", "expected the transfer size; "
                              "found neither 'transferSize' nor 'xfersize'")
    # The "Options" block is what IOR prints in its text output; "Parameters" the raw settings.
    if "nodes" in options:
        nodes = _json_count(options, "nodes", f"{where}.Options", source)
    else:
        nodes = _json_count(parameters, "nodes", f"{where}.Parameters", source)
    if "clients per node" in options:
        ppn = _json_count(options, "clients per node", f"{where}.Options", source)
    else:
        ppn = _json_count(parameters, "tasksPerNode", f"{where}.Parameters", source)
    if "tasks" in options:
        tags.append(("tasks", str(_json_count(options, "tasks", f"{where}.Options", source))))
    api = parameters.get("api", options.get("api"))
    if isinstance(api, str):
        tags.append(("api", api))
    random = parameters.get("randomOffset", 0)
    ordering = options.get("ordering in a file", "")
    access = Access.RANDOM if (random not in (0, None, False)) or "random" in str(ordering) else Access.SEQUENTIAL
    direct = direct_command
    if "useO_DIRECT" in parameters:
        direct = bool(parameters["useO_DIRECT"]) or direct_command is True
    aggregate = options.get("aggregate filesize")
    if parameters.get("deadlineForStonewalling", 0) not in (0, None) or options.get("stonewallingTime", 0) not in (0, None):
        aggregate = None  # stopped at a deadline: the planned size was not all moved
    shared = parameters.get("filePerProc")
    workload = Workload(operation=operation, transfer_size=Q_(size, "B"), nodes=nodes, ppn=ppn, access=access,
                        direct=direct, data_set=data_set_size(aggregate) if isinstance(aggregate, str) else None,
                        shared_file=(shared == 0) if shared in (0, 1) else shared_file(str(options.get("access", ""))))
    return workload, tags


def _json_count(obj: dict, key: str, path: str, source: str) -> int:
    value = json_field(obj, key, int, path, source)
    if not 1 <= value < 2**63:
        raise ToolOutputError(source, f"{path}.{key}", f"expected a whole number of at least 1; found {describe(value)}")
    return value


def _json_number(obj: dict, key: str, path: str, source: str) -> float:
    return json_number(json_field(obj, key, (int, float), path, source), f"{path}.{key}", source,
                       expected="a finite bandwidth of at least 0")

