"""Findings about a result against the batch job that produced it: the job's record beside the result (a job script
of ``iobound plan --emit sbatch`` or ``array`` writes it) says how many nodes and processes per node it had.
"""

from __future__ import annotations

from pathlib import Path

from probes.core.run import Run
from probes.measure.batch import Job, recorded_job
from assess.findings.finding import Finding, Severity

__all__ = ["BATCH_CODES", "batch_findings"]

# Codes (stable): MORE-THAN-THE-JOB error (the result claims nodes or processes its job never had).
BATCH_CODES = ("MORE-THAN-THE-JOB",)


def batch_findings(run: Run, jobs: dict[str, Job | None]) -> list[Finding]:
    """MORE-THAN-THE-JOB where ``run`` states more nodes, or more processes on a node, than its job had; none for a
    result without a job's record. ``jobs`` keeps each file's job, read once."""
    path = run.origin.path
    if path not in jobs:
        jobs[path] = recorded_job(Path(path))
    job, w = jobs[path], run.workload
    if job is None or w is None:
        return []
    claims = [(name, claimed, had) for name, claimed, had in (("nodes", w.nodes, job.nodes),
                                                                ("processes per node", w.ppn, job.ppn))
              if claimed is not None and had is not None and claimed > had.value]
    if not claims:
        return []
    said = "; ".join(f"{claimed} {name} against the job's {had.value} ({had.source})" for name, claimed, had in claims)
    return [Finding("MORE-THAN-THE-JOB", Severity.ERROR, run.label,
                    f"{run.label}: the result claims more than {job.phrase()} that produced it had: {said}. Its "
                    "figures were not measured as stated: another run's output, or a count edited after the fact.",
                    "check which job wrote the result (its name carries the job's id, the record beside it the job's "
                    "variables), and judge it with the nodes and processes that job ran",
                    {"job": job.id, **{name: {"claimed": claimed, "job": had.value, "source": had.source}
                                       for name, claimed, had in claims}})]
