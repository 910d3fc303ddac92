"""probes.core.patterns: a Pattern stands for its compiled pattern wherever a reader's may go."""

import copy
import pickle

import pytest

from probes.core.patterns import Pattern


@pytest.mark.parametrize("duplicate", [copy.copy, copy.deepcopy, lambda p: pickle.loads(pickle.dumps(p))],
                         ids=["copy", "deepcopy", "pickle"])
@pytest.mark.parametrize("used", [False, True], ids=["unused", "used"])
def test_a_copied_or_pickled_pattern_matches_as_its_original(duplicate, used):
    """A compiled pattern copies and pickles; its stand-in did not: copy and pickle ask an object they made empty for
    ``__setstate__``, which the stand-in looked for on its pattern, compiled from a source it did not hold yet."""
    number = Pattern(r"([0-9]+) KiB")
    if used:
        number.search("4 KiB")
    found = duplicate(number).search("16 KiB")
    assert found is not None and found[1] == "16"
