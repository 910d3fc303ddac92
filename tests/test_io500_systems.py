"""Three published io500 systems, written from their own descriptions with the unstated figures as ranges.

The bundled examples (narval, oci-beegfs, lrz-daos) and their io500 results: no result is
impossible, the easy IOR phases are possible only if the unstated figure that decides them
is at least what they imply, and every metadata phase has a ceiling interval from what bounds
a server (metadata_bounds.toml), not from the published rates these very submissions helped set.
Where the corpus is present, the submissions' own files read to the same verdicts.
"""

from pathlib import Path

import pytest

from topologies.bundled import load_example, read_runs
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
