"""probes.readers.fio: real fio JSON outputs (2.17 to 3.26) read to the byte, and anything else refused clearly."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.readers import fio
from probes.core.errors import ToolOutputError
from probes.core.units import Metric
from probes.core.workload import Access, Operation
from tests.garbage import read_or_refuse, refusal

READ, WRITE = Operation.READ, Operation.WRITE
RAND, SEQ = Access.RANDOM, Access.SEQUENTIAL

# What each real output says, read from the file by hand:
# (label, bandwidth in B/s, transfer size in B, queue depth, ppn, access, direct).
# Older fio (2.17, 3.1) writes no bw_bytes, only "bw" in whole KiB/s: those expect the exact io_bytes
# over the runtime (io_bytes in bytes in 3.x, where io_kbytes stands beside it; in KiB in 2.x).
CORPUS_RUNS = {
    # fio-3.14-6-g97134. jobs[0] is named "random-read" (line 8), yet its job options (lines 13-23)
    # say rw=randwrite, bs=4k, iodepth=4, numjobs=16, group_reporting=1, direct=1: the file name's
    # "j4_qd16" has queue depth and job count swapped. write.bw_bytes 205594119 (line 92).
    "fioplot_fio-3.14_samsung-pm883-sata300_randwrite_j4_qd16.json": (
        "fio-3.14-6-g97134", [("random-read write", WRITE, 205594119, 4096, 4, 16, RAND, True)]),
    # fio-3.1: no bw_bytes; read.bw 10 KiB/s (line 32); randread, 4k, iodepth 1, numjobs 1 (lines 14-22).
    "fioplot_fio-3.1_floppy-1.44MB_randread_j1_qd1.json": (
        "fio-3.1", [("iotest read", READ, 1474560 / 135.476, 4096, 1, 1, RAND, True)]),  # bw 10 KiB/s
    # fio-3.1: read.bw 244147 KiB/s (line 33); iodepth 1 and numjobs 32 (lines 17, 22), grouped.
    "fioplot_fio-3.1_intel-d3-s4610-sata_randread_j1_qd32.json": (
        "fio-3.1", [("random-read read", READ, 15000924160 / 60.002, 4096, 1, 32, RAND, True)]),
    # fio-3.1: read.bw 574816 KiB/s (line 33); iodepth 16, numjobs 64 (lines 17, 22).
    "fioplot_fio-3.1_p420i-3xmx200-raid0_randread_j16_qd64.json": (
        "fio-3.1", [("random-read read", READ, 35324375040 / 60.013, 4096, 16, 64, RAND, True)]),
    # fio-3.1: read.bw 288 KiB/s (line 33), one job at queue depth 1.
    "fioplot_fio-3.1_samsung-f1-7200rpm-hdd_randread_j1_qd1.json": (
        "fio-3.1", [("random-read read", READ, 17711104 / 60.012, 4096, 1, 1, RAND, True)]),
    # fio-3.6-31-g4386: read.bw_bytes 87037905 (line 33); iodepth 16, numjobs 16 (lines 17, 22).
    "fioplot_fio-3.6_ceph-rbd-hdd_randread_j16_qd16.json": (
        "fio-3.6-31-g4386", [("random-read read", READ, 87037905, 4096, 16, 16, RAND, True)]),
    # fio-2.17: global options direct=1, group_reporting=1 (lines 12, 17); each job randread or
    # randwrite, bs=16k, iodepth=1, numjobs=2 (lines 27-32, 249-254); bw 129386 and 39312 KiB/s.
    "pkb_fio-2.17_hist_libaio.json": ("fio-2.17", [
        ("rand_16k_read_100%-io-depth-1-num-jobs-2 read", READ, 1294256 * 1024 / 10.003, 16384, 1, 2, RAND, True),
        ("rand_16k_write_100%-io-depth-1-num-jobs-2 write", WRITE, 393280 * 1024 / 10.004, 16384, 1, 2, RAND, True),
    ]),
    # fio-3.13 on Windows: two "fio: pid=..., err=42" lines before the JSON; global options rw=read,
    # bs=4k, iodepth=512 and no direct (lines 8-13): buffered; read.bw_bytes 202249835 (line 31).
    "vc_fio-3.13_windowsaio_error_lines_before_json.txt": (
        "fio-3.13", [("fiotest read", READ, 202249835, 4096, 512, 1, SEQ, False)]),
    # fio-3.26-19-ge7e53: rw=readwrite, bs=256k, iodepth=64, direct=1, no group_reporting (13-20);
    # read.bw_bytes 149343283 (line 31), write.bw_bytes 67267937 (line 93).
    "vc_fio-3.26-19_disk_fill_readwrite.json": ("fio-3.26-19-ge7e53", [
        ("disk_fill read", READ, 149343283, 262144, 64, 1, SEQ, True),
        ("disk_fill write", WRITE, 67267937, 262144, 64, 1, SEQ, True),
    ]),
    # fio-3.26: randwrite, bs=4k, iodepth=1, direct=1 (lines 18-21); write.bw_bytes 8876980 (line 69).
    "vc_fio-3.26_randwrite_4k_d1.json": (
        "fio-3.26", [("fio_randwrite_1GB_4k_d1_th1_direct write", WRITE, 8876980, 4096, 1, 1, RAND, True)]),
}
# fio-2.1.4 lists no job options at all: block size, queue depth and access are unknown.
NO_OPTIONS = "pkb_fio-2.1.4_5jobs.json"
FIO_JSON = sorted(CORPUS_RUNS) + [NO_OPTIONS]


def _text(corpus, name):
    return (corpus / "fio" / name).read_text(encoding="utf-8")


def _facts(run):
    w = run.workload
    return (run.label, w.operation, pytest.approx(run.samples[0], rel=1e-12), w.transfer_size.to("B").magnitude,
            w.queue_depth, w.ppn, w.access, w.direct)


@pytest.mark.parametrize("name", sorted(CORPUS_RUNS))
def test_real_fio_outputs_are_read_to_the_byte(corpus, name):
    text = _text(corpus, name)
    version, expected = CORPUS_RUNS[name]
    runs = fio.parse(text, source=name)
    assert fio.looks_like(text)
    assert [_facts(run) for run in runs] == expected
    for run in runs:
        assert (run.metric, run.unit, run.workload.nodes, len(run.samples)) == (Metric.BANDWIDTH, "B/s", 1, 1)
        assert (run.origin.path, run.origin.line, run.origin.tool, run.origin.tool_version) == (
            name, None, "fio", version)


def test_every_fio_json_of_the_corpus_is_covered(corpus):
    assert {p.name for p in (corpus / "fio").glob("*.json")} <= set(FIO_JSON)


def test_a_failed_job_keeps_its_runs_tagged_with_the_error(corpus):
    name = "vc_fio-3.13_windowsaio_error_lines_before_json.txt"
    [run] = fio.parse(_text(corpus, name), source=name)
    assert run.tags == (("fio_error", "42"),)  # "error" : 42, line 22


def test_fio_2_1_4_lists_no_options_so_its_workload_is_refused(corpus):
    with pytest.raises(ToolOutputError, match=r"^pkb_fio-2.1.4_5jobs.json: jobs\[0\].job options: .*fio-2.1.4"):
        fio.parse(_text(corpus, NO_OPTIONS), source=NO_OPTIONS)


@pytest.mark.parametrize("name", FIO_JSON)
def test_truncated_outputs_raise_tool_output_errors(corpus, name):
    text = _text(corpus, name).rstrip()
    for cut in [1, 2, 50, len(text) - 2, len(text) - 1] + [len(text) * k // 9 for k in range(1, 9)]:
        with pytest.raises(ToolOutputError, match=f"^{re.escape(name)}: line [0-9]+"):
            fio.parse(text[:cut], source=name)


def test_syntax_errors_name_the_line_and_column():
    with pytest.raises(ToolOutputError) as err:
        fio.parse('fio: err=5\n{"fio version": "fio-3.36",\n  "jobs": [}', source="run.json")
    assert str(err.value).startswith("run.json: line 3, column 12: expected valid JSON, found a syntax error")


# Synthetic outputs, one second long (bandwidth = bytes), for what the corpus does not show.
def _job(name="job", options=None, read=0, write=0, **fields):
    job = {"jobname": name, "error": 0, "read": {"io_bytes": read, "bw_bytes": read},
           "write": {"io_bytes": write, "bw_bytes": write}}
    if options is not None:
        job["job options"] = options
    return job | fields


def _fio(*jobs, key="jobs", **top):
    return json.dumps({"fio version": "fio-3.36", **top, key: list(jobs)}, indent=2)


def _read_one(options, read=1 << 20, write=0, **top):
    return fio.parse(_fio(_job(options=options, read=read, write=write), **top), source="x.json")


@pytest.mark.parametrize("bs, kb_base, read, write", [
    (None, None, 4096, 4096),  # fio's default block size
    ("4k", None, 4096, 4096), ("4K", None, 4096, 4096), ("4kb", None, 4096, 4096),
    ("1m", None, 1 << 20, 1 << 20), ("1g", None, 1 << 30, 1 << 30), ("512", None, 512, 512),
    ("512b", None, 512, 512), ("4k", "1000", 4000, 4000),
    ("4KiB", None, 4000, 4000),  # kb_base=1024 (default) makes "KiB" the power of ten
    ("4KiB", "1000", 4096, 4096),
    ("4k,64k", None, 4096, 65536), (",64k", None, 4096, 65536), ("4k,", None, 4096, 4096),
    ("4k,64k,8k", None, 4096, 65536),
])
def test_block_sizes_follow_fio_and_kb_base(bs, kb_base, read, write):
    options = {"rw": "rw"} | ({"bs": bs} if bs else {}) | ({"kb_base": kb_base} if kb_base else {})
    runs = _read_one(options, write=1 << 20)
    assert [r.workload.transfer_size.to("B").magnitude for r in runs] == [read, write]


@pytest.mark.parametrize("options, where", [
    ({"bs": "4ki"}, "jobs[0].job options.bs"), ({"bs": "0"}, "jobs[0].job options.bs"),
    ({"bs": "4 k"}, "jobs[0].job options.bs"), ({"bs": "10%"}, "jobs[0].job options.bs"),
    ({"bsrange": "4k-64k"}, "jobs[0].job options.bsrange"),
    ({"bssplit": "4k/50:64k/50"}, "jobs[0].job options.bssplit"),
    ({"kb_base": "512"}, "jobs[0].job options.kb_base"), ({"rw": "sideways"}, "jobs[0].job options.rw"),
    ({"iodepth": "0"}, "jobs[0].job options.iodepth"), ({"iodepth": "deep"}, "jobs[0].job options.iodepth"),
    ({"direct": "yes"}, "jobs[0].job options.direct"), ({"bs": 4096}, "jobs[0].job options.bs"),
])
def test_options_that_leave_the_workload_unknown_are_refused(options, where):
    with pytest.raises(ToolOutputError, match=f"^x.json: {re.escape(where)}: expected"):
        _read_one(options)


def test_workload_comes_from_job_options_over_global_options():
    shared = {"rw": "randwrite", "bs": "8k", "iodepth": "32", "numjobs": "4", "buffered": "0"}
    [run] = _read_one({"rw": "randread", "group_reporting": ""}, **{"global options": shared})
    w = run.workload
    assert (w.operation, w.access, w.transfer_size.to("B").magnitude, w.queue_depth, w.ppn, w.direct) == (
        READ, RAND, 8192, 32, 4, True)


@pytest.mark.parametrize("options, access, ppn, direct", [
    # eight clones in one entry, group_reporting not listed: a command line's --group_reporting summed them
    ({"rw": "read:8"}, SEQ, 1, False), ({"rw": "randrw", "numjobs": "8"}, RAND, 8, False),
    ({"numjobs": "8", "group_reporting": "1"}, SEQ, 8, False),
    ({"numjobs": "8", "group_reporting": "0"}, SEQ, 1, False),
    ({"direct": "1"}, SEQ, 1, True), ({"direct": "0", "buffered": "0"}, SEQ, 1, False),
])
def test_access_processes_and_direct(options, access, ppn, direct):
    [run] = _read_one(options)
    assert (run.workload.access, run.workload.ppn, run.workload.direct) == (access, ppn, direct)


def test_client_server_runs_name_the_host_and_leave_out_the_sum():
    shared = [{"hostname": "a", "port": 8765, "bs": "1m"}, {"hostname": "b", "port": 8765, "bs": "64k"}]
    text = _fio(_job(options={"rw": "write"}, write=100, hostname="a", port=8765),
                _job(options={"rw": "write"}, write=200, hostname="b", port=8765),
                _job("All clients", write=300, hostname="b", port=8765),
                key="client_stats", **{"global options": shared})
    runs = fio.parse(text, source="c.json")
    assert [(r.label, r.samples, r.workload.transfer_size.to("B").magnitude) for r in runs] == [
        ("job write (a)", (100.0,), 1 << 20), ("job write (b)", (200.0,), 65536)]


def test_repeated_job_names_get_numbered_labels():
    # numjobs=3 without group_reporting: fio reports each clone under the same name.
    runs = fio.parse(_fio(*[_job(options={"numjobs": "3"}, read=10)] * 3), source="x.json")
    assert [r.label for r in runs] == ["job read #1", "job read #2", "job read #3"]


def test_old_fio_bandwidth_is_in_kib_per_second():
    job = _job(options={"rw": "read"})
    job["read"] = {"io_bytes": 3, "bw": 3}
    [run] = fio.parse(_fio(job), source="x.json")
    assert run.samples == (3072.0,)


@pytest.mark.parametrize("text, where, found", [
    pytest.param(_fio(), "jobs", "found no jobs", id="empty jobs"),
    pytest.param(json.dumps({"fio version": "fio-3.36"}), "jobs", "found no jobs", id="no jobs"),
    pytest.param(_fio(_job(options={"rw": "read"})), "jobs", "expected a job that read or wrote data", id="no data"),
    pytest.param(_fio(_job(options={"rw": "read"}, read=5), _job(options={}, read=5)), "jobs[1].job options",
                 "found none", id="no options"),
    pytest.param(_fio(_job(options={"rw": "read"}, mixed={"io_bytes": 5})).replace('"read": {', '"gone": {'),
                 "jobs[0].mixed", "found 'mixed'", id="unified_rw_reporting"),
    pytest.param(_fio(_job(options={"rw": "read"}, read=5)).replace('"write"', '"wrote"'), "jobs[0].write",
                 "it is missing", id="missing field"),
    pytest.param(_fio(_job(options={"rw": "read"}, read=5)).replace('"bw_bytes": 5', '"bw_bytes": "5"'),
                 "jobs[0].read.bw_bytes", "found the string '5'", id="string number"),
    pytest.param(_fio(_job(options={"rw": "read"}, read=-5)), "jobs[0].read.io_bytes", "found the number -5",
                 id="negative"),
    pytest.param(_fio(_job(options={"rw": "read"}, read=5)) + '\n{"fio version": "fio-3.36"}', "line 21",
                 "a second one", id="status-interval"),
    pytest.param(json.dumps({"start": {}, "end": {}}), "fio version", "it is missing", id="iperf3"),
    pytest.param("random-read: (g=0): rw=randread, bs=4K\n", "line 1", "'random-read: (g=0)", id="text output"),
])
def test_errors_name_the_source_and_the_place(text, where, found):
    message = refusal(fio.parse, text, source="bad.json", where=where)
    assert found in message, message


# Fuzzing: nothing but ToolOutputError may come out, whatever the text.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
# Plausible fio documents: option values fio could have written, counters it could have counted.
OPTIONS = st.fixed_dictionaries({"rw": st.sampled_from(["read", "randwrite", "write:4", "randrw"])}, optional={
    "bs": st.sampled_from(["4k", "4KiB", "4k,64k", ",64k", "1m", "512"]), "iodepth": st.sampled_from(["1", "16"]),
    "numjobs": st.sampled_from(["1", "4"]), "group_reporting": st.sampled_from(["", "0", "1"]),
    "direct": st.sampled_from(["0", "1"]), "buffered": st.sampled_from(["0", "1"]),
    "kb_base": st.sampled_from(["1000", "1024"]),
})
COUNTER = st.integers(0, 10**12)
DIRECTION = st.fixed_dictionaries({"io_bytes": COUNTER, "bw": COUNTER}, optional={"bw_bytes": COUNTER})
JOB = st.fixed_dictionaries(
    {"jobname": st.sampled_from(["job", "All clients", "{x}"]), "read": DIRECTION, "write": DIRECTION,
     "job options": OPTIONS, "hostname": st.just("a")},
    optional={"error": COUNTER, "port": st.just(1), "mixed": DIRECTION},
)
SERVER_OPTIONS = st.builds(lambda options, port: options | {"hostname": "a", "port": port},
                           OPTIONS, st.sampled_from([1, 2]))
DOCUMENTS = st.fixed_dictionaries(
    {"fio version": st.just("fio-3.36"), "jobs": st.lists(JOB, min_size=1, max_size=3)},
    optional={"client_stats": st.lists(JOB, max_size=3),
              "global options": OPTIONS | st.lists(SERVER_OPTIONS, max_size=2)},
)


def _nodes(node, path=()):
    """Every place in a JSON document, as the keys leading to it."""
    yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _nodes(child, path + (key,))


@st.composite
def fio_shaped(draw):
    """A plausible fio document, half the time with one place in it replaced by any JSON value."""
    document = draw(DOCUMENTS)
    if draw(st.booleans()):
        *parents, last = draw(st.sampled_from(list(_nodes(document))[1:]))
        node = document
        for key in parents:
            node = node[key]
        node[last] = draw(JSON_VALUES)
    return document


@settings(max_examples=100, deadline=None)
@given(JSON_VALUES, st.sampled_from(["", "fio: pid=1, err=5\n"]))
def test_any_json_is_read_or_refused(value, prefix):
    read_or_refuse("fio", prefix + json.dumps(value, indent=1))


@settings(max_examples=80, deadline=None)
@given(fio_shaped())
def test_any_fio_shaped_json_is_read_or_refused(document):
    read_or_refuse("fio", json.dumps(document, indent=2))


def test_durations_and_data_set_are_read(corpus):
    # fio-3.26: read.runtime 60,001 ms; size=... per job; floppy: size not given.
    floppy = fio.parse(_text(corpus, "fioplot_fio-3.1_floppy-1.44MB_randread_j1_qd1.json"), source="f.json")[0]
    assert floppy.durations == (135.476,)
    pkb = fio.parse(_text(corpus, "pkb_fio-2.17_hist_libaio.json"), source="p.json")[0]
    assert pkb.durations == (10.003,)


def test_the_data_set_is_the_size_of_the_job_files(corpus):
    document = json.loads(_text(corpus, "vc_fio-3.26-19_disk_fill_readwrite.json"))
    options = document["jobs"][0]["job options"]
    options |= {"size": "1g", "numjobs": "4", "group_reporting": "1"}
    shared = options.pop("filename")  # the disk it filled
    assert fio.parse(json.dumps(document), source="d.json")[0].workload.data_set.m_as("GiB") == 4  # a file per job
    options["filename"] = shared
    assert fio.parse(json.dumps(document), source="d.json")[0].workload.data_set.m_as("GiB") == 1  # one file shared
    options["size"] = "100%"
    assert fio.parse(json.dumps(document), source="d.json")[0].workload.data_set is None  # of a device not described


# ---------------------------------------------------------------------------------------------
# Issue 19: one figure written three times (bw, bw_bytes, io_bytes / runtime) must agree

MADE = Path(__file__).parent / "data" / "readers" / "fio-3.33_json_seqwrite.json"  # see its README


def test_a_real_output_agrees_with_itself():
    [run] = fio.parse(MADE.read_text(encoding="utf-8"), source="m.json")
    assert (run.label, run.samples) == ("seqwrite write", (326563815.0,))
    assert "inconsistent" not in dict(run.tags)


@pytest.mark.parametrize("key, factor, message", [
    ("bw_bytes", 1.23, "io_bytes / runtime 311.4 MiB/s vs bw_bytes 383.1 MiB/s (326,563,815 and 401,673,492 B/s)"),
    ("bw", 1.23, "bw_bytes 311.4 MiB/s vs bw 383.1 MiB/s (326,563,815 and 401,672,192 B/s)"),
    ("runtime", 1.23, "io_bytes / runtime 253.5 MiB/s vs bw_bytes 311.4 MiB/s (265,777,679 and 326,563,815 B/s)"),
])
def test_figures_that_disagree_are_tagged_with_both(key, factor, message):
    document = json.loads(MADE.read_text(encoding="utf-8"))
    write = document["jobs"][0]["write"]
    write[key] = int(write[key] * factor)
    [run] = fio.parse(json.dumps(document), source="e.json")
    assert dict(run.tags)["inconsistent"] == message


def test_fio_2_kib_counts_agree_within_their_truncation():
    """fio 2.x writes io_bytes in KiB, truncated: 361984 KiB in 5314 ms is bw 68118 KiB/s (pkb's fio 2.1.4)."""
    from probes.readers.fio import _disagreement
    stats = {"io_bytes": 361984, "bw": 68118, "runtime": 5314}
    assert _disagreement(stats) is None
    assert "vs bw" in _disagreement(dict(stats, bw=83785))


def test_no_corpus_output_disagrees_with_itself(corpus):
    for name in sorted(CORPUS_RUNS):
        for run in fio.parse(_text(corpus, name), source=name):
            assert "inconsistent" not in dict(run.tags), (name, dict(run.tags)["inconsistent"])


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt-get install fio)")
@pytest.mark.parametrize("grouped, entries, ppn", [(True, 1, 2), (False, 2, 1)])
def test_clones_that_a_command_line_group_reporting_summed_are_the_jobs_processes(tmp_path, grouped, entries, ppn):
    """fio's JSON lists no --group_reporting given on its command line: two clones summed into one entry are two
    processes; two entries of one process each without it."""
    argv = ["fio", "--name=two", f"--directory={tmp_path}", "--size=1m", "--rw=write", "--bs=64k", "--numjobs=2",
            "--output-format=json", *(["--group_reporting"] if grouped else [])]
    text = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout
    assert "group_reporting" not in text
    runs = fio.parse(text, source="fio")
    assert len(runs) == entries and {run.workload.ppn for run in runs} == {ppn}
