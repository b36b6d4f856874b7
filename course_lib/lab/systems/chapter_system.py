"""The chapter's final system, built on the knowledge base (notebook 09).

Paragraph BM25 on words and on characters plus coarse-chunk cosine, their union, the
offline reranker, and a QA-pair path that bypasses the reranker; then an LLM answers.
"""

from __future__ import annotations

from ...llm import OfflineLLM, get_llm
from ...llm_groups import LLMParser
from ...rag import MultiPathRAG
from ...rerank import FeatureReranker, Reranker
from ...retriever import Retriever
from ..data.datasets import KnowledgeBase, Question
from ..data.kb_document import knowledge_base_document
from ..data.question_bank import question_bank
from .detector import fit_detector
from .pipelines import WIDE


def chapter_rag(kb: KnowledgeBase, llm: object | None = None, rewrite: str | None = None,
                context_size: int = 3, score_cut_off: float | None = None,
                answerability: object | None = None, qa_pairs: object = "offline",
                dedupe: bool = False) -> MultiPathRAG:
    """The chapter's final system on the knowledge base: paragraph BM25 (words and
    characters) and coarse-chunk cosine (one after another by default; ``MultiPathRAG``'s
    ``max_workers`` runs them in threads), union, offline reranker, plus a
    QA-pair path that bypasses the reranker; then ``llm`` answers (default: the
    configured model, or the offline stand-in). ``rewrite`` (``None``, ``"expand"`` or
    ``"multi"``) adds queries that ``llm`` rewrites (:class:`~course_lib.rag.MultiPathRAG`).
    ``score_cut_off`` drops candidates the reranker does not rate clearly above the pool
    (see notebook 08).

    ``qa_pairs``: ``"offline"`` (the default) — pairs the offline stand-in writes from each
    paragraph (a sentence with a word blanked out, that word the answer); a list of
    questions of ``kb`` — stored as an FAQ of real question-answer pairs, each filed under
    its gold paragraph (:func:`~course_lib.lab.data.question_bank.question_bank`); a matched
    stored pair then brings that paragraph into the context too (``qa_parents``); ``None`` — no QA
    path. Either path is BM25 on jieba words, top 1, score above 10.0.

    ``dedupe=True`` counts a text once in the context: a paragraph inside a coarse chunk
    that is also there is dropped and the next candidate takes its place
    (:func:`~course_lib.rag.drop_contained`).

    ``answerability``: ``None`` (always answer), a fitted
    :class:`~course_lib.answerability.AnswerabilityDetector`, or ``True`` to fit one on
    ``kb`` now (:func:`~course_lib.lab.systems.detector.fit_detector`, a few
    seconds); the system then declines when the knowledge base does not seem to hold the
    answer (notebook 12).
    """
    if answerability is True:
        answerability = fit_detector(kb)
    elif answerability is False:
        answerability = None
    stored = None
    if isinstance(qa_pairs, (list, tuple)) and all(isinstance(q, Question) for q in qa_pairs):
        stored = list(qa_pairs)
        if not stored:
            raise ValueError("qa_pairs is an empty list: give the questions to store, "
                             "'offline' for the offline pairs, or None for no QA path")
    elif qa_pairs not in (None, "offline"):
        raise ValueError(f"qa_pairs must be 'offline', None or a list of questions of the "
                         f"knowledge base to store (e.g. kb.questions[::2]), got {qa_pairs!r:.60}")
    if stored is not None:
        doc = question_bank(kb, group="qapair", embed=True, questions=stored)
    else:
        doc = knowledge_base_document(kb, embed=True)
        if qa_pairs == "offline":
            doc.create_node_group("qapair", parent="paragraph",
                                  transform=LLMParser(OfflineLLM(), task_type="qa"))
    paths = {"bm25 words": Retriever(doc, "paragraph", "bm25_chinese", topk=WIDE),
             "bm25 characters": Retriever(doc, "paragraph", "bm25_char", topk=WIDE),
             "coarse chunks, cosine": Retriever(doc, "CoarseChunk", "cosine", topk=5)}
    features = FeatureReranker()
    features.prepare([n.text for g in ("paragraph", "CoarseChunk") for n in doc.get_nodes(g)])
    # With dedupe the reranker hands back every candidate: a dropped duplicate's place
    # goes to the next one (MultiPathRAG cuts to context_size).
    reranker = Reranker("ModuleReranker", model=features,
                        topk=None if dedupe else context_size, score_cut_off=score_cut_off)
    qa_path = (None if qa_pairs is None else
               Retriever(doc, "qapair", "bm25_chinese", topk=1, similarity_cut_off=10.0))
    return MultiPathRAG(paths, llm=llm or get_llm(), reranker=reranker, qa_path=qa_path,
                        rewrite=rewrite, context_size=context_size,
                        answerability=answerability, qa_parents=stored is not None,
                        dedupe=dedupe)
