"""Figures stated as ranges: how files, --set and probes state them, and the ceiling as an interval.

The ceiling is monotone in every figure, so the solve at every range's least favourable end
and the one at its most bound every ceiling inside the ranges (sampled here); what a run
between the ends implies of each range is the least value that makes it exactly possible.
"""

import json
import random

import pytest
from hypothesis import assume, given, settings, strategies as st

from probes.core.errors import TopologyError
from probes.core.units import Q_, Metric, canonical
from probes.core.workload import Operation, Workload
from models.implied import implied
from models.predict import Model
from topologies.edit import apply_changes, parse_change
from topologies.load import load_topology, parse_topology, topology_from_dict
from topologies.save import save_topology
from topologies.topology import Component, Topology
from tests.systems import topology
from tests.test_model_properties import CAPACITIES, NAMES, systems, workloads

SMALL = """
[clients.c]
count = 4
nic = { range = ["10 Gbit/s", "100 Gbit/s"], source = "assumption", note = "not stated" }
[networks.n]
rtt = "50..200 us"
[servers.s]
count = 2
nic = "100 Gbit/s"
latency = { range = ["10 us", "100 us"] }
[devices.d]
count = 8
bandwidth = "2..3 GB/s"
"""


def _small(text: str = SMALL, **kw) -> Topology:
    """SMALL, or ``text`` (SMALL changed), with its clients, network, servers and devices linked in a chain."""
    return topology(text, links="c n s d", **kw)


def test_a_range_is_read_from_a_table_or_a_span_and_its_value_is_the_favourable_end():
    topology = _small()
    ranged = topology.ranged()
    assert set(map(str, ranged)) == {"c.nic", "n.rtt", "s.latency", "d.bandwidth"}
    nic, rtt = ranged[Component("c", "nic")], ranged[Component("n", "rtt")]
    assert nic.range == (Q_(10, "Gbit/s"), Q_(100, "Gbit/s")) and nic.value == Q_(100, "Gbit/s")
    assert nic.ends == (Q_(10, "Gbit/s"), Q_(100, "Gbit/s")) and str(nic) == "10 to 100 Gbit/s (assumption: not stated)"
    # a latency is favourable at its least: "50..200 us" takes the second's unit for the bare first
    assert rtt.range == (Q_(50, "us"), Q_(200, "us")) and rtt.value == Q_(50, "us") and rtt.ends[0] == Q_(200, "us")
    low = topology.at_ends(favourable=False)
    assert low.group("c").capacity("nic").value == Q_(10, "Gbit/s") and low.group("n").capacity("rtt").value == Q_(200, "us")
    assert not low.ranged()


@pytest.mark.parametrize("written, message", [
    ('{ range = ["100 Gbit/s", "10 Gbit/s"] }', "gives its least value first"),
    ('{ range = ["10 Gbit/s"] }', "a range is two values"),
    ('{ range = ["10 Gbit/s", "100 Gbit/s"], value = "25 Gbit/s" }', "a value or a range (not both)"),
    ('{ range = ["10 Gbit/s", "100 ms"] }', "the value"),
    ('"10..100 ms"', "the value"),
])
def test_a_bad_range_is_named_in_one_line(written, message):
    with pytest.raises(TopologyError) as error:
        _small(SMALL.replace('"100 Gbit/s"\nlatency', f'{written}\nlatency'))
    assert message in str(error.value) and "servers.s.nic" in str(error.value) and "\n" not in str(error.value)


def test_a_block_size_takes_no_range():
    with pytest.raises(TopologyError, match="a block size is what the file system uses"):
        _small(SMALL.replace('nic = "100 Gbit/s"', 'nic = "100 Gbit/s"\nblock_size = "1..4 MiB"'))


def test_a_range_round_trips_through_saving_and_shows_in_json(tmp_path):
    topology = _small(SMALL, source=str(tmp_path / "small.toml"))
    again = load_topology(save_topology(topology, tmp_path / "saved.toml"))
    assert again.ranged() == topology.ranged()
    nic = json.loads(json.dumps(again.to_dict()))["groups"][0]["capacities"]["nic"]
    assert nic["range"] == [{"value": 1.25e9, "unit": "B/s"}, {"value": 1.25e10, "unit": "B/s"}]
    assert nic["value"] == {"value": 1.25e10, "unit": "B/s"} and nic["source"] == "assumption"


def test_set_states_a_range_as_a_span_or_a_table():
    topology = _small()
    spans = [parse_change("s.nic=25..100Gbit/s"),
             parse_change('s.nic={ range = ["25 Gbit/s", "100 Gbit/s"], source = "assumption" }')]
    for change in spans:
        changed = apply_changes(topology, (change,)).group("s").capacity("nic")
        assert changed.range == (Q_(25, "Gbit/s"), Q_(100, "Gbit/s"))
    with pytest.raises(TopologyError, match="with --set s.nic=100..25Gbit/s: servers.s.nic: a range gives its least"):
        apply_changes(topology, (parse_change("s.nic=100..25Gbit/s"),))


def test_a_probed_capacity_is_its_probes_95_percent_interval(tmp_path):
    from probes.core.host import Host
    from probes.core.measurement import Measurement, Provenance
    from probes.core.stats import summarize
    from probes.measure.probeset import document

    samples = (110.0, 112.0, 108.0, 111.0)
    provenance = Provenance("iperf3", "3.16", (("iperf3", "-c", "peer"),), Host("n1", "6.8", "cpu", 4, 2**34),
                            "2026-11-24T20:00:00Z", 3.0)
    measurement = Measurement("iperf3.send.p1", "send", Metric.BANDWIDTH, "MiB/s", samples, provenance)
    (tmp_path / "n1.json").write_text(json.dumps(document([measurement])), encoding="utf-8")
    probed = _small(SMALL.replace(
        'nic = { range = ["10 Gbit/s", "100 Gbit/s"], source = "assumption", note = "not stated" }',
        'nic = { probe = "n1.json", measurement = "iperf3.send.p1" }'), path=tmp_path / "t.toml")
    nic = probed.group("c").capacity("nic")
    s = summarize(samples)
    assert [end.m_as("MiB/s") for end in nic.range] == pytest.approx([s.ci_low, s.ci_high], rel=1e-12)
    assert nic.source.kind == "probe" and "95 % CI" in nic.source.note


def test_a_probed_or_measured_range_that_binds_is_stated_not_assumed(tmp_path):
    """A probe's interval and a measurement's spread are ranges of stated figures: a ceiling they bind names them
    without "[assumed]"; only a figure whose source is an assumption (or a range without a source) says so."""
    from probes.core.host import Host
    from probes.core.measurement import Measurement, Provenance
    from probes.measure.probeset import document

    provenance = Provenance("iperf3", "3.16", (("iperf3", "-c", "peer"),), Host("n1", "6.8", "cpu", 4, 2**34),
                            "2026-11-24T20:00:00Z", 3.0)
    measurement = Measurement("iperf3.send.p1", "send", Metric.BANDWIDTH, "Gbit/s", (9.0, 9.2, 8.8, 9.1), provenance)
    (tmp_path / "n1.json").write_text(json.dumps(document([measurement])), encoding="utf-8")
    probed = _small(SMALL.replace(
        'nic = { range = ["10 Gbit/s", "100 Gbit/s"], source = "assumption", note = "not stated" }',
        'nic = { probe = "n1.json", measurement = "iperf3.send.p1" }').replace(
        'bandwidth = "2..3 GB/s"', 'bandwidth = { range = ["0.4 GB/s", "0.6 GB/s"], source = "measured", note = "fio" }'),
        path=tmp_path / "t.toml")
    ceiling = Model(probed).ceiling(Workload(Operation.WRITE, Q_(1, "MiB")))  # 4 x 8.9-9.3 Gbit/s, 8 x 0.4-0.6 GB/s
    assert ceiling.binding == (Component("c", "nic"),) and ceiling.low.binding == (Component("d", "bandwidth"),)
    assert ceiling.assumed == () and "[assumed]" not in ceiling.marked(ceiling.binding + ceiling.low.binding)
    # the same ranges as assumptions, or without a source, are assumed
    assumed = Model(_small()).ceiling(Workload(Operation.WRITE, Q_(1, "MiB")))
    assert assumed.marked(assumed.binding + assumed.low.binding) == "d.bandwidth [assumed], c.nic [assumed]"


def test_a_topology_without_ranges_is_judged_as_before():
    topology = _small(SMALL.replace('"2..3 GB/s"', '"3 GB/s"').replace('"50..200 us"', '"50 us"')
                              .replace('{ range = ["10 us", "100 us"] }', '"10 us"')
                              .replace('{ range = ["10 Gbit/s", "100 Gbit/s"], source = "assumption", note = "not stated" }',
                                       '"100 Gbit/s"'))
    ceiling = Model(topology).ceiling(Workload(Operation.READ, Q_(1, "MiB"), nodes=4, direct=True))
    assert ceiling.low is None and ceiling.least == ceiling.value and ceiling.assumed == ()


def test_the_interval_names_what_binds_each_end_and_marks_assumed_figures():
    ceiling = Model(_small()).ceiling(Workload(Operation.WRITE, Q_(1, "MiB")))
    # most favourable: 8 devices x 3 GB/s = 24 GB/s below 4 x 100 Gbit/s = 50 GB/s; least: 4 x 10 Gbit/s = 5 GB/s
    assert ceiling.value.m_as("GB/s") == pytest.approx(24) and ceiling.least.m_as("GB/s") == pytest.approx(5)
    assert ceiling.binding == (Component("d", "bandwidth"),) and ceiling.low.binding == (Component("c", "nic"),)
    assert set(ceiling.assumed) == {Component("d", "bandwidth"), Component("c", "nic")}
    assert str(ceiling) == "4.66–22.4 GiB/s (client NICs to devices)"


def _ranged(doc: dict, draw) -> dict:
    """The random system with every capacity it states turned into a range around its value."""
    copy = {k: ({n: dict(g) for n, g in v.items()} if isinstance(v, dict) else v) for k, v in doc.items()}
    for kind, name in NAMES.items():
        group = copy[kind][name]
        for key, text in group.items():
            if isinstance(text, str) and " " in text and key not in ("parity", "forwarding"):
                number, unit = text.split(" ", 1)
                low = float(number) * draw(st.floats(0.1, 1.0))
                high = float(number) * draw(st.floats(1.0, 10.0))
                group[key] = {"range": [f"{low!r} {unit}", f"{high!r} {unit}"], "source": "assumption"}
    return copy


def _model(doc: dict) -> Model:
    try:
        return Model(topology_from_dict(doc))
    except TopologyError:
        assume(False)


def _bound(model: Model, workload: Workload) -> float:
    try:
        return model.bound(workload)
    except TopologyError:
        assume(False)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(systems(), workloads(), st.data())
def test_the_interval_holds_every_ceiling_sampled_inside_the_ranges(doc, workload, data):
    model = _model(_ranged(doc, data.draw))
    _bound(model, workload)
    ceiling = model.ceiling(workload)
    low, high = ceiling.least.m_as(ceiling.metric.unit), ceiling.value.m_as(ceiling.metric.unit)
    assert low <= high * (1 + 1e-12)
    chooser = random.Random(data.draw(st.integers(0, 2**32)))
    for _ in range(5):
        inside = {}
        for place, capacity in model.ranges.items():
            worst, best = (end.m_as(capacity.value.units) for end in capacity.ends)
            inside[place] = capacity.at(Q_(worst + chooser.random() * (best - worst), capacity.value.units))
        sampled = Model(model.topology.replaced(inside)).bound(workload)
        assert low * (1 - 1e-9) <= sampled <= high * (1 + 1e-9)


@settings(max_examples=80, deadline=None)
@given(systems(), workloads(), st.data())
def test_the_bound_a_search_solves_is_the_ceilings_value_to_the_last_bit(doc, workload, data):
    """What the search for an implied figure solves thousands of times (the value alone, a metadata one without its
    layers) is the ceiling's value exactly: the figures it finds are those a ceiling gives."""
    model = _model(_ranged(doc, data.draw))
    assert _bound(model, workload) == canonical(model.ceiling(workload).value)
    assert model.low.bound(workload) == canonical(model.low.ceiling(workload).value)


@settings(max_examples=80, deadline=None)
@given(systems(), workloads(), st.floats(0.0, 1.0), st.data())
def test_the_implied_value_makes_the_run_exactly_possible_and_no_less_does(doc, workload, where, data):
    model = _model(_ranged(doc, data.draw))
    high = _bound(model, workload)
    low = model.low.bound(workload)
    assume(high > low * (1 + 1e-6))
    target = low + where * (high - low)
    needs = {n.component: n for n in implied(model, workload, None, target)}
    stated = model.stated.topology  # the others at their most favourable: a range's end, a one-value assumption unlimited
    for place, capacity in model.ranges.items():
        def at(x):
            return Model(stated.replaced({place: capacity.at(x)})).bound(workload)
        if place not in needs:  # its least favourable end already allows the run
            assert at(capacity.ends[0]) >= target * (1 - 1e-9)
            continue
        needed = needs[place].needed
        assert target * (1 - 1e-9) <= at(needed) <= target * (1 + 1e-6)
        worse = needed * (1 + 1e-6) if capacity.metric is Metric.LATENCY else needed * (1 - 1e-6)
        assert at(worse) < target


@pytest.mark.slow
def test_the_implied_value_agrees_with_a_brute_force_scan():
    """The least client NIC on a grid of 10,001 values that allows a write at 20 GB/s, against the bisection."""
    model = Model(_small())
    workload = Workload(Operation.WRITE, Q_(1, "MiB"), nodes=4, ppn=16, queue_depth=16, direct=True)
    (need,) = [n for n in implied(model, workload, None, 20e9) if n.component == Component("c", "nic")]
    capacity = model.ranges[Component("c", "nic")]
    grid = [10 + 90 * i / 10000 for i in range(10001)]
    first = next(x for x in grid if Model(model.topology.replaced(
        {Component("c", "nic"): capacity.at(Q_(x, "Gbit/s"))})).bound(workload) >= 20e9)
    assert need.needed.m_as("Gbit/s") == pytest.approx(first, abs=90 / 10000)
    assert str(need).startswith("c.nic ≥ ") and str(need).endswith("(stated: assumption 10 to 100 Gbit/s)")


def test_check_says_what_a_run_between_the_ends_implies():
    from probes.core.run import Origin, Run
    from assess.check import check_runs

    run = Run("write", Workload(Operation.WRITE, Q_(1, "MiB")), Metric.BANDWIDTH, (20.0,), "GB/s",
              Origin("r.csv", None, "test"))
    (judgement,) = check_runs(_small(), [run])
    possible = next(f for f in judgement.findings if f.code == "POSSIBLE-IF")
    assert possible.severity.label == "warning"
    assert "possible only if c.nic ≥ 40 Gbit/s (stated: assumption 10 to 100 Gbit/s)" in possible.message
    assert "c.nic [assumed]" in possible.message
    assert "and d.bandwidth ≥ 2.50 GB/s (stated: 2 to 3 GB/s)" in possible.message
    assert [str(n.component) for n in possible.implied] == ["c.nic", "d.bandwidth"]
    assert [n["component"] for n in possible.to_dict()["evidence"]["implied"]] == ["c.nic", "d.bandwidth"]
    # above the high end it is an error, as without ranges
    above = Run("write", run.workload, Metric.BANDWIDTH, (30.0,), "GB/s", Origin("r.csv", None, "test"))
    assert [f.code for f in check_runs(_small(), [above])[0].findings] == ["ABOVE-CEILING", "FEW-REPETITIONS"]
    assert judgement.ratio == pytest.approx(20 / 24)


def test_typical_metadata_expands_to_what_bounds_a_server_not_to_the_published_rates(tmp_path):
    from topologies.catalogues.metadata_rates import typical_metadata

    topology = _small(SMALL.replace('nic = "100 Gbit/s"', 'nic = "100 Gbit/s"\n'
                                            'metadata = { typical = "beegfs", devices = "nvme", cores = 96 }'))
    server = topology.group("s")
    published = {(low, high) for low, high, _ in typical_metadata("beegfs", "nvme").values()}
    for operation in ("create", "stat", "open", "remove", "find"):
        stated = server.capacity("metadata", operation)
        assert stated.source.kind == "assumption" and stated.range not in published
    # 96 cores (stated), each answering 1,000 to 10 million requests a second (eRPC's)
    assert [q.m_as("op/s") for q in server.capacity("metadata", "create").range] == [96_000, 960_000_000]
    assert "96 cores (stated)" in server.capacity("metadata", "create").source.note
    # a find reads each entry through the server's 100 Gbit/s: at most 12.5 GB/s over 16 B
    assert server.capacity("metadata", "find").range[1].m_as("op/s") == pytest.approx(12.5e9 / 16)
    # one shared directory: from its lock held 1 ms to no lock beyond the servers together
    assert [q.m_as("op/s") for q in server.capacity("directory", "create").range] == [1000, server.count * 960_000_000]
    assert load_topology(save_topology(topology, tmp_path / "saved.toml")).ranged() == topology.ranged()
    with pytest.raises(TopologyError, match=r"servers.s.metadata: The typical metadata service must be one of: lustre"):
        _small(SMALL.replace('nic = "100 Gbit/s"', 'nic = "100 Gbit/s"\nmetadata = { typical = "zfs" }'))
    with pytest.raises(TopologyError, match=r"servers.s.metadata.cores: must be a whole number of cores"):
        _small(SMALL.replace('nic = "100 Gbit/s"', 'nic = "100 Gbit/s"\nmetadata = { typical = "beegfs", cores = 0 }'))


def _two_servers(first: str, second: str, extra: str = "") -> str:
    """Clients reaching two server groups side by side (one tier), each with its own figures."""
    return ('[clients.c]\ncount = 4\nnic = "100 Gbit/s"\n[networks.n]\nrtt = "10 us"\n'
            f'[servers.a]\ncount = 1\n{first}\n[servers.b]\ncount = 1\n{second}\n{extra}'
            '[[links]]\nbetween = ["c", "n"]\n[[links]]\nbetween = ["n", "a"]\n[[links]]\nbetween = ["n", "b"]\n')


def test_a_run_no_one_range_decides_says_so():
    """Two servers side by side, each 1..10 GB/s: a read of 5 GB/s needs them together above their least."""
    from probes.core.run import Origin, Run
    from assess.check import check_runs

    system = parse_topology(_two_servers('nic = "1..10 GB/s"', 'nic = "1..10 GB/s"'))
    run = Run("read", Workload(Operation.READ, Q_(1, "MiB")), Metric.BANDWIDTH, (5.0,), "GB/s", Origin("r", None, "t"))
    (possible,) = [f for f in check_runs(system, [run])[0].findings if f.code == "POSSIBLE-IF"]
    assert possible.to_dict()["evidence"]["implied"] == [] and "no one figure decides it alone" in possible.message


@pytest.mark.parametrize("first, second, workload", [
    # which server is fastest changes across the range; the slower one's directory rate must not take over
    ('nic = "unlimited"\nmetadata = "2000..10000 op/s"\ndirectory = "1000 op/s"', 'nic = "unlimited"\nmetadata = "5000 op/s"',
     Workload(Operation.CREATE, None, nodes=4, ppn=8, shared_directory=True)),
    ('nic = "unlimited"\nmetadata = "2000..10000 op/s"', 'nic = "unlimited"\nmetadata = "5000 op/s"\ndirectory = "unlimited"',
     Workload(Operation.CREATE, None, nodes=4, ppn=8, shared_directory=True)),
    # a storing gateway beside a streaming server: raising the gateway's NIC must not slow a request
    ('nic = "1..6 GB/s"\nforwarding = "store"', 'nic = "5 GB/s"', Workload(Operation.READ, Q_(1, "MiB"), nodes=4, direct=True)),
])
def test_the_interval_is_ordered_when_a_range_changes_which_group_is_fastest(first, second, workload):
    model = Model(parse_topology(_two_servers(first, second)))
    ceiling = model.ceiling(workload)
    assert ceiling.least <= ceiling.value
    ends = model.ranges[Component("a", "metadata" if workload.operation.is_metadata else "nic")]
    across = [Model(model.topology.replaced({place: c.at(c.range[0] + (c.range[1] - c.range[0]) * i / 20)
                                             for place, c in model.ranges.items()})).bound(workload) for i in range(21)]
    assert across == sorted(across) and ends.range is not None


def test_typical_metadata_without_a_service_names_what_it_needs():
    with pytest.raises(TopologyError, match=r"servers.s.metadata: names a metadata service and a device class, e.g."):
        _small(SMALL.replace('nic = "100 Gbit/s"', 'nic = "100 Gbit/s"\nmetadata = { devices = "nvme" }'))


def test_models_share_what_they_solve_by_content_not_names_and_a_varied_topology_keeps_its_ways():
    """A list's rows state the same hardware with other notes: one content, solved once (models.solved). Any figure
    told apart as text was (a number's type, its units, its kind of source) keeps contents apart; a topology with a
    figure replaced keeps the ways data moves, found once, and they are the ones found anew."""
    from dataclasses import replace

    from models.solved import content
    from topologies.topology import Capacity, Source

    base = _small()
    nic = base.group("c").capacity("nic")
    renamed = replace(base, description="another row", path="elsewhere").replaced(
        {Component("c", "nic"): replace(nic, source=Source(nic.source.kind, "another note"))})
    assert content(renamed) == content(base) and hash(content(renamed)) == hash(content(base))
    for other in (Q_(100.0, "Gbit/s"), Q_(12.5, "GB/s"), Q_(100, "Gbit/s") * 1.0):
        changed = base.replaced({Component("c", "nic"): Capacity(other, Metric.BANDWIDTH, nic.source)})
        assert content(changed) != content(base.replaced({Component("c", "nic"): Capacity(
            Q_(100, "Gbit/s"), Metric.BANDWIDTH, nic.source)}))
    assert content(base.replaced({Component("c", "nic"): replace(nic, source=Source("measured"))})) != content(base)
    base.data_links()
    varied = base.replaced({Component("c", "nic"): nic.at(Q_(40, "Gbit/s"))})
    assert varied.__dict__["_directed"] is base.__dict__["_directed"]
    assert varied.data_links() == _small().data_links()
    assert Model(varied).ceiling(Workload(Operation.READ, Q_(1, "MiB"))).value <= Model(base).ceiling(
        Workload(Operation.READ, Q_(1, "MiB"))).value


@given(systems(), workloads(), st.sampled_from(CAPACITIES), st.floats(0.01, 100))
@settings(max_examples=60, deadline=None)
def test_a_network_with_one_groups_figure_varied_is_the_one_built_anew(doc, workload, varied, factor):
    """A search for an implied figure varies one group's figure thousands of times: each network is the model's own with
    that group's chain made again (FlowNetwork.rechained), and it is the network built anew from the varied topology,
    edge for edge, stage for stage, note for note and cut for cut; where a stage takes the time per request (which
    reads figures across the path), it is built anew."""
    from models.flow import FlowNetwork, Scale

    kind, key, *_ = varied
    system = topology_from_dict(doc)
    group = NAMES[kind]
    stated = system.group(group).capacity(key)
    assume(workload.operation in (Operation.READ, Operation.WRITE) and stated is not None)
    model = Model(system)
    try:
        chosen, counts = model.nodes(workload, None)
    except TopologyError:
        assume(False)
    shape = model.shape(workload)
    network = model.network(shape, chosen)
    changed = system.replaced({Component(group, key): stated.at(stated.value * factor)})
    made = network.rechained(changed, group)
    timed = any(s is not None and s.scale == Scale.REQUESTS for s in network.stages)
    assert (made is None) == timed
    assume(made is not None)
    anew = FlowNetwork(changed, shape, chosen)

    def stages(net):
        return [None if s is None else (s.components, s.layer, s.group, s.scale, s.constant, s.fixed, s.per_byte,
                                        s.split, s.term, s.constants) for s in net.stages]

    assert made.edges == anew.edges and made.noted == anew.noted and stages(made) == stages(anew)
    assert made.graph is anew.graph and made.layers() == anew.layers()
    full = anew.capacities(workload, counts)
    assert made.capacities(workload, counts) == full
    for layer in [None, *anew.layers()]:
        assert made.limit(full, layer).value == anew.limit(full, layer).value
    assert Model(changed).bound(workload) == model.varied(Component(group, key), stated.at(stated.value * factor)).bound(
        workload)
