"""assess.findings.application: real jobs (the sample logs PyDarshan ships) judged against a system: over the OSTs
their files used, with the findings about an application, each asserted by its figures."""

import functools
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

darshan = pytest.importorskip("darshan", reason="PyDarshan is not installed: pip install 'iobound[darshan]'")

from probes.core.errors import InputError  # noqa: E402
from probes.core.units import Q_  # noqa: E402
from probes.readers import read_results  # noqa: E402
from topologies.bundled import load_example  # noqa: E402
from topologies.load import load_topology  # noqa: E402
from assess import plotdata  # noqa: E402
from assess.check import CHECK_VERSION, check_runs  # noqa: E402
from assess.findings.application import JOB_CODES, part_of  # noqa: E402
from assess.report import build_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(darshan.__file__).parent
LOGS = sorted(p for folder in ("examples/example_logs", "tests/input", "examples/darshan-graph")
              for p in (PACKAGE / folder).glob("*.darshan"))
EXAMPLES = PACKAGE / "examples" / "example_logs"
HDF5, VPIC, DXT = EXAMPLES / "ior_hdf5_example.darshan", EXAMPLES / "example.darshan", EXAMPLES / "dxt.darshan"
MACSIO = next(EXAMPLES.glob("shane_macsio_*.darshan"))
# The real logs beside the worktree (darshan-hpc/darshan-logs, SOURCES.tsv), read where they are when present.
CORPUS = ROOT.parent / "shared" / "darshan-logs"
# Those whose STDIO module METADATA-BOUND called bound by the metadata servers, 40 of the 78: opens of <STDOUT> and
# <STDERR>, or one open of a file far slower than the ceiling (waiting, not the servers). The 41st, stdio_no_posix,
# opened one file on a laptop's ext4 at 33,000 op/s, near the ceiling: only the log's mount table tells it apart.
STDIO_BOUND = ("apmpi_apxc__mpi-io-test", "dlio_logs__", "e3sm_io_heatmaps_and_dxt__e3sm_io_heatmap_only", "ior_daos__",
               "mpi_io_test_with_dxt__", "partial_data_dxt__", "release_logs__mpi-io-test-x86_64-3.",
               "runtime_heatmap_inactive_ranks__")
BADOST, GOODOST = (PACKAGE / "tests" / "input" / f"sample-{n}.darshan" for n in ("badost", "goodost"))
# 248 OSTs of 3 GB/s behind 248 OSS of 5 GB/s, 2,048 clients of 8 GB/s, one MDS of 50,000 op/s (see the file).
LUSTRE = load_topology(ROOT / "tests" / "data" / "darshan" / "lustre-248.toml")
pytestmark = pytest.mark.slow  # PyDarshan reads each log in a child process of its own


@functools.cache
def runs_of(path: Path):
    return tuple(read_results(path))


@functools.cache
def judged(path: Path, system=LUSTRE, nodes=None):
    return {j.run.label: j for j in check_runs(system, runs_of(path), nodes=nodes)}


def found(judgement, code):
    [finding] = [f for f in judgement.findings if f.code == code]
    return finding


def codes(judgement):
    return [f.code for f in judgement.findings]


def test_a_job_on_one_ost_is_judged_over_that_ost_and_its_server():
    """ior with HDF5, 4 processes on one node, one shared file striped over OST 106 only."""
    posix = judged(HDF5)["POSIX read+write"]
    assert posix.part.targets == ("ost", 1, 248)
    assert posix.part.said == "the 1 of 248 OSTs of ost its files were striped over, and at most 1 of the 248 oss " \
                              "servers behind them"
    # one OST of 3 GB/s, reads and writes sharing it, binds: not the one node's 8 GB/s NIC each way
    assert posix.ceiling.value.m_as("GB/s") == pytest.approx(3.0)
    assert posix.ratio == pytest.approx(37.45605940660296 * 2**20 / 3e9)
    few = found(posix, "FEW-TARGETS")
    assert (few.evidence["targets_used"], few.evidence["targets"]) == (1, 248)
    # on all 248, the one node's 8 GB/s NIC binds its reads, 50.04 % of the bytes
    everywhere = 8 / posix.run.workload.read_share
    assert Q_(*few.evidence["ceiling_all"].values()).m_as("GB/s") == pytest.approx(everywhere)
    assert few.evidence["gain"] == pytest.approx(everywhere / 3)
    assert few.message == ("POSIX read+write: its files were striped over 1 of the 248 OSTs (ost), so its ceiling is "
                           "2,861 MiB/s; on all 248 it would be 14.9 GiB/s (5.33x).")
    assert "lfs setstripe -c -1 (all 248)" in few.remedy


def test_small_unaligned_pieces_of_a_shared_file():
    posix = judged(HDF5)["POSIX read+write"]
    small = found(posix, "SMALL-ACCESSES")
    # Darshan's exact sizes (32 x 256 KiB, 9 x 512 B, 5 x 544 B, 3 x 328 B), all under the 1 MiB stripes, are
    # 8,396,920 of its 8,398,304 bytes: the least share certain
    assert small.evidence["bytes"] == 4202504 + 4195800 and small.evidence["block_size_B"] == 2**20
    assert small.evidence["small_share_at_least"] == pytest.approx(8396920 / 8398304)
    assert small.evidence["block_size_from"] == "Lustre stripes of its files"
    assert (small.evidence["requests_under"], small.evidence["requests"]) == (59, 59)
    assert small.evidence["ceiling_at_size"] == small.evidence["ceiling_at_large"]  # buffered: the hardware carries both
    assert "the ceiling is 2,861 MiB/s at its 256 KiB requests and at 1 MiB alike" in small.message
    shared = found(posix, "SHARED-FILE-CONTENTION")
    assert (shared.evidence["unaligned_requests"], shared.evidence["requests"], shared.evidence["processes"]) == (55, 59, 4)
    assert shared.message.startswith("POSIX read+write: 4 processes wrote 1 shared file(s) in 256 KiB pieces, 55 of its "
                                     "59 requests not starting on the file system's 1 MiB blocks")
    assert "collective buffering" in shared.remedy
    assert "SHARED-FILE-CONTENTION" not in codes(judged(HDF5)["MPI-IO read+write"])  # counted where the requests are


def test_a_wide_shared_file_on_24_osts():
    """vpicio: 2,048 processes write one 2 TiB file striped over 24 OSTs in 128 MiB pieces."""
    posix = judged(VPIC)["POSIX write"]
    assert posix.part.targets == ("ost", 24, 248)
    assert posix.ceiling.value.m_as("GB/s") == pytest.approx(72.0)  # 24 OSTs x 3 GB/s
    assert posix.run.placement.placed.startswith("2048 processes on the 2048 nodes of compute, 1 each")
    few = found(posix, "FEW-TARGETS")
    assert Q_(*few.evidence["ceiling_all"].values()).m_as("GB/s") == pytest.approx(744.0)
    assert codes(posix) == ["FAR-BELOW", "FEW-TARGETS"]  # no benchmark-method finding for a job that ran once
    assert posix.ratio == pytest.approx(24535.281933688686 * 2**20 / 72e9)


def test_metadata_that_the_servers_could_do_far_faster():
    """dxt.darshan: one process, 264 opens and 1,379 stats, 11,218 s of I/O time nearly all in metadata."""
    posix = judged(DXT)["POSIX read+write"]
    assert posix.part.targets is None and posix.part.said == "the whole system (the log records no Lustre OSTs)"
    assert "METADATA-BOUND" not in codes(posix)  # the metadata ceiling does not explain its time
    bound = found(posix, "METADATA-HEAVY")
    assert bound.evidence["operations"] == {"open": 264, "stat": 1379}
    assert bound.evidence["at_ceiling_s"] == pytest.approx([1643 / 50000] * 2)  # one MDS at 50,000 op/s
    assert bound.evidence["metadata_time_per_process_s"] == pytest.approx(11217.7953)
    assert "they need only 0.0329 s: the time went to waiting" in bound.message


def _with(**job):
    """dxt.darshan's POSIX run (1,643 opens and stats of one process, 0.0329 s at the one MDS's 50,000 op/s) judged
    with its job's figures changed (times in seconds)."""
    posix = runs_of(DXT)[0]
    times = {k: Q_(job.pop(k), "s") for k in ("io_time", "meta_time", "stream_meta_time") if k in job}
    [j] = check_runs(LUSTRE, [replace(posix, job=replace(posix.job, **job, **times))])
    return j


def _metadata_codes(**job) -> list[str]:
    return [c for c in codes(_with(**job)) if c.startswith("METADATA")]


def test_metadata_binds_where_its_measured_rate_is_at_the_ceiling():
    assert _metadata_codes(meta_time=0.04, io_time=0.05) == ["METADATA-BOUND"]  # 41,000 op/s of 50,000
    bound = found(_with(meta_time=0.0329, io_time=0.05), "METADATA-BOUND")
    assert bound.message.endswith("they take 0.0329 s: metadata binds it.")


def test_metadata_faster_than_the_ceiling_is_never_bound_by_it():
    """Opens 3.6x faster than the ceiling allows: the ceiling's rate is wrong, or another file system served them."""
    assert _metadata_codes(meta_time=0.0329 / 3.6, io_time=0.01) == ["METADATA-FASTER"]
    # metadata 18 % of the I/O time, though at the ceiling it would take 66 %: its own measure says it does not bind
    assert _metadata_codes(meta_time=0.009, io_time=0.05) == []


def test_opens_of_the_standard_streams_are_no_metadata_finding():
    assert _metadata_codes(meta_time=0.04, io_time=0.05, stream_opens=264, stream_stats=1379) == []
    # the streams' own time does not count either: 0.005 s of files' metadata in 0.05 s of I/O
    assert _metadata_codes(meta_time=0.04, io_time=0.05, stream_opens=1, stream_meta_time=0.035) == []


@pytest.mark.parametrize("path", sorted(p for p in CORPUS.glob("*.darshan") if p.name.startswith(STDIO_BOUND)) or
                         [pytest.param(None, marks=pytest.mark.skip(reason=f"no Darshan logs in {CORPUS}"))],
                         ids=lambda p: p.name if p else "none")
def test_no_stdio_module_of_a_real_job_is_metadata_bound(path):
    for label, j in judged(path).items():
        assert not (label.startswith("STDIO") and "METADATA-BOUND" in codes(j)), found(j, "METADATA-BOUND").message


def test_many_processes_writing_192_byte_pieces_of_shared_files():
    """MACSio: 16 processes; most bytes move in 4 large requests, so not SMALL-ACCESSES, but the pieces contend."""
    posix = judged(MACSIO)["POSIX read+write"]
    shared = found(posix, "SHARED-FILE-CONTENTION")
    assert (shared.evidence["unaligned_requests"], shared.evidence["requests"]) == (7681, 7822)
    assert shared.evidence["alignment_B"] == 4096 and shared.evidence["transfer_size_B"] == 192
    assert "SMALL-ACCESSES" not in codes(posix)


def test_a_file_per_process_job_in_large_aligned_requests_raises_none_of_the_others():
    """The good control: 48 processes, one file each, 8 MiB writes over all 24 OSTs."""
    posix = judged(GOODOST)["POSIX write"]
    assert not {"SMALL-ACCESSES", "SHARED-FILE-CONTENTION", "METADATA-BOUND"} & set(codes(posix))
    assert found(posix, "FEW-TARGETS").evidence["gain"] == pytest.approx(384 / 72)  # 48 nodes' NICs bind on all 248


def test_a_system_whose_ost_group_cannot_be_the_jobs_is_taken_whole(tmp_path):
    narval = load_example("narval")  # no group of OSTs: its pools are a member per OSS
    part = part_of(narval, runs_of(HDF5)[0])
    assert part.topology is narval and part.targets is None
    small = tmp_path / "small.toml"  # 22 OSTs: the job's OST 106 is beyond them
    small.write_text(Path(narval.path).read_text().replace("[devices.pools]", "[devices.ost]").replace('"pools"]', '"ost"]'))
    part = part_of(load_topology(small), runs_of(HDF5)[0])
    assert part.targets is None
    assert part.said == ("the whole system (its files used OST index 106, beyond the 22 members of ost: not the file "
                         "system it ran on, or not one member per OST)")


def test_nodes_place_a_job_whose_log_does_not_record_them():
    posix = judged(BADOST, nodes=64)["POSIX write"]
    assert (posix.run.workload.nodes, posix.run.workload.ppn) == (64, 32)
    assert posix.run.placement.placed == ("2048 processes on 64 nodes, 32 each (--nodes 64; the result states no "
                                          "node count)")
    with pytest.raises(InputError, match=r"the 2048 processes of 'POSIX write' do not divide evenly over --nodes 100"):
        check_runs(LUSTRE, runs_of(BADOST), nodes=100)


def test_check_on_the_command_line_names_the_part_and_says_bad_nodes_in_one_line():
    system = str(ROOT / "tests" / "data" / "darshan" / "lustre-248.toml")
    done = subprocess.run([sys.executable, "-m", "assess", "check", system, str(HDF5), "--json"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    doc = json.loads(done.stdout)
    assert (doc["format"], doc["format_version"]) == ("iobound/check", CHECK_VERSION)
    assert doc["runs"][0]["part"] == {"said": "the 1 of 248 OSTs of ost its files were striped over, and at most 1 "
                                              "of the 248 oss servers behind them", "target_group": "ost",
                                      "targets_used": 1, "targets": 248}
    bad = subprocess.run([sys.executable, "-m", "assess", "check", system, str(BADOST), "--nodes", "100"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert "do not divide evenly over --nodes 100" in bad.stderr


@pytest.mark.parametrize("path", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_check_judges_every_sample_log(path):
    for j in judged(path).values():
        assert j.part is not None and j.ceiling is not None and j.ratio > 0
        assert not {"FEW-REPETITIONS", "SHORT-RUN", "SMALL-DATA-SET"} & set(codes(j))
        assert all(f.message and f.remedy for f in j.findings)
    assert {c for j in judged(path).values() for c in codes(j)} <= set(JOB_CODES) | {
        "ABOVE-CEILING", "AT-CEILING", "BELOW-CEILING", "FAR-BELOW", "TRANSFER-MISFIT", "UNIT-MIXUP"}


def test_the_access_size_histogram_under_the_roofline(tmp_path):
    from models.predict import Model

    posix = judged(HDF5)["POSIX read+write"]
    sizes = plotdata.access_sizes(Model(posix.part.topology), posix)
    job = posix.run.job
    recorded = [r + w for (_, r), (_, w) in zip(job.access_sizes_read, job.access_sizes_write)]
    assert [n for _, _, n in sizes.bins] == recorded and sum(recorded) == 59
    assert sizes.bins[4][:2] == (100 * 1024, 2**20) and sizes.bins[0][0] == 16  # in bytes, from 16 B
    ceiling = next(line for line in sizes.chart.lines if line.style == "ceiling")
    assert ceiling.y == pytest.approx([3e9 / 2**20] * len(ceiling.y))  # MiB/s, one OST at every size
    (fig_dir := tmp_path / "figures").mkdir()
    report = build_report(LUSTRE, list(judged(HDF5).values()), tmp_path)
    [jobs] = [s for s in report.sections if s.heading == "Applications (Darshan logs)"]
    assert f"{HDF5}: job 32324925, 4 processes, judged over the 1 of 248 OSTs" in jobs.blocks[1]
    assert {p.stem for p in jobs.blocks if hasattr(p, "stem")} == {"figures/job-1", "figures/job-1-sizes-1",
                                                                   "figures/job-1-sizes-2"}
    assert (fig_dir / "job-1-sizes-1.svg").exists()
