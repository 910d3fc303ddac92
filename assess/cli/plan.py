"""Plan a benchmark from the system before it runs, so that its result means something: the data set against
every cache on the path, the flags that defeat the rest, nodes and processes up to the knee, repetitions, each
phase's time and what ends it, and the ready-to-run files.

Examples:
  iobound plan lecture --benchmark ior
  iobound plan narval --benchmark io500 --drop-caches all --noise 5% -o plan-narval
  iobound plan lecture --benchmark fio --direct --nodes 1 --json
  iobound plan lab.toml --benchmark fio --emit array -o sweep && cd sweep && sbatch fio-array.sh
  iobound plan narval --benchmark mlperf --model unet3d --accelerator h100
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Q_, format_quantity
from assess.cli.inputs import fraction_arg, positive_share_arg, seconds_arg, share_arg
from assess.cli.workloads import add_modelled_system, add_training_arguments
from assess.plan_batch import EMITS

if TYPE_CHECKING:
    from models.accelerators import Demand

# plan format history (the body is plan_body's):
#   1.0  first version: the benchmark, its settings, nodes and processes, repetitions, capacity, and per phase its
#        workload, ceiling, data set, caches, cached share, flags, notes, times and what ends it; the files' texts
#   1.1  per phase, the share a cache is expected to serve over the reads' passes (expected_share; null but for reads)
PLAN_VERSION = "1.1"
BENCHMARK_NAMES = ("ior", "mdtest", "io500", "fio", "elbencho", "mlperf")


def configure(parser: argparse.ArgumentParser) -> None:
    add_modelled_system(parser)
    parser.add_argument("--benchmark", required=True, choices=BENCHMARK_NAMES, help="the benchmark to plan")
    group = parser.add_argument_group("the plan")
    group.add_argument("--cached-share", type=share_arg, default=0.1, metavar="SHARE",
                       help="the most of a data set the caches no flag defeats may still serve (default 10%%; 0: only outgrow them all)")
    group.add_argument("--efficiency", type=fraction_arg, default=0.8, metavar="E",
                       help="the share of the ceiling the times are also given at (default 0.8)")
    group.add_argument("--noise", type=share_arg, metavar="CV",
                       help="the runs' coefficient of variation, e.g. 5%% (default: from --probes, else not known)")
    group.add_argument("--probes", metavar="FILE", help="a probe set (iobound probe): its largest spread is the noise")
    group.add_argument("--interval", type=positive_share_arg, default=0.05, metavar="SHARE",
                       help="the 95 %% interval's half-width the repetitions aim at, relative to the mean (default 5%%)")
    group.add_argument("--min-time", type=seconds_arg, default=30.0, metavar="SECONDS",
                       help="the least time a data phase runs at the ceiling (default 30 s)")
    group.add_argument("--stonewall", type=seconds_arg, metavar="SECONDS",
                       help="stop each phase after this time (default: io500's 300 s; others none)")
    group.add_argument("--imbalance", type=share_arg, default=0.1, metavar="SHARE",
                       help="how far the slowest rank lags the mean, for a stonewall's wear-out (default 10%%)")
    group.add_argument("--drop-caches", choices=("clients", "all"), default="",
                       help="where you are root and may drop the page caches between phases")
    group.add_argument("--path", default="/mnt/fs/iobound", metavar="DIR",
                       help="the folder on the file system under test the files name (default /mnt/fs/iobound)")
    parser.add_argument("--json", action="store_true", help="print versioned JSON instead of text")
    parser.add_argument("-o", "--output", metavar="DIR", help="write the plan and its files into the new folder DIR")
    parser.add_argument("--emit", choices=EMITS,
                        help="also a Slurm job script (fio, IOR, mdtest): sbatch, one job of the plan's nodes; array, "
                             "a job array over 1, 2, 4, ... nodes up to the plan's and one past (SLURM_ARRAY_TASK_ID "
                             "the nodes)")
    add_training_arguments(parser)


def execute(args: argparse.Namespace) -> int:
    from assess.plan_outputs import outputs
    from assess.render import dumps, envelope
    from assess.cli.inputs import edited_topology
    from models.plan import Settings, plan
    from models.plan_phases import BENCHMARKS
    from models.predict import Model

    topology = edited_topology(args)
    model = Model(topology)
    training = _training(args)
    workload, clients = _workload(args, topology, training)
    settings = Settings(cached_share=args.cached_share, efficiency=args.efficiency, noise=_noise(args),
                        interval=args.interval, min_time=args.min_time, stonewall=args.stonewall,
                        imbalance=args.imbalance, drop=args.drop_caches, direct=args.direct,
                        demand=_demand(args, training))
    made = plan(model, BENCHMARKS[args.benchmark], workload, settings, clients,
                nodes_given=args.nodes != [None], ppn_given=args.ppn != [1] or args.benchmark == "mlperf",
                ops=tuple(args.op) if args.op else None)
    files = outputs(made, args.path, (args.model, args.accelerator) if args.benchmark == "mlperf" else None)
    if args.emit:
        from assess.plan_batch import job_script, sweep

        chosen, _ = model.nodes(workload, clients)
        most = topology.group(chosen[0]).count if len(chosen) == 1 else made.nodes
        files |= job_script(made, args.emit, sweep(made.nodes, most) if args.emit == "array" else (made.nodes,),
                            args.path)
    system = {"name": topology.name, "path": topology.path}
    # the document holds each ceiling's formula (sympy): made only where it is printed or written
    document = dumps(envelope("plan", PLAN_VERSION, plan_body(system, made, files))) if args.json or args.output else ""
    text = render(made, f"{topology.name} ({topology.path})")
    if args.output:
        _write(args.output, files, document, text)
    print(document if args.json else text + "".join(f"\n\n--- {name}\n{body.rstrip()}" for name, body in files.items()))
    return 0


def _training(args: argparse.Namespace) -> Demand | None:
    """The MLPerf Storage entry of --model on --accelerator; None but for MLPerf Storage."""
    if args.benchmark != "mlperf":
        return None
    if not (args.model and args.accelerator):
        raise InputError("--model", "", "give the training workload and its accelerator: --model unet3d "
                         "--accelerator h100")
    from models.accelerators import entry

    return entry(args.model, args.accelerator, extra=args.accelerators_table)


def _workload(args: argparse.Namespace, topology, training: Demand | None):
    """The workload the options describe (one value each: a plan is not a sweep), reading ``training``'s records
    where MLPerf Storage runs, and the client groups named."""
    from probes.core.workload import Operation
    from assess.cli.job import job_defaults
    from assess.cli.workloads import workloads_of

    if args.nodes is None or args.ppn is None:  # inside a batch job, the job's (it says so)
        job_defaults(args, listed=True)
    for name in ("transfer_size", "nodes", "ppn", "queue_depth"):
        if len(getattr(args, name)) > 1:
            raise InputError(f"--{name.replace('_', '-')}", "", "a plan takes one value, not a list")
    ops = args.op
    args.op = [Operation.WRITE]
    if training is not None:
        args.transfer_size = [training.record_length]
        args.queue_depth = [args.read_threads or 1]
    workloads, clients = workloads_of(args, topology)
    args.op = ops
    return workloads[0], clients


def _demand(args: argparse.Namespace, training: Demand | None) -> float | None:
    """What one emulated accelerator of ``training`` reads (B/s) at the AU asked (default: its workload's minimum);
    None but for MLPerf Storage."""
    if training is None:
        return None
    from models.accelerators import demand

    return demand(args.model, args.accelerator, au=args.au or training.min_au,
                  extra=args.accelerators_table).m_as("B/s")


def _noise(args: argparse.Namespace) -> float | None:
    """The stated noise, else the largest coefficient of variation of a probe set's measurements of what the
    benchmark measures (bandwidth; mdtest's operation rates)."""
    if args.noise is not None or not args.probes:
        return args.noise
    from probes.core.units import Metric
    from probes.measure.probeset import read_probe_set

    metric = Metric.OPERATION_RATE if args.benchmark == "mdtest" else Metric.BANDWIDTH
    spreads = [m.summary.std / m.summary.mean for m in read_probe_set(args.probes).values()
               if m.metric is metric and m.summary.n > 1 and m.summary.mean]
    if not spreads:
        raise InputError(args.probes, "", f"no {metric.name.lower().replace('_', ' ')} measurement with more than one "
                         "sample: its noise is not known")
    return max(spreads)


def _write(folder: str, files: dict[str, str], document: str, text: str) -> None:
    """The plan (JSON and text) and its files into the new folder (nothing existing is overwritten)."""
    from pathlib import Path
    from probes.core.outputs import new_folder, write_new

    with new_folder(Path(folder)) as staged:
        for name, body in {"plan.json": document + "\n", "plan.txt": text + "\n", **files}.items():
            write_new(staged / name, body)


def _bytes(value: float, unit: str) -> str:
    return f"{math.ceil(value):,} files" if unit == "files" else format_quantity(Q_(value, "B"))


def _span(low: float, high: float, shown) -> str:
    return shown(low) if math.isclose(low, high) else f"{shown(low)} to {shown(high)}"


def render(made, system: str) -> str:
    """The plan as people read it."""
    from assess.render import duration, table

    s = made.settings
    lines = [f"system:      {system}", f"benchmark:   {made.benchmark.name}",
             f"processes:   {made.nodes} nodes x {made.ppn} per node ({made.scaling})",
             f"repetitions: {made.repetitions} ({made.repetitions_why})", *([made.transfer_fit] if made.transfer_fit else [])]
    for p in made.phases:
        unit = p.unit
        lines += ["", f"[{p.phase.name}] {p.workload.describe()}",
                  f"  ceiling:   {p.ceiling.shown}, bound by {p.ceiling.binds}",
                  f"  data set:  {_bytes(p.amount, unit)} in all, {_bytes(p.per_node, unit)} per node, "
                  f"{_bytes(p.per_process, unit)} per process" + (f" (what {p.phase.reads} wrote)" if p.phase.reads else "")]
        rows = [(c.layer, c.group, str(c.members), _span(*c.memory, lambda b: format_quantity(Q_(b, "B")))
                 + ("" if c.stated else " (not stated)"), c.defeated_by or "-") for c in p.caches]
        lines += ["  " + row for row in table(("cache", "group", "members", "memory in all", "defeated by"),
                                              rows, right=(2,)).splitlines()]
        lines.append(f"  cached:    up to {_span(*p.cached_share, lambda x: f'{x:.1%}')} could still be served from a cache"
                     + ("" if p.expected_share is None else
                        f"; {_span(*p.expected_share, lambda x: f'{x:.1%}')} expected over its passes"))
        lines.append(f"  flags:     {' '.join(p.flags) or 'none'}")
        time, at = _span(*p.seconds, duration), _span(*p.seconds_at_efficiency, duration)
        ends = f"ends by {p.ends_by}"
        if p.wear_out is not None:
            ends += (f" (the stonewall; then the slowest rank, {s.imbalance:.0%} behind, takes {p.wear_out:,.0f} s "
                     "more to finish its share)")
        lines.append(f"  time:      {time} at the ceiling, {at} at {s.efficiency:.0%}; {ends}")
        if p.written < p.amount:
            lines.append(f"  leaves:    at least {_bytes(p.written, unit)} written by the stonewall, for the phases that "
                         "read it")
        lines += [f"  note:      {n}" for n in p.notes]
    capacity = "not stated" if made.capacity is None else format_quantity(Q_(made.capacity, "B"))
    lines += ["", f"capacity:    {format_quantity(Q_(made.stored, 'B'))} stored (with the servers' copies and parity) "
                  f"of {capacity} the devices hold"]
    if made.capacity is not None and made.stored > made.capacity:
        lines.append("             more than the devices hold: fewer nodes, or a shorter phase")
    return "\n".join(lines)


def plan_body(system: dict, made, files: dict[str, str]) -> dict:
    """The body of an iobound/plan document."""
    from dataclasses import asdict

    s = made.settings
    return {"topology": system, "benchmark": made.benchmark.name, "settings": asdict(s), "nodes": made.nodes,
            "ppn": made.ppn, "scaling": made.scaling, "repetitions": made.repetitions,
            "repetitions_why": made.repetitions_why, "transfer_fit": made.transfer_fit,
            "stored_bytes": made.stored, "capacity_bytes": made.capacity,
            "phases": [{"name": p.phase.name, "reads": p.phase.reads, "workload": p.workload.to_dict(),
                        "ceiling": p.ceiling.to_dict(), "unit": p.unit, "amount": p.amount, "per_node": p.per_node,
                        "per_process": p.per_process, "caches": [c.to_dict() for c in p.caches],
                        "cached_share": list(p.cached_share),
                        "expected_share": None if p.expected_share is None else list(p.expected_share), "flags": list(p.flags), "notes": list(p.notes),
                        "seconds": list(p.seconds), "seconds_at_efficiency": list(p.seconds_at_efficiency),
                        "ends_by": p.ends_by, "wear_out_seconds": p.wear_out, "written": p.written}
                       for p in made.phases],
            "files": files}
