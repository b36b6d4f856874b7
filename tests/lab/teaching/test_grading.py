"""Grading outside the student's kernel (course_lib.lab.teaching.grading) and the sandbox it runs
the student's notebook in (course_lib.lab.teaching.sandbox): each way a submission can end or
attack, on a one-answer notebook. The whole nbgrader flow is in test_classroom.py.

Each run starts a kernel in the sandbox: a few seconds each.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.teaching import grading, sandbox
from course_lib.lab.teaching.answer_keys import SolutionKey
from course_lib.lab.teaching.grading import grade_answers, run_notebook
from course_lib.lab.teaching.sandbox import Limits, SandboxRun

KEY = SolutionKey("99", {"answer": 42}, {"You added instead of multiplying.": {"answer": 13}})
QUICK = Limits(cpu_seconds=120, wall_seconds=120, memory_bytes=4 * 2**30)


def _notebook(*cells: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


def _grade(tmp_path: Path, *cells: str, limits: Limits = QUICK,
           cell_timeout: int = 60) -> tuple[int, list[str], grading.GradedRun]:
    run = run_notebook(_notebook(*cells), KEY.names, tmp_path, limits, cell_timeout)
    points, lines = grade_answers(KEY, run.exported, run.status)
    return points, lines, run


def test_the_work_earns_the_point_and_a_known_mistake_gets_its_hint(tmp_path):
    assert _grade(tmp_path, "answer = 6 * 7")[:2] == (1, ["✓ answer"])
    assert _grade(tmp_path, "answer = 6 + 7")[:2] == (
        0, ["✗ answer — You added instead of multiplying."])
    assert _grade(tmp_path, "import numpy as np\nanswer = np.int64(42)")[0] == 1
    assert _grade(tmp_path, "answer = None")[:2] == (0, ["✗ answer — not attempted"])


def test_an_always_equal_answer_is_not_plain_data(tmp_path):
    code = ("class Yes(int):\n    def __eq__(self, other): return True\n"
            "    __hash__ = int.__hash__\nanswer = Yes(1)")
    points, lines, _ = _grade(tmp_path, code)
    assert points == 0 and "not a number, string or list" in lines[0]


@pytest.mark.parametrize("ending, status", [
    ("import os\nos._exit(0)", "kernel stopped"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "kernel stopped"),
])
def test_a_kernel_that_stops_gives_no_credit(tmp_path, ending, status):
    points, lines, run = _grade(tmp_path, "answer = 42", ending)
    assert points == 0 and run.exported is None
    assert status in lines[0] and lines[1] == "✗ answer — no answer came back from the run"


def test_sys_exit_is_an_error_in_a_cell_and_the_rest_is_graded(tmp_path):
    points, lines, run = _grade(tmp_path, "answer = 6 * 7\nimport sys\nsys.exit(0)")
    assert points == 1 and run.status is None  # IPython turns SystemExit into an error


def test_an_endless_cell_times_out_and_the_others_are_graded(tmp_path):
    points, lines, _ = _grade(tmp_path, "answer = 42", "while True:\n    pass",
                              cell_timeout=5)
    assert points == 1 and lines[0].startswith("⚠ timed out: a cell ran longer")


def test_a_notebook_over_its_wall_time_is_stopped(tmp_path):
    limits = Limits(cpu_seconds=120, wall_seconds=20, memory_bytes=4 * 2**30)
    points, lines, run = _grade(tmp_path, "answer = 42", "while True:\n    pass",
                                limits=limits, cell_timeout=600)
    assert points == 0 and lines[0] == "⚠ timed out: the notebook ran longer than 20 s"


def test_a_memory_bomb_ends_in_out_of_memory_and_the_rest_is_graded(tmp_path):
    points, lines, _ = _grade(tmp_path, "answer = 42", "hog = bytearray(30 * 2**30)")
    assert points == 1 and lines[0] == "⚠ out of memory: the notebook needed more than 4 GiB"


READ_THE_KEY = """import json
try:
    answer = json.load(open(KEY_PATH))["expected"]["answer"]
except OSError as error:
    print("blocked:", type(error).__name__)
for path in ROOTS:
    try:
        print("listed", path, len(__import__("os").listdir(path)))
    except OSError as error:
        print("blocked", path, type(error).__name__)
try:
    open(WRITE_TO, "w").write("x")
    print("wrote")
except OSError as error:
    print("could not write:", type(error).__name__)
"""


def _attack(tmp_path: Path) -> str:
    teacher = tmp_path / "teacher"
    (teacher / "grading").mkdir(parents=True)
    key_path = teacher / "grading" / "99.json"
    key_path.write_text(json.dumps({"exercise": "99", "expected": {"answer": 42}}))
    roots = [str(teacher), str(sandbox.COURSE_ROOT / ".git"),
             str(sandbox.COURSE_ROOT / "solutions")]
    return (READ_THE_KEY.replace("KEY_PATH", repr(str(key_path)))
            .replace("ROOTS", repr(roots)).replace("WRITE_TO", repr(str(teacher / "planted"))))


def _no_sandbox(argv, scratch, limits=QUICK, environment=None, readable=None):
    """run_sandboxed without the sandbox: the same command, as the teacher's user."""
    argv = [sys.executable if part == "python" else part for part in argv]
    done = subprocess.run(argv, cwd=scratch, capture_output=True, text=True,
                          timeout=limits.wall_seconds)
    return SandboxRun(done.returncode, done.stdout, done.stderr, False)


def test_without_the_sandbox_a_notebook_reads_the_key_and_with_it_cannot(tmp_path, monkeypatch):
    """The attack the sandbox stops, shown succeeding once without it."""
    folder = tmp_path / "submission"
    folder.mkdir()
    attack = _attack(tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(grading, "run_sandboxed", _no_sandbox)
        points, _, run = _grade(folder, attack)
    printed = "".join(o.get("text", "") for o in run.notebook.cells[0].outputs)
    assert points == 1 and "wrote" in printed and "listed" in printed  # the key was read
    (tmp_path / "teacher" / "planted").unlink()

    points, lines, run = _grade(folder, attack)
    printed = "".join(o.get("text", "") for o in run.notebook.cells[0].outputs)
    assert points == 0 and "blocked: FileNotFoundError" in printed
    assert "listed" not in printed and "could not write" in printed
    assert not (tmp_path / "teacher" / "planted").exists()


def test_the_sandbox_has_no_network_and_runs_as_nobody(tmp_path):
    code = ("import os, socket\nprint(os.getuid())\n"
            "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\n"
            "    print('connected')\nexcept OSError as error:\n    print('no network')")
    done = sandbox.run_sandboxed(["python", "-c", code], tmp_path, QUICK)
    assert done.stdout.split() == [str(sandbox.NOBODY), "no", "network"], done.stderr


def test_limits_refuse_what_is_not_a_positive_integer():
    with pytest.raises(ValueError, match=r"Limits\(wall_seconds=...\) must be a positive"):
        Limits(wall_seconds=0)


def test_charts_and_the_sample_data_work_in_the_sandbox(tmp_path):
    """A lab draws charts (plotly's exporter would start Chromium, which hangs in the
    sandbox: the graded run keeps charts as data) and reads the course's sample data."""
    points, _, run = _grade(
        tmp_path, "from course_lib import load_sample\nkb = load_sample()\nanswer = 42",
        "import plotly.graph_objects as go\nfrom course_lib.lab.show.plots import show\n"
        "show(go.Figure(go.Bar(y=[1, 2])))", cell_timeout=60)
    errors = [o for cell in run.notebook.cells for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert points == 1 and run.status is None and not errors, errors
