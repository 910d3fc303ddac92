"""The lab's services: each server's store and its sshd, and each client's sshfs mount of every server.

Every process runs in a namespace of the lab (sshd in its server's, sshfs and its ssh in their
client's), so ``down`` finds them there; every mount lies in a folder of the lab's state directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

from probes.core.errors import InputError, ProbeError, ToolFailedError
from probes.measure.fio import run_fio
from probes.measure.tool import install_hint
from probes.lab.command import execute
from probes.lab.layout import Lab, Service
from probes.lab.network import runs_in
from probes.lab.spec import PREFIX, Backing, Host
from probes.core.units import Metric
from probes.measure.mountinfo import mounts
from probes.measure.probe import Output, Probe

__all__ = ["make_keys", "serve", "trust", "mount", "measure", "service_probes", "service_measurements", "missing",
           "sshd_path", "check_cipher"]

# Seconds to make a file system, to mount over ssh, for sshd to start listening.
_MKFS, _MOUNT, _START = 60.0, 20.0, 10.0
# The file service's measurement: repetitions of a second each, three as for any probe (fewer give no interval);
# each reads a sparse file (holes: no memory on the server, nothing from a disk) larger than any second's reads,
# in requests of 1 MiB, with fio: the tool a benchmark of the lab runs.
_REPETITIONS, _SECONDS, _SPARSE, _CHUNK = 3, 1.0, 256 * 2**30, 2**20
# A write stream wraps around within this many bytes of its file: the store holds every client's.
_WINDOW = 32 * 2**20
_DIRECTIONS = {"read": "from", "write": "to"}
_SERVICE_FILE = ".iobound-service"
_HELPER = Path(__file__).with_name("sshd_namespace.py")
# The mounts an sshd keeps in its mount namespace, besides those holding the lab's state and what sshd runs from.
_ESSENTIAL = tuple(map(Path, ("/", "/proc", "/sys", "/dev", "/dev/pts")))
_SYSTEM = tuple(map(Path, ("/etc", "/usr", "/lib", "/lib64", "/bin", "/sbin")))


def sshd_path(required: bool = True) -> str | None:
    """sshd's absolute path (it re-executes itself, so it must be started by one); /usr/sbin is often off PATH."""
    found = shutil.which("sshd") or shutil.which("sshd", path="/usr/sbin:/usr/local/sbin:/sbin")
    if found is None and required:
        raise ProbeError(f"sshd is not installed; {install_hint(['sshd'])}")
    return found


def make_keys(lab: Lab) -> None:
    """The key every client logs in to every server with."""
    execute("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "iobound-lab", "-f", lab.key)


def serve(lab: Lab, server: Host) -> None:
    """The server's store (tmpfs or ext4 image) and its sshd: root login with the lab's key only, internal-sftp only."""
    store = lab.store(server.name)
    store.mkdir()
    size = round(server.size.m_as("B"))
    if server.backing is Backing.TMPFS:
        execute("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", f"{PREFIX}{server.name}", store)
    else:
        image = lab.image(server.name)
        with open(image, "wb") as f:
            f.truncate(size)
        execute("mkfs.ext4", "-q", "-F", "-m", "0", "-L", f"{PREFIX}{server.name}", image, timeout=_MKFS)
        execute("mount", "-o", "loop", image, store)
    home = lab.home(server.name)
    (home / "run" / "sshd").mkdir(parents=True, mode=0o755)
    execute("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"iobound-lab {server.name}", "-f", home / "host_key")
    shutil.copyfile(f"{lab.key}.pub", home / "authorized_keys")
    (home / "sshd_config").write_text(_sshd_config(server, home))
    _start_sshd(lab, server)


def trust(lab: Lab) -> None:
    """The servers' host keys, for the clients' ssh to check (StrictHostKeyChecking)."""
    lab.known_hosts.write_text("".join(
        f"{s.address} {' '.join((lab.home(s.name) / 'host_key.pub').read_text().split()[:2])}\n"
        for s in lab.servers))


def mount(lab: Lab, client: Host, server: Host) -> None:
    """Mount ``server``'s store at ``lab.mount(client, server)`` with sshfs, run (with its ssh) in ``client``'s network.

    nsenter moves sshfs into the client's network namespace only (ip netns exec would also give it
    a mount namespace of its own, hiding the mount). ``auto_cache`` keeps a file's pages in the
    client's page cache while its size and time stay the same, as NFS's close-to-open caching does:
    a re-read is served from memory.
    """
    point = lab.mount(client.name, server.name)
    point.mkdir(parents=True)
    options = ",".join([
        "auto_cache", f"fsname={PREFIX}{client.name}-{server.name}", f"IdentityFile={lab.key}", "IdentitiesOnly=yes",
        f"UserKnownHostsFile={lab.known_hosts}", "GlobalKnownHostsFile=/dev/null", "StrictHostKeyChecking=yes",
        "BatchMode=yes", "ConnectTimeout=5", "ServerAliveInterval=5", "ServerAliveCountMax=3", "LogLevel=ERROR",
        *([f"Ciphers={lab.cipher}"] if lab.cipher else [])])
    argv = ["nsenter", f"--net=/run/netns/{client.namespace}", "sshfs",
            f"root@{server.address}:{lab.store(server.name)}", str(point), "-F", "/dev/null", "-o", options]
    log = lab.home(client.name) / f"sshfs-{server.name}.log"
    log.parent.mkdir(exist_ok=True)
    with open(log, "w") as out:
        # sshfs returns once mounted, leaving itself and its ssh running: their output goes to the log, not a pipe
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            code = proc.wait(_MOUNT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise ToolFailedError(tuple(argv), None, log.read_text(errors="replace"), _MOUNT) from None
    if code != 0:
        raise ToolFailedError(tuple(argv), code, log.read_text(errors="replace"))


def check_cipher(cipher: str) -> None:
    """InputError unless this machine's ssh offers ``cipher`` (``ssh -Q cipher`` lists them)."""
    offered = execute("ssh", "-Q", "cipher").stdout.split()
    if cipher not in offered:
        raise InputError("--cipher", "", f"this machine's ssh has no cipher {cipher!r}; it has {', '.join(offered)}")


def measure(lab: Lab) -> Service:
    """What the first server's sshd serves to every client at once, while the links are not yet shaped.

    fio reads one sparse file of the server's store through every client's sshfs mount, one job per
    client, as a benchmark would: ssh's encryption and sshfs's work on both sides are all on this
    machine's CPUs, which is what the measurement finds. The file is removed afterwards.

    Raises
    ------
    ProbeError
        If fio fails (saying why).
    """
    server = lab.servers[0]
    with _files(lab, (server,), "read") as paths:
        argv = _fio_argv(paths, "read", _SECONDS)
        samples = tuple(_fio(argv, _SECONDS) for _ in range(_REPETITIONS))
    return Service(server.name, len(paths), _SECONDS, samples)


def service_measurements(lab: Lab) -> dict[str, str]:
    """The file service's figures ``lab probe`` measures, by the servers' capacity each gives: what each server
    serves while every client reads from (writes to) every server at once; one figure for every server group."""
    return {f"{direction}_bandwidth": f"lab-servers.sshfs.{direction}" for direction in _DIRECTIONS}


@contextmanager
def service_probes(lab: Lab, runtime: float) -> Iterator[tuple[Probe, ...]]:
    """Probes of the file service as the clients meet it, through the shaped links and on this machine as it is
    (its neighbours too), one a direction: each repetition, one fio run reads (writes) a file of every server
    through every client's sshfs mount, a job each, for ``runtime`` s; the figure is each server's share of what
    they moved together. The files are there while the block runs.

    Raises
    ------
    ProbeError
        If a file cannot be made, or fio fails (saying why).
    """
    with ExitStack() as stack:
        probes = []
        for key, name in service_measurements(lab).items():
            direction = key.split("_")[0]
            paths = stack.enter_context(_files(lab, lab.servers, direction))
            probes.append(_probe(lab, name, direction, _fio_argv(paths, direction, runtime), runtime))
        yield tuple(probes)


def _probe(lab: Lab, name: str, direction: str, argv: tuple[str, ...], runtime: float) -> Probe:
    verb = {"read": "reads by", "write": "writes of"}[direction]
    output = Output(name, f"sshfs {verb} {len(lab.clients)} clients {_DIRECTIONS[direction]} {len(lab.servers)} "
                          "servers at once, one stream each through the shaped links: what each server served",
                    Metric.BANDWIDTH, "B/s")
    streams = len(lab.clients) * len(lab.servers)
    return Probe(f"file service, {direction} (sshfs, {streams} streams)", "fio", (argv,), (output,),
                 lambda: {name: _fio(argv, runtime) / len(lab.servers)},
                 {"clients": [c.name for c in lab.clients], "servers": [s.name for s in lab.servers],
                  "direction": direction, "streams": streams, "time": runtime, "cipher": lab.cipher or None})


def _fio_argv(paths: list[Path], direction: str, seconds: float) -> tuple[str, ...]:
    """One fio run of a job a path, all at once for ``seconds``, reported together: requests of :data:`_CHUNK` bytes,
    a read from the start of its (sparse) file with its cached pages dropped first, a write round a window of
    :data:`_WINDOW` bytes flushed at its end (sshfs sends writes behind the caller's back)."""
    options = {"read": ("--rw=read", "--invalidate=1"),
               "write": ("--rw=write", f"--size={_WINDOW}", "--fallocate=none", "--end_fsync=1")}[direction]
    jobs = [option for index, path in enumerate(paths) for option in (f"--name=stream{index}", f"--filename={path}")]
    return ("fio", "--ioengine=psync", f"--bs={_CHUNK}", "--time_based", f"--runtime={max(round(seconds * 1000), 1)}ms",
            "--group_reporting", "--output-format=json", *options, *jobs)


def _fio(argv: tuple[str, ...], seconds: float) -> float:
    """B/s of every job of ``argv`` together."""
    try:
        return run_fio(argv, runtime=seconds).bandwidth
    except ToolFailedError as exc:
        raise ProbeError(f"measuring the file service failed: {exc}") from None


@contextmanager
def _files(lab: Lab, servers: tuple[Host, ...], direction: str) -> Iterator[list[Path]]:
    """Files in ``servers``' stores and every client's path to them through its mount: one sparse file a server to
    read, or a file a client and server to write; removed on leaving."""
    write = direction == "write"
    names = {c.name: f"{_SERVICE_FILE}.{c.name}" if write else _SERVICE_FILE for c in lab.clients}
    made = [lab.store(s.name) / name for s in servers for name in dict.fromkeys(names.values())]
    try:
        try:
            for path in made:
                with open(path, "wb") as file:
                    file.truncate(0 if write else _SPARSE)
        except OSError as exc:
            raise ProbeError(f"measuring the file service failed: {exc.filename}: {exc.strerror or exc}") from None
        yield [lab.mount(c.name, s.name) / names[c.name] for s in servers for c in lab.clients]
    finally:
        for path in made:
            path.unlink(missing_ok=True)


def missing(lab: Lab) -> list[str]:
    """What of the services is not there, checked live: stores mounted, sshd running, sshfs mounted."""
    mounted = {m.point: m.fstype for m in mounts()}  # of two on one point, the later (on top) wins
    gone = []
    for server in lab.servers:
        if mounted.get(lab.store(server.name)) not in ("tmpfs", "ext4"):
            gone.append(f"store of {server.name} ({lab.store(server.name)})")
        if not runs_in(lab.home(server.name) / "sshd.pid", "sshd", server.namespace):
            gone.append(f"sshd of {server.name}")
    gone += [f"sshfs mount {lab.mount(c.name, s.name)}" for c in lab.clients for s in lab.servers
             if mounted.get(lab.mount(c.name, s.name)) != "fuse.sshfs"]
    return gone


def _sshd_config(server: Host, home: Path) -> str:
    """sshd's configuration: the server's address only, root by key only, sftp only, nothing forwarded."""
    # StrictModes is off: the key files are the lab's own, in its private state directory, wherever that lies (/tmp).
    return "\n".join([
        f"ListenAddress {server.address}:22", f"HostKey {home / 'host_key'}", f"PidFile {home / 'sshd.pid'}",
        f"AuthorizedKeysFile {home / 'authorized_keys'}", "AllowUsers root", "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
        "StrictModes no", "UseDNS no", "Subsystem sftp internal-sftp", "ForceCommand internal-sftp",
        "AllowTcpForwarding no", "AllowAgentForwarding no", "X11Forwarding no", "PermitTTY no", "PermitUserRC no",
        "MaxStartups 200", "MaxSessions 200", "LogLevel INFO", ""])


def _start_sshd(lab: Lab, server: Host) -> None:
    """Start sshd through the namespace helper and wait until it listens (it writes its PidFile then).

    sshd run as root needs its privilege-separation directory /run/sshd, which Debian makes only
    when its own sshd service starts. Rather than make it on this machine, each lab sshd gets a
    mount namespace of its own in which /run is its home's ``run`` (holding an empty ``sshd`` and,
    where the state directory lies under /run, the state directory). That namespace lets go of
    every mount sshd does not need, so it holds no one else's file systems (or loop devices) busy.
    """
    home, sshd = lab.home(server.name), sshd_path()
    pidfile, log, view = home / "sshd.pid", home / "sshd.log", home / "run"
    argv = [sys.executable, "-I", str(_HELPER), "--netns", f"/run/netns/{server.namespace}", "--run", str(view)]
    if lab.state_dir.is_relative_to("/run"):
        inside = view / lab.state_dir.relative_to("/run")
        inside.mkdir(parents=True)
        argv += ["--bind", str(lab.state_dir), str(inside)]
    for point in _unneeded(lab.state_dir, Path(sshd).parent):
        argv += ["--detach", str(point)]
    argv += ["--", sshd, "-D", "-e", "-f", str(home / "sshd_config")]
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    deadline = time.monotonic() + _START
    while not (pidfile.exists() and pidfile.read_text().strip() == str(proc.pid)):
        if proc.poll() is not None:
            raise ToolFailedError(tuple(argv), proc.returncode, log.read_text(errors="replace"))
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise ToolFailedError(tuple(argv), None, log.read_text(errors="replace"), _START)
        time.sleep(0.02)


def _unneeded(state_dir: Path, programs: Path) -> list[Path]:
    """The mount points sshd's namespace lets go of, deepest first: all but the system's, the state's, sshd's own."""
    used = (state_dir, programs, *_SYSTEM)
    points = sorted({m.point for m in mounts()}, key=lambda p: -len(p.parts))
    return [p for p in points if p not in _ESSENTIAL and not p.is_relative_to(state_dir)
            and not any(u.is_relative_to(p) for u in used)]
