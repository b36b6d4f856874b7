"""The answerability detector a system uses, fitted for its knowledge base.

:func:`fit_detector` learns the detector's weights and threshold on an
:func:`~course_lib.lab.data.answerability_set.answerability_set` of the knowledge base, with
each question's candidates from a named pipeline (:func:`retrieve_candidates`), then gives it
the knowledge base's own idf. How well such a detector does on questions it has not seen is
measured in :mod:`course_lib.lab.measure.answerability_evaluation` (cross-validation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...answerability import AnswerabilityDetector
from ...node import DocNode
from ..data.answerability_set import AnswerabilitySet, answerability_set
from ..data.datasets import KnowledgeBase


def retrieve_candidates(data: AnswerabilitySet, pipeline: str = "hybrid-rrf"
                        ) -> list[list[DocNode]]:
    """Every question's candidates from ``pipeline`` (a registered name) run on the
    reduced knowledge base ``data.kb``.

    The default, ``hybrid-rrf`` (words + characters + e5, fused by reciprocal rank, top
    5), holds the gold paragraph about as often as the reranked pipelines and costs a
    tenth of ``multipath-rerank``; the detector takes the best of each signal over the
    candidates, so their order matters little (notebook 12 checks the detector on the
    reranked candidates of ``chapter_rag`` too)."""
    from ...embeddings import expected_queries
    from .pipelines import build_pipeline

    retrieve = build_pipeline(pipeline, data.kb).retrieve
    with expected_queries([q.question for q in data.questions]):  # one e5 batch, cached
        return [list(retrieve(q.question)) for q in data.questions]


def fit_detector(kb: KnowledgeBase, data: AnswerabilitySet | None = None,
                 candidates: Sequence[Sequence[DocNode]] | None = None,
                 max_wrong: float = 0.05, embedder: Any = "default") -> AnswerabilityDetector:
    """A detector ready for ``kb``: fitted on all questions of ``data`` (default:
    :func:`answerability_set` of ``kb``, seed 0) with their ``candidates`` (default:
    :func:`retrieve_candidates`), then given ``kb``'s own idf.

    Its threshold is chosen on the questions it was fitted on;
    :func:`~course_lib.lab.measure.answerability_evaluation.cross_validate` measures how such a
    detector does on questions it has not seen.
    """
    data = data or answerability_set(kb)
    candidates = candidates if candidates is not None else retrieve_candidates(data)
    trained = AnswerabilityDetector(data.kb.paragraphs, embedder=embedder)
    trained.fit(data.questions, candidates, data.answerable, max_wrong)
    return trained.with_corpus(kb.paragraphs)
