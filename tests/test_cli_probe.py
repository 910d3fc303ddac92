"""`iobound probe` end to end: real fio on tmpfs, the summary table, the file, resume, and refusals."""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assess.cli import main

pytestmark = pytest.mark.slow  # real probes: fio, and a resume that runs them again


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """One short real probe run of the memory path, shared by the tests that read its file."""
    path = tmp_path_factory.mktemp("probe") / "node.json"
    status = main(["probe", "-o", str(path), "--jobs", "2", "--runtime", "0.2", "--budget", "8", "--quiet"])
    return status, path


def test_probe_writes_a_probe_set_with_every_figure(probed):
    status, path = probed
    doc = json.loads(path.read_text())
    assert status == 0 and (doc["format"], doc["format_version"]) == ("iobound/probe-set", "1.2")
    names = {m["name"] for m in doc["measurements"]}
    assert {"tmpfs.read.bs1.jobs1.iops", "tmpfs.read.bs1.jobs1.ctx", "tmpfs.read.bs1.jobs1.machine_ctx",
            "tmpfs.write.bs1m.jobs2.bandwidth"} <= names
    for m in doc["measurements"]:
        assert m["summary"]["n"] >= 3 and len(m["samples"]) == m["summary"]["n"]
        assert m["summary"]["ci95"][0] <= m["summary"]["mean"] <= m["summary"]["ci95"][1]
        assert m["provenance"]["commands"][0][0] == "fio" and m["provenance"]["host"]["cpus"] >= 1
        assert m["complete"] and m["target"] == (None if m["name"].endswith("ctx") else 0.05)
        # each repetition's start in the session, and what other processes took of the CPUs meanwhile
        assert len(m["times_s"]) == len(m["others_cpus"]) == m["summary"]["n"] and m["times_s"] == sorted(m["times_s"])
    # the repetitions are interleaved: every figure's first and last span the session, not a slice of it
    firsts = sorted(m["times_s"][0] for m in doc["measurements"] if m["target"])
    lasts = sorted(m["times_s"][-1] for m in doc["measurements"] if m["target"])
    assert firsts[-1] < lasts[0]


def test_probe_show_prints_the_summary_table(probed, capsys):
    _, path = probed
    status, out, _ = run(capsys, "probe", "show", str(path))
    assert status == 0
    machine, _, header = out.splitlines()[:3]
    assert re.fullmatch(r"machine at the start: \d+ CPUs, other processes took \d+\.\d\d of them, load average "
                        r"\d+\.\d\d, governor \S+", machine), machine
    for column in ("measurement", "mean ± 95 % CI", "cv", "min – max"):
        assert column in header
    assert "tmpfs.read.bs1m.jobs1.bandwidth" in out and "(n=" in out
    status, out, _ = run(capsys, "probe", "show", str(path), "--json")
    shown, written = json.loads(out), json.loads(path.read_text())
    assert shown["format"] == "iobound/probe-set"
    assert shown["machine"] == written["machine"] and set(shown["machine"]) >= {"load_average", "cpus", "others_cpus"}


def test_probe_never_overwrites_and_resumes_without_measuring_again(probed, capsys):
    _, path = probed
    before = path.read_text()
    status, _, err = run(capsys, "probe", "-o", str(path), "--runtime", "0.2")
    assert status == 2 and "exists already; --resume continues it, --force replaces it" in err
    assert path.read_text() == before
    status, out, err = run(capsys, "probe", "-o", str(path), "--jobs", "2", "--runtime", "0.2", "--resume")
    assert status == 0 and json.loads(path.read_text()) == json.loads(before)


def test_topology_uses_the_probe_set_and_predict_reads_it(probed, tmp_path, capsys):
    _, path = probed
    topology = tmp_path / "node.toml"
    topology.write_text(f"""
[clients.me]
nic = "unlimited"
bandwidth = {{ probe = "{path}", measurement = "tmpfs.read.bs1m.jobs1.bandwidth" }}
[devices.memory]
bandwidth = {{ probe = "{path}", measurement = "tmpfs.read.bs1m.jobs2.bandwidth" }}
[[links]]
between = ["me", "memory"]
""")
    status, out, _ = run(capsys, "topology", str(topology))
    assert status == 0 and "(probe: " in out and "tmpfs.read.bs1m.jobs1.bandwidth, mean" in out
    status, out, _ = run(capsys, "predict", str(topology), "--op", "read", "--transfer-size", "1MiB", "--json")
    assert status == 0 and json.loads(out)["ceiling"]["value"] > 0


@pytest.mark.parametrize("argv, message", [
    (["--no-memory"], "nothing to probe: give --peer HOST, --device PATH, or drop --no-memory"),
    (["--write", "--no-memory", "--destroy-data"], "nothing to probe"),
    (["--destroy-data"], "--destroy-data: only makes sense with --write"),
    (["--tmpfs", "/no/such/dir"], "/no/such/dir is not a directory"),
])
def test_probe_refuses_what_cannot_work(argv, message, capsys, tmp_path):
    status, _, err = run(capsys, "probe", "-o", str(tmp_path / "x.json"), *argv)
    assert status == 2 and "Traceback" not in err and message in err
    assert not (tmp_path / "x.json").exists()


def test_a_probe_that_measured_nothing_says_it_saved_nothing_and_each_failure_in_one_line(capsys, tmp_path):
    status, _, err = run(capsys, "probe", "--peer", "nosuchhost.invalid", "--no-memory", "--budget", "1",
                         "-o", str(tmp_path / "c.json"))
    assert status == 4 and "nothing measured: nothing saved" in err and "saved to" not in err
    assert not (tmp_path / "c.json").exists()
    failures = [line for line in err.splitlines() if line.startswith("iobound: error: ")]
    assert len(failures) == 5 and any("its stderr ends: ping: nosuchhost.invalid" in line for line in failures)
    assert not any(line.startswith("ping:") for line in err.splitlines())  # the tool's stderr is inside its line


def test_an_interrupted_probe_keeps_what_it_measured_and_resume_finishes_it(tmp_path):
    path = tmp_path / "node.json"
    argv = [sys.executable, "-m", "assess", "probe", "-o", str(path), "--jobs", "2", "--runtime", "0.2", "--budget", "30"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (path.exists() and len(json.loads(path.read_text())["measurements"]) >= 3):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "measurements are saved in" in err and "--resume continues" in err and "Traceback" not in err
    kept = {m["name"]: m["samples"] for m in json.loads(path.read_text())["measurements"]}
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    assert not Path(f"/dev/shm/iobound-probe-{digest}").exists()  # this run's scratch directory is gone
    status = main(["probe", "-o", str(path), "--jobs", "2", "--runtime", "0.2", "--budget", "5", "--resume", "--quiet"])
    final = {m["name"]: m for m in json.loads(path.read_text())["measurements"]}
    assert status == 0 and all(m["complete"] for m in final.values()) and len(final) == 16
    for name, samples in kept.items():  # what was measured before the interruption is still there, continued
        assert final[name]["samples"][: len(samples)] == samples
