"""A real Slurm in the lab: munge and one slurmctld in the switch's namespace, one slurmd in each host's, as its node.

Every file lies in ``STATE/slurm`` (the configuration, munge's key and socket, the spool, state and
log folders) and every daemon is started with explicit paths to them, so a Slurm or munge this
machine runs itself is never read or touched. Each slurmd runs in its host's network namespace
(nsenter --net: ``ip netns exec`` would remount /sys, leaving slurmd no cgroups) with a UTS
namespace of its own named for the host, so a task sees its node's name and address. The
controller listens on the bridge (``CONTROLLER_ADDRESS``); commands reach it from the switch's
namespace (:func:`command`). The daemons are in the lab's namespaces, so ``down`` stops them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from probes.core.errors import ProbeError, ToolFailedError
from probes.core.host import this_host
from probes.lab.command import execute
from probes.lab.layout import Lab
from probes.lab.network import runs_in
from probes.lab.spec import SUBNET, SWITCH

__all__ = ["TOOLS", "INSTALL", "CONTROLLER", "CONTROLLER_ADDRESS", "missing_tools", "folder", "conf", "start",
           "missing", "command", "shell", "usage"]

# What the lab's Slurm runs, and where Debian keeps the daemons (often off a user's PATH).
TOOLS = ("munged", "slurmctld", "slurmd", "srun", "scontrol", "sinfo")
_SBIN = "/usr/sbin:/usr/local/sbin:/sbin"
INSTALL = "install with: apt-get install slurmctld slurmd slurm-client munge"
CONTROLLER = "ctl"
CONTROLLER_ADDRESS = str(SUBNET[1])
# Seconds for a daemon to come up (the controller to answer, every node to be idle); Slurm's message timeout.
_START, _MESSAGE = 30.0, 5
# Runs in the new UTS namespace: take the host's name, then become the daemon.
_NAMED = "import os, socket, sys; socket.sethostname(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])"


def missing_tools() -> list[str]:
    """The Slurm and munge programs this machine lacks."""
    return [tool for tool in TOOLS if _path(tool) is None]


def folder(lab: Lab) -> Path:
    """Where the lab's Slurm keeps everything: configuration, munge's key and socket, spool, state, logs."""
    return lab.state_dir / "slurm"


def conf(lab: Lab) -> Path:
    """The lab's slurm.conf (``SLURM_CONF`` for every Slurm command run against it)."""
    return folder(lab) / "slurm.conf"


def start(lab: Lab) -> None:
    """Start munge, the controller and a slurmd per host, and wait until every node is idle.

    Raises
    ------
    ProbeError
        If this machine forbids a daemon a namespace of its own, or a daemon ends or does not come up in time (with
        the last line of its log).
    """
    home = folder(lab)
    for sub in ("spool", "ctld", "log", *(f"spool/{h.name}" for h in lab.hosts)):
        (home / sub).mkdir(parents=True, mode=0o700)
    key = home / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    (home / "plugstack.conf").write_text("")
    conf(lab).write_text(_slurm_conf(lab, home))
    execute("ip", "-n", SWITCH, "address", "add", f"{CONTROLLER_ADDRESS}/{SUBNET.prefixlen}", "dev", "br0")
    # --force: munge wants its socket's folders open to all, and the lab's state directory is private to root
    munged = _daemon(lab, "munged", SWITCH, None, _path("munged"), "-F", "--force", f"--key-file={key}",
                     f"--socket={home / 'munge.socket'}", f"--pid-file={home / 'munged.pid'}",
                     f"--log-file={home / 'log' / 'munged.log'}", f"--seed-file={home / 'munge.seed'}")
    started = {"munged": munged}
    _wait(lambda: (home / "munge.socket").exists(), started, home)
    started["slurmctld"] = _daemon(lab, "slurmctld", SWITCH, CONTROLLER, _path("slurmctld"), "-D", "-f", conf(lab))
    _wait(lambda: _answers(lab), started, home)
    for host in lab.hosts:
        started[f"slurmd-{host.name}"] = _daemon(lab, f"slurmd-{host.name}", host.namespace, host.name,
                                                 _path("slurmd"), "-D", "-f", conf(lab), "-N", host.name)
    _wait(lambda: (nodes := _nodes(lab)) is not None and not _unready(lab, nodes), started, home)


def missing(lab: Lab) -> list[str]:
    """What of the lab's Slurm is not there, checked live: a daemon not running, or a node Slurm has not idle."""
    home = folder(lab)
    daemons = [("munged", SWITCH, home / "munged.pid"), ("slurmctld", SWITCH, home / "slurmctld.pid")]
    daemons += [("slurmd", h.namespace, home / "spool" / h.name / "slurmd.pid") for h in lab.hosts]
    gone = [f"{name} in {namespace}" for name, namespace, pidfile in daemons if not runs_in(pidfile, name, namespace)]
    if gone:
        return gone
    nodes = _nodes(lab)
    if nodes is None:
        return [f"an answer from slurmctld in {SWITCH} (it runs, but sinfo had none within {2 * _MESSAGE} s)"]
    return [f"Slurm's node {node} is {state} ({why}): '{shell(lab, f'scontrol update nodename={node} state=resume')}' "
            "brings it back" for node, state, why in _unready(lab, nodes)]


def command(lab: Lab, *argv: str | os.PathLike) -> list[str]:
    """``argv`` as run against the lab's Slurm: from the switch's namespace, with its SLURM_CONF."""
    return ["nsenter", f"--net=/run/netns/{SWITCH}", "env", f"SLURM_CONF={conf(lab)}", *map(str, argv)]


def shell(lab: Lab, words: str) -> str:
    """A Slurm command line as a user types it against the lab's Slurm, for messages."""
    return f"SLURM_CONF={conf(lab)} nsenter --net=/run/netns/{SWITCH} {words}"


def usage(lab: Lab) -> str:
    """How a user runs a job on the lab's Slurm, for ``up``'s and ``status``'s text."""
    return shell(lab, f"srun -N {len(lab.hosts)} hostname")


def _slurm_conf(lab: Lab, home: Path) -> str:
    """slurm.conf: the controller on the bridge, a node per host at its address with this machine's CPUs and memory
    (a job asking memory, as dask-jobqueue's do, fits where it would on the machine), one partition of them all; every
    path in ``home``, munge's socket named; no cgroups (the nodes share this machine), no accounting; MPI's ranks meet
    over PMI-2, which the mpich wheel speaks."""
    machine = this_host()
    nodes = ",".join(h.name for h in lab.hosts)
    return "\n".join([
        "ClusterName=iobound-lab", f"SlurmctldHost={CONTROLLER}({CONTROLLER_ADDRESS})", "SlurmUser=root",
        "SlurmdUser=root", "AuthType=auth/munge", f"AuthInfo=socket={home / 'munge.socket'}", "CredType=cred/munge",
        f"StateSaveLocation={home / 'ctld'}", f"SlurmdSpoolDir={home / 'spool' / '%n'}",
        f"SlurmctldPidFile={home / 'slurmctld.pid'}", f"SlurmdPidFile={home / 'spool' / '%n' / 'slurmd.pid'}",
        f"SlurmctldLogFile={home / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={home / 'log' / 'slurmd-%n.log'}",
        f"PlugStackConfig={home / 'plugstack.conf'}", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SlurmdParameters=config_overrides", "SwitchType=switch/none", "MpiDefault=pmi2",
        "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        "ReturnToService=2", "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none", f"MessageTimeout={_MESSAGE}", "KillWait=2", "InactiveLimit=0",
        *(f"NodeName={h.name} NodeAddr={h.address} CPUs={machine.cpus} RealMemory={machine.memory // 2**20} "
          "State=UNKNOWN" for h in lab.hosts),
        f"PartitionName=lab Nodes={nodes} Default=YES MaxTime=INFINITE State=UP", ""])


def _daemon(lab: Lab, name: str, namespace: str, hostname: str | None, *argv: str | os.PathLike) -> subprocess.Popen:
    """Start ``argv`` in the foreground, in ``namespace``'s network (and, named ``hostname``, a UTS namespace of its
    own), its output in the log folder; it lives on in the namespace, where ``down`` stops it."""
    named = ("unshare", "--uts", "--", sys.executable, "-I", "-c", _NAMED, hostname) if hostname else ()
    full = ["nsenter", f"--net=/run/netns/{namespace}", *named, *map(str, argv)]
    with open(folder(lab) / "log" / f"{name}.out", "w") as out:
        return subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _wait(ready: Callable[[], bool], daemons: dict[str, subprocess.Popen], home: Path) -> None:
    """Wait until ``ready()`` holds, at most ``_START`` seconds, while ``daemons`` (by log name) run; ProbeError naming
    the daemon that ended (else the last one started) with the last line it wrote."""
    deadline = time.monotonic() + _START
    while not ready():
        ended = next((name for name, d in daemons.items() if d.poll() is not None), None)
        if ended is not None or time.monotonic() > deadline:
            name = ended or list(daemons)[-1]
            what = "ended" if ended else f"did not come up within {_START:g} s"
            raise ProbeError(f"the lab's {name} {what} ({_last_line(home / 'log', name)}); where a machine forbids "
                             "daemons or namespaces of their own, run jobs on the site's Slurm instead of the lab's")
        time.sleep(0.2)


def _last_line(logs: Path, name: str) -> str:
    """The last line daemon ``name`` wrote (its log, else what it printed), for an error message."""
    for path in (logs / f"{name}.log", logs / f"{name}.out"):
        try:
            lines = path.read_text(errors="replace").strip().splitlines()
        except OSError:
            continue
        if lines:
            return f"{path.name}: {lines[-1].strip()}"
    return "it wrote nothing"


def _answers(lab: Lab) -> bool:
    """Whether the controller answers a ping."""
    try:
        done = execute(*command(lab, "scontrol", "ping"), timeout=2 * _MESSAGE, check=False)
    except ToolFailedError:
        return False
    return done.returncode == 0 and "is UP" in done.stdout


def _nodes(lab: Lab) -> dict[str, tuple[str, str]] | None:
    """Each node's state and the reason Slurm gives for it, as sinfo shows them; None if the controller does not
    answer."""
    try:
        done = execute(*command(lab, "sinfo", "--noheader", "--Node", "--format=%N|%T|%E"), timeout=2 * _MESSAGE,
                       check=False)
    except ToolFailedError:
        return None
    if done.returncode != 0:
        return None
    return {name: (state, why) for name, state, why in (line.split("|") for line in done.stdout.splitlines()
                                                          if line.count("|") == 2)}


def _unready(lab: Lab, nodes: dict[str, tuple[str, str]]) -> list[tuple[str, str, str]]:
    """The hosts whose node Slurm does not have up (idle, or running jobs): name, state and reason."""
    found = [(h.name, *nodes.get(h.name, ("absent", "not in the lab's slurm.conf"))) for h in lab.hosts]
    return [(name, state, why) for name, state, why in found
            if not all(part.rstrip("*~#") in ("idle", "allocated", "mixed", "completing") for part in state.split("+"))]


def _path(tool: str) -> str | None:
    """The program's path: on PATH, or in the sbin folders where Debian puts daemons."""
    return shutil.which(tool) or shutil.which(tool, path=_SBIN)
