"""iobound plan: each benchmark planned on the bundled examples, its files read back by the tools' own syntax, and
the seeds' Lustre (000/001) replayed as plans."""

from __future__ import annotations

import configparser
import contextlib
import io
import json
import math
import re
import shlex
import shutil
import subprocess

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from assess.cli import main
from probes.readers.ior_readback import readback
from probes.readers.mdtest import _options as mdtest_options

EXAMPLES = ("lecture", "narval", "oci-beegfs")
# io500's ini sections (io500's ini_parser options: its phases' and the global and debug ones).
IO500_SECTIONS = {"global", "debug", "ior-easy", "ior-easy-write", "mdtest-easy", "mdtest-easy-write", "timestamp",
                  "ior-hard", "ior-hard-write", "mdtest-hard", "mdtest-hard-write", "find", "ior-easy-read",
                  "mdtest-easy-stat", "ior-hard-read", "mdtest-hard-stat", "mdtest-easy-delete", "mdtest-hard-read",
                  "mdtest-hard-delete", "ior-rnd4K", "ior-rnd1MB", "mdworkbench", "find-easy", "find-hard"}
# seeds/000 and 001: IOR on a Lustre reached over 10 GbE; -b 1g made a data set of 0.5x the aggregate memory. The
# seeds give no node count: 4 clients x 6 processes x 1 GiB = 24 GiB, so the memory is 48 GiB, here 8 GiB on each of
# 4 clients and 2 servers.
SEED_LUSTRE = """
[clients.c]
count = 4
nic = { value = "10 GbE", source = "datasheet", note = "seeds/001: 10GbE network" }
memory = { value = "8 GiB", source = "datasheet", note = "seeds/001: -b 1g on 24 processes is 0.5x the memory" }
[networks.eth]
[servers.oss]
count = 2
nic = "10 GbE"
memory = { value = "8 GiB", source = "datasheet", note = "seeds/001" }
[devices.ost]
count = 2
bandwidth = "2 GiB/s"
"""


def plan(*argv: str) -> dict:
    """The plan document ``iobound plan ARGV --json`` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["plan", *argv, "--json"]) == 0
    doc = json.loads(out.getvalue())
    assert doc["format"] == "iobound/plan"
    return doc


def _commands(text: str, program: str) -> list[list[str]]:
    """The arguments after ``program`` of each line of a script that runs it."""
    lines = [shlex.split(line) for line in text.splitlines() if line and not line.startswith("#")]
    return [words[words.index(program) + 1:] for words in lines]


@pytest.mark.parametrize("example", EXAMPLES)
def test_ior_command_lines_read_back_by_iors_own_syntax(example):
    doc = plan(example, "--benchmark", "ior")
    write, read = _commands(doc["files"]["ior.sh"], "ior")
    assert readback(write, source="ior.sh", where="line 3").fsync == "-e"
    back = readback(read, source="ior.sh", where="line 4")
    assert (back.reorder, back.offset) == ("-C", 1)  # read by the next node: its page cache never held the data
    t, b = (read[read.index(flag) + 1] for flag in ("-t", "-b"))
    assert int(b[:-1]) * {"k": 1, "m": 1024, "g": 1024**2}[b[-1]] % (int(t[:-1]) * {"k": 1, "m": 1024}[t[-1]]) == 0
    phase = doc["phases"][1]
    assert phase["reads"] == "write" and phase["amount"] == doc["phases"][0]["amount"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_mdtest_command_lines_read_back_by_mdtests_own_syntax(example):
    doc = plan(example, "--benchmark", "mdtest", "--ppn", "2")
    create, stat, remove = (mdtest_options("mdtest " + shlex.join(words))
                            for words in _commands(doc["files"]["mdtest.sh"], "mdtest"))
    assert {"C", "F", "u"} <= create.flags and "T" in stat.flags and "r" in remove.flags
    assert stat.value("N") == "2"  # each rank stats the files of the rank one node on
    assert int(stat.value("n")) == int(create.value("n")) >= 1


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("example", EXAMPLES)
def test_fio_job_file_parses_with_fio(example, tmp_path):
    assert main(["plan", example, "--benchmark", "fio", "--drop-caches", "all", "--direct", "-o",
                 str(tmp_path / "p")]) == 0
    job = tmp_path / "p" / "job.fio"
    done = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = job.read_text()
    assert "direct=1" in text and "end_fsync=1" in text and "[read]" in text


@pytest.mark.parametrize("example", EXAMPLES)
def test_io500_ini_has_io500s_sections(example):
    doc = plan(example, "--benchmark", "io500", "--drop-caches", "all")
    ini = configparser.ConfigParser()
    ini.read_string(doc["files"]["io500.ini"])
    assert set(ini.sections()) <= IO500_SECTIONS
    assert {"global", "debug", "ior-easy", "mdtest-easy", "ior-hard", "mdtest-hard", "find"} <= set(ini.sections())
    assert ini["debug"]["stonewall-time"] == "300" and ini["global"]["drop-caches"] == "TRUE"
    easy = next(p for p in doc["phases"] if p["name"] == "ior-easy-write")
    assert easy["ends_by"] in ("size", "time") and any("by the stonewall" in n for n in easy["notes"])


@pytest.mark.parametrize("example", EXAMPLES)
def test_elbencho_and_mlperf_outputs_name_their_options(example):
    words = _commands(plan(example, "--benchmark", "elbencho")["files"]["elbencho.sh"], "elbencho")[0]
    assert {"-w", "-r", "-t", "-s", "-b", "--sync", "--rotatehosts"} <= set(words)
    doc = plan(example, "--benchmark", "mlperf", "--model", "unet3d", "--accelerator", "h100")
    dataset = yaml.safe_load(doc["files"]["dlio.yaml"])["workload"]["dataset"]
    training = next(p for p in doc["phases"] if p["name"] == "training")
    assert dataset["num_files_train"] * dataset["record_length"] >= training["amount"]
    assert "--model unet3d" in doc["files"]["mlpstorage.sh"]


def test_seed_lustre_new_data_reads_outgrow_the_aggregate_memory(topology, tmp_path):
    path = tmp_path / "seed.toml"
    topology(SEED_LUSTRE, links="c eth oss ost", path=path)
    doc = plan(str(path), "--benchmark", "ior", "--nodes", "4", "--ppn", "6", "--transfer-size", "4MiB")
    read = doc["phases"][1]
    memory = sum(c["memory_bytes"][1] for c in read["caches"])
    assert memory == 48 * 2**30
    assert read["amount"] > memory  # the seed's lesson: new data sets larger than every memory on the path
    assert read["cached_share"][1] <= 0.1


def test_seed_lustre_o_direct_is_named_not_enough_where_data_is_reused(topology, tmp_path):
    path = tmp_path / "seed.toml"
    topology(SEED_LUSTRE, links="c eth oss ost", path=path)
    # seeds/001's o_direct run: -b 1g on 24 processes, a data set half the memory, read back after it was written
    doc = plan(str(path), "--benchmark", "ior", "--nodes", "4", "--ppn", "6", "--transfer-size", "4MiB", "--direct",
               "--data-set", "24GiB")
    read = doc["phases"][1]
    assert any(n.startswith("O_DIRECT is not enough") for n in read["notes"])
    assert read["cached_share"] == [pytest.approx(16 / 24)] * 2  # the servers' 16 GiB of the 24 GiB read
    assert "-B" in read["flags"] or "-B" in doc["files"]["ior.sh"]


def test_output_folder_is_new_only(tmp_path):
    folder = tmp_path / "p"
    assert main(["plan", "lecture", "--benchmark", "ior", "-o", str(folder)]) == 0
    before = {f.name: f.read_bytes() for f in folder.iterdir()}
    assert set(before) == {"plan.json", "plan.txt", "ior.sh"}
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["plan", "lecture", "--benchmark", "ior", "-o", str(folder)]) == 2
    assert "exists already" in err.getvalue()
    assert {f.name: f.read_bytes() for f in folder.iterdir()} == before


@pytest.mark.parametrize("argv, says", [
    (["--benchmark", "ior", "--nodes", "2,4"], "--nodes: a plan takes one value, not a list"),
    (["--benchmark", "fio", "--op", "create"], "--op: fio runs no create: its phases are write, read"),
    (["--benchmark", "mlperf"], "--model: give the training workload and its accelerator"),
])
def test_bad_input_to_plan_is_one_line(argv, says):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["plan", "lecture", *argv]) == 2
    assert err.getvalue().count("\n") == 1 and says in err.getvalue()


def test_an_interval_of_nothing_is_refused_rather_than_planned_with_endless_repetitions(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["plan", "lecture", "--benchmark", "ior", "--interval", "0"])
    assert exited.value.code == 2
    assert "--interval: must be a share such as 5% (or 0.05), above 0 and below 100%" in capsys.readouterr().err


def test_repetitions_follow_the_stated_noise():
    quiet, noisy = (plan("lecture", "--benchmark", "ior", "--noise", n)["repetitions"] for n in ("1%", "7%"))
    assert quiet == 3 < noisy  # t(2) x 1 % / sqrt(3) = 2.5 % of the mean; seeds/000: write noise 5-7 %
    from probes.core.stats import t_quantile

    assert t_quantile(noisy - 1) * 0.07 / noisy ** 0.5 <= 0.05 < t_quantile(noisy - 2) * 0.07 / (noisy - 1) ** 0.5


def test_check_against_a_plan_names_what_a_real_io500_run_followed_and_its_cached_share(corpus, tmp_path, capsys):
    folder = tmp_path / "p"
    assert main(["plan", "narval", "--benchmark", "ior", "--nodes", "640", "--ppn", "1", "--transfer-size", "2MiB",
                 "--noise", "5%", "-o", str(folder)]) == 0
    capsys.readouterr()
    runs = [str(corpus / "ior" / f"narval_io500_ior-3.4.0+dev_easy_{op}.txt") for op in ("write", "read")]
    assert main(["check", "--plan", str(folder / "plan.json"), *runs, "--json"]) == 1  # one repetition of 7 planned
    write, read = json.loads(capsys.readouterr().out)["runs"]
    items = {i["item"]: i for i in read["items"]}
    assert items["-C -Q 1"]["followed"] is True and items["nodes"]["followed"] is True
    assert items["transfer size"] == {"item": "transfer size", "planned": "2 MiB", "ran": "2 MiB", "followed": True}
    assert items["access"]["followed"] is True
    assert items["repetitions"] == {"item": "repetitions", "planned": "7", "ran": "1", "followed": False}
    assert {i["item"]: i["followed"] for i in write["items"]}["-e"] is True
    # the read's 6,054.69 TiB asked, 118.9 TiB moved by the stonewall: the 22 servers' 196 GB could hold 3.3 % of it
    plan = json.loads((folder / "plan.json").read_text())
    servers = sum(c["memory_bytes"][1] for c in plan["phases"][1]["caches"] if c["layer"] == "server memory")
    assert servers == pytest.approx(22 * 196e9)
    assert read["cached_share"][1] == pytest.approx(servers / 130681090867200.0)
    assert write["cached_share"] == [0.0, 0.0] and "measures the storage path" in write["meaning"]
    # its 127 GiB/s lies inside the ceiling's range: which end the storage reaches decides what a cache served
    assert "lies between the ceiling's least, 41.0 GiB/s, and its most, 512 GiB/s: no cache need have served it where " \
           "the storage reaches its most, and at least 68% of the bytes came from one where it reaches only its least" \
           in write["meaning"] and "at least 0%" not in write["meaning"]


def test_check_plan_refuses_a_file_that_is_not_a_plan(tmp_path, capsys):
    other = tmp_path / "x.json"
    other.write_text(json.dumps({"format": "iobound/prediction", "format_version": "1.3"}))
    assert main(["check", "--plan", str(other), "lecture-results.csv"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected an iobound/plan document" in err


def test_noise_from_a_recorded_probe_set_is_its_largest_bandwidth_spread():
    from probes.core.units import Metric
    from probes.measure.probeset import read_probe_set
    from topologies.bundled import EXAMPLES

    probes = EXAMPLES / "recorded" / "lab1-probes.json"
    spread = max(m.summary.std / m.summary.mean for m in read_probe_set(probes).values()
                 if m.metric is Metric.BANDWIDTH and m.summary.n > 1)
    doc = plan("lecture", "--benchmark", "fio", "--probes", str(probes))
    assert doc["settings"]["noise"] == pytest.approx(spread)
    assert doc["repetitions"] == plan("lecture", "--benchmark", "fio", "--noise", f"{spread:.10f}")["repetitions"]


# A server tier behind the file servers (RAID controllers with their own cache): dropping the servers' page caches
# and O_DIRECT leave it, so only the data set can outgrow it.
CONTROLLED = """
[clients.c]
count = 2
nic = "10 GbE"
memory = "4 GiB"
[networks.eth]
[servers.fs]
count = 2
nic = "10 GbE"
memory = "8 GiB"
[servers.raid]
count = 2
bandwidth = "2 GiB/s"
memory = "16 GiB"
[devices.hdd]
count = 8
bandwidth = "200 MiB/s"
"""


def test_a_controllers_cache_is_counted_and_only_the_data_set_defeats_it(topology, tmp_path):
    path = tmp_path / "controlled.toml"
    topology(CONTROLLED, links="c eth fs raid hdd", path=path)
    doc = plan(str(path), "--benchmark", "ior", "--drop-caches", "all", "--direct", "--data-set", "16GiB")
    read = doc["phases"][1]
    layers = {c["layer"]: c for c in read["caches"]}
    assert layers["controller cache"]["group"] == "raid" and layers["controller cache"]["means"] is None
    assert layers["server memory"]["means"] == "drop_servers" and layers["client page cache"]["means"] == "direct"
    assert read["cached_share"] == [1.0, 1.0]  # the controllers' 32 GiB hold all 16 GiB read
    sized = plan(str(path), "--benchmark", "ior", "--drop-caches", "all")["phases"][1]
    assert sized["amount"] >= 10 * 32 * 2**30 and sized["cached_share"][1] <= 0.1


def test_transfer_size_against_a_stated_block_size_and_capacity_against_the_devices(topology, tmp_path):
    path = tmp_path / "seed.toml"
    document = SEED_LUSTRE.replace('[devices.ost]', 'block_size = { value = "4 MiB", source = "datasheet", '
                                   'note = "seeds/000: peaks at 4 MiB" }\n[devices.ost]') + 'size = "1 TiB"\n'
    topology(document, links="c eth oss ost", path=path)
    fit = plan(str(path), "--benchmark", "ior")
    assert fit["phases"][0]["workload"]["transfer_size"] == {"value": 4 * 2**20, "unit": "B"}
    assert "1 x the block size 4 MiB" in fit["transfer_fit"]
    assert "not a whole number of blocks" in plan(str(path), "--benchmark", "ior", "--transfer-size", "1MiB")["transfer_fit"]
    assert fit["capacity_bytes"] == 2 * 2**40 and fit["stored_bytes"] == fit["phases"][0]["amount"]


@settings(max_examples=25, deadline=None)
@given(clients=st.integers(1, 16), client_gib=st.integers(1, 512), servers=st.integers(1, 8),
       server_gib=st.integers(1, 1024), share=st.sampled_from([0.05, 0.1, 0.5]))
def test_a_planned_read_outgrows_every_cache_and_leaves_at_most_the_share_asked(clients, client_gib, servers,
                                                                               server_gib, share):
    from models.plan import Settings, plan as planned
    from models.plan_phases import BENCHMARKS
    from models.predict import Model
    from probes.core.workload import Operation, Workload
    from tests.systems import topology

    system = topology({"clients": {"c": {"count": clients, "nic": "10 GbE", "memory": f"{client_gib} GiB"}},
                       "networks": {"eth": {}},
                       "servers": {"s": {"count": servers, "nic": "10 GbE", "memory": f"{server_gib} GiB"}},
                       "devices": {"d": {"count": servers, "bandwidth": "1 GiB/s"}}}, links="c eth s d")
    made = planned(Model(system), BENCHMARKS["ior"], Workload(Operation.WRITE, None, nodes=clients),
                   Settings(cached_share=share))
    write, read = made.phases
    memory = (made.nodes * client_gib + servers * server_gib) * 2**30  # the nodes it runs on: up to the knee
    assert read.amount == write.amount > memory
    assert read.cached_share[1] <= share + 1e-12 and write.cached_share == (0.0, 0.0)
    assert read.amount % (made.nodes * made.ppn * 2**20) == 0  # whole transfers of 1 MiB per process


def test_io500s_stonewall_may_leave_less_than_the_memory_for_its_reads():
    # IO500/io500 PR #91: the easy write's files must outgrow the caches for the reads; on Narval's 44 nodes at the
    # least the ranges allow (41 GiB/s), 300 s at 80 % write 9.6 TiB, and the 22 servers' 3.9 TiB may hold 41 % of it
    doc = plan("narval", "--benchmark", "io500")
    write, read = (next(p for p in doc["phases"] if p["name"] == name) for name in ("ior-easy-write", "ior-easy-read"))
    assert write["ends_by"] == "time" and write["wear_out_seconds"] == pytest.approx(300 * 0.1 / 0.9)
    assert read["amount"] == write["written"] < write["amount"]
    assert any(n.startswith("by the stonewall it may write only") for n in write["notes"])
    servers = sum(c["memory_bytes"][1] for c in read["caches"] if c["means"] is None)
    assert read["cached_share"][1] == pytest.approx(servers / read["amount"]) and read["cached_share"][1] > 0.1


def test_a_stonewall_given_stops_iors_and_elbenchos_writes_and_bounds_fios_runtime(tmp_path):
    ior = _commands(plan("lecture", "--benchmark", "ior", "--stonewall", "60")["files"]["ior.sh"], "ior")
    assert "-D" in ior[0] and ior[0][ior[0].index("-D") + 1] == "60" and "-D" not in ior[1]
    words = _commands(plan("lecture", "--benchmark", "elbencho", "--stonewall", "60")["files"]["elbencho.sh"], "elbencho")
    assert words[0][words[0].index("--timelimit") + 1] == "60"
    assert "runtime=60\n" in plan("lecture", "--benchmark", "fio", "--stonewall", "60")["files"]["job.fio"]


def test_fios_hang_guard_spans_all_its_loops():
    """fio's runtime= counts from the job's start over every loop: the guard is three times all the passes predicted
    and a minute, so that a plan of many repetitions is not cut short at three."""
    doc = plan("lecture", "--benchmark", "fio", "--noise", "7%")
    slowest = max(p["seconds_at_efficiency"][1] for p in doc["phases"])
    runtime = int(re.search(r"^runtime=(\d+)$", doc["files"]["job.fio"], re.M)[1])
    assert doc["repetitions"] > 3 and runtime == math.ceil(3 * doc["repetitions"] * slowest + 60)


def test_mlperf_plans_ask_whether_the_storage_feeds_the_accelerators():
    from models.accelerators import entry

    demand = entry("unet3d", "h100")
    asked = demand.per_accelerator.m_as("B/s") * demand.min_au
    fed = plan("narval", "--benchmark", "mlperf", "--model", "unet3d", "--accelerator", "h100", "--nodes", "1")
    training = next(p for p in fed["phases"] if p["name"] == "training")
    assert any("the storage delivers it, so they, not it, set the time" in n for n in training["notes"])
    assert training["seconds"][0] == pytest.approx(training["amount"] / asked)  # the accelerators' pace, not the ceiling
    starved = plan("lecture", "--benchmark", "mlperf", "--model", "unet3d", "--accelerator", "h100", "--ppn", "4")
    training = next(p for p in starved["phases"] if p["name"] == "training")
    assert any("so it sets the time, and the accelerators wait" in n for n in training["notes"])
    assert training["seconds"][0] == pytest.approx(training["amount"] / training["ceiling"]["ceiling"]["value"])


def _lru_share(blocks: int, cache: int, passes: int, random: bool, seed: int) -> float:
    """The share of ``passes`` x ``blocks`` reads a least-recently-used cache of ``cache`` blocks served, empty at the
    start: uniformly at random with replacement, else in order."""
    import random as chance
    from collections import OrderedDict

    draw = chance.Random(seed)
    held: OrderedDict[int, None] = OrderedDict()
    hits = 0
    for i in range(passes * blocks):
        block = draw.randrange(blocks) if random else i % blocks
        if block in held:
            hits += 1
            held.move_to_end(block)
        else:
            held[block] = None
            if len(held) > cache:
                held.popitem(last=False)
    return hits / (passes * blocks)


@pytest.mark.parametrize("cache, passes", [(100, 1), (100, 2), (100, 3), (40, 2), (160, 2), (200, 2), (300, 1)])
@pytest.mark.parametrize("random", [True, False])
def test_the_expected_cached_share_is_what_a_simulated_lru_cache_serves(cache, passes, random):
    """A read of 200 blocks from an empty cache: in order, none of a data set larger than the cache; at random, the
    share a least-recently-used cache served, averaged over five runs, within 2 points."""
    from models.plan import expected_share

    simulated = sum(_lru_share(200, cache, passes, random, seed) for seed in range(5)) / 5
    assert expected_share(cache, 200, passes, random) == pytest.approx(simulated, abs=0.02)


def test_a_random_fio_plan_reads_what_it_wrote_uniformly_and_names_the_share_expected(tmp_path):
    assert main(["plan", "lecture", "--benchmark", "fio", "--access", "random", "--cached-share", "50%", "--noise", "0",
                 "-o", str(tmp_path / "p")]) == 0
    doc = json.loads((tmp_path / "p" / "plan.json").read_text())
    write, read = doc["phases"]
    assert write["expected_share"] is None and read["cached_share"][1] == pytest.approx(0.5, abs=0.01)
    assert 0.4 < read["expected_share"][1] < 0.45  # two passes from an empty cache: it fills during the first
    ini = configparser.ConfigParser(interpolation=None, allow_no_value=True)  # fio's "stonewall" takes no value
    ini.read_string(doc["files"]["job.fio"])
    assert ini["global"]["filename_format"] == "iobound.$jobnum.$filenum"  # each read job reads its writer's file
    assert (ini["read"]["rw"], ini["read"]["norandommap"], ini["read"]["randrepeat"]) == ("randread", "1", "0")
    if shutil.which("fio"):
        done = subprocess.run(["fio", "--parse-only", str(tmp_path / "p" / "job.fio")], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr


def test_a_server_on_memory_has_no_cache_to_outgrow(topology, tmp_path):
    """A server whose store is memory (the lab's tmpfs) states memory 0 B: the plan counts no cache there, and the
    prediction and check of a run on it say so rather than divide by it."""
    text = SEED_LUSTRE.replace('memory = { value = "8 GiB", source = "datasheet", note = "seeds/001" }',
                               'memory = { value = "0 B", source = "datasheet", note = "tmpfs" }')
    path = tmp_path / "tmpfs.toml"
    topology(text, links="c eth oss ost", path=path)
    read = plan(str(path), "--benchmark", "ior", "--nodes", "4", "--ppn", "6")["phases"][1]
    servers = next(c for c in read["caches"] if c["layer"] == "server memory")
    assert servers["memory_bytes"] == [0, 0] and servers["stated"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["predict", str(path), "--op", "read", "--data-set", "1GiB", "--json"]) == 0
    caches = json.loads(out.getvalue())["caches"]
    assert {"layer": "server cache", "applies": False, "reason": "no memory to cache in"}.items() <= next(
        c for c in caches if c["layer"] == "server cache").items()
    bare = tmp_path / "bare.toml"  # the clients' memory not stated: the servers' none is all that is known
    clients = 'memory = { value = "8 GiB", source = "datasheet", note = "seeds/001: -b 1g on 24 processes is 0.5x the memory" }'
    assert clients in text
    topology(text.replace(clients, ""), links="c eth oss ost", path=bare)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # a run's data set against no memory: no SMALL-DATA-SET, no error
        assert main(["check", str(bare), "tests/data/readers/fio-3.33_json_seqwrite.json", "--json",
                     "--fail-on", "never"]) == 0
    assert "SMALL-DATA-SET" not in out.getvalue()


def test_the_share_a_cache_served_is_read_from_the_rate_against_the_ceiling():
    from assess.plan_check import measured_share
    from probes.readers import fio as fio_output

    path = "tests/data/readers/fio-3.33_json_seqwrite.json"
    run = fio_output.parse(open(path).read(), source=path)[0]
    rate = run.value.m_as("B/s")

    def ceiling(low, high):
        return {"ceiling": {"value": high, "unit": "B/s"}, "low": {"ceiling": {"value": low, "unit": "B/s"}}}

    assert measured_share(ceiling(rate / 4, rate / 2), run) == pytest.approx((0.5, 0.75))  # twice its ceiling: half
    assert measured_share(ceiling(rate, rate * 1.2), run) == (0.0, 0.0)  # at its ceiling: none


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fios_loops_are_the_repetitions_check_plan_counts_and_its_end_fsync_is_seen(tmp_path, capsys):
    """fio sums its loops into one result: the plan's fio file asks for its repetitions so, and check --plan reads
    them, and the writes' end_fsync, from fio's own output."""
    assert main(["plan", "lecture", "--benchmark", "fio", "--noise", "0", "-o", str(tmp_path / "p")]) == 0
    output = tmp_path / "fio.json"
    subprocess.run(["fio", "--name=write", "--rw=write", "--bs=64k", "--size=1m", "--loops=2", "--end_fsync=1",
                    f"--directory={tmp_path}", "--output-format=json", f"--output={output}"], check=True, timeout=60,
                   capture_output=True)
    capsys.readouterr()
    assert main(["check", "--plan", str(tmp_path / "p" / "plan.json"), str(output), "--json"]) == 1  # its data set
    items = {i["item"]: i for i in json.loads(capsys.readouterr().out)["runs"][0]["items"]}
    assert items["repetitions"] == {"item": "repetitions", "planned": "2", "ran": "2 loops in one result",
                                    "followed": True}
    assert items["end_fsync=1"]["followed"] is True and items["data set"]["followed"] is False
    # planned with 1 MiB requests, run with 64 KiB ones: not the workload the plan's ceiling is for
    assert items["transfer size"] == {"item": "transfer size", "planned": "1 MiB", "ran": "64 KiB", "followed": False}
