"""Benchmark: ``iobound review --darshan`` over a centre's tree of logs; logs per second per core beside PyDarshan's
own read of the same logs in one process (the peer), and peak memory at 1,000 logs and at the full count.

Why (issue 36): a centre keeps every job's log (ALCF's Intrepid: 152,167 in 2012-13); judging them must not take
days. The tree is built in a temporary folder from the real logs of ../shared/darshan-logs and the PyDarshan wheel's
small samples, linked (symlinks: the disk holds the few originals) under many names, a thousand to a folder. The
review runs as the user runs it, in a child process with a new index; its CPU time is its own and its workers'
(other load on the machine does not count; wall time is shown beside it). The peer is ``DarshanReport(path,
read_all=True)`` over the tree's first 1,000 logs in one process, its CPU time per log times the tree's logs.
Peak memory is the review process's own (Linux's peak resident set, VmHWM), and the largest of its workers' (and
their forkserver's, ru_maxrss), which this process reaps as their subreaper.

Goals: at least 50 logs per second per core (the logs over the CPU seconds of review and workers); the review's CPU
time at most 1.5x the peer's; peak memory at the full count within 1.2x (+ 20 MB) of that at 1,000 logs.

    python benchmarks/darshan_review.py [--logs 100000] [--workers N]
    python benchmarks/darshan_review.py --quick    # 300 logs, memory at 100 and 300
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = Path(os.environ.get("IOBOUND_DARSHAN_LOGS", ROOT.parent / "shared" / "darshan-logs"))
TOPOLOGY = ROOT / "tests" / "data" / "darshan" / "lustre-248.toml"
PER_CORE, PEER_RATIO, MEMORY_RATIO, MEMORY_SLACK = 50.0, 1.5, 1.2, 20.0
PEER_SAMPLE = 1000
# The review in a child: run as the user runs it, then say its CPU time and peak memory, and its workers'.
# Its peak is VmHWM, which execve resets: ru_maxrss keeps the peak of the process it was forked from.
CHILD = """
import json, sys
from assess.cli import main
status = main(sys.argv[2:])
with open("/proc/self/status") as status_file:
    peak = next(int(line.split()[1]) for line in status_file if line.startswith("VmHWM:"))
with open(sys.argv[1], "w") as out:
    json.dump({"status": status, "rss_mb": peak / 1024}, out)
"""
# prctl's PR_SET_CHILD_SUBREAPER: the review's workers are the children of multiprocessing's forkserver, which the
# review leaves to exit on its own; as their subreaper this process reaps them and counts their CPU time.
SUBREAPER = 36


def originals() -> list[Path]:
    """The logs the tree is made of: the real logs where present, and the wheel's small samples."""
    import darshan

    samples = Path(darshan.__file__).parent / "examples" / "example_logs"
    return sorted(CORPUS.glob("*.darshan")) + sorted(p for p in samples.glob("*.darshan") if p.stat().st_size < 200_000)


def build(folder: Path, logs: list[Path], count: int) -> list[Path]:
    """``count`` symlinks to ``logs`` in turn, a thousand to a folder, each under a name of its own."""
    made = []
    for n in range(count):
        place = folder / f"{n // 1000:04d}"
        if n % 1000 == 0:
            place.mkdir(parents=True)
        link = place / f"job-{n:07d}.darshan"
        link.symlink_to(logs[n % len(logs)])
        made.append(link)
    return made


def peer(paths: list[Path]) -> float:
    """CPU seconds per log of PyDarshan's own read (``read_all=True``) in one process, imports done before."""
    import darshan

    def read(path: Path) -> None:
        try:  # closed at once: left to the garbage collector, PyDarshan's __del__ can deadlock on cffi's lock
            with darshan.DarshanReport(str(path), read_all=True):
                pass
        except Exception:  # noqa: BLE001 - a log PyDarshan cannot read costs what it cost
            pass

    read(paths[0])
    start = time.process_time()
    for path in paths:
        read(path)
    return (time.process_time() - start) / len(paths)


def review(tree: Path, workers: int | None, work: Path) -> dict:
    """The review of ``tree`` with a new index, in a child: its wall time, CPU time (with its workers') and memory."""
    index, said = work / f"index-{time.monotonic_ns()}.sqlite", work / "said.json"
    argv = ["review", "--darshan", str(tree), str(TOPOLOGY), "--index", str(index), "--fail-on", "never"]
    argv += ["--workers", str(workers)] if workers else []
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, str(said), *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    workers_rss = 0
    while True:  # the forkserver and its workers, orphaned by the review: reaped here, their CPU time counted
        try:
            workers_rss = max(workers_rss, os.wait4(-1, 0)[2].ru_maxrss)
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"the review failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    found = json.loads(said.read_text()) | {"wall": wall, "cpu": cpu, "worker_rss_mb": workers_rss / 1024,
                                            "summary": done.stdout.splitlines()[3]}
    index.unlink()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=100_000, help="logs in the tree (default 100,000)")
    parser.add_argument("--workers", type=int, help="the review's worker processes (default: one per CPU)")
    parser.add_argument("--quick", action="store_true", help="300 logs, memory at 100 and 300")
    args = parser.parse_args()
    from probes.core.machine import cpus

    ctypes.CDLL(None, use_errno=True).prctl(SUBREAPER, 1, 0, 0, 0)
    count, small = (300, 100) if args.quick else (args.logs, min(1000, args.logs))
    workers = args.workers or cpus()
    logs = originals()
    with tempfile.TemporaryDirectory(prefix="iobound-darshan-bench-") as folder:
        work = Path(folder)
        paths = build(work / "tree", logs, count)
        first = work / "first"
        first.mkdir()
        for path in paths[:small]:
            (first / path.name).symlink_to(path.resolve())
        print(f"tree: {count:,} logs, links to {len(logs)} originals ({len(list(CORPUS.glob('*.darshan')))} real logs of "
              f"{CORPUS}, the rest PyDarshan's samples), {workers} worker(s) on {cpus()} CPU(s)")
        per_log = peer(paths[:PEER_SAMPLE])
        at_small = review(first, workers, work)
        full = review(work / "tree", workers, work) if count > small else at_small
    rate_cpu = count / full["cpu"]
    rate_wall = count / full["wall"] / workers
    ratio = full["cpu"] / (per_log * count)
    print(f"review: {count:,} logs in {full['wall']:.1f} s wall, {full['cpu']:.1f} s CPU (review and workers): "
          f"{rate_cpu:.1f} logs/s per core of CPU ({rate_wall:.1f} logs/s per worker by wall time); {full['summary']}")
    print(f"peer: PyDarshan's DarshanReport(read_all=True) in one process: {per_log * 1000:.2f} ms CPU per log over the "
          f"first {min(PEER_SAMPLE, count):,} logs ({1 / per_log:.1f} logs/s per core); {per_log * count:.1f} s CPU for "
          f"{count:,}")
    print(f"memory: review {at_small['rss_mb']:.0f} MB at {small:,} logs, {full['rss_mb']:.0f} MB at {count:,}; largest "
          f"worker {at_small['worker_rss_mb']:.0f} MB and {full['worker_rss_mb']:.0f} MB")
    flat = full["rss_mb"] <= MEMORY_RATIO * at_small["rss_mb"] + MEMORY_SLACK
    print(f"goal: >= {PER_CORE:g} logs/s per core: {rate_cpu:.1f}: {'PASS' if rate_cpu >= PER_CORE else 'MISS'}")
    print(f"goal: <= {PEER_RATIO}x PyDarshan's own read: {ratio:.2f}x: {'PASS' if ratio <= PEER_RATIO else 'MISS'}")
    print(f"goal: memory flat ({count:,} logs within {MEMORY_RATIO}x + {MEMORY_SLACK:g} MB of {small:,}): "
          f"{full['rss_mb']:.0f} MB vs {at_small['rss_mb']:.0f} MB: {'PASS' if flat else 'MISS'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
