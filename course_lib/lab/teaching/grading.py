"""Grade a submitted notebook outside the student's kernel.

nbgrader's own way — hidden tests that run *in the student's kernel* and a grade read from
what that kernel printed — can be beaten from the answer cell: patch the function the test
calls, silence the output (no output is full credit to nbgrader), or print ``In`` to carry
the hidden test's expected values into the feedback. Here the student's code only ever
produces **data**:

1. the submitted notebook runs in a sandbox (:mod:`course_lib.lab.teaching.sandbox`: no access to
   the course's sources, other submissions, the gradebook or the network; time and memory
   limits), with one cell added at its end that prints the answers as JSON;
2. the grader — this process, which the student's code never runs in — reads that JSON
   back, accepts numbers, strings, booleans and lists of them (anything else is a wrong
   answer), and compares them with the **grading key**, a teacher-only file
   (``classroom/grading/NN_name.json``) that never enters the sandbox;
3. it writes the grade cell's outputs itself: one line per answer (right, or wrong with a
   known wrong method's hint) and the points, as nbgrader's partial credit.

So an always-equal object, a patched builtin or course function, silenced output, a
``sys.exit``, an ``os._exit`` or a crashed kernel cannot earn credit: at best they choose
the values exported, which the student could have typed anyway. What it does not do: tell
whether the student computed an answer or guessed it (see :mod:`course_lib.lab.teaching.answer_keys`
on self-checks that can be searched).

``SandboxedGrading`` is the nbgrader preprocessor that does this in ``nbgrader autograde``
(in place of nbgrader's ``Execute``); ``make grade ASSIGNMENT=NN_name`` runs it. Before it,
``RestoreCellMarks`` puts back the nbgrader marks a submission changed, so that no edit of a
cell's metadata can stop autograde or make a cell graded that the teacher did not mark. It
writes nothing into written answers (markdown cells): those are graded by hand.

>>> key = SolutionKey("99", {"share": 0.25}, {"You counted pairs.": {"share": 0.5}})
>>> grade_answers(key, {"share": 0.5}, status=None)
(0, ['✗ share — You counted pairs.'])
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from .answer_keys import SolutionKey, agree
from .sandbox import Limits, run_sandboxed

GRADE_MARK = "graded outside your notebook"
# The cell the graded run adds: each answer as plain data, or the name of its type.
_EXPORT = '''import json as _json

def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    if type(value) in (int, float, str, bool, type(None)):  # exactly: no subclass's __eq__
        return value
    return {"not plain data": type(value).__name__}

answers = {}
for name in NAMES:
    try:
        answers[name] = _plain(globals().get(name))
    except Exception as error:
        answers[name] = {"not plain data": type(error).__name__}
print(NONCE + _json.dumps(answers))'''


def export_cell(names: tuple[str, ...], nonce: str) -> str:
    """The source of the cell that prints ``names`` as JSON after ``nonce``."""
    return _EXPORT.replace("NAMES", repr(list(names))).replace("NONCE", repr(nonce))


def is_plain(value: Any) -> bool:
    """A number, string, boolean, ``None``, or a list of them: what an answer may be.

    >>> is_plain([0.5, "a", None]), is_plain({"x": 1}), is_plain(float("nan"))
    (True, False, True)
    """
    if isinstance(value, list):
        return all(is_plain(item) for item in value)
    return value is None or isinstance(value, (bool, int, float, str))


def grade_answers(key: SolutionKey, exported: dict[str, Any] | None,
                  status: str | None) -> tuple[int, list[str]]:
    """(points, feedback lines): one point per answer that agrees with ``key`` — computed
    here, from plain data only. ``status``: why the run ended early, if it did."""
    lines = [f"⚠ {status}"] if status else []
    exported = exported if isinstance(exported, dict) else {}
    values = {name: exported.get(name) for name in key.names}
    plain = {name: is_plain(value) for name, value in values.items()}
    hints = key.mistake_hints(values) if all(plain.values()) else []
    points = 0
    for name in key.names:
        if name not in exported:
            lines.append(f"✗ {name} — no answer came back from the run")
        elif not plain[name]:
            lines.append(f"✗ {name} — not a number, string or list of them")
        elif values[name] is None:
            lines.append(f"✗ {name} — not attempted")
        elif agree(values[name], key.expected[name], key.tolerance):
            points += 1
            lines.append(f"✓ {name}")
        else:
            lines.append(f"✗ {name}" + (f" — {hints[0]}" if hints else ""))
    return points, lines


@dataclass(frozen=True)
class GradedRun:
    """The sandboxed run of a notebook: the executed notebook (``None`` if none came back),
    the answers it exported (``None`` if it exported none), and why it ended early."""

    notebook: nbformat.NotebookNode | None
    exported: dict[str, Any] | None
    status: str | None


def _status(notebook: nbformat.NotebookNode | None, timed_out: bool, returncode: int,
            limits: Limits, stderr: str) -> str | None:
    errors = [] if notebook is None else [
        output.get("ename") for cell in notebook.cells if cell.cell_type == "code"
        for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    if timed_out:
        return f"timed out: the notebook ran longer than {limits.wall_seconds} s"
    if "MemoryError" in errors or "MemoryError" in stderr:
        return f"out of memory: the notebook needed more than {limits.memory_bytes // 2**30} GiB"
    if "KeyboardInterrupt" in errors:  # nbclient interrupts a cell at its time limit
        return "timed out: a cell ran longer than the time a cell may take"
    if "DeadKernelError" in stderr or notebook is None or returncode != 0:
        return "the notebook's kernel stopped before the answers were read"
    return None


def run_notebook(notebook: nbformat.NotebookNode, names: tuple[str, ...], folder: Path,
                 limits: Limits | None = None, cell_timeout: int = 600) -> GradedRun:
    """Run ``notebook`` (with ``folder``'s other files beside it) in the sandbox, with the
    export cell added; read back what it printed, as data. ``limits``: :class:`Limits`'s
    defaults unless given."""
    limits = limits or Limits()
    nonce = f"answers-{secrets.token_hex(8)}:"
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    notebook.cells.append(nbformat.v4.new_code_cell(export_cell(names, nonce)))
    with tempfile.TemporaryDirectory(prefix="graded-") as scratch_name:
        scratch = Path(scratch_name) / "work"
        scratch.mkdir()
        for item in folder.iterdir():  # the files the notebook reads (e.g. its self-check)
            if item.is_file() and not item.is_symlink() and item.suffix != ".ipynb":
                shutil.copyfile(item, scratch / item.name)
        nbformat.write(notebook, scratch / "submitted.ipynb")
        done = run_sandboxed(["python", "-m", "course_lib.lab.teaching.grading", "submitted.ipynb",
                              "executed.ipynb", "--cell-timeout", str(cell_timeout)],
                             scratch, limits, environment={
                                 "NBGRADER_EXECUTION": "autograde", "OMP_NUM_THREADS": "2",
                                 # Charts as plotly data: no headless Chromium (which the
                                 # sandbox does not give what it needs; a grade needs no picture)
                                 "COURSE_PLOTS": "interactive", "MPLBACKEND": "Agg"})
        try:
            executed = nbformat.read(scratch / "executed.ipynb", as_version=4)
        except (OSError, ValueError, KeyError, TypeError):
            executed = None
    exported = None
    if executed is not None and executed.cells and executed.cells[-1].source == \
            notebook.cells[-1].source:
        for output in executed.cells[-1].get("outputs", []):
            for line in str(output.get("text", "")).splitlines():
                if line.startswith(nonce):
                    try:
                        exported = json.loads(line[len(nonce):])
                    except ValueError:
                        exported = None
    return GradedRun(executed, exported,
                     _status(executed, done.timed_out, done.returncode, limits, done.stderr))


def _execute(source: Path, target: Path, cell_timeout: int) -> None:
    """Inside the sandbox: run the notebook, keep going past errors, write what ran."""
    from nbclient import NotebookClient

    notebook = nbformat.read(source, as_version=4)
    client = NotebookClient(notebook, timeout=cell_timeout, allow_errors=True,
                            interrupt_on_timeout=True, kernel_name="python3",
                            resources={"metadata": {"path": str(source.parent)}})
    try:
        client.execute()
    finally:  # a dead kernel's DeadKernelError then names itself on stderr
        nbformat.write(notebook, target)


class SandboxedGrading(NbGraderPreprocessor):
    """nbgrader autograde's execution step, run in the sandbox and graded here (see the
    module docstring). ``key_folder``: where the grading keys are (teacher-only)."""

    key_folder = Unicode("grading", help="folder of the grading keys").tag(config=True)
    cell_timeout = Integer(600, help="seconds a cell may run").tag(config=True)
    wall_seconds = Integer(1800, help="seconds a notebook may run").tag(config=True)
    cpu_seconds = Integer(3600, help="CPU seconds a notebook may use").tag(config=True)
    memory_gib = Integer(8, help="GiB of memory a notebook may use").tag(config=True)

    def preprocess(self, nb: nbformat.NotebookNode,
                   resources: dict[str, Any]) -> tuple[nbformat.NotebookNode, dict[str, Any]]:
        name = resources["unique_key"]
        key = SolutionKey.read(Path(self.key_folder) / f"{name}.json")
        limits = Limits(self.cpu_seconds, self.wall_seconds, self.memory_gib * 2**30)
        run = run_notebook(nb, key.names, Path(resources["metadata"]["path"]), limits,
                           self.cell_timeout)
        points, lines = grade_answers(key, run.exported, run.status)
        ran = run.notebook.cells if run.notebook is not None else []
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            marks = cell.metadata.get("nbgrader", {})
            if marks.get("grade"):
                cell.outputs = [
                    nbformat.v4.new_output("stream", name="stdout",
                                           text=f"{GRADE_MARK}:\n" + "\n".join(lines) + "\n"),
                    nbformat.v4.new_output("execute_result", data={"text/plain": str(points)},
                                           execution_count=None)]
            elif i < len(ran) and ran[i].get("cell_type") == "code":
                # The student's own outputs, for the feedback: data, never a grade.
                cell.outputs = [nbformat.from_dict(output) for output in ran[i].get("outputs", [])
                                if isinstance(output, dict)]
        return nb, resources


class RestoreCellMarks(NbGraderPreprocessor):
    """Autograde's first check of a submission: every cell's nbgrader marks as the teacher
    made them, from the gradebook.

    nbgrader's ``OverwriteCells`` puts back a marked cell's type, lock, points and (when
    locked) source, but not whether it is graded or an answer; a submission that changes
    those — a written answer made "not a solution", marks copied onto another cell, marks
    without an id — then fails nbgrader's metadata check, and that one failure stops
    ``nbgrader autograde`` (and ``make grade``) for the whole class. Here a cell whose id the
    gradebook knows gets the gradebook's marks for that id, any other cell none; a graded cell
    the submission lacks (deleted) scores 0, as nbgrader scores a missing notebook, instead of
    waiting for a hand grade with no cell to give it. Marks never earn points here: the
    points of the check are :class:`SandboxedGrading`'s, and a written answer's the teacher's.
    """

    def preprocess(self, nb: nbformat.NotebookNode,
                   resources: dict[str, Any]) -> tuple[nbformat.NotebookNode, dict[str, Any]]:
        from nbgrader.api import Gradebook

        ids = resources["nbgrader"]
        with Gradebook(ids["db_url"]) as gradebook:
            source = gradebook.find_notebook(ids["notebook"], ids["assignment"])
            cells = {cell.name: cell for cell in source.source_cells}
            points = {cell.name: cell.max_score
                      for cell in [*source.grade_cells, *source.task_cells]}
            answers = {cell.name for cell in source.solution_cells}
            tasks = {cell.name for cell in source.task_cells}
            present = set()
            for cell in nb.cells:
                marks = cell.metadata.get("nbgrader")
                name = marks.get("grade_id") if isinstance(marks, dict) else None
                if not isinstance(name, str) or name not in cells:
                    cell.metadata.pop("nbgrader", None)
                    continue
                present.add(name)
                restored = {"grade": name in points and name not in tasks,
                            "grade_id": name, "locked": cells[name].locked,
                            "schema_version": 3, "solution": name in answers,
                            "task": name in tasks, "checksum": cells[name].checksum,
                            "cell_type": cells[name].cell_type}
                if name in points:
                    restored["points"] = points[name]
                cell.metadata["nbgrader"] = restored
            for cell in source.grade_cells:
                if cell.name not in present:
                    grade = gradebook.find_grade(cell.name, ids["notebook"], ids["assignment"],
                                                 ids["student"])
                    grade.auto_score, grade.needs_manual_grade = 0.0, False
            gradebook.db.commit()
        return nb, resources


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="(inside the grading sandbox) run a notebook")
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--cell-timeout", type=int, default=600)
    arguments = parser.parse_args(argv)
    _execute(arguments.source, arguments.target, arguments.cell_timeout)


if __name__ == "__main__":
    main()
