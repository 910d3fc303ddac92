"""Benchmark: judging a whole io500 list (`iobound review`), beside what the same work costs done another way.

Why: the IO500 committee's question ("is every result below what its hardware can do?") is asked of
whole lists; one that takes seconds to judge is judged at every list. Measured in the same run:

- ``review``: the whole list judged in this process (read, a topology per submission, every phase's
  ceiling interval and findings), CPU seconds, the first time (later repeats reuse the ceilings the process
  solved: their best is shown beside it); and the command a user runs,
  ``python -m assess review LIST`` as a new process (its start-up included), wall seconds;
- peer ``csv``: reading the CSV alone with the csv module (the floor of any reader);
- peer ``read``: reading and parsing the list alone (its submissions and runs: no model);
- peer ``describe``: reading plus building every submission's topology (no ceilings);
- peer ``check per submission``: ``iobound check`` as a new process on one submission (the
  corpus's LRZ DAOS description and results), times the list's judged submissions: what judging
  the list one submission at a time would cost.

Goals: the whole shared list judged in under 10 s on this machine (the command's wall time, issue 20), and in
≤ 4 s of CPU in-process (issue 31).

    python benchmarks/review.py [--repeat 3] [--quick]

--quick runs one repeat. Exit status 0 (it is a report); 2 when the corpus is absent.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from probes.core.registry import lean  # noqa: E402

lean()  # pint loads as the command line loads it: the figures below are the commands'

CORPUS = Path(os.environ.get("IOBOUND_CORPUS", ROOT.parent / "shared" / "corpus"))
LIST = CORPUS / "io500-list" / "io500-db-2017-2019_submissions.csv"
GOAL_SECONDS = 10.0
GOAL_CPU = 4.0


def _cpu(work) -> tuple[float, object]:
    started = time.process_time()
    result = work()
    return time.process_time() - started, result


def _wall(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "assess", *args], cwd=ROOT, check=False, capture_output=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one repeat (a smoke run)")
    args = parser.parse_args()
    if not LIST.is_file():
        print(f"the io500 list database is not at {LIST} (set IOBOUND_CORPUS)")
        return 2
    repeat = 1 if args.quick else args.repeat
    from probes.readers.io500_system import read_list
    from topologies.described.io500 import describe
    from assess.review import UNJUDGED, review

    text = LIST.read_text(encoding="utf-8")
    csv_alone = min(_cpu(lambda: list(csv.reader(io.StringIO(text))))[0] for _ in range(repeat))
    read = min(_cpu(lambda: read_list(text, source=str(LIST)))[0] for _ in range(repeat))
    submissions = read_list(text, source=str(LIST))
    described = min(_cpu(lambda: [describe(s.description) for s in submissions])[0] for _ in range(repeat))
    runs = [_cpu(lambda: list(review(read_list(text, source=str(LIST))))) for _ in range(repeat)]
    judged, warm = runs[0][0], min(cpu for cpu, _ in runs)  # the first from cold; later ones reuse solved ceilings
    reviewed = runs[0][1]
    phases = sum(p.verdict != UNJUDGED for r in reviewed for p in r.phases)
    stating = sum(r.described.topology is not None for r in reviewed)
    command = min(_wall("review", str(LIST), "--fail-on", "never") for _ in range(repeat))
    with tempfile.TemporaryDirectory() as folder:
        submission = Path(folder) / "results"
        submission.mkdir()
        shutil.copy(CORPUS / "io500" / "lrz-daos_system-information.txt", submission / "system-information.txt")
        shutil.copy(CORPUS / "io500" / "lrz-daos_io500-isc25_result.txt", submission / "result.txt")
        one = min(_wall("check", str(submission), "--fail-on", "never") for _ in range(repeat))
    print(f"list:      {LIST.name}: {len(reviewed)} submissions, {stating} with a topology, {phases} phases judged")
    print(f"review:    {judged:.2f} s CPU in-process ({judged / max(phases, 1) * 1e3:.2f} ms per phase; again in the "
          f"same process, its ceilings solved already: {warm:.2f} s); the command: {command:.2f} s wall")
    print(f"peers:     csv module alone {csv_alone:.3f} s CPU (the review takes {judged / csv_alone:.0f}x as much); "
          f"read {read:.2f} s CPU; read + describe {read + described:.2f} s CPU; "
          f"check per submission {one:.2f} s wall x {stating} = {one * stating:.0f} s "
          f"({one * stating / command:.0f}x the review)")
    print(f"goal:      the whole list in < {GOAL_SECONDS:g} s (the command's wall time): {command:.2f} s: "
          f"{'PASS' if command < GOAL_SECONDS else 'MISS'}")
    print(f"goal:      the whole list in ≤ {GOAL_CPU:g} s CPU in-process: {judged:.2f} s: "
          f"{'PASS' if judged <= GOAL_CPU else 'MISS'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
