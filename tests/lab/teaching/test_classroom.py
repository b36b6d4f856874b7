"""The classroom course (course_lib.lab.teaching.classroom): what each assignment marks and
what its release holds, the release's check without solutions/, building again, the command
line, who a submission belongs to, the grading note. The flows that run nbgrader end to end
with students (minutes) are in tests/classroom/test_nbgrader_flows.py.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.teaching import exercises
from course_lib.lab.teaching.answer_keys import KEY_SUFFIX, HashedKey, SolutionKey
from course_lib.lab.teaching.classroom import (
    GRADED,
    assignment_notebook,
    build_classroom,
    solution_cells,
)
from course_lib.lab.teaching.written_answers import marking_schemes

ROOT = Path(__file__).resolve().parents[3]


def _answer_cell(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    (cell,) = [c for c in notebook.cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
    return cell


def _solution_code(exercise: str) -> str:
    return solution_cells(exercises.solution_file(exercise))[1][0]


@pytest.mark.parametrize("exercise", GRADED)
def test_each_assignment_marks_its_cells_and_its_solution_sets_every_answer(exercise):
    """Static, for every graded one (no solution runs): the answer cell holds the first solution
    cell, which assigns every answer; the check cell is read-only, graded, one point an
    answer; the exercise no longer points at solutions/."""
    names = exercises.EXERCISES[exercise].answers
    notebook = assignment_notebook(exercise)
    answer = _answer_cell(notebook)
    assert "### BEGIN SOLUTION" in answer.source and _solution_code(exercise) in answer.source
    assigned = {node.id for node in ast.walk(ast.parse(_solution_code(exercise)))
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    assert set(names) <= assigned, f"{exercise}: the first solution cell sets no {names}"
    (graded,) = [c for c in notebook.cells
                 if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
    marks = graded.metadata["nbgrader"]
    assert marks["locked"] and marks["points"] == len(names)
    # No expected value in any notebook: the grade is computed outside it.
    assert "HIDDEN TESTS" not in graded.source and "score(" not in graded.source
    assert not any("solutions/" in c.source for c in notebook.cells if c.cell_type == "markdown")
    # Then the written questions, each a read-only question and an answer graded by hand,
    # which in source/ holds the marking scheme from the worked solution.
    items = exercises.EXERCISES[exercise].written
    assert items, f"{exercise}: no written question"
    after = notebook.cells[notebook.cells.index(graded) + 1:][:2 * len(items)]
    schemes = marking_schemes(exercises.solution_file(exercise))
    for item, question, answer in zip(items, after[::2], after[1::2], strict=True):
        assert question.cell_type == answer.cell_type == "markdown"
        assert item.question in question.source and f"({item.points} points" in question.source
        assert question.metadata["nbgrader"] == {
            "grade": False, "grade_id": f"written-{exercise}-{item.name}-question",
            "locked": True, "schema_version": 3, "solution": False, "task": False}
        assert answer.metadata["nbgrader"] == {
            "grade": True, "grade_id": f"written-{exercise}-{item.name}", "locked": False,
            "points": item.points, "schema_version": 3, "solution": True, "task": False}
        assert schemes[item.name] in answer.source and "- 2 points:" in answer.source
    assert set(schemes) == {item.name for item in items}
    total = len(names) + sum(item.points for item in items)
    note = next(c.source for c in notebook.cells if "*(Graded:" in c.source)
    assert f"*(Graded: {len(names)} points, one per answer, and " \
           f"{total - len(names)} points for the" in note


def test_the_marking_schemes_stay_out_of_the_library():
    """The schemes are the teacher's, like the answers: in solutions/, not in course_lib/."""
    library = " ".join(" ".join(path.read_text(encoding="utf-8").split())
                       for path in (ROOT / "course_lib").rglob("*.py"))
    for exercise in GRADED:
        for name, scheme in marking_schemes(exercises.solution_file(exercise)).items():
            first = " ".join(scheme.split())[:60]
            assert first not in library, f"{exercise} {name}: its marking scheme is in course_lib"


def test_the_release_checks_answers_without_the_solutions(tmp_path, monkeypatch):
    """The release's check uses the hashed key beside the notebook: right, wrong with a
    known method's hint, and wrong in steps (graded: never the last) — with COURSE_SOLUTIONS
    pointing at an empty folder, so any use of a solution would fail."""
    expected = {"recall_10": 0.875, "mrr_10": 0.8125}
    key = SolutionKey("01", expected, {"You used k=5.": {"recall_10": 0.869}})
    (tmp_path / f"01_evaluating_retrieval{KEY_SUFFIX}").write_text(
        key.hashed(iterations=100).to_json(), encoding="utf-8")
    full_method = exercises.method("01")  # the clone's, before solutions/ is hidden
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(exercises.SOLUTIONS_ENV, str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(exercises, "_HINTS_SHOWN", {})
    assert isinstance(exercises.answer_key("01"), HashedKey)
    assert exercises.check("01", recall_10=0.8752, mrr_10=0.8125).passed
    message = exercises.check("01", recall_10=0.869, mrr_10=0.8125).message
    assert "You used k=5." in message and "not all of these match" in message
    # A release is graded: the hints stop before the whole method.
    steps = [exercises.check("01", recall_10=0.5, mrr_10=0.5).message for _ in range(3)]
    assert "Hint 1/2" in steps[0] and "Hint 2/2" in steps[2]
    assert not any(full_method in step for step in steps)
    assert "for the next one" in steps[0] and "for the next one" not in steps[2]
    assert "percentages" in exercises.check("01", recall_10=87.5, mrr_10=0.8125).message
    with pytest.raises(FileNotFoundError):  # the guard: a solution is not reachable here
        exercises.solution_file("02")
    assert exercises.method("01") is None  # nor the method


def test_a_release_without_a_self_check_checks_nothing(tmp_path, monkeypatch):
    from course_lib.lab.teaching.answer_keys import no_self_check

    (tmp_path / f"01_evaluating_retrieval{KEY_SUFFIX}").write_text(
        no_self_check("01", ("recall_10", "mrr_10")), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = exercises.check("01", recall_10=0.875, mrr_10=0.8125)
    assert not result.passed and "graded after you submit" in result.message


def test_a_malformed_key_file_is_named():
    with pytest.raises(ValueError, match="not an answer key"):
        HashedKey.read(ROOT / "README.md")


def test_the_command_line_checks_its_arguments(tmp_path, capsys):
    from course_lib.lab.cli import main

    (tmp_path / "a-file").write_text("x")
    assert main(["classroom", "--out", str(tmp_path / "a-file"), "--no-release"]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["classroom", "--out", str(tmp_path / "c"), "--exercise", "99"]) == 2
    assert "not an exercise" in capsys.readouterr().err
    assert main(["classroom", "--out", str(tmp_path / "nowhere" / "deeper")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()  # nothing was written before the arguments passed


def test_building_again_keeps_what_it_did_not_write(tmp_path, monkeypatch):
    """A teacher's own config and the students' work survive a second `make classroom`."""
    monkeypatch.setattr(exercises, "_EXPECTED", {"01": {"recall_10": 0.9, "mrr_10": 0.8}})
    monkeypatch.setattr(exercises, "_MISTAKES", {"01": {"slip": {"recall_10": 0.5}}})
    monkeypatch.setattr(exercises, "forget_solution", lambda exercise: None)
    course = tmp_path / "course"
    build_classroom(course, ["01"], release=False, self_check=True)  # (default: none for 01)
    config = course / "nbgrader_config.py"
    assert config.read_text().startswith("# Written by")
    config.write_text("c = get_config()  # the teacher's own\n")
    (course / "submitted").mkdir()
    (course / "submitted" / "work.ipynb").write_text("{}")
    build_classroom(course, ["01"], release=False, self_check=True)
    assert config.read_text() == "c = get_config()  # the teacher's own\n"
    assert (course / "submitted" / "work.ipynb").read_text() == "{}"
    key = HashedKey.read(course / "source" / "01_evaluating_retrieval" /
                         f"01_evaluating_retrieval{KEY_SUFFIX}")
    assert key.is_right({"recall_10": 0.9, "mrr_10": 0.8})
    assert key.mistake_hints({"recall_10": 0.5, "mrr_10": 0.8}) == ["slip"]


@pytest.mark.skipif(os.geteuid() != 0, reason="making folders another user owns needs root")
def test_a_submission_belongs_to_the_user_who_wrote_it_not_to_the_name_inside(tmp_path):
    """`nbgrader submit --student=ada` lets anyone hand in as ada; the grade command collects
    by the owner of each submission's folder. Here user nobody hands in once as itself and
    once as ada; the teacher's own folders (one machine) are taken as named."""
    from course_lib.lab.teaching.classroom import submitters

    name = "07_similarity_thresholds"
    for minute, (student, owner) in enumerate((("nobody", 65534), ("ada", 65534),
                                               ("ben", os.getuid()), ("ada", os.getuid()))):
        folder = tmp_path / f"{student}+{name}+2026-12-04 10:0{minute}:00.000000 UTC"
        folder.mkdir()
        os.chown(folder, owner, owner)
    students, lines = submitters(tmp_path, name)
    assert students == ["ben", "nobody"]
    assert lines[0].startswith(f"refused ada+{name}+") and "by user nobody, not by ada" in lines[0]
    assert lines[1] == ("not collected: ada, whose name another user submitted under "
                        "(see above)")
    assert submitters(tmp_path, "08_reranking") == ([], [])


def test_the_grading_note_says_whether_the_release_checks():
    def note(notebook):
        return next(c.source for c in notebook.cells
                    if c.cell_type == "markdown" and "*(Graded:" in c.source)

    assert "gives hints" in note(assignment_notebook("07", self_check=True))
    unchecked = note(assignment_notebook("07", self_check=False))
    assert "does not check them" in unchecked and "gives hints" not in unchecked
