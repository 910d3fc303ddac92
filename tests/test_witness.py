"""Measured evidence narrows ranges: a run no cache can have served raises the least of the ranges on its path.

On a real io500 submission of the shared list, a read's range is raised by its write; a witness never judges itself,
one above its own ceiling proves nothing, and in a list the same system's other submissions lend theirs. The
property: narrowing never moves a range past its most favourable end, nor a bandwidth's least above the witness's
own figure, nor the witness's own ceiling's least above what it measured.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import assume, event, given, settings, strategies as st

from probes.core.run import Origin, Run
from probes.core.units import Q_, Metric
from probes.core.workload import Operation, Workload
from probes.readers.io500_system import read_list
from models import solved
from models.predict import Model
from topologies.bundled import load_example, read_runs
from topologies.described.io500 import describe
from assess.check import check_runs, witnesses_of
from assess.review import review
from assess.witness import narrowed, witness
from tests.test_model_properties import systems
from tests.test_ranges import _bound, _model, _ranged

LIST = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "io500-list" / "io500-db-2017-2019_submissions.csv"
# The Data Accelerator at Cambridge (SC19): 329 GiB/s written and 509 GiB/s read by other nodes through EDR.
SUBMISSION = "9"


@pytest.fixture(scope="module")
def accelerator():
    if not LIST.is_file():
        pytest.skip(f"the io500 list is not here ({LIST})")
    (submission,) = [s for s in read_list(LIST.read_text(encoding="utf-8"), source=str(LIST)) if s.id == SUBMISSION]
    return submission


def _finding(judgement):
    return next(f for f in judgement.findings if f.code in ("POSSIBLE-IF", "AT-CEILING", "BELOW-CEILING", "FAR-BELOW"))


def test_a_listed_read_is_judged_on_the_least_its_write_proves_and_names_it(accelerator):
    topology = describe(accelerator.description).topology
    alone = {j.run.label: j for j in check_runs(topology, accelerator.runs, witnesses=())}
    (reviewed,) = review([accelerator])
    judged = {j.run.label: j for j in reviewed.judgements}
    read = judged["ior-easy-read"]
    assert read.ceiling.least > alone["ior-easy-read"].ceiling.least
    assert read.ceiling.value == alone["ior-easy-read"].ceiling.value  # the high end is never moved
    finding = _finding(read)
    assert "Measured evidence raised the least of its ranges: " in finding.message
    assert "by ior-easy-write (329 GiB/s, flushed before the phase ended (IOR -e, fixed by io500's rules" \
        in finding.message
    names = {n["witness"] for n in finding.to_dict()["evidence"]["narrowed_by"]}
    assert names == {"ior-easy-write"}
    (phase,) = [p for p in reviewed.phases if p.label == "ior-easy-read"]
    assert {n["witness"] for n in phase.to_dict()["narrowed_by"]} == {"ior-easy-write"}


def test_a_witness_never_judges_itself(accelerator):
    (reviewed,) = review([accelerator])
    for j in reviewed.judgements:
        for f in j.findings:
            assert j.run.label not in {n["witness"] for n in f.evidence.get("narrowed_by", ())}, (j.run.label, f.code)


def test_a_write_not_flushed_proves_nothing():
    topology, runs = load_example("narval"), read_runs("narval-io500.csv")
    assert "ior-easy-write" in {w.run.label for w in witnesses_of(topology, runs)}  # flushed: IOR -e
    unflushed = [replace(r, tags=tuple(t for t in r.tags if t[0] != "fsync")) for r in runs]
    assert {w.run.workload.operation for w in witnesses_of(topology, unflushed)} == {Operation.READ}


def test_a_witness_above_its_own_ceiling_is_the_anomaly_and_moves_no_range():
    """Narval's easy read 100 times over is above every ceiling its ranges allow: it keeps its error, and the write
    is judged on the ranges as its description states them (its own read witness gone)."""
    topology = load_example("narval")
    runs = [replace(r, samples=(r.samples[0] * 100,)) if r.label == "ior-easy-read" else r
            for r in read_runs("narval-io500.csv")]
    assert "ior-easy-read" not in {w.run.label for w in witnesses_of(topology, runs)}
    judged = {j.run.label: j for j in check_runs(topology, runs)}
    assert "ABOVE-CEILING" in {f.code for f in judged["ior-easy-read"].findings}
    write = judged["ior-easy-write"]
    assert "ior-easy-read" not in {n["witness"] for f in write.findings for n in f.evidence.get("narrowed_by", ())}
    assert "POSSIBLE-IF" in {f.code for f in write.findings}


# Two submissions of one system (its name and institution): the second lists only reads, so only the first's write
# (8 GiB/s for io500's 5 minutes at least: 2.4 TiB, past the servers' 256 GB) can raise its ranges; a third system
# of the same hardware but another name lends nothing.
_HEADER = ("id,information_system,information_institution,information_filesystem_type,information_client_nodes,"
           "information_client_procs_per_node,information_ds_nodes,information_ds_storage_devices,"
           "information_ds_storage_type,information_ds_volatile_memory_capacity,information_ds_network,"
           "information_list_name,status,ior_easy_write,ior_easy_read")


def test_a_list_lends_a_submissions_witness_to_the_same_systems_others():
    hardware = "Lustre,10,16,4,12,HDD,64GB,InfiniBand EDR"
    rows = [f"1,Alpha,Site,{hardware},sc19,VALID,8.0,", f"2,Alpha,Site,{hardware},isc20,VALID,,9.0",
            f"3,Beta,Site,{hardware},isc20,VALID,,9.0"]
    reviewed = {r.submission.id: r for r in review(read_list("\n".join([_HEADER, *rows]) + "\n", source="list.csv"))}
    lent = _finding(reviewed["2"].judgements[0])
    assert "by ior-easy-write of submission 1 (8,192 MiB/s, flushed" in lent.message
    assert "narrowed_by" not in _finding(reviewed["3"].judgements[0]).evidence
    assert reviewed["2"].judgements[0].ceiling.least > reviewed["3"].judgements[0].ceiling.least


def test_a_witness_beyond_the_parts_of_its_own_submission_lends_nothing_to_the_same_systems_others():
    """Alpha's first submission writes 1.6 GB/s per server onto at most 4 disks each: 400 MB/s a disk, within the range
    of any disk ever made (two actuators: 554 MB/s) but beyond any of 2019 (261 MB/s). Its second has 8 servers, on
    which the same write would need only 100 MB/s a disk: lent, it would raise that system's disks to 1.6 GB/s a
    server. It is the anomaly, held to its own system's parts, and proves nothing anywhere."""
    rows = ["1,Alpha,Site,Lustre,10,16,2,4,HDD,64GB,InfiniBand EDR,sc19,VALID,3.0,",
            "2,Alpha,Site,Lustre,10,16,8,4,HDD,64GB,InfiniBand EDR,sc19,VALID,,2.0"]
    reviewed = {r.submission.id: r for r in review(read_list("\n".join([_HEADER, *rows]) + "\n", source="list.csv"))}
    assert reviewed["1"].phases[0].verdict == "IMPLAUSIBLE-HARDWARE"
    read = reviewed["2"].judgements[0]
    assert not any("of submission 1" in f.message for f in read.findings)
    assert reviewed["2"].phases[0].verdict != "FAR-BELOW"


def _one_copy(doc: dict) -> dict:
    """The system with each byte written once (no replicas, no parity: a device then carries no more than the run),
    and servers of 1 GiB memory, which a petabyte's run passes (so that it proves the devices too)."""
    servers = {name: {k: v for k, v in group.items() if k != "parity"} | {"replicas": 1, "memory": "1 GiB"}
               for name, group in doc["servers"].items()}
    return doc | {"servers": servers}


@settings(max_examples=60, deadline=None)
@given(systems(), st.sampled_from([Operation.READ, Operation.WRITE]), st.integers(12, 24), st.integers(1, 2),
       st.floats(0.0, 1.0), st.data())
def test_narrowing_never_moves_a_range_past_its_most_nor_above_the_witness(doc, operation, size, nodes, where, data):
    model = _model(_one_copy(_ranged(doc, data.draw)))
    workload = Workload(operation, Q_(2 ** size, "B"), nodes=nodes, data_set=Q_(1, "PB"))
    high, low = _bound(model, workload), model.low.bound(workload)
    target = low + where * (high - low) * 1.2  # up to a fifth above the high end: then the anomaly
    tag = ("fsync", "IOR -e") if operation is Operation.WRITE else ("read_by_other_node", "IOR -C -Q 1")
    run = Run("witness", workload, Metric.BANDWIDTH, (target,), "B/s", Origin("test", None, "ior"), (tag,))
    found = witness(model, run, model.ceiling(workload), None)
    if target > high:
        assert found is None
        return
    assume(found is not None)
    other = replace(run, label="judged")
    raised, narrowings = narrowed(model.topology, [found], other)
    event(f"{len(narrowings)} range(s) narrowed")
    for n in narrowings:
        least, most = n.stated.ends
        unit = n.stated.range[1].units
        if n.stated.metric is Metric.LATENCY:
            assert most <= n.least < least
        else:
            assert least < n.least <= most
        if n.stated.metric is Metric.BANDWIDTH:
            assert n.least.m_as("B/s") <= target * (1 + 1e-6), (str(n), unit)
    assert narrowed(model.topology, [found], run) == (model.topology, ())  # never itself
    after = Model(raised)
    assert after.low.bound(workload) <= target * (1 + 1e-6)
    assert after.bound(workload) == pytest.approx(high, rel=1e-9)
    ceiling = after.ceiling(workload)
    solved.forget()  # what the narrowed model takes over of the model it came from gives the same ceiling
    assert model.narrowed(raised).ceiling(workload) == ceiling
