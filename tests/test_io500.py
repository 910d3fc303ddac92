"""probes.readers.io500: every io500 file of the corpus (prototype 2017, io500.sh 2017-20, C app SC20-ISC25) read as printed."""

from __future__ import annotations

import math
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.readers import io500, ior, read_results
from probes.core.errors import ToolOutputError
from probes.core.records import Placement
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation
from tests.conftest import read_every_run
from tests.garbage import mangled, read_or_refuse, refusal

GIB, KOPS = "GiB/s", "kop/s"
READ, WRITE = Operation.READ, Operation.WRITE

# Every results file: (number of runs, version). io500 standard runs have 12 scored phases; the
# prototype has 11 (its md-real-io is no single operation), io500.sh before SC18 no mdtest-hard-read,
# ISC25 adds the unscored ior-rnd4K-easy-read.
RESULTS = {
    "ddn-ai400_io500-isc19_result_summary.txt": (12, "io500.sh"),
    "io500-2017_kaust_lustre_results.txt": (11, "prototype 2017"),
    "io500-2017_sandia_full_summary.txt": (11, "io500.sh"),
    "io500-2017_sandia_result_summary.txt": (11, "io500.sh"),
    "knowext_io500-isc22_result_with_SCORE_section.txt": (12, "io500-isc22_v1"),
    "knowext_io500-isc22_v1_result_summary.txt": (12, "io500-isc22_v1"),
    "lrz-daos_io500-isc25_result.txt": (13, "io500-isc25_v2-13"),
    "lrz-daos_io500-isc25_result_summary.txt": (13, "io500-isc25_v2-13"),
    "narval_io500-sc21_result.txt": (12, "io500-sc21"),
    "narval_io500-sc21_result_summary.txt": (12, "io500-sc21"),
    "oci-beegfs_io500-isc20-bash_full_summary.txt": (12, "io500.sh"),
    "oci-beegfs_io500-isc20-bash_result_summary.txt": (12, "io500.sh"),
    "reading-tx2-ext4_io500-sc20_v3_result.txt": (12, "io500-sc20_v3"),
    "reading-tx2-ext4_io500-sc20_v3_result_summary.txt": (12, "io500-sc20_v3"),
    "summit_io500-sc18_full_summary.txt": (12, "io500.sh"),
    "summit_io500-sc18_result_summary.txt": (12, "io500.sh"),
}
# io500 files that are not results: what parse must say they are.
NOT_RESULTS = {
    "lrz-daos_io500-isc25_config.ini": "an io500 configuration file",
    "narval_io500-sc21_config.ini": "an io500 configuration file",
    "reading-tx2-ext4_io500-sc20_v3_config.ini": "an io500 configuration file",
    "lrz-daos_system-information.txt": "an io500 system description",
    "narval_system-information.txt": "an io500 system description",
    "oci-beegfs_system-information.txt": "an io500 system description",
    "reading-tx2-ext4_system-information.txt": "an io500 system description",
}
# Driver logs whose launcher states nodes and processes per node (every phase but the prototype's find):
# OCI "[Exec] mpiexec ... -n 2040 -npernode 12" (line 48); Summit "[Exec] jsrun -n 504 -a 2 -c 2 -r 1"
# (line 60): 504 resource sets of 2 tasks, 1 set per host. No other file states the nodes.
PLACED = {"oci-beegfs_io500-isc20-bash_full_summary.txt": (170, 12), "summit_io500-sc18_full_summary.txt": (504, 2)}
# Files of one run written twice: the same phases and values.
SAME_RUN = [
    ("narval_io500-sc21_result.txt", "narval_io500-sc21_result_summary.txt"),
    ("reading-tx2-ext4_io500-sc20_v3_result.txt", "reading-tx2-ext4_io500-sc20_v3_result_summary.txt"),
    ("lrz-daos_io500-isc25_result.txt", "lrz-daos_io500-isc25_result_summary.txt"),
    ("io500-2017_sandia_full_summary.txt", "io500-2017_sandia_result_summary.txt"),
    ("summit_io500-sc18_full_summary.txt", "summit_io500-sc18_result_summary.txt"),
    ("oci-beegfs_io500-isc20-bash_full_summary.txt", "oci-beegfs_io500-isc20-bash_result_summary.txt"),
]
LABELS = ["ior-easy-write", "mdtest-easy-write", "ior-hard-write", "mdtest-hard-write", "find", "ior-easy-read",
          "mdtest-easy-stat", "ior-hard-read", "mdtest-hard-stat", "mdtest-easy-delete", "mdtest-hard-read",
          "mdtest-hard-delete"]
OPERATIONS = {"ior-easy-write": WRITE, "ior-hard-write": WRITE, "ior-easy-read": READ, "ior-hard-read": READ,
              "mdtest-easy-write": Operation.CREATE, "mdtest-hard-write": Operation.CREATE, "find": Operation.FIND,
              "mdtest-easy-stat": Operation.STAT, "mdtest-hard-stat": Operation.STAT,
              "mdtest-hard-read": Operation.OPEN, "mdtest-easy-delete": Operation.REMOVE,
              "mdtest-hard-delete": Operation.REMOVE, "ior-rnd4K-easy-read": READ}

# The prototype's names of the mdtest create phases; its other md-* phases are mdtest-*.
PROTOTYPE_NAMES = {"md-easy-create": "mdtest-easy-write", "md-hard-create": "mdtest-hard-write"}


def _text(corpus, name, folder="io500"):
    return (corpus / folder / name).read_text(encoding="utf-8", errors="replace")


def _parse(corpus, name):
    return io500.parse(_text(corpus, name), source=name)


def _by_label(corpus, name):
    return {run.label: run for run in _parse(corpus, name)}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_every_io500_results_file_is_read(corpus, name):
    count, version = RESULTS[name]
    for run in read_every_run(io500, _text(corpus, name), name, count):
        assert (run.origin.tool, run.origin.tool_version, run.origin.path) == ("io500", version, name)
        assert run.workload.operation is OPERATIONS[run.label]
        assert len(run.samples) == 1 and len(run.durations) == 1 and run.reported is None
        assert all(math.isfinite(s) and s > 0 for s in run.samples + run.durations)
        is_ior = run.label.startswith("ior-")
        assert run.metric is (Metric.BANDWIDTH if is_ior else Metric.OPERATION_RATE)
        if version != "prototype 2017":
            assert run.unit == (GIB if is_ior else KOPS)
        if not is_ior:
            assert run.workload.transfer_size is None
        assert (run.workload.nodes, run.workload.ppn) == PLACED.get(name, (None, 1))
        phase = dict(run.tags)["phase"].replace("_", "-")
        assert PROTOTYPE_NAMES.get(phase, re.sub("^md-", "mdtest-", phase)) == run.label
        assert "score" in dict(run.tags)  # every corpus file ends with its scores


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_a_whole_file_has_its_score_and_one_cut_before_it_says_so_on_every_phase(corpus, name):
    """io500 prints its score last: every whole file of the corpus has one, and a file cut before it (the run
    stopped, or a copy was cut off) tags every phase it holds, which check reports as CUT-SHORT."""
    text = _text(corpus, name)
    assert not any(key == "cut_short" for run in io500.parse(text, source=name) for key, _ in run.tags)
    cut = text[:len(text) // 2]
    try:
        runs = io500.parse(cut, source=name)
    except ToolOutputError:
        return  # no phase in the first half: refused as truncated
    assert runs and all("no io500 score" in dict(run.tags)["cut_short"] for run in runs)


def test_phases_come_in_io500_order(corpus):
    labels = [run.label for run in _parse(corpus, "lrz-daos_io500-isc25_result_summary.txt")]
    assert labels == LABELS + ["ior-rnd4K-easy-read"]


@pytest.mark.parametrize("name", sorted(NOT_RESULTS))
def test_configuration_and_system_descriptions_are_refused_saying_what_they_are(corpus, name):
    text = _text(corpus, name)
    assert io500.looks_like(text)
    with pytest.raises(ToolOutputError) as err:
        io500.parse(text, source=name)
    assert str(err.value).startswith(f"{name}: line 1: expected io500 results; found {NOT_RESULTS[name]}")
    assert "not results" in str(err.value)


def test_io500_sh_summary_read_by_hand(corpus):
    # io500.sh 2017 (Sandia): line 1 "[RESULT] BW   phase 1   ior_easy_write   0.411 GB/s : time   9.73 seconds",
    # line 3 ior_hard_write 0.126 GB/s in 0.04 s, line 5 find 9.160 kiops in 0.27 s.
    runs = _by_label(corpus, "io500-2017_sandia_result_summary.txt")
    easy, hard, find = runs["ior-easy-write"], runs["ior-hard-write"], runs["find"]
    assert (easy.samples, easy.unit, easy.durations, easy.origin.line) == ((0.411,), GIB, (9.73,), 1)
    assert dict(easy.tags)["unit"] == "printed as GB/s; io500.sh divides IOR's MiB/s by 1024, so it is GiB/s"
    assert easy.workload.transfer_size is None  # the summary does not say, and ior-easy's is the submitter's
    assert (hard.samples, hard.origin.line, hard.workload.transfer_size) == ((0.126,), 3, Q_(47008, "B"))
    assert hard.workload.shared_file is True and "fixed for ior-hard" in dict(hard.tags)["transfer_size"]
    assert (find.samples, find.unit, find.durations, find.origin.line) == ((9.16,), KOPS, (0.27,), 5)
    assert dict(find.tags)["score"] == "Bandwidth 0.358461 GB/s : IOPS 0.583244 kiops : TOTAL .209070"
    assert "invalid" not in dict(easy.tags)  # the summary does not carry the driver log's warnings


def test_io500_sh_driver_log_gives_commands_and_warnings(corpus):
    # The Sandia driver log: "[Exec] ... ior -w ... -t 2048k -b 2g -F" (line 37), a "[Warning] This
    # cannot be official score" (line 39) before the [RESULT] line 40; every [RESULT] is repeated at the end.
    runs = _by_label(corpus, "io500-2017_sandia_full_summary.txt")
    easy, hard, read = runs["ior-easy-write"], runs["ior-hard-write"], runs["ior-easy-read"]
    assert (easy.samples, easy.origin.line) == ((0.411,), 40)
    assert (easy.workload.transfer_size, easy.workload.shared_file) == (Q_(2 << 20, "B"), False)
    assert dict(easy.tags)["invalid"] == ("This cannot be official score. The runtime of 10.2901 seconds is "
                                          "below 5 minutes")
    assert (hard.workload.transfer_size, hard.workload.shared_file) == (Q_(47008, "B"), True)
    assert "transfer_size" not in dict(hard.tags)  # read from the command, not from the rules
    assert "invalid" not in dict(read.tags) and "invalid" not in dict(runs["find"].tags)
    assert dict(runs["mdtest-hard-write"].tags)["invalid"].endswith("runtime of 5.4469 seconds is below 5 minutes")
    # Summit SC18: "-t 16384k" is 16 MiB.
    summit = _by_label(corpus, "summit_io500-sc18_full_summary.txt")["ior-easy-read"]
    assert (summit.samples, summit.workload.transfer_size, summit.origin.line) == ((1788.32,), Q_(16 << 20, "B"), 88)


# What each results file states of its processes, read by hand: (the total where only it is stated, whether
# the phases' commands are in the file). Sandia's driver log starts each phase with "mpirun -np 2" but its
# find with "sfind.sh" alone; result.txt states "procs = 21504" under [run] (LRZ line 2, ISC22 line 2), or
# only "nproc = 640" under [find] (Narval line 49); Reading's states neither. Every command in the corpus
# asks io500's "-C -Q 1" for the reads and "-e" for the writes; no mdtest stride reaches another node
# where the placement is stated (OCI: -N 1 with 12 processes per node; Summit: no -N).
STATED = {
    "io500-2017_sandia_full_summary.txt": ("2", True),  # but its find
    "knowext_io500-isc22_result_with_SCORE_section.txt": ("40", True),
    "lrz-daos_io500-isc25_result.txt": ("21504", True),
    "narval_io500-sc21_result.txt": ("640", True),
    "reading-tx2-ext4_io500-sc20_v3_result.txt": (None, True),
    "oci-beegfs_io500-isc20-bash_full_summary.txt": (None, True),
    "summit_io500-sc18_full_summary.txt": (None, True),
}
CONTEXT_TAGS = ("fsync", "read_by_other_node", "reads_own_writes")


BY_RULES = ", fixed by io500's rules and scripts; this file does not print it"


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_the_processes_and_who_reads_are_taken_from_what_each_file_states(corpus, name):
    """Who reads and whether writes are flushed come from a phase's command, else from io500's rules (-C -Q 1 -e on
    ior-easy and ior-hard), except in the 2017 prototype, whose scripts were not yet fixed."""
    processes, commands = STATED.get(name, (None, False))
    rules = not commands and RESULTS[name][1] != "prototype 2017"
    for run in _parse(corpus, name):
        expected = {}
        stated = processes and not (run.label == "find" and name.startswith("io500-2017_sandia"))
        assert run.placement == (Placement(int(processes)) if stated else None), run.label
        if run.label.startswith("ior-") and (commands or rules and "rnd" not in run.label):
            write = run.workload.operation is WRITE
            expected["fsync" if write else "read_by_other_node"] = ("IOR -e" if write else "IOR -C -Q 1") + \
                ("" if commands else BY_RULES)
        assert {k: v for k, v in run.tags if k in CONTEXT_TAGS} == expected, run.label


@pytest.mark.parametrize("launch, nodes, ppn, processes", [
    ("mpiexec --allow-run-as-root -x UCX_TLS=rc,self -n 2040 -npernode 12 --hostfile h", 170, 12, None),
    ("jsrun -n 504 -a 2 -c 2 -r 1", 504, 2, None),  # resource sets of 2 tasks, 1 set per host
    ("srun -N 4 --ntasks=32", 4, 8, None),
    ("aprun -n 64 -N 16", 4, 16, None),
    ("mpirun -np 2", None, 1, 2),
    ("mpirun -np 10 -npernode 4", None, 1, 10),  # not a whole number of nodes: only the total is stated
    ("/opt/bin/sfind.sh", None, 1, None),
])
def test_the_launcher_of_a_phase_states_its_nodes_and_processes(launch, nodes, ppn, processes):
    text = (f"[Starting] ior_easy_write\n[Exec] {launch} /b/ior -w -C -Q 1 -e -t 2m -b 1g -F -o /d/f\n"
            "[RESULT] BW   phase 1            ior_easy_write                0.411 GB/s : time   9.73 seconds\n")
    [run] = io500.parse(text, source="log.txt")
    assert (run.workload.nodes, run.workload.ppn, run.placement and run.placement.processes) == (nodes, ppn, processes)


def test_a_malformed_launcher_count_is_refused_with_the_line():
    text = ("[Starting] ior_easy_write\n[Exec] mpirun -np all /b/ior -w -t 2m -b 1g -F -o /d/f\n"
            "[RESULT] BW   phase 1            ior_easy_write                0.411 GB/s : time   9.73 seconds\n")
    with pytest.raises(ToolOutputError, match=r"^log.txt: line 2: expected a whole number of at least 1 after "
                                              r"mpirun's -np; found 'all'$"):
        io500.parse(text, source="log.txt")


def test_io500_sh_gib_needs_no_note(corpus):
    # OCI ISC20: "[RESULT] BW   phase 1   ior_easy_write   333.854 GiB/s : time 458.30 seconds".
    run = _by_label(corpus, "oci-beegfs_io500-isc20-bash_result_summary.txt")["ior-easy-write"]
    assert (run.samples, run.unit, run.durations) == ((333.854,), GIB, (458.3,))
    assert "unit" not in dict(run.tags)


def test_prototype_read_by_hand(corpus):
    # "3/ior-easy-read BW:225919.17 MB/s time: 452s" (line 11), "1/md-easy-create IOPs:12658.661 time:514s"
    # (line 5); md-real-io (line 25) is no single operation.
    runs = _by_label(corpus, "io500-2017_kaust_lustre_results.txt")
    read, create = runs["ior-easy-read"], runs["mdtest-easy-write"]
    assert (read.samples, read.unit, read.durations, read.origin.line) == ((225919.17,), "MB/s", (452.0,), 11)
    assert (create.samples, create.unit, create.durations, create.origin.line) == ((12658.661,), "op/s", (514.0,), 5)
    assert dict(create.tags)["phase"] == "md-easy-create"
    assert runs["ior-hard-write"].workload.transfer_size is None  # the prototype's ior-hard used 47000 B
    assert "md-real-io" not in runs and "mdtest-hard-read" not in runs
    assert dict(read.tags)["score"] == "bw score: 55505.68 MB/s; md score: 29729.62 IOPS; score: 1650163266"


def test_app_result_txt_read_by_hand(corpus):
    # SC20 (Reading): "[ior-easy-write]" (line 7), exe with "-t 2m ... -F" (line 9), score 0.355843
    # (line 11), t_delta 331.7712 (line 12); [mdtest-hard-read] (line 88) score 33.657691.
    runs = _by_label(corpus, "reading-tx2-ext4_io500-sc20_v3_result.txt")
    easy, md = runs["ior-easy-write"], runs["mdtest-hard-read"]
    assert (easy.samples, easy.durations, easy.origin.line) == ((0.355843,), (331.7712,), 7)
    assert (easy.workload.transfer_size, easy.workload.shared_file, easy.workload.access) == (
        Q_(2 << 20, "B"), False, Access.SEQUENTIAL)
    assert (md.samples, md.unit, md.durations, md.origin.line) == ((33.657691,), KOPS, (181.2253,), 88)
    assert dict(md.tags)["score"] == "MD = 104.538123; BW = 0.371662; SCORE = 6.233207"
    # ISC25 (LRZ): 21504 procs (line 2); ior-easy "-t 1m"; ior-rnd4K-easy-read "-t=4096 ... -F", random.
    lrz = _by_label(corpus, "lrz-daos_io500-isc25_result.txt")
    rnd = lrz["ior-rnd4K-easy-read"]
    assert (rnd.samples, rnd.unit, rnd.durations) == ((189.112448,), GIB, (563.3297,))
    assert (rnd.workload.transfer_size, rnd.workload.access, rnd.workload.shared_file) == (
        Q_(4096, "B"), Access.RANDOM, False)
    assert lrz["ior-easy-read"].workload.transfer_size == Q_(1 << 20, "B")
    assert rnd.placement.processes == 21504 and dict(rnd.tags)["mode"] == "standard"
    # ISC22: the slow ior-hard-write, score 0.027132 in 1367.1959 s (line 31).
    hard = _by_label(corpus, "knowext_io500-isc22_result_with_SCORE_section.txt")["ior-hard-write"]
    assert (hard.samples, hard.durations, hard.origin.line, hard.workload.transfer_size) == (
        (0.027132,), (1367.1959,), 31, Q_(47008, "B"))


def test_app_summary_read_by_hand(corpus):
    # ISC25: "[      ]  ior-rnd4K-easy-read      189.112448 GiB/s : time 563.330 seconds" (line 15) is
    # outside the score; the "[      ] timestamp" line (line 4) gives no run.
    runs = _by_label(corpus, "lrz-daos_io500-isc25_result_summary.txt")
    rnd = runs["ior-rnd4K-easy-read"]
    assert (rnd.samples, rnd.durations, rnd.origin.line, rnd.workload.transfer_size, rnd.workload.access) == (
        (189.112448,), (563.33,), 15, Q_(4096, "B"), Access.RANDOM)  # the size the phase's name and io500 fix
    assert dict(rnd.tags)["transfer_size"].startswith("4096 B, fixed for ior-rnd4K-easy-read by io500's source")
    assert "unscored" in dict(rnd.tags) and "unscored" not in dict(runs["ior-easy-write"].tags)
    assert "timestamp" not in runs
    narval = _by_label(corpus, "narval_io500-sc21_result_summary.txt")["ior-hard-write"]
    assert (narval.samples, narval.durations, narval.origin.line) == ((5.576552,), (1569.456,), 5)
    assert dict(narval.tags)["score"] == "Bandwidth 32.738265 GiB/s : IOPS 142.528619 kiops : TOTAL 68.309148"


@pytest.mark.parametrize("full, summary", SAME_RUN)
def test_files_of_one_run_agree(corpus, full, summary):
    a, b = _parse(corpus, full), _parse(corpus, summary)
    assert [(r.label, r.samples, r.unit) for r in a] == [(r.label, r.samples, r.unit) for r in b]
    for x, y in zip(a, b):
        assert x.durations == pytest.approx(y.durations, abs=0.001)  # printed to 3 or 4 decimals


@pytest.mark.parametrize("io500_file, label, ior_file, rel", [
    ("narval_io500-sc21_result_summary.txt", "ior-easy-write", "narval_io500_ior-3.4.0+dev_easy_write.txt", 1e-5),
    ("lrz-daos_io500-isc25_result.txt", "ior-rnd4K-easy-read", "lrz-daos_io500_ior-4.1.0+dev_rnd4K_read.txt", 1e-5),
    ("summit_io500-sc18_result_summary.txt", "ior-easy-write", "summit_io500_ior-3.2.0_easy_write.txt", 1e-5),
    ("io500-2017_sandia_result_summary.txt", "ior-easy-write", "io500-2017_sandia_ior-3.1.0_easy_write.txt", 1e-3),
    ("oci-beegfs_io500-isc20-bash_result_summary.txt", "ior-hard-read",
     "oci-beegfs_io500_ior-3.3.0+dev_hard_read.txt", 1e-5),
])
def test_io500_gib_is_iors_mib_over_1024(corpus, io500_file, label, ior_file, rel):
    """The evidence for GiB/s (2^30), GB/s included: the phase's own IOR output, in MiB/s."""
    phase = _by_label(corpus, io500_file)[label]
    [ior_run] = ior.parse(_text(corpus, ior_file, "ior"), source=ior_file)
    assert phase.value.to("MiB/s").magnitude == pytest.approx(ior_run.samples[0], rel=rel)


def test_kilo_operations_are_a_thousand_operations():
    assert Q_(1, KOPS).to("op/s").magnitude == pytest.approx(1000)


def test_the_whole_corpus_reads_fast(corpus):
    start = time.perf_counter()
    for name in RESULTS:
        _parse(corpus, name)
    assert time.perf_counter() - start < 2


def _facts(runs):
    return {(r.label, r.samples, r.unit) for r in runs}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_truncated_files_keep_what_is_complete_or_name_a_line(corpus, name):
    text = _text(corpus, name)
    whole = _facts(io500.parse(text, source=name))
    lines = text.splitlines(keepends=True)
    for cut in list(range(0, len(lines), 7)) + [len(text) // 3, len(text) // 2]:
        part = "".join(lines[:cut]) if cut < len(lines) else text[:cut]
        try:
            runs = io500.parse(part, source=name)
        except ToolOutputError as exc:
            assert re.match(f"^{re.escape(name)}: line [0-9]+: expected", str(exc)), str(exc)
        else:
            assert runs and _facts(runs) <= whole


def test_a_result_txt_cut_before_its_phases_says_so(corpus):
    name = "narval_io500-sc21_result.txt"
    text = "".join(_text(corpus, name).splitlines(keepends=True)[:8])
    with pytest.raises(ToolOutputError, match=f"^{re.escape(name)}: line 8: expected at least one io500 phase "
                                              "with a value; found none: the file is truncated or the run failed"):
        io500.parse(text, source=name)


RESULT_TXT = """\
[run]
procs           = 4
version         = io500-isc23
config-hash     = 1
mode            = standard
; START 2023-01-01 00:00:00

[ior-easy-write]
t_start         = 2023-01-01 00:00:00
exe             = ./ior -C -Q 1 -g -k -e -o /d/ior-easy/file -t 512k -b 10m -F -w -D 300 -a POSIX --posix.odirect
; ERROR INVALID Runtime is smaller than expected minimum runtime
score           = 1.500000
t_delta         = 20.0000
t_end           = 2023-01-01 00:00:20

[mdtest-easy-write]
t_start         = 2023-01-01 00:00:20
exe             = ./mdtest -n 1000 -u -L -F -P -N 1 -d /d/mdtest-easy -C -Y -W 300 -a POSIX
score           = 12.500000
t_delta         = 30.0000
t_end           = 2023-01-01 00:00:50

[SCORE]
MD              = 12.500000
BW              = 1.500000
SCORE           = 4.330127 [INVALID]
hash            = 1
"""


def test_invalid_phases_are_tagged_with_io500s_reason():
    easy, md = io500.parse(RESULT_TXT, source="r.txt")
    assert dict(easy.tags)["invalid"] == "Runtime is smaller than expected minimum runtime"
    assert "invalid" not in dict(md.tags)
    assert dict(md.tags)["score"] == "MD = 12.500000; BW = 1.500000; SCORE = 4.330127 [INVALID]"
    assert (easy.workload.transfer_size, easy.workload.direct) == (Q_(512 << 10, "B"), True)
    assert easy.origin.tool_version == "io500-isc23"
    summary = ("IO500 version io500-isc23 (standard)\n"
               "[RESULT]       ior-easy-write        1.500000 GiB/s : time 20.000 seconds [INVALID]\n"
               "[RESULT-invalid]    mdtest-easy-write       12.500000 kIOPS : time 30.000 seconds\n"
               "[SCORE ] Bandwidth 1.500000 GiB/s : IOPS 12.500000 kiops : TOTAL 4.330127 [INVALID]\n")
    easy, md = io500.parse(summary, source="s.txt")
    assert dict(easy.tags)["invalid"] == "io500 marked the phase [INVALID]"
    assert dict(md.tags)["invalid"].startswith("io500 marked the result [RESULT-invalid]")
    assert dict(md.tags)["score"].endswith("TOTAL 4.330127 [INVALID]")


@pytest.mark.parametrize("change, where, found", [
    (("score           = 1.500000", "score           = fast"), "line 12", "'fast'"),
    (("score           = 1.500000", "score           = -nan"), "line 12", "'-nan'"),
    (("-t 512k", "-t 0"), "line 10", "'0'"),
    (("-t 512k", "-t 1furlong"), "line 10", "'1furlong'"),
    (("t_delta         = 20.0000", "t_delta         = 1e999"), "line 13", "a finite t_delta"),
    (("; START", "START"), "line 6", "expected a '[section]', 'key = value' or '; comment' line"),
    (("procs           = 4", "procs           = four"), "line 2", "expected a whole number of processes; found 'four'"),
    (("-C -Q 1", "-C -Q one"), "line 10", "expected a whole number of nodes after ior's -Q; found 'one'"),
    (("-P -N 1", "-P -N x"), "line 18", "expected a whole number after mdtest's -N"),
])
def test_malformed_result_txt_is_refused_with_the_line(change, where, found):
    assert found in refusal(io500.parse, RESULT_TXT.replace(*change, 1), source="r.txt", where=where)


@pytest.mark.parametrize("line, found", [
    ("[RESULT] BW   phase 1   ior_easy_write   0.411 MB/s : time   9.73 seconds", "found 'MB/s', whose base"),
    ("[RESULT] IOPS phase 1   ior_easy_write   0.411 kiops : time   9.73 seconds", "expected a bandwidth"),
    ("[RESULT]       ior-easy-write        0.355843 TiB/s : time 331.771 seconds", "expected GiB/s or kIOPS"),
    ("[RESULT]       ior-easy-write        0.355843 GiB/s : time 331.7", "expected an io500 result line"),
    ("[RESULT]       ior-easy-write        x.5 GiB/s : time 331.771 seconds", "number for the value"),
])
def test_malformed_summary_lines_are_refused_with_the_line(line, found):
    assert found in refusal(io500.parse, f"IO500 version io500-sc21\n{line}\n", source="s.txt", where="line 2")


def test_text_that_is_no_io500_file_is_refused():
    with pytest.raises(ToolOutputError, match="^x.txt: line 1: expected an io500 results file"):
        io500.parse("hello\nworld\n", source="x.txt")


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_cut_and_mangled_real_files_are_read_or_refused(corpus, data):
    name = data.draw(st.sampled_from(sorted(RESULTS) + sorted(NOT_RESULTS)))
    text = _text(corpus, name)
    changed, cut = mangled(data, text, ["", "\n", "[", "]", " = ", "-t ", "GiB/s", "nan", "[SCORE]\n",
                                        "; ERROR INVALID x\n", "[RESULT] "])
    read_or_refuse("io500", changed)
    read_or_refuse("io500", cut)


def test_two_reasons_for_one_invalid_phase_are_both_kept():
    log = ("[Starting] ior_easy_write\n[Warning] This cannot be official score. The runtime of 9 seconds is below "
           "5 minutes\n[RESULT-invalid] BW   phase 1   ior_easy_write   0.411 GiB/s : time   9.73 seconds\n")
    [run] = io500.parse(log, source="log.txt")
    assert dict(run.tags)["invalid"] == ("io500 marked the result [RESULT-invalid] (a write phase shorter than the "
                                         "minimum runtime); This cannot be official score. The runtime of 9 "
                                         "seconds is below 5 minutes")
    assert [k for k, _ in run.tags].count("invalid") == 1


def test_a_driver_log_holding_ior_and_mdtest_outputs_gives_the_runs_of_both(corpus, tmp_path):
    """io500.sh's log with each phase's own output after its [Exec] line, as a job's log holds them: the IOR
    reader takes the file, and the mdtest runs in it are read too, not dropped without a word."""
    log = _text(corpus, "io500-2017_sandia_full_summary.txt").splitlines(keepends=True)
    outputs = {"2048k": _text(corpus, "io500-2017_sandia_ior-3.1.0_easy_write.txt", "ior"),
               "mdtest -C -t -F": _text(corpus, "io500-2017_sandia_mdtest-1.9.3_hard_write.txt", "mdtest")}
    parts = []
    for line in log:  # after the first [Exec] line of each phase: the log repeats its lines at its end
        parts.append(line)
        if line.startswith("[Exec]"):
            parts += [outputs.pop(key) for key in list(outputs) if key in line]
    path = tmp_path / "io500-driver.log"
    path.write_text("".join(parts), encoding="utf-8")
    runs = read_results(path)
    assert [(r.origin.tool, r.label) for r in runs] == [
        ("ior", "MPIIO file-per-process write"), ("mdtest", "File creation"), ("mdtest", "Tree creation")]
    assert runs[0].samples == (421.05,) and runs[1].summary.mean == 243.158
    assert [r.origin.line for r in runs] == sorted(r.origin.line for r in runs)


def test_one_value_a_phase_is_said_as_io500s_rule_not_warned(corpus):
    """io500 runs each phase once by its rules: FEW-REPETITIONS is information there, with how to see the spread."""
    from assess.findings.alone import run_findings
    from assess.findings.finding import Severity

    runs = read_results(corpus / "io500" / "narval_io500-sc21_result.txt")
    for run in runs:
        (few,) = [f for f in run_findings(run) if f.code == "FEW-REPETITIONS"]
        assert few.severity is Severity.INFO and "as io500's rules run each phase once" in few.message
        assert few.remedy == "to see its spread, repeat the whole io500 run at least 3 times"
