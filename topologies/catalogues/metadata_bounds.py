"""What bounds a metadata server where nobody states its rate: its cores, what a core answers, the journal a create
or a remove writes, one directory's lock, what a find reads; each a range with its source (``metadata_bounds.toml``).

A metadata operation is at least one request the server answers, so a server completes at most its cores
times what one core answers; a create or a remove makes its journal record durable, so the metadata devices
complete at most their write bandwidth over its bytes; in one directory shared by every process, a create
or a remove holds the directory's lock (unless the directory is striped over the servers); a find reads each
entry's bytes through the servers' NICs, and where attributes do not come with the entries, asks for each.
The most favourable end of each range is physics or the fastest published part, never a past io500 result.

The table is read once, when first asked for; importing this module reads nothing.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from probes.core.units import Q_

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["BOUNDS", "bounds", "server_figures", "WRITING", "READING"]

BOUNDS = Path(__file__).with_name("metadata_bounds.toml")
# The metadata operations that change a directory and make a journal record durable, and those that read one
# (a find walks a tree of directories, not one shared by every process).
WRITING = ("create", "remove", "rename")
READING = ("stat", "open")


@functools.cache
def bounds() -> dict:
    """The table of metadata_bounds.toml: cores, per_core, journal, lock, entry, each with its source."""
    import tomllib

    return tomllib.loads(BOUNDS.read_text(encoding="utf-8"))


def _rate(value: Quantity) -> str:
    return f"{value.m_as('op/s'):.6g} op/s"


def _range(low: Quantity, high: Quantity, note: str) -> dict:
    return {"range": [_rate(low), _rate(high)], "source": "assumption", "note": note}


def server_figures(servers: int, *, cores: int | None = None, nic: tuple[Quantity, Quantity] | None = None,
                   devices: tuple[Quantity, Quantity] | None = None) -> dict[str, dict]:
    """The metadata capacities of one server of a group of ``servers``, as a topology's TOML states them.

    ``cores`` per server where stated; ``nic`` the (least, greatest) a server's NICs carry; ``devices`` the
    (least, greatest) write bandwidth of one server's metadata devices together. A figure it cannot bound (no
    NIC, no devices) is left out: the ceiling is then an upper bound without it.
    """
    table = bounds()
    few, many = (cores, cores) if cores else table["cores"]["range"]
    slow, fast = (Q_(x) for x in table["per_core"]["range"])
    said = f"{cores} cores (stated)" if cores else f"{few} to {many} cores ({table['cores']['source']})"
    least, most = slow * few, fast * many
    figures = {"metadata": _range(least, most, f"a request per operation: {said}, each answering "
                                                 f"{_rate(slow)} to {_rate(fast)} ({table['per_core']['source']})")}
    longest = Q_(table["lock"]["longest"])
    lock = _range(1 / longest * Q_(1, "op"), most * servers,
                  f"one directory shared by every process: from its lock held {longest:~P} per operation on the one "
                  f"server that holds it, to no lock beyond the {servers} server(s) ({table['lock']['source']})")
    figures |= {f"{op}_directory": lock for op in WRITING}
    held = _range(least, most * servers, f"one directory shared by every process, read: on the one server that holds "
                                         f"it, to striped over the {servers} server(s)")
    figures |= {f"{op}_directory": held for op in READING}
    if devices is not None:
        small, large = (Q_(x) for x in table["journal"]["range"])
        figures["journal"] = _range(devices[0] / large * Q_(1, "op"), devices[1] / small * Q_(1, "op"),
                                    f"the metadata devices' {devices[0]:.3g~P} to {devices[1]:.3g~P} of writes per "
                                    f"server over {small:~P} to {large:~P} per create or remove "
                                    f"({table['journal']['source']})")
    if nic is not None:
        short, long = (Q_(x) for x in table["entry"]["range"])
        figures["find_metadata"] = _range(min(least, nic[0] / long * Q_(1, "op")), nic[1] / short * Q_(1, "op"),
                                          f"the servers' NICs, {nic[0]:.3g~P} to {nic[1]:.3g~P}, over {short:~P} to "
                                          f"{long:~P} per entry, or a request per entry where attributes do not come "
                                          f"with it ({table['entry']['source']})")
    return figures
