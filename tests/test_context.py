"""The benchmark's own context in the findings: who reads what was written (IOR -C, mdtest -N) and fsync (IOR -e)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from probes.readers import ior, mdtest
from assess.check import check_runs
from tests.systems import topology

# Narval's 640 client nodes with 256 GiB each: 160 TiB of client memory; the servers' memory is set per test.
SYSTEM = """
clients.c = {{ count = 640, nic = "25 Gbit/s", memory = "256 GiB" }}
networks.net = {{}}
servers.s = {{ count = {servers}, nic = "unlimited", memory = "2 TiB" }}
devices.d = {{ count = 80, bandwidth = "10 GiB/s" }}
"""


def _ior(corpus, name):
    [run] = ior.parse((corpus / "ior" / name).read_text(encoding="utf-8"), source=name)
    return run


def _found(system, run, code):
    [judgement] = check_runs(topology(system, links="c net s d"), [run])
    return [f for f in judgement.findings if f.code == code]


def test_a_read_by_another_node_is_judged_against_the_servers_memory_alone(corpus):
    # io500's ior-easy-read on Narval: 640 nodes x 1, "-C -Q 1", 118.9 TiB read ("actual aggregate bytes moved").
    read = _ior(corpus, "narval_io500_ior-3.4.0+dev_easy_read.txt")
    assert dict(read.tags)["read_by_other_node"] == "IOR -C -Q 1"
    # 2 servers x 2 TiB: only the clients' 160 TiB could hold the data set, and no reader's cache has its part.
    assert _found(SYSTEM.format(servers=2), read, "SMALL-DATA-SET") == []
    # Without -C the clients' memory counts, and the same data set is too small for it.
    own = replace(read, tags=tuple((k, v) for k, v in read.tags if k != "read_by_other_node"))
    [small] = _found(SYSTEM.format(servers=2), own, "SMALL-DATA-SET")
    assert "is 0.72x the clients' and servers' memory (164 TiB)" in small.message
    # 40 servers x 2 TiB hold 80 TiB: the servers' memory alone can serve the read.
    [small] = _found(SYSTEM.format(servers=40), read, "SMALL-DATA-SET")
    assert small.message == (
        "POSIX file-per-process read: its data set of 119 TiB is 1.5x the servers' memory (80 TiB), under the 2x "
        "that keeps caches from holding it; the clients' memory is left out, as each task reads what a task on "
        "another node wrote (IOR -C -Q 1).")
    assert (small.evidence["memory_of"], small.evidence["memory_B"]) == ("servers'", 80 * 2**40)


def test_a_write_fsynced_on_close_is_judged_against_the_servers_memory_alone(corpus):
    write = _ior(corpus, "narval_io500_ior-3.4.0+dev_easy_write.txt")  # "-e", the same 118.9 TiB
    assert _found(SYSTEM.format(servers=2), write, "SMALL-DATA-SET") == []
    [small] = _found(SYSTEM.format(servers=40), write, "SMALL-DATA-SET")
    assert small.message.endswith("the clients' memory is left out, as the writes are flushed to the servers "
                                  "before the phase ends (IOR -e).")


def test_without_the_servers_memory_nothing_is_left_to_compare_with(corpus):
    read = _ior(corpus, "narval_io500_ior-3.4.0+dev_easy_read.txt")
    unstated = SYSTEM.format(servers=2).replace(', memory = "2 TiB"', "")
    assert _found(unstated, read, "SMALL-DATA-SET") == []


@pytest.mark.parametrize("folder, name, label, fires", [
    # IOR "-C -e" on 1 node x 16 reads back what its own node wrote; on 52 nodes x 20 the next node reads it.
    ("ior", "knowext_ior-3.3.0_json_mpiio_fpp_b4m_t2m_s5_i5.json", "mpiio file-per-process read", True),
    ("ior", "knowext_ior-3.3.0_json_mpiio_fpp_b64m_t2m_s5_i5.json", "mpiio file-per-process read", False),
    # mdtest without -N stats the files each task created; with -N 32 on 32 processes per node, the next node's.
    ("mdtest", "cirrus_mdtest-1.9.3_mp-sf-sd_4nodes.log", "File stat", True),
    ("mdtest", "csd3_mdtest-1.9.3_mp-mf-sd_8nodes.log", "File stat", False),
])
def test_own_writes_are_flagged_only_where_the_readers_sit_on_the_writers_nodes(corpus, folder, name, label, fires):
    reader = ior if folder == "ior" else mdtest
    runs = {r.label: r for r in reader.parse((corpus / folder / name).read_text(encoding="utf-8"), source=name)}
    found = _found(SYSTEM.format(servers=2), runs[label], "OWN-WRITES")
    assert bool(found) is fires
    if fires:
        assert found[0].message.startswith(f"{label} reads what the same tasks have just written (")


def test_a_read_by_another_node_is_never_an_own_write(corpus):
    read = _ior(corpus, "narval_io500_ior-3.4.0+dev_easy_read.txt")
    both = replace(read, tags=read.tags + (("reads_own_writes", "no -C"),))
    assert _found(SYSTEM.format(servers=2), both, "OWN-WRITES") == []
    alone = replace(read, tags=(("reads_own_writes", "no -C"),))
    assert [f.code for f in _found(SYSTEM.format(servers=2), alone, "OWN-WRITES")] == ["OWN-WRITES"]
