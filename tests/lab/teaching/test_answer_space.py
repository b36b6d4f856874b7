"""A self-check gives its answers away when they are few: the count of what a learner could try
(course_lib/lab/teaching/answer_space.py), the brute force that finds a small space, the release
policy built on it, the guide's table kept equal to the measurement — and nothing in the library or
the README that holds an exercise's answer."""

import json
import math
import re
from pathlib import Path

import pytest

from course_lib.lab.cli import main
from course_lib.lab.teaching import answer_space as space_of
from course_lib.lab.teaching import exercises
from course_lib.lab.teaching.answer_keys import SolutionKey
from course_lib.lab.teaching.answer_space import (
    KINDS,
    Kind,
    answer_space,
    brute_force,
    duration,
    listed,
    numbers,
    release_check,
    share,
)
from course_lib.lab.teaching.classroom import GRADED

ROOT = Path(__file__).resolve().parents[3]


def _notebook(exercise, text, code="share = None", outputs=""):
    """A notebook with one exercise, as the course's are laid out."""
    return {"cells": [
        {"cell_type": "code", "source": "print(results)",
         "outputs": [{"output_type": "stream", "text": outputs}]},
        {"cell_type": "markdown", "source": f"## Exercise\n{text}"},
        {"cell_type": "code", "source": code, "outputs": []},
        {"cell_type": "code", "source": f'check("{exercise}", share=share)', "outputs": []}]}


def test_a_tiny_exercise_is_found_by_brute_force_and_released_without_a_self_check():
    notebook = _notebook("98", "Store the share of the 20 questions that ...",
                         outputs="recall@1 0.734 over 1,000 questions")
    space = answer_space("98", {"share": 0.35}, notebook, {"share": share(20, "questions")})
    (answer,) = space.answers
    assert (answer.family, len(answer.candidates), space.joint) == \
        ("a share of 20 questions", 21, 21)
    key = SolutionKey("98", {"share": 0.35}, {}, 1e-3).hashed(iterations=1000)
    found = brute_force(space, key, budget_s=60)
    assert found["measured"] and found["seconds"] <= found["whole_s"] * 1.5
    keep, why = release_check(space, found["tries_per_s"])
    assert not keep and "21 answer tuples" in why and "under" in why


def test_a_space_no_core_can_search_keeps_its_self_check():
    wide = Kind(-1, 1, None, "an interval's end")
    space = answer_space("97", dict.fromkeys("abcd", 0.01234), _notebook("97", "Four ends."),
                         dict.fromkeys("abcd", wide), tolerance=1e-4)
    assert space.joint == 20_001 ** 4
    keep, why = release_check(space, tries_per_s=1000)
    assert keep and "over 56.0 days" in why


def test_each_family_holds_only_what_the_notebook_shows():
    notebook = _notebook("96", "Choose one of GRID.", code="GRID = (0.4, 0.5, 0.6)\nshare = None",
                         outputs="kept 0.734, refused 82.5 %")
    kinds = {"share": Kind(0, 1, None, "one of the exercise's GRID", "GRID")}
    (chosen,) = answer_space("96", {"share": 0.5}, notebook, kinds).answers
    assert (chosen.family, len(chosen.candidates)) == ("one of the exercise's GRID", 3)
    (printed,) = answer_space("96", {"share": 0.825}, notebook, kinds).answers
    assert printed.family == "a number the notebook shows" and 825 in printed.candidates
    (other,) = answer_space("96", {"share": 0.4321}, notebook, kinds).answers
    assert other.family.endswith("the grid over [0, 1]") and len(other.candidates) == 1001
    with pytest.raises(ValueError, match="no family holds share"):
        answer_space("96", {"share": 1.5}, notebook, kinds)


def test_numbers_and_lists_are_read_without_running_the_notebook():
    assert numbers("−0.012, 1,000 questions, p 1.3e-07, 82.5 %, doc_23 x2") == \
        {-0.012, 1000.0, 1.3e-07, 82.5, 0.825}
    assert listed("cut_offs = [round(0.85 + 0.001 * i, 3) for i in range(51)]")["cut_offs"][
        -1] == 0.9
    assert listed("x = __import__('os').getcwd()\ny = 2 ** 8\nz = list(range(10 ** 9))\n"
                  "w = [0 for _ in range(100_000_000)]\n%%time\n") == {}
    assert duration(0.42) == "0.4 s" and duration(5400) == "1.5 hours"


def test_every_graded_answer_has_a_kind():
    assert sorted(KINDS) == sorted(GRADED)
    for exercise in GRADED:
        assert tuple(KINDS[exercise]) == exercises.EXERCISES[exercise].answers, exercise


def test_the_command_line_refuses_bad_self_check_and_space_arguments(tmp_path, capsys):
    out = str(tmp_path / "c")
    assert main(["classroom", "--out", out, "--self-check", "sometimes"]) == 2
    assert "invalid choice: 'sometimes'" in capsys.readouterr().err
    assert main(["classroom", "--out", out, "--no-self-check", "--self-check", "on"]) == 2
    assert "contradict" in capsys.readouterr().err
    assert main(["answer-space", "--exercise", "00"]) == 2
    assert "not a graded exercise" in capsys.readouterr().err
    assert main(["answer-space", "--budget", "0"]) == 2
    assert "above 0" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_the_default_release_of_a_small_space_has_no_self_check(tmp_path, monkeypatch, capsys):
    from course_lib.lab.teaching.answer_keys import KEY_SUFFIX, HashedKey
    from course_lib.lab.teaching.classroom import build_classroom

    monkeypatch.setattr(exercises, "_EXPECTED", {"01": {"recall_10": 0.9, "mrr_10": 0.8}})
    monkeypatch.setattr(exercises, "_MISTAKES", {"01": {"slip": {"recall_10": 0.5}}})
    monkeypatch.setattr(exercises, "forget_solution", lambda exercise: None)
    monkeypatch.setattr(space_of, "hash_rate", lambda *args, **kwargs: 300.0)
    monkeypatch.setattr("course_lib.lab.teaching.classroom.hash_rate",
                        lambda *args, **kwargs: 300.0)
    course = tmp_path / "course"
    name = "01_evaluating_retrieval"
    key_file = course / "source" / name / f"{name}{KEY_SUFFIX}"
    build_classroom(course, ["01"], release=False)
    assert HashedKey.read(key_file) is None  # 1,002,001 tuples: an hour of one core
    assert "does not check answers: 1,002,001 answer tuples" in capsys.readouterr().out
    build_classroom(course, ["01"], release=False, self_check=True)
    assert HashedKey.read(key_file).is_right({"recall_10": 0.9, "mrr_10": 0.8})


# ---------------------------------------------------------------- the real exercises
@pytest.fixture(scope="module")
def expected(cmrc_kb):
    """Every exercise's worked answers (each solution runs once, then lets go of its data)."""
    answers = {}
    for exercise in sorted(exercises.EXERCISES):
        answers[exercise] = dict(exercises.expected_answers(exercise))
        exercises.forget_solution(exercise)
    return answers


def _flat(value):
    return [x for v in value for x in _flat(v)] if isinstance(value, (list, tuple)) else [value]


def written_answers(expected, paths):
    """``file: exercise name = value`` for each answer a file holds: a string answer anywhere;
    a number at two decimals past its tolerance's precision, or in full, anywhere; a number at
    its tolerance's precision (or one decimal more) in a paragraph that names the answer or the
    exercise. (At the precision alone, numbers of other quantities coincide with answers: the
    README's tables hold hundreds of three-decimal numbers.)"""
    found = []
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        for exercise, answers in expected.items():
            places = -round(math.log10(exercises.EXERCISES[exercise].tolerance))
            names = "|".join(map(re.escape, answers))
            near = re.compile(rf"\b(?:{names})\b|\b(?:exercise|notebook|lab) {exercise}\b|"
                              rf"\b{exercise}_[a-z]|check\(\"{exercise}\"", re.I)
            for name, value in answers.items():
                for item in _flat(value):
                    item = item.item() if hasattr(item, "item") else item
                    if isinstance(item, str):
                        anywhere, nearby = [item], []
                    elif isinstance(item, int):
                        anywhere, nearby = [], [str(item)] if abs(item) >= 10 else []
                    else:
                        full = repr(item).partition(".")[2]
                        anywhere = [repr(item)] * (len(full) > places + 2) + \
                            [f"{item:.{places + 2}f}"] * (round(item, places + 2) !=
                                                          round(item, places))
                        nearby = [f"{item:.{places}f}", f"{item:.{places + 1}f}"]
                    for form in set(anywhere):
                        if re.search(rf"(?<![\w.]){re.escape(form)}(?![\w]|\.\d)", text):
                            found.append(f"{path}: {exercise} {name} = {form}")
                    for paragraph in re.split(r"\n\s*\n", text):
                        for form in set(nearby):
                            if near.search(paragraph) and re.search(
                                    rf"(?<![\w.]){re.escape(form)}(?![\w]|\.\d)", paragraph):
                                found.append(f"{path}: {exercise} {name} = {form}, near "
                                             f"{near.search(paragraph).group()!r}")
    return sorted(set(found))


def test_the_scan_names_the_file_and_the_answer_it_finds(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""Exercise 07 picks 0.877 on trial."""\nCUT_OFF = 0.8771\n\n'
                       'TABLE = "0.755 0.954"  # other quantities, no exercise named\n\n'
                       'SEEN = "doc_42.txt"\nMORE = 0.95431\n', encoding="utf-8")
    answers = {"07": {"best_cut_off": 0.87712, "dev_recall": 0.9543123, "dev_relevance": 0.755},
               "00": {"answer": ("doc_42.txt", 3)}}
    assert written_answers(answers, [planted]) == [
        f"{planted}: 00 answer = doc_42.txt",
        f"{planted}: 07 best_cut_off = 0.877, near 'Exercise 07'",
        f"{planted}: 07 best_cut_off = 0.8771, near 'Exercise 07'",
        f"{planted}: 07 dev_recall = 0.95431"]  # two decimals past 1e-3: anywhere


def test_no_answer_is_written_in_the_library_or_the_readme(expected):
    paths = sorted((ROOT / "course_lib").rglob("*.py")) + [ROOT / "README.md",
                                                           space_of_json()]
    assert written_answers(expected, paths) == []


def space_of_json():
    return ROOT / "benchmarks" / "answer_space.json"



def test_the_measured_families_and_release_defaults_are_the_notebooks_own(expected):
    """What `make answer-space` recorded is what the committed notebooks give now (else run
    it again), and `make classroom` decides as the guide says."""
    data = json.loads(space_of_json().read_text(encoding="utf-8"))
    assert sorted(data["exercises"]) == sorted(GRADED)
    for exercise, row in data["exercises"].items():
        space = answer_space(exercise, expected[exercise],
                             tolerance=exercises.EXERCISES[exercise].tolerance)
        assert [{"name": a.name, "family": a.family, "size": len(a.candidates)}
                for a in space.answers] == row["answers"], exercise
        assert space.joint == row["joint"]
        assert release_check(space, row["tries_per_s"])[0] == row["self_check"], exercise
        if row["measured"]:
            assert row["seconds"] <= row["whole_s"] * 1.5, exercise
