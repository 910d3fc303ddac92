"""Probing a cluster under mpirun/srun (mpi4py): nodes probe themselves, clients probe servers, rank 0 writes one set.

Roles: the last ``servers`` ranks serve iperf3, the others are clients; or a topology's :class:`Roles`, where the
ranks in order stand for the members of its client groups, then of its server groups, and each figure's parameters
name the group of its node (``group``) or of its client and server (``client_group``, ``server_group``). The lowest
rank of each host also probes its node. Names say where a figure was taken:

  ``node.<host>.<name>``                        memory and device probes, by the lowest rank of each host
  ``net.<host>-r<rank>.<host>-r<rank>.<name>``  ping and iperf3 from a client rank to a server rank

e.g. ``node.n01.tmpfs.read.bs1m.jobs2.bandwidth`` and ``net.n01-r0.n09-r8.iperf3.send.p1``; the
parameters of a network figure name its client, server, round and whether clients contended.

Schedule: all node probes first, then rounds of network probes with a barrier between rounds.
Without contention round r pairs client i with server (i + r) mod max(clients, servers), so every
pair is measured once and no server serves two clients at a time; with contention one round sends
every client i to server i mod servers at once. After every phase rank 0 gathers what the ranks
measured and saves the file, so an interrupted run loses one phase at most (``resume`` goes on).

Budget: the phases share it by probe count (the node phase as many shares as the busiest node has
probes, each round as many as one pair has), and every rank spreads its phase's share over its own
probes; each probe still takes at least three repetitions, so a tight budget can be overrun.

Under srun (``srun --mpi=pmi2`` for the mpich wheel) rank 0 records the job in the probe set (its id, nodes,
processes per node and hosts: :mod:`probes.measure.batch`); an MPI that sees each of srun's tasks alone is refused.
"""

from __future__ import annotations

import shutil
import socket
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace

from probes.core.errors import InputError, IoboundError, ProbeError
from probes.core.host import this_host
from probes.measure.batch import current_job, reachable_address, step_tasks
from probes.measure.iperf3 import serve
from probes.core.measurement import Measurement
from probes.measure.memory import scratch_directory
from probes.measure.plan import Plan, plan_probes
from probes.measure.probe import Probe
from probes.measure.probeset import ProbeSetFile
from probes.measure.tool import locate
from probes.measure.session import Outcome, Reporter, run_probes

__all__ = ["Roles", "run_cluster", "schedule"]


@dataclass(frozen=True)
class Roles:
    """A topology's client and server groups as (name, members), in its order; ``source`` names the topology."""

    source: str
    clients: tuple[tuple[str, int], ...]
    servers: tuple[tuple[str, int], ...]

    def groups(self, ranks: int) -> list[str]:
        """The group each rank stands for: the clients' members, then the servers'; InputError naming both counts
        where the members are not as many as the ranks."""
        members = sum(n for _, n in self.clients + self.servers)
        if members != ranks:
            listed = ", ".join(f"{name} {n}" for name, n in self.clients + self.servers)
            raise InputError(self.source, "", f"its client and server groups have {members} members ({listed}), but "
                                              f"{ranks} rank(s) run: start one rank per member (one per node)")
        return [name for name, n in self.clients + self.servers for _ in range(n)]


def schedule(clients: int, servers: int, contention: bool = False) -> list[list[tuple[int, int]]]:
    """Rounds of (client, server) index pairs: every pair once and no server twice in a round, or all at once."""
    if contention:
        return [[(i, i % servers) for i in range(clients)]]
    n = max(clients, servers)
    return [[(i, (i + r) % n) for i in range(clients) if (i + r) % n < servers] for r in range(n)]


def run_cluster(plan: Plan, *, servers: int | Roles, contention: bool, output: str, force: bool, resume: bool,
                target: float, budget: float, reporter: Reporter) -> Outcome | None:
    """Run on every rank; rank 0 returns the Outcome of the whole cluster, the others None. ``servers``: the last N
    ranks serve, or a topology's Roles say which.

    A problem found before anything is measured (an existing output, a missing tool, a busy
    port) is raised on every rank alike, so all of them stop cleanly; a later error aborts them all.
    """
    comm = _world()
    rank, size = comm.Get_rank(), comm.Get_size()
    tasks = step_tasks()
    if size == 1 and tasks > 1:
        raise ProbeError(f"srun started {tasks} tasks, but MPI sees each alone: start them with srun --mpi=pmi2 (the "
                         "mpich wheel speaks PMI-2), or with the MPI launcher the site's mpi4py was built for")
    groups: list[str | None] = [None] * size
    if isinstance(servers, Roles):
        groups, servers = servers.groups(size), sum(n for _, n in servers.servers)
    if not 0 < servers < size:
        hint = " (start it with mpiexec -n N or srun)" if size == 1 else ""
        raise InputError("--servers", "", f"{servers} server rank(s) leave no client among {size} rank(s){hint}; "
                                          "the last N ranks serve iperf3, the others are clients")
    # A peer is reached by its host name, or where that does not resolve (as in the lab), under Slurm by the address
    # its launch node reaches it by
    hosts, addresses = zip(*comm.allgather((this_host().hostname, reachable_address())))
    hosts = list(hosts)
    # Clients and servers must agree on ports and processes per pair: rank 0's stream count holds for all.
    plan = replace(plan, streams=comm.bcast(plan.parallel[0] if rank == 0 else None))
    first = size - servers
    rounds = [[(c, first + s) for c, s in pairs] for pairs in schedule(first, servers, contention)]
    with ExitStack() as stack:
        store, node, net, problem = None, [], [[] for _ in rounds], None
        try:
            store = ProbeSetFile(output, force=force, resume=resume) if rank == 0 else None
            if store is not None and (job := current_job()) is not None:
                store.job = job.to_dict()
            if hosts.index(hosts[rank]) == rank:
                node = _node_probes(plan, rank, hosts[rank], stack.enter_context(scratch_directory(plan.tmpfs, output)),
                                    _named(group=groups[rank]))
            net, ports = _network_probes(plan, rank, hosts, list(addresses), groups, rounds, first, contention)
            if ports:  # setpriv ties each server to this rank: MPI stops the ranks of a failed run with SIGKILL
                tied = ("setpriv", "--pdeathsig", "TERM") if shutil.which("setpriv") else ()
                stack.enter_context(serve(ports, prefix=tied))
            for tool in sorted({p.tool for p in node + sum(net, [])}):
                locate(tool)
        except (IoboundError, OSError) as exc:
            problem = exc
        found = comm.allgather((problem, len(node), max(map(len, net))))
        for k, (problem, _, _) in enumerate(found):
            if isinstance(problem, InputError):
                raise problem
            if problem is not None:
                raise ProbeError(f"rank {k} on {hosts[k]}: {problem}") from problem
        existing = comm.bcast(store.measurements if rank == 0 else None)
        # A figure the file holds from other commands would be lost: every rank learns it before anyone measures.
        mine = _Share(existing, output)
        mine.refuse_conflicts(sum(comm.allgather([n for p in node + sum(net, []) for n in mine.conflicts(p)]), []))
        widest, per_round = max(f[1] for f in found), max(f[2] for f in found)
        share = budget / max(widest + len(rounds) * per_round, 1)
        failures: list[tuple[Probe, ProbeError]] = []
        try:
            for probes, phase in [(node, widest)] + [(probes, per_round) for probes in net]:
                _phase(comm, store, probes, existing, reporter, target, share * phase, failures, output)
        except BaseException as exc:  # MPI would wait for ever for a rank that left: stop them all
            stack.close()
            what = ": ".join(filter(None, (type(exc).__name__, str(exc))))
            print(f"iobound: error on rank {rank} ({hosts[rank]}): {what}; stopping every rank",
                  file=sys.stderr, flush=True)
            comm.Abort(3)
    return Outcome(tuple(store.measurements.values()), tuple(failures)) if rank == 0 else None


def _node_probes(plan: Plan, rank: int, host: str, scratch: str | None, group: dict[str, str]) -> list[Probe]:
    """The memory and device probes of this rank's node, named ``node.<host>.``; ``group``: the parameter naming the
    topology group it stands for, if any."""
    return [_renamed(p, f"node.{host}.", f"{host}-r{rank} node", {"node": host, "rank": rank} | group)
            for p in plan_probes(replace(plan, peer=None), scratch)]


def _network_probes(plan: Plan, rank: int, hosts: list[str], addresses: list[str | None], groups: list[str | None],
                    rounds: list[list[tuple[int, int]]], first: int,
                    contention: bool) -> tuple[list[list[Probe]], list[int]]:
    """This client's ping and iperf3 probes in each round, and the ports this server serves; a server is reached by
    its host name, or at its address where the name does not resolve here; ``groups``: the topology group of each rank.

    Each pair gets ``streams`` ports (iperf3 before 3.16 runs a server per stream): a block per
    server, so servers on one host do not collide, or with contention a block per client.
    """
    streams, _ = plan.parallel
    labels = [f"{host}-r{r}" for r, host in enumerate(hosts)]
    net, ports = [[] for _ in rounds], set()
    for number, pairs in enumerate(rounds, 1):
        for client, server in pairs:
            port = plan.port + (client if contention else server - first) * streams
            if server == rank:
                ports.update(range(port, port + streams))
            if client == rank:
                peer = "127.0.0.1" if hosts[server] == hosts[rank] else _reached(hosts[server], addresses[server])
                where = {"client": labels[client], "server": labels[server], "round": number, "rounds": len(rounds),
                         "contention": contention, "pairs": len(pairs),
                         **_named(client_group=groups[client], server_group=groups[server])}
                title = f"{labels[client]} -> {labels[server]}, round {number}/{len(rounds)}"
                prefix = f"net.{labels[client]}.{labels[server]}."
                pair = Plan(peer, port, streams, None, runtime=plan.runtime)
                net[number - 1] = [_renamed(p, prefix, title, where) for p in plan_probes(pair, None)]
    return net, sorted(ports)


def _phase(comm, store: ProbeSetFile | None, probes: list[Probe], existing: dict[str, Measurement],
           reporter: Reporter, target: float, budget: float, failures: list, output) -> None:
    """Run this rank's ``probes`` of one phase, wait for every rank, and gather their results into rank 0's file."""
    done = _Share({o.name: existing[o.name] for p in probes for o in p.outputs if o.name in existing}, output)
    outcome = run_probes(probes, done, reporter, target=target, budget=budget)
    request = comm.Ibarrier()  # no rank starts the next phase before all finished this one
    while not request.Test():
        time.sleep(0.01)  # MPI's blocking barrier spins a core, which the ranks still measuring need
    gathered = comm.gather((outcome.measurements, [(replace(p, once=_ran_elsewhere), e) for p, e in outcome.failures]))
    if store is not None:
        measured = [m for ms, _ in gathered for m in ms]
        if measured:
            store.record(measured)
        failures += [f for _, fs in gathered for f in fs]


class _Share(ProbeSetFile):
    """One rank's results of one phase, kept in memory until rank 0 gathers them into the probe set file."""

    def __init__(self, measurements: dict[str, Measurement], path):
        self.measurements, self.path = measurements, path

    def record(self, measurements: list[Measurement]) -> None:
        self.measurements.update((m.name, m) for m in measurements)


def _renamed(probe: Probe, prefix: str, where: str, parameters: dict) -> Probe:
    """``probe`` with ``prefix`` on its output names, ``where`` in its title and ``parameters`` added."""
    once = probe.once
    return replace(probe, title=f"{where}: {probe.title}",
                   outputs=tuple(replace(o, name=prefix + o.name) for o in probe.outputs),
                   once=lambda: {prefix + name: value for name, value in once().items()},
                   parameters={**probe.parameters, **parameters})


def _named(**groups: str | None) -> dict[str, str]:
    """The parameters naming topology groups, none where the ranks stand for no topology's."""
    return {key: group for key, group in groups.items() if group is not None}


def _reached(host: str, address: str | None) -> str:
    """``host`` if its name resolves here, else ``address`` where there is one (the job's launch node's route)."""
    if address is None:
        return host
    try:
        socket.getaddrinfo(host, None)
    except OSError:  # socket.gaierror: no such name here
        return address
    return host


def _ran_elsewhere():
    """Stands in for a failed probe's runner when it is sent to rank 0: closures cannot be pickled."""
    raise ProbeError("this probe ran on another rank")


def _world():
    """MPI's world communicator; ProbeError saying how to install mpi4py and an MPI library if either is missing."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ProbeError(f"cluster runs need mpi4py and an MPI library ({exc}); install both with "
                         "pip install 'iobound[cluster]' (the mpi4py and mpich wheels), or build mpi4py against "
                         "the site's MPI with pip install --no-binary mpi4py mpi4py") from None
    return MPI.COMM_WORLD
