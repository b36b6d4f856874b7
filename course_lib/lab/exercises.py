"""Automatic checks for the notebooks' exercises.

Each exercise names the variables a learner fills in. ``check("01", recall_10=...,
mrr_10=...)`` compares them with the worked solution in ``solutions/`` — the single
source of truth, run on demand — and prints what is right or what to look at. A
stub left at ``None`` is reported as "not attempted" (the notebook still runs).

A wrong answer gets a hint about *that* mistake where one is known: a solution file
may define ``mistakes()``, which runs plausible wrong methods (the wrong k, the wrong
similarity, …) and returns ``{hint: answers}``; a learner whose answers equal one of
them reads that hint. A value 100× too large is reported as a percentage. Otherwise
the exercise's general hint is shown. Each check prints exactly one line.

In the generated solution notebooks ``strict(True)`` turns a failed check into an
``AssertionError``, so CI fails when a solution and its check disagree.

>>> check("01", recall_10=None, mrr_10=None).passed
○ 01: not attempted yet — fill in recall_10, mrr_10 and run this cell again.
False
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import runpy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._support.places import COURSE_ROOT
from .._support.validation import is_number

SOLUTIONS_ENV = "COURSE_SOLUTIONS"


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


@dataclass(frozen=True)
class Exercise:
    answers: tuple[str, ...]
    hint: str
    tolerance: float = 1e-3  # absolute, for numbers


EXERCISES: dict[str, Exercise] = {
    "00": Exercise(("answer",), "max(kb.paragraphs, key=len), then count the questions whose "
                   "paragraph it is; the tuple is (file_name, count)."),
    "01": Exercise(("recall_10", "mrr_10"), "a Retriever with topk=10, then evaluate(kb, "
                   "retriever, ks=(5, 10))."),
    "02": Exercise(("plain_share", "sub_share"), "top-2 BM25 for the glued question vs "
                   "SubQuestionRetriever over a top-1 retriever; count pairs with both golds."),
    "03": Exercise(("tiny_span_recall_5", "tiny_context_relevance_1"), "on a fresh "
                   "knowledge_base_document(kb): create_node_group('TinyChunk', transform="
                   "SentenceSplitter, chunk_size=64, chunk_overlap=8), then evaluate(kb, "
                   "Retriever(..., 'TinyChunk', 'bm25_chinese', topk=5), span_recall=True) and "
                   "read span_recall@5 and context_relevance@1."),
    "04": Exercise(("in_context_recall_1", "in_context_recall_5"), "a NodeTransform returning "
                   "[first] + [first + s for s in the other sentences], as group 'in_context' "
                   "under 'paragraph' on a fresh knowledge_base_document(kb); then evaluate(kb, "
                   "small_to_big('in_context', document)): 20 units, their paragraphs, keep 5."),
    "05": Exercise(("lead_recall_1", "lead_recall_5"), "lead_doc.create_node_group('lead', "
                   "parent='block', transform=lambda text: split_sentences(text)[:1]), then "
                   "evaluate(kb, to_blocks('lead', doc=lead_doc)) and read recall@1 and "
                   "recall@5."),
    "06": Exercise(("same_first_share", "mean_first_score", "largest_score_gap"), "dot = "
                   "Retriever(multi, 'paragraph', 'dot', topk=1, embed_keys=['sparse']) and "
                   "chars = Retriever(cmrc, 'paragraph', 'bm25_char', topk=1); for each question "
                   "q, compare dot(q.question)[0] with chars(q.question)[0]: same text? their "
                   ".score values?"),
    "07": Exercise(("best_cut_off", "recall_at_best", "relevance_at_best"), "sweep = "
                   "cut_off_sweep(kb.questions, cosine_rankings, cut_offs) over the 0.001 grid "
                   "of the cell; among the rows whose recall@5 is at least 0.90, the one with "
                   "the highest context_relevance@5."),
    "08": Exercise(("lexical_first", "gold_mean_score"), "lexical = FeatureReranker("
                   "embedder=None); retrieve_all(kb, rerank_after(MultiRetriever("
                   "paragraph_paths(doc)), Reranker(model=lexical, topk=5))); then, per "
                   "question, rank = gold_rank(ranking, q.paragraph): count rank == 1, and "
                   "average ranking[rank - 1].score where rank is not None."),
    "09": Exercise(("kept_answerable", "refused_unanswerable"), "for each sample question q: "
                   "best = offline_rag.reranker(q.question, candidates)[0], where the "
                   "candidates are offline_rag.retriever(q.question) — for the second share "
                   "without those whose metadata['file_name'] == q.file_name; the rule answers "
                   "when term_coverage(q.question, best.text) >= MIN_COVERAGE."),
    "10": Exercise(("char_summary_recall_1", "char_summary_recall_5"), "summaries = "
                   "summary_document(kb); Retriever(summaries, 'summary', 'bm25_char', topk=5); "
                   "small_to_big(retriever, summaries); then evaluate(kb, ...) and read recall@1 "
                   "and recall@5."),
    "11": Exercise(("hnsw_recall_at_10", "smallest_ef_for_0_98"), "questions embedded with "
                   "default_embedder().embed_queries(...); for each, the neighbours that "
                   "DenseVectors(..., backend='hnsw', ef_search=ef).search(q, 10) shares with "
                   "backend='faiss' (exact); sum, divide by 10 × 1,000; ef_search 10, 20, 32, "
                   "64, 128."),
    "12": Exercise(("chosen_max_wrong", "dev_cost"), "for each max_wrong in MAX_WRONGS: "
                   "result = cross_validate(trial_hard, trial_hard_signals, max_wrong=...); "
                   "cost per question = COST_DECLINED where an answerable one is declined, "
                   "COST_ANSWERED where an unanswerable one is not; choose the max_wrong with "
                   "the lowest mean cost on trial, then compute that one's mean cost on "
                   "dev_hard."),
}

_STRICT: list[bool] = [False]
_NAMESPACES: dict[str, dict[str, Any]] = {}
_EXPECTED: dict[str, dict[str, Any]] = {}
_MISTAKES: dict[str, dict[str, dict[str, Any]]] = {}


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


def _same(given: Any, expected: Any, tolerance: float) -> bool:
    if is_number(expected, allow_nan=True):  # numpy scalars count: answers often come from numpy
        return is_number(given, allow_nan=True) and \
            math.isclose(float(given), float(expected), abs_tol=tolerance)
    if isinstance(expected, (tuple, list)):
        return isinstance(given, (tuple, list)) and len(given) == len(expected) and \
            all(_same(g, e, tolerance) for g, e in zip(given, expected, strict=True))
    return given == expected


def _diagnose(exercise: str, answers: dict[str, Any], wrong: list[str]) -> str:
    """The most specific hint for these wrong answers."""
    spec = EXERCISES[exercise]
    for hint, mistaken in known_mistakes(exercise).items():
        if all(_same(answers[name], mistaken[name], spec.tolerance) for name in wrong
               if name in mistaken) and any(name in mistaken for name in wrong):
            return hint
    expected = expected_answers(exercise)
    for name in wrong:
        given, value = answers[name], expected[name]
        if is_number(given) and isinstance(value, float) and \
                math.isclose(float(given), 100 * value, abs_tol=100 * spec.tolerance):
            return f"{name} looks like a percentage: give it as a fraction between 0 and 1."
    return spec.hint


def check_mistakes(exercise: str) -> int:
    """Prove the check catches wrong methods: every answer set of the solution's
    ``mistakes()`` must fail, with its own hint. Prints one line; returns how many.

    Run by the generated solution notebooks, so CI fails when a wrong method would pass.
    """
    mistakes = known_mistakes(exercise)
    if not mistakes:
        raise AssertionError(f"{exercise}: the solution defines no mistakes(): add at least "
                             f"one plausible wrong method")
    expected = expected_answers(exercise)
    for hint, answers in mistakes.items():
        given = {**expected, **answers}
        with contextlib.redirect_stdout(io.StringIO()), _strictness(False):
            result = check(exercise, **given)
        if result.passed:
            raise AssertionError(f"{exercise}: the wrong method behind {hint!r} passes the "
                                 f"check ({answers}): compare more quantities")
        if hint not in result.message:
            raise AssertionError(f"{exercise}: the wrong method behind {hint!r} gets another "
                                 f"hint: {result.message}")
    print(f"✓ {exercise}: {len(mistakes)} plausible wrong method(s) fail the check.")
    return len(mistakes)


def check_not_given_away(exercise: str) -> None:
    """Assert that the learner's notebook prints none of the expected numeric answers
    (at 3 decimals): an answer copied from an earlier output would teach nothing."""
    notebook = next(solutions_folder().parent.glob(f"notebooks/{exercise}_*.ipynb"))
    shown = " ".join(_output_texts(json.loads(notebook.read_text(encoding="utf-8"))))
    for name, value in expected_answers(exercise).items():
        for number in _floats(value):
            if f"{number:.3f}" in shown:
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
    """Compare a learner's answers with the worked solution; print one line, return it."""
    if exercise not in EXERCISES:
        raise ValueError(f"unknown exercise {exercise!r}; known: {sorted(EXERCISES)}")
    spec = EXERCISES[exercise]
    missing = sorted(set(spec.answers) - set(answers))
    if missing:
        raise TypeError(f"check({exercise!r}, ...) needs {', '.join(spec.answers)}; "
                        f"missing {', '.join(missing)}")
    if all(answers[name] is None for name in spec.answers):
        result = CheckResult(exercise, False, f"○ {exercise}: not attempted yet — fill in "
                             f"{', '.join(spec.answers)} and run this cell again.")
    else:
        expected = expected_answers(exercise)
        wrong = [name for name in spec.answers
                 if not _same(answers[name], expected[name], spec.tolerance)]
        if wrong:
            shown = ", ".join(f"{name} = {answers[name]!r}" for name in wrong)
            result = CheckResult(exercise, False, f"✗ {exercise}: {shown} does not match the "
                                 f"worked solution. Hint: {_diagnose(exercise, answers, wrong)}")
        else:
            result = CheckResult(exercise, True, f"✓ {exercise}: correct.")
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
