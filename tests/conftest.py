"""Shared fixtures: where the real tool outputs of ../shared/corpus live, and the topologies the tests build."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests import systems

# Hypothesis times each example against a deadline; on a shared 2-core machine a slow example is load, not a
# finding, and it made properties fail at random (test_topology's documents). Their examples stay as they are.
settings.register_profile("iobound", deadline=None)
settings.load_profile("iobound")

ROOT = Path(__file__).resolve().parents[1]
# The corpus of real tool outputs sits beside the project (../shared/corpus); it is
# never copied in. IOBOUND_CORPUS points elsewhere if needed.
CORPUS = Path(os.environ.get("IOBOUND_CORPUS", ROOT.parent / "shared" / "corpus"))
LIST = CORPUS / "io500-list" / "io500-db-2017-2019_submissions.csv"


@pytest.fixture(autouse=True)
def outside_a_job(monkeypatch):
    """Every test runs as outside a batch job, also where the suite runs in one: inside, the commands take the job's
    shape (probes/measure/batch.py), which tests/test_slurm.py sets where it means to."""
    for name in os.environ:
        if name.startswith(("SLURM_", "PBS_")):
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus folder; tests that need it skip cleanly where it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus of real tool outputs not found at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def small_list(tmp_path_factory):
    """The first five submissions of the io500 list: review's pages in seconds."""
    if not LIST.is_file():
        pytest.skip(f"the io500 list database is not in the corpus ({LIST})")
    with open(LIST, encoding="utf-8", newline="") as f:
        rows = [row for _, row in zip(range(6), csv.reader(f))]
    path = tmp_path_factory.mktemp("list") / "small.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return path


def edited_list(small: Path, folder: Path, column: str, value: str) -> Path:
    """A copy of the list ``small`` in ``folder`` with its first submission's ``column`` set to ``value``."""
    with open(small, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    rows[1][rows[0].index(column)] = value
    path = folder / "edited.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return path


def read_every_run(reader, text: str, name: str, count: int) -> list:
    """The runs ``reader`` (a module of probes.readers) reads from the corpus file ``name``, holding ``text``; it
    knows the file as its own, and reads ``count`` runs, each of its own label."""
    assert reader.looks_like(text)
    runs = reader.parse(text, source=name)
    assert len(runs) == count
    assert len({run.label for run in runs}) == count
    return runs


@pytest.fixture(scope="session")
def topology():
    """Builds a topology from TOML text or a dict, its links as chains: ``topology(TOML, links="c net s d")``
    (tests.systems.topology, which helpers outside a test import)."""
    return systems.topology
