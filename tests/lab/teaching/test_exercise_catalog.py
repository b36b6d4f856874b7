"""The exercise catalogue (course_lib.lab.teaching.exercise_catalog) as data: every exercise
has answers that can be passed by name, at least two distinct hints kept in the order they
are shown (a tuple), a positive tolerance that is a power of ten; written questions have
points and gradebook-safe names, unique across the course; the entries are frozen; and the
catalogue and the notebooks match both ways: every notebook in notebooks/ with an exercise
check has an entry, every entry its one notebook. (test_exercises.py checks the hints'
wording and each notebook's check call.)
"""

from __future__ import annotations

import dataclasses
import json
import keyword
import math
import re
from pathlib import Path

import pytest

from course_lib.lab.teaching.exercise_catalog import EXERCISES, Exercise, Written

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "notebooks"
CHECK = re.compile(r"""\bcheck\(\s*["'](\w+)["']""")


def _checks(notebook: Path) -> set[str]:
    """The exercises a notebook's code cells check."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return {name for cell in cells if cell["cell_type"] == "code"
            for name in CHECK.findall("".join(cell["source"]))}


def test_the_catalogue_is_keyed_by_two_digits_in_order():
    assert EXERCISES and all(re.fullmatch(r"\d\d", key) for key in EXERCISES)
    assert list(EXERCISES) == sorted(EXERCISES)
    assert all(isinstance(item, Exercise) for item in EXERCISES.values())


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_each_exercise_has_answers_hints_in_order_and_a_tolerance(exercise):
    item = EXERCISES[exercise]
    assert isinstance(item.answers, tuple) and item.answers
    assert len(set(item.answers)) == len(item.answers)
    for name in item.answers:  # passed to check() as keyword arguments
        assert name.isidentifier() and not keyword.iskeyword(name), name
    assert isinstance(item.hints, tuple) and len(item.hints) >= 2
    assert all(isinstance(h, str) and h.strip() == h and len(h) > 40 for h in item.hints)
    assert len(set(item.hints)) == len(item.hints)
    assert isinstance(item.tolerance, float) and 0 < item.tolerance <= 1e-3
    # a power of ten: the answers are read to so many decimal places
    assert abs(math.log10(item.tolerance) - round(math.log10(item.tolerance))) < 1e-9


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_written_questions_have_points_and_gradebook_names(exercise):
    for item in EXERCISES[exercise].written:
        assert isinstance(item, Written)
        assert isinstance(item.points, int) and not isinstance(item.points, bool)
        assert item.points > 0
        # the gradebook id is written-NN-name, and the worked solution's paragraph
        # "Marking name:" must match it
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", item.name), item.name
        assert item.question.strip() == item.question and item.question.endswith(("?", "."))
    names = [item.name for item in EXERCISES[exercise].written]
    assert len(set(names)) == len(names)


def test_written_names_are_unique_across_the_course():
    ids = [f"written-{exercise}-{item.name}" for exercise, entry in EXERCISES.items()
           for item in entry.written]
    assert len(ids) == len(set(ids))
    # a question's cell adds "-question" to the id: no answer may be called so
    assert not any(item.name.endswith("-question")
                   for entry in EXERCISES.values() for item in entry.written)


def test_the_defaults_and_the_entries_are_frozen():
    assert Written("x", "Why?").points == 2
    plain = Exercise(("a",), ("one", "two"))
    assert plain.tolerance == 1e-3 and plain.written == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXERCISES["01"].tolerance = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXERCISES["01"].written[0].points = 100


def test_every_notebook_with_a_check_has_an_entry_and_every_entry_a_notebook():
    checked: dict[str, list[str]] = {}
    for notebook in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):  # the English; zh-CN/ copies
        for exercise in _checks(notebook):
            checked.setdefault(exercise, []).append(notebook.name)
    assert checked, "no exercise check found in notebooks/"
    assert set(checked) == set(EXERCISES)
    for exercise, names in checked.items():
        assert names == [n for n in names if n.startswith(f"{exercise}_")], (exercise, names)
        assert len(names) == 1, (exercise, names)  # one notebook per exercise

