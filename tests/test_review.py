"""io500 descriptions into topologies, and a whole list judged against them: `iobound review`, `check` on a
submission's folder and `topology from-io500`, on the real list database and submissions of the corpus."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from probes.core.units import Q_
from probes.core.errors import ToolOutputError
from probes.readers.io500_system import Description, read_description, read_form, read_info, read_list
from topologies.catalogues.hardware import device_classes, network_ports
from topologies.described.io500 import describe
from assess.cli import main
from assess.findings import Severity
from assess.render import dumps, envelope
from assess.review import REVIEW_VERSION, UNJUDGED, review, review_body
from assess.review_page import write_pages
from tests.browser import CHROMIUM, seen_in_chromium

LIST = "io500-list/io500-db-2017-2019_submissions.csv"


@pytest.fixture(scope="module")
def listed(corpus):
    path = corpus / LIST
    if not path.is_file():
        pytest.skip(f"the io500 list database is not in the corpus ({path})")
    return path


@pytest.fixture(scope="module")
def reviewed(listed):
    return list(review(read_list(listed.read_text(encoding="utf-8"), source=str(listed))))


@pytest.mark.parametrize("text, low, high, ports", [
    ("InfiniBand EDR", 100, 100, None), ("FDR InfiniBand", 54.54, 54.54, None), ("IB-HDR", 200, 200, None),
    ("OmniPath", 100, 100, None), ("OPA (2x OPA HFIs per server)", 100, 100, 2), ("Cray Aries", 64, 128, None),
    ("Ethernet 10Gbps", 10, 10, None), ("100GbE", 100, 100, None), ("40gigE", 40, 40, None),
    ("50 Ethernet", 50, 50, None), ("Ethernet 8x1gigabit", 1, 1, 8), ("Ethernet", 1, 800, None),
    ("InfiniBand", 8, 800, None), ("Ethernet 10Gbps, InfiniBand", 8, 800, None)])
def test_a_networks_name_gives_the_rate_of_one_port_a_range_where_it_does_not_fix_it(text, low, high, ports):
    network = network_ports(text)
    assert (network.low.m_as("Gbit/s"), network.high.m_as("Gbit/s"), network.ports) == pytest.approx((low, high, ports))


def test_a_name_that_is_no_network_gives_none():
    assert network_ports("N/A") is None and network_ports("") is None


@pytest.mark.parametrize("text, classes", [
    ("NVMe SSD", ("nvme",)), ("HDD", ("hdd",)), ("NL-SAS 7.2K HDD", ("hdd",)), ("SSD", ("ssd",)),
    ("SSD-HDD", ("ssd", "hdd")), ("3DXP/NVMe SSD", ("optane-ssd", "nvme")), ("Optane DC Persistent Memory", ("pmem",)),
    ("Persistent Disk SSD", ("cloud-ssd",)), ("PD-Standard", ("cloud-hdd",)), ("SATA", ("sata",)),
    ("16x 128GB Optane DC PMem 200 + 8x 3.84TB U.2 P5500 NVMe", ("pmem", "nvme")), ("N/A", ())])
def test_a_device_type_names_its_classes_and_a_generic_ssd_yields_to_a_specific_one(text, classes):
    assert device_classes(text) == classes


def _description(**fields) -> Description:
    return Description({key: str(value) for key, value in fields.items()}, "given")


def test_a_device_count_is_per_server_or_in_all_and_the_range_spans_both():
    described = describe(_description(client_nodes=10, ds_nodes=4, ds_network="InfiniBand EDR", ds_storage_devices=12,
                                      ds_storage_type="HDD", filesystem_type="Lustre", md_nodes=1, md_storage_type="SSD"))
    storage = described.topology.group("storage")
    low, high = storage.capacity("bandwidth").range
    # 12 disks in all (3 per server) at 80 MB/s each, up to 12 per server at 554 MB/s each (two actuators)
    assert (low.m_as("MB/s"), high.m_as("MB/s")) == pytest.approx((3 * 80, 12 * 554))
    nic = described.topology.group("data").capacity("nic")
    assert [q.m_as("Gbit/s") for q in nic.range] == [100, 800] and described.ports["data"] == Q_(100, "Gbit/s")
    metadata = described.topology.group("metadata")
    # what bounds a server, not the published rates of Lustre on SSD: those are only named, as the band
    create = metadata.capacity("metadata", "create")
    assert create.source.kind == "assumption" and "eRPC" in create.source.note
    assert [q.m_as("op/s") for q in create.range] == [4 * 1000, 384 * 10_000_000] and described.band == ("lustre", "ssd")
    # the metadata devices are not counted: the journal bounds nothing, and the assumptions say so
    assert metadata.capacity("journal") is None and any(line.startswith("metadata journal: md_storage_devices")
                                                        for line in described.assumptions)
    assert any("1 to 8 port(s) per node" in line for line in described.assumptions)


def test_a_description_without_servers_or_network_is_too_thin_and_says_which_fields():
    described = describe(_description(client_nodes=1, client_procs_per_node=16, filesystem_type="Local file system"))
    assert described.topology is None
    assert [m.split(":")[0] for m in described.missing][:2] == ["ds_nodes", "ds_network"]


def test_the_list_is_read_row_by_row_with_every_phase_in_its_unit(listed):
    submissions = read_list(listed.read_text(encoding="utf-8"), source=str(listed))
    assert len(submissions) == 366
    cambridge = next(s for s in submissions if s.id == "9")
    runs = {r.label: r for r in cambridge.runs}
    assert len(runs) == 12 and runs["ior-easy-write"].samples == (328.88,) and runs["ior-easy-write"].unit == "GiB/s"
    assert runs["mdtest-easy-write"].unit == "kop/s"
    hard = runs["ior-hard-write"].workload
    assert (hard.transfer_size.m_as("B"), hard.shared_file, hard.nodes, hard.ppn) == (47008, True, 512, 16)


def test_a_list_a_spreadsheet_saved_with_semicolons_and_decimal_commas_reads_as_the_list(listed):
    """A spreadsheet in a locale whose decimal mark is a comma separates fields with ";" and writes 328,88: the same
    submissions, not rows of one field each."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(listed.read_text(encoding="utf-8"))))[:21]
    phases = [i for i, name in enumerate(rows[0]) if name.startswith(("ior_", "mdtest_", "find_"))]
    saved = io.StringIO()
    csv.writer(saved, delimiter=";").writerows(
        [rows[0]] + [[v.replace(".", ",") if i in phases else v for i, v in enumerate(row)] for row in rows[1:]])
    comma = io.StringIO()
    csv.writer(comma).writerows(rows)
    semicolons, commas = (read_list(text.getvalue(), source="list.csv") for text in (saved, comma))
    assert [(s.id, s.runs, s.description.fields) for s in semicolons] == \
        [(s.id, s.runs, s.description.fields) for s in commas] and len(commas) == 20 and commas[0].runs


def test_a_result_listed_twice_never_vouches_for_itself(listed):
    """A list holds a result again when it was submitted to two lists (NURION's sc18 row and its relistings): the copy
    is the same measurement, so it raises no range for the row it copies. The row's verdicts are the ones it gets
    alone; another run of the same system still narrows."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(listed.read_text(encoding="utf-8"))))
    nurion = next(row for row in rows[1:] if row[0] == "29")
    copy = [("copy" if i == 0 else value) for i, value in enumerate(nurion)]

    def verdicts(*body) -> dict[str, str]:
        text = io.StringIO()
        csv.writer(text).writerows([rows[0], *body])
        (reviewed, *_) = review(read_list(text.getvalue(), source="list.csv"))
        return {p.label: p.verdict for p in reviewed.phases}

    alone = verdicts(nurion)
    assert verdicts(nurion, copy) == alone and alone["ior-easy-write"] == "POSSIBLE-IF"


def test_a_cell_holding_no_result_leaves_its_phase_unjudged_saying_so_and_the_list_is_judged(listed, tmp_path, capsys):
    """One bad cell (not a number, or below zero) of a list of hundreds must not stop its review, nor vanish."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(listed.read_text(encoding="utf-8"))))[:4]
    rows[1][rows[0].index("ior_easy_write")], rows[2][rows[0].index("mdtest_easy_write")] = "nan", "-5"
    bad = tmp_path / "bad.csv"
    with bad.open("w", newline="", encoding="utf-8") as file:
        csv.writer(file).writerows(rows)
    assert main(["review", str(bad), "--json", "--fail-on", "never"]) == 0
    phases = [(s["id"], p) for s in json.loads(capsys.readouterr().out)["submissions"] for p in s["phases"]]
    unread = [(i, p["phase"], p["no_ceiling"]) for i, p in phases if p["measured"] is None]
    assert unread == [(rows[1][0], "ior-easy-write", "line 2: ior_easy_write holds 'nan', not a result"),
                      (rows[2][0], "mdtest-easy-write", "line 3: mdtest_easy_write holds '-5', not a result")]
    assert all(p["verdict"] == UNJUDGED for i, p in phases if p["measured"] is None)
    assert sum(p["verdict"] != UNJUDGED for _, p in phases) > 20  # the rows' other phases are judged
    assert main(["review", str(bad), "--fail-on", "never"]) == 0
    assert "ior-easy-write: line 2: ior_easy_write holds 'nan', not a result" in capsys.readouterr().out


@pytest.mark.slow
def test_every_submission_stating_clients_servers_and_a_network_gets_a_verdict_on_every_phase(reviewed):
    stating = [r for r in reviewed if all(r.submission.description.get(f) for f in ("client_nodes", "ds_nodes"))
               and (r.submission.description.get("ds_network") or r.submission.description.get("md_network"))]
    assert len(stating) == 281
    for r in stating:
        for p in r.phases:
            if p.verdict == UNJUDGED:  # a metadata phase whose description names no service or servers to judge by
                assert p.label.startswith(("mdtest", "find")) and re.match(r"(md_nodes|filesystem_type): ", p.reason), \
                    (r.submission.id, p)
            else:
                assert p.low is not None and p.high is not None and p.efficiency is not None
    thin = [r for r in reviewed if r not in stating]
    assert thin and all(r.verdict == UNJUDGED and r.thin for r in thin)


@pytest.mark.slow
def test_each_submission_says_what_client_memory_would_break_io500s_assumption_as_no_list_states_it(reviewed):
    assert all(r.assumption.state == "memory not stated" and r.assumption.least for r in reviewed)
    superpod = next(r for r in reviewed if r.submission.id == "22")
    # 273.16 GiB/s for at least io500's 300 s from 10 client nodes: 8,195 GiB on each
    assert superpod.assumption.written.m_as("GiB") == pytest.approx(273.16 * 300 / 10)
    assert str(superpod.assumption) == ("memory not stated: it breaks only with more than 8.00 TiB of memory per "
                                        "client node")
    assert min(r.assumption.written for r in reviewed).m_as("GiB") == pytest.approx(3.3)


# Bytecollider (CERN, CephFS, SC18, listed four times): mdtest-hard-read of 7,154 kIOPS from 64 processes on 10 GbE
# needs a round trip of at most 8.95 us: shorter than kernel TCP commonly makes, not than RDMA over Ethernet (2 us).
CACHED = {(i, "mdtest-hard-read") for i in ("179", "289", "349", "412")}


@pytest.mark.slow
def test_no_result_of_the_list_is_above_physics_and_bytecolliders_opens_say_the_round_trip_they_need(reviewed):
    assert not [(r.submission.id, p.label) for r in reviewed for p in r.phases if p.verdict == "ABOVE-CEILING"]
    phases = {(r.submission.id, p.label): p for r in reviewed for p in r.phases}
    for key in CACHED:
        assert phases[key].verdict == "POSSIBLE-IF" and "fabric.rtt ≤ 8.95 µs" in phases[key].implies


@pytest.mark.slow
def test_no_metadata_verdict_stands_on_the_published_rates_which_are_information_without_the_systems_own(reviewed):
    from topologies.catalogues.metadata_rates import band

    # the figures the old table judged "above every published one": client caches and SC18 figures re-issued far
    # lower on SC18*; none is an error or a warning for being above past results
    was_above = {("9", "mdtest-easy-stat"), ("221", "mdtest-easy-stat"), ("280", "mdtest-easy-write"),
                 ("299", "mdtest-easy-write"), ("310", "mdtest-easy-write")} | \
        {(i, phase) for i in ("313", "314", "318") for phase in ("mdtest-easy-write", "mdtest-hard-write")}
    phases = {(r.submission.id, p.label): p for r in reviewed for p in r.phases}
    assert all(phases[key].severity in (None, Severity.INFO) or phases[key].verdict == "POSSIBLE-IF"
               for key in was_above)
    bands = [(r, f) for r in reviewed for j in r.judgements for f in j.findings if f.code == "PUBLISHED-BAND"]
    assert len(bands) > 500 and all(f.severity is Severity.INFO for _, f in bands)
    for r, f in bands:  # the band holds no run of the submission's own system
        service, devices = r.described.band
        phase = "find" if f.run.startswith("find") else f.run.removeprefix("mdtest-")
        found = band(service, devices, phase, r.submission.description.title)
        assert f.evidence["band_high"]["value"] == found.high.m_as("op/s")
        assert f.evidence["left_out_own"] == found.left_out


@pytest.mark.slow
def test_a_multi_rail_result_is_possible_if_and_says_how_many_ports_it_needs(reviewed):
    from assess.check import check_runs
    from assess.review import _phase

    superpod = next(r for r in reviewed if r.submission.id == "22")
    alone = check_runs(superpod.described.topology, superpod.submission.runs, witnesses=())
    write = _phase(next(j for j in alone if j.run.label == "ior-easy-write"), superpod.described)
    # 273 GiB/s: more than one EDR port per data server can carry, within the eight they may have; the clients'
    # network is not stated, so their NICs are a range over any a client carries, not the servers' network
    assert write.verdict == "POSSIBLE-IF" and "clients.nic ≥ 27.3 GiB/s" in write.implies
    found = re.search(r"≥ (\d+) ports of 100 Gbit/s per data node \(([0-9.]+) at their full rate\)", write.implies)
    assert int(found[1]) == 3
    assert any(a.startswith("clients.nic: the clients' network is not stated (client_network)")
               for a in superpod.described.assumptions)
    # on the list, its read (286 GiB/s by other nodes) proves those ports: only the devices are left to imply
    listed = next(p for p in superpod.phases if p.label == "ior-easy-write")
    assert listed.verdict == "POSSIBLE-IF" and listed.implies == "needs storage.bandwidth ≥ 27.3 GiB/s"
    assert {n["witness"] for n in listed.narrowed_by} == {"ior-easy-read"}


@pytest.mark.slow
def test_review_prints_a_line_per_submission_and_fails_on_what_it_is_asked_to(listed, capsys):
    assert main(["review", str(listed)]) == 0  # no result of the list is above physics: no error
    out = capsys.readouterr().out
    assert "list: " in out and "(366 submissions)" in out and "(ABOVE-CEILING):" not in out
    assert "ABOVE-PUBLISHED" not in out
    assert re.search(r"^22 +sc19 +DGX-2H SuperPOD \(NVIDIA\) .* POSSIBLE-IF ", out, re.M)
    assert "83 submission(s): ds_nodes: no data servers" in out
    # io500's assumption on every submission: no list states the clients' memory, so each says what memory breaks it
    assert ("the easy write's files exceeded client memory (io500's assumption): held in 0, not in 0, not shown in 0, "
            "memory not stated in 366 (would break above 3.30 GiB to 8.00 TiB of memory per client node") in out


@pytest.fixture(scope="module")
def pages(listed, reviewed, tmp_path_factory):
    """The reviewed list's HTML folder and its JSON beside it, as review --html and --json write them (from the one
    review of the list the module makes: each takes half a minute of CI; the command's own path is test_outputs')."""
    directory = tmp_path_factory.mktemp("review") / "report"
    write_pages(reviewed, directory, str(listed))
    (directory.parent / "review.json").write_text(
        dumps(envelope("review", REVIEW_VERSION, review_body(str(listed), reviewed))), encoding="utf-8")
    return directory


@pytest.mark.slow
def test_review_json_is_versioned_and_carries_each_topology(pages):
    doc = json.loads((pages.parent / "review.json").read_text(encoding="utf-8"))
    assert (doc["format"], doc["format_version"]) == ("iobound/review", "1.4")
    phases = [p["verdict"] for submission in doc["submissions"] for p in submission["phases"]]
    assert len(phases) == 4259 and set(phases) >= {"POSSIBLE-IF", UNJUDGED} and "ABOVE-CEILING" not in phases
    assert "ABOVE-PUBLISHED" not in phases
    first = doc["submissions"][0]
    # 1.3: io500's assumption, with the data written per client node (298.13 GiB/s over 300 s from 345 nodes)
    assumed = first["easy_write_past_client_memory"]
    assert assumed["state"] == "memory not stated" and assumed["client_memory"] is None and assumed["written_is_least"]
    assert assumed["written_per_node"]["value"] == pytest.approx(298.13 * 300 / 345)
    verdicts = {p["phase"]: p["verdict"] for p in first["phases"]}
    assert first["id"] == "3" and first["topology"]["groups"] and verdicts["ior-easy-read"] == "POSSIBLE-IF"
    # 1.1: the ranges a phase's least rests on that a run no cache can have served raised, and which run it was
    witnesses = {n["witness"] for p in first["phases"] for n in p["narrowed_by"]}
    assert witnesses and witnesses <= {"ior-easy-write", "ior-hard-write", "ior-easy-read", "ior-hard-read"}


@pytest.mark.slow
def test_the_html_report_has_an_index_a_figure_and_a_page_per_submission(pages, listed, capsys):
    index = (pages / "index.html").read_text(encoding="utf-8")
    assert "Results that need more than the stated hardware" in index and 'class=sortable' in index
    assert (pages / "figures" / "efficiencies.png").is_file() and len(list((pages / "submissions").glob("*.html"))) == 366
    page = (pages / "submissions" / "22.html").read_text(encoding="utf-8")
    assert "DGX-2H SuperPOD" in page and "Assumptions" in page and "ior-easy-write" in page
    assert ("files exceed the clients&#x27; memory: memory not stated: it breaks only with more than 8.00 TiB of memory "
            "per client node.") in page
    assert main(["review", str(listed), "--html", str(pages)]) == 2  # never over a folder that exists
    assert "exists already" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_html_report_opens_in_chromium_and_sorts_by_a_heading(pages, tmp_path):
    page = seen_in_chromium(pages / "index.html", """
  const first = () => d.querySelector("#list tbody td").textContent, before = first();
  d.querySelectorAll("#list th")[11].click();  // efficiency, ascending
  const sorted = first(); d.querySelectorAll("#list th")[11].click();
  return {title: d.title, rows: d.querySelectorAll("#list tbody tr").length,
          images: [...d.images].filter(i => i.complete && i.naturalWidth > 0).length, before: before, sorted: sorted,
          reversed: first()};""", tmp_path)
    assert page["title"] == "iobound review: io500-db-2017-2019_submissions.csv"
    assert page["rows"] == 366 and page["images"] == 1 and page["before"] == "3"
    assert page["sorted"] != page["before"] and page["sorted"] != page["reversed"]


@pytest.fixture
def submission(corpus, tmp_path):
    """An io500 submission's folder as submission-data keeps it: results/<timestamp>/ with its description."""
    folder = tmp_path / "LRZ" / "results" / "2025.09.20-14.56.25"
    folder.mkdir(parents=True)
    shutil.copy(corpus / "io500" / "lrz-daos_system-information.txt", folder / "system-information.txt")
    shutil.copy(corpus / "io500" / "lrz-daos_io500-isc25_result.txt", folder / "result.txt")
    return tmp_path / "LRZ"


def test_check_takes_a_submissions_folder_without_a_topology_written_by_hand(submission, capsys):
    assert main(["check", str(submission), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    runs = {r["run"]["label"]: r for r in doc["runs"]}
    assert len(runs) == 13 and doc["topology"]["path"].endswith("system-information.txt")
    easy = runs["ior-easy-write"]
    assert easy["ceiling"] is not None and [f["code"] for f in easy["findings"]][0] == "POSSIBLE-IF"
    # the description's own file with results named after it judges the same
    description = next(submission.rglob("system-information.txt"))
    assert main(["check", str(description), str(description.with_name("result.txt")), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["ceiling"] == easy["ceiling"]


def test_check_says_in_one_line_what_a_thin_description_lacks(corpus, capsys):
    thin = corpus / "io500" / "reading-tx2-ext4_system-information.txt"
    assert main(["check", str(thin), str(corpus / "io500" / "reading-tx2-ext4_io500-sc20_v3_result.txt")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "too thin to build a topology from: ds_nodes" in err and "ds_network" in err


def test_topology_from_io500_prints_or_saves_the_topology_with_every_assumption(listed, corpus, capsys, tmp_path):
    assert main(["topology", "from-io500", str(listed), "--row", "22"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Written by iobound topology from-io500") and "# Assumptions:" in text
    assert 'name = "DGX-2H-SuperPOD-NVIDIA"' in text
    out = tmp_path / "oci.toml"
    description = corpus / "io500" / "oci-beegfs_system-information.txt"
    assert main(["topology", "from-io500", str(description), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["topology", str(out), "--json"]) == 0
    groups = {g["name"]: g for g in json.loads(capsys.readouterr().out)["groups"]}
    assert groups["clients"]["count"] == 170 and groups["data"]["count"] == 170 and groups["metadata"]["count"] == 150
    before = out.read_bytes()
    assert main(["topology", "from-io500", str(description), "-o", str(out)]) == 2
    assert out.read_bytes() == before and "exists already" in capsys.readouterr().err
    assert main(["topology", "from-io500", str(listed), "--row", "no-such-id"]) == 2
    assert "names no submission of the list" in capsys.readouterr().err


def test_the_io500_info_variables_are_read_as_io500_sh_sets_them():
    description = read_info('# io500.sh\nio500_info_ds_nodes="42"\nexport io500_info_ds_network=\'InfiniBand HDR\'\n'
                            'io500_info_client_nodes=192 # nodes\n', source="io500.sh")
    assert description.fields == {"ds_nodes": "42", "ds_network": "InfiniBand HDR", "client_nodes": "192"}
    assert description.cite("ds_network") == "io500 ds_network (io500.sh:3)"


def test_the_web_forms_json_is_read_into_the_same_fields_with_where_each_stands(corpus):
    """Narval's system-information.txt is the submission page's JSON, its long lines wrapped inside strings."""
    path = corpus / "io500" / "narval_system-information.txt"
    description = read_description(path.read_text(encoding="utf-8"), source=path.name)
    fields = description.fields
    assert (fields["system"], fields["institution"], fields["filesystem_type"]) == ("Narval", "Calcul Quebec", "Lustre")
    assert (fields["ds_nodes"], fields["md_nodes"], fields["ds_volatile_memory_capacity"]) == ("22", "4", "196 GB")
    assert fields["client_network"] == "Infiniband 100 GBit"  # the one node group on the fabric
    assert fields["ds_network"] == "Infiniband"  # the servers' own speed is not stated: the fabric only
    assert "client_nodes" not in fields and fields["node_groups"] == "nc: 1109 (Infiniband 100 GBit); nl: 33; ng: 158"
    assert description.cite("ds_nodes") == ("io500 ds_nodes (narval_system-information.txt:Site/StorageSystem "
                                            "lustre06/Lustre/OSS lustre06-oss)")


def test_a_web_form_description_is_judged_once_told_the_client_nodes(corpus, capsys):
    description = corpus / "io500" / "narval_system-information.txt"
    result = corpus / "io500" / "narval_io500-sc21_result.txt"
    assert main(["check", str(description), str(result)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "the machine's node groups, nc: 1109" in err and "RESULTS --nodes N" in err
    assert main(["check", str(description), str(result), "--nodes", "640", "--json", "--fail-on", "never"]) == 0
    doc = json.loads(capsys.readouterr().out)
    verdicts = {r["run"]["label"]: [f["code"] for f in r["findings"]][0] for r in doc["runs"]}
    assert len(verdicts) == 12 and "ABOVE-CEILING" not in verdicts.values()  # its devices unstated: wide ranges
    assert verdicts["ior-easy-read"] == "POSSIBLE-IF"
    assert main(["topology", "from-io500", str(description), "--nodes", "640"]) == 0
    text = capsys.readouterr().out
    assert 'count = 640\ndescription = "client nodes (client_nodes given with --nodes)"' in text
    assert "'infiniband 100 gbit' states the speed" in text  # the clients' network, from their node group
    assert main(["topology", "lecture", "--nodes", "3"]) == 2  # --nodes goes with from-io500 only
    assert "go with from-io500 only" in capsys.readouterr().err


def test_json_that_is_not_the_web_form_is_refused_in_one_line():
    with pytest.raises(ToolOutputError, match="is not the io500 web form's JSON"):
        read_form('{"DATA": [1, 2]}', source="form.json")
    with pytest.raises(ToolOutputError, match="states no system, storage system or servers"):
        read_form('{"DATA": {"type": "Site", "childs": []}}', source="form.json")


def test_a_web_forms_server_group_counts_itself_not_its_parts():
    """A metadata group listed first with counted disks inside: its disks are no data servers; a storage group named
    Nodes is no client group."""
    form = ('{"DATA": {"type": "Site", "att": {}, "childs": [{"type": "StorageSystem", "att": {"software": "Lustre"}, '
            '"childs": [{"type": "Lustre", "att": {}, "childs": [{"type": "MDS", "att": {"name": "m", "count": "2"}, '
            '"childs": [{"type": "Disk", "att": {"count": "10"}, "childs": []}]}, {"type": "Nodes", "att": '
            '{"name": "oss", "count": "22"}, "childs": []}]}]}]}}')
    fields = read_form(form, source="form.json").fields
    assert (fields["md_nodes"], fields["ds_nodes"]) == ("2", "22") and "node_groups" not in fields


def test_io500_form_json_in_another_wrapping_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "system-information.txt"
    path.write_text('[{"type":"IO500","att":{},"childs":[]}]', encoding="utf-8")
    assert main(["topology", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not as the form writes it" in err
