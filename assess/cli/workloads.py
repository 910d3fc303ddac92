"""The options that predict and whatif share (the system, the workload, the training workload), and the workloads
they describe (comma lists sweep)."""

from __future__ import annotations

import argparse
import itertools
from typing import TYPE_CHECKING

from probes.core.workload import Access, Operation, Workload
from assess.cli.job import JOB_HELP, job_defaults
from assess.cli.inputs import (add_input_limit, add_set_argument, count_arg, fraction_arg, list_arg, not_taken,
                               operation_arg, size_arg, transfer_arg)

if TYPE_CHECKING:
    from topologies.topology import Topology

__all__ = ["add_modelled_system", "add_training_arguments", "add_workload_arguments", "workloads_of"]


def add_modelled_system(parser: argparse.ArgumentParser) -> None:
    """The topology a command models (a file or a bundled example), changed by --set, and the workload asked of it."""
    parser.add_argument("topology", metavar="TOPOLOGY", help="topology file (TOML) or a bundled example name, e.g. lecture")
    add_set_argument(parser)
    add_input_limit(parser)
    add_workload_arguments(parser, op_required=False)


# The options (by their dest) that every question about a modelled system takes: the system, edits to it, the clients
# and the output's form; and those of the training workload (add_training_arguments).
SYSTEM_OPTIONS = frozenset({"topology", "changes", "max_input_size", "json", "clients"})
TRAINING_OPTIONS = frozenset({"model", "accelerator", "au", "read_threads", "accelerators_table"})


def refuse_unused(args: argparse.Namespace, command: str, question: str, taken: frozenset[str],
                  what: str = "workload") -> None:
    """Refuse by name the options of ``command`` given that ``question`` (its checkpoint or accelerator one) does not
    take, besides :data:`SYSTEM_OPTIONS` and ``taken``: left unused, they would seem to have been answered."""
    from probes.core.errors import InputError

    if unused := not_taken(args, command, SYSTEM_OPTIONS | taken):
        raise InputError(unused[0], "", f"does not apply to {question}: that question asks no {what} of its own; "
                         f"leave out {', '.join(unused)}")


def add_training_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The MLPerf Storage training workload, in a group of its own: --model, --accelerator, --au, --read-threads and
    --accelerators-table (a command adds its own accelerator questions to the group it returns)."""
    group = parser.add_argument_group("accelerators (MLPerf Storage training; --op is then not needed)")
    group.add_argument("--model", metavar="MODEL", help="the training workload: unet3d, resnet50, cosmoflow ...")
    group.add_argument("--accelerator", metavar="TYPE", help="the accelerator it is timed for: a100, h100, b200 ...")
    group.add_argument("--au", type=fraction_arg, metavar="AU",
                       help="the accelerator utilisation to reach, e.g. 0.9 (default: the workload's minimum)")
    group.add_argument("--read-threads", type=count_arg, metavar="N",
                       help="DLIO's reader.read_threads per accelerator: requests in flight (default: not bounded)")
    group.add_argument("--accelerators-table", metavar="FILE",
                       help="your own [model.accelerator] entries (same form as models/accelerators.toml)")
    return group


def add_workload_arguments(parser: argparse.ArgumentParser, *, op_required: bool = True) -> None:
    """The options that describe a workload: --op, --transfer-size, --nodes ... --clients (``op_required=False`` where
    the command has questions of its own that imply the operation: accelerators, a checkpoint)."""
    parser.add_argument("--op", required=op_required, type=list_arg(operation_arg), metavar="OP[,OP]",
                        help="write, read, read+write (both at once: --read-share), or a metadata operation "
                             "(create, stat, open, rename, remove, find)")
    parser.add_argument("--read-share", type=fraction_arg, default=0.5, metavar="R",
                        help="for read+write, the share of the bytes read (default 0.5)")
    parser.add_argument("--transfer-size", type=list_arg(transfer_arg), default=[None], metavar="SIZE[,SIZE]",
                        help="size of one request, e.g. 1MiB, 64KiB (default: unknown, per-request limits left out)")
    parser.add_argument("--nodes", type=list_arg(count_arg), metavar="N[,N]",
                        help=f"client nodes that run it (default: all of the client group; with several groups, "
                        f"unknown: the limits that need the count are left out; {JOB_HELP})")
    parser.add_argument("--ppn", type=list_arg(count_arg), metavar="N[,N]",
                        help=f"processes per node (default 1; {JOB_HELP})")
    parser.add_argument("--queue-depth", type=list_arg(count_arg), default=[1], metavar="N[,N]",
                        help="requests in flight per process (default 1)")
    parser.add_argument("--access", choices=[a.value for a in Access], default="sequential", help="default sequential")
    parser.add_argument("--direct", action="store_true", help="direct I/O (O_DIRECT): no page cache, no readahead")
    parser.add_argument("--data-set", type=size_arg, metavar="SIZE", help="bytes all processes move, e.g. 2TiB: "
                        "decides whether a cache can serve the data")
    parser.add_argument("--shared-directory", action="store_true", default=None,
                        help="metadata operations of every process in one directory")
    parser.add_argument("--clients", action="append", metavar="GROUP", help="client group that runs it (repeatable; default all)")


def workloads_of(args: argparse.Namespace, topology: Topology) -> tuple[list[Workload], tuple[str, ...] | None]:
    """Every combination of the options' values, once each, and the client groups named (None: all).

    Without --nodes, one client group runs it with all its members (a known count); inside a batch job, --nodes and
    --ppn default to the job's (:func:`assess.cli.job.job_defaults`, which says so once).
    """
    from topologies.topology import Kind

    if args.nodes is None or args.ppn is None:
        job_defaults(args, listed=True)

    clients = tuple(args.clients) if args.clients else None
    groups = clients or tuple(g.name for g in topology.of_kind(Kind.CLIENT))
    nodes = args.nodes
    if nodes == [None] and len(groups) == 1 and groups[0] in {g.name for g in topology.groups}:
        nodes = [topology.group(groups[0]).count]
    workloads = [Workload(op, None if op.is_metadata else size, nodes=n, ppn=ppn, queue_depth=depth,
                          access=Access(args.access), direct=args.direct or None, data_set=args.data_set,
                          shared_directory=args.shared_directory if op.is_metadata else None,
                          read_share=args.read_share if op is Operation.MIXED else None)
                 for op, size, n, ppn, depth in itertools.product(
                     args.op, args.transfer_size, nodes, args.ppn, args.queue_depth)]
    return list(dict.fromkeys(workloads)), clients
