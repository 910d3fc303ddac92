"""KV-cache offload (issue 37, item 2): a serving node's tiers in the topology, each tier's ceiling for a block size and
a request rate, LMCache's and kv-cache.py's outputs read, and a "storage" figure above the storage tier flagged as
served by memory, from their real lines (tests/data/kvcache/SOURCES.md says where each comes from)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from probes.core.errors import TopologyError, ToolOutputError
from probes.core.units import Q_
from probes.core.workload import Operation
from probes.readers import read_results
from probes.readers import kvcache as kv_reader
from probes.readers import lmcache
from topologies.load import load_topology, parse_topology
from models.kvcache import predict_kv, served_by, token_bytes
from assess.check import check_runs
from tests.commands import command_refusal

DATA = Path(__file__).resolve().parent / "data" / "kvcache"
NODE = DATA / "h100-nvl-node.toml"
PR1740 = DATA / "lmcache-pr1740-cpu-offload.log"  # LMCache's CPU-offload example: a 44.4 GiB/s store
ISSUE2262 = DATA / "lmcache-issue2262-store.log"  # three stores of 2048 tokens, 12.1 to 14.8 GiB/s
REQ_ID = DATA / "lmcache-0.5.6-req-id.log"  # LMCache 0.5.6's lines, each after its [req_id=...], coloured as it logs
KV_CACHE_PY = DATA / "kv-cache-v3.0_tiny-1b_storage-only.json"  # kv-cache.py, every block on its storage tier


def _node(local: str) -> str:
    """The validation node's topology with its NVMe tier stated otherwise (``local``: the tier's keys)."""
    text = NODE.read_text(encoding="utf-8")
    head, _, _ = text.partition("[kv_cache.local]")
    return f'{head}[kv_cache.local]\ntier = "nvme"\n{local}\n'


def _codes(judgement) -> list[str]:
    return [f.code for f in judgement.findings]


# --- the topology --------------------------------------------------------------------------------------------------

def test_a_topology_holds_its_serving_nodes_tiers_fastest_first_with_their_sources():
    topology = load_topology(NODE)
    assert [(t.name, t.tier.value) for t in topology.kv_cache] == [("hbm", "gpu"), ("dram", "host"), ("local", "nvme")]
    hbm, dram, local = topology.kv_cache
    assert hbm.rate("write").value == Q_(3350, "GB/s") and hbm.size.value == Q_(95830, "MiB")
    # the host tier states no rate: the GPU reaches it over PCIe 5.0 x16, whose nameplate is the most it carries
    assert dram.rate("read").value == Q_(3938 * 16, "MB/s") and dram.rate("read").source.kind == "datasheet"
    assert "PCIe 5.0 x16 nameplate" in dram.rate("read").source.note
    assert local.rate("write").value == Q_(14000, "MB/s")
    body = topology.to_dict()["kv_cache"]
    assert [t["tier"] for t in body] == ["gpu", "host", "nvme"] and body[2]["rates"]["bandwidth"]["source"] == "datasheet"


def test_an_unstated_drive_rate_is_the_range_of_its_class_in_the_dated_catalogue():
    topology = parse_topology(_node('count = 2\ndrive = "nvme"\nyear = 2023'))
    local = topology.kv_cache[-1]
    write = local.rate("write")
    # achievable.toml's NVMe drives shipped by 2023: the slowest writes 1.9 GB/s (P3700), the fastest 11.8 (T700)
    assert write.range == (Q_(1900, "MB/s"), Q_(11800, "MB/s")) and write.assumed
    assert "Crucial T700" in write.source.note and local.rate("read").range[1] == Q_(13000, "MB/s")
    # and no more than the link its drives sit on
    capped = parse_topology(_node('drive = "nvme"\nyear = 2025\nlink = "pcie-4.0-x4"')).kv_cache[-1]
    assert capped.rate("read").range[1] == Q_(4 * 1969, "MB/s")


def test_the_topology_command_lists_the_tiers(capsys):
    from assess.cli import main

    assert main(["topology", str(NODE)]) == 0
    out = capsys.readouterr().out
    assert "KV-cache tiers (fastest first):" in out and "  local (nvme, 1 per node): size 7 TB" in out
    assert "  dram (host, 1 per node): size 256 GB (datasheet: validation_results.md: 16 x 16 GB DDR5-4800); bandwidth" in out


def test_the_tiers_survive_a_round_trip_through_the_saved_toml():
    from topologies.load import topology_from_dict
    from topologies.save import topology_document

    for topology in (load_topology(NODE), parse_topology(_node('count = 2\ndrive = "nvme"\nyear = 2023'))):
        again = topology_from_dict(topology_document(topology))
        assert topology_document(again) == topology_document(topology)
        assert [(t.name, t.tier, t.count, t.size, t.rates) for t in again.kv_cache] == \
            [(t.name, t.tier, t.count, t.size, t.rates) for t in topology.kv_cache]


@pytest.mark.parametrize("local, where, says", [
    ('bandwidth = "7 GB/s"\nkind = "ssd"', "kv_cache.local.kind", "unknown key 'kind'"),
    ('size = "7 TB"', "kv_cache.local", "states no rate"),
    ('drive = "nvme"\nyear = 2005', "kv_cache.local.drive", "lists no 'nvme' drive shipped by 2005"),
    ('drive = "nvme-gen9"', "kv_cache.local.drive", "lists no 'nvme-gen9' drive; give the class"),
    ('link = "pcie-9.0-x4"', "kv_cache.local.link", "must name a PCIe link"),
    ('link = "pcie-4.0-x3"', "kv_cache.local.link", "W one of 1, 2, 4, 8, 16"),
    ('bandwidth = "unlimited"', "kv_cache.local.bandwidth", "must be a figure"),
    ('bandwidth = "7 GB/s"\ncount = 0', "kv_cache.local.count", "must be a whole number"),
])
def test_a_wrong_tier_is_refused_in_one_line_naming_its_key(local, where, says):
    with pytest.raises(TopologyError) as err:
        parse_topology(_node(local), source="node.toml")
    assert f"node.toml: {where}: " in str(err.value) and says in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(TopologyError, match="must be one of gpu, host, nvme, shared"):
        parse_topology(_node('bandwidth = "7 GB/s"').replace('tier = "nvme"', 'tier = "tape"'))


# --- predict ---------------------------------------------------------------------------------------------------------

def test_kv_cache_pys_models_bytes_per_token():
    # kv-cache.py: layers x KV heads x head dimension x 2 (K and V) x 2 bytes (float16)
    assert token_bytes("llama3.1-8b") == Q_(32 * 8 * 128 * 4, "B") == Q_(128, "KiB")
    assert token_bytes("llama3.1-70b-instruct") == Q_(320, "KiB") and token_bytes("gpt-oss-120b") == Q_(36 * 8 * 64 * 4, "B")
    with pytest.raises(KeyError, match="llama3.1-8b"):
        token_bytes("gpt-5")


def test_each_tiers_ceiling_in_blocks_bytes_and_tokens_and_the_slowest_tier_reached_binds():
    topology = load_topology(NODE)
    block, token = Q_(32, "MiB"), token_bytes("llama3.1-8b")
    found = predict_kv(topology, block, Q_(200, "op/s"), token_size=token)
    hbm, dram, local = found.tiers
    assert local.blocks[1] == (Q_(14000, "MB/s") / block * Q_(1, "op")).to("op/s")
    assert local.tokens[1] == pytest.approx(14e9 / 131072)
    assert found.demand == (200 * block / Q_(1, "s")).to("B/s")
    assert found.binding is local and [c.keeps_up for c in found.tiers] == ["yes", "yes", "yes"]
    assert (local.holds, dram.holds) == (Q_(7, "TB"), Q_(256, "GB"))
    assert (dram.holds_blocks, dram.holds_tokens) == (256 * 10**9 // 2**25, 256 * 10**9 // 2**17)
    # a working set the GPU's memory holds never reaches the host or the drive: the HBM binds
    small = predict_kv(topology, block, Q_(200, "op/s"), working_set=Q_(50, "GB"))
    assert [c.reached for c in small.tiers] == [True, False, False] and small.binding.rate.tier.name == "hbm"
    # more requests than the drive takes: it does not keep up
    busy = predict_kv(topology, block, Q_(1000, "op/s"))
    assert busy.tiers[-1].keeps_up == "no" and busy.tiers[1].keeps_up == "yes"


def test_a_ranged_tier_keeps_up_only_if_its_range_is_high_enough():
    topology = parse_topology(_node('drive = "nvme"\nyear = 2023'))
    found = predict_kv(topology, Q_(32, "MiB"), Q_(100, "op/s"))  # 3.36 GB/s: within 1.9 to 11.8 GB/s of writes
    assert found.tiers[-1].keeps_up == "only if" and found.binding.rate.least == Q_(1900, "MB/s")
    assert not found.binding.rate.stated


def test_a_shared_tier_without_a_rate_is_the_topologys_own_storage_for_one_node():
    from models.predict import Model
    from probes.core.workload import Workload

    text = _node('bandwidth = "14 GB/s"') + '\n[kv_cache.lustre]\ntier = "shared"\nsize = "1 PB"\n'
    topology = parse_topology(text)
    found = predict_kv(topology, Q_(32, "MiB"), Q_(100, "op/s"))
    shared = found.tiers[-1].rate
    assert shared.most == Model(topology).ceiling(Workload(Operation.WRITE, Q_(32, "MiB"), nodes=1), ("node",)).value
    assert "the topology's storage for one node of node" in shared.said


def test_predict_prints_each_tier_and_its_json_is_versioned(capsys):
    from assess.cli import main

    argv = ["predict", str(NODE), "--kv-cache", "32MiB", "--request-rate", "200", "--kv-model", "llama3.1-8b"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "local  nvme     14 GB/s" in text and "<- binds" in text and "binds:     local (nvme)" in text
    assert main([*argv, "--op", "read", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["format"], doc["format_version"], doc["operation"], doc["binds"]) == ("iobound/kv-cache", "1.0", "read", "local")
    assert doc["tiers"][0]["tokens_per_second"][1] == pytest.approx(3350e9 / 131072)


@pytest.mark.parametrize("extra, says", [
    (["--request-rate", "0"], "--request-rate: must be requests per second above 0"),
    (["--request-rate", "10", "--kv-model", "gpt-5"], "no KV-cache model 'gpt-5'"),
    (["--request-rate", "10", "--op", "create"], "stores (--op write) or fetches (--op read)"),
    (["--request-rate", "10", "--kv-model", "llama3.1-8b", "--token-size", "1KiB"], "not both"),
])
def test_a_wrong_kv_cache_question_is_refused_in_one_line(extra, says, capsys):
    assert says in command_refusal(["predict", str(NODE), "--kv-cache", "32MiB", *extra], capsys)


def test_a_topology_without_tiers_is_told_how_to_state_them(capsys):
    assert "states no KV-cache tiers" in command_refusal(["predict", "lecture", "--kv-cache", "32MiB",
                                                          "--request-rate", "10"], capsys)


# --- the readers -----------------------------------------------------------------------------------------------------

def test_lmcache_lines_are_one_run_per_operation_and_chunk_in_gib_per_second():
    runs = read_results(ISSUE2262)
    (store,) = runs
    assert store.origin.tool == "lmcache" and store.unit == "GiB/s" and store.label == "lmcache store 2048 tokens"
    assert store.samples == (14.8007, 12.1196, 12.9121) and store.durations == pytest.approx((0.0147797, 0.0180493, 0.0169415))
    assert store.workload.operation is Operation.WRITE and store.workload.transfer_size == Q_(0.2188, "GiB")
    # LMCache's throughput is its size over its cost, both binary: 0.2188 GiB / 14.7797 ms
    assert 0.2188 / 0.0147797 == pytest.approx(store.samples[0], rel=1e-3)
    store, retrieve = read_results(PR1740)
    assert (store.samples, retrieve.samples) == ((44.4144,), (41.1230,))
    assert retrieve.workload.operation is Operation.READ and retrieve.origin.line == 2


def test_lmcaches_newer_lines_after_their_request_id_are_read_too():
    """LMCache 0.5.6 begins each line with ``[req_id=...]`` and says its store's size in "GB" (binary, as "gb" was);
    its formatter colours the level, so a log written to a file holds an escape after ``LMCache INFO:``."""
    store, retrieve = read_results(REQ_ID)
    assert (store.label, store.samples, store.durations) == ("lmcache store 256 tokens", (12.5,), (0.0025,))
    assert store.workload.transfer_size == Q_(0.0312, "GiB") and store.workload.operation is Operation.WRITE
    assert (retrieve.label, retrieve.samples, retrieve.origin.line) == ("lmcache retrieve 512 tokens", (15.625,), 2)


def test_lmcaches_older_store_line_states_no_size_its_throughput_times_its_time_does():
    (run,) = lmcache.parse("LMCache INFO: Store 1792 tokens takes: 2.2906 ms, throughput: 10.0000 GB/s; "
                           "offload_time: 2.0 ms, put_time: 0.2 ms", source="old.log")
    assert run.workload.transfer_size == Q_(10 * 0.0022906, "GiB") and run.label == "lmcache store 1792 tokens"


def test_kv_cache_py_results_are_a_run_per_tier_that_moved_data():
    runs = read_results(KV_CACHE_PY)
    assert [(r.label, dict(r.tags)["kv_tier"]) for r in runs] == [("kv-cache storage read", "storage"),
                                                                 ("kv-cache storage write", "storage")]
    stats = json.loads(KV_CACHE_PY.read_text(encoding="utf-8"))["summary"]["cache_stats"]
    assert runs[0].samples == (stats["tier_storage_read_bandwidth_gbps"],) and runs[0].unit == "GiB/s"
    # its "gbps" is GiB over the run: the bytes it read over its elapsed time
    summary = json.loads(KV_CACHE_PY.read_text(encoding="utf-8"))["summary"]
    assert stats["tier_storage_kv_bytes_read_gb"] / summary["elapsed_time"] == pytest.approx(runs[0].samples[0])


@pytest.mark.parametrize("reader, text, where", [
    (lmcache, "LMCache INFO: Storing KV cache for 2048 out of 20480 tokens", ""),
    (kv_reader, '{"summary": {"cache_stats": {"tier_gpu_read_bandwidth_gbps": 1}}}', "summary.cache_stats.tier_gpu_write_bandwidth_gbps"),
    (kv_reader, '{"summary": {"cache_stats": {' + ", ".join(f'"tier_{t}_{o}_bandwidth_gbps": 0' for t in ("gpu", "cpu", "storage")
                                                             for o in ("read", "write")) + "}}}", "summary.cache_stats"),
])
def test_a_reader_refuses_what_is_not_its_output_in_one_line(reader, text, where):
    with pytest.raises(ToolOutputError) as err:
        reader.parse(text, source="x.log")
    assert str(err.value).startswith(f"x.log: {where}") and "\n" not in str(err.value)


# --- check: a "storage" figure above the storage tier came from memory ----------------------------------------------

def test_lmcaches_44_gib_per_second_store_is_served_by_memory_not_the_nvme_tier():
    """The done-when case: LMCache's 44.4 GiB/s store (47.7 GB/s) on a node whose NVMe tier states 14 GB/s is an
    error, and the host tier (63 GB/s over PCIe 5.0 x16) is named as what explains it."""
    topology = load_topology(NODE)
    store, retrieve = check_runs(topology, read_results(PR1740))
    (finding,) = [f for f in store.findings if f.code == "MEMORY-SERVED"]
    assert finding.severity.label == "error" and finding.evidence["memory_tier"] == "dram"
    assert finding.evidence["storage_tier"] == "local" and finding.evidence["beyond"] == "stated"
    assert "47.7 GB/s stored is more than the storage tier 'local' states, 14 GB/s" in finding.message
    assert "the host tier 'dram' (63.0 GB/s" in finding.message
    assert "MEMORY-SERVED" in _codes(retrieve)


def test_on_an_unstated_nvme_rate_the_verdict_says_what_the_range_implies():
    runs = read_results(PR1740)[:1] + read_results(ISSUE2262)
    # one drive of any NVMe class shipped by 2025: at most 14 GB/s of writes, so 47.7 GB/s is beyond every one of them
    one = check_runs(parse_topology(_node('drive = "nvme"\nyear = 2025')), runs)
    (beyond,) = [f for f in one[0].findings if f.code == "MEMORY-SERVED"]
    assert beyond.severity.label == "warning" and beyond.evidence["beyond"] == "range"
    assert "can give at most (the greatest of its range)" in beyond.message
    # four of them: 15.9 GB/s lies within 7.6 to 56 GB/s, so the drives gave it only if they write at least that much
    four = check_runs(parse_topology(_node('count = 4\ndrive = "nvme"\nyear = 2025')), runs)
    (implied,) = [f for f in four[1].findings if f.code == "MEMORY-SERVED"]
    assert implied.severity.label == "info" and implied.evidence["beyond"] == "implied"
    assert "the storage gave it only if it moves at least 15.9 GB/s" in implied.message
    (also,) = [f for f in four[0].findings if f.code == "MEMORY-SERVED"]  # 47.7 GB/s: within the four's range too
    assert also.severity.label == "info" and "at least 47.7 GB/s" in also.message


def test_a_figure_the_storage_tier_can_give_is_not_flagged():
    topology = load_topology(NODE)
    judged = check_runs(topology, read_results(KV_CACHE_PY))  # 0.35 GiB/s read from kv-cache.py's storage tier
    assert all("MEMORY-SERVED" not in _codes(j) for j in judged)
    assert all(j.no_ceiling == "judged against the node's KV-cache tiers" for j in judged)
    served = served_by(topology, Q_(13, "GB/s"), Operation.WRITE, Q_(32, "MiB"), 0.05)
    assert served.beyond is None and served.storage.tier.name == "local"


def test_a_memory_tiers_own_figure_and_a_topology_without_tiers_are_judged_as_before():
    topology = load_topology(NODE)
    (store,) = read_results(ISSUE2262)
    gpu = replace(store, tags=(("kv_tier", "gpu"),))  # kv-cache.py's GPU tier: memory, no storage claim
    (judged,) = check_runs(topology, [gpu])
    assert "MEMORY-SERVED" not in _codes(judged) and judged.no_ceiling != "judged against the node's KV-cache tiers"
    (plain,) = check_runs(replace(topology, kv_cache=()), [store])
    assert "MEMORY-SERVED" not in _codes(plain)


def test_check_prints_the_memory_served_verdict(capsys):
    from assess.cli import main

    assert main(["check", str(NODE), str(PR1740), "--fail-on", "error"]) == 1
    out = capsys.readouterr().out
    assert "error   MEMORY-SERVED  lmcache store 3866 tokens" in out and "memory served it, not storage" in out
