"""Automatic checks for the notebooks' exercises, with hints that come in steps.

Each exercise names the variables a learner fills in. ``check("01", recall_10=...,
mrr_10=...)`` compares them with the exercise's **answer key** and prints one line: right,
not attempted (a stub left at ``None``; the notebook still runs), or wrong with a hint.

* **The key** (:mod:`course_lib.lab.teaching.answer_keys`): a classroom release has a file
  ``NN_name.check.json`` beside the notebook, salted hashes of the answers, and the check
  uses it; otherwise the worked solution ``solutions/NN_name.py`` — the single source of
  truth — is run in the kernel on demand. Both apply one tolerance rule.
* **A known wrong method gets its own hint.** A solution file may define ``mistakes()``,
  which runs plausible wrong methods (the wrong k, the wrong similarity, …) and returns
  ``{hint: answers}``; answers equal to one of them earn that hint. Numbers that are the
  right ones as percentages are reported as such.
* **Otherwise the hints come in steps**: the first failure shows the exercise's first hint,
  which names the idea and no code; the next failures (or :func:`hint`) show the next
  ones; the last step is the whole method, read from the worked solution. In graded mode
  (a classroom release, an nbgrader autograde or validate run, or ``graded(True)``) the
  method is never shown — and a release does not carry it.

In the generated solution notebooks ``strict(True)`` turns a failed check into an
``AssertionError``, so CI fails when a solution and its check disagree.

>>> check("01", recall_10=None, mrr_10=None).passed
○ 01: not attempted yet — fill in recall_10, mrr_10 and run this cell again.
False
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import runpy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._support.places import COURSE_ROOT
from ..._support.validation import is_number
from .answer_keys import KEY_SUFFIX, AnswerKey, HashedKey, SolutionKey
from .exercise_catalog import EXERCISES, Exercise  # noqa: F401 (also importable from here)

SOLUTIONS_ENV = "COURSE_SOLUTIONS"
_STRICT: list[bool] = [False]
_NAMESPACES: dict[str, dict[str, Any]] = {}
_EXPECTED: dict[str, dict[str, Any]] = {}
_MISTAKES: dict[str, dict[str, dict[str, Any]]] = {}


def solutions_folder() -> Path:
    """Where the worked solutions are: ``$COURSE_SOLUTIONS``, else the first ``solutions/``
    folder holding them in the working directory, beside it (a notebook runs in
    ``notebooks/``), or in the clone the library runs from.

    The solutions are not package data on purpose: an installed wheel (and a student's
    copy of a notebook) does not carry the answers. A learner who installed the library
    and copied the course gets them from the course folder; without one, the error says
    how to point at it.

    >>> (solutions_folder() / "01_evaluating_retrieval.py").is_file()
    True
    """
    if os.environ.get(SOLUTIONS_ENV):
        folder = Path(os.environ[SOLUTIONS_ENV])
        if not folder.is_dir():
            raise FileNotFoundError(f"{SOLUTIONS_ENV}={folder} is not a folder; point it at "
                                    f"the course's solutions/ folder")
        return folder
    here = Path.cwd()
    for folder in (here / "solutions", here.parent / "solutions", COURSE_ROOT / "solutions"):
        if any(folder.glob("[0-9][0-9]_*.py")):
            return folder
    raise FileNotFoundError(f"no solutions/ folder found in {here}, beside it, or in "
                            f"{COURSE_ROOT}: run from the course folder (or its notebooks/), "
                            f"or set {SOLUTIONS_ENV} to the course's solutions/ folder")


@dataclass
class CheckResult:
    exercise: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def _ipython_display_(self) -> None:
        """Shown as the last value of a cell: nothing more (check already printed it)."""


def strict(on: bool = True) -> None:
    """Make failed checks raise (used by the generated solution notebooks)."""
    _STRICT[0] = on


def solution_file(exercise: str) -> Path:
    folder = solutions_folder()
    matches = sorted(folder.glob(f"{exercise}_*.py"))
    if not matches:
        raise FileNotFoundError(f"no solution for exercise {exercise!r} in {folder}")
    return matches[0]


def _solution(exercise: str) -> dict[str, Any]:
    """The worked solution's namespace, run once per process (its output hidden: it would
    print the answers)."""
    if exercise not in _NAMESPACES:
        with contextlib.redirect_stdout(io.StringIO()):
            _NAMESPACES[exercise] = runpy.run_path(str(solution_file(exercise)),
                                                   run_name="__solution__")
    return _NAMESPACES[exercise]


def expected_answers(exercise: str) -> dict[str, Any]:
    """The answers the worked solution computes (run once per process)."""
    if exercise not in _EXPECTED:
        namespace = _solution(exercise)
        _EXPECTED[exercise] = {name: namespace[name] for name in EXERCISES[exercise].answers}
    return _EXPECTED[exercise]


def known_mistakes(exercise: str) -> dict[str, dict[str, Any]]:
    """``{hint: answers}`` that plausible wrong methods give (the solution's ``mistakes()``,
    run once, only when needed); ``{}`` if the solution defines none."""
    if exercise not in _MISTAKES:
        make = _solution(exercise).get("mistakes")
        with contextlib.redirect_stdout(io.StringIO()):
            _MISTAKES[exercise] = make() if callable(make) else {}
    return _MISTAKES[exercise]


def forget_solution(exercise: str) -> None:
    """Drop what the worked solution left in this process (its data can be large)."""
    for cache in (_NAMESPACES, _EXPECTED, _MISTAKES):
        cache.pop(exercise, None)


def _released_key(exercise: str) -> Path | None:
    """The classroom release's key file for ``exercise`` in the working folder, if any."""
    return next(iter(sorted(Path.cwd().glob(f"{exercise}_*{KEY_SUFFIX}"))), None)


def answer_key(exercise: str) -> AnswerKey | None:
    """The key this check compares with: a classroom release's ``NN_*.check.json`` in the
    working folder if there is one (``None`` if it holds no answers: a release without a
    self-check), else the worked solution (its mistakes run only when a wrong answer needs
    a hint)."""
    released = _released_key(exercise)
    if released is not None:
        return HashedKey.read(released)
    return SolutionKey(exercise, expected_answers(exercise), lambda: known_mistakes(exercise),
                       EXERCISES[exercise].tolerance)


_GRADED: list[bool] = [False]
_HINTS_SHOWN: dict[str, int] = {}


def graded(on: bool = True) -> None:
    """Graded mode: hints stop one step before the whole method. A classroom release (its
    key file beside the notebook) and nbgrader's autograde and validate runs are graded
    without asking."""
    _GRADED[0] = on


def _is_graded(exercise: str) -> bool:
    return _GRADED[0] or bool(os.environ.get("NBGRADER_EXECUTION")) or \
        _released_key(exercise) is not None


def solution_prose(solution: Path) -> str:
    """A worked solution's prose — its title, method and marking schemes: the docstring of
    ``solutions/NN_name.py``, read without running it, or the whole of a translation
    (``solutions/zh-CN/NN_name.md``, the docstring in Chinese)."""
    source = solution.read_text(encoding="utf-8")
    return source if solution.suffix == ".md" else ast.get_docstring(ast.parse(source)) or ""


def method(exercise: str, solution: Path | None = None) -> str | None:
    """The worked solution's method in one paragraph — its docstring's ``Method:`` part
    (``方法：`` in a Chinese edition, ``solution``), read without running it — or ``None``
    where ``solutions/`` is not at hand.

    >>> method("01")
    'a Retriever with topk=10, then evaluate(kb, retriever, ks=(5, 10)).'
    """
    try:
        prose = solution_prose(solution or solution_file(exercise))
    except FileNotFoundError:
        return None
    found = [re.sub(r"^(Method: |方法：)", "", part) for part in prose.split("\n\n")
             if part.startswith(("Method: ", "方法："))]
    return _join_lines(found[0]) if found else None


def _join_lines(text: str) -> str:
    """``text``'s lines as one: a line break between two Chinese characters is nothing, any
    other is a space (``"两个\n段落 and\nmore"`` → ``"两个段落 and more"``)."""
    def joined(match: re.Match[str]) -> str:
        before, after = match.string[match.start() - 1], match.string[match.end()]
        return "" if not (before.isascii() or after.isascii()) else " "
    return re.sub(r"[ \t]*\n\s*", joined, text.strip())


def _next_hint(exercise: str) -> str:
    """The next step of the exercise's hints (the last allowed one stays), counted per kernel:
    the exercise's hints, then — self-paced only — the worked solution's method."""
    steps = list(EXERCISES[exercise].hints)
    if not _is_graded(exercise):
        steps += [text for text in (method(exercise),) if text]
    step = min(_HINTS_SHOWN.get(exercise, 0) + 1, len(steps))
    _HINTS_SHOWN[exercise] = step
    more = ""
    if step < len(steps) and not os.environ.get("NBGRADER_EXECUTION"):  # not in feedback
        more = f' — check again, or run hint("{exercise}"), for the next one'
    return f"Hint {step}/{len(steps)}: {steps[step - 1]}{more}"


def hint(exercise: str) -> None:
    """Print the exercise's next hint: the first names the idea, the last gives the method
    (never in graded mode, nor without ``solutions/``). Failed checks move through the same
    steps.

    >>> _ = _HINTS_SHOWN.pop("01", None)
    >>> hint("01")  # doctest: +ELLIPSIS
    Hint 1/3: The same evaluation as for the top 5, ... for the next one
    """
    if exercise not in EXERCISES:
        raise ValueError(f"unknown exercise {exercise!r}; known: {sorted(EXERCISES)}")
    print(_next_hint(exercise))


def _as_fractions(answers: dict[str, Any]) -> dict[str, Any] | None:
    """The answers with every number above 1 divided by 100, or ``None`` if none is."""
    scaled = {name: value / 100 if is_number(value) and abs(value) > 1 else value
              for name, value in answers.items()}
    return scaled if scaled != answers else None


def _diagnose(exercise: str, key: AnswerKey, answers: dict[str, Any]) -> str:
    """The most specific hint for these wrong answers: a known wrong method's, a percentage,
    or the exercise's next step."""
    matched = key.mistake_hints(answers)
    if matched:
        return "Hint: " + " Or: ".join(matched)
    fractions = _as_fractions(answers)
    if fractions is not None and key.is_right(fractions):
        return "Hint: these look like percentages: give shares as fractions between 0 and 1."
    return _next_hint(exercise)


def check_mistakes(exercise: str) -> int:
    """Prove the check tells the wrong methods apart: each of the solution's ``mistakes()``
    must fail with its own hint, no two may give answers the check cannot tell apart (give
    such a pair one hint that names both methods), and the hashed key of a classroom release
    must say the same as the solution. Prints one line; returns how many.

    Run by the generated solution notebooks, so CI fails when a wrong method would pass.
    """
    key = SolutionKey(exercise, expected_answers(exercise), known_mistakes(exercise),
                      EXERCISES[exercise].tolerance)
    if not key.mistakes:
        raise AssertionError(f"{exercise}: the solution defines no mistakes(): add at least "
                             f"one plausible wrong method")
    for first, second in key.collisions():
        if first is None:
            raise AssertionError(f"{exercise}: the wrong method behind {second!r} passes the "
                                 f"check ({key.mistakes[second]}): compare more quantities")
        raise AssertionError(f"{exercise}: the check cannot tell two wrong methods apart: "
                             f"{first!r} and {second!r} give the same answers; make them one "
                             f"hint that names both")
    released = key.hashed(iterations=100)  # the release's file format, at a test's speed
    for name, judge in (("the solution", key), ("the hashed key", released)):
        if not judge.is_right(key.expected):
            raise AssertionError(f"{exercise}: {name} rejects the right answers")
        for mistake in key.mistakes:
            if judge.mistake_hints(key.mistaken(mistake)) != [mistake]:
                raise AssertionError(f"{exercise}: {name} gives the wrong method behind "
                                     f"{mistake!r} another hint")
    for mistake in key.mistakes:
        with contextlib.redirect_stdout(io.StringIO()), _strictness(False):
            result = check(exercise, **key.mistaken(mistake))
        if result.passed or mistake not in result.message:
            raise AssertionError(f"{exercise}: the wrong method behind {mistake!r} gets "
                                 f"{result.message}")
    print(f"✓ {exercise}: {len(key.mistakes)} plausible wrong method(s) fail the check.")
    return len(key.mistakes)


def check_not_given_away(exercise: str) -> None:
    """Assert that the learner's notebook prints none of the expected numeric answers
    (at 3 decimals, as a number of its own): an answer copied from an earlier output
    would teach nothing. A difference printed with its sign ("+0.000" in a win/loss
    table) is another quantity and does not count; "10.000" does not hold "0.000"."""
    notebook = next(solutions_folder().parent.glob(f"notebooks/{exercise}_*.ipynb"))
    shown = " ".join(_output_texts(json.loads(notebook.read_text(encoding="utf-8"))))
    for name, value in expected_answers(exercise).items():
        for number in _floats(value):
            if re.search(rf"(?<![\d.+]){re.escape(f'{number:.3f}')}(?!\d)", shown):
                raise AssertionError(f"{exercise}: the answer {name} = {number:.3f} is already "
                                     f"printed in {notebook.name}")
    print(f"✓ {exercise}: no answer is printed in the notebook.")


def _floats(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, (tuple, list)):
        return [x for item in value for x in _floats(item)]
    return []


def _output_texts(notebook: dict[str, Any]) -> list[str]:
    texts = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and "check(" not in "".join(cell["source"]):
            for output in cell.get("outputs", []):
                texts.append("".join(output.get("text", "")))
                texts.extend("".join(v) for k, v in output.get("data", {}).items()
                             if k.startswith("text/"))
    return texts


@contextlib.contextmanager
def _strictness(on: bool) -> Any:
    saved, _STRICT[0] = _STRICT[0], on
    try:
        yield
    finally:
        _STRICT[0] = saved


def check(exercise: str, **answers: Any) -> CheckResult:
    """Compare a learner's answers with the exercise's key; print one line, return it."""
    if exercise not in EXERCISES:
        raise ValueError(f"unknown exercise {exercise!r}; known: {sorted(EXERCISES)}")
    spec = EXERCISES[exercise]
    missing = sorted(set(spec.answers) - set(answers))
    if missing:
        raise TypeError(f"check({exercise!r}, ...) needs {', '.join(spec.answers)}; "
                        f"missing {', '.join(missing)}")
    answers = {name: answers[name] for name in spec.answers}
    if all(value is None for value in answers.values()):
        result = CheckResult(exercise, False, f"○ {exercise}: not attempted yet — fill in "
                             f"{', '.join(spec.answers)} and run this cell again.")
    else:
        key = answer_key(exercise)
        if key is None:  # a classroom release without a self-check
            result = CheckResult(exercise, False, f"○ {exercise}: this copy does not check "
                                 f"answers — they are graded after you submit.")
        elif key.is_right(answers):
            result = CheckResult(exercise, True, f"✓ {exercise}: correct.")
        else:
            wrong = key.wrong_names(answers)
            if wrong is None:  # a release's key: one hash of all the answers
                shown = ", ".join(f"{name} = {value!r}" for name, value in answers.items())
                verdict = (f"{shown}: not all of these match the worked solution (this copy "
                           f"checks them together, so it cannot say which)")
            else:
                verdict = ", ".join(f"{name} = {answers[name]!r}" for name in wrong) + \
                    " does not match the worked solution"
            result = CheckResult(exercise, False, f"✗ {exercise}: {verdict}. "
                                 f"{_diagnose(exercise, key, answers)}")
    print(result.message)
    if _STRICT[0] and not result.passed:
        raise AssertionError(result.message)
    return result


def try_it(name: str, answer: Any, test: Any) -> bool:
    """A short "try it" cell inside a section (the notebook's one graded exercise is
    :func:`check`): ``test(answer)`` returns ``True`` or a string saying what is wrong.
    ``answer`` left at ``None`` is "not attempted". Prints one line, returns whether it passed.

    >>> try_it("double", None, lambda f: f(2) == 4)
    ○ double: not attempted yet — fill it in and run this cell again.
    False
    >>> try_it("double", lambda x: x + 2, lambda f: f(3) == 6 or f"f(3) gave {f(3)}, not 6")
    ✗ double: f(3) gave 5, not 6
    False
    >>> try_it("double", lambda x: 2 * x, lambda f: f(3) == 6)
    ✓ double: works.
    True
    """
    if answer is None:
        print(f"○ {name}: not attempted yet — fill it in and run this cell again.")
        return False
    try:
        verdict = test(answer)
    except Exception as error:  # the learner's code raised: say what, keep the notebook going
        verdict = f"raised {type(error).__name__}: {error}"
    if verdict is True:
        print(f"✓ {name}: works.")
        return True
    print(f"✗ {name}: {verdict if isinstance(verdict, str) and verdict else 'not yet right.'}")
    return False
