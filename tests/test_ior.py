"""probes.readers.ior: real IOR outputs (text 3.0.1 to 4.1.0, JSON 3.3.0 and 3.4.0) read as printed, and anything else refused clearly."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.readers import ior
from probes.core.errors import ToolOutputError
from probes.readers import read_results
from probes.core.units import Metric
from probes.core.workload import Access, Operation
from tests.conftest import read_every_run
from tests.garbage import mangled, read_or_refuse, refusal

READ, WRITE = Operation.READ, Operation.WRITE
RAND, SEQ = Access.RANDOM, Access.SEQUENTIAL

# Every IOR output of the corpus: (version, number of runs) ...
IOR_OUTPUTS = {
    "akrr_ior-3.0.1_multiapi_gpfs_ub-ccr.txt": ("3.0.1", 20),
    "akrr_ior-3.2.0_multiapi_ub-ccr.txt": ("3.2.0", 20),
    "akrr_ior-3.3.0+dev_multiapi_stampede2-knl.txt": ("3.3.0+dev", 20),
    "cnes-hal_io500_ior-3.2.1_easy_write.txt": ("3.2.1", 1),
    "ddn-ai400_io500_ior-3.3alpha1_easy_read.txt": ("3.3alpha1", 1),
    "ddn-ai400_io500_ior-3.3alpha1_easy_write.txt": ("3.3alpha1", 1),
    "io500-2017_sandia_ior-3.1.0_easy_vv_tasklist.txt": ("3.1.0", 2),
    "io500-2017_sandia_ior-3.1.0_easy_write.txt": ("3.1.0", 1),
    "io500-2017_sandia_ior-3.1.0_hard_read.txt": ("3.1.0", 1),
    "knowext_ior-3.3.0_json_mpiio_fpp_b4m_t2m_s5_i5.json": ("3.3.0", 2),
    "knowext_ior-3.3.0_json_mpiio_fpp_b64m_t2m_s5_i5.json": ("3.3.0", 2),
    "knowext_ior-3.4.0+dev_json_laptop_defaults.json": ("3.4.0+dev", 2),
    "lrz-daos_io500_ior-4.1.0+dev_easy_read.txt": ("4.1.0+dev", 1),
    "lrz-daos_io500_ior-4.1.0+dev_hard_write.txt": ("4.1.0+dev", 1),
    "lrz-daos_io500_ior-4.1.0+dev_rnd4K_read.txt": ("4.1.0+dev", 1),
    "narval_io500_ior-3.4.0+dev_easy_read.txt": ("3.4.0+dev", 1),
    "narval_io500_ior-3.4.0+dev_easy_write.txt": ("3.4.0+dev", 1),
    "narval_io500_ior-3.4.0+dev_hard_write.txt": ("3.4.0+dev", 1),
    "oci-beegfs_io500_ior-3.3.0+dev_easy_write.txt": ("3.3.0+dev", 1),
    "oci-beegfs_io500_ior-3.3.0+dev_hard_read.txt": ("3.3.0+dev", 1),
    "reading-tx2-ext4_io500_ior-3.4.0+dev_easy_write.txt": ("3.4.0+dev", 1),
    "summit_io500_ior-3.2.0_easy_write.txt": ("3.2.0", 1),
    "summit_io500_ior-3.2.0_hard_write.txt": ("3.2.0", 1),
}
# ... and files beside them that are not IOR output.
NOT_IOR = ["narval_io500_ior-3.4.0+dev_easy_write_perrank.csv", "knowext_jube_configuration_ior-sweep.xml"]

# What some outputs say, read from the file by hand:
# (label, operation, samples in MiB/s, line, transfer size in B, nodes, ppn, access).
CORPUS_RUNS = {
    # IOR-3.2.0 (line 1); no "nodes" line: tasks 1008 and clients per node 2 (lines 22-23) give
    # 504 nodes; xfersize 16 MiB (line 25); one write row, bw 2210511 (line 38), after WARNING lines.
    "summit_io500_ior-3.2.0_easy_write.txt": [
        ("POSIX file-per-process write", WRITE, (2210511.0,), 38, 16 << 20, 504, 2, SEQ)],
    # IOR-3.1.0, old "Summary:" block: clients = 2 (2 per node) (line 16), xfersize 2 MiB
    # (line 18); write row 421.05 (line 23).
    "io500-2017_sandia_ior-3.1.0_easy_write.txt": [
        ("MPIIO file-per-process write", WRITE, (421.05,), 23, 2 << 20, 1, 2, SEQ)],
    # IOR-4.1.0+dev: ordering in a file: random (line 17), nodes 192, clients per node 112
    # (lines 20, 22), xfersize 4096 bytes (line 27); read row 193651 (line 42).
    "lrz-daos_io500_ior-4.1.0+dev_rnd4K_read.txt": [
        ("DFS file-per-process read", READ, (193651.0,), 42, 4096, 192, 112, RAND)],
    # xfersize 47008 bytes (line 24), nodes 640 x 1 (lines 19, 21); write row 5710 (line 39).
    "narval_io500_ior-3.4.0+dev_hard_write.txt": [
        ("POSIX single-shared-file write", WRITE, (5710.0,), 39, 47008, 640, 1, SEQ)],
    # IOR-3.1.0 shows xfersize rounded as 45.91 KiB; the summary's xsize column says 47008.
    "io500-2017_sandia_ior-3.1.0_hard_read.txt": [
        ("MPIIO single-shared-file read", READ, (308.18,), 23, 47008, 1, 2, SEQ)],
    # JSON, IOR 3.3.0: 5 repetitions, Results is a list per iteration of [write, read]; bwMiB of
    # the writes at lines 75, 103, 131, 159, 187 ... ; Options nodes 1, clients per node 16.
    "knowext_ior-3.3.0_json_mpiio_fpp_b4m_t2m_s5_i5.json": [
        ("mpiio file-per-process write", WRITE, (866.3597, 1549.1201, 2285.8630, 1794.7243, 1854.7488),
         None, 2 << 20, 1, 16, SEQ),
        ("mpiio file-per-process read", READ, (4918.9160, 4426.5968, 2878.6197, 4556.9110, 4744.6275),
         None, 2 << 20, 1, 16, SEQ)],
    # JSON, IOR 3.4.0+dev: Results is a flat list; transferSize 262144, 1 node x 1.
    "knowext_ior-3.4.0+dev_json_laptop_defaults.json": [
        ("POSIX single-shared-file write", WRITE, (2545.0874,), None, 262144, 1, 1, SEQ),
        ("POSIX single-shared-file read", READ, (9258.9492,), None, 262144, 1, 1, SEQ)],
    # IOR-3.3.0+dev: a blank line between the write (line 59) and the read row (line 62), then a
    # "remove" row with dashes (line 63) that is no sample; nodes 2 x 1 (lines 43, 45).
    "akrr_ior-3.3.0+dev_multiapi_stampede2-knl.txt": [
        ("POSIX single-shared-file write", WRITE, (426.77,), 59, 20 << 20, 2, 1, SEQ),
        ("POSIX single-shared-file read", READ, (332.55,), 62, 20 << 20, 2, 1, SEQ)],
}


def _text(corpus, name):
    return (corpus / "ior" / name).read_text(encoding="utf-8", errors="replace")


def _facts(run):
    w = run.workload
    return (run.label, w.operation, run.samples, run.origin.line, w.transfer_size.to("B").magnitude,
            w.nodes, w.ppn, w.access)


@pytest.mark.parametrize("name", sorted(IOR_OUTPUTS))
def test_every_ior_output_is_read(corpus, name):
    version, count = IOR_OUTPUTS[name]
    for run in read_every_run(ior, _text(corpus, name), name, count):
        assert (run.metric, run.unit, run.origin.tool, run.origin.tool_version) == (
            Metric.BANDWIDTH, "MiB/s", "ior", version)
        assert all(math.isfinite(s) and s > 0 for s in run.samples)
        assert run.workload.queue_depth == 1
        assert run.workload.direct is None  # no corpus output shows O_DIRECT
        assert run.samples and run.reported is None  # every file has per-iteration rows


@pytest.mark.parametrize("name", sorted(CORPUS_RUNS))
def test_corpus_values_read_by_hand(corpus, name):
    runs = ior.parse(_text(corpus, name), source=name)
    assert [_facts(r) for r in runs[:len(CORPUS_RUNS[name])]] == CORPUS_RUNS[name]


def test_concatenated_runs_keep_apart_and_get_line_labels(corpus):
    name = "akrr_ior-3.0.1_multiapi_gpfs_ub-ccr.txt"
    runs = ior.parse(_text(corpus, name), source=name)
    # 20 IOR runs of one iteration each: 10 writes, then 10 reads (lines 141 ... 2744).
    assert [r.workload.operation for r in runs] == [WRITE] * 10 + [READ] * 10
    assert runs[0].samples == (613.2,) and runs[0].origin.line == 141
    assert runs[2].label == "MPIIO single-shared-file write (line 413)"  # "-a MPIIO" and "-a MPIIO -c"
    # clients = 96 (12 per node): 8 nodes, derived and said so.
    assert (runs[0].workload.nodes, runs[0].workload.ppn) == (8, 12)
    assert dict(runs[0].tags)["nodes"] == "tasks / clients per node"


def test_nodes_are_printed_ones_even_when_tasks_disagree(corpus):
    # Options: nodes 52, tasks 1024, clients per node 20 (lines 75-77): 52 x 20 is 1040.
    name = "knowext_ior-3.3.0_json_mpiio_fpp_b64m_t2m_s5_i5.json"
    run = ior.parse(_text(corpus, name), source=name)[0]
    assert (run.workload.nodes, run.workload.ppn, dict(run.tags)["tasks"]) == (52, 20, "1024")


@pytest.mark.parametrize("name", NOT_IOR)
def test_files_that_are_not_ior_output_are_refused(corpus, name):
    text = _text(corpus, name)
    assert not ior.looks_like(text)
    with pytest.raises(ToolOutputError, match=f"^{re.escape(name)}: line 1: expected IOR's output"):
        ior.parse(text, source=name)


def test_read_results_chooses_the_ior_reader(corpus):
    runs = read_results(corpus / "ior" / "io500-2017_sandia_ior-3.1.0_easy_write.txt")
    assert [(r.label, r.samples) for r in runs] == [("MPIIO file-per-process write", (421.05,))]
    with pytest.raises(ToolOutputError, match="not a format iobound reads; expected a results CSV .* or fio JSON output"):
        read_results(corpus / "ior" / "knowext_jube_configuration_ior-sweep.xml")


@pytest.mark.parametrize("name", sorted(IOR_OUTPUTS))
def test_truncated_outputs_raise_tool_output_errors_or_keep_what_is_complete(corpus, name):
    text = _text(corpus, name)
    for cut in [1, 2, 50, len(text) - 2] + [len(text) * k // 9 for k in range(1, 9)]:
        try:
            runs = ior.parse(text[:cut], source=name)
        except ToolOutputError as exc:
            assert re.match(f"^{re.escape(name)}: (line [0-9]+|tests)", str(exc)), str(exc)
        else:
            assert runs and all(r.samples for r in runs)


def test_a_run_cut_before_its_results_names_what_is_missing(corpus):
    name = "narval_io500_ior-3.4.0+dev_easy_write.txt"
    text = "\n".join(_text(corpus, name).splitlines()[:30])  # up to the options block
    with pytest.raises(ToolOutputError) as err:
        ior.parse(text, source=name)
    assert str(err.value).startswith(f"{name}: line 1: expected result rows ('access bw(MiB/s) ...' table) "
                                     "or the 'Summary of all tests:' table")


TEXT = """\
IOR-3.3.0: MPI Coordinated Test of Parallel I/O
Began               : Mon Jan  1 00:00:00 2024
Command line        : ior -w -r -i 3 -t 1m -b 16m {flags}
Machine             : Linux n1
TestID              : 0
Options:
api                 : POSIX
access              : single-shared-file
ordering in a file  : {ordering}
nodes               : 2
tasks               : 8
clients per node    : 4
repetitions         : 3
xfersize            : 1 MiB

Results:

access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter
------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   --------   ----
{rows}
Summary of all tests:
Operation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev   Max(OPs)   Min(OPs)  Mean(OPs)     StdDev    Mean(s) Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt   blksiz    xsize aggs(MiB)   API RefNum
write         300.00     100.00     200.00      81.65     300.00     100.00     200.00      81.65    1.00000     0      8   4    3   0     0        1         0    0      1 16777216  1048576     128.0 POSIX      0
read          600.00     400.00     500.00      81.65     600.00     400.00     500.00      81.65    1.00000     0      8   4    3   0     0        1         0    0      1 16777216  1048576     128.0 POSIX      0
Finished            : Mon Jan  1 00:00:09 2024
"""
ROWS = "\n".join(f"{op:<9} {bw:<10} 1.0        0.1         16384      1024       0.1        1.0        0.1        1.0        {i}"
                 for i, (w, r) in enumerate([(100, 400), (200, 500), (300, 600)]) for op, bw in (("write", w), ("read", r)))


def _synthetic(rows=ROWS, ordering="sequential", flags=""):
    return TEXT.format(rows=rows, ordering=ordering, flags=flags)


def test_iterations_interleaved_become_one_run_per_operation():
    write, read = ior.parse(_synthetic(), source="s.txt")
    assert (write.samples, read.samples) == ((100.0, 200.0, 300.0), (400.0, 500.0, 600.0))
    assert (write.workload.describe(), write.origin.line) == ("write 1 MiB seq, 2 nodes x 4 ppn", 20)


@pytest.mark.parametrize("ordering, flags, access, direct", [
    ("random", "", RAND, None), ("sequential", "-B", SEQ, True), ("sequential", "--posix.odirect", SEQ, True),
    ("sequential", "-O useO_DIRECT=1", SEQ, True),
])
def test_random_offsets_and_direct_io_are_read_where_shown(ordering, flags, access, direct):
    [run, _] = ior.parse(_synthetic(ordering=ordering, flags=flags), source="s.txt")
    assert (run.workload.access, run.workload.direct) == (access, direct)


def test_without_rows_the_summary_is_the_reported_one():
    write, read = ior.parse(_synthetic(rows=""), source="s.txt")
    assert (write.samples, write.origin.line) == ((), 23)
    s = write.summary
    assert (s.n, s.mean, s.std, s.min, s.max) == (3, 200.0, 81.65, 100.0, 300.0)
    assert s.ci_high == pytest.approx(200 + 4.3026527299 * 81.65 / 3**0.5, rel=1e-6)
    assert write.to_dict()["summary"]["source"] == "reported by the tool"


def test_fewer_rows_than_repetitions_is_a_truncation():
    rows = "\n".join(ROWS.splitlines()[:3])
    with pytest.raises(ToolOutputError, match=r"^s.txt: line 22: expected 3 write rows \(repetitions : 3, line 13\); "
                                              "found 2: the output is truncated"):
        ior.parse(_synthetic(rows=rows), source="s.txt")


@pytest.mark.parametrize("change, where, found", [
    (("bw(MiB/s)", "bw(MB/s)"), "line 18", "found bw(MB/s)"),
    (("xfersize            : 1 MiB", "xfersize            : 1 furlong"), "line 14", "'1 furlong'"),
    (("clients per node    : 4\n", ""), "line 5", "'clients per node'"),
    (("write     100 ", "write     1e0x "), "line 20", "'1e0x'"),
    (("1.0        0", "1.0"), "line 20", "expected 11 columns"),
])
def test_malformed_text_is_refused_with_the_line(change, where, found):
    assert found in refusal(ior.parse, _synthetic().replace(*change, 1), source="s.txt", where=where)


def _json(corpus):
    return _text(corpus, "knowext_ior-3.3.0_json_mpiio_fpp_b4m_t2m_s5_i5.json")


@pytest.mark.parametrize("change, repair", [
    (('"totalTime": 0.3694\n', '"totalTime": 0.3694,\n'), "removed 1 trailing comma(s) (line 95)"),
    (('"bwMiB": 866.3597, \n', '"bwMiB": 866.3597 \n'), "inserted 1 missing comma(s) (line 87)"),
    (('      }\n, \n            {', '      }\n            {'), "inserted 1 missing comma(s) (line 96)"),
    (('"bwStdMIB": 466.7816', '"bwStdMIB": -nan'), "read 1 bare nan/inf value(s) as null (line 254)"),
])
def test_invalid_json_is_repaired_and_the_repair_recorded(corpus, change, repair):
    text = _json(corpus)
    assert change[0] in text
    runs = ior.parse(text.replace(*change, 1), source="r.json")
    assert runs[0].samples == (866.3597, 1549.1201, 2285.8630, 1794.7243, 1854.7488)
    assert dict(runs[0].tags)["json_repaired"] == repair


def test_valid_json_is_not_marked_repaired(corpus):
    assert all("json_repaired" not in dict(r.tags) for r in ior.parse(_json(corpus), source="r.json"))


def test_json_that_cannot_be_repaired_names_the_line(corpus):
    text = _json(corpus).replace('"access": "write"', '"access" "write"', 1)
    with pytest.raises(ToolOutputError, match=r"^r.json: line 86, column 18: expected valid JSON, found a syntax "
                                              "error .* that iobound cannot repair"):
        ior.parse(text, source="r.json")


def test_json_without_results_falls_back_to_the_summary(corpus):
    document = json.loads(_json(corpus))
    document["tests"][0]["Results"] = []
    write, read = ior.parse(json.dumps(document), source="r.json")
    assert (write.samples, read.samples) == ((), ())
    assert (write.summary.n, write.summary.mean, read.summary.mean) == (5, 1670.1632, 4305.1342)
    assert write.durations == () and write.value.m_as("MiB/s") == 1670.1632


def test_json_options_show_random_and_direct(corpus):
    document = json.loads(_json(corpus))
    document["tests"][0]["Parameters"] |= {"randomOffset": 1, "useO_DIRECT": 1}
    run = ior.parse(json.dumps(document), source="r.json")[0]
    assert (run.workload.access, run.workload.direct) == (RAND, True)


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["tests"][0].update(Results=[], summary=None) or d.update(summary=[]), "tests"),
    (lambda d: d["tests"][0]["Results"][0][0].update(bwMiB="fast"), "tests[0].Results[0][0].bwMiB"),
    (lambda d: d["tests"][0]["Results"][0][0].update(bwMiB=-1), "tests[0].Results[0][0].bwMiB"),
    (lambda d: d["tests"][0]["Parameters"].update(transferSize=0), "tests[0].Parameters.transferSize"),
    (lambda d: d["tests"][0]["Options"].pop("clients per node") and d["tests"][0]["Parameters"].pop("tasksPerNode"),
     "tests[0].Parameters.tasksPerNode"),
    (lambda d: d.pop("tests"), "tests"),
])
def test_json_errors_name_the_field(corpus, edit, where):
    document = json.loads(_json(corpus))
    edit(document)
    refusal(ior.parse, json.dumps(document), source="r.json", where=where)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_cut_and_mangled_real_outputs_are_read_or_refused(corpus, data):
    name = data.draw(st.sampled_from(sorted(IOR_OUTPUTS)))
    text = _text(corpus, name)
    changed, cut = mangled(data, text, ["", ",", "}", "\n", "-nan", "write     1", "\t= x"])
    read_or_refuse("ior", changed)
    read_or_refuse("ior", cut)


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=10))
def test_any_json_is_read_or_refused(value):
    read_or_refuse("ior", json.dumps({"Version": "3.3.0", "Began": "x", "tests": value}))
    read_or_refuse("ior", json.dumps({"Version": "3.3.0", "Began": "x", "tests": [{"Results": [value], "Parameters": value}]}))


def test_data_set_durations_and_file_sharing_are_read(corpus):
    akrr = ior.parse(_text(corpus, "akrr_ior-3.0.1_multiapi_gpfs_ub-ccr.txt"), source="a.txt")[0]
    assert (akrr.workload.data_set.m_as("GiB"), akrr.workload.shared_file, akrr.durations) == (18.75, True, (31.31,))
    # Stopped by stonewalling: the bytes IOR says it moved, not the planned 6054.69 TiB.
    narval = ior.parse(_text(corpus, "narval_io500_ior-3.4.0+dev_easy_write.txt"), source="n.txt")[0]
    assert (narval.workload.data_set.m_as("B"), narval.workload.shared_file) == (130681090867200, False)
    # Stopped by stonewalling, and IOR did not say how much it moved: unknown.
    summit = ior.parse(_text(corpus, "summit_io500_ior-3.2.0_hard_write.txt"), source="s.txt")[0]
    assert summit.workload.data_set is None
    write, read = ior.parse(_json(corpus), source="r.json")
    assert write.durations == (0.3694, 0.2066, 0.1400, 0.1783, 0.1725)
    assert write.workload.data_set.m_as("MiB") == 320


def test_reads_by_the_tasks_that_wrote_are_tagged(corpus):
    laptop = ior.parse(_text(corpus, "knowext_ior-3.4.0+dev_json_laptop_defaults.json"), source="l.json")
    assert [("reads_own_writes" in dict(r.tags)) for r in laptop] == [False, True]
    # "-C -e" on 1 node x 16: IOR shifts readers by -Q 1 x 16 tasks per node, 16 mod 16 tasks = 0, so
    # each task reads its own file back: -C does not keep the page cache out on one node.
    write, read = ior.parse(_json(corpus), source="r.json")
    assert dict(read.tags)["reads_own_writes"] == "-C -Q 1 on 1 node leaves each task reading what was written on its own node"
    assert "read_by_other_node" not in dict(read.tags) and dict(write.tags)["fsync"] == "IOR -e"
    # The same command on 52 nodes x 20: the reader sits a node on.
    write, read = ior.parse(_text(corpus, "knowext_ior-3.3.0_json_mpiio_fpp_b64m_t2m_s5_i5.json"), source="b.json")
    assert (dict(read.tags)["read_by_other_node"], "reads_own_writes" in dict(read.tags)) == ("IOR -C -Q 1", False)


# Per file, what each distinct run states: (operation, nodes, processes per node, who reads and fsync tags),
# read by hand from the options block ("ordering inter file", "task offset", nodes, clients per node)
# and, for fsync, the command line ("-e").
CONTEXT = {
    # -Z (line 19: "-vv -Z -b 200m ..."), "clients = 96 (12 per node)": 8 nodes; "random task offsets >= 1".
    "akrr_ior-3.0.1_multiapi_gpfs_ub-ccr.txt": {(WRITE, 8, 12, ()), (READ, 8, 12, (("read_by_other_node", "IOR -Z -Q 1"),))},
    "akrr_ior-3.2.0_multiapi_ub-ccr.txt": {(WRITE, 2, 8, ()), (READ, 2, 8, (("read_by_other_node", "IOR -Z -Q 1"),))},
    "akrr_ior-3.3.0+dev_multiapi_stampede2-knl.txt": {
        (WRITE, 2, 1, ()), (READ, 2, 1, (("read_by_other_node", "IOR -Z -Q 1"),))},
    "cnes-hal_io500_ior-3.2.1_easy_write.txt": {(WRITE, 96, 1, (("fsync", "IOR -e"),))},
    "ddn-ai400_io500_ior-3.3alpha1_easy_read.txt": {(READ, 10, 16, (("read_by_other_node", "IOR -C -Q 1"),))},
    "ddn-ai400_io500_ior-3.3alpha1_easy_write.txt": {(WRITE, 10, 16, (("fsync", "IOR -e"),))},
    "io500-2017_sandia_ior-3.1.0_easy_vv_tasklist.txt": {
        (WRITE, 10, 10, (("fsync", "IOR -e"),)), (READ, 10, 10, (("read_by_other_node", "IOR -C -Q 1"),))},
    # 1 node x 2 with -C -Q 1, and no write in this IOR run: nothing to say of who reads.
    "io500-2017_sandia_ior-3.1.0_hard_read.txt": {(READ, 1, 2, ())},
    "lrz-daos_io500_ior-4.1.0+dev_easy_read.txt": {(READ, 192, 112, (("read_by_other_node", "IOR -C -Q 1"),))},
    "lrz-daos_io500_ior-4.1.0+dev_hard_write.txt": {(WRITE, 192, 112, (("fsync", "IOR -e"),))},
    "lrz-daos_io500_ior-4.1.0+dev_rnd4K_read.txt": {(READ, 192, 112, (("read_by_other_node", "IOR -C -Q 1"),))},
    "narval_io500_ior-3.4.0+dev_easy_read.txt": {(READ, 640, 1, (("read_by_other_node", "IOR -C -Q 1"),))},
    "narval_io500_ior-3.4.0+dev_easy_write.txt": {(WRITE, 640, 1, (("fsync", "IOR -e"),))},
    "oci-beegfs_io500_ior-3.3.0+dev_easy_write.txt": {(WRITE, 170, 12, (("fsync", "IOR -e"),))},
    "oci-beegfs_io500_ior-3.3.0+dev_hard_read.txt": {(READ, 170, 12, (("read_by_other_node", "IOR -C -Q 1"),))},
    "reading-tx2-ext4_io500_ior-3.4.0+dev_easy_write.txt": {(WRITE, 1, 16, (("fsync", "IOR -e"),))},
    "summit_io500_ior-3.2.0_easy_write.txt": {(WRITE, 504, 2, (("fsync", "IOR -e"),))},
    "summit_io500_ior-3.2.0_hard_write.txt": {(WRITE, 504, 2, (("fsync", "IOR -e"),))},
}
CONTEXT_TAGS = ("read_by_other_node", "reads_own_writes", "fsync")


@pytest.mark.parametrize("name", sorted(CONTEXT))
def test_nodes_processes_per_node_and_who_reads_are_read_from_each_output(corpus, name):
    runs = ior.parse(_text(corpus, name), source=name)
    assert {(r.workload.operation, r.workload.nodes, r.workload.ppn,
             tuple((k, v) for k, v in r.tags if k in CONTEXT_TAGS)) for r in runs} == CONTEXT[name]


@pytest.mark.parametrize("command, readback", [
    ("-w -C -Q 1 -g -k -e -t 2m", ior.Readback("-C", 1, "-e")),
    ("-r -Ce -Q=2 -t=4096", ior.Readback("-C", 2, "-e")),  # grouped flags, values after '='
    ("-r -Z -Q3 -Y", ior.Readback("-Z", 3, "-Y")),
    ("-r -O reorderTasks=1,taskPerNodeOffset=2 -O fsync=1", ior.Readback("-C", 2, "-e")),
    ("-r -C=0 -O stoneWallingStatusFile=/a,stoneWallingWearOut=1", ior.Readback("", 1, "")),
    ("-a POSIX -o /d/f -b 4m --posix.odirect -N 16", ior.Readback("", 1, "")),  # -N is numTasks, not -Q
])
def test_the_command_line_says_who_reads_and_whether_writes_are_flushed(command, readback):
    assert ior.readback(command.split(), source="c", where="line 3") == readback


@pytest.mark.parametrize("readback, nodes, wrote, tags", [
    (ior.Readback("-C", 1), 2, True, [("read_by_other_node", "IOR -C -Q 1")]),
    (ior.Readback("-C", 1), None, False, [("read_by_other_node", "IOR -C -Q 1")]),  # nodes not stated: several
    # IOR shifts readers by -Q x the tasks per node, modulo the tasks: -Q 2 on 2 nodes comes back home.
    (ior.Readback("-C", 2), 2, True, [("reads_own_writes", "-C -Q 2 on 2 nodes leaves each task reading what "
                                                           "was written on its own node")]),
    (ior.Readback("-Z", 1), 1, False, []),
    (ior.Readback("", 1), 4, True, [("reads_own_writes", "each task reads what it wrote in this test (no -C task "
                                                         "reordering)")]),
])
def test_a_read_is_by_another_node_only_where_the_shift_leaves_the_node(readback, nodes, wrote, tags):
    assert readback.tags(READ, nodes, wrote) == tags
    assert readback.tags(WRITE, nodes, wrote) == []


def test_a_malformed_task_offset_is_refused_with_the_line(corpus):
    text = _text(corpus, "narval_io500_ior-3.4.0+dev_easy_read.txt").replace("-C -Q 1", "-C -Q one", 1)
    with pytest.raises(ToolOutputError, match=r"^n.txt: line 3: expected a whole number of nodes after ior's -Q; "
                                              r"found 'one'$"):
        ior.parse(text, source="n.txt")


def test_tasks_that_are_not_a_multiple_of_the_clients_per_node_are_read_and_tagged():
    """IOR 3.2 prints no 'nodes', and counts its clients per node on node 0: 10 tasks over nodes of 4 do not divide."""
    text = _synthetic().replace("nodes               : 2\n", "").replace("tasks               : 8", "tasks               : 10")
    write, read = ior.parse(text, source="s.txt")
    assert (write.samples, write.workload.nodes, write.workload.ppn) == ((100.0, 200.0, 300.0), None, 4)
    tags = dict(write.tags)
    assert (tags["tasks"], write.placement.processes) == ("10", 10)
    assert tags["nodes"] == ("not stated: 10 tasks are not a multiple of the 4 clients per node IOR counted on node 0, "
                             "so the tasks are spread unevenly and the node count is unknown")


def test_tasks_and_nodes_both_missing_are_still_refused():
    text = _synthetic().replace("nodes               : 2\n", "").replace("tasks               : 8\n", "")
    with pytest.raises(ToolOutputError, match=r"^s.txt: line 5: expected 'nodes' or 'tasks' in the test's options"):
        ior.parse(text, source="s.txt")


def test_rows_and_summary_that_disagree_are_tagged():
    summary = "write         300.00     100.00     200.00"
    text = _synthetic().replace(summary, "write         300.00     100.00     246.00")
    write, read = ior.parse(text, source="s.txt")
    assert dict(write.tags)["inconsistent"] == ("the write rows' mean is 200.00 MiB/s; the summary's Mean(MiB) at "
                                                "line 28 says 246.00 MiB/s")
    assert "inconsistent" not in dict(read.tags)
    assert not any("inconsistent" in dict(r.tags) for r in ior.parse(_synthetic(), source="s.txt"))


def test_rows_printed_without_decimals_agree_with_their_summary():
    """IOR prints a row's bandwidth with no decimal from 3600 MiB/s up (PPDouble): 64147 is the summary's 64146.84."""
    rows = "write     64147      1.0        0.1         16384      1024       0.1        1.0        0.1        1.0        0"
    text = _synthetic(rows=rows).replace("repetitions         : 3", "repetitions         : 1")
    text = text.replace("write         300.00     100.00     200.00      81.65",
                        "write       64146.84   64146.84   64146.84       0.00")
    write, _ = ior.parse(text, source="s.txt")
    assert write.samples == (64147.0,) and "inconsistent" not in dict(write.tags)


def test_json_results_and_summary_that_disagree_are_tagged(corpus):
    name = "knowext_ior-3.3.0_json_mpiio_fpp_b4m_t2m_s5_i5.json"
    document = json.loads(_text(corpus, name))
    document["summary"][0]["bwMeanMIB"] = 2054.3007
    write = ior.parse(json.dumps(document), source="j.json")[0]
    assert dict(write.tags)["inconsistent"] == ("the write Results' mean is 1,670.1632 MiB/s; summary[0].bwMeanMIB "
                                                "says 2,054.3007 MiB/s")


def test_no_corpus_output_disagrees_with_itself(corpus):
    for name in sorted(IOR_OUTPUTS):
        for run in ior.parse(_text(corpus, name), source=name):
            assert "inconsistent" not in dict(run.tags), (name, dict(run.tags)["inconsistent"])


def test_no_tasks_is_refused_naming_its_line(corpus):
    """A run of no processes has no placement: 0 tasks (a mangled file) is refused where it is written, not a crash."""
    path = corpus / "ior" / "ddn-ai400_io500_ior-3.3alpha1_easy_read.txt"
    if not path.is_file():
        pytest.skip(f"{path.name} not in the corpus")
    text = path.read_text().replace("tasks               : 160", "tasks               : 0")
    with pytest.raises(ToolOutputError, match=r"line \d+: expected at least 1 task; found 0"):
        ior.parse(text, source="x.txt")
