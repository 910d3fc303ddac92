"""Build a storage lab here (as root): hosts in network namespaces on shaped links, sshd and sshfs between them.

Examples:
  iobound lab up lab.toml -o lab-topology.toml
  iobound lab status
  iobound lab down
A spec file says how many hosts and how fast their links are:
  clients = 3
  servers = 2
  rate = "1 Gbit/s"     # each host's link, each way (tc tbf)
  delay = "1 ms"        # optional: one way between two hosts (tc netem, where the kernel has it)
  backing = "tmpfs"     # each server's store: "tmpfs" or "file" (an ext4 image)
  size = "1 GiB"        # of each store
'up' makes a new state directory (--state-dir, default /run/iobound-lab), writes a topology of
the lab (-o, default STATE/topology.toml) and says how to run things in a client; it fails, and
removes what it made, unless every part of the lab is there. 'down' removes everything of a lab
'up' made, also after a crash or a killed 'up', and stops every process in the lab's namespaces
(also shells you started there with ip netns exec). It touches no directory 'up' did not make;
given one with no lab state, it sweeps the namespaces named iobl-* that no other lab claims.
One lab command runs at a time.
Exit status: 0 done ('status': the lab is up and whole, or there is none), 1 ('status') parts are
missing or left behind, 2 bad input, or 'up' or 'down' failed (the message says what is left).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from probes.lab import STATE_DIR, Lab, down, down_command, leftovers, parse_spec, status, up
from probes.core.units import Metric, format_quantity
from assess.cli.inputs import add_input_limit
from assess.cli.status import EXIT_FINDINGS, EXIT_OK

# lab format history:
#   1.0  first version
LAB_VERSION = "1.0"


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
    add_input_limit(make)
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
    if args.action == "status":
        return _status(args)
    return _down(args)


def _up(args: argparse.Namespace) -> int:
    """Build the lab, write its topology, show it."""
    from assess.render import dumps, envelope
    from topologies.lab import lab_topology
    from topologies.save import check_new, save_topology

    spec = parse_spec(args.spec)
    output = args.output
    if output is not None:
        check_new(output)  # before the lab is built, not after
    lab = up(spec, args.state_dir)
    path = save_topology(lab_topology(lab), output or lab.state_dir / "topology.toml",
                         header=f"The lab iobound lab up built from {args.spec} (state in {lab.state_dir}).")
    if args.json:
        print(dumps(envelope("lab", LAB_VERSION, {"lab": lab.to_dict(), "topology": str(path)})))
    else:
        print(render(lab))
        print(f"\ntopology: {path}")
        print(_usage(lab))
    return EXIT_OK


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
    """The lab for people: its links, hosts, stores and mounts, and what of it is missing."""
    from assess.render import table
    from topologies.lab import hosts_phrase

    spec = lab.spec
    state = "" if lab.complete else " (INCOMPLETE: 'up' did not finish)"
    hosts = [(h.name, h.role.value, h.namespace, h.address) for h in lab.hosts]
    stores = [(str(lab.store(s.name)), s.name, f"{spec.backing}, {spec.size:~P}") for s in lab.servers]
    mounts = [(str(lab.mount(c.name, s.name)), c.name, f"{s.name} ({s.address})")
              for c in lab.clients for s in lab.servers]
    rate = format_quantity(spec.rate, Metric.BANDWIDTH, spec.rate.units)
    lines = [f"lab in {lab.state_dir}{state}: {hosts_phrase(lab)}, links of {rate} each way (tc tbf)",
             f"delay: {_delay(lab)}", "",
             table(("host", "role", "namespace", "address"), hosts), "",
             table(("store", "of", "backing"), stores), "", table(("sshfs mount", "client", "server"), mounts)]
    if lab.missing:
        lines += ["", "missing: " + "; ".join(lab.missing), f"'{down_command(lab.state_dir)}' removes what is left"]
    return "\n".join(lines)


def _delay(lab: Lab) -> str:
    """The delay between two hosts, and whether it is in effect."""
    delay = lab.spec.delay
    if lab.delayed:
        return f"{delay:~P} one way between two hosts (tc netem)"
    if lab.netem is False:
        return ("none: this kernel has no netem (sch_netem)" if delay is None
                else f"{delay:~P} asked for but NOT in effect: this kernel has no netem (sch_netem)")
    return "none"


def _usage(lab: Lab) -> str:
    """How to run fio in a client on a server's store (a file of half the store), and how to remove the lab."""
    client, server = lab.clients[0], lab.servers[0]
    size = int(lab.spec.size.m_as("MiB")) // 2
    return (f"run things in a client: ip netns exec {client.namespace} fio --name=seq --rw=write --bs=1m "
            f"--size={size}m --end_fsync=1 --directory={lab.mount(client.name, server.name)}\n"
            f"remove it all:          {down_command(lab.state_dir)}")
