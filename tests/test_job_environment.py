"""``iobound check`` run inside a batch job: the shell's job describes the shell, not the job that produced the results,
so it never overrides what a result states of itself; a job's record beside the results (``slurm-JOB.env``) that is
not Slurm's is one line naming the record and its variable. The real CLI runs in a child process with the job's
variables set, on the real results of ../shared/corpus (skipped where absent)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _check(*argv: str, cwd: Path = ROOT, **variables: str) -> subprocess.CompletedProcess:
    """``iobound check ARGV`` in a child process, in a job of ``variables`` (none of the test's own shell's)."""
    environ = {name: value for name, value in os.environ.items() if not name.startswith(("SLURM_", "PBS_"))}
    environ["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "assess", "check", *argv], capture_output=True, text=True, cwd=cwd,
                          env={**environ, **variables}, timeout=300)


def test_a_bad_variable_in_a_jobs_record_is_one_line_naming_the_record_and_the_variable(corpus, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(corpus / "ior" / "narval_io500_ior-3.4.0+dev_easy_write.txt", results / "ior-100.0.0.txt")
    record = results / "slurm-100.env"
    for line, said in [("SLURM_JOB_NUM_NODES=0", "SLURM_JOB_NUM_NODES: '0' is not a count of 1 or more"),
                       ("SLURM_TASKS_PER_NODE=2(x3", "SLURM_TASKS_PER_NODE: '2(x3' is not Slurm's tasks per node")]:
        record.write_text(f"SLURM_JOB_ID=100\n{line}\n")
        done = _check("narval", "results/ior-100.0.0.txt", cwd=tmp_path)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith(f"iobound: error: results/slurm-100.env: {said}")


def _verdicts(done: subprocess.CompletedProcess) -> list[tuple]:
    """Each run's label, nodes, ceiling, ratio and finding codes, from check --json's output."""
    assert done.returncode in (0, 1), done.stderr
    return [(r["run"]["label"], r["run"]["workload"]["nodes"], r["ceiling"], r["ratio"],
             sorted(f["code"] for f in r["findings"])) for r in json.loads(done.stdout)["runs"]]


def test_an_io500_result_checked_inside_a_job_is_judged_as_it_states_not_on_the_jobs_nodes(corpus, tmp_path):
    """Narval's 640 processes, judged on its 640 client nodes, are BELOW-CEILING; placed on the one node of the job
    that checks them, they were ABOVE-CEILING: an error no stated figure made."""
    result = str(corpus / "io500" / "narval_io500-sc21_result.txt")
    outside = _check("narval", result, "--json")
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("cn01\n")
    for job in ({"SLURM_JOB_ID": "42", "SLURM_JOB_NUM_NODES": "1"}, {"PBS_NODEFILE": str(nodefile), "PBS_JOBID": "7"},
                {"SLURM_JOB_ID": "42", "SLURM_JOB_NUM_NODES": "0"}):  # a variable the check needs not, not read
        inside = _check("narval", result, "--json", **job)
        assert (inside.returncode, inside.stderr) == (outside.returncode, "") and outside.returncode == 0
        assert _verdicts(inside) == _verdicts(outside)
    easy = _verdicts(outside)[0]
    assert easy[:2] == ("ior-easy-write", 640) and "BELOW-CEILING" in easy[4] and "ABOVE-CEILING" not in easy[4]
    text = _check("narval", result, SLURM_JOB_ID="42", SLURM_JOB_NUM_NODES="1")
    assert text.returncode == 0 and "ABOVE-CEILING" not in text.stdout and "BELOW-CEILING" in text.stdout


def test_nodes_job_asks_for_the_jobs_nodes_and_says_where_they_came_from(corpus, tmp_path):
    result = str(corpus / "io500" / "narval_io500-sc21_result.txt")
    done = _check("narval", result, "--json", "--nodes", "job", SLURM_JOB_ID="42", SLURM_JOB_NUM_NODES="64")
    assert done.stderr == "iobound: Slurm job 42: nodes 64 from SLURM_JOB_NUM_NODES (--nodes job)\n"
    easy = json.loads(done.stdout)["runs"][0]["run"]
    assert (easy["workload"]["nodes"], easy["workload"]["ppn"]) == (64, 10)
    assert easy["placement"]["placed"] == ("640 processes on 64 nodes, 10 each (--nodes job: Slurm job 42's 64 nodes "
                                           "(SLURM_JOB_NUM_NODES); the result states no node count)")
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("cn01\ncn02\n")
    pbs = _check("narval", result, "--json", "--nodes", "job", PBS_NODEFILE=str(nodefile), PBS_JOBID="7.server")
    assert json.loads(pbs.stdout)["runs"][0]["run"]["placement"]["placed"].startswith(
        "640 processes on 2 nodes, 320 each (--nodes job: PBS job 7.server's 2 nodes (PBS_NODEFILE);")
    for job, said in [({}, "--nodes job: this runs in no Slurm or PBS job (neither SLURM_JOB_ID nor PBS_NODEFILE is "
                           "set): give the node count"),
                      ({"SLURM_JOB_ID": "42"}, "--nodes job: Slurm job 42 does not state its node count: give it"),
                      ({"SLURM_JOB_ID": "42", "SLURM_JOB_NUM_NODES": "0"},
                       "SLURM_JOB_NUM_NODES: '0' is not a count of 1 or more")]:
        bad = _check("narval", result, "--nodes", "job", **job)
        assert (bad.returncode, bad.stderr) == (2, f"iobound: error: {said}\n")


def test_a_darshan_log_takes_the_jobs_nodes_only_where_it_names_that_job_as_its_own():
    """The example log's 2,048 processes of job 4478544: on one node they would be POSSIBLE-IF at 322 % of the client
    NICs; a job of another id that checks them leaves them as outside a job (FAR-BELOW, 36 %)."""
    darshan = pytest.importorskip("darshan")
    log = str(Path(darshan.__file__).parent / "examples" / "example_logs" / "example.darshan")
    system = str(ROOT / "tests" / "data" / "darshan" / "lustre-248.toml")
    outside = _verdicts(_check(system, log, "--json"))
    assert {codes[0] for *_, codes in outside} == {"FAR-BELOW"}
    other = _check(system, log, "--json", SLURM_JOB_ID="42", SLURM_JOB_NUM_NODES="1")
    assert (_verdicts(other), other.stderr) == (outside, "")
    own = _check(system, log, "--json", SLURM_JOB_ID="4478544", SLURM_JOB_NUM_NODES="64")
    assert own.stderr == (f"iobound: Slurm job 4478544: nodes 64 from SLURM_JOB_NUM_NODES for {log}, a log of this job "
                          "(its job id)\n")
    for run in json.loads(own.stdout)["runs"]:
        assert run["run"]["placement"]["placed"] == (
            "2048 processes on 64 nodes, 32 each (Slurm job 4478544's 64 nodes (SLURM_JOB_NUM_NODES), the job the log "
            "names as its own; the result states no node count)")
    alone = _check(system, log, "--json", SLURM_JOB_ID="4478544", SLURM_JOB_NUM_NODES="1")  # its own job's one node
    assert {codes[0] for *_, codes in _verdicts(alone)} == {"POSSIBLE-IF"}
    uneven = _check(system, log, "--json", SLURM_JOB_ID="4478544", SLURM_JOB_NUM_NODES="3")
    assert _verdicts(uneven) == outside and uneven.stderr == (
        f"iobound: Slurm job 4478544: its 3 nodes (SLURM_JOB_NUM_NODES) do not divide the 2048 processes of {log}, a "
        "log of this job: placed as outside it\n")
