"""The accelerator as a workload: MLPerf Storage system descriptions, how many accelerators a system feeds,
checkpoints, sizing and upgrades for accelerators, and check's verdicts on the corpus runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probes.core.errors import InputError, TopologyError
from probes.core.units import Q_
from models.accelerators import checkpoint, entry, feed
from models.predict import Model
from models.upgrades import accelerator_upgrades
from topologies.bundled import load_example
from probes.readers.mlperf_system import read_mlperf_description
from topologies.described.mlperf import describe_system, system_topology

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "mlperf-storage"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="the MLPerf Storage corpus is not beside the project")


def _run_folder(name: str) -> Path:
    (found,) = [p for p in CORPUS.glob("*/*/*") if p.name.startswith(name)]
    return found


def _description(folder: Path) -> Path:
    from topologies.described.mlperf import is_system_description

    (found,) = [p for p in folder.iterdir() if p.name != "summary.json" and is_system_description(p)]
    return found


# -- descriptions ---------------------------------------------------------------------------------------------


def test_a_description_with_every_common_defect_is_read_and_the_defects_named():
    text = """"host_node": {"node_count": 2, "memory_capacity_gigabytes": 512, // cgroup-limited
    },
    "storage_system": {"category": 'commercial', "total_read_bandwidth_sequential_GB_per_sec": 20,},
    "host_to_storage_interconnect": [{"interconnect_type": "InfiniBand", "link_speed_gigabits_per_second": 200,
      "number_of_links": 1, "rdma_enabled": yes,},]"""
    description = read_mlperf_description(text, source="polaris.json")
    assert set(description.forgiven) == {"comments", "single-quoted strings", "bare yes", "trailing commas (4)",
                                         "no braces around the whole"}
    system = describe_system(description)
    clients = system.topology.group("clients")
    assert clients.count == 2 and clients.capacities["nic"].value == Q_(200, "Gbit/s")
    assert system.topology.group("storage").capacities["read_bandwidth"].value == Q_(20, "GB/s")


def test_fields_nested_under_properties_are_read_and_said():
    description = read_mlperf_description('{"properties": {"nodes": [], "benchmark_hosts": []}}', source="x.json")
    assert "nodes" in description.fields and any("properties" in f for f in description.forgiven)


@pytest.mark.parametrize("text", ["", "[1, 2]", "{{{", "\x00\x01", '"a": ', "- a\n- b"])
def test_garbage_is_one_clear_error(text):
    with pytest.raises(InputError):
        describe_system(read_mlperf_description(text, source="bad.json"))
        raise InputError("bad.json", "", "described")  # a mapping with nothing usable is no error of reading


def test_a_description_too_thin_names_what_it_lacks(tmp_path):
    path = tmp_path / "thin.json"
    path.write_text('{"nodes": [{"node_type_name": "client"}], "benchmark_hosts": []}')
    with pytest.raises(TopologyError, match="no client count"):
        system_topology(path)


@needs_corpus
def test_every_corpus_description_gives_a_topology():
    for folder in sorted(CORPUS.glob("*/*/*")):
        assert system_topology(_description(folder)).groups, folder.name


@needs_corpus
def test_a_bare_number_drive_rate_is_read_in_the_unit_its_class_fits():
    description = read_mlperf_description(_description(_run_folder("F9000X")).read_text(), source="yanrong.json")
    forgiven = description.forgiven
    assert any("properties" in f for f in forgiven) and any("trailing commas" in f for f in forgiven)
    system = describe_system(description)
    assert any("14 has no unit; read as GB/s" in a for a in system.assumptions)
    assert any("at most 3" in a for a in system.assumptions)  # raw capacity over one backend's drives


@needs_corpus
def test_a_host_memory_under_the_wrong_unit_is_not_used():
    description = read_mlperf_description(_description(_run_folder("Hammerspace")).read_text(), source="h.json")
    system = describe_system(description)
    assert "memory" not in system.topology.group("clients").capacities
    assert any("256 MiB is too little" in m for m in system.missing)


# -- how many accelerators a system feeds ------------------------------------------------------------------


def test_the_most_accelerators_fed_is_the_ceiling_over_the_demand():
    """Oracle: five clients of 200 Gbit/s (125 GB/s) feed floor(125 / (0.9 x 3.177)) = 43 H100s on unet3d."""
    text = json.dumps({"networks": [{"network_name": "n", "network_type": "Ethernet", "bitrate": 200}],
                       "nodes": [{"node_type_name": "client", "nic_ports": [{"network_name": "n", "bitrate": 200}]},
                                 {"node_type_name": "storage", "nic_ports": [{"network_name": "n", "bitrate": 400}],
                                  "drives": [{"purpose": ["data"], "drive_type": "NVMe", "count_of_this_type": 40,
                                              "performance": {"read_bandwidth": {"peak_bandwidth": "10 GB/s"},
                                                              "write_bandwidth": {"peak_bandwidth": "5 GB/s"}}}]}],
                       "benchmark_hosts": [{"node_type_name": "client"}] * 5 + [{"node_type_name": "storage"}] * 4})
    system = describe_system(read_mlperf_description(text, source="t.json"))
    demand = entry("unet3d", "h100")
    found = feed(Model(system.topology), demand, 10)
    per = demand.per_accelerator.m_as("GB/s") * 0.9
    assert found.most == found.least == int(125 / per) == 43
    assert found.binds() == "the client NICs"
    assert found.needed.m_as("GB/s") == pytest.approx(10 * per)


def test_read_threads_that_cannot_keep_up_feed_no_accelerator():
    """One thread per accelerator, 1 Gbit/s clients and a 146 MB sample: a sample takes over a second, the
    accelerator asks for one every 0.323 s / 7: the requests in flight bind before any NIC."""
    found = feed(Model(load_example("lecture")), entry("unet3d", "h100"), read_threads=1)
    assert found.most == 0


def test_more_servers_feed_more_accelerators_when_the_servers_bind():
    topology = load_example("narval")
    before, options = accelerator_upgrades(topology, entry("unet3d", "h100"))
    gained = {o.group: o.gain(before) for o in options}
    assert gained["pools"][0] >= 1 and all(g[1] >= 0 for g in gained.values())


def test_a_checkpoint_takes_its_size_over_the_ceiling():
    model = Model(load_example("lecture"))
    found = checkpoint(model, Q_(10, "GiB"), 4)
    shortest, longest = found.write_time
    assert shortest.m_as("s") == pytest.approx((Q_(10, "GiB") / found.write.value).m_as("s"))
    assert shortest <= longest
    with pytest.raises(ValueError):
        checkpoint(model, Q_(10, "GiB"), 0)


# -- the command line ------------------------------------------------------------------------------------------


def test_predict_answers_the_accelerator_question(capsys):
    from assess.cli import main

    assert main(["predict", "narval", "--accelerators", "64", "--model", "unet3d", "--accelerator", "h100"]) == 0
    out = capsys.readouterr().out
    assert "64 accelerators demand 183 GB/s" in out and "most accelerators fed at 90% AU: 15 to 192" in out


def test_predict_times_a_checkpoint(capsys):
    from assess.cli import main

    assert main(["predict", "lecture", "--checkpoint", "10GiB", "--accelerators", "4", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["format"] == "iobound/checkpoint" and document["ranks"] == 4


@pytest.mark.parametrize("argv", [["predict", "lecture", "--model", "nope", "--accelerator", "h100"],
                                  ["predict", "lecture", "--model", "unet3d"],
                                  ["predict", "lecture"],
                                  ["predict", "lecture", "--checkpoint", "1GiB"],
                                  ["size", "--clients", "4", "--client-nic", "100Gbit/s", "--target", "accelerators=8:unet3d"]])
def test_accelerator_mistakes_are_one_line(argv, capsys):
    from assess.cli import main

    assert main(argv) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
def test_size_feeds_accelerators_at_their_minimum_au(capsys):
    from assess.cli import main

    assert main(["size", "--clients", "64", "--client-nic", "400Gbit/s", "--target", "accelerators=512:unet3d:h100"]) == 0
    out = capsys.readouterr().out
    assert "512 h100 x unet3d at 90% AU: read 1,464 GB/s" in out and "closed forms" in out


def test_a_users_table_extends_the_workloads(tmp_path, capsys):
    from assess.cli import main

    table = tmp_path / "mine.toml"
    table.write_text('[llm.h200]\nrecord_length = "1 MB"\nbatch_size = 8\ncomputation_time = "0.1 s"\nmin_au = 0.9\n'
                     'source = "my measurement"\n')
    assert main(["whatif", "narval", "--model", "llm", "--accelerator", "h200", "--accelerators-table", str(table)]) == 0
    assert "llm on h200 at 90% AU" in capsys.readouterr().out


# -- check on the corpus ---------------------------------------------------------------------------------------

# Every run whose description states its network (and, but for the v3.0 remote ones, its drives), with the verdict
# check gives its bandwidth and why it stands.
VERDICTS = {
    # 10,725 MB/s read from the one drive the description states at "10000 MB/s" (peak read): 7 % above it. The
    # data set (1,280 GiB) is five times the host's 250 GiB, DLIO flags no caching: the stated peak is low (the
    # Micron 9550's datasheet gives 14 GB/s), or the page cache served a part.
    "Micron_9550": "ABOVE-CEILING",
    # 24 NVMe drives of unstated rate (1-28 GB/s each by class): the 98 GiB/s needs 4.4 GB/s per drive.
    "AI400X2T_24x14TiB_nvme_8xNDR200_18clients": "POSSIBLE-IF",
    # the same appliance, 33 GiB/s: 1.5 GB/s per drive.
    "AI400X2T_24x14TiB_nvme_8xNDR200_16clients": "POSSIBLE-IF",
    # two NVMe drives per cache node of unstated rate, the node count not stated: 5.9 GB/s of drives.
    "JuiceFS": "POSSIBLE-IF",
    # the backend count is not stated (raw capacity bounds it at 3): 98 GiB/s needs more than one backend's
    # 2 x 400 Gbit/s, so at least two backends.
    "F9000X": "POSSIBLE-IF",
    # two local NVMe drives of unstated rate, which holds the data not stated: 28.6 GB/s needs both at 14 GB/s,
    # the top of the class by PCIe 5.0 (O_DIRECT reads; "MEMORY AE" may serve from memory the description does not
    # list).
    "MEMORY_AE": "POSSIBLE-IF",
    "Hammerspace": "FAR-BELOW",
    "simplyblock": "FAR-BELOW",
    "polaris-lustre": "FAR-BELOW",
    "AI400X2_24x13.9TiB": "FAR-BELOW",
    "aws_c7i48xlarge": "FAR-BELOW",
    "aws_r5n24xlarge": "FAR-BELOW",
}


@needs_corpus
@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_check_gives_each_corpus_run_its_verdict(name):
    from assess.check import check_runs
    from assess.findings import CEILING_CODES
    from probes.readers import read_results

    folder = _run_folder(name)
    runs = [r for r in read_results(str(folder / "summary.json")) if not r.label.endswith("train samples")]
    (judgement,) = check_runs(system_topology(_description(folder)), runs)
    assert [f.code for f in judgement.findings if f.code in CEILING_CODES] == [VERDICTS[name]]


@needs_corpus
def test_samples_per_second_is_not_judged_as_io():
    from assess.check import check_runs
    from probes.readers import read_results

    folder = _run_folder("AI400X2_24x13.9TiB")
    judgements = check_runs(system_topology(_description(folder)), read_results(str(folder / "summary.json")))
    samples = [j for j in judgements if j.run.label.endswith("train samples")]
    assert samples and all(j.ceiling is None for j in samples)


@needs_corpus
def test_the_training_findings_name_au_and_caching():
    from assess.findings.training import training_findings
    from probes.readers import read_results

    juice = read_results(str(_run_folder("JuiceFS") / "summary.json"))[0]
    assert [f.code for f in training_findings(juice)] == ["POTENTIAL-CACHING"]
    for folder in CORPUS.glob("*/*/*"):  # every corpus run met its AU
        for run in read_results(str(folder / "summary.json")):
            assert "AU-BELOW-MINIMUM" not in [f.code for f in training_findings(run)]


def test_au_below_the_minimum_is_named_as_the_benchmark_names_it():
    from dataclasses import replace

    from assess.findings.training import training_findings
    from probes.core.records import Caching, Training
    from probes.core.run import Origin, Run
    from probes.core.units import Q_, Metric

    training = Training(accelerators=8, record_length=Q_(140, "MiB"), batch_size=7, computation_time=Q_(0.323, "s"),
                        read_threads=4, files=3200, samples_per_file=1, au_per_epoch=(85.1,), au_mean=85.1,
                        au_minimum=90, au_minimum_source="config workload.metric.au", au_expectation="fail",
                        caching=Caching())
    run = Run(label="unet3d h100 train read", workload=None, metric=Metric.BANDWIDTH, samples=(1000.0,), unit="MiB/s",
              origin=Origin(path="s.json", line=None, tool="dlio", tool_version=None), training=training)
    (found,) = training_findings(run)
    assert found.code == "AU-BELOW-MINIMUM" and "train_au_meet_expectation: fail" in found.message
    assert training_findings(replace(run, training=replace(training, au_per_epoch=(95.0,), au_mean=95.0))) == []


@needs_corpus
def test_a_run_a_little_above_a_stated_figure_names_the_figure_as_a_suspect_too():
    """The Micron run is 7 % above its description's 10,000 MB/s for reads, which is the drive's write figure (its
    data sheet reads 14,000 MB/s): the ABOVE-CEILING names that stated figure beside the page cache."""
    from assess.check import check_runs
    from probes.readers import read_results

    folder = _run_folder("Micron_9550")
    runs = [r for r in read_results(str(folder / "summary.json")) if r.label.endswith("train read")]
    (judgement,) = check_runs(system_topology(_description(folder)), runs)
    (above,) = [f for f in judgement.findings if f.code == "ABOVE-CEILING"]
    assert "likely served from the client's page cache" in above.message
    assert "or the figure stated for drives.bandwidth is below what the hardware does" in above.message
    assert above.remedy.endswith("check the stated figures the run exceeds")
