"""An annotator's reading of the swapped questions, kept as data
(course_lib.lab.measure.swap_reading): the data's shape, the seeded sample to read, and a
summary given only for the very sample that was read."""

import random
from types import SimpleNamespace

import pytest

from course_lib.lab.measure.swap_reading import SWAP_READING, reading_sample, reading_summary


def tiered(swapped):
    """The one part of a TieredSet these functions read: its swapped tier."""
    return SimpleNamespace(tiers={"swapped subject": list(swapped), "absent paragraph": [0]})


def test_each_reading_is_a_label_and_a_subject_mark():
    assert len(SWAP_READING) == 50
    assert all(isinstance(i, int) for i in SWAP_READING)
    assert all(len(code) == 2 and code[0] in "uma" and code[1] in "01"
               for code in SWAP_READING.values())


def test_the_sample_is_seeded_sorted_and_from_the_swapped_tier():
    swapped = list(range(1000, 1600, 3))
    sample = reading_sample(tiered(swapped))
    assert len(sample) == 50 and sample == sorted(sample) and set(sample) <= set(swapped)
    assert len(set(sample)) == 50
    assert reading_sample(tiered(swapped)) == sample
    assert reading_sample(tiered(swapped), seed=1) != sample
    assert reading_sample(tiered(swapped), n=5, seed=2) == sorted(
        random.Random(2).sample(swapped, 5))


def test_a_tier_smaller_than_the_sample_is_refused():
    with pytest.raises(ValueError):
        reading_sample(tiered(range(10)))


def test_the_summary_counts_the_reading_of_the_sample_that_was_read():
    # a swapped tier of exactly the 50 read questions: seed 0 samples all of them
    summary = reading_summary(tiered(reversed(list(SWAP_READING))))
    assert summary == {"read": 50, "unanswerable, well formed": 22,
                       "malformed (also unanswerable)": 27, "answerable after all": 1,
                       "subject detected right": 20}


def test_a_changed_tier_must_be_read_again():
    changed = [*SWAP_READING, 9999]  # seed 0 now samples another 50
    with pytest.raises(ValueError, match="not the one that was read"):
        reading_summary(tiered(changed))
    with pytest.raises(ValueError, match="read reading_sample"):
        reading_summary(tiered([i + 1 for i in SWAP_READING]))
