"""Measuring a RAG system: ask it labelled questions, and switch its parts off in turn.

:func:`measure_system` asks a :class:`~course_lib.rag.MultiPathRAG` every question and
keeps one column per measure (did the context hold the gold paragraph, does the answer
contain a gold span, how much context); :func:`ablations` builds the system's copies
with one component off; :func:`ablation_table` compares them paired
(:mod:`course_lib.lab.measure.comparison`). :func:`split_stored_asked` splits questions into an
FAQ that is stored and questions that are asked.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..._support.validation import check_number
from ...fusion import MultiRetriever
from ...node import DocNode
from ...rag import MultiPathRAG, answer_contains
from ..data.datasets import Question
from .significance import SEED


# ---------------------------------------------------------------- measuring a system
def split_stored_asked(questions: Sequence[Question], seed: int = SEED,
                       stored_share: float = 0.5) -> tuple[list[Question], list[Question]]:
    """Split labelled questions into a *stored* part (an FAQ: their question-answer pairs
    go into the knowledge base, :func:`~course_lib.lab.data.question_bank.question_bank`) and
    an *asked*
    part (what users ask, what a measurement scores): a seeded shuffle of all the
    questions, the first ``stored_share`` of it stored. Both keep the input order.

    By question, not by paragraph: a paragraph may have questions on both sides (a user
    asks something else about a passage whose other questions are in the FAQ) or on one
    side only (the FAQ does not cover every passage). A stored question is never asked,
    since asking it would be looking the answer up.

    >>> from course_lib.lab.data.datasets import Question
    >>> qs = [Question(f"q{i}", f"问题{i}？", ["x"], [0], "p", "x") for i in range(6)]
    >>> stored, asked = split_stored_asked(qs)
    >>> len(stored), len(asked), {q.id for q in stored} & {q.id for q in asked}
    (3, 3, set())
    """
    share = check_number(stored_share, "stored_share", low=0, high=1)
    questions = list(questions)
    if not all(isinstance(q, Question) for q in questions):
        raise TypeError("questions must be Question objects (e.g. kb.questions)")
    n_stored = round(share * len(questions))
    if not 0 < n_stored < len(questions):
        raise ValueError(f"stored_share={stored_share} of {len(questions)} questions leaves "
                         f"one part empty: both the stored and the asked part need questions")
    order = np.random.default_rng(seed).permutation(len(questions))
    stored_at = set(order[:n_stored].tolist())
    return ([q for i, q in enumerate(questions) if i in stored_at],
            [q for i, q in enumerate(questions) if i not in stored_at])


def measure_system(system: MultiPathRAG, questions: Sequence[Question],
                   keep_answers: bool = False) -> dict[str, list[Any]]:
    """Ask ``system`` every question; one column per measure, in question order — what a
    paired comparison of two systems on the same questions needs
    (:func:`ablation_table`, :mod:`course_lib.lab.measure.significance`).

    Columns: ``id``; ``gold_in_context`` (1 when a piece of the context holds the gold
    paragraph whole: the paragraph, or a chunk containing it); ``answer_contains_gold``
    (1 when the answer contains a gold answer span, :func:`answer_contains`);
    ``context_chars`` (characters handed to the generator: every piece's
    ``get_content()``) and ``context_pieces``; with ``keep_answers=True`` also
    ``answer``, the :class:`~course_lib.rag.RAGAnswer` objects.

    The questions (and, for a system that rewrites, their rewrites) are announced to the
    embedding cache first, so a dense path embeds them in batches and keeps them on disk.

    >>> from course_lib.llm import OfflineLLM
    >>> from course_lib.lab.data.datasets import Question
    >>> tea = DocNode("龙井属于绿茶，普洱属于黑茶。", uid="tea")
    >>> rag = MultiPathRAG({"all": lambda q: [tea]}, llm=OfflineLLM())
    >>> q = Question("q1", "普洱属于哪一类茶？", ["黑茶"], [11], "p1", tea.text)
    >>> columns = measure_system(rag, [q])
    >>> columns["gold_in_context"], columns["answer_contains_gold"], columns["context_chars"]
    ([1], [1], [14])
    """
    from ...embeddings import expected_queries

    questions = list(questions)
    if not questions:
        raise ValueError("no questions to ask")
    if not all(isinstance(q, Question) for q in questions):
        raise TypeError("questions must be Question objects (e.g. kb.questions)")
    if not callable(getattr(system, "ask", None)):
        raise TypeError(f"system must have .ask(question) -> RAGAnswer (a MultiPathRAG, "
                        f"e.g. chapter_rag(kb)), got {type(system).__name__}")
    asked = [q.question for q in questions]
    with expected_queries(asked):
        rewrites: list[str] = []
        if isinstance(system, MultiPathRAG) and system.rewrite is not None:
            rewrites = [r for text in asked
                        for r in system.queries(text, system.retriever(text))[1:]]
        with expected_queries(rewrites):
            results = [system.ask(text) for text in asked]
    columns: dict[str, list[Any]] = {"id": [q.id for q in questions], "gold_in_context": [],
                                     "answer_contains_gold": [], "context_chars": [],
                                     "context_pieces": []}
    for question, result in zip(questions, results, strict=True):
        columns["gold_in_context"].append(
            int(any(question.paragraph in node.text for node in result.contexts)))
        columns["answer_contains_gold"].append(
            int(answer_contains(str(result.answer), question.answers)))
        columns["context_chars"].append(sum(len(n.get_content()) for n in result.contexts))
        columns["context_pieces"].append(len(result.contexts))
    if keep_answers:
        columns["answer"] = results
    return columns


class _Memoised:
    """Wraps a path or a reranker: each result is computed once per key (for
    :func:`ablations`); every other attribute (``topk``, ``scorer``, ...) is the inner one's."""

    def __init__(self, inner: Callable[..., list[DocNode]]) -> None:
        self.inner, self.memo = inner, {}

    def _once(self, key: Any, compute: Callable[[], list[DocNode]]) -> list[DocNode]:
        if key not in self.memo:
            self.memo[key] = compute()
        return list(self.memo[key])

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("inner")
        if inner is None:  # not set up yet (a copy being made)
            raise AttributeError(name)
        return getattr(inner, name)


class _SharedPath(_Memoised):
    """A retrieval path whose results are remembered per query."""

    def __call__(self, query: str) -> list[DocNode]:
        return self._once(query, lambda: self.inner(query))


class _SharedReranker(_Memoised):
    """A reranker whose orderings are remembered per query and candidate list."""

    def __call__(self, query: str, nodes: Sequence[DocNode]) -> list[DocNode]:
        key = (query, tuple((n.uid, tuple(n.found_by.items())) for n in nodes))
        return self._once(key, lambda: self.inner(query, nodes))


FULL_SYSTEM = "full system"


def ablations(system: MultiPathRAG, rewrite: str | None = "expand") -> dict[str, MultiPathRAG]:
    """``system`` and copies of it with one component switched off in turn: each
    retrieval path (``"without <path>"``), the reranker, the QA path (when it has one),
    the context's deduplication (when on); and the rewriter switched on as ``rewrite``
    (``"with rewrite 'expand'"``) — or off, when ``system`` already rewrites. The first
    entry, :data:`FULL_SYSTEM`, is ``system`` itself (the baseline of
    :func:`ablation_table`).

    The copies share one memo of each path's results and of the reranker's orderings (per
    query and candidate list), so work two of them have in common is done once; each
    answers exactly as it would alone. ``system`` is not changed.

    >>> from course_lib.llm import OfflineLLM
    >>> tea = DocNode("龙井属于绿茶。", uid="tea")
    >>> rag = MultiPathRAG({"a": lambda q: [tea], "b": lambda q: []}, llm=OfflineLLM())
    >>> list(ablations(rag))
    ['full system', 'without a', 'without b', "with rewrite 'expand'"]
    """
    if not isinstance(system, MultiPathRAG):
        raise TypeError(f"system must be a MultiPathRAG (e.g. chapter_rag(kb)), got "
                        f"{type(system).__name__}")
    if rewrite not in (None, "expand", "multi"):
        raise ValueError(f"rewrite must be None, 'expand' or 'multi', got {rewrite!r}")
    paths = {name: _SharedPath(path) for name, path in system.retriever.paths.items()}
    shared = copy.copy(system)
    retriever = system.retriever

    def with_paths(chosen: dict[str, Any]) -> MultiRetriever:
        return MultiRetriever(chosen, fusion=retriever.fusion, max_workers=retriever.max_workers,
                              topk=retriever.topk)

    shared.retriever = with_paths(paths)
    if system.reranker is not None:
        shared.reranker = _SharedReranker(system.reranker)
    if system.qa_path is not None:
        shared.qa_path = _SharedPath(system.qa_path)

    def variant(**changes: Any) -> MultiPathRAG:
        copied = copy.copy(shared)
        for name, value in changes.items():
            setattr(copied, name, value)
        return copied

    systems = {FULL_SYSTEM: shared}
    if len(paths) > 1:
        for name in paths:
            systems[f"without {name}"] = variant(retriever=with_paths(
                {other: path for other, path in paths.items() if other != name}))
    if system.reranker is not None:
        systems["without the reranker"] = variant(reranker=None)
    if system.qa_path is not None:
        systems["without the QA path"] = variant(qa_path=None)
    if system.dedupe:
        systems["without dedupe"] = variant(dedupe=False)
    if system.rewrite is not None:
        systems["without the rewriter"] = variant(rewrite=None)
    elif rewrite is not None:
        systems[f"with rewrite {rewrite!r}"] = variant(rewrite=rewrite)
    return systems


ABLATION_MEASURES = ("gold_in_context", "answer_contains_gold")


def ablation_table(columns: Mapping[str, Mapping[str, Sequence[Any]]],
                   baseline: str | None = None,
                   measures: Sequence[str] = ABLATION_MEASURES) -> dict[str, Any]:
    """Each system against the baseline (the first one unless ``baseline`` names another),
    paired, on every measure: :func:`course_lib.lab.measure.comparison.compare_results` on the
    :func:`measure_system` columns — the difference ``system − baseline`` with its 95 %
    interval, won/lost questions, the exact McNemar p, the Holm-adjusted p over all the
    table's comparisons, and the verdict it has earned — plus ``context``: each system's
    mean pieces and characters of context per question.

    >>> cols = {"full": {"id": [1, 2, 3], "gold_in_context": [1, 1, 1],
    ...                  "context_chars": [10, 20, 30], "context_pieces": [1, 1, 1]},
    ...         "lean": {"id": [1, 2, 3], "gold_in_context": [1, 0, 1],
    ...                  "context_chars": [5, 5, 5], "context_pieces": [1, 1, 1]}}
    >>> report = ablation_table(cols, measures=["gold_in_context"])
    >>> row = report["comparisons"][0]
    >>> row["pipeline"], round(row["difference"], 4), row["lost"], row["verdict"]
    ('lean', -0.3333, 1, 'no detectable difference')
    >>> report["context"]["lean"]
    {'pieces': 1.0, 'chars': 5.0}
    """
    from .comparison import compare_results

    measures = list(measures)
    report = compare_results({name: {"per_question": table} for name, table in columns.items()},
                             baseline, metrics=measures, tested=measures)
    report["context"] = {}
    for name, table in columns.items():
        for key in ("context_pieces", "context_chars"):
            if key not in table:
                raise ValueError(f"system {name!r} has no {key!r} column; pass what "
                                 f"measure_system returns")
        report["context"][name] = {
            "pieces": round(float(np.mean(table["context_pieces"])), 2),
            "chars": round(float(np.mean(table["context_chars"])), 1)}
    return report


def format_ablation_table(report: Mapping[str, Any]) -> str:
    """:func:`ablation_table`'s report as text: the comparison tables
    (:func:`course_lib.lab.measure.comparison.format_comparison`), then the context each system
    hands the generator (mean per question) and its change against the baseline."""
    from .comparison import format_comparison

    context = report["context"]
    width = max(len("system"), *(len(name) for name in context))
    base = context[report["baseline"]]
    lines = [format_comparison(report), "",
             "context handed to the generator (mean per question)",
             f"{'system':<{width}}  {'pieces':>6}  {'characters':>10}  {'change':>7}"]
    for name, row in context.items():
        change = "" if name == report["baseline"] else f"{row['chars'] - base['chars']:+7.1f}"
        lines.append(f"{name:<{width}}  {row['pieces']:>6.2f}  {row['chars']:>10.1f}  "
                     f"{change:>7}")
    return "\n".join(lines)
