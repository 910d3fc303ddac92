"""io500's result files of each era (see :mod:`probes.readers.io500`) read into phases: each phase's name, value,
unit and time as printed, with its command and marks where the file shows them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.readers.textlines import COUNT, checked_number

__all__ = ["Phase", "read_app_results", "read_summary", "read_prototype", "PROTOTYPE_LINE"]

# Units, with the evidence for each.
# - io500.sh prints "GB/s" (2017 to 2019) and "GiB/s" (2020) for the same computation: IOR's
#   MiB/s divided by 1024, so both are 2^30 B/s. In the corpus the io500 runs' own IOR outputs
#   show it: Sandia 2017 IOR "write 421.05" MiB/s -> "0.411 GB/s" (421.05 / 1024 = 0.4112, not
#   0.421); Summit SC18 2210511.33 -> "2158.700 GB/s"; DDN ISC19 61522.69 -> "60.081 GB/s";
#   OCI ISC20 341867.05 -> "333.854 GiB/s".
# - The C app prints "GiB/s" for every phase whose name starts with "i" (its source:
#   phase->name[0] == 'i' ? "GiB/s" : "kIOPS"), also 2^30: Narval SC21 IOR 130047 MiB/s ->
#   126.999381, LRZ ISC25 ior-rnd4K-easy-read IOR 193651 MiB/s -> 189.112448 GiB/s. result.txt
#   prints no unit; its score is the same figure (Narval: score 126.999381 in both files).
# - "kiops" / "kIOPS" are thousands of operations per second ("kop/s" in iobound's registry);
#   io500.sh's older "iops" are operations per second.
# - The 2017 prototype's "MB/s" is 10^6 B/s: it took the figure in parentheses of IOR's
#   "Max Read:  215453.31 MiB/sec (225919.17 MB/sec)" (KAUST's IOR-2.10.3 output beside the
#   corpus file in VI4IO/io-500-dev; 215453.31 x 1.048576 = 225919.17), and the corpus file says
#   "ior-easy-read BW:225919.17 MB/s". Its "IOPs" are mdtest's operations per second.
# - io500.sh's earliest "MB/s" (IOR's MiB/s column under that name) is not in the corpus and
#   is refused rather than read with a guessed base.
_SCRIPT_UNITS = {"GB/s": "GiB/s", "GiB/s": "GiB/s", "kiops": "kop/s", "iops": "op/s"}
_APP_UNITS = {"GiB/s": "GiB/s", "kIOPS": "kop/s"}
_GB_NOTE = "printed as GB/s; io500.sh divides IOR's MiB/s by 1024, so it is GiB/s"

# The C app's result_summary.txt: "[RESULT]", "[RESULT-invalid]" (SC20) or "[      ]" (a phase
# outside the score), the phase, its value and unit, the time, and " [INVALID]" (SC21 on).
_APP_RESULT = Pattern(r"\[(RESULT|RESULT-invalid| {6})\]\s+(\S+)\s+(\S+)\s+(\S+)\s*:\s*time\s+(\S+)\s+seconds"
                         r"(\s+\[INVALID\])?\s*")
# io500.sh: "[RESULT] BW   phase 1   ior_easy_write   0.411 GB/s : time   9.73 seconds".
_SCRIPT_RESULT = Pattern(r"\[(RESULT|RESULT-invalid)\]\s+(BW|IOPS)\s+phase\s+\d+\s+(\S+)\s+(\S+)\s+(\S+)"
                            r"\s*:\s*time\s+(\S+)\s+seconds\s*")
_RESULT_START = Pattern(r"\[(?:RESULT[^\]]*| {6})\]")
_SUMMARY_SCORE = Pattern(r"\[(SCOREX?) ?\]\s*(.*?)\s*$")
_APP_VERSION = Pattern(r"IO500 version (\S+)(?: \((\w+)\))?")
# The 2017 prototype: "1/ior-easy-write BW:341025.01 MB/s time: 311s", "1/md-easy-create IOPs:12658.661 time:514s".
PROTOTYPE_LINE = Pattern(r"[0-9]+/(\S+) (BW|IOPs):")
_PROTOTYPE_RESULT = Pattern(r"[0-9]+/(\S+) (?:BW:\s*(\S+) (\S+)|IOPs:\s*(\S+)) time:\s*(\S+?)s\s*")
_PROTOTYPE_SCORE = Pattern(r"IO-500 ((?:bw |md )?score):\s*(.*?)\s*$")
# result.txt lines.
_SECTION = Pattern(r"\[([^\]\s]+)\]\s*")
_PAIR = Pattern(r"([A-Za-z][\w-]*)\s*=\s*(.*?)\s*")


@dataclass
class Phase:
    """One phase's value as read, before it becomes a run; ``name`` as printed."""

    name: str
    line: int
    value: float
    unit: str
    duration: float | None
    command: str = ""
    command_line: int = 0
    tags: list[tuple[str, str]] = field(default_factory=list)
    hard_by_rules: bool = True
    processes: int | None = None  # all of the run's, where result.txt states them (procs)


# ---------------------------------------------------------------------------------------------
# The C app's result.txt


def read_app_results(lines: Iterable[str], source: str) -> tuple[list[Phase], str, list[tuple[str, str]]]:
    sections: list[tuple[str, int, dict[str, tuple[str, int]], list[str]]] = [("", 0, {}, [])]
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        section = _SECTION.fullmatch(stripped)
        pair = _PAIR.fullmatch(stripped)
        if not stripped:
            continue
        if stripped.startswith(";"):
            sections[-1][3].append(stripped[1:].strip())
        elif section:
            sections.append((section[1], number, {}, []))
        elif pair:
            sections[-1][2].setdefault(pair[1], (pair[2], number))
        else:
            raise ToolOutputError(source, f"line {number}", "expected a '[section]', 'key = value' or "
                                  f"'; comment' line of io500's result.txt; found {stripped[:60]!r}")
    version, tags, processes = "C app", [], None
    phases = []
    named = {name: pairs for name, _, pairs, _ in sections}
    stated = [named[name][key] for name, key in (("", "procs"), ("run", "procs"), ("find", "nproc"))
              if key in named.get(name, {})]
    if stated:
        processes, line = stated[0]
        if not COUNT.fullmatch(processes) or int(processes) < 1:
            raise ToolOutputError(source, f"line {line}", f"expected a whole number of processes; found {processes[:40]!r}")
        processes = int(processes)
    for name, number, pairs, comments in sections:
        if name in ("", "run"):
            version = pairs.get("version", (version, 0))[0]
            tags += [("mode", pairs["mode"][0])] if "mode" in pairs else []
        elif name in ("SCORE", "SCOREX"):
            score = "; ".join(f"{key} = {value}" for key, (value, _) in pairs.items() if key != "hash")
            tags.append(("score" if name == "SCORE" else "score_extended", score))
        elif "score" in pairs:
            phases.append(_app_phase(name, number, pairs, comments, source))
    for phase in phases:
        phase.processes = processes
    return phases, version, tags


def _app_phase(name: str, number: int, pairs: dict[str, tuple[str, int]], comments: list[str],
               source: str) -> Phase:
    value, line = pairs["score"]
    score = _value(value, f"line {line}", "score", source)
    duration = None
    if "t_delta" in pairs:
        text, line = pairs["t_delta"]
        duration = _value(text, f"line {line}", "t_delta", source)
    command, command_line = pairs.get("exe", ("", 0))
    phase = Phase(name, number, score, "GiB/s" if name.startswith("i") else "kop/s", duration,
                  command, command_line)
    invalid = [c.removeprefix("ERROR INVALID").strip() for c in comments if c.startswith("ERROR INVALID")]
    if pairs.get("valid", ("1", 0))[0].strip().lower() in ("0", "no", "false"):
        invalid.append(f"valid = {pairs['valid'][0]}")
    if invalid:
        phase.tags.append(("invalid", "; ".join(invalid)))
    errors = [c.removeprefix("ERROR").strip() for c in comments if c.startswith("ERROR") and
              not c.startswith("ERROR INVALID")]
    if errors:
        phase.tags.append(("error", "; ".join(errors)))
    return phase


# ---------------------------------------------------------------------------------------------
# result_summary.txt (io500.sh and the C app) and io500.sh's driver log


def read_summary(lines: Iterable[str], source: str) -> tuple[list[Phase], str, list[tuple[str, str]]]:
    version, tags = "io500.sh", []
    phases: list[Phase] = []
    current = ""
    commands: dict[str, tuple[str, int]] = {}
    warnings: dict[str, list[str]] = {}
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        word = stripped.split(" ", 1)
        if word[0] == "[Starting]" and len(word) == 2:
            current = word[1].strip()
        elif word[0] in ("[Exec]", "[EXEC]") and len(word) == 2:
            commands.setdefault(current, (word[1], number))
        elif word[0] == "[Warning]" and len(word) == 2:
            warnings.setdefault(current, []).append(word[1].strip())
        elif (version_match := _APP_VERSION.fullmatch(stripped)):
            version = version_match[1]
            tags += [("mode", version_match[2])] if version_match[2] else []
        elif (score := _SUMMARY_SCORE.fullmatch(stripped)):
            tags.append(("score" if score[1] == "SCORE" else "score_extended", score[2]))
        elif _RESULT_START.match(stripped):
            phase = _summary_phase(stripped, number, source)
            command, command_line = commands.get(phase.name, ("", 0))
            phase.command, phase.command_line = command, command_line
            if phase.name in warnings:
                phase.tags.append(("invalid", "; ".join(warnings[phase.name])))
            if not any(_same(phase, seen) for seen in phases):  # the driver log repeats every line at its end
                phases.append(phase)
    return phases, version, tags


def _same(a: Phase, b: Phase) -> bool:
    return (a.name, a.value, a.unit, a.duration) == (b.name, b.value, b.unit, b.duration)


def _summary_phase(line: str, number: int, source: str) -> Phase:
    where = f"line {number}"
    script = _SCRIPT_RESULT.fullmatch(line)
    if script:
        marker, kind, name, value, unit, time = script.groups()
        if unit not in _SCRIPT_UNITS or (kind == "BW") != unit.endswith("/s"):
            raise ToolOutputError(source, where, f"expected a {kind} result in "
                                  f"{' or '.join(u for u in _SCRIPT_UNITS if (kind == 'BW') == u.endswith('/s'))}; "
                                  f"found {unit!r}, whose base the corpus does not show")
        phase = Phase(name, number, _value(value, where, "value", source), _SCRIPT_UNITS[unit],
                      _value(time, where, "time", source))
        if unit == "GB/s":
            phase.tags.append(("unit", _GB_NOTE))
    else:
        app = _APP_RESULT.fullmatch(line)
        if app is None:
            raise ToolOutputError(source, where, "expected an io500 result line such as '[RESULT] "
                                  f"ior-easy-write 0.355843 GiB/s : time 331.771 seconds'; found {line[:80]!r}")
        marker, name, value, unit, time, invalid = app.groups()
        if unit not in _APP_UNITS:
            raise ToolOutputError(source, where, f"expected GiB/s or kIOPS; found {unit!r}")
        phase = Phase(name, number, _value(value, where, "value", source), _APP_UNITS[unit],
                      _value(time, where, "time", source))
        if invalid:
            phase.tags.append(("invalid", "io500 marked the phase [INVALID]"))
        if not marker.strip():
            phase.tags.append(("unscored", "io500 printed '[      ]': the phase does not count in this run's score"))
    if marker == "RESULT-invalid":
        phase.tags.append(("invalid", "io500 marked the result [RESULT-invalid] (a write phase shorter "
                                      "than the minimum runtime)"))
    return phase


# ---------------------------------------------------------------------------------------------
# The 2017 prototype


def read_prototype(lines: Iterable[str], source: str) -> tuple[list[Phase], str, list[tuple[str, str]]]:
    phases, scores = [], []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        where = f"line {number}"
        if PROTOTYPE_LINE.match(stripped):
            match = _PROTOTYPE_RESULT.fullmatch(stripped)
            if match is None:
                raise ToolOutputError(source, where, "expected a line such as '1/ior-easy-write BW:341025.01 "
                                      f"MB/s time: 311s' or '1/md-easy-create IOPs:12658.661 time:514s'; "
                                      f"found {stripped[:80]!r}")
            name, bandwidth, unit, rate, time = match.groups()
            if bandwidth is not None and unit != "MB/s":
                raise ToolOutputError(source, where, f"expected a bandwidth in MB/s; found {unit!r}")
            value = _value(bandwidth if bandwidth is not None else rate, where, "value", source)
            phases.append(Phase(name, number, value, "MB/s" if bandwidth is not None else "op/s",
                                _value(time, where, "time", source), hard_by_rules=False))
        elif (score := _PROTOTYPE_SCORE.fullmatch(stripped)):
            scores.append(f"{score[1]}: {score[2]}")
    return phases, "prototype 2017", [("score", "; ".join(scores))] if scores else []


def _value(text: str, where: str, what: str, source: str) -> float:
    return checked_number(text, where, source, f"a number for the {what} (a finite {what})")
