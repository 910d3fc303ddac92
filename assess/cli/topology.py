"""Load and show a topology: its groups, capacities with their sources, and links; a quick validity check.

Example:  iobound topology lecture
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from assess.cli.inputs import add_input_limit, add_set_argument, edited_topology

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from topologies.topology import Topology


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topology", metavar="TOPOLOGY", help="topology file (TOML) or a bundled example name")
    add_set_argument(parser)
    add_input_limit(parser)
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope
    from topologies.topology import TOPOLOGY_VERSION

    topology = edited_topology(args)
    if args.json:
        print(dumps(envelope("topology", TOPOLOGY_VERSION, topology.to_dict())))
    else:
        print(render(topology))
    return 0


def render(topology: Topology) -> str:
    from assess.render import TOPOLOGY_HEADERS, table, topology_rows

    links = [f"  {link.a} -- {link.b}" + (f"  ({link.bandwidth})" if link.bandwidth else "") for link in topology.links]
    return "\n".join([f"{topology.name} ({topology.path}): {topology.description}", "",
                      table(TOPOLOGY_HEADERS, topology_rows(topology), right=(2,)),
                      "", "links:", *links])
