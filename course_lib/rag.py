"""Retrieval-augmented generation, end to end: the reference chapter's final system.

    question ─► (rewrite) ─► several retrievers ─► union ─► reranker ─┐
           └──────────────► QA-pair retriever (bypasses the reranker) ─┴► context ─► LLM ─► answer

With the offline stand-in the "LLM" answers extractively: it returns the context
sentence that covers the question best, and says so (``answer.backend == "offline"``).

With ``answerability=detector`` (:class:`course_lib.answerability.AnswerabilityDetector`)
the system first asks whether the reranked candidates hold the answer at all; when the
detector says no, it declines with :data:`DECLINED` instead of calling the LLM, and the
result carries the detector's verdict (its signals and best candidate) as evidence.

Measuring it (notebook 09) is the lab's job (:mod:`course_lib.lab.measure.rag_evaluation`):
asking a system questions with one column per measure, the copies with one part switched
off, and each tested against the full system, paired, with Holm's correction.

>>> from course_lib.llm import OfflineLLM
>>> nodes = [DocNode("龙井属于绿茶，普洱属于黑茶。", uid="tea")]
>>> rag = MultiPathRAG({"all": lambda q: nodes}, llm=OfflineLLM())
>>> str(rag.ask("普洱属于哪一类茶？").answer)
'龙井属于绿茶，普洱属于黑茶。'
>>> from types import SimpleNamespace
>>> says_no = lambda question, nodes: SimpleNamespace(answerable=False)
>>> careful = MultiPathRAG({"all": lambda q: nodes}, llm=OfflineLLM(), answerability=says_no)
>>> result = careful.ask("《茶经》的作者是谁？")
>>> result.declined, str(result.answer) == DECLINED, [n.uid for n in result.contexts]
(True, True, ['tea'])
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._support.validation import check_int, validate_query
from .fusion import MultiRetriever, Retrieve, check_path_result, union
from .llm import ChatLLM, Reply, get_llm
from .node import DocNode
from .rerank import Reranker
from .text_splitter import split_sentences

# What a system says instead of answering when the knowledge base lacks the answer.
DECLINED = "知识库中没有这个问题的答案 (the knowledge base does not contain this)"


@dataclass
class RAGAnswer:
    question: str
    answer: Reply
    contexts: list[DocNode]  # what the generator saw (or, declined, was looked at), in order
    queries: list[str]       # the question and its rewrites
    seconds: float = 0.0
    qa_hits: list[DocNode] = field(default_factory=list)
    declined: bool = False   # the answerability check said the answer is not there
    verdict: Any = None      # the check's verdict (signals, best candidate, .explain())

    @property
    def backend(self) -> str:
        return self.answer.backend


class MultiPathRAG:
    """Several retrievers (one after another, or in threads with ``max_workers`` > 0),
    union, rerank, then generate.

    ``qa_path`` (optional) retrieves question-answer nodes; they skip the reranker and
    are put first in the context, since a matched question is the strongest evidence.
    With ``qa_parents=True`` each matched pair brings the node it was filed under (its
    paragraph) right after it, also past the reranker: a stored question points to the
    passage it was asked about, which may answer the user's question when the stored
    answer does not.
    ``rewrite`` = ``None`` | ``"expand"`` | ``"multi"`` adds rewritten queries.
    ``dedupe=True`` counts each text once: a piece whose text lies inside another piece
    (a paragraph inside the coarse chunk that holds it) is dropped before the context is
    cut to ``context_size`` (:func:`drop_contained`), so its place goes to the next
    candidate.
    ``answerability`` (optional) is called as ``answerability(question, ranked)`` on the
    reranked candidates (not the QA pairs, which are questions about passages, not
    passages) and returns a verdict with ``.answerable``; when that is false the
    system declines with :data:`DECLINED` and does not call the LLM.
    """

    def __init__(self, paths: dict[str, Retrieve], llm: ChatLLM | None = None,
                 reranker: Reranker | None = None, qa_path: Retrieve | None = None,
                 rewrite: str | None = None, context_size: int = 5, max_workers: int = 0,
                 answerability: Callable[[str, list[DocNode]], Any] | None = None,
                 qa_parents: bool = False, dedupe: bool = False) -> None:
        if rewrite not in (None, "expand", "multi"):
            raise ValueError(f"rewrite must be None, 'expand' or 'multi', got {rewrite!r}")
        context_size = check_int(context_size, "context_size", low=1)
        for name, value, what in (("reranker", reranker, "a Reranker (query, nodes)"),
                                  ("qa_path", qa_path, "a retriever query -> list of DocNodes"),
                                  ("answerability", answerability, "a fitted detector "
                                   "(question, nodes) -> verdict, e.g. fit_detector(kb)")):
            if value is not None and not callable(value):
                raise TypeError(f"{name} must be None or {what}, got {type(value).__name__}: "
                                f"{value!r:.60}")
        if getattr(answerability, "fitted", True) is False:  # an AnswerabilityDetector
            raise ValueError("answerability: the detector is not fitted yet; fit it first "
                             "(detector.fit(...)) or build a fitted one with fit_detector(kb)")
        if isinstance(reranker, Reranker) and reranker.output_format is not None:
            raise ValueError(f"reranker must hand back nodes: build it with output_format=None "
                             f"(the default), not {reranker.output_format!r}")
        if llm is not None and not callable(getattr(llm, "answer", None)):
            raise TypeError(f"llm must be None (the configured one) or a chat LLM from "
                            f"get_llm() / OfflineLLM(), got {type(llm).__name__}")
        self.retriever = MultiRetriever(paths, max_workers=max_workers)
        self.llm = llm or get_llm()
        self.reranker, self.qa_path, self.rewrite = reranker, qa_path, rewrite
        self.context_size = context_size
        self.answerability = answerability
        for name, flag in (("qa_parents", qa_parents), ("dedupe", dedupe)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        self.qa_parents, self.dedupe = qa_parents, dedupe

    def queries(self, question: str, first_hits: Sequence[DocNode]) -> list[str]:
        context = [n.text for n in first_hits[:1]]
        if self.rewrite == "expand":
            return list(dict.fromkeys([question, self.llm.expand_query(question, context)]))
        if self.rewrite == "multi":
            return self.llm.query_variants(question, 3, context)
        return [question]

    def retrieve(self, question: str) -> tuple[list[DocNode], list[DocNode], list[str]]:
        first = self.retriever(question)
        queries = self.queries(question, first)
        candidates = union([first] + [self.retriever(q) for q in queries[1:]])
        ranked = (self.reranker(question, candidates) if self.reranker is not None
                  else candidates)
        if self.dedupe:
            ranked = drop_contained(ranked, limit=self.context_size)
        ranked = ranked[: self.context_size]
        qa_hits = []
        if self.qa_path is not None:
            found = check_path_result("qa pairs", self.qa_path, self.qa_path(question))
            qa_hits = [n.with_score(n.score or 0.0) for n in found]
            for rank, node in enumerate(qa_hits, start=1):
                node.found_by = {"qa pairs": rank}
        return ranked, qa_hits, queries

    def ask(self, question: str) -> RAGAnswer:
        started = time.perf_counter()
        validate_query(question)
        ranked, qa_hits, queries = self.retrieve(question)
        qa_part = qa_hits
        if self.qa_parents:
            qa_part = []
            for hit in qa_hits:
                qa_part.append(hit)
                if hit.parent is not None:
                    source = copy.copy(hit.parent)
                    source.score, source.found_by = hit.score, dict(hit.found_by)
                    qa_part.append(source)
        contexts = union([qa_part, ranked])
        if self.dedupe:
            contexts = drop_contained(contexts)
        verdict = self.check_answerable(question, ranked)
        declined = verdict is not None and not verdict.answerable
        if declined:  # no LLM call: nothing it could say would come from the knowledge base
            answer = Reply(DECLINED, "answerability")
        else:
            answer = self.llm.answer(question, [n.get_content() for n in contexts])
        return RAGAnswer(question, answer, contexts, queries,
                         round(time.perf_counter() - started, 3), qa_hits, declined, verdict)

    def check_answerable(self, question: str, ranked: list[DocNode]) -> Any:
        """The answerability verdict on the reranked candidates (``None`` without a check)."""
        if self.answerability is None:
            return None
        verdict = self.answerability(question, ranked)
        if not isinstance(getattr(verdict, "answerable", None), (bool, np.bool_)):
            raise TypeError(f"answerability must return a verdict with a boolean .answerable "
                            f"(as AnswerabilityDetector does), got {type(verdict).__name__}: "
                            f"{verdict!r:.60}")
        return verdict

    __call__ = ask


def answer_contains(answer: str, gold_answers: Sequence[str]) -> bool:
    """Lenient answer accuracy: the generated answer contains a gold answer span."""
    return any(gold and gold in answer for gold in gold_answers)


def llm_context_recall(llm: ChatLLM, reference: str, contexts: Sequence[str]) -> float:
    """Share of the reference answer's statements that the contexts support, as judged
    by ``llm`` (the offline stand-in: one context sentence holds ≥ 70 % of the
    statement's character bigrams). For when no labelled passage exists."""
    statements = split_sentences(reference) or [reference.strip()]
    statements = [s for s in statements if s]
    if not statements:
        raise ValueError("reference is empty: nothing to check against the contexts")
    return sum(llm.supported(s, contexts) for s in statements) / len(statements)


# ---------------------------------------------------------------- context hygiene
def drop_contained(nodes: Sequence[DocNode], limit: int | None = None) -> list[DocNode]:
    """Each piece of text once, best first: a node whose content (``get_content()``, what
    the generator reads) lies inside a node already kept is dropped; a node that contains
    kept ones replaces them, at the best of their places. Identical contents: the first
    is kept. ``limit`` stops once that many pieces are kept (later nodes are not looked
    at). A kept node that absorbed others is a copy whose ``found_by`` also names the
    paths that found them (each path's best rank): their text is in it. The nodes given
    are not changed.

    Why the larger piece stays: it holds all of the smaller one, so the context loses no
    text and holds none twice; what it costs is characters
    (:func:`~course_lib.lab.measure.rag_evaluation.measure_system`
    counts them). In :class:`MultiPathRAG` (``dedupe=True``) this runs on the reranked
    candidates before the cut to ``context_size``, so a dropped duplicate's place goes to
    the next candidate.

    >>> paragraph = DocNode("长城东起山海关。", uid="p")
    >>> chunk = DocNode("序。长城东起山海关。西至嘉峪关。", uid="c")
    >>> other = DocNode("故宫在北京。", uid="o")
    >>> [n.uid for n in drop_contained([paragraph, other, chunk])]
    ['c', 'o']
    >>> [n.uid for n in drop_contained([chunk, other, paragraph], limit=1)]
    ['c']
    >>> paragraph.found_by, chunk.found_by = {"bm25": 1}, {"cosine": 2}
    >>> drop_contained([paragraph, chunk])[0].found_by
    {'cosine': 2, 'bm25': 1}
    """
    if limit is not None:
        limit = check_int(limit, "limit", low=1)
    kept: list[DocNode] = []
    texts: list[str] = []
    for node in nodes:
        if limit is not None and len(kept) >= limit:
            break
        if not isinstance(node, DocNode):
            raise TypeError(f"drop_contained takes DocNodes, got {type(node).__name__}")
        text = node.get_content()
        holder = next((i for i, seen in enumerate(texts) if text in seen), None)
        if holder is not None:
            kept[holder] = _absorb(kept[holder], [node])
            continue
        inside = [i for i, seen in enumerate(texts) if seen in text]
        if inside:
            node = _absorb(node, [kept[i] for i in inside])
        place = inside[0] if inside else len(kept)
        for i in reversed(inside):
            del kept[i], texts[i]
        kept.insert(place, node)
        texts.insert(place, text)
    return kept


def _absorb(container: DocNode, absorbed: Sequence[DocNode]) -> DocNode:
    """A copy of ``container`` whose ``found_by`` adds the paths that found ``absorbed``."""
    found_by = dict(container.found_by)
    for node in absorbed:
        for path, rank in node.found_by.items():
            found_by[path] = min(rank, found_by.get(path, rank))
    if found_by == container.found_by:
        return container
    merged = copy.copy(container)
    merged.found_by = found_by
    return merged
