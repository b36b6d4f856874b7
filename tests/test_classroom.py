"""The classroom flow, with the real nbgrader: generate the course, release it, let three
students fetch and submit, collect, autograde, write feedback — and the grades and hints are
what a teacher would expect; the written answers wait for the teacher, whose hand grades (set
as formgrader sets them) the export then counts. Also: what the release holds, and its check
without solutions/.

The whole flow runs three assignments × three simulated students (about 2 minutes on 2
cores: nbgrader executes each submitted notebook in full). Its commands run nbgrader's own
command-line application (``NbGraderApp``, what the ``nbgrader`` command starts) in this
process, with the commands' arguments: the same code, without 3 s of start-up per command
(25 commands). ``build_classroom`` runs ``nbgrader generate_assignment`` as a separate process,
as ``make classroom`` does.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.teaching import exercises
from course_lib.lab.teaching.answer_keys import KEY_SUFFIX, HashedKey, SolutionKey
from course_lib.lab.teaching.classroom import (
    COURSE_ID,
    GRADED,
    assignment_names,
    assignment_notebook,
    build_classroom,
    solution_cells,
)
from course_lib.lab.teaching.written_answers import marking_schemes, waiting_for_hand_grading

ROOT = Path(__file__).resolve().parent.parent

# Each student's work for three assignments. "solution": the worked solution typed in;
# "untouched": the release as fetched; "wrong": a known wrong method (its hint must reach
# the feedback).
WRONG_METHODS = {
    "03": ("from course_lib import Retriever, SentenceSplitter, approx_gpt2_tokens, evaluate\n"
           "tiny_doc.create_node_group('TinyChunk', transform=SentenceSplitter, chunk_size=64, "
           "chunk_overlap=8, length_fn=approx_gpt2_tokens)\n"
           "scored = evaluate(kb, Retriever(tiny_doc, 'TinyChunk', 'bm25_chinese', topk=5), "
           "span_recall=True)\n"
           "tiny_span_recall_5 = scored['span_recall@5']\n"
           "tiny_context_relevance_1 = scored['context_relevance@1']",
           "You counted GPT-2 tokens"),
    "05": ("from course_lib.offline_llm import split_sentences\n"
           "lead_doc.create_node_group('lead', parent='block', "
           "transform=lambda text: split_sentences(text)[-1:])\n"
           "scored = evaluate(kb, to_blocks('lead', doc=lead_doc))\n"
           "lead_recall_1, lead_recall_5 = scored['recall@1'], scored['recall@5']",
           "You kept the last sentence"),
    "04": ("class AfterPrevious(NodeTransform):\n"
           "    def transform(self, node):\n"
           "        sentences = [s for s in re.split(r'(?<=[。！？])', node.text) if s.strip()]\n"
           "        return sentences[:1] + [a + b for a, b in zip(sentences[:-1], sentences[1:])]\n"
           "\n"
           "document.create_node_group('in_context', parent='paragraph', transform=AfterPrevious)\n"
           "scored = evaluate(kb, small_to_big('in_context', document))\n"
           "in_context_recall_1, in_context_recall_5 = scored['recall@1'], scored['recall@5']",
           "You put each sentence after the one before it"),
}
STUDENTS = ("ada", "ben", "cy")  # solution, untouched, wrong


def _answer_cell(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    (cell,) = [c for c in notebook.cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
    return cell


def _written_cells(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The answer cells of the written questions (markdown, graded by hand)."""
    return [c for c in notebook.cells
            if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("solution")]


def _hand_grades(course: Path, name: str, student: str) -> dict[str, tuple]:
    """{written answer's id: (auto score, hand score, waits for the teacher)} in the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(name, name, student)
        return {grade.name: (grade.auto_score, grade.manual_score, grade.needs_manual_grade)
                for grade in notebook.grades if grade.name.startswith("written-")}


def _grade_by_hand(course: Path, name: str, student: str, scores: dict[str, float]) -> None:
    """What formgrader's Manual Grading does when the teacher types a score: set the hand
    score, and the answer no longer waits."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for grade_id, score in scores.items():
            grade = gradebook.find_grade(grade_id, name, name, student)
            grade.manual_score, grade.needs_manual_grade = score, False
        gradebook.db.commit()


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


def _in_process(arguments: list[str], cwd: Path) -> None:
    """``nbgrader ARGUMENTS`` in ``cwd``, run by nbgrader's application in this process."""
    from jupyter_core.application import NoStart
    from nbgrader.apps import NbGraderApp
    from traitlets.config import SingletonConfigurable

    def singletons(cls=SingletonConfigurable):
        for sub in cls.__subclasses__():
            yield sub
            yield from singletons(sub)

    here = os.getcwd()
    os.chdir(cwd)
    try:
        app = NbGraderApp.instance()
        app.initialize(arguments)
        app.start()
    except NoStart:  # how a sub-command's application ends when it has run
        pass
    except SystemExit as exit_:
        if exit_.code:
            raise RuntimeError(f"nbgrader {' '.join(arguments)} failed in {cwd}") from None
    finally:
        os.chdir(here)
        for cls in set(singletons()):  # the next command starts afresh, as a new process would
            cls.clear_instance()


def _grades(course: Path) -> dict[tuple[str, str], tuple[float, float]]:
    _in_process(["export", "--to", str(course / "grades.csv")], cwd=course)
    with open(course / "grades.csv", newline="", encoding="utf-8") as rows:
        return {(row["assignment"], row["student_id"]): (float(row["raw_score"]),
                                                         float(row["max_score"]))
                for row in csv.DictReader(rows)}


def test_the_whole_flow_with_nbgrader(tmp_path, monkeypatch):
    chosen = sorted(WRONG_METHODS)
    course = tmp_path / "course"
    names = build_classroom(course, chosen)
    assert names == assignment_names(chosen)
    worked = {name: _solution_code(name[:2]) for name in names}  # what ada types in
    # Students and nbgrader's kernels must not reach the worked solutions.
    (tmp_path / "no-solutions").mkdir()
    monkeypatch.setenv("COURSE_SOLUTIONS", str(tmp_path / "no-solutions"))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent), prepend=os.pathsep)
    exchange = [f"--Exchange.root={course / 'exchange'}", f"--course={COURSE_ID}"]
    for name in names:
        release = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
        text = json.dumps(release)
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
        assert worked[name].splitlines()[-1] not in text
        _in_process(["release_assignment", name], cwd=course)
    for student in STUDENTS:
        home = tmp_path / student
        home.mkdir()
        cache = [f"--Exchange.cache={home / 'cache'}", f"--student={student}"]
        _in_process(["fetch_assignment", *names, *exchange, *cache], cwd=home)
        for name in names:
            path = home / name / f"{name}.ipynb"
            notebook = nbformat.read(path, as_version=4)
            answer = _answer_cell(notebook)
            if student == "ada":
                answer.source += "\n" + worked[name]
                (written,) = _written_cells(notebook)
                if name.startswith("04"):  # ...and asks for the written points automatically
                    written.cell_type, written.source = "code", "print(2)"
                    written.outputs, written.execution_count = [], None
                    written.metadata["nbgrader"].update(solution=False, points=100)
                else:
                    written.source = f"ada on {name}: because the chunks are cut mid-sentence"
            elif student == "cy":
                answer.source += "\n" + WRONG_METHODS[name[:2]][0]
                if name.startswith("05"):  # ...and deletes the written question and answer
                    notebook.cells = [c for c in notebook.cells if "written-" not in
                                      c.metadata.get("nbgrader", {}).get("grade_id", "")]
            nbformat.write(notebook, path)
            _in_process(["submit", name, *exchange, *cache], cwd=home)
    for name in names:
        _in_process(["collect", name], cwd=course)
        _in_process(["autograde", name], cwd=course)
        _in_process(["generate_feedback", name], cwd=course)
    grades = _grades(course)
    for name in names:
        exercise = name[:2]
        points = float(len(exercises.EXERCISES[exercise].answers))
        (item,) = exercises.EXERCISES[exercise].written
        written_id, most = f"written-{exercise}-{item.name}", points + item.points
        # The check's points only: the written answers wait for the teacher (ada's, the one
        # made into a code cell worth 100 too), an untouched or deleted one scores 0.
        assert grades[(name, "ada")] == (points, most), name
        assert grades[(name, "ben")] == (0.0, most), name
        assert grades[(name, "cy")][0] < points and grades[(name, "cy")][1] == most, name
        assert _hand_grades(course, name, "ada") == {written_id: (None, None, True)}, name
        for student in ("ben", "cy"):
            assert _hand_grades(course, name, student) == {written_id: (0.0, None, False)}, name
        assert waiting_for_hand_grading(course, name) == ["ada"], name
        autograded = nbformat.read(course / "autograded" / "ada" / name / f"{name}.ipynb",
                                   as_version=4)
        (written,) = _written_cells(autograded)  # a markdown answer again, worth its points
        assert written.metadata["nbgrader"]["points"] == item.points and "outputs" not in written
        html = (course / "feedback" / "ada" / name / f"{name}.html").read_text(encoding="utf-8")
        assert ("print(2)" if exercise == "04" else f"ada on {name}: because") in html, name
        feedback = (course / "feedback" / "cy" / name / f"{name}.html").read_text(
            encoding="utf-8")
        assert WRONG_METHODS[exercise][1] in feedback, f"{name}: the hint is not in the feedback"
        # The expected values stay hidden: no hidden test in anyone's feedback.
        for student in STUDENTS:
            html = (course / "feedback" / student / name / f"{name}.html").read_text(
                encoding="utf-8")
            assert "HIDDEN TESTS" not in html and not re.search(r"score\(&#39;|score\('", html)
    # The teacher grades ada's written answers by hand, as formgrader does; the export counts
    # them (`make grade` exports the same way: test_eight_hand_ins_... runs it again).
    hand = {"03": 2.0, "04": 0.0, "05": 1.5}
    for name in names:
        (item,) = exercises.EXERCISES[name[:2]].written
        _grade_by_hand(course, name, "ada", {f"written-{name[:2]}-{item.name}": hand[name[:2]]})
        assert waiting_for_hand_grading(course, name) == [], name
    graded = _grades(course)
    for name in names:
        points = float(len(exercises.EXERCISES[name[:2]].answers))
        assert graded[(name, "ada")] == (points + hand[name[:2]], grades[(name, "ada")][1]), name
        assert graded[(name, "ben")] == grades[(name, "ben")], name
    print({key: value[0] for key, value in sorted(graded.items())})


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


# Eight hand-ins to assignment 07: the worked solution, the untouched release, and six ways
# to ask for marks without the work, each in the answer cell. Only the first earns any.
TRICKS_07 = {
    "patched": "import course_lib.lab.teaching.exercises as _ex\n"
               "_ex.score = lambda *args, **kwargs: 3.0\n"
               "_ex.check = lambda *args, **kwargs: None",
    "silenced": "get_ipython().ast_node_interactivity = 'none'\n"
                "import sys, io\nsys.stderr = io.StringIO()",
    "history": "get_ipython().events.register('post_run_cell', "
               "lambda result: print(In[-1]))",
    "reader": "import json, glob\n"
              "for _path in glob.glob('COURSE/**', recursive=True) + ['KEY', 'ROOT/.git/HEAD']:\n"
              "    try:\n"
              "        print('read', _path, len(open(_path, 'rb').read()))\n"
              "    except OSError as _error:\n"
              "        print('blocked', _path, type(_error).__name__)\n"
              "try:\n"
              "    _key = json.load(open('KEY'))['expected']\n"
              "    best_cut_off, dev_recall, dev_relevance = (\n"
              "        _key['best_cut_off'], _key['dev_recall'], _key['dev_relevance'])\n"
              "except OSError:\n"
              "    print('no key here')",
    "no-traceback": "_ip = get_ipython()\n"
                    "_ip.showtraceback = lambda *args, **kwargs: None\n"
                    "_ip._showtraceback = lambda *args, **kwargs: None\n"
                    "best_cut_off, dev_recall, dev_relevance = 0.9, 0.5, 0.5",
    "always-equal": "class _Yes(float):\n"
                    "    def __eq__(self, other): return True\n"
                    "    def __ne__(self, other): return False\n"
                    "    __hash__ = float.__hash__\n"
                    "best_cut_off = dev_recall = dev_relevance = _Yes(0.5)",
}


def test_eight_hand_ins_to_07_only_the_work_earns_marks(tmp_path, monkeypatch):
    """`make grade`'s function on eight submissions through nbgrader's exchange: the worked
    solution earns every point, the untouched release and each trick none; no feedback holds
    the grading key's values beyond what the untouched notebook prints, and the reader saw
    none of the course's files. Three tricks also change the written answer's cell (made an
    autograded code cell worth 100, deleted, marks without an id on a cell of their own): no
    point from it, and autograde still runs. After the teacher grades the written answers by
    hand, `make grade` again writes the feedback and grades.csv with them."""
    from course_lib.lab.teaching.classroom import grade_assignment

    course = tmp_path / "course"
    (name,) = build_classroom(course, ["07"])
    key = SolutionKey.read(course / "grading" / f"{name}.json")
    worked = _solution_code("07")  # what a student who did the work types in
    (tmp_path / "no-solutions").mkdir()
    monkeypatch.setenv("COURSE_SOLUTIONS", str(tmp_path / "no-solutions"))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent), prepend=os.pathsep)
    exchange = [f"--Exchange.root={course / 'exchange'}", f"--course={COURSE_ID}"]
    _in_process(["release_assignment", name], cwd=course)
    hand_ins = {"worked": worked, "untouched": "",
                **{trick: code.replace("COURSE", str(course)).replace("ROOT", str(ROOT))
                   .replace("KEY", str(course / "grading" / f"{name}.json"))
                   for trick, code in TRICKS_07.items()}}
    for student, code in hand_ins.items():
        home = tmp_path / "homes" / student
        home.mkdir(parents=True)
        cache = [f"--Exchange.cache={home / 'cache'}", f"--student={student}"]
        _in_process(["fetch_assignment", name, *exchange, *cache], cwd=home)
        path = home / name / f"{name}.ipynb"
        notebook = nbformat.read(path, as_version=4)
        _answer_cell(notebook).source += "\n" + code
        (written,) = _written_cells(notebook)
        if student == "worked":
            written.source = "WORKED-WROTE: chosen on trial, so trial's numbers flatter it."
        elif student == "patched":  # the written answer made an autograded cell worth 100
            written.cell_type, written.source = "code", "print(100)"
            written.outputs, written.execution_count = [], None
            written.metadata["nbgrader"].update(solution=False, points=100)
        elif student == "history":  # the written question and answer deleted
            notebook.cells = [c for c in notebook.cells if "written-" not in
                              c.metadata.get("nbgrader", {}).get("grade_id", "")]
        elif student == "silenced":  # marks without an id, on a cell of its own
            notebook.cells.append(nbformat.v4.new_markdown_cell(
                "mine", metadata={"nbgrader": {"grade": True, "solution": True, "points": 9}}))
        nbformat.write(notebook, path)
        _in_process(["submit", name, *exchange, *cache], cwd=home)
    grades_csv = grade_assignment(course, name)
    with open(grades_csv, newline="", encoding="utf-8") as rows:
        rows = list(csv.DictReader(rows))
    grades = {row["student_id"]: float(row["raw_score"]) for row in rows}
    assert grades == {"worked": 3.0, **dict.fromkeys(list(hand_ins)[1:], 0.0)}, grades
    assert {float(row["max_score"]) for row in rows} == {5.0}  # 3 checked, 2 written
    assert waiting_for_hand_grading(course, name) == ["patched", "worked"]
    written_id = "written-07-trial-dev"
    assert _hand_grades(course, name, "history") == {written_id: (0.0, None, False)}
    assert _hand_grades(course, name, "patched") == {written_id: (None, None, True)}
    feedback = {student: (course / "feedback" / student / name / f"{name}.html").read_text(
        encoding="utf-8") for student in hand_ins}
    values = [str(value) for value in key.expected.values()]
    for student, html in feedback.items():
        assert "graded outside your notebook" in html, student
        assert "HIDDEN TESTS" not in html and '"expected"' not in html, student
        if student != "worked":  # the worked solution prints its own answers
            for value in values:
                assert html.count(value) <= feedback["untouched"].count(value), (student, value)
    assert "blocked" in feedback["reader"] and "no key here" in feedback["reader"]
    assert not re.search(r"read [^ ]*(grading|gradebook|source|\.git)", feedback["reader"])
    assert "not a number, string or list" in feedback["always-equal"]
    assert "WORKED-WROTE" in feedback["worked"] and "Score: 3.0 / 5.0" in feedback["worked"]
    # The teacher grades the written answers by hand (what formgrader does), with a comment,
    # and runs `make grade` again: nothing runs again; the feedback and grades.csv count them.
    _grade_by_hand(course, name, "worked", {written_id: 2.0})
    _grade_by_hand(course, name, "patched", {written_id: 0.0})
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.find_comment(written_id, name, name, "worked").manual_comment = "HAND-COMMENT"
        gradebook.db.commit()
    assert waiting_for_hand_grading(course, name) == []
    with open(grade_assignment(course, name), newline="", encoding="utf-8") as rows:
        grades = {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(rows)}
    assert grades == {"worked": 5.0, **dict.fromkeys(list(hand_ins)[1:], 0.0)}, grades
    html = (course / "feedback" / "worked" / name / f"{name}.html").read_text(encoding="utf-8")
    assert "Score: 5.0 / 5.0" in html and "HAND-COMMENT" in html


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
