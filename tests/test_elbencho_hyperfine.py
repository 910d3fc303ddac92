"""The elbencho and hyperfine readers, checked against the real outputs of ../shared/corpus."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.readers import elbencho, hyperfine
from probes.core.errors import ToolOutputError
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation
from tests.garbage import mangled, read_or_refuse, refusal

LARGE = "elbencho_mtelbencho_large-files_write_8xnvme-raid0.txt"
LOSF = "elbencho_mtelbencho_losf_write_8xnvme-raid0.txt"
NEW = "1brc_hyperfine_export-json_2cmds.json"
OLD = "dandavison_hyperfine_export-json_old_no-exitcodes.json"
READERS = {"elbencho": elbencho, "hyperfine": hyperfine}


def _text(corpus, tool, name):
    return (corpus / tool / name).read_text(encoding="utf-8")


def _all(corpus, tool):
    return sorted(p.name for p in (corpus / tool).iterdir() if p.is_file())


def test_every_corpus_file_of_both_tools_is_read(corpus):
    # Guards the per-file tests below: a new corpus file must get its own checks.
    assert _all(corpus, "elbencho") == sorted([LARGE, LOSF])
    assert _all(corpus, "hyperfine") == sorted([NEW, OLD])
    for tool, reader in READERS.items():
        for name in _all(corpus, tool):
            runs = reader.parse(_text(corpus, tool, name), source=name)
            assert runs and len({r.label for r in runs}) == len(runs)
            assert all(r.origin.tool == tool and r.origin.tool_version is None for r in runs)


# ---------------------------------------------------------------------------------------------
# elbencho: corpus


LARGE_SETS = ["1024x1GiB", "512x2GiB", "256x4GiB", "128x8GiB", "64x16GiB", "32x32GiB", "16x64GiB", "8x128GiB",
              "4x256GiB", "2x512GiB", "1x1024GiB"]
LOSF_SETS = [f"1048576x{2 ** k}KiB" for k in range(10)]


def test_large_files_give_iops_and_throughput_per_write_phase(corpus):
    runs = elbencho.parse(_text(corpus, "elbencho", LARGE), source=LARGE)
    # DROPCACHE phases and RMFILES (elapsed time only, lines 13 and 22) give no runs.
    assert [r.label for r in runs] == [f"{s} WRITE {f}" for s in LARGE_SETS for f in ("IOPS", "throughput")]
    iops, throughput = runs[0], runs[1]
    # Lines 16-19: WRITE Elapsed ms 85656 99973, IOPS 660 655, Throughput MiB/s 10572 10488, Total MiB.
    assert (throughput.samples, throughput.unit, throughput.metric, throughput.origin.line) == (
        (10488.0,), "MiB/s", Metric.BANDWIDTH, 18)
    assert (iops.samples, iops.unit, iops.metric, iops.origin.line) == ((655.0,), "op/s", Metric.OPERATION_RATE, 17)
    assert throughput.durations == (99.973,) and throughput.summary.n == 1
    assert dict(throughput.tags)["first_done"] == "10572 MiB/s"
    assert dict(throughput.tags)["dataset"] == "/data/zettar/zx/src/sweep/1024x1GiB"
    work = throughput.workload
    assert (work.operation, work.transfer_size, work.ppn, work.nodes, work.queue_depth, work.access, work.direct) == (
        Operation.WRITE, Q_(16, "MiB"), 56, None, 1, Access.SEQUENTIAL, None)
    assert work.data_set == Q_(1048576, "MiB") == Q_(1, "TiB")
    assert iops.workload == work
    last = runs[-1]  # 1x1024GiB, lines 186-188
    assert (last.samples, last.durations, last.origin.line) == ((9443.0,), (111.032,), 188)
    half = runs[-3]  # 2x512GiB: Total MiB 524288 (line 172)
    assert (half.label, half.samples, half.workload.data_set) == ("2x512GiB WRITE throughput", (9649.0,),
                                                                  Q_(524288, "MiB"))


def test_small_files_give_dirs_files_and_throughput_rates(corpus):
    runs = elbencho.parse(_text(corpus, "elbencho", LOSF), source=LOSF)
    figures = ("MKDIRS dirs/s", "WRITE files/s", "WRITE throughput", "RMFILES files/s")
    assert [r.label for r in runs] == [f"{s} {f}" for s in LOSF_SETS for f in figures]
    mkdirs, files, throughput, rmfiles = runs[:4]
    # Lines 15-31 of the first data set, 1048576 files of 1 KiB.
    assert (mkdirs.samples, mkdirs.durations, mkdirs.origin.line) == ((18716.0,), (0.002,), 16)
    assert (mkdirs.workload.operation, mkdirs.workload.transfer_size, mkdirs.workload.data_set) == (
        Operation.CREATE, None, None)
    assert dict(mkdirs.tags)["entries_done"] == "56 dirs"
    assert (files.samples, files.unit, files.metric, files.origin.line) == ((53757.0,), "op/s",
                                                                             Metric.OPERATION_RATE, 22)
    assert (files.workload.operation, files.workload.transfer_size, files.workload.data_set) == (
        Operation.CREATE, None, Q_(1024, "MiB"))
    assert dict(files.tags)["counts"] == "files created, written and closed"
    assert dict(files.tags)["entries_done"] == "1048600 files"
    assert (throughput.samples, throughput.unit, throughput.durations) == ((52.0,), "MiB/s", (19.506,))
    # The 16m block is reduced to the 1 KiB file size by elbencho.
    assert throughput.workload.describe() == "write 1 KiB seq, all nodes x 56 ppn"
    assert (rmfiles.samples, rmfiles.durations, rmfiles.workload.operation) == ((77381.0,), (13.551,),
                                                                                Operation.REMOVE)
    largest = runs[-4:]  # 1048576x512KiB, lines 240-256
    assert [r.samples for r in largest] == [(22248.0,), (18430.0,), (9215.0,), (71193.0,)]
    assert largest[2].workload.transfer_size == Q_(512, "KiB")
    assert largest[2].workload.data_set == Q_(524300, "MiB")  # Total MiB, line 250


@pytest.mark.parametrize("name", [LARGE, LOSF])
def test_throughput_is_mebibytes_moved_over_elapsed_time(corpus, name):
    # The evidence for MiB = 2^20 B and for LAST DONE: Total MiB / elapsed = the throughput printed.
    runs = elbencho.parse(_text(corpus, "elbencho", name), source=name)
    bandwidth = [r for r in runs if r.metric is Metric.BANDWIDTH]
    assert len(bandwidth) in (10, 11)
    for run in bandwidth:
        computed = run.workload.data_set.m_as("MiB") / run.durations[0]
        assert computed == pytest.approx(run.samples[0], rel=0.02, abs=1), run.label
        assert Q_(run.samples[0], run.unit).m_as("B/s") == run.samples[0] * 2**20


def test_large_file_iops_are_sixteen_mebibyte_blocks(corpus):
    runs = elbencho.parse(_text(corpus, "elbencho", LARGE), source=LARGE)
    for iops, throughput in zip(runs[::2], runs[1::2]):
        assert iops.samples[0] * 16 == pytest.approx(throughput.samples[0], rel=0.01)


# ---------------------------------------------------------------------------------------------
# elbencho: other shapes of its output


RESFILE = """\
ISO DATE: 2024-01-01T00:00:00+0000
COMMAND LINE: "elbencho" "--hosts" "node[1-4]" "-t" "8" "-w" "-r" "-b" "4k" "-s" "1g" "--direct" "--rand" \
"--iodepth" "16" "/data/file[1-2]"

OPERATION   RESULT TYPE         FIRST DONE   LAST DONE
=========== ================    ==========   =========
WRITE       Elapsed time     :    2m3.241s    2m5.755s
            IOPS             :       33395       33352
            Throughput MiB/s :         130         130
            Total MiB        :       16000       16384
            IO latency       : [ min=1us avg=2us max=3us ]
---
READ        Elapsed time     :       950ms      1.020s
            IOPS             :      900000      850000
            Throughput MB/s  :        3686        3481
            Total MiB        :        3300        3320
WARNING: Fastest worker thread completed in less than 1 microsecond.
---
Phase: RMFILES: Skipping stats print due to unavailable worker results.
---
"""


def test_a_resfile_command_line_gives_the_workload():
    write_iops, write_bw, read_iops, read_bw = elbencho.parse(RESFILE, source="r.txt")
    work = write_bw.workload
    assert (work.nodes, work.ppn, work.queue_depth, work.access, work.direct, work.transfer_size) == (
        4, 8, 16, Access.RANDOM, True, Q_(4, "KiB"))
    assert write_bw.durations == (125.755,) and read_bw.durations == (1.02,)
    assert (read_bw.samples, read_bw.unit, read_bw.workload.operation) == ((3481.0,), "MB/s", Operation.READ)
    assert read_iops.samples == (850000.0,) and write_iops.label == "WRITE IOPS"
    assert dict(write_bw.tags)["threads"] == "per service host (elbencho -t with --hosts)"


@pytest.mark.parametrize("args, nodes, ppn, direct, transfer", [
    ('"elbencho" "-w" "/d/f"', None, 1, False, None),  # elbencho's defaults: 1 thread, 1M blocks
    ('"elbencho" "-w" "-s" "512k" "/d/f"', None, 1, False, Q_(512, "KiB")),
    ('"elbencho" "--hosts" "a,b:1612" "-t4" "--block=2m" "-s" "1g" "/d/f"', None, 4, False, Q_(2, "MiB")),
    ('"elbencho" "--hosts" "n[1-2,5],gpu1" "--threads=3" "-s" "1g" "/d/f"', 4, 3, False, Q_(1, "MiB")),
    ('"elbencho" "--hosts" "n[1-²]" "-s" "1g" "/d/f"', None, 1, False, Q_(1, "MiB")),  # not a range: unknown
])
def test_command_line_options_and_defaults(args, nodes, ppn, direct, transfer):
    text = RESFILE.replace(RESFILE.splitlines()[1] + "\n" + RESFILE.splitlines()[2], f"COMMAND LINE: {args}")
    run = elbencho.parse(text, source="r.txt")[1]
    work = run.workload
    assert (work.nodes, work.ppn, work.direct, work.transfer_size, work.access) == (
        nodes, ppn, direct, transfer, Access.SEQUENTIAL)


def test_a_config_file_leaves_the_threads_unknown():
    text = RESFILE.replace('"--hosts" "node[1-4]" "-t" "8"', '"-c" "my.conf"')
    with pytest.raises(ToolOutputError, match=r"^r.txt: line 6: expected the number of threads"):
        elbencho.parse(text, source="r.txt")


CONSOLE = """\
OPERATION RESULT TYPE        FIRST DONE  LAST DONE
========= ================   ==========  =========
{phases}"""
WRITE = """\
WRITE     Elapsed ms       :      85656      99973
          IOPS             :        660        655
          Throughput MiB/s :      10572      10488
---
"""


@pytest.mark.parametrize("text, where, found", [
    (CONSOLE.format(phases=WRITE), "line 3", "expected the number of threads"),
    ("threads : 8\n" + CONSOLE.format(phases="DROPCACHE Elapsed ms       :       3634       3943\n---\n"),
     "line 2", "expected a WRITE, READ, RMFILES, STAT, MKDIRS or RMDIRS phase with a rate"),
    ("threads : 8\n" + CONSOLE.format(phases=WRITE[:-4]), "line 4", "found the end of the text: the output is "
                                                                    "truncated"),
    ("threads : 8\n" + CONSOLE.format(phases=WRITE[:-4] + WRITE), "line 4", "found the next results at line 7"),
    ("threads : 8\n" + CONSOLE.format(phases=WRITE.replace("10572      10488", "10572")), "line 6",
     "expected FIRST DONE and LAST DONE values for 'Throughput MiB/s'"),
    ("threads : 8\n" + CONSOLE.format(phases=WRITE.replace("10488", "10,488")), "line 6", "'10,488'"),
    ("threads : 8\n" + CONSOLE.format(phases=WRITE.replace("99973", "1m2x")), "line 4", "elapsed time in ms"),
    ("threads : x8\n" + CONSOLE.format(phases=WRITE), "line 1", "expected a whole number"),
    ("threads : 0\n" + CONSOLE.format(phases=WRITE), "line 4", "expected the number of threads"),
    ("block_size : 16q\nthreads : 8\n" + CONSOLE.format(phases=WRITE), "line 1", "expected a size such as"),
    ("Total test time: 21m:22s\n", "line 1", "expected elbencho's results table"),
])
def test_malformed_or_incomplete_text_is_refused_with_the_line(text, where, found):
    assert found in refusal(elbencho.parse, text, source="e.txt", where=where)


def test_console_output_with_threads_but_no_sizes_has_no_transfer_size():
    [iops, bandwidth] = elbencho.parse("threads : 8\n" + CONSOLE.format(phases=WRITE), source="e.txt")
    assert (bandwidth.workload.ppn, bandwidth.workload.transfer_size, bandwidth.workload.data_set) == (8, None, None)
    assert (bandwidth.label, bandwidth.workload.direct, bandwidth.workload.nodes) == ("WRITE throughput", None, None)


def test_unknown_and_maintenance_phases_are_skipped():
    phases = ("RWMIX30   Elapsed ms       :        100        120\n          IOPS             :  5  5\n---\n"
              "SYNC      Elapsed ms       :          1          2\n---\n" + WRITE)
    runs = elbencho.parse("threads : 2\n" + CONSOLE.format(phases=phases), source="e.txt")
    assert [r.label for r in runs] == ["WRITE IOPS", "WRITE throughput"]


def test_phases_faster_than_the_clock_give_no_zero_rates():
    phase = "MKDIRS    Elapsed ms       :          0          0\n          Dirs/s           :  0  0\n---\n"
    runs = elbencho.parse("threads : 2\n" + CONSOLE.format(phases=phase + WRITE), source="e.txt")
    assert [r.label for r in runs] == ["WRITE IOPS", "WRITE throughput"]


def test_repeated_runs_get_line_labels():
    text = "threads : 2\n" + CONSOLE.format(phases=WRITE) + CONSOLE.format(phases=WRITE)
    assert [r.label for r in elbencho.parse(text, source="e.txt")] == [
        "WRITE IOPS (line 5)", "WRITE throughput (line 6)", "WRITE IOPS (line 11)", "WRITE throughput (line 12)"]


# ---------------------------------------------------------------------------------------------
# hyperfine: corpus


def test_new_schema_gives_every_run_time(corpus):
    first, second = hyperfine.parse(_text(corpus, "hyperfine", NEW), source=NEW)
    assert first.label == "cargo run --release --bin 1brc measurements_1000000000.txt"
    assert second.label == "cargo run --release --bin lucretiel_1brc measurements_100..."
    assert dict(second.tags)["command"] == "cargo run --release --bin lucretiel_1brc measurements_1000000000.txt"
    assert first.samples == (13.148435542520001, 11.81813333352, 9.877873458520002)
    assert second.samples == (12.04923320852, 12.36225804252, 10.25172425152)
    for run in (first, second):
        assert (run.metric, run.unit, run.workload, run.reported) == (Metric.LATENCY, "s", None, None)
        assert run.durations == run.samples and run.summary.n == 3
        assert run.origin.tool == "hyperfine" and run.origin.tool_version is None
    assert first.summary.mean == pytest.approx(11.61481411152)  # the file's "mean"
    assert first.summary.std == pytest.approx(1.6447334482677183)  # the file's "stddev"
    assert dict(first.tags) == {"command": first.label, "nonzero_exit_codes": "0 of 3", "user_mean_s": "43.5557",
                                "system_mean_s": "7.31674"}


def test_old_schema_without_exit_codes_still_has_times(corpus):
    [run] = hyperfine.parse(_text(corpus, "hyperfine", OLD), source=OLD)
    assert run.samples == (9.066039999998821e-6, 0.0, 0.0)
    assert run.summary.mean == pytest.approx(3.0220133333329403e-6)
    assert len(run.label) == 60 and run.label.startswith("'/tmp/delta/0002-5a4361fa") and run.label.endswith("...")
    assert dict(run.tags)["command"].endswith("> /dev/null'  [ERROR]")
    assert dict(run.tags)["nonzero_exit_codes"] == "unknown: the file has no exit codes (older hyperfine)"
    assert dict(run.tags)["system_mean_s"] == "0"


# ---------------------------------------------------------------------------------------------
# hyperfine: other shapes of its JSON


def _document(corpus):
    return json.loads(_text(corpus, "hyperfine", NEW))


def test_without_times_the_summary_counts_the_exit_codes(corpus):
    document = _document(corpus)
    del document["results"][0]["times"]
    run = hyperfine.parse(json.dumps(document), source="h.json")[0]
    assert run.samples == () and run.durations == ()
    summary = run.summary
    assert (summary.n, summary.mean, summary.std, summary.min, summary.max) == (
        3, 11.61481411152, 1.6447334482677183, 9.877873458520002, 13.148435542520001)


def test_without_times_or_exit_codes_the_run_count_is_not_invented(corpus):
    document = _document(corpus)
    del document["results"][1]["times"], document["results"][1]["exit_codes"]
    with pytest.raises(ToolOutputError, match=r"^h.json: results\[1\].times: expected 'times' .* found neither: "
                                              "the number of runs is unknown"):
        hyperfine.parse(json.dumps(document), source="h.json")


def test_failed_runs_one_run_and_parameters_are_tagged(corpus):
    document = _document(corpus)
    document["results"][0]["exit_codes"] = [0, 2, None]
    document["results"][1] |= {"times": [12.0], "exit_codes": [0], "stddev": None, "parameters": {"n": "1", "t": 2}}
    first, second = hyperfine.parse(json.dumps(document), source="h.json")
    assert dict(first.tags)["nonzero_exit_codes"] == "2 of 3 (1 killed by a signal)"
    assert (second.samples, second.summary.std, dict(second.tags)["parameters"]) == ((12.0,), None, "n=1, t=2")


@pytest.mark.parametrize("edit, where", [
    (lambda d: d.update(results=[]), "results"),
    (lambda d: d.pop("results"), "results"),
    (lambda d: d["results"][0].update(command=None), r"results\[0\].command"),
    (lambda d: d["results"][0].update(times=[1.0, "2"]), r"results\[0\].times\[1\]"),
    (lambda d: d["results"][0].update(times=[1.0, -2.0, 1.0]), r"results\[0\].times\[1\]"),
    (lambda d: d["results"][0].update(times=[]), r"results\[0\].times"),
    (lambda d: d["results"][1].update(times=[1.0, 2.0]), r"results\[1\].exit_codes"),
    (lambda d: d["results"][1].update(exit_codes=[0, "0", 0]), r"results\[1\].exit_codes\[1\]"),
    (lambda d: d["results"][0].update(user=True), r"results\[0\].user"),
    (lambda d: d["results"][0].update(parameters={"n": [1]}), r"results\[0\].parameters.n"),
    (lambda d: d["results"][0].pop("times") and d["results"][0].update(min=12.0), r"results\[0\]"),
])
def test_json_errors_name_the_field(corpus, edit, where):
    document = _document(corpus)
    edit(document)
    with pytest.raises(ToolOutputError, match=f"^h.json: {where}: expected"):
        hyperfine.parse(json.dumps(document), source="h.json")


@pytest.mark.parametrize("text, where", [
    ('{"results": [', "line 1, column 14"), ("[1, 2]", "line 1"), ("", "line 1, column 1"),
    ("[" * 100000, "line 1"), ("[" + "1" * 5000 + "]", "line 1"),
    ('{"results": [{"command": "x", "times": [1e999]}]}', r"results\[0\].times\[0\]"),
])
def test_text_that_is_not_hyperfine_json_is_refused(text, where):
    with pytest.raises(ToolOutputError, match=f"^h.json: {where}: expected"):
        hyperfine.parse(text, source="h.json")


# ---------------------------------------------------------------------------------------------
# Both readers: sniffing, truncation and fuzzing


def _cuts(text):
    """Cut points: after every 7th line, inside lines, and a few characters from either end."""
    ends = [m.end() for m in re.finditer("\n", text)]
    return sorted({*ends[::7], *(end - 3 for end in ends[3::7]), 1, 2, 50, len(text) - 2, len(text) - 1})


@pytest.mark.parametrize("tool, name", [("elbencho", LARGE), ("elbencho", LOSF), ("hyperfine", NEW),
                                        ("hyperfine", OLD)])
def test_truncated_outputs_keep_complete_results_or_name_the_line(corpus, tool, name):
    text = _text(corpus, tool, name)
    reader = READERS[tool]
    full = [(r.label, r.samples, r.workload) for r in reader.parse(text, source=name)]
    for cut in _cuts(text):
        try:
            runs = reader.parse(text[:cut], source=name)
        except ToolOutputError as exc:
            assert re.match(f"^{re.escape(name)}: line [0-9]+", str(exc)), str(exc)
        else:
            assert [(r.label, r.samples, r.workload) for r in runs] == full[:len(runs)], cut


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_mangled_real_outputs_are_read_or_refused(corpus, data):
    tool, name = data.draw(st.sampled_from([("elbencho", LARGE), ("elbencho", LOSF), ("hyperfine", NEW),
                                            ("hyperfine", OLD)]))
    text = _text(corpus, tool, name)
    changed, _ = mangled(data, text, ["", "---\n", " : 1 2\n", "-1", "null", "[]", "1e999"], within=40)
    read_or_refuse(tool, changed)


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=10),
       st.sampled_from(["command", "mean", "stddev", "min", "max", "times", "exit_codes", "user", "parameters"]))
def test_any_json_is_read_or_refused(value, key):
    read_or_refuse("hyperfine", json.dumps({"results": value}))
    read_or_refuse("hyperfine", json.dumps({"results": [value]}))
    result = {"command": "x", "mean": 1.0, "stddev": 0.5, "min": 0.5, "max": 1.5, "exit_codes": [0, 0]}
    read_or_refuse("hyperfine", json.dumps({"results": [result | {key: value}]}))


# ---------------------------------------------------------------------------------------------
# elbencho --csvfile (issue 19). No elbencho here to run: the columns are those its source writes
# (breuner/elbencho d085b19, Statistics::printPhaseResultsToStringVec after ProgArgs::getAsStringVec,
# "ISO date" first; docs/csv-docs.md), 55 of them, the command's commas replaced by blanks. The figures
# are one consistent run: 4 threads x 16 files of 1 MiB = 64 MiB in 200 ms = 320 MiB/s = 320 files/s.

CSV_COLUMNS = ("ISO date,label,path type,paths,hosts,threads,dirs,files,file size,block size,direct IO,random,"
               "random aligned,IO depth,shared paths,truncate,operation,time ms [first],time ms [last],"
               "entries/s [first],entries/s [last],IOPS [first],IOPS [last],MiB/s [first],MiB/s [last],CPU% [first],"
               "CPU% [last],entries [first],entries [last],MiB [first],MiB [last],Ent lat us [min],Ent lat us [avg],"
               "Ent lat us [max],IO lat us [min],IO lat us [avg],IO lat us [max],rwmix read entries/s [first],"
               "rwmix read entries/s [last],rwmix read IOPS [first],rwmix read IOPS [last],rwmix read MiB/s [first],"
               "rwmix read MiB/s [last],rwmix read entries [first],rwmix read entries [last],rwmix read MiB [first],"
               "rwmix read MiB [last],rwmix read Ent lat us [min],rwmix read Ent lat us [avg],"
               "rwmix read Ent lat us [max],rwmix read IO lat us [min],rwmix read IO lat us [avg],"
               "rwmix read IO lat us [max],version,command")
CSV_COMMAND = '"elbencho" "-w" "-r" "-t" "4" "-n" "1" "-N" "16" "-s" "1m" "-b" "1m" "--direct" "--csvfile" "r.csv" "/data/d" '
CSV_ROWS = [
    "2024-05-02T10:15:01.123+0200,,dir,1,1,4,1,16,1048576,1048576,1,0,,1,,0,WRITE,180,200,340,320,340,320,340,320,12,11,"
    "62,64,62,64,2100,12400,30100,2100,12400,30100" + "," * 16 + ",3.0-25," + CSV_COMMAND,
    "2024-05-02T10:15:01.340+0200,,dir,1,1,4,1,16,1048576,1048576,1,0,,1,,0,READ,95,100,680,640,680,640,680,640,9,9,"
    "62,64,62,64,1200,6200,15300,1200,6200,15300" + "," * 16 + ",3.0-25," + CSV_COMMAND,
]
CSV_FILE = "\n".join([CSV_COLUMNS, *CSV_ROWS]) + "\n"


def test_the_csv_has_the_columns_elbencho_writes():
    assert CSV_COLUMNS.count(",") == 54 and all(row.count(",") == 54 for row in CSV_ROWS)  # CSVFILE_EXPECTED_COMMAS


def test_the_csvfile_gives_the_runs_the_text_gives(tmp_path):
    from probes.readers import read_results
    path = tmp_path / "results.csv"
    path.write_text(CSV_FILE, encoding="utf-8")
    runs = read_results(path)
    assert [(r.label, r.samples, r.unit, r.origin.line) for r in runs] == [
        ("WRITE throughput", (320.0,), "MiB/s", 2), ("WRITE IOPS", (320.0,), "op/s", 2), ("WRITE files/s", (320.0,), "op/s", 2),
        ("READ throughput", (640.0,), "MiB/s", 3), ("READ IOPS", (640.0,), "op/s", 3), ("READ files/s", (640.0,), "op/s", 3)]
    write = runs[0]
    work = write.workload
    assert (work.operation, work.nodes, work.ppn, work.transfer_size, work.direct, work.access, work.data_set) == (
        Operation.WRITE, 1, 4, Q_(1, "MiB"), True, Access.SEQUENTIAL, Q_(64, "MiB"))
    assert (write.origin.tool, write.origin.tool_version, write.durations) == ("elbencho", "3.0-25", (0.2,))
    assert runs[2].workload.operation is Operation.CREATE and runs[5].workload.operation is Operation.OPEN
    tags = dict(runs[2].tags)
    assert (tags["first_done"], tags["entries_done"], tags["counts"]) == ("340 op/s", "64 files",
                                                                          "files created, written and closed")
    assert tags["command"].startswith("elbencho -w -r -t 4")


def test_a_csv_label_and_empty_cells_are_kept_apart():
    row = CSV_ROWS[0].replace(",,dir,", ",nightly,dir,").replace(",320,340,320,340,320,", ",,340,320,340,320,", 1)
    runs = elbencho.parse("\n".join([CSV_COLUMNS, row]), source="r.csv")
    assert [r.label for r in runs] == ["nightly WRITE throughput", "nightly WRITE IOPS"]  # no entries/s [last]


@pytest.mark.parametrize("text, where, found", [
    (CSV_COLUMNS + "\n" + CSV_ROWS[0][:80] + "\n", "line 2", "expected 55 cells as in the header at line 1; found 18"),
    (CSV_COLUMNS + "\n" + CSV_ROWS[0].replace(",4,1,16,", ",x,1,16,"), "line 2", "'threads'"),
    (CSV_COLUMNS + "\n", "line 1", "expected a WRITE, READ, RMFILES, STAT, MKDIRS or RMDIRS row"),
    ("ISO Date,Label,Phase,RuntimeMS,Rank,MixType,Done%,DoneBytes,MiB/s,IOPS,Entries,Entries/s,Lat Ent us,"
     "Lat IO us,Active,CPU,Service,\n", "line 1", "found its live statistics CSV (--livecsv)"),
])
def test_a_malformed_csv_is_refused_with_the_line(text, where, found):
    assert elbencho.looks_like(text)
    message = refusal(elbencho.parse, text, source="r.csv", where=where)
    assert found in message, message
