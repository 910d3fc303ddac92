"""Figures as a person reads them: a probed NIC in Gbit/s with about three significant digits, not in bit/s to the
last bit; and a share of a ceiling stated as a range saying which end it is over, never 0 % beside AT-CEILING."""

from __future__ import annotations

import json
import re

import pytest

from probes.core.host import this_host
from probes.core.measurement import Measurement, Provenance
from probes.core.units import Q_, Metric, family_unit, format_quantity
from probes.measure.probeset import document
from assess.cli import main


@pytest.mark.parametrize("given, shown", [
    ("19792281596 bit/s", "19.8 Gbit/s"), ("75000000000 B/s", "75 GB/s"), ("2 PB", "2 PB"), ("1.78 PiB", "1.78 PiB"),
    ("0.5 Gbit/s", "500 Mbit/s"), ("1536 KiB/s", "1.50 MiB/s"), ("15000 op/s", "15,000 op/s")])
def test_a_figure_as_given_keeps_its_unit_family_at_the_prefix_that_reads(given, shown):
    q = Q_(given)
    assert format_quantity(q, unit=family_unit(q)) == shown


def test_a_probed_nic_is_shown_in_gbit_s_with_the_digits_that_mean_something(tmp_path, capsys):
    """iperf3's bit/s over six repetitions of a 25 GbE link, as ``lab probe`` keeps them, linked from a topology."""
    provenance = Provenance("iperf3", "3.16", (("iperf3", "-c", "s1", "-J"),), this_host(),
                            "2026-11-25T00:00:00+00:00", 9.0)
    link = Measurement("lab-clients.iperf3.send.p1", "TCP to s1", Metric.BANDWIDTH, "bit/s",
                       (20.1e9, 20.5e9, 20.3e9, 20.6e9, 19.9e9, 20.4e9), provenance, 0.05)
    (tmp_path / "p.json").write_text(json.dumps(document([link])))
    (tmp_path / "t.toml").write_text('[clients.c]\ncount = 3\nnic = { probe = "p.json", measurement = '
                                     '"lab-clients.iperf3.send.p1" }\n[servers.s]\ncount = 1\nbandwidth = "1 GB/s"\n'
                                     '[[links]]\nbetween = ["c", "s"]\n')
    assert main(["topology", str(tmp_path / "t.toml")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if " nic " in x)
    assert re.search(r"\b20\.0 to 20\.6 Gbit/s \(probe: .*mean 20\.3 Gbit/s of 6", line), line
    assert not re.search(r"\d{1,3}(,\d{3}){2,}", line)  # no figure of seven digits or more
