"""Three published io500 systems, written from their own descriptions with the unstated figures as ranges.

The bundled examples (narval, oci-beegfs, lrz-daos) and their io500 results: no result is
impossible, the easy IOR phases are possible only if the unstated figure that decides them
is at least what they imply, and every metadata phase has a ceiling interval from what bounds
a server (metadata_bounds.toml), not from the published rates these very submissions helped set.
Where the corpus is present, the submissions' own files read to the same verdicts.
"""

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.readers.io500_system import read_description, read_list
from topologies.bundled import load_example, read_runs
from topologies.described.io500 import describe
from topologies.topology import Kind
from assess.check import check_runs

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "io500"
SYSTEMS = {"narval": "narval_io500-sc21_result.txt", "oci-beegfs": "oci-beegfs_io500-isc20-bash_full_summary.txt",
           "lrz-daos": "lrz-daos_io500-isc25_result.txt"}
# What each easy IOR phase implies of the figure that decides it: (component, least value in GB/s). Narval's easy
# write implies 6.198 GB/s (127.0 GiB/s over 22 OSS), less than its easy read proves (below).
IMPLIED = {
    ("narval", "ior-easy-read"): ("pools.bandwidth", 8.941),  # 183.2 GiB/s over 22 OSS
    ("oci-beegfs", "ior-easy-write"): ("nvme.write_bandwidth", 2.109),  # 333.9 GiB/s over 170 drives
    ("oci-beegfs", "ior-easy-read"): ("nvme.read_bandwidth", 2.666),  # 422.1 GiB/s over 170 drives
    ("lrz-daos", "ior-easy-write"): ("p5500.write_bandwidth", 3.611),  # 1,130 GiB/s over 336 drives
}


def _judged(name: str, results: str):
    return check_runs(load_example(name), read_runs(results))


@pytest.mark.parametrize("name", SYSTEMS)
def test_no_result_of_a_published_system_is_above_its_ceiling(name):
    judged = _judged(name, f"{name}-io500.csv")
    assert len(judged) >= 12
    assert not [j.run.label for j in judged for f in j.findings if f.code == "ABOVE-CEILING"]


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_metadata_phase_has_a_ceiling_interval_and_a_verdict(name):
    judged = [j for j in _judged(name, f"{name}-io500.csv") if j.run.label.startswith(("mdtest", "find"))]
    assert len(judged) == 8  # seven mdtest phases and find
    for j in judged:
        assert j.ceiling is not None and j.ceiling.low is not None, j.run.label
        assert j.ceiling.least < j.ceiling.value and j.ratio > 0
        # at its least the servers bind (their cores, their lock); at its most, with servers of the fastest cores, the
        # round trips of the processes
        assert all(c.group in ("mds", "md", "daos") for c in j.ceiling.low.binding), j.ceiling.low.binding
        assert j.ceiling.binding_layers == ("round trips",)


@pytest.mark.parametrize("name, phase", sorted(IMPLIED))
def test_an_easy_ior_phase_names_the_unstated_figure_that_decides_it(name, phase):
    (judgement,) = [j for j in _judged(name, f"{name}-io500.csv") if j.run.label == phase]
    (possible,) = [f for f in judgement.findings if f.code == "POSSIBLE-IF"]
    component, least = IMPLIED[name, phase]
    (implied,) = possible.to_dict()["evidence"]["implied"]
    assert implied["component"] == component and implied["source"] == "assumption"
    assert implied["needed"]["value"] / 1e9 == pytest.approx(least, rel=1e-3)
    assert f"possible only if {component} ≥ {least:.2f} GB/s (stated: assumption" in possible.message


def test_a_phase_below_what_its_read_proves_is_judged_against_that_least_and_names_the_read():
    """Narval's easy read (183 GiB/s by other nodes, 119 TiB past the servers' 4.63 TiB) proves 8.94 GB/s per OSS
    pool: its easy write (127 GiB/s) is no longer possible-if but below that least, and says which run raised it."""
    (judgement,) = [j for j in _judged("narval", "narval-io500.csv") if j.run.label == "ior-easy-write"]
    (below,) = [f for f in judgement.findings if f.code == "BELOW-CEILING"]
    assert judgement.ceiling.least.m_as("GiB/s") == pytest.approx(183.2, rel=1e-3)
    assert "pools.bandwidth ≥ 8.94 GB/s (of 2 to 25 GB/s) by ior-easy-read (183 GiB/s, read by another node" \
        in below.message
    (narrowing,) = below.to_dict()["evidence"]["narrowed_by"]
    assert narrowing["component"] == "pools.bandwidth" and narrowing["witness"] == "ior-easy-read"


def test_the_process_count_of_a_result_file_spreads_over_the_client_nodes():
    """LRZ's result.txt states procs = 21504 only: on the topology's 192 nodes, 112 per node."""
    judged = _judged("lrz-daos", "lrz-daos-io500.csv")
    assert {(j.run.workload.nodes, j.run.workload.ppn) for j in judged} == {(192, 112)}


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_submissions_own_files_read_to_the_same_verdicts(name):
    path = CORPUS / SYSTEMS[name]
    if not path.is_file():
        pytest.skip(f"the corpus is not here ({path})")
    codes = [[f.code for f in j.findings] for j in _judged(name, str(path))]
    assert codes == [[f.code for f in j.findings] for j in _judged(name, f"{name}-io500.csv")]


@pytest.mark.parametrize("processes", ["abc", "0", "-3"])
def test_a_processes_column_that_is_no_count_is_a_one_line_error(processes, tmp_path):
    from probes.core.errors import InputError

    text = (Path(__file__).resolve().parents[1] / "topologies" / "examples" / "lrz-daos-io500.csv").read_text(encoding="utf-8")
    bad = tmp_path / "bad.csv"
    bad.write_text(text.replace(",21504,", f",{processes},", 1), encoding="utf-8")
    with pytest.raises(InputError, match=f"line 6, column 'processes': must be a whole number from 1 to 10,000,000. "
                                         f"Got '{processes}' instead."):
        read_runs(str(bad))


# ---------------------------------------------------------------------------------------------
# The hardware a result implies, held to the parts that had shipped by the description's date

DESCRIPTIONS = {"narval": "narval_system-information.txt", "oci-beegfs": "oci-beegfs_system-information.txt",
                "lrz-daos": "lrz-daos_system-information.txt"}
LIST = CORPUS.parent / "io500-list" / "io500-db-2017-2019_submissions.csv"
# Which of each system's easy IOR phases, twenty times over, are caught: beyond the ranges' high ends (ABOVE-CEILING)
# or needing a part beyond any of its date. Narval states no devices, and its servers may hold eight InfiniBand ports
# of any generation: nothing is beyond them.
CAUGHT = {"ABOVE-CEILING", "IMPLAUSIBLE-HARDWARE"}
CAUGHT_TWENTY_TIMES_OVER = {"narval": [], "oci-beegfs": ["ior-easy-read", "ior-easy-write"],
                            "lrz-daos": ["ior-easy-read", "ior-easy-write"]}
# Janelia's qflash (isc19): 12 NVMe drives, installed 10/2018.
QFLASH = "198"


def _implausible(judged) -> dict[str, str]:
    return {j.run.label: f.message for j in judged for f in j.findings if f.code == "IMPLAUSIBLE-HARDWARE"}


def _scaled(runs, factor: float, phases=("ior-easy-write", "ior-easy-read")):
    return [replace(r, samples=tuple(x * factor for x in r.samples)) if r.label in phases else r for r in runs]


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_published_systems_own_description_implies_no_part_beyond_what_had_shipped(name):
    path = CORPUS / DESCRIPTIONS[name]
    if not path.is_file():
        pytest.skip(f"the corpus is not here ({path})")
    described = describe(read_description(path.read_text(encoding="utf-8"), source=str(path)))
    runs = read_runs(str(CORPUS / SYSTEMS[name]))
    if described.topology is None:  # Narval's web form names no client nodes: its bundled run CSV places them
        described = describe(read_description(path.read_text(encoding="utf-8"), source=str(path)).given(
            "client_nodes", str(load_example(name).of_kind(Kind.CLIENT)[0].count), "--nodes"))
    judged = check_runs(described.topology, runs, hardware=described.parts)
    assert any(p.year is not None for p in described.parts.values())  # held to parts of a date
    assert [f.code for j in judged for f in j.findings if f.code == "POSSIBLE-IF"]
    assert _implausible(judged) == {}
    scaled = check_runs(described.topology, _scaled(runs, 20), hardware=described.parts)
    assert sorted(j.run.label for j in scaled if {f.code for f in j.findings} & CAUGHT) == CAUGHT_TWENTY_TIMES_OVER[name]


def test_check_holds_what_a_description_implies_to_the_parts_of_its_date(tmp_path, capsys):
    """OCI's BeeGFS (one NVMe drive a server, refreshed 2020-06) with its easy IOR results four times over: 10.7 GB/s
    of reads a drive, within the range any NVMe generation spans, beyond every drive shipping by 2020."""
    import json

    from assess.cli import main

    path = CORPUS / DESCRIPTIONS["oci-beegfs"]
    if not path.is_file():
        pytest.skip(f"the corpus is not here ({path})")
    lines = (Path(__file__).resolve().parents[1] / "topologies" / "examples" / "oci-beegfs-io500.csv").read_text(
        encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("run,"))
    value = lines[header].split(",").index("value")
    scaled = [",".join(f"{float(x) * 4!r}" if i == value and line.startswith("ior-easy") else x
                       for i, x in enumerate(line.split(","))) if n > header else line for n, line in enumerate(lines)]
    results = tmp_path / "x4.csv"
    results.write_text("\n".join(scaled) + "\n", encoding="utf-8")
    assert main(["check", str(path), str(results), "--json", "--fail-on", "never"]) == 0
    found = {j["run"]["label"]: [f for f in j["findings"] if f["code"] == "IMPLAUSIBLE-HARDWARE"]
             for j in json.loads(capsys.readouterr().out)["runs"]}
    # the read (by other nodes, of more than the servers' memory) would be a witness raising the least of the
    # storage's range for the write; needing more of a drive than any of 2020 did, it is the anomaly and proves nothing
    assert sorted(label for label, f in found.items() if f) == ["ior-easy-read", "ior-easy-write"]
    (read,) = found["ior-easy-read"]
    (evidence,) = read["evidence"]["implausible"]
    assert evidence["fastest"] == "Samsung PM1735 (add-in card)" and evidence["year"] == 2020
    assert evidence["per_part"]["value"] / 1e9 == pytest.approx(4 * 2.666, rel=1e-2) and read["severity"] == "warning"


@pytest.fixture(scope="module")
def qflash():
    if not LIST.is_file():
        pytest.skip(f"the io500 list database is not in the corpus ({LIST})")
    (submission,) = [s for s in read_list(LIST.read_text(encoding="utf-8"), source=str(LIST)) if s.id == QFLASH]
    return submission, describe(submission.description)


def test_a_list_submission_with_its_easy_ior_results_twenty_times_over_needs_drives_no_one_shipped(qflash):
    submission, described = qflash
    assert _implausible(check_runs(described.topology, submission.runs, hardware=described.parts)) == {}
    raised = _implausible(check_runs(described.topology, _scaled(submission.runs, 20), hardware=described.parts))
    # 92.9 GB/s of reads per server over its at most 12 drives: 7.74 GB/s each, beyond a 2018 NVMe drive's 6.2
    assert "needs ≥ 7.7" in raised["ior-easy-read"] and "GB/s per NVMe drive" in raised["ior-easy-read"]
    assert "the fastest NVMe drive shipping by 2018 (storage_install_date '10/2018'), Samsung PM1725a" in \
        raised["ior-easy-read"] and "reads 6.20 GB/s" in raised["ior-easy-read"]


def test_without_an_install_date_the_run_dates_the_parts_and_without_any_date_the_newest_parts_stand(qflash):
    submission, _ = qflash
    fields = submission.description.fields
    undated = replace(submission.description, fields={k: v for k, v in fields.items() if not k.startswith("storage_")})
    storage = describe(undated).parts["storage"]
    assert (storage.year, storage.dated) == (2019, f"submission_date {fields['submission_date']!r}")
    never = replace(undated, fields={k: v for k, v in undated.fields.items() if k not in ("submission_date", "list_name")})
    storage = describe(never).parts["storage"]
    assert storage.year is None and storage.dated.endswith("the newest parts")


@settings(max_examples=12)
@given(year=st.integers(2005, 2026), later=st.integers(0, 10), factor=st.sampled_from((5, 20, 100)))
def test_a_later_date_never_makes_a_verdict_more_implausible(qflash, year, later, factor):
    submission, described = qflash
    runs = _scaled(submission.runs, factor)

    def implausible(when):
        parts = {group: replace(p, year=when) for group, p in described.parts.items()}
        return set(_implausible(check_runs(described.topology, runs, hardware=parts)))
    assert implausible(year + later) <= implausible(year)


# Tianhe-2E (NSCC Changsha, SC19): 10 client nodes whose network the description does not name.
TIANHE = "87"
# YRCloudFile (Yanrong, ISC19): 10 data servers of 3 SSDs each on SATA, installed 06/2019.
YRCLOUD = "128"


def _listed(identifier: str):
    if not LIST.is_file():
        pytest.skip(f"the io500 list database is not in the corpus ({LIST})")
    (submission,) = [s for s in read_list(LIST.read_text(encoding="utf-8"), source=str(LIST)) if s.id == identifier]
    return submission, describe(submission.description)


def test_client_nodes_of_an_unnamed_network_are_held_to_the_ports_shipping_by_the_runs_date():
    submission, described = _listed(TIANHE)
    assert _implausible(check_runs(described.topology, submission.runs, hardware=described.parts)) == {}
    raised = _implausible(check_runs(described.topology, _scaled(submission.runs, 20), hardware=described.parts))
    # 3,983 GB/s of writes from 10 client nodes, at most 8 ports each: 49.8 GB/s a port, beyond HDR's 24.5 of 2019
    write = raised["ior-easy-write"]
    assert "needs ≥ 49.8 GB/s per client port of any network (client_network not stated)" in write
    assert "shipping by 2019 (submission_date '2019-11-12'), InfiniBand HDR 4x (RDMA, 2018), carries 24.5 GB/s" in write


def test_ssds_on_a_sata_interface_are_held_to_sata_ones():
    """YRCloudFile's easy write, 18.1 GB/s from 10 servers of 3 SSDs on SATA: 603 MB/s a drive, more than any SATA
    SSD writes (SATA 3 carries 600 MB/s); its read, 370 MB/s a drive, is within them. The write's cache, or more
    drives than the description states: a warning to check, not an error."""
    submission, described = _listed(YRCLOUD)
    assert described.parts["storage"].classes == ("sata-ssd",)
    raised = _implausible(check_runs(described.topology, submission.runs, hardware=described.parts))
    assert list(raised) == ["ior-easy-write"]
    assert "needs ≥ 603 MB/s per SATA SSD" in raised["ior-easy-write"] and "writes 520 MB/s" in raised["ior-easy-write"]
