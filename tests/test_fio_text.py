"""probes.readers.fio_text: fio's normal text output (3.7 to 3.41) read as printed, like fio's JSON, and anything else refused clearly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.readers import fio, fio_text
from probes.core.errors import ToolOutputError
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation
from tests.garbage import mangled, read_or_refuse, refusal

READ, WRITE = Operation.READ, Operation.WRITE
RAND, SEQ = Access.RANDOM, Access.SEQUENTIAL

# What each real text output says, read from the file by hand: the version line, then per run
# (label, operation, bandwidth, unit, line of the read/write line, transfer size in B, ppn (jobs=N),
# queue depth (iodepth=N), access, amount moved, seconds).
CORPUS_RUNS = {
    # fio-3.7 (line 5); four stonewalled groups of one job each, descriptions on lines 1-4
    # (iodepth=1 everywhere, 64k printed as 64.0KiB); BW lines 13, 34, 57, 77.
    "kangeek_fio-3.7_cephfs-8hdd_4groups.txt": ("fio-3.7", [
        ("4k_randwrite write", WRITE, 1548.0, "KiB/s", 13, 4096, 1, 1, RAND, Q_(45.4, "MiB"), 30.003),
        ("4k_randread read", READ, 504.0, "KiB/s", 34, 4096, 1, 1, RAND, Q_(14.8, "MiB"), 30.015),
        ("64k_write write", WRITE, 21.8, "MiB/s", 57, 65536, 1, 1, SEQ, Q_(654, "MiB"), 30.002),
        ("64k_read read", READ, 49.7, "MiB/s", 77, 65536, 1, 1, SEQ, Q_(1492, "MiB"), 30.015),
    ]),
    # fio-3.7 on the NVMe SSD: 4k_randread runs at iodepth=64 (line 2); lines 13, 35, 57, 79.
    "kangeek_fio-3.7_intel-p3600-nvme_4groups.txt": ("fio-3.7", [
        ("4k_randwrite write", WRITE, 179.0, "MiB/s", 13, 4096, 1, 1, RAND, Q_(5120, "MiB"), 28.584),
        ("4k_randread read", READ, 949.0, "MiB/s", 35, 4096, 1, 64, RAND, Q_(5120, "MiB"), 5.393),
        ("64k_write write", WRITE, 1128.0, "MiB/s", 57, 65536, 1, 1, SEQ, Q_(5120, "MiB"), 4.541),
        ("64k_read read", READ, 1633.0, "MiB/s", 79, 65536, 1, 1, SEQ, Q_(5120, "MiB"), 3.135),
    ]),
    # fio-3.7 on the SAS HDD: lines 13, 35, 56, 78.
    "kangeek_fio-3.7_sas-7200rpm-hdd-h730_4groups.txt": ("fio-3.7", [
        ("4k_randwrite write", WRITE, 4409.0, "KiB/s", 13, 4096, 1, 1, RAND, Q_(129, "MiB"), 30.001),
        ("4k_randread read", READ, 2294.0, "KiB/s", 35, 4096, 1, 64, RAND, Q_(67.6, "MiB"), 30.19),
        ("64k_write write", WRITE, 171.0, "MiB/s", 56, 65536, 1, 1, SEQ, Q_(5120, "MiB"), 29.906),
        ("64k_read read", READ, 174.0, "MiB/s", 78, 65536, 1, 1, SEQ, Q_(5120, "MiB"), 29.399),
    ]),
    # fio-3.16: 8 processes ("..." on line 2) summed by group_reporting, "jobs=8" (line 14).
    "m1mac_fio-3.16_mbp16-parallels-vm_randread_8jobs.txt": ("fio-3.16", [
        ("random-read-4KB-8Thread read", READ, 34.2, "MiB/s", 15, 4096, 8, 1, RAND, Q_(342, "MiB"), 10.001),
    ]),
    # fio-3.16: a job named "sequencial-read" that writes (rw=write, bs 20.0MiB, line 1); line 6
    # ends in "; 0 zone resets".
    "m1mac_fio-3.16_ryzen2700-desktop_seqwrite.txt": ("fio-3.16", [
        ("sequencial-read write", WRITE, 1723.0, "MiB/s", 6, 20 << 20, 1, 1, SEQ, Q_(16.8, "GiB"), 10.006),
    ]),
    # fio-3.19 on macOS (no Disk stats): line 7.
    "m1mac_fio-3.19_macbookair-m1_seqread_20MiB.txt": ("fio-3.19", [
        ("sequencial-read read", READ, 2829.0, "MiB/s", 7, 20 << 20, 1, 1, SEQ, Q_(27.6, "GiB"), 10.004),
    ]),
    # fio-3.41 inside a k8s pod log (wrapper lines and the job file first, lines 1-19): randrw
    # at iodepth=32 (line 21), two jobs grouped (jobs=2, line 26); read line 27, write line 39.
    "rafmoshe_fio-3.41_k8s_pod_randrw_rate_iops.txt": ("fio-3.41", [
        ("test-example-phase1 read", READ, 2800.0, "KiB/s", 27, 4096, 2, 32, RAND, Q_(820, "MiB"), 300.001),
        ("test-example-phase1 write", WRITE, 1200.0, "KiB/s", 39, 4096, 2, 32, RAND, Q_(352, "MiB"), 300.001),
    ]),
}
# fio files that are not a text report: what the error says they are.
NOT_RESULTS = {
    "m1mac_fio_macos_error_max_jobs.txt": ("line 2", "found only fio's error messages, the first 'error: maximum "
                                           "number of jobs (8) reached.': the run failed"),
    "vc_fio_verify_error_lines.txt": ("line 1", "found only fio's error messages, the first 'sha256: verify failed"),
    "vc_fio-3.13_windowsaio_error_lines_before_json.txt": ("line 1", "found its JSON output"),
    "fioplot_fio-3.6_ceph-rbd_bw.1.log": ("line 1", "found a fio log"),
    "kangeek_fio_jobfile_final.fio": ("line 1", "found a fio job file (section [global])"),
    "pkb_fio-2.17_hist.fio": ("line 2", "found a fio job file (section [global])"),
    "pkb_fio_jobfile_template.fio": ("line 15", "found a fio job file (section [global])"),
    "vc_fio_jobfile_oltp-c-operations.fio": ("line 5", "found a fio job file (section [global])"),
    "fio-examples_example_latency_steadystate.fio": ("line 10", "found a fio job file (section [global])"),
    "fio-examples_fio-rand-RW.fio": ("line 3", "found a fio job file (section [global])"),
    "fio-examples_fio-rand-read.fio": ("line 3", "found a fio job file (section [global])"),
    "fio-examples_fio-seq-write.fio": ("line 3", "found a fio job file (section [global])"),
}
# fio's error output alone is claimed (so it is refused with what it says); the JSON is not.
CLAIMED = set(CORPUS_RUNS) | {"m1mac_fio_macos_error_max_jobs.txt", "vc_fio_verify_error_lines.txt"}


def _text(corpus, name):
    return (corpus / "fio" / name).read_text(encoding="utf-8", errors="replace")


def _facts(run):
    w = run.workload
    return (run.label, w.operation, run.samples[0], run.unit, run.origin.line, w.transfer_size.to("B").magnitude,
            w.ppn, w.queue_depth, w.access, w.data_set, run.durations[0])


@pytest.mark.parametrize("name", sorted(CORPUS_RUNS))
def test_real_text_outputs_are_read_as_printed(corpus, name):
    text = _text(corpus, name)
    version, expected = CORPUS_RUNS[name]
    assert fio_text.looks_like(text)
    runs = fio_text.parse(text, source=name)
    assert [_facts(run) for run in runs] == expected
    for run in runs:
        assert (run.metric, len(run.samples), len(run.durations), run.tags) == (Metric.BANDWIDTH, 1, 1, ())
        assert (run.origin.path, run.origin.tool, run.origin.tool_version) == (name, "fio", version)
        assert (run.workload.nodes, run.workload.direct, run.workload.shared_file) == (1, None, None)


def test_every_fio_file_of_the_corpus_is_covered(corpus):
    names = {p.name for p in (corpus / "fio").iterdir() if p.is_file()}
    json_files = {n for n in names if fio.looks_like(_text(corpus, n))}
    assert names == set(CORPUS_RUNS) | set(NOT_RESULTS) | json_files
    assert {n for n in names if fio_text.looks_like(_text(corpus, n))} == CLAIMED


def test_no_corpus_file_is_claimed_by_both_fio_readers(corpus):
    files = [p for p in sorted(corpus.rglob("*")) if p.is_file() and p.parent != corpus]
    both = [p.name for p in files if fio.looks_like(t := p.read_text(encoding="utf-8", errors="replace"))
            and fio_text.looks_like(t)]
    assert both == []
    # The JSON with fio's error lines before it stays with the JSON reader.
    text = _text(corpus, "vc_fio-3.13_windowsaio_error_lines_before_json.txt")
    assert text.startswith("fio: pid=") and fio.looks_like(text) and not fio_text.looks_like(text)


@pytest.mark.parametrize("name", sorted(NOT_RESULTS))
def test_fio_files_that_are_not_text_reports_say_what_they_are(corpus, name):
    where, found = NOT_RESULTS[name]
    with pytest.raises(ToolOutputError) as err:
        fio_text.parse(_text(corpus, name), source=name)
    assert str(err.value).startswith(f"{name}: {where}: expected fio's"), str(err.value)
    assert found in str(err.value)


def test_fio_json_files_are_refused_as_json(corpus):
    for path in sorted((corpus / "fio").glob("*.json")):
        with pytest.raises(ToolOutputError, match="found its JSON output"):
            fio_text.parse(path.read_text(encoding="utf-8"), source=path.name)


_BW = re.compile(r"BW=([0-9.]+)(\w+/s) \(([0-9.]+)(\w+/s)\)")


def test_the_bandwidth_fio_prints_first_is_binary_and_the_other_decimal(corpus):
    # The evidence for the units: every BW line of the corpus has KiB/s or MiB/s first and the same
    # figure in kB/s or MB/s in parentheses (to fio's 4 significant digits), and the run takes the first.
    seen = 0
    for name in CORPUS_RUNS:
        for match in _BW.finditer(_text(corpus, name)):
            binary, decimal = Q_(float(match[1]), match[2]), Q_(float(match[3]), match[4])
            assert match[2] in ("KiB/s", "MiB/s") and match[4] in ("kB/s", "MB/s")
            assert decimal.to("B/s").magnitude == pytest.approx(binary.to("B/s").magnitude, rel=0.006)
            seen += 1
    assert seen == 17  # one per run


@pytest.mark.parametrize("name", sorted(CORPUS_RUNS) + ["m1mac_fio_macos_error_max_jobs.txt"])
def test_truncated_outputs_keep_what_is_complete_or_name_the_line(corpus, name):
    text = _text(corpus, name)
    whole = [_facts(run) for run in fio_text.parse(text, source=name)] if name in CORPUS_RUNS else []
    lines = text.splitlines(keepends=True)
    cuts = [len("".join(lines[:n])) for n in range(0, len(lines), 7)] + [1, 50, len(text) - 2]
    cuts += [len(text) * k // 13 for k in range(1, 13)]
    for cut in cuts:
        try:
            runs = fio_text.parse(text[:cut], source=name)
        except ToolOutputError as exc:
            assert re.match(f"^{re.escape(name)}: line [0-9]+: expected", str(exc)), str(exc)
        else:
            assert runs and all(_facts(run) in whole for run in runs)


def test_a_line_cut_in_the_middle_is_named(corpus):
    name = "kangeek_fio-3.7_intel-p3600-nvme_4groups.txt"
    text = _text(corpus, name)
    cut = text.index("(5120MiB/5393") + len("(5120MiB/53")
    with pytest.raises(ToolOutputError) as err:
        fio_text.parse(text[:cut], source=name)
    assert str(err.value).startswith(f"{name}: line 35: expected '<read|write>: IOPS=..., BW=... (...)"
                                     "(<io>/<N>msec)'; found 'read: IOPS=243k"), str(err.value)
    assert str(err.value).endswith("the line is cut or malformed")


def test_a_job_cut_after_its_header_is_a_truncation(corpus):
    name = "kangeek_fio-3.7_intel-p3600-nvme_4groups.txt"
    text = "\n".join(_text(corpus, name).splitlines()[:34])  # up to the header of group 1
    with pytest.raises(ToolOutputError, match=rf"^{name}: line 34: expected the read or write line of job "
                                              "'4k_randread' after its header; found none: the output is truncated"):
        fio_text.parse(text, source=name)


# Synthetic outputs in fio 3.x's format, for what the corpus does not show.
def _description(name="job", group=0, rw="read", bs="4096B-4096B", depth=1, host=""):
    return (f"{host}{name}: (g={group}): rw={rw}, bs=(R) {bs}, (W) {bs}, (T) {bs}, ioengine=libaio, "
            f"iodepth={depth}")


def _block(name="job", group=0, jobs=1, err=" 0", lines=("  read: IOPS=256, BW=1024KiB/s (1049kB/s)(10.0MiB/10000msec)",)):
    return "\n".join([f"{name}: (groupid={group}, jobs={jobs}): err={err}: pid=42: Mon Jan  1 00:00:00 2024", *lines])


def _output(descriptions=(_description(),), blocks=(_block(),), version="fio-3.36"):
    return "\n".join([*descriptions, version, "Starting 1 process", "", *blocks, "",
                      "Run status group 0 (all jobs):", "   READ: bw=1024KiB/s (1049kB/s), ..."]) + "\n"


def test_read_like_the_json_reader_reads_the_same_job():
    # One job, 4k randwrite at iodepth 16, numjobs=4 summed by group_reporting, in both formats.
    text = _output([_description(name="rw4k", rw="randwrite", depth=16), "..."],
                   [_block(name="rw4k", jobs=4, lines=["  write: IOPS=51.2k, BW=200MiB/s (210MB/s)(11.7GiB/60002msec)"])])
    document = {"fio version": "fio-3.36", "jobs": [{
        "jobname": "rw4k", "error": 0, "job options": {"rw": "randwrite", "bs": "4k", "iodepth": "16",
                                                      "numjobs": "4", "group_reporting": "1"},
        "read": {"io_bytes": 0, "bw_bytes": 0}, "write": {"io_bytes": 12557375488, "bw_bytes": 209281281}}]}
    [text_run] = fio_text.parse(text, source="t.txt")
    [json_run] = fio.parse(json.dumps(document), source="t.json")
    assert text_run.label == json_run.label == "rw4k write"
    assert text_run.value.to("B/s").magnitude == pytest.approx(json_run.samples[0], rel=0.005)
    tw, jw = text_run.workload, json_run.workload
    for name in ("operation", "transfer_size", "nodes", "ppn", "queue_depth", "access"):
        assert getattr(tw, name) == getattr(jw, name), name
    assert (tw.direct, jw.direct) == (None, False)  # the text does not show direct=; the JSON's options do


def test_kb_base_1000_prints_decimal_first_and_the_binary_one_is_taken():
    text = _output([_description(bs="4096B-4096B")],
                   [_block(lines=["  read: IOPS=45.9k, BW=188MB/s (179MiB/s)(5369MB/28584msec)"])])
    [run] = fio_text.parse(text, source="k.txt")
    assert (run.samples, run.unit, run.workload.data_set) == ((179.0,), "MiB/s", Q_(5369, "MB"))


def test_bandwidth_in_bits_keeps_fio_s_unit():
    text = _output(blocks=[_block(lines=["  read: IOPS=256, BW=8192Kibit/s (8389kbit/s)(10.0MiB/10000msec)"])])
    [run] = fio_text.parse(text, source="b.txt")
    assert (run.samples, run.unit, run.value.to("KiB/s").magnitude) == ((8192.0,), "Kibit/s", 1024.0)


def test_jobs_without_group_reporting_are_one_run_per_process():
    # numjobs=2 without group_reporting: fio prints one block per process, each jobs=1, same name.
    blocks = [_block(), _block(lines=["  read: IOPS=250, BW=1000KiB/s (1024kB/s)(9.77MiB/10000msec)"])]
    runs = fio_text.parse(_output([_description(), "..."], blocks), source="n.txt")
    assert [(r.label, r.samples, r.workload.ppn) for r in runs] == [
        ("job read (line 7)", (1024.0,), 1), ("job read (line 9)", (1000.0,), 1)]


def test_randrw_gives_a_read_and_a_write_with_their_block_sizes():
    description = ("mix: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 64.0KiB-64.0KiB, (T) 4096B-4096B, "
                   "ioengine=io_uring, iodepth=8")
    lines = ["  read: IOPS=100, BW=400KiB/s (410kB/s)(4000KiB/10000msec)",
             "  write: IOPS=100, BW=6400KiB/s (6554kB/s)(62.5MiB/10000msec); 0 zone resets",
             "  trim: IOPS=1, BW=4096B/s (4096B/s)(40.0KiB/10000msec)"]
    runs = fio_text.parse(_output([description], [_block(name="mix", lines=lines)]), source="m.txt")
    assert [(r.label, r.workload.transfer_size.to("B").magnitude, r.workload.access) for r in runs] == [
        ("mix read", 4096, RAND), ("mix write", 65536, RAND)]


def test_failed_jobs_keep_their_runs_tagged_or_are_left_out_if_they_moved_nothing():
    failed = _block(name="bad", err=" 5 (file:io_u.c:1787, func=io_u error, error=Input/output error)")
    empty = _block(name="dead", err="28 (file:filesetup.c:1, func=ftruncate, error=No space left on device)",
                   lines=())
    text = _output([_description(name="bad"), _description(name="dead")], [failed, empty])
    [run] = fio_text.parse(text, source="e.txt")
    assert (run.label, run.tags) == ("bad read", (("fio_error", "5"),))


def test_client_server_output_leaves_out_the_all_clients_sum():
    descriptions = ["hostname=a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1",
                    "hostname=b, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1",
                    _description(host="<a> "), _description(host="<b> ")]
    blocks = [_block(), _block(), "Run status group 0 (all jobs):", _block(name="All clients", jobs=2)]
    runs = fio_text.parse(_output(descriptions, blocks, version=""), source="c.txt")
    assert [(r.label, r.origin.tool_version) for r in runs] == [
        ("job read (line 9)", "fio-3.33"), ("job read (line 11)", "fio-3.33")]


def test_two_runs_one_after_another_are_both_read():
    first = _output([_description(rw="read")], version="fio-3.35")
    second = _output([_description(rw="randread", depth=32)], version="fio-3.36")
    runs = fio_text.parse(first + second, source="two.txt")
    assert [(r.label, r.workload.access, r.workload.queue_depth, r.origin.tool_version) for r in runs] == [
        ("job read (line 6)", SEQ, 1, "fio-3.35"), ("job read (line 15)", RAND, 32, "fio-3.36")]


@pytest.mark.parametrize("text, where, found", [
    pytest.param(_output(blocks=[_block(lines=["  mixed: IOPS=256, BW=1024KiB/s (1049kB/s)(10.0MiB/10000msec)"])]),
                 "line 6", "found 'mixed'", id="unified_rw_reporting"),
    pytest.param(_output([_description(bs="4096B-65.5KiB")]), "line 5", "found the range 4096 B to 67072 B",
                 id="bsrange"),
    pytest.param(_output([_description().replace(", (T) 4096B-4096B", ", bs_is_seq_rand")]), "line 1",
                 "found bs_is_seq_rand", id="bs_is_seq_rand"),
    pytest.param(_output([_description(name="a"), _description(name="b", rw="write")], [_block(name="a", jobs=2)]),
                 "line 6", "found job descriptions that differ (lines 1, 2)", id="group of different jobs"),
    pytest.param(_output([_description(name="other")]), "line 5", "expected the line 'job: (g=0): rw=...",
                 id="no description"),
    pytest.param(_output([_description(rw="sideways")]), "line 1", "found rw=sideways", id="unknown rw"),
    pytest.param(_output([_description(bs="0B-0B")]), "line 1", "found bs='(R) 0B-0B", id="zero block size"),
    pytest.param(_output([_description(depth=0)]), "line 1", "found iodepth=0", id="zero iodepth"),
    pytest.param(_output(blocks=[_block(jobs=0)]), "line 5", "found jobs=0", id="zero jobs"),
    pytest.param(_output(blocks=[_block(lines=["  read: IOPS=1, BW=1KB/s (1KB/s)(1000B/1000msec)"])]), "line 6",
                 "expected a bandwidth such as '179MiB/s'; found '1KB/s'", id="unknown unit"),
    pytest.param(_output(blocks=[_block(lines=["  read: IOPS=1, BW=1kB/s (1MB/s)(1000B/1000msec)"])]), "line 6",
                 "expected one bandwidth in binary units", id="two decimal units"),
    pytest.param(_output(blocks=[_block(lines=["  read: IOPS=1, BW=1KiB/s (1kB/s)(0B/1000msec)"])]), "line 6",
                 "expected the amount moved, such as '5120MiB'; found '0B'", id="nothing moved"),
    pytest.param(_output(blocks=[_block(lines=["  read: IOPS=1, BW=1KiB/s (1kB/s)(1KiB/0msec)"])]), "line 6",
                 "found 0msec", id="no time"),
    pytest.param(_output(blocks=[_block(lines=["  read : io=10240KB, bw=1024.0KB"])]),
                 "line 6", "expected fio 2's '<read|write> : io=<N>KB", id="fio 2 cut"),
    pytest.param("kb_base=1000\n" + _output(blocks=[_block(lines=["  read : io=10240KB, bw=1024KB/s, iops=256, "
                                                                    "runt= 10000msec"])]) + "kb_base=1024\n",
                 "line 1", "found kb_base=1000 at line 1 and kb_base=1024 at line", id="fio 2 two kb_base"),
    pytest.param(_output() + _block() + "\n\nRun status group 0 (all jobs):\n", "line 13",
                 "fio --status-interval prints one per interval", id="status-interval"),
    pytest.param("fio-3.36\nStarting 1 process\n", "line 1", "found none (the text starts with 'fio-3.36')",
                 id="nothing run"),
    pytest.param("", "line 1", "found none (the text starts with an empty text)", id="empty"),
])
def test_errors_name_the_line_and_what_was_found(text, where, found):
    message = refusal(fio_text.parse, text, source="bad.txt", where=where)
    assert found in message, message


def test_only_the_sum_of_all_clients_is_no_run():
    text = _output([_description()], [_block(name="All clients")])
    with pytest.raises(ToolOutputError, match="^a.txt: line 5: expected a job that read or wrote data; found none"):
        fio_text.parse(text, source="a.txt")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_cut_and_mangled_real_outputs_are_read_or_refused(corpus, data):
    name = data.draw(st.sampled_from(sorted(CORPUS_RUNS)))
    text = _text(corpus, name)
    changed, cut = mangled(data, text, ["", "\n", "0", "9" * 30, "-", "(", "KiB", "jobs=0", "msec)", "(g=1): ",
                                        "err=", ".5", "mixed"])
    read_or_refuse("fio-text", changed)
    read_or_refuse("fio-text", cut)


# ---------------------------------------------------------------------------------------------
# Issue 19: fio 2.x normal text, read with fio 2's default kb_base (1024) unless the text shows it

MADE = Path(__file__).parent / "data" / "readers"  # real fio 2.2.10 outputs, see its README


def test_fio_2_text_is_read_with_its_default_kb_base_and_says_so(tmp_path):
    from probes.readers import read_results
    write, read = read_results(MADE / "fio-2.2.10_two_jobs.txt")
    # "write: io=262144KB, bw=2415.1MB/s, iops=2415, runt=   106msec": 256 MiB in 0.106 s is 2415.1 MiB/s
    assert (write.label, write.samples, write.unit, write.durations) == ("seqwrite write", (2415.1,), "MiB/s", (0.106,))
    assert write.workload.data_set == Q_(262144, "KiB") and write.workload.transfer_size == Q_(1, "MiB")
    assert (write.origin.tool, write.origin.tool_version, write.origin.line) == ("fio", "fio-2.2.10", 9)
    # "read : io=262144KB, bw=60263KB/s, iops=15065, runt=  4350msec", bs=4K-4K/4K-4K/4K-4K, randread
    assert (read.label, read.samples, read.unit) == ("randread read", (60263.0,), "KiB/s")
    assert (read.workload.transfer_size, read.workload.access) == (Q_(4096, "B"), Access.RANDOM)
    assert dict(read.tags)["kb_base"] == ("1024 assumed: fio 2's default, which its output does not print; with "
                                          "kb_base=1000 its KB and MB would be 10^3 and 10^6 bytes")
    assert write.value.m_as("B/s") == pytest.approx(2**28 / 0.106, rel=1e-3)


def test_fio_2_text_beside_its_command_line_takes_the_kb_base_it_shows():
    """bash's trace of 'fio --kb_base=1000 ... --bs=1m --size=128m --numjobs=2': KB is 1000 B, and so is fio's 1m."""
    [run] = fio_text.parse((MADE / "fio-2.2.10_kb_base_1000.txt").read_text(encoding="utf-8"), source="k.txt")
    assert (run.samples, run.unit, run.workload.ppn) == ((448336.0,), "kB/s", 2)
    assert run.workload.transfer_size == Q_(1000000, "B") and run.workload.data_set == Q_(256000, "kB")
    assert run.value.m_as("B/s") == pytest.approx(2 * 128e6 / 0.571, rel=1e-4)
    assert dict(run.tags)["kb_base"] == "1000, as line 1 sets it: fio 2's KB and MB are 1000 and 1000^2 bytes"


def test_fio_2_sizes_with_seq_rand_block_sizes_are_refused():
    text = (MADE / "fio-2.2.10_two_jobs.txt").read_text(encoding="utf-8")
    text = text.replace("rw=write, bs=1M-1M/1M-1M/1M-1M", "rw=write, bs(seq/rand)=1M-1M/4K-4K")
    with pytest.raises(ToolOutputError, match=r"^s.txt: line 1: expected block sizes per direction; found bs\(seq/rand\)"):
        fio_text.parse(text, source="s.txt")
