"""Probes that stay honest on a busy machine: interleaved repetitions, drift and neighbours said out loud
(UNSTABLE-MACHINE), advice that says what to do, and the default probe set under a real CPU load."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from probes.core import machine
from probes.core.host import this_host
from probes.core.measurement import Measurement, Provenance
from probes.core.stats import NEIGHBOURS_EXPLAIN, drift, summarize
from probes.core.units import Metric
from probes.measure.probe import Output, Probe
from probes.measure.probeset import ProbeSetFile, document
from probes.measure.session import run_probes
from probes.readers import fio as fio_reader
from assess.cli import main
from assess.progress import diagnosis

ROOT = Path(__file__).resolve().parents[1]
STRESS = shutil.which("stress-ng")


class _Quiet:
    def started(self, index, total, probe): ...
    def repetition(self, measurements): ...
    def finished(self, measurements, reused): ...
    def failed(self, probe, error): ...


def _probe(name: str, values, pause: float = 0.0) -> Probe:
    """A probe whose repetitions yield ``values`` in turn, each after ``pause`` seconds."""
    it = iter(values)

    def once():
        time.sleep(pause)
        return {name: next(it)}

    return Probe(name, "true", (("true", name),), (Output(name, "a rate", Metric.OPERATION_RATE, "op/s"),), once)


def _measurement(samples, times=(), others=(), cpus=2) -> Measurement:
    host = this_host().__class__("node01", "6.8.0", "a CPU", cpus, 2**34)
    provenance = Provenance("fio", "3.36", (("fio", "--name=x"),), host, "2026-11-25T00:00:00+00:00", 9.0)
    return Measurement("x.rate", "a rate", Metric.OPERATION_RATE, "op/s", tuple(samples), provenance, 0.05,
                       times=tuple(times), others=tuple(others))


def test_the_repetitions_of_a_session_go_round_the_probes(tmp_path):
    steady = [_probe(f"p{i}.rate", [100.0 + (-1) ** n for n in range(50)], pause=0.01) for i in range(3)]
    outcome = run_probes(steady, ProbeSetFile(tmp_path / "p.json"), _Quiet(), target=0.001, budget=1.0)
    measured = {m.name: m for m in outcome.measurements}
    order = sorted((t, name) for name, m in measured.items() for t in m.times)
    # every round takes each probe once: the first three repetitions are p0 p1 p2 p0 p1 p2 p0 p1 p2
    assert [name for _, name in order[:9]] == ["p0.rate", "p1.rate", "p2.rate"] * 3
    spans = [(m.times[0], m.times[-1]) for m in measured.values()]
    assert max(first for first, _ in spans) < min(last for _, last in spans)  # each spans the others' repetitions


def test_a_figure_that_trends_over_the_session_is_unstable_and_never_converged(tmp_path):
    climbing = _probe("climb.rate", [100.0 * 1.01 ** n for n in range(100)])  # +1 % a repetition
    outcome = run_probes([climbing], ProbeSetFile(tmp_path / "p.json"), _Quiet(), target=0.05, budget=0.5)
    (m,) = outcome.measurements
    assert summarize(m.samples[:6]).relative_half_width < 0.05  # by its interval alone, converged at six
    assert m.unstable.startswith("a trend over the session (Spearman rho +1.00") and not m.reached
    cause, remedy = diagnosis(m)
    assert cause.startswith("UNSTABLE-MACHINE: a trend") and "--cpus" in remedy and "quieter moment" in remedy


def test_a_change_between_the_halves_is_unstable():
    values = [100, 101, 99, 100, 101, 99, 120, 121, 119, 120, 121, 119]
    m = _measurement(values, times=[0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15][:0] or range(12))
    assert m.unstable.startswith(("a trend", "a change")) and not m.reached


def test_neighbours_that_take_the_cpus_make_a_figure_unstable_however_narrow():
    samples = [100.0, 100.5, 99.5, 100.0, 100.2, 99.8]
    busy = _measurement(samples, times=range(6), others=[1.0] * 6, cpus=2)
    assert busy.half_width < 0.01
    assert busy.unstable == ("other processes took 1.00 of its 2 CPUs during its repetitions (50%): its figure holds "
                             "their work as much as the machine's")
    assert not busy.reached
    quiet = _measurement(samples, times=range(6), others=[0.05] * 6, cpus=2)
    assert quiet.unstable == "" and quiet.reached
    following = _measurement([100, 90, 100, 80, 100, 70, 100, 60], times=range(8), others=[0, .1, 0, .2, 0, .3, 0, .4])
    assert following.unstable.startswith("values that follow the neighbours' CPU use (Spearman rho -1.00")


def test_neighbours_too_idle_to_move_a_figure_do_not_make_it_unstable_however_well_it_follows_them():
    """0.00 to 0.01 CPUs can move a figure 1 % at most: a figure spread over 10 % that follows them follows something
    else, and is steady as far as the neighbours go; the same figure beside neighbours taking 0 to 0.3 CPUs is not."""
    values = [100, 96, 100, 94, 100, 92, 100, 90]
    idle = [0, .002, 0, .004, 0, .006, 0, .01]
    assert drift(values, range(8), idle) == ""
    quiet = _measurement(values, times=range(8), others=idle)
    assert quiet.unstable == "" and quiet.reached
    busy = _measurement(values, times=range(8), others=[30 * x for x in idle])
    assert busy.unstable.startswith("values that follow the neighbours' CPU use (Spearman rho -1.00")
    assert (max(values) - min(values)) / (sum(values) / 8) * NEIGHBOURS_EXPLAIN > max(idle)  # the bound it rests on


def test_a_process_the_probe_measures_takes_its_own_cpu_not_the_neighbours():
    """A process that works for the probe without being its child (a lab's sshd, sshfs, ssh) counts as the probe's
    own CPU time: the same moments with it named as a helper and without differ by what it took."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # alive throughout: not in getrusage yet
    try:
        time.sleep(0.2)
        plain, helped = machine.snapshot(), machine.snapshot([burner.pid])
        time.sleep(1.0)
        plain_after, helped_after = machine.snapshot(), machine.snapshot([burner.pid])
    finally:
        burner.kill()
        burner.wait()
    without, with_ = machine.share(plain, plain_after), machine.share(helped, helped_after)
    took = with_.own - without.own
    assert 0.05 < took <= 1.05  # what it took of one CPU, beside this machine's other work
    assert without.others >= took - 0.05  # without: one of the others
    assert with_.others == pytest.approx(max(without.others - took, 0.0), abs=0.05)


def test_a_session_asks_which_processes_help_its_probes_at_each_repetitions_start_and_end(tmp_path):
    asked = []

    def helpers() -> list[int]:
        asked.append(time.monotonic())
        return []  # (lab probe: the processes in the lab's namespaces)

    outcome = run_probes([_probe("p.rate", [100.0] * 100)], ProbeSetFile(tmp_path / "p.json"), _Quiet(), budget=1.0,
                         helpers=helpers)
    assert len(asked) == 2 * outcome.measurements[0].summary.n


def test_a_figure_short_of_its_target_says_why_and_what_to_do():
    narrow = _measurement([100.0, 100.1, 99.9], times=range(3), others=[0.0] * 3)
    assert not narrow.reached  # within 5 %, but three repetitions cannot show a drift
    assert diagnosis(narrow)[0] == "too few repetitions to tell drift from noise: 3 of the 6 a drift test needs"


def test_a_noisy_figure_short_of_its_target_says_how_many_repetitions_and_what_budget():
    noisy = _measurement([100, 130, 80], times=range(3), others=[0.0] * 3)
    cause, remedy = diagnosis(noisy)
    assert cause == "noise: its repetitions vary by 24.4% (cv), and 3 of them give ± 60.5%"
    assert re.match(r"about \d+ repetitions reach ± 5\.0%: raise --budget by about \d+ s for this figure, or average each over "
                    r"longer with --runtime 2", remedy)


def test_a_topology_takes_an_unstable_figures_whole_spread(tmp_path):
    drifting = _measurement([100.0 * 1.02 ** n for n in range(8)], times=range(8), others=[0.0] * 8)
    (tmp_path / "p.json").write_text(json.dumps(document([drifting])))
    (tmp_path / "t.toml").write_text('[clients.c]\ncount = 1\n[servers.s]\ncount = 1\n'
                                     'metadata = { probe = "p.json", measurement = "x.rate" }\n[[links]]\nbetween = ["c", "s"]\n')
    from topologies.load import load_topology

    capacity = load_topology(tmp_path / "t.toml").group("s").capacity("metadata")
    assert [q.m_as("op/s") for q in capacity.range] == pytest.approx([100.0, 100.0 * 1.02 ** 7])
    assert "UNSTABLE-MACHINE (a trend over the session" in capacity.source.note


@contextmanager
def _loaded(cpus: int = 1):
    """A CPU-bound load of our own on ``cpus`` CPUs for as long as the block runs."""
    load = subprocess.Popen([STRESS, "--cpu", str(cpus), "--timeout", "0"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        yield
    finally:
        load.terminate()
        load.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.skipif(STRESS is None, reason="stress-ng is not installed (apt-get install stress-ng)")
def test_probe_warns_of_a_busy_machine_before_it_starts_and_marks_what_it_measured(tmp_path, capsys):
    out = tmp_path / "busy.json"
    with _loaded():
        status = main(["probe", "-o", str(out), "--no-memory", "--device", str(tmp_path / "f"), "--runtime", "0.2",
                       "--budget", "2"])
    err = capsys.readouterr().err
    assert status == 0 and "iobound: warning: the machine is busy: other processes take" in err
    doc = json.loads(out.read_text())
    assert doc["machine"]["others_cpus"] >= 0.25 * doc["machine"]["cpus"]
    assert all(m["unstable"] and not m["reached"] for m in doc["measurements"] if m["target"])


def _long_run(m: dict, seconds: int = 6) -> float:
    """The same fio command as a probe's repetition, run for ``seconds``: its first figure."""
    argv = [re.sub(r"--runtime=\d+ms", f"--runtime={seconds * 1000}ms", word) for word in m["provenance"]["commands"][0]]
    folder = Path(m["parameters"]["directory"])
    folder.mkdir(mode=0o700, exist_ok=True)
    for job in range(m["parameters"]["numjobs"]):
        (folder / f"iobound.{job}").write_bytes(b"\xa5" * m["parameters"]["size"])
    iops, bandwidth, _ = fio_reader.totals(subprocess.run(argv, capture_output=True, text=True, check=True).stdout,
                                           source="long run")
    return iops if m["name"].endswith(".iops") else bandwidth


@pytest.mark.slow
@pytest.mark.skipif(STRESS is None, reason="stress-ng is not installed (apt-get install stress-ng)")
def test_under_load_the_default_probes_are_within_5_percent_of_a_long_run_or_unstable(tmp_path):
    """Issue 25's measure: the default probe set (in 40 s, not its default 85 s: CI's time) with a CPU-bound load of
    our own on one CPU through the whole session; each figure within 5 % of the same command's long run (6 s, under
    the same load: six of its 1 s repetitions; issue 25 took 30 s: eight such runs were four minutes of CI) or
    UNSTABLE-MACHINE, and none that claims convergence more than 10 % off."""
    out = tmp_path / "loaded.json"
    with _loaded():
        done = subprocess.run([sys.executable, "-m", "assess", "probe", "-o", str(out), "--quiet", "--budget", "40"],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        doc = json.loads(out.read_text())
        figures = [m for m in doc["measurements"] if m["target"]]
        assert len(figures) == 8
        for m in figures:
            long = _long_run(m)
            off = m["summary"]["mean"] / long - 1
            assert abs(off) <= 0.05 or m["unstable"], (m["name"], off)
            assert not (m["reached"] and abs(off) > 0.10), (m["name"], off)
    shutil.rmtree(Path(figures[0]["parameters"]["directory"]), ignore_errors=True)
