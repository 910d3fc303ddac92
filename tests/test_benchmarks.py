"""Every benchmark runs as the README says (python benchmarks/X.py from the project root) and prints its figures.

Each runs in its quick mode, a few seconds; the figures are not judged here (the machine
running the tests is no reference), only that each benchmark reaches them, names its peers
and goals, and that the peers agree with the model where they compute the same thing.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))
SCRIPTS = [path for path in BENCHMARKS if path.name not in ("__init__.py", "mutations.py")]
PACKAGES = ("assess", "models", "probes", "topologies", "tests", "benchmarks")


def _run(name: str, *args: str, timeout: float = 120) -> str:
    """Run ``python benchmarks/NAME.py --quick ARGS`` from the project root; its stdout, after checking it exited 0."""
    done = subprocess.run([sys.executable, f"benchmarks/{name}.py", "--quick", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_benchmarks_are_where_the_tests_expect_them():
    assert {p.stem for p in SCRIPTS} == {"accuracy", "ceilings", "darshan_review", "probe_default", "readers", "review",
                                         "sizing", "startup"}


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_a_benchmark_imports_nothing_from_tests_and_shadows_no_package(path):
    # Run as a script, a benchmark's folder comes first on sys.path: benchmarks/models.py would be `models`.
    assert path.stem not in PACKAGES
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    assert not [name for name in imported if name == "tests" or name.startswith("tests.")]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_says_what_it_does_and_how_to_run_it(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and doc.startswith("Benchmark: ")
    assert f"python benchmarks/{path.name}" in doc and "--quick" in doc and "goal" in doc.lower()


@pytest.mark.slow
def test_review_judges_the_whole_list_beside_its_peers(corpus):
    out = _run("review")
    assert re.search(r"^list: +io500-db-2017-2019_submissions.csv: 366 submissions, 281 with a topology", out, re.M)
    assert re.search(r"^peers: +csv module alone \d+\.\d+ s CPU \(the review takes \d+x as much\); read \d+\.\d+ s CPU; "
                     r"read \+ describe \d+\.\d+ s CPU; check per submission", out, re.M)
    assert re.search(r"^goal: +the whole list in < 10 s \(the command's wall time\): \d+\.\d+ s: (PASS|MISS)$", out, re.M)
    assert re.search(r"^goal: +the whole list in ≤ 4 s CPU in-process: \d+\.\d+ s: (PASS|MISS)$", out, re.M)


@pytest.mark.slow
def test_darshan_review_times_a_tree_of_logs_beside_pydarshans_own_read():
    pytest.importorskip("darshan", reason="PyDarshan is not installed: pip install 'iobound[darshan]'")
    out = _run("darshan_review", timeout=600)
    assert re.search(r"^tree: 300 logs, links to \d+ originals", out, re.M)
    assert re.search(r"^review: 300 logs in \d+\.\d s wall, \d+\.\d s CPU .*: \d+\.\d logs/s per core of CPU", out, re.M)
    assert re.search(r"^peer: PyDarshan's DarshanReport\(read_all=True\) in one process: \d+\.\d\d ms CPU per log", out, re.M)
    assert re.search(r"^memory: review \d+ MB at 100 logs, \d+ MB at 300; largest worker \d+ MB and \d+ MB$", out, re.M)
    for goal in (r">= 50 logs/s per core", r"<= 1\.5x PyDarshan's own read", r"memory flat"):
        assert re.search(rf"^goal: {goal}.*: (PASS|MISS)$", out, re.M), goal


@pytest.mark.slow
def test_ceilings_headline_names_the_strongest_peers_with_a_ratio_to_each():
    out = _run("ceilings")
    assert re.search(r"^goal: 1000 ceilings in < 0.5 s CPU: \d+\.\d+ s, projected from 100: (PASS|MISS)", out, re.M)
    assert re.search(r"^goal: cost grows at most as groups\^1.2: groups\^-?\d+\.\d+: (PASS|MISS)$", out, re.M)
    assert re.search(r"^goal: a cached network under 1 MB at 1,000 groups: \d+\.\d+ MB held while kept, \d+\.\d+ MB of it its "
                     r"structure's \(shared by networks alike\): (PASS|MISS)$", out, re.M)
    assert re.search(r"^goal: at least as fast per workload as scipy's compiled maximum_flow .*: (PASS|MISS)$", out, re.M)
    assert re.search(r"^goal: < 500 MB: .*: (PASS|MISS)$", out, re.M)
    assert re.search(r"^with every capacity a range \(172 ranges; .*\d+\.\d+x the single figures; goal: .*(PASS|MISS)", out, re.M)
    headline = out.split("headline:", 1)[1]
    assert re.search(r"iobound grouped model +\d+\.\d+ ms", headline)
    for peer in ("networkx, grouped graph", "scipy maximum_flow, member level", "networkx, member level"):
        line = next(line for line in headline.splitlines() if line.strip().startswith(peer))
        assert re.search(r"\d+\.\d+ ms  peer/model +\d+\.\d+x", line), line
        assert "equal to the model's ceilings within" in line and ": yes" in line, line


@pytest.mark.slow
def test_sizing_judges_cpu_time():
    out = _run("sizing")
    assert re.search(r"^CPU time: +median \d+\.\d+ s.*over 1 solve from cold caches \(wall: median \d+\.\d+ s\)$", out, re.M)
    assert re.search(r"^goal: +< 1 s CPU: (PASS|MISS)$", out, re.M)
    assert re.search(r"^cheapest: +USD [\d,]+: ", out, re.M)


@pytest.fixture(scope="module")
def readers(corpus) -> str:
    """What ``benchmarks/readers.py --quick`` prints on the corpus: its two tests read one run of it."""
    return _run("readers", "--corpus", str(corpus), timeout=240)


@pytest.mark.slow
def test_readers_reads_the_corpus_and_no_reader_crashes(readers):
    out = readers
    assert re.search(r"^corpus: \d+ files read in \d+\.\d+ s CPU \(wall \d+\.\d+ s\): \d+ runs", out, re.M)
    assert re.search(r"^goal: the corpus read in < 2 s CPU: (PASS|MISS)$", out, re.M)
    assert re.search(r"^fio +200 inputs in .* 0 other exceptions$", out, re.M)
    assert "goal: no exception but ToolOutputError: PASS" in out
    # Any input, safely: the opener, topologies and results CSVs fuzzed through files, and a large file (50 MB quick).
    for what in ("inputs through the opener", "topologies", "results CSVs"):
        assert re.search(rf"^fuzz: 200 {what}: 0 tracebacks, 0 hangs over 5 s, peak memory \d+\.\d MB \(the most one "
                         r"input added; 0 over 3x its size \+ 100 MB\); \d+ read, \d+ refused clearly; slowest \d+\.\d\d s CPU$",
                         out, re.M), out
    assert re.search(r"^large file: 50 MB of an IOR output amid a job's launcher lines: exit 0 in \d+\.\d s, peak memory "
                     r"\d+ MB, \d+ MB above a small file's \(\d+ MB\); bound 3x \+ 100 MB = 250 MB: PASS$", out, re.M), out
    assert re.search(r"^large file: 50 MB of NUL bytes \(a sparse file\): exit 2 in \d+\.\d s, .*: PASS; iobound: error: "
                     r".*zeros.bin: not a format iobound reads \(judged by its first 4 MiB\)$", out, re.M), out
    assert ("goal: the opener, topologies and results CSVs fuzzed, and a large file read: 0 tracebacks, 0 hangs over "
            "5 s, 0 over the memory bound: PASS") in out
    # A list of any size: review reads a list CSV (5 MB quick) in bounded memory, with its progress on stderr.
    assert re.search(r"^large list: 5 MB, [\d,]+ rows: the shared list's 366 rows repeated under new ids", out, re.M), out
    assert re.search(r"^peer: the csv module reads it in \d+\.\d s wall, peak memory \d+ MB$", out, re.M), out
    assert re.search(r"^review: (stopped after 20 s|ended \(exit 0\)) in \d+\.\d s wall, peak memory \d+ MB; \d+ "
                     r"progress line\(s\) on stderr, the last: 'review: (witnesses found in|judged) [\d,]+", out, re.M), out
    assert re.search(r"^goal: review reads a 5 MB list in < 200 MB of memory, showing its progress: \d+ MB, [1-9]\d* "
                     r"progress line\(s\): PASS$", out, re.M), out


@pytest.mark.slow
def test_readers_times_large_outputs_beside_the_floor_of_their_format(readers):
    out = readers
    for name, floor, goal in (("fio JSON", "json.load", "2x"), ("IOR log", "reading and splitting its lines", "20x")):
        assert re.search(rf"^large {name}: \d+\.\d MB, [\d,]+ runs: read in \d+\.\d+ s CPU, {floor} \d+\.\d+ s \(the best "
                         r"of 3, built from the corpus in a temporary folder\)$", out, re.M), out
        assert re.search(rf"^goal: a large {name} read within {goal} {floor}: \d+\.\d\dx: (PASS|MISS)$", out, re.M), out
    assert re.search(r"^goal: the runs table printed in < 0.25x the read: fio JSON \d+\.\d+ s \(\d+\.\d+x\), "
                     r"IOR log \d+\.\d+ s \(\d+\.\d+x\): (PASS|MISS)$", out, re.M), out
    assert re.search(r"^large fio JSON: 2\.0 MB", out, re.M)  # --quick builds small files


@pytest.mark.slow
@pytest.mark.skipif(not all(shutil.which(tool) for tool in ("fio", "iperf3", "ping")), reason="needs fio, iperf3 and ping")
def test_probe_default_runs_real_probes_quickly():
    out = _run("probe_default", timeout=90)
    assert re.search(r"^quick probe set: \d+\.\d s wall, exit status 0, 6 figures, targets reached: \d/6$", out, re.M)
    assert re.search(r"^CPU: iobound \d+\.\d+ s, the tools it ran \d+\.\d+ s", out, re.M)
    for name in ("ping.rtt", "iperf3.send.p1", "iperf3.receive.p1", "read.1m.bandwidth"):
        assert name in out
    assert re.search(r"randread\.4k\.iops +probe .* long .* [+-]\d+\.\d%  (in|outside) CI$", out, re.M)
    assert re.search(r"^largest deviation from the long runs .*: \d+\.\d%$", out, re.M)


@pytest.mark.slow
def test_startup_times_every_command_beside_pip():
    out = _run("startup")
    venv = re.search(r"^pip --help \(pip (\S+), this venv\) +0 +(\d+\.\d+) +\d+\.\d+ +1\.0+x", out, re.M)
    assert venv, out
    assert re.search(r"^python -c pass +0 +\d+\.\d+ ", out, re.M)
    assert re.search(r"^pip of this venv: \S+ .*; pip of the base interpreter: \S+ .*ensurepip.* bundles pip \S+$", out, re.M)
    rows = {line.split("  ")[0]: line for line in out.splitlines() if line.startswith("iobound ")}
    expected = {"iobound --help": "<= 0.5x pip", "iobound --version": "<= 0.5x pip",
                "iobound predict --no-such-option": "<= 0.5x pip",
                "iobound read topologies/examples/lecture-results.csv": "<= 1x pip",
                "iobound predict lecture --op read --transfer-size 1MiB": "<= 1x pip",
                "iobound check lecture lecture-results.csv --fail-on never": "<= 1x pip",
                "iobound plan lecture --benchmark ior": "<= 1x pip",
                "iobound report lecture lecture-results.csv -o <new dir>": "<= 4 s CPU"}
    for label, goal in expected.items():
        row = rows[label]
        status = "2" if "no-such-option" in label else "0"
        assert re.search(rf"^{re.escape(label)} +{status} +\d+\.\d+ +\d+\.\d+ +\d+\.\d+x .*{re.escape(goal)} +(PASS|MISS)$",
                         row), row
    heavy = out.split("heavy modules each command loaded", 1)[1]
    assert re.search(r"iobound --help +(none|[a-z.]+(, [a-z.]+)*)$", heavy, re.M)
    assert re.search(r"iobound report .* matplotlib", heavy)  # the report draws its figures
    assert re.search(r"^goals met: \d/8", out, re.M)


@pytest.mark.slow
def test_accuracy_counts_the_verdicts_and_the_planted_anomalies_caught(corpus, tmp_path):
    page = tmp_path / "accuracy.md"
    out = _run("accuracy", "-o", str(page))
    assert re.search(r"^list: +37 submissions, \d+ described, \d+ phases: ", out, re.M)
    shares = re.findall(r"^planted: +x(\d+): ior-easy (\d+)/(\d+) \(\d+%\), mdtest-easy (\d+)/(\d+)", out, re.M)
    assert [int(f) for f, *_ in shares] == [5, 20]
    assert all(int(c) <= int(j) for _, c, j, d, m in shares for c, j in ((c, j), (d, m)))
    assert int(shares[0][1]) <= int(shares[1][1])  # a larger anomaly is never caught less often
    assert re.search(r"^goal: +x5 ior-easy: >= 50% caught: \d+%: (PASS|MISS)$", out, re.M)
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# How often iobound is right") and "| x20 |" in text and "## MLPerf Storage runs" in text
