"""Every exercise check is real: it fails on the stub, fails on a wrong answer, passes on the
worked solution (the strict check cell of each generated solution notebook, run by nbval),
and the solution notebooks are in sync with their sources."""

import ast
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.teaching import exercises
from course_lib.lab.teaching.exercises import EXERCISES, check

ROOT = Path(__file__).resolve().parents[3]
SPEC = importlib.util.spec_from_file_location("sync", ROOT / "tools" / "sync.py")
sync = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(sync)


def test_solution_notebooks_are_in_sync_with_their_sources():
    assert sync.drift() == []


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_each_notebook_checks_its_exercise_and_the_stub_fails(exercise, capsys):
    notebook = next((ROOT / "notebooks").glob(f"{exercise}_*.ipynb"))
    cells = nbformat.read(notebook, as_version=4).cells
    calls = [c.source for c in cells if c.cell_type == "code" and f'check("{exercise}"' in c.source]
    assert len(calls) == 1
    names = re.findall(r"(\w+)=\1", calls[0])
    assert tuple(names) == EXERCISES[exercise].answers
    result = check(exercise, **dict.fromkeys(names))
    assert not result.passed and "not attempted" in capsys.readouterr().out
    solution = ROOT / "solutions" / f"{notebook.stem}_solutions.ipynb"
    assert "strict(True)" in nbformat.read(solution, as_version=4).cells[-1].source


def test_wrong_answers_fail_and_right_ones_pass(monkeypatch, cmrc_kb):
    monkeypatch.setitem(exercises._EXPECTED, "01", {"recall_10": 0.875, "mrr_10": 0.8125})
    assert check("01", recall_10=0.875, mrr_10=0.81252).passed
    assert not check("01", recall_10=0.869, mrr_10=0.8125).passed
    assert not check("01", recall_10="0.875", mrr_10=0.8125).passed
    # A real run of a solution script: exercise 00 (fast).
    expected = exercises.expected_answers("00")
    assert check("00", answer=expected["answer"]).passed
    assert not check("00", answer=(expected["answer"][0], expected["answer"][1] + 1)).passed
    exercises.strict(True)
    try:
        with pytest.raises(AssertionError, match="does not match"):
            check("00", answer=("doc_01.txt", 1))
    finally:
        exercises.strict(False)


def test_check_rejects_unknown_exercises_and_missing_answers():
    with pytest.raises(ValueError, match="unknown exercise"):
        check("99", x=1)
    with pytest.raises(TypeError, match="missing mrr_10"):
        check("01", recall_10=None)


@pytest.mark.parametrize("solution", sorted((ROOT / "solutions").glob("[0-9][0-9]_*.py")),
                         ids=lambda p: p.stem)
def test_every_solution_names_plausible_wrong_methods(solution):
    tree = ast.parse(solution.read_text(encoding="utf-8"))
    assert any(isinstance(node, ast.FunctionDef) and node.name == "mistakes"
               for node in tree.body), f"{solution.name} defines no mistakes()"


def test_a_wrong_method_that_gives_the_right_numbers_is_reported(monkeypatch):
    monkeypatch.setitem(exercises._EXPECTED, "01", {"recall_10": 0.875, "mrr_10": 0.8125})
    monkeypatch.setitem(exercises._MISTAKES, "01", {
        "You used k=5.": {"recall_10": 0.869},            # caught, with its own hint
        "You used cosine.": {"recall_10": 0.875}})         # same numbers: not caught
    assert "Hint: You used k=5." in check("01", recall_10=0.869, mrr_10=0.8125).message
    assert "percentage" in check("01", recall_10=87.5, mrr_10=0.8125).message
    with pytest.raises(AssertionError, match="You used cosine.*passes the check"):
        exercises.check_mistakes("01")
    monkeypatch.setitem(exercises._MISTAKES, "01", {})
    with pytest.raises(AssertionError, match="defines no mistakes"):
        exercises.check_mistakes("01")


def test_an_answer_printed_in_the_notebook_is_reported(monkeypatch):
    notebook = nbformat.read(next((ROOT / "notebooks").glob("01_*.ipynb")), as_version=4)
    printed = next(float(x) for c in notebook.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) for x in re.findall(r"\b0\.\d{3}\b",
                                                                     o.get("text", "")))
    monkeypatch.setitem(exercises._EXPECTED, "01", {"recall_10": printed, "mrr_10": 0.0})
    with pytest.raises(AssertionError, match="already printed"):
        exercises.check_not_given_away("01")
    monkeypatch.setitem(exercises._EXPECTED, "01", {"recall_10": 0.123456, "mrr_10": 0.0})
    exercises.check_not_given_away("01")


def test_a_signed_difference_is_not_an_answer_given_away(monkeypatch, tmp_path):
    """A win/loss table prints "+0.000 [+0.000, +0.000]": a difference, not the answer 0."""
    course = tmp_path / "course"
    (course / "notebooks").mkdir(parents=True)
    (course / "solutions").mkdir()
    monkeypatch.setattr(exercises, "solutions_folder", lambda: course / "solutions")
    def notebook(text):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
            "print(table)", outputs=[nbformat.v4.new_output("stream", text=text)])])
        nbformat.write(nb, course / "notebooks" / "01_x.ipynb")
    monkeypatch.setitem(exercises._EXPECTED, "01", {"recall_10": 0.0, "mrr_10": 0.25})
    notebook("CMRC  +0.000 [+0.000, +0.000]  10.000 s  p 1\n")
    exercises.check_not_given_away("01")
    notebook("largest gap 0.000\n")
    with pytest.raises(AssertionError, match="recall_10 = 0.000 is already printed"):
        exercises.check_not_given_away("01")
    notebook("MRR -0.250 (a negative answer is still found)\n")
    monkeypatch.setitem(exercises._EXPECTED, "01", {"recall_10": -0.25, "mrr_10": 0.9})
    with pytest.raises(AssertionError, match="already printed"):
        exercises.check_not_given_away("01")


def test_solutions_are_found_from_the_course_folder_not_from_the_package(tmp_path, monkeypatch):
    """An installed library has no solutions/ beside it: the check looks in the working
    folder, beside it (a notebook runs in notebooks/), or where COURSE_SOLUTIONS points."""
    course = Path(__file__).resolve().parents[3]
    monkeypatch.setattr(exercises, "COURSE_ROOT", tmp_path / "site-packages")  # as installed
    monkeypatch.delenv(exercises.SOLUTIONS_ENV, raising=False)
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    with pytest.raises(FileNotFoundError, match="set COURSE_SOLUTIONS"):
        exercises.solutions_folder()
    monkeypatch.setenv(exercises.SOLUTIONS_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        exercises.solutions_folder()
    monkeypatch.setenv(exercises.SOLUTIONS_ENV, str(course / "solutions"))
    assert exercises.solution_file("01").name == "01_evaluating_retrieval.py"
    monkeypatch.delenv(exercises.SOLUTIONS_ENV)
    monkeypatch.chdir(course / "notebooks")  # a notebook's working folder in a course copy
    assert exercises.solutions_folder() == course / "solutions"


# A first hint names the idea: no call, assignment, index, attribute or code name in it.
CODE = re.compile(r"[()\[\]=`]|\w_\w|[A-Za-z]\.[A-Za-z]")


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_hints_come_in_steps_and_the_first_gives_no_code(exercise):
    hints = EXERCISES[exercise].hints
    assert len(hints) >= 2 and len(set(hints)) == len(hints)
    assert not CODE.search(hints[0]), f"{exercise}'s first hint shows code: {hints[0]!r}"
    # The last step, the whole method, is the worked solution's: not in the library.
    method = exercises.method(exercise)
    assert method and CODE.search(method), f"{exercise}: no Method: paragraph with code"
    assert method not in hints


def test_the_code_detector_catches_code():
    for text in ("use evaluate(kb, r)", "topk=10", "kb.questions", "the recall_10 name",
                 "rows[0]", "`Retriever`"):
        assert CODE.search(text), text
    assert not CODE.search("keep the rows whose recall@5 is at least 0.90, then the best one.")


def test_failed_checks_and_hint_walk_through_the_steps(monkeypatch, capsys):
    monkeypatch.setitem(exercises._EXPECTED, "01", {"recall_10": 0.875, "mrr_10": 0.8125})
    monkeypatch.setitem(exercises._MISTAKES, "01", {"You used k=5.": {"recall_10": 0.869}})
    monkeypatch.setattr(exercises, "_HINTS_SHOWN", {})
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    steps = [*EXERCISES["01"].hints, exercises.method("01")]
    assert steps[0] in check("01", recall_10=0.5, mrr_10=0.5).message
    # A known wrong method gets its own hint, and does not use up a step.
    assert "You used k=5." in check("01", recall_10=0.869, mrr_10=0.8125).message
    exercises.hint("01")
    assert steps[1] in capsys.readouterr().out
    third = check("01", recall_10=0.5, mrr_10=0.5).message
    assert steps[2] in third and "Hint 3/3" in third
    assert steps[2] in check("01", recall_10=0.5, mrr_10=0.5).message  # the last one stays
    # Graded (an nbgrader run): never the whole method.
    monkeypatch.setattr(exercises, "_HINTS_SHOWN", {})
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    messages = [check("01", recall_10=0.5, mrr_10=0.5).message for _ in range(4)]
    assert steps[0] in messages[0] and all(steps[1] in m for m in messages[1:])
    assert not any(steps[2] in m for m in messages)


def test_two_wrong_methods_the_check_cannot_tell_apart_must_share_one_hint(monkeypatch):
    """The guard (run for every exercise by its solution notebook's check_mistakes)."""
    monkeypatch.setitem(exercises._EXPECTED, "01", {"recall_10": 0.875, "mrr_10": 0.8125})
    monkeypatch.setitem(exercises._MISTAKES, "01", {
        "You used k=5.": {"recall_10": 0.869, "mrr_10": 0.81},
        "You used cosine.": {"recall_10": 0.8694, "mrr_10": 0.8102}})  # within tolerance
    with pytest.raises(AssertionError, match="cannot tell two wrong methods apart"):
        exercises.check_mistakes("01")
    monkeypatch.setitem(exercises._MISTAKES, "01", {
        "You used k=5, or cosine.": {"recall_10": 0.869, "mrr_10": 0.81},
        "You sorted worst first.": {"mrr_10": 0.5}})
    assert exercises.check_mistakes("01") == 2


def test_the_hashed_key_agrees_with_the_solution_key():
    """Random answers near and far: both keys give the same verdicts, and the tolerance
    rule holds (within it: right; beyond twice it: wrong)."""
    import random

    from course_lib.lab.teaching.answer_keys import SolutionKey

    rng = random.Random(0)
    for _ in range(40):
        expected = {"share": rng.random(), "count": rng.randrange(1000)}
        key = SolutionKey("01", expected, {"slip": {"count": expected["count"] + 1}})
        hashed = key.hashed(iterations=10)
        for _ in range(5):
            given = {"share": expected["share"] + rng.uniform(-3e-3, 3e-3),
                     "count": expected["count"] + rng.choice((0, 0, 1))}
            assert key.is_right(given) == hashed.is_right(given)
            assert key.mistake_hints(given) == hashed.mistake_hints(given)
            gap = abs(given["share"] - expected["share"])
            if given["count"] == expected["count"] and gap <= 1e-3:
                assert key.is_right(given)
            if gap > 2e-3:
                assert not key.is_right(given) and not key.mistake_hints(given)


def _mistake_hints(solution):
    """The hints of a worked solution's known wrong methods: the string keys of the dict
    its ``mistakes()`` returns (read from the source, nothing run)."""
    import ast

    tree = ast.parse(solution.read_text(encoding="utf-8"))
    found = []
    for function in tree.body:
        if isinstance(function, ast.FunctionDef) and function.name == "mistakes":
            for node in function.body:  # its own return, not those of functions inside it
                if not isinstance(node, ast.Return):
                    continue
                value = node.value  # {hint: answers} or {hint: ... for hint, ... in {...}.items()}
                if isinstance(value, ast.DictComp):
                    value = next(n for n in ast.walk(value.generators[0].iter)
                                 if isinstance(n, ast.Dict))
                if isinstance(value, ast.Dict):
                    found += [_text(key) for key in value.keys if _text(key)]
    return found


def _text(node):
    """A string constant, or "" (concatenated literals are one constant to ast)."""
    import ast

    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


# A known mistake's hint may name a place (a function, a setting) but hands over no code: no
# call, keyword argument, assignment or index.
HANDED_OVER = re.compile(r"\w\(|\w\s?=\s?[\w'\"(\[]|\w\[")


@pytest.mark.parametrize("solution", sorted((ROOT / "solutions").glob("[0-9][0-9]_*.py")),
                         ids=lambda p: p.stem[:2])
def test_a_known_mistakes_hint_names_the_idea_not_the_code(solution):
    hints = _mistake_hints(solution)
    assert hints, f"{solution.name}: no known mistakes read"
    for hint in hints:
        assert not HANDED_OVER.search(hint), f"{solution.name}: a hint hands over code: {hint!r}"


def test_the_handed_over_detector_catches_code_and_lets_places_pass():
    for text in ("Pass embedder=None.", "use split_sentences(text)[:1]", "ks=(5, 10)",
                 "metadata['file_name']"):
        assert HANDED_OVER.search(text), text
    assert not HANDED_OVER.search("the shortest paragraph (min); SubQuestionRetriever; sums of "
                                  "1/(60 + rank); recall@5")
