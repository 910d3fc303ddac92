"""Plans as Slurm jobs (``iobound plan --emit sbatch|array``) and ``check`` holding each result to the job that produced
it: the job scripts as written, a real fio's per-task results of one step judged together, and a planned fio sweep over
1-3 nodes run as a job array on the lab's own Slurm (its tests skip, saying why, where the lab cannot run)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from probes.lab import down, status
from probes.lab import slurm as lab_slurm
from probes.measure.batch import RESULT, recorded_job
from assess.cli import main
from tests.test_lab import _nothing_left
from tests.test_slurm import _without_slurm


def _plan(capsys, *options: str) -> dict:
    assert main(["plan", *options, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_sbatch_asks_for_the_plans_nodes_and_processes_and_names_each_result_by_job_step_and_task(capsys):
    planned = _plan(capsys, "lecture", "--benchmark", "fio", "--nodes", "4", "--ppn", "2", "--emit", "sbatch")
    script = planned["files"]["fio.sbatch"]
    assert planned["nodes"] == 4 and planned["ppn"] == 2 and "job.fio" in planned["files"]
    assert re.findall(r"^#SBATCH (--[a-z-]+=\S+)$", script, re.MULTILINE)[1:3] == ["--nodes=4", "--ntasks-per-node=2"]
    assert 'env | grep "^SLURM_" > "$results/slurm-$SLURM_JOB_ID.env"' in script
    (srun,) = [line.strip() for line in script.splitlines() if line.strip().startswith("srun ")]
    assert srun.startswith("srun --nodes=4 --ntasks=4 --ntasks-per-node=1 ") and "SLURM_ARRAY" not in script
    assert "for phase in write read; do\n" in script and 'fio-task.sh" "$phase"' in srun  # a step per phase
    # srun's %j.%s.%t (job, step, task) make the names check finds: fio-4242.0.3.json
    name = re.search(r'--output="\$results/(\S+)"', srun)[1]
    assert name == "fio-%j.%s.%t.json" and RESULT.search("fio-4242.0.3.json")["job"] == "4242"


def test_an_array_sweeps_the_nodes_up_to_where_the_ceiling_stops_growing_and_one_past(capsys):
    """The lecture's ceiling grows with its ten clients' NICs up to all ten: the sweep is 1, 2, 4, 8 and 10."""
    script = _plan(capsys, "lecture", "--benchmark", "fio", "--emit", "array")["files"]["fio-array.sh"]
    assert "#SBATCH --nodes=10\n" in script and "#SBATCH --array=1,2,4,8,10%1\n" in script
    assert "srun --nodes=$SLURM_ARRAY_TASK_ID --ntasks=$SLURM_ARRAY_TASK_ID --ntasks-per-node=1 " in script


@pytest.mark.parametrize("benchmark, phases", [("ior", ["-w", "-r"]), ("mdtest", ["-C", "-T", "-r"])])
def test_ior_and_mdtest_jobs_run_the_plans_command_of_each_phase_as_a_step_of_all_their_processes(
        capsys, tmp_path, benchmark, phases):
    """The job runs each phase's command as the plan's script has it, under srun in place of mpirun: the plan's nodes
    and processes per node (a task of the array: its nodes), rank 0's report named as check finds it."""
    planned = _plan(capsys, "lecture", "--benchmark", benchmark, "--nodes", "4", "--ppn", "2", "--emit", "sbatch")
    script, own = planned["files"][f"{benchmark}.sbatch"], planned["files"][f"{benchmark}.sh"]
    assert re.findall(r"^#SBATCH (--[a-z-]+=\S+)$", script, re.MULTILINE)[1:3] == ["--nodes=4", "--ntasks-per-node=2"]
    assert 'env | grep "^SLURM_" > "$results/slurm-$SLURM_JOB_ID.env"' in script
    assert f'mkdir -p "/mnt/fs/iobound/{benchmark}"' in script
    launch = f'srun --nodes=4 --ntasks=8 --ntasks-per-node=2 --output="$results/{benchmark}-%j.%s.0.txt" '
    steps = [line for line in script.splitlines() if line.startswith("srun ")]
    mpirun = "mpirun -np 8 --map-by ppr:2:node "
    commands = [line.removeprefix(mpirun) for line in own.splitlines() if line.startswith(mpirun)]
    assert steps == [launch + command for command in commands] and len(commands) == len(phases)
    assert all(flag in command.split() for flag, command in zip(phases, commands))
    name = f"{benchmark}-4242.1.0.txt"  # srun's %j.%s: job and step; the run as a whole is task 0
    assert RESULT.search(name)["job"] == "4242" and RESULT.search(name)["step"] == "1"
    array = _plan(capsys, "lecture", "--benchmark", benchmark, "--ppn", "2", "--emit", "array")["files"]
    tasks = [line for line in array[f"{benchmark}-array.sh"].splitlines() if line.startswith("srun ")]
    assert len(tasks) == len(phases) and all(line.startswith(
        "srun --nodes=$SLURM_ARRAY_TASK_ID --ntasks=$(($SLURM_ARRAY_TASK_ID * 2)) --ntasks-per-node=2 ")
        for line in tasks)
    for text in (script, array[f"{benchmark}-array.sh"]):  # sh reads them
        (tmp_path / "job.sh").write_text(text)
        assert subprocess.run(["sh", "-n", str(tmp_path / "job.sh")], capture_output=True).returncode == 0


def test_emit_for_a_benchmark_without_a_job_script_is_one_line(capsys):
    assert main(["plan", "lecture", "--benchmark", "io500", "--emit", "sbatch"]) == 2
    assert capsys.readouterr().err == ("iobound: error: --emit: writes the jobs of fio, IOR and mdtest; io500's files "
                                       "run under mpirun as written (srun in its place)\n")


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio (apt-get install fio)")
def test_a_steps_tasks_are_judged_together_and_more_nodes_than_the_job_had_is_a_finding(tmp_path, capsys):
    """Two real fio runs as the tasks 0 and 1 of step 0 of job 7: one run of two nodes, their bytes over the step's
    time; against a record of a two-node job it stands, against one of a single node it is MORE-THAN-THE-JOB. A
    result that claims more processes on a node than the job's tasks is one too."""
    results = tmp_path / "results"
    results.mkdir()
    for task in (0, 1):
        done = subprocess.run(["fio", "--name=w", "--rw=write", "--bs=64k", "--size=4m", "--ioengine=psync",
                               f"--directory={tmp_path}", "--output-format=json"], capture_output=True, text=True,
                              timeout=60, check=True)
        (results / f"fio-7.0.{task}.json").write_text(done.stdout)
    alone = [json.loads((results / f"fio-7.0.{t}.json").read_text())["jobs"][0]["write"] for t in (0, 1)]
    moved, times = sum(a["io_bytes"] for a in alone), [a["runtime"] / 1000 for a in alone]
    ended = (results / "fio-7.0.0.json").stat().st_mtime
    os.utime(results / "fio-7.0.1.json", (ended, ended))  # each output is written as its task ends: they ended together
    def checked() -> list[dict]:
        main(["check", "lecture", *map(str, sorted(results.glob("fio-*.json"))), "--json", "--fail-on", "never"])
        return json.loads(capsys.readouterr().out)["runs"]

    assert [r["run"]["workload"]["nodes"] for r in checked()] == [1, 1]  # no job's record: each file as it is
    record = results / "slurm-7.env"
    record.write_text("SLURM_JOB_ID=7\nSLURM_JOB_NUM_NODES=2\nSLURM_TASKS_PER_NODE=1(x2)\nSLURM_JOB_NODELIST=n[1-2]\n")
    (run,) = checked()  # both files' bytes over the time from the first start to the last end
    assert run["run"]["workload"]["nodes"] == 2 and run["run"]["samples"] == [pytest.approx(moved / max(times), rel=1e-3)]
    assert "MORE-THAN-THE-JOB" not in {f["code"] for f in run["findings"]}
    os.utime(results / "fio-7.0.1.json", (ended + 1, ended + 1))  # the task 1 ended a second later
    assert checked()[0]["run"]["samples"] == [pytest.approx(moved / (1 + max(times[0], times[1] - 1)), rel=1e-3)]
    record.write_text("SLURM_JOB_ID=7\nSLURM_JOB_NUM_NODES=1\nSLURM_TASKS_PER_NODE=1\n")
    (more,) = [f for f in checked()[0]["findings"] if f["code"] == "MORE-THAN-THE-JOB"]
    assert more["severity"] == "error" and more["evidence"] == {
        "job": "7", "nodes": {"claimed": 2, "job": 1, "source": "SLURM_JOB_NUM_NODES"}}
    # a results CSV of the job 9 that says 8 processes per node, from a job of 4 tasks on each of its 2 nodes
    (results / "ior-9.0.0.csv").write_text("op,transfer_size,value,unit,nodes,ppn\nwrite,1MiB,500,MiB/s,2,8\n")
    (results / "slurm-9.env").write_text("SLURM_JOB_ID=9\nSLURM_JOB_NUM_NODES=2\nSLURM_NTASKS_PER_NODE=4\n")
    main(["check", "lecture", str(results / "ior-9.0.0.csv"), "--json", "--fail-on", "never"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    (more,) = [f for f in run["findings"] if f["code"] == "MORE-THAN-THE-JOB"]
    assert more["evidence"] == {"job": "9", "processes per node": {"claimed": 8, "job": 4,
                                                                   "source": "SLURM_NTASKS_PER_NODE"}}
    assert more["message"].startswith("write 1 MiB seq, 2 nodes x 8 ppn: the result claims more than Slurm job 9 that "
                                      "produced it had: 8 processes per node against the job's 4 "
                                      "(SLURM_NTASKS_PER_NODE).")
    record.write_text("SLURM_JOB_ID=8\n")
    assert main(["check", "lecture", str(results / "fio-7.0.0.json")]) == 2
    assert capsys.readouterr().err.endswith("slurm-7.env: is the record of job 7 but says SLURM_JOB_ID=8\n")


# ---- a planned sweep as a job array on the lab's Slurm ------------------------------------------------------------

# Three clients on 40 Mbit/s links and a server on 80 Mbit/s: the clients' writes grow with them up to two, where the
# server's link binds. Each fio phase moves 2 MiB a node three times: about a second at a client's rate.
SPEC = ('[clients]\ncount = 3\nrate = "40 Mbit/s"\n[servers]\ncount = 1\nrate = "80 Mbit/s"\nsize = "64 MiB"\n')
DATA_SET = "4MiB"


@pytest.mark.slow
@pytest.mark.skipif(_without_slurm() is not None, reason=_without_slurm() or "")
def test_a_planned_fio_sweep_runs_as_a_job_array_each_step_under_its_ceiling_and_the_knee_where_planned(
        tmp_path, capsys):
    """iobound plan on the lab's topology puts the knee at two of its three clients; the plan's job array runs fio on
    1, 2 and 3 nodes of the lab's Slurm, each node on its own client's mount of the server; check judges each step's
    tasks together at their nodes: none above its ceiling, two nodes twice one's rate, three no more than two."""
    out = io.StringIO()
    (tmp_path / "lab.toml").write_text(SPEC)
    state, topology = tmp_path / "state", tmp_path / "lab-topology.toml"
    try:
        with contextlib.redirect_stdout(out):
            assert main(["lab", "up", str(tmp_path / "lab.toml"), "--state-dir", str(state), "-o", str(topology),
                         "--slurm"]) == 0
        made = status(state)
        folder = tmp_path / "sweep"
        mounts = made.mount("${SLURMD_NODENAME}", "s1")  # fio reads the node's name from its task's environment
        planned = _plan(capsys, str(topology), "--benchmark", "fio", "--op", "write", "--data-set", DATA_SET,
                        "--min-time", "1", "--path", str(mounts), "--emit", "array", "-o", str(folder))
        assert planned["nodes"] == 2 and "it grows with the nodes up to 2 of lab-clients" in planned["scaling"]
        assert "#SBATCH --array=1,2,3%1\n" in (folder / "fio-array.sh").read_text()
        done = subprocess.run(lab_slurm.command(made, "sbatch", "--wait", "--exclude=s1", "fio-array.sh"), cwd=folder,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (done.stdout, done.stderr, *(p.read_text() for p in folder.glob("results/*.err")))
    finally:
        down(state)
    _nothing_left(state)
    results = sorted((folder / "results").glob("fio-*.json"))
    jobs = {recorded_job(path).id: recorded_job(path) for path in results}
    assert len(results) == 2 * (1 + 2 + 3) and [j.nodes.value for j in jobs.values()] == [3] * 3  # each task: all three
    status_ = main(["check", str(topology), *map(str, results), "--json", "--tolerance", "0.1", "--fail-on", "never"])
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert status_ == 0 and len(runs) == 3 * 2  # a run per step (its tasks together), a step per phase
    rates: dict[str, dict[int, float]] = {}
    said = []  # shown by pytest -rP
    for run in runs:
        nodes, codes = run["run"]["workload"]["nodes"], {f["code"] for f in run["findings"]}
        assert not codes & {"ABOVE-CEILING", "MORE-THAN-THE-JOB"} and run["ratio"] <= 1.1, (nodes, run["ratio"], codes)
        rates.setdefault(run["run"]["label"], {})[nodes] = run["measured"]["value"]
        said.append(f"{run['run']['label']}, {nodes} node(s): {run['measured']['value'] / 2**20:.2f} MiB/s, "
                    f"{run['ratio']:.2f} of the ceiling")
    # the writes in proportion up to the knee, flat beyond it. The reads' nodes start their files up to 0.4 s apart
    # here (the writes' within 50 ms), which a 1.3 s step's time counts: they are held to their ceilings alone
    writes = rates["write write"]
    assert writes[2] > 1.6 * writes[1] and writes[3] < 1.15 * writes[2], writes
    # against the plan (2 nodes), each step as one run: the sweep's other steps differ from it in their nodes alone
    main(["check", "--plan", str(folder / "plan.json"), *map(str, results), "--json"])
    nodes = {(r["phase"], i["ran"], i["followed"]) for r in json.loads(capsys.readouterr().out)["runs"]
             for i in r["items"] if i["item"] == "nodes"}
    assert nodes == {(phase, ran, ran == "2") for phase in ("write", "read") for ran in ("1", "2", "3")}
    print(*said, sep="\n", file=sys.stderr)
