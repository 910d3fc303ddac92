"""iobound compare: hyperfine's verdict with its ±, an interval, and Welch's test saying when a difference is noise."""

import json

import pytest

from assess.cli import main
from assess.compare import compare
from probes.core.errors import InputError
from probes.core.run import Origin, Run
from probes.core.stats import from_reported
from probes.core.units import Metric


def _timed(label, n, mean, std, low, high):
    return Run(label, None, Metric.LATENCY, (), "s", Origin("seed003", None, "hyperfine"),
               reported=from_reported(n, mean, std, low, high))


# seeds/003: "Application A runs for 4.274 s, application B for 4.176 s. Which one is faster?" Those
# were the slowest and fastest of 10 runs each; hyperfine said "1.00 ± 0.01 times faster".
SINCOS_02 = _timed("./sincos-02", 10, 4.192, 0.033, 4.160, 4.274)
SINCOS_03 = _timed("./sincos-03", 10, 4.191, 0.016, 4.176, 4.221)


def test_the_lecture_case_is_no_difference():
    c = compare(SINCOS_02, SINCOS_03)
    assert (c.faster.label, round(c.ratio, 2), round(c.spread, 2)) == ("./sincos-03", 1.00, 0.01)
    assert c.significant is False and c.p_value > 0.9
    assert c.interval[0] < 1 < c.interval[1]
    assert c.verdict().startswith("'./sincos-03' ran 1.00 ± 0.01 times faster than './sincos-02' (95% CI of the ratio")
    assert c.verdict().endswith("not significant, no difference at this noise")


def test_single_values_cannot_be_judged_but_the_ratio_is_given():
    """The lecture's own trap: 4.274 s against 4.176 s alone says nothing about noise."""
    a, b = (Run(label, None, Metric.LATENCY, (t,), "s", Origin("x", None, "t")) for label, t in (("A", 4.274), ("B", 4.176)))
    c = compare(a, b)
    assert (c.faster.label, round(c.ratio, 3), c.p_value, c.significant) == ("B", 1.023, None, None)
    assert "nothing says whether this is more than noise" in c.verdict()


def test_a_clear_difference_in_bandwidth_is_significant():
    fast = Run("new", None, Metric.BANDWIDTH, (1010, 1000, 990, 1005), "MiB/s", Origin("x", None, "t"))
    slow = Run("old", None, Metric.BANDWIDTH, (0.8, 0.81, 0.79, 0.8), "GiB/s", Origin("y", None, "t"))  # units differ
    c = compare(slow, fast)
    assert c.faster.label == "new" and c.ratio == pytest.approx(1001.25 / 819.2, rel=1e-9)
    assert c.significant and c.p_value < 1e-4 and c.interval[0] > 1.15


def test_different_metrics_are_refused():
    bw = Run("bw", None, Metric.BANDWIDTH, (1.0, 2.0), "MiB/s", Origin("x", None, "t"))
    with pytest.raises(InputError, match="measure different things"):
        compare(SINCOS_02, bw)


def test_cli_compares_the_hyperfine_export_of_the_corpus(corpus, capsys):
    path = corpus / "hyperfine" / "1brc_hyperfine_export-json_2cmds.json"
    assert main(["compare", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["format"], doc["format_version"]) == ("iobound/comparison", "1.2")
    (c,) = doc["comparisons"]
    assert c["significant"] is False and c["ratio"] == pytest.approx(1.0, abs=0.05)
    assert main(["compare", str(path)]) == 0
    assert "not significant" in capsys.readouterr().out


def test_cli_needs_two_runs_and_names_the_ones_there(corpus, capsys):
    path = corpus / "hyperfine" / "1brc_hyperfine_export-json_2cmds.json"
    assert main(["compare", str(path), "--run", "no such run"]) == 2
    err = capsys.readouterr().err
    assert "found 0 run(s) to compare, need 2 or more; the runs are: cargo run --release --bin 1brc" in err
