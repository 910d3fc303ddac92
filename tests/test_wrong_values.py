"""Wrong, absurd and unclear: a value no tool prints or no system has is refused naming its file and field, a figure
the tool contradicts is marked, a name is kept as written, and a message says what is wrong (issue 33)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assess.cli import main
from tests.commands import command_refusal
from tests.conftest import CORPUS, edited_list

DATA = Path(__file__).parent / "data" / "readers"
PING = DATA / "ping-iputils_loopback_4pkts.txt"
FIO = DATA / "fio-3.33_json_seqwrite.json"
MLPERF = CORPUS / "mlperf-storage/v3.0/SAMSUNG/MEMORY_AE__training-unet3d-b200__20260720_155319/summary.json"
NARVAL = CORPUS / "io500" / "narval_system-information.txt"


def _corpus(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"not in the corpus: {path}")
    return path


def test_a_ping_reply_with_a_negative_time_is_refused_naming_its_line(tmp_path, capsys):
    lines = PING.read_text().splitlines(keepends=True)
    reply = next(i for i, line in enumerate(lines) if "time=" in line)
    lines[reply] = lines[reply].replace("time=", "time=-", 1)
    path = tmp_path / "ping.txt"
    path.write_text("".join(lines))
    error = command_refusal(["read", str(path)], capsys)
    assert f"{path}: line {reply + 1}: expected round-trip times of 0 ms or more; found -" in error


def test_a_fio_output_that_disagrees_with_itself_is_marked_in_read_s_table(tmp_path, capsys):
    fio = json.loads(FIO.read_text())
    fio["jobs"][0]["write"]["bw"] *= 3  # KiB/s against bw_bytes and io_bytes / runtime
    path = tmp_path / "fio.json"
    path.write_text(json.dumps(fio))
    assert main(["read", str(path), str(FIO)]) == 0
    table = capsys.readouterr().out.splitlines()
    marked = [line for line in table if "‡" in line]
    assert len(marked) == 2 and str(path) in marked[0] and marked[1].startswith("‡ the tool's output disagrees")
    assert not any(str(FIO) in line for line in marked)


def test_an_io500_form_with_a_negative_speed_is_refused_naming_the_field(tmp_path, capsys):
    text = _corpus(NARVAL).read_text(encoding="utf-8")
    assert '"speed":"100' in text
    path = tmp_path / "system-information.txt"
    path.write_text(text.replace('"speed":"100', '"speed":"-100'), encoding="utf-8")
    error = command_refusal(["topology", "from-io500", str(path), "--nodes", "4"], capsys)
    assert "/Interconnect speed: a port's speed must be more than zero. Got '-100 GBit' instead." in error


@pytest.mark.slow
def test_an_emoji_in_a_list_name_is_kept(small_list, tmp_path, capsys):
    listed = edited_list(small_list, tmp_path, "information_system", "Weka 🚀 on AWS")
    assert main(["review", str(listed), "--csv", "--fail-on", "never"]) == 0
    assert "Weka 🚀 on AWS (WekaIO)" in capsys.readouterr().out


@pytest.mark.parametrize("row, column, expected", [
    ("1000000000000,1000000000000", "nodes", "must be a whole number from 1 to 10,000,000. Got '1000000000000'"),
    ("100000,1000", "ppn", "must make at most 10,000,000 processes with the nodes' count. Got 100,000 nodes x 1,000"),
])
def test_a_results_table_with_more_processes_than_any_machine_is_refused(tmp_path, capsys, row, column, expected):
    path = tmp_path / "results.csv"
    path.write_text(f"op,transfer_size,nodes,ppn,value,unit\nwrite,1 MiB,{row},5,GiB/s\n")
    error = command_refusal(["read", str(path)], capsys)
    assert f"{path}: line 2, column '{column}': {expected}" in error


def test_a_transfer_size_beyond_any_memory_is_refused(tmp_path, capsys):
    path = tmp_path / "results.csv"
    path.write_text("op,transfer_size,value,unit\nwrite,1000000 EiB,5,GiB/s\n")
    error = command_refusal(["read", str(path)], capsys)
    assert f"{path}: line 2, column 'transfer_size': The transfer size must be at most 1 PiB" in error
    error = command_refusal(["predict", "lecture", "--op", "read", "--transfer-size", "1000000EiB"], capsys)
    assert error.startswith("iobound predict: error: argument --transfer-size: The transfer size must be at most 1 PiB")


def _mlperf(tmp_path: Path, **metric) -> Path:
    summary = json.loads(_corpus(MLPERF).read_text())
    epochs = len(summary["metric"]["train_au_percentage"])
    for key, value in metric.items():
        summary["metric"][key] = value
        if key.endswith("_percentage") or key.endswith("_samples_per_second"):
            summary["metric"][key] = [value] * epochs
            summary["metric"][key.replace("_percentage", "_mean_percentage").replace(
                "throughput_samples", "throughput_mean_samples")] = value
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary))
    return path


def test_an_accelerator_utilisation_above_100_percent_is_refused_naming_the_field(tmp_path, capsys):
    path = _mlperf(tmp_path, train_au_percentage=250.0)
    error = command_refusal(["read", str(path)], capsys)
    assert f"{path}: metric.train_au_percentage[0]: expected a percentage from 0 to 100; found the number 250.0" in error


def test_an_absurd_mlperf_throughput_names_its_file_and_field(tmp_path, capsys):
    path = _mlperf(tmp_path, train_throughput_samples_per_second=1e300)
    for command in ("read", "check"):
        error = command_refusal([command, *(["lecture"] if command == "check" else []), str(path)], capsys)
        assert f"{path}: metric.train_throughput_mean_samples_per_second: expected a rate that" in error
        assert "found 1e+300" in error


@pytest.mark.parametrize("argv", [["read", "{}"], ["check", "lecture", "{}"], ["topology", "{}"], ["review", "{}"],
                                  ["predict", "{}", "--op", "read"], ["compare", "{}", "{}"]])
def test_a_symbolic_link_that_loops_is_named_as_such(tmp_path, capsys, argv):
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    error = command_refusal([word.format(loop) for word in argv], capsys)
    assert error == f"iobound: error: {loop}: cannot be read (a symbolic link that loops: too many levels of " \
                    "symbolic links)"


def test_a_csv_with_other_columns_is_told_which_columns_a_results_table_has(tmp_path, capsys):
    path = tmp_path / "mine.csv"
    path.write_text("name,bandwidth,size\nrun1,5 GiB/s,1 MiB\n")
    error = command_refusal(["read", str(path)], capsys)
    assert f"{path}: line 1: a CSV with the columns name, bandwidth, size, not a results table: expected the " \
           "columns op, transfer_size, value, unit" in error


@pytest.mark.parametrize("argv, option", [(["predict", "lecture", "--op", "read", "--data-set", "-1GiB"], "--data-set"),
                                          (["read", "lecture-results.csv", "--max-input-size", "-1GiB"],
                                           "--max-input-size")])
def test_a_negative_size_reaches_its_option_and_is_refused_as_negative(capsys, argv, option):
    error = command_refusal(argv, capsys)
    assert f"argument {option}: the size must be a positive size. Got -1 GiB instead." in error
