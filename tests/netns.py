"""A network namespace joined to this one by a veth pair shaped with tc tbf: a link of known rate for network probe tests.

Traffic stays on the veth pair: the namespace has no other link and no route out.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import socket
import subprocess
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Iterator

from probes.measure.iperf3 import serve

_COUNTER = itertools.count()


@dataclass(frozen=True)
class Link:
    """The namespace, both ends' addresses, the first port its iperf3 servers listen on, and an address nothing answers."""

    namespace: str
    host_address: str
    peer_address: str
    port: int
    silent_address: str


def unavailable() -> str | None:
    """Why namespaces cannot be made here, or None if they can."""
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    missing = [tool for tool in ("ip", "tc", "iperf3") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed"
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return None if done.returncode == 0 else f"'ip netns' is unavailable: {done.stderr.strip()}"


@contextmanager
def shaped_link(rate: str = "1gbit", port: int = 5201, servers: int = 2) -> Iterator[Link]:
    """A namespace ``iob-<pid>-<n>`` behind a veth pair limited to ``rate`` each way, with iperf3 servers in it.

    The servers listen on ``port`` ... ``port + servers - 1``, as iperf3 before 3.16 needs for that many streams.

    Addresses are 10.199.x.1 (this side) and .2 (the namespace) in a /30 no interface here uses;
    10.199.x.4/30 is routed into the namespace and dropped there. Everything is removed on exit.
    """
    n = next(_COUNTER)
    namespace, host_end, peer_end = f"iob-{os.getpid()}-{n}", f"iobh{os.getpid()}-{n}", f"iobp{os.getpid()}-{n}"
    net = _free_net()
    link = Link(namespace, f"{net}.1", f"{net}.2", port, f"{net}.6")
    with ExitStack() as cleanup:
        _ip("netns", "add", namespace)
        cleanup.callback(subprocess.run, ["ip", "netns", "delete", namespace], capture_output=True)
        _ip("link", "add", host_end, "type", "veth", "peer", "name", peer_end, "netns", namespace)
        cleanup.callback(subprocess.run, ["ip", "link", "delete", host_end], capture_output=True)
        for side, end, address in ((), host_end, link.host_address), (("-n", namespace), peer_end, link.peer_address):
            _ip(*side, "address", "add", f"{address}/30", "dev", end)
            _ip(*side, "link", "set", end, "up")
            _run("tc", *side, "qdisc", "add", "dev", end, "root", "tbf", "rate", rate, "burst", "256kb", "latency", "10ms")
        _ip("-n", namespace, "link", "set", "lo", "up")
        _ip("route", "add", f"{net}.4/30", "via", link.peer_address, "dev", host_end)
        _ip("-n", namespace, "route", "add", "blackhole", f"{net}.4/30")
        cleanup.enter_context(serve(range(port, port + servers), bind=link.peer_address,
                                    prefix=("ip", "netns", "exec", namespace)))
        yield link


def _free_net() -> str:
    """``10.199.x`` for the first x whose addresses no interface or route here mentions."""
    used = subprocess.run(["ip", "-4", "-o", "address"], capture_output=True, text=True).stdout \
        + subprocess.run(["ip", "-4", "route"], capture_output=True, text=True).stdout
    for x in itertools.chain(range(os.getpid() % 256, 256), range(0, os.getpid() % 256)):
        if f"10.199.{x}." not in used:
            return f"10.199.{x}"
    raise RuntimeError("every 10.199.x.0/24 network is in use here")


def _ip(*args: str) -> None:
    _run("ip", *args)


def _run(*argv: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")


def free_ports(count: int) -> range:
    """``count`` consecutive loopback ports nothing listens on, picked at random so test runs side by side do not collide.

    They lie below Linux's ephemeral range (32768 up), where a client's connection of another
    test could take a port between this check and the server's bind.
    """
    for _ in range(50):
        first = random.randrange(20000, 32000 - count)
        try:
            for port in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return range(first, first + count)
    raise RuntimeError(f"no {count} free consecutive ports on loopback")
