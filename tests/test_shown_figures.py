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


def test_checks_ratio_says_both_ends_of_a_range_as_its_findings_do(capsys):
    """Narval's ior-hard-write: 1 % of the ceiling's most, 3 % of its least, which FAR-BELOW names."""
    assert main(["check", "narval", "narval-io500.csv"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if " ior-hard-write " in line)
    assert " 183–512 GiB/s " in row and " 1–3% " in row and "reaches only 3% of the 183 GiB/s" in out
    assert "ratio: measured over the ceiling; where it is a range (least–most), over its most–over its least" in out
    # a metadata ceiling spans four orders of magnitude: its share of the most is no bare 0 %
    assert not re.search(r" 0% ", out) and re.search(r"mdtest-easy-write .* 0\.012–496% ", out)


def test_an_at_ceiling_metadata_phase_of_the_list_shows_its_share_of_the_least_not_0(corpus, tmp_path):
    """Submission 165 of the io500 list: mdtest-easy-write at 24,540 op/s is at its ceiling's least (24,000 op/s),
    a thousandth of its most: its efficiency said 0.1 % beside AT-CEILING."""
    from probes.readers.io500_system import read_list
    from assess.review import review
    from assess.review_page import write_pages

    path = corpus / "io500-list/io500-db-2017-2019_submissions.csv"
    if not path.is_file():
        pytest.skip(f"the io500 list database is not in the corpus ({path})")
    (reviewed,) = review(s for s in read_list(path.read_text(encoding="utf-8"), source=str(path)) if s.id == "165")
    phase = next(p for p in reviewed.phases if p.label == "mdtest-easy-write")
    assert phase.verdict == "AT-CEILING"
    page = (write_pages([reviewed], tmp_path / "report", str(path)).parent / "submissions" / "165.html").read_text()
    row = next(r for r in page.split("<tr>") if r.startswith("<td>mdtest-easy-write</td>"))
    assert re.search(r"<td class=num>0\.0\d+–10[0-9]%</td><td>AT-CEILING</td>", row), row
    assert "over its least where the ceiling is a range" in page


def test_the_ratios_plot_says_its_share_is_of_a_ranges_most():
    from topologies.bundled import open_topology, read_runs
    from assess import plotdata
    from assess.check import check_runs

    dots = plotdata.ratios(check_runs(open_topology("narval"), read_runs("narval-io500.csv")), "narval")
    assert dots.xlabel == "measured / ceiling (its most, where a range)"


def test_the_text_shows_first_the_possible_if_that_asks_most_of_its_assumed_figure(capsys):
    """Narval's read needs pools.bandwidth at 8.94 of 6.20 to 25 GB/s (the README's example), its creates 19,860 of
    4,000 to 3.8 G op/s: of the nine POSSIBLE-IF the text spells out three, and the read is the first of them."""
    main(["check", "narval", "narval-io500.csv"])
    out = capsys.readouterr().out
    told = re.findall(r"^warning POSSIBLE-IF  (\S+)", out, flags=re.M)
    assert told[0] == "ior-easy-read" and "pools.bandwidth ≥ 8.94 GB/s (stated: assumption 6.20 to 25 GB/s)" in out
    assert "POSSIBLE-IF also for 6 more run(s)" in out
