"""Every finding code: a clean control that raises nothing, and a bad control that raises exactly that code."""

import ast
import re
from dataclasses import replace
from pathlib import Path

import pytest

from probes.core.run import Origin, Run
from probes.core.stats import from_reported
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from probes.readers import read_results
from topologies.load import load_topology, parse_topology
from topologies.catalogues.achievable import Parts
from topologies.topology import Component
from tests.systems import links_toml
from assess.check import check_runs
from assess.findings import CODES
from assess.findings.alone import repetitions_needed
from assess.findings.siblings import unit_factor

ROOT = Path(__file__).resolve().parents[1]

# 4 clients with 1,000 MiB/s NICs read at most 4,000 MiB/s; the devices write at most
# 2 x 600 = 1,200 MiB/s. (Reads may reach 3.3x writes here, so a read 4x a write can
# happen within the ceilings, and a clean pair need not be one.) Memory: 4 x 64 + 2 x 128 = 512 GiB. The file system's blocks: 4 MiB.
TOML = """
[clients.c]
count = 4
nic = "1000 MiB/s"
memory = "64 GiB"
[networks.net]
[servers.s]
count = 2
nic = "unlimited"
memory = "128 GiB"
block_size = "4 MiB"
[devices.d]
count = 2
read_bandwidth = "3000 MiB/s"
write_bandwidth = "600 MiB/s"
""" + links_toml("c net s d")
SYSTEM = parse_topology(TOML)
# The same with the devices' random-read IOPS known only as a range: 4 KiB random reads then
# reach 2 x 4 KiB x 200,000..400,000 op/s = 1,563..3,125 MiB/s, the sequential ones are unchanged.
RANGED = parse_topology(TOML.replace('write_bandwidth = "600 MiB/s"', 'write_bandwidth = "600 MiB/s"\n'
                                     'read_iops = { range = ["200000 op/s", "400000 op/s"], source = "assumption" }'))

# The same with the devices' read bandwidth a range, and said to be SATA SSDs installed in 2015: the read of 2,800
# MiB/s needs 1,468 MB/s of each of the two (above the range's 1,350 MB/s low end), and the fastest SATA SSD by 2015
# reads 550 MB/s; the random read needs 1,258 MB/s each, within the range's low end, so nothing is asked of it.
SATA = parse_topology(TOML.replace('read_bandwidth = "3000 MiB/s"', 'read_bandwidth = { range = ["1350 MB/s", '
                                   '"3000 MiB/s"], source = "assumption" }'))
SATA_SSDS = {"d": Parts("drive", ("sata-ssd",), 1, 2015, "storage_install_date '2015-01-01'", "SATA SSD")}


def _run(label, operation, samples, *, size="4 MiB", access=Access.SEQUENTIAL, tags=(), durations=None,
         data_set="10 TiB", path="results.txt"):
    workload = Workload(operation, Q_(size), nodes=4, access=access, data_set=Q_(data_set))
    return Run(label, workload, Metric.BANDWIDTH, tuple(samples), "MiB/s", Origin(path, None, "test"), tuple(tags),
               durations=durations if durations is not None else (60.0,) * len(samples))


# 60-92 % of each ceiling, 3 quiet repetitions of a minute, 20x the memory; reads 2.5x writes.
# Under 90 % a run gets BELOW-CEILING (info, common): these controls judge it under 51 % (BELOW_OFF).
CLEAN = {
    "write": _run("write", Operation.WRITE, (1100, 1105, 1095)),
    "read": _run("read", Operation.READ, (2800, 2810, 2790)),
    "random": _run("random", Operation.READ, (2400, 2410, 2390), size="4 KiB", access=Access.RANDOM),
}


BELOW_OFF = 0.51


def _codes(runs: dict[str, Run], system=SYSTEM, below=BELOW_OFF, hardware=None) -> dict[str, list[str]]:
    return {j.run.label: [f.code for f in j.findings]
            for j in check_runs(system, list(runs.values()), below=below, hardware=hardware)}


def test_the_clean_control_raises_nothing():
    assert _codes(CLEAN) == {"write": [], "read": [], "random": []}


BAD = {
    "ABOVE-CEILING": ("read", dict(samples=(4300, 4310, 4290))),
    "AT-CEILING": ("read", dict(samples=(3990, 4000, 4010))),
    "FAR-BELOW": ("random", dict(samples=(1000, 1005, 995))),
    "FEW-REPETITIONS": ("read", dict(samples=(2800,), durations=(60.0,))),
    "HIGH-VARIATION": ("read", dict(samples=(2400, 2800, 3200))),
    "MAX-HEADLINE": ("read", dict(tags=(("statistic", "max"),))),
    "SHORT-RUN": ("read", dict(durations=(2.0, 2.0, 2.0))),
    "SMALL-DATA-SET": ("read", dict(workload=dict(data_set=Q_(100, "GiB")))),
    "OWN-WRITES": ("read", dict(tags=(("reads_own_writes", "no -C"),))),
    "TOOL-INVALID": ("read", dict(tags=(("invalid", "stonewall time not reached"),))),
    "CUT-SHORT": ("read", dict(tags=(("cut_short", "it holds 2 phase(s) and no io500 score"),))),
    "INCONSISTENT-OUTPUT": ("read", dict(tags=(("inconsistent", "bw 1,000 MiB/s vs io_bytes / runtime 1,230 MiB/s"),))),
    "TRANSFER-MISFIT": ("read", dict(workload=dict(transfer_size=Q_(3, "MiB")))),
    # A second read of the same workload, 1.048576x the first, each known to +-0.3 %: MB vs MiB.
    "UNIT-MIXUP": ("twin", dict(samples=(2936.0, 2944.0, 2928.0))),
    "RANDOM-NOT-SLOWER": ("random", dict(samples=(2900, 2910, 2890))),
    "READ-FAR-FASTER": ("write", dict(samples=(620, 622, 618))),  # the read, 4.5x this write, is flagged
    # 4 KiB random reads at 2,400 MiB/s need 307,200 op/s of each device, within their range
    "POSSIBLE-IF": ("random", dict(system=RANGED)),
    "BELOW-CEILING": ("random", dict(samples=(2100, 2105, 2095), below=0.6)),  # 52.5 % of 4,000 MiB/s
    "IMPLAUSIBLE-HARDWARE": ("read", dict(system=SATA, hardware=SATA_SSDS)),
}
FLAGGED = {"READ-FAR-FASTER": "read"}
# A code raised beside another it follows from: IMPLAUSIBLE-HARDWARE holds a POSSIBLE-IF to the parts that existed.
BESIDE = {"IMPLAUSIBLE-HARDWARE": ["POSSIBLE-IF"]}


@pytest.mark.parametrize("code", CODES)
def test_each_bad_control_raises_exactly_its_code(code):
    target, change = BAD[code]
    runs, options = dict(CLEAN), {}
    if target == "twin":
        runs["twin"] = replace(CLEAN["read"], label="twin", **change)
        target = "twin"
    else:
        change = dict(change)
        workload = change.pop("workload", None)
        if workload:
            change["workload"] = replace(runs[target].workload, **workload)
        options = {key: change.pop(key) for key in ("system", "below", "hardware") if key in change}
        runs[target] = replace(runs[target], **change)
    raised = _codes(runs, **options)
    assert raised.pop(FLAGGED.get(code, target)) == [*BESIDE.get(code, ()), code]
    assert all(codes == [] for codes in raised.values()), raised


def test_every_code_is_documented_in_the_readme_and_the_face_each_once_in_order():
    import assess.findings
    every = [*CODES, *assess.findings.JOB_CODES, *assess.findings.TRAINING_CODES, *assess.findings.CHECKPOINT_CODES,
             *assess.findings.BAND_CODES, *assess.findings.BATCH_CODES, *assess.findings.KV_CODES]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"^\| `([A-Z-]+)` \|", readme, re.MULTILINE) == every
    assert re.findall(r"^([A-Z][A-Z-]+) +(?:error|warning|info)\b", assess.findings.__doc__, re.MULTILINE) == every


def test_the_review_judges_a_phase_by_the_ceiling_codes():
    from assess.findings import CEILING_CODES
    from assess.review import VERDICTS
    assert set(VERDICTS) - {"IMPLAUSIBLE-HARDWARE"} == set(CEILING_CODES)


def test_variation_is_judged_apart_for_writes_and_reads():
    """seeds/000: writes vary 5-7 % on a quiet system, reads under 2 %; 8 % is noisy for a read only."""
    samples = (800, 880, 960)  # cv 9.1 %
    write = replace(CLEAN["write"], samples=(840 * 0.92, 840, 840 * 1.08))
    read = replace(CLEAN["read"], samples=(2800 * 0.92, 2800, 2800 * 1.08))
    assert samples and _codes({"write": write, "read": read}) == {"write": [], "read": ["HIGH-VARIATION"]}


def test_repetitions_needed_follows_the_t_interval():
    # cv 10 %: t(0.975, n-1) x 0.10 / sqrt(n) <= 0.05 first at n = 18 (2.110 x 0.1 / 4.243 = 0.0497)
    assert repetitions_needed(0.10) == 18
    assert repetitions_needed(0.01) == 3


def test_a_reported_summary_is_judged_like_samples():
    """mdtest prints max, min, mean and std over iterations; their spread counts as the samples' would."""
    noisy = replace(CLEAN["read"], samples=(), reported=from_reported(3, 2800, 400, 2400, 3200), durations=())
    assert _codes({"read": noisy}) == {"read": ["HIGH-VARIATION"]}


@pytest.mark.parametrize("ratio, noise, factor", [
    (8.0, 0.05, 8.0), (1 / 8.388608, 0.05, 8.388608), (1000.4, 0.05, 1000.0),
    (1.048576, 0.003, 1.048576), (1.048576, 0.05, None),  # within the noise of 5 %: says nothing
    (1.3, 0.001, None),
])
def test_unit_factors_count_only_beyond_noise(ratio, noise, factor):
    match = unit_factor(ratio, noise)
    assert (match[0] if match else None) == factor


def test_a_run_at_an_eighth_of_its_ceiling_is_likely_bits_for_bytes():
    bits = replace(CLEAN["read"], samples=(500, 501, 499))
    assert _codes({"read": bits}) == {"read": ["FAR-BELOW", "UNIT-MIXUP"]}


@pytest.mark.parametrize("nic, mixup", [('{ range = ["4 MiB/s", "1000 MiB/s"], source = "assumption" }', False),
                                        ('{ range = ["1000 MiB/s", "1002 MiB/s"], source = "assumption" }', True)],
                         ids=["wide-range", "narrow-range"])
def test_a_unit_factor_to_one_end_of_a_range_is_no_unit_mixup_unless_both_ends_give_it(nic, mixup):
    """A read at 1/1000 of the top of a range three decades wide is within the range, not a dropped k: UNIT-MIXUP only
    where the ratio to both ends is the same unit factor."""
    system = parse_topology(TOML.replace('nic = "1000 MiB/s"', f"nic = {nic}"))
    read = replace(CLEAN["read"], samples=(4.004, 4.005, 4.003))  # 4 clients: 1/1000 of the 4,000 MiB/s a NIC range allows
    (judged,) = check_runs(system, [read])
    assert ("UNIT-MIXUP" in [f.code for f in judged.findings]) is mixup


def test_metadata_and_network_runs_have_no_ceiling_but_are_still_judged():
    create = Run("create", Workload(Operation.CREATE, None, nodes=4), Metric.OPERATION_RATE, (), "op/s",
                 Origin("md.txt", 3, "mdtest"), reported=from_reported(1, 5000, None, 5000, 5000))
    ping = Run("rtt", None, Metric.LATENCY, (0.1, 0.15, 0.12), "ms", Origin("ping.txt", None, "ping"))
    judgements = check_runs(SYSTEM, [create, ping])
    assert [(j.ceiling, j.no_ceiling.split(";")[0], [f.code for f in j.findings]) for j in judgements] == [
        (None, "nothing limits create operations here: the topology states no metadata servers' rate "
               '(metadata = "20 kop/s") and no rtt of the clients\' network', ["FEW-REPETITIONS"]),
        (None, "not a storage workload (ping result)", ["HIGH-VARIATION"]),
    ]


def test_a_read_above_the_storage_path_names_the_cache_that_can_serve_it_or_none():
    """seeds/001: 1,480 MiB/s through 10 GbE fits the client cache; 32,828 MiB/s on one node does not even fit that."""
    system = parse_topology(TOML.replace('memory = "64 GiB"', 'memory = "64 GiB"\nmemory_bandwidth = "10 GiB/s"'))
    cached, impossible = (replace(CLEAN["read"], label=label, samples=(v, v, v), workload=replace(
        CLEAN["read"].workload, data_set=Q_(16, "GiB"))) for label, v in (("cached", 6000), ("impossible", 60000)))
    found = {j.run.label: j.findings for j in check_runs(system, [cached, impossible])}
    above = {label: next(f for f in findings if f.code == "ABOVE-CEILING") for label, findings in found.items()}
    assert "; the client cache (40 GiB/s, the data set 0.062x its memory) can serve it." in above["cached"].message
    assert "faster even than the caches (client cache 40 GiB/s): check the units" in above["impossible"].message


def test_a_read_above_a_local_disk_or_beyond_the_network_names_the_clients_cache_and_else_the_servers():
    local = parse_topology('[clients.pc]\ncount = 1\n[devices.disk]\nbandwidth = "500 MiB/s"\n'
                           '[[links]]\nbetween = ["pc", "disk"]\n')
    run = Run("re-read", Workload(Operation.READ, Q_(1, "MiB"), nodes=1), Metric.BANDWIDTH, (5000, 5100, 5050),
              "MiB/s", Origin("fio.json", None, "fio"))
    above = next(f for f in check_runs(local, [run])[0].findings if f.code == "ABOVE-CEILING")
    assert "likely served from the client's page cache" in above.message
    served = parse_topology('[clients.pc]\ncount = 1\nnic = "10 GiB/s"\n[servers.nas]\ncount = 1\nnic = "10 GiB/s"\n'
                            '[devices.disk]\nbandwidth = "500 MiB/s"\n'
                            '[[links]]\nbetween = ["pc", "nas"]\n[[links]]\nbetween = ["nas", "disk"]\n')
    above = next(f for f in check_runs(served, [run])[0].findings if f.code == "ABOVE-CEILING")
    assert "likely served from a server-side cache" in above.message


def test_metadata_rates_above_what_the_metadata_servers_complete_are_impossible():
    """2 metadata servers x 20 kop/s: 40,000 creates/s at most; mdtest saying 55,000 is beyond it."""
    system = parse_topology(TOML.replace('block_size = "4 MiB"', 'block_size = "4 MiB"\nmetadata = "20 kop/s"'))

    def create(rate, shared=False):
        workload = Workload(Operation.CREATE, None, nodes=4, ppn=8, shared_directory=shared)
        return Run(f"create {rate}", workload, Metric.OPERATION_RATE, (rate * 0.99, rate, rate * 1.01), "op/s",
                   Origin("md.txt", 3, "mdtest"), durations=(60.0,) * 3)

    clean, bad, shared = check_runs(system, [create(37000), create(55000), create(30000, shared=True)])
    assert clean.ceiling.value.m_as("op/s") == pytest.approx(40000) and clean.findings == ()
    assert clean.ceiling.binding == (Component("s", "metadata"),)
    assert [f.code for f in bad.findings] == ["ABOVE-CEILING"]
    assert "more than metadata servers (40,000 op/s) can complete" in bad.findings[0].message
    # one directory for every process lives on one server: 20,000 op/s at most
    assert shared.ceiling.binding_layers == ("shared directory",)
    assert [f.code for f in shared.findings] == ["ABOVE-CEILING"]


def test_a_transfer_misfit_needs_a_block_size_that_is_stated_not_assumed():
    odd = replace(CLEAN["read"], workload=replace(CLEAN["read"].workload, transfer_size=Q_(3, "MiB")))
    assumed = parse_topology(TOML.replace('block_size = "4 MiB"', 'block_size = { value = "4 MiB", source = "assumption" }'))
    assert [f.code for f in check_runs(assumed, [odd], below=BELOW_OFF)[0].findings] == []
    assert [f.code for f in check_runs(SYSTEM, [odd], below=BELOW_OFF)[0].findings] == ["TRANSFER-MISFIT"]


# The modules whose strings become finding messages and remedies (a cache's reason, a unit's note, a probe's advice).
MESSAGE_MODULES = [*sorted((ROOT / "assess" / "findings").glob("*.py")), ROOT / "models" / "caches.py",
                   ROOT / "models" / "scaling.py", ROOT / "probes" / "measure" / "probe.py",
                   ROOT / "probes" / "core" / "units.py"]


@pytest.mark.parametrize("path", MESSAGE_MODULES, ids=lambda p: p.name)
def test_no_message_template_cites_the_projects_own_source_files(path):
    """A user cannot follow "seeds/000": messages cite public sources (the lecture, IOR's documentation) or nothing."""
    strings = [node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert [s for s in strings if "seeds/" in s] == []


def test_no_finding_of_the_lecture_example_cites_the_projects_own_source_files():
    examples = ROOT / "topologies" / "examples"
    judgements = check_runs(load_topology(examples / "lecture.toml"), read_results(examples / "lecture-results.csv"))
    texts = [text for j in judgements for f in j.findings for text in (f.message, f.remedy)]
    assert texts and [t for t in texts if "seeds/" in t] == []
