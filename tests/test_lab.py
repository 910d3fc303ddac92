"""`iobound lab`: spec files, state directories down may and may not touch, and a real lab probed and judged end to end.

The lab tests need root, FUSE and the tools (apt-get install openssh-server sshfs fio iperf3
iputils-ping iproute2 stress-ng); they skip, saying which is missing, elsewhere. Only one lab can be up on
a machine (its namespaces are named iobl-*): if one from outside these tests is up, they skip
saying so, and leave it alone. Each test makes and removes its own state directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

import probes.lab
from probes.measure import ping
from probes.readers import fio as fio_output, ping as ping_output
from probes.core.document import dumps, envelope
from probes.core.outputs import write_replacing
from probes.core.errors import InputError, ProbeError
from probes.lab import (LOCK, PREFIX, STOPPED, SUBNET, Backing, Lab, Role, Service, Settings, Spec, down, leftovers,
                        parse_spec, probe, service, state, status, up)
from probes.lab.spec import groups, hosts
from probes.lab import network, sshd_namespace, sweep
from probes.measure.mountinfo import Mount, holding, mounts, unescape
from probes.measure.tool import install_hint, run_tool
from probes.core.units import Metric, parse_quantity
from probes.core.workload import Operation, Workload
from models.predict import Model
from topologies.described.lab import lab_topology
from topologies.load import load_topology
from topologies.save import topology_document
from assess.cli import main

RATE = "100 Mbit/s"  # low enough that ssh's encryption keeps up with two clients at once on two busy cores
BITS = 100e6
# TCP over Ethernet carries 1448 of every 1514 bytes tbf counts (Ethernet 14, IPv4 20, TCP 20 and its
# timestamps 12 around 1448 of payload): iperf3 sees about 0.956 of the rate, 95.6 Mbit/s here.
PAYLOAD = 1448 / 1514
# What a busy machine takes off that: tbf's bucket holds 5 ms of traffic (64 KiB), and whatever time the
# sender or receiver is not scheduled beyond it is lost to the link. A 2 s test lost 3 % here with
# stress-ng on one or both cores, and 7 % in a loaded full run (89.05 Mbit/s, issue 19); 15 % is twice
# that, and still far from what a link shaped wrongly gives (an unshaped veth carries gigabits; bits and
# bytes mixed up give 8x or 1/8 of the rate).
LOAD_MARGIN = 0.85
SPEC = Spec(1, 1, Settings(rate=parse_quantity(RATE, Metric.BANDWIDTH, what="rate")))


def _outside_lab() -> list[str]:
    """The namespaces of a lab these tests did not make."""
    if shutil.which("ip") is None:
        return []
    return [line.split()[0] for line in run_tool(["ip", "netns", "list"], timeout=10).stdout.splitlines()
            if line.startswith(PREFIX)]


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the lab makes namespaces and mounts: it needs root"
    tools = ("ip", "tc", "ssh", "ssh-keygen", "sshfs", "nsenter", "mkfs.ext4", "fio", "iperf3", "ping", "stress-ng")
    missing = [t for t in tools if shutil.which(t) is None] + ([] if service.sshd_path(required=False) else ["sshd"])
    if missing:
        return f"{', '.join(missing)} not installed ({install_hint(missing)})"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse: the kernel has no FUSE for sshfs"
    outside = _outside_lab()
    return f"a lab from outside these tests is up ({', '.join(outside)}); they leave it alone" if outside else None


_WITHOUT_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the lab's commands need root")
_WITHOUT_LAB = pytest.mark.skipif(_unavailable() is not None, reason=_unavailable() or "")


def needs_root(test):
    """A test of a lab command as root: slow (`pytest -m "not slow"` leaves it out), skipped without root."""
    return pytest.mark.slow(_WITHOUT_ROOT(test))


def needs_lab(test):
    """A test that brings a lab up: slow, skipped where a lab cannot come up here, saying why."""
    return pytest.mark.slow(_WITHOUT_LAB(test))


def _spec_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lab.toml"
    path.write_text(text)
    return path


def _namespaces() -> str:
    return run_tool(["ip", "netns", "list"], timeout=10).stdout


# ---- spec files -------------------------------------------------------------------------------


def _q(text: str, metric: Metric = Metric.BANDWIDTH):
    return parse_quantity(text, metric, what="a test's figure")


def _settings(spec: Spec) -> dict[str, tuple]:
    """Each host's rate (bit/s), delay (s), backing and size (B), by name."""
    return {h.name: (h.rate.m_as("bit/s"), h.delay and h.delay.m_as("s"), h.backing, h.size and h.size.m_as("B"))
            for h in hosts(spec)}


def test_a_spec_file_gives_its_counts_rate_delay_and_store(tmp_path):
    spec = parse_spec(_spec_file(tmp_path, 'clients = 3\nservers = 2\nrate = "1 Gbit/s"\ndelay = "0.5 ms"\n'
                                           'backing = "file"\nsize = "256 MiB"\n'))
    assert (spec.clients, spec.servers) == (3, 2)
    assert _settings(spec) == {"c1": (1e9, 5e-4, None, None), "c2": (1e9, 5e-4, None, None),
                               "c3": (1e9, 5e-4, None, None), "s1": (1e9, 5e-4, Backing.FILE, 2**28),
                               "s2": (1e9, 5e-4, Backing.FILE, 2**28)}
    defaults = parse_spec(_spec_file(tmp_path, 'clients = 1\nservers = 1\nrate = "10 GbE"\n'))
    assert _settings(defaults)["s1"] == (1e10, None, Backing.TMPFS, 2**30)


def test_a_spec_states_settings_per_role_and_per_host_the_narrowest_winning(tmp_path):
    spec = parse_spec(_spec_file(tmp_path, 'delay = "1 ms"\nsize = "64 MiB"\n'
                                           '[clients]\ncount = 3\nrate = "500 Mbit/s"\n'
                                           '[servers]\ncount = 2\nrate = "1 Gbit/s"\ndelay = "2 ms"\n'
                                           '[hosts.c2]\nrate = "100 Mbit/s"\n[hosts.s2]\nbacking = "file"\n'))
    assert _settings(spec) == {"c1": (5e8, 1e-3, None, None), "c2": (1e8, 1e-3, None, None),
                               "c3": (5e8, 1e-3, None, None), "s1": (1e9, 2e-3, Backing.TMPFS, 2**26),
                               "s2": (1e9, 2e-3, Backing.FILE, 2**26)}
    assert [(g.name, [h.name for h in g.hosts], g.store) for g in groups(spec)] == [
        ("lab-clients", ["c1", "c3"], "lab-clients-store"), ("lab-c2", ["c2"], "lab-c2-store"),
        ("lab-servers", ["s1"], "lab-stores"), ("lab-s2", ["s2"], "lab-s2-store")]
    client_only = parse_spec(_spec_file(tmp_path, 'clients = 2\nservers = 0\nrate = "1 Gbit/s"\n'))
    assert [h.name for h in hosts(client_only)] == ["c1", "c2"] and len(groups(client_only)) == 1


@settings(max_examples=50, deadline=None)
@given(clients=st.integers(1, 50), servers=st.integers(0, 50), mbit=st.integers(1, 100_000),
       delay=st.none() | st.integers(1, 10_000), backing=st.sampled_from(Backing), mib=st.integers(16, 1 << 20),
       role=st.none() | st.integers(1, 100_000), host=st.none() | st.integers(1, 100_000))
def test_a_spec_written_as_its_file_reads_back_the_same(tmp_path_factory, clients, servers, mbit, delay, backing, mib,
                                                         role, host):
    common = Settings(_q(f"{mbit} Mbit/s"), None if delay is None else _q(f"{delay} µs", Metric.LATENCY), backing,
                      _q(f"{mib} MiB", Metric.SIZE))
    roles = {} if role is None else {Role.SERVER if servers else Role.CLIENT: Settings(rate=_q(f"{role} Mbit/s"))}
    overrides = {} if host is None else {"c1": Settings(_q(f"{host} Mbit/s"), _q(f"{host} µs", Metric.LATENCY))}
    spec = Spec(clients, servers, common, roles, overrides)
    path = tmp_path_factory.mktemp("spec") / "lab.toml"
    path.write_text(tomli_w.dumps(spec.to_dict()))
    assert parse_spec(path) == spec


@pytest.mark.parametrize("text, key, says", [
    ('servers = 2\nrate = "1 Gbit/s"\n', "clients", "missing"),
    ('clients = 0\nservers = 2\nrate = "1 Gbit/s"\n', "clients", "from 1 to 50. Got 0"),
    ('clients = "3"\nservers = 2\nrate = "1 Gbit/s"\n', "clients", "from 1 to 50. Got '3'"),
    ('clients = 3\nservers = 51\nrate = "1 Gbit/s"\n', "servers", "from 0 to 50. Got 51"),
    ('clients = 3\nservers = -1\nrate = "1 Gbit/s"\n', "servers", "from 0 to 50. Got -1"),
    ('clients = 3\nservers = 2\nrate = 1000\n', "rate", "must have a unit"),
    ('clients = 3\nservers = 2\nrate = "1 GiB"\n', "rate", "must be a bandwidth"),
    ('clients = 3\nservers = 2\nrate = "500 kbit/s"\n', "rate", "at least 1 Mbit/s"),
    ('clients = 3\nservers = 2\nrate = "1 Gbit/s"\ndelay = "1 MiB"\n', "delay", "must be a latency"),
    ('clients = 3\nservers = 2\nrate = "1 Gbit/s"\nbacking = "nfs"\n', "backing", "\"tmpfs\" or \"file\""),
    ('clients = 3\nservers = 2\nrate = "1 Gbit/s"\nsize = "1 MiB"\n', "size", "at least 16 MiB"),
    ('clients = 3\nservers = 2\nrate = "1 Gbit/s"\nswitches = 1\n', "switches", "unknown key"),
    ('servers = 1\n[clients]\nrate = "1 Gbit/s"\n', "clients.count", "missing"),
    ('servers = 1\nrate = "1 Gbit/s"\n[clients]\ncount = 1\nbacking = "file"\n', "clients.backing",
     "a client has no store"),
    ('clients = 1\nrate = "1 Gbit/s"\n[servers]\ncount = 1\nrate = "10 kbit/s"\n', "servers.rate",
     "at least 1 Mbit/s"),
    ('clients = 1\nservers = 1\n[servers]\n', "", "Cannot overwrite a value"),
    ('clients = 2\nservers = 1\nrate = "1 Gbit/s"\n[hosts.s2]\nrate = "1 Gbit/s"\n', "hosts.s2",
     "no such host; this lab's hosts are c1, c2, s1"),
    ('clients = 1\nservers = 1\nrate = "1 Gbit/s"\n[hosts.s1]\ncount = 2\n', "hosts.s1.count",
     "unknown key; [hosts.s1] has rate, delay, backing, size"),
    ('clients = 1\nservers = 1\nrate = "1 Gbit/s"\n[hosts.c1]\nsize = "1 GiB"\n', "hosts.c1.size",
     "a client has no store"),
    ('clients = 2\n[servers]\ncount = 1\nrate = "1 Gbit/s"\n[hosts.c1]\nrate = "1 Gbit/s"\n', "rate",
     "missing for c2"),
])
def test_a_bad_spec_file_is_refused_naming_the_file_and_key(tmp_path, text, key, says):
    path = _spec_file(tmp_path, text)
    with pytest.raises(InputError) as caught:
        parse_spec(path)
    assert str(caught.value).startswith(f"{path}: {key}: " if key else f"{path}: ") and says in str(caught.value)


def test_a_spec_that_is_no_toml_or_no_file_is_refused_by_name(tmp_path):
    path = _spec_file(tmp_path, "clients = \n")
    with pytest.raises(InputError, match=f"^{path}: not valid TOML"):
        parse_spec(path)
    with pytest.raises(InputError, match="missing.toml: no such file"):
        parse_spec(tmp_path / "missing.toml")


@pytest.mark.parametrize("netem, rtt", [(True, (1.5, 2.5)), (False, None)])
def test_the_topology_of_a_lab_has_what_tcp_carries_the_file_service_and_the_rtt_netem_adds(tmp_path, netem, rtt):
    spec = Spec(3, 2, Settings(delay=_q("1 ms", Metric.LATENCY)),
                {Role.CLIENT: Settings(rate=_q("500 Mbit/s"), delay=_q("0.5 ms", Metric.LATENCY)),
                 Role.SERVER: Settings(rate=_q("1 Gbit/s"))},
                {"c3": Settings(delay=_q("1.5 ms", Metric.LATENCY)), "s2": Settings(backing=Backing.FILE)})
    served = Service("s1", 3, 1.0, (300e6, 400e6, 350e6))
    made = Lab(spec, tmp_path / "state", netem, True, (), "aes128-gcm@openssh.com", served)
    path = tmp_path / "lab-topology.toml"
    path.write_text(tomli_w.dumps(topology_document(lab_topology(made))))
    topology = load_topology(path)
    assert [(g.name, g.count) for g in topology.groups] == [
        ("lab-clients", 2), ("lab-c3", 1), ("lab-bridge", 1), ("lab-servers", 1), ("lab-s2", 1), ("lab-stores", 1),
        ("lab-s2-store", 1)]
    nic = topology.group("lab-clients").capacity("nic")  # TCP's payload: 1448 to 1460 of every 1514 bytes
    assert [end.m_as("bit/s") for end in nic.range] == pytest.approx([5e8 * 1448 / 1514, 5e8 * 1460 / 1514])
    assert nic.source.kind == "assumption" and "tc tbf rate of 500 Mbit/s" in nic.source.note
    assert topology.group("lab-s2").capacity("nic").value.m_as("bit/s") == pytest.approx(1e9 * 1460 / 1514)
    service = topology.group("lab-servers").capacity("bandwidth")  # the two servers share the machine's CPUs
    assert [end.m_as("B/s") for end in service.range] == pytest.approx([150e6, 200e6])
    assert service.source.kind == "measured" and "aes128-gcm@openssh.com" in service.source.note
    assert topology.group("lab-s2").capacity("bandwidth") == service
    assert topology.group("lab-s2-store").description.startswith("ext4 image on a loop device")
    found = topology.group("lab-bridge").capacity("rtt")  # a client's delay and a server's: 0.5 + 1 to 1.5 + 1 ms
    assert ([end.m_as("ms") for end in found.range] if found else None) == (pytest.approx(list(rtt)) if rtt else None)
    ceiling = Model(topology).ceiling(Workload(Operation.READ, _q("1 MiB", Metric.SIZE)), ("lab-clients",))
    assert ceiling.value.m_as("bit/s") == pytest.approx(2 * 5e8 * 1460 / 1514)
    assert ceiling.binding_layers == ("client NICs",)
    alone = Lab(Spec(2, 0, Settings(rate=_q("1 Gbit/s"))), tmp_path / "state", netem, True, ())
    with pytest.raises(InputError, match="a lab without servers has no storage, so no topology"):
        lab_topology(alone)


def test_what_lab_probe_measured_binds_as_stated_never_as_assumed(tmp_path):
    """The topology lab probe writes links each NIC and the file service it measured to its probe set: a ceiling they
    bind names them without "[assumed]" (their ranges are the measurements' intervals)."""
    from probes.core.host import this_host
    from probes.core.measurement import Measurement, Provenance
    from probes.measure.probeset import document
    from topologies.described.lab import save_probed

    spec = Spec(1, 1, Settings(), {Role.CLIENT: Settings(rate=_q("1 Gbit/s")), Role.SERVER: Settings(rate=_q("2 Gbit/s"))},
                {})
    made = Lab(spec, tmp_path / "state", False, True, (), None, Service("s1", 1, 1.0, (500e6, 600e6, 550e6)))
    provenance = Provenance("iperf3", "3.16", (("iperf3",),), this_host(), "2026-11-28T08:00:00Z", 9.0)
    figures = {"lab-clients.iperf3.send.p1": 115e6, "lab-clients.iperf3.receive.p1": 116e6,
               "lab-servers.iperf3.send.p1": 232e6, "lab-servers.iperf3.receive.p1": 231e6,
               "lab-servers.sshfs.read": 40e6}  # the file service short of the links: it stands for the servers' reads
    measurements = [Measurement(name, name, Metric.BANDWIDTH, "B/s", (v * 0.99, v, v * 1.01, v * 1.005), provenance)
                    for name, v in figures.items()]
    (tmp_path / "probed.json").write_text(json.dumps(document(measurements)))
    path, _ = save_probed(made, tmp_path / "probed.toml", "probed.json", {m.name: m.value.m_as("B/s") for m in measurements},
                          header="a probed lab")
    model = Model(load_topology(path))
    read = model.ceiling(Workload(Operation.READ, _q("1 MiB", Metric.SIZE)))
    write = model.ceiling(Workload(Operation.WRITE, _q("1 MiB", Metric.SIZE)))
    assert read.marked(read.binding) == "lab-servers.bandwidth"  # its read_bandwidth, of the probe set
    assert write.marked(write.binding) == "lab-clients.nic"  # its write_nic
    assert read.assumed == write.assumed == ()


# ---- /proc/self/mountinfo ---------------------------------------------------------------------


def test_mountinfo_lines_are_read_with_their_escapes_undone(tmp_path):
    path = tmp_path / "mountinfo"
    path.write_text("36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 shared:2 - ext3 /dev/root rw\n"
                    "37 36 0:45 / /mnt/with\\040space/in rw - tmpfs my\\011tmpfs rw,size=64k\n")
    assert mounts(path) == [Mount(os.makedev(98, 0), Path("/mnt/with space"), "ext3", "/dev/root"),
                            Mount(os.makedev(0, 45), Path("/mnt/with space/in"), "tmpfs", "my\ttmpfs")]


@given(st.text(alphabet=" \t\n\\abc/é", max_size=30))
def test_unescape_undoes_the_kernels_octal_escapes(text):
    escaped = "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in text)
    assert unescape(escaped) == text


def test_the_mount_holding_a_path_is_the_deepest_above_it():
    assert holding("/proc/self/status").point == Path("/proc") and holding("/proc/1").fstype == "proc"
    assert holding("/").point == Path("/")


# ---- state directories: which are the lab's ------------------------------------------------------


def test_a_state_directory_sshd_and_sshfs_cannot_quote_is_refused(tmp_path):
    with pytest.raises(InputError, match="letters, digits"):
        up(SPEC, tmp_path / "a,b")


@pytest.mark.parametrize("path", ["/", "/usr", "/usr/local/lab", "/sys", "/proc/1", "/dev", "/etc/lab", "/run",
                                  "/tmp", "/home", "/run/netns/lab", "/boot/lab"])
def test_system_directories_are_never_a_labs_state_directory(path):
    for command in (partial(up, SPEC), status, down, leftovers):
        with pytest.raises(InputError, match="is a system directory"):
            command(path)


def test_a_symlinked_state_directory_is_taken_as_its_real_path(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert state.resolve(tmp_path / "link" / "lab") == (tmp_path / "real" / "lab").resolve()


@pytest.mark.parametrize("command", [partial(up, SPEC), status, down, leftovers, partial(probe, None, None)])
def test_every_lab_command_says_it_needs_root(tmp_path, monkeypatch, command):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ProbeError, match="^iobound lab needs root"):
        command(tmp_path / "state")
    assert not (tmp_path / "state").exists()


def _lab_state(root: Path, objects: list, version: str = "1.0", drop: str | None = None) -> Path:
    """A state directory as up makes it, with a document recording ``objects``."""
    state.make(root)
    body = {"spec": SPEC.to_dict(), "netem": False, "complete": True, "objects": objects}
    body.pop(drop, None)
    write_replacing(root / "state.json", dumps(envelope("lab-state", version, body)))
    return root


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


@needs_lab
@pytest.mark.parametrize("make, found", [
    (lambda d: (d.mkdir(), (d / "state.json").write_text("{}"), (d / "precious.txt").write_text("precious")),
     "its state.json is no lab state (expected an iobound/lab-state document. Got None instead.)"),
    (lambda d: (d.mkdir(), (d / "precious.txt").write_text("precious")), "it holds precious.txt and no state.json"),
    (lambda d: d.write_text("precious"), "it is a file"),
    (lambda d: (_lab_state(d, []), d.chmod(0o755)), "it holds a lab's state.json but belongs to uid 0 with mode 755"),
])
def test_down_and_status_refuse_a_directory_up_did_not_make_saying_what_they_found(tmp_path, make, found):
    target = tmp_path / "v"
    make(target)
    before = _files(target) if target.is_dir() else target.read_text()
    for command in (down, status):
        with pytest.raises(InputError) as caught:
            command(target)
        assert str(caught.value) == (f"{target}: {found}: not a lab's state directory (up makes it private to root "
                                     "and writes state.json there first); it was left as it is")
    assert (_files(target) if target.is_dir() else target.read_text()) == before
    with pytest.raises(InputError, match=f"exists already \\(a {'directory' if target.is_dir() else 'file'}\\)"):
        up(SPEC, target)


@needs_root
def test_a_lab_command_waits_for_another_and_then_says_it_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(state, "LOCK_WAIT", 0.2)
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        for command in (partial(up, SPEC), status, down, leftovers):
            with pytest.raises(ProbeError, match=f"another iobound lab command is running \\(it holds {LOCK}\\)"):
                command(tmp_path / "state")
    finally:
        os.close(fd)
    assert not (tmp_path / "state").exists()


@needs_lab
def test_down_trusts_only_the_labs_own_entries_and_folders(tmp_path):
    """Recorded namespaces without the prefix, a mount beside the lab's folders, a process naming the state: kept."""
    root = _lab_state(tmp_path / "lab", [{"kind": "namespace", "name": "rvwvictim"},
                                         {"kind": "mount", "path": "/"}, {"kind": "namespace"}])
    fake = root / "hosts" / "sshd"  # the reviewer's fake sshd, named after the state directory
    shutil.copy(shutil.which("sleep"), fake)
    sleeper = subprocess.Popen([str(fake), "300"])
    beside, store = root / "data", root / "store" / "s1"
    try:
        for point in (beside, store):
            point.mkdir()
            run_tool(["mount", "-t", "tmpfs", "-o", "size=1m", f"{PREFIX}test", point], timeout=10)
        with pytest.raises(ProbeError, match=f"^{beside} is still mounted in {root}; the state is kept"):
            down(root)
        assert {m.point for m in mounts()} >= {beside} and store not in {m.point for m in mounts()}
        run_tool(["umount", beside], timeout=10)
        done = down(root)
        assert done.removed == (f"state directory {root}",) and not root.exists()
        assert done.notes == ("recorded {'kind': 'namespace', 'name': 'rvwvictim'} (not a namespace named iobl-...)",
                              "recorded {'kind': 'mount', 'path': '/'} (not a namespace named iobl-...)",
                              "recorded {'kind': 'namespace'} (not a namespace named iobl-...)")
        assert sleeper.poll() is None and tmp_path.is_dir()
    finally:
        sleeper.kill()
        sleeper.wait()
        for point in (beside, store):
            if point in {m.point for m in mounts()}:
                run_tool(["umount", point], timeout=10)


@needs_lab
@pytest.mark.parametrize("version, drop, says", [
    ("0.9", None, "the state of another iobound version (version '0.9' of iobound/lab-state cannot be read"),
    ("1.0", "objects", "a state that cannot be read in full (objects: missing)"),
])
def test_a_stale_or_damaged_state_is_named_and_down_removes_it(tmp_path, version, drop, says):
    root = _lab_state(tmp_path / "lab", [], version, drop)
    with pytest.raises(InputError) as caught:
        status(root)
    assert str(caught.value).startswith(f"{root}/state.json: {says}")
    assert str(caught.value).endswith(f"; 'iobound lab down --state-dir {root}' removes it")
    done = down(root)
    assert done.removed == (f"state directory {root}",) and not root.exists()
    assert done.notes[0].startswith(f"{root} holds {says}") and "and the mounts in its folders" in done.notes[0]


@needs_lab
def test_down_removes_the_empty_directory_of_an_up_killed_before_it_wrote_its_state(tmp_path):
    (tmp_path / "lab").mkdir(mode=0o700)
    done = down(tmp_path / "lab")
    assert done.removed == (f"empty state directory {tmp_path / 'lab'} (of an up killed before it wrote its state)",)
    assert done.notes[0].startswith(f"no lab state in {tmp_path / 'lab'}: swept the namespaces named iobl-*")


def test_the_sshd_helper_says_which_step_failed_with_its_errno(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("")
    for netns, says in ((tmp_path / "none", f"cannot open {tmp_path / 'none'}: No such file or directory (errno 2 "
                                            "ENOENT)"),
                        (plain, f"cannot join the network namespace {plain}: Invalid argument (errno 22 EINVAL)")):
        done = subprocess.run([sys.executable, "-I", sshd_namespace.__file__, "--netns", str(netns), "--run",
                               str(tmp_path), "--", "/bin/true"], capture_output=True, text=True, timeout=30, check=False)
        assert (done.returncode, done.stderr) == (1, f"sshd_namespace: {says}\n")


# ---- a lab built, killed, and removed ---------------------------------------------------------


@needs_lab
def test_up_says_which_tools_are_missing_and_how_to_install_them(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH (sshd is also looked for in /usr/sbin)
    with pytest.raises(ProbeError, match=r"needs ip, tc, ssh, ssh-keygen, sshfs, mount, umount, nsenter, fio, "
                                         r"not found here; install with: apt-get install iproute2 openssh-client "
                                         r"sshfs mount util-linux fio$"):
        up(SPEC, tmp_path / "state")
    assert not (tmp_path / "state").exists()


def _nothing_left(state_dir: Path) -> None:
    """No namespace, mount, process or loop device of a lab, and no state directory."""
    assert leftovers(state_dir) == []
    assert not state_dir.exists()
    assert PREFIX not in _namespaces()
    mounts_now = Path("/proc/self/mountinfo").read_text()
    assert str(state_dir) not in mounts_now and f" {PREFIX}" not in mounts_now
    loops = [p.read_text() for p in Path("/sys/block").glob("loop*/loop/backing_file")]
    assert not any(str(state_dir) in backing for backing in loops)  # leftovers says so too: this is its oracle


@needs_lab
def test_an_up_killed_midway_is_removed_by_down(tmp_path):
    spec = _spec_file(tmp_path, f'clients = 1\nservers = 2\nrate = "{RATE}"\nbacking = "file"\nsize = "64 MiB"\n')
    root = tmp_path / "state"
    code = "import sys; from probes.lab import parse_spec, up; up(parse_spec(sys.argv[1]), sys.argv[2])"
    proc = subprocess.Popen([sys.executable, "-c", code, str(spec), str(root)])
    try:
        deadline = time.monotonic() + 60
        # killed once the first sshfs mount point is made: namespaces, ext4 stores and sshd exist, sshfs is connecting
        while not (root / "mnt" / "c1").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "up ended before it was killed"
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    made = leftovers(root)
    assert f"namespace {PREFIX}s2 (of the lab in {root})" in made and any(m.startswith("mount ") for m in made)
    done = down(root)
    assert {f"namespace {PREFIX}{host}" for host in ("sw", "c1", "s1", "s2")} <= set(done.removed)
    assert any(r.startswith("ext4 mount") for r in done.removed)
    assert any(r.startswith("process ") and f"(sshd) in {PREFIX}s" in r for r in done.removed)
    assert STOPPED in done.notes
    _nothing_left(root)


@needs_lab
def test_up_fails_naming_what_is_missing_and_removes_what_it_made(tmp_path, monkeypatch):
    monkeypatch.setattr(service, "missing", lambda lab: [f"sshd of {lab.servers[0].name}"])
    with pytest.raises(ProbeError, match="^the lab came up without sshd of s1; what up made was removed$"):
        up(SPEC, tmp_path / "state")
    _nothing_left(tmp_path / "state")


@needs_lab
def test_an_up_that_finds_a_namespace_taken_removes_only_what_it_made(tmp_path, monkeypatch):
    """Two racing ups: the second finds iobl-c1 made meanwhile (here: by the test); it must not remove it."""
    monkeypatch.setattr(probes.lab, "_leftovers", lambda root: [])  # as if made after up looked
    run_tool(["ip", "netns", "add", f"{PREFIX}c1"], timeout=10)
    try:
        with pytest.raises(ProbeError, match=f"ip netns add {PREFIX}c1 exited with status \\d+(?s:.*)File exists"):
            up(SPEC, tmp_path / "state")
        assert [line.split()[0] for line in _namespaces().splitlines()] == [f"{PREFIX}c1"]
        assert not (tmp_path / "state").exists()
    finally:
        run_tool(["ip", "netns", "delete", f"{PREFIX}c1"], timeout=10)
    _nothing_left(tmp_path / "state")


def _cli(capsys, *argv):
    status_ = main(["lab", *argv])
    out, err = capsys.readouterr()
    return status_, out, err


@needs_lab
def test_the_command_builds_shows_and_removes_a_lab_under_run(tmp_path, capsys):
    spec = _spec_file(tmp_path, f'clients = 2\nservers = 1\nrate = "{RATE}"\ndelay = "1 ms"\nsize = "64 MiB"\n')
    root = Path(f"/run/iobound-lab-test-{os.getpid()}")  # under /run: each sshd sees the state in its own /run
    topology = tmp_path / "lab-topology.toml"
    topology.write_text("")
    status_, _, err = _cli(capsys, "up", str(spec), "--state-dir", str(root), "-o", str(topology))
    assert status_ == 2 and "exists already" in err and not root.exists()
    topology.unlink()
    shell = None
    try:
        status_, out, _ = _cli(capsys, "up", str(spec), "--state-dir", str(root), "-o", str(topology))
        assert status_ == 0
        assert f"2 clients and 1 server, links of {RATE} each way" in out
        assert f"ip netns exec {PREFIX}c1 fio --name=seq --rw=write --bs=1m --size=32m" in out
        assert f"remove it all:          iobound lab down --state-dir {root}\n" in out
        netem = "1 ms one way between two hosts (tc netem)" in out
        assert netem or "1 ms asked for but NOT in effect: this kernel has no netem" in out
        assert "file service: s1's sshd served " in out and " to 2 sshfs reader(s) at once" in out
        lab = load_topology(topology)
        clients, network, servers = lab.group("lab-clients"), lab.group("lab-bridge"), lab.group("lab-servers")
        assert (clients.count, servers.count) == (2, 1)
        assert [end.m_as("bit/s") for end in clients.capacity("nic").range] == pytest.approx(
            [BITS * 1448 / 1514, BITS * 1460 / 1514])  # what TCP carries over the shaped link, not the tbf rate
        # what sshd served over unshaped links, without encryption's cost for the shaped rate: far above it
        assert servers.capacity("bandwidth").source.kind == "measured"
        assert servers.capacity("bandwidth").range[0].m_as("bit/s") > 2 * BITS
        assert (network.capacity("rtt").value.m_as("ms") == 2) if netem else network.capacity("rtt") is None

        # a second up, and a down of another directory, leave the running lab as it is
        status_, _, err = _cli(capsys, "up", str(spec), "--state-dir", str(tmp_path / "other"))
        assert status_ == 2 and "a lab is up or was left behind" in err
        assert f"'iobound lab down --state-dir {root}' removes it" in err
        status_, out, _ = _cli(capsys, "down", "--state-dir", str(tmp_path / "other"))
        assert status_ == 0 and out.splitlines()[-1] == "nothing of a lab was left to remove"
        assert f"note: left namespace {PREFIX}s1 alone: it is the lab's in {root}" in out
        status_, out, _ = _cli(capsys, "status", "--state-dir", str(root), "--json")
        doc = json.loads(out)
        assert status_ == 0 and doc["format"] == "iobound/lab"
        assert doc["lab"]["complete"] and doc["lab"]["missing"] == [] and doc["leftovers"] == []

        sshd = int((root / "hosts" / "s1" / "sshd.pid").read_text())
        os.kill(sshd, signal.SIGKILL)  # status checks live: a dead daemon is missing
        deadline = time.monotonic() + 5
        while Path(f"/proc/{sshd}/ns/net").exists():
            assert time.monotonic() < deadline, "sshd outlived SIGKILL"
            time.sleep(0.01)
        status_, out, _ = _cli(capsys, "status", "--state-dir", str(root))
        assert status_ == 1 and "missing: sshd of s1" in out
        # a shell of the user's in a client: down stops it too, and says so
        shell = subprocess.Popen(["ip", "netns", "exec", f"{PREFIX}c1", "sleep", "300"])
        while Path(f"/proc/{shell.pid}/comm").read_text().strip() != "sleep":  # ip joins the namespace, then execs
            assert shell.poll() is None and time.monotonic() < deadline + 10, "ip netns exec did not start sleep"
            time.sleep(0.01)
    finally:
        if root.exists():
            status_, out, _ = _cli(capsys, "down", "--state-dir", str(root))
        if shell is not None and shell.poll() is None:
            try:
                shell.wait(10)
            finally:
                shell.kill()
    assert status_ == 0 and f"removed namespace {PREFIX}s1" in out and "removed fuse.sshfs mount" in out
    assert f"removed process {shell.pid} (sleep) in {PREFIX}c1" in out and f"note: {STOPPED}" in out
    _nothing_left(root)
    status_, out, _ = _cli(capsys, "status", "--state-dir", str(root))
    assert status_ == 0 and out == f"no lab is up in {root}\n"


@needs_lab
def test_a_cipher_ssh_lacks_or_a_probe_without_a_lab_is_refused_in_one_line(tmp_path, capsys):
    spec = _spec_file(tmp_path, f'clients = 1\nservers = 1\nrate = "{RATE}"\n')
    status_, _, err = _cli(capsys, "up", str(spec), "--state-dir", str(tmp_path / "state"), "--cipher", "rot13")
    assert status_ == 2
    assert err.startswith("iobound: error: --cipher: this machine's ssh has no cipher 'rot13'; it has ")
    assert not (tmp_path / "state").exists()
    status_, _, err = _cli(capsys, "probe", "--state-dir", str(tmp_path / "state"), "-o", str(tmp_path / "p.toml"))
    assert (status_, err) == (2, f"iobound: error: no lab is up in {tmp_path / 'state'}: 'iobound lab up SPEC' builds "
                                 "one\n")
    assert not (tmp_path / "p.toml").exists()


@needs_lab
def test_a_client_only_lab_is_probed_between_its_clients_and_leaves_nothing_behind(tmp_path, capsys):
    spec = _spec_file(tmp_path, f'servers = 0\nrate = "{RATE}"\n[clients]\ncount = 2\nrate = "200 Mbit/s"\n'
                                f'[hosts.c2]\nrate = "{RATE}"\n')
    root = tmp_path / "state"
    try:
        status_, out, _ = _cli(capsys, "up", str(spec), "--state-dir", str(root))
        assert status_ == 0 and "2 clients and 0 servers, links of 200 Mbit/s (c1) and 100 Mbit/s (c2)" in out
        assert "no topology: a lab without servers has no storage to model" in out and "sshfs mount" not in out
        # --cpus pins the probing tools, as for iobound probe (which the advice after a busy probe names); in this
        # process, so the test's own CPUs are given back after it
        allowed = os.sched_getaffinity(0)
        try:
            status_, out, _ = _cli(capsys, "probe", "--state-dir", str(root), "-o", str(tmp_path / "c.toml"),
                                   "--budget", "1", "--quiet", "--json", "--cpus", "0")
            assert os.sched_getaffinity(0) == {0}
        finally:
            os.sched_setaffinity(0, allowed)
        doc = json.loads(out)
        assert status_ == 0 and doc["topology"] is None and not (tmp_path / "c.toml").exists()
        # c2 has the slower link: c1 can probe it, but no host's link is as fast as c1's
        assert [m["name"] for m in doc["measurements"]] == ["lab-c2.iperf3.send.p1", "lab-c2.iperf3.receive.p1"]
        assert doc["notes"] == ["lab-clients: no other host's link is as fast as c1's (200 Mbit/s), so no one peer can "
                                "fill it; its NIC stays the spec's (the payload share of the tc tbf rate)"]
        assert BITS * PAYLOAD * LOAD_MARGIN < doc["measurements"][0]["summary"]["mean"] <= BITS * 1460 / 1514 * 1.01
        assert json.loads((tmp_path / "c.json").read_text())["format"] == "iobound/probe-set"
    finally:
        status_, out, _ = _cli(capsys, "down", "--state-dir", str(root))
    assert status_ == 0 and f"removed namespace {PREFIX}c2" in out
    _nothing_left(root)


# ---- one lab, probed and judged ---------------------------------------------------------------

# The lab of issue 25: clients and servers on links of different rates, the clients' together below the servers'.
ROLES = ('[clients]\ncount = 3\nrate = "500 Mbit/s"\n'
         '[servers]\ncount = 2\nrate = "1 Gbit/s"\nsize = "512 MiB"\n')
RATES = {"client": 500e6, "server": 1e9}
CIPHER = "aes128-gcm@openssh.com"
# Each client's file on each server: 64 MiB, a little over a second at a client's 500 Mbit/s, so that fio's
# start and the final fsync take a few per cent of a run, not more.
FILE = "64m"
PHASES = {"write": ("--rw=write", "--end_fsync=1"), "read": ("--rw=read", "--invalidate=1")}


@needs_lab
class TestLab:
    """Three clients on 500 Mbit/s links and two servers on 1 Gbit/s, tmpfs stores: what it is made of, what
    ``iobound lab probe`` finds, and what fio sees through it against the ceilings the probed topology predicts.

    Its state directory is given through a symlink: the lab keeps and removes it by its real path.
    """

    @pytest.fixture(scope="class")
    @classmethod
    def lab(cls, tmp_path_factory):
        root = tmp_path_factory.mktemp("lab")
        (root / "link").symlink_to(root / "real")
        made = up(parse_spec(_spec_file(root, ROLES)), root / "link", cipher=CIPHER)
        try:
            yield made
        finally:
            down(root / "link")
        _nothing_left(made.state_dir)

    @pytest.fixture(scope="class", params=["quiet", "loaded"])
    @classmethod
    def probed(cls, request, lab, tmp_path_factory):
        """``iobound lab probe``'s topology and JSON, probed quiet or under load as the fio runs it predicts: six
        repetitions of each of the six probes (four links, the file service both ways) fit its budget."""
        topology = tmp_path_factory.mktemp(request.param) / "lab-probed.toml"
        return request.param, *_lab_probe(lab, request.param, topology)

    def test_status_finds_every_host_daemon_and_mount_live(self, lab):
        assert lab.state_dir == lab.state_dir.resolve() and lab.state_dir.name == "real"
        now = status(lab.state_dir.parent / "link")
        assert now == lab and now.healthy
        assert [h.namespace for h in now.hosts] == [f"{PREFIX}{h}" for h in ("c1", "c2", "c3", "s1", "s2")]
        names = _namespaces()
        mounted = {m.point: m.fstype for m in mounts()}
        for host in now.hosts:
            assert host.namespace in names
        for client in now.clients:
            for server in now.servers:
                assert mounted[now.mount(client.name, server.name)] == "fuse.sshfs"
        assert mounted[now.store("s2")] == "tmpfs"

    def test_the_lab_has_addresses_in_its_namespaces_only(self, lab):
        def addresses(*namespace: str) -> set[ipaddress.IPv4Interface]:
            lines = run_tool(["ip", *namespace, "-4", "-o", "address"], timeout=10).stdout.splitlines()
            return {ipaddress.IPv4Interface(line.split()[3]) for line in lines}

        assert not any(a.ip in SUBNET for a in addresses())
        for host in lab.hosts:
            assert {a for a in addresses("-n", host.namespace) if a.ip in SUBNET} == {
                ipaddress.IPv4Interface(f"{host.address}/{SUBNET.prefixlen}")}

    def test_each_link_is_shaped_to_its_hosts_rate_both_ways_and_ping_crosses_them(self, lab):
        for host in lab.hosts:
            rate = {"client": "rate 500Mbit", "server": "rate 1Gbit"}[host.role]
            for namespace, device in ((host.namespace, "eth0"), (f"{PREFIX}sw", host.name)):
                shown = run_tool(["tc", "-n", namespace, "qdisc", "show", "dev", device], timeout=10).stdout
                assert "qdisc tbf" in shown and rate in shown, (host.name, shown)
        done = run_tool(["ip", "netns", "exec", lab.clients[0].namespace, *ping.ping_argv(lab.servers[1].address, 5,
                                                                                            0.05)], timeout=30)
        assert len(ping_output.parse(done.stdout, source="ping")[0].samples) == 5

    def test_the_mounts_use_the_cipher_asked_for_and_up_measured_the_file_service(self, lab):
        ssh = [Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") for pid, namespace in
               sweep.members({h.namespace: network.identity(h.namespace) for h in lab.clients}).items()
               if Path(f"/proc/{pid}/comm").read_text().strip() == "ssh"]
        assert len(ssh) == 6 and all(f"-oCiphers={CIPHER}".encode() in argv for argv in ssh)  # a client's to a server
        assert lab.cipher == CIPHER and (lab.service.server, lab.service.streams) == ("s1", 3)
        assert len(lab.service.samples) == 3 and min(lab.service.samples) > 0

    def test_a_file_written_through_a_client_mount_is_in_the_servers_store(self, lab):
        data = os.urandom(3 * 2**20 + 17)
        for client in lab.clients:
            for server in lab.servers:
                name = f"from-{client.name}"
                target = lab.mount(client.name, server.name) / name
                subprocess.run(["ip", "netns", "exec", client.namespace, "dd", f"of={target}", "bs=1M", "status=none"],
                               input=data, check=True, timeout=30)
                assert (lab.store(server.name) / name).read_bytes() == data
        assert sorted(p.name for p in lab.store("s1").iterdir()) == ["from-c1", "from-c2", "from-c3"]
        assert (lab.mount("c2", "s1") / "from-c1").read_bytes() == data  # every client sees every server's files
        for server in lab.servers:
            for written in lab.store(server.name).iterdir():
                written.unlink()

    def test_lab_probe_measures_each_group_and_links_each_nic_to_its_probe(self, lab, probed):
        _, status_, topology, doc = probed
        assert status_ == 0 and doc["format"] == "iobound/lab-probe" and doc["failures"] == []
        # a file-service figure the links bound leaves up's figure in place, and a note says so
        kept = {note.split(":")[0] for note in doc["notes"]}
        assert kept <= {"lab-servers.sshfs.read", "lab-servers.sshfs.write"} and all(
            "kept up with the links" in note for note in doc["notes"])
        assert doc["probe_set"] == str(topology.with_suffix(".json")) and doc["topology"] == str(topology)
        measured = {m["name"]: m for m in doc["measurements"]}
        services = [measured.pop(f"lab-servers.sshfs.{direction}") for direction in ("read", "write")]
        assert set(measured) == {f"lab-{role}s.iperf3.{direction}.p1" for role in RATES
                                 for direction in ("send", "receive")}
        # the file service as fio meets it: 3 clients read from (write to) 2 servers at once, so each server serves at
        # most half of what the clients' links carry, less where ssh's encryption takes more CPU than is free
        for service in services:
            assert service["summary"]["n"] >= 3
            assert (service["parameters"]["streams"], service["parameters"]["cipher"]) == (6, CIPHER)
            assert 0 < service["summary"]["mean"] <= 3 * RATES["client"] / 8 * 1460 / 1514 / 2 * 1.01
        for name, m in measured.items():
            rate = RATES[name.split(".")[0][4:-1]]
            # what TCP carries: at most its payload share (1 % for tbf's burst), at least that less what load takes
            assert rate * PAYLOAD * LOAD_MARGIN < m["summary"]["mean"] <= rate * 1460 / 1514 * 1.01, name
            assert m["summary"]["n"] >= 3 and m["provenance"]["commands"][0][:4] == ["ip", "netns", "exec", f"{PREFIX}"
                                                                                     f"{m['parameters']['hosts'][0]}"]
        clients = measured["lab-clients.iperf3.send.p1"]["parameters"]
        assert (clients["hosts"], clients["peers"]) == (["c1", "c2", "c3"], ["s1", "s2", "s1"])  # each at least as fast
        servers = measured["lab-servers.iperf3.send.p1"]["parameters"]
        assert (servers["hosts"], servers["peers"]) == (["s1", "s2"], ["s2", "s1"])  # no client fills a server's link
        written = tomllib.loads(topology.read_text())
        link = {"probe": "lab-probed.json"}
        assert written["clients"]["lab-clients"] | {"count": 0} == {
            "count": 0, "description": "namespaces iobl-c1, iobl-c2, iobl-c3",
            "write_nic": link | {"measurement": "lab-clients.iperf3.send.p1"},
            "read_nic": link | {"measurement": "lab-clients.iperf3.receive.p1"}}
        assert written["servers"]["lab-servers"]["write_nic"] == link | {"measurement": "lab-servers.iperf3.receive.p1"}
        loaded = load_topology(topology)
        assert loaded.group("lab-clients").capacity("nic", "read").source.kind == "probe"
        for direction in ("read", "write"):  # the file service where it fell short of the links, else up's figure
            name = f"lab-servers.sshfs.{direction}"
            served = loaded.group("lab-servers").capacity("bandwidth", direction).source
            if name in kept:
                assert f"{direction}_bandwidth" not in written["servers"]["lab-servers"] and served.kind == "measured"
            else:
                assert written["servers"]["lab-servers"][f"{direction}_bandwidth"] == link | {"measurement": name}
                assert served.kind == "probe"
            ceiling = Model(loaded).ceiling(Workload(Operation(direction), _q("1 MiB", Metric.SIZE)))
            # what binds is named "[assumed]" only where it is one: the measured NICs and file service never are
            assert all(loaded.capacity_at(c, direction).source.kind == "assumption" for c in ceiling.assumed), ceiling

    @pytest.mark.parametrize("nodes", [1, 3])
    def test_fio_through_the_mounts_reaches_the_ceilings_the_probed_topology_predicts(self, lab, probed, nodes,
                                                                                       tmp_path, capsys):
        """Each client writes a file on every server (a stripe), then reads it back (its page cache dropped first),
        all clients at once, on the machine as it was probed (quiet or loaded): what they move together lies within
        10 % of the predicted ceiling, an interval over the probes' 95 % intervals. One client is bound by its link;
        three by their links or by the file service, whose encryption may need more CPU than a loaded machine has.
        A phase short of the ceiling runs again once, and its faster pass counts: each pass takes 2 s, in which the
        load (and a full test run's) can take the CPU the encryption needs, and a ceiling bounds the pass it did not.
        Likewise the file service's probe met the load of its own moment: where a phase bound by the servers' throughput
        passes the ceiling, the lab is probed again, and the ceiling spans what both probes predict."""
        load, _, topology, _ = probed
        model = Model(load_topology(topology))
        clients = lab.clients[:nodes]
        ceilings = {phase: model.ceiling(Workload(Operation(phase), _q("1 MiB", Metric.SIZE), nodes=nodes))
                    for phase in PHASES}
        results: dict[str, list[Path]] = {}
        moved: dict[str, float] = {}  # B/s, all clients together
        try:
            with _load(load):
                for attempt in range(2):
                    for phase, options in PHASES.items():
                        with ThreadPoolExecutor(len(clients)) as pool:
                            outputs = list(pool.map(partial(_fio, lab, tag=f"{load}{nodes}", options=options), clients))
                        together = sum(fio_output.parse(text, source=phase)[0].samples[0] for text in outputs)
                        if together <= moved.get(phase, 0.0):
                            continue
                        moved[phase] = together
                        results[phase] = [tmp_path / f"{phase}-{client.name}.json" for client in clients]
                        for path, text in zip(results[phase], outputs, strict=True):
                            path.write_text(text)
                    if all(moved[phase] >= 0.9 * ceilings[phase].least.m_as("B/s") for phase in PHASES):
                        break
            if nodes == 1:  # the seeds' anomaly: read again, its pages kept (invalidate=0), it comes from memory
                results["reread"] = [tmp_path / "reread-c1.json"]
                results["reread"][0].write_text(_fio(lab, clients[0], tag=f"{load}{nodes}",
                                                     options=("--rw=read", "--invalidate=0")))
        finally:
            for server in lab.servers:
                for written in lab.store(server.name).glob(f"{load}{nodes}.*"):
                    written.unlink()
        later = None  # the model of the lab probed again, where a phase passed a ceiling the servers' CPU sets
        for phase, ceiling in ceilings.items():
            assert ceiling.binding_layers == ("client NICs",) or (nodes > 1 and set(ceiling.binding_layers) <= {
                "client NICs", "server throughput"}), ceiling.binding_layers
            low, high = ceiling.least.m_as("B/s"), ceiling.value.m_as("B/s")
            if moved[phase] > 1.1 * high and "server throughput" in ceiling.binding_layers:
                if later is None:
                    assert _lab_probe(lab, load, tmp_path / "again.toml")[0] == 0
                    later = Model(load_topology(tmp_path / "again.toml"))
                again = later.ceiling(Workload(Operation(phase), _q("1 MiB", Metric.SIZE), nodes=nodes))
                low, high = min(low, again.least.m_as("B/s")), max(high, again.value.m_as("B/s"))
            print(f"{load}, {nodes} client(s), {phase}: {moved[phase] / 2**20:.1f} MiB/s against {low / 2**20:.1f} to "
                  f"{high / 2**20:.1f} MiB/s ({', '.join(ceiling.binding_layers)})", file=sys.stderr)  # pytest -rP
            assert 0.9 * low <= moved[phase] <= 1.1 * high, (phase, moved[phase] / 2**20, low / 2**20, high / 2**20)
        if nodes == 1:  # the README's loop: iobound check judges a client's fio runs against the probed topology
            status_ = main(["check", str(topology), *(str(f) for files in results.values() for f in files), "--json",
                            "--tolerance", "0.1", "--fail-on", "never"])
            runs = {Path(r["run"]["origin"]["path"]).stem: r for r in json.loads(capsys.readouterr().out)["runs"]}
            assert status_ == 0 and set(runs) == {"write-c1", "read-c1", "reread-c1"}
            for name, run in runs.items():
                codes = {f["code"] for f in run["findings"]}
                if name == "reread-c1":  # faster than the network: from the client's page cache
                    assert "ABOVE-CEILING" in codes and run["ratio"] > 5, (name, run["ratio"], codes)
                else:
                    assert "AT-CEILING" in codes, (name, run["ratio"], codes)


def _lab_probe(lab, load: str, topology: Path) -> tuple[int, Path, dict]:
    """``iobound lab probe`` of the lab into ``topology``, quiet or under load: its exit status, the topology and its
    JSON (six repetitions of each of the six probes fit its budget)."""
    out = io.StringIO()
    with _load(load), contextlib.redirect_stdout(out):
        status_ = main(["lab", "probe", "--state-dir", str(lab.state_dir.parent / "link"), "-o", str(topology),
                        "--budget", "50", "--quiet", "--json"])
    return status_, topology, json.loads(out.getvalue())


@contextlib.contextmanager
def _load(load: str):
    """Nothing for "quiet"; for "loaded", a CPU-bound stress-ng worker on one CPU while the block runs.

    It stands for a full test run: on this 2-CPU machine pytest and the tools it starts keep about one CPU
    busy, and less than all of it (they wait on fio, iperf3 and ssh at times); stress-ng takes a whole CPU
    all the time, so the lab's ssh, sshd and sshfs (about 0.8 CPU at 3 x 500 Mbit/s) get the other one.
    """
    if load == "quiet":
        yield
        return
    stress = subprocess.Popen(["stress-ng", "--cpu", "1", "--quiet"], stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        yield
    finally:
        os.killpg(stress.pid, signal.SIGKILL)
        stress.wait()


def _fio(lab, client, *, tag: str, options: tuple[str, ...]) -> str:
    """fio's JSON for one phase of ``client``: a job per server on its file there, reported together, run in the
    client's namespace as a user of the lab would."""
    jobs = [option for server in lab.servers for option in (
        f"--name={server.name}", f"--filename={lab.mount(client.name, server.name) / f'{tag}.{client.name}'}")]
    argv = ["ip", "netns", "exec", client.namespace, "fio", "--group_reporting", "--bs=1m", f"--size={FILE}",
            "--ioengine=psync", *options, "--output-format=json", *jobs]
    return run_tool(argv, timeout=90).stdout
