"""Turning command-line words into inputs: quantities, counts, operations, unit aliases (files: :mod:`topologies.bundled`)."""

from __future__ import annotations

import argparse
import re
from typing import Any, Callable

from probes.core.errors import UnitError
from probes.core.units import Metric, parse_quantity
from probes.core.workload import MOST_COUNT, Operation, checked_transfer_size

__all__ = ["add_input_limit", "input_size_arg", "seconds_arg", "add_set_argument", "edited_topology", "size_arg", "transfer_arg", "alias_arg", "count_arg", "operation_arg", "list_arg", "fraction_arg", "add_unit_alias",
           "share_arg", "positive_share_arg", "growth_arg", "ratio_arg", "spares_arg", "rate_arg", "ports_arg"]


def size_arg(text: str):
    """A size of at least one byte (a transfer, a data set): smaller is no request at all."""
    try:
        size = parse_quantity(text, Metric.SIZE, what="the size", positive=True)
    except UnitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if size.m_as("B") < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte. Got {text!r} instead.")
    return size


def transfer_arg(text: str):
    """The size of one request: at least one byte, and no more than a process's memory holds."""
    try:
        return checked_transfer_size(size_arg(text))
    except UnitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def list_arg(item):
    """An argparse type for a comma-separated list of what ``item`` parses: ``list_arg(count_arg)`` reads 1,2,4."""
    def parse(text: str) -> list:
        return [item(part.strip()) for part in text.split(",") if part.strip()]
    parse.__name__ = getattr(item, "__name__", "value")  # argparse names the type in its error messages
    return parse


def operation_arg(text: str) -> Operation:
    try:
        return Operation(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(o.value for o in Operation)}. Got {text!r} instead.") from None




def checked(text: str, read: Callable[[str], Any], fits: Callable[[Any], bool], expected: str) -> Any:
    """``read(text)`` where it reads and ``fits``; else argparse's one line: what was ``expected``, and what was given."""
    try:
        value = read(text)
    except (ValueError, ZeroDivisionError):
        value = None
    if value is None or not fits(value):
        raise argparse.ArgumentTypeError(f"must be {expected}. Got {text!r} instead.")
    return value


def count_arg(text: str) -> int:
    return checked(text, int, lambda v: 1 <= v <= MOST_COUNT, f"a whole number from 1 to {MOST_COUNT:,}")


def alias_arg(text: str) -> tuple[str, str]:
    """``WRITTEN=MEANT``: what an ambiguous unit means; MEANT a unit iobound knows, of the kind WRITTEN is where WRITTEN
    alone says its kind (an alias says which of two meanings, it does not make a bandwidth an operation rate)."""
    from probes.core.units import parse_unit

    written, sep, meant = (part.strip() for part in text.partition("="))
    if not sep or not written or not meant:
        raise argparse.ArgumentTypeError(f"must look like 'Mb/s=MB/s' (as written = as meant). Got {text!r} instead.")
    try:
        unit = parse_unit(meant, what="the alias's meaning")
    except UnitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    try:
        alone = parse_unit(written, what="")
    except UnitError:  # ambiguous or unknown alone: what the alias is for
        return written, meant
    if alone.dimensionality != unit.dimensionality:
        raise argparse.ArgumentTypeError(f"{written!r} and {meant!r} measure different things ({alone:~} against "
                                         f"{unit:~}): an alias says which of two meanings a unit has. Got {text!r}.")
    return written, meant


def fraction_arg(text: str) -> float:
    """A fraction strictly between 0 and 1, such as a noise band or a threshold."""
    return checked(text, float, lambda v: 0 < v < 1, "a fraction between 0 and 1, such as 0.05")


def add_unit_alias(parser: argparse.ArgumentParser) -> None:
    """The --unit-alias option of every command that reads results."""
    parser.add_argument("--unit-alias", type=alias_arg, action="append", default=[], metavar="WRITTEN=MEANT",
                        help="what an ambiguous unit in a results table means, e.g. 'Mb/s=MB/s' (repeatable)")


def input_size_arg(text: str) -> int:
    """A size in whole bytes, at least 1 KiB: the largest input file to read."""
    size = int(size_arg(text).m_as("B"))
    if size < 1024:
        raise argparse.ArgumentTypeError(f"must be at least 1KiB. Got {text!r} instead.")
    return size


def add_input_limit(parser: argparse.ArgumentParser) -> None:
    """The --max-input-size option of every command that reads files (see :mod:`probes.core.inputs`)."""
    from probes.core.inputs import ENVIRONMENT

    parser.add_argument("--max-input-size", type=input_size_arg, metavar="SIZE",
                        help=f"read input files of up to SIZE, e.g. 4GiB (default: ${ENVIRONMENT}, else 1GiB); "
                             "a larger file is refused without being read")


def add_set_argument(parser: argparse.ArgumentParser) -> None:
    """``--set GROUP.KEY=VALUE``, repeatable: a change to the topology, a range too (``compute.nic=25..100Gbit/s``)."""
    parser.add_argument("--set", action="append", default=[], dest="changes", metavar="GROUP.KEY=VALUE",
                        help="change one key of a group, e.g. clients.nic=25Gbit/s, ssd.count=8, a link's bandwidth: "
                             "links[0].bandwidth=100Gbit/s, or state a range: compute.nic=25..100Gbit/s (repeatable, in order)")


def edited_topology(args: argparse.Namespace, nodes: int | None = None, opened=None):
    """The topology the arguments name (a file or a bundled example), with their ``--set`` changes made; ``nodes``
    gives an io500 description's client nodes where it states none; ``opened``: that topology, read already."""
    from topologies.bundled import open_topology

    topology = opened or open_topology(args.topology, nodes)
    if not args.changes:  # the editor (and the TOML writer it checks an edit with) loads for a change alone
        return topology
    from topologies.edit import apply_changes, parse_change

    return apply_changes(topology, tuple(parse_change(text) for text in args.changes))


def seconds_arg(text: str) -> float:
    """A positive number of seconds, "90" or "90s": a budget or a run time."""
    return checked(text, lambda t: float(t.rstrip("s")), lambda v: 0 < v < float("inf"),
                    "a positive number of seconds, such as 90")


def share_arg(text: str) -> float:
    """A share such as 20% (or 0.2), from 0 up to below 100 %: a margin, an overhead, a fill."""
    return checked(text, _share, lambda v: 0 <= v < 1, "a share such as 20% (or 0.2), from 0 to below 100%")


def positive_share_arg(text: str) -> float:
    """A share above 0 and below 100 %: an interval's half-width, which 0 would ask endless repetitions for."""
    return checked(text, _share, lambda v: 0 < v < 1, "a share such as 5% (or 0.05), above 0 and below 100%")


def _share(text: str) -> float:
    return float(text[:-1]) / 100 if text.strip().endswith("%") else float(text)


def growth_arg(text: str) -> float:
    """Growth per year: 30%/year (or 30%), above 0 and at most 1000 %."""
    def read(t: str) -> float | None:
        share = t.strip().removesuffix("/year").removesuffix("/yr")
        return float(share[:-1]) / 100 if share.endswith("%") else None

    return checked(text, read, lambda v: 0 < v <= 10, "a yearly growth such as 30%/year")


def ratio_arg(text: str) -> float:
    """An oversubscription N:1 (or N), from 1 (non-blocking) to 64."""
    def read(t: str) -> float:
        head, sep, tail = t.partition(":")
        return float(head) / (float(tail) if sep else 1.0)

    return checked(text, read, lambda v: 1 <= v <= 64, "a ratio such as 3:1, from 1:1 (non-blocking) to 64:1")


def spares_arg(text: str) -> int:
    """Hot spare drives per enclosure: a whole number from 0 to 16."""
    return checked(text, int, lambda v: 0 <= v <= 16, "a whole number of spares from 0 to 16")


def rate_arg(text: str):
    """A bandwidth above zero, such as 1GB/s."""
    try:
        return parse_quantity(text, Metric.BANDWIDTH, what="the rate", positive=True)
    except UnitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def ports_arg(text: str):
    """[Nx]RATE: a node's NIC ports (1 to 64) and the rate of one, such as 2x200Gbit/s; as (ports, rate)."""
    match = re.fullmatch(r"\s*(\d+)\s*[x×]\s*(.+)", text)
    ports, rate = (int(match.group(1)), match.group(2)) if match else (1, text)
    if not 1 <= ports <= 64:
        raise argparse.ArgumentTypeError(f"the ports per client must be from 1 to 64. Got {ports} instead.")
    return ports, rate_arg(rate.strip())


def not_taken(args: argparse.Namespace, name: str, taken: set[str]) -> list[str]:
    """Command ``name``'s options given (set from their defaults) whose dest is not in ``taken``, as the command line
    names them: a mode of a command refuses them, not leaves them unused unsaid."""
    from assess.cli import command

    parser = argparse.ArgumentParser(add_help=False)
    command(name).configure(parser)
    return [action.option_strings[-1] for action in parser._actions  # argparse lists its actions nowhere public
            if action.option_strings and action.dest not in taken
            and getattr(args, action.dest, action.default) != action.default]
