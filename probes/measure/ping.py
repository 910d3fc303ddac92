"""The network's round-trip time, probed with iputils ping: one request outstanding at a time, as a metadata call is.

The lecture's figure between compute and storage nodes: an RTT of about 0.1 ms, which
allows about 10,000 messages a second.
"""

from __future__ import annotations

import math
import os
import shlex

from probes.core.errors import ProbeError, ToolFailedError, ToolOutputError
from probes.measure.probe import Output, Probe
from probes.measure.tool import run_tool
from probes.core.units import Q_, Metric
from probes.readers import ping as reader

__all__ = ["ping_argv", "ping_probes", "FAST_INTERVAL", "USER_INTERVAL"]

# Seconds between packets: root may send every 2 ms (the lecture floods with -f);
# 0.2 s is the smallest interval older iputils allow other users.
FAST_INTERVAL = 0.002
USER_INTERVAL = 0.2
# Seconds to wait for the last reply after the last packet is sent.
_GRACE = 2


def ping_argv(peer: str, count: int, interval: float) -> tuple[str, ...]:
    """The argv of ``count`` pings ``interval`` seconds apart, with a deadline so an unanswered peer cannot hang it."""
    if count < 1 or not interval > 0:
        raise ProbeError(f"ping needs at least one packet and a positive interval. Got count={count}, interval={interval}.")
    return ("ping", "-n", "-c", str(count), "-i", f"{interval:g}", "-W", str(_GRACE),
            "-w", str(_deadline(count, interval)), peer)


def ping_probes(peer: str, *, count: int | None = None, interval: float | None = None) -> list[Probe]:
    """One probe pinging ``peer`` in batches: each repetition's samples are a batch's mean RTT and 1/that RTT.

    By default a batch is 100 packets 2 ms apart as root, else 10 packets 0.2 s apart. The
    first reply of a batch waits for address resolution and cold caches (20 times the others
    on loopback), so it is left out of the mean: the figure is the steady state.
    """
    root = os.geteuid() == 0
    interval = interval if interval is not None else FAST_INTERVAL if root else USER_INTERVAL
    count = count if count is not None else 100 if root else 10
    argv = ping_argv(peer, count, interval)
    where = f"ping {peer}, {count} packets {interval * 1000:g} ms apart"
    outputs = (Output("ping.rtt", f"{where}: mean round-trip time", Metric.LATENCY, "s"),
               Output("ping.message_rate", f"{where}: messages per second, one outstanding (1 / RTT)",
                      Metric.OPERATION_RATE, "op/s"))

    def once():
        rtt = _mean_rtt(argv, peer, _deadline(count, interval))
        return {"ping.rtt": rtt, "ping.message_rate": 1 / rtt}

    return [Probe(where, "ping", (argv,), outputs, once, {"peer": peer, "count": count, "interval": interval})]


def _mean_rtt(argv: tuple[str, ...], peer: str, deadline: int) -> float:
    """Run ping once; its exit status is 1 when a reply is missing, 2 when it cannot ping at all."""
    output = run_tool(argv, timeout=deadline + 5, check=False)
    if output.returncode not in (0, 1):
        raise ToolFailedError(argv, output.returncode, output.stderr or output.stdout)
    try:
        pings = reader.parse(output.stdout, source=shlex.join(argv))  # the reader a saved output goes through
    except ToolOutputError as exc:
        if output.returncode == 1:
            raise ProbeError(f"no reply from {peer} within {deadline} s") from None
        raise ProbeError(f"ping {peer} printed nothing iobound can read: {exc}") from None
    if len(pings) != 1:
        raise ProbeError(f"ping {peer} printed {len(pings)} pings' output; one was run")
    replies = pings[0]
    seconds = Q_(1, replies.unit).m_as("s")
    steady = replies.samples[1:] or replies.samples
    return seconds * sum(steady) / len(steady)


def _deadline(count: int, interval: float) -> int:
    """Whole seconds (all ping accepts) for sending ``count`` packets and hearing the last reply."""
    return math.ceil(count * interval) + _GRACE

