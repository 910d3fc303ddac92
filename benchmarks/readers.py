"""Benchmark: read the whole corpus (goal under 2 s of CPU), then fuzz every reader (goal: no exception but ToolOutputError).

Why: ``iobound read`` and ``check`` read whole folders of results, and a reader meets files
cut short or edited by hand; it must refuse them clearly, never crash. The corpus of real
tool outputs (../shared/corpus) is read once through format detection, timed in CPU time
(time.process_time: other load on the machine does not count; wall time is shown beside
it). Then each reader gets ``--fuzz`` mutated copies of its own corpus files (cut, lines
dropped or repeated, characters flipped, numbers replaced, pieces swapped:
benchmarks/mutations.py, which tests/test_read.py uses too); every input must give runs or
a ToolOutputError. Prints the time, the runs read, and per reader what happened; exits 1 if
a reader raised anything else.

    python benchmarks/readers.py [--corpus ../shared/corpus] [--fuzz 10000]
    python benchmarks/readers.py --quick    # 200 inputs per reader
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOAL_SECONDS = 2.0

from probes.core.errors import ToolOutputError  # noqa: E402
from probes.readers import READERS, read_results  # noqa: E402
from benchmarks.mutations import mutate  # noqa: E402


def read_corpus(corpus: Path) -> dict[str, list[str]]:
    """Read every file once through format detection; the per-reader lists of texts for fuzzing."""
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.name not in ("README.md", "SOURCES.tsv"))
    from probes.core.stats import summarize
    summarize([1.0, 2.0])  # scipy's import (about 1 s) is start-up, not reading
    start, cpu = time.perf_counter(), time.process_time()
    runs, refused = 0, 0
    for path in files:
        try:
            runs += len(read_results(path))
        except ToolOutputError:
            refused += 1
    cpu, elapsed = time.process_time() - cpu, time.perf_counter() - start
    print(f"corpus: {len(files)} files read in {cpu:.3f} s CPU (wall {elapsed:.3f} s): {runs} runs, {refused} files "
          "refused (configs, job files, failed runs, formats iobound does not read)")
    print(f"goal: the corpus read in < {GOAL_SECONDS:g} s CPU: {'PASS' if cpu < GOAL_SECONDS else 'MISS'}")
    texts: dict[str, list[str]] = {name: [] for name in READERS}
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for name, module in READERS.items():
            if module.looks_like(text):
                texts[name].append(text)
                break
    # The corpus has no results tables; the bundled example is one.
    texts["table"] += [p.read_text(encoding="utf-8") for p in (ROOT / "topologies" / "examples").glob("*.csv")]
    return texts


def fuzz(texts: dict[str, list[str]], count: int, seed: int) -> int:
    rng = random.Random(seed)
    failures = 0
    for name, originals in texts.items():
        if not originals:
            print(f"{name:12} no corpus file")
            continue
        module = READERS[name]
        outcome: Counter[str] = Counter()
        start = time.process_time()
        for _ in range(count):
            text = mutate(rng.choice(originals), rng)
            try:
                module.parse(text, source="fuzz")
                outcome["runs"] += 1
            except ToolOutputError:
                outcome["ToolOutputError"] += 1
            except Exception:  # the defect this benchmark looks for
                outcome["other exception"] += 1
                if outcome["other exception"] <= 3:
                    traceback.print_exc()
        failures += outcome["other exception"]
        print(f"{name:12} {count} inputs in {time.process_time() - start:5.1f} s CPU: {outcome['runs']} read, "
              f"{outcome['ToolOutputError']} refused clearly, {outcome['other exception']} other exceptions")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--fuzz", type=int, default=10_000, help="mutated inputs per reader")
    parser.add_argument("--quick", action="store_true", help="200 mutated inputs per reader (a smoke run)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        args.fuzz = 200
    if not args.corpus.is_dir():
        print(f"corpus of real tool outputs not found at {args.corpus} (--corpus names it)", file=sys.stderr)
        return 2
    texts = read_corpus(args.corpus)
    failures = fuzz(texts, args.fuzz, args.seed)
    print(f"goal: no exception but ToolOutputError: {'PASS' if not failures else f'MISS, {failures} other exceptions'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
