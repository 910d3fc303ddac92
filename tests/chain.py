"""A client → proxy → server chain on loopback, timed one request at a time: the test data of tests/test_chain.py.

The protocol: a request is an 8-byte header (the payload's length b, network order) and b
bytes; the server answers each one with its header (the acknowledgement). The proxy stores and
forwards: it receives a request whole, then sends it on, waits for the server's acknowledgement
and passes it back. The client keeps one request in flight and times each from the moment it
starts sending to the acknowledgement's arrival, on two connections taken in turn: one to the
server (direct) and one through the proxy (proxied). Every socket has TCP_NODELAY.

Every link is shaped in the tool, to the same ``rate``: whatever writes to a socket (the
client, the proxy both ways, the server's acknowledgements) writes a message in chunks, each
when its last byte would have left a wire of that rate that started the message when the write
began: a message of n bytes leaves n / rate after its writer starts it. Like a real wire, and
unlike a token bucket, an idle link saves up nothing. tc tbf on veth pairs between namespaces
(200 Mbit/s, burst 3,200 B) was tried first: it lets the first kilobytes after an idle spell
through at once, and as each of the proxy's links rests while the other one works, the proxied
chain took 165-200 µs less per request than two direct hops from 8 to 128 KiB, and at 4 KiB
about as long as one direct hop (176 against 172 µs).

The CPUs are kept from halting while a run is recorded (:func:`awake`; ``--idle`` lets them):
on this virtual machine a process woken on a halted CPU waits some 75 µs for the hypervisor,
against 12 µs for a whole direct request, and the proxied chain's three processes meet that far
more often than the direct path's two.

The roles run as ``python tests/chain.py serve|relay|client`` (stdlib only, each in its own
process, so no two share an interpreter lock); ``python tests/chain.py record -o FILE`` starts
them, measures, and writes the versioned JSON kept in tests/data/chain/.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Sequence

# format history:
#   1.0  first version
FORMAT, FORMAT_VERSION = "iobound-tests/chain", "1.0"

HEADER = struct.Struct("!Q")
LARGEST = 1 << 20
SIZES = tuple(1 << k for k in range(6, 21))  # 64 B ... 1 MiB
RATE = 25e6  # B/s on every link (200 Mbit/s): 4 KiB takes 164 µs, a direct request's fixed cost ~12 µs
CHUNK = 16384  # bytes written at once by a shaped writer
SPIN = 300e-6  # the last stretch before a write's time is spun, not slept: a sleep wakes up to ~50 µs late
LOCALHOST = "127.0.0.1"


# ---- the three roles ------------------------------------------------------------------------------------------------

def _precise_timers() -> None:
    """Ask Linux to wake this process's sleeps within 1 ns of their time, not its default 50 µs slack."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK
    except (OSError, AttributeError):
        pass


def _until(deadline: float) -> None:
    while (left := deadline - time.perf_counter()) > 0:
        if left > SPIN:
            time.sleep(left - SPIN)


def send(sock: socket.socket, data: memoryview, rate: float) -> None:
    """Write ``data`` as a wire of ``rate`` B/s would pass it on: each chunk when its last byte would have crossed.

    The wire starts the message when this is called; a chunk written late (the process was not
    running) does not delay the next one beyond its own time.
    """
    start, sent = time.perf_counter(), 0
    while sent < len(data):
        end = min(sent + CHUNK, len(data))
        _until(start + end / rate)
        sock.sendall(data[sent:end])
        sent = end


def _receive(sock: socket.socket, view: memoryview) -> int:
    """Receive one request (header and payload) into the start of ``view``; its payload length, or -1 at end of stream.

    One request is in flight at a time, so the stream holds nothing after it.
    """
    got, need = 0, HEADER.size
    while got < need:
        n = sock.recv_into(view[got:] if need == HEADER.size else view[got:need])  # a small one: one call
        if n == 0:
            if got:
                raise ConnectionError(f"stream closed {got} bytes into a request")
            return -1
        got += n
        if need == HEADER.size and got >= HEADER.size:
            need += HEADER.unpack_from(view)[0]
            if need > len(view) or got > need:
                raise ValueError(f"a request of {need - HEADER.size} bytes (at most {LARGEST}) came with {got} bytes")
    return need - HEADER.size


def _exactly(sock: socket.socket, view: memoryview) -> None:
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            raise ConnectionError("stream closed before the acknowledgement")
        got += n


def _connected(port: int) -> socket.socket:
    sock = socket.create_connection((LOCALHOST, port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _each_connection(handle) -> None:
    """Listen on a free loopback port, say ``ready PORT`` on stdout, and serve each connection in a thread until killed."""
    _precise_timers()
    listener = socket.create_server((LOCALHOST, 0))
    print("ready", listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def serve(rate: float) -> None:
    """The server: answer each request with its 8-byte header."""
    def handle(conn: socket.socket) -> None:
        view = memoryview(bytearray(HEADER.size + LARGEST))
        with conn:
            while _receive(conn, view) >= 0:
                send(conn, view[:HEADER.size], rate)

    _each_connection(handle)


def relay(upstream: int, rate: float) -> None:
    """The proxy: receive each request whole, send it on to the server at ``upstream``, and pass its acknowledgement back."""
    def handle(conn: socket.socket) -> None:
        view = memoryview(bytearray(HEADER.size + LARGEST))
        ack = memoryview(bytearray(HEADER.size))
        with conn, _connected(upstream) as up:
            while (n := _receive(conn, view)) >= 0:
                send(up, view[:HEADER.size + n], rate)
                _exactly(up, ack)
                send(conn, ack, rate)

    _each_connection(handle)


def client(ports: dict[str, int], rate: float, sizes: Sequence[int], passes: int, least_count: int,
           least_seconds: float) -> dict[str, dict[str, list[list[float]]]]:
    """Time requests of each size on each path, one in flight: ``passes`` rounds over sizes and paths.

    In each round each (size, path) gets one batch: requests until at least ``least_count`` are
    made and ``least_seconds`` have passed. The order of the paths and of the sizes (up, then
    down) turns from round to round, so that a slow spell of the machine falls on all of them.
    A round of warm-up, not kept, comes first. Returns, per path and size, one
    ``[count, seconds, median, least]`` per batch: its requests, their total time, and the
    median and least time of one, in seconds.
    """
    _precise_timers()
    socks = {name: _connected(port) for name, port in ports.items()}
    messages = {b: memoryview(HEADER.pack(b) + bytes(b)) for b in sizes}
    ack = memoryview(bytearray(HEADER.size))

    def batch(name: str, b: int, count: int, seconds: float) -> list[float]:
        sock, message, times, total = socks[name], messages[b], [], 0.0
        while len(times) < count or total < seconds:
            start = time.perf_counter()
            send(sock, message, rate)
            _exactly(sock, ack)
            times.append(time.perf_counter() - start)
            total += times[-1]
            if ack != message[:HEADER.size]:
                raise ValueError(f"{name}: the acknowledgement of a {b}-byte request was {bytes(ack)!r}")
        return [len(times), total, statistics.median(times), min(times)]

    for name in ports:
        for b in sizes:
            batch(name, b, 2, 0.0)
    kept: dict[str, dict[str, list[list[float]]]] = {name: {str(b): [] for b in sizes} for name in ports}
    for round_ in range(passes):
        for b in sizes if round_ % 2 == 0 else reversed(sizes):
            for name in ports if round_ % 2 == 0 else reversed(list(ports)):
                kept[name][str(b)].append(batch(name, b, least_count, least_seconds))
    for sock in socks.values():
        sock.close()
    return kept


# ---- running the chain ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Chain:
    """A running chain: the ports of its server and proxy on loopback, and its links' rate in B/s."""

    server: int
    proxy: int
    rate: float

    def measure(self, sizes: Sequence[int] = SIZES, passes: int = 9, least_count: int = 2,
                least_seconds: float = 0.01, timeout: float = 300) -> dict[str, dict[str, list[list[float]]]]:
        """Run the client in its own process; its batches, as :func:`client` returns them."""
        argv = [*_script(), "client", "--direct", str(self.server), "--proxied", str(self.proxy), "--rate", str(self.rate),
                "--sizes", ",".join(map(str, sizes)), "--passes", str(passes), "--least-count", str(least_count),
                "--least-seconds", str(least_seconds)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"the chain's client failed: {done.stderr.strip()}")
        return json.loads(done.stdout)


CPUIDLE = Path("/sys/devices/system/cpu/cpuidle/current_driver")


@contextmanager
def awake() -> Iterator[str | None]:
    """Keep the CPUs from halting when idle, as long as this lasts; yields None when they are, else why they are not.

    Linux keeps every CPU in its shallowest idle state (haltpoll's polling on the VM the
    recording was made on) while /dev/cpu_dma_latency is held open with 0 in it, as benchmarks
    that time microseconds do. That takes root, and a cpuidle driver: without one (``none``) an
    idle CPU halts whatever is asked. On a virtual machine a process woken on a halted CPU waits
    for the hypervisor to run that CPU again: on an idle machine the proxied chain's fixed cost
    was 100 µs instead of 23.
    """
    try:
        driver = CPUIDLE.read_text(encoding="ascii").strip()
    except OSError:
        driver = "none"
    if driver == "none":
        yield (f"this machine has no cpuidle driver ({CPUIDLE}: none), so an idle CPU halts whatever "
               "/dev/cpu_dma_latency asks")
        return
    try:
        fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    except OSError as exc:
        yield f"holding /dev/cpu_dma_latency needs root ({exc.strerror})"
        return
    try:
        os.write(fd, struct.pack("i", 0))
        yield None
    finally:
        os.close(fd)


@contextmanager
def chain(rate: float = RATE) -> Iterator[Chain]:
    """The server and the proxy running on loopback, stopped on exit."""
    with ExitStack() as stack:
        server = stack.enter_context(_started("serve", "--rate", str(rate)))
        proxy = stack.enter_context(_started("relay", str(server), "--rate", str(rate)))
        yield Chain(server, proxy, rate)


def _script() -> list[str]:
    return [sys.executable, str(Path(__file__).resolve())]


@contextmanager
def _started(role: str, *argv: str) -> Iterator[int]:
    """Start a role and give its port; it is stopped, by its own process handle, on exit."""
    process = subprocess.Popen([*_script(), role, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        word, _, port = process.stdout.readline().partition(" ")
        if word != "ready":
            process.kill()
            raise RuntimeError(f"the chain's {role} did not start: {process.stderr.read().strip()}")
        yield int(port)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---- records --------------------------------------------------------------------------------------------------------

def record(made: Chain, idle: bool = False, **options) -> dict:
    """A measurement of ``made`` as a versioned document, with where and how it was made.

    The CPUs are kept from halting (:func:`awake`) unless ``idle``.
    """
    started = time.monotonic()
    with ExitStack() as stack:
        held = False if idle else stack.enter_context(awake()) is None
        batches = made.measure(**options)
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "provenance": {
            "host": platform.node(), "kernel": platform.release(), "python": platform.python_version(),
            "cpus": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()],
            "made": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - started, 1), "tool": "tests/chain.py",
            "links": f"loopback TCP, each writer shaped in the tool to {made.rate:g} B/s", "rate": made.rate,
            "cpus_kept_awake": held,
            "options": options,
        },
        "batches": batches,
    }


def dumps(doc: dict) -> str:
    """A document as JSON text, one line per path and size."""
    head = json.dumps({key: value for key, value in doc.items() if key != "batches"}, indent=1)
    paths = [f'  "{name}": {{\n' + ",\n".join(f'   "{b}": {json.dumps(runs)}' for b, runs in per_size.items()) + "\n  }"
             for name, per_size in doc["batches"].items()]
    return head[:-2] + ',\n "batches": {\n' + ",\n".join(paths) + "\n }\n}\n"


def load(path: str | Path) -> dict:
    """A document :func:`record` wrote; refused if it is of another format or version."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT or doc.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path} is not a {FORMAT} {FORMAT_VERSION} document: "
                         f"got {doc.get('format')!r} {doc.get('format_version')!r}")
    return doc


# ---- command line ---------------------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tests/chain.py", description=__doc__.splitlines()[0])
    roles = parser.add_subparsers(dest="role", required=True)
    serve_parser, relay_parser = roles.add_parser("serve"), roles.add_parser("relay")
    relay_parser.add_argument("upstream", type=int, help="the server's port")
    client_parser, record_parser = roles.add_parser("client"), roles.add_parser("record")
    client_parser.add_argument("--direct", type=int, required=True, help="the server's port")
    client_parser.add_argument("--proxied", type=int, required=True, help="the proxy's port")
    record_parser.add_argument("-o", "--output", required=True)
    record_parser.add_argument("--idle", action="store_true", help="let the CPUs halt when idle (see awake())")
    for p in (serve_parser, relay_parser, client_parser, record_parser):
        p.add_argument("--rate", type=float, default=RATE, help="B/s of every link (default %(default)g)")
    for p in (client_parser, record_parser):
        p.add_argument("--sizes", default=",".join(map(str, SIZES)))
        p.add_argument("--passes", type=int, default=9)
        p.add_argument("--least-count", type=int, default=2)
        p.add_argument("--least-seconds", type=float, default=0.01)
    args = parser.parse_args(argv)
    if args.role == "serve":
        serve(args.rate)
    elif args.role == "relay":
        relay(args.upstream, args.rate)
    else:
        options = dict(sizes=[int(x) for x in args.sizes.split(",")], passes=args.passes,
                       least_count=args.least_count, least_seconds=args.least_seconds)
        if args.role == "client":
            json.dump(client({"direct": args.direct, "proxied": args.proxied}, args.rate, **options), sys.stdout)
        else:
            with chain(args.rate) as made:
                doc = record(made, args.idle, **options)
            Path(args.output).write_text(dumps(doc), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
