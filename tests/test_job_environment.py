"""``iobound check`` run inside a batch job: the shell's job describes the shell, not the job that produced the results,
so it never overrides what a result states of itself; a job's record beside the results (``slurm-JOB.env``) that is
not Slurm's is one line naming the record and its variable. The real CLI runs in a child process with the job's
variables set, on the real results of ../shared/corpus (skipped where absent)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

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
