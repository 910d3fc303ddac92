"""GPUDirect paths: nvidia-smi topo -m and gdsio read from real published outputs, the catalogue's socket links and
peer rates, and the GDS and bounce ceilings into a GPU with the hop that binds (tests/data/gpudirect/SOURCES)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from probes.core.errors import InputError, ToolOutputError
from probes.core.units import Q_
from probes.core.workload import Operation
from probes.readers import gdsio, nvidia_topo, read_results
from models.gpudirect import predict
from assess.cli.gpudirect import render
from topologies.catalogues.achievable import gpu_ingress, link, peer, socket_links
from topologies.described.pcie import paths
from tests.commands import command_refusal

DATA = Path(__file__).parent / "data" / "gpudirect"
ROOT = Path(__file__).resolve().parents[1]
TOPO_30 = DATA / "gds-nvidia-fs-30_topo.txt"
GDSIO_30 = DATA / "gds-nvidia-fs-30_gdsio.txt"


def _matrix(name: str) -> nvidia_topo.PcieMatrix:
    return nvidia_topo.parse((DATA / name).read_text(), source=name)


# ---------------------------------------------------------------------------------------------
# Reading nvidia-smi topo -m

def test_the_matrix_of_gds_nvidia_fs_30_puts_its_gpus_and_nics_sys_apart():
    matrix = _matrix(TOPO_30.name)
    assert matrix.devices == ("GPU0", "GPU1", "NIC0", "NIC1")
    assert matrix.connection("GPU1", "NIC0") == "SYS" and matrix.connection("NIC0", "NIC1") == "PIX"
    assert matrix.connection("GPU0", "GPU1") == "NV4"
    assert matrix.numa == {"GPU0": "0", "GPU1": "0", "NIC0": "", "NIC1": ""}
    assert [matrix.kind(d) for d in matrix.devices] == ["gpu", "gpu", "nic", "nic"]


def test_a_tab_separated_matrix_names_its_nics_by_their_own_names():
    matrix = _matrix("nccl-243_topo.txt")
    assert matrix.devices[-2:] == ("mlx5_1", "mlx5_0")
    assert matrix.connection("GPU2", "mlx5_0") == "PIX" and matrix.connection("GPU0", "mlx5_0") == "NODE"
    assert matrix.connection("GPU3", "mlx5_0") == "SYS" and matrix.kind("mlx5_1") == "nic"


def test_the_legend_names_a_nic_and_the_old_soc_is_the_socket_link():
    text = ("\tGPU0\tNIC0\tCPU Affinity\nGPU0\t X \tSOC\t0-7\nNIC0\tSOC\t X \t\n\nNIC Legend:\n\n  NIC0: mlx5_3\n")
    matrix = nvidia_topo.parse(text, source="t")
    assert matrix.connection("GPU0", "mlx5_3") == "SYS" and matrix.nic_names == {"NIC0": "mlx5_3"}


@pytest.mark.parametrize("text, message", [
    ("IoType: READ", "no header of GPU columns"),
    ("\tGPU0\tNIC0\nGPU0\t X \tPCI\nNIC0\tPCI\t X \n", "expected one of X, PIX"),
    ("\tGPU0\tNIC0\nGPU0\t X \tSYS\nNIC0\tPIX\t X \n", "GPU0 to NIC0 is SYS but NIC0 to GPU0 is PIX"),
    ("\tGPU0\tNIC0\nGPU0\t X \tSYS\n", "no row for NIC0"),
])
def test_a_matrix_that_is_not_one_is_refused_in_a_line(text, message):
    with pytest.raises(ToolOutputError, match=message):
        nvidia_topo.parse(text, source="t")


# ---------------------------------------------------------------------------------------------
# Reading gdsio

def test_gdsio_lines_of_gds_nvidia_fs_30_are_read_with_their_command_lines():
    runs = read_results(GDSIO_30)  # chosen by content, through the registry
    assert [run.label for run in runs] == ["gdsio write GPUD", "gdsio read GPUD", "gdsio read CPU_GPU"]
    assert [run.samples for run in runs] == [(2.308903,), (6.885191,), (20.600775,)]
    assert {run.unit for run in runs} == {"GiB/s"}
    tags = [dict(run.tags) for run in runs]
    assert [t["path"] for t in tags] == ["gds", "gds", "bounce"] and {t["gpu"] for t in tags} == {"1"}
    assert all("-I 1M read as -i 1M" in t["note"] for t in tags)  # the thread's commands give -I twice
    read = runs[1].workload
    assert read.operation is Operation.READ and read.ppn == 192 and read.transfer_size == Q_(1, "MiB")


def test_a_bare_throughput_line_after_words_that_may_change_its_run_is_refused_not_read_as_the_command_before():
    """The thread's third test as its author wrote it: words ("switching -X <xfer_type> 2 (CPU_GPU)") between the read
    test's command line (-x 0) and the bare line. It was read as a GDS read of 20.6 GiB/s, three times the GDS read
    measured: the run was the bounce path's. Blank lines and a quote's fence do not stand between."""
    lines = GDSIO_30.read_text(encoding="utf-8").splitlines()
    said = "GDS Disabled Read Test: switching -X <xfer_type> 2 (CPU_GPU) the throughput is far better:"
    text = "\n".join([*lines[:4], said, lines[5]])
    with pytest.raises(ToolOutputError, match=r"line 6: cannot tell the run of a bare Throughput line: 'GDS Disabled"):
        gdsio.parse(text, source="thread")
    (run,) = gdsio.parse("\n".join([lines[4], "", "```", lines[5]]), source="quoted")
    assert run.label == "gdsio read CPU_GPU" and run.samples == (20.600775,)


def test_a_full_gdsio_line_says_what_it_ran_in_its_own_fields():
    (run,) = read_results(DATA / "nvidia-gds-docs_gdsio.txt")
    assert run.label == "gdsio read CPUONLY" and dict(run.tags)["path"] == "host"
    assert run.workload.ppn == 4 and run.workload.transfer_size == Q_(1024, "KiB") and run.durations == (1.237170,)


@pytest.mark.parametrize("text, message", [
    ("Throughput: 6.885191 GiB/sec, Avg_Latency: 27231.054742 usecs", "cannot tell the run's I/O type"),
    ("gdsio -D /d -d 0 -Z 3 -x 0 -I 0\nThroughput: 1.0 GiB/sec, Avg_Latency: 1.0 usecs", "gdsio takes no option '-Z'"),
    ("gdsio -D /d -d 0 -w many -x 0 -I 0\nThroughput: 1.0 GiB/sec, Avg_Latency: 1.0 usecs", "-w takes a whole number"),
    ("gdsio -D /d -d 0 -w \u00b2 -x 0 -I 0\nThroughput: 1.0 GiB/sec, Avg_Latency: 1.0 usecs", "-w takes a whole number"),
    # a line of words that names gdsio is no command line
    ("What gdsio printed for the read:\nThroughput: 1.0 GiB/sec, Avg_Latency: 1.0 usecs", "cannot tell the run's I/O type"),
])
def test_a_gdsio_line_whose_run_cannot_be_told_is_refused(text, message):
    with pytest.raises(ToolOutputError, match=message):
        gdsio.parse(text, source="g")


# ---------------------------------------------------------------------------------------------
# The catalogue: socket links, peer rates across a CPU, a GPU's measured ingress

@pytest.mark.parametrize("part", socket_links(), ids=lambda p: p.name)
def test_every_socket_link_has_its_year_and_source_and_achieves_under_its_nameplate(part):
    assert 2008 <= part.year <= 2026 and len(part.source) > 40 and part.kind == "socket"
    assert 0 < part.read.m_as("GB/s") < part.nameplate.m_as("GB/s")


def test_the_socket_links_cover_both_vendors_and_peer_traffic_across_them_is_a_published_range():
    assert {p.part for p in socket_links()} == {"qpi", "upi", "xgmi"}
    across = peer("SYS")
    assert across.least < across.most < min(p.read for p in socket_links())  # peer traffic: below memory traffic
    assert "caffe #3319" in across.source and "perftest #241" in across.source
    assert peer("PHB").most is None and peer("PIX") is None


def test_a_gpu_s_measured_ingress_is_below_its_link_s_achievable_as_bam_found():
    rate, source = gpu_ingress("4.0")
    assert rate == Q_(25, "GB/s") < link("4.0", 16).read < link("4.0", 16).nameplate and "bam #54" in source


# ---------------------------------------------------------------------------------------------
# The paths and their ceilings

def test_a_sys_gpu_s_gds_path_crosses_the_socket_link_peer_to_peer_and_its_bounce_path_as_memory_traffic():
    found = paths(_matrix(TOPO_30.name), "GPU1", ["NIC0", "NIC1"], year=2023)
    assert found.connection == "SYS"
    assert [h.what for h in found.direct] == ["NIC0+NIC1's PCIe link (shared: PIX)", "socket link, peer to peer (SYS)",
                                              "GPU1's PCIe link"]
    assert [h.what for h in found.bounce][1] == "socket link, memory traffic (SYS)"
    assert max(s.year for s in socket_links() if s.read == found.bounce[1].capacity.ends[1]) <= 2023


def test_gds_nvidia_fs_30_bounce_above_gds_bound_by_the_sys_hop_as_measured():
    """The done-when: from the thread's own topo -m and gdsio lines, bounce above GDS, the SYS hop binding GDS."""
    runs = gdsio.parse(GDSIO_30.read_text(), source=GDSIO_30.name)
    found = predict(paths(_matrix(TOPO_30.name), "GPU1", ["NIC0", "NIC1"], year=2023), runs)
    assert found.order == "bounce"
    assert found.gds.binding == found.gds.binding_least == ("socket link, peer to peer (SYS)",)
    assert found.gds.most < found.bounce.least
    assert [(p.path, p.above) for p in found.measured] == [("gds", False), ("bounce", False)]  # the write is not placed
    assert found.gds.least <= Q_(6.885191, "GiB/s") <= found.gds.most
    assert found.bounce.least <= Q_(20.600775, "GiB/s") <= found.bounce.most


def test_a_gds_run_faster_than_any_published_across_the_socket_raises_that_figure_and_a_link_s_rate_is_not_raised():
    """The socket link's peer rate is the fastest published, not physics: a faster run is news, not an error."""
    lines = "gdsio -D /d -d 1 -w 8 -s 1G -i 1M -x 0 -I 0\nThroughput: {} GiB/sec, Avg_Latency: 1.0 usecs\n"
    pcie = paths(_matrix(TOPO_30.name), "GPU1", ["NIC0"], links={"NIC0": "4.0x16", "GPU1": "4.0x16"})
    fast = predict(pcie, gdsio.parse(lines.format(15), source="fast"))
    assert fast.gds.least == fast.gds.most == Q_(15, "GiB/s") and not fast.measured[0].above
    beyond = predict(pcie, gdsio.parse(lines.format(40), source="beyond"))  # 43 GB/s through a 29.3 GB/s link
    assert beyond.measured[0].above and beyond.gds.most == link("4.0", 16).read


def test_without_measurements_or_stated_links_the_figures_alone_do_not_order_the_paths():
    """An x8 NIC of PCIe 3.0 could bind both below the socket link's published peer rate: a range, not a verdict."""
    found = predict(paths(_matrix(TOPO_30.name), "GPU1", ["NIC0", "NIC1"], year=2023))
    assert found.order == "" and "socket link, peer to peer (SYS)" in found.gds.binding
    stated = predict(paths(_matrix(TOPO_30.name), "GPU1", ["NIC0"], links={"NIC0": "4.0x16", "GPU1": "4.0x16"}))
    assert stated.order == "bounce" and stated.gds.binding == ("socket link, peer to peer (SYS)",)


def test_under_one_switch_neither_path_crosses_the_cpu_and_through_it_the_gds_path_meets_a_published_least():
    matrix = _matrix("nccl-243_topo.txt")
    near = paths(matrix, "GPU2", ["mlx5_0"], links={"GPU2": "3.0x16", "mlx5_0": "3.0x16"})
    assert len(near.direct) == len(near.bounce) == 2
    assert predict(near).gds.most == predict(near).bounce.most == link("3.0", 16).read
    node = predict(paths(matrix, "GPU0", ["mlx5_0"], links={"GPU0": "3.0x16", "mlx5_0": "3.0x16"}))
    assert node.gds.least == peer("PHB").least and node.bounce.least > node.gds.least and node.order == ""


def test_a_drive_is_named_with_its_connection_and_sources_at_different_distances_are_refused():
    matrix = _matrix("nccl-243_topo.txt")
    drive = paths(matrix, "GPU3", ["nvme0=PIX"], links={"nvme0": "4.0x4"})
    assert drive.sources[0].kind == "drive" and drive.direct[0].capacity.value == link("4.0", 4).read
    with pytest.raises(InputError, match="different distances"):
        paths(matrix, "GPU3", ["mlx5_0", "mlx5_1"])
    with pytest.raises(InputError, match="is a GPU"):
        paths(matrix, "GPU3", ["GPU4"])


# ---------------------------------------------------------------------------------------------
# The command

def test_predict_gpudirect_on_gds_nvidia_fs_30_says_bounce_beats_gds_and_names_the_sys_hop():
    done = subprocess.run([sys.executable, "-m", "assess", "predict", str(TOPO_30), "--gpudirect", "--gdsio",
                           str(GDSIO_30), "--year", "2023"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "GPU1 of" in out and "(SYS apart)" in out
    order = next(line for line in out.splitlines() if line.startswith("order:"))
    assert "the bounce path is faster" in order and "socket link, peer to peer (SYS) binds" in order
    assert "as measured" in order
    assert "gdsio read GPUD 6.885191 GiB/s" in out


def test_predict_gpudirect_json_says_what_its_text_says(capsys):
    """The same prediction as data: the GPU and how far its NICs are, each path's ends and the hop that binds it, the
    runs placed and the order (it refused --json)."""
    import json

    from assess.cli import main

    assert main(["predict", str(TOPO_30), "--gpudirect", "--gdsio", str(GDSIO_30), "--year", "2023", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["format"], doc["gpu"], doc["sources"], doc["connection"]) == ("iobound/gpudirect", "GPU1",
                                                                             ["NIC0", "NIC1"], "SYS")
    gds, bounce = doc["paths"]
    assert gds["path"] == "gds" and gds["binding"] == ["socket link, peer to peer (SYS)"]
    assert gds["most"] == {"value": 11e9, "unit": "B/s"} and bounce["least"]["value"] == pytest.approx(22.1e9, rel=1e-3)
    assert doc["order"] == "bounce" and [(m["run"], m["path"]) for m in doc["measured"]] == [
        ("gdsio read GPUD", "gds"), ("gdsio read CPU_GPU", "bounce")]  # reads into the GPU: the write is not placed
    assert any("gdsio's -d taken as nvidia-smi's GPU1" in a for a in doc["assumptions"])


def test_predict_gpudirect_names_the_options_it_does_not_take_in_one_line(capsys):
    """--op, --nodes and --explain were left unused unsaid: a prediction of something else than was asked."""
    line = command_refusal(["predict", str(TOPO_30), "--gpudirect", "--gpu", "GPU1", "--op", "read", "--nodes", "3",
                            "--explain"], capsys)
    assert line.startswith("iobound: error: --op: does not apply to --gpudirect") and "leave out --op, --nodes, --explain" in line


def test_the_order_is_checked_against_each_path_s_fastest_run_not_its_last():
    lines = "gdsio -D /d -d 1 -w 8 -s 1G -i 1M -x {} -I 0\nThroughput: {} GiB/sec, Avg_Latency: 1.0 usecs\n"
    runs = gdsio.parse(lines.format(0, 8) + lines.format(2, 5) + lines.format(0, 3), source="three")
    pcie = paths(_matrix(TOPO_30.name), "GPU1", ["NIC0"], links={"NIC0": "4.0x16", "GPU1": "4.0x16"})
    order = next(line for line in render(predict(pcie, runs), "topo").splitlines() if line.startswith("order:"))
    assert "the bounce path is faster" in order and "unlike measured: bounce 5.37 GB/s, GDS 8.59 GB/s" in order


def test_predict_gpudirect_refuses_a_gpu_the_matrix_lacks_in_one_line(capsys):
    line = command_refusal(["predict", str(TOPO_30), "--gpudirect", "--gpu", "GPU7"], capsys)
    assert "no device 'GPU7' in the matrix" in line


@pytest.mark.parametrize("stated, said", [("GPU1=4.0x3", "WIDTH one of 1, 2, 4, 8, 16"),
                                          ("GPU1=4.0x0", "WIDTH one of 1, 2, 4, 8, 16"),
                                          ("GPU0=4.0x16", "is not on the paths"),
                                          ("GPU9=4.0x16", "no device 'GPU9' in the matrix")])
def test_a_link_of_no_width_or_of_a_device_off_the_paths_is_refused_in_one_line(stated, said, capsys):
    """A link of 0 lanes gave a ceiling of 0 GB/s, and one of a device the paths do not cross was dropped unsaid."""
    line = command_refusal(["predict", str(TOPO_30), "--gpudirect", "--gpu", "GPU1", "--link", stated], capsys)
    assert said in line


@pytest.mark.parametrize("year, link", [(2005, None), (2011, None), (2016, "GPU1=4.0x16")])
def test_a_year_before_the_paths_parts_shipped_is_refused_in_one_line(year, link, capsys):
    """A year before PCIe 3.0, or before any socket link of the GPU's PCIe generation, was an internal error."""
    stated = ["--link", link] if link else []
    line = command_refusal(["predict", str(TOPO_30), "--gpudirect", "--gpu", "GPU1", "--year", str(year), *stated],
                           capsys)
    assert f"--year: {year}:" in line and "give the platform's year" in line


@pytest.mark.parametrize("sources", [["NIC0", "NIC0"], ["NIC0", "mlx5_3"], ["nvme0=SYS", "nvme0=SYS"]])
def test_a_source_named_twice_is_refused_not_its_link_counted_twice(sources):
    text = "\tGPU0\tNIC0\tCPU Affinity\nGPU0\t X \tSYS\t0-7\nNIC0\tSYS\t X \t\n\nNIC Legend:\n\n  NIC0: mlx5_3\n"
    with pytest.raises(InputError, match="is named twice"):
        paths(nvidia_topo.parse(text, source="t"), "GPU0", sources)
