"""review --darshan: every log of a tree judged on a pool of PyDarshan workers (or Dask), as ``check`` judges it;
bad files named, reruns judging only new logs, an interrupted review resumed, a mount table covering several file
systems. The logs are the PyDarshan wheel's samples and, where present, the real logs of ../shared/darshan-logs."""

import contextlib
import html
import importlib.util
import io
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

darshan = pytest.importorskip("darshan", reason="PyDarshan is not installed: pip install 'iobound[darshan]'")

from assess.centre import DARSHAN_REVIEW_VERSION  # noqa: E402
from assess.check import check_runs  # noqa: E402
from assess.cli import main  # noqa: E402
from probes.readers import read_results  # noqa: E402
from topologies.load import load_topology  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(darshan.__file__).parent
EXAMPLES = PACKAGE / "examples" / "example_logs"
# Small sample logs of the wheel (the 449 KiB sample-badost.darshan of 2,048 processes is left to test_application).
SAMPLES = sorted(p for p in (PACKAGE / "examples" / "example_logs").glob("*.darshan") if p.stat().st_size < 200_000)
CORPUS = ROOT.parent / "shared" / "darshan-logs"
REAL = sorted(CORPUS.glob("*.darshan"))
LUSTRE = ROOT / "tests" / "data" / "darshan" / "lustre-248.toml"
pytestmark = pytest.mark.slow  # PyDarshan reads every log


def review(*argv: str) -> tuple[int, dict | str, str]:
    """``iobound review ARGV`` in this process: its status, its JSON (or text) and its stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["review", *argv])
    text = out.getvalue()
    return status, json.loads(text) if "--json" in argv else text, err.getvalue()


def by_path(jobs: list[dict]) -> dict[str, dict]:
    """A review's jobs by their logs' paths (it writes them as they are judged, in the order they finish)."""
    return {job["path"]: job for job in jobs}


def crashing_log() -> bytes:
    """example.darshan with 7 bytes changed: darshan-util corrupts its heap reading it, and the reader dies."""
    rng = random.Random(0)
    data = bytearray((EXAMPLES / "example.darshan").read_bytes())
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(16, len(data))] = rng.randrange(256)
    return bytes(data)


def tree(folder: Path, logs: list[Path], copies: int = 1, per_folder: int = 100, limit: int | None = None) -> list[Path]:
    """``copies`` links to each log under new names (``limit`` in all), ``per_folder`` to a folder: a centre's tree
    made of few logs."""
    made = []
    for n in range(copies):
        for log in logs:
            if len(made) == limit:
                return made
            place = folder / f"day-{len(made) // per_folder:04d}"
            place.mkdir(parents=True, exist_ok=True)
            made.append(place / f"job{n:05d}-{log.name}")
            made[-1].symlink_to(log)
    return made


def in_session(session: int) -> list[str]:
    """The command lines of the live processes in ``session`` (zombies, which hold nothing, left out)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
            if int(fields[3]) == session and fields[0] != "Z":
                found.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
    return found


def test_a_tree_with_bad_files_judges_the_good_ones_as_check_does_and_names_each_bad_one(tmp_path):
    logs = tmp_path / "logs"
    good = tree(logs, SAMPLES)
    (logs / "bad").mkdir()
    bad = {"crash.darshan": crashing_log(), "empty.darshan": b"",
           "truncated.darshan": (EXAMPLES / "example.darshan").read_bytes()[:5000],
           "notes.txt": b"IOR-3.3.0: MPI Coordinated Test of Parallel I/O\n"}
    for name, data in bad.items():
        (logs / "bad" / name).write_bytes(data)
    status, doc, err = review("--darshan", str(logs), str(LUSTRE), "--index", str(tmp_path / "i.sqlite"), "--json",
                              "--workers", "2", "--fail-on", "never")
    assert status == 0 and (doc["format"], doc["format_version"]) == ("iobound/darshan-review", DARSHAN_REVIEW_VERSION)
    jobs = {j["path"]: j for j in doc["jobs"]}
    assert len(jobs) == len(good) + len(bad) and "Traceback" not in err
    reasons = {Path(u["path"]).name: u["reason"] for u in doc["centre"]["unreadable"]}
    assert set(reasons) == set(bad)
    assert reasons["empty.darshan"].startswith("not a Darshan log") and reasons["notes.txt"].startswith("not a Darshan")
    assert "corrupt or truncated" in reasons["truncated.darshan"] and "corrupt" in reasons["crash.darshan"]
    topology = load_topology(LUSTRE)
    for link in good:  # the oracle: check's own judgement of the log, read alone in a child process
        job, judgements = jobs[str(link)], check_runs(topology, read_results(link))
        head = max((j for j in judgements if j.ceiling is not None), key=lambda j: j.run.workload.data_set.m_as("B"))
        assert job["status"] == "judged" and job["run"] == head.run.label
        assert job["fraction"] == pytest.approx(head.ratio) and job["rate"] == pytest.approx(head.measured.m_as("B/s"))
        assert job["findings"] == list(dict.fromkeys(f.code for j in judgements for f in j.findings))
    assert doc["centre"]["statuses"] == {"judged": len(good), "unjudged": 0, "unreadable": len(bad)}
    assert sum(band["jobs"] for band in doc["centre"]["fractions"]) == len(good)


def test_a_rerun_judges_nothing_twice_and_a_changed_log_again(tmp_path):
    logs = tree(tmp_path / "logs", SAMPLES)
    argv = ("--darshan", str(tmp_path / "logs"), str(LUSTRE), "--index", str(tmp_path / "i.sqlite"), "--json",
            "--fail-on", "never")
    first = review(*argv)[1]
    second = review(*argv)[1]
    assert (first["centre"]["judged_now"], second["centre"]["judged_now"]) == (len(logs), 0)
    assert by_path(second["jobs"]) == by_path(first["jobs"])
    changed = tmp_path / "logs" / "day-0000" / "changed.darshan"
    changed.write_bytes((EXAMPLES / "example.darshan").read_bytes())
    third = review(*argv)[1]
    assert third["centre"]["judged_now"] == 1 and third["centre"]["logs"] == len(logs) + 1
    with open(changed, "ab") as file:  # the same path, grown: judged again
        file.write(b"\0")
    assert review(*argv)[1]["centre"]["judged_now"] == 1


def test_an_interrupted_review_keeps_what_it_finished_and_resumes(tmp_path):
    logs = tree(tmp_path / "logs", SAMPLES, copies=12)
    index = tmp_path / "i.sqlite"
    argv = ["review", "--darshan", str(tmp_path / "logs"), str(LUSTRE), "--index", str(index), "--workers", "1"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-m", "assess", *argv], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    kept = 0
    deadline = time.monotonic() + 300
    while kept == 0 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.2)
        if index.exists():
            with contextlib.closing(sqlite3.connect(index)) as db:
                with contextlib.suppress(sqlite3.OperationalError):
                    kept = db.execute("SELECT count(*) FROM logs").fetchone()[0]
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert 0 < kept < len(logs), "the review ended before it could be interrupted"
    # its pool's workers, their forkserver and resource tracker end with it (each in its session)
    deadline = time.monotonic() + 30
    while (left := in_session(child.pid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, left
    with contextlib.closing(sqlite3.connect(index)) as db:
        kept = db.execute("SELECT count(*) FROM logs").fetchone()[0]
    status, doc, _ = review(*argv[1:], "--json", "--fail-on", "never")
    assert doc["centre"]["judged_now"] == len(logs) - kept and doc["centre"]["logs"] == len(logs)
    assert doc["centre"]["statuses"]["judged"] == len(logs)


def test_the_json_gives_each_job_as_it_is_judged_not_once_every_job_is(tmp_path):
    """A centre's 100,000 logs were held, every job's JSON, until the last was judged: the first jobs are on the
    review's output while it still judges (the index holds fewer logs than the tree), and the document is whole."""
    logs = tree(tmp_path / "logs", SAMPLES, copies=12)
    index = tmp_path / "i.sqlite"
    argv = ["review", "--darshan", str(tmp_path / "logs"), str(LUSTRE), "--index", str(index), "--workers", "1",
            "--json", "--fail-on", "never"]
    child = subprocess.Popen([sys.executable, "-m", "assess", *argv], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        lines = []
        while '"path":' not in (line := child.stdout.readline()) and line:
            lines.append(line)
        with contextlib.closing(sqlite3.connect(index)) as db:
            judged = db.execute("SELECT count(*) FROM logs").fetchone()[0]
        rest = child.stdout.read()
    finally:
        child.wait(timeout=300)
    assert judged < len(logs), "the first job came once every log was judged"
    doc = json.loads("".join(lines) + line + rest)
    assert len(doc["jobs"]) == doc["centre"]["logs"] == len(logs) and doc["format_version"] == DARSHAN_REVIEW_VERSION


def test_a_centres_sums_are_the_same_in_whatever_order_its_jobs_come(tmp_path):
    """A pool and Dask finish the logs in different orders: ties among counts and the sum of the time lost must not
    follow it."""
    from assess.centre import Centre
    from assess.darshan_review import JUDGED, JobResult

    tree(tmp_path / "logs", SAMPLES)
    doc = review("--darshan", str(tmp_path / "logs"), str(LUSTRE), "--index", str(tmp_path / "i.sqlite"), "--json",
                 "--fail-on", "never")[1]
    results = [JobResult.from_dict(job) for job in doc["jobs"]]
    assert sum(r.status == JUDGED for r in results) > 2 and len({r.time_lost for r in results}) > 2
    sums = set()
    for seed in range(20):
        random.Random(seed).shuffle(results)
        centre = Centre()
        for result in results:
            centre.add(result, now=True)
        sums.add(json.dumps(centre.to_dict()))
    assert len(sums) == 1


def test_a_dask_local_cluster_gives_the_pools_results(tmp_path):
    pytest.importorskip("distributed", reason="Dask is not installed: pip install 'iobound[dask]'")
    tree(tmp_path / "logs", SAMPLES + REAL[:8])
    (tmp_path / "logs" / "empty.darshan").write_bytes(b"")
    argv = ("--darshan", str(tmp_path / "logs"), str(LUSTRE), "--json", "--fail-on", "never")
    pool = review(*argv, "--index", str(tmp_path / "pool.sqlite"))[1]
    dask = review(*argv, "--index", str(tmp_path / "dask.sqlite"), "--dask", "local")[1]
    assert by_path(dask["jobs"]) == by_path(pool["jobs"]) and dask["centre"] == pool["centre"]


@pytest.mark.skipif(importlib.util.find_spec("dask_jobqueue") is None,
                    reason="dask-jobqueue is not installed: pip install 'iobound[dask]'")
def test_slurm_workers_are_configured_as_slurm_jobs():
    """No Slurm here: the SLURMCluster is built and its job script read, not submitted; importing dask-jobqueue leaves
    Ctrl-C as it was (its runner module makes it a silent sys.exit() for the whole process)."""
    from assess.darshan_engines import slurm_cluster

    ctrl_c = signal.getsignal(signal.SIGINT)
    cluster = slurm_cluster()
    assert signal.getsignal(signal.SIGINT) is ctrl_c
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert script.startswith("#!/usr/bin/env bash") and "#SBATCH" in script
    assert "distributed.cli.dask_worker" in script and "--nthreads 1" in script and "--memory-limit 4.00GiB" in script


@pytest.mark.skipif(not REAL, reason="the real logs of ../shared/darshan-logs are not here")
def test_a_mount_table_judges_each_file_system_on_its_own_topology(tmp_path):
    table = tmp_path / "mounts.toml"
    table.write_text(f'[mounts]\n"/lus/theta-fs0" = "{LUSTRE}"\n"/global/cscratch1" = "lecture"\n', encoding="utf-8")
    tree(tmp_path / "logs", REAL)
    status, doc, _ = review("--darshan", str(tmp_path / "logs"), str(table), "--index", str(tmp_path / "i.sqlite"),
                            "--json", "--fail-on", "never")
    by_system = {}
    for job in doc["jobs"]:
        by_system.setdefault(job["file_system"], set()).add((job["status"], job["topology"]))
    assert by_system["/lus/theta-fs0"] == {("judged", "lustre-248")}
    assert by_system["/global/cscratch1"] == {("judged", "lecture")}
    assert by_system["/gpfs/mira-fs0"] == {("unjudged", None)}
    assert {j["reason"] for j in doc["jobs"] if j["file_system"] == "/gpfs/mira-fs0"} == {
        "its file system /gpfs/mira-fs0 is in no entry of the mount table"}
    assert [m["mount"] for m in doc["mounts"]] == ["/global/cscratch1", "/lus/theta-fs0"]


def test_a_manifest_names_the_paths_it_lists_that_are_missing(tmp_path):
    manifest = tmp_path / "logs.txt"
    manifest.write_text(f"# two logs and one that is gone\n{SAMPLES[0]}\n\n{SAMPLES[1]}\ngone.darshan\n", encoding="utf-8")
    status, doc, _ = review("--manifest", str(manifest), str(LUSTRE), "--index", str(tmp_path / "i.sqlite"), "--json",
                            "--fail-on", "never")
    gone = str(tmp_path / "gone.darshan")
    assert {j["path"]: j["status"] for j in doc["jobs"]} == {
        str(SAMPLES[0]): "judged", str(SAMPLES[1]): "judged", gone: "unreadable"}
    assert doc["centre"]["unreadable"] == [{"path": gone, "reason": "No such file or directory"}]


def test_a_fifo_among_the_logs_is_named_not_read_and_a_fifo_manifest_refused(tmp_path):
    """A FIFO's read waits for a writer: in the folder or the manifest it is an unreadable log that says why, at once."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "one.darshan").symlink_to(SAMPLES[0])
    fifo = logs / "job.darshan"
    os.mkfifo(fifo)
    manifest = tmp_path / "logs.txt"
    manifest.write_text("logs/one.darshan\nlogs/job.darshan\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for given in (["--darshan", str(logs)], ["--manifest", str(manifest)]):
        done = subprocess.run([sys.executable, "-m", "assess", "review", *given, str(LUSTRE), "--workers", "1", "--index",
                               str(tmp_path / "i.sqlite"), "--json", "--fail-on", "never"],
                              capture_output=True, text=True, cwd=tmp_path, env=env, timeout=180)
        doc = json.loads(done.stdout)
        assert done.returncode == 0 and doc["centre"]["statuses"] == {"judged": 1, "unjudged": 0, "unreadable": 1}
        assert doc["centre"]["unreadable"] == [{"path": str(fifo), "reason": "a named pipe (FIFO), not a file; iobound "
                                                                             "reads regular files"}]
    os.mkfifo(tmp_path / "fifo.txt")
    done = subprocess.run([sys.executable, "-m", "assess", "review", "--manifest", str(tmp_path / "fifo.txt"), str(LUSTRE),
                           "--index", str(tmp_path / "i.sqlite")], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=180)
    assert done.returncode == 2 and done.stderr == (f"iobound: error: {tmp_path / 'fifo.txt'}: a named pipe (FIFO), not a "
                                                    "file; iobound reads regular files\n")


def test_a_folder_reached_again_by_a_link_is_not_walked_again(tmp_path):
    """A loop (``up -> ..``) and a second name for a folder (``b -> a``): each log is judged once, under its first path."""
    for name, link, to in (("loop", "a/up", ".."), ("named", "b", "a")):
        logs = tmp_path / name
        (logs / "a").mkdir(parents=True)
        (logs / "a" / "one.darshan").symlink_to(SAMPLES[0])
        (logs / link).symlink_to(to)
        status, doc, _ = review("--darshan", str(logs), str(LUSTRE), "--index", str(tmp_path / "i.sqlite"), "--json",
                                "--workers", "1", "--fail-on", "never")
        assert [j["path"] for j in doc["jobs"]] == [str(logs / "a" / "one.darshan")]
        assert doc["centre"]["statuses"] == {"judged": 1, "unjudged": 0, "unreadable": 0}


def test_the_text_csv_and_html_say_the_centre_and_every_log(tmp_path):
    tree(tmp_path / "logs", SAMPLES)
    (tmp_path / "logs" / "empty.darshan").write_bytes(b"")
    argv = ("--darshan", str(tmp_path / "logs"), str(LUSTRE), "--index", str(tmp_path / "i.sqlite"), "--fail-on", "never")
    status, text, err = review(*argv)
    assert f"({len(SAMPLES) + 1} logs; {len(SAMPLES) + 1} judged now, 0 from the index)" in text
    assert f"{len(SAMPLES)} judged, 0 unjudged, 1 unreadable" in text and "jobs by the fraction of their ceiling" in text
    assert f"  {tmp_path / 'logs' / 'empty.darshan'}: not a Darshan log" in text and "time lost against the ceilings" in text
    assert err == ""  # progress where asked, or on a terminal
    err = review(*argv, "--index", str(tmp_path / "again.sqlite"), "--progress")[2]
    n = len(SAMPLES) + 1
    assert re.fullmatch(rf"(review: done \d+ of {n} logs, .*\n)*review: done {n} of {n} logs, {n} judged now "
                        rf"\(\d+\.\d logs/s\), 0 from the index, in [\d.]+ s\n", err), err
    rows = review(*argv, "--csv")[1].splitlines()
    assert rows[0].startswith("path,status,reason,job_id") and len(rows) == len(SAMPLES) + 2
    # the html report: its figures, and the same sums as the JSON's
    centre = review(*argv, "--json")[1]["centre"]
    status, text, _ = review(*argv, "--html", str(tmp_path / "page"))
    page = (tmp_path / "page" / "index.html").read_text(encoding="utf-8")
    assert status == 0 and text.endswith(f"wrote {tmp_path / 'page' / 'index.html'}\n")
    for figure in ("fractions", "time-lost", "findings", "stripe-counts"):
        assert (tmp_path / "page" / "figures" / f"{figure}.svg").exists() and f"figures/{figure}.svg" in page
    for band in centre["fractions"]:
        low = f"{band['from']:.0%}"
        assert re.search(rf"<tr><td>(≥ )?{low}[^<]*</td><td class=num>{band['jobs']}</td>", page), band
    for finding in centre["findings"]:
        assert f"<tr><td>{finding['code']}</td><td class=num>{finding['jobs']}</td></tr>" in page
    assert all(html.escape(top["path"]) in page for top in centre["top_time_lost"])
    assert "Unreadable logs (1)" in page and html.escape(str(tmp_path / "logs" / "empty.darshan")) in page
    before = page
    done = subprocess.run([sys.executable, "-m", "assess", "review", *argv, "--html", str(tmp_path / "page")],
                          capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "exists already" in done.stderr, done.stderr
    assert (tmp_path / "page" / "index.html").read_text(encoding="utf-8") == before


def test_an_index_that_is_not_ours_is_refused_in_one_line_and_left_as_it_is(tmp_path):
    other = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE t (x)")
        db.commit()
    before = other.read_bytes()
    done = subprocess.run([sys.executable, "-m", "assess", "review", "--darshan", str(EXAMPLES), str(LUSTRE), "--index",
                           str(other)], capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not an iobound Darshan index" in done.stderr
    assert other.read_bytes() == before


def test_a_thousand_logs_are_judged_each_as_its_original(tmp_path):
    """A centre's tree in small: 1,000 links to the real logs (or the samples) under many names and folders."""
    base = REAL or SAMPLES
    tree(tmp_path / "logs", base, copies=-(-1000 // len(base)), limit=1000)
    status, doc, err = review("--darshan", str(tmp_path / "logs"), str(LUSTRE), "--index", str(tmp_path / "i.sqlite"),
                              "--json", "--fail-on", "never")
    assert doc["centre"]["logs"] == 1000 and doc["centre"]["judged_now"] == 1000
    original = {}
    for job in doc["jobs"]:
        key = Path(os.path.realpath(job["path"])).name
        same = {k: v for k, v in job.items() if k not in ("path", "mtime_ns")}
        assert original.setdefault(key, same) == same  # every copy of a log judged as the first
