"""Slurm: a job's shape as the commands' default (Slurm's variables in their real forms, PBS's node file), and a real
Slurm in the lab (``iobound lab up --slurm``) on which ``srun -N 3 iobound probe cluster`` probes three hosts.

The lab's Slurm needs root and Debian's slurmctld, slurmd, slurm-client and munge (apt-get install slurmctld slurmd
slurm-client munge); its tests skip, saying which is missing, elsewhere. One lab with its Slurm serves them all.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from probes.core.errors import InputError, ProbeError
from probes.lab import down, parse_spec, status, up
from probes.lab import slurm as lab_slurm
from probes.measure.batch import Sourced, current_job, hostnames, tasks_per_node
from assess.cli import main
from tests.test_lab import LOAD_MARGIN, PAYLOAD, _nothing_left, _unavailable, needs_lab

# ---- the job's shape from the environment ------------------------------------------------------------------------


@pytest.mark.parametrize("text, counts", [
    ("16(x4)", [16] * 4), ("2(x3),1", [2, 2, 2, 1]), ("1", [1]), ("4,2(x2),8", [4, 2, 2, 8]), ("72(x1)", [72])])
def test_slurms_tasks_per_node_are_read_in_their_real_forms(text, counts):
    assert tasks_per_node(text) == counts


@pytest.mark.parametrize("text", ["", "2(x3", "2x3", "0", "2(x0)", "a", "2(x3),", "-1"])
def test_tasks_per_node_not_in_slurms_form_is_refused_naming_the_variable(text):
    with pytest.raises(InputError, match=r"^SLURM_TASKS_PER_NODE: .* is not Slurm's tasks per node, e\.g\. 2\(x3\),1"):
        tasks_per_node(text)


def test_a_slurm_job_gives_its_nodes_processes_per_node_and_node_list_each_with_its_source():
    job = current_job({"SLURM_JOB_ID": "4242", "SLURM_JOB_NUM_NODES": "4", "SLURM_TASKS_PER_NODE": "2(x3),1",
                       "SLURM_JOB_NODELIST": "n[01-03],gpu7"})
    assert (job.scheduler, job.id, job.phrase()) == ("slurm", "4242", "Slurm job 4242")
    assert job.nodes == Sourced(4, "SLURM_JOB_NUM_NODES")
    assert job.ppn == Sourced(2, "SLURM_TASKS_PER_NODE=2(x3),1, the most on one node")
    assert job.hosts == Sourced("n[01-03],gpu7", "SLURM_JOB_NODELIST")
    # --ntasks-per-node states it outright; an older Slurm's SLURM_NNODES, else the count of nodes the tasks are on
    even = current_job({"SLURM_JOB_ID": "7", "SLURM_NNODES": "2", "SLURM_NTASKS_PER_NODE": "8",
                        "SLURM_TASKS_PER_NODE": "8(x2)"})
    assert (even.nodes, even.ppn, even.hosts) == (Sourced(2, "SLURM_NNODES"), Sourced(8, "SLURM_NTASKS_PER_NODE"), None)
    bare = current_job({"SLURM_JOB_ID": "8", "SLURM_TASKS_PER_NODE": "16(x4)"})
    assert (bare.nodes, bare.ppn) == (Sourced(4, "SLURM_TASKS_PER_NODE"), Sourced(16, "SLURM_TASKS_PER_NODE"))
    assert current_job({"PATH": "/usr/bin", "HOME": "/root"}) is None  # outside a job
    with pytest.raises(InputError, match=r"^SLURM_JOB_NUM_NODES: 'four' is not a count of 1 or more$"):
        current_job({"SLURM_JOB_ID": "9", "SLURM_JOB_NUM_NODES": "four"})


def test_a_pbs_job_gives_its_distinct_hosts_and_the_processes_on_each(tmp_path):
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("cn01\ncn01\ncn02\ncn02\ncn03\n")  # a host per process, as PBS lists them
    job = current_job({"PBS_NODEFILE": str(nodefile), "PBS_JOBID": "123.pbs"})
    assert (job.scheduler, job.id, job.phrase()) == ("pbs", "123.pbs", "PBS job 123.pbs")
    assert (job.nodes, job.ppn) == (Sourced(3, "PBS_NODEFILE"), Sourced(2, "PBS_NODEFILE, the most on one node"))
    assert job.host_names() == Sourced(("cn01", "cn02", "cn03"), "PBS_NODEFILE")
    nodefile.write_text("")
    with pytest.raises(InputError, match=rf"^{nodefile}: PBS_NODEFILE names it, but it lists no host$"):
        current_job({"PBS_NODEFILE": str(nodefile)})
    with pytest.raises(InputError, match=r"PBS_NODEFILE names it, but it cannot be read: No such file"):
        current_job({"PBS_NODEFILE": str(tmp_path / "gone")})


@pytest.mark.skipif(shutil.which("scontrol") is None, reason="needs scontrol (apt-get install slurm-client)")
def test_slurms_node_list_is_expanded_by_scontrol_with_no_controller_asked(tmp_path, monkeypatch):
    conf = tmp_path / "slurm.conf"  # as on a job's node: a configuration naming a controller, which is not asked
    conf.write_text("ClusterName=test\nSlurmctldHost=nowhere(192.0.2.1)\n")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    job = current_job({"SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "n[01-03,07],gpu1"})
    assert job.host_names() == Sourced(("n01", "n02", "n03", "n07", "gpu1"),
                                       "scontrol show hostnames SLURM_JOB_NODELIST")
    conf.write_text("")  # no Slurm configuration: one line saying what to do
    with pytest.raises(ProbeError, match=r"^scontrol could not read the job's node list 'n\[01-03,07\],gpu1' "
                                         r"\(scontrol: fatal: Unable to process configuration file\); run this where "
                                         r"Slurm's configuration is found, as on the job's nodes \(or name it with "
                                         r"SLURM_CONF\)$"):
        job.host_names()
    assert job.to_dict()["hosts"] is None and job.to_dict()["nodelist"] == "n[01-03,07],gpu1"


def test_without_scontrol_a_slurm_node_list_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ProbeError, match=r"^the job's node list 'n\[1-2\]' is read by scontrol, which is not installed "
                                         r"here; install it with: apt-get install slurm-client"):
        hostnames("n[1-2]")


def _job(monkeypatch, **variables: str) -> None:
    for name in ("SLURM_JOB_ID", "SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE",
                 "SLURM_JOB_NODELIST", "PBS_NODEFILE", "PBS_JOBID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


def _predicted(capsys, *options: str) -> tuple[dict, str]:
    assert main(["predict", "lecture", "--op", "read", "--transfer-size", "1MiB", "--json", *options]) == 0
    out, err = capsys.readouterr()
    return json.loads(out)["workload"], err


def test_inside_a_job_predict_takes_its_nodes_and_ppn_and_says_from_where(capsys, monkeypatch):
    _job(monkeypatch)
    outside, said = _predicted(capsys)
    assert (outside["nodes"], outside["ppn"], said) == (10, 1, "")  # the lecture's ten clients, one process each
    _job(monkeypatch, SLURM_JOB_ID="42", SLURM_JOB_NUM_NODES="4", SLURM_TASKS_PER_NODE="2(x3),1")
    inside, said = _predicted(capsys)
    assert (inside["nodes"], inside["ppn"]) == (4, 2)
    assert said == ("iobound: Slurm job 42: nodes 4 from SLURM_JOB_NUM_NODES, ppn 2 from SLURM_TASKS_PER_NODE=2(x3),1, "
                    "the most on one node\n")
    given, said = _predicted(capsys, "--nodes", "2")
    assert (given["nodes"], given["ppn"]) == (2, 2)
    assert said == ("iobound: Slurm job 42: nodes 2 from --nodes, ppn 2 from SLURM_TASKS_PER_NODE=2(x3),1, the most "
                    "on one node\n")


def test_inside_a_job_plan_runs_on_its_nodes_and_processes_and_says_from_where(capsys, monkeypatch):
    _job(monkeypatch, SLURM_JOB_ID="42", SLURM_JOB_NUM_NODES="4", SLURM_TASKS_PER_NODE="2(x3),1")
    assert main(["plan", "lecture", "--benchmark", "ior", "--json"]) == 0
    out, err = capsys.readouterr()
    planned = json.loads(out)
    assert (planned["nodes"], planned["ppn"]) == (4, 2)
    assert err == ("iobound: Slurm job 42: nodes 4 from SLURM_JOB_NUM_NODES, ppn 2 from SLURM_TASKS_PER_NODE=2(x3),1, "
                   "the most on one node\n")


def test_inside_a_pbs_job_size_takes_its_shape_check_where_asked_and_a_bad_variable_is_one_line(tmp_path, capsys,
                                                                                               monkeypatch):
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("cn01\ncn02\n")
    _job(monkeypatch, PBS_NODEFILE=str(nodefile), PBS_JOBID="77")
    main(["check", "lecture", "lecture-results.csv", "--fail-on", "never", "--json"])
    assert capsys.readouterr().err == ""  # another job's results, as they state (test_job_environment)
    main(["check", "lecture", "lecture-results.csv", "--fail-on", "never", "--json", "--nodes", "job"])
    assert capsys.readouterr().err == "iobound: PBS job 77: nodes 2 from PBS_NODEFILE (--nodes job)\n"
    main(["size", "--clients", "16", "--client-nic", "100Gbit/s", "--target", "read=50GB/s", "--usable", "1PB", "--top",
          "1", "--json"])
    assert capsys.readouterr().err == "iobound: PBS job 77: ppn 1 from PBS_NODEFILE\n"
    _job(monkeypatch, SLURM_JOB_ID="5", SLURM_TASKS_PER_NODE="2(x3")
    assert main(["predict", "lecture", "--op", "read"]) == 2
    assert capsys.readouterr().err == ("iobound: error: SLURM_TASKS_PER_NODE: '2(x3' is not Slurm's tasks per node, "
                                       "e.g. 2(x3),1 (two tasks on each of three nodes, then one)\n")


# ---- a real Slurm in the lab ------------------------------------------------------------------------------------

# Three hosts on links of three rates: c3, the fastest, serves iperf3 to the other two, so each pair runs at its
# client's rate.
SPEC = ('servers = 0\nrate = "100 Mbit/s"\n[clients]\ncount = 3\n[hosts.c2]\nrate = "50 Mbit/s"\n'
        '[hosts.c3]\nrate = "200 Mbit/s"\n')
RATES = {"c1": 100e6, "c2": 50e6, "c3": 200e6}
# The roles a site's topology gives the job's nodes: the first two are clients, the last its server.
ROLES = ('[clients.edge]\ncount = 2\nnic = "100 Mbit/s"\n[networks.lan]\n[servers.core]\nnic = "200 Mbit/s"\n'
         '[devices.disk]\nbandwidth = "1 GB/s"\n[[links]]\nbetween = ["edge", "lan"]\n[[links]]\n'
         'between = ["lan", "core"]\n[[links]]\nbetween = ["core", "disk"]\n')


def _without_slurm() -> str | None:
    """Why the lab's Slurm cannot run here, or None."""
    lacking = lab_slurm.missing_tools()
    return _unavailable() or (f"{', '.join(lacking)} not installed ({lab_slurm.INSTALL})" if lacking else None)


def _srun(lab, *argv: str, wait: int = 10, timeout: float = 120) -> subprocess.CompletedProcess:
    """``srun`` on the lab's Slurm, failing after ``wait`` seconds where the nodes are not free, within its time
    limit."""
    return subprocess.run(lab_slurm.command(lab, "srun", f"--immediate={wait}", "--time=3", *argv),
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.slow
@pytest.mark.skipif(_without_slurm() is not None, reason=_without_slurm() or "")
class TestLabSlurm:
    """``iobound lab up --slurm`` over three hosts: a node in each, jobs across them, and what fails said in a line."""

    @pytest.fixture(scope="class")
    @classmethod
    def lab(cls, tmp_path_factory):
        root = tmp_path_factory.mktemp("slurm")
        (root / "lab.toml").write_text(SPEC)
        out, before = io.StringIO(), _system_slurm()
        try:
            with contextlib.redirect_stdout(out):
                assert main(["lab", "up", str(root / "lab.toml"), "--state-dir", str(root / "state"), "--slurm"]) == 0
            yield status(root / "state"), out.getvalue()
        finally:
            down(root / "state")
        _nothing_left(root / "state")
        assert _system_slurm() == before  # the machine's own Slurm and munge: not a file made, changed or removed
        # munge and the Slurm daemons ran in the lab's namespaces, with every file in its state directory
        assert not any(Path(f"/proc/{pid}/cmdline").read_bytes().find(str(root).encode()) >= 0
                       for pid in os.listdir("/proc") if pid.isdigit() and _alive(pid))

    def test_up_shows_the_slurm_and_how_to_run_a_job_on_it(self, lab):
        made, shown = lab
        assert made.slurm and made.healthy and made.to_dict()["slurm"] is True
        conf = lab_slurm.conf(made)
        assert conf.is_relative_to(made.state_dir) and f"SLURM_CONF={conf}" in shown
        assert (f"run a job on its Slurm: SLURM_CONF={conf} nsenter --net=/run/netns/iobl-sw srun -N 3 hostname"
                in shown)

    def test_srun_runs_a_task_on_each_host_by_its_own_name_and_address(self, lab):
        made, _ = lab
        done = _srun(made, "-N", "3", "--label", "ip", "-4", "-o", "address", "show", "dev", "eth0")
        assert done.returncode == 0, done.stderr
        seen = {line.split(":")[0].strip(): line.split()[4] for line in done.stdout.splitlines()}
        assert seen == {"0": "10.77.0.11/24", "1": "10.77.0.12/24", "2": "10.77.0.13/24"}
        names = _srun(made, "-N", "3", "--label", "hostname")
        assert sorted(names.stdout.split()) == ["0:", "1:", "2:", "c1", "c2", "c3"]

    def test_srun_probes_every_node_of_the_job_in_its_topologys_roles_at_its_shaped_rate_and_records_the_job(
            self, lab, tmp_path):
        made, _ = lab
        output, site = tmp_path / "cluster.json", tmp_path / "site.toml"
        site.write_text(ROLES)
        done = _srun(made, "-N", "3", sys.executable, "-m", "assess", "probe", "-o", str(output), "--no-memory",
                     "--streams", "1", "--runtime", "0.5", "--budget", "4", "--quiet", "cluster", "--topology", str(site))
        assert done.returncode == 0, done.stderr
        doc = json.loads(output.read_text())
        job = doc["job"]
        assert doc["format_version"] == "1.2" and job["scheduler"] == "slurm" and job["id"].isdigit()
        assert (job["nodelist"], job["hosts"]) == ("c[1-3]", {"value": ["c1", "c2", "c3"],
                                                               "source": "scontrol show hostnames SLURM_JOB_NODELIST"})
        assert (job["nodes"], job["ppn"]) == ({"value": 3, "source": "SLURM_JOB_NUM_NODES"},
                                              {"value": 1, "source": "SLURM_TASKS_PER_NODE"})
        rates = {(m["parameters"]["client"], m["name"].split(".")[-2]): m for m in doc["measurements"]
                 if ".iperf3." in m["name"]}
        assert set(rates) == {(client, direction) for client in ("c1-r0", "c2-r1") for direction in ("send", "receive")}
        for (client, _), m in rates.items():
            assert m["parameters"]["server"] == "c3-r2" and m["provenance"]["host"]["hostname"] == client[:2]
            assert (m["parameters"]["client_group"], m["parameters"]["server_group"]) == ("edge", "core")
            rate = min(RATES[client[:2]], RATES["c3"])  # what TCP carries over the slower of the two links
            assert rate * PAYLOAD * LOAD_MARGIN < m["summary"]["mean"] <= rate * 1460 / 1514 * 1.01, (client, m)
            assert "10.77.0.13" in " ".join(m["provenance"]["commands"][0])  # c3 by its address: lab names resolve not

    def test_mpi_that_sees_each_task_alone_is_one_line_saying_how_to_start_it(self, lab, tmp_path):
        made, _ = lab
        done = _srun(made, "-N", "2", "--mpi=none", sys.executable, "-m", "assess", "probe", "-o",
                     str(tmp_path / "alone.json"), "--no-memory", "cluster", "--servers", "1")
        assert done.returncode != 0 and not (tmp_path / "alone.json").exists()
        errors = [line for line in done.stderr.splitlines() if line.startswith("iobound:")]
        assert errors == ["iobound: error: srun started 2 tasks, but MPI sees each alone: start them with srun "
                          "--mpi=pmi2 (the mpich wheel speaks PMI-2), or with the MPI launcher the site's mpi4py was "
                          "built for"] * 2

    def test_a_darshan_review_on_slurm_workers_in_the_labs_nodes_gives_the_one_node_results(self, lab, tmp_path):
        """``review --darshan --dask slurm`` run where the lab's Slurm commands reach its controller: dask-jobqueue
        submits its workers as Slurm jobs, which run in the lab's hosts and reach the scheduler on the address this
        side has on the way to the controller; their results are the process pool's, and the jobs end with the
        review. Each job takes a whole node (its cores), and Dask is told a batch takes seconds, so that it asks for
        more than one."""
        pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed: pip install 'iobound[dask]'")
        from tests.test_darshan_review import LUSTRE, SAMPLES, by_path, tree

        made, _ = lab
        tree(tmp_path / "logs", SAMPLES, copies=-(-35 // len(SAMPLES)), limit=35)  # three batches of logs
        argv = ["review", "--darshan", str(tmp_path / "logs"), str(LUSTRE), "--json", "--fail-on", "never"]
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main([*argv, "--index", str(tmp_path / "pool.sqlite")]) == 0
        pool = json.loads(out.getvalue())
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]),
                   DASK_JOBQUEUE__SLURM__CORES=str(os.cpu_count() or 1),
                   DASK_DISTRIBUTED__SCHEDULER__DEFAULT_TASK_DURATIONS__JUDGE_BATCH="10s")
        done = subprocess.run(lab_slurm.command(made, sys.executable, "-m", "assess", *argv, "--index",
                                                str(tmp_path / "dask.sqlite"), "--dask", "slurm"),
                              capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        dask = json.loads(done.stdout)
        assert by_path(dask["jobs"]) == by_path(pool["jobs"]) and dask["centre"] == pool["centre"]
        assert dask["centre"]["judged_now"] == 35
        # each worker's job wrote its log where it was submitted: the worker in a lab host, the scheduler on the bridge
        workers = [(line.split("Start worker at:")[1].split()[0], path.name) for path in tmp_path.glob("slurm-*.out")
                   for line in path.read_text().splitlines() if "Start worker at:" in line]
        hosts = {address.split("//")[1].split(":")[0] for address, _ in workers}
        assert workers and hosts <= {h.address for h in made.hosts} and len(hosts) == len(workers), workers
        assert all(f"Registered to:      tcp://{lab_slurm.CONTROLLER_ADDRESS}:" in (tmp_path / name).read_text()
                   for _, name in workers)
        _idle(made)  # the workers' jobs ended with the review

    def test_a_darshan_review_whose_slurm_workers_slurm_would_not_run_is_one_line_and_never_waited_for(self, lab,
                                                                                                        tmp_path):
        pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed: pip install 'iobound[dask]'")
        from tests.test_darshan_review import LUSTRE, SAMPLES

        made, _ = lab
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]),
                   DASK_JOBQUEUE__SLURM__MEMORY="100TiB")  # more than any node of the lab has
        started = time.monotonic()
        done = subprocess.run(lab_slurm.command(made, sys.executable, "-m", "assess", "review", "--darshan",
                                                str(SAMPLES[0].parent), str(LUSTRE), "--index",
                                                str(tmp_path / "i.sqlite"), "--dask", "slurm"),
                              capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert done.returncode == 2 and time.monotonic() - started < 60
        assert done.stderr == ("iobound: error: Slurm would not run the Dask workers' job (allocation failure: "
                               "Requested node configuration is not available); set its cores, memory, queue or "
                               "account in Dask's jobqueue.slurm settings (~/.config/dask/jobqueue.yaml, or "
                               "DASK_JOBQUEUE__SLURM__MEMORY and the like)\n")

    def test_a_node_down_or_a_dead_controller_is_named_with_what_to_do_and_never_waited_for(self, lab):
        made, _ = lab
        _idle(made)  # the jobs before have ended on every node
        run = lab_slurm.command(made, "scontrol", "update", "nodename=c2", "state=down", "reason=iobound-test")
        subprocess.run(run, check=True, timeout=30, capture_output=True)
        try:
            (said,) = status(made.state_dir).missing
            resume = lab_slurm.shell(made, "scontrol update nodename=c2 state=resume")
            assert said == f"Slurm's node c2 is down (iobound-test): '{resume}' brings it back"
            refused = _srun(made, "-N", "3", "hostname", wait=2, timeout=60)
            assert refused.returncode != 0 and "Unable to allocate resources" in refused.stderr
        finally:
            resume = lab_slurm.command(made, "scontrol", "update", "nodename=c2", "state=resume")
            subprocess.run(resume, check=True, timeout=30, capture_output=True)
        assert status(made.state_dir).healthy
        os.kill(int((lab_slurm.folder(made) / "slurmctld.pid").read_text()), 9)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["lab", "status", "--state-dir", str(made.state_dir)]) == 1
        assert "missing: slurmctld in iobl-sw" in out.getvalue()
        dead = _srun(made, "-N", "1", "hostname", wait=2, timeout=60)
        assert dead.returncode != 0 and "Unable to contact slurm controller" in dead.stderr


@pytest.mark.slow
@pytest.mark.skipif(_without_slurm() is not None, reason=_without_slurm() or "")
def test_a_daemon_that_cannot_run_is_one_line_with_its_last_words_and_never_waited_for(tmp_path):
    """The controller's port is taken in the bridge's namespace before it starts: slurmctld ends at once, as a daemon
    a machine forbids does, and the error says so in a line, with the last line it logged."""
    made, taker = up(parse_spec(_spec(tmp_path)), tmp_path / "state"), None
    try:
        taker = subprocess.Popen(["nsenter", "--net=/run/netns/iobl-sw", sys.executable, "-c",
                                  "import socket, sys, time\ns = socket.create_server(('', 6817))\nprint(flush=True)\n"
                                  "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
        taker.stdout.readline()  # it listens
        started = time.monotonic()
        with pytest.raises(ProbeError, match=r"^the lab's slurmctld ended \(slurmctld\.log: .*fatal: .*Address already "
                                             r"in use\); where a machine forbids daemons or namespaces of their own, "
                                             r"run jobs on the site's Slurm instead of the lab's$"):
            lab_slurm.start(replace(made, slurm=True))
        assert time.monotonic() - started < 15
    finally:
        down(tmp_path / "state")  # the port's taker and munge too: they run in the lab's namespaces
        if taker is not None:
            taker.communicate(timeout=10)
    _nothing_left(tmp_path / "state")


def _idle(lab, within: float = 30) -> None:
    """Wait until sinfo shows every node of the lab idle."""
    deadline = time.monotonic() + within
    while True:
        shown = subprocess.run(lab_slurm.command(lab, "sinfo", "--noheader", "--Node", "--format=%T"),
                               capture_output=True, text=True, timeout=30).stdout.split()
        if shown == ["idle"] * len(lab.hosts) or time.monotonic() > deadline:
            assert shown == ["idle"] * len(lab.hosts)
            return
        time.sleep(0.2)


def _system_slurm() -> dict[str, tuple[int, int]]:
    """Each file of the machine's own Slurm and munge (configuration, keys, sockets, spool, logs): size and time."""
    folders = ("/etc/slurm", "/etc/munge", "/run/munge", "/var/lib/munge", "/var/log/munge", "/var/spool/slurmd",
               "/var/spool/slurmctld", "/var/log/slurm", "/run/slurm")
    return {str(p): (p.lstat().st_size, p.lstat().st_mtime_ns) for folder in folders for p in Path(folder).rglob("*")}


def _alive(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@needs_lab
def test_up_slurm_says_which_of_slurms_programs_are_missing_and_how_to_install_them(tmp_path, monkeypatch):
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("ip", "tc", "ssh", "ssh-keygen", "sshfs", "mount", "umount", "nsenter"):
        (tools / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(tools))  # the lab's tools, not Slurm's client commands
    with pytest.raises(ProbeError, match=r"^the lab's Slurm needs srun, scontrol, sinfo, not found here; install with: "
                                         r"apt-get install slurmctld slurmd slurm-client munge$"):
        up(parse_spec(_spec(tmp_path)), tmp_path / "state", slurm=True)
    assert not (tmp_path / "state").exists()


def _spec(folder: Path) -> Path:
    (folder / "lab.toml").write_text(SPEC)
    return folder / "lab.toml"
