"""Benchmark: how often iobound is right, on the shared io500 list and MLPerf Storage results; the accuracy page.

Why: a checker is trusted for what it catches and for what it does not raise. Measured here, on
results none of iobound's tables were built from:

- the io500 list (../shared/corpus/io500-list): phases judged and unjudged, the count of each
  verdict, and every error with the figure it rests on;
- planted anomalies: the same list with every ior-easy and every mdtest-easy result multiplied
  by 2, 5, 20 and 100, and the share of those judged phases caught (an error, or an
  IMPLAUSIBLE-HARDWARE warning: a part that did not exist would be needed);
- the MLPerf Storage runs (../shared/corpus/mlperf-storage): each run judged on its own
  system description, with the verdicts and errors, or why its description was refused.

Goal (issue 31): with results x5, at least half the judged ior-easy phases caught; x20, at least
95 %; x100, at least 80 % of the judged mdtest-easy phases.

    python benchmarks/accuracy.py [-o docs/accuracy.md] [--quick]

``-o`` writes the page (Markdown); without it the figures are printed only. --quick judges every
tenth submission with x5 and x20 only (a smoke run: its shares are not the page's). Exit status 0
(it is a report); 2 when the corpus is absent.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from probes.core.registry import lean  # noqa: E402

lean()  # pint loads as the command line loads it: the figures below are the commands'

CORPUS = Path(os.environ.get("IOBOUND_CORPUS", ROOT.parent / "shared" / "corpus"))
LIST = CORPUS / "io500-list" / "io500-db-2017-2019_submissions.csv"
MLPERF = CORPUS / "mlperf-storage"
FACTORS = (2, 5, 20, 100)
PLANTED = {"ior-easy": ("ior-easy-write", "ior-easy-read"),
           "mdtest-easy": ("mdtest-easy-write", "mdtest-easy-stat", "mdtest-easy-delete")}
GOALS = ((5, "ior-easy", 0.50), (20, "ior-easy", 0.95), (100, "mdtest-easy", 0.80))
CAUGHT_BY = "IMPLAUSIBLE-HARDWARE"


def _caught(phase) -> bool:
    """An error (as review calls it), or the warning that the implied part never existed: review's verdict says both."""
    return phase.verdict in ("ABOVE-CEILING", CAUGHT_BY)


def _planted(runs, factor: float):
    """The runs with every planted phase's result multiplied by ``factor``."""
    labels = {label for phases in PLANTED.values() for label in phases}
    return [dataclasses.replace(r, samples=tuple(s * factor for s in r.samples)) if r.label in labels else r
            for r in runs]


def _io500(every: int, factors: tuple[int, ...]) -> dict:
    """The list judged as it is and with planted anomalies: counts, errors, and the shares caught."""
    from probes.readers.io500_system import read_list
    from assess.review import UNJUDGED, review

    submissions = read_list(LIST.read_text(encoding="utf-8"), source=str(LIST))[::every]
    reviewed = list(review(submissions))
    phases = [(r, p) for r in reviewed for p in r.phases]
    verdicts = Counter(p.verdict for _, p in phases)
    errors = [(r, p) for r, p in phases if p.verdict == "ABOVE-CEILING"]
    implausible = [(r, p) for r, p in phases if p.verdict == CAUGHT_BY]
    judged = {r.submission.id: {p.label for p in r.phases if p.verdict != UNJUDGED} for r in reviewed}
    caught: dict[tuple[int, str], tuple[int, int]] = {}
    for factor in factors:
        found = Counter()
        planted = [dataclasses.replace(s, runs=tuple(_planted(s.runs, factor))) for s in submissions]
        for r in review(planted):
            for phase in r.phases:
                kind = next((k for k, labels in PLANTED.items() if phase.label in labels), None)
                if kind and phase.label in judged[r.submission.id]:
                    found[kind, "judged"] += 1
                    found[kind, "caught"] += _caught(phase)
        for kind in PLANTED:
            caught[factor, kind] = (found[kind, "caught"], found[kind, "judged"])
    return {"submissions": len(reviewed), "described": sum(r.described.topology is not None for r in reviewed),
            "phases": len(phases), "verdicts": verdicts, "errors": errors, "implausible": implausible,
            "caught": caught}


def _mlperf() -> list[tuple[str, str, Counter, list[str]]]:
    """Per MLPerf run folder: its name, the description's fate ("" when built, else why not), verdicts, errors."""
    from probes.core.errors import IoboundError
    from topologies.bundled import read_runs
    from topologies.described.mlperf import is_system_description, system_topology
    from assess.check import check_runs

    rows = []
    for folder in sorted({p.parent for p in MLPERF.rglob("summary.json")}):
        name = str(folder.relative_to(MLPERF))
        described = [p for p in sorted(folder.iterdir()) if p.is_file() and is_system_description(p)]
        if not described:
            rows.append((name, "no system description in the folder", Counter(), []))
            continue
        try:
            topology = system_topology(described[0])
            judgements = check_runs(topology, read_runs(str(folder / "summary.json")))
        except IoboundError as exc:
            rows.append((name, str(exc).splitlines()[0], Counter(), []))
            continue
        codes = Counter(f.code for j in judgements for f in j.findings)
        errors = [f"{j.run.label}: {f.message}" for j in judgements for f in j.findings if f.severity.name == "ERROR"]
        rows.append((name, "", codes, errors))
    return rows


def _share(pair: tuple[int, int]) -> str:
    caught, judged = pair
    return f"{caught}/{judged} ({caught / judged:.0%})" if judged else "0/0"


def _page(io500: dict, mlperf: list, seconds: float, every: int) -> str:
    """The accuracy page in Markdown."""
    from assess.review import VERDICTS

    lines = ["# How often iobound is right", "",
             "Written by `python benchmarks/accuracy.py -o docs/accuracy.md` "
             f"({time.strftime('%Y-%m-%d')}, {seconds:.0f} s); every figure below is measured by it, none typed in.", "",
             "No table of iobound's judges these results: errors stand on the figures the descriptions state and on "
             "physics (see the README's rule), and the published metadata rates are information only.", "",
             f"## The io500 list ({LIST.name}{'' if every == 1 else f', every {every}th submission'})", "",
             f"{io500['submissions']} submissions, {io500['described']} with a description that gives a topology; "
             f"{io500['phases']} phases.", "", "| verdict | phases |", "|---|---:|"]
    lines += [f"| {v} | {io500['verdicts'][v]} |" for v in (*VERDICTS, "within", "unjudged") if io500["verdicts"][v]]
    lines += ["", f"### Every error ({len(io500['errors'])})", ""]
    if not io500["errors"]:
        lines.append("None.")
    for reviewed, phase in io500["errors"]:
        lines.append(f"- submission {reviewed.submission.id} ({reviewed.submission.description.title}), "
                     f"{phase.label}: {phase.implies}")
    lines += ["", f"### Every {CAUGHT_BY} ({len(io500['implausible'])})", ""]
    if not io500["implausible"]:
        lines.append("None.")
    for reviewed, phase in io500["implausible"]:
        lines.append(f"- submission {reviewed.submission.id}, {phase.label}: {phase.implies}")
    lines += ["", "### Planted anomalies", "",
              "Every ior-easy and mdtest-easy result of the list multiplied by a factor, the rest unchanged; a planted "
              f"phase is caught by an error or an {CAUGHT_BY} warning. Shares are of the phases judged.", "",
              "| factor | ior-easy caught | mdtest-easy caught |", "|---:|---:|---:|"]
    factors = sorted({f for f, _ in io500["caught"]})
    lines += [f"| x{f} | {_share(io500['caught'][f, 'ior-easy'])} | {_share(io500['caught'][f, 'mdtest-easy'])} |"
              for f in factors]
    lines += ["", "## MLPerf Storage runs", "", "| run | description | findings | errors |", "|---|---|---|---:|"]
    for name, refused, codes, errors in mlperf:
        found = ", ".join(f"{c} {n}" for c, n in sorted(codes.items())) or "none"
        lines.append(f"| {name} | {refused or 'built'} | {found} | {len(errors)} |")
    every_error = [(name, e) for name, _, _, errors in mlperf for e in errors]
    lines += ["", f"Errors ({len(every_error)}):" if every_error else "No errors.", ""]
    lines += [f"- {name}: {e}" for name, e in every_error]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, help="write the accuracy page (Markdown) here")
    parser.add_argument("--quick", action="store_true", help="every tenth submission, x5 and x20 (a smoke run)")
    args = parser.parse_args()
    if not LIST.is_file():
        print(f"the io500 list database is not at {LIST} (set IOBOUND_CORPUS)")
        return 2
    every, factors = (10, (5, 20)) if args.quick else (1, FACTORS)
    started = time.perf_counter()
    io500 = _io500(every, factors)
    mlperf = _mlperf() if MLPERF.is_dir() else []
    seconds = time.perf_counter() - started
    print(f"list:      {io500['submissions']} submissions, {io500['described']} described, {io500['phases']} phases: "
          + ", ".join(f"{v} {n}" for v, n in io500["verdicts"].most_common()))
    print(f"errors:    {len(io500['errors'])} on the list as published; {len(io500['implausible'])} {CAUGHT_BY}")
    for factor in factors:
        print(f"planted:   x{factor}: ior-easy {_share(io500['caught'][factor, 'ior-easy'])}, "
              f"mdtest-easy {_share(io500['caught'][factor, 'mdtest-easy'])} caught")
    built = sum(not refused for _, refused, _, _ in mlperf)
    print(f"mlperf:    {len(mlperf)} runs, {built} judged on their description, "
          f"{sum(len(e) for *_, e in mlperf)} errors")
    for factor, kind, goal in GOALS:
        if factor in factors:
            caught, judged = io500["caught"][factor, kind]
            share = caught / judged if judged else 0.0
            print(f"goal:      x{factor} {kind}: >= {goal:.0%} caught: {share:.0%}: {'PASS' if share >= goal else 'MISS'}")
    print(f"time:      {seconds:.1f} s")
    if args.output:
        from probes.core.outputs import write_replacing

        args.output.parent.mkdir(parents=True, exist_ok=True)
        write_replacing(args.output, _page(io500, mlperf, seconds, every))
        print(f"written:   {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
