"""Probing a running lab from inside its namespaces: iperf3 between its hosts, one probe per host group and direction.

Each host's link is measured against a peer whose link is at least as fast (a host of the other
role where there is one, else one of its own), so that the figure is the host's own link. A
group's probe takes its members in turn, one per repetition, so that its figure spans them.
``send`` is what a member sends (a client's writes, a server's reads), ``receive`` what it receives.
"""

from __future__ import annotations

import itertools
import os
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Iterator

from probes.core.errors import ProbeError
from probes.lab.layout import Lab
from probes.lab.spec import Host, HostGroup, Role
from probes.lab.sshd_namespace import StepFailed, join
from probes.measure.iperf3 import DEFAULT_PORT, iperf3_probes, serve
from probes.measure.probe import Output, Probe

__all__ = ["Plan", "plan", "peer", "inside", "serving", "nic_measurements"]

# The capacity each direction of a member's test measures, by the member's role: a client sends what it writes.
_KEYS = {Role.CLIENT: {"send": "write_nic", "receive": "read_nic"},
         Role.SERVER: {"send": "read_nic", "receive": "write_nic"}}
_ARROWS = {"send": "->", "receive": "<-"}


@dataclass(frozen=True)
class Plan:
    """What ``lab probe`` runs: the probes, the hosts that serve iperf3 for them, and why a group is left out."""

    probes: tuple[Probe, ...]
    peers: tuple[Host, ...]
    notes: tuple[str, ...]


def nic_measurements(group: HostGroup) -> dict[str, str]:
    """The NIC capacities of ``group`` (``write_nic``, ``read_nic``) and the measurements lab probe names them by."""
    return {key: f"{group.name}.iperf3.{direction}.p1" for direction, key in _KEYS[group.role].items()}


def peer(lab: Lab, host: Host) -> Host | None:
    """The host to probe ``host``'s link against: one whose link is at least as fast, of the other role where there is
    one; the hosts of a role take the candidates in turn. None if no other host's link is as fast."""
    fast = [h for h in lab.hosts if h.name != host.name and h.rate >= host.rate]
    pool = [h for h in fast if h.role is not host.role] or fast
    return pool[(int(host.name[1:]) - 1) % len(pool)] if pool else None


def plan(lab: Lab, *, runtime: float, port: int = DEFAULT_PORT) -> Plan:
    """A send and a receive probe of each group of ``lab`` (iperf3, one stream, ``runtime`` seconds a repetition)."""
    probes, peers, notes = [], {}, []
    for group in lab.groups:
        pairs = [(host, peer(lab, host)) for host in group.hosts]
        alone = next((host for host, other in pairs if other is None), None)
        if alone is not None:
            notes.append(f"{group.name}: no other host's link is as fast as {alone.name}'s ({alone.rate:~P}), so no "
                         "one peer can fill it; its NIC stays the spec's (the payload share of the tc tbf rate)")
            continue
        peers |= {other.name: other for _, other in pairs}
        for direction in _KEYS[group.role]:
            members = [(host, other, iperf3_probes(other.address, port=port, streams=(1,), time=runtime,
                                                   directions=(direction,))[0]) for host, other in pairs]
            probes.append(_in_turn(group, direction, members))
    return Plan(tuple(probes), tuple(peers.values()), tuple(notes))


@contextmanager
def serving(hosts: tuple[Host, ...], port: int = DEFAULT_PORT) -> Iterator[None]:
    """An iperf3 server in each of ``hosts``' namespaces, on its address, stopped on leaving (errors too)."""
    with ExitStack() as stack:
        for host in hosts:
            stack.enter_context(serve([port], bind=host.address, prefix=("ip", "netns", "exec", host.namespace)))
        yield


@contextmanager
def inside(namespace: str) -> Iterator[None]:
    """This thread in ``namespace``'s network while the block runs (what it starts and connects is there), then back.

    Raises
    ------
    ProbeError
        If the namespace is gone.
    """
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            join(f"/run/netns/{namespace}")
        except StepFailed as exc:
            raise ProbeError(f"cannot probe from {namespace}: {exc} (iobound lab status shows the lab)") from None
        try:
            yield
        finally:
            join(home)
    finally:
        os.close(home)


def _in_turn(group: HostGroup, direction: str, members: list[tuple[Host, Host, Probe]]) -> Probe:
    """One probe of ``group``: each repetition runs the next member's iperf3 probe, from inside its namespace."""
    first = members[0][2]
    name = nic_measurements(group)[_KEYS[group.role][direction]]
    pairs = ", ".join(f"{host.name}{_ARROWS[direction]}{other.name}" for host, other, _ in members)
    what = "what each sends to its peer" if direction == "send" else "what each receives from its peer"
    output = Output(name, f"iperf3 TCP, 1 stream, {what} ({pairs}), one host a repetition in turn",
                    first.outputs[0].metric, first.outputs[0].unit)
    turn = itertools.cycle(members)

    def once() -> dict[str, float]:
        host, _, probe = next(turn)
        with inside(host.namespace):
            return {name: probe.once()[probe.name]}

    def check() -> None:
        for host, _, probe in members:
            with inside(host.namespace):
                probe.check()

    commands = tuple(("ip", "netns", "exec", host.namespace, *command) for host, _, probe in members
                     for command in probe.commands)
    parameters = {"group": group.name, "hosts": [h.name for h, _, _ in members],
                  "peers": [p.name for _, p, _ in members], "direction": direction, "streams": 1,
                  "time": first.parameters["time"]}
    return Probe(f"{group.name} {direction} ({pairs})", "iperf3", commands, (output,), once, parameters, check)
