"""probes.readers.darshan: every sample log the PyDarshan wheel ships is read, with PyDarshan's own figures as
the oracle; a log iobound cannot read, a corrupt one, or one without PyDarshan, is refused in one line."""

import functools
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

darshan = pytest.importorskip("darshan", reason="PyDarshan is not installed: pip install 'iobound[darshan]'")

from darshan.backend.cffi_backend import accumulate_records  # noqa: E402

from probes.core.errors import ToolOutputError  # noqa: E402
from probes.core.units import Q_, Metric, format_quantity  # noqa: E402
from probes.core.workload import Operation  # noqa: E402
from probes.readers import BINARY_READERS, FORMATS, READERS, read_results  # noqa: E402
from probes.readers import darshan as reader  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(darshan.__file__).parent
# The sample logs the wheel ships, read where it installed them (never copied into the project).
LOGS = sorted(p for folder in ("examples/example_logs", "tests/input", "examples/darshan-graph")
              for p in (PACKAGE / folder).glob("*.darshan"))
EXAMPLE = PACKAGE / "examples" / "example_logs" / "example.darshan"
BADOST = PACKAGE / "tests" / "input" / "sample-badost.darshan"
DXT = PACKAGE / "examples" / "example_logs" / "dxt.darshan"
# Real logs beside the worktree (darshan-hpc/darshan-logs, SOURCES.tsv), read where they are when present.
CORPUS = ROOT.parent / "shared" / "darshan-logs"
DAOS = next(CORPUS.glob("ior_daos__*ior-DFS*.darshan"), None)
PARTIAL = CORPUS / "partial_data_stdio__partial_data_stdio.darshan"
LUSTRE = ROOT / "tests" / "data" / "darshan" / "lustre-248.toml"
HDF5 = PACKAGE / "examples" / "example_logs" / "ior_hdf5_example.darshan"
pytestmark = pytest.mark.slow  # PyDarshan reads each log in a child process of its own
# iobound's command line in a child process, with PyDarshan hidden from it when argv[1] is "hide".
COMMAND = """
import sys
if sys.argv[1] == "hide":
    sys.modules["darshan"] = None
from assess.cli import main
sys.exit(main(sys.argv[2:]))
"""


def iobound(*argv: str, hide: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", COMMAND, "hide" if hide else "show", *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iobound: error: ") and "Traceback" not in err, err
    return lines[0]


@functools.cache
def runs_of(path: Path):
    return read_results(path)


def test_the_wheel_ships_the_sample_logs():
    assert len(LOGS) >= 18 and EXAMPLE in LOGS and BADOST in LOGS


# Every sample log, against what PyDarshan itself reports

@pytest.mark.parametrize("path", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_sample_log_gives_what_pydarshan_reports(path):
    runs = runs_of(path)
    report = darshan.DarshanReport(str(path), read_all=True)
    nprocs = report.metadata["job"]["nprocs"]
    modules = [m for m in reader.MODULES if m in report.records and len(report.records[m])]
    read = [r.job.module for r in runs] + _without_bandwidth(runs[0])
    assert sorted(read, key=reader.MODULES.index) == modules
    for run in runs:
        job = run.job
        module = job.module
        accumulated = accumulate_records(report.records[module].to_df(), module, nprocs)
        metrics, counters = accumulated.derived_metrics, accumulated.summary_record["counters"].iloc[0]
        prefix = "MPIIO" if module == "MPI-IO" else module
        read, written = int(counters[f"{prefix}_BYTES_READ"]), int(counters[f"{prefix}_BYTES_WRITTEN"])
        assert (job.bytes_read, job.bytes_written) == (Q_(read, "B"), Q_(written, "B"))
        assert read + written == metrics.total_bytes == run.workload.data_set.m_as("B")
        assert run.samples == (metrics.agg_perf_by_slowest,) and run.unit == "MiB/s"
        assert run.durations == (metrics.agg_time_by_slowest,)
        assert job.io_time.m_as("s") == pytest.approx(metrics.agg_time_by_slowest, rel=1e-8)
        # Darshan's MiB are 2^20 bytes: the bytes over the time, in the one registry, give its figure.
        per_second = Q_(read + written, "B") / Q_(metrics.agg_time_by_slowest, "s")
        assert per_second.m_as("MiB/s") == pytest.approx(run.samples[0], rel=1e-9)
        assert per_second.m_as("MB/s") == pytest.approx(run.samples[0] * 1.048576, rel=1e-9)
        assert run.placement.processes == nprocs and job.job_id == report.metadata["job"]["jobid"]
        assert run.origin.tool == "darshan" and run.origin.tool_version == report.metadata["job"]["metadata"]["lib_ver"]
        expected = {(True, True): Operation.MIXED, (True, False): Operation.READ, (False, True): Operation.WRITE}
        assert run.workload.operation is expected[(read > 0, written > 0)]
        assert run.label == f"{module} {run.workload.operation.value}"
        if run.workload.operation is Operation.MIXED:
            assert run.workload.read_share == pytest.approx(read / (read + written))
        shared = sum(metrics.category_counters[i].count for i in (5, 6))
        assert (job.shared_files, job.unique_files) == (shared, metrics.category_counters[4].count)


def _without_bandwidth(run) -> list[str]:
    """The modules a run's ``no_bandwidth`` tag names."""
    return [part.split(":")[0] for part in dict(run.tags).get("no_bandwidth", "").split("; ") if part]


def test_a_shared_file_job_on_lustre():
    """vpicio on Edison: 2,048 processes write one 2 TiB file striped over 24 OSTs, 128 MiB at a time."""
    posix, mpiio = runs_of(EXAMPLE)
    tags, job = dict(posix.tags), posix.job
    assert (posix.label, mpiio.label) == ("POSIX write", "MPI-IO write")
    assert posix.samples[0] == pytest.approx(24535.28, abs=0.01)  # darshan-parser --perf: agg_perf_by_slowest
    assert posix.workload.transfer_size == Q_(128, "MiB") and posix.workload.shared_file is True
    assert posix.workload.nodes is None and posix.workload.ppn == 1
    assert tags["nodes"] == "unknown: the log does not record them; check --nodes N gives them"
    assert job.bytes_written == Q_(2199023259968, "B") and posix.placement.processes == 2048
    assert (job.lustre.stripe_sizes, job.lustre.stripe_counts, job.lustre.osts) == ((Q_(1, "MiB"),), (24,), tuple(range(24)))
    assert job.access_sizes_write[8] == ("100M_1G", 16384)
    assert job.common_access_sizes[0] == (134217728, 16384)
    assert tags["transfer_size"].startswith("common access size 134217728 B (counted 16384 times) in the dominant bin 100M_1G")
    assert job.opens == 2049
    assert tags["no_bandwidth"] == "STDIO: moved 3309 B but recorded no I/O time to divide by"


def test_a_file_per_process_job_and_its_metadata():
    """IOR -F on Edison: 2,048 files of 256 MiB in 4 MiB writes, each file on one OST."""
    posix = runs_of(BADOST)[0]
    job = posix.job
    assert posix.workload.describe() == "write 4 MiB seq, all nodes x 1 ppn"
    assert posix.workload.shared_file is False and posix.workload.data_set == Q_(512, "GiB")
    assert (job.unique_files, job.shared_files, job.unique_bytes) == (2048, 0, Q_(549755813888, "B"))
    assert (job.opens, job.stats, job.syncs) == (2048, 2048, 2048)
    assert job.meta_time_by_slowest.m_as("s") == pytest.approx(0.551218033, rel=1e-9)
    assert (job.lustre.files, job.lustre.stripe_counts, len(job.lustre.osts)) == (2048, (1,), 24)


def test_nodes_come_from_the_hosts_dxt_recorded_for_every_process():
    for run in runs_of(HDF5):
        assert (run.workload.nodes, run.workload.ppn) == (1, 4)
        assert dict(run.tags)["nodes_from"] == "1 distinct hosts DXT recorded for every one of the 4 processes"
        assert run.job.lustre.osts == (106,)
    simple = runs_of(PACKAGE / "tests" / "input" / "sample-dxt-simple.darshan")[0]
    assert simple.workload.nodes is None
    assert dict(simple.tags)["nodes"].startswith("unknown: DXT names 1 host(s) for 1 of the 16 processes only")


def test_a_one_process_jobs_files_are_its_own():
    run = runs_of(DXT)[0]
    assert run.label == "POSIX read+write" and run.workload.shared_file is False
    assert run.workload.read_share == pytest.approx(22517726 / (22517726 + 13021781))


def test_the_standard_streams_metadata_is_counted_apart():
    """Darshan names stdin, stdout and stderr's records <STDIN>, <STDOUT>, <STDERR>: no file system serves them."""
    stdio = {run.label: run for run in runs_of(BADOST)}["STDIO read+write"].job
    assert (stdio.opens, stdio.stream_opens, stdio.stream_stats) == (6144, 4096, 0)  # stdout and stderr of 2,048
    assert stdio.stream_meta_time == Q_(0, "s")
    hdf5 = {run.label: run for run in runs_of(HDF5)}["STDIO write"].job
    assert hdf5.opens == hdf5.stream_opens == 1  # its only file is <STDOUT>


def test_a_log_without_posix_data_gives_its_stdio_run():
    [run] = runs_of(PACKAGE / "tests" / "input" / "noposix.darshan")
    assert run.label == "STDIO read+write" and run.job.access_sizes_read == () and run.job.common_access_sizes == ()
    assert dict(run.tags)["transfer_size"] == "mean request size (STDIO records no access sizes)"


# Refusals: one line naming the module and the reason

def _found(**io) -> dict:
    return {"job": {"nprocs": 4, "jobid": 1, "run_time": 2.0, "log_ver": "3.41", "lib_ver": "3.4.4"},
            "modules": {"LUSTRE": {"partial": False}, **{m: {"partial": False} for m in io}}, "io": io, "beside": {},
            "lustre": [], "hosts": {}}


def test_a_log_with_no_posix_mpiio_or_stdio_records_is_refused_naming_the_modules():
    with pytest.raises(ToolOutputError) as caught:
        reader.runs_from(_found(), source="job.darshan")
    assert str(caught.value) == ("job.darshan: modules: no POSIX, MPI-IO or STDIO records (modules: LUSTRE); iobound "
                                 "reads the bytes and I/O time of those modules")


def test_a_module_that_moved_bytes_in_no_time_is_refused_naming_it():
    stdio = {"counters": {"STDIO_BYTES_READ": 12, "STDIO_BYTES_WRITTEN": 0}, "fcounters": {},
             "derived": {"total_bytes": 12, "agg_perf_by_slowest": 0.0, "agg_time_by_slowest": 0.0,
                         "unique_md_only_time_by_slowest": 0.0}, "categories": []}
    with pytest.raises(ToolOutputError, match=r"modules: STDIO: moved 12 B but recorded no I/O time to divide by"):
        reader.runs_from(_found(STDIO=stdio), source="job.darshan")


def test_without_pydarshan_a_log_gets_one_line_saying_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "darshan", None)
    with pytest.raises(ToolOutputError, match=r"needs PyDarshan: pip install 'iobound\[darshan\]'"):
        read_results(EXAMPLE)
    done = iobound("read", str(EXAMPLE), hide=True)
    assert done.returncode == 2
    assert one_line_error(done.stderr) == (f"iobound: error: {EXAMPLE}: a Darshan log; reading it needs PyDarshan: "
                                           "pip install 'iobound[darshan]'")


def test_iobound_read_reads_a_log_end_to_end():
    done = iobound("read", str(BADOST), "--csv")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert rows[2].startswith("POSIX write,write,4194304 B,,1,") and "673.46408994517" in rows[2]
    assert ",darshan,3.1.3," in rows[2]


def test_a_binary_file_that_is_no_darshan_log_is_refused_in_one_line(tmp_path):
    binary = tmp_path / "core.bin"
    binary.write_bytes(Path(sys.executable).read_bytes()[:5000])
    done = iobound("read", str(binary))
    assert done.returncode == 2
    line = one_line_error(done.stderr)
    assert line.startswith(f"iobound: error: {binary}: not a format iobound reads; expected ") and "Darshan log" in line


@pytest.mark.parametrize("cut", [16, 200, 5000])
def test_a_truncated_log_is_refused_in_one_line_never_a_crash(tmp_path, cut):
    log = tmp_path / "cut.darshan"
    log.write_bytes(EXAMPLE.read_bytes()[:cut])
    done = iobound("read", str(log))
    assert done.returncode == 2
    assert "the log is corrupt or truncated" in one_line_error(done.stderr)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_logs_give_runs_or_a_one_line_error(tmp_path, seed):
    """darshan-util crashes on most of these (SIGSEGV, SIGABRT): the child process turns that into an error."""
    rng = random.Random(seed)
    data = bytearray(rng.choice([EXAMPLE, HDF5, DXT]).read_bytes())
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(16, len(data))] = rng.randrange(256)
    try:
        runs = reader.parse(bytes(data[:rng.randrange(17, len(data) + 1)]), source="fuzz.darshan")
    except ToolOutputError as exc:
        assert str(exc).startswith("fuzz.darshan: ") and "\n" not in str(exc)
    else:
        assert all(math.isfinite(r.samples[0]) and r.samples[0] > 0 for r in runs)


# The registry

def test_the_registry_knows_darshan_logs_by_their_header_only():
    head = EXAMPLE.read_bytes()[:16]
    assert reader.looks_like(head) and reader.looks_like(head.decode("latin-1"))
    assert reader.looks_like(head[:8] + head[8:16][::-1])  # written big-endian
    assert not reader.looks_like("3.21\x00\x00\x00\x00" + "x" * 8) and not reader.looks_like(b"\x7fELF")
    assert not any(module.looks_like(head.decode("latin-1")) for module in READERS.values())
    assert "darshan" not in READERS and BINARY_READERS["darshan"] is reader and reader.FORMAT in FORMATS
    csv = (ROOT / "topologies" / "examples" / "lecture-results.csv").read_text(encoding="utf-8")
    assert not reader.looks_like(csv)


def test_parse_refuses_bytes_that_are_no_darshan_log():
    with pytest.raises(ToolOutputError, match=r"^x.bin: not a Darshan log \(expected its header"):
        reader.parse(b"\x7fELF" + bytes(100), source="x.bin")


# What a log's runs leave out, said in the text as in the JSON

@pytest.mark.skipif(DAOS is None, reason="the real logs of ../shared/darshan-logs are not here")
def test_a_daos_jobs_unmodelled_modules_are_named_and_its_few_stdio_bytes_not_judged_as_the_job():
    with darshan.DarshanReport(str(DAOS), read_all=False) as report:  # the oracle: PyDarshan's own records
        moved = {}
        for module in ("DFS", "DAOS"):
            report.mod_read_all_records(module, dtype="pandas")
            counters = report.records[module][0]["counters"]
            moved[module] = [int(counters[f"{module}_BYTES_{op}"].clip(lower=0).sum()) for op in ("READ", "WRITTEN")]
    said = ", ".join(f"{m} ({format_quantity(Q_(r, 'B'), Metric.SIZE)} read, {format_quantity(Q_(w, 'B'), Metric.SIZE)} "
                     "written)" for m, (r, w) in moved.items())
    done = iobound("check", str(LUSTRE), str(DAOS), "--json")
    [judged] = json.loads(done.stdout)["runs"]
    tags = judged["run"]["tags"]
    assert done.returncode == 0 and tags["unmodelled"].startswith(f"{said}: DAOS's own interfaces")
    assert judged["run"]["label"] == "STDIO write" and judged["ceiling"] is None and judged["findings"] == []
    assert judged["no_ceiling"] == tags["no_ceiling"] and "through DAOS, which iobound does not model" in tags["no_ceiling"]
    text = iobound("check", str(LUSTRE), str(DAOS)).stdout
    assert f"{DAOS}: not judged: {said}: DAOS's own interfaces" in text and tags["no_ceiling"] in text
    assert "FAR-BELOW" not in text and "reaches only" not in text and "jobs judged over" not in text


@pytest.mark.skipif(not PARTIAL.exists(), reason="the real logs of ../shared/darshan-logs are not here")
def test_a_partial_logs_lower_bounds_are_said_in_the_text_of_read_and_check():
    tag = dict(runs_of(PARTIAL)[0].tags)["partial"]
    assert tag == "STDIO: the runtime ran out of memory for records; counts are lower bounds"
    for argv in (("read", str(PARTIAL)), ("check", str(LUSTRE), str(PARTIAL))):
        text = iobound(*argv).stdout
        assert f"what the jobs' logs leave out:\n  {PARTIAL}: partial records: {tag}\n" in text


def test_a_log_is_read_under_a_memory_limit_set_before_iobound_ran():
    """``ulimit -v`` on a login node or in a job: the reader keeps the lower limit (a process cannot raise its hard
    limit), and reads the log, instead of calling every log corrupt."""
    import resource

    def lower():
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    done = subprocess.run([sys.executable, "-m", "assess", "check", str(LUSTRE), str(HDF5)], capture_output=True,
                          text=True, timeout=300, preexec_fn=lower, cwd=ROOT)
    assert done.returncode in (0, 1) and "runs checked" in done.stdout, done.stdout + done.stderr
    assert "cannot read the log" not in done.stdout + done.stderr
