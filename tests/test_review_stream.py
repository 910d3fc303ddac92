"""`iobound review` on a list of any size: read a row at a time, judged a submission at a time, in the memory of the
rows in flight, with its progress on stderr; and the same verdicts as judging each submission with every witness of
its system, on the real list database of the corpus."""

from __future__ import annotations

import csv
import gc
import io
import json
import weakref
from collections import Counter
from dataclasses import replace

import pytest

from probes.core.errors import ToolOutputError
from probes.readers.io500_system import ListFile, read_list
from topologies.described.io500 import describe
from assess.check import witnesses_of
from assess.cli import main
from assess.render import dumps, envelope
from assess.review import REVIEW_VERSION, _reviewed, _system, review, review_body
from tests.test_review import listed  # noqa: F401 - the list database's fixture


def _rows(listed) -> tuple[list[str], list[dict[str, str]]]:
    with open(listed, encoding="utf-8", newline="") as file:
        reader = csv.DictReader(file)
        return list(reader.fieldnames), list(reader)


def _written(path, header: list[str], rows: list[dict[str, str]], tail: str = "") -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(text.getvalue() + tail, encoding="utf-8")


def test_a_list_file_gives_its_rows_one_at_a_time_before_a_broken_one_later(listed, tmp_path):
    header, rows = _rows(listed)
    path = tmp_path / "list.csv"
    _written(path, header, rows[:3], tail="4,a row cut short\n")
    read = iter(ListFile(str(path)))
    assert [next(read).id for _ in range(3)] == [rows[i]["id"] for i in range(3)]
    with pytest.raises(ToolOutputError, match=r"line 5: is a row of 2 field\(s\)"):
        next(read)


class _Made:
    """A list of ``count`` submissions made as it is gone through (copies of a few real ones under new ids, a system
    per pair), noting how many are alive at once."""

    def __init__(self, submissions, count: int):
        self.submissions, self.count = submissions, count
        self.made: list[weakref.ref] = []
        self.most = 0

    def __iter__(self):
        for i in range(self.count):
            s = self.submissions[i % len(self.submissions)]
            fields = s.description.fields | {"system": f"{s.description.get('system')} {i // 2}"}
            made = replace(s, id=f"{s.id}-{i}", description=replace(s.description, fields=fields))
            self.made.append(weakref.ref(made))
            gc.collect()
            self.most = max(self.most, sum(ref() is not None for ref in self.made))
            yield made
            del made, s


@pytest.mark.slow
def test_review_holds_the_submissions_in_flight_not_the_list(listed):
    submissions = [s for s in read_list(listed.read_text(encoding="utf-8"), source=str(listed))
                   if s.id in ("9", "22", "3")]
    made = _Made(submissions, 8)  # each made collects the garbage of a whole test session: a second or more
    verdicts = Counter()
    for reviewed in review(made, kept=0):
        verdicts[reviewed.verdict] += 1
        del reviewed
    assert sum(verdicts.values()) == 8 and made.most <= 2  # the one judged, and the last of the pass before


@pytest.mark.slow
def test_the_streamed_review_is_each_submission_judged_with_every_witness_of_its_system(listed, tmp_path, capsys):
    """The review as it was made before it streamed (every submission described and its witnesses found, all held,
    then each judged with the witnesses of its system's others), against the command's JSON: identical. On the
    submissions of the systems named three times or more (witnesses alike across them, kept twice at most)."""
    header, rows = _rows(listed)
    named = Counter((r["information_system"].casefold(), r["information_institution"].casefold()) for r in rows)
    chosen = [r for r in rows if named[r["information_system"].casefold(), r["information_institution"].casefold()] >= 3
              and r["information_system"]][:36]
    path = tmp_path / "list.csv"
    _written(path, header, chosen)
    assert main(["review", str(path), "--json", "--fail-on", "never", "--progress"]) == 0
    out, err = capsys.readouterr()
    assert f"review: judged {len(chosen)} of {len(chosen)}" in err

    submissions = read_list(path.read_text(encoding="utf-8"), source=str(path))
    described = [describe(s.description) for s in submissions]
    found = [() if d.topology is None else witnesses_of(d.topology, s.runs) for s, d in zip(submissions, described)]
    alone = []
    for i, (s, d) in enumerate(zip(submissions, described)):
        others = tuple(replace(w, of=f"submission {submissions[j].id}") for j, other in enumerate(submissions)
                       if j != i and _system(other) == _system(s) for w in found[j])
        alone.append(_reviewed(s, d, None, found[i] + others))
    assert sum(bool(n) for r in alone for p in r.phases for n in p.narrowed_by)  # witnesses of others narrowed
    expected = dumps(envelope("review", REVIEW_VERSION, review_body(str(path), alone)))
    assert out == expected + "\n"
    assert json.loads(out)["submissions"][0]["id"] == chosen[0]["id"]


def test_a_generator_of_submissions_is_reviewed_whole_though_review_goes_through_it_twice(listed):
    submissions = [s for s in read_list(listed.read_text(encoding="utf-8"), source=str(listed))
                   if s.id in ("9", "22", "3")]
    given = [r.to_dict() for r in review(s for s in submissions)]
    assert len(given) == 3 and given == [r.to_dict() for r in review(submissions)]


def test_a_review_leaves_the_garbage_collector_as_it_found_it(listed):
    """The review keeps what its first pass made out of the collector's walks while it judges (gc.freeze), and gives
    it back when done or left part way; what the process froze itself stays frozen."""
    submissions = [s for s in read_list(listed.read_text(encoding="utf-8"), source=str(listed))
                   if s.id in ("9", "22", "3")]
    judged = review(submissions)
    next(judged)
    assert gc.get_freeze_count() > 0
    judged.close()
    assert gc.get_freeze_count() == 0
    assert len(list(review(submissions))) == 3 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert len(list(review(submissions))) == 3 and gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
