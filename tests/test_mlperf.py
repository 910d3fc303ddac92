"""The DLIO / MLPerf Storage reader against the twelve real runs of the corpus, and the per-accelerator demand table.

The oracle: MLPerf Storage defines AU so that one accelerator at 100 % AU reads batch_size x
record_length bytes every computation_time seconds. Every training run's measured bandwidth must
therefore be AU x accelerators x that demand, both with the figures of the config the run used and
with the bundled table (models/accelerators.toml): the reader and the demand model agree.
"""

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.accelerators import UnknownWorkloadError, demand, entry, known, table
from probes.core.errors import InputError, ToolOutputError
from probes.core.units import Q_
from probes.core.workload import Operation
from probes.readers import READERS, mlperf

ROOT = Path(__file__).resolve().parents[1]
MLPERF = ROOT.parent / "shared" / "corpus" / "mlperf-storage"
SUMMARIES = sorted(MLPERF.glob("*/*/*/summary.json"))
TRAINING = [p for p in SUMMARIES if "checkpointing" not in p.parent.name]
CHECKPOINTS = [p for p in SUMMARIES if "checkpointing" in p.parent.name]
# The agreement the issue asks for: measured bandwidth within 5 % of AU x accelerators x demand. The
# first step's I/O counts in samples/s but not in AU, so the two differ by a few per cent at most.
AGREEMENT = 0.05
pytestmark = pytest.mark.skipif(not SUMMARIES, reason=f"MLPerf Storage corpus not found at {MLPERF}")


def _runs(path: Path):
    return mlperf.parse(path.read_text(encoding="utf-8"), source=str(path))


def _tags(run) -> dict:
    return dict(run.tags)


def _id(path: Path) -> str:
    return path.parent.name.split("__")[0][:40] + "/" + path.parent.name.split("__")[1]


@pytest.mark.parametrize("path", SUMMARIES, ids=_id)
def test_every_run_of_the_corpus_is_read(path):
    runs = _runs(path)
    if path in CHECKPOINTS:
        assert [(r.label, r.unit, r.workload.operation) for r in runs] == \
            [("llama3_8b checkpoint write", "GiB/s", Operation.WRITE)]
    else:
        assert [r.label.rsplit(" ", 1)[1] for r in runs] == ["read", "samples"]
        assert [r.unit for r in runs] == ["MiB/s", "ev/s"]
        assert all(r.workload.operation is Operation.READ for r in runs)
    for run in runs:
        tags = _tags(run)
        assert "inconsistent" not in tags, tags.get("inconsistent")
        accelerators = (run.training or run.checkpoint).accelerators
        assert run.workload.ppn * run.workload.nodes == accelerators and run.placement is None
        assert "config.yaml" in tags["found"] and "overrides.yaml" in tags["found"]


def test_the_corpus_holds_twelve_runs_eleven_of_them_training():
    assert (len(SUMMARIES), len(TRAINING), len(CHECKPOINTS)) == (12, 11, 1)


@pytest.mark.parametrize("path", TRAINING, ids=_id)
def test_bandwidth_is_dlios_mib_per_second_of_the_nominal_record_length(path):
    read, samples = _runs(path)
    metric = json.loads(path.read_text())["metric"]
    assert read.value.m_as("MiB/s") == pytest.approx(metric["train_io_mean_MB_per_second"], rel=1e-12)
    assert samples.value.m_as("ev/s") == pytest.approx(metric["train_throughput_mean_samples_per_second"], rel=1e-12)
    record = read.training.record_length.m_as("B")
    assert read.value.m_as("B/s") == pytest.approx(samples.value.m_as("ev/s") * record, rel=1e-9)
    assert "MiB/s" in _tags(read)["units"] and read.workload.transfer_size.m_as("B") > 0


@pytest.mark.parametrize("path", TRAINING, ids=_id)
def test_measured_bandwidth_is_au_times_accelerators_times_the_demand_of_the_config(path):
    read, _ = _runs(path)
    training = read.training
    per_accelerator = training.batch_size * training.record_length / training.computation_time
    expected = training.au_mean / 100 * training.accelerators * per_accelerator
    assert read.value.m_as("B/s") == pytest.approx(expected.m_as("B/s"), rel=AGREEMENT)


@pytest.mark.parametrize("path", TRAINING, ids=_id)
def test_measured_bandwidth_is_au_times_accelerators_times_the_demand_of_the_table(path):
    read, _ = _runs(path)
    tags, training = _tags(read), read.training
    row = entry(tags["model"], tags["accelerator"])
    # The table holds what the run's config held.
    assert row.record_length.m_as("B") == pytest.approx(training.record_length.m_as("B"), rel=1e-9)
    assert (row.batch_size, row.computation_time) == (training.batch_size, training.computation_time)
    assert row.min_au * 100 == pytest.approx(training.au_minimum)
    expected = demand(tags["model"], tags["accelerator"], training.accelerators, au=training.au_mean / 100)
    assert read.value.m_as("B/s") == pytest.approx(expected.m_as("B/s"), rel=AGREEMENT)


@pytest.mark.parametrize("path", CHECKPOINTS, ids=_id)
def test_checkpoint_size_over_duration_is_its_stated_bandwidth(path):
    (write,) = _runs(path)
    tags, checkpoint = _tags(write), write.checkpoint
    size = checkpoint.size.m_as("GiB")
    assert write.workload.data_set.m_as("GiB") == pytest.approx(size)
    assert size / write.durations[0] == pytest.approx(write.value.m_as("GiB/s"), rel=0.01)
    assert write.value.m_as("GB/s") == pytest.approx(4.643973844563218 * 1.073741824)  # DLIO's "GB" is GiB
    assert (checkpoint.checkpoints, checkpoint.fsync, checkpoint.caching.potential_caching) == (10, True, (True,))
    assert "per-checkpoint" in tags["summary_only"]


def _summary(name: str) -> Path:
    (path,) = [p for p in SUMMARIES if name in str(p)]
    return path


def test_per_host_arrays_with_zeros_count_only_the_hosts_that_reported():
    read, _ = _runs(_summary("18clients__unet3d"))
    tags, caching = _tags(read), read.training.caching
    assert caching.host_memory.m_as("GiB") == pytest.approx(370.4, abs=0.05)
    assert tags["host_memory_reported"].startswith("5 of 18 hosts")
    assert caching.potential_caching == (False,) * 18


def test_a_v05_summary_takes_its_hosts_from_the_report_whose_run_it_is():
    read, _ = _runs(_summary("polaris"))
    tags = _tags(read)
    assert (tags["accelerator"], read.workload.nodes) == ("v100", 1)
    assert "mlperf_storage_report.json" in tags["hosts_source"]
    assert read.training.au_minimum == 90 and "default" in read.training.au_minimum_source


def test_a_summary_alone_is_read_with_what_it_states(tmp_path):
    path = tmp_path / "summary.json"
    shutil.copy(_summary("polaris"), path)
    read, samples = _runs(path)
    tags, training = _tags(read), read.training
    assert (training.batch_size, training.computation_time, training.read_threads) == (None, None, None)
    assert tags["found"] == "nothing beside the summary" and read.workload.nodes is None and read.workload.direct is None
    assert "states none" in tags["hosts_source"] and read.placement.processes == 8
    assert training.record_length.m_as("B") == pytest.approx(146600628, rel=1e-9)  # from DLIO's own MB/s and samples/s


def test_check_places_the_accelerators_of_a_summary_that_states_no_hosts(tmp_path):
    from assess.check import check_runs
    from topologies.bundled import load_example

    path = tmp_path / "summary.json"
    shutil.copy(_summary("polaris"), path)
    judged = check_runs(load_example("lecture"), _runs(path))
    assert [(j.run.workload.nodes, j.run.workload.ppn) for j in judged] == [(8, 1), (8, 1)]
    assert judged[0].run.placement.placed.startswith("8 processes on 8 of the 10 nodes of compute, 1 each")


def test_a_v3_layout_keeps_its_config_in_dlio_config(tmp_path):
    source = _summary("MEMORY_AE")
    (tmp_path / "dlio_config").mkdir()
    shutil.copy(source, tmp_path / "summary.json")
    for name in ("config.yaml", "overrides.yaml"):
        shutil.copy(source.parent / name, tmp_path / "dlio_config" / name)
    read, _ = _runs(tmp_path / "summary.json")
    tags = _tags(read)
    assert tags["found"] == "dlio_config/config.yaml, dlio_config/overrides.yaml"
    assert (tags["accelerator"], read.training.computation_time, read.workload.direct) == ("b200", Q_(0.162, "s"), True)


# ---------------------------------------------------------------------------------------------
# Bad input: one line naming the file and the field, never a traceback


@pytest.mark.parametrize("text, where", [
    ('{"num_accelerators": 8, "metric": {}, "num_files_train": 1', "line 1, column 59"),
    ('{"num_accelerators": 0, "metric": {"train_au_percentage": [1]}, "num_files_train": 1}', "num_accelerators"),
    ('{"num_accelerators": 8, "metric": {}, "num_files_train": 1}', "metric"),
    ('{"num_accelerators": 8, "metric": {"train_au_percentage": [90], "train_throughput_samples_per_second": '
     '["x"]}, "num_files_train": 1}', "metric.train_throughput_samples_per_second[0]"),
    ('{"num_accelerators": 8, "metric": {"save_checkpoint_io_mean_GB_per_second": 1.0, '
     '"save_checkpoint_duration_mean_seconds": 2.0}, "num_files_train": 1}', "metric.checkpoint_size_GB"),
    ('[1, 2]', "line 1"),
])
def test_a_bad_summary_is_one_line_naming_the_file_and_field(text, where):
    with pytest.raises(ToolOutputError) as error:
        mlperf.parse(text, source="run/summary.json")
    assert error.value.source == "run/summary.json" and error.value.where == where
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("name, text, where", [
    ("config.yaml", "workload:\n  reader:\n    batch_size: seven\n", "workload.reader.batch_size"),
    ("config.yaml", "workload: [unclosed\n", "line 2"),
    ("config.yaml", "workload:\n  metric:\n    au: 90\n", "workload.metric.au"),
    ("overrides.yaml", "workload=unet3d_h100\n", "overrides"),
    ("per_epoch_stats.json", '{"1": {"duration": "soon"}}', "1.duration"),
])
def test_a_bad_file_beside_the_summary_is_named_with_its_field(tmp_path, name, text, where):
    shutil.copy(_summary("Hammerspace"), tmp_path / "summary.json")
    (tmp_path / name).write_text(text)
    with pytest.raises(ToolOutputError) as error:
        _runs(tmp_path / "summary.json")
    assert error.value.source == str(tmp_path / name) and error.value.where == where
    assert "\n" not in str(error.value)


_VALID = json.loads(_summary("Hammerspace").read_text()) if SUMMARIES else {}
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 10**20) | st.floats() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=8)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(sorted(_VALID) + ["metric." + k for k in sorted(_VALID.get("metric", {}))]), value=_JSON)
def test_any_field_replaced_by_garbage_is_read_or_refused_clearly(key, value):
    summary = json.loads(json.dumps(_VALID))
    holder, name = (summary["metric"], key[7:]) if key.startswith("metric.") else (summary, key)
    holder[name] = value
    try:
        runs = mlperf.parse(json.dumps(summary), source="summary.json")
    except ToolOutputError as error:
        assert "\n" not in str(error)
    else:
        assert all(r.samples for r in runs)


# ---------------------------------------------------------------------------------------------
# Sniffing: no other reader takes a summary.json, and this one takes no other reader's input


@pytest.mark.parametrize("path", SUMMARIES, ids=_id)
def test_no_other_reader_takes_a_summary(path):
    text = path.read_text(encoding="utf-8")
    assert mlperf.looks_like(text)
    assert [name for name, module in READERS.items() if module.looks_like(text)] == ["mlperf"]


def test_this_reader_takes_no_other_file_of_the_corpus_or_the_tests():
    others = [p for p in list((ROOT / "tests" / "data").rglob("*")) + list(MLPERF.parent.rglob("*"))
              if p.is_file() and p.name != "summary.json" and p.stat().st_size < 2**22]
    assert len(others) > 150
    taken = [str(p) for p in others if mlperf.looks_like(p.read_text(encoding="utf-8", errors="replace"))]
    assert taken == []


# ---------------------------------------------------------------------------------------------
# The demand table


def test_the_table_gives_the_demands_the_benchmark_states():
    # Corpus README: unet3d A100 1.61 GB/s, H100 3.18, B200 6.33; resnet50 H100 0.205; cosmoflow A100 0.51,
    # H100 0.81; retinanet B200 0.163; v0.5 unet3d 0.43. mlcommons/storage #692: 5.90 GiB/s per B200.
    stated = {("unet3d", "a100"): 1.61, ("unet3d", "h100"): 3.18, ("unet3d", "b200"): 6.33, ("unet3d", "v100"): 0.43,
              ("resnet50", "h100"): 0.205, ("cosmoflow", "a100"): 0.51, ("cosmoflow", "h100"): 0.81,
              ("retinanet", "b200"): 0.163}
    for (model, accelerator), gb in stated.items():
        assert demand(model, accelerator).m_as("GB/s") == pytest.approx(gb, rel=0.01), (model, accelerator)
    assert demand("unet3d", "b200").m_as("GiB/s") == pytest.approx(5.90, abs=0.005)
    assert all(row.source for row in table().values())


def test_demand_scales_with_accelerators_and_au():
    one = demand("unet3d", "h100").m_as("B/s")
    assert demand("unet3d", "H100", 64, au=0.9).m_as("B/s") == pytest.approx(64 * 0.9 * one)
    assert demand("unet3d", "h100", au=entry("unet3d", "h100").min_au).m_as("B/s") == pytest.approx(0.9 * one)
    for count, au in ((0, 1.0), (1.5, 1.0), (1, 0.0), (1, 90)):
        with pytest.raises(ValueError):
            demand("unet3d", "h100", count, au=au)


def test_an_unknown_model_or_accelerator_lists_the_known_ones():
    with pytest.raises(UnknownWorkloadError, match=r"must be one of: unet3d \(v100, a100, h100, b200\);.*Got 'gpt'"):
        demand("gpt", "h100")
    with pytest.raises(LookupError, match=r"model 'bert' must be one of: v100\. Got 'b200' instead\."):
        entry("bert", "b200")


def test_a_users_file_extends_and_overrides_the_table(tmp_path):
    extra = tmp_path / "mine.toml"
    extra.write_text('[unet3d.mi355]\nrecord_length = "146600628 B"\nbatch_size = 7\ncomputation_time = "0.2 s"\n'
                     'min_au = 0.9\nsource = "my own measurement"\n\n'
                     '[unet3d.h100]\nrecord_length = "146600628 B"\nbatch_size = 7\ncomputation_time = "0.3 s"\n'
                     'min_au = 0.9\nsource = "a newer config"\n')
    assert demand("unet3d", "mi355", extra=extra).m_as("B/s") == pytest.approx(7 * 146600628 / 0.2)
    assert entry("unet3d", "h100", extra=extra).source == "a newer config"
    assert entry("unet3d", "h100").computation_time.m_as("s") == 0.323  # the bundled table is unchanged
    assert "mi355" in known(extra)["unet3d"] and "mi355" not in known()["unet3d"]


@pytest.mark.parametrize("text, where", [
    ('[unet3d.x]\nrecord_length = "146 MB"\nbatch_size = 0\ncomputation_time = "1 s"\nmin_au = 0.9\nsource = "s"\n',
     "[unet3d.x].batch_size"),
    ('[unet3d.x]\nrecord_length = "146 MB"\nbatch_size = 1\ncomputation_time = "1 s"\nmin_au = 90\nsource = "s"\n',
     "[unet3d.x].min_au"),
    ('[unet3d.x]\nrecord_length = "146"\nbatch_size = 1\ncomputation_time = "1 s"\nmin_au = 0.9\nsource = "s"\n',
     "[unet3d.x]"),
    ('[unet3d.x]\nbatch_size = 1\ncomputation_time = "1 s"\nmin_au = 0.9\nsource = "s"\n', "[unet3d.x].record_length"),
    ('[unet3d.x]\nrecord_size = 1\n', "[unet3d.x].record_size"),
    ('[unet3d\n', ""),
])
def test_a_bad_users_file_names_the_entry_and_field(tmp_path, text, where):
    extra = tmp_path / "bad.toml"
    extra.write_text(text)
    with pytest.raises(InputError) as error:
        table(extra)
    assert error.value.source == str(extra) and error.value.where == where
