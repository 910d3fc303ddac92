"""Benchmark: how long ``iobound size`` takes to answer the issue's buyer on the bundled catalogue.

Why: sizing is asked interactively, so an answer should come in about a second. Goal: a
sizing question with 5 component kinds (the clients that exist, a network, a server
chassis, a device, metadata servers) and 3 targets (write, read, create) in under 1 s of
CPU time (time.process_time: other load on the machine does not count; wall time is shown
beside it), the median of the repeats. The question is "20 GiB/s write, 40 GiB/s read, 200,000 creates/s and 2 PB usable (8+2 parity)
for 512 clients with 25 Gbit/s", over every part of the catalogue. Each repeat starts from
empty caches (each layer's compiled linear form, each integer programme's answer), as a
new process would; imports are not timed. The question is asked as ``iobound size`` asks it by default:
20 % margin, a hot spare per enclosure, whole enclosures, 5 % file-system overhead, an 80 % fill target. ``--no-usable`` drops the capacity target, so no design can be skipped by its
least price: the worst case of the search, whose goal is 2 s.

The second question is the accelerator search of the README, "512 H100s on unet3d at 90 % AU for
64 clients with 400 Gbit/s" (no capacity target, so every design is solved), goal 1 s of CPU too.
Each is shown beside its peer, measured in the same run on the same question: the search with
scipy's ``milp`` solving every programme, as it did before the least counts were found directly
(where one count alone is priced); the answers must agree.

    python benchmarks/sizing.py [--repeat 5] [--no-usable] [--json]
    python benchmarks/sizing.py --quick    # one solve
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from probes.core.registry import lean  # noqa: E402

lean()  # pint loads as the command line loads it: the figures below are the commands'

from models.accelerators import entry, workload
from models.sizing import Question, Sizing, Target, programme, size
from models.sizing.programme import clear_caches
from probes.core.units import Q_, Metric
from probes.core.workload import Operation, Workload
from topologies.catalogues.catalogue import load_catalogue
from topologies.topology import Capacity, Group, Kind, Source
from topologies.write_cost import WriteCost

CLIENTS = 512
GOAL_SECONDS = 1.0
WORST_GOAL_SECONDS = 2.0  # --no-usable: no design is skipped by its least price
ACCELERATOR_CLIENTS = 64
ACCELERATOR_GOAL_SECONDS = 1.0


def question(usable: bool) -> Question:
    catalogue = load_catalogue()
    clients = Group("compute", Kind.CLIENT, CLIENTS, {"nic": Capacity(Q_(25, "Gbit/s"), Metric.BANDWIDTH, Source("assumption"))})
    targets = (Target(Workload(Operation.WRITE, Q_(1, "MiB"), nodes=CLIENTS), Q_(20, "GiB/s")),
               Target(Workload(Operation.READ, Q_(1, "MiB"), nodes=CLIENTS), Q_(40, "GiB/s")),
               Target(Workload(Operation.CREATE, None, nodes=CLIENTS), Q_(200_000, "op/s")))
    servers = catalogue.of_kind(Kind.SERVER)
    return Question(targets, clients, catalogue.of_kind(Kind.NETWORK), servers, catalogue.of_kind(Kind.DEVICE), servers,
                    Q_(2, "PB") if usable else None, WriteCost(parity=(8, 2)), catalogue.currency, margin=0.2, spares=1,
                    whole_enclosures=True, fs_overhead=0.05, fill=0.8, client_family="ethernet", catalogue=catalogue)


def accelerators() -> Question:
    """512 H100s on unet3d at the AU the benchmark requires, for 64 clients with 400 Gbit/s (as ``iobound size`` asks)."""
    catalogue = load_catalogue()
    clients = Group("compute", Kind.CLIENT, ACCELERATOR_CLIENTS,
                    {"nic": Capacity(Q_(400, "Gbit/s"), Metric.BANDWIDTH, Source("assumption"))})
    demand = entry("unet3d", "h100")
    target = Target(workload(demand, 512, ACCELERATOR_CLIENTS), (demand.per_accelerator * (512 * demand.min_au)).to("GB/s"),
                    f"512 {demand.accelerator} x {demand.model} at {demand.min_au:.0%} AU")
    return Question((target,), clients, catalogue.of_kind(Kind.NETWORK), catalogue.of_kind(Kind.SERVER),
                    catalogue.of_kind(Kind.DEVICE), (), None, WriteCost(), catalogue.currency, margin=0.2,
                    whole_enclosures=True, fs_overhead=0.05, fill=0.8, client_family="ethernet", catalogue=catalogue)


def timed(asked: Question, repeat: int) -> tuple[list[float], list[float], Sizing]:
    """CPU and wall seconds of each repeat, each from cold caches as a fresh process would start, and the answer."""
    times, walls = [], []
    for _ in range(repeat):
        clear_caches()
        started, cpu = time.perf_counter(), time.process_time()
        answer = size(asked)
        times.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - started)
    return times, walls, answer


def with_milp(measure: Callable[[], tuple[list[float], list[float], Sizing]]):
    """``measure`` run with scipy's milp solving every programme: the peer."""
    with mock.patch.object(programme, "_fewest", lambda rows, lower: None):
        return measure()


def same(a: Sizing, b: Sizing) -> bool:
    """Whether two answers agree: the same designs solved, and the same configurations at the same prices."""
    def key(s: Sizing) -> list:
        return [(str(c.design), c.counts, c.total) for c in (*s.configurations, *s.alternatives)]
    return (a.designs, a.feasible, key(a)) == (b.designs, b.feasible, key(b))


def seconds(times: list[float], walls: list[float]) -> str:
    return (f"median {statistics.median(times):.3f} s, min {min(times):.3f} s, max {max(times):.3f} s over {len(times)} "
            f"solve{'s' if len(times) > 1 else ''} from cold caches (wall: median {statistics.median(walls):.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one repeat (a smoke run)")
    parser.add_argument("--no-usable", action="store_true", help="no capacity target: every design is solved")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
    goal = WORST_GOAL_SECONDS if args.no_usable else GOAL_SECONDS
    asked, gpus = question(not args.no_usable), accelerators()
    times, walls, first = timed(asked, args.repeat)
    peer_times, peer_walls, peer = with_milp(lambda: timed(asked, args.repeat))
    gpu_times, gpu_walls, gpu = timed(gpus, args.repeat)
    gpu_peer_times, gpu_peer_walls, gpu_peer = with_milp(lambda: timed(gpus, args.repeat))
    clear_caches()
    tracemalloc.start()  # apart: tracing slows every allocation
    size(asked)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    best = first.configurations[0]
    median = statistics.median(times)
    gpu_median = statistics.median(gpu_times)
    figures = {
        "designs": first.designs, "solved": first.feasible, "median_cpu_s": median,
        "min_cpu_s": min(times), "max_cpu_s": max(times), "median_wall_s": statistics.median(walls),
        "goal_met": median < goal, "peak_mb": peak / 1e6, "cheapest_price": best.total,
        "cheapest": {"server": best.design.server.name, "ports": best.design.ports, "network": best.design.network.name,
                     "device": best.design.device.name, "counts": best.counts},
        "peer_milp_median_cpu_s": statistics.median(peer_times), "peer_agrees": same(first, peer),
        "accelerators": {"median_cpu_s": gpu_median, "median_wall_s": statistics.median(gpu_walls),
                         "goal_met": gpu_median < ACCELERATOR_GOAL_SECONDS,
                         "peer_milp_median_cpu_s": statistics.median(gpu_peer_times), "peer_agrees": same(gpu, gpu_peer),
                         "cheapest_price": gpu.configurations[0].total},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"question:  write 20 GiB/s, read 40 GiB/s, create 200,000 op/s"
          f"{'' if args.no_usable else ', 2 PB usable (8+2)'}, {CLIENTS} clients x 25 Gbit/s")
    print(f"designs:   {first.designs} (network x server x ports x device; {len(asked.metadata)} metadata server "
          f"types in each), {first.feasible} solved")
    print(f"CPU time:  {seconds(times, walls)}")
    print(f"peer:      milp for every programme: {seconds(peer_times, peer_walls)}; "
          f"{statistics.median(peer_times) / median:.1f}x; same answer: {'yes' if same(first, peer) else 'NO'}")
    print(f"goal:      < {goal:g} s CPU: {'PASS' if median < goal else 'MISS'}")
    print(f"memory:    peak traced {peak / 1e6:.1f} MB")
    print(f"cheapest:  {asked.currency} {best.total:,.0f}: {best.counts} of {best.design} ({best.design.family}; "
          f"survives {best.survives} enclosure failure{'s' if best.survives != 1 else ''})")
    print(f"\nquestion:  {gpus.targets[0]} for {ACCELERATOR_CLIENTS} clients x 400 Gbit/s")
    print(f"designs:   {gpu.designs}, {gpu.feasible} solved")
    print(f"CPU time:  {seconds(gpu_times, gpu_walls)}")
    print(f"peer:      milp for every programme: {seconds(gpu_peer_times, gpu_peer_walls)}; "
          f"{statistics.median(gpu_peer_times) / gpu_median:.1f}x; same answer: {'yes' if same(gpu, gpu_peer) else 'NO'}")
    print(f"goal:      < {ACCELERATOR_GOAL_SECONDS:g} s CPU: {'PASS' if gpu_median < ACCELERATOR_GOAL_SECONDS else 'MISS'}")
    cheapest = gpu.configurations[0]
    print(f"cheapest:  {gpus.currency} {cheapest.total:,.0f}: {cheapest.counts} of {cheapest.design}")


if __name__ == "__main__":
    main()
