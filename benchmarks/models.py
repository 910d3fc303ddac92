"""Benchmark: the bottleneck model's speed and memory on a large grouped topology, against max-flow on its expansion.

Goal: 10,000 client nodes, 1,000 servers and 20,000 devices in groups, and a sweep of
1,000 workloads (operations x transfer sizes x node counts x PPN x access x queue depth):
every ceiling in under 2 s and under 500 MB peak memory. The baseline expands every group
into its members (one graph node per client and device, an in/out pair per server and
network) and solves one networkx maximum flow per workload; it is slow, so it runs on a
sample and is extrapolated per workload. Import cost is excluded: every module is imported
before any clock starts.

    python benchmarks/models.py [--workloads 1000] [--baseline-sample 3] [--profile] [--json]
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import json
import math
import pstats
import random
import resource
import sys
import time
import tracemalloc
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import networkx as nx
from networkx.algorithms import flow as nx_flow

from models.predict import Model
from probes.core.units import Q_
from probes.core.workload import Access, Operation, Workload
from topologies.load import topology_from_dict
from topologies.topology import Group, Kind, Topology

GOAL_SECONDS, GOAL_BYTES, GOAL_WORKLOADS = 2.0, 500e6, 1_000
AGREE = 1e-6  # relative difference under which the expanded max-flow equals the grouped ceiling
CLIENTS, STORAGE = "clients", "storage"

# Per member, orders of magnitude from datasheets. Clients: NIC, own throughput (None: not stated), memory.
CLIENT_KINDS = (("10 Gbit/s", None, "128 GiB"), ("25 Gbit/s", "2.5 GiB/s", "256 GiB"),
                ("100 Gbit/s", "11 GiB/s", "512 GiB"), ("200 Gbit/s", "20 GiB/s", "1 TiB"))
SERVER_KINDS = (("200 Gbit/s", "20 GiB/s", "768 GiB"), ("100 Gbit/s", "9 GiB/s", "384 GiB"),
                ("50 Gbit/s", "5 GiB/s", "256 GiB"))  # NIC, throughput, memory
DEVICE_KINDS = (("NVMe SSD", "6.8 GB/s", "4 GB/s", "1000000 op/s", "180000 op/s"),
                ("SATA SSD", "550 MB/s", "520 MB/s", "98000 op/s", "88000 op/s"),
                ("HDD", "270 MB/s", "260 MB/s", "200 op/s", "400 op/s"))  # read/write bandwidth, read/write IOPS

SIZES = ("4 KiB", "64 KiB", "1 MiB", "4 MiB", "16 MiB")
NODES = (1, 8, 64, 256, None)
PPN = (1, 4, 8, 16, 64)
DEPTHS = (1, 16)


@dataclass(frozen=True)
class Case:
    """One workload of the sweep and the client groups that run it (None: all of them)."""

    workload: Workload
    clients: tuple[str, ...] | None


def big_topology() -> Topology:
    """The goal's system built with topology_from_dict: 20 x 500 clients, 3 networks, 10 x 100 servers, 20 x 1,000 devices.

    Client groups 0-11 sit on the ethernet (the network with an RTT; group 7 through an
    800 Gbit/s rack uplink), 8-19 on infiniband; the ethernet reaches storage-net through a
    1.6 Tbit/s gateway. Servers 0-5 are on infiniband, 6-9 on the ethernet, 3-7 also on
    storage-net (s7 through a 3.2 Tbit/s trunk). Device group i hangs off server group i // 2.
    """
    clients, servers, devices = {}, {}, {}
    for i in range(20):
        nic, own, memory = CLIENT_KINDS[i % 4]
        clients[f"c{i:02}"] = {"count": 500, "nic": nic, "memory": memory} | ({"bandwidth": own} if own else {})
        kind, read_bandwidth, write_bandwidth, read_iops, write_iops = DEVICE_KINDS[i % 3]
        devices[f"d{i:02}"] = {"count": 1_000, "description": kind, "read_bandwidth": read_bandwidth,
                               "write_bandwidth": write_bandwidth, "read_iops": read_iops, "write_iops": write_iops}
    for i in range(10):
        nic, own, memory = SERVER_KINDS[i % 3]
        servers[f"s{i}"] = {"count": 100, "nic": nic, "bandwidth": own, "memory": memory}
    networks = {"ethernet": {"bandwidth": {"value": "12.8 Tbit/s", "source": "datasheet", "note": "spine switches"},
                             "rtt": {"value": "0.05 ms", "source": "measured"}},
                "infiniband": {"bandwidth": "25.6 Tbit/s"},
                "storage-net": {"bandwidth": "6.4 Tbit/s"}}
    links = ([{"between": [f"c{i:02}", "ethernet"]} | ({"bandwidth": "800 Gbit/s"} if i == 7 else {}) for i in range(12)]
             + [{"between": [f"c{i:02}", "infiniband"]} for i in range(8, 20)]
             + [{"between": ["ethernet", "storage-net"], "bandwidth": "1.6 Tbit/s"}]
             + [{"between": ["infiniband", f"s{i}"]} for i in range(6)]
             + [{"between": ["ethernet", f"s{i}"]} for i in range(6, 10)]
             + [{"between": ["storage-net", f"s{i}"]} | ({"bandwidth": "3.2 Tbit/s"} if i == 7 else {}) for i in range(3, 8)]
             + [{"between": [f"s{i // 2}", f"d{i:02}"]} for i in range(20)])
    doc = {"name": "big", "clients": clients, "networks": networks, "servers": servers, "devices": devices, "links": links}
    return topology_from_dict(doc, source="<benchmarks/models.py>", name="big")


def sweep(count: int, seed: int) -> list[Case]:
    """``count`` cases drawn without bias from the 1,000-case grid (repeated past 1,000).

    A workload on a node count runs on one client group, drawn from the 20; on all nodes it
    runs on every client group, or on four of them (every fifth from a drawn one).
    """
    rng, grid = random.Random(seed), []
    for op, size, nodes, ppn, access, depth in itertools.product(
            (Operation.READ, Operation.WRITE), SIZES, NODES, PPN, tuple(Access), DEPTHS):
        workload = Workload(op, Q_(size), nodes=nodes, ppn=ppn, queue_depth=depth, access=access)
        if nodes is not None:
            clients = (f"c{rng.randrange(20):02}",)
        else:
            first = rng.randrange(5)
            clients = None if rng.random() < 0.5 else tuple(f"c{j:02}" for j in range(first, 20, 5))
        grid.append(Case(workload, clients))
    rng.shuffle(grid)
    return [grid[i % len(grid)] for i in range(count)]


def pure(workload: Workload) -> bool:
    """Whether the model's ceiling is a plain max-flow of stated bandwidths: buffered sequential I/O (no per-request limits)."""
    return workload.access is Access.SEQUENTIAL and not workload.direct


def member_capacity(group: Group, workload: Workload) -> float | None:
    """The B/s one member of ``group`` carries in a pure workload: the least of its stated bandwidths; None if none.

    The limits the grouped model chains (see models.flow), stated here per member and
    independently, so the two computations check each other.
    """
    keys = {Kind.CLIENT: ("bandwidth", "nic"), Kind.NETWORK: ("bandwidth",),
            Kind.SERVER: ("nic", "bandwidth"), Kind.DEVICE: ("bandwidth",)}[group.kind]
    limits = [c.value.m_as("B/s") for key in keys
              if (c := group.capacity(key, workload.operation.value)) is not None and c.value is not None]
    return min(limits, default=None)


def expand(topology: Topology, case: Case) -> tuple[nx.DiGraph, str, str]:
    """The fully expanded flow graph of ``case`` (a pure workload), edges in the direction data moves; source and sink.

    Every client and device is a node (with its capacity on its edge from CLIENTS / to
    STORAGE), every server and network member an in/out pair with its capacity between them.
    A link with a bandwidth becomes one hub pair carrying that total between all members of
    both ends; a link without one joins every member to every member, except server -> device,
    where the devices are dealt out evenly to the servers of the groups linked to them (each
    device sits in one server). The topology must have devices.
    """
    workload, read = case.workload, case.workload.operation is Operation.READ
    chosen = case.clients or tuple(g.name for g in topology.of_kind(Kind.CLIENT))
    graph = nx.DiGraph()

    def edge(u, v, capacity: float | None = None) -> None:
        u, v = (v, u) if read else (u, v)
        if capacity is None:
            graph.add_edge(u, v)
        else:
            graph.add_edge(u, v, capacity=capacity)

    entries, exits = {}, {}
    for group in topology.groups:
        if group.kind is Kind.CLIENT and group.name not in chosen:
            continue
        count = workload.nodes if group.kind is Kind.CLIENT and workload.nodes is not None else group.count
        capacity = member_capacity(group, workload)
        if group.kind is Kind.CLIENT:
            entries[group.name] = exits[group.name] = [(group.name, i) for i in range(count)]
            for member in exits[group.name]:
                edge(CLIENTS, member, capacity)
        elif group.kind is Kind.DEVICE:
            entries[group.name] = exits[group.name] = [(group.name, i) for i in range(count)]
            for member in entries[group.name]:
                edge(member, STORAGE, capacity)
        else:
            entries[group.name] = [(group.name, i, "in") for i in range(count)]
            exits[group.name] = [(group.name, i, "out") for i in range(count)]
            for u, v in zip(entries[group.name], exits[group.name]):
                edge(u, v, capacity)
    servers_of: dict[str, list] = defaultdict(list)
    for u, v, index in topology.data_links():
        if u not in exits or v not in entries:
            continue
        bandwidth = topology.links[index].bandwidth
        if bandwidth is not None and bandwidth.value is not None:
            hub = ("link", index, u, v)
            for member in exits[u]:
                edge(member, hub + ("in",))
            edge(hub + ("in",), hub + ("out",), bandwidth.value.m_as("B/s"))
            for member in entries[v]:
                edge(hub + ("out",), member)
        elif topology.group(u).kind is Kind.SERVER and topology.group(v).kind is Kind.DEVICE:
            servers_of[v] += exits[u]
        else:
            for a, b in itertools.product(exits[u], entries[v]):
                edge(a, b)
    for devices, servers in servers_of.items():
        for i, device in enumerate(entries[devices]):
            edge(servers[i % len(servers)], device)
    return (graph, STORAGE, CLIENTS) if read else (graph, CLIENTS, STORAGE)


def grouped_sweep(topology: Topology, cases: list[Case]) -> list:
    """Every case's ceiling, kept (the goal is all ceilings at once), from one Model as iobound's sweeps use."""
    model = Model(topology)
    return [model.ceiling(case.workload, case.clients) for case in cases]


def time_grouped(topology: Topology, cases: list[Case]) -> tuple[float, float, list]:
    """Wall-clock and CPU seconds of the sweep (they differ when other processes share the cores), and the ceilings."""
    wall, cpu = time.perf_counter(), time.process_time()
    ceilings = grouped_sweep(topology, cases)
    return time.perf_counter() - wall, time.process_time() - cpu, ceilings


def traced_peak(topology: Topology, cases: list[Case]) -> int:
    """The most memory Python held at once (tracemalloc) while computing every ceiling, in bytes, above the start."""
    tracemalloc.start()
    grouped_sweep(topology, cases)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def max_rss() -> int:
    """The process's peak resident memory so far, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def profile(topology: Topology, cases: list[Case], top: int, say) -> dict:
    """cProfile the sweep; print the ``top`` entries by cumulative time and own time per package, as % of the total."""
    profiler = cProfile.Profile()
    profiler.runcall(grouped_sweep, topology, cases)
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    rows = sorted(stats.stats.items(), key=lambda item: item[1][3], reverse=True)[:top]
    say(f"\nprofile of the grouped sweep: {total:.2f} s under cProfile; top {top} by cumulative time")
    say(f"{'cum s':>8} {'cum %':>6} {'own s':>8} {'calls':>9}  function")
    entries = []
    for (file, line, name), (_, calls, own, cumulative, _) in rows:
        where = f"{_short(file)}:{line}({name})" if line else name
        say(f"{cumulative:8.2f} {100 * cumulative / total:5.1f}% {own:8.2f} {calls:9d}  {where}")
        entries.append({"function": where, "cumulative_s": cumulative, "cumulative_pct": 100 * cumulative / total,
                        "own_s": own, "calls": calls})
    packages: dict[str, float] = defaultdict(float)
    for (file, _, _), (_, _, own, _, _) in stats.stats.items():
        packages[_package(file)] += own
    say("\nown time per package (a C builtin counts as 'builtins' whoever called it)")
    for package, own in sorted(packages.items(), key=lambda item: item[1], reverse=True):
        say(f"{own:8.2f} s {100 * own / total:5.1f}%  {package}")
    return {"total_s": total, "top": entries, "own_by_package_s": dict(packages)}


def _short(file: str) -> str:
    for marker in ("site-packages/", str(ROOT) + "/", "lib/python3"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file


def _package(file: str) -> str:
    if file == "~":
        return "builtins"
    if "site-packages/" in file:
        return file.split("site-packages/", 1)[1].split("/", 1)[0]
    if file.startswith(str(ROOT)):
        return file[len(str(ROOT)) + 1:].split("/", 1)[0]
    return "stdlib"


def baseline(topology: Topology, cases: list[Case], ceilings: list, algorithms: tuple[str, ...], say) -> list[dict]:
    """Build the expanded graph of each sampled case and solve its max-flow with each algorithm; compare with the ceiling."""
    results = []
    for case, ceiling in zip(cases, ceilings):
        start = time.perf_counter()
        graph, source, sink = expand(topology, case)
        built = time.perf_counter() - start
        grouped = ceiling.value.m_as("B/s")
        row = {"workload": case.workload.describe(), "clients": case.clients, "nodes": graph.number_of_nodes(),
               "edges": graph.number_of_edges(), "build_s": built, "grouped_Bps": grouped, "flows": {}}
        for algorithm in algorithms:
            start = time.perf_counter()
            value = nx.maximum_flow_value(graph, source, sink, flow_func=getattr(nx_flow, algorithm))
            row["flows"][algorithm] = {"seconds": time.perf_counter() - start, "value_Bps": value,
                                       "agrees": math.isclose(value, grouped, rel_tol=AGREE)}
        say(f"  {row['workload']:42} on {_clients(case.clients):16} {row['nodes']:6,} nodes {row['edges']:7,} edges, "
            f"built in {built:.2f} s; grouped {grouped:.6g} B/s; "
            + "; ".join(f"{a} {f['seconds']:.2f} s {f['value_Bps']:.6g} {'=' if f['agrees'] else '≠'}"
                        for a, f in row["flows"].items()))
        results.append(row)
    return results


def _clients(clients: tuple[str, ...] | None) -> str:
    return "all clients" if clients is None else "+".join(clients)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=GOAL_WORKLOADS, help="workloads in the sweep (default 1000)")
    parser.add_argument("--baseline-sample", type=int, default=3, help="workloads solved on the expanded graph")
    parser.add_argument("--algorithms", nargs="+", default=["preflow_push", "shortest_augmenting_path", "boykov_kolmogorov"],
                        help="networkx flow functions for the baseline (preflow_push is maximum_flow_value's default)")
    parser.add_argument("--profile", action="store_true", help="cProfile the grouped sweep and print the top 25")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON on stdout (the text goes to stderr)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    out = sys.stderr if args.json else sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    rss_start = max_rss()
    start = time.perf_counter()
    topology = big_topology()
    built = time.perf_counter() - start
    cases = sweep(args.workloads, args.seed)
    members = {kind: sum(g.count for g in topology.of_kind(kind)) for kind in Kind}
    say(f"topology: {len(topology.groups)} groups, {len(topology.links)} links; members: "
        + ", ".join(f"{n:,} {kind.value}" for kind, n in members.items()) + f"; built in {built:.3f} s")
    say(f"sweep: {len(cases)} workloads; imports excluded from every time (process RSS after imports "
        f"{rss_start / 1e6:.0f} MB)")

    seconds, cpu, ceilings = time_grouped(topology, cases)
    rss_sweep = max_rss()
    per = seconds / len(cases)
    projected = per * GOAL_WORKLOADS
    verdict = "met" if projected < GOAL_SECONDS else f"NOT met, {projected / GOAL_SECONDS:.0f}x over"
    say(f"\ngrouped model: {seconds:.2f} s for {len(cases)} workloads, {1e3 * per:.2f} ms per workload "
        f"(CPU time {cpu:.2f} s); "
        f"{GOAL_WORKLOADS} workloads: {projected:.2f} s (goal < {GOAL_SECONDS:g} s: {verdict})")
    binding = defaultdict(int)
    for ceiling in ceilings:
        binding[", ".join(ceiling.binding_layers)] += 1
    say("binding layers over the sweep: " + "; ".join(f"{k} {n}" for k, n in sorted(binding.items(), key=lambda i: -i[1])))
    peak = traced_peak(topology, cases)
    say(f"memory: tracemalloc peak {peak / 1e6:.1f} MB while computing {len(cases)} ceilings (second pass, traced); "
        f"process max RSS {rss_sweep / 1e6:.0f} MB after the timed sweep (goal < {GOAL_BYTES / 1e6:.0f} MB: "
        f"{'met' if max(peak, rss_sweep) < GOAL_BYTES else 'NOT met'})")

    figures = {"workloads": len(cases), "grouped_s": seconds, "grouped_cpu_s": cpu, "grouped_ms_per_workload": 1e3 * per,
               "grouped_s_projected_1000": projected, "tracemalloc_peak_bytes": peak,
               "max_rss_bytes_after_imports": rss_start, "max_rss_bytes_after_sweep": rss_sweep,
               "binding_layers": dict(binding)}
    if args.profile:
        figures["profile"] = profile(topology, cases, 25, say)

    if args.baseline_sample:
        pures = [i for i, case in enumerate(cases) if pure(case.workload)]
        picked = [pures[i * len(pures) // args.baseline_sample] for i in range(min(args.baseline_sample, len(pures)))]
        say(f"\nbaseline: the fully expanded graph, one networkx max-flow per workload ({len(picked)} sampled, spread "
            "over the buffered sequential workloads, whose ceiling is a plain max-flow)")
        rows = baseline(topology, [cases[i] for i in picked], [ceilings[i] for i in picked], tuple(args.algorithms), say)
        build = sum(r["build_s"] for r in rows) / len(rows)
        flows = {a: sum(r["flows"][a]["seconds"] for r in rows) / len(rows) for a in args.algorithms}
        fastest = min(flows, key=flows.get)
        agree = all(f["agrees"] for r in rows for f in r["flows"].values())
        for algorithm, flow in flows.items():
            say(f"  {algorithm:26} {flow:7.2f} s per workload (+ {build:.2f} s to build the graph): "
                f"{(flow + build) * GOAL_WORKLOADS / 3600:.1f} h for {GOAL_WORKLOADS} workloads")
        say("ratio baseline / grouped per workload: " + "; ".join(
            f"{a} {(flow + build) / per:.0f} (max-flow alone {flow / per:.0f})" for a, flow in flows.items())
            + f"; fastest: {fastest}")
        say(f"expanded max-flow equals the grouped ceiling within {AGREE:g} relative on every sampled workload "
            f"and algorithm: {'yes' if agree else 'NO'}")
        figures["baseline"] = {"rows": rows, "build_s": build, "flow_s": flows, "fastest": fastest, "agree": agree,
                               "ratio": {a: (flow + build) / per for a, flow in flows.items()}}
    figures["max_rss_bytes_end"] = max_rss()
    say(f"\nprocess max RSS at the end (baseline included): {figures['max_rss_bytes_end'] / 1e6:.0f} MB")
    if args.json:
        print(json.dumps(figures, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
