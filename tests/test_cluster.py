"""Cluster probes under a real mpiexec on this machine: ranks on localhost as clients, servers and nodes."""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from probes.measure import iperf3
from probes.core.errors import InputError
from probes.measure.cluster import Roles, schedule
from tests.netns import free_ports
from tests.systems import links_toml
from topologies.load import load_topology

HOST = socket.gethostname()


@given(st.integers(1, 12), st.integers(1, 12))
def test_schedule_meets_every_pair_once_and_no_server_twice_in_a_round(clients, servers):
    rounds = schedule(clients, servers)
    pairs = [pair for r in rounds for pair in r]
    assert sorted(pairs) == [(c, s) for c in range(clients) for s in range(servers)]
    assert len(rounds) == max(clients, servers)
    for r in rounds:
        assert len({c for c, _ in r}) == len(r) == len({s for _, s in r})


def test_contention_sends_every_client_at_once():
    assert schedule(5, 2, contention=True) == [[(0, 0), (1, 1), (2, 0), (3, 1), (4, 0)]]


def test_ranks_stand_for_a_topologys_client_members_then_its_server_members():
    roles = Roles("site.toml", (("login", 1), ("compute", 2)), (("storage", 2),))
    assert roles.groups(5) == ["login", "compute", "compute", "storage", "storage"]
    with pytest.raises(InputError) as raised:
        roles.groups(3)
    assert str(raised.value) == ("site.toml: its client and server groups have 5 members (login 1, compute 2, "
                                 "storage 2), but 3 rank(s) run: start one rank per member (one per node)")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3")
def test_a_stream_whose_server_is_between_two_tests_waits_for_it_while_the_others_wait_too():
    """Why the cluster runs below hold on a loaded machine (three failed there on "Connection refused").

    With two streams, iperf3 before 3.16 runs two clients at once, one per server port. A server closes
    its listening socket after each test and opens a new one, later on a busy machine: the client that
    came in between was refused while the other ran its whole 1 s test, and that second used up the
    1 s a refused client may wait. Now a server on this host is seen to listen (in /proc) before the
    clients start, and only the time spent waiting, not testing, counts. Here one server comes 0.3 s late.
    """
    ports = free_ports(2)
    late = threading.Timer(0.3, subprocess.run, (["iperf3", "-s", "-1", "-p", str(ports[0]), "-B", "127.0.0.1"],),
                           {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "timeout": 20})
    with iperf3.serve(ports[1:], bind="127.0.0.1"):
        late.start()
        try:
            (probe,) = iperf3.iperf3_probes("127.0.0.1", port=ports[0], streams=(2,), directions=("send",))
            assert probe.once()["iperf3.send.p2"] > 1e8
        finally:
            late.join(20)


@functools.cache
def _mpiexec() -> str:
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH; skip if MPI cannot start here."""
    beside = Path(sys.executable).with_name("mpiexec")
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec: pip install 'iobound[cluster]' installs one (the mpich wheel)")
    check = subprocess.run([sys.executable, "-c", "from mpi4py import MPI"], capture_output=True, text=True, timeout=60)
    if check.returncode != 0:
        pytest.skip(f"mpi4py cannot load an MPI library: {check.stderr.strip().splitlines()[-1]}")
    return found


def cluster(ranks: int, output: Path, *options: str, port: int | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """``iobound probe`` on ``ranks`` ranks of this host, two iperf3 streams and the shortest runs."""
    argv = [_mpiexec(), "-n", str(ranks), sys.executable, "-m", "assess", "probe", "-o", str(output), "--streams", "2",
            "--port", str(port or free_ports(2 * ranks)[0]), "--runtime", "0.3", "--budget", "10", *options]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _network(doc: dict) -> dict[tuple[str, str], list[dict]]:
    pairs = defaultdict(list)
    for m in doc["measurements"]:
        if m["name"].startswith("net."):
            pairs[m["parameters"]["client"], m["parameters"]["server"]].append(m)
    return pairs


# Two client groups of one member each and a server group of two: ranks 0 and 1 are clients, 2 and 3 servers.
SITE = f"""\
[clients.login]
nic = "1 Gbit/s"
[clients.compute]
nic = {{ probe = "cluster.json", measurement = "net.{HOST}-r1.{HOST}-r2.iperf3.send.p2" }}
[networks.lan]
[servers.storage]
count = 2
nic = "10 Gbit/s"
[devices.disk]
count = 2
bandwidth = "1 GB/s"
""" + links_toml("login lan storage disk", "compute lan")


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """Four ranks in the roles of SITE (whose nic names the probe set not yet written); rank 0 alone probes this host's
    device (a small file)."""
    folder = tmp_path_factory.mktemp("cluster")
    disk = folder / "disk.img"
    disk.write_bytes(os.urandom(16 * 2**20))
    (folder / "site.toml").write_text(SITE)
    output, port = folder / "cluster.json", free_ports(8)[0]
    done = cluster(4, output, "--no-memory", "--device", str(disk), *_site(output), port=port)
    return done, output, port


def _site(output: Path) -> tuple[str, ...]:
    return "cluster", "--topology", str(output.with_name("site.toml"))


@pytest.mark.slow
def test_rank_0_writes_one_probe_set_with_the_node_measured_once(probed):
    done, output, _ = probed
    assert done.returncode == 0, done.stderr
    doc = json.loads(output.read_text())
    node = [m for m in doc["measurements"] if m["name"].startswith("node.")]
    assert {m["name"] for m in node} == {f"node.{HOST}.device.disk-img.randread.4k.iops",
                                         f"node.{HOST}.device.disk-img.read.1m.bandwidth"}
    assert {m["parameters"]["rank"] for m in node} == {0}
    assert {m["parameters"]["group"] for m in node} == {"login"}
    compute = load_topology(output.with_name("site.toml")).group("compute").capacities["nic"]
    sent = next(m for m in doc["measurements"] if m["name"] == f"net.{HOST}-r1.{HOST}-r2.iperf3.send.p2")
    assert sent["parameters"]["client_group"] == "compute" and compute.source.kind == "probe"
    least, greatest = (end.to(sent["unit"]).magnitude for end in compute.range)  # the 95 % interval of its mean
    assert least < sent["summary"]["mean"] < greatest
    assert all(m["summary"]["n"] >= 3 and m["complete"] for m in doc["measurements"])
    assert f"node.{HOST}.device.disk-img.read.1m.bandwidth" in done.stdout  # rank 0 printed the table once
    assert done.stdout.count("saved to") == 0 and done.stderr.count("saved to") == 1


@pytest.mark.slow
def test_every_client_measures_every_server_once_one_pair_per_server_a_round(probed):
    done, output, _ = probed
    pairs = _network(json.loads(output.read_text()))
    clients, servers = [f"{HOST}-r{r}" for r in (0, 1)], [f"{HOST}-r{r}" for r in (2, 3)]
    assert set(pairs) == {(c, s) for c in clients for s in servers}
    groups = {(m["parameters"]["client_group"], m["parameters"]["server_group"]) for ms in pairs.values() for m in ms}
    assert groups == {("login", "storage"), ("compute", "storage")}
    assert all(m["parameters"]["client_group"] == ("login" if client == clients[0] else "compute")
               for (client, _), ms in pairs.items() for m in ms)
    rounds = defaultdict(set)
    for (client, server), measurements in pairs.items():
        names = {m["name"].removeprefix(f"net.{client}.{server}.") for m in measurements}
        assert any(n.startswith("ping.") for n in names) and any(n.startswith("iperf3.") for n in names)
        assert all(m["summary"]["n"] >= 3 and not m["parameters"]["contention"] for m in measurements)
        assert {m["parameters"]["round"] for m in measurements} == {measurements[0]["parameters"]["round"]}
        rounds[measurements[0]["parameters"]["round"]].add((client, server))
    assert sorted(rounds) == [1, 2]
    for pairs_in_round in rounds.values():
        assert len({s for _, s in pairs_in_round}) == len({c for c, _ in pairs_in_round}) == 2


@pytest.mark.slow
def test_contention_sends_all_clients_to_one_server_at_once(tmp_path):
    done = cluster(3, tmp_path / "contention.json", "--no-memory", "cluster", "--servers", "1", "--contention")
    assert done.returncode == 0, done.stderr
    pairs = _network(json.loads((tmp_path / "contention.json").read_text()))
    assert set(pairs) == {(f"{HOST}-r0", f"{HOST}-r2"), (f"{HOST}-r1", f"{HOST}-r2")}
    for measurements in pairs.values():
        assert all(m["parameters"]["contention"] and m["parameters"]["round"] == 1 for m in measurements)
        assert all(m["parameters"]["pairs"] == 2 and m["summary"]["n"] >= 3 for m in measurements)


@pytest.mark.slow
def test_resume_measures_nothing_again(probed, tmp_path):
    _, output, port = probed
    copy = tmp_path / "copy.json"
    copy.write_bytes(output.read_bytes())
    disk = output.with_name("disk.img")
    done = cluster(4, copy, "--no-memory", "--device", str(disk), "--resume", *_site(output), port=port)
    assert done.returncode == 0, done.stderr
    assert json.loads(copy.read_text()) == json.loads(output.read_text())
    assert done.stderr.count("(from the file, not run again)") == 2 + 4 * 5


@pytest.mark.slow
def test_resume_with_other_commands_stops_every_rank_before_measuring(probed, tmp_path):
    """--runtime 0.5 changes every command: resuming would overwrite figures measured with 0.3 s runs."""
    _, output, port = probed
    copy = tmp_path / "copy.json"
    copy.write_bytes(output.read_bytes())
    done = cluster(4, copy, "--runtime", "0.5", "--no-memory", "--device", str(output.with_name("disk.img")),
                   "--resume", *_site(output), port=port)  # the later --runtime wins
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("measured with other commands or on another host; measuring again would lose them") == 4
    assert copy.read_bytes() == output.read_bytes()


@pytest.mark.slow
def test_an_existing_probe_set_stops_every_rank_and_is_left_alone(probed):
    _, output, _ = probed
    before = output.read_bytes()
    done = cluster(3, output, "--no-memory", "cluster", "--servers", "1", timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("exists already; --resume continues it, --force replaces it") == 3
    assert output.read_bytes() == before


@pytest.mark.slow
def test_a_busy_server_port_stops_every_rank_naming_the_server(tmp_path):
    port = free_ports(4)[0]
    with socket.socket() as taken:
        taken.bind(("", port + 2))
        taken.listen()
        done = cluster(4, tmp_path / "busy.json", "--no-memory", "cluster", "--servers", "2", port=port, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count(f"rank 3 on {HOST}: The iperf3 server for port {port + 2}") == 4
    assert not (tmp_path / "busy.json").exists()


@pytest.mark.slow
def test_servers_must_leave_a_client(tmp_path):
    done = cluster(2, tmp_path / "none.json", "--no-memory", "cluster", "--servers", "2", timeout=60)
    assert done.returncode == 2 and done.stderr.count("2 server rank(s) leave no client among 2 rank(s)") == 2
    alone = subprocess.run([sys.executable, "-m", "assess", "probe", "-o", str(tmp_path / "none.json"), "--no-memory",
                            "cluster", "--servers", "1"], capture_output=True, text=True, timeout=60)
    assert alone.returncode == 2 and "among 1 rank(s) (start it with mpiexec -n N or srun)" in alone.stderr
    assert not (tmp_path / "none.json").exists()


@pytest.mark.slow
def test_a_topology_whose_members_are_not_the_ranks_or_that_has_no_servers_is_one_line(tmp_path):
    def alone(*options: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "assess", "probe", "-o", str(tmp_path / "none.json"), "--no-memory",
                               "cluster", *options], capture_output=True, text=True, timeout=60)

    lecture = alone("--topology", "lecture")
    assert lecture.returncode == 2 and lecture.stderr.strip().endswith(
        "lecture.toml: its client and server groups have 15 members (compute 10, storage 5), but 1 rank(s) run: start "
        "one rank per member (one per node)"), lecture.stderr
    (tmp_path / "clients.toml").write_text("[clients.compute]\ncount = 2\n")
    clients = alone("--topology", str(tmp_path / "clients.toml"))
    assert clients.returncode == 2 and clients.stderr == (
        f"iobound: error: {tmp_path / 'clients.toml'}: has no servers group: a cluster probe's clients probe its "
        "servers, e.g. [clients.compute] count = 8 and [servers.storage] count = 2\n")
    both = alone("--servers", "1", "--topology", "lecture")
    assert both.returncode == 2 and "argument --topology: not allowed with argument --servers" in both.stderr
    assert not (tmp_path / "none.json").exists()
