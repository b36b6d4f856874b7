"""A classroom lab course for nbgrader, generated from the notebooks and the worked solutions.

``python -m course_lib classroom --out classroom`` (``make classroom``) writes an nbgrader
course folder — nbgrader, the classroom standard, does the releasing, collecting, grading and
feedback; this module only turns the course into its input::

    classroom/nbgrader_config.py              course id, the exchange, how answers are cleared
    classroom/source/07_similarity_thresholds/
        07_similarity_thresholds.ipynb        the notebook, with nbgrader's cell marks
        07_similarity_thresholds.check.json   the release's answer key: salted hashes only

and runs ``nbgrader generate_assignment`` on each, which writes the student copies to
``classroom/release/``. In each notebook:

* **the exercise's stub cell** becomes nbgrader's *solution* cell: the stub, then the worked
  solution (the first ``# %%`` cell of ``solutions/NN_name.py``, still the single source
  of truth) between ``### BEGIN SOLUTION`` and ``### END SOLUTION``. The release keeps the
  stub (the answers at ``None``, so Run All still runs) and loses the solution;
* **the check cell** becomes a read-only *autograder test* worth one point per answer. It
  runs the learner's ``check(...)`` (the hint printed is what the feedback shows), then, in
  nbgrader's **hidden tests**, :func:`course_lib.lab.exercises.score` against the expected
  values written out as numbers. nbgrader removes hidden tests from the release and puts
  them back when it grades, and the feedback here is configured to remove them again: the
  values never reach a student. The release's own check compares with the hashed key
  beside it, so it works **without** ``solutions/`` (see :mod:`course_lib.lab.answer_keys`
  for what hashing protects and what it does not — why the grade rests on hidden tests).

What it does not do: it deletes nothing. It writes only its own files (the two above per
assignment, and ``nbgrader_config.py`` when that is absent or still the one it wrote),
each atomically; what nbgrader keeps in the folder (the gradebook, submissions, feedback)
is never touched.

>>> [name for name in assignment_names() if name.startswith(("01", "12"))]
['01_evaluating_retrieval', '12_knowing_when_to_say_no']
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat

from .._support.places import COURSE_ROOT
from ..store.safe_folder import write_text_atomically
from . import exercises
from .answer_keys import KEY_SUFFIX, SolutionKey, no_self_check

# Notebook 00 is set-up (the teacher's `make data` does it for a server): not graded.
GRADED = ("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12")
COURSE_ID = "rag-recall"
CONFIG_MARK = "# Written by `python -m course_lib classroom`"
# The notebook's pointer to the worked solution, which a release does not carry.
SOLUTION_NOTE = re.compile(r"\*\(Solution:\s*`solutions/[^`]+`\.\)\*")


def solution_cells(solution: Path) -> tuple[str, list[str]]:
    """(title, code cells) of a worked solution: its docstring's first line, its ``# %%`` cells.

    >>> title, cells = solution_cells(COURSE_ROOT / "solutions" / "01_evaluating_retrieval.py")
    >>> title, "recall_10" in cells[0]
    ('01 Evaluating retrieval', True)
    """
    source = solution.read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source)) or solution.stem
    title = docstring.splitlines()[0].removeprefix("Worked solution: ").rstrip(".")
    body = source.split('"""', 2)[2] if source.lstrip().startswith('"""') else source
    cells = [cell.strip("\n") for cell in body.split("# %%") if cell.strip()]
    return title, cells


def assignment_names(exercises_: Sequence[str] = GRADED) -> list[str]:
    """The assignment (and notebook) names of these exercises, in order."""
    return [_notebook(exercise).stem for exercise in exercises_]


def _notebook(exercise: str) -> Path:
    found = sorted((COURSE_ROOT / "notebooks").glob(f"{exercise}_*.ipynb"))
    if not found:
        raise FileNotFoundError(f"no notebook for exercise {exercise!r} in "
                                f"{COURSE_ROOT / 'notebooks'}: the classroom is built from a "
                                f"clone of the course")
    return found[0]


def _plain(value: Any) -> Any:
    """``value`` as Python literals (numpy scalars to numbers), for the hidden test's source."""
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(item) for item in value)
    return value.item() if hasattr(value, "item") else value


def _grading(exercise: str, key: SolutionKey) -> str:
    """The hidden test: the score against the expected values, as literals."""
    names = exercises.EXERCISES[exercise].answers
    expected = "{" + ", ".join(f"{name!r}: {_plain(key.expected[name])!r}"
                               for name in names) + "}"
    given = ", ".join(f"{name}={name}" for name in names)
    return (f"### BEGIN HIDDEN TESTS\nfrom course_lib.lab.exercises import score\n\n"
            f"score({exercise!r}, {expected}, {given})\n### END HIDDEN TESTS")


def _marks(grade_id: str, *, solution: bool, grade: bool, points: int = 0) -> dict[str, Any]:
    marks: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": grade,
                             "schema_version": 3, "solution": solution, "task": False}
    if grade:
        marks["points"] = points
    return {"nbgrader": marks}


def assignment_notebook(exercise: str, key: SolutionKey) -> nbformat.NotebookNode:
    """The nbgrader source notebook of ``exercise`` (see the module docstring)."""
    path = _notebook(exercise)
    notebook = nbformat.read(path, as_version=4)
    code = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    checks = [i for i in code if f'check("{exercise}"' in notebook.cells[i].source]
    if len(checks) != 1:
        raise ValueError(f"{path.name}: expected one cell calling check({exercise!r}, ...), "
                         f"found {len(checks)}")
    stub = max(i for i in code if i < checks[0])
    if "YOUR CODE HERE" not in notebook.cells[stub].source:
        raise ValueError(f"{path.name}: the code cell before the check has no "
                         f"'YOUR CODE HERE' stub")
    _, solution = solution_cells(exercises.solution_file(exercise))
    points = len(exercises.EXERCISES[exercise].answers)
    for i, cell in enumerate(notebook.cells):
        cell.metadata.pop("execution", None)  # the committed run's timestamps
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if i == stub:
            # nbgrader's own "# YOUR CODE HERE" replaces the solution in the release.
            kept = [line for line in cell.source.rstrip().splitlines()
                    if "YOUR CODE HERE" not in line]
            cell.source = "\n".join([*kept, "### BEGIN SOLUTION", solution[0],
                                      "### END SOLUTION"])
            cell.metadata.update(_marks(f"answer-{exercise}", solution=True, grade=False))
        elif i == checks[0]:
            cell.source = f"{cell.source.rstrip()}\n{_grading(exercise, key)}"
            cell.metadata.update(_marks(f"check-{exercise}", solution=False, grade=True,
                                        points=points))
        elif cell.cell_type == "markdown":
            cell.source = SOLUTION_NOTE.sub(
                f"*(Graded: {points} points, one per answer. The check below says whether "
                f"your answers are right and gives hints; the grade is computed after you "
                f"submit.)*", cell.source)
    notebook.metadata = {k: v for k, v in notebook.metadata.items()
                         if k in ("kernelspec", "language_info")}
    return notebook


def nbgrader_config(exchange: Path) -> str:
    """The course's ``nbgrader_config.py``, with students' submissions going through
    ``exchange``."""
    return f'''{CONFIG_MARK}; it rewrites this file
# while this line is here. Delete the line to keep your own edits.
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = {COURSE_ID!r}
# The exchange students fetch from and submit to (students' configs name the same folder).
c.Exchange.root = {str(exchange)!r}
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE"}}
# A notebook's slowest cell takes about a minute on 2 cores; leave room for a busy server.
c.Execute.timeout = 600
# Feedback shows the student's outputs and hints, not the hidden tests' expected values.
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
'''


def nbgrader(arguments: Sequence[str], cwd: Path, **environment: str) -> str:
    """Run ``nbgrader ARGUMENTS`` in ``cwd`` with this Python; its output (an error if it fails).

    nbgrader starts ``alembic`` by name when it creates a gradebook, so this Python's
    scripts folder goes first on ``PATH`` (a virtual environment need not be activated).
    """
    scripts = str(Path(sys.executable).parent)
    env = {**os.environ, **environment,
           "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")])}
    done = subprocess.run([sys.executable, "-m", "nbgrader", *arguments], cwd=cwd, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(arguments)} failed in {cwd}:\n"
                           f"{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def build_classroom(out: Path, exercises_: Sequence[str] = GRADED, *, release: bool = True,
                    exchange: Path | None = None, self_check: bool = True) -> list[str]:
    """Write the nbgrader course for ``exercises_`` into ``out`` (see the module docstring);
    with ``release``, run ``nbgrader generate_assignment`` on each. Returns the assignments.

    ``exchange``: the folder submissions go through (default ``out/exchange``, for one
    machine; on a shared server a folder every user can write). ``self_check=False``: the
    release's checks say that the answers are graded after submission and check nothing
    (for an exam: any working offline check can be queried until it says ✓).
    Each worked solution and its wrong methods run once (minutes for all twelve).
    """
    unknown = sorted(set(exercises_) - set(exercises.EXERCISES))
    if unknown:
        raise ValueError(f"unknown exercise(s) {', '.join(unknown)}; known: "
                         f"{', '.join(sorted(exercises.EXERCISES))}")
    out.mkdir(parents=True, exist_ok=True)
    config = out / "nbgrader_config.py"
    exchange = (exchange or out / "exchange").resolve()
    if not config.exists() or config.read_text(encoding="utf-8").startswith(CONFIG_MARK):
        write_text_atomically(config, nbgrader_config(exchange))
    else:
        print(f"kept {config}: it is not the one this command wrote")
    if not exchange.exists():  # nbgrader wants every user able to write it
        exchange.mkdir(parents=True)
        exchange.chmod(0o777)
    names = []
    for exercise in exercises_:
        key = SolutionKey(exercise, exercises.expected_answers(exercise),
                          exercises.known_mistakes(exercise),
                          exercises.EXERCISES[exercise].tolerance)
        notebook = assignment_notebook(exercise, key)
        name = _notebook(exercise).stem
        folder = out / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomically(folder / f"{name}.ipynb", nbformat.writes(notebook) + "\n")
        write_text_atomically(folder / f"{name}{KEY_SUFFIX}", key.hashed().to_json()
                              if self_check else no_self_check(exercise, key.names))
        exercises.forget_solution(exercise)  # a solution's data can be large: one at a time
        names.append(name)
        print(f"source/{name}: {len(key.names)} points, {len(key.mistakes)} known wrong "
              f"methods", flush=True)
    if release:
        for name in names:
            nbgrader(["generate_assignment", name, "--force", "--log-level=WARN"], cwd=out)
            print(f"release/{name}: generated by nbgrader", flush=True)
    return names
