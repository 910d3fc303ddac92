"""The issue's three buyers' questions sized as a presales engineer would sign them: derated parts, a margin on every
target, failure domains, whole enclosures and a bill of materials that adds up; each answer worked out by hand here."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import subprocess

import pytest

from assess.cli import main
from tests.commands import command_refusal

# Question 1: 20 GiB/s write, 40 GiB/s read, 200k creates/s and 2 PB usable for 512 clients on 25 Gbit, 8+2 parity.
BIG = ["size", "--clients", "512", "--client-nic", "25Gbit/s", "--target", "write=20GiB/s", "--target", "read=40GiB/s",
       "--target", "create=200000op/s", "--usable", "2PB", "--parity", "8+2"]
# Question 2: 100 GB/s all-flash read for 64 GPU nodes with 2 x 200 Gbit (flash drives only), 8+2, in HA pairs.
FLASH = ["nvme-gen3-3.84tb", "nvme-gen4-7.68tb", "nvme-gen5-7.68tb", "nvme-gen4-30.72tb", "nvme-qlc-61.44tb",
         "nvme-qlc-122.88tb", "sata-ssd-3.84tb", "sas-ssd-3.84tb"]
GPU = ["size", "--clients", "64", "--client-nic", "2x200Gbit/s", "--target", "read=100GB/s", "--devices", ",".join(FLASH),
       "--parity", "8+2", "--ha"]
# Question 3: a 2 GB/s, 100 TB NAS for 20 workstations on 10 GbE (no redundancy named).
NAS = ["size", "--clients", "20", "--client-nic", "10Gbit/s", "--target", "read=2GB/s", "--target", "write=2GB/s",
       "--usable", "100TB"]


def _sized(capsys, argv) -> dict:
    assert main([*argv, "--json", "--top", "3"]) == 0
    return json.loads(capsys.readouterr().out)


def _check_signable(doc: dict) -> None:
    """What every answer must hold: margins, failure domains, whole groups and enclosures, a bill that adds up."""
    policy, parity = doc["policy"], doc["redundancy"]
    data, strips = (int(x) for x in parity.split()[0].split("+")) if "parity" in parity else (1, 0)
    for c in doc["configurations"]:
        for target, ceiling in zip(doc["targets"], c["ceilings"]):
            assert ceiling["ceiling"]["value"] >= target["required"]["value"] * (1 + policy["margin"]) * (1 - 1e-9)
        servers, drives = c["counts"]["storage"], c["counts"]["drives"]
        if strips:
            assert servers >= math.ceil((data + strips) / strips)  # no parity wider than the failure domains
            assert c["survives"] >= 1 and drives % (data + strips) == 0
        slots = {"hdd-4u-60": 60, "hdd-2u-12": 12, "nvme-1u-10": 10, "nvme-2u-24": 24, "sas-2u-24": 24,
                 "hdd-5u-84-dual": 84}[c["parts"]["server"]]
        assert drives + c["spares"] == servers * slots  # whole enclosures
        assert c["spares"] >= servers * policy["spares"]
        hardware = [line["total"] for line in c["bill"] if line["hardware"]]
        assert sum(hardware) == pytest.approx(c["total"])  # the bill adds up to the price
        topology = sum(g["price"] * g["count"] for g in c["topology"]["groups"] if g.get("price") is not None)
        assert topology == pytest.approx(c["total"])  # and so does the sized topology


@pytest.mark.slow
def test_question_1_the_hpc_buyer(capsys):
    """By hand, at the sustained figures and a 20 % margin: write 24 GiB/s, read 48 GiB/s, create 240,000 op/s.

    - HDDs count at 140 MB/s (inner tracks; 285 MB/s outer): reads need 48 GiB/s / 133.5 MiB/s = 368.2 -> 369 drives,
      41 whole 8+2 groups = 370 (writes: 24 GiB/s x 1.25 / 133.5 MiB/s = 231).
    - 2 PB usable = raw x 0.8 (8+2) x 0.95 (file system) x 0.8 (fill): 2 PB / 12.16 TB = 164.5 -> 165 drives.
    - hdd-4u-60 with a hot spare keeps 59 bays for data: 370 / 59 = 6.3 -> 7 enclosures (>= 5, the failure domains 8+2
      needs); filled, 413 bays take 41 groups = 410 data drives and 10 spares. 7 enclosures: a group has at most
      ceil(10/7) = 2 strips in one, so the data survives 1 enclosure failure.
    - metadata: 240,000 / 50,000 (nvme-1u-10) = 4.8 -> 5 servers, each with 2 mirrored NVMe drives.
    - price: 7 x 25,000 + 420 x 380 + 12 ports x 600 + 5 x 15,000 + 10 x 1,000 + one 32-port switch 15,000 = 441,800.
    - one drive rebuilds in 20 TB / 140 MB/s = 39.7 h: over a day, warned.
    """
    doc = _sized(capsys, BIG)
    _check_signable(doc)
    best = doc["configurations"][0]
    assert best["counts"] == {"storage": 7, "drives": 410, "mds1": 5} and best["spares"] == 10
    assert (best["parts"]["server"], best["parts"]["device"], best["parts"]["metadata_server"]) == \
        ("hdd-4u-60", "hdd-20tb", "nvme-1u-10")
    assert best["total"] == pytest.approx(441_800) and best["survives"] == 1
    assert best["rebuild"]["value"] / 3600 == pytest.approx(20e12 / 140e6 / 3600)
    assert best["capacity"]["usable"]["value"] == pytest.approx(410 * 20e12 * 0.8 * 0.95 * 0.8)
    # InfiniBand servers are reached through gateways (their price in the bill), so they make families of their own
    assert {"hybrid, ethernet", "all-flash, ethernet", "hybrid, infiniband"} <= {a["family"] for a in doc["alternatives"]}
    assert doc["refused"] == []

    assert main(BIG) == 0
    text = capsys.readouterr().out
    low, high = best["total_range"]  # every part at the low, then the high end of its street-price range
    assert f"#1  USD 441,800 (street prices USD {low:,.0f}..{high:,.0f}): 7 x hdd-4u-60 with 1 x ethernet-100g each, " \
        "410 x hdd-20tb + 10 spares" in text
    assert "the data survives 1 enclosure failure" in text and "WARNING:   a rebuild takes over a day" in text
    assert "usable 4,986 TB (4,534 TiB)" in text  # TB and TiB differ by 10 %
    assert "refused:" not in text


def test_question_1_on_infiniband_servers_goes_through_gateways(capsys):
    """--networks infiniband-hdr behind the 25 GbE clients: the storage side is as on Ethernet (the drives bind), and
    gateways carry the largest target with its margin, 48 GiB/s = 51.5 GB/s.

    - gw-router-node-200g forwards 120 Gbit/s = 15 GB/s at its least: 51.5 / 15 = 3.4 -> 4 nodes x 9,000 = 36,000;
      gw-ib-eth-skyway forwards 1.36 Tbit/s = 170 GB/s: 1 x 60,000. The four router nodes are cheaper.
    - the way to the clients then carries 4 x 15 GB/s = 60 GB/s (55.9 GiB/s), above the drives' 53.5 GiB/s of reads:
      the gateways do not bind, and the bill holds them.
    """
    doc = _sized(capsys, [*BIG, "--networks", "infiniband-hdr"])
    _check_signable(doc)
    best = doc["configurations"][0]
    assert best["fabric"]["gateway"] == "gw-router-node-200g" and best["fabric"]["gateways"] == 4
    assert best["fabric"]["limit"]["value"] == pytest.approx(4 * 120e9 / 8)
    gateway = next(line for line in best["bill"] if line["part"] == "gw-router-node-200g")
    assert (gateway["count"], gateway["total"]) == (4, 36_000) and "infiniband servers to ethernet clients" in gateway["what"]
    read = best["ceilings"][1]
    assert read["binding_layers"] == ["devices"] and read["ceiling"]["value"] < 60e9
    assert main([*BIG, "--networks", "infiniband-hdr"]) == 0
    text = capsys.readouterr().out
    assert "4 x gw-router-node-200g join the servers to the clients' fabric" in text


def test_ha_buys_two_gateways_where_one_would_carry_the_target(capsys):
    """The NAS's 2 GB/s + 20 % = 2.4 GB/s on InfiniBand servers: one router node (15 GB/s) carries it; --ha buys two."""
    argv = [*NAS, "--networks", "infiniband-hdr"]
    assert _sized(capsys, argv)["configurations"][0]["fabric"]["gateways"] == 1
    assert _sized(capsys, [*argv, "--ha"])["configurations"][0]["fabric"]["gateways"] == 2


@pytest.mark.slow
def test_question_1_with_ha_builds_pairs_and_a_growth_plan(capsys):
    """--ha: 7 enclosures become 8 (4 pairs); 8 x 59 = 472 bays take 47 groups: 470 data drives, 10 spares.
    --growth 30%/year: 2 PB grows to 2.6, 3.38, 4.39 PB; the design's 5.72 PB lasts ln(5.72/2)/ln(1.3) = 4.0 years.

    Failover (one server of each pair down, its partner serving both shares):
    - read, least: every server at half pace: 8 x 100 x 1448/1538 Gbit/s / 2 = 47.1 GB/s (the server NICs), under the
      48 GiB/s = 51.5 GB/s the margin asks; most: 7 servers' NICs carry 82.4 GB/s, so the 470 drives' 65.8 GB/s bind.
    - create: 6 metadata servers x 50,000 op/s: 150,000 at least (below the 200,000 target), 5 x 50,000 at most."""
    doc = _sized(capsys, [*BIG, "--ha", "--growth", "30%/year"])
    _check_signable(doc)
    for c in doc["configurations"]:  # a dual-controller enclosure is a pair by itself
        assert c["counts"]["storage"] % 2 == 0 or c["parts"]["server"] == "hdd-5u-84-dual"
        assert c["counts"].get("mds1", 0) % 2 == 0
    best = doc["configurations"][0]
    assert best["counts"]["storage"] == 8 and best["counts"]["drives"] == 470 and best["spares"] == 10
    (_, _), (read_least, read_most), (create_least, create_most) = \
        [(f["least"]["ceiling"]["value"], f["most"]["ceiling"]["value"]) for f in best["failover"]]
    assert read_least == pytest.approx(8 * 100e9 * 1448 / 1538 / 8 / 2, rel=1e-4) and read_most == pytest.approx(470 * 140e6)
    assert (create_least, create_most) == (pytest.approx(150_000), pytest.approx(250_000))
    assert main([*BIG, "--ha", "--growth", "30%/year"]) == 0
    text = capsys.readouterr().out
    assert "8 x hdd-4u-60 (HA pairs)" in text and "a failed server of any HA pair" in text
    assert "read 43.8..61.3 GiB/s (at least: under its 20% margin); create 150,000..250,000 op/s (at least: below the target)" \
        in text
    assert "year 1: 2,600 TB; year 2: 3,380 TB; year 3: 4,394 TB" in text
    assert "the design holds it for 4.0 years; next step: +2 x hdd-4u-60 with 110 x hdd-20tb" in text


def test_question_2_the_gpu_buyer(capsys):
    """By hand: read 100 GB/s + 20 % = 120 GB/s.

    - 100 GbE carries 94.1 Gbit/s of TCP payload at MTU 1500 (its least): 2 ports = 23.5 GB/s a server, so
      120 / 23.5 = 5.1 -> 6 nvme-1u-10 servers (3 HA pairs); their 40 GB/s each would need only 3.
    - the Gen3 NVMe drive reads 85 % of its 3,200 MB/s at least: 120 / 2.72 = 44.1 -> 45 -> 50 in whole 8+2 groups;
      6 x 9 bays (a spare each) = 54 >= 50: filled, 50 data drives and 10 spares. 50 x 2.72 GB/s = 136 GB/s: +36 %.
    - price: 6 x 15,000 + 60 x 450 + 12 ports x 600 + one switch 15,000 = 139,200.
    """
    doc = _sized(capsys, GPU)
    _check_signable(doc)
    best = doc["configurations"][0]
    assert best["counts"] == {"storage": 6, "drives": 50} and best["spares"] == 10
    assert (best["parts"]["server"], best["parts"]["ports_per_server"], best["parts"]["device"]) == \
        ("nvme-1u-10", 2, "nvme-gen3-3.84tb")
    assert best["total"] == pytest.approx(139_200)
    assert best["ceilings"][0]["ceiling"]["value"] == pytest.approx(50 * 0.85 * 3200e6)
    assert all(a["family"].startswith("all-flash") for a in doc["alternatives"])
    assert main(GPU) == 0
    text = capsys.readouterr().out
    assert "for 64 clients x 2 x 200 Gbit/s" in text
    row = next(line for line in text.splitlines() if line.startswith("read "))
    assert row.split()[:5] == ["read", "93.1", "GiB/s", "127", "GiB/s"]  # the target in the prediction's unit


def test_question_3_the_nas_buyer_is_warned_without_redundancy(capsys):
    """By hand: 2 GB/s + 20 % = 2.4 GB/s at 140 MB/s an HDD: 17.1 -> 18 drives; 100 TB / (20 TB x 0.95 x 0.8) = 6.6
    -> 7. Two hdd-2u-12 (no redundancy, so no spares) filled: 24 drives. 10 GbE carries 9.41 Gbit/s of payload at
    least, 1.18 GB/s: two servers need two ports each. 2 x 8,000 + 24 x 380 + 4 x 150 + a 10 GbE switch 6,000 = 31,720
    (one 25 GbE port each would cost 2 x 250 + a 9,000 switch). With 4+2 parity: 3 enclosures at least, each with a
    spare (11 bays): groups of 6."""
    doc = _sized(capsys, NAS)
    _check_signable(doc)
    best = doc["configurations"][0]
    assert best["counts"] == {"storage": 2, "drives": 24} and best["total"] == pytest.approx(31_720)
    assert (best["parts"]["network"], best["parts"]["ports_per_server"]) == ("ethernet-10g", 2)
    assert main(NAS) == 0
    assert "WARNING:   no redundancy asked for" in capsys.readouterr().out
    doc = _sized(capsys, [*NAS, "--parity", "4+2"])
    _check_signable(doc)
    best = doc["configurations"][0]
    assert best["counts"]["storage"] >= 3 and best["survives"] >= 1 and best["counts"]["drives"] % 6 == 0


def _bom(path) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The rows that say what a bill of materials answers (name: text), and its table's rows by column."""
    with path.open(newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    blank = rows.index([])
    return dict(rows[:blank]), [dict(zip(rows[blank + 1], row)) for row in rows[blank + 2:]]


def test_bom_is_a_csv_that_reads_back_and_adds_up_and_is_never_overwritten(capsys, tmp_path):
    out = tmp_path / "bom.csv"
    assert main([*NAS, "--parity", "4+2", "--bom", str(out)]) == 0
    printed = capsys.readouterr().out
    _, rows = _bom(out)
    *lines, total = rows
    assert total["part"] == "total" and {r["currency"] for r in rows} == {"USD"}
    assert sum(float(r["total"]) for r in lines) == pytest.approx(float(total["total"]))
    assert all(float(r["count"]) * float(r["unit price"]) == pytest.approx(float(r["total"])) for r in lines)
    # every bundled price is an indicative estimate with its street-price range: the lines' ranges add up too
    assert all(float(r["total low"]) < float(r["total"]) < float(r["total high"]) for r in lines)
    for end in ("total low", "total high"):
        assert sum(float(r[end]) for r in lines) == pytest.approx(float(total[end]))
    assert f"#1  USD {float(total['total']):,.0f}" in printed
    assert {"storage server", "data drive", "hot spare drive", "switch"} <= {r["what"] for r in lines}
    assert main([*NAS, "--bom", str(out)]) == 2  # exists: nothing overwritten
    assert "exists already" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("soffice") or shutil.which("libreoffice")),
                    reason="LibreOffice (soffice) is not installed: apt-get install -y libreoffice-calc-nogui to check "
                           "that a spreadsheet opens the bill of materials")
def test_libreoffice_converts_the_bom(capsys, tmp_path):
    """LibreOffice opens the bill as a spreadsheet and reads back every cell as written. Told the file is UTF-8 (as
    its import dialog is by the byte-order mark, and Excel), it reads it whole; its headless import, which takes the
    default code page whatever the mark says, reads the mark as three letters before the first cell and every other
    cell as written, since the bundled catalogue's text is plain ASCII (a "±" read "Â±")."""
    out = tmp_path / "bom.csv"
    assert main([*NAS, "--bom", str(out)]) == 0
    office = shutil.which("soffice") or shutil.which("libreoffice")
    profile = f"-env:UserInstallation=file://{tmp_path / 'profile'}"
    def cells(rows) -> list[list]:
        """The cells of ``rows`` that hold something, a number as its value (a spreadsheet writes 8000.00 as 8000)."""
        return [[float(c) if re.fullmatch(r"-?\d+(\.\d+)?", c) else c for c in row if c] for row in rows]

    with out.open(newline="", encoding="utf-8-sig") as f:
        written = cells(csv.reader(f))

    def read(to: str, *told: str) -> list[list]:
        folder = tmp_path / str(len(told))
        done = subprocess.run([office, profile, "--headless", *told, "--convert-to", to, "--outdir", str(folder),
                               str(out)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        converted = folder / f"bom.{to.split(':')[0]}"
        assert converted.stat().st_size > 0
        if to.startswith("xlsx"):
            return []
        with converted.open(newline="", encoding="utf-8") as f:
            return cells(csv.reader(f))

    read("xlsx")
    as_csv = "csv:Text - txt - csv (StarCalc):44,34,76"  # 76: UTF-8
    assert read(as_csv, "--infilter=CSV:44,34,76") == written
    (mark, *first), *rest = read(as_csv)
    assert mark == "\ufeff".encode("utf-8").decode("latin-1") + written[0][0] and [first, *rest] == [written[0][1:],
                                                                                                   *written[1:]]


def test_a_prices_file_may_price_some_parts_and_add_software_lines(capsys, tmp_path):
    """The prices file prices the HDD (seen 2026-11 at a distributor) and adds support per TB usable and a licence per
    server; the output says which parts keep the catalogue's prices, and the total with software adds those lines."""
    prices = tmp_path / "prices.toml"
    prices.write_text('[devices.hdd-20tb]\nprice = 350\nprice_source = "distributor quote"\nprice_observed = "2026-11"\n'
                      '[lines.support]\nprice = 10\nper = "TB"\ndescription = "support, 3 years, per TB usable"\n'
                      '[lines.licence]\nprice = 1000\nper = "server"\n')
    doc = _sized(capsys, [*NAS, "--prices", str(prices)])
    assert "hdd-2u-12" in doc["prices_not_from_file"] and "hdd-20tb" not in doc["prices_not_from_file"]
    best = doc["configurations"][0]
    bill = {line["part"]: line for line in best["bill"]}
    assert bill["hdd-20tb"]["unit_price"] == 350 and bill["hdd-20tb"]["source"] == "distributor quote"
    assert bill["hdd-20tb"]["unit_price_range"] is None  # a quote is one figure; the catalogue's others keep ranges
    assert bill["hdd-2u-12"]["unit_price_range"] == [5600, 10000]
    low, high = best["total_range"]
    assert low == pytest.approx(sum(line["count"] * (line["unit_price_range"] or [line["unit_price"]])[0]
                                    for line in best["bill"] if line["hardware"]))
    assert low < best["total"] < high
    usable_tb = best["capacity"]["usable"]["value"] / 1e12
    assert bill["support"]["total"] == pytest.approx(10 * usable_tb) and not bill["support"]["hardware"]
    assert bill["licence"]["count"] == best["counts"]["storage"]
    assert main([*NAS, "--prices", str(prices)]) == 0
    text = capsys.readouterr().out
    assert "parts not in" in text and "keep the catalogue's indicative prices" in text
    assert "with software and support" in text


@pytest.mark.parametrize("extra, message", [
    (["--margin", "150%"], "--margin: must be a share such as 20%"),
    (["--client-nic", "0x25Gbit/s"], "the ports per client must be from 1 to 64"),
    (["--growth", "30"], "must be a yearly growth such as 30%/year"),
    (["--oversubscription", "1:3"], "from 1:1 (non-blocking)"),
    (["--servers", "hdd-2u-12", "--spares", "12"], "leave no bay for data"),
    (["--spares", "17"], "from 0 to 16"),
    (["--fill", "0%"], "holds nothing"),
])
def test_bad_presales_input_is_one_line(capsys, extra, message):
    error = command_refusal([*NAS, *extra], capsys)  # a later --client-nic replaces the first
    assert message in error and error.startswith("iobound")


def test_a_failover_span_shows_both_ends_in_one_unit(capsys):
    """The least end below 10 GiB/s would print in MiB/s on its own: the span gives it in the most end's unit."""
    assert main(["size", "--clients", "20", "--client-nic", "25Gbit/s", "--target", "read=8GB/s", "--usable", "100TB",
                 "--ha", "--parity", "4+2"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("failover:"))
    assert re.search(r"read \d\.\d\d\.\.\d+\.\d GiB/s", line), line


def test_ha_without_redundancy_says_what_it_survives_and_gives_its_failover(capsys):
    """--ha without --parity: the pairs survive a failed server (its partner serves both shares, at the failover
    figures the JSON gives), and nothing survives a failed drive; without --ha, neither survives."""
    from probes.core.units import Q_, display_unit, format_quantity

    argv = ["size", "--clients", "16", "--client-nic", "100Gbit/s", "--target", "read=50GB/s", "--devices",
            "nvme-gen4-7.68tb", "--top", "1"]
    (failover,) = _sized(capsys, [*argv, "--ha"])["configurations"][0]["failover"]
    assert main([*argv, "--ha"]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = {line.split()[0].rstrip(":"): line for line in lines if line.strip() and not line[0].isspace()}
    assert "(HA pairs)" in said["#1"]
    assert "a failed server of any HA pair (its partner takes over its drives" in said["failures"]
    assert "not survived: one failed drive loses data" in said["failures"] and "none survived" not in said["failures"]
    assert "server failure loses data" not in said["WARNING"]
    least, most = (Q_(failover[end]["ceiling"]["value"], "B/s") for end in ("least", "most"))
    assert f"read {format_quantity(least, unit=display_unit(most)).split()[0]}" in said["failover"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "failures:  none survived" in text and "failover:" not in text and "(HA pairs)" not in text


def test_the_bom_says_what_it_answers_in_utf_8_a_spreadsheet_knows(capsys, tmp_path):
    """A spreadsheet reads a CSV in its locale's code page ("±" became "Â±") unless a byte-order mark says UTF-8; the
    rows above the table say what was asked (targets, clients), which configuration answers it, from which parts and
    when, as the printed answer does."""
    from datetime import datetime, timezone

    import probes

    out, prices = tmp_path / "bom.csv", tmp_path / "prices.toml"
    prices.write_text('[devices.hdd-20tb]\nprice = 350\nprice_source = "Müller GmbH, ±5 % by volume"\n', encoding="utf-8")
    before = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    assert main([*NAS, "--parity", "4+2", "--prices", str(prices), "--bom", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert out.read_bytes().startswith("\ufeff".encode("utf-8"))
    said, lines = _bom(out)
    assert "Müller GmbH, ±5 % by volume" in [line["source"] for line in lines]
    asked = next(line for line in printed if line.startswith("asked:")).split(None, 1)[1]
    assert said["asked"] == asked and "read 2 GB/s" in asked and "20 clients x 10 Gbit/s" in asked
    best = next(line for line in printed if line.startswith("#1 "))
    assert said["answer"].split(": ", 1)[1] == best.split(": ", 1)[1]
    assert said["parts"] == f"the catalogue bundled with iobound {probes.__version__}, {prices}; prices in USD"
    when = datetime.strptime(said["sized"].split(" by ")[0], "%Y-%m-%d %H:%M UTC").replace(tzinfo=timezone.utc)
    assert before <= when <= datetime.now(timezone.utc)


def test_a_sized_topology_reads_as_a_person_writes_it_and_loads_back_the_same(capsys, tmp_path):
    """Its header names the bundled catalogue, not where it is installed; each figure is a short number and its unit
    ("10 Gbit/s", not "10 Gbit / s"; "100 GB/s", not "100000000000.0 B / s"); and it loads back to the very figures
    of the configuration sized."""
    import probes
    from topologies.catalogues.catalogue import BUNDLED
    from topologies.load import load_topology

    out = tmp_path / "sized.toml"
    sized = _sized(capsys, [*NAS, "--parity", "4+2", "--ha", "-o", str(out)])["configurations"][0]["topology"]
    text = out.read_text(encoding="utf-8")
    assert str(BUNDLED) not in text and f"# Parts from the catalogue bundled with iobound {probes.__version__};" in text
    figures = re.findall(r'^value = "(.*)"$', text, re.M)
    assert 'value = "10 Gbit/s"' in text and len(figures) > 10
    assert not [f for f in figures if not re.fullmatch(r"\d{1,6}(\.\d+)? [^ ]+", f) or f.split()[0].endswith(".0")]
    loaded = load_topology(out).to_dict()
    assert {**loaded, "path": ""} == {**sized, "path": ""}
