"""Automatic checks for the notebooks' exercises.

Each exercise names the variables a learner fills in. ``check("01", recall_10=...,
mrr_10=...)`` compares them with the worked solution in ``solutions/`` — the single
source of truth, run on demand — and prints what is right or what to look at. A
stub left at ``None`` is reported as "not attempted" (the notebook still runs).

In the generated solution notebooks ``strict(True)`` turns a failed check into an
``AssertionError``, so CI fails when a solution and its check disagree.

>>> check("01", recall_10=None, mrr_10=None).passed
○ 01: not attempted yet — fill in recall_10, mrr_10 and run this cell again.
False
"""

from __future__ import annotations

import contextlib
import io
import math
import runpy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"


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
    "03": Exercise(("tiny_span_recall_5",), "create_node_group('TinyChunk', SentenceSplitter, "
                   "chunk_size=64, chunk_overlap=8), then evaluate(..., span_recall=True)."),
    "04": Exercise(("window3_recall_1",), "SentenceWindows(size=3) under 'paragraph'; retrieve "
                   "20 windows, cmrc.find('paragraph'), keep 5."),
    "05": Exercise(("lead_recall_1",), "a 'lead' group under 'block' holding the first sentence; "
                   "evaluate with to_blocks('lead')."),
    "06": Exercise(("sparse_dot_recall_1",), "Retriever(multi, 'paragraph', 'dot', "
                   "embed_keys=['sparse'])."),
    "07": Exercise(("smallest_cut_off", "recall_at_that_cut_off"), "cut_off_sweep over "
                   "0.0, 0.1, … 3.0; the first row whose context_relevance@5 ≥ 0.9."),
    "08": Exercise(("lexical_only_mrr_5",), "FeatureReranker(embedder=None) behind "
                   "MultiRetriever(paragraph_paths(doc)) with rerank_after."),
    "09": Exercise(("rewrite_in_context",), "chapter_rag(kb, llm=OfflineLLM(), rewrite='multi') "
                   "over kb.questions[::5]."),
    "11": Exercise(("hnsw_recall_at_10",), "DenseVectors(..., backend='hnsw', ef_search=10) vs "
                   "backend='faiss', 10 neighbours per question."),
}

_STRICT: list[bool] = [False]
_EXPECTED: dict[str, dict[str, Any]] = {}


@dataclass
class CheckResult:
    exercise: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed


def strict(on: bool = True) -> None:
    """Make failed checks raise (used by the generated solution notebooks)."""
    _STRICT[0] = on


def solution_file(exercise: str) -> Path:
    matches = sorted(SOLUTIONS.glob(f"{exercise}_*.py"))
    if not matches:
        raise FileNotFoundError(f"no solution for exercise {exercise!r} in {SOLUTIONS}")
    return matches[0]


def expected_answers(exercise: str) -> dict[str, Any]:
    """The answers the worked solution computes (run once per process)."""
    if exercise not in _EXPECTED:
        with contextlib.redirect_stdout(io.StringIO()):  # do not print the answers
            namespace = runpy.run_path(str(solution_file(exercise)), run_name="__solution__")
        _EXPECTED[exercise] = {name: namespace[name] for name in EXERCISES[exercise].answers}
    return _EXPECTED[exercise]


def _same(given: Any, expected: Any, tolerance: float) -> bool:
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        return isinstance(given, (int, float)) and not isinstance(given, bool) and \
            math.isclose(float(given), float(expected), abs_tol=tolerance)
    if isinstance(expected, (tuple, list)):
        return isinstance(given, (tuple, list)) and len(given) == len(expected) and \
            all(_same(g, e, tolerance) for g, e in zip(given, expected, strict=True))
    return given == expected


def check(exercise: str, **answers: Any) -> CheckResult:
    """Compare a learner's answers with the worked solution; print and return the verdict."""
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
                                 f"worked solution. Hint: {spec.hint}")
        else:
            result = CheckResult(exercise, True, f"✓ {exercise}: correct.")
    print(result.message)
    if _STRICT[0] and not result.passed:
        raise AssertionError(result.message)
    return result
