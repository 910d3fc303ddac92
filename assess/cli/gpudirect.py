"""``predict --gpudirect``: the GDS and bounce paths into a GPU from ``nvidia-smi topo -m``, and the hop that binds each.

Example:
  iobound predict topo.txt --gpudirect --gdsio gdsio.log --from NIC0,NIC1 --year 2023 [--json]
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import format_quantity
from assess.cli.inputs import list_arg

if TYPE_CHECKING:
    from pint import Quantity

    from models.gpudirect import GpuDirect, Placed

__all__ = ["add_arguments", "execute", "render", "gpudirect_body", "GPUDIRECT_VERSION"]

# gpudirect format history (the body is gpudirect_body's):
#   1.0  first version: the GPU, its sources and how far apart, the year; each path's ceiling (least, most), the hops
#        that bind at each end and every hop's capacity; the measured runs placed on the paths; the order; assumptions
GPUDIRECT_VERSION = "1.0"
# predict's options that --gpudirect takes (by their dest); any other given is refused, not left unused unsaid.
_TAKEN = {"topology", "gpudirect", "gpu", "sources", "link", "year", "gdsio", "json", "max_input_size"}


def _year(text: str) -> int:
    if not (text.isdigit() and 2000 <= int(text) <= 2100):
        raise argparse.ArgumentTypeError(f"expected a year such as 2023; found {text!r}")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("GPUDirect (TOPOLOGY is then what nvidia-smi topo -m printed)")
    group.add_argument("--gpudirect", action="store_true",
                       help="the GDS and bounce paths' ceilings into a GPU, and the hop that binds each")
    group.add_argument("--gpu", metavar="GPU", help="the GPU fed (default: gdsio's -d, or the matrix's only GPU)")
    group.add_argument("--from", dest="sources", type=list_arg(str), metavar="DEVICE[,DEVICE]",
                       help="the NICs that feed it (default: every NIC of the matrix), or drives as NAME=PIX ... SYS")
    group.add_argument("--link", action="append", default=[], metavar="DEVICE=GEN xWIDTH",
                       help="a device's PCIe link, e.g. GPU1=4.0x16 (default: a range over what shipped)")
    group.add_argument("--year", type=_year, metavar="YEAR", help="the platform's year: only parts shipped by then")
    group.add_argument("--gdsio", metavar="FILE", help="gdsio's output with its command lines: runs placed on the paths")


def execute(args: argparse.Namespace) -> int:
    from probes.core.errors import ToolOutputError
    from probes.core.inputs import read_input
    from probes.readers import gdsio, nvidia_topo
    from models.gpudirect import predict
    from assess.cli.inputs import not_taken
    from topologies.described.pcie import paths

    if unused := not_taken(args, "predict", _TAKEN):
        raise InputError(unused[0], "", f"does not apply to --gpudirect, which takes --gpu, --from, --link, --year, "
                         f"--gdsio and --json; leave out {', '.join(unused)}")
    matrix = nvidia_topo.parse(read_input(args.topology, error=ToolOutputError), source=args.topology)
    runs = gdsio.parse(read_input(args.gdsio, error=ToolOutputError), source=args.gdsio) if args.gdsio else []
    gpus = [d for d in matrix.devices if matrix.kind(d) == "gpu"]
    asked = {dict(run.tags).get("gpu") for run in runs} - {""}
    gpu = args.gpu or (f"GPU{next(iter(asked))}" if len(asked) == 1 else gpus[0] if len(gpus) == 1 else None)
    if gpu is None:
        raise InputError("--gpu", "", f"name the GPU fed: the matrix has {', '.join(gpus)}")
    sources = args.sources or [d for d in matrix.devices if matrix.kind(d) == "nic"]
    links = dict(_pair(text) for text in args.link)
    found = predict(paths(matrix, gpu, sources, year=args.year, links=links), runs)
    from_gdsio = not args.gpu and bool(asked)
    if args.json:
        from assess.render import dumps, envelope

        print(dumps(envelope("gpudirect", GPUDIRECT_VERSION, gpudirect_body(found, args.topology, from_gdsio=from_gdsio))))
    else:
        print(render(found, args.topology, from_gdsio=from_gdsio))
    return 0


def _pair(text: str) -> tuple[str, str]:
    name, equals, link = text.partition("=")
    if not (equals and name.strip() and link.strip()):
        raise InputError("--link", text, "expected DEVICE=GENERATIONxWIDTH, e.g. GPU1=4.0x16")
    return name.strip(), link.strip()


def render(found: GpuDirect, source: str, *, from_gdsio: bool = False) -> str:
    """Both paths' ceilings and hops, the runs placed on them, which path the figures make faster, the assumptions
    (``from_gdsio``: the GPU is the one gdsio's -d named)."""
    from assess.render import table
    from models.gpudirect import PATH_NAMES

    pcie = found.pcie
    lines = [f"system:    {pcie.gpu.name} of {source}, fed by {', '.join(d.name for d in pcie.sources)} "
             f"({pcie.connection} apart)",
             "workload:  reads into GPU memory", ""]
    for ceiling in (found.gds, found.bounce):
        lines += [f"{PATH_NAMES[ceiling.path]}: {ceiling.shown()}, bound by {', '.join(ceiling.binding)}"]
        rows = [(hop.what, _figure(hop.capacity.ends[0]), _figure(hop.capacity.ends[1]), hop.capacity.source.kind,
                 "<- binds" if hop.what in ceiling.binding else "") for hop in ceiling.hops]
        lines += ["", table(("hop", "least", "most", "source", ""), rows, right=(1, 2)), ""]
    for placed in found.measured:
        where = "above" if placed.above else "within"
        lines.append(f"measured:  {placed.run.label} {_printed(placed)} ({_figure(placed.rate)}, {placed.run.origin}): "
                     f"{where} the {_NAMES[placed.path]} path's ceiling")
    lines += ["order:     " + _order(found), "", "sources:"]
    hops = {hop.what: hop for hop in (*found.gds.hops, *found.bounce.hops)}
    lines += [f"  - {what}: {hop.capacity.source}" for what, hop in hops.items()]
    lines += ["", "assumptions:", *(f"  - {a}" for a in _assumptions(found, from_gdsio))]
    return "\n".join(lines)


def _assumptions(found: GpuDirect, from_gdsio: bool) -> list[str]:
    """What the paths' ceilings assume: the matrix's, host memory's, and which GPU gdsio's -d is."""
    return [*found.pcie.assumptions,
            "host memory carries the bounce path's two copies (a socket's channels give several times an x16 link)",
            *([f"gdsio's -d taken as nvidia-smi's {found.pcie.gpu.name} (CUDA numbers GPUs fastest first, the same "
               "order for identical GPUs)"] if from_gdsio else [])]


def gpudirect_body(found: GpuDirect, source: str, *, from_gdsio: bool = False) -> dict:
    """The body of an iobound/gpudirect document: what :func:`render` says, as data (rates in B/s)."""
    from probes.core.units import quantity_json
    from topologies.topology import capacity_json

    pcie = found.pcie
    return {"matrix": source, "gpu": pcie.gpu.name, "sources": [d.name for d in pcie.sources],
            "connection": pcie.connection, "year": pcie.year,
            "paths": [{"path": c.path, "least": quantity_json(c.least), "most": quantity_json(c.most),
                       "binding": list(c.binding), "binding_least": list(c.binding_least),
                       "hops": [{"what": hop.what, "capacity": capacity_json(hop.capacity)} for hop in c.hops]}
                      for c in (found.gds, found.bounce)],
            "measured": [{"run": placed.run.label, "origin": str(placed.run.origin), "path": placed.path,
                          "rate": quantity_json(placed.rate), "above": placed.above} for placed in found.measured],
            "order": found.order or None, "assumptions": _assumptions(found, from_gdsio)}


def _order(found: GpuDirect) -> str:
    gds, bounce = found.gds, found.bounce
    measured: dict[str, Quantity] = {}
    for placed in found.measured:  # each path's fastest run, the one that raised its hops (predict)
        measured[placed.path] = max(placed.rate, measured.get(placed.path, placed.rate))
    if not found.order:
        return (f"not decided by these figures: the ceilings overlap (GDS {gds.shown()}, bounce {bounce.shown()}); "
                "state the links (--link) or give measured runs (--gdsio)")
    fast, slow = (bounce, gds) if found.order == "bounce" else (gds, bounce)
    said = (f"the {_NAMES[fast.path]} path is faster: its least ({_figure(fast.least)}) is above the {_NAMES[slow.path]} "
            f"path's most ({_figure(slow.most)}), which {', '.join(slow.binding)} binds")
    if len(measured) == 2:
        agrees = measured[fast.path] > measured[slow.path]
        said += (f"; {'as' if agrees else 'unlike'} measured: {_NAMES[fast.path]} {_figure(measured[fast.path])}, "
                 f"{_NAMES[slow.path]} {_figure(measured[slow.path])}")
    return said


_NAMES = {"gds": "GDS", "bounce": "bounce"}


def _printed(placed: Placed) -> str:
    """A run's rate as its tool printed it (gdsio: GiB/s)."""
    return f"{placed.run.summary.mean} {placed.run.unit}"


def _figure(rate: Quantity) -> str:
    """A rate in GB/s, as the catalogue's figures are given (format_quantity converts)."""
    return format_quantity(rate, unit="GB/s")
