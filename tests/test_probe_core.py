"""The probe framework: running tools, adaptive repetitions, probe set files, and capacities taken from them."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace

import pytest

from probes.core.errors import InputError, ToolFailedError, ToolNotFoundError
from probes.measure.fio import ContextSwitches
from probes.core.host import this_host
from probes.core.measurement import Measurement, Provenance
from probes.measure.memory import scratch_directory, tmpfs_probes
from probes.measure.probe import MIN_REPETITIONS, Output, Probe
from probes.measure.session import measure
from probes.core import machine
from probes.core.stats import DRIFT_LEAST
from probes.measure.probeset import ProbeSetFile, read_probe_set
from probes.measure.tool import run_tool
from probes.core.units import Metric


def _series(values, title="series"):
    """A probe whose repetitions yield ``values`` in turn (to test the stopping rule, not a tool)."""
    it = iter(values)
    return Probe(title, "true", (("true",),), (Output("x.rate", "a rate", Metric.OPERATION_RATE, "op/s"),),
                 lambda: {"x.rate": next(it)})


def _measurement(name="iperf3.send.p1", samples=(9.4e8, 9.5e8, 9.45e8), metric=Metric.BANDWIDTH, unit="bit/s"):
    provenance = Provenance("iperf3", "3.12", (("iperf3", "-c", "peer"),), this_host(), "2026-11-21T10:00:00+00:00", 3.2)
    return Measurement(name, "iperf3 to peer", metric, unit, samples, provenance, 0.05)


def test_run_tool_errors_show_argv_status_and_stderr():
    with pytest.raises(ToolFailedError, match=r"^ls /no-such-dir exited with status 2; its stderr ends: [^\n]*No such file[^\n]*$"):
        run_tool(["ls", "/no-such-dir"], timeout=10)
    with pytest.raises(ToolNotFoundError, match="no-such-tool is not installed or not on PATH; install no-such-tool "
                                                "and make sure it is on PATH$"):
        run_tool(["no-such-tool"], timeout=10)


def test_a_missing_tool_is_named_with_the_package_that_brings_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolNotFoundError, match=r"^ping is not installed or not on PATH; install with: apt-get install "
                                                r"iputils-ping$"):
        run_tool(["ping", "-c", "1", "127.0.0.1"], timeout=10)


def test_run_tool_stops_a_hanging_tool_and_its_children():
    started = time.monotonic()
    with pytest.raises(ToolFailedError, match=r"did not finish within 0.5 s and was stopped"):
        run_tool(["sh", "-c", "sleep 31.5 & sleep 31.5"], timeout=0.5)  # a literal script, not built from input
    assert time.monotonic() - started < 5
    left = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = open(f"/proc/{entry}/cmdline", "rb").read() if entry.isdigit() else b""
            state = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[0] if cmdline else "Z"
        except OSError:
            continue
        if cmdline == b"sleep\x0031.5\x00" and state != "Z":
            left.append(entry)
    assert not left  # the background child was stopped with the group


def test_measure_stops_at_the_target_and_never_below_the_repetitions_a_drift_test_needs(monkeypatch):
    # the stopping rule alone, on a quiet machine: neighbours that took 0.00 to 0.01 CPUs, more while the figure was
    # lower (a loaded machine's, as the whole suite's leftovers, make a figure unsteady and want more repetitions);
    # they follow the figure, but move it 1 % at most, so they do not make it unstable
    last = []

    def series(values):
        """``_series(values)``, keeping each value in ``last`` for the neighbours to follow."""
        probe = _series(values)

        def once():
            last.append(probe.once()["x.rate"])
            return {"x.rate": last[-1]}

        return replace(probe, once=once)

    monkeypatch.setattr(machine, "share", lambda before, after: machine.Share(0.01 if last[-1] < 100 else 0.0, 0.0, 0.0))
    measured = measure(series([100.0] * 10), target=0.05, budget=60)
    assert measured[0].samples == (100.0,) * DRIFT_LEAST and measured[0].reached
    noisy = [150.0, 50.0] + [100.0 + (i * 37) % 11 - 5 for i in range(200)]  # a wide start, then steady noise
    measured = measure(series(noisy), target=0.05, budget=60)[0]
    assert MIN_REPETITIONS < measured.summary.n < 200
    assert measured.half_width <= 0.05 and measured.reached and measured.complete


def test_measure_reports_a_target_not_reached_within_the_budget():
    measured = measure(_series([1.0, 2.0, 3.0, 4.0, 5.0] * 100), target=0.001, budget=0.0)[0]
    assert measured.summary.n == MIN_REPETITIONS and not measured.reached


def test_measure_continues_an_interrupted_measurement(monkeypatch):
    # on a quiet machine: what the neighbours take is another test's (the one above), not this one's
    monkeypatch.setattr(machine, "share", lambda before, after: machine.Share(0.0, 0.0, 0.0))
    saved = []
    with pytest.raises(StopIteration):  # the third repetition is interrupted
        measure(_series([100.0, 100.0]), target=0.05, budget=60, progress=saved.append)
    partial = saved[-1]
    assert partial[0].summary.n == 2 and not partial[0].complete
    continued = measure(_series([100.0] * 5), previous={m.name: m for m in partial})[0]
    assert continued.summary.n == DRIFT_LEAST and continued.complete and continued.times[2] - continued.times[1] >= 1.0
    assert continued.provenance.started_at == partial[0].provenance.started_at


def test_probe_set_is_never_overwritten_without_force_and_resumes(tmp_path):
    path = tmp_path / "node.json"
    store = ProbeSetFile(path)
    store.record([_measurement()])
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["format_version"]) == ("iobound/probe-set", "1.2")
    assert doc["measurements"][0]["provenance"]["host"]["hostname"] == this_host().hostname
    with pytest.raises(InputError, match="exists already; --resume continues it, --force replaces it"):
        ProbeSetFile(path)
    assert ProbeSetFile(path, resume=True).measurements.keys() == {"iperf3.send.p1"}
    assert ProbeSetFile(path, force=True).measurements == {}
    assert read_probe_set(path)["iperf3.send.p1"].samples == (9.4e8, 9.5e8, 9.45e8)  # still there until the first record


def test_probe_set_errors_name_the_file_and_entry(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "iobound/probe-set", "format_version": "1.0", "measurements": [{"name": "x"}]}')
    with pytest.raises(InputError, match=r"bad.json: measurements\[0\]: is not a measurement"):
        read_probe_set(bad)
    bad.write_text('{"format": "iobound/check"}')
    with pytest.raises(InputError, match="expected an iobound/probe-set document. Got 'iobound/check'"):
        read_probe_set(bad)
    bad.write_text('{"format": "iobound/probe-set", "format_version": "9.0"}')
    with pytest.raises(InputError, match="version '9.0' of iobound/probe-set cannot be read; this iobound reads 1.0, 1.1, 1.2"):
        read_probe_set(bad)


def test_resumed_probe_set_skips_finished_probes(tmp_path):
    with scratch_directory("/dev/shm", __file__) as scratch:
        probe = tmpfs_probes(scratch, runtime=0.2, operations=("read",))[1]  # bs=1m bandwidth
        store = ProbeSetFile(tmp_path / "p.json")
        store.record(measure(probe, budget=2))
        again = ProbeSetFile(tmp_path / "p.json", resume=True)
        assert again.done(probe) is not None
        other = tmpfs_probes(scratch, runtime=0.3, operations=("read",))[1]  # other commands: measured again
        assert again.done(other) is None


@pytest.mark.slow
def test_tmpfs_probes_measure_operations_context_switches_and_bandwidth():
    with scratch_directory("/dev/shm", __file__) as scratch:
        one_byte, one_mib = tmpfs_probes(scratch, runtime=0.3, operations=("read",))
        iops, ctx, machine_ctx = measure(one_byte, budget=3)
        (bandwidth,) = measure(one_mib, budget=3)
    # A 1-byte read is a system call: between 50,000 and 50 million a second on anything that runs Linux.
    assert 5e4 < iops.summary.mean < 5e7 and iops.metric is Metric.OPERATION_RATE
    # fio's own switches and the whole machine's, each named for what it is: the machine's count fio's and more
    assert (ctx.name, machine_ctx.name) == ("tmpfs.read.bs1.jobs1.ctx", "tmpfs.read.bs1.jobs1.machine_ctx")
    assert ctx.metric is machine_ctx.metric is Metric.EVENT_RATE and "fio's ctx" in ctx.description
    # a 1-byte read loop switches seldom: fio may count none in a short run, the machine always some
    assert ctx.summary.min >= 0 and machine_ctx.summary.min > 0 and machine_ctx.summary.mean >= 0.5 * ctx.summary.mean
    assert 1e8 < bandwidth.summary.mean < 1e12 and bandwidth.unit == "B/s"
    assert iops.provenance.commands[0][0] == "fio" and "--bs=1" in iops.provenance.commands[0]
    assert iops.provenance.tool_version.count(".") >= 1


def test_context_switches_counts_the_kernels_switches():
    with ContextSwitches() as ctx:
        run_tool(["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.02; done"], timeout=10)
    assert ctx.rate > 0


def test_topology_takes_a_capacity_from_a_probe_set(tmp_path, topology):
    ProbeSetFile(tmp_path / "node01.json").record([_measurement()])
    text = """
[clients.c]
nic = { probe = "node01.json", measurement = "iperf3.send.p1" }
[servers.s]
nic = "10 GbE"
[networks.n]
[devices.d]
bandwidth = "1 GiB/s"
"""
    nic = topology(text, links="c n s d", source=str(tmp_path / "t.toml")).group("c").capacity("nic", "read")
    # the probe's 95 % interval around its mean of 945 Mbit/s: the value is its favourable end
    measurement = _measurement()
    low, high = measurement.summary.ci_low, measurement.summary.ci_high
    assert [end.to("bit/s").magnitude for end in nic.range] == pytest.approx([low, high])
    assert low < 9.45e8 < high and nic.value == nic.range[1]
    assert nic.source.kind == "probe" and "node01.json: iperf3.send.p1, mean" in nic.source.note
    assert "of 3 (95 % CI ±" in nic.source.note
    with pytest.raises(InputError, match=r"t.toml: clients.c.nic.measurement: .*has no measurement 'iperf3.send.p9'; it has: iperf3.send.p1"):
        topology(text.replace("p1", "p9"), links="c n s d", source=str(tmp_path / "t.toml"))
    with pytest.raises(InputError, match=r"clients.c.nic.probe: cannot read the probe set"):
        topology(text.replace("node01", "node02"), links="c n s d", source=str(tmp_path / "t.toml"))
    ProbeSetFile(tmp_path / "node03.json").record([_measurement("ping.rtt", (1e-4, 1.1e-4, 0.9e-4), Metric.LATENCY, "s")])
    with pytest.raises(InputError, match="'ping.rtt' is a latency, but this capacity is a bandwidth"):
        topology(text.replace("node01.json", "node03.json").replace("iperf3.send.p1", "ping.rtt"), links="c n s d",
                 source=str(tmp_path / "t.toml"))


class _Recorder:
    """A Reporter that keeps what it was told."""

    def __init__(self):
        self.events = []

    def started(self, index, total, probe):
        self.events.append(("started", probe.name))

    def repetition(self, measurements):
        self.events.append(("repetition", measurements[0].summary.n))

    def finished(self, measurements, reused):
        self.events.append(("finished", measurements[0].name, reused))

    def failed(self, probe, error):
        self.events.append(("failed", probe.name, str(error)))


def test_a_failing_probe_is_reported_and_the_others_go_on(tmp_path):
    from probes.measure.iperf3 import iperf3_probes
    from probes.measure.session import run_probes

    with scratch_directory("/dev/shm", __file__) as scratch:
        probes = iperf3_probes("127.0.0.1", port=1, streams=(1,), directions=("send",))
        probes += tmpfs_probes(scratch, runtime=0.2, operations=("write",))[1:]
        recorder = _Recorder()
        outcome = run_probes(probes, ProbeSetFile(tmp_path / "p.json"), recorder, budget=0)
    (failed, error), = outcome.failures
    # found before the session spends anything, saying what to start where
    assert failed.name == "iperf3.send.p1" and recorder.events[:2] == [("started", "iperf3.send.p1"), ("failed", "iperf3.send.p1", str(error))]
    assert str(error) == ("no iperf3 server answers at 127.0.0.1 port 1 (nothing listens on it): start `iobound probe "
                          "serve` on 127.0.0.1")
    assert [m.name for m in outcome.measurements] == ["tmpfs.write.bs1m.jobs1.bandwidth"]
    assert outcome.measurements[0].summary.n == MIN_REPETITIONS  # no budget: the minimum, never fewer
    assert ("finished", "tmpfs.write.bs1m.jobs1.bandwidth", False) in recorder.events
    assert set(read_probe_set(tmp_path / "p.json")) == {"tmpfs.write.bs1m.jobs1.bandwidth"}


def test_a_missing_tool_stops_the_run_before_anything_is_measured(tmp_path):
    from probes.measure.session import run_probes

    probe = Probe("t", "no-such-tool", (("no-such-tool",),), (Output("t.x", "x", Metric.LATENCY, "s"),), dict)
    with pytest.raises(ToolNotFoundError, match="no-such-tool is not installed"):
        run_probes([_series([1.0] * 3), probe], ProbeSetFile(tmp_path / "p.json"), _Recorder())
    assert not (tmp_path / "p.json").exists()


def test_a_resume_that_would_measure_a_figure_again_differently_is_refused(tmp_path):
    from probes.measure.session import run_probes

    with scratch_directory("/dev/shm", __file__) as scratch:
        probe = tmpfs_probes(scratch, runtime=0.2, operations=("read",))[1]
        store = ProbeSetFile(tmp_path / "p.json")
        store.record(measure(probe, budget=0))
        other = tmpfs_probes(scratch, runtime=0.3, operations=("read",))[1]
        before = (tmp_path / "p.json").read_text()
        with pytest.raises(InputError, match="holds tmpfs.read.bs1m.jobs1.bandwidth measured with other commands or "
                                             "on another host; measuring again would lose them"):
            run_probes([other], ProbeSetFile(tmp_path / "p.json", resume=True), _Recorder())
    assert (tmp_path / "p.json").read_text() == before


def test_figures_that_ride_along_have_no_target_of_their_own():
    with scratch_directory("/dev/shm", __file__) as scratch:
        iops, ctx, _ = measure(tmpfs_probes(scratch, runtime=0.2, operations=("read",))[0], target=0.5, budget=0)
    assert iops.target == 0.5 and ctx.target is None and ctx.reached


def test_the_scratch_directory_must_be_on_a_tmpfs_and_private(tmp_path):
    from probes.core.errors import ProbeError

    with pytest.raises(ProbeError, match=r"is on \w+, not a tmpfs: the memory probes would measure a disk"):
        with scratch_directory(str(tmp_path), "x"):
            pass
    with scratch_directory("/dev/shm", "shared") as path:
        os.chmod(path, 0o777)  # as if another user had made it first
        with pytest.raises(ProbeError, match="exists but is not a private directory of this user"):
            with scratch_directory("/dev/shm", "shared"):
                pass


def test_a_plan_never_saves_two_figures_under_one_name(tmp_path):
    from probes.core.errors import ProbeError
    from probes.measure.plan import Plan, plan_probes

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "disk.img").write_bytes(os.urandom(2**20))
    with pytest.raises(ProbeError, match="two probes would be saved as device.disk-img.randread.4k.iops"):
        plan_probes(Plan(tmpfs=None, devices=(str(tmp_path / "a/disk.img"), str(tmp_path / "b/disk.img"))), None)
    one = plan_probes(Plan(tmpfs=None, peer="127.0.0.1", streams=1), None)
    assert [p.name for p in one] == ["ping.rtt", "iperf3.send.p1", "iperf3.receive.p1"]


def test_the_budget_is_shared_and_kept(tmp_path):
    """Three probes too noisy to reach their target share a 1.5 s budget: each gets more than its minimum.

    Why it holds alone as in the suite: the first summary of a session needs scipy.stats, 1.5 to 1.7 s to
    import in a fresh process, which took the whole budget when the test ran alone (5 of 5). run_probes
    imports it before its clock starts (probes.core.stats.load), so the budget times only the repetitions,
    here sleeps that a busy CPU does not lengthen much.
    """
    from probes.measure.session import run_probes

    def slow(name):
        values = iter([1.0, 2.0] * 1000)  # too noisy to reach the target: only the budget stops it

        def once():
            time.sleep(0.05)
            return {name: next(values)}
        return Probe(name, "true", (("true", name),), (Output(name, name, Metric.OPERATION_RATE, "op/s"),), once)

    started = time.monotonic()
    outcome = run_probes([slow(f"p{i}.rate") for i in range(3)], ProbeSetFile(tmp_path / "p.json"), _Recorder(), budget=1.5)
    counts = [m.summary.n for m in outcome.measurements]
    assert time.monotonic() - started < 1.5 + 1.0
    assert all(n > MIN_REPETITIONS for n in counts) and max(counts) - min(counts) <= 0.5 * max(counts)
    assert not any(m.reached for m in outcome.measurements)
