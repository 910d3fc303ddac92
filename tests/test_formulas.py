"""Formula text (models.formulas): shown as written, layer by layer as its numbers are, and the same limit as the
value when sympy reads it back, whatever a group or a link is called."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from probes.core.units import Q_, canonical
from probes.core.workload import Access, Operation, Workload
from models.formulas import algebra, mark, marked_names, put_numbers, shown
from models.predict import Model
from tests.systems import topology

# Groups named as sites name them: hyphens and digits, which a parser would take for a minus and a number.
_SYSTEM = """
[clients.compute-a]
count = 4
nic = "100 MB/s"

[networks.net-1]
rtt = "50 us"

[servers.store-1]
count = 2
nic = "1 GB/s"

[devices.ssd-x]
count = 2
bandwidth = "500 MB/s"
iops = "20000 op/s"

[[links]]
between = ["compute-a", "net-1"]
bandwidth = "300 MB/s"
"""


@pytest.fixture(scope="module")
def model() -> Model:
    return Model(topology(_SYSTEM, links="net-1 store-1 ssd-x"))


@pytest.mark.parametrize("workload", [
    Workload(Operation.READ, Q_(1, "MiB"), nodes=4),
    Workload(Operation.WRITE, Q_(4, "KiB"), nodes=4, ppn=2, access=Access.RANDOM, direct=True),
    Workload(Operation.READ, Q_(64, "KiB"), nodes=1, direct=True),
], ids=["buffered", "random-direct", "one-node-direct"])
def test_the_formula_names_every_group_as_written_and_gives_the_ceiling_back(model, workload):
    ceiling = model.ceiling(workload)
    assert "compute-a" in ceiling.formula and "\x01" not in ceiling.formula
    assert math.isclose(ceiling.evaluate(), canonical(ceiling.value), rel_tol=1e-9)
    assert {str(s) for s in ceiling.expression.free_symbols} <= set(ceiling.symbols)
    for layer in ceiling.layers:
        if layer.value is not None:  # each layer's own formula gives its own limit back, and its numbers say so
            at = {symbol: canonical(value) for symbol, value in layer.values.items()}
            assert math.isclose(float(layer.expression.subs(at)), canonical(layer.value), rel_tol=1e-9), layer.layer
            assert layer.numbers.endswith(f"= {layer.numbers.rsplit('= ', 1)[1]}") and "\x01" not in layer.numbers


def test_the_formula_takes_the_layers_in_the_order_its_numbers_do(model):
    ceiling = model.ceiling(Workload(Operation.READ, Q_(1, "MiB"), nodes=4))
    names = ("NIC_compute-a", "NIC_store-1", "B_ssd-x", "B_links[0]")
    layers = ("client NICs", "server NICs", "devices", "links")
    assert [ceiling.formula.index(n) for n in names] == sorted(ceiling.formula.index(n) for n in names)
    assert [ceiling.numbers.index(n) for n in layers] == sorted(ceiling.numbers.index(n) for n in layers)


def test_a_random_direct_read_writes_its_request_time_as_the_round_trip_then_the_bytes(model):
    ceiling = model.ceiling(Workload(Operation.READ, Q_(4, "KiB"), nodes=4, access=Access.RANDOM, direct=True))
    assert "n_compute-a*p*q*s/(RTT_net-1 + s/" in ceiling.formula


_NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,8}(\[[0-9]\])?", fullmatch=True)


@given(st.lists(_NAMES, min_size=1, max_size=4, unique=True), st.lists(st.floats(0.5, 1e6), min_size=4, max_size=4))
def test_any_name_reads_back_as_one_symbol_and_takes_its_own_number(names, numbers):
    text = " + ".join(f"{mark(name)}*{mark('n_' + name)}" for name in names)
    assert shown(text) == " + ".join(f"{name}*n_{name}" for name in names)
    assert marked_names(text) == [x for name in names for x in (name, f"n_{name}")]
    values = {x: numbers[i % 4] for i, x in enumerate(marked_names(text))}
    expression = algebra(text)
    assert {str(s) for s in expression.free_symbols} == set(values)
    expected = sum(values[name] * values[f"n_{name}"] for name in names)
    assert math.isclose(float(expression.subs({s: values[str(s)] for s in expression.free_symbols})), expected)
    assert "\x01" not in put_numbers(text, values) and " × " in put_numbers(text, values)
