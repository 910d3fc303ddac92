"""The command line end to end on the lecture example: text, JSON, exit status, and errors without tracebacks."""

import json
import shutil
import subprocess

from pathlib import Path

import pytest

from assess.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
LUSTRE_4PPN_READ = "Lustre size / ppn read 256 KiB seq, 10 nodes x 4 ppn"
LUSTRE_1PPN_READ = "Lustre fixed size read 1 MiB seq, 10 nodes x 1 ppn"


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_predict_prints_ceiling_binding_layers_and_formula(capsys):
    status, out, _ = run(capsys, "predict", "lecture", "--op", "read", "--transfer-size", "1MiB", "--nodes", "10", "--ppn", "4")
    assert status == 0
    assert "ceiling:   1,100 MiB/s, bound by client NICs (compute.nic)" in out
    for line in ["client NICs           1,100 MiB/s", "devices               1,350 MiB/s", "110 MiB/s × 10 = 1,100 MiB/s",
                 "n_compute*p*q*s/RTT_ethernet"]:
        assert line in out
    assert "Min(" in out and "<- binds" in out


def test_predict_json_is_versioned_and_has_every_layer(capsys):
    status, out, _ = run(capsys, "predict", "lecture", "--op", "write", "--transfer-size", "64 KiB", "--nodes", "1", "--json")
    doc = json.loads(out)
    assert status == 0
    assert (doc["format"], doc["format_version"]) == ("iobound/prediction", "1.1")
    assert doc["ceiling"] == {"value": 110 * 2**20, "unit": "B/s"}  # JSON quantities are in canonical units
    assert doc["binding"] == ["compute.nic"]
    layers = {layer["layer"]: layer["limit"]["value"] for layer in doc["layers"]}
    assert layers["network message rate"] == pytest.approx(625 * 2**20)
    assert doc["symbols"]["RTT_ethernet"] == {"value": pytest.approx(1e-4), "unit": "s"}
    assert doc["workload"] == {"operation": "write", "transfer_size": {"value": 65536, "unit": "B"}, "nodes": 1, "ppn": 1,
                               "queue_depth": 1, "access": "sequential", "direct": None,
                               "data_set": None, "shared_file": None, "shared_directory": None}


def test_check_catches_the_lecture_cache_read_and_the_network_limited_read(capsys):
    status, out, _ = run(capsys, "check", "lecture", "lecture-results.csv")
    assert status == 1  # an error-level finding, and --fail-on defaults to error
    lines = out.splitlines()
    assert any(LUSTRE_4PPN_READ in l and "1,800 MiB/s" in l and "164%" in l and "ABOVE-CEILING" in l for l in lines)
    assert any(LUSTRE_1PPN_READ in l and "1,095 MiB/s" in l and "AT-CEILING" in l for l in lines)
    assert ("read of 1,800 MiB/s is 1.64x the ceiling of 1,100 MiB/s (beyond the 5% noise of a single value): more than "
            "client NICs (1,100 MiB/s), devices (1,350 MiB/s) can carry; likely served from the client's page cache") in out
    assert "read of 1,095 MiB/s is at the ceiling of 1,100 MiB/s (100%) set by client NICs (compute.nic)." in out
    # 18 runs far below, 2 Lustre reads 7-8x their writes, and every run a single value (FEW-REPETITIONS)
    assert out.rstrip().endswith("26 runs checked: 1 error, 46 warnings, 1 info")
    assert "FEW-REPETITIONS also for 23 more run(s)" in out


@pytest.mark.parametrize("fail_on, status", [("never", 0), ("error", 1), ("warning", 1), ("info", 1)])
def test_check_exit_status_follows_fail_on(capsys, fail_on, status):
    assert run(capsys, "check", "lecture", "lecture-results.csv", "--fail-on", fail_on)[0] == status


def test_check_json(capsys):
    status, out, _ = run(capsys, "check", "lecture", "lecture-results.csv", "--json")
    doc = json.loads(out)
    assert (doc["format"], doc["format_version"], status) == ("iobound/check", "1.1", 1)
    by_label = {r["run"]["label"]: r for r in doc["runs"]}
    above = by_label[LUSTRE_4PPN_READ]
    assert [f["code"] for f in above["findings"]] == ["ABOVE-CEILING", "FEW-REPETITIONS"]
    assert above["findings"][0]["severity"] == "error"
    assert above["findings"][0]["evidence"]["exceeded_layers"] == ["client NICs", "devices"]
    assert above["ratio"] == pytest.approx(1800 / 1100)
    assert above["run"]["origin"]["line"] == 29
    at = by_label[LUSTRE_1PPN_READ]
    assert [f["code"] for f in at["findings"]] == ["AT-CEILING", "FEW-REPETITIONS"] and at["ceiling"]["binding"] == ["compute.nic"]


@pytest.mark.parametrize("samples, code, wording", [
    ((1300, 1310, 1305), "ABOVE-CEILING", "with 95% confidence: its mean's interval is 1.18-1.20x"),
    ((1000, 1250, 1100), "ABOVE-CEILING", "in its fastest repetition, 1,250 MiB/s (1.14x), beyond 5% noise"),
    ((1080, 1100, 1090), "AT-CEILING", "is at the ceiling of 1,100 MiB/s (99%)"),
    ((300, 1100), None, None),   # a 64 % mean is neither at the ceiling nor (with this noise) surely far below
    ((100, 110, 105), "FAR-BELOW", "reaches only 10%"),
])
def test_repetitions_are_judged_each_and_by_their_interval(capsys, tmp_path, samples, code, wording):
    results = tmp_path / "reps.csv"
    results.write_text("run,op,transfer_size,nodes,value,unit\n" + "".join(f"r,read,1 MiB,10,{v},MiB/s\n" for v in samples))
    _, out, _ = run(capsys, "check", "lecture", str(results), "--json")
    (result,) = json.loads(out)["runs"]
    ceiling_codes = ("ABOVE-CEILING", "AT-CEILING", "FAR-BELOW")  # (spread and repetitions are judged too)
    assert [f["code"] for f in result["findings"] if f["code"] in ceiling_codes] == ([code] if code else [])
    if wording:
        assert wording in result["findings"][0]["message"]
    assert result["run"]["summary"]["n"] == len(samples)


def test_findings_point_at_their_own_line(capsys, tmp_path):
    results = tmp_path / "dup.csv"
    results.write_text("op,transfer_size,nodes,value,unit\nread,1 MiB,10,2000,MiB/s\nread,1 MiB,10,500,MiB/s\n"
                       "read,1 MiB,10,3000,MiB/s\n")
    _, out, _ = run(capsys, "check", "lecture", str(results))
    assert f"ABOVE-CEILING  read 1 MiB seq, 10 nodes x 1 ppn (line 2)  ({results}:2)" in out
    assert f"ABOVE-CEILING  read 1 MiB seq, 10 nodes x 1 ppn (line 4)  ({results}:4)" in out


def test_a_run_that_does_not_fit_the_topology_names_its_line(capsys, tmp_path):
    results = tmp_path / "big.csv"
    results.write_text("op,transfer_size,nodes,value,unit\nread,1 MiB,11,2000,MiB/s\n")
    status, _, err = run(capsys, "check", "lecture", str(results))
    assert status == 2
    assert f"{results}:2: run 'read 1 MiB seq, 11 nodes x 1 ppn' does not fit the topology: " in err
    assert "clients.compute.count: the workload uses 11 nodes but the group has 10" in err


def test_an_ambiguous_unit_is_an_error_until_the_user_says_what_it_means(capsys, tmp_path):
    results = tmp_path / "gpfs.csv"
    results.write_text("op,transfer_size,nodes,value,unit\nread,1 MiB,8,3400,Mb/s\n")
    status, out, err = run(capsys, "check", "lecture", str(results))
    assert status == 2 and out == ""
    assert err == (f"iobound: error: {results}: line 2, column 'unit': The unit of the value on line 2 is ambiguous: "
                   "'Mb/s' could mean Mbit or MB. Write 'Mbit/s' or 'MB/s' instead, or say which it means "
                   "(--unit-alias 'Mb/s=MB/s').\n")
    status, out, _ = run(capsys, "check", "lecture", str(results), "--unit-alias", "Mb/s=Mbit/s")
    assert status == 0 and "405 MiB/s" in out


@pytest.mark.parametrize("argv, message", [
    (["predict", "nosuch.toml", "--op", "read", "--transfer-size", "1MiB"], "iobound: error: nosuch.toml: no such file"),
    (["check", "lecture", "nosuch.csv"], "iobound: error: nosuch.csv: no such file"),
    (["predict", "lecture", "--op", "read", "--transfer-size", "1MiB", "--nodes", "12"],
     "the workload uses 12 nodes but the group has 10"),
    (["check", "lecture", "lecture.toml"], "not a format iobound reads"),
])
def test_bad_input_is_one_line_without_traceback(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_a_malformed_topology_names_file_and_key(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[clients.c]\nnic = "1 Gbit/s"\n[devices.d]\nbandwidth = "fast"\n[[links]]\nbetween = ["c", "d"]\n')
    status, _, err = run(capsys, "predict", str(bad), "--op", "read", "--transfer-size", "1MiB")
    assert status == 2
    assert err.startswith(f"iobound: error: {bad}: devices.d.bandwidth: the value must be a number with a unit")


def test_usage_errors_exit_2_and_debug_shows_the_traceback(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["predict", "lecture", "--op", "read", "--transfer-size", "1 Mb"])
    assert stop.value.code == 2 and "ambiguous" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["predict", "lecture", "--op", "read", "--transfer-size", "1e300 PiB"])
    assert stop.value.code == 2 and "too large to compute with" in capsys.readouterr().err
    with pytest.raises(Exception, match="no such file"):
        main(["check", "--debug", "lecture", "nosuch.csv"])
    with pytest.raises(Exception, match="no such file"):
        main(["--debug", "check", "lecture", "nosuch.csv"])
    for bad in ("-1", "inf", "nan", "1.5"):
        with pytest.raises(SystemExit):
            main(["check", "lecture", "lecture-results.csv", "--tolerance", bad])
    assert "must be a fraction between 0 and 1" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help_and_is_in_the_readme(name, capsys):
    with pytest.raises(SystemExit) as stop:
        main([name, "--help"])
    assert stop.value.code == 0
    assert "usage: iobound " + name in capsys.readouterr().out
    assert COMMANDS[name].__doc__.strip()
    assert f"iobound {name}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_topology_and_examples_commands(capsys):
    status, out, _ = run(capsys, "topology", "lecture")
    assert status == 0 and "110 MiB/s (measured: iperf compute node -> storage node" in out and "compute -- ethernet" in out
    doc = json.loads(run(capsys, "topology", "lecture", "--json")[1])
    assert doc["format"] == "iobound/topology" and [g["count"] for g in doc["groups"]] == [10, 1, 5, 5]
    status, out, _ = run(capsys, "examples")
    assert "lecture.toml" in out and "lecture-results.csv" in out
    doc = json.loads(run(capsys, "examples", "--json")[1])
    assert {f["name"] for f in doc["files"]} >= {"lecture.toml", "lecture-hdd.toml", "lecture-results.csv"}


def test_the_installed_command_runs():
    iobound = shutil.which("iobound")
    assert iobound, "the iobound command is not installed: pip install -e '.[test]' first (see README)"
    done = subprocess.run([iobound, "check", "lecture", "lecture-results.csv"], capture_output=True, text=True)
    assert done.returncode == 1 and "ABOVE-CEILING" in done.stdout and done.stderr == ""


ONE_NODE = """
# One host with a local disk, no network: the fio run's device is the only limit.
[clients.host]
[devices.disk]
bandwidth = "{bw}"
iops = "{iops}"
[[links]]
between = ["host", "disk"]
"""


@pytest.mark.parametrize("disk, bw, iops, code", [("hdd", "120 MiB/s", "70 op/s", "ABOVE-CEILING"),
                                                  ("ssd", "270 MiB/s", "15000 op/s", "FAR-BELOW")])
def test_check_reads_real_fio_json(capsys, tmp_path, corpus, disk, bw, iops, code):
    """A 4 KiB random write at queue depth 1 of 8.9 MB/s (2,167 op/s) is impossible on one HDD, slow for an SSD."""
    topology = tmp_path / f"{disk}.toml"
    topology.write_text(ONE_NODE.format(bw=bw, iops=iops))
    fio_json = corpus / "fio" / "vc_fio-3.26_randwrite_4k_d1.json"
    doc = json.loads(run(capsys, "check", str(topology), str(fio_json), "--json")[1])
    (result,) = doc["runs"]
    assert result["run"]["origin"]["tool"] == "fio" and result["run"]["samples"] == [8876980]
    assert result["ceiling"]["binding_layers"] == ["device IOPS"]
    assert [f["code"] for f in result["findings"]] == [code, "FEW-REPETITIONS"]  # fio ran once
