"""Shared fixtures: where the real tool outputs of ../shared/corpus live, and bundled examples."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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

