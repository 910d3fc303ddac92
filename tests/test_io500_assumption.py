"""io500's assumption that the easy write's files exceed the clients' memory, judged by `iobound review` on a list
whose rows state the clients' memory: held, not held, not shown (the phase's time not stated), and not stated."""

from __future__ import annotations

import csv
import html
import io
import json
from dataclasses import replace

import pytest

from probes.readers.io500_system import read_list
from assess.cli import main
from assess.review import review

# Four submissions of 10 client nodes whose ior-easy-write ran 2.5 GiB/s (at least 75 GiB per node over io500's 300 s):
# clients of 64 GB (59.6 GiB: it held), of 4 TB (not shown: the phase would have to run 14,901 s), memory not stated,
# and a description too thin for a topology (one node: at least 300 GiB written on it).
LIST = """id,information_system,information_institution,information_filesystem_type,information_client_nodes,\
information_client_procs_per_node,information_client_volatile_memory_capacity,information_ds_nodes,\
information_ds_storage_devices,information_ds_storage_type,information_ds_network,information_md_nodes,\
information_md_storage_type,information_list_name,status,ior_easy_write,ior_easy_read
1,A,Site,Lustre,10,16,64 GB,4,12,HDD,InfiniBand EDR,1,SSD,sc19,VALID,2.5,3.1
2,B,Site,Lustre,10,16,4 TB,4,12,HDD,InfiniBand EDR,1,SSD,sc19,VALID,2.5,3.1
3,C,Site,Lustre,10,16,,4,12,HDD,InfiniBand EDR,1,SSD,sc19,VALID,2.5,3.1
4,D,Site,,1,16,,,,,,,,sc19,VALID,1.0,2.0
"""


@pytest.fixture
def listed(tmp_path):
    path = tmp_path / "list.csv"
    path.write_text(LIST, encoding="utf-8")
    return path


def test_the_stated_client_memory_is_the_clients_in_the_topology_and_the_assumption_holds_or_is_not_shown():
    reviewed = {r.submission.id: r for r in review(read_list(LIST, source="list.csv"))}
    clients = reviewed["1"].described.topology.group("clients")
    assert clients.capacity("memory").value.m_as("GB") == 64
    assert {i: r.assumption.state for i, r in reviewed.items()} == {
        "1": "held", "2": "not shown", "3": "memory not stated", "4": "memory not stated"}
    assert str(reviewed["1"].assumption) == "held: ≥ 75 GiB written per client node > 59.6 GiB of memory"
    assert str(reviewed["2"].assumption) == ("not shown: ≥ 75 GiB written per client node ≤ 3.64 TiB of memory; it "
                                             "holds if the easy write ran more than 14901 s")
    assert str(reviewed["4"].assumption) == ("memory not stated: it breaks only with more than 300 GiB of memory per "
                                             "client node")


def test_where_the_easy_writes_time_is_stated_the_assumption_did_not_hold_on_clients_of_more_memory():
    timed = []
    for s in read_list(LIST, source="list.csv")[:2]:  # its ior-easy-write ran 300 s: 75 GiB on each node, no more
        timed.append(replace(s, runs=tuple(replace(r, durations=(300.0,)) if r.label == "ior-easy-write" else r
                                           for r in s.runs)))
    held, not_held = (r.assumption for r in review(timed))
    assert (held.state, held.least, not_held.state) == ("held", False, "not held")
    assert str(not_held) == "not held: 75 GiB written per client node ≤ 3.64 TiB of memory"


def test_review_says_it_in_its_text_json_csv_and_pages(listed, tmp_path, capsys):
    assert main(["review", str(listed), "--fail-on", "never", "--html", str(tmp_path / "report")]) == 0
    out = capsys.readouterr().out
    assert "the easy write's files against the client memory stated:\n  1 A (Site): held: ≥ 75 GiB" in out
    assert ("the easy write's files exceeded client memory (io500's assumption): held in 1, not in 0, not shown in 1, "
            "memory not stated in 2 (would break above 75 GiB to 300 GiB of memory per client node, as each wrote)"
            ) in out
    page = html.unescape((tmp_path / "report" / "submissions" / "2.html").read_text(encoding="utf-8"))
    assert "files exceed the clients' memory: not shown: ≥ 75 GiB written per client node" in page
    assert main(["review", str(listed), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)["submissions"][0]["easy_write_past_client_memory"]
    assert first == {"state": "held", "written_per_node": {"value": pytest.approx(75.0), "unit": "GiB"},
                     "written_is_least": True, "client_memory": {"value": 64, "unit": "GB"},
                     "easy_read_above_ceiling": False}
    assert main(["review", str(listed), "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {(r["id"], r["easy_write_per_node_GiB"], r["client_memory_GiB"], r["easy_write_past_client_memory"])
            for r in rows} == {("1", "≥ 75", "59.6046", "held"), ("2", "≥ 75", "3725.29", "not shown"),
                               ("3", "≥ 75", "", "memory not stated"), ("4", "≥ 300", "", "memory not stated")}


def test_an_easy_read_above_its_ceiling_is_named_beside_the_assumption_as_a_hint_not_a_verdict():
    text = LIST.replace("VALID,2.5,3.1\n3,", "VALID,2.5,950\n3,", 1)  # B's easy read: 950 GiB/s through 40 ports
    b = next(r for r in review(read_list(text, source="list.csv")) if r.submission.id == "2")
    assert b.assumption.read_above and b.assumption.state == "not shown"
    assert str(b.assumption).endswith("; its ior-easy-read is above its ceiling: a cache may have served it")
