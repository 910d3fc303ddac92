"""Every versioned JSON format iobound writes keeps its keys until its version changes.

Each format's keys, as a real command writes them, are pinned in tests/data/formats.json
beside the format_version they belong to: a change of keys with no new version fails here,
and so does a new version whose keys are not pinned again (``python tests/test_formats.py``
prints the pins afresh, for a reviewer to compare).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from tests.systems import topology

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "tests" / "data" / "formats.json"
# Maps keyed by data (symbol names, tags, capacity keys (a KV-cache tier's rates), group names, a probe's parameters, a plan's file names), not by the format: their entries stand as ``*``.
DATA_MAPS = {"symbols", "tags", "capacities", "rates", "counts", "parameters", "files"}
# A system on which a prediction has every optional part: a knee (two SSDs bind before ten clients' NICs) and
# both caches (memory and its speed stated on clients and servers).
SYSTEM = """
name = "pins"
[clients.compute]
count = 10
nic = "110 MiB/s"
memory = "64 GiB"
memory_bandwidth = "10 GiB/s"
[networks.ethernet]
rtt = "0.1 ms"
[servers.storage]
count = 2
nic = "10 Gbit/s"
memory = "128 GiB"
memory_bandwidth = "20 GiB/s"
[devices.ssd]
count = 2
bandwidth = "270 MiB/s"
iops = "15000 op/s"
"""
# A client NIC known only to lie between half and all of the lecture's 110 MiB/s.
RANGE = "compute.nic=55..110MiB/s"
# Per format, commands and their exit statuses that together write every optional part it has ({system}: SYSTEM).
COMMANDS = {
    "prediction": [(["predict", "{system}", "--op", "read", "--transfer-size", "1MiB", "--data-set", "1GiB", "--curve",
                     "--json"], 0),
                   # and with a figure known only as a range: the ceiling's low end
                   (["predict", "{system}", "--set", "ssd.bandwidth=200..270MiB/s", "--op", "read", "--transfer-size",
                     "1MiB", "--json"], 0)],
    "prediction-sweep": [(["predict", "lecture", "--set", RANGE, "--op", "read,write", "--transfer-size", "1MiB",
                           "--json"], 0)],
    "check": [(["check", "lecture", "lecture-results.csv", "--fail-on", "never", "--json"], 0),
              (["check", "lecture", "lecture-results.csv", "--set", RANGE, "--fail-on", "never", "--json"], 0),
              # and where a run no cache can have served raises the least of a range (narrowed_by)
              (["check", "narval", "narval-io500.csv", "--fail-on", "never", "--json"], 0)],
    "results": [(["read", "lecture-results.csv", "{summary}", "no-such-results.txt", "--json"], 2)],
    "topology": [(["topology", "lecture", "--set", RANGE, "--json"], 0),
                 # and a serving node's KV-cache tiers, one of them bound by its link's nameplate
                 (["topology", "{kvnode}", "--json"], 0)],
    # the GDS and bounce paths of NVIDIA/gds-nvidia-fs #30, its gdsio runs placed on them
    "gpudirect": [(["predict", "{gputopo}", "--gpudirect", "--gdsio", "{gdsio}", "--year", "2023", "--json"], 0)],
    "kv-cache": [(["predict", "{kvnode}", "--kv-cache", "32MiB", "--request-rate", "200", "--kv-model", "llama3.1-8b",
                   "--working-set", "500GB", "--json"], 0)],
    "whatif": [(["whatif", "lecture", "--set", "compute.nic=2GbE", "--op", "read", "--transfer-size", "1MiB", "--json"], 0)],
    "examples": [(["examples", "--json"], 0)],
    "comparison": [(["compare", "lecture-results.csv", "--json"], 0)],
    "fit": [(["fit", "{sweep}", "--over", "transfer-size", "--at", "8MiB", "--json"], 0)],
    "review": [(["review", "{list}", "--fail-on", "never", "--json"], 0)],
    # Darshan logs (needs PyDarshan): a good one, and a bad one (the unreadable list), on a topology and on a mount table
    "darshan-review": [(["review", "--darshan", "{logs}", "{lustre}", "--index", "{folder}/a.sqlite", "--fail-on", "never",
                         "--json"], 0),
                       (["review", "--darshan", "{logs}", "{mounts}", "--index", "{folder}/b.sqlite", "--fail-on", "never",
                         "--json"], 0)],
    "accelerators": [(["predict", "{system}", "--accelerators", "8", "--model", "unet3d", "--accelerator", "h100",
                       "--json"], 0)],
    "checkpoint": [(["predict", "{system}", "--checkpoint", "105GiB", "--accelerators", "8", "--json"], 0),
                   # and a model's, the clients' generation stated (its model, generation ceiling and memory verdict)
                   (["predict", "{system}", "--set", "compute.checkpoint_generation=1..2GB/s", "--checkpoint",
                     "llama3-8b", "--json"], 0)],
    # a stonewalled benchmark (its wear-out) whose phases read what others wrote, with both caches stated
    "plan": [(["plan", "{system}", "--benchmark", "io500", "--noise", "5%", "--json"], 0)],
    # the lecture's runs against a plan of the same system ({plan}: iobound plan SYSTEM --benchmark ior -o)
    "plan-check": [(["check", "--plan", "{plan}", "lecture-results.csv", "--json"], 1)],
    "whatif-accelerators": [(["whatif", "{system}", "--model", "unet3d", "--accelerator", "h100", "--json"], 0)],
    "sizing": [(["size", "--clients", "100", "--client-nic", "10GB/s", "--target", "read=10GB/s", "--top", "1", "--ha",
                 "--json"], 0),
               # and when no design meets the targets: its shortfalls instead of configurations
               (["size", "--clients", "2", "--client-nic", "1GB/s", "--target", "read=100GB/s", "--json"], 1)],
}
# An io500 list of three rows: one judged with its metadata and its clients' memory, one whose result needs more than
# its description states (its implied hardware), one too thin to judge (its missing fields).
LIST = """id,information_system,information_institution,information_filesystem_type,information_client_nodes,\
information_client_procs_per_node,information_client_volatile_memory_capacity,information_ds_nodes,\
information_ds_storage_devices,information_ds_storage_type,information_ds_network,information_md_nodes,\
information_md_storage_type,information_list_name,status,ior_easy_write,ior_easy_read,mdtest_easy_write,mdtest_easy_stat
1,A,Site,Lustre,10,16,64 GB,4,12,HDD,InfiniBand EDR,1,SSD,sc19,VALID,2.5,3.1,25.0,90.0
2,B,Site,Lustre,10,16,,4,12,HDD,InfiniBand EDR,1,SSD,sc19,VALID,900.0,950.0,25.0,90.0
3,C,Site,,1,16,,,,,,,,sc19,VALID,1.0,2.0,,
"""
# A transfer-size sweep of two systems, one fitted and one measured at one size only (not fitted).
SWEEP = """system,op,transfer_size,value,unit
A,read,4 KiB,40,MiB/s
A,read,64 KiB,300,MiB/s
A,read,64 KiB,310,MiB/s
A,read,1 MiB,800,MiB/s
B,read,1 MiB,500,MiB/s
"""
# A DLIO summary of a training run and a checkpoint on hosts it does not state: every record a run may carry but a
# Darshan job's (reading a log needs PyDarshan), with each of its optional parts.
SUMMARY = {"num_accelerators": 8, "num_files_train": 100, "num_samples_per_file": 1, "potential_caching": [0, 1],
           "host_memory_GB": [64, 64], "data_size_per_host_GB": 10,
           "metric": {"train_au_percentage": [95.0, 97.0], "train_throughput_samples_per_second": [10.0, 12.0],
                      "train_au_mean_percentage": 96.0, "train_throughput_mean_samples_per_second": 11.0,
                      "train_io_mean_MB_per_second": 11.0, "train_au_meet_expectation": "success",
                      "save_checkpoint_io_mean_GB_per_second": 2.0, "save_checkpoint_duration_mean_seconds": 5.0,
                      "checkpoint_size_GB": 10.0}}
# Lists a sample may leave empty: numbers and names (no keys inside), and ceilings' caches, whose keys iobound/prediction pins.
MAY_BE_EMPTY = {"durations_s", "caches", "assumed", "prices_not_from_file", "refused"}


def key_paths(value, prefix: str = "") -> set[str]:
    """``a.b``, ``a[].c``: every key of a JSON value by where it stands; lists are merged over their items."""
    if isinstance(value, dict):
        paths = set()
        for key, inner in value.items():
            path = f"{prefix}{key}"
            paths.add(path)
            if key in DATA_MAPS and isinstance(inner, dict):
                paths |= set().union(*(key_paths(entry, path + ".*.") for entry in inner.values()))
            else:
                paths |= key_paths(inner, path + ".")
        return paths
    if isinstance(value, list):
        return set().union(*(key_paths(item, prefix.removesuffix(".") + "[].") for item in value)) if value else set()
    return set()


def written(name: str, folder: Path) -> list[dict]:
    """The documents of format ``name``: as its commands write them, or (probe-set) from one measurement."""
    if name == "probe-set":
        return [_probe_set()]
    from assess.cli import main

    topology(SYSTEM, links="compute ethernet storage ssd", path=folder / "pins.toml")
    (folder / "list.csv").write_text(LIST, encoding="utf-8")
    (folder / "summary.json").write_text(json.dumps(SUMMARY), encoding="utf-8")
    (folder / "sweep.csv").write_text(SWEEP, encoding="utf-8")
    places = dict(system=folder / "pins.toml", list=folder / "list.csv", summary=folder / "summary.json", folder=folder,
                  plan=folder / "plan" / "plan.json", sweep=folder / "sweep.csv",
                  kvnode=ROOT / "tests" / "data" / "kvcache" / "h100-nvl-node.toml",
                  gputopo=ROOT / "tests" / "data" / "gpudirect" / "gds-nvidia-fs-30_topo.txt",
                  gdsio=ROOT / "tests" / "data" / "gpudirect" / "gds-nvidia-fs-30_gdsio.txt")
    if name == "darshan-review":
        places |= _darshan_logs(folder)
    docs = []
    for argv, status in COMMANDS[name]:
        out = io.StringIO()
        if any("{plan}" in word for word in argv) and not (folder / "plan").exists():
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                assert main(["plan", str(folder / "pins.toml"), "--benchmark", "ior", "-o", str(folder / "plan")]) == 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main([word.format(**places) for word in argv]) == status
        docs.append(json.loads(out.getvalue()))
        assert docs[-1]["format"] == f"iobound/{name}"
    return docs


def _darshan_logs(folder: Path) -> dict:
    """A folder of a Lustre job's log, another job's on a file system the mount table does not name, and a file no
    Darshan log; and that mount table."""
    darshan = pytest.importorskip("darshan", reason="PyDarshan is not installed: pip install 'iobound[darshan]'")
    lustre = ROOT / "tests" / "data" / "darshan" / "lustre-248.toml"
    (logs := folder / "logs").mkdir()
    samples = Path(darshan.__file__).parent / "examples" / "example_logs"
    (logs / "job.darshan").symlink_to(samples / "ior_hdf5_example.darshan")
    (logs / "other.darshan").symlink_to(samples / "example.darshan")
    (logs / "notes.txt").write_text("not a log", encoding="utf-8")
    (folder / "mounts.toml").write_text(f'[mounts]\n"/global/cscratch1" = "{lustre}"\n', encoding="utf-8")
    return dict(logs=logs, lustre=lustre, mounts=folder / "mounts.toml")


def _probe_set() -> dict:
    """A probe set of one measurement that has every optional part (a target, parameters; the Slurm job of a cluster
    probe), as a probe writes it."""
    from probes.core.host import Host
    from probes.core.measurement import Measurement, Provenance
    from probes.core.units import Metric
    from probes.measure.batch import Job, Sourced
    from probes.measure.probeset import document

    host = Host("node01", "6.8.0", "a CPU", 4, 2**34)
    provenance = Provenance("fio", "3.36", (("fio", "--name=x"),), host, "2026-11-24T20:00:00Z", 3.0)
    return document([Measurement("fio.read", "a read", Metric.BANDWIDTH, "B/s", (1.0, 2.0, 3.0), provenance,
                                 target=0.05, parameters={"bs": "1MiB"}, times=(0.0, 1.1, 2.2), others=(0.0, 0.1, 0.0))],
                    {"load_average": [0.1, 0.2, 0.3], "governor": "performance", "cpus": 4, "others_cpus": 0.1,
                     "steal_cpus": 0.0},
                    Job("pbs", "42", Sourced(2, "PBS_NODEFILE"), Sourced(1, "PBS_NODEFILE"),
                        Sourced("n1,n2", "PBS_NODEFILE")).to_dict())


FORMATS = sorted([*COMMANDS, "probe-set"])


@pytest.mark.parametrize("name", FORMATS)
def test_a_formats_keys_change_only_with_its_version(name, tmp_path):
    pinned = json.loads(PINS.read_text(encoding="utf-8"))[name]
    docs = written(name, tmp_path)
    doc, keys = docs[0], set().union(*map(key_paths, docs))
    added, removed = sorted(keys - set(pinned["keys"])), sorted(set(pinned["keys"]) - keys)
    empty = sorted(path for path in pinned["keys"] if all(_always_empty(d, path) for d in docs))
    assert not empty, f"the sample of iobound/{name} leaves {empty} empty: their inner keys go unpinned"
    if doc["format_version"] == pinned["version"]:
        assert not (added or removed), (f"iobound/{name} {doc['format_version']} changed its keys (added {added}, "
                                        f"removed {removed}): give it a new format_version and a line of history")
    else:
        pytest.fail(f"iobound/{name} is now {doc['format_version']} (pinned {pinned['version']}): pin its keys again "
                    "(python tests/test_formats.py > tests/data/formats.json)")


def _always_empty(doc, path: str) -> bool:
    """Whether every value at ``path`` (``a[].b``) is an empty list, so the keys of its items go unseen."""
    values = [doc]
    for part in path.split("."):
        step = []
        for value in values:
            key, lists = part.rstrip("[]"), part.count("[]")
            if key == "*" and isinstance(value, dict):
                step += list(value.values())
            elif isinstance(value, dict) and key in value:
                inner = [value[key]]
                for _ in range(lists):
                    inner = [item for v in inner if isinstance(v, list) for item in v]
                step += inner
        values = step
    return path.split(".")[-1].rstrip("[]") not in MAY_BE_EMPTY and bool(values) and all(v == [] for v in values)


def test_results_csv_columns_are_the_results_formats():
    from probes.core.run import CSV_COLUMNS, RESULTS_VERSION

    pinned = json.loads(PINS.read_text(encoding="utf-8"))["results.csv"]
    assert (RESULTS_VERSION, list(CSV_COLUMNS)) == (pinned["version"], pinned["keys"])


def test_key_paths_merge_list_items_and_leave_data_maps_closed():
    doc = {"runs": [{"a": 1}, {"b": {"c": 2}}], "tags": {"x": 1}, "e": [], "symbols": {"n": 1, "B": {"unit": "B/s"}}}
    assert key_paths(doc) == {"runs", "runs[].a", "runs[].b", "runs[].b.c", "tags", "e", "symbols", "symbols.*.unit"}


if __name__ == "__main__":  # print the pins of the formats as the code writes them now
    from probes.core.run import CSV_COLUMNS, RESULTS_VERSION

    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        pins = {name: {"version": (docs := written(name, Path(folder)))[0]["format_version"],
                       "keys": sorted(set().union(*map(key_paths, docs)))} for name in FORMATS}
    pins["results.csv"] = {"version": RESULTS_VERSION, "keys": list(CSV_COLUMNS)}
    json.dump(pins, sys.stdout, indent=1)
    print()
