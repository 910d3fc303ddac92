"""The network's bandwidth, probed with iperf3: TCP to a peer ("send") and back ("receive"), with one or more streams.

The lecture's figure between compute and storage nodes: about 110 MiB/s, 1 Gbit/s Ethernet.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import os
import re
import shlex
import socket
import subprocess
import tempfile
import time as clock
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

from probes.core.errors import ProbeError, ToolOutputError
from probes.measure.probe import Output, Probe
from probes.measure.tool import ToolOutput, locate, run_tool, tool_version
from probes.core.units import Metric
from probes.readers import iperf3 as reader

__all__ = ["iperf3_argv", "iperf3_probes", "serve", "serve_forever", "DEFAULT_PORT", "CONNECT_TIMEOUT"]

DEFAULT_PORT = 5201
# Seconds a client waits for the server to accept: an absent peer fails this fast.
CONNECT_TIMEOUT = 3.0
# iperf3 runs every stream in one thread before 3.16, so one process cannot fill a fast link
# with many streams; older versions get one process (and one server port) per stream.
THREADED = (3, 16)
_DIRECTIONS = {"send": "from this host to", "receive": "to this host from"}
# What a client hears from an iperf3 server between two tests, and for how many seconds to ask again:
# a server still finishing the last test says it is busy; a persistent server closes its listening
# socket after each test and opens a new one (esnet/iperf PR 2066), so a client that comes in between
# is refused or reset. A port nothing listens on is refused too, so that wait stays short.
_BETWEEN_TESTS = {"the server is busy running a test": 3.0, "Connection refused": 1.0,
                  "Connection reset by peer": 1.0}


def iperf3_argv(peer: str, *, port: int = DEFAULT_PORT, time: float = 1, streams: int = 1,
                reverse: bool = False) -> tuple[str, ...]:
    """The argv of one TCP test of ``time`` whole seconds printing JSON; ``reverse`` (-R) makes the peer send."""
    if not (time >= 1 and float(time).is_integer()):
        # iperf3 reads -t with atoi: 0.5 becomes 0, which means "run for ever".
        raise ProbeError(f"The iperf3 run time must be a whole number of seconds, at least 1. Got {time!r} instead.")
    if streams < 1:
        raise ProbeError(f"The number of iperf3 streams must be at least 1. Got {streams!r} instead.")
    argv = ("iperf3", "-c", peer, "-p", str(port), "-t", str(int(time)), "-P", str(streams), "-J",
            "--connect-timeout", str(int(CONNECT_TIMEOUT * 1000)))
    return argv + ("-R",) if reverse else argv


def iperf3_probes(peer: str, *, port: int = DEFAULT_PORT, streams: Sequence[int] = (1, 4), time: float = 1.0,
                  directions: Sequence[str] = ("send", "receive")) -> list[Probe]:
    """One probe per direction and stream count, named ``iperf3.<direction>.p<streams>``, in bit/s.

    iperf3 counts whole seconds, so ``time`` is rounded up (at least 1 s). Before iperf3 3.16, n
    streams are n client processes run together, each with one stream to its own server port
    (``port`` ... ``port + n - 1``); their throughputs are summed.
    """
    time = max(1, math.ceil(time))
    threaded = _version(tool_version("iperf3")) >= THREADED
    probes = []
    for direction in directions:
        if direction not in _DIRECTIONS:
            raise ProbeError(f"An iperf3 direction must be 'send' or 'receive'. Got {direction!r} instead.")
        for n in streams:
            ports = (port,) if threaded or n == 1 else tuple(range(port, port + n))
            per = n if len(ports) == 1 else 1
            commands = tuple(iperf3_argv(peer, port=p, time=time, streams=per, reverse=direction == "receive")
                             for p in ports)
            where = f"iperf3 TCP {_DIRECTIONS[direction]} {peer}, {n} stream{'s' if n > 1 else ''}"
            output = Output(f"iperf3.{direction}.p{n}", f"{where}: throughput received", Metric.BANDWIDTH, "bit/s")
            probes.append(Probe(where, "iperf3", commands, (output,), _once(commands, ports, peer, time, output.name),
                                {"peer": peer, "ports": list(ports), "streams": n, "direction": direction,
                                 "time": time}, check=functools.partial(answers, peer, ports[0])))
    return probes


def _once(commands, ports, peer, time, name):
    local = _loopback(peer)

    def once():
        timeout = time + CONNECT_TIMEOUT + 10
        # The seconds spent waiting for servers, not those of tests: with n streams before 3.16, one
        # client may be refused while the others run their whole test, and must still get its retries.
        waited, pause = 0.0, 0.05
        while True:
            if local:  # a server on this host is seen to listen before its clients start, within the same wait
                waited += _await_listening(ports, _BETWEEN_TESTS["Connection refused"] - waited)
            with ThreadPoolExecutor(len(commands)) as pool:
                outputs = list(pool.map(lambda argv: run_tool(argv, timeout=timeout, check=False), commands))
            waits = [limit for said, limit in _BETWEEN_TESTS.items() if any(said in o.stdout for o in outputs)]
            if not waits or waited + pause > max(waits):
                return {name: sum(_throughput(o, peer, p) for o, p in zip(outputs, ports))}
            # every stream again, together: a stream run alone would have the link to itself
            waited, pause = _paused(waited, pause)
    return once


def _paused(waited: float, pause: float) -> tuple[float, float]:
    """Waits ``pause`` before a server is asked again: the seconds waited then, and the next pause (doubling, to 0.4 s)."""
    clock.sleep(pause)
    return waited + pause, min(2 * pause, 0.4)


def answers(peer: str, port: int) -> None:
    """ProbeError at once, saying what to start, when no iperf3 server takes connections at ``peer``:``port``.

    On this host /proc says whether something listens; elsewhere one TCP connection, opened and closed at
    once, before the session's first test (a server that sees it closed goes back to listening). A server still
    ending another client's test refuses or resets for a moment: it is asked again for as long as a test would be."""
    if _loopback(peer):
        if _listens(port):
            return
        reason = "nothing listens on it"
    else:
        waited, pause = 0.0, 0.05
        while True:
            try:
                with socket.create_connection((peer, port), timeout=CONNECT_TIMEOUT):
                    return
            except OSError as exc:
                reason = exc.strerror or str(exc)
            if waited + pause > _BETWEEN_TESTS.get(reason, 0.0):
                break
            waited, pause = _paused(waited, pause)
    raise ProbeError(f"no iperf3 server answers at {peer} port {port} ({reason}): start `iobound probe serve` on {peer}")


def _loopback(peer: str) -> bool:
    """Whether ``peer`` is this host's loopback address, whose listening sockets /proc shows."""
    try:
        return peer == "localhost" or ipaddress.ip_address(peer).is_loopback
    except ValueError:
        return False


def _await_listening(ports: Sequence[int], limit: float) -> float:
    """Wait until something listens on each TCP port of this network namespace, ``limit`` seconds at most; the
    seconds waited. Read from /proc, so no test connection disturbs an iperf3 server between two tests."""
    started = clock.monotonic()
    while not all(_listens(port) for port in ports) and clock.monotonic() - started < limit:
        clock.sleep(0.02)
    return clock.monotonic() - started


def _listens(port: int) -> bool:
    """Whether a TCP socket of this network namespace listens on ``port`` (any process, any address)."""
    try:
        return bool(_listening_sockets("/proc/net", port))
    except OSError:
        return False


def _throughput(output: ToolOutput, peer: str, port: int) -> float:
    """One client's bit/s; any failure names the peer and port, and shows iperf3's stderr if it wrote one."""
    try:
        return reader.received(output.stdout, source=shlex.join(output.argv))
    except ToolOutputError as exc:
        stderr = f" (stderr: {output.stderr.strip()[-300:]})" if output.stderr.strip() else ""
        raise ProbeError(f"iperf3 could not measure {peer} port {port}: {exc.detail}{stderr}") from None


def _version(text: str) -> tuple[int, ...]:
    """``(3, 12)`` for "3.12"; ``(0,)`` for a version not understood, which is then treated as old."""
    found = re.match(r"(\d+)\.(\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else (0,)


@contextmanager
def serve(ports: Iterable[int], *, bind: str | None = None, prefix: Sequence[str] = ()) -> Iterator[list[subprocess.Popen]]:
    """Run ``iperf3 -s -p PORT`` for each port, ready once they listen; all are stopped on leaving, errors too.

    ``prefix`` goes before each server's argv, e.g. ``("ip", "netns", "exec", "ns1")`` to serve inside a namespace.
    """
    locate("iperf3")
    servers = []
    try:
        for port in ports:
            argv = [*prefix, "iperf3", "-s", "-p", str(port), *(("-B", bind) if bind else ())]
            log = tempfile.TemporaryFile("w+")
            servers.append((port, log, subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                        stderr=log, start_new_session=True)))
        for port, log, proc in servers:
            _wait_listening(proc, port, log)
        yield [proc for _, _, proc in servers]
    finally:
        for port, log, proc in servers:
            proc.terminate()
            try:
                proc.wait(2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()


def serve_forever(ports: Iterable[int], *, bind: str | None = None) -> None:
    """Serve iperf3 on ``ports`` until Ctrl-C, then stop them and return; for ``iobound probe serve`` on the peer.

    A client of iperf3 before 3.16 with n streams needs ports ``port`` ... ``port + n - 1``.
    """
    try:
        with serve(ports, bind=bind) as servers:
            while all(proc.poll() is None for proc in servers):
                clock.sleep(0.5)
            stopped = next(proc for proc in servers if proc.poll() is not None)
            raise ProbeError(f"{shlex.join(stopped.args)} stopped with status {stopped.returncode}")
    except KeyboardInterrupt:
        return


def _wait_listening(proc: subprocess.Popen, port: int, log, limit: float = 5.0) -> None:
    """Wait until the server listens on ``port`` (read from /proc, so no test connection disturbs it)."""
    deadline = clock.monotonic() + limit
    while not _listening(proc.pid, port):
        if proc.poll() is not None or clock.monotonic() > deadline:
            log.seek(0)
            said = log.read().strip()[-300:]
            state = (f"stopped with status {proc.returncode}" if proc.poll() is not None
                     else f"is not listening after {limit:g} s")
            raise ProbeError(f"The iperf3 server for port {port} ({shlex.join(proc.args)}) {state}"
                             + (f": {said}" if said else ""))
        clock.sleep(0.02)


def _listening(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds a TCP socket listening on ``port``, in its own network namespace."""
    try:
        sockets = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        return any(f"socket:[{inode}]" in sockets for inode in _listening_sockets(f"/proc/{pid}/net", port))
    except OSError:
        return False


def _listening_sockets(net: str, port: int) -> list[str]:
    """The inodes of the TCP sockets listening on ``port`` in ``net``'s tables (``/proc/net``, ``/proc/<pid>/net``)."""
    inodes = []
    for table in ("tcp", "tcp6"):
        with open(f"{net}/{table}", encoding="ascii") as f:
            for row in f.read().splitlines()[1:]:
                fields = row.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.append(fields[9])
    return inodes
