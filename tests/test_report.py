"""`iobound report`: the page and its Markdown, opened in a real headless chromium; nothing of the user's overwritten."""

from __future__ import annotations

import json
import re

import pytest

from assess.cli import main
from tests.browser import CHROMIUM, seen_in_chromium
from assess.report import MOST_PLOTS, PNG_ONLY

pytestmark = pytest.mark.slow  # each writes a whole report, its plots as PNG (and SVG)


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def lecture(tmp_path_factory):
    """The lecture's report, with a probe set of this machine's memory path measured for it."""
    base = tmp_path_factory.mktemp("report")
    probes = base / "node.json"
    assert main(["probe", "-o", str(probes), "--jobs", "2", "--runtime", "0.2", "--budget", "6", "--quiet"]) == 0
    directory = base / "lecture-report"
    status = main(["report", "lecture", "lecture-results.csv", "-o", str(directory), "--probes", str(probes)])
    return status, directory, probes


def _check_labels(capsys) -> list[str]:
    status, out, _ = run(capsys, "check", "lecture", "lecture-results.csv", "--json", "--fail-on", "never")
    return [r["run"]["label"] for r in json.loads(out)["runs"]]


def test_the_report_writes_html_markdown_and_every_plot_as_png(lecture):
    status, directory, _ = lecture
    assert status == 0
    pngs = sorted(p.stem for p in (directory / "figures").glob("*.png"))
    assert not list((directory / "figures").glob("*.svg"))  # only when asked (--svg)
    # the system, each run against its ceiling, up to MOST_PLOTS rooflines, the probes' metrics; every run
    # used 10 nodes, so one plot over node count shows where more nodes would stop helping
    assert {"topology", "ratios", "roofline-1", "nodes-1", "probes-1"} <= set(pngs) and "nodes-2" not in pngs
    assert sum(p.startswith("roofline-") for p in pngs) == MOST_PLOTS


def test_the_page_needs_no_other_file(lecture):
    _, directory, _ = lecture
    page = (directory / "report.html").read_text()
    sources = re.findall(r'<img src="([^"]{0,30})', page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "<link" not in page and "<script" not in page
    assert PNG_ONLY in page and ">SVG</a>" not in page  # how to have the plots as SVG too


def test_each_plot_is_written_as_svg_too_when_asked(tmp_path, capsys):
    status, out, _ = run(capsys, "report", "lecture", "lecture-results.csv", "-o", tmp_path / "out", "--svg")
    figures = tmp_path / "out" / "figures"
    assert status == 0 and "plots as PNG and SVG in" in out
    pngs = sorted(p.stem for p in figures.glob("*.png"))
    assert pngs and pngs == sorted(p.stem for p in figures.glob("*.svg"))
    assert all("<svg" in p.read_text() for p in figures.glob("*.svg"))
    page = (tmp_path / "out" / "report.html").read_text()
    assert sorted(re.findall(r'<a href="figures/([^"]+)\.svg">SVG</a>', page)) == pngs and PNG_ONLY not in page
    links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", (tmp_path / "out" / "report.md").read_text())
    assert sorted(links) == sorted(f"figures/{stem}.svg" for stem in pngs)


def test_the_markdown_has_the_runs_and_links_its_plots(lecture, capsys):
    _, directory, _ = lecture
    text = (directory / "report.md").read_text()
    for label in _check_labels(capsys):
        assert f"| {label} |" in text
    links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert links and all((directory / link).is_file() and link.endswith(".png") for link in links)
    assert "| ✗ | Lustre size / ppn read 256 KiB seq, 10 nodes x 4 ppn | 1,800 MiB/s | 1,100 MiB/s | 164% |" in text
    assert r"marks: ✗ a run with an error, \! a run with a warning (its worst finding)." in text
    # one finding row for what holds for every run
    assert "| warning | FEW-REPETITIONS | every run | each run has 1 repetition (one value: no spread and no " in text
    assert r"NIC\_compute\*n\_compute" in text and "ABOVE-CEILING" in text


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_page_renders_in_chromium_with_its_images_and_runs(lecture, capsys, tmp_path):
    _, directory, _ = lecture
    page = seen_in_chromium(directory / "report.html", """
  const images = [...d.images];
  return {title: d.title, headings: [...d.querySelectorAll("h2")].map(h => h.textContent), images: images.length,
          loaded: images.filter(i => i.complete && i.naturalWidth > 0).length,
          runs: [...d.querySelectorAll("#runs tbody tr td:nth-child(2)")].map(c => c.textContent)};""", tmp_path)
    assert page["title"] == "iobound report: lecture"
    assert page["headings"][:3] == ["System", "Ceilings", "Runs"] and "Probes" in page["headings"]
    assert page["images"] == len(list((directory / "figures").glob("*.png"))) == page["loaded"]
    assert page["runs"] == _check_labels(capsys)


def test_an_existing_report_is_kept_unless_forced_and_the_users_files_always(lecture, capsys):
    _, directory, probes = lecture
    before = (directory / "report.md").read_bytes()
    status, _, err = run(capsys, "report", "lecture", "lecture-results.csv", "-o", directory)
    assert status == 2 and "already holds a report" in err and "--force" in err
    assert (directory / "report.md").read_bytes() == before
    mine = directory / "figures" / "fig1.png"
    mine.write_bytes(b"my own figure")
    written = set(json.loads((directory / ".iobound-report.json").read_text())["written"])
    assert "figures/probes-1.png" in written and "report.html" in written
    status, out, _ = run(capsys, "report", "lecture-hdd", "lecture-results.csv", "-o", directory, "--force")
    assert status == 0 and "report.html" in out and mine.read_bytes() == b"my own figure"
    assert not (directory / "figures" / "probes-1.png").exists()  # the earlier report's, not drawn this time
    assert (directory / "report.md").read_text().startswith("# iobound report: lecture-hdd")


def test_a_report_is_not_written_over_a_file_or_a_report_iobound_did_not_write(tmp_path, capsys):
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    for where in (target, target / "sub"):
        status, _, err = run(capsys, "report", "lecture", "lecture-results.csv", "-o", where)
        assert status == 2 and f"{target}: is a file" in err and target.read_text() == "mine"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.md").write_text("my notes")
    status, _, err = run(capsys, "report", "lecture", "lecture-results.csv", "-o", tmp_path / "out", "--force")
    assert status == 2 and "holds report.md that iobound did not write" in err
    assert (tmp_path / "out" / "report.md").read_text() == "my notes" and not (tmp_path / "out" / "figures").exists()
    (tmp_path / "out" / "report.md").unlink()
    (tmp_path / "out" / "figures").mkdir()
    (tmp_path / "out" / "figures" / "topology.png").write_text("my drawing")
    status, _, err = run(capsys, "report", "lecture", "lecture-results.csv", "-o", tmp_path / "out")
    assert status == 2 and "holds files iobound did not write (figures/topology.png)" in err
    assert (tmp_path / "out" / "figures" / "topology.png").read_text() == "my drawing"
    assert not (tmp_path / "out" / "report.html").exists()


def test_bad_input_is_named_before_anything_is_written(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    status, _, err = run(capsys, "report", "lecture", "lecture-results.csv", "-o", tmp_path / "r", "--probes", broken)
    assert status == 2 and str(broken) in err and not (tmp_path / "r").exists()
    status, _, err = run(capsys, "report", "lecture", tmp_path / "missing.csv", "-o", tmp_path / "r")
    assert status == 2 and "missing.csv" in err and not (tmp_path / "r").exists()


def test_odd_labels_stay_text_in_the_page_and_the_markdown(tmp_path, capsys):
    results = tmp_path / "odd.csv"
    results.write_text('run,op,transfer_size,nodes,value,unit\n"<script>x</script> | $5 *a*",read,1 MiB,10,500,MiB/s\n'
                       + "".join(f"r{i},write,1 MiB,10,{100 + i},MiB/s\n" for i in range(70)))
    status, _, err = run(capsys, "report", "lecture", results, "-o", tmp_path / "r", "--tolerance", "0.2")
    assert status == 0, err
    page = (tmp_path / "r" / "report.html").read_text()
    assert "&lt;script&gt;x&lt;/script&gt; | $5 *a*" in page and "<script>" not in page
    text = (tmp_path / "r" / "report.md").read_text()
    assert r"| \<script\>x\</script\> \| $5 \*a\* |" in text
    # 71 runs: the plot shows MOST_ROWS of them and says so; the band is the tolerance given
    assert "The plot below shows the 60 runs" in text and "band ± 20% its noise" in text
