"""The answer keys on their own (course_lib.lab.teaching.answer_keys), beside the random
comparison in test_exercises.py and the releases in test_classroom.py: SolutionKey and
HashedKey keep one interface and give the same verdicts; the tolerance rule ``agree`` at its
edges (within the tolerance always, beyond twice it never; shapes, strings, booleans, None,
NaN and infinities); a HashedKey's file holds none of the answers in clear, only salted
hashes; a wrong answer fails and a right one within tolerance passes, for tuples and strings
too; and the grading key's file round trip.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from course_lib.lab.teaching.answer_keys import (
    ITERATIONS,
    AnswerKey,
    HashedKey,
    SolutionKey,
    agree,
    grid,
    no_self_check,
)

TOL = 1e-3
EXPECTED = {"share": 0.6137, "pair": ("doc_07.txt", 42), "count": 17}
MISTAKES = {"You counted pairs, not questions.": {"count": 34},
            "You kept the first file, not the longest.": {"pair": ("doc_01.txt", 42)}}


def _keys() -> tuple[SolutionKey, HashedKey]:
    key = SolutionKey("97", EXPECTED, MISTAKES, tolerance=TOL)
    return key, key.hashed(salt=bytes(range(16)), iterations=200)


# ---------------------------------------------------------------- one interface


def test_both_keys_keep_one_interface():
    key, hashed = _keys()
    for each in (key, hashed):
        for member in ("exercise", "names", "is_right", "mistake_hints", "wrong_names"):
            assert hasattr(each, member), (type(each).__name__, member)
    assert [m for m in dir(AnswerKey) if not m.startswith("_")] == [
        "is_right", "mistake_hints", "wrong_names"]
    assert key.exercise == hashed.exercise == "97"
    assert key.names == hashed.names == ("share", "pair", "count")
    right = {"share": 0.6139, "pair": ["doc_07.txt", 42.0004], "count": 17}
    pairs = {"share": 0.6137, "pair": ("doc_07.txt", 42), "count": 34}
    far = {"share": 0.5, "pair": ("doc_07.txt", 42), "count": 17}
    for answers, is_right, hints in ((right, True, []), (far, False, []),
                                     (pairs, False, ["You counted pairs, not questions."])):
        assert key.is_right(answers) is hashed.is_right(answers) is is_right
        assert key.mistake_hints(answers) == hashed.mistake_hints(answers) == hints
    # only the solution key can say which answer is wrong
    assert key.wrong_names(far) == ["share"] and key.wrong_names(right) == []
    assert hashed.wrong_names(far) is None and hashed.wrong_names(right) is None


def test_a_mistake_leaves_its_other_answers_at_their_right_values():
    key, hashed = _keys()
    first_file = {**EXPECTED, "pair": ("doc_01.txt", 42)}
    assert key.mistaken("You kept the first file, not the longest.") == first_file
    assert hashed.mistake_hints(first_file) == ["You kept the first file, not the longest."]
    # the wrong method's answer with another answer wrong too is not that mistake
    assert hashed.mistake_hints({**first_file, "count": 18.5}) == []


def test_wrong_methods_given_as_a_function_run_once_and_only_when_needed():
    calls = []

    def slow_mistakes():
        calls.append(1)
        return {"Off by one.": {"count": 18}}

    key = SolutionKey("97", {"count": 17}, slow_mistakes)
    assert key.is_right({"count": 17}) and calls == []
    assert key.mistake_hints({"count": 18}) == ["Off by one."]
    assert key.mistake_hints({"count": 19}) == [] and calls == [1]
    key.hashed(iterations=10)
    assert calls == [1]


def test_collisions_name_wrong_methods_the_check_cannot_tell_apart():
    key = SolutionKey("97", {"share": 0.5, "count": 3}, {
        "Rounded.": {"share": 0.5004},  # within tolerance: the right answers
        "Pairs.": {"count": 6}, "Doubled.": {"count": 6.0}, "Other.": {"count": 9}})
    assert key.collisions() == [(None, "Rounded."), ("Pairs.", "Doubled.")]


# ---------------------------------------------------------------- the tolerance rule


@pytest.mark.parametrize("tolerance", [1e-3, 1e-4, 1e-5, 0.05])
def test_within_the_tolerance_always_agrees_beyond_twice_it_never(tolerance):
    rng = np.random.default_rng(3)
    for expected in rng.uniform(-5, 5, 300):
        for offset in (tolerance, -tolerance, 0.9999 * tolerance, 0.5 * tolerance, 0.0):
            assert agree(expected + offset, expected, tolerance), (expected, offset)
        for offset in (2.001 * tolerance, -2.001 * tolerance, 10 * tolerance):
            assert not agree(expected + offset, expected, tolerance), (expected, offset)


def test_agree_keeps_shapes_strings_and_kinds_apart():
    assert agree(("a.txt", 3), ["a.txt", 3.0004], TOL)  # a list is a tuple
    assert agree([[0.1, 0.2], "x"], ((0.1001, 0.2), "x"), TOL)  # nested
    assert not agree(("a.txt", 3), ("b.txt", 3), TOL)
    assert not agree(("a.txt", 3), ("a.txt", 3, 4), TOL)
    assert not agree((0.5,), 0.5, TOL)
    assert not agree("0.5", 0.5, TOL)  # a number typed as text is not the number
    assert not agree(True, 1, TOL) and not agree(1, True, TOL) and agree(True, True, TOL)
    assert agree(None, None, TOL) and not agree(None, 0, TOL)
    assert agree(float("nan"), math.nan, TOL) and not agree(math.nan, 0.0, TOL)
    assert agree(math.inf, math.inf, TOL) and not agree(math.inf, -math.inf, TOL)
    assert agree(np.float32(0.25), 0.25, TOL) and agree(np.int64(7), 7, TOL)


@pytest.mark.parametrize("tolerance", [0, -1e-3, float("nan")])
def test_the_tolerance_must_be_positive(tolerance):
    with pytest.raises(ValueError, match="tolerance must be a positive number"):
        grid(0.5, tolerance)


def test_a_hashed_key_tries_the_neighbouring_grid_points_of_every_number():
    key = SolutionKey("97", {"a": 0.2505, "b": 1.0, "c": -0.0004}, tolerance=TOL)
    hashed = key.hashed(iterations=50)
    # every combination of each number just inside its tolerance, on either side
    for da in (-TOL, TOL):
        for db in (-TOL, TOL):
            for dc in (-TOL, 0.0, TOL):
                given = {"a": 0.2505 + 0.999 * da, "b": 1.0 + 0.999 * db,
                         "c": -0.0004 + 0.999 * dc}
                assert key.is_right(given) and hashed.is_right(given), given
    assert not hashed.is_right({"a": 0.2505 + 2.1 * TOL, "b": 1.0, "c": -0.0004})


# ---------------------------------------------------------------- nothing in clear


def test_a_hashed_key_file_holds_no_answer_in_clear():
    key, hashed = _keys()
    text = hashed.to_json()
    data = json.loads(text)
    assert set(data) == {"exercise", "names", "tolerance", "kdf", "salt", "iterations",
                         "answers", "mistakes"}
    # no answer, no wrong method's answer, not even on the grid
    visible = re.sub(r'"[0-9a-f]{32,}"', '""', text)  # the salt and the hashes aside
    for secret in ("0.6137", "6137", "614", "doc_07", "doc_01", "42", "17", "34"):
        assert secret not in visible, secret
    digests = [data["answers"], *(m["answers"] for m in data["mistakes"])]
    assert all(re.fullmatch(r"[0-9a-f]{64}", d) for d in digests)
    assert len(set(digests)) == 3
    assert [m["hint"] for m in data["mistakes"]] == list(MISTAKES)  # the hints are for learners
    assert not any(isinstance(value, (float, int)) and value in (0.6137, 17, 42, 34)
                   for value in vars(hashed).values())


def test_each_hashing_has_its_own_salt_and_the_same_salt_the_same_hashes():
    key = SolutionKey("97", {"count": 17})
    first, second = key.hashed(iterations=20), key.hashed(iterations=20)
    assert first.salt != second.salt and first.answer_digest != second.answer_digest
    assert first.is_right({"count": 17}) and second.is_right({"count": 17})
    again = key.hashed(salt=bytes.fromhex(first.salt), iterations=20)
    assert again.answer_digest == first.answer_digest
    assert key.hashed(salt=bytes.fromhex(first.salt), iterations=21).answer_digest != \
        first.answer_digest
    other = SolutionKey("96", {"count": 17}).hashed(salt=bytes.fromhex(first.salt),
                                                    iterations=20)
    assert other.answer_digest != first.answer_digest  # the exercise is hashed too
    assert key.hashed().iterations == ITERATIONS


def test_a_hashed_key_read_back_gives_the_same_verdicts(tmp_path):
    _, hashed = _keys()
    path = tmp_path / "97_x.check.json"
    path.write_text(hashed.to_json(), encoding="utf-8")
    again = HashedKey.read(path)
    assert again == hashed
    assert again.is_right({"share": 0.6137, "pair": ("doc_07.txt", 42), "count": 17})
    assert not again.is_right({"share": 0.6137, "pair": ("doc_07.txt", 43), "count": 17})
    path.write_text(no_self_check("97", ("share",)), encoding="utf-8")
    assert HashedKey.read(path) is None
    path.write_text(hashed.to_json().replace("pbkdf2-sha256", "md5"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"97_x\.check\.json.*unknown kdf 'md5'"):
        HashedKey.read(path)


# ---------------------------------------------------------------- the grading key's file


def test_the_grading_key_round_trips_with_numpy_answers_as_plain_numbers(tmp_path):
    key = SolutionKey("97", {"share": np.float64(0.6137), "pair": ("doc_07.txt", np.int64(42))},
                      {"Pairs.": {"share": np.float32(0.5)}}, tolerance=1e-4)
    path = tmp_path / "97.json"
    path.write_text(key.to_json(), encoding="utf-8")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["expected"] == {"share": 0.6137, "pair": ["doc_07.txt", 42]}
    again = SolutionKey.read(path)
    assert again.tolerance == 1e-4 and again.names == ("share", "pair")
    assert again.is_right({"share": 0.61375, "pair": ("doc_07.txt", 42)})
    assert not again.is_right({"share": 0.6140, "pair": ("doc_07.txt", 42)})
    assert again.mistake_hints({"share": 0.5, "pair": ("doc_07.txt", 42)}) == ["Pairs."]
    with pytest.raises(FileNotFoundError, match="no grading key .*missing.json"):
        SolutionKey.read(tmp_path / "missing.json")
    path.write_text(json.dumps({"exercise": "97"}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"97\.json: not a grading key"):
        SolutionKey.read(path)
