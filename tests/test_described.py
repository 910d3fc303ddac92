"""Real descriptions read whole (issue 32): io500's in any spelling of the list, its list's rows checked whole, and
MLPerf Storage's in every published form, on the shared corpus and on descriptions of each form the tests write."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from probes.core.errors import ToolOutputError, UnitError
from probes.readers.io500_system import Description, read_list
from probes.readers.mlperf_system import read_mlperf_description
from topologies.catalogues.hardware import network_ports
from topologies.described.io500 import describe
from topologies.described.mlperf import describe_system, is_system_description, system_topology
from tests.test_review import listed  # noqa: F401 - the list database's fixture

def _description(**fields) -> Description:
    return Description({key: str(value) for key, value in fields.items()}, "given")


_STATED = dict(client_nodes=10, ds_nodes=4, ds_network="InfiniBand EDR", ds_storage_devices=12, ds_storage_type="HDD",
               filesystem_type="Lustre", md_nodes=2, md_storage_type="SSD")


# --- io500 --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, rate, ports", [
    ("100gE", 100, None), ("100GE", 100, None), ("40 Gb", 40, None), ("dual 25GbE", 25, 2), ("25GbE x2", 25, 2),
    ("2x HDR100", 100, 2), ("IB EDR", 100, None), ("OPA", 100, None), ("Infiniband 100 GBit", 100, None),
    ("100 Gbit/s Ethernet", 100, None), ("100 Gb/s Ethernet", 100, None), ("10 Gb/sec Ethernet", 10, None)])
def test_a_networks_speed_is_read_in_any_spelling_of_the_list(text, rate, ports):
    network = network_ports(text)
    assert (network.low.m_as("Gbit/s"), network.high.m_as("Gbit/s"), network.ports) == (rate, rate, ports)


@pytest.mark.parametrize("text", ["-100 GBit", "0 Gb", "40000 Gbps"])
def test_a_negative_zero_or_absurd_speed_is_refused(text):
    with pytest.raises(UnitError, match="states a speed no network port has"):
        network_ports(text)


def test_the_storage_interface_wins_over_a_generic_device_word():
    described = describe(_description(**_STATED | dict(ds_storage_type="SSD", ds_storage_interface="NVMe")))
    note = described.document["devices"]["storage"]["bandwidth"]["note"]
    assert "nvme:" in note and "ssd:" not in note
    sata = describe(_description(**_STATED | dict(ds_storage_type="SSD", ds_storage_interface="SATA")))
    assert "ssd:" in sata.document["devices"]["storage"]["bandwidth"]["note"]  # SATA would narrow it: not taken


def test_an_unstated_client_network_is_a_range_named_as_an_assumption_not_the_servers_network():
    described = describe(_description(**_STATED))
    nic = described.topology.group("clients").capacity("nic")
    assert nic.source.kind == "assumption" and [q.m_as("Gbit/s") for q in nic.range] == [1, 6400]
    assert any(a.startswith("clients.nic: the clients' network is not stated (client_network)")
               for a in described.assumptions)
    # up to eight ports of any network, each held to the ports that had shipped by the run's date where it implies more
    ports = described.parts["clients"]
    assert (ports.kind, ports.most, ports.classes) == ("port", 8, ("ethernet", "infiniband", "omni-path", "slingshot"))
    stated = describe(_description(**_STATED, client_network="100GbE"))
    assert stated.topology.group("clients").capacity("nic").range[0].m_as("Gbit/s") == 100


def test_vast_metadata_nodes_are_the_data_paths_front_end():
    described = describe(_description(**_STATED | dict(filesystem_type="VAST", md_nodes=8, md_storage_type="")))
    links = [link["between"] for link in described.document["links"]]
    assert ["fabric", "metadata"] in links and ["metadata", "data"] in links and ["fabric", "data"] not in links
    assert described.topology.group("metadata").capacity("metadata", "create") is not None
    lustre = describe(_description(**_STATED))
    assert ["fabric", "data"] in [link["between"] for link in lustre.document["links"]]


def test_without_devices_stated_only_the_data_servers_hold_data_and_memory_is_their_cache():
    described = describe(_description(**{k: v for k, v in _STATED.items() if k != "ds_storage_devices"},
                                      ds_volatile_memory_capacity="128GB", storage_install_date="2019-03-22"))
    assert described.document["devices"]["storage"]["count"] == 4
    assert ["data", "storage"] in [link["between"] for link in described.document["links"]]
    assert described.topology.group("data").capacity("memory").value.m_as("GB") == 128
    assert described.dates == {"storage_install_date": "2019-03-22"}


def test_a_short_row_of_the_list_is_a_one_line_error_naming_its_line(listed):
    header = listed.read_text(encoding="utf-8").splitlines()[0]
    with pytest.raises(ToolOutputError, match=r"line 2: is a row of 1 field\(s\), the header names \d+"):
        read_list(f"{header}\ngarbage\n", source="list.csv")


def test_on_the_list_only_submissions_lacking_their_data_servers_or_network_are_unjudged(listed):
    submissions = read_list(listed.read_text(encoding="utf-8"), source=str(listed))
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(listed.read_text(encoding="utf-8")))}
    unjudged = {s.id: describe(s.description) for s in submissions}
    unjudged = {i: d for i, d in unjudged.items() if d.topology is None}
    neither = [i for i in unjudged if not rows[i]["information_ds_nodes"] and not rows[i]["information_ds_network"]]
    assert len(neither) == 83
    for i, described in unjudged.items():
        fields = {m.split(":")[0] for m in described.blocking}
        assert fields <= {"ds_nodes", "ds_network", "md_network", "client_nodes"}, (i, described.blocking)
        assert all(not rows[i][f"information_{f}"] for f in fields if f in ("ds_nodes", "ds_network")), i


# --- MLPerf Storage -------------------------------------------------------------------------------------------------

def _descriptions(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("._") and is_system_description(p))


def test_every_mlperf_description_of_the_corpus_builds_a_topology(corpus):
    found = _descriptions(corpus / "mlperf-storage")
    if not found:
        pytest.skip("no MLPerf Storage descriptions in the corpus")
    for path in found:
        assert system_topology(path) is not None, path


def _system(text: str):
    return describe_system(read_mlperf_description(text, source="written.json"))


def _node(name: str, *, nic: tuple[int, int] | None = (100, 2), drives: tuple[dict, ...] = (), **fields) -> dict:
    """One v1.0 node type: its NICs (Gbit/s, ports) on the one network, its drives and any other fields."""
    ports = [{"network_name": "fabric", "bitrate": nic[0], "count_of_this_type": nic[1]}] if nic else []
    return {"node_type_name": name, "config_options": [], "DRAM": {"capacity_MiB": 262144}, "accelerators": [],
            "nic_ports": ports, "drives": list(drives)} | fields


def _drive(purpose: str, count: int, gib: float, **fields) -> dict:
    """One v1.0 drive type: an NVMe SSD unless ``fields`` say otherwise, kept for ``purpose``."""
    return {"purpose": [purpose], "drive_type": "SSD", "capacity_GiB": gib, "interface": "NVMe",
            "count_of_this_type": count} | fields


def _v1(nodes: list[dict], hosts: list[str], **storage) -> str:
    """A v1.0 description: its node types, a benchmark host of each type named in ``hosts``, the storage system."""
    return json.dumps({
        "networks": [{"network_name": "fabric", "network_type": "InfiniBand", "bitrate": 100}], "nodes": nodes,
        "benchmark_hosts": [{"node_name": f"host-{i}", "node_type_name": name, "benchmark_instances": [
            {"mapping_type": "native"}]} for i, name in enumerate(hosts)],
        "storage_system": {"vendor_name": "Example", "solution_name": "Example store"} | storage}, indent=1)


_FLASH = _drive("Hold the object data", 12, 7000, performance={"read_bandwidth": {"peak_bandwidth": 6},
                                                                 "write_bandwidth": {"peak_bandwidth": 3}})


def test_identical_client_entries_are_one_group_with_their_count():
    system = _system(_v1([_node("client")] * 3 + [_node("metadata server"), _node("data", drives=(_FLASH,))],
                         ["client"]))
    assert system.topology.group("clients").count == 3
    assert any("3 entries of node type 'client'" in a for a in system.assumptions)


def test_two_client_types_are_one_group_with_their_counts_together():
    text = _v1([_node("client - small"), _node("client - large", nic=(100, 4)), _node("array", drives=(_FLASH,))],
               ["client - small"] * 3 + ["client - large"] * 2)
    trailing = re.sub(r'(?<=["\d}\]])(?=\n\s*[}\]])', ",", text)  # a comma after each list's and object's last item
    described = read_mlperf_description(trailing, source="trailing.json")
    assert any(f.startswith("trailing commas") for f in described.forgiven)
    assert describe_system(described).topology.group("clients").count == 3 + 2


def test_drives_on_a_node_type_that_holds_data_whatever_its_name():
    system = _system(_v1([_node("Client"), _node("Cluster", drives=(
        _drive("Hold the OS", 2, 480, interface="SATA"), _drive("Hold the metadata and data", 10, 7680)))],
        ["Client"] * 4, raw_capacity_GiB=3 * 10 * 7680))
    assert system.topology is not None and "Cluster" in system.document["servers"]["storage"]["description"]
    # the OS drives hold no data: the raw capacity over one node's 10 x 7680 GiB of data drives is at most 3 nodes
    assert system.document["servers"]["storage"]["description"].endswith("Cluster x 1-3")


def test_a_cloud_drive_is_known_by_its_details():
    volumes = [{"drive_type": "Other", "drive_details": f"Amazon EBS {kind} volume", "capacity_GiB": gib,
                "count_of_this_type": count} for kind, gib, count in (("gp2", 20, 1), ("gp3", 64, 2), ("io2", 1000, 6))]
    system = _system(_v1([_node("File node", nic=(50, 1), drives=tuple(volumes)), _node("Client node", nic=(100, 1))],
                         ["Client node"], solution_config_options=["number of nodes : 3",
                                                                   "node_type_name : File node"]))
    assert system.topology is not None and any("cloud-ssd moves" in a for a in system.assumptions)
    # its three file nodes, as solution_config_options states them ("number of nodes : 3")
    assert system.document["servers"]["storage"]["description"].endswith("File node x 3")


def test_v05s_flat_form_is_recognised_and_refused_for_lacking_the_hosts(tmp_path):
    path = tmp_path / "flat.json"
    path.write_text(json.dumps({"name": "Object store node", "node_count": "3", "dram": "384GB",
                                "network": "2x 25GbE", "nvme_drives": "6x 3.84TB"}, indent=1), encoding="utf-8")
    assert is_system_description(path)
    system = _system(path.read_text(encoding="utf-8"))
    assert system.topology is None and system.missing[0].startswith("a flat description (v0.5's open division")


def test_a_cloud_service_stated_per_capacity_bounds_the_storage(corpus):
    found = sorted((corpus / "mlperf-storage" / "v3.0").rglob("aws_c7i48xlarge_i3en12xlarge_1c_1s_8a.yaml"))
    if not found:
        pytest.skip("the v3.0 Alluxio description is not in the corpus")
    text = found[0].read_text(encoding="utf-8").replace(
        "friendly_description: Alluxio", "friendly_description: A managed file service at 125 MB/s per TiB of "
        "1,280 TiB; Alluxio", 1)
    system = describe_system(read_mlperf_description(text, source="service.yaml"))
    bandwidth = system.topology.group("storage").capacity("bandwidth")
    assert bandwidth.source.kind == "datasheet" and bandwidth.value.m_as("GB/s") == pytest.approx(160)


# v0.5 with a bare text value and the host's own NVMe drive in its storage system.
_LOCAL = """{
  "host_node": {"node_count": 2, "kernel_version": 6.1.0-21.el9.x86_64, "memory_capacity_gigabytes": "128 GB"},
  "storage_system": {"type": "Local", "hardware": [{"Count": 1, "type": "NVMe SSD", "protocol": "NVMe",
                                                    "Disk_capacity": "3.84 TB"}]},
  "host_to_storage_interconnect": [{"interconnect_type": "PCIe"}]
}"""
# v0.5 without braces, with comments, single quotes and a bare yes; node-local SSDs listed beside the storage system.
_NODE_LOCAL = """"host_node": {
    "node_count": 64,
    "memory_capacity_gigabytes": 256, // limited by cgroup
},
"storage_system": {"type": "Node local SSD", "num_disks_per_node": 4},  // see hardware
"hardware": [{"Count": 4, "type": "SSD", "protocol": "NVMe", "Disk_capacity_gigabytes": 3200,},],
"host_to_storage_interconnect": [{"interconnect_type": "PCIe", "link_speed_gigabits_per_second": 'N/A',
                                  "rdma_enabled": yes,},]
"""


@pytest.mark.parametrize("text, hosts, forgiven", [
    (_LOCAL, 2, {"bare text values"}),
    (_NODE_LOCAL, 64, {"no braces around the whole", "comments (2)", "single-quoted strings", "bare yes"})])
def test_v05_with_the_hosts_own_drives_builds_clients_and_drives_without_a_network(text, hosts, forgiven):
    described = read_mlperf_description(text, source="v05.json")
    assert forgiven <= set(described.forgiven)
    system = describe_system(described)
    assert system.topology.group("clients").count == hosts
    assert [link["between"] for link in system.document["links"]] == [["clients", "drives"]]
    assert any("nvme" in a for a in system.assumptions)


def test_v3s_repeated_client_entries_are_one_group_with_their_quantities_together(corpus):
    yaml = pytest.importorskip("yaml")
    found = sorted((corpus / "mlperf-storage" / "v3.0").rglob("aws_c7i48xlarge_i3en12xlarge_1c_1s_8a.yaml"))
    if not found:
        pytest.skip("the v3.0 Alluxio description is not in the corpus")
    document = yaml.safe_load(found[0].read_text(encoding="utf-8"))
    clients = document["system_under_test"]["clients"]
    clients.append(dict(clients[0], quantity=2))
    system = describe_system(read_mlperf_description(yaml.safe_dump(document), source="two.yaml"))
    assert system.topology.group("clients").count == clients[0]["quantity"] + 2
