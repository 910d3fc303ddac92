"""The lab's network: a namespace per host, joined to a bridge in the switch's namespace by veth pairs shaped with tc.

Each namespace is tagged with its lab's state directory (the alias of its loopback device), so
every lab command can tell whose it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from probes.core.errors import ToolFailedError
from probes.lab.command import execute
from probes.lab.layout import Lab
from probes.lab.spec import PREFIX, SUBNET, SWITCH
from probes.lab.state import Journal

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["namespaces", "owner", "identity", "runs_in", "delete", "build", "shape", "missing"]


def namespaces() -> list[str]:
    """The network namespaces named with the lab's prefix."""
    listed = execute("ip", "netns", "list").stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(PREFIX)]


def owner(namespace: str) -> Path | None:
    """The state directory of the lab that made ``namespace``, as its tag says; None if untagged or gone."""
    shown = execute("ip", "-j", "-n", namespace, "link", "show", "lo", check=False)
    try:
        alias = json.loads(shown.stdout)[0].get("ifalias") if shown.returncode == 0 else None
    except (ValueError, IndexError, AttributeError):
        return None
    return Path(alias) if isinstance(alias, str) and alias.startswith("/") else None


def identity(namespace: str) -> tuple[int, int] | None:
    """The (device, inode) that names ``namespace`` in the kernel, as /proc/PID/ns/net shows it; None if gone."""
    try:
        found = os.stat(f"/run/netns/{namespace}")
    except OSError:
        return None
    return found.st_dev, found.st_ino


def runs_in(pidfile: Path, name: str, namespace: str) -> bool:
    """Whether the process of ``pidfile`` runs as ``name`` in ``namespace`` (a zombie's /proc/PID/ns is gone too)."""
    try:
        pid = int(pidfile.read_text())
        where = os.stat(f"/proc/{pid}/ns/net")
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError):
        return False
    return (where.st_dev, where.st_ino) == identity(namespace) and comm == name


def delete(namespace: str) -> bool:
    """Delete ``namespace`` with its devices (a veth pair goes with either end); whether it went."""
    return execute("ip", "netns", "delete", namespace, check=False).returncode == 0


def build(lab: Lab, journal: Journal) -> bool:
    """The switch namespace with its bridge, and each host's namespace on a veth pair to it, not yet shaped.

    Returns whether this kernel delays packets with netem (also recorded in the journal).
    """
    _add(SWITCH, lab, journal)
    execute("ip", "-n", SWITCH, "link", "add", "br0", "type", "bridge")
    for device in ("lo", "br0"):
        execute("ip", "-n", SWITCH, "link", "set", device, "up")
    netem = _netem_works()
    journal.note(netem=netem)
    for host in lab.hosts:
        _add(host.namespace, lab, journal)
        execute("ip", "-n", SWITCH, "link", "add", host.name, "type", "veth", "peer", "name", "eth0",
            "netns", host.namespace)
        execute("ip", "-n", SWITCH, "link", "set", host.name, "master", "br0", "up")
        execute("ip", "-n", host.namespace, "address", "add", f"{host.address}/{SUBNET.prefixlen}", "dev", "eth0")
        for device in ("lo", "eth0"):
            execute("ip", "-n", host.namespace, "link", "set", device, "up")
    return netem


def shape(lab: Lab) -> None:
    """Shape each host's link both ways to its rate (tc tbf), and delay what it sends where netem is there."""
    for host in lab.hosts:
        _shape(SWITCH, host.name, host.rate, None)
        _shape(host.namespace, "eth0", host.rate, lab.delay(host))


def missing(lab: Lab) -> list[str]:
    """What of the lab's network is not there: namespaces (or ones another lab made), and each link's tbf."""
    present = set(namespaces())
    gone = []
    for name in lab.namespaces:
        tag = owner(name) if name in present else None
        if name not in present:
            gone.append(f"namespace {name}")
        elif tag != lab.state_dir:
            gone.append(f"namespace {name} as this lab's (it is {f'tagged {tag}' if tag else 'untagged'})")
    if gone:
        return gone
    switch = execute("tc", "-n", SWITCH, "qdisc", "show", check=False).stdout.splitlines()
    for host in lab.hosts:
        own = execute("tc", "-n", host.namespace, "qdisc", "show", "dev", "eth0", check=False).stdout
        if "qdisc tbf" not in own or not any(f" dev {host.name} " in line and "qdisc tbf" in line for line in switch):
            gone.append(f"the shaping (tc tbf) of {host.name}'s link")
    return gone


def _add(namespace: str, lab: Lab, journal: Journal) -> None:
    """Make ``namespace``, recorded first and tagged with the lab's state directory right after."""
    journal.record(namespace)
    try:
        execute("ip", "netns", "add", namespace)
    except ToolFailedError as exc:
        if exc.status is not None:  # ip refused (one of that name exists): not made, so not the lab's to remove
            journal.forget(namespace)
        raise
    execute("ip", "-n", namespace, "link", "set", "lo", "alias", lab.state_dir)


def _netem_works() -> bool:
    """Whether this kernel delays packets with netem (sch_netem, often left out): tried on the switch's bridge."""
    done = execute("tc", "-n", SWITCH, "qdisc", "add", "dev", "br0", "root", "netem", "delay", "1ms", check=False)
    execute("tc", "-n", SWITCH, "qdisc", "del", "dev", "br0", "root", check=False)
    return done.returncode == 0


def _shape(namespace: str, device: str, rate: Quantity, delay: Quantity | None) -> None:
    """tbf at ``rate`` on what ``device`` sends, under netem's ``delay`` when given (netem's example: tbf as its child).

    Only a host's own end is delayed, so a one-way trip between two hosts takes ``delay`` more. The
    bucket holds 5 ms of traffic (64 KiB at least), so the rate holds at the kernel's tick (HZ 250 or more).
    """
    bits = round(rate.m_as("bit/s"))
    burst = max(bits // 8 // 200, 64 * 1024)
    tbf = ("tbf", "rate", f"{bits}bit", "burst", str(burst), "latency", "20ms")
    if delay is None:
        execute("tc", "-n", namespace, "qdisc", "add", "dev", device, "root", "handle", "1:", *tbf)
    else:
        execute("tc", "-n", namespace, "qdisc", "add", "dev", device, "root", "handle", "1:", "netem", "delay",
            f"{delay.m_as('us'):.0f}us")
        execute("tc", "-n", namespace, "qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", *tbf)
