"""Build a storage lab here (as root): hosts in network namespaces on shaped links, sshd and sshfs between them.

Examples:
  iobound lab up lab.toml -o lab-topology.toml --cipher aes128-gcm@openssh.com
  iobound lab up lab.toml --slurm      (a Slurm whose nodes are the hosts: srun -N 3 runs on three of them)
  iobound lab probe -o lab-probed.toml
  iobound lab status
  iobound lab down
A spec file says how many hosts and how fast their links are, for all, per role or per host:
  rate = "1 Gbit/s"     # each host's link, each way (tc tbf), unless its role or the host says otherwise
  delay = "1 ms"        # optional: added to what each host sends (tc netem, where the kernel has it)
  backing = "tmpfs"     # each server's store: "tmpfs" or "file" (an ext4 image)
  size = "1 GiB"        # of each store
  [clients]             # or just: clients = 3
  count = 3
  rate = "500 Mbit/s"
  [servers]             # or just: servers = 2 (0: a client-only experiment)
  count = 2
  [hosts.s2]            # one host's own rate, delay, backing, size
  backing = "file"
'up' makes a new state directory (--state-dir, default /run/iobound-lab), measures what one
server's sshd serves to all clients at once before it shapes the links, writes a topology of
the lab (-o, default STATE/topology.toml: what TCP carries over each link, and the file service)
and says how to run things in a client; it fails, and removes what it made, unless every part of
the lab is there. 'probe' measures each group of hosts' links with iperf3 from inside the lab's
namespaces, and writes the topology with each link's capacity taken from its probe (-o, default
lab-probed.toml, its probe set beside it as lab-probed.json). 'down' removes everything of a lab
'up' made, also after a crash or a killed 'up', and stops every process in the lab's namespaces
(also shells you started there with ip netns exec). It touches no directory 'up' did not make;
given one with no lab state, it sweeps the namespaces named iobl-* that no other lab claims.
One lab command runs at a time.
Exit status: 0 done ('status': the lab is up and whole, or there is none), 1 ('status') parts are
missing or left behind, 2 bad input, or 'up' or 'down' failed (the message says what is left),
4 ('probe') some probes failed (the topology keeps the spec's figures for them).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from probes.core.errors import InputError
from probes.lab import STATE_DIR, Lab, down, down_command, leftovers, links_phrase, parse_spec, per_host, status, up
from probes.core.units import Q_, Metric, format_quantity
from assess.cli.busy import add_cpus, pin, warn_if_busy
from assess.cli.inputs import add_input_limit, fraction_arg, seconds_arg
from assess.cli.status import EXIT_FINDINGS, EXIT_OK, EXIT_PROBE_FAILED
from assess.cli.terminal import say_error

# lab format history:
#   1.2  the lab's slurm: whether it runs a Slurm of its own (up --slurm)
#   1.1  the lab's hosts with their own rate, delay, backing and size; its cipher and file service; lab-probe documents
#   1.0  first version
LAB_VERSION = "1.2"
# Seconds for all repetitions of 'lab probe': six repetitions (a drift test's least) of six probes (two groups, two
# directions; the file service read and written) of 1 s and iperf3's start-up.
PROBE_BUDGET = 50.0
PROBED = Path("lab-probed.toml")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the actions up, status and down, each with --state-dir and --json."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--state-dir", type=Path, default=STATE_DIR,
                        help=f"where the lab keeps its state, keys, stores and mounts (default {STATE_DIR})")
    common.add_argument("--json", action="store_true", help="print versioned JSON instead of text")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    make = actions.add_parser("up", parents=[common], help="build the lab of a spec file and write its topology")
    make.add_argument("spec", metavar="SPEC", help="the lab's spec (TOML: clients, servers, rate ...)")
    make.add_argument("-o", "--output", type=Path, metavar="TOPOLOGY",
                      help="topology file to write, never overwritten (default: STATE/topology.toml)")
    make.add_argument("--cipher", metavar="NAME",
                      help="the cipher sshfs asks ssh for, e.g. aes128-gcm@openssh.com (cheaper where the CPU has AES "
                           "instructions; default: ssh's own choice; ssh -Q cipher lists them)")
    make.add_argument("--slurm", action="store_true",
                      help="also run a Slurm: munge and slurmctld on the bridge, a slurmd in each host as its node "
                           "(every file in STATE/slurm; the machine's own Slurm and munge are left alone)")
    add_input_limit(make)
    probe = actions.add_parser("probe", parents=[common],
                               help="probe each group's links from inside the lab, write the probed topology")
    probe.add_argument("-o", "--output", type=Path, default=PROBED, metavar="TOPOLOGY",
                       help=f"topology file to write, its probe set beside it as .json (default {PROBED})")
    probe.add_argument("--budget", type=seconds_arg, default=PROBE_BUDGET,
                       help=f"seconds for all repetitions (default {PROBE_BUDGET:g})")
    probe.add_argument("--runtime", type=seconds_arg, default=1.0, help="seconds per iperf3 repetition (default 1)")
    probe.add_argument("--target", type=fraction_arg, default=0.05,
                       help="repeat until the 95 %% interval's half-width is under this fraction of the mean "
                            "(default 0.05)")
    add_cpus(probe, "the probing tools (not the lab's sshd and sshfs, started by up)")
    probe.add_argument("--force", action="store_true", help="replace the topology and probe set if they exist")
    probe.add_argument("--quiet", action="store_true", help="no progress on stderr")
    actions.add_parser("status", parents=[common], help="show the lab, each part checked live")
    actions.add_parser("down", parents=[common],
                       help="remove everything of the lab; stops every process in its namespaces, yours too",
                       description="Remove the lab of --state-dir: its sshfs mounts and stores, every process in "
                                   "its namespaces (SIGTERM, then SIGKILL; also shells you started there with ip "
                                   "netns exec), the namespaces and the state directory. A directory 'up' did not "
                                   "make is refused and left as it is.")


def execute(args: argparse.Namespace) -> int:
    """Run the action ``args`` names and return the exit status."""
    if args.action == "up":
        return _up(args)
    if args.action == "probe":
        return _probe(args)
    if args.action == "status":
        return _status(args)
    return _down(args)


def _up(args: argparse.Namespace) -> int:
    """Build the lab, write its topology, show it."""
    from assess.render import dumps, envelope
    from topologies.described.lab import lab_topology
    from probes.core.outputs import check_new
    from topologies.save import save_topology

    spec = parse_spec(args.spec)
    output = args.output
    if output is not None:
        check_new(output)  # before the lab is built, not after
    lab = up(spec, args.state_dir, cipher=args.cipher, slurm=args.slurm)
    path = None
    if lab.servers:
        path = save_topology(lab_topology(lab), output or lab.state_dir / "topology.toml",
                             header=f"The lab iobound lab up built from {args.spec} (state in {lab.state_dir}).")
    if args.json:
        print(dumps(envelope("lab", LAB_VERSION, {"lab": lab.to_dict(), "topology": str(path) if path else None})))
    else:
        print(render(lab))
        print(f"\ntopology: {path}" if path else "\nno topology: a lab without servers has no storage to model")
        print(_usage(lab))
    return EXIT_OK


def _probe(args: argparse.Namespace) -> int:
    """Probe the lab's links from inside it, write the probe set and the topology that links to it, show them."""
    from assess.cli.probe import render as render_probes  # the same table as iobound probe's
    from assess.progress import ProbeProgress
    from assess.render import dumps, envelope
    from probes.lab import probe, running
    from probes.measure.probeset import ProbeSetFile, machine_state
    from topologies.described.lab import save_probed
    from topologies.load import load_topology
    from probes.core.outputs import check_new

    output = args.output
    probe_set = output.with_suffix(".json")
    if output.suffix != ".toml":
        raise InputError(str(output), "", "a topology file ends in .toml (its probe set goes beside it as .json)")
    if not args.force:  # before probing, not after
        check_new(output)
        check_new(probe_set)
    store = ProbeSetFile(probe_set, force=args.force)
    running(args.state_dir)  # a lab to probe, before the machine's state is taken
    pin(args.cpus)
    store.machine = machine_state()
    if not args.quiet:
        warn_if_busy(store.machine, "the lab's links and file service share them, so ")
    done = probe(store, ProbeProgress(quiet=args.quiet), args.state_dir, runtime=args.runtime, budget=args.budget,
                 target=args.target)
    measurements = done.outcome.measurements
    path = None
    if done.lab.servers:
        if args.force:
            output.unlink(missing_ok=True)
        path, served = save_probed(done.lab, output, probe_set.name,
                                   {m.name: m.value.m_as("B/s") for m in measurements if m.complete},
                                   header=f"The lab in {done.lab.state_dir}, probed by iobound lab probe "
                                          f"({probe_set.name}).")
        done = replace(done, notes=done.notes + served)
    failures = [f"{p.title}: {error}" for p, error in done.outcome.failures]
    if args.json:
        print(dumps(envelope("lab-probe", LAB_VERSION, {
            "lab": done.lab.to_dict(), "probe_set": str(probe_set), "topology": str(path) if path else None,
            "measurements": [m.to_dict() for m in measurements], "notes": list(done.notes), "failures": failures})))
    else:
        lines = [render_probes(measurements), ""] + [f"note: {note}" for note in done.notes]
        if path:
            lines += [_capacities(load_topology(path)), "", f"topology: {path} (probe set: {probe_set})",
                      f"next:     iobound predict {path} --op read,write --transfer-size 1MiB "
                      f"--nodes {','.join(map(str, sorted({1, len(done.lab.clients)})))}"]
        else:
            lines += [f"probe set: {probe_set}", "no topology: a lab without servers has no storage to model"]
        print("\n".join(lines))
    for failure in failures:
        say_error(failure)
    return EXIT_PROBE_FAILED if failures else EXIT_OK


def _status(args: argparse.Namespace) -> int:
    """Show the lab checked live, or what is left of one."""
    from assess.render import dumps, envelope

    lab = status(args.state_dir)
    left = leftovers(args.state_dir) if lab is None else []
    if args.json:
        print(dumps(envelope("lab", LAB_VERSION, {"lab": lab.to_dict() if lab else None, "leftovers": left})))
    elif lab is None:
        print(f"no lab is up in {args.state_dir}" + (f"; found: {'; '.join(left)}" if left else ""))
    else:
        print(render(lab) + (f"\n{_usage(lab)}" if lab.healthy else ""))
    return EXIT_OK if (lab is None and not left) or (lab is not None and lab.healthy) else EXIT_FINDINGS


def _down(args: argparse.Namespace) -> int:
    """Remove the lab and say how down decided what was the lab's, and what it removed."""
    from assess.render import dumps, envelope

    done = down(args.state_dir)
    if args.json:
        print(dumps(envelope("lab-down", LAB_VERSION, {"notes": list(done.notes), "removed": list(done.removed)})))
    else:
        lines = [f"note: {note}" for note in done.notes] + [f"removed {what}" for what in done.removed]
        print("\n".join(lines) if done.removed else "\n".join(lines + ["nothing of a lab was left to remove"]))
    return EXIT_OK


def render(lab: Lab) -> str:
    """The lab for people: its links, hosts, file service, stores and mounts, and what of it is missing."""
    from assess.render import table
    from topologies.described.lab import hosts_phrase

    state = "" if lab.complete else " (INCOMPLETE: 'up' did not finish)"
    hosts = [(h.name, h.role.value, h.namespace, h.address, format_quantity(h.rate, Metric.BANDWIDTH, h.rate.units))
             for h in lab.hosts]
    lines = [f"lab in {lab.state_dir}{state}: {hosts_phrase(lab)}, links of {links_phrase(lab)} each way (tc tbf)",
             f"delay: {_delay(lab)}", "sshfs: " + (lab.cipher or "ssh's default cipher")]
    if lab.slurm:
        from probes.lab.slurm import CONTROLLER, CONTROLLER_ADDRESS, conf

        lines.append(f"slurm: slurmctld {CONTROLLER} at {CONTROLLER_ADDRESS} (on the bridge), a node in each host "
                     f"({', '.join(h.name for h in lab.hosts)}); SLURM_CONF={conf(lab)}")
    if lab.service:
        served = format_quantity(Q_(sum(lab.service.samples) / len(lab.service.samples), "B/s"), Metric.BANDWIDTH)
        lines.append(f"file service: {lab.service.server}'s sshd served {served} to {lab.service.streams} sshfs "
                     f"reader(s) at once, before the links were shaped")
    lines += ["", table(("host", "role", "namespace", "address", "link"), hosts, right=(4,))]
    if lab.servers:
        stores = [(str(lab.store(s.name)), s.name, f"{s.backing}, {s.size:~P}") for s in lab.servers]
        mounts = [(str(lab.mount(c.name, s.name)), c.name, f"{s.name} ({s.address})")
                  for c in lab.clients for s in lab.servers]
        lines += ["", table(("store", "of", "backing"), stores), "", table(("sshfs mount", "client", "server"), mounts)]
    if lab.missing:
        lines += ["", "missing: " + "; ".join(lab.missing), f"'{down_command(lab.state_dir)}' removes what is left"]
    return "\n".join(lines)


def _delay(lab: Lab) -> str:
    """The delay added to what each host sends, and whether it is in effect."""
    asked = [h for h in lab.hosts if h.delay is not None]
    if not asked:
        return "none: this kernel has no netem (sch_netem)" if lab.netem is False else "none"
    delays = per_host(lab, lambda h: None if h.delay is None else f"{h.delay:~P}")
    if lab.netem is False:
        return f"{delays} asked for but NOT in effect: this kernel has no netem (sch_netem)"
    if len(asked) == len(lab.hosts) and " (" not in delays:
        return f"{delays} one way between two hosts (tc netem)"
    return f"added to what each host sends: {delays} (tc netem)"


def _capacities(topology) -> str:
    """The probed topology's capacities for people: each group's figure and where it comes from (a probe's name)."""
    from assess.render import table

    def figure(capacity) -> str:
        if capacity.value is None:
            return "unlimited"
        ends = capacity.range or (capacity.value,)
        return " – ".join(format_quantity(end, capacity.metric) for end in ends)

    def source(capacity) -> str:
        if capacity.source.kind == "probe":  # its note begins with the probe set and the measurement
            return f"probe {capacity.source.note.split(',')[0]}"
        return capacity.source.kind

    rows = [(group.name, key, figure(c), source(c)) for group in topology.groups for key, c in group.capacities.items()]
    return table(("group", "capacity", "figure", "source"), rows, right=(2,))


def _usage(lab: Lab) -> str:
    """How to probe the lab and run fio in a client on a server's store (a file of half the store), and how to remove
    the lab."""
    client = lab.clients[0]
    lines = [f"probe its links:        iobound lab probe{_state_option(lab)} -o lab-probed.toml"]
    if lab.servers:
        server = lab.servers[0]
        size = int(server.size.m_as("MiB")) // 2
        lines.append(f"run things in a client: ip netns exec {client.namespace} fio --name=seq --rw=write --bs=1m "
                     f"--size={size}m --end_fsync=1 --directory={lab.mount(client.name, server.name)}")
    else:
        lines.append(f"run things in a client: ip netns exec {client.namespace} COMMAND")
    if lab.slurm:
        from probes.lab.slurm import usage

        lines.append(f"run a job on its Slurm: {usage(lab)}")
    return "\n".join(lines + [f"remove it all:          {down_command(lab.state_dir)}"])


def _state_option(lab: Lab) -> str:
    """``--state-dir DIR`` for a lab whose state is not in the default directory."""
    return "" if lab.state_dir == STATE_DIR else f" --state-dir {lab.state_dir}"

