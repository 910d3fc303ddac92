"""Writing a topology: what the loader reads back is the same system, and no file is overwritten."""

import pytest

from probes.core.errors import InputError
from topologies.bundled import example_names, load_example
from topologies.load import load_topology, parse_topology, topology_from_dict
from probes.core.outputs import check_new
from topologies.save import save_topology, topology_document

PRICED = """
name = "priced"
currency = "EUR"
[clients.c]
count = 4
nic = { value = "25 Gbit/s", source = "datasheet", note = "ConnectX-6" }
[networks.sw]
rtt = "20 us"
[servers.s]
count = 2
price = 12000
nic = "unlimited"
read_nic = "100 Gbit/s"
replicas = 2
parity = "4+2"
write_amplification = 1.1
forwarding = "store"
[devices.d]
count = 8
price = 950.5
size = "7.68 TB"
bandwidth = { value = "6.8 GB/s", source = "assumption" }
[[links]]
between = ["c", "sw"]
[[links]]
between = ["sw", "s"]
bandwidth = "400 Gbit/s"
[[links]]
between = ["s", "d"]
"""


def _same(a, b):
    assert topology_document(a) == topology_document(b)
    assert [(g.name, g.count, g.price, g.capacities, g.write_cost, g.forwarding) for g in a.groups] == \
        [(g.name, g.count, g.price, g.capacities, g.write_cost, g.forwarding) for g in b.groups]
    assert a.links == b.links and a.currency == b.currency


@pytest.mark.parametrize("name", [n.removesuffix(".toml") for n in example_names() if n.endswith(".toml")])
def test_bundled_examples_survive_a_round_trip(name):
    topology = load_example(name)
    _same(topology_from_dict(topology_document(topology)), topology)


def test_prices_sources_write_costs_and_link_bandwidths_are_written_back(tmp_path):
    topology = parse_topology(PRICED)
    path = save_topology(topology, tmp_path / "copy.toml", header="sized by iobound\nsecond line")
    text = path.read_text()
    assert text.startswith("# sized by iobound\n# second line\n")
    assert 'parity = "4+2"' in text and 'currency = "EUR"' in text
    again = load_topology(path)
    _same(again, topology)
    assert again.group("d").price == 950.5 and again.group("s").capacity("nic", "write").value is None


def test_an_existing_file_is_never_overwritten(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("precious")
    with pytest.raises(InputError, match="exists already"):
        save_topology(parse_topology(PRICED), path)
    assert path.read_text() == "precious"


def test_a_new_file_is_checked_before_any_work(tmp_path):
    (tmp_path / "mine.toml").write_text("precious")
    with pytest.raises(InputError, match="mine.toml: exists already; give a new file name"):
        check_new(tmp_path / "mine.toml")
    with pytest.raises(InputError, match="its folder '.*/nowhere' does not exist"):
        check_new(tmp_path / "nowhere" / "new.toml")
    check_new(tmp_path / "new.toml")
    assert not (tmp_path / "new.toml").exists()
