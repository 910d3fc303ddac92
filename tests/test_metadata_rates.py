"""The table of typical metadata rates: every entry reads, and its ranges span the io500 figures it cites."""

from __future__ import annotations

import csv
import re
import statistics
import subprocess
import sys
import tomllib

import pytest

from probes.core.units import Metric, canonical
from topologies.catalogues.metadata_rates import ANY, OPERATIONS, TABLE, entry, known, typical_metadata

PAIRS = [(service, devices) for service, classes in known().items() for devices in classes]
LIST = "io500-list/io500-db-2017-2019_submissions.csv"
# Phase columns of the list database, per operation of the table.
PHASES = {"create": ("mdtest_easy_write", "mdtest_hard_write"), "stat": ("mdtest_easy_stat", "mdtest_hard_stat"),
          "open": ("mdtest_hard_read",), "remove": ("mdtest_easy_delete", "mdtest_hard_delete"), "find": ("find_easy",)}
COLUMNS = [column for columns in PHASES.values() for column in columns]
# The later submissions the table adds to the list database: result file, service, devices, servers.
LATER = [("io500/narval_io500-sc21_result_summary.txt", "lustre", None, 4),
         ("io500/oci-beegfs_io500-isc20-bash_result_summary.txt", "beegfs", "nvme", 150),
         ("io500/lrz-daos_io500-isc25_result_summary.txt", "daos", "pmem", 42)]


@pytest.mark.parametrize("service, devices", PAIRS)
def test_every_entry_reads_as_ranges_of_operation_rates(service, devices):
    rates = typical_metadata(service, devices)
    assert tuple(rates) == OPERATIONS
    for operation, (low, high, note) in rates.items():
        assert Metric.of(low) is Metric.OPERATION_RATE and Metric.of(high) is Metric.OPERATION_RATE
        assert str(low.units) == str(high.units) == "operation / second"
        assert 0 < canonical(low) <= canonical(high), operation
        assert note and "\n" not in note and f"[{service}.{devices}]" in note


@pytest.mark.parametrize("service, devices", PAIRS)
def test_every_entry_names_its_sources_and_ends(service, devices):
    body = entry(service, devices)
    assert body["sources"] and all(isinstance(line, str) and line.strip() for line in body["sources"])
    assert set(body["ends"]) == set(OPERATIONS)
    assert body["basis"] in ("metadata server", "data server")
    assert 1 <= body["systems"] <= body["submissions"]
    assert f"{body['submissions']} submission" in body["note"]
    if body["systems"] <= 2:
        assert "indicative" in body["note"]


def test_names_are_short_and_lowercase():
    for service, classes in known().items():
        assert re.fullmatch(r"[a-z][a-z0-9-]*", service)
        assert classes[-1] == ANY and set(classes[:-1]) <= {"hdd", "ssd", "nvme", "pmem"}


@pytest.mark.parametrize("service", sorted(known()))
def test_any_spans_every_class_of_its_service(service):
    classes = known()[service][:-1]
    wide = typical_metadata(service, ANY)
    assert entry(service, ANY)["includes"] == list(classes)
    for devices in classes:
        for operation, (low, high, _) in typical_metadata(service, devices).items():
            assert canonical(wide[operation][0]) <= canonical(low)
            assert canonical(wide[operation][1]) >= canonical(high)


def test_names_are_matched_without_case_and_by_alias():
    assert typical_metadata(" BeeGFS ", "NVMe") == typical_metadata("beegfs", "nvme")
    assert typical_metadata("spectrum-scale", "any") == typical_metadata("gpfs", "any")


def test_an_unknown_service_names_the_known_ones():
    with pytest.raises(LookupError) as caught:
        typical_metadata("zfs", "ssd")
    message = str(caught.value)
    assert message.startswith("The typical metadata service must be one of: lustre (hdd, ssd, nvme, any); beegfs")
    assert message.endswith("Got 'zfs' instead.")
    assert all(service in message for service in known())


def test_an_unknown_device_class_names_those_of_the_service():
    with pytest.raises(LookupError, match=r"^The devices of typical metadata service 'beegfs' must be one of: "
                                          r"ssd, nvme, pmem, any \('any' when they are not known\)\. Got 'hdd' instead\.$"):
        typical_metadata("beegfs", "hdd")


def test_importing_reads_no_table_and_loads_no_pint():
    code = ("import sys, topologies.catalogues.metadata_rates as m; "
            "assert m._table.cache_info().currsize == 0; assert 'pint' not in sys.modules; assert 'tomllib' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=TABLE.parents[1])


def test_the_table_is_valid_toml_with_only_entries_at_two_levels():
    doc = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    assert all(isinstance(body, dict) and "sources" in body for classes in doc.values() for body in classes.values())


# Recomputing entries from the data they cite -------------------------------------------------------------


def _device_class(text: str) -> str | None:
    """The table's device class of a storage-type description; None for mixed or unstated devices."""
    words = set(re.split(r"[^a-z0-9]+", text.strip().lower().replace("nvme ssd", "nvme").replace("nvme-ssd", "nvme")))
    if words & {"aep", "dcpmm"} or "persistent memory" in text.lower():
        return "pmem"
    kinds = {kind for kind, hit in (("nvme", any(w.startswith(("nvme", "3dxp")) for w in words)),
                                    ("ssd", "ssd" in words), ("hdd", bool(words & {"hdd", "nlsas"}))) if hit}
    return kinds.pop() if len(kinds) == 1 else None


def _list_submissions(corpus) -> list[dict]:
    """Lustre, BeeGFS and DAOS submissions of the list database, one version each, by the table's rules."""
    with open(corpus / LIST, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    versions: dict[str, list[dict]] = {}
    for row in rows:
        if row["status"] == "VALID":
            versions.setdefault(row["information_identifier"], []).append(row)
    found, seen = [], set()
    for rows_of_one in versions.values():
        rows_of_one.sort(key=lambda r: (r["valid_from"], r["release_id"] != "", -int(r["id"])), reverse=True)
        row = rows_of_one[0]
        kiops = {c: float(next(r[c] for r in rows_of_one if r[c].strip())) for c in COLUMNS
                 if any(r[c].strip() for r in rows_of_one)}
        fs = row["information_filesystem_type"].strip().lower()
        service = "lustre" if fs.startswith("lustre") else fs if fs in ("beegfs", "daos") else None
        counted = row["information_ds_nodes" if service == "daos" else "information_md_nodes"].strip()
        key = (row["information_system"], row["information_institution"], tuple(kiops.get(c) for c in COLUMNS[:-1]))
        if service is None or not counted.isdigit() or int(counted) == 0 or key in seen:
            continue
        seen.add(key)
        storage = row["information_md_storage_type"] or (row["information_ds_storage_type"] if service == "daos" else "")
        found.append({"service": service, "devices": _device_class(storage), "servers": int(counted), "kiops": kiops,
                      "system": re.sub(r"\W", "", (row["information_system"] + row["information_institution"]).lower()),
                      "id": row["id"]})
    return found


# A phase line of an io500 result summary, old ("[RESULT] IOPS phase 1 mdtest_easy_write 1913.300 kiops")
# and new ("[RESULT]    mdtest-easy-write       79.439712 kIOPS").
_PHASE = re.compile(r"^\[RESULT\]\s+(?:IOPS\s+phase\s+\d+\s+)?([\w-]+)\s+([\d.]+)\s+kiops\b", re.IGNORECASE | re.MULTILINE)


def _later_submissions(corpus) -> list[dict]:
    found = []
    for path, service, devices, servers in LATER:
        kiops = {name.replace("-", "_"): float(value) for name, value in _PHASE.findall((corpus / path).read_text(encoding="utf-8"))}
        kiops["find_easy"] = kiops.pop("find")
        assert set(COLUMNS) <= set(kiops)
        found.append({"service": service, "devices": devices, "servers": servers, "system": path, "id": None, "kiops": kiops})
    return found


def _cached(submissions: list[dict]) -> set[tuple[str, str]]:
    """(submission, column) of stat and open figures over 100 x the median of the same system's other runs."""
    left_out = set()
    for one in submissions:
        for column in ("mdtest_easy_stat", "mdtest_hard_stat", "mdtest_hard_read"):
            others = [o["kiops"][column] / o["servers"] for o in submissions
                      if o is not one and o["system"] == one["system"] and o["service"] == one["service"] and o["kiops"].get(column)]
            if others and one["kiops"].get(column, 0) / one["servers"] > 100 * statistics.median(others):
                left_out.add((one["id"], column))
    return left_out


@pytest.fixture(scope="module")
def submissions(corpus):
    if not (corpus / LIST).is_file():
        pytest.skip(f"the io500 list database is not at {corpus / LIST}")
    return _list_submissions(corpus) + _later_submissions(corpus)


def test_the_client_cache_rule_leaves_out_one_figure_of_these_services(submissions):
    assert _cached(submissions) == {("9", "mdtest_easy_stat")}  # Data Accelerator, Cambridge, ISC19


@pytest.mark.parametrize("service, devices", [("beegfs", "nvme"), ("beegfs", "ssd"), ("lustre", "ssd"),
                                              ("lustre", "nvme"), ("lustre", "any"), ("daos", "pmem")])
def test_ranges_span_the_published_figures_exactly(submissions, service, devices):
    left_out = _cached(submissions)
    mine = [s for s in submissions if s["service"] == service and devices in (ANY, s["devices"])]
    body = entry(service, devices)
    assert body["submissions"] == len(mine)
    assert body["systems"] == len({s["system"] for s in mine})
    for operation, (low, high, _) in typical_metadata(service, devices).items():
        figures = [s["kiops"][c] * 1000 / s["servers"] for s in mine for c in PHASES[operation]
                   if s["kiops"].get(c, 0) > 0 and (s["id"], c) not in left_out]
        # The table rounds outwards to 4 significant figures: it spans every figure and is no wider than that.
        assert canonical(low) <= min(figures) and canonical(high) >= max(figures), operation
        assert canonical(low) == pytest.approx(min(figures), rel=1e-3)
        assert canonical(high) == pytest.approx(max(figures), rel=1e-3)


def test_beegfs_nvme_create_contains_every_write_of_every_beegfs_nvme_submission(submissions):
    low, high, _ = typical_metadata("beegfs", "nvme")["create"]
    writes = [s["kiops"][c] * 1000 / s["servers"] for s in submissions if (s["service"], s["devices"]) == ("beegfs", "nvme")
              for c in ("mdtest_easy_write", "mdtest_hard_write")]
    assert len(writes) == 2 * 13
    assert all(canonical(low) <= w <= canonical(high) for w in writes)
