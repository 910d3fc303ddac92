"""Tests of probes.readers.mdtest: every mdtest output of the corpus, synthetic variants, truncation and fuzzing."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.readers import mdtest
from probes.core.errors import ToolOutputError
from probes.core.units import Metric
from probes.core.workload import Access, Operation
from tests.conftest import read_every_run
from tests.garbage import mangled, read_or_refuse, refusal

MDTEST_FILES = {
    "akrr_mdtest-1.9.3_multirun_ub-ccr.txt": ("1.9.3", 36),
    "archer_mdtest-1.9.3_FAILED_1node.log": ("1.9.3", 0),
    "archer_mdtest-1.9.3_mp-mf-md_16nodes.log": ("1.9.3", 5),
    "cirrus_mdtest-1.9.3_mp-sf-sd_4nodes.log": ("1.9.3", 5),
    "cnes-hal_io500_mdtest-3.2.1_easy_write.txt": ("1.9.3", 2),
    "csd3_mdtest-1.9.3_mp-mf-sd_8nodes.log": ("1.9.3", 5),
    "io500-2017_sandia_mdtest-1.9.3_hard_write.txt": ("1.9.3", 2),
    "lrz-daos_io500_mdtest-4.1.0+dev_easy_write.txt": ("4.1.0+dev", 2),
    "lrz-daos_io500_mdtest-4.1.0+dev_hard_stat.txt": ("4.1.0+dev", 1),
    "narval_io500_mdtest-3.4.0+dev_easy_write.txt": ("3.4.0+dev", 2),
    "narval_io500_mdtest-3.4.0+dev_hard_read.txt": ("3.4.0+dev", 1),
    "narval_io500_mdtest-3.4.0+dev_hard_write.txt": ("3.4.0+dev", 2),
    "nexcs_mdtest-1.9.3_mp-mf-sd_16nodes.log": ("1.9.3", 5),
    "oci-beegfs_io500_mdtest-3.3.0+dev_easy_write.txt": ("3.3.0+dev", 2),
    "oci-beegfs_io500_mdtest-3.3.0+dev_hard_read.txt": ("3.3.0+dev", 1),
    "reading-tx2-ext4_io500_mdtest-3.4.0+dev_easy_stat.txt": ("3.4.0+dev", 1),
    "summit_io500_mdtest-1.9.3-ior3.2_hard_read.txt": ("1.9.3", 1),
}
FAILED = "archer_mdtest-1.9.3_FAILED_1node.log"
GOOD = sorted(set(MDTEST_FILES) - {FAILED})
ARCHER_LABELS = ["File creation", "File stat", "File removal", "Tree creation", "Tree removal"]


def _text(corpus, name):
    return (corpus / "mdtest" / name).read_text(encoding="utf-8")


def _runs(corpus, name):
    return {run.label: run for run in mdtest.parse(_text(corpus, name), source=name)}


def _check(run, n, mean, low, high, std=None):
    s = run.summary
    assert (s.n, s.mean, s.min, s.max) == (n, mean, low, high)
    assert s.std == pytest.approx(std) if std is not None else s.std is None


def test_the_corpus_holds_the_mdtest_files_this_test_knows(corpus):
    assert sorted(p.name for p in (corpus / "mdtest").iterdir()) == sorted(MDTEST_FILES)


@pytest.mark.parametrize("name", GOOD)
def test_every_corpus_file_is_read_as_operation_rates(corpus, name):
    version, count = MDTEST_FILES[name]
    for run in read_every_run(mdtest, _text(corpus, name), name, count):
        assert (run.metric, run.unit, run.samples) == (Metric.OPERATION_RATE, "op/s", ())
        assert (run.origin.tool, run.origin.tool_version, run.origin.path) == ("mdtest", version, name)
        assert run.reported is not None and run.value.is_compatible_with("op/s")
        assert run.workload.operation.is_metadata and run.workload.transfer_size is None
        assert dict(run.tags)["object"] in ("file", "directory", "tree")
        assert run.summary.mean > 0  # phases of 0.000 that were not asked for are left out


def test_a_failed_run_is_refused_with_mdtest_s_failure_line(corpus):
    with pytest.raises(ToolOutputError, match=r"^f.log: line 3: expected a SUMMARY table for this mdtest-1.9.3 run; "
                                              r"found none: the run failed \(line 9: .*FAILED in "
                                              "create_remove_directory_tree, Unable to create directory"):
        mdtest.parse(_text(corpus, FAILED), source="f.log")


def test_archer_skips_the_read_phase_it_did_not_ask_for(corpus):
    # -C -T -r and no -E: mdtest printed "File read : 0.000 ..." for the phase it skipped.
    runs = _runs(corpus, "archer_mdtest-1.9.3_mp-mf-md_16nodes.log")
    assert list(runs) == ARCHER_LABELS
    create = runs["File creation"]
    _check(create, 1, 14062.439, 14062.439, 14062.439)
    assert (create.workload.operation, create.workload.nodes, create.workload.ppn) == (Operation.CREATE, 16, 24)
    assert (create.origin.line, create.workload.shared_file, create.workload.shared_directory) == (13, False, False)
    tags = dict(create.tags)
    assert (tags["tasks"], tags["items"], tags["iterations"], tags["directory"]) == (
        "384", "1048320 files", "1", "unique per task (-u)")
    _check(runs["Tree removal"], 1, 6.385, 6.385, 6.385)
    assert dict(runs["Tree removal"].tags)["tree"].startswith("every task builds its own tree (-u)")


@pytest.mark.parametrize("name, stat, removal, nodes, ppn", [
    ("csd3_mdtest-1.9.3_mp-mf-sd_8nodes.log", 65726.348, 19097.160, 8, 32),
    ("nexcs_mdtest-1.9.3_mp-mf-sd_16nodes.log", 55894.705, 11052.376, 16, 32),
    ("cirrus_mdtest-1.9.3_mp-sf-sd_4nodes.log", 88224.553, 251992.302, 4, 36),
])
def test_hpc_uk_runs(corpus, name, stat, removal, nodes, ppn):
    runs = _runs(corpus, name)
    assert list(runs) == ARCHER_LABELS
    _check(runs["File stat"], 1, stat, stat, stat)
    _check(runs["File removal"], 1, removal, removal, removal)
    assert (runs["File stat"].workload.nodes, runs["File stat"].workload.ppn) == (nodes, ppn)
    tree = runs["Tree creation"].workload  # without -u task 0 alone builds the tree
    assert (tree.nodes, tree.ppn) == (1, 1)
    assert runs["File stat"].workload.shared_directory is True  # "-sd": one directory for all tasks


def test_a_shared_file_run_is_marked_shared(corpus):
    runs = _runs(corpus, "cirrus_mdtest-1.9.3_mp-sf-sd_4nodes.log")
    assert runs["File creation"].workload.shared_file is True
    assert dict(runs["File creation"].tags)["items"] == "1 file"


def test_akrr_multirun_gives_four_runs_of_nine_phases_with_iterations(corpus):
    runs = mdtest.parse(_text(corpus, "akrr_mdtest-1.9.3_multirun_ub-ccr.txt"), source="a.txt")
    assert [r.label for r in runs[:9]] == [
        f"{phase} (line {111 + i})" for i, phase in enumerate(
            ["Directory creation", "Directory stat", "Directory removal", "File creation", "File stat",
             "File read", "File removal", "Tree creation", "Tree removal"])]
    assert [r.origin.line for r in runs[::9]] == [111, 264, 985, 1746]
    create = runs[0]
    # mdtest 1.9.3 prints the population std (3.691 for 104.022 and 96.640); the sample std is sqrt(2) times it.
    _check(create, 2, 100.331, 96.640, 104.022, std=3.691 * math.sqrt(2))
    assert create.durations == (31.788, 29.532)  # task 0's verbose lines, one per iteration
    assert (create.workload.nodes, create.workload.ppn) == (8, 12)
    assert "population std converted to a sample std" in dict(create.tags)["statistics"]
    read = runs[5]
    assert (read.workload.operation, read.summary.mean, read.durations) == (Operation.OPEN, 277066.971, (0.011, 0.018))
    assert runs[7].durations == ()  # "Tree creation : 0.000 sec" is below the printed resolution
    assert runs[8].durations == (0.010, 0.006)
    assert [dict(r.tags)["directory"] for r in runs[::9]] == [
        "shared by all tasks", "unique per task (-u)", "shared by all tasks", "unique per task (-u)"]
    _check(runs[-1], 2, 58.162, 56.565, 59.759, std=1.597 * math.sqrt(2))


@pytest.mark.parametrize("name, label, mean, line, seconds", [
    ("lrz-daos_io500_mdtest-4.1.0+dev_easy_write.txt", "File creation", 46279405.319, 16, 315.294),
    ("lrz-daos_io500_mdtest-4.1.0+dev_easy_write.txt", "Tree creation", 1.755, 20, 0.570),
    ("lrz-daos_io500_mdtest-4.1.0+dev_hard_stat.txt", "File stat", 44756150.608, 15, 132.522),
    ("narval_io500_mdtest-3.4.0+dev_easy_write.txt", "File creation", 79439.712, 16, 315.707),
    ("narval_io500_mdtest-3.4.0+dev_hard_read.txt", "File read", 109990.988, 16, 140.009),
    ("narval_io500_mdtest-3.4.0+dev_hard_write.txt", "File creation", 48307.481, 16, 318.785),
    ("narval_io500_mdtest-3.4.0+dev_hard_write.txt", "Tree creation", 8.404, 20, 0.119),
])
def test_io500_runs_of_new_mdtest_carry_the_phase_time(corpus, name, label, mean, line, seconds):
    run = _runs(corpus, name)[label]
    _check(run, 1, mean, mean, mean)
    assert (run.origin.line, run.durations) == (line, (seconds,))
    assert dict(run.tags)["statistics"] == "max, min and mean over the one iteration"


def test_the_lrz_daos_run_has_192_nodes_of_112_tasks(corpus):
    runs = _runs(corpus, "lrz-daos_io500_mdtest-4.1.0+dev_easy_write.txt")
    create, tree = runs["File creation"], runs["Tree creation"]
    assert (create.workload.nodes, create.workload.ppn, tree.workload.nodes, tree.workload.ppn) == (192, 112, 192, 112)
    assert dict(create.tags)["api"] == "DFS"
    hard = _runs(corpus, "narval_io500_mdtest-3.4.0+dev_hard_write.txt")["File creation"]
    assert (dict(hard.tags)["write_bytes"], dict(hard.tags)["read_bytes"]) == ("3901 per file (-w)", "3901 per file (-e)")


def test_old_3x_statistics_over_every_task_are_not_read_as_repetitions(corpus):
    runs = _runs(corpus, "oci-beegfs_io500_mdtest-3.3.0+dev_easy_write.txt")
    create = runs["File creation"]
    _check(create, 1, 1913300.334, 1913298.908, 1913301.546)
    assert create.durations == (663.543,)  # the slowest task's time: the phase ends at its barrier
    tags = dict(create.tags)
    assert tags["statistics"].startswith("max, min and mean over every task's own estimate")
    assert tags["stonewall"].startswith("2951274.670 op/s in 280.857 s")
    assert (create.workload.nodes, create.workload.ppn) == (170, 12)
    _check(runs["Tree creation"], 1, 0.052, 0.052, 0.052)
    read = _runs(corpus, "oci-beegfs_io500_mdtest-3.3.0+dev_hard_read.txt")["File read"]
    _check(read, 1, 18243.632, 18243.475, 18243.668)
    stat = _runs(corpus, "reading-tx2-ext4_io500_mdtest-3.4.0+dev_easy_stat.txt")["File stat"]
    _check(stat, 1, 468706.967, 468706.861, 468707.071)
    assert (stat.workload.nodes, stat.workload.ppn, stat.durations) == (1, 16, (30.697,))


def test_io500_runs_of_old_mdtest(corpus):
    summit = _runs(corpus, "summit_io500_mdtest-1.9.3-ior3.2_hard_read.txt")["File read"]
    _check(summit, 1, 15354716.853, 15354716.853, 15354716.853)
    assert (summit.workload.operation, summit.workload.nodes, summit.workload.ppn) == (Operation.OPEN, 504, 2)
    cnes = _runs(corpus, "cnes-hal_io500_mdtest-3.2.1_easy_write.txt")
    assert list(cnes) == ["File creation", "Tree creation"]
    _check(cnes["File creation"], 1, 144070.033, 144070.033, 144070.033)
    sandia = _runs(corpus, "io500-2017_sandia_mdtest-1.9.3_hard_write.txt")
    assert list(sandia) == ["File creation", "Tree creation"]
    _check(sandia["Tree creation"], 1, 225.581, 225.581, 225.581)
    assert (sandia["File creation"].workload.nodes, sandia["File creation"].workload.ppn) == (1, 2)


# Per file, each run's (label, nodes, processes per node, who reads tags), read by hand: the launch line's
# "N total task(s) on M node(s)", the command line's phases and -N (stat takes the items of the task
# -N on, read 2 x -N, remove 3 x -N; block placement puts that task on another node when the shift is
# at least the processes per node).
STRIDES = {
    # -n 2730 -u -F -C -T -r -N 24 on 16 nodes x 24 (lines 3-4): stat and remove are a node on.
    "archer_mdtest-1.9.3_mp-mf-md_16nodes.log": [
        ("File creation", 16, 24, ()), ("File stat", 16, 24, (("read_by_other_node", "mdtest -N 24"),)),
        ("File removal", 16, 24, (("read_by_other_node", "mdtest -N 24"),)), ("Tree creation", 16, 24, ()),
        ("Tree removal", 16, 24, ())],
    "csd3_mdtest-1.9.3_mp-mf-sd_8nodes.log": [
        ("File creation", 8, 32, ()), ("File stat", 8, 32, (("read_by_other_node", "mdtest -N 32"),)),
        ("File removal", 8, 32, (("read_by_other_node", "mdtest -N 32"),)), ("Tree creation", 1, 1, ()),
        ("Tree removal", 1, 1, ())],
    # -S -F -C -T -r and no -N on 4 nodes x 36: each task stats the file it created.
    "cirrus_mdtest-1.9.3_mp-sf-sd_4nodes.log": [
        ("File creation", 4, 36, ()),
        ("File stat", 4, 36, (("reads_own_writes", "each task handles the items it created in this test (no -N stride)"),)),
        ("File removal", 4, 36, ()), ("Tree creation", 1, 1, ()), ("Tree removal", 1, 1, ())],
    # io500's -N 1 read (2 tasks on) on 640 nodes x 1: another node; on 170 nodes x 12 the same node.
    "narval_io500_mdtest-3.4.0+dev_hard_read.txt": [("File read", 640, 1, (("read_by_other_node", "mdtest -N 1"),))],
    "oci-beegfs_io500_mdtest-3.3.0+dev_hard_read.txt": [("File read", 170, 12, ())],
    "lrz-daos_io500_mdtest-4.1.0+dev_hard_stat.txt": [("File stat", 192, 112, ())],
    "reading-tx2-ext4_io500_mdtest-3.4.0+dev_easy_stat.txt": [("File stat", 1, 16, ())],
    "summit_io500_mdtest-1.9.3-ior3.2_hard_read.txt": [("File read", 504, 2, ())],
}


@pytest.mark.parametrize("name", sorted(STRIDES))
def test_the_stride_says_which_node_handles_the_items(corpus, name):
    runs = mdtest.parse(_text(corpus, name), source=name)
    assert [(r.label, r.workload.nodes, r.workload.ppn,
             tuple((k, v) for k, v in r.tags if k in ("read_by_other_node", "reads_own_writes"))) for r in runs] == STRIDES[name]


def test_a_stride_that_wraps_around_the_tasks_comes_back_to_the_same_node():
    # 2 nodes x 4: remove takes the items of the task 3 x 4 = 12 on, modulo 8 tasks: 4 on, another node;
    # a stride of 8 wraps around to the task itself.
    assert mdtest.stride_tags(4, Operation.REMOVE, 2, 4, created=True) == [("read_by_other_node", "mdtest -N 4")]
    assert mdtest.stride_tags(8, Operation.STAT, 2, 4, created=True) == [
        ("reads_own_writes", "-N 8 with 4 processes per node on 2 nodes leaves the partner task on the same node")]
    assert mdtest.stride_tags(8, Operation.REMOVE, 2, 4, created=True) == []


def test_a_malformed_stride_is_refused_with_the_line(corpus):
    text = _text(corpus, "csd3_mdtest-1.9.3_mp-mf-sd_8nodes.log").replace("-N 32", "-N many", 1)
    with pytest.raises(ToolOutputError, match=r"^c.log: line 4: expected a whole number after mdtest's -N \(the "
                                              r"stride between neighbour tasks\); found 'many'$"):
        mdtest.parse(text, source="c.log")


def test_other_tools_outputs_do_not_look_like_mdtest(corpus):
    others = [p for p in sorted(corpus.rglob("*")) if p.is_file() and p.parent.name != "mdtest"
              and p.parent != corpus]
    assert len(others) > 50
    for path in others:
        assert not mdtest.looks_like(path.read_text(encoding="utf-8", errors="replace")), path


# Synthetic outputs: one knob at a time.
PHASES = ["File creation", "File stat", "File read", "File removal", "Tree creation", "Tree removal"]
RATES = {"File creation": (300, 100, 200, 100), "File stat": (3000, 1000, 2000, 1000),
         "File read": (0, 0, 0, 0), "File removal": (30, 10, 20, 10), "Tree creation": (6, 2, 4, 2),
         "Tree removal": (9, 3, 6, 3)}
NEW_HEADING = "SUMMARY rate (in ops/sec): (of 3 iterations)"


def _table(heading, rates, colon=False, phases=PHASES):
    lines = [heading, "   Operation                     Max            Min           Mean        Std Dev",
             "   ---------                     ---            ---           ----        -------"]
    for phase in phases:
        lines.append(f"   {phase:<18}{' :' if colon else '  '}" + "".join(f"{v:15.3f}" for v in rates[phase]))
    return "\n".join(lines)


def _synthetic(command="./mdtest '-n' '10' '-F' '-C' '-T' '-r' '-i' '3'", launch="4 total task(s) on 2 node(s)",
               tasks="4 tasks, 40 files", tables=None, version="4.1.0"):
    tables = _table(NEW_HEADING, RATES) if tables is None else tables
    head = ["-- started at 01/01/2024 00:00:00 --", "", f"mdtest-{version} was launched with {launch}"]
    head += [f"Command line used: {command}"] if command is not None else []
    return "\n".join(head + ["Path: /x", "", tasks, "", tables, "-- finished at 01/01/2024 00:01:00 --", ""])


def test_new_statistics_are_over_iterations_with_a_sample_std():
    runs = {r.label: r for r in mdtest.parse(_synthetic(), source="s.txt")}
    assert list(runs) == ["File creation", "File stat", "File removal", "Tree creation", "Tree removal"]
    _check(runs["File creation"], 3, 200.0, 100.0, 300.0, std=100.0)
    assert runs["File creation"].origin.line == 12
    assert dict(runs["File creation"].tags)["statistics"] == "max, min, mean and sample std over the 3 iterations"
    assert (runs["File creation"].workload.nodes, runs["File creation"].workload.ppn) == (2, 2)


def test_old_3x_statistics_drop_the_std_of_file_rows_and_convert_tree_rows():
    runs = {r.label: r for r in mdtest.parse(_synthetic(tables=_table("SUMMARY rate: (of 3 iterations)", RATES,
                                                                      colon=True)), source="s.txt")}
    _check(runs["File creation"], 3, 200.0, 100.0, 300.0)
    _check(runs["Tree creation"], 3, 4.0, 2.0, 6.0, std=2 * math.sqrt(3 / 2))


def test_1_9_3_without_barriers_drops_the_std():
    text = _synthetic(command="mdtest -n 10 -F -B", tables=_table("SUMMARY: (of 3 iterations)", RATES, colon=True))
    runs = {r.label: r for r in mdtest.parse(text, source="s.txt")}
    _check(runs["File stat"], 3, 2000.0, 1000.0, 3000.0)
    assert "with -B" in dict(runs["File stat"].tags)["statistics"]
    _check(runs["Tree removal"], 3, 6.0, 3.0, 9.0, std=3 * math.sqrt(3 / 2))


@pytest.mark.parametrize("command, n, note", [
    ("mdtest -n 10 -F -i 4", 4, "4 (-i on the command line)"),
    ("mdtest -n 10 -F", 1, "unknown: neither '(of N iterations)' nor -i is printed; the summary counts as 1 "
                           "repetition, without a std"),
])
def test_iterations_come_from_the_heading_else_the_command_line(command, n, note):
    runs = mdtest.parse(_synthetic(command=command, tables=_table("SUMMARY rate:", RATES)), source="s.txt")
    assert (runs[0].summary.n, dict(runs[0].tags)["iterations"]) == (n, note)
    assert (runs[0].summary.std is None) == (n == 1)


@pytest.mark.parametrize("command, zero", [("./mdtest -n 10 -F -C -T -E -r", True), (None, True)])
def test_a_zero_row_of_a_phase_asked_for_is_kept_and_marked(command, zero):
    runs = {r.label: r for r in mdtest.parse(_synthetic(command=command), source="s.txt")}
    assert ("File read" in runs) == zero
    assert dict(runs["File read"].tags)["zero"].startswith("mdtest printed 0.000 in every column")
    assert "zero" not in dict(runs["File stat"].tags)


def test_phase_flags_select_the_rows_kept():
    rates = dict(RATES, **{"File stat": (0, 0, 0, 0), "File removal": (0, 0, 0, 0), "Tree removal": (0, 0, 0, 0)})
    runs = mdtest.parse(_synthetic(command="mdtest -FC -n 10", tables=_table(NEW_HEADING, rates)), source="s.txt")
    assert [r.label for r in runs] == ["File creation", "Tree creation"]


def test_random_stat_and_the_time_summary_of_several_iterations():
    times = {p: (3.0, 1.0, 2.0, 1.0) for p in PHASES}
    tables = _table(NEW_HEADING, RATES) + "\n\n" + _table("SUMMARY time (in ms/op): (of 3 iterations)", times)
    runs = {r.label: r for r in mdtest.parse(_synthetic(command="mdtest -n 10 -F -R -P", tables=tables),
                                             source="s.txt")}
    assert (runs["File stat"].workload.access, runs["File creation"].workload.access) == (Access.RANDOM, Access.SEQUENTIAL)
    assert runs["File stat"].durations == ()
    assert dict(runs["File stat"].tags)["phase_time"] == ("seconds per iteration (SUMMARY time, line 23): "
                                                         "max 3.000, min 1.000, mean 2.000, std 1.000")


def test_several_task_counts_in_one_run_are_labelled_with_their_tasks():
    block = "\n".join(["{n} tasks, {f} files", "", _table("SUMMARY rate: (of 3 iterations)", RATES), ""])
    tables = block.format(n=2, f=20) + "\n" + block.format(n=4, f=40)
    text = _synthetic(launch="4 total task(s) on 1 node(s)", tasks="", tables=tables)
    runs = mdtest.parse(text, source="s.txt")
    assert [r.label for r in runs][:2] == ["File creation (2 tasks)", "File stat (2 tasks)"]
    assert [(r.workload.nodes, r.workload.ppn) for r in runs[::5]] == [(1, 2), (1, 4)]


@pytest.mark.parametrize("change, where, found", [
    (("4 total task(s) on 2 node(s)", "5 total task(s) on 2 node(s)"), "line 7", "a test on 4 of 5 tasks"),
    (("4 total task(s) on 2 node(s)", "4 total task(s)"), "line 3", "'on N node(s)'"),
    (("   File stat                  3000.000", "   File stat                  3000.0"), "line 13", "'3000.0 "),
    (("   File stat                  3000.000", "   File stat         "), "line 13", "expected 4 figures"),
    (("(in ops/sec)", "(in kops/sec)"), "line 9", "'(in kops/sec)'"),
    (("Std Dev\n", "Std Dev  per Rank\n"), "line 10", "a layout iobound does not read"),
    (("SUMMARY rate (in ops/sec)", "SUMMARY time (in ms/op)"), "line 7", "only a SUMMARY time table (mdtest -Z)"),
    (("\n   Tree removal", "\nWARNING: x\n   Tree removal"), "line 17", "found 'WARNING: x': the table is cut"),
    (("\n   Tree removal", "\n   Tree removed"), "line 17", "found 'Tree removed "),
    (("\n   Tree removal", "\nmdtest-4.1.0 was launched with 4 total task(s) on 2 node(s)\n   Tree removal"),
     "line 9", "expected the SUMMARY table to end with its 'Tree removal' row; found 5 row(s) and then the end"),
    (("   File creation               300.000", "   File creation               150.000"), "line 12",
     "expected a consistent summary"),
    (("(of 3 iterations)", "(of 0 iterations)"), "line 9", "expected at least 1 iteration"),
    (("4 tasks, 40 files", "4 tasks, many files"), "line 9", "expected the line 'N tasks, M files' before"),
])
def test_malformed_output_is_refused_with_the_line(change, where, found):
    text = _synthetic()
    assert change[0] in text
    message = refusal(mdtest.parse, text.replace(*change, 1), source="s.txt", where=where)
    assert found in message, message


def test_a_text_without_the_launch_line_is_refused():
    with pytest.raises(ToolOutputError, match=r"^s.txt: line 1: expected mdtest's output .* found 'SUMMARY: \(of 1"):
        mdtest.parse(_table("SUMMARY: (of 1 iterations)", RATES), source="s.txt")


def _key(run):
    s = run.summary
    return run.origin.line, s.n, s.mean, s.std, s.min, s.max


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MDTEST_FILES))
def test_cut_outputs_give_a_subset_or_name_a_line(corpus, name):
    text = _text(corpus, name)
    lines = text.splitlines(keepends=True)
    full = [] if name == FAILED else mdtest.parse(text, source=name)
    whole = {_key(run): run.durations for run in full}
    cuts = sorted(set(range(0, len(lines), 7)) | {len(lines) - 1, len(lines) - 2})
    for cut in cuts:
        runs = read_or_refuse("mdtest", "".join(lines[:cut]))
        for run in runs or []:
            assert _key(run) in whole
            assert run.durations in (whole[_key(run)], ())


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.data())
def test_cut_and_mangled_real_outputs_are_read_or_refused(corpus, data):
    text = _text(corpus, data.draw(st.sampled_from(sorted(MDTEST_FILES))))
    changed, cut = mangled(data, text, ["", ":", "\n", "NA", " 0.000", "-nan", "\n   Tree removal",
                                        "SUMMARY: (of 0 iterations)\n", "'", "-B"], within=200, junk_size=12)
    read_or_refuse("mdtest", changed)
    read_or_refuse("mdtest", cut)


def test_a_table_whose_first_rows_are_cut_away_is_refused(corpus):
    """Found by the fuzz test in CI: 'Tree removal' right under the header closed a table holding no rate."""
    text = _text(corpus, "io500-2017_sandia_mdtest-1.9.3_hard_write.txt")
    with pytest.raises(ToolOutputError, match="line 13: expected a 'Tree creation' row before 'Tree removal'"):
        mdtest.parse(text[:515] + "\n   Tree removal" + text[715:], source="f")
    rows = text.splitlines(keepends=True)
    swapped = next(i for i, row in enumerate(rows) if row.lstrip().startswith("File stat"))
    rows[swapped - 1], rows[swapped] = rows[swapped], rows[swapped - 1]
    with pytest.raises(ToolOutputError, match="in mdtest's order; found 'File creation' after 'File stat'"):
        mdtest.parse("".join(rows), source="f")


def test_a_table_left_with_only_the_phases_not_asked_for_is_refused(corpus):
    """Found by the fuzz test in CI: cutting the one phase run (File read, -E) out of a table left no run at all."""
    text = _text(corpus, "narval_io500_mdtest-3.4.0+dev_hard_read.txt")
    with pytest.raises(ToolOutputError, match="line [0-9]+: expected a rate of a phase the command line asks for"):
        mdtest.parse(text[:1652] + text[1824:], source="f")
