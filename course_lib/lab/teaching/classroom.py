"""A classroom lab course for nbgrader, generated from the notebooks and the worked solutions.

``python -m course_lib classroom --out classroom`` (``make classroom``) writes an nbgrader
course folder — nbgrader, the classroom standard, does the releasing, collecting, grading and
feedback; this module only turns the course into its input::

    classroom/nbgrader_config.py              course id, the exchange, how answers are cleared
                                              and how autograde runs (in the sandbox)
    classroom/source/07_similarity_thresholds/
        07_similarity_thresholds.ipynb        the notebook, with nbgrader's cell marks
        07_similarity_thresholds.check.json   the release's self-check: salted hashes only,
                                              or none where its answers are few (below)
    classroom/grading/07_similarity_thresholds.json
                                              the grading key: the answers (teacher-only, 0600)

and runs ``nbgrader generate_assignment`` on each, which writes the student copies to
``classroom/release/``. In each notebook:

* **the exercise's stub cell** becomes nbgrader's *solution* cell: the stub, then the worked
  solution (the first ``# %%`` cell of ``solutions/NN_name.py``, still the single source
  of truth) between ``### BEGIN SOLUTION`` and ``### END SOLUTION``. The release keeps the
  stub (the answers at ``None``, so Run All still runs) and loses the solution;
* **the check cell** becomes a read-only *autograder* cell worth one point per answer. In
  the student's copy it runs the learner's ``check(...)`` against the hashed self-check
  beside it (see :mod:`course_lib.lab.teaching.answer_keys` for what hashing protects and what it
  does not), so it works **without** ``solutions/`` — where a brute force would not find
  the answers (:mod:`course_lib.lab.teaching.answer_space`); elsewhere it says that they are graded
  after submission, unless asked otherwise (:func:`build_classroom`). When nbgrader autogrades, the
  notebook runs in a sandbox and the grade is computed outside it
  (:mod:`course_lib.lab.teaching.grading`): no expected value is in any notebook, kernel or
  feedback;
* **the written answers** (:mod:`course_lib.lab.teaching.written_answers`) follow the check: for
  each question the exercise asks in words, a read-only question cell and a manually graded
  answer cell (2 points; in ``source/`` it holds the teacher's marking scheme, which the
  release replaces with "YOUR ANSWER HERE"), graded by hand in nbgrader's formgrader.

What it does not do: it deletes nothing. It writes only its own files (the three above per
assignment, and ``nbgrader_config.py`` when that is absent or still the one it wrote),
each atomically; what nbgrader keeps in the folder (the gradebook, submissions, feedback)
is never touched.

>>> [name for name in assignment_names() if name.startswith(("01", "12"))]
['01_evaluating_retrieval', '12_knowing_when_to_say_no']
"""

from __future__ import annotations

import ast
import os
import pwd
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat

from ...store.safe_folder import write_text_atomically
from . import exercises
from .answer_keys import KEY_SUFFIX, SolutionKey, no_self_check
from .answer_space import hash_rate, release_check
from .languages import WORDS, check_language, notebook_folder
from .written_answers import waiting_for_hand_grading, written_cells, written_note

# Notebook 00 is set-up (the teacher's `make data` does it for a server): not graded.
GRADED = ("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13")
COURSE_ID = "rag-recall"
CONFIG_MARK = "# Written by `python -m course_lib classroom`"
# The notebook's pointer to the worked solution, which a release does not carry.
SOLUTION_NOTE = {"en": re.compile(r"\*\(Solution:\s*`solutions/[^`]+`\.\)\*"),
                 "zh-CN": re.compile(r"\*（参考解答：\s*`solutions/[^`]+`。）\*")}


def solution_cells(solution: Path) -> tuple[str, list[str]]:
    """(title, code cells) of a worked solution: its docstring's first line, its ``# %%`` cells.

    >>> title, cells = solution_cells(exercises.solution_file("01"))
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


def _notebook(exercise: str, language: str = "en") -> Path:
    folder = notebook_folder(language)
    found = sorted(folder.glob(f"{exercise}_*.ipynb"))
    if not found:
        raise FileNotFoundError(f"no notebook for exercise {exercise!r} in {folder}: the "
                                f"classroom is built from a clone of the course")
    return found[0]


def _marks(grade_id: str, *, solution: bool, grade: bool, points: int = 0) -> dict[str, Any]:
    marks: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": grade,
                             "schema_version": 3, "solution": solution, "task": False}
    if grade:
        marks["points"] = points
    return {"nbgrader": marks}


def assignment_notebook(exercise: str, self_check: bool = True,
                        language: str = "en") -> nbformat.NotebookNode:
    """The nbgrader source notebook of ``exercise`` (see the module docstring), in
    ``language`` (:mod:`.languages`: the same cells, code and marks in either); its note on
    grading says whether the release's check checks (``self_check``) or not."""
    path = _notebook(exercise, language)
    words = WORDS[language]
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
            cell.source = cell.source.rstrip()
            cell.metadata.update(_marks(f"check-{exercise}", solution=False, grade=True,
                                        points=points))
        elif cell.cell_type == "markdown":
            note = words["graded"].format(
                points=points, written=written_note(exercise, language),
                checking=words["self-check" if self_check else "no-self-check"])
            cell.source = SOLUTION_NOTE[language].sub(note, cell.source)
    notebook.cells[checks[0] + 1:checks[0] + 1] = written_cells(exercise, language)
    notebook.metadata = {k: v for k, v in notebook.metadata.items()
                         if k in ("kernelspec", "language_info")}
    return notebook


def nbgrader_config(exchange: Path, grading: Path, cell_timeout: int = 600,
                    wall_seconds: int = 1800, memory_gib: int = 8) -> str:
    """The course's ``nbgrader_config.py``, with students' submissions going through
    ``exchange`` and autograde in the sandbox against the keys in ``grading``, with those
    limits."""
    return f'''{CONFIG_MARK}; it rewrites this file
# while this line is here. Delete the line to keep your own edits.
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput,
                                    DeduplicateIds, GetGrades, IgnorePattern, LimitOutput,
                                    OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from course_lib.lab.teaching.grading import RestoreCellMarks, SandboxedGrading

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = {COURSE_ID!r}
# The exchange students fetch from and submit to (students' configs name the same folder).
c.Exchange.root = {str(exchange)!r}
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE"}}
# Autograde runs each notebook in a sandbox and grades what it exports in nbgrader's own
# process, against the keys in grading/ (course_lib.lab.teaching.grading), instead of nbgrader's
# Execute: the student's code never runs where the grade is decided. Before that, each
# submitted cell gets back the nbgrader marks the teacher gave it (a changed mark would stop
# autograde for the whole class, or make a cell graded that was not).
c.Autograde.sanitize_preprocessors = [ClearOutput, RestoreCellMarks, DeduplicateIds,
                                      OverwriteKernelspec, OverwriteCells, CheckCellMetadata]
c.Autograde.autograde_preprocessors = [SandboxedGrading, IgnorePattern,
                                       ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
                                       AssignLatePenalties, CheckCellMetadata]
c.SandboxedGrading.key_folder = {str(grading)!r}
# A notebook's slowest cell takes about a minute on 2 cores; leave room for a busy server.
c.SandboxedGrading.cell_timeout = {cell_timeout}
c.SandboxedGrading.wall_seconds = {wall_seconds}
c.SandboxedGrading.memory_gib = {memory_gib}
c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor]
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
                    exchange: Path | None = None, self_check: bool | None = None,
                    language: str = "en") -> list[str]:
    """Write the nbgrader course for ``exercises_`` into ``out`` (see the module docstring);
    with ``release``, run ``nbgrader generate_assignment`` on each. Returns the assignments.
    ``language``: ``zh-CN`` releases the Chinese notebooks, with the same assignments, code,
    answers and points (:mod:`.languages`).

    ``exchange``: the folder submissions go through (default ``out/exchange``, for one
    machine; on a shared server a folder every user can write). A release without a
    self-check says that the answers are graded after submission and checks nothing (any
    working offline check can be queried until it says ✓): by default (``self_check=None``)
    those whose answer space one core searches within the threshold of
    :mod:`course_lib.lab.teaching.answer_space`, at the rate measured here; ``True``/``False``: all.
    Each worked solution and its wrong methods run once (minutes for all thirteen).
    """
    check_language(language)
    unknown = sorted(set(exercises_) - set(exercises.EXERCISES))
    if unknown:
        raise ValueError(f"unknown exercise(s) {', '.join(unknown)}; known: "
                         f"{', '.join(sorted(exercises.EXERCISES))}")
    out.mkdir(parents=True, exist_ok=True)
    config = out / "nbgrader_config.py"
    exchange = (exchange or out / "exchange").resolve()
    if not config.exists() or config.read_text(encoding="utf-8").startswith(CONFIG_MARK):
        write_text_atomically(config, nbgrader_config(exchange, (out / "grading").resolve()))
    else:
        print(f"kept {config}: it is not the one this command wrote")
    grading = out / "grading"  # the grading keys: the teacher's alone
    grading.mkdir(mode=0o700, exist_ok=True)
    if not exchange.exists():  # nbgrader wants every user able to write it
        exchange.mkdir(parents=True)
        exchange.chmod(0o777)
    names, rate = [], hash_rate() if self_check is None else 0.0
    for exercise in exercises_:
        checks, why = release_check(exercise, rate) if self_check is None else \
            (self_check, "asked for every assignment")
        key = SolutionKey(exercise, exercises.expected_answers(exercise),
                          exercises.known_mistakes(exercise),
                          exercises.EXERCISES[exercise].tolerance)
        notebook = assignment_notebook(exercise, self_check=checks, language=language)
        name = _notebook(exercise).stem
        folder = out / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomically(folder / f"{name}.ipynb", nbformat.writes(notebook) + "\n")
        write_text_atomically(folder / f"{name}{KEY_SUFFIX}", key.hashed().to_json()
                              if checks else no_self_check(exercise, key.names))
        write_text_atomically(grading / f"{name}.json", key.to_json())
        (grading / f"{name}.json").chmod(0o600)
        exercises.forget_solution(exercise)  # a solution's data can be large: one at a time
        names.append(name)
        print(f"source/{name}: {len(key.names)} points, {len(key.mistakes)} known wrong "
              f"methods; its release {'checks' if checks else 'does not check'} answers: "
              f"{why}", flush=True)
    if release:
        for name in names:
            nbgrader(["generate_assignment", name, "--force", "--log-level=WARN"], cwd=out)
            print(f"release/{name}: generated by nbgrader", flush=True)
    return names


def grade_assignment(course: Path, name: str) -> Path:
    """Everything a teacher runs after the deadline (``make grade ASSIGNMENT=name``):
    collect the submissions waiting in the exchange, autograde every submission of ``name``
    in ``course/submitted/`` (in the sandbox, :mod:`course_lib.lab.teaching.grading`), write the
    feedback, and export every grade to ``course/grades.csv`` (nbgrader's export columns,
    written atomically). Returns that file. Run it again once the written answers are graded
    by hand (formgrader): a submission already autograded is not run again, the feedback is
    written anew with the hand grades, and ``grades.csv`` counts them (until then, 0); it
    names the students whose written answers still wait."""
    if not (course / "source" / name).is_dir():
        raise FileNotFoundError(f"no assignment {name} in {course / 'source'}")
    inbound = _exchange(course) / COURSE_ID / "inbound"
    if inbound.is_dir() and any(inbound.glob(f"*+{name}+*")):
        students, refused = submitters(inbound, name)
        print("".join(line + "\n" for line in refused), end="")
        for student in students if refused else [None]:  # None: everyone, in one command
            only = [] if student is None else [f"--student={student}"]
            print(nbgrader(["collect", name, *only, "--update", "--log-level=WARN"],
                           cwd=course), end="")
    if not any((course / "submitted").glob(f"*/{name}")):
        raise FileNotFoundError(f"no submission of {name} in {course / 'submitted'} or the "
                                f"exchange {inbound}")
    print(nbgrader(["autograde", name, "--log-level=WARN"], cwd=course), end="")
    # --force: feedback written before the hand grading is written again with it.
    print(nbgrader(["generate_feedback", name, "--force", "--log-level=ERROR"], cwd=course),
          end="")
    grades = course / "grades.csv"
    partial = course / f".grades.csv.{os.getpid()}"
    print(nbgrader(["export", f"--to={partial.name}", "--log-level=WARN"], cwd=course), end="")
    os.replace(partial, grades)
    waiting = waiting_for_hand_grading(course, name)
    if waiting:
        print(f"written answers to grade by hand (formgrader, Manual Grading), then run this "
              f"again — grades.csv counts them 0 until then: {', '.join(waiting)}")
    return grades


def _exchange(course: Path) -> Path:
    """The exchange folder ``course/nbgrader_config.py`` names (``course/exchange`` if none)."""
    config = course / "nbgrader_config.py"
    found = re.search(r"^c\.Exchange\.root = (.+)$",
                      config.read_text(encoding="utf-8") if config.exists() else "", re.M)
    return Path(ast.literal_eval(found.group(1))) if found else course / "exchange"


def submitters(inbound: Path, name: str) -> tuple[list[str], list[str]]:
    """(the students whose submissions of ``name`` in the exchange's ``inbound`` folder may be
    collected, a line for each submission refused). A submission belongs to the user who
    owns its folder — on a shared server each student's own user writes it — never to the
    name inside it, which ``nbgrader submit --student=NAME`` lets anyone choose. A folder the
    grader's own user owns (one machine, where the teacher handles everything) is taken as
    named. A name with a refused submission is not collected at all (nbgrader would take its
    latest, which may be the forged one): the line says so, for the teacher to look.

    >>> submitters(Path("/nonexistent"), "07_similarity_thresholds")
    ([], [])
    """
    accepted: set[str] = set()
    refused: dict[str, list[str]] = {}
    for folder in sorted(inbound.glob(f"*+{name}+*")):
        student, owner = folder.name.split("+", 1)[0], folder.stat().st_uid
        try:
            owner_name = pwd.getpwuid(owner).pw_name
        except KeyError:
            owner_name = f"uid {owner}"
        if owner == os.getuid() or owner_name == student:
            accepted.add(student)
        else:
            refused.setdefault(student, []).append(
                f"refused {folder.name}: submitted by user {owner_name}, not by {student}")
    lines = [line for student in sorted(refused) for line in refused[student]]
    lines += [f"not collected: {student}, whose name another user submitted under (see above)"
              for student in sorted(accepted & refused.keys())]
    return sorted(accepted - refused.keys()), lines
