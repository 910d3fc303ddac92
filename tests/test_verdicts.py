"""An error stands only on stated figures or physics: a run above a ceiling that rests on a figure assumed as one value
is POSSIBLE-IF, naming that figure and the value it implies (issue 31, item 1)."""

import pytest
from hypothesis import assume, given, settings, strategies as st

from probes.core.errors import InputError, TopologyError
from probes.core.run import Origin, Run
from probes.core.units import Metric, Q_
from probes.readers import read_results
from models.predict import Model
from assess.check import check_runs
from assess.findings.bands import TOLERANCE
from topologies.bundled import example_path, load_example
from topologies.load import topology_from_dict
from topologies.topology import Capacity, Component, Source
from tests.test_model_properties import NAMES, systems, workloads

VERDICTS = ("ABOVE-CEILING", "POSSIBLE-IF")
NVME_WRITE = Component("nvme", "write_bandwidth")


def _with(capacity: Capacity, kind: str) -> Capacity:
    return Capacity(capacity.value, capacity.metric, Source(kind, "one NVMe figure"))


def _oci(kind: str):
    """OCI's BeeGFS with one NVMe write figure, 1.5 GB/s, in place of its range: 170 drives allow 237 GiB/s."""
    topology = load_example("oci-beegfs")
    return topology.replaced({NVME_WRITE: Capacity(Q_(1.5, "GB/s"), Metric.BANDWIDTH, Source(kind, "one NVMe figure"))})


def _easy_write(kind: str):
    runs = read_results(example_path("oci-beegfs-io500.csv"))
    return next(j for j in check_runs(_oci(kind), runs) if j.run.label == "ior-easy-write")


def test_the_oci_easy_write_above_one_assumed_nvme_figure_is_possible_if_and_names_it():
    judgement = _easy_write("assumption")
    codes = [f.code for f in judgement.findings]
    assert "ABOVE-CEILING" not in codes
    possible = next(f for f in judgement.findings if f.code == "POSSIBLE-IF")
    assert "is above the ceiling of 237 GiB/s (devices: nvme.bandwidth [assumed]), which rests on assumed figures" \
        in possible.message
    assert "possible only if nvme.write_bandwidth ≥ 2.11 GB/s (stated: assumption 1.50 GB/s)" in possible.message
    (need,) = possible.implied
    assert need.component == NVME_WRITE and need.needed.m_as("GB/s") == pytest.approx(334 * 2**30 / 170 / 1e9, rel=1e-3)
    assert [n["component"] for n in possible.to_dict()["evidence"]["implied"]] == ["nvme.write_bandwidth"]


def test_the_same_figure_from_a_datasheet_keeps_the_error():
    codes = [f.code for f in _easy_write("datasheet").findings]
    assert "ABOVE-CEILING" in codes and "POSSIBLE-IF" not in codes


def test_the_lecture_read_above_its_measured_client_nics_stays_an_error_beside_an_assumed_server_nic():
    topology = load_example("lecture")
    assert Component("storage", "nic") in Model(topology).assumed  # 10 GbE, assumed; the clients' 110 MiB/s measured
    runs = read_results(example_path("lecture-results.csv"))
    above = [j for j in check_runs(topology, runs) if any(f.code == "ABOVE-CEILING" for f in j.findings)]
    assert [j.measured.m_as("MiB/s") for j in above] == [pytest.approx(1800)]


def test_seed_001s_reads_through_10_gbe_stay_errors_when_the_servers_are_assumed(topology):
    ten_gbe = """
[clients.c]
nic = { value = "10 GbE", source = "datasheet", note = "seeds/001: 10GbE network" }
[networks.eth]
[servers.oss]
nic = { value = "10 GbE", source = "assumption" }
[devices.ost]
bandwidth = { value = "1 GB/s", source = "assumption" }
"""
    origin = Origin("seed001.csv", None, "test")
    runs = [Run(label, _read(), Metric.BANDWIDTH, (value,), "MiB/s", origin)
            for label, value in [("o_direct read", 1480.0), ("cached read", 32828.0)]]
    for judgement in check_runs(topology(ten_gbe, links="c eth oss ost"), runs):
        assert judgement.findings[0].code == "ABOVE-CEILING", judgement.run.label


def _read():
    from probes.core.workload import Operation, Workload

    return Workload(Operation.READ, Q_(4, "MiB"))


@pytest.mark.parametrize("name", ["oci-beegfs", "narval", "lrz-daos"])
def test_the_bundled_io500_examples_raise_no_error(name):
    runs = read_results(example_path(f"{name}-io500.csv"))
    assert not [j.run.label for j in check_runs(load_example(name), runs)
                if any(f.code == "ABOVE-CEILING" for f in j.findings)]


def _sourced(doc: dict, assumed: set[tuple[str, str]], spans: tuple[float, float] | None = None) -> dict:
    """The random system with every capacity from a data sheet, those in ``assumed`` assumptions: the same values, or
    ranges holding them (``spans``: the value times each end)."""
    copy = {k: ({n: dict(g) for n, g in v.items()} if isinstance(v, dict) else v) for k, v in doc.items()}
    for kind, name in NAMES.items():
        group = copy[kind][name]
        for key, text in group.items():
            if isinstance(text, str) and " " in text and key not in ("parity", "forwarding"):
                if (kind, key) in assumed and spans:
                    number, unit = text.split(" ", 1)
                    group[key] = {"range": [f"{float(number) * end!r} {unit}" for end in spans], "source": "assumption"}
                else:
                    group[key] = {"value": text, "source": "assumption" if (kind, key) in assumed else "datasheet"}
    return copy


def _verdict(doc: dict, run: Run):
    try:
        (judgement,) = check_runs(topology_from_dict(doc), [run])
    except (TopologyError, InputError):
        assume(False)
    return next((f for f in judgement.findings if f.code in VERDICTS), None)


@settings(max_examples=80, deadline=None)
@given(systems(), workloads(), st.floats(0.3, 4.0), st.one_of(st.none(), st.tuples(st.floats(0.1, 1.0), st.floats(1.0, 10.0))),
       st.data())
def test_a_verdict_never_becomes_an_error_when_a_stated_figure_is_made_an_assumption(doc, workload, factor, spans, data):
    """Assumed as one value, or as a range that holds the stated value (``spans``: its ends over it)."""
    stated = _sourced(doc, set())
    try:
        model = Model(topology_from_dict(stated))
        ceiling = model.ceiling(workload)
    except TopologyError:
        assume(False)
    places = sorted((kind, key) for kind, name in NAMES.items() for key, v in stated[kind][name].items()
                    if isinstance(v, dict))
    chosen = set(data.draw(st.lists(st.sampled_from(places), min_size=1, unique=True)))
    value = ceiling.value.m_as(ceiling.metric.unit) * factor
    run = Run("r", workload, ceiling.metric, (value,), ceiling.metric.unit, Origin("r.csv", None, "test"))
    before = _verdict(stated, run)
    assumed = _sourced(doc, chosen, spans)
    after = _verdict(assumed, run)
    if before is None or before.code != "ABOVE-CEILING":
        assert after is None or after.code != "ABOVE-CEILING"
    model = Model(topology_from_dict(assumed))
    if after is not None and after.code == "ABOVE-CEILING":  # it stands on the stated figures alone
        assert value > model.stated_bound(workload) * (1 + TOLERANCE)
    elif value > model.ceiling(workload).value.m_as(ceiling.metric.unit) * (1 + TOLERANCE):
        assert after.code == "POSSIBLE-IF" and "rests on assumed figures" in after.message
        for need in after.implied:  # each names an assumed figure and a value better than assumed
            assert need.stated.source.kind == "assumption" and f"{need.component} " in after.message
            if need.stated.metric is Metric.LATENCY:
                assert need.needed <= need.stated.value * (1 + 1e-9)
            else:
                assert need.needed >= need.stated.value * (1 - 1e-9)


def test_a_round_trip_shorter_than_kernel_tcp_makes_over_ethernet_is_possible_if_not_an_error(corpus):
    """Bytecollider (CERN, CephFS on 10 GbE, listed four times): mdtest-hard-read of 7.15 M op/s from 64 processes
    needs a round trip of at most 8.95 us. Kernel TCP rarely does that, RDMA over Ethernet or a kernel-bypass stack
    does (about 2 us): the description does not say which, so the error rested on an assumption, not on physics."""
    from probes.readers.io500_system import read_list
    from assess.review import review

    listed = corpus / "io500-list" / "io500-db-2017-2019_submissions.csv"
    if not listed.is_file():
        pytest.skip(f"the io500 list database is not in the corpus ({listed})")
    (bytecollider,) = [s for s in read_list(listed.read_text(encoding="utf-8"), source=str(listed)) if s.id == "179"]
    (reviewed,) = review([bytecollider])
    (opens,) = [p for p in reviewed.phases if p.label == "mdtest-hard-read"]
    assert opens.verdict == "POSSIBLE-IF" and "fabric.rtt ≤ 8.95 µs" in opens.implies
    assert not [p.label for p in reviewed.phases if p.verdict == "ABOVE-CEILING"]
