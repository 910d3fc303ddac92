"""The command line end to end on the lecture example: text, JSON, exit status, and errors without tracebacks."""

import json
import os
import pty
import shutil
import subprocess
import sys

from pathlib import Path

import pytest

from assess.cli import COMMANDS, command, main
from topologies.bundled import example_path

ROOT = Path(__file__).resolve().parents[1]
LUSTRE_4PPN_READ = "Lustre size / ppn read 256 KiB seq, 10 nodes x 4 ppn"
LUSTRE_1PPN_READ = "Lustre fixed size read 1 MiB seq, 10 nodes x 1 ppn"


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_predict_prints_ceiling_binding_layers_and_formula(capsys):
    status, out, _ = run(capsys, "predict", "lecture", "--op", "read", "--transfer-size", "1MiB", "--nodes", "10", "--ppn", "4",
                         "--explain")
    assert status == 0
    assert "ceiling:   1,100 MiB/s, bound by client NICs (compute.nic)" in out
    rows = {line.split("  ")[0]: line.split() for line in out.splitlines()}
    assert rows["client NICs"][2:4] == ["1,100", "MiB/s"] and rows["devices"][1:3] == ["1,350", "MiB/s"]
    for line in ["110 MiB/s × 10 = 1,100 MiB/s", "Min(NIC_compute*n_compute, NIC_storage*n_storage, B_ssd*n_ssd)", "NIC_compute = 110 MiB/s",
                 "  NIC_compute      +1.000 %", "buffered sequential I/O: readahead"]:
        assert line in out
    assert "<- binds" in out


def test_predict_without_explain_leaves_the_formula_out(capsys):
    status, out, _ = run(capsys, "predict", "lecture", "--op", "read", "--transfer-size", "1MiB")
    assert status == 0 and "Min(" not in out and "elasticity" not in out and "<- binds" in out


def test_predict_with_a_link_set_by_its_index_binds_at_that_link(capsys):
    status, out, _ = run(capsys, "predict", "lecture", "--set", "links[0].bandwidth=500MiB/s", "--op", "read",
                         "--transfer-size", "1MiB", "--json")
    doc = json.loads(out)
    assert status == 0 and doc["binding"] == ["links[0].bandwidth"] and doc["binding_layers"] == ["links"]
    assert doc["ceiling"]["value"] == pytest.approx(500 * 2**20, rel=1e-12)


def test_predict_json_is_versioned_and_has_every_layer(capsys):
    status, out, _ = run(capsys, "predict", "lecture", "--op", "write", "--transfer-size", "64 KiB", "--nodes", "1",
                         "--direct", "--json")
    doc = json.loads(out)
    assert status == 0
    assert (doc["format"], doc["format_version"]) == ("iobound/prediction", "1.3")
    per_request = 64 * 1024 / (1e-4 + 64 / 1024 / 110)  # B/s: 64 KiB per (round trip + its bytes through the NIC)
    assert doc["ceiling"] == {"value": pytest.approx(per_request), "unit": "B/s"}  # canonical units in JSON
    assert doc["binding"] == ["ethernet.rtt", "compute.nic"]
    layers = {layer["layer"]: layer["limit"]["value"] for layer in doc["layers"]}
    assert layers["client NICs"] == pytest.approx(110 * 2**20)
    assert doc["symbols"]["RTT_ethernet"] == {"value": pytest.approx(1e-4), "unit": "s"}
    assert doc["workload"] == {"operation": "write", "transfer_size": {"value": 65536, "unit": "B"}, "nodes": 1, "ppn": 1,
                               "queue_depth": 1, "access": "sequential", "direct": True,
                               "data_set": None, "shared_file": None, "shared_directory": None, "read_share": None}
    effects = {e["symbol"]: e["elasticity"] for e in doc["sensitivity"]}
    assert effects["RTT_ethernet"] == pytest.approx(-1e-4 / (1e-4 + 64 / 1024 / 110), rel=1e-4)
    assert effects["s"] == pytest.approx(-effects["RTT_ethernet"], rel=1e-4)  # the bytes and the round trip share the time
    assert effects["s"] + effects["NIC_compute"] == pytest.approx(1, rel=1e-4) and effects["p"] == pytest.approx(1)  # twice s and B: twice C


def test_predict_sweeps_every_combination(capsys):
    status, out, _ = run(capsys, "predict", "lecture", "--op", "read,write", "--transfer-size", "4KiB,1MiB", "--nodes", "1,10",
                         "--direct", "--json")
    doc = json.loads(out)
    assert status == 0 and (doc["format"], doc["format_version"]) == ("iobound/prediction-sweep", "1.1")
    assert len(doc["predictions"]) == 8
    one = {(p["workload"]["operation"], p["workload"]["transfer_size"]["value"], p["workload"]["nodes"]): p
           for p in doc["predictions"]}
    assert one[("read", 2**20, 10)]["ceiling"]["value"] == pytest.approx(10 * 2**20 / (1e-4 + 1 / 110))
    status, out, _ = run(capsys, "predict", "lecture", "--op", "read", "--transfer-size", "4KiB,1MiB", "--nodes", "1,10")
    assert status == 0 and out.count("client NICs") == 4


def test_predict_metadata_and_the_knee(capsys, tmp_path):
    topology = tmp_path / "mds.toml"
    topology.write_text(Path(example_path("lecture")).read_text().replace(
        'nic = { value = "10 GbE"', 'metadata = "20 kop/s"\nnic = { value = "10 GbE"'))
    status, out, _ = run(capsys, "predict", str(topology), "--op", "create", "--nodes", "10", "--ppn", "3")
    assert status == 0
    # 5 servers x 20 kop/s = 100,000 op/s; round trips: 3 / 0.1 ms = 30,000 op/s per node, so 3 nodes scale, 4 do not
    assert "ceiling:   100,000 op/s, bound by metadata servers (storage.metadata)" in out
    assert "scaling:   grows with the nodes up to 3 of compute (round trips); beyond, metadata servers bind(s)" in out


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
    assert out.rstrip().endswith("26 runs checked: 1 error, 46 warnings, 7 info")
    assert "FAR-BELOW also for 15 more run(s)" in out


def test_check_tells_each_fact_once_with_the_runs_it_holds_for(capsys):
    """The lecture published one value per cell: one FEW-REPETITIONS line for every run, not one per run."""
    _, out, _ = run(capsys, "check", "lecture", "lecture-results.csv")
    _, doc, _ = run(capsys, "check", "lecture", "lecture-results.csv", "--json")
    lines = out.splitlines()
    findings = [f for r in json.loads(doc)["runs"] for f in r["findings"]]
    for f in findings:  # what the finding says, its run's name left out
        said = max(f["message"].split(f["run"]), key=len)
        assert sum(said in line for line in lines) <= 1, said
    (few,) = [i for i, line in enumerate(lines) if "FEW-REPETITIONS" in line and "every run" in line]
    assert lines[few + 1].strip() == "each run has 1 repetition (one value: no spread and no confidence interval)."


def test_check_marks_the_rows_of_errors_and_of_warnings(capsys):
    _, out, _ = run(capsys, "check", "lecture", "lecture-results.csv")
    rows = {line[3:].split("  ")[0]: line for line in out.splitlines() if "MiB/s  1,100 MiB/s" in line}
    assert len(rows) == 26
    assert rows[LUSTRE_4PPN_READ].startswith("✗ ") and "164%" in rows[LUSTRE_4PPN_READ]
    assert rows[LUSTRE_1PPN_READ].startswith("! ")  # AT-CEILING is info; its FEW-REPETITIONS a warning
    assert "marks: ✗ a run with an error, ! a run with a warning (its worst finding)" in out


def test_check_names_a_bundled_example_as_the_user_did(capsys):
    _, out, _ = run(capsys, "check", "lecture", "lecture-results.csv")
    assert str(example_path("lecture-results.csv")) not in out and str(example_path("lecture")) not in out
    assert out.startswith("system: lecture\n")
    assert f"{LUSTRE_4PPN_READ}  (lecture-results.csv:29)" in out


def _on_a_terminal(argv: list[str], **env: str) -> str:
    """What ``iobound argv`` prints when its standard output is a terminal (a pty)."""
    parent, child = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "assess", *argv], stdout=child, stderr=subprocess.DEVNULL,
                               env={k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm"} | env)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # EIO: the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(parent)
    return b"".join(chunks).decode()


RED, YELLOW = "\x1b[31m", "\x1b[33m"


@pytest.mark.slow
def test_check_colours_errors_and_warnings_on_a_terminal_unless_no_color(capsys):
    argv = ["check", "lecture", "lecture-results.csv"]
    assert "\x1b[" not in run(capsys, *argv)[1]  # not a terminal
    assert "\x1b[" not in run(capsys, *argv, "--color", "never")[1]
    forced = run(capsys, *argv, "--color", "always")[1]
    assert f"{RED}✗\x1b[0m  {LUSTRE_4PPN_READ}" in forced and f"{RED}error  \x1b[0m ABOVE-CEILING" in forced
    assert f"{RED}1 error\x1b[0m, {YELLOW}46 warnings\x1b[0m, 7 info" in forced
    # the table's columns stay aligned: the colours take no width
    assert [len(line) for line in run(capsys, *argv, "--color", "never")[1].splitlines()[2:5]] == \
        [len(line.replace(RED, "").replace(YELLOW, "").replace("\x1b[0m", "")) for line in forced.splitlines()[2:5]]
    terminal = _on_a_terminal(argv)
    assert RED in terminal and YELLOW in terminal
    assert "\x1b[" not in _on_a_terminal(argv, NO_COLOR="1")
    assert "\x1b[" not in _on_a_terminal(argv, TERM="dumb")


def test_control_characters_read_from_a_file_are_shown_not_obeyed_and_ioubounds_colours_pass(capsys, tmp_path):
    """A run's label that retitles (OSC), hides (SGR 8) and clears (ED) the terminal reaches it as text; a label with
    iobound's own red in it may colour, no more."""
    results = tmp_path / "esc.csv"
    results.write_text("op,transfer_size,value,unit,run\nread,1MiB,100,MiB/s,\"\x1b]0;pwned\x07\x1b[8mEVIL\x1b[2J\x9b2J\"\n")
    _, out, _ = run(capsys, "read", str(results))
    assert "\\x1b]0;pwned\\x07\\x1b[8mEVIL\\x1b[2J\\x9b2J" in out and "\x1b" not in out and "\x9b" not in out
    results.write_text("op,transfer_size,value,unit,run\nread,1MiB,100,MiB/s,\"\x1b]0;x\x07\"\nread,1MiB,100,MiB/s,plain\n")
    _, out, _ = run(capsys, "read", str(results))  # each column as wide as it is shown: the escapes counted
    header, _, escaped, plain = out.splitlines()[:4]
    assert header.index("tool") == escaped.index("table") == plain.index("table")
    _, out, _ = run(capsys, "check", "lecture", "lecture-results.csv", "--color", "always", "--fail-on", "never")
    assert f"{RED}error  \x1b[0m ABOVE-CEILING" in out


def test_check_shows_an_iops_run_as_the_bandwidth_it_implies_and_a_zero_run_far_below(capsys, tmp_path):
    results = tmp_path / "results.csv"
    results.write_text("run,op,transfer_size,nodes,value,unit\n"
                       "iops,read,4 KiB,10,30000,op/s\n"  # 30,000 x 4 KiB = 117 MiB/s
                       "stalled,read,1 MiB,10,0,MiB/s\nstalled,read,1 MiB,10,0,MiB/s\n")
    status, out, err = run(capsys, "check", "lecture", str(results), "--fail-on", "never")
    assert status == 0, err
    rows = {line[3:].split()[0]: line for line in out.splitlines()[4:6]}
    assert "117 MiB/s" in rows["iops"] and "11%" in rows["iops"]
    assert "0 MiB/s (n=2)" in rows["stalled"] and "0%" in rows["stalled"] and "FAR-BELOW" in rows["stalled"]


@pytest.mark.parametrize("fail_on, status", [("never", 0), ("error", 1), ("warning", 1), ("info", 1)])
def test_check_exit_status_follows_fail_on(capsys, fail_on, status):
    assert run(capsys, "check", "lecture", "lecture-results.csv", "--fail-on", fail_on)[0] == status


def test_check_json(capsys):
    status, out, _ = run(capsys, "check", "lecture", "lecture-results.csv", "--json")
    doc = json.loads(out)
    assert (doc["format"], doc["format_version"], status) == ("iobound/check", "1.9", 1)
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
    ((0.2, 0.21, 0.205), "FAR-BELOW", "reaches only 0.019% of"),  # a share that rounds to 0 keeps two digits
    ((0.01, 0.011, 0.0105), "FAR-BELOW", "reaches only <0.01% of"),
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


@pytest.mark.parametrize("alias, message", [
    ("MiB/s=op/s", "'MiB/s' and 'op/s' measure different things"),  # it made a 1,800 MiB/s error 450 MiB/s
    ("x=y", "The unit of the alias's meaning is not one iobound knows. Got 'y' instead."),
    ("Mb/s", "must look like 'Mb/s=MB/s'")])
def test_an_alias_that_changes_what_a_unit_measures_or_means_no_unit_is_refused(capsys, alias, message):
    with pytest.raises(SystemExit) as refused:
        main(["check", "lecture", "lecture-results.csv", "--unit-alias", alias])
    out, err = capsys.readouterr()
    assert refused.value.code == 2 and out == "" and "argument --unit-alias: " in err and message in err


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
    assert command(name).__doc__.strip()
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


def test_fit_a_real_transfer_size_sweep_and_predict_beyond_it(capsys, corpus):
    sweep = corpus / "elbencho" / "elbencho_mtelbencho_losf_write_8xnvme-raid0.txt"
    status, out, _ = run(capsys, "fit", str(sweep), "--over", "transfer-size", "--op", "write", "--at", "8KiB,1MiB",
                         "--json")
    doc = json.loads(out)
    assert status == 0 and (doc["format"], doc["format_version"]) == ("iobound/fit", "2.0")
    (doc,) = doc["fits"]  # the data set grows with the transfer size: one group still
    assert doc["n"] == 10 and doc["parameters"]["t0"]["unit"] == "s"
    t0 = doc["parameters"]["t0"]
    assert t0["ci95"][0] < t0["value"] < t0["ci95"][1]
    inside, beyond = doc["predictions"]
    assert (inside["extrapolated"], beyond["extrapolated"]) == (False, True)
    assert inside["ci95"][0] < 403 * 2**20 < inside["ci95"][1]  # elbencho measured 403 MiB/s at 8 KiB


def test_fit_the_scalability_law_to_a_node_sweep(capsys, tmp_path):
    """Points made by the USL with lam 100 MiB/s, sigma 0.05, kappa 0.001 come back, peak at 30.8 nodes."""
    rows = ["op,transfer_size,nodes,value,unit"]
    for n in (1, 2, 4, 8, 16, 32, 48, 64):
        rows.append(f"read,1 MiB,{n},{100 * n / (1 + 0.05 * (n - 1) + 0.001 * n * (n - 1))!r},MiB/s")
    (tmp_path / "scaling.csv").write_text("\n".join(rows) + "\n")
    status, out, _ = run(capsys, "fit", str(tmp_path / "scaling.csv"), "--over", "nodes", "--at", "128")
    assert status == 0
    assert "law:       universal scalability law" in out and "peak:      30.8 nodes" in out
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "100 MiB/s" in rows["lam"] and "0.05" in rows["sigma"] and "extrapolated" in rows["128"]


def test_fit_refuses_mixed_operations_and_too_few_points(capsys, tmp_path):
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("op,transfer_size,value,unit\nread,1 MiB,100,MiB/s\nwrite,4 MiB,90,MiB/s\n")
    status, _, err = run(capsys, "fit", str(mixed), "--over", "transfer-size")
    assert status == 2 and "a fit needs runs of one operation; these hold read, write: choose one with --op" in err
    status, _, err = run(capsys, "fit", str(mixed), "--over", "transfer-size", "--op", "read")
    assert status == 2 and "2 parameters need at least 3 points" in err


@pytest.mark.parametrize("argv", [
    ["check", "lecture", "--fail-on", "never", "lecture-results.csv"],
    ["check", "--fail-on", "never", "lecture", "lecture-results.csv"],
    ["check", "lecture", "lecture-results.csv", "--fail-on", "never"]])
def test_options_stand_anywhere_among_a_commands_arguments(capsys, argv):
    """As a user types them: an option between the topology and the results is the command's, not an extra argument."""
    status, out, err = run(capsys, *argv)
    assert status == 0 and err == "" and out.endswith("26 runs checked: 1 error, 46 warnings, 7 info\n")


def test_an_error_quoting_ten_megabytes_it_read_keeps_its_start_and_end_in_one_line(capsys, tmp_path):
    name = "j" * 10 * 2**20
    bad = tmp_path / "big.json"
    bad.write_text(json.dumps({"fio version": "fio-3.36", "jobs": [{"jobname": name, "read": {"bw_bytes": "x"}}]}))
    status, _, err = run(capsys, "read", str(bad))
    assert status == 2 and err.count("\n") == 1 and len(err) < 2200
    assert err.startswith(f"iobound: error: {bad}: jobs[0]") and "characters left out" in err


@pytest.mark.parametrize("argv, message", [
    (["predict", "lecture", "--checkpoint", "llama3-8b", "--nodes", "2"],
     "--nodes: does not apply to --checkpoint: that question asks no workload of its own; leave out --nodes"),
    (["predict", "lecture", "--model", "unet3d", "--accelerator", "h100", "--op", "write", "--transfer-size", "4KiB"],
     "--op: does not apply to --model and --accelerator: that question asks no workload of its own; leave out --op, "
     "--transfer-size"),
    (["whatif", "lecture", "--set", "compute.nic=1GB/s", "--target", "read=1GiB/s", "--model", "unet3d", "--accelerator",
      "h100"], "--target: does not apply to --model and --accelerator: that question asks no workload or target of its "
     "own; leave out --target"),
    (["check", "lecture", "lecture-results.csv", "--far-below", "0.9", "--below", "0.5"],
     "--far-below: must be less than --below (0.5)"),
    (["size", "--clients", "64", "--client-nic", "100Gbit/s", "--target", "read=20GiB/s", "--growth", "30%/year"],
     "--growth: grows the usable capacity: give it with --usable"),
    (["size", "--clients", "64", "--client-nic", "100Gbit/s", "--target", "read=20GiB/s", "--years", "3"],
     "--years: counts years of growth: give it with --growth"),
])
def test_an_option_the_question_asked_does_not_take_is_refused_not_left_unused(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "" and err == f"iobound: error: {message}" + err.split(message, 1)[1]
