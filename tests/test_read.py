"""iobound read and format detection over the whole corpus; every reader survives mutated real outputs."""

import csv
import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assess.cli import main
from probes.readers import table
from probes.core.errors import ToolOutputError
from probes.readers import READERS, read_results
from benchmarks.mutations import mutate

# What the corpus holds that is not a benchmark's results, or a run that failed: refused clearly. And
# fio 2.1.4's JSON, which lists no job options: its workload would have to be guessed (test_fio).
NOT_RESULTS = ("config.ini", "system-information", ".fio", "_bw.1.log", "FAILED", "error_max_jobs",
               "verify_error_lines", ".csv", ".xml", "pkb_fio-2.1.4_5jobs.json")


def _files(corpus):
    """The tools' outputs: of MLPerf runs their summary.json (the configs and descriptions beside it are read
    with it); the io500 list is data of another kind."""
    return sorted(p for p in corpus.rglob("*") if p.is_file() and p.name not in ("README.md", "SOURCES.tsv")
                  and p.relative_to(corpus).parts[0] in CLAIMS
                  and (p.relative_to(corpus).parts[0] != "mlperf-storage" or p.name == "summary.json"))


def test_every_results_file_of_the_corpus_is_detected_and_read(corpus):
    unread = []
    for path in _files(corpus):
        try:
            runs = read_results(path)
        except ToolOutputError as exc:
            if not any(mark in path.name for mark in NOT_RESULTS) and path.parent.name in READERS_BY_FOLDER:
                unread.append(f"{path.name}: {exc}")
            continue
        assert runs, path
        tools = {r.origin.tool for r in runs}
        assert tools <= READERS_BY_FOLDER.get(path.parent.name, tools), (path, tools)
    assert unread == []


# The tool each corpus folder's outputs must be read as (io500's ior/mdtest outputs are IOR's and mdtest's).
READERS_BY_FOLDER = {"ior": {"ior"}, "mdtest": {"mdtest"}, "io500": {"io500"}, "fio": {"fio"},
                     "elbencho": {"elbencho"}, "hyperfine": {"hyperfine"}, "iperf3": {"iperf3"}, "iperf2": {"iperf2"},
                     "ping": {"ping"}}


def test_read_prints_the_runs_and_keeps_going_past_a_bad_file(corpus, capsys, tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("nothing a benchmark wrote\n")
    ior = corpus / "ior" / "knowext_ior-3.3.0_json_mpiio_fpp_b4m_t2m_s5_i5.json"
    mdtest = corpus / "mdtest" / "narval_io500_mdtest-3.4.0+dev_easy_write.txt"
    assert main(["read", str(ior), str(bad), str(mdtest)]) == 2
    out, err = capsys.readouterr()
    assert "mpiio file-per-process write  1,670 MiB/s ± 522 MiB/s   5  1,022 MiB/s - 2,318 MiB/s" in out
    assert "File creation" in out and "79,440 op/s  1*" in out and "* the tool printed only a summary" in out
    assert f"iobound: error: {bad}: not a format iobound reads" in err


def test_read_json_is_the_common_versioned_form(corpus, capsys):
    mdtest = corpus / "mdtest" / "akrr_mdtest-1.9.3_multirun_ub-ccr.txt"
    assert main(["read", str(mdtest), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["format"], doc["format_version"], doc["errors"]) == ("iobound/results", "1.3", [])
    first = doc["runs"][0]
    assert first["origin"] == {"path": str(mdtest), "line": 111, "tool": "mdtest", "tool_version": "1.9.3"}
    assert (first["metric"], first["unit"], first["samples"]) == ("operation_rate", "op/s", [])
    assert first["summary"]["n"] == 2 and first["summary"]["source"] == "reported by the tool"
    assert first["workload"]["operation"] == "create" and first["workload"]["transfer_size"] is None


def test_read_csv_is_a_results_table_that_check_reads_back(corpus, capsys, tmp_path):
    ior = corpus / "ior" / "knowext_ior-3.3.0_json_mpiio_fpp_b4m_t2m_s5_i5.json"
    assert main(["read", str(ior), "--csv"]) == 0
    text = capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO(text.split("\n", 1)[1])))
    assert len(rows) == 10 and rows[0]["value"] == "866.3597" and rows[0]["duration"] == "0.3694 s"
    runs = table.parse(text, source="back.csv")
    original = read_results(ior)
    assert [(r.label, r.samples, r.durations) for r in runs] == [(r.label, r.samples, r.durations) for r in original]
    assert [r.workload for r in runs] == [r.workload for r in original]


@pytest.fixture(scope="module")
def originals(corpus):
    """Per reader, the corpus files it claims (and the bundled results table, and the DLIO logs and KV-cache outputs
    of the tests' data)."""
    texts = {name: [] for name in READERS}
    for path in _files(corpus):
        text = path.read_text(encoding="utf-8", errors="replace")
        name = next((n for n, m in READERS.items() if m.looks_like(text)), None)
        if name:
            texts[name].append(text)
    from topologies.bundled import example_path
    texts["table"].append(example_path("lecture-results.csv").read_text(encoding="utf-8"))
    gdsio = Path(__file__).parent / "data" / "gpudirect"  # no gdsio in the corpus: the tests' published lines
    texts["gdsio"] += [path.read_text(encoding="utf-8") for path in sorted(gdsio.glob("*gdsio.txt"))]
    texts["dlio-log"] += [p.read_text(encoding="utf-8") for p in sorted(Path(__file__).parent.glob("data/checkpoint/*.log"))]
    kv = Path(__file__).resolve().parent / "data" / "kvcache"  # KV-cache outputs: no corpus folder holds them
    texts["lmcache"] += [path.read_text(encoding="utf-8") for path in sorted(kv.glob("lmcache-*.log"))]
    texts["kv-cache"] += [path.read_text(encoding="utf-8") for path in sorted(kv.glob("kv-cache-*.json"))]
    return texts


@pytest.mark.slow
@pytest.mark.parametrize("name", list(READERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_real_outputs_give_runs_or_a_clear_error(originals, name, seed):
    """benchmarks/readers.py runs 10,000 of these per reader; here a few hundred keep it from regressing."""
    rng = random.Random(seed)
    text = mutate(rng.choice(originals[name]), rng)
    try:
        runs = READERS[name].parse(text, source="fuzz.txt")
    except ToolOutputError as exc:
        assert str(exc).startswith("fuzz.txt")
    else:
        assert all(r.summary.n >= 1 for r in runs)


# Which readers may claim the files of each corpus folder.
CLAIMS = {"ior": {"ior"}, "mdtest": {"mdtest"}, "io500": {"io500"}, "fio": {"fio", "fio-text"},
          "elbencho": {"elbencho"}, "hyperfine": {"hyperfine"}, "iperf3": {"iperf3"}, "iperf2": {"iperf2"},
          "ping": {"ping"}, "mlperf-storage": {"mlperf"}}


def test_each_reader_claims_only_its_own_tools_files_and_no_file_has_two(corpus):
    for path in _files(corpus):
        text = path.read_text(encoding="utf-8", errors="replace")
        claimed = {name for name, module in READERS.items() if module.looks_like(text)}
        assert len(claimed) <= 1 and claimed <= CLAIMS[path.relative_to(corpus).parts[0]], (path.name, claimed)


def test_an_interval_of_what_cannot_be_negative_is_bounded_at_zero_and_says_so():
    """Student's t interval of these RTTs reaches -130 ms; a latency is never negative, so 0 is its low end."""
    from probes.core.run import Origin, Run
    from probes.core.stats import summarize, t_quantile
    from probes.core.units import Metric
    from assess.render import runs_table
    samples = (4.1, 250.0, 5.0, 3.0)
    s = summarize(samples)
    half = t_quantile(3) * s.std / len(samples) ** 0.5
    assert (s.ci_low, s.ci_high, s.bounded) == (0.0, pytest.approx(s.mean + half), True)
    signed = summarize(samples, nonnegative=False)
    assert (signed.ci_low, signed.bounded) == (pytest.approx(s.mean - half), False) and signed.ci_low < 0
    assert summarize((100.0, 101.0, 99.0)).bounded is False  # far from zero: the t interval as it is
    run = Run("ping x", None, Metric.LATENCY, samples, "ms", Origin("p.txt", 1, "ping"))
    text = runs_table([run])
    assert "0 ms - 261 ms†" in text and "-" + "92" not in text
    assert text.splitlines()[-1].startswith("† the interval's low end is bounded at 0")
    assert run.to_dict()["summary"]["ci95"] == [0.0, pytest.approx(s.mean + half)]
