"""iobound whatif: --set changes checked by the loader, +1-member upgrades against hand-computed ceilings, CLI errors."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from assess.cli import main
from models.predict import Model
from models.upgrades import upgrades
from probes.core.errors import InputError, TopologyError
from probes.core.units import Q_
from probes.core.workload import Operation, Workload
from topologies.bundled import load_example
from topologies.edit import Change, apply_changes, parse_change
from topologies.load import parse_topology
from topologies.topology import Component

READ_1MIB = Workload(Operation.READ, Q_(1, "MiB"), nodes=10)
# 5 storage servers x 10 GbE, in MiB/s: the lecture's server NICs.
SERVER_NICS = 5 * 10e9 / 8 / 2**20


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def mib(quantity) -> float:
    return quantity.to("MiB/s").magnitude


def changed(*texts):
    return apply_changes(load_example("lecture"), tuple(parse_change(t) for t in texts))


@pytest.mark.parametrize("text, change", [
    ("clients.nic=25Gbit/s", Change(Component("clients", "nic"), "25Gbit/s", "clients.nic=25Gbit/s")),
    ("ssd.count=8", Change(Component("ssd", "count"), 8, "ssd.count=8")),
    ("storage.parity=8+2", Change(Component("storage", "parity"), "8+2", "storage.parity=8+2")),
    ("ssd.price=1.5", Change(Component("ssd", "price"), 1.5, "ssd.price=1.5")),
    ('ssd.description="one SSD"', Change(Component("ssd", "description"), "one SSD", 'ssd.description="one SSD"')),
    ("ssd.bandwidth=unlimited", Change(Component("ssd", "bandwidth"), "unlimited", "ssd.bandwidth=unlimited")),
    (" ssd . count = 8 ", Change(Component("ssd", "count"), 8, " ssd . count = 8 ")),
    ("links[1].bandwidth=100Gbit/s", Change(Component.of_link(1), "100Gbit/s", "links[1].bandwidth=100Gbit/s")),
    ('compute.nic={ value = "1 GbE", source = "datasheet" }',
     Change(Component("compute", "nic"), {"value": "1 GbE", "source": "datasheet"}, 'compute.nic={ value = "1 GbE", source = "datasheet" }')),
])
def test_parse_change_reads_toml_values_and_keeps_other_text(text, change):
    assert parse_change(text) == change


@pytest.mark.parametrize("text", ["nic", "nic=1GbE", ".nic=1GbE", "ssd.=8", "ssd.count=", "ssd.count"])
def test_parse_change_refuses_what_is_not_group_key_value(text):
    with pytest.raises(InputError, match=f"^--set {text}: must be GROUP.KEY=VALUE"):
        parse_change(text)


@pytest.mark.parametrize("target", ["clients", "compute"])
def test_faster_client_nics_move_the_read_ceiling_to_the_devices(target):
    before = Model(load_example("lecture")).ceiling(READ_1MIB)
    after = Model(changed(f"{target}.nic=1250MB/s")).ceiling(READ_1MIB)
    assert mib(before.value) == pytest.approx(10 * 110, rel=1e-12) and before.binding == (Component("compute", "nic"),)
    assert mib(after.value) == pytest.approx(5 * 270, rel=1e-12) and after.binding == (Component("ssd", "bandwidth"),)
    assert after.binding_layers == ("devices",)


def test_more_ssds_alone_change_nothing_while_the_client_nics_bind():
    after = Model(changed("ssd.count=10")).ceiling(READ_1MIB)
    assert mib(after.value) == pytest.approx(1100, rel=1e-12) and after.binding == (Component("compute", "nic"),)
    devices = next(layer for layer in after.layers if layer.layer == "devices")
    assert mib(devices.value) == pytest.approx(10 * 270, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40))
def test_the_read_ceiling_is_the_least_of_the_three_layers_for_any_ssd_count(count):
    after = Model(changed(f"ssd.count={count}")).ceiling(READ_1MIB)
    assert mib(after.value) == pytest.approx(min(1100, SERVER_NICS, count * 270), rel=1e-9)


def test_changes_apply_in_order_and_leave_the_rest_and_the_original_alone():
    lecture = load_example("lecture")
    after = changed("ssd.count=8", "devices.count=9", "storage.price=5000")
    assert after.group("ssd").count == 9 and after.group("storage").price == 5000
    assert lecture.group("ssd").count == 5 and lecture.group("storage").price is None
    assert after.group("compute") == lecture.group("compute")
    assert "with --set ssd.count=8 --set devices.count=9 --set storage.price=5000" in after.path


SPLIT = """
[clients.c]
count = 2
read_nic = "100 MB/s"
write_nic = "50 MB/s"
[devices.a]
bandwidth = "1 GB/s"
[devices.b]
bandwidth = "2 GB/s"
[[links]]
between = ["c", "a"]
[[links]]
between = ["c", "b"]
"""


def test_a_plain_key_replaces_its_per_operation_variants_and_a_kind_word_every_group():
    topology = parse_topology(SPLIT)
    plain = apply_changes(topology, (parse_change("c.nic=300MB/s"), parse_change("devices.bandwidth=3GB/s")))
    client = plain.group("c")
    assert set(client.capacities) == {"nic"}
    assert client.capacity("nic", "read").value == client.capacity("nic", "write").value == Q_(300, "MB/s")
    assert plain.group("a").capacity("bandwidth").value == plain.group("b").capacity("bandwidth").value == Q_(3, "GB/s")
    reads = apply_changes(topology, (parse_change("c.read_nic=300MB/s"),)).group("c")
    assert reads.capacity("nic", "read").value == Q_(300, "MB/s") and reads.capacity("nic", "write").value == Q_(50, "MB/s")


@pytest.mark.parametrize("text, message", [
    ("foo.nic=1GbE", "--set foo.nic=1GbE: no group or kind 'foo'; the groups are: compute, ethernet, storage, ssd"),
    ("ssd.bogus=1", "with --set ssd.bogus=1: devices.ssd.bogus: unknown key 'bogus'"),
    ("ssd.bandwidth=5ms", "with --set ssd.bandwidth=5ms: devices.ssd.bandwidth: the value must be a bandwidth"),
    ("ssd.count=0", "with --set ssd.count=0: devices.ssd.count: must be a whole number from 1 to 10,000,000"),
])
def test_apply_changes_names_the_set_argument_in_its_errors(text, message):
    with pytest.raises(TopologyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        changed(text)


def priced(hdd: int = 10, ssd: int = 2, servers: int = 2) -> str:
    """Read limits in MB/s: clients 3 x 1100 = 3300, servers 2500 each, devices 200 (hdd), 500 (ssd), 100 (nvme) each.

    As it is, the devices bind: 10 x 200 + 2 x 500 + 1 x 100 = 3100 MB/s.
    """
    return f"""
name = "priced"
currency = "EUR"
[clients.c]
count = 3
nic = "1100 MB/s"
[networks.net]
[servers.s]
count = {servers}
nic = "2500 MB/s"
price = 5000
[devices.hdd]
count = {hdd}
bandwidth = "200 MB/s"
price = 400
[devices.ssd]
count = {ssd}
bandwidth = "500 MB/s"
price = 1500
[devices.nvme]
count = 1
bandwidth = "100 MB/s"
[[links]]
between = ["c", "net"]
[[links]]
between = ["net", "s"]
[[links]]
between = ["s", "hdd"]
[[links]]
between = ["s", "ssd"]
[[links]]
between = ["s", "nvme"]
"""
READ = Workload(Operation.READ, Q_(1, "MiB"), nodes=3)
WRITE = Workload(Operation.WRITE, Q_(1, "MiB"), nodes=3)


def test_upgrades_ranks_by_gain_per_price_then_the_unpriced_by_gain():
    (read, write) = upgrades(parse_topology(priced()), [READ, WRITE])
    assert read.ceiling.workload == READ and write.ceiling.workload == WRITE
    assert read.ceiling.value.to("MB/s").magnitude == pytest.approx(3100, rel=1e-12)
    # +1 ssd would give 3,600 but the clients stop it at 3,300: a step counts as far as the next layer.
    expected = [("hdd", 400, 200, 3300), ("ssd", 1500, 200, 3300), ("s", 5000, 0, 3100), ("nvme", None, 100, 3200),
                ("net", None, 0, 3100)]
    for ranking in (read, write):
        got = [(u.group, u.price, u.gain.to("MB/s").magnitude, u.ceiling.value.to("MB/s").magnitude) for u in ranking.upgrades]
        assert [g[:2] for g in got] == [e[:2] for e in expected]
        assert [g[2:] for g in got] == [pytest.approx(e[2:], rel=1e-9, abs=1e-6) for e in expected]
    hdd, ssd, server, nvme, net = read.upgrades
    assert hdd.per_price == pytest.approx(200e6 / 400) and ssd.per_price == pytest.approx(200e6 / 1500)
    assert server.per_price == 0 and nvme.per_price is None and net.kind.value == "networks"


@settings(max_examples=20, deadline=None)
@given(hdd=st.integers(1, 20), ssd=st.integers(1, 6), servers=st.integers(1, 3))
def test_every_gain_is_the_closed_form_least_layer_with_one_more_member(hdd, ssd, servers):
    (read,) = upgrades(parse_topology(priced(hdd, ssd, servers)), [READ])

    def ceiling(extra_hdd=0, extra_ssd=0, extra_nvme=0, extra_server=0):
        devices = 200 * (hdd + extra_hdd) + 500 * (ssd + extra_ssd) + 100 * (1 + extra_nvme)
        return min(3300, 2500 * (servers + extra_server), devices)

    gains = {u.group: u.gain.to("MB/s").magnitude for u in read.upgrades}
    assert gains == pytest.approx({"hdd": ceiling(extra_hdd=1) - ceiling(), "ssd": ceiling(extra_ssd=1) - ceiling(),
                                   "nvme": ceiling(extra_nvme=1) - ceiling(), "s": ceiling(extra_server=1) - ceiling(),
                                   "net": 0}, abs=1e-6)
    ranked = [u.per_price for u in read.upgrades if u.per_price is not None]
    assert ranked == sorted(ranked, reverse=True) and len(ranked) == 3


def test_whatif_prints_before_after_and_the_upgrades(capsys):
    status, out, _ = run(capsys, "whatif", "lecture", "--set", "clients.nic=1250MB/s", "--op", "read", "--transfer-size", "1MiB")
    assert status == 0
    assert "changes:   clients.nic=1250MB/s (compute)" in out
    row = next(line for line in out.splitlines() if line.startswith("read 1 MiB seq, 10 nodes"))
    assert [cell.strip() for cell in row.split("  ") if cell.strip()] == [
        "read 1 MiB seq, 10 nodes x 1 ppn", "1,100 MiB/s", "1,350 MiB/s", "+22.7%", "client NICs -> devices"]
    first = out.split("one more member, read 1 MiB seq, 10 nodes x 1 ppn (ceiling 1,350 MiB/s):\n")[1].splitlines()[2]
    assert first.split() == ["ssd", "(device)", "not", "stated", "270", "MiB/s", "-", "1,620", "MiB/s"]


def test_whatif_without_changes_shows_the_upgrades_of_the_topology_as_is(capsys, tmp_path):
    topology = tmp_path / "priced.toml"
    topology.write_text(priced())
    status, out, _ = run(capsys, "whatif", str(topology), "--op", "read", "--transfer-size", "1MiB")
    assert status == 0 and "changes:   none" in out
    lines = out.split("(ceiling 2,956 MiB/s):\n")[1].splitlines()
    assert "gain per 1,000 EUR" in lines[0]
    # +1 HDD: 200 MB/s for 400 EUR, so 500 MB/s (477 MiB/s) per 1,000 EUR.
    assert lines[2].split() == ["hdd", "(device)", "400", "EUR", "191", "MiB/s", "477", "MiB/s", "3,147", "MiB/s"]


def test_whatif_json_has_the_ceilings_changes_and_upgrades(capsys):
    status, out, _ = run(capsys, "whatif", "lecture", "--set", "compute.nic=1250MB/s", "--set", "ssd.count=6",
                         "--op", "read", "--transfer-size", "1MiB", "--json")
    doc = json.loads(out)
    assert status == 0 and (doc["format"], doc["format_version"]) == ("iobound/whatif", "1.1")
    assert [c["groups"] for c in doc["changes"]] == [["compute"], ["ssd"]]
    assert doc["changes"][1]["value"] == 6
    assert doc["before"][0]["ceiling"]["value"] == pytest.approx(1100 * 2**20, rel=1e-12)
    assert doc["after"][0]["ceiling"]["value"] == pytest.approx(6 * 270 * 2**20, rel=1e-12)
    best = doc["upgrades"][0]["upgrades"][0]
    assert (best["group"], best["price"], best["gain_per_price"]) == ("ssd", None, None)
    assert best["gain"]["value"] == pytest.approx(270 * 2**20, rel=1e-12)


@pytest.mark.parametrize("setting, message", [
    ("foo.nic=1GbE", "--set foo.nic=1GbE: no group or kind 'foo'"),
    ("ssd.bogus=1", "--set ssd.bogus=1: devices.ssd.bogus: unknown key 'bogus'"),
    ("ssd.bandwidth=5ms", "--set ssd.bandwidth=5ms: devices.ssd.bandwidth: the value must be a bandwidth"),
    ("links[3].bandwidth=1GbE", "--set links[3].bandwidth=1GbE: no link links[3]; the topology has 3 [[links]] entries"),
    ("nic", "iobound: error: --set nic: must be GROUP.KEY=VALUE"),
])
def test_bad_settings_exit_2_with_one_line_naming_the_argument(capsys, setting, message):
    status, out, err = run(capsys, "whatif", "lecture", "--set", setting, "--op", "read", "--transfer-size", "1MiB")
    assert status == 2 and out == ""
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_restorations_count_the_members_that_bring_a_target_back():
    """Read limits in MB/s as priced() says: clients 3,300, servers 2 x 2,500, devices 10 x 200 + 2 x 500 + 100 = 3,100.
    To 3,300: one more HDD (+200) or SSD (+500, the clients stop it at 3,300), two more NVMe (+100 each); no count of
    servers or the network lifts the devices. Price before: 2 x 5,000 + 10 x 400 + 2 x 1,500 = 17,000."""
    from models.upgrades import restorations

    before, found = restorations(parse_topology(priced()), READ, Q_(3300, "MB/s"))
    assert before.value.to("MB/s").magnitude == pytest.approx(3100)
    added = {r.group: r.added for r in found}
    assert added == {"hdd": 1, "ssd": 1, "nvme": 2, "s": None, "net": None}
    hdd = next(r for r in found if r.group == "hdd")
    assert hdd.price == (17000, 17400) and hdd.ceiling.value.to("MB/s").magnitude == pytest.approx(3300)
    assert [r.group for r in found][:3] == ["nvme", "hdd", "ssd"]  # cheapest after first (nvme's price is not stated)
    _, beyond = restorations(parse_topology(priced()), READ, Q_(3400, "MB/s"))  # above the clients' NICs: none can
    assert all(r.added is None for r in beyond)


def test_whatif_target_prints_how_many_of_each_group_restore_it(capsys, tmp_path):
    topology = tmp_path / "priced.toml"
    topology.write_text(priced())
    status, out, _ = run(capsys, "whatif", str(topology), "--set", "hdd.bandwidth=150MB/s", "--target", "read=3300MB/s",
                         "--transfer-size", "1MiB")
    assert status == 0
    # 10 x 150 + 1,000 + 100 = 2,600 MB/s: 5 more HDDs (+750, 3,350 -> the clients' 3,300), 2 more SSDs or 7 NVMe.
    rows = {line.split()[0]: line for line in out.splitlines() if "(" in line and line.split()[0] in ("hdd", "ssd", "nvme", "s")}
    assert rows["hdd"].split()[2] == "+5" and rows["ssd"].split()[2] == "+2" and rows["nvme"].split()[2] == "+7"
    assert "no count does" in rows["s"] and "17,000 EUR -> 19,000 EUR" in rows["hdd"]
    status, _, err = run(capsys, "whatif", str(topology), "--target", "read=5ms", "--transfer-size", "1MiB")
    assert status == 2 and "--target read=5ms" in err and err.count("\n") == 1
