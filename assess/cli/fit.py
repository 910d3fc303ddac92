"""Fit a model to a measured sweep: per-request overhead and bandwidth, or the scalability law; predict the rest.

Every repetition of every run is a point. Over transfer sizes the law is
s / (t0 + s / B); over nodes or processes, Gunther's Universal Scalability Law.
Runs that differ in more than what the sweep varies (another file system in a results table's
column, other processes per node) are fitted group by group, each named; a group too small to fit
is named with why.
Examples:
  iobound fit sweep.csv --over transfer-size --op write --at 8MiB,64MiB
  iobound fit scaling.csv --over nodes --op read --at 128
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Q_, Metric, display_unit, format_quantity
from probes.core.workload import Operation
from assess.cli.inputs import add_input_limit, add_unit_alias, count_arg, list_arg, size_arg

if TYPE_CHECKING:  # the model's libraries load when a command runs, not for its --help
    from models.calibration import Fit
    from probes.core.run import Run


# fit format history:
#   1.0  first version
#   2.0  a fit per group of runs that differ only in what the sweep varies: fits[] (each with its group and runs,
#        and the keys of 1.0), not_fitted[] (group, runs, reason)
FIT_VERSION = "2.0"
OVER = ("transfer-size", "nodes", "processes")
# The workload's fields each sweep varies: a group's runs agree on every other (and on a results table's own columns).
_SWEPT = {"transfer-size": ("transfer_size", "data_set"), "nodes": ("nodes", "data_set"),
          "processes": ("nodes", "ppn", "data_set")}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="FILE", nargs="+", help="benchmark outputs or results tables of one sweep")
    parser.add_argument("--over", required=True, choices=OVER, help="what the sweep varies")
    parser.add_argument("--op", choices=[o.value for o in Operation], help="the operation to fit (needed when the files hold several)")
    parser.add_argument("--at", type=list_arg(str), default=[], metavar="X[,X]",
                        help="where to predict, e.g. 8MiB,64MiB or 128,256")
    parser.add_argument("--json", action="store_true", help=f"print iobound/fit {FIT_VERSION} JSON")
    add_unit_alias(parser)
    add_input_limit(parser)


def execute(args: argparse.Namespace) -> int:
    from assess.render import dumps, envelope
    from topologies.bundled import read_runs
    from models.calibration import TRANSFER_SIZE, fit, usl

    runs = [r for word in args.results for r in read_runs(word, dict(args.unit_alias))]
    where = ", ".join(args.results)
    at = _at(args.at, args.over)
    groups = _groups(_of_one_operation(runs, args.op, where), args.over)
    fitted, refused = [], []
    for group in groups:
        points = _points(group.runs, args.over)
        law = TRANSFER_SIZE if args.over == "transfer-size" else usl(points.unit)
        try:
            fitted.append((group, points, fit(law, points.x, points.y, source=where)))
        except InputError as exc:
            if len(groups) == 1:
                raise
            refused.append((group, exc.detail))
    if not fitted:
        needs = " ".join(dict.fromkeys(why.split(" Got ")[0].rstrip(".") for _, why in refused))
        raise InputError(where, "", f"no group of runs that differ only in their {args.over} can be fitted ({needs}); "
                         f"the {len(refused)} groups: " + "; ".join(f"{g.label} ({g.size(args.over)})" for g, _ in refused))
    if args.json:
        print(dumps(envelope("fit", FIT_VERSION, {
            "fits": [{"group": g.label, "runs": [r.label for r in g.runs]} | _to_dict(result, points, at)
                     for g, points, result in fitted],
            "not_fitted": [{"group": g.label, "runs": [r.label for r in g.runs], "reason": why} for g, why in refused]})))
    elif len(groups) == 1:
        print(render(fitted[0][2], fitted[0][1], at, args.over))
    else:
        lines = [f"{len(groups)} groups of runs differ in more than their {args.over}: each is fitted on its own."]
        for g, points, result in fitted:
            lines += ["", f"group:     {g.label} ({len(g.runs)} runs)", render(result, points, at, args.over)]
        if refused:
            lines += ["", "not fitted:", *(f"  {g.label}: {why}" for g, why in refused)]
        print("\n".join(lines))
    return 0


@dataclass(frozen=True)
class _Group:
    """Runs that differ only in what the sweep varies; ``label`` names what sets them apart from the other groups."""

    label: str
    runs: list[Run]

    def size(self, over: str) -> str:
        """``3 points at 2 transfer sizes``: what a fit of the group would have."""
        points = sum(max(1, len(r.samples)) for r in self.runs)
        values = len({_position(r, over) for r in self.runs})
        return f"{points} point{'s' if points != 1 else ''} at {values} {over.replace('-', ' ')}{'s' if values != 1 else ''}"


def _groups(runs: list[Run], over: str) -> list[_Group]:
    """The runs grouped by their workload but for what the sweep varies, and by the columns of a results table of
    their own (a file system's name); each group named by what differs between the groups (``system=Lustre, ppn=6``),
    in the order first read."""
    found: dict[tuple, list[Run]] = {}
    for r in runs:
        found.setdefault(_key(r, over), []).append(r)
    keys = list(found)
    differing = [name for name in dict.fromkeys(n for key in keys for n, _ in key)
                 if len({dict(key).get(name) for key in keys}) > 1]
    return [_Group(", ".join(f"{name}={dict(key).get(name) or '-'}" for name in differing) or "all runs", found[key])
            for key in keys]


def _key(run: Run, over: str) -> tuple[tuple[str, str], ...]:
    """What a run of a group shares with the others: its table's own columns, then its workload's fields but the swept."""
    workload = {name: value for name, value in run.workload.to_dict().items() if name not in _SWEPT[over]}
    shown = {name: _field(value) for name, value in workload.items() if value is not None}
    return (*(run.tags if run.origin.tool == "table" else ()), *shown.items())


def _field(value) -> str:
    """A workload field as a group's label shows it: a quantity as a person reads it."""
    if isinstance(value, dict):  # a quantity's JSON: value and unit
        return format_quantity(Q_(value["value"], value["unit"]))
    return str(value)


class _Points:
    """The sweep's points: x (B, or a count), y in canonical units (B/s or op/s), and what they were."""

    def __init__(self, x, y, unit: str, operation: str):
        import numpy as np

        self.x, self.y, self.unit, self.operation = np.asarray(x, float), np.asarray(y, float), unit, operation


def _of_one_operation(runs: list[Run], op: str | None, where: str) -> list[Run]:
    """The runs of ``op`` (of the one operation they hold, without it) that state a workload."""
    data = [r for r in runs if r.workload is not None and (op is None or r.workload.operation.value == op)]
    operations = sorted({r.workload.operation.value for r in data})
    if len(operations) != 1:
        raise InputError(where, "", f"a fit needs runs of one operation; these hold {', '.join(operations) or 'none'}: "
                         "choose one with --op")
    return data


def _points(data: list[Run], over: str) -> _Points:
    from assess.findings import metric_factor

    metric = Metric.OPERATION_RATE if data[0].workload.operation.is_metadata else Metric.BANDWIDTH
    x, y = [], []
    for r in data:
        position = _position(r, over)
        factor = metric_factor(r, metric)
        if position is None or factor is None:
            raise InputError(str(r.origin), "", f"run {r.label!r} does not say its {over.replace('-', ' ')} or has no "
                             f"{metric.label}; a fit over {over} needs both")
        values = [v * factor for v in r.samples] if r.samples else [r.summary.mean * factor]
        x += [position] * len(values)
        y += values
    return _Points(x, y, metric.unit, data[0].workload.operation.value)


def _position(run: Run, over: str) -> float | None:
    w = run.workload
    if over == "transfer-size":
        return None if w.transfer_size is None else w.transfer_size.m_as("B")
    if w.nodes is None:
        return None
    return w.nodes * (w.ppn if over == "processes" else 1)


def _at(words: list[str], over: str) -> list[float]:
    """The --at places in the sweep's terms: bytes for transfer sizes, else counts."""
    parse = (lambda t: size_arg(t).m_as("B")) if over == "transfer-size" else count_arg
    try:
        return [float(parse(word)) for word in words]
    except argparse.ArgumentTypeError as exc:
        raise InputError("--at", "", str(exc)) from None


def _x(value: float, over: str) -> str:
    return format_quantity(Q_(value, "B"), Metric.SIZE) if over == "transfer-size" else f"{value:g}"


def _shown(value: float, unit: str, scale: float | None = None) -> str:
    """A value in the unit that suits ``scale`` (its estimate's upper end): 3e-17 s beside 83 µs is "0 µs"."""
    if not unit:
        return f"{value:.3g}"
    if scale is None or scale <= 0:
        return format_quantity(Q_(value, unit))
    return format_quantity(Q_(value if abs(value) >= 1e-6 * scale else 0.0, unit), unit=display_unit(Q_(scale, unit)))


def render(result: Fit, points: _Points, at: list[float], over: str) -> str:
    """The parameters with their intervals, the fit's quality, and each point beside the curve."""
    from assess.render import table
    from models.calibration import usl_peak

    law = result.model
    rows = [(name, _shown(e.value, e.unit, e.high), _shown(e.stderr, e.unit, e.high),
             f"{_shown(e.low, e.unit, e.high)} - {_shown(e.high, e.unit, e.high)}")
            for name, e in result.parameters.items()]
    lines = [f"law:       {law.name}: {law.formula}",
             f"fitted to: {result.n} points of {points.operation} ({result.dof} degrees of freedom); R² {result.r_squared:.4f}, "
             f"relative RMSE {result.rmse:.1%}", "",
             table(("parameter", "value", "std error", "95% CI"), rows, right=(1, 2))]
    if law.parameters == ("lam", "sigma", "kappa"):
        peak = usl_peak(result)
        lines.append(f"peak:      {'none within the data (kappa may be 0)' if peak == float('inf') else f'{peak:.1f} {over}'}")
    xs = sorted(set(points.x.tolist()) | set(at))
    value, low, high = result.predict(xs, observation=True)
    outside = result.extrapolates(xs)
    measured = {x: points.y[points.x == x].mean() for x in set(points.x.tolist())}
    rows = [(_x(x, over), _shown(measured[x], points.unit) if x in measured else "-", _shown(v, points.unit),
             f"{_shown(lo, points.unit)} - {_shown(hi, points.unit)}", "extrapolated" if out else "")
            for x, v, lo, hi, out in zip(xs, value, low, high, outside)]
    lines += ["", table((over, "measured mean", "fitted", "95% interval of a new run", ""), rows, right=(1, 2))]
    return "\n".join(lines)


def _to_dict(result: Fit, points: _Points, at: list[float]) -> dict:
    value, low, high = result.predict(at, observation=True) if at else ([], [], [])
    return {"law": result.model.name, "formula": result.model.formula, "operation": points.operation,
            "parameters": {name: {"value": e.value, "stderr": e.stderr, "ci95": [e.low, e.high], "unit": e.unit}
                           for name, e in result.parameters.items()},
            "r_squared": result.r_squared, "relative_rmse": result.rmse, "n": result.n, "dof": result.dof,
            "predictions": [{"x": x, "value": float(v), "ci95": [float(lo), float(hi)], "extrapolated": bool(out)}
                            for x, v, lo, hi, out in zip(at, value, low, high, result.extrapolates(at) if at else [])]}
