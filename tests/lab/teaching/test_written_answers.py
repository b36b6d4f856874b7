"""The written answers of a classroom lab (course_lib.lab.teaching.written_answers), called
directly — test_classroom.py sees them inside built assignments and a whole nbgrader run:
written_cells makes two cells per question, the question locked read-only, the answer
manually graded and worth the question's points, the marking scheme only in the answer's
source; a question and its solution's ``Marking name:`` paragraphs must match (a worked
solution in a temporary COURSE_SOLUTIONS folder); marking_schemes reads without running;
written_note's wording; and waiting_for_hand_grading on a small gradebook built here.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.teaching import exercises
from course_lib.lab.teaching.exercise_catalog import EXERCISES
from course_lib.lab.teaching.written_answers import (
    marking_schemes,
    waiting_for_hand_grading,
    written_cells,
    written_note,
    written_points,
)

WITH_WRITTEN = sorted(e for e in EXERCISES if EXERCISES[e].written)


@pytest.mark.parametrize("exercise", WITH_WRITTEN)
def test_two_cells_per_question_locked_question_then_graded_answer(exercise):
    items = EXERCISES[exercise].written
    cells = written_cells(exercise)
    assert len(cells) == 2 * len(items)
    schemes = marking_schemes(exercises.solution_file(exercise))
    for number, (item, question, answer) in enumerate(
            zip(items, cells[::2], cells[1::2], strict=True), start=1):
        grade_id = f"written-{exercise}-{item.name}"
        assert question.cell_type == answer.cell_type == "markdown"
        assert (question.id, answer.id) == (f"{grade_id}-question", grade_id)
        asked, graded = question.metadata["nbgrader"], answer.metadata["nbgrader"]
        assert asked["locked"] and not asked["grade"] and not asked["solution"]
        assert "points" not in asked  # the question is worth nothing itself
        assert graded["grade"] and graded["solution"] and not graded["locked"]
        assert graded["points"] == item.points and not graded["task"]
        assert asked["grade_id"] == question.id and graded["grade_id"] == answer.id
        # the question names its points and its place; the scheme is only in the answer
        assert item.question in question.source and f"({item.points} points" in question.source
        if len(items) > 1:
            assert question.source.startswith(f"**Written answer {number} of {len(items)}**")
        else:
            assert question.source.startswith("**Written answer** ")
        assert answer.source.endswith(schemes[item.name])
        assert schemes[item.name] not in question.source
        assert "YOUR ANSWER HERE" in answer.source  # says what the release holds instead
    # the cells make a valid notebook with unique ids
    notebook = nbformat.v4.new_notebook(cells=cells)
    nbformat.validate(notebook)
    assert len({cell.id for cell in cells}) == len(cells)
    assert sum(c.metadata["nbgrader"].get("points", 0) for c in cells) == written_points(exercise)


def test_an_exercise_without_written_questions_gets_no_cells_and_no_note():
    (bare,) = [e for e in EXERCISES if not EXERCISES[e].written]
    assert written_cells(bare) == [] and written_note(bare) == "" and written_points(bare) == 0


def test_the_note_counts_the_answers_in_words():
    one = next(e for e in WITH_WRITTEN if len(EXERCISES[e].written) == 1)
    assert written_note(one) == (", and 2 points for the one written answer after the check, "
                                 "graded by your teacher")
    assert "answers" not in written_note(one)


def _solution(folder: Path, exercise: str, docstring: str) -> None:
    (folder / f"{exercise}_practice.py").write_text(
        f'"""{docstring}"""\n\nraise SystemExit("a solution is read, never run here")\n',
        encoding="utf-8")


def test_marking_schemes_are_read_without_running_the_solution(tmp_path):
    _solution(tmp_path, "07", "The worked solution.\n\nMethod: do it.\n\n"
              "Marking trial-dev:\n- 2 points: chosen on trial, reported on dev.\n"
              "- 1 point: one of the two.\n\nMarking not a name:\nignored\n\n"
              "Marking other-one:\nfirst line\n\nafter a blank line: not the scheme's")
    schemes = marking_schemes(tmp_path / "07_practice.py")
    assert schemes == {"trial-dev": "- 2 points: chosen on trial, reported on dev.\n"
                                    "- 1 point: one of the two.",
                       "other-one": "first line"}


def test_a_question_and_its_solutions_marking_paragraphs_must_match(tmp_path, monkeypatch):
    monkeypatch.setenv(exercises.SOLUTIONS_ENV, str(tmp_path))
    _solution(tmp_path, "07", "Marking trial-dev:\n- 2 points: SCHEME-07.")
    (question, answer) = written_cells("07")
    assert answer.source.endswith("- 2 points: SCHEME-07.") and "SCHEME" not in question.source
    _solution(tmp_path, "07", "Marking trial-dev:\n- 2 points.\n\nMarking extra:\n- 1 point.")
    with pytest.raises(ValueError, match=r"07_practice\.py: .* differ on extra"):
        written_cells("07")
    _solution(tmp_path, "07", "No marking scheme at all.")
    with pytest.raises(ValueError, match="differ on trial-dev"):
        written_cells("07")
    _solution(tmp_path, "00", "Marking surprise:\n- 2 points.")
    with pytest.raises(ValueError, match=r"questions of 00 \(none\) .* differ on surprise"):
        written_cells("00")


def test_waiting_for_hand_grading_names_who_still_waits(tmp_path, monkeypatch):
    """A gradebook with one written answer: two students wait, one has been graded by hand,
    another assignment's wait does not count."""
    import nbgrader.api
    from nbgrader.api import Gradebook

    # A new gradebook asks the `alembic` program for its schema version: a stamp of no
    # use here, and seconds of a subprocess.
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", lambda: "test")
    course = tmp_path / "course"
    course.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's notes on nbgrader's own sessions
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            for assignment in ("07_thresholds", "12_no"):
                gradebook.add_assignment(assignment)
                gradebook.update_or_create_notebook(assignment, assignment)
                gradebook.update_or_create_grade_cell(f"written-{assignment[:2]}", assignment,
                                                      assignment, max_score=2,
                                                      cell_type="markdown")
                gradebook.update_or_create_solution_cell(f"written-{assignment[:2]}",
                                                         assignment, assignment)
            for student in ("zoe", "ada", "ben", "cy"):
                gradebook.add_student(student)
            for student in ("zoe", "ada", "ben"):
                gradebook.add_submission("07_thresholds", student)
            gradebook.add_submission("12_no", "cy")
            for student in ("zoe", "ada", "ben"):
                assert gradebook.find_grade("written-07", "07_thresholds", "07_thresholds",
                                            student).needs_manual_grade
            graded = gradebook.find_grade("written-07", "07_thresholds", "07_thresholds", "ben")
            graded.manual_score, graded.needs_manual_grade = 2.0, False
            gradebook.db.commit()
        assert waiting_for_hand_grading(course, "07_thresholds") == ["ada", "zoe"]  # sorted
        assert waiting_for_hand_grading(course, "12_no") == ["cy"]
        monkeypatch.chdir(tmp_path)
        assert waiting_for_hand_grading(Path("course"), "07_thresholds") == ["ada", "zoe"]
