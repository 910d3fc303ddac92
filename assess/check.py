"""Check measured runs against the ceilings of a topology: one Judgement per run."""

from __future__ import annotations

from typing import Iterable

from probes.run import Run
from models.ceiling import Ceiling
from models.predict import predict
from topologies.topology import Topology
from assess.findings import FAR_BELOW, TOLERANCE, Judgement, judge

__all__ = ["check_runs"]


def check_runs(topology: Topology, runs: Iterable[Run], *, clients: tuple[str, ...] | None = None,
               tolerance: float = TOLERANCE, far_below: float = FAR_BELOW) -> list[Judgement]:
    """Predict each run's ceiling (once per distinct workload) and judge the run against it."""
    ceilings: dict[object, Ceiling] = {}
    judgements = []
    for run in runs:
        key = tuple(sorted(run.workload.to_dict().items(), key=str))
        if key not in ceilings:
            ceilings[key] = predict(topology, run.workload, clients=clients)
        judgements.append(judge(run, ceilings[key], tolerance=tolerance, far_below=far_below))
    return judgements
