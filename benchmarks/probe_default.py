"""Benchmark: the default single-node probe set, its time and precision, and its agreement with long runs.

Runs ``iobound probe`` as a user would (tmpfs both ways, read probes on one device, ping
and iperf3 to a loopback peer) and prints how long it took and how many figures reached
their target; then measures each fio/iperf3 probe again followed at once by one --long
second run of the same job, and prints how far apart they are. Goals (issue 3): under
90 s, and within 5 % of the long runs.

    python benchmarks/probe_default.py [--long 60] [--device FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

from assess.cli import main
from probes.measure.iperf3 import serve
from probes.measure.memory import scratch_directory
from probes.measure.plan import Plan, plan_probes
from probes.measure.probe import measure
from probes.measure.probeset import read_probe_set


def run(long: float, device: str) -> int:
    out = Path(tempfile.mkdtemp(prefix="iobound-bench-")) / "node.json"
    plan = Plan(peer="127.0.0.1", devices=(device,))
    streams, _ = plan.parallel
    with serve(range(plan.port, plan.port + streams)):
        started = time.monotonic()
        status = main(["probe", "--peer", plan.peer, "--device", device, "-o", str(out), "--quiet"])
        took = time.monotonic() - started
        measured = read_probe_set(out)
        print(f"\ndefault probe set: {took:.1f} s (goal < 90 s), exit status {status}, {len(measured)} figures, "
              f"targets reached: {sum(m.reached for m in measured.values())}/{len(measured)}")
        print(f"\neach probe measured again, then one {long:g} s run of the same job right after it "
              "(adjacent in time, so the machine's drift over minutes does not count):")
        worst = 0.0
        with scratch_directory(plan.tmpfs, str(out) + ".long") as scratch:
            shorts = plan_probes(plan, scratch)
            longs = plan_probes(dataclasses.replace(plan, runtime=long), scratch)
            for probe, long_probe in zip(shorts, longs):
                if probe.tool == "ping":
                    continue
                figures = {m.name: m for m in measure(probe, budget=10)}
                values = long_probe.once()
                for output in probe.outputs:
                    short = figures[output.name]
                    s = short.summary
                    deviation = s.mean / values[output.name] - 1
                    inside = s.ci_low <= values[output.name] <= s.ci_high
                    if output.metric.name != "EVENT_RATE":
                        worst = max(worst, abs(deviation))
                    print(f"  {output.name:42s} probe {s.mean:12.4g} ± {short.half_width:6.1%} (n={s.n:2d})  "
                          f"long {values[output.name]:12.4g}  {deviation:+6.1%}  {'in CI' if inside else 'outside CI'}",
                          flush=True)
        print(f"\nlargest deviation from the long runs (context switches aside): {worst:.1%} (goal < 5 %)")
    return status


def _device(path: str | None) -> str:
    """The device to probe: the one given, or a 1 GiB file on a disk-backed directory (direct I/O needs one)."""
    if path:
        return path
    file = Path("/var/tmp/iobound-bench.img")
    if not file.exists():
        with open(file, "wb") as f:
            block = os.urandom(2**20)
            for _ in range(1024):
                f.write(block)
    return str(file)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=float, default=60.0, help="seconds of each long run (default 60)")
    parser.add_argument("--device", help="block device or file to read (default: a 1 GiB file in /var/tmp)")
    args = parser.parse_args()
    sys.exit(run(args.long, _device(args.device)))
