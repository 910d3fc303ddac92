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

Large outputs (issue 19): a 60 MB fio JSON and a 50 MB IOR log are built from the corpus's
outputs in a temporary folder (jobs and runs repeated) and read as ``iobound read`` does,
timed in CPU time (the best of 3, imports done before) beside the floor of their format:
goals, the fio JSON within 2x ``json.load`` of the same file, the IOR log within 20x reading
and splitting its lines, and each runs table printed in under a quarter of its read.
``--quick`` builds 2 MB files instead.

Any input, safely (issue 19): ``--fuzz`` inputs each through the bounded opener (mutated outputs
written as files, their bytes mutated too, paths that are FIFOs, directories, devices, sockets),
mutated bundled topologies (loaded, shown, a ceiling predicted) and mutated results CSVs (read
and printed); goal: 0 tracebacks, 0 hangs over 5 s of CPU (an alarm stops them; an input that
waits 30 s is one too) and no input whose memory peak passes 3x its size + 100 MB (Linux's
peak resident memory, reset before each). Then ``iobound read`` reads a 500 MB file in a child
process (an IOR output amid a job's launcher lines, and a sparse file of NULs; ``--quick``:
50 MB): its peak memory beside the same bound.

A list of any size (issue 33): a 1 GB io500 list CSV (2.1 M rows; ``--quick``: 5 MB) is built in a temporary folder
from the shared list's rows repeated under new ids (its systems recur, as on a list of many years), and read by the
csv module alone (the peer) and by ``iobound review --csv --progress``, each in a child process: its peak resident
memory (goal: under 200 MB), its time, and what its progress said. Judging 2.1 M submissions takes far longer than a
benchmark may (tens of ms each): the review is stopped after ``--list-seconds`` (default 300; ``--quick`` 20) and its
pace projected to the whole list.

    python benchmarks/readers.py [--corpus ../shared/corpus] [--fuzz 10000] [--list-seconds 300]
    python benchmarks/readers.py --quick    # 200 inputs per reader
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from probes.core.registry import lean  # noqa: E402

lean()  # pint loads as the command line loads it: the figures below are the commands'

GOAL_SECONDS = 2.0

from probes.core.errors import ToolOutputError  # noqa: E402
from probes.readers import READERS, read_results  # noqa: E402
from benchmarks.mutations import mutate, mutate_bytes  # noqa: E402


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


# Large outputs: the sizes built (bytes), and the goals: the read within so many times its format's floor,
# the table printed in under this share of the read.
LARGE_SIZES = {"fio": 60_000_000, "ior": 50_000_000}
QUICK_SIZE = 2_000_000
LARGE_GOALS = {"fio": 2.0, "ior": 20.0}
TABLE_GOAL = 0.25
REPEATS = 3


def large_fio(corpus: Path, size: int) -> str:
    """A fio JSON output of about ``size`` bytes: the jobs of the corpus's fio JSON output with the most jobs that
    iobound reads, repeated (as numjobs clones without group_reporting print them), laid out as fio does."""
    from probes.readers import fio

    candidates = []
    for path in sorted((corpus / "fio").glob("*.json")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            fio.parse(text, source=path.name)
            document = json.loads(text)
        except (ToolOutputError, ValueError):
            continue
        candidates.append((len(document["jobs"]), len(text), path.name, document))
    document = max(candidates, key=lambda c: c[:3])[3]
    jobs = document["jobs"]

    def dumped(count: int) -> str:
        return json.dumps({**document, "jobs": [jobs[i % len(jobs)] for i in range(count)]}, indent=2,
                          separators=(",", " : "))

    one, two = len(dumped(len(jobs))), len(dumped(2 * len(jobs)))
    return dumped(max(len(jobs), round(len(jobs) * (1 + (size - one) / (two - one)))))


def large_ior(corpus: Path, size: int) -> str:
    """An IOR log of about ``size`` bytes: the corpus's IOR text outputs that iobound reads, one after another and
    again, as a script that runs IOR many times logs them."""
    from probes.readers import ior

    outputs = []
    for path in sorted((corpus / "ior").glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            ior.parse(text, source=path.name)
        except ToolOutputError:
            continue
        outputs.append(text if text.endswith("\n") else text + "\n")
    parts, length = [], 0
    while length < size:
        text = outputs[len(parts) % len(outputs)]
        parts.append(text)
        length += len(text)
    return "".join(parts)


def _best(work, repeats: int = REPEATS) -> tuple[float, object]:
    """The least CPU time of ``repeats`` calls of ``work`` (other load on the machine barely counts), and its result."""
    best, result = math.inf, None
    for _ in range(repeats):
        result = None  # the previous result is not kept while the next is made
        start = time.process_time()
        result = work()
        best = min(best, time.process_time() - start)
    return best, result


def _floor_fio(path: Path) -> None:
    with open(path, encoding="utf-8") as file:
        json.load(file)


def _floor_ior(path: Path) -> None:
    with open(path, encoding="utf-8", errors="replace") as file:
        file.read().splitlines()


def large_outputs(corpus: Path, quick: bool) -> None:
    """Build a large fio JSON and IOR log from the corpus in a temporary folder, and print how fast they are read
    beside their format's floor, and how fast their runs table is printed beside the read."""
    from assess.render import runs_table

    kinds = (("fio", "fio JSON", large_fio, _floor_fio, "json.load"),
             ("ior", "IOR log", large_ior, _floor_ior, "reading and splitting its lines"))
    tables = []
    with tempfile.TemporaryDirectory(prefix="iobound-large-") as folder:
        for kind, name, build, floor, floor_name in kinds:
            path = Path(folder) / f"large-{kind}.out"
            path.write_text(build(corpus, 50_000), encoding="utf-8")
            runs_table(read_results(path))  # imports, the unit registry and scipy.stats are loaded before timing
            path.write_text(build(corpus, QUICK_SIZE if quick else LARGE_SIZES[kind]), encoding="utf-8")
            floor_seconds, _ = _best(lambda: floor(path))
            read_seconds, runs = _best(lambda: read_results(path))
            table_seconds, _ = _best(lambda: runs_table(runs))
            ratio, goal = read_seconds / floor_seconds, LARGE_GOALS[kind]
            print(f"large {name}: {path.stat().st_size / 1e6:.1f} MB, {len(runs):,} runs: read in {read_seconds:.3f} s CPU, "
                  f"{floor_name} {floor_seconds:.3f} s (the best of {REPEATS}, built from the corpus in a temporary folder)")
            print(f"goal: a large {name} read within {goal:g}x {floor_name}: {ratio:.2f}x: "
                  f"{'PASS' if ratio <= goal else 'MISS'}")
            tables.append((name, table_seconds, table_seconds / read_seconds))
    shown = ", ".join(f"{name} {seconds:.3f} s ({share:.2f}x)" for name, seconds, share in tables)
    met = all(share < TABLE_GOAL for _, _, share in tables)
    print(f"goal: the runs table printed in < {TABLE_GOAL:g}x the read: {shown}: {'PASS' if met else 'MISS'}")


# ---------------------------------------------------------------------------------------------
# Any input, safely (issue 19): the bounded opener, topologies and results CSVs fuzzed through files,
# as a user's command meets them, and a large file read under the memory bound.

HANG_SECONDS = 5.0  # an input that takes longer (CPU time: other load on the machine does not count) is a hang
BLOCKED_SECONDS = 30.0  # an input that waits this long (wall time, no CPU: a FIFO waiting for a writer) is one too
ALLOWANCE = 100_000_000  # the memory bound of reading a file: 3x its size plus this
LARGE_FILE = 500_000_000  # the large file read in a child process (--quick: a tenth)


class _Hang(Exception):
    """Raised by the alarm when one input takes longer than HANG_SECONDS."""


def _alarm(signum, frame):
    raise _Hang


def _memory() -> tuple[int, int]:
    """This process's resident memory and its peak since the last reset, in bytes (Linux's /proc/self/status)."""
    with open("/proc/self/status", encoding="ascii") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
        f.write("5")  # the peak (VmHWM) starts again from what is resident now


class _Tally:
    """What the inputs of one fuzz came to: read, refused clearly, hangs, tracebacks; the slowest; the most memory."""

    def __init__(self) -> None:
        self.outcome: Counter[str] = Counter()
        self.slowest, self.peak, self.over = 0.0, 0, 0

    def run(self, work, size: int, expected: type[Exception]) -> None:
        """Run ``work()`` on an input of ``size`` bytes; an exception other than ``expected`` is a traceback."""
        _reset_peak()
        before = _memory()[0]
        start = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, HANG_SECONDS)
        signal.setitimer(signal.ITIMER_REAL, BLOCKED_SECONDS)
        try:
            work()
            self.outcome["read"] += 1
        except _Hang:
            self.outcome["hang"] += 1
        except expected:
            self.outcome["refused"] += 1
        except Exception:  # the defect this fuzz looks for: a user would see a traceback or an internal error
            self.outcome["traceback"] += 1
            if self.outcome["traceback"] <= 3:
                traceback.print_exc()
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
        self.slowest = max(self.slowest, time.process_time() - start)
        grown = _memory()[1] - before
        self.peak = max(self.peak, grown)
        self.over += grown > 3 * size + ALLOWANCE

    def report(self, count: int, what: str) -> int:
        """Print the figures; the number of inputs that missed (tracebacks, hangs, memory over the bound)."""
        print(f"fuzz: {count:,} {what}: {self.outcome['traceback']} tracebacks, {self.outcome['hang']} hangs over "
              f"{HANG_SECONDS:g} s, peak memory {self.peak / 1e6:.1f} MB (the most one input added; {self.over} over "
              f"3x its size + {ALLOWANCE / 1e6:g} MB); {self.outcome['read']} read, {self.outcome['refused']} refused "
              f"clearly; slowest {self.slowest:.2f} s CPU")
        return self.outcome["traceback"] + self.outcome["hang"] + self.over


def _special_paths(folder: Path, keep: list) -> list[Path]:
    """Paths that name no regular file, or nothing: each must be refused at once, never read."""
    import socket

    os.mkfifo(folder / "fifo")
    (folder / "directory").mkdir()
    (folder / "zero").symlink_to("/dev/zero")
    (folder / "dangling").symlink_to(folder / "nowhere")
    (folder / "loop").symlink_to(folder / "loop")
    (folder / "plain").write_text("a regular file\n")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "socket"))
    keep.append(server)
    return [folder / "fifo", folder / "directory", folder / "zero", Path("/dev/null"), folder / "dangling",
            folder / "loop", folder / "socket", folder / "plain" / "below", folder / "missing", Path("a\0b"),
            folder / ("x" * 300)]


def fuzz_opener(texts: dict[str, list[str]], count: int, rng: random.Random, folder: Path) -> int:
    """``count`` inputs read as ``iobound read`` reads them: mutated outputs written as files, a third with their
    bytes mutated (other encodings, bytes no UTF-8, NULs ...), one in ten a path that is no regular file, and a few
    larger than the limit or than the first 4 MiB that name their format."""
    from probes.core.inputs import input_limit

    keep: list = []
    specials = _special_paths(folder, keep)
    originals = [text for name in sorted(texts) for text in texts[name]]
    path, tally = folder / "input", _Tally()
    for _ in range(count):
        roll = rng.random()
        if roll < 0.1:
            special = rng.choice(specials)
            tally.run(lambda: read_results(special), 0, ToolOutputError)
            continue
        data = mutate(rng.choice(originals), rng).encode("utf-8")
        if roll < 0.4:
            data = mutate_bytes(data, rng)
        if roll > 0.997:  # past the sniff: the head names the format, or the file is refused unread
            data = rng.choice([data + b"\0" * 5_000_000, b"\0" * 5_000_000 + data, data * (5_000_000 // len(data) + 1)
                               if data else b""])
        path.write_bytes(data)
        with input_limit(1024 if roll > 0.99 and len(data) > 1024 else None):  # over the limit
            tally.run(lambda: read_results(path), len(data), ToolOutputError)
    for item in keep:
        item.close()
    return tally.report(count, "inputs through the opener")


def fuzz_topologies(count: int, rng: random.Random, folder: Path) -> int:
    """``count`` mutated bundled topologies, loaded, shown and asked for a ceiling, as ``iobound topology`` and
    ``iobound predict`` do; an IoboundError (a one-line error) is a clear refusal."""
    from assess.cli.topology import render
    from models.predict import predict
    from probes.core.errors import IoboundError
    from probes.core.units import Q_
    from probes.core.workload import Operation, Workload
    from topologies.load import load_topology

    workload = Workload(Operation.WRITE, Q_(1, "MiB"))
    originals = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "topologies" / "examples").glob("*.toml"))]
    path, tally = folder / "topology.toml", _Tally()

    def work() -> None:
        topology = load_topology(path)
        render(topology)
        predict(topology, workload)

    for _ in range(count):
        data = mutate(rng.choice(originals), rng).encode("utf-8")
        if rng.random() < 0.1:
            data = mutate_bytes(data, rng)
        path.write_bytes(data)
        tally.run(work, len(data), IoboundError)
    return tally.report(count, "topologies")


def fuzz_results_csvs(corpus: Path, count: int, rng: random.Random, folder: Path) -> int:
    """``count`` mutated results CSVs (the bundled ones, and the corpus's runs as ``iobound read --csv`` writes
    them), read and printed as ``iobound read`` does."""
    from assess.render import runs_table
    from probes.core.run import results_csv

    originals = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "topologies" / "examples").glob("*.csv"))]
    for kind in ("ior", "mdtest", "fio", "iperf3"):
        for source in sorted((corpus / kind).glob("*"))[:3]:
            try:
                originals.append(results_csv(read_results(source)))
            except ToolOutputError:
                continue
    path, tally = folder / "results.csv", _Tally()
    for _ in range(count):
        data = mutate(rng.choice(originals), rng).encode("utf-8")
        if rng.random() < 0.1:
            data = mutate_bytes(data, rng)
        path.write_bytes(data)
        tally.run(lambda: runs_table(read_results(path)), len(data), ToolOutputError)
    return tally.report(count, "results CSVs")


# iobound's command line, then its own peak resident memory on the last line of stderr (a child's ru_maxrss
# starts from its parent's memory at the fork, this benchmark's included).
_PEAK = ("import sys\nfrom assess.cli import main\nstatus = main(sys.argv[1:])\n"
         "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0], file=sys.stderr)\nsys.exit(status)")


def _peak_of(arguments: list[str]) -> tuple[int, float, int, str]:
    """Run ``iobound ARGUMENTS``: its exit status, wall time, peak resident memory (bytes) and what it said last."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PEAK, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, cwd=ROOT)
    *said, peak = done.stderr.strip().splitlines() or ["0"]
    return done.returncode, time.perf_counter() - start, int(peak) * 1024, (said or [""])[-1]


def large_file(corpus: Path, quick: bool) -> int:
    """Read a large file with ``iobound read`` in a child process: a real IOR output amid a job's launcher lines,
    and NUL bytes (a sparse file); print each one's peak memory beside the bound. The number that missed it."""
    size = LARGE_FILE // 10 if quick else LARGE_FILE
    command = ["read"]
    small = ROOT / "topologies" / "examples" / "lecture-results.csv"
    _, _, baseline, _ = _peak_of(command + [str(small)])
    output = next(text for path in sorted((corpus / "ior").glob("*.txt"))
                  if _reads(text := path.read_text(encoding="utf-8", errors="replace")))
    noise = "".join(f"srun: task {i}: running on node c{i:04d}; module load openmpi/4.1 done, environment set\n"
                    for i in range(1000)).encode()
    missed = 0
    with tempfile.TemporaryDirectory(prefix="iobound-large-file-") as folder:
        job = Path(folder) / "job.log"
        with open(job, "wb") as f:
            f.write(output.encode())
            while f.tell() < size:
                f.write(noise)
        sparse = Path(folder) / "zeros.bin"
        with open(sparse, "wb") as f:
            f.truncate(size)
        for path, what in ((job, "an IOR output amid a job's launcher lines"), (sparse, "NUL bytes (a sparse file)")):
            bytes_ = path.stat().st_size
            status, seconds, peak, said = _peak_of(command + [str(path)])
            above, bound = max(0, peak - baseline), 3 * bytes_ + ALLOWANCE
            missed += above > bound or status not in (0, 2)
            print(f"large file: {bytes_ / 1e6:.0f} MB of {what}: exit {status} in {seconds:.1f} s, peak memory "
                  f"{peak / 1e6:.0f} MB, {above / 1e6:.0f} MB above a small file's ({baseline / 1e6:.0f} MB); bound "
                  f"3x + {ALLOWANCE / 1e6:g} MB = {bound / 1e6:.0f} MB: {'PASS' if above <= bound else 'MISS'}"
                  + (f"; {said.split(';')[0]}" if status else ""))
    return missed


def _reads(text: str) -> bool:
    from probes.readers import ior

    try:
        return bool(ior.parse(text, source="corpus"))
    except ToolOutputError:
        return False


# ---------------------------------------------------------------------------------------------
# A list of any size (issue 33): a 1 GB list CSV read by review in the memory of the rows in flight.

LIST_SIZE = 1_000_000_000  # bytes (--quick: LIST_QUICK)
LIST_QUICK = 5_000_000
LIST_MEMORY = 200_000_000  # the goal: review's peak resident memory


def _watched(command: list[str], seconds: float | None) -> tuple[int | None, float, int, str]:
    """Run ``command`` (a child of this process), reading its peak resident memory (VmHWM) as it runs; stop it after
    ``seconds`` (None: let it end). Its exit status (None where stopped), wall time, peak (bytes) and stderr."""
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, text=True, cwd=ROOT)
        peak, status = 0, None
        while (status := child.poll()) is None:
            try:
                with open(f"/proc/{child.pid}/status", encoding="ascii") as f:
                    peak = max(peak, int(f.read().split("VmHWM:")[1].split()[0]) * 1024)
            except (OSError, IndexError):
                pass
            if seconds is not None and time.perf_counter() - start > seconds:
                child.terminate()
                child.wait()
                break
            time.sleep(0.2)
        elapsed = time.perf_counter() - start
        err.seek(0)
        return status, elapsed, peak, err.read()


def large_list(corpus: Path, quick: bool, seconds: float) -> int:
    """Build the large list CSV, read it with the csv module and with ``iobound review``; print their peak memory and
    time, and review's progress; the number of goals missed (0 or 1)."""
    import csv
    import io

    source = corpus / "io500-list" / "io500-db-2017-2019_submissions.csv"
    if not source.is_file():
        print(f"large list: the io500 list database is not at {source}: skipped")
        return 0
    with open(source, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, list(reader)
    size = LIST_QUICK if quick else LIST_SIZE
    with tempfile.TemporaryDirectory(prefix="iobound-large-list-") as folder:
        path, count = Path(folder) / "list.csv", 0
        with open(path, "w", encoding="utf-8", newline="") as f:
            out = csv.DictWriter(f, header, lineterminator="\n")
            out.writeheader()
            while f.tell() < size:
                text = io.StringIO()
                copy = csv.DictWriter(text, header, lineterminator="\n")
                copy.writerows({**row, "id": f"{count // len(rows)}-{row['id']}"}
                               for row in rows)
                f.write(text.getvalue())
                count += len(rows)
        bytes_ = path.stat().st_size
        print(f"large list: {bytes_ / 1e6:,.0f} MB, {count:,} rows: the shared list's {len(rows)} rows repeated under "
              "new ids, in a temporary folder")
        read = ("import csv, sys\nwith open(sys.argv[1], newline='') as f: print(sum(1 for _ in csv.reader(f)))\n"
                "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0], file=sys.stderr)")
        _, floor, _, peer = _watched([sys.executable, "-c", read, str(path)], None)
        floor_peak = int(peer.split()[-1]) * 1024  # its own, at its end: it may end before it is first looked at
        status, spent, peak, said = _watched([sys.executable, "-m", "assess", "review", str(path), "--csv",
                                              "--progress", "--fail-on", "never"], seconds)
        lines = [line for line in said.splitlines() if line.startswith("review: ")]
        last = lines[-1] if lines else "(no progress shown)"
        done = [int(n.replace(",", "")) for n in re.findall(r"(?:witnesses found in|judged) ([\d,]+)", last)]
        passes = 1 if "witnesses" in last else 2
        pace = (done[0] + (count if passes == 2 else 0)) / spent if done else 0.0
        ended = f"ended (exit {status})" if status is not None else f"stopped after {seconds:g} s"
        projected = f"; at that pace both passes take {2 * count / pace / 3600:,.1f} h" if pace and status is None else ""
        print(f"peer: the csv module reads it in {floor:.1f} s wall, peak memory {floor_peak / 1e6:.0f} MB")
        print(f"review: {ended} in {spent:.1f} s wall, peak memory {peak / 1e6:.0f} MB; {len(lines)} progress "
              f"line(s) on stderr, the last: {last!r}{projected}")
    met = peak < LIST_MEMORY
    print(f"goal: review reads a {bytes_ / 1e6:,.0f} MB list in < {LIST_MEMORY / 1e6:.0f} MB of memory, showing its "
          f"progress: {peak / 1e6:.0f} MB, {len(lines)} progress line(s): {'PASS' if met and lines else 'MISS'}")
    return 0 if met and lines else 1


def fuzz_inputs(corpus: Path, texts: dict[str, list[str]], count: int, seed: int, quick: bool) -> int:
    """The fuzz of the opener, topologies and results CSVs, and the large file; prints the goal; the misses."""
    rng = random.Random(seed)
    previous = {sig: signal.signal(sig, _alarm) for sig in (signal.SIGPROF, signal.SIGALRM)}
    try:
        with tempfile.TemporaryDirectory(prefix="iobound-fuzz-") as folder:
            missed = fuzz_opener(texts, count, rng, Path(folder))
            missed += fuzz_topologies(count, rng, Path(folder))
            missed += fuzz_results_csvs(corpus, count, rng, Path(folder))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    missed += large_file(corpus, quick)
    print(f"goal: the opener, topologies and results CSVs fuzzed, and a large file read: 0 tracebacks, 0 hangs over "
          f"{HANG_SECONDS:g} s, 0 over the memory bound: {'PASS' if not missed else f'MISS, {missed} inputs'}")
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--fuzz", type=int, default=10_000, help="mutated inputs per reader")
    parser.add_argument("--quick", action="store_true", help="200 mutated inputs per reader (a smoke run)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--list-seconds", type=float, default=None,
                        help="stop review of the large list after so many seconds (default 300; --quick 20)")
    args = parser.parse_args()
    if args.quick:
        args.fuzz = 200
    if args.list_seconds is None:
        args.list_seconds = 20.0 if args.quick else 300.0
    if not args.corpus.is_dir():
        print(f"corpus of real tool outputs not found at {args.corpus} (--corpus names it)", file=sys.stderr)
        return 2
    texts = read_corpus(args.corpus)
    large_outputs(args.corpus, args.quick)
    failures = fuzz(texts, args.fuzz, args.seed)
    print(f"goal: no exception but ToolOutputError: {'PASS' if not failures else f'MISS, {failures} other exceptions'}")
    missed = fuzz_inputs(args.corpus, texts, args.fuzz, args.seed, args.quick)
    missed += large_list(args.corpus, args.quick, args.list_seconds)
    return 1 if failures or missed else 0


if __name__ == "__main__":
    sys.exit(main())
