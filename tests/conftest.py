"""Shared fixtures: where the real tool outputs of ../shared/corpus live, and the topologies the tests build."""

from __future__ import annotations

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


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus folder; tests that need it skip cleanly where it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus of real tool outputs not found at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def topology():
    """Builds a topology from TOML text or a dict, its links as chains: ``topology(TOML, links="c net s d")``
    (tests.systems.topology, which helpers outside a test import)."""
    return systems.topology
