"""The written answers of a classroom lab: questions answered in words, graded by the teacher.

A lab's check grades its numbers; what they mean — why a setting is chosen on trial and
reported on dev, what an interval allows one to write — is asked in words after the check
(:class:`~.exercise_catalog.Written`, each worth its points) and graded by hand in
nbgrader's formgrader. :func:`written_cells` makes two cells per question for the classroom's
source notebook (:mod:`course_lib.lab.teaching.classroom` puts them right after the check cell):

* the **question**: read-only markdown (nbgrader's *locked* cell), kept in the release;
* the **answer**: nbgrader's *manually graded answer* (``solution`` and ``grade``, not locked).
  In ``source/`` it holds the marking scheme — the ``Marking name:`` paragraph of the worked
  solution's docstring, the teacher's like the solution — which nbgrader's release replaces
  with "YOUR ANSWER HERE", so neither the release nor the gradebook holds it. Autograde scores
  the answer 0 if it comes back as released and otherwise leaves it to the teacher; the
  points of the check are computed as before (:mod:`course_lib.lab.teaching.grading`, which also
  restores the cells' marks a submission may have changed).

>>> [cell.metadata["nbgrader"]["grade_id"] for cell in written_cells("07")]
['written-07-trial-dev-question', 'written-07-trial-dev']
>>> written_points("07"), written_points("12"), written_points("00")
(2, 4, 0)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat

from .exercise_catalog import EXERCISES
from .exercises import solution_prose
from .languages import COUNTS, WORDS, solution_in, written_question

# "Marking name:" in a worked solution, "评分标准 name：" in its Chinese edition.
MARKING = re.compile(r"(?:Marking|评分标准) (?P<name>[a-z0-9-]+)[:：]\n(?P<scheme>.+)", re.S)


def marking_schemes(solution: Path) -> dict[str, str]:
    """``{name: marking scheme}``: the worked solution's ``Marking name:`` paragraphs (``评分标准
    name：`` in its Chinese edition), read without running it (one paragraph each: no blank
    line inside).

    >>> schemes = marking_schemes(solution_in("07", "en"))
    >>> list(schemes), schemes["trial-dev"].startswith("- 2 points:")
    (['trial-dev'], True)
    """
    found = (MARKING.fullmatch(part.strip()) for part in solution_prose(solution).split("\n\n"))
    return {match["name"]: match["scheme"] for match in found if match}


def written_points(exercise: str) -> int:
    """What the written answers of ``exercise`` are worth together."""
    return sum(item.points for item in EXERCISES[exercise].written)


def _cell(source: str, grade_id: str, *, answer: bool, points: int) -> nbformat.NotebookNode:
    marks: dict[str, Any] = {"grade": answer, "grade_id": grade_id, "locked": not answer,
                             "schema_version": 3, "solution": answer, "task": False}
    if answer:
        marks["points"] = points
    return nbformat.v4.new_markdown_cell(source, id=grade_id, metadata={"nbgrader": marks})


def written_cells(exercise: str, language: str = "en") -> list[nbformat.NotebookNode]:
    """The question and answer cells of each written item of ``exercise``, in order, with
    nbgrader's marks; the answers hold the marking schemes (see the module docstring), all in
    ``language`` (:mod:`.languages`). A question without a marking scheme, or a scheme
    without a question, is an error."""
    items = EXERCISES[exercise].written
    solution = solution_in(exercise, language)
    schemes = marking_schemes(solution)
    unmatched = sorted(set(schemes) ^ {item.name for item in items})
    if unmatched:
        raise ValueError(f"{solution.name}: the written questions of {exercise} "
                         f"({', '.join(item.name for item in items) or 'none'}) and its "
                         f"'Marking name:' paragraphs differ on {', '.join(unmatched)}")
    words, cells = WORDS[language], []
    for n, item in enumerate(items, start=1):
        grade_id = f"written-{exercise}-{item.name}"
        number = words["number"].format(n=n, total=len(items)) if len(items) > 1 else ""
        cells.append(_cell(words["question"].format(
            number=number, points=item.points,
            question=written_question(exercise, item.name, language)),
            f"{grade_id}-question", answer=False, points=0))
        cells.append(_cell(words["scheme"].format(points=item.points,
                                                  scheme=schemes[item.name]),
                           grade_id, answer=True, points=item.points))
    return cells


def written_note(exercise: str, language: str = "en") -> str:
    """What the written answers add to the exercise's "(Graded: N points, one per answer…)"
    line in a classroom notebook ("" if it has none).

    >>> written_note("12")
    ', and 4 points for the two written answers after the check, graded by your teacher'
    >>> written_note("12", "zh-CN")
    '；另有 4 分给检查之后的两道书面回答，由老师评分'
    """
    items = EXERCISES[exercise].written
    if not items:
        return ""
    counts = COUNTS[language]
    count = counts[len(items)] if len(items) < len(counts) else str(len(items))
    return WORDS[language]["written-note"].format(points=written_points(exercise), count=count,
                                                  s="s" if len(items) > 1 else "")


def waiting_for_hand_grading(course: Path, assignment: str) -> list[str]:
    """The students whose submission of ``assignment`` has a written answer the teacher has not
    graded yet (formgrader's Manual Grading), from the course's ``gradebook.db``."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{(course / 'gradebook.db').resolve()}") as gradebook:
        return sorted(submission.student_id for submission
                      in gradebook.assignment_submissions(assignment)
                      if submission.needs_manual_grade)
