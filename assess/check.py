"""Check measured runs against the ceilings of a topology: one Judgement per run."""

from __future__ import annotations

import json
from typing import Iterable

from probes.errors import InputError, TopologyError
from probes.run import Run
from models.ceiling import Ceiling
from models.predict import predict
from topologies.topology import Topology
from assess.findings import FAR_BELOW, TOLERANCE, Judgement, judge

__all__ = ["check_runs"]


def check_runs(topology: Topology, runs: Iterable[Run], *, clients: tuple[str, ...] | None = None,
               tolerance: float = TOLERANCE, far_below: float = FAR_BELOW) -> list[Judgement]:
    """Predict each run's ceiling (once per distinct workload) and judge the run against it."""
    ceilings: dict[str, Ceiling] = {}
    judgements = []
    for run in runs:
        key = json.dumps(run.workload.to_dict(), sort_keys=True)
        if key not in ceilings:
            try:
                ceilings[key] = predict(topology, run.workload, clients=clients)
            except TopologyError as exc:
                raise InputError(str(run.origin), "", f"run {run.label!r} does not fit the topology: {exc}") from exc
        judgements.append(judge(run, ceilings[key], tolerance=tolerance, far_below=far_below))
    return judgements
