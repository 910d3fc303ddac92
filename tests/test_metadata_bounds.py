"""Metadata judged by what bounds a server, never by a table of past results; hard phases whose cost the model leaves
out said to be so (issue 31, items 4 and 5)."""

import re

import pytest

from probes.core.run import Origin, Run
from probes.core.units import Metric, Q_
from probes.core.workload import Operation, Workload
from probes.readers import read_results
from models.predict import Model
from topologies.bundled import example_path, load_example
from topologies.catalogues.metadata_rates import band, entry, known, typical_metadata
from assess.check import check_runs
from assess.findings import CEILING_CODES, Severity
from tests.systems import topology

# One BeeGFS metadata server of 384 cores (stated), its clients 2 us away over InfiniBand (a data sheet's figure).
SERVER = """
[clients.c]
count = 16
nic = "200 Gbit/s"
[networks.ib]
rtt = { value = "2 us", source = "datasheet" }
[servers.md]
count = 1
nic = "400 Gbit/s"
metadata = { typical = "beegfs", devices = "nvme", cores = 384 }
"""


def _server(extra: str = ""):
    return topology(SERVER + extra, links="c ib md")


def _run(operation: Operation, rate: float, shared: bool = False, label: str = "mdtest-easy-write") -> Run:
    workload = Workload(operation, None, nodes=16, ppn=32, shared_directory=shared)
    return Run(label, workload, Metric.OPERATION_RATE, (rate,), "op/s", Origin("r.csv", None, "test"))


def _verdicts(system, run) -> list[tuple[str, Severity]]:
    (judgement,) = check_runs(system, [run])
    return [(f.code, f.severity) for f in judgement.findings if f.code in CEILING_CODES]


def test_creates_above_every_published_rate_but_within_physics_raise_neither_error_nor_warning():
    published = typical_metadata("beegfs", "nvme")["create"][1].m_as("op/s")  # 76,080 op/s per server
    run = _run(Operation.CREATE, 200_000)  # 2.6x the most any BeeGFS server on NVMe published
    assert 200_000 > 2 * published
    verdicts = _verdicts(_server(), run)
    # 52 % of what 384 cores answer at 1,000 requests a second each, the least: nothing an error or a warning stands on
    assert verdicts == [("BELOW-CEILING", Severity.INFO)]


def test_creates_beyond_one_round_trip_per_process_stay_an_error():
    """512 processes, each waiting 2 us (stated) for its create, complete at most 256 M op/s: physics."""
    ceiling = Model(_server()).ceiling(_run(Operation.CREATE, 1).workload)
    assert ceiling.binding_layers == ("round trips",) and ceiling.value.m_as("op/s") == pytest.approx(512 / 2e-6)
    assert _verdicts(_server(), _run(Operation.CREATE, 300e6))[0] == ("ABOVE-CEILING", Severity.ERROR)


def _implausible(system, run) -> list:
    (judgement,) = check_runs(system, [run])
    return [f for f in judgement.findings if f.code == "IMPLAUSIBLE-HARDWARE"]


def test_creates_faster_per_process_than_any_round_trip_are_implausible_hardware():
    """512 processes at 600 M creates/s complete one each 0.853 us: less than the shortest round trip of any network
    (1 us) beside a core's least 0.1 us to answer it. A stat as fast may come from the client's own cache: not held."""
    (found,) = _implausible(_server(), _run(Operation.CREATE, 600e6))
    assert found.severity is Severity.WARNING
    assert "needs one create every 0.853 µs of each of its 512 processes" in found.message
    assert "no network to date carries one in under 1 µs (InfiniBand adapters" in found.message
    assert (found.evidence["round_trip"]["value"], found.evidence["round_trip"]["unit"]) == (pytest.approx(1e-6), "s")
    assert not _implausible(_server(), _run(Operation.STAT, 600e6, label="mdtest-easy-stat"))
    # one each 1.7 us: within what a network does, so an error on the stated round trip alone
    assert not _implausible(_server(), _run(Operation.CREATE, 300e6))
    # no network between the processes and the metadata server (a local file system): no round trip to wait for
    network = '[networks.ib]\nrtt = { value = "2 us", source = "datasheet" }\n'
    local = topology(SERVER.replace(network, ""), links="c md")
    assert not _implausible(local, _run(Operation.CREATE, 600e6))


def test_a_listed_submissions_creates_are_implausible_only_beyond_any_round_trip(corpus):
    """DAOS on Omni-Path (list id 4, 2019, 728 processes). Its mdtest-easy creates and removes x100 need one each
    1.2 to 1.6 us of each process: within the round trip of 2019's networks, so physics does not exclude them (what
    would, a server's software, is no part's figure). x1000 (op/s read as kop/s) needs under a round trip: caught."""
    from dataclasses import replace as changed
    from probes.readers.io500_system import read_list
    from assess.review import review

    path = corpus / "io500-list" / "io500-db-2017-2019_submissions.csv"
    (daos,) = [s for s in read_list(path.read_text(encoding="utf-8"), source=str(path)) if s.id == "4"]
    planted = ("mdtest-easy-write", "mdtest-easy-delete")

    def found(factor: float) -> dict:
        runs = tuple(changed(r, samples=tuple(x * factor for x in r.samples)) if r.label in planted else r
                     for r in daos.runs)
        (reviewed,) = review([changed(daos, runs=runs)])
        verdicts = {p.label: p.verdict for p in reviewed.phases}
        return {j.run.label: (verdicts[j.run.label], f.evidence) for j in reviewed.judgements for f in j.findings
                if f.code == "IMPLAUSIBLE-HARDWARE"}
    assert found(1) == {} and found(100) == {}
    caught = found(1000)
    assert set(caught) == set(planted)
    assert all(verdict in ("ABOVE-CEILING", "IMPLAUSIBLE-HARDWARE") for verdict, _ in caught.values())
    assert all(e["processes"] == 728 and e["per_process"]["value"] < 1e-6 and "ConnectX-5" in e["source"]
               for _, e in caught.values())


def test_a_shared_directory_is_bound_by_its_lock_at_the_least_and_by_the_servers_at_the_most():
    model = Model(_server())
    hard = model.ceiling(_run(Operation.CREATE, 1, shared=True).workload)
    assert hard.low.binding_layers == ("shared directory",) and hard.least.m_as("op/s") == pytest.approx(1000)
    assert "held 1 ms per operation" in model.topology.capacity_at(hard.low.binding[0], "create").source.note
    # reads do not serialise on the lock: a stat in one directory is bound by the one server that holds it
    stat = model.ceiling(_run(Operation.STAT, 1, shared=True).workload)
    assert stat.least.m_as("op/s") == pytest.approx(384 * 1000)


def test_the_journal_bounds_creates_and_removes_not_stats():
    system = _server('journal = { value = "50000 op/s", source = "measured" }\n')
    model = Model(system)
    for operation in (Operation.CREATE, Operation.REMOVE):
        ceiling = model.ceiling(_run(operation, 1).workload)
        assert ceiling.binding_layers == ("metadata journal",) and ceiling.value.m_as("op/s") == 50_000
    assert "metadata journal" not in {layer.layer for layer in model.ceiling(_run(Operation.STAT, 1).workload).layers}
    # above what the devices make durable, measured: an error on a stated figure
    assert _verdicts(system, _run(Operation.CREATE, 80_000))[0] == ("ABOVE-CEILING", Severity.ERROR)


def test_ior_hards_far_below_is_information_naming_what_the_model_leaves_out():
    runs = read_results(example_path("oci-beegfs-io500.csv"))
    judged = {j.run.label: j for j in check_runs(load_example("oci-beegfs"), runs)}
    (far,) = [f for f in judged["ior-hard-write"].findings if f.code == "FAR-BELOW"]
    assert far.severity is Severity.INFO
    assert "the model leaves out what 47,008 B transfers interleaved in one shared file cost" in far.message
    assert "read-modify-write" in far.evidence["left_out"]
    # the control: the easy write, a file per process, that far below is still a warning
    easy = next(r for r in runs if r.label == "ior-easy-write")
    slow = Run(easy.label, easy.workload, easy.metric, (easy.samples[0] / 20,), easy.unit, easy.origin)
    (far,) = [f for f in check_runs(load_example("oci-beegfs"), [slow])[0].findings if f.code == "FAR-BELOW"]
    assert far.severity is Severity.WARNING and "leaves out" not in far.message


def test_metadata_far_below_round_trips_alone_is_information():
    """No server states a rate: the round trips alone leave the servers' own time out."""
    system = topology(SERVER.replace('metadata = { typical = "beegfs", devices = "nvme", cores = 384 }', ""),
                      links="c ib md")
    (judgement,) = check_runs(system, [_run(Operation.CREATE, 10_000)])
    (far,) = [f for f in judgement.findings if f.code == "FAR-BELOW"]
    assert far.severity is Severity.INFO and "the metadata servers' own time" in far.message


_SYSTEM = re.compile(r"^io500 [^,]+, (.+?), (?:list id|IO500/submission-data)")


def _system(source: str) -> str:
    """A source's system by its name alone, spelled as letters and digits ("Exascaler-on-GCP" is "Exascaler on GCP")."""
    return re.sub(r"\W", "", _SYSTEM.match(source)[1].rsplit(" (", 1)[0].lower())


def _figures(source: str, phase: str) -> list[float]:
    return [float(v.replace(",", "")) for name, v, cached in
            re.findall(r"\b((?:easy|hard)-\w+|find) [\d,.]+ = ([\d,.]+)( \(left out)?", source)
            if name == phase and not cached]


@pytest.mark.parametrize("service, devices", [("lustre", "hdd"), ("lustre", "nvme"), ("beegfs", "nvme"),
                                              ("daos", "pmem")])
@pytest.mark.parametrize("phase", ["easy-write", "hard-stat", "find"])
def test_a_band_never_holds_the_judged_systems_own_runs(service, devices, phase):
    sources = entry(service, devices)["sources"]
    systems = {_SYSTEM.match(s)[1] for s in sources}
    assert systems
    for system in systems:
        others = [x for s in sources if _system(s) != re.sub(r"\W", "", system.rsplit(" (", 1)[0].lower())
                  for x in _figures(s, phase)]
        found = band(service, devices, phase, system)
        if not others:
            assert found is None
            continue
        assert found.left_out and (found.low.m_as("op/s"), found.high.m_as("op/s")) == (min(others), max(others))


def test_a_submission_of_the_list_sees_the_band_of_the_other_systems_only(corpus):
    """Mistral (DKRZ) and Sherlock/Regal (Stanford) are the two Lustre systems on HDD behind the table: Mistral's
    phases are shown beside Sherlock's figures alone, as information, and no metadata verdict stands on them."""
    from probes.readers.io500_system import read_list
    from assess.review import review

    path = corpus / "io500-list" / "io500-db-2017-2019_submissions.csv"
    mistral = [s for s in read_list(path.read_text(encoding="utf-8"), source=str(path)) if s.id == "199"]
    (reviewed,) = review(mistral)
    bands = {j.run.label: f for j in reviewed.judgements for f in j.findings if f.code == "PUBLISHED-BAND"}
    assert set(bands) >= {"mdtest-easy-write", "mdtest-hard-stat", "find-easy"}
    assert all(f.severity is Severity.INFO and f.evidence["left_out_own"] for f in bands.values())
    assert bands["mdtest-easy-write"].evidence["band_high"]["value"] == 13_110  # Sherlock/Regal's, not Mistral's 13,470
    assert "Mistral" not in bands["mdtest-easy-write"].message
    assert not [p for p in reviewed.phases if p.label.startswith(("mdtest", "find")) and p.severity is Severity.ERROR]


@pytest.mark.parametrize("service", sorted(known()))
def test_no_service_of_the_table_is_a_ceiling_of_a_topology_naming_it(service):
    """``typical`` names a service; its published range is in no capacity of the server."""
    text = SERVER.replace('typical = "beegfs", devices = "nvme"', f'typical = "{service}", devices = "any"')
    server = topology(text, links="c ib md").group("md")
    published = {(low, high) for low, high, _ in typical_metadata(service, "any").values()}
    ranges = {key: c.range for key, c in server.capacities.items() if key != "nic"}
    assert {"metadata", "find_metadata", "stat_directory", "create_directory"} <= set(ranges)
    assert not set(ranges.values()) & published
    assert server.capacity("metadata", "create").range[1] == Q_(384 * 10_000_000, "op/s")
