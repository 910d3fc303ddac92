"""Load and show a topology: its groups, capacities with their sources, and links; a quick validity check.

``iobound topology from-io500 FILE`` writes the topology an io500 submission's own description gives
(system-information.txt, an io500.sh with io500_info_* variables, a submission's folder, or a row of the
list database with --row), every figure it does not state a range, and lists each assumption.
Example:  iobound topology lecture
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from assess.cli.inputs import add_input_limit, add_set_argument, count_arg, edited_topology

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from topologies.topology import Topology


_IMPORT = "from-io500"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topology", metavar="TOPOLOGY",
                        help=f"topology file (TOML) or a bundled example name; or {_IMPORT} FILE")
    parser.add_argument("file", metavar="FILE", nargs="?",
                        help=f"with {_IMPORT}: an io500 description (system-information.txt, io500.sh, a "
                             "submission's folder) or the list database's CSV (with --row)")
    parser.add_argument("--row", metavar="ID", help=f"with {_IMPORT} and a list CSV: the submission's id")
    parser.add_argument("--nodes", type=count_arg, metavar="N",
                        help=f"with {_IMPORT}: the client nodes that ran io500, where the description states none "
                             "(the web form's lists the machine's node groups instead)")
    parser.add_argument("-o", "--output", metavar="FILE.toml", help=f"with {_IMPORT}: save the topology to a new file")
    add_set_argument(parser)
    add_input_limit(parser)
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope
    from topologies.topology import TOPOLOGY_VERSION

    if args.topology == _IMPORT:
        return _import(args)
    if args.file or args.row or args.output or args.nodes:
        raise InputError("topology", "", f"FILE, --row, --nodes and -o go with {_IMPORT} only (iobound topology "
                         f"{_IMPORT} FILE)")
    topology = edited_topology(args)
    if args.json:
        print(dumps(envelope("topology", TOPOLOGY_VERSION, topology.to_dict())))
    else:
        print(render(topology))
    return 0


def render(topology: Topology) -> str:
    from assess.render import TOPOLOGY_HEADERS, table, topology_rows

    links = [f"  {link.a} -- {link.b}" + (f"  ({link.bandwidth})" if link.bandwidth else "") for link in topology.links]
    tiers = [f"  {t.name} ({t.tier.value}, {t.count} per node): " + "; ".join(
        [f"{key} {c.span()} ({c.source})" for key, c in (("size", t.size), *t.rates.items()) if c]
        + ([] if t.rates else ["its rate the topology's storage for one node"])) for t in topology.kv_cache]
    return "\n".join([f"{topology.name} ({topology.path}): {topology.description}", "",
                      table(TOPOLOGY_HEADERS, topology_rows(topology), right=(2,)),
                      "", "links:", *links, *(["", "KV-cache tiers (fastest first):", *tiers] if tiers else [])])


def _import(args: argparse.Namespace) -> int:
    """Print (or save, never overwriting) the topology of an io500 description, with its assumptions as comments."""
    from pathlib import Path

    from probes.core.inputs import open_input
    from probes.readers.io500_system import looks_like_list, read_description, read_list
    from topologies.described.io500 import describe, submission_files
    from probes.core.outputs import check_new
    from topologies.save import document_text, save_document

    if not args.file:
        raise InputError(_IMPORT, "", "names no FILE: iobound topology from-io500 system-information.txt (or a "
                         "submission's folder, or the list's CSV with --row ID)")
    if args.output:
        check_new(args.output)
    path, _ = submission_files(Path(args.file))
    with open_input(path) as file:
        text = file.text()
    if looks_like_list(text):
        rows = {s.id: s for s in read_list(text, source=str(path))}
        if args.row not in rows:
            raise InputError(str(path), "--row", f"names no submission of the list; give --row ID, one of its ids "
                             f"({', '.join(list(rows)[:8])}{' ...' if len(rows) > 8 else ''})")
        description = rows[args.row].description
    elif args.row:
        raise InputError(str(path), "--row", "goes with the list database's CSV only; this is a single description")
    else:
        description = read_description(text, source=str(path))
    if args.nodes:
        description = description.given("client_nodes", str(args.nodes), "--nodes")
    described = describe(description)
    header = [f"Written by iobound topology {_IMPORT} from {path}" + (f", row {args.row}" if args.row else ""),
              f"{description.title}. Every figure the description does not state is a range (source assumption).",
              "Assumptions:", *(f"- {line}" for line in described.assumptions)]
    if described.missing:
        header += ["Not stated, so not judged or left open:", *(f"- {line}" for line in described.missing)]
    if described.topology is None:
        raise InputError(str(path), "", "too thin to build a topology from: " + "; ".join(described.blocking))
    if args.output:
        save_document(described.document, args.output, header="\n".join(header))
        print(f"wrote {args.output}: {len(described.assumptions)} assumption(s), listed at its top")
    else:
        print(document_text(described.document, header="\n".join(header)), end="")
    return 0
