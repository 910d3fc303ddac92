"""A client → proxy → server chain on loopback, timed one request at a time: the test data of tests/test_chain.py.

The protocol: a request is an 8-byte header (the payload's length b, network order) and b
bytes; the server answers each one with its header (the acknowledgement). The proxy stores and
forwards: it receives a request whole, then sends it on, waits for the server's acknowledgement
and passes it back. The client keeps one request in flight and times each from the moment it
starts sending to the acknowledgement's arrival, on two connections taken in turn: one to the
server (direct) and one through the proxy (proxied). Every socket has TCP_NODELAY.

Hops may use different request sizes (``--hops``, issue 32): a connection to the proxy opens
with a header giving the size the server reads (0: each request whole), and the proxy passes
each request on in pieces of at most that size, each acknowledged, before it acknowledges the
request. A case ``write/buffer/forward`` has the client write ``write`` bytes at a time into
requests of the proxy's ``buffer`` (several writes collected into one request, or one write
split into several), which the proxy forwards in requests of ``forward``; its unit, timed as
one, is max(write, buffer) bytes.

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
from typing import Callable, Iterator, Sequence

# format history:
#   1.0  first version
#   1.1  batches may hold "hops": per case "write/buffer/forward" (bytes), the time of one unit of max(write, buffer)
#   1.2  provenance "writes": how a message was cut into writes (before 1.2 after every chunk of the whole message, so
#        a request written b bytes at a time ended in an 8-byte write; now the header rides with the first chunk)
FORMAT, FORMAT_VERSION = "iobound-tests/chain", "1.2"
READABLE = ("1.0", "1.1", FORMAT_VERSION)
WRITES = "the header with the first chunk of the payload"

HEADER = struct.Struct("!Q")
LARGEST = 1 << 20
SIZES = tuple(1 << k for k in range(6, 21))  # 64 B ... 1 MiB
RATE = 25e6  # B/s on every link (200 Mbit/s): 4 KiB takes 164 µs, a direct request's fixed cost ~12 µs
CHUNK = 16384  # bytes written at once by a shaped writer
SPIN = 300e-6  # the last stretch before a write's time is spun, not slept: a sleep wakes up to ~50 µs late
LOCALHOST = "127.0.0.1"
# (write, buffer, forward) in bytes: writes collected into a larger buffer, or split over smaller ones, and the
# buffer forwarded whole, in pieces, or to a server that reads more than it is given; 2 KiB / 4 KiB / 512 B is issue 32's
HOPS = ((2048, 4096, 512), (512, 4096, 4096), (4096, 4096, 1024), (65536, 16384, 4096), (1024, 65536, 8192),
        (8192, 8192, 65536), (256, 1024, 256), (16384, 262144, 262144), (4096, 512, 4096))


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


def send(sock: socket.socket, data: memoryview, rate: float, chunk: int = CHUNK) -> None:
    """Write a message (a header and its payload) as a wire of ``rate`` B/s would pass it on: each ``chunk`` of the
    payload when its last byte would have crossed, the header with the first.

    The wire starts the message when this is called; a chunk written late (the process was not
    running) does not delay the next one beyond its own time. The header rides with the first
    chunk, as a writev of header and payload would. Before (format 1.2) a message was cut after
    every ``chunk`` bytes of the whole, so a b-byte request written b bytes at a time ended in a
    write of 8 bytes: one more system call and wake-up of the reader, which the proxy, writing
    each piece whole, did not make (a direct 512 B request took 67 µs instead of 55 on the busy
    machine of 2026-11-28, and the fit's t0 carried those 12 µs).
    """
    start, sent = time.perf_counter(), 0
    while sent < len(data):
        end = min(sent + chunk + (0 if sent else HEADER.size), len(data))
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
    """The proxy: receive each request whole, send it on to the server at ``upstream`` in pieces of the size the
    connection's first header gives (0: whole), each acknowledged, then acknowledge the request."""
    def handle(conn: socket.socket) -> None:
        view = memoryview(bytearray(HEADER.size + LARGEST))
        ack = memoryview(bytearray(HEADER.size))
        with conn, _connected(upstream) as up:
            _exactly(conn, ack)
            forward = HEADER.unpack_from(ack)[0] or LARGEST
            while (n := _receive(conn, view)) >= 0:
                for start in range(0, n, forward):
                    piece = min(forward, n - start)
                    HEADER.pack_into(view, start, piece)  # over the bytes already sent on
                    send(up, view[start:start + HEADER.size + piece], rate)
                    _exactly(up, ack)
                HEADER.pack_into(ack, 0, n)
                send(conn, ack, rate)

    _each_connection(handle)


Hop = tuple[int, int, int]  # the client's write, the proxy's buffer and the size it forwards, in bytes


def client(ports: dict[str, int], rate: float, sizes: Sequence[int], passes: int, least_count: int,
           least_seconds: float, hops: Sequence[Hop] = ()) -> dict[str, dict[str, list[list[float]]]]:
    """Time requests of each size on each path, one in flight, and each case of ``hops`` through the proxy: ``passes``
    rounds over the cases.

    In each round each case (path and size, or hop sizes) gets one batch: units until at least
    ``least_count`` are made and ``least_seconds`` have passed. The order of the cases turns from
    round to round (up, then down), so that a slow spell of the machine falls on all of them. A
    round of warm-up, not kept, comes first. Returns, per path (and "hops") and case, one
    ``[count, seconds, median, least]`` per batch: its units, their total time, and the median
    and least time of one, in seconds.
    """
    _precise_timers()
    socks = {name: _connected(port) for name, port in ports.items()}
    socks["proxied"].sendall(HEADER.pack(0))  # passes each request on whole
    ack = memoryview(bytearray(HEADER.size))

    def requests(sock: socket.socket, payload: int, write: int, count: int) -> Callable[[], None]:
        """One unit: ``count`` requests of ``payload`` bytes, each written ``write`` bytes at a time and acknowledged."""
        message = memoryview(HEADER.pack(payload) + bytes(payload))

        def unit() -> None:
            for _ in range(count):
                send(sock, message, rate, min(write, CHUNK))
                _exactly(sock, ack)
                if ack != message[:HEADER.size]:
                    raise ValueError(f"the acknowledgement of a {payload}-byte request was {bytes(ack)!r}")
        return unit

    cases = [(name, str(b), requests(socks[name], b, b, 1)) for b in sizes for name in ports]
    forwarding: dict[int, socket.socket] = {}  # per size the proxy forwards in, a connection that asked for it
    for write, buffer, forward in hops:
        if forward not in forwarding:
            forwarding[forward] = _connected(ports["proxied"])
            forwarding[forward].sendall(HEADER.pack(forward))
        cases.append(("hops", f"{write}/{buffer}/{forward}",
                      requests(forwarding[forward], buffer, write, max(1, write // buffer))))

    def batch(unit: Callable[[], None], count: int, seconds: float) -> list[float]:
        times, total = [], 0.0
        while len(times) < count or total < seconds:
            start = time.perf_counter()
            unit()
            times.append(time.perf_counter() - start)
            total += times[-1]
        return [len(times), total, statistics.median(times), min(times)]

    for _, _, unit in cases:
        batch(unit, 2, 0.0)
    kept: dict[str, dict[str, list[list[float]]]] = {}
    for name, key, _ in cases:
        kept.setdefault(name, {})[key] = []
    for round_ in range(passes):
        for name, key, unit in cases if round_ % 2 == 0 else reversed(cases):
            kept[name][key].append(batch(unit, least_count, least_seconds))
    for sock in [*socks.values(), *forwarding.values()]:
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
                least_seconds: float = 0.01, hops: Sequence[Hop] = (),
                timeout: float = 300) -> dict[str, dict[str, list[list[float]]]]:
        """Run the client in its own process; its batches, as :func:`client` returns them."""
        argv = [*_script(), "client", "--direct", str(self.server), "--proxied", str(self.proxy), "--rate", str(self.rate),
                "--sizes", ",".join(map(str, sizes)), "--passes", str(passes), "--least-count", str(least_count),
                "--least-seconds", str(least_seconds), "--hops", _hops_text(hops)]
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


def spin(cpu: int) -> None:
    """Keep ``cpu`` from halting: run on it without end at the lowest priority Linux has (SCHED_IDLE), which any task
    that wakes there takes over at once."""
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    while True:
        pass


@contextmanager
def spinning() -> Iterator[None]:
    """A :func:`spin` on every CPU this process may use, as long as this lasts: a CPU that always has something to
    run never halts, where no cpuidle driver lets :func:`awake` keep it polling. Tried for issue 32's recording
    (``record --spin``); see tests/data/chain/README.md for what it changed."""
    with ExitStack() as stack:
        for cpu in sorted(os.sched_getaffinity(0)):
            process = subprocess.Popen([*_script(), "spin", str(cpu)])
            stack.callback(_stop, process)
        yield


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


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
        _stop(process)


# ---- records --------------------------------------------------------------------------------------------------------

def record(made: Chain, idle: bool = False, spin: bool = False, **options) -> dict:
    """A measurement of ``made`` as a versioned document, with where and how it was made.

    The CPUs are kept from halting (:func:`awake`) unless ``idle``; with ``spin``, a spinner runs on each
    (:func:`spinning`).
    """
    started = time.monotonic()
    with ExitStack() as stack:
        held = False if idle else stack.enter_context(awake()) is None
        if spin:
            stack.enter_context(spinning())
        batches = made.measure(**options)
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "provenance": {
            "host": platform.node(), "kernel": platform.release(), "python": platform.python_version(),
            "cpus": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()],
            "made": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - started, 1), "tool": "tests/chain.py",
            "links": f"loopback TCP, each writer shaped in the tool to {made.rate:g} B/s", "rate": made.rate,
            "cpus_kept_awake": held, "spinners": spin, "nice": os.getpriority(os.PRIO_PROCESS, 0), "writes": WRITES,
            "options": {**options, "hops": _hops_text(options.get("hops", ())).split(",") if options.get("hops") else []},
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
    if doc.get("format") != FORMAT or doc.get("format_version") not in READABLE:
        raise ValueError(f"{path} is not a {FORMAT} {' or '.join(READABLE)} document: "
                         f"got {doc.get('format')!r} {doc.get('format_version')!r}")
    return doc


# ---- command line ---------------------------------------------------------------------------------------------------

def _hops_text(hops: Sequence[Hop]) -> str:
    return ",".join("/".join(map(str, hop)) for hop in hops)


def _hops(text: str) -> list[Hop]:
    """``2048/4096/512,...`` as (write, buffer, forward) cases: sizes from 1 B to LARGEST."""
    hops = [tuple(int(x) for x in case.split("/")) for case in text.split(",") if case]
    if not all(len(hop) == 3 and all(0 < x <= LARGEST for x in hop) for hop in hops):
        raise argparse.ArgumentTypeError(f"cases are write/buffer/forward, each from 1 to {LARGEST} B: got {text!r}")
    return hops


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tests/chain.py", description=__doc__.splitlines()[0])
    roles = parser.add_subparsers(dest="role", required=True)
    serve_parser, relay_parser = roles.add_parser("serve"), roles.add_parser("relay")
    roles.add_parser("spin").add_argument("cpu", type=int)
    relay_parser.add_argument("upstream", type=int, help="the server's port")
    client_parser, record_parser = roles.add_parser("client"), roles.add_parser("record")
    client_parser.add_argument("--direct", type=int, required=True, help="the server's port")
    client_parser.add_argument("--proxied", type=int, required=True, help="the proxy's port")
    record_parser.add_argument("-o", "--output", required=True)
    record_parser.add_argument("--idle", action="store_true", help="let the CPUs halt when idle (see awake())")
    record_parser.add_argument("--spin", action="store_true", help="a spinner at SCHED_IDLE on each CPU (see spinning())")
    for p in (serve_parser, relay_parser, client_parser, record_parser):
        p.add_argument("--rate", type=float, default=RATE, help="B/s of every link (default %(default)g)")
    for p in (client_parser, record_parser):
        p.add_argument("--sizes", default=",".join(map(str, SIZES)))
        p.add_argument("--passes", type=int, default=9)
        p.add_argument("--least-count", type=int, default=2)
        p.add_argument("--least-seconds", type=float, default=0.01)
        p.add_argument("--hops", nargs="?", default="", const=_hops_text(HOPS), type=_hops,
                       help="cases write/buffer/forward in bytes, by commas (alone: %(const)s)")
    args = parser.parse_args(argv)
    if args.role == "spin":
        spin(args.cpu)
    elif args.role == "serve":
        serve(args.rate)
    elif args.role == "relay":
        relay(args.upstream, args.rate)
    else:
        options = dict(sizes=[int(x) for x in args.sizes.split(",")], passes=args.passes,
                       least_count=args.least_count, least_seconds=args.least_seconds, hops=args.hops)
        if args.role == "client":
            json.dump(client({"direct": args.direct, "proxied": args.proxied}, args.rate, **options), sys.stdout)
        else:
            with chain(args.rate) as made:
                doc = record(made, args.idle, args.spin, **options)
            Path(args.output).write_text(dumps(doc), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
