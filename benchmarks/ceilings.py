"""Benchmark: the bottleneck model's speed and memory on a large grouped topology, against general max-flow solvers.

What: 10,000 client nodes, 1,000 servers and 20,000 devices in groups, and a sweep of 1,000
workloads (operations x transfer sizes x node counts x PPN x access x queue depth). Goal:
every ceiling of the 1,000 workloads in under 0.5 s of CPU time (the least of 3 sweeps, each
from cold caches as a new process starts: this VM's speed drifts by a third) and under 500 MB peak memory;
with every capacity stated as a range (each ceiling then an interval: two solves) in under 2 s;
at least as fast per workload as scipy's compiled maximum_flow on the same grouped graph built
beforehand; a cost that grows at most as groups^1.2 from 50 to 5,000 groups; and a cached flow
network under 1 MB at 1,000 groups.

Why the peers: a ceiling of buffered sequential I/O is a max-flow, so a reader should see
the model beside the strongest general solvers, run on the same workloads in the same
process: networkx on the grouped graph (one node per group, its capacity the members'
sum: the same small graph the model works on) and scipy.sparse.csgraph.maximum_flow (C,
Dinic and Edmonds-Karp) on the member-level graph (one node per client and device, an
in/out pair per server and network). The headline gives the ratio to each; the model also
names the binding layers and the cache ceilings, which the peers do not. networkx on the
member-level graph, the slowest, follows as context. Every peer checks the model's
ceilings. All times are CPU time (time.process_time), so other load on the machine does
not count; every module is imported before any clock starts.

    python benchmarks/ceilings.py [--workloads 1000] [--baseline-sample 3] [--profile] [--json]
    python benchmarks/ceilings.py --quick    # a few seconds: 100 workloads, small samples
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
import statistics
import sys
import time
import tracemalloc
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
from networkx.algorithms import flow as nx_flow  # noqa: E402
from scipy.sparse import csr_array  # noqa: E402
from scipy.sparse.csgraph import maximum_flow  # noqa: E402

from models import solved  # noqa: E402
from models.predict import Model  # noqa: E402
from probes.core.units import Q_  # noqa: E402
from probes.core.workload import Access, Operation, Workload  # noqa: E402
from topologies.load import topology_from_dict  # noqa: E402
from topologies.topology import Group, Kind, Topology  # noqa: E402

GOAL_SECONDS, GOAL_BYTES, GOAL_WORKLOADS = 0.5, 500e6, 1_000
RANGED_SECONDS = 2.0  # every figure a range: two solves per ceiling
AGREE = 1e-6  # relative difference under which a peer's max-flow equals the grouped ceiling
# scipy's maximum_flow takes int32 capacities: B/s are scaled so the largest possible flow is 2**30 units,
# and the rounding allows this much relative difference.
AGREE_INT32 = 1e-3
INT32_MAX = 2**31 - 1
METHODS = ("dinic", "edmonds_karp")  # scipy.sparse.csgraph.maximum_flow's algorithms
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


def big_topology(ranged: bool = False) -> Topology:
    """The goal's system built with topology_from_dict: 20 x 500 clients, 3 networks, 10 x 100 servers, 20 x 1,000 devices.

    ``ranged``: every capacity stated as a range from half its figure to its figure (two solves per ceiling).

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
    if ranged:
        for table in (clients, networks, servers, devices, *({"link": link} for link in links)):
            for body in table.values():
                for key, figure in body.items():
                    if key not in ("count", "description", "between"):
                        body[key] = _half_to_full(figure)
    return topology_from_dict(doc, source="<benchmarks/ceilings.py>", name="big")


def _half_to_full(figure: str | dict) -> dict:
    """A capacity as the range from half its figure to its figure, its source kept."""
    stated = figure if isinstance(figure, dict) else {"value": figure}
    number, unit = stated["value"].split(" ", 1)
    return {key: value for key, value in stated.items() if key != "value"} | {"range": [f"{float(number) / 2} {unit}", stated["value"]]}


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


Edge = tuple[object, object, "float | None"]  # from, to, capacity in B/s (None: unlimited)


def _counts(topology: Topology, case: Case):
    """The groups ``case`` uses, each with its member count (the workload's nodes for a client group)."""
    chosen = case.clients or tuple(g.name for g in topology.of_kind(Kind.CLIENT))
    workload = case.workload
    for group in topology.groups:
        if group.kind is Kind.CLIENT and group.name not in chosen:
            continue
        yield group, workload.nodes if group.kind is Kind.CLIENT and workload.nodes is not None else group.count


def _oriented(case: Case, edges: list[Edge]) -> tuple[list[Edge], str, str]:
    """``edges`` (written clients -> devices) turned the way data moves, with the source and sink."""
    if case.workload.operation is Operation.READ:
        return [(v, u, c) for u, v, c in edges], STORAGE, CLIENTS
    return edges, CLIENTS, STORAGE


def expand(topology: Topology, case: Case) -> tuple[list[Edge], str, str]:
    """The member-level flow graph of ``case`` (a pure workload) as edges in the direction data moves; source and sink.

    Every client and device is a node (with its capacity on its edge from CLIENTS / to
    STORAGE), every server and network member an in/out pair with its capacity between them.
    A link with a bandwidth becomes one hub pair carrying that total between all members of
    both ends; a link without one joins every member to every member, except server -> device,
    where the devices are dealt out evenly to the servers of the groups linked to them (each
    device sits in one server). The topology must have devices.
    """
    workload = case.workload
    edges: list[Edge] = []
    entries, exits = {}, {}
    for group, count in _counts(topology, case):
        capacity = member_capacity(group, workload)
        if group.kind is Kind.CLIENT:
            entries[group.name] = exits[group.name] = [(group.name, i) for i in range(count)]
            edges += [(CLIENTS, member, capacity) for member in exits[group.name]]
        elif group.kind is Kind.DEVICE:
            entries[group.name] = exits[group.name] = [(group.name, i) for i in range(count)]
            edges += [(member, STORAGE, capacity) for member in entries[group.name]]
        else:
            entries[group.name] = [(group.name, i, "in") for i in range(count)]
            exits[group.name] = [(group.name, i, "out") for i in range(count)]
            edges += [(u, v, capacity) for u, v in zip(entries[group.name], exits[group.name])]
    servers_of: dict[str, list] = defaultdict(list)
    for u, v, index in topology.data_links():
        if u not in exits or v not in entries:
            continue
        bandwidth = topology.links[index].bandwidth
        if bandwidth is not None and bandwidth.value is not None:
            hub = ("link", index, u, v)
            edges += [(member, hub + ("in",), None) for member in exits[u]]
            edges.append((hub + ("in",), hub + ("out",), bandwidth.value.m_as("B/s")))
            edges += [(hub + ("out",), member, None) for member in entries[v]]
        elif topology.group(u).kind is Kind.SERVER and topology.group(v).kind is Kind.DEVICE:
            servers_of[v] += exits[u]
        else:
            edges += [(a, b, None) for a, b in itertools.product(exits[u], entries[v])]
    for devices, servers in servers_of.items():
        edges += [(servers[i % len(servers)], device, None) for i, device in enumerate(entries[devices])]
    return _oriented(case, edges)


def grouped(topology: Topology, case: Case) -> tuple[list[Edge], str, str]:
    """The grouped flow graph of ``case``: :func:`expand` with each group one node (or in/out pair) of its members' sum."""
    edges: list[Edge] = []
    for group, count in _counts(topology, case):
        capacity = member_capacity(group, case.workload)
        total = None if capacity is None else count * capacity
        if group.kind is Kind.CLIENT:
            edges.append((CLIENTS, group.name, total))
        elif group.kind is Kind.DEVICE:
            edges.append((group.name, STORAGE, total))
        else:
            edges.append(((group.name, "in"), (group.name, "out"), total))
    kinds = {g.name: g.kind for g in topology.groups}
    names = {u for u, _, _ in edges} | {v for _, v, _ in edges}

    def exit_(name):
        return name if kinds[name] in (Kind.CLIENT, Kind.DEVICE) else (name, "out")

    def entry(name):
        return name if kinds[name] in (Kind.CLIENT, Kind.DEVICE) else (name, "in")

    for u, v, index in topology.data_links():
        if exit_(u) not in names or entry(v) not in names:
            continue
        bandwidth = topology.links[index].bandwidth
        if bandwidth is not None and bandwidth.value is not None:
            hub = ("link", index, u, v)
            edges += [(exit_(u), hub + ("in",), None), (hub + ("in",), hub + ("out",), bandwidth.value.m_as("B/s")),
                      (hub + ("out",), entry(v), None)]
        else:
            edges.append((exit_(u), entry(v), None))
    return _oriented(case, edges)


def networkx_flow(edges: list[Edge], source, sink, algorithm: str) -> tuple[float, float, float]:
    """networkx's maximum flow value over ``edges`` with ``algorithm``; the CPU seconds to build the graph and to solve."""
    start = time.process_time()
    graph = nx.DiGraph()
    graph.add_edges_from((u, v) if c is None else (u, v, {"capacity": c}) for u, v, c in edges)
    built = time.process_time()
    value = nx.maximum_flow_value(graph, source, sink, flow_func=getattr(nx_flow, algorithm))
    return value, built - start, time.process_time() - built


def scipy_flow(edges: list[Edge], source, sink, method: str) -> tuple[float, float, float]:
    """scipy's maximum_flow over ``edges`` (CSR, int32 capacities); the value in B/s, the CPU seconds to build and to solve.

    Capacities are scaled so that the largest finite flow possible (the least of the sums of
    the finite capacities out of the source and into the sink, or of all of them) is 2**30
    units; an unlimited edge, or one above that bound, gets 2**31 - 1 units, more than any flow.
    """
    start = time.process_time()
    graph, s, t, unit = _csr(edges, source, sink)
    built = time.process_time()
    value = maximum_flow(graph, s, t, method=method).flow_value * unit
    return value, built - start, time.process_time() - built


def _csr(edges: list[Edge], source, sink):
    """``edges`` as scipy's CSR graph of int32 capacities: the graph, source and sink indices, and B/s per unit."""
    index: dict = {}
    rows = np.fromiter((index.setdefault(u, len(index)) for u, _, _ in edges), np.int64, len(edges))
    cols = np.fromiter((index.setdefault(v, len(index)) for _, v, _ in edges), np.int64, len(edges))
    capacity = np.fromiter((math.inf if c is None else c for _, _, c in edges), np.float64, len(edges))
    finite = np.isfinite(capacity)
    bounds = [capacity[finite].sum()]
    for side in (rows == index[source], cols == index[sink]):
        if finite[side].all():
            bounds.append(capacity[side].sum())
    unit = max(min(bounds), 1.0) / 2**30
    units = np.full(len(edges), INT32_MAX, np.int64)  # a capacity above the bound cannot bind: clipped to it too
    units[finite] = np.minimum(np.rint(capacity[finite] / unit), INT32_MAX)
    graph = csr_array((units.astype(np.int32), (rows, cols)), shape=(len(index), len(index)))
    return graph, index[source], index[sink], unit


def scipy_built_once(topology: Topology, cases: list[Case], ceilings: list) -> dict:
    """scipy's compiled maximum_flow on each case's grouped graph, built beforehand (untimed): CPU ms per solve,
    the faster method's, and whether its values equal the model's ceilings (within the int32 rounding)."""
    graphs = [_csr(*grouped(topology, case)) for case in cases]
    times, agree = {}, True
    for method in METHODS:
        start = time.process_time()
        values = [maximum_flow(g, s, t, method=method).flow_value * unit for g, s, t, unit in graphs]
        times[method] = (time.process_time() - start) / len(cases)
        agree &= all(abs(v - c.value.m_as("B/s")) <= AGREE_INT32 * c.value.m_as("B/s") for v, c in zip(values, ceilings))
    fastest = min(times, key=times.get)
    return {"method": fastest, "ms_per_workload": 1e3 * times[fastest], "agree": agree}


def warm_model(topology: Topology, cases: list[Case]) -> dict:
    """CPU ms per workload of a Model whose flow networks are built (as the peer's graphs are): the ceiling's
    value alone, and the whole ceiling; the best of 3 each. Each pass forgets the cuts the networks found before
    (they keep each cut they solve), so that it solves every one as the peer does."""
    model = Model(topology)
    for case in cases:
        model.ceiling(case.workload, case.clients)
    best = {}
    for name, solve in (("bound_ms", model.bound), ("ceiling_ms", model.ceiling)):
        times = []
        for _ in range(3):
            model.forget_cuts()
            start = time.process_time()
            for case in cases:
                solve(case.workload, case.clients)
            times.append((time.process_time() - start) / len(cases))
        best[name] = 1e3 * min(times)
    return best


def chain_topology(groups: int) -> Topology:
    """A system of about ``groups`` groups: a fifth clients, a fifth servers, the rest devices, two fabrics between."""
    clients, servers = max(groups // 5, 1), max(groups // 5, 1)
    devices = max(groups - clients - servers - 2, 1)
    doc = {"clients": {f"c{i}": {"count": 100, "nic": "25 Gbit/s"} for i in range(clients)},
           "networks": {"front": {"bandwidth": "100 Tbit/s"}, "back": {"bandwidth": "200 Tbit/s"}},
           "servers": {f"s{i}": {"count": 10, "nic": "100 Gbit/s", "bandwidth": "10 GiB/s"} for i in range(servers)},
           "devices": {f"d{i}": {"count": 24, "bandwidth": "2 GB/s", "iops": "500000 op/s"} for i in range(devices)},
           "links": [{"between": [f"c{i}", "front"]} for i in range(clients)]
           + [{"between": ["front", f"s{i}"]} for i in range(servers)]
           + [{"between": [f"s{i % servers}", f"d{i}"]} for i in range(devices)]}
    return topology_from_dict(doc, source=f"<{groups} groups>", name=f"chain{groups}")


def growth(sizes: tuple[int, ...], workloads: int, say) -> dict:
    """CPU per workload as the topology grows, the exponent of its growth, and a cached network's memory at 1,000 groups."""
    rng = random.Random(2)
    cases = [Workload(rng.choice(list(Operation)[:2]), Q_(rng.choice(SIZES)), access=rng.choice(list(Access)),
                      ppn=rng.choice(PPN), queue_depth=rng.choice(DEPTHS)) for _ in range(workloads)]
    cases = [w for w in cases if not w.operation.is_metadata]
    per = {}
    for groups in sizes:
        topology = chain_topology(groups)
        start = time.process_time()
        model = Model(topology)
        for workload in cases:
            model.ceiling(workload)
        per[groups] = (time.process_time() - start) / len(cases)
        say(f"  {len(topology.groups):>5} groups: {1e3 * per[groups]:8.3f} ms per workload")
    low, high = min(sizes), max(sizes)
    exponent = math.log(per[high] / per[low]) / math.log(high / low)
    return {"ms_per_workload": {str(k): 1e3 * v for k, v in per.items()}, "exponent": exponent,
            **network_bytes(chain_topology(1000), cases[0])}


def network_bytes(topology: Topology, workload: Workload) -> dict[str, int]:
    """The memory a cached network of ``workload`` holds while its model keeps it (traced), and of that the part its
    structure holds (its graph and layers in series: :func:`models.skeleton.skeleton`, shared by networks alike)."""
    from models.flow import Shape

    solved.forget()  # the structure too, found again while traced
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    model = Model(topology)
    network = model.network(Shape.of(workload), tuple(g.name for g in topology.of_kind(Kind.CLIENT)))
    held = tracemalloc.take_snapshot()
    del model, network  # the structure stays, in its cache
    kept = tracemalloc.take_snapshot()
    tracemalloc.stop()
    return {"network_bytes": sum(s.size_diff for s in held.compare_to(before, "filename")),
            "structure_bytes": sum(s.size_diff for s in kept.compare_to(before, "filename"))}


def grouped_sweep(topology: Topology, cases: list[Case]) -> list:
    """Every case's ceiling, kept (the goal is all ceilings at once), from one Model as iobound's sweeps use."""
    model = Model(topology)
    return model.ceilings((case.workload, case.clients) for case in cases)


def time_grouped(topology: Topology, cases: list[Case]) -> tuple[float, float, list]:
    """CPU and wall-clock seconds of the sweep (they differ when other processes share the cores), and the ceilings."""
    wall, cpu = time.perf_counter(), time.process_time()
    ceilings = grouped_sweep(topology, cases)
    return time.process_time() - cpu, time.perf_counter() - wall, ceilings


def cold_sweeps(topology: Topology, cases: list[Case], repeat: int) -> tuple[list[float], float, list]:
    """CPU seconds of ``repeat`` sweeps, each from cold caches as a new process starts (the solved ceilings and the
    networks' structures forgotten); the wall seconds of the least; the ceilings."""
    runs = []
    for _ in range(repeat):
        solved.forget()
        runs.append(time_grouped(topology, cases))
    return [cpu for cpu, _, _ in runs], min(runs, key=lambda run: run[0])[1], runs[0][2]


def best_cpu(topology: Topology, cases: list[Case], repeat: int = 3) -> float:
    """The least CPU seconds of ``repeat`` sweeps of ``cases``, each by a fresh Model."""
    return min(time_grouped(topology, cases)[0] for _ in range(repeat))


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
    solved.forget()  # the timed passes solved these ceilings: profiled, each is solved again, not looked up
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


def peer(topology: Topology, cases: list[Case], ceilings: list, graph_of, solver, variants: tuple[str, ...],
         tolerance: float, say=None) -> dict:
    """Build ``graph_of`` each case and solve it with ``solver`` in each variant (algorithm); CPU times and agreement.

    A variant's build time is the edge list's (shared) plus its own data structure's. With
    ``say``, one line per case.
    """
    rows = []
    for case, ceiling in zip(cases, ceilings):
        start = time.process_time()
        edges, source, sink = graph_of(topology, case)
        listed = time.process_time() - start
        if len({(u, v) for u, v, _ in edges}) != len(edges):
            raise AssertionError("an edge twice: scipy would add their capacities")
        grouped = ceiling.value.m_as("B/s")
        row = {"workload": case.workload.describe(), "clients": case.clients, "edges": len(edges),
               "nodes": len({u for u, _, _ in edges} | {v for _, v, _ in edges}), "grouped_Bps": grouped, "solvers": {}}
        for variant in variants:
            value, build, flow = solver(edges, source, sink, variant)
            row["solvers"][variant] = {"build_s": listed + build, "flow_s": flow, "value_Bps": value,
                                       "agrees": math.isclose(value, grouped, rel_tol=tolerance)}
        if say:
            say(f"  {row['workload']:42} on {_clients(case.clients):16} {row['nodes']:6,} nodes {row['edges']:7,} "
                f"edges; grouped {grouped:.6g} B/s; " + "; ".join(
                    f"{v} {f['build_s']:.2f} + {f['flow_s']:.2f} s {f['value_Bps']:.6g} {'=' if f['agrees'] else '≠'}"
                    for v, f in row["solvers"].items()))
        rows.append(row)
    build = {v: sum(r["solvers"][v]["build_s"] for r in rows) / len(rows) for v in variants}
    flow = {v: sum(r["solvers"][v]["flow_s"] for r in rows) / len(rows) for v in variants}
    fastest = min(variants, key=lambda v: build[v] + flow[v])
    return {"rows": rows, "cases": len(rows), "build_s": build, "flow_s": flow, "fastest": fastest,
            "nodes": max(r["nodes"] for r in rows), "edges": max(r["edges"] for r in rows),
            "agree": all(f["agrees"] for r in rows for f in r["solvers"].values()),
            "largest_difference": max(abs(f["value_Bps"] / r["grouped_Bps"] - 1) if r["grouped_Bps"] else
                                      abs(f["value_Bps"]) for r in rows for f in r["solvers"].values())}


def spread(indices: list[int], count: int) -> list[int]:
    """``count`` of ``indices`` spread evenly over them."""
    return [indices[i * len(indices) // count] for i in range(min(count, len(indices)))]


def _clients(clients: tuple[str, ...] | None) -> str:
    return "all clients" if clients is None else "+".join(clients)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=GOAL_WORKLOADS, help="workloads in the sweep (default 1000)")
    parser.add_argument("--scipy-sample", type=int, default=10,
                        help="workloads solved by scipy on the member-level graph (default 10)")
    parser.add_argument("--baseline-sample", type=int, default=3,
                        help="workloads solved by networkx on the member-level graph (default 3; 0: none)")
    parser.add_argument("--algorithms", nargs="+", default=["preflow_push", "shortest_augmenting_path", "boykov_kolmogorov"],
                        help="networkx flow functions (preflow_push is maximum_flow_value's default); the fastest counts")
    parser.add_argument("--quick", action="store_true",
                        help="a few seconds: 100 workloads, 2 for scipy, 1 for networkx's member level with preflow_push")
    parser.add_argument("--profile", action="store_true", help="cProfile the grouped sweep and print the top 25")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON on stdout (the text goes to stderr)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        args.workloads, args.scipy_sample, args.baseline_sample = 100, 2, 1
        args.algorithms = ["preflow_push"]
    out = sys.stderr if args.json else sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    rss_start = max_rss()
    start = time.process_time()
    topology = big_topology()
    built = time.process_time() - start
    cases = sweep(args.workloads, args.seed)
    members = {kind: sum(g.count for g in topology.of_kind(kind)) for kind in Kind}
    say(f"topology: {len(topology.groups)} groups, {len(topology.links)} links; members: "
        + ", ".join(f"{n:,} {kind.value}" for kind, n in members.items()) + f"; built in {built:.3f} s CPU")
    say(f"sweep: {len(cases)} workloads; every time below is CPU time (time.process_time), imports excluded "
        f"(process RSS after imports {rss_start / 1e6:.0f} MB)")

    sweeps, wall, ceilings = cold_sweeps(topology, cases, 1 if args.quick else 3)
    cpu = min(sweeps)
    rss_sweep = max_rss()
    per = cpu / len(cases)
    projected = per * GOAL_WORKLOADS
    exact = "" if len(cases) == GOAL_WORKLOADS else f", projected from {len(cases)}"
    met_time = projected < GOAL_SECONDS
    say(f"\ngrouped model: {cpu:.2f} s CPU for {len(cases)} workloads, {1e3 * per:.2f} ms per workload "
        f"(wall {wall:.2f} s), the least of {len(sweeps)} sweeps each from cold caches "
        f"(median {statistics.median(sweeps):.2f} s)")
    say(f"goal: {GOAL_WORKLOADS} ceilings in < {GOAL_SECONDS:g} s CPU: {projected:.2f} s{exact}: "
        f"{'PASS' if met_time else f'MISS, {projected / GOAL_SECONDS:.1f}x over'}")
    binding = defaultdict(int)
    for ceiling in ceilings:
        binding[", ".join(ceiling.binding_layers)] += 1
    say("binding layers over the sweep: " + "; ".join(f"{k} {n}" for k, n in sorted(binding.items(), key=lambda i: -i[1])))
    ranged = big_topology(ranged=True)
    ranged_cpu = min(cold_sweeps(ranged, cases, len(sweeps))[0])
    ranged_projected = ranged_cpu / len(cases) * GOAL_WORKLOADS
    met_ranged = ranged_projected < RANGED_SECONDS
    say(f"with every capacity a range ({len(ranged.ranged())} ranges; each ceiling solved at both ends): "
        f"{ranged_cpu:.2f} s CPU for {len(cases)} workloads, {1e3 * ranged_cpu / len(cases):.2f} ms per workload, "
        f"{ranged_cpu / cpu:.2f}x the single figures; goal: < {RANGED_SECONDS:g} s: {ranged_projected:.2f} s{exact}: "
        f"{'PASS' if met_ranged else f'MISS, {ranged_projected / RANGED_SECONDS:.1f}x over'}")
    peak = traced_peak(topology, cases)
    met_memory = max(peak, rss_sweep) < GOAL_BYTES
    say(f"goal: < {GOAL_BYTES / 1e6:.0f} MB: tracemalloc peak {peak / 1e6:.1f} MB while computing {len(cases)} ceilings "
        f"(second pass, traced); process max RSS {rss_sweep / 1e6:.0f} MB after the timed sweep: "
        f"{'PASS' if met_memory else 'MISS'}")

    sizes, count = ((50, 500), 50) if args.quick else ((50, 500, 5000), 200)
    say(f"\ngrowth: {count} workloads on systems of {', '.join(map(str, sizes))} groups (a fresh Model each)")
    grown = growth(sizes, count, say)
    met_growth, met_network = grown["exponent"] <= 1.2, grown["network_bytes"] < 1e6
    say(f"goal: cost grows at most as groups^1.2: groups^{grown['exponent']:.2f}: {'PASS' if met_growth else 'MISS'}")
    say(f"goal: a cached network under 1 MB at 1,000 groups: {grown['network_bytes'] / 1e6:.2f} MB held while kept, "
        f"{grown['structure_bytes'] / 1e6:.2f} MB of it its structure's (shared by networks alike): "
        f"{'PASS' if met_network else 'MISS'}")

    figures = {"workloads": len(cases), "grouped_cpu_s": cpu, "growth": grown, "grouped_wall_s": wall, "grouped_ms_per_workload": 1e3 * per,
               "grouped_cpu_s_projected_1000": projected, "goal_time_met": met_time, "goal_memory_met": met_memory,
               "tracemalloc_peak_bytes": peak, "max_rss_bytes_after_imports": rss_start,
               "max_rss_bytes_after_sweep": rss_sweep, "binding_layers": dict(binding),
               "ranged_cpu_s": ranged_cpu, "ranged_cpu_s_projected_1000": ranged_projected, "goal_ranged_time_met": met_ranged}
    if args.profile:
        figures["profile"] = profile(topology, cases, 25, say)

    pures = [i for i, case in enumerate(cases) if pure(case.workload)]
    if not pures:
        say("\nno buffered sequential workload in the sweep: no peer to compare with")
    else:
        pure_cases, pure_ceilings = [cases[i] for i in pures], [ceilings[i] for i in pures]
        model = best_cpu(topology, pure_cases) / len(pures)
        say(f"\npeers: general max-flow solvers on the {len(pures)} buffered sequential workloads, whose ceiling is a "
            "plain max-flow; each checks the model's ceilings")
        on_groups = peer(topology, pure_cases, pure_ceilings, grouped, networkx_flow, tuple(args.algorithms), AGREE)
        picked = spread(list(range(len(pures))), args.scipy_sample)
        say(f"scipy maximum_flow on the member-level graph, {len(picked)} of them (spread over the sweep; "
            "times are CPU s to build + to solve):")
        on_members = peer(topology, [pure_cases[i] for i in picked], [pure_ceilings[i] for i in picked], expand,
                          scipy_flow, METHODS, AGREE_INT32, say)
        figures["model_ms_per_pure_workload"] = 1e3 * model
        figures["networkx_grouped"], figures["scipy_members"] = on_groups, on_members
        figures["ratio"] = {}

        def line(name: str, result: dict, key: str, tolerance: float) -> None:
            fastest = result["fastest"]
            total = result["build_s"][fastest] + result["flow_s"][fastest]
            ratio, alone = total / model, result["flow_s"][fastest] / model
            figures["ratio"][key] = {"with_build": ratio, "flow_alone": alone}
            who = "the model takes less CPU" if ratio > 1 else "the PEER takes less CPU"
            say(f"  {name:32} {1e3 * total:9.3f} ms  peer/model {ratio:8.2f}x  (max-flow alone {alone:.2f}x; {who}); "
                f"{fastest}, fastest of {len(result['build_s'])}; {result['nodes']:,} nodes, {result['edges']:,} edges; "
                f"{result['cases']} workload{'s' if result['cases'] > 1 else ''}; equal to the model's ceilings within {tolerance:g}: "
                f"{'yes' if result['agree'] else 'NO'} (largest relative difference {result['largest_difference']:.1g})")

        say("\nheadline: CPU per buffered sequential workload, measured in this run")
        say(f"  {'iobound grouped model':32} {1e3 * model:9.3f} ms  (a fresh Model over all {len(pures)}, best of 3; "
            "it also names the binding layers and cache ceilings)")
        line("networkx, grouped graph", on_groups, "networkx_grouped", AGREE)
        once = scipy_built_once(topology, pure_cases, pure_ceilings)
        warm = warm_model(topology, pure_cases)
        figures["scipy_grouped_built_once"], figures["model_networks_built_once"] = once, warm
        met_peer = warm["bound_ms"] <= once["ms_per_workload"]
        say("\nthe graphs built beforehand (a peer's and the model's flow networks alike), CPU per workload:")
        say(f"  {'scipy maximum_flow, grouped':32} {once['ms_per_workload']:9.3f} ms  the flow's value; {once['method']}; "
            f"equal to the model's ceilings within {AGREE_INT32:g}: {'yes' if once['agree'] else 'NO'}")
        say(f"  {'iobound, the ceiling alone':32} {warm['bound_ms']:9.3f} ms  the same value (Model.bound)")
        say(f"  {'iobound, the whole ceiling':32} {warm['ceiling_ms']:9.3f} ms  with every layer's own limit, what binds and "
            "the caches' ceilings")
        say(f"goal: at least as fast per workload as scipy's compiled maximum_flow on the grouped graph built once: "
            f"{warm['bound_ms']:.3f} vs {once['ms_per_workload']:.3f} ms: {'PASS' if met_peer else 'MISS'}")
        line("scipy maximum_flow, member level", on_members, "scipy_members", AGREE_INT32)

        if args.baseline_sample:
            picked = spread(list(range(len(pures))), args.baseline_sample)
            say(f"\ncontext, the slowest peer: networkx on the member-level graph, {len(picked)} workload"
                f"{'s' if len(picked) > 1 else ''}")
            rows = peer(topology, [pure_cases[i] for i in picked], [pure_ceilings[i] for i in picked], expand,
                        networkx_flow, tuple(args.algorithms), AGREE, say)
            line("networkx, member level", rows, "networkx_members", AGREE)
            fastest = rows["fastest"]
            say(f"  {GOAL_WORKLOADS} workloads would take it "
                f"{(rows['build_s'][fastest] + rows['flow_s'][fastest]) * GOAL_WORKLOADS / 3600:.2f} h of CPU")
            figures["networkx_members"] = rows
    figures["max_rss_bytes_end"] = max_rss()
    say(f"\nprocess max RSS at the end (peers included): {figures['max_rss_bytes_end'] / 1e6:.0f} MB")
    if args.json:
        print(json.dumps(figures, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
