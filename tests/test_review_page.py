"""What a reader of ``review --html`` meets first: the summary, the plot and the list, then the errors, and the
thousands of POSSIBLE-IF phases folded under a heading; on a part of the real io500 list of the corpus."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser

import pytest

from probes.readers.io500_system import read_list
from assess.review import review
from assess.review_page import write_pages

LIST = "io500-list/io500-db-2017-2019_submissions.csv"
# POSSIBLE-IF, FAR-BELOW or too thin; Bytecollider's (179) easy read planted a thousand times over: above every
# figure its description allows, an error.
CHOSEN = {"3", "22", "36", "179", "180"}
PLANTED = ("179", "ior-easy-read", 1000)


class _Outline(HTMLParser):
    """The page's headings, tables and figures in order, each with how many <details> hold it."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str, int]] = []
        self.folded = 0
        self._heading = False

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.folded += 1
        elif tag == "h2":
            self._heading = True
        elif tag == "table":
            self.found.append(("table", dict(attrs)["id"], self.folded))
        elif tag == "img":
            self.found.append(("figure", "", self.folded))

    def handle_endtag(self, tag):
        if tag == "details":
            self.folded -= 1
        elif tag == "h2":
            self._heading = False

    def handle_data(self, data):
        if self._heading:
            self.found.append(("heading", data, self.folded))


@pytest.fixture(scope="module")
def index(corpus, tmp_path_factory):
    path = corpus / LIST
    if not path.is_file():
        pytest.skip(f"the io500 list database is not in the corpus ({path})")
    submissions = [s for s in read_list(path.read_text(encoding="utf-8"), source=str(path)) if s.id in CHOSEN]
    planted, label, factor = PLANTED
    submissions = [replace(s, runs=tuple(replace(r, samples=tuple(x * factor for x in r.samples))
                                         if s.id == planted and r.label == label else r for r in s.runs))
                   for s in submissions]
    folder = write_pages(list(review(submissions)), tmp_path_factory.mktemp("review") / "report", str(path))
    outline = _Outline()
    outline.feed(folder.read_text(encoding="utf-8"))
    return outline.found


def test_the_page_opens_on_the_summary_the_plot_and_the_list_then_the_errors(index):
    shown = [(kind, name) for kind, name, folded in index if not folded]
    order = [("heading", "Summary"), ("figure", ""), ("table", "list"), ("table", "above")]
    assert [x for x in shown if x in order] == order
    assert shown.index(("table", "list")) < next(i for i, (k, n) in enumerate(shown) if n.startswith("Results"))


def test_the_phases_possible_only_with_better_hardware_come_last_folded(index):
    folded = [(kind, name) for kind, name, depth in index if depth]
    assert ("table", "needs") in folded and ("table", "thin") in folded
    first = next(i for i, (_, _, depth) in enumerate(index) if depth)
    assert all(depth for _, _, depth in index[first:])  # nothing open after what is folded
