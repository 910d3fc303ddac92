"""Measure this node and its path to a peer with ping, iperf3 and fio; write a probe set that topologies can use.

Examples:
  iobound probe serve                                       (on the peer: start the iperf3 servers)
  iobound probe --peer node02 --device /dev/nvme0n1 -o node01.json
  iobound probe show node01.json
The figures' repetitions are interleaved over the whole --budget, each repeated until its 95 %
confidence interval is within --target of the mean on a steady machine; a figure whose
repetitions drift, change or follow the neighbours is marked UNSTABLE-MACHINE. The file is saved
after every repetition: --resume continues an interrupted session, --force replaces an existing file.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Q_, format_quantity
from assess.cli.busy import add_cpus, pin, warn_if_busy
from assess.cli.inputs import add_input_limit, count_arg, fraction_arg, seconds_arg
from assess.cli.status import EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBE_FAILED
from assess.cli.terminal import say_error
from assess.progress import ProbeProgress, diagnosis, figure

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from probes.measure.cluster import Roles
    from probes.measure.plan import Plan
    from probes.measure.session import Outcome


def configure(parser: argparse.ArgumentParser) -> None:
    from probes.measure.iperf3 import DEFAULT_PORT
    from probes.measure.memory import TMPFS
    from probes.measure.probe import TARGET
    from probes.measure.session import BUDGET

    parser.add_argument("-o", "--output", metavar="FILE", help="probe set to write (default: HOSTNAME.json)")
    parser.add_argument("--peer", metavar="HOST", help="measure the network to HOST, which runs 'iobound probe serve'")
    parser.add_argument("--port", type=count_arg, default=DEFAULT_PORT, help=f"first iperf3 port of the peer (default {DEFAULT_PORT})")
    parser.add_argument("--streams", type=count_arg, default=0, help="parallel iperf3 streams (default: one per CPU)")
    parser.add_argument("--tmpfs", default=TMPFS, help=f"tmpfs directory for the memory probes (default {TMPFS})")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory probes on tmpfs")
    parser.add_argument("--jobs", type=count_arg, default=0, help="parallel fio jobs (default: one per CPU)")
    parser.add_argument("--device", action="append", default=[], metavar="PATH",
                        help="block device or file to probe with direct I/O, read only unless --write (repeatable)")
    parser.add_argument("--write", action="store_true", help="also probe writes on the devices")
    parser.add_argument("--checkpoint-generation", action="store_true",
                        help="also probe how fast this client generates checkpoint tensors (random fp32, --jobs "
                             "processes): a topology's checkpoint_generation")
    parser.add_argument("--destroy-data", action="store_true",
                        help="confirm that write probes may destroy data on devices that hold some")
    parser.add_argument("--target", type=fraction_arg, default=TARGET,
                        help=f"repeat until the 95 %% interval's half-width is under this fraction of the mean (default {TARGET})")
    parser.add_argument("--budget", type=seconds_arg, default=BUDGET,
                        help=f"seconds for all repetitions (default {BUDGET:g}: with start-up, a default run ends within 90 s)")
    parser.add_argument("--runtime", type=seconds_arg, default=1.0, help="seconds per repetition of fio and iperf3 (default 1)")
    add_cpus(parser)
    replace = parser.add_mutually_exclusive_group()
    replace.add_argument("--force", action="store_true", help="replace an existing probe set")
    replace.add_argument("--resume", action="store_true", help="continue an existing probe set, keeping what it measured")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--json", action="store_true", help="print the probe set as JSON instead of a table")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    serve = actions.add_parser("serve", help="start iperf3 servers for a peer's probes, until Ctrl-C")
    serve.add_argument("--port", dest="serve_port", type=count_arg, default=DEFAULT_PORT,
                       help=f"first port (default {DEFAULT_PORT})")
    serve.add_argument("--streams", dest="serve_streams", type=count_arg, default=0,
                       help="servers to start: as many as the prober's --streams (default: one per CPU here, at least 2)")
    serve.add_argument("--bind", metavar="ADDRESS", help="address to listen on (default: all)")
    cluster = actions.add_parser(
        "cluster", help="under mpirun/srun: each node probes itself, clients probe servers, rank 0 writes one probe set",
        description="Run with one rank per node, e.g. mpirun -n 8 iobound probe -o cluster.json cluster --servers 2, "
                    "or srun iobound probe cluster --topology site.toml. "
                    "The options before 'cluster' (--budget, --target, --device, --no-memory ...) apply to every node.")
    roles = cluster.add_mutually_exclusive_group(required=True)
    roles.add_argument("--servers", type=count_arg, metavar="N",
                       help="the last N ranks are servers (they serve iperf3); the others are clients")
    roles.add_argument("--topology", metavar="FILE",
                       help="roles from a topology: the ranks in order stand for its client groups' members, then its "
                            "server groups' (one rank each); each figure names the group of its node")
    cluster.add_argument("--contention", action="store_true",
                         help="all clients probe the servers at once, instead of one pair per server at a time")
    show = actions.add_parser("show", help="print the measurements of a probe set")
    show.add_argument("file", metavar="FILE", help="a probe set written by iobound probe")
    show.add_argument("--json", dest="show_json", action="store_true", help="print versioned JSON")
    add_input_limit(show)


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps
    from probes.measure.iperf3 import serve_forever
    from probes.measure.plan import Plan
    from probes.measure.probeset import document, read_probe_document

    if args.action == "serve":
        streams, _ = Plan(streams=args.serve_streams).parallel
        ports = range(args.serve_port, args.serve_port + streams)
        print(f"serving iperf3 on ports {ports.start}-{ports.stop - 1} for up to {streams} streams "
              f"(the prober's --streams must not exceed it); Ctrl-C stops", file=sys.stderr, flush=True)
        serve_forever(ports, bind=args.bind)
        return 0
    if args.action == "cluster":
        return _cluster(args)
    if args.action == "show":
        measurements, machine = read_probe_document(args.file)
        print(dumps(document(measurements.values(), machine)) if args.show_json
              else render(measurements.values(), machine))
        return 0
    return _probe(args)


def _probe(args: argparse.Namespace) -> int:
    from probes.measure.memory import scratch_directory
    from probes.measure.plan import plan_probes
    from probes.measure.probeset import ProbeSetFile, machine_state
    from probes.measure.session import run_probes

    plan = _plan(args)
    if not (plan.peer or plan.devices or plan.tmpfs or plan.generation):
        raise InputError("iobound probe", "", "nothing to probe: give --peer HOST, --device PATH, or drop --no-memory "
                         "(or ask for --checkpoint-generation)")
    store = ProbeSetFile(args.output or f"{socket.gethostname()}.json", force=args.force, resume=args.resume)
    pin(args.cpus)
    store.machine = machine_state()
    if not args.quiet:
        warn_if_busy(store.machine)
    progress = ProbeProgress(quiet=args.quiet)
    try:
        with scratch_directory(plan.tmpfs, str(store.path)) as scratch:
            outcome = run_probes(plan_probes(plan, scratch), store, progress, target=args.target, budget=args.budget)
    except KeyboardInterrupt:
        kept = f"{len(store.measurements)} measurements are saved in {store.path}; --resume continues" \
            if store.measurements else "nothing was measured yet"
        sys.stderr.write(f"\niobound: interrupted: {kept}\n")
        return EXIT_INTERRUPTED
    return _report(args, outcome, store.path, store.machine)


def _plan(args: argparse.Namespace) -> Plan:
    from probes.measure.plan import Plan

    if args.destroy_data and not args.write:
        raise InputError("--destroy-data", "", "only makes sense with --write (read probes never write)")
    return Plan(args.peer, args.port, args.streams, None if args.no_memory else args.tmpfs, args.jobs,
                tuple(args.device), args.write, args.destroy_data, args.runtime, args.checkpoint_generation)


def _report(args: argparse.Namespace, outcome: Outcome, path, machine: dict | None = None) -> int:
    """Print the summary table (or JSON) and the failures, as the probe set has them; exit 4 if any probe failed (the
    others are saved)."""
    from assess.render import dumps
    from probes.measure.probeset import document

    print(dumps(document(outcome.measurements, machine)) if args.json else render(outcome.measurements, machine))
    if not args.quiet:
        print(f"saved to {path}" if Path(path).exists() else "nothing measured: nothing saved", file=sys.stderr)
    for probe, error in outcome.failures:
        say_error(f"{probe.title}: {error}")
    return EXIT_PROBE_FAILED if outcome.failures else EXIT_OK


def _cluster(args: argparse.Namespace) -> int:
    from probes.measure.cluster import run_cluster  # needs mpi4py, which only cluster probing needs

    plan = _plan(args)
    outcome = run_cluster(plan, servers=args.servers or _roles(args.topology), contention=args.contention,
                          output=args.output or "cluster.json", force=args.force, resume=args.resume,
                          target=args.target, budget=args.budget, reporter=ProbeProgress(quiet=args.quiet))
    if outcome is None:  # not rank 0: rank 0 reports for everyone
        return 0
    return _report(args, outcome, args.output or "cluster.json")


def _roles(word: str) -> Roles:
    """The client and server groups of the topology in a file or bundled example, as cluster roles."""
    from probes.measure.cluster import Roles
    from topologies.bundled import group_counts
    from topologies.topology import Kind

    path, counts = group_counts(word)
    missing = [kind.value for kind in (Kind.CLIENT, Kind.SERVER) if not counts[kind]]
    if missing:
        raise InputError(str(path), "", f"has no {' and no '.join(missing)} group: a cluster probe's clients probe its "
                                        "servers, e.g. [clients.compute] count = 8 and [servers.storage] count = 2")
    return Roles(str(path), tuple(counts[Kind.CLIENT]), tuple(counts[Kind.SERVER]))


def render(measurements, machine: dict | None = None) -> str:
    """The summary table: every figure with its interval, spread and whether the precision target was met; the
    machine's state as the session began above it, where the probe set has it."""
    from assess.render import table

    rows = []
    for m in measurements:
        s = m.summary
        spread = "" if s.cv is None else f"{s.cv:.1%}"
        span = f"{format_quantity(Q_(s.min, m.unit), m.metric)} – {format_quantity(Q_(s.max, m.unit), m.metric)}"
        neighbours = f"{sum(m.others) / len(m.others):.2f}" if m.others else "-"
        rows.append((m.name, figure(m), spread, span, neighbours, diagnosis(m)[0].split(":")[0]))
    lines = [table(("measurement", "mean ± 95 % CI", "cv", "min – max", "neighbours (CPUs)", ""), rows, right=(1, 2, 4))]
    if machine:
        lines.insert(0, f"machine at the start: {machine.get('cpus')} CPUs, other processes took "
                        f"{machine.get('others_cpus', 0):.2f} of them, load average "
                        f"{(machine.get('load_average') or [0])[0]:.2f}, governor {machine.get('governor') or 'unknown'}\n")
    advice = {diagnosis(m) for m in measurements if not m.reached}
    lines += [f"{cause}: {remedy}" for cause, remedy in sorted(advice)]
    return "\n".join(lines)
