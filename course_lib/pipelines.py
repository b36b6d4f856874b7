"""Named retrieval pipelines, so notebooks and the command line compare the same things.

A pipeline takes a knowledge base and returns a function ``question -> ranked nodes``.
``python -m course_lib pipelines`` lists them; add one with :func:`register_pipeline`.

>>> "multipath-rerank" in PIPELINES and "bm25-paragraph" in PIPELINES
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .datasets import KnowledgeBase
from .document import Document
from .fusion import MultiRetriever
from .node import DocNode
from .rerank import FeatureReranker, Reranker
from .retriever import Retriever
from .text_splitter import SentenceSplitter, approx_gpt2_tokens, split_paragraphs

Retrieve = Callable[[str], list[DocNode]]
TOPK = 5


@dataclass
class Pipeline:
    name: str
    description: str
    build: Callable[[KnowledgeBase], Retrieve]
    chunked: bool = False  # units are chunks of a file: report answer-span recall too
    # (base pipeline, cut-off): this pipeline returns exactly the base's results whose
    # score is above the cut-off (a cut-off keeps a prefix of a ranked list, so cutting
    # before or after the top k is the same), which lets an evaluation reuse the base's
    # rankings instead of retrieving and reranking again (:mod:`course_lib.reproduce`).
    cut_off_of: tuple[str, float] | None = None


@dataclass
class BuiltPipeline:
    retrieve: Retrieve
    chunked: bool


PIPELINES: dict[str, Pipeline] = {}


def register_pipeline(name: str, description: str, chunked: bool = False,
                      cut_off_of: tuple[str, float] | None = None):
    """Decorator: register ``build(kb) -> retrieve`` under ``name`` (``cut_off_of``: see
    :class:`Pipeline`)."""
    def register(build: Callable[[KnowledgeBase], Retrieve]) -> Callable[[KnowledgeBase], Retrieve]:
        if name in PIPELINES:
            raise ValueError(f"pipeline {name!r} is already registered")
        PIPELINES[name] = Pipeline(name, description, build, chunked, cut_off_of)
        return build
    return register


def build_pipeline(name: str, kb: KnowledgeBase) -> BuiltPipeline:
    if name not in PIPELINES:
        raise ValueError(f"unknown pipeline {name!r}; choose one of {sorted(PIPELINES)}")
    pipeline = PIPELINES[name]
    return BuiltPipeline(pipeline.build(kb), pipeline.chunked)


def knowledge_base_document(kb: KnowledgeBase, embed: bool | str = False) -> Document:
    """The knowledge base as a :class:`Document` with a ``paragraph`` group (one per line).

    ``embed=True`` attaches the offline default embedder (multilingual-e5-small) under
    the key ``"e5"``; ``embed="use"`` attaches USE multilingual under ``"use"`` instead.
    """
    if embed not in (False, True, "e5", "use"):
        raise ValueError(f"embed must be False, True (e5), 'e5' or 'use', got {embed!r}")
    embedders = None
    if embed:
        from .embeddings import default_embedder

        model = "e5" if embed is True else embed
        embedders = {model: default_embedder(model)}
    doc = Document(texts=kb.files, embed=embedders)
    doc.create_node_group("paragraph", transform=split_paragraphs)
    return doc


def embed_knowledge_base(kb: KnowledgeBase, models: tuple[str, ...] = ("e5", "use")
                         ) -> dict[str, int]:
    """Fill the embedding cache with what the notebooks embed on ``kb``, once, at set-up.

    e5 costs about 2 ms of CPU per token, so embedding the knowledge base takes minutes
    on a laptop whoever does it; ``python -m course_lib data --embed`` (run by ``make
    data``, ``make lab`` and ``make test``) does it once, with a progress bar, and every
    notebook's first run then takes seconds. Embeds, per model: the paragraphs and the
    questions; for e5 also the coarse chunks and the sentences the offline reranker
    reads (:func:`chapter_rag`). Texts already cached are not embedded again, and the
    vectors are the same as a notebook would compute (the cache is keyed by text).
    Returns how many texts each model now has cached for ``kb``.
    """
    from .embeddings import default_embedder

    done = {}
    questions = [q.question for q in kb.questions]
    for model in models:
        doc = knowledge_base_document(kb, embed=model)
        texts = [n.text for n in doc.get_nodes("paragraph")]
        doc.index("paragraph").embeddings(model)
        default_embedder(model).embed_queries(questions)
        if model == "e5":
            coarse = doc.get_nodes("CoarseChunk")
            doc.index("CoarseChunk").embeddings(model)
            texts += [n.text for n in coarse]
            FeatureReranker().prepare(texts)  # their sentences, for the reranker's e5 features
        done[model] = len(texts) + len(questions)
    return done


# Retrieve wide, rerank narrow: each path hands this many candidates to the reranker.
WIDE = 20
# Cut-offs are on each model's own scale, chosen on the trial questions and reported on the
# held-out dev set. The cosine ones are the best context relevance@5 on a grid (e5: steps of
# 0.01; USE: steps of 0.05) — notebook 07; e5's cosines bunch high (a question's 2nd-5th
# paragraphs mostly score 0.84-0.88), USE's spread low; the chapter's 0.4 was on bge-large-zh's.
COSINE_CUT_OFF = 0.88
USE_COSINE_CUT_OFF = 0.3
# The reranker's score is a mean z-score within the candidate pool; 2.0 is the best context
# relevance@5 among the cut-offs that keep recall@5 >= 0.99 on trial (notebook 08).
RERANK_CUT_OFF = 2.0


def paragraph_paths(doc: Document, topk: int = WIDE) -> dict[str, Retriever]:
    """The three paragraph retrievers of the multi-path pipelines: words, characters, meaning."""
    return {"bm25 words": Retriever(doc, "paragraph", "bm25_chinese", topk=topk),
            "bm25 characters": Retriever(doc, "paragraph", "bm25_char", topk=topk),
            "cosine (e5)": Retriever(doc, "paragraph", "cosine", topk=topk)}


def prepared_reranker(doc: Document, topk: int = TOPK, score_cut_off: float | None = None
                      ) -> Reranker:
    """The offline FeatureReranker, with the paragraphs tokenised and embedded in advance."""
    features = FeatureReranker()
    features.prepare([n.text for n in doc.get_nodes("paragraph")])
    return Reranker("ModuleReranker", model=features, topk=topk, score_cut_off=score_cut_off)


def rerank_after(retrieve: Retrieve, reranker: Reranker) -> Retrieve:
    def retrieve_and_rerank(query: str) -> list[DocNode]:
        return reranker(retrieve(query), query=query)

    return retrieve_and_rerank


@register_pipeline("bm25-coarse", "CoarseChunk (1024/100 characters), BM25 on jieba words",
                   chunked=True)
def _bm25_coarse(kb: KnowledgeBase) -> Retrieve:
    return Retriever(knowledge_base_document(kb), "CoarseChunk", "bm25_chinese", topk=TOPK)


@register_pipeline("bm25-coarse-gpt2", "chunks of 1024/100 approximate GPT-2 tokens "
                   "(~470 characters, the chapter's setting), BM25 on jieba words", chunked=True)
def _bm25_coarse_gpt2(kb: KnowledgeBase) -> Retrieve:
    doc = knowledge_base_document(kb)
    doc.create_node_group("CoarseChunkGPT2", SentenceSplitter, chunk_size=1024,
                          chunk_overlap=100, length_fn=approx_gpt2_tokens)
    return Retriever(doc, "CoarseChunkGPT2", "bm25_chinese", topk=TOPK)


@register_pipeline("bm25-paragraph", "one node per paragraph (split on \\n), BM25 on jieba words")
def _bm25_paragraph(kb: KnowledgeBase) -> Retrieve:
    return Retriever(knowledge_base_document(kb), "paragraph", "bm25_chinese", topk=TOPK)


@register_pipeline("bm25-paragraph-lazyllm", "paragraphs, BM25 on jieba words of 2+ characters "
                   "(LazyLLM's tokenisation, for comparison)")
def _bm25_paragraph_lazyllm(kb: KnowledgeBase) -> Retrieve:
    return Retriever(knowledge_base_document(kb), "paragraph", "bm25_lazyllm", topk=TOPK)


@register_pipeline("bm25-char-paragraph", "paragraphs, BM25 on character unigrams + bigrams")
def _bm25_char_paragraph(kb: KnowledgeBase) -> Retrieve:
    return Retriever(knowledge_base_document(kb), "paragraph", "bm25_char", topk=TOPK)


@register_pipeline("cosine-paragraph", "paragraphs, cosine over multilingual-e5-small "
                   "embeddings (a retrieval model)")
def _cosine_paragraph(kb: KnowledgeBase) -> Retrieve:
    return Retriever(knowledge_base_document(kb, embed=True), "paragraph", "cosine", topk=TOPK)


@register_pipeline("cosine-paragraph-use", "paragraphs, cosine over USE multilingual "
                   "embeddings (a general sentence encoder)")
def _cosine_paragraph_use(kb: KnowledgeBase) -> Retrieve:
    return Retriever(knowledge_base_document(kb, embed="use"), "paragraph", "cosine", topk=TOPK)


@register_pipeline("cosine-paragraph-cutoff", f"cosine-paragraph keeping only scores above "
                   f"{COSINE_CUT_OFF} (e5's scale)",
                   cut_off_of=("cosine-paragraph", COSINE_CUT_OFF))
def _cosine_paragraph_cutoff(kb: KnowledgeBase) -> Retrieve:
    return Retriever(knowledge_base_document(kb, embed=True), "paragraph", "cosine", topk=TOPK,
                     similarity_cut_off=COSINE_CUT_OFF)


@register_pipeline("cosine-paragraph-use-cutoff", f"cosine-paragraph-use keeping only scores "
                   f"above {USE_COSINE_CUT_OFF} (USE's scale)",
                   cut_off_of=("cosine-paragraph-use", USE_COSINE_CUT_OFF))
def _cosine_paragraph_use_cutoff(kb: KnowledgeBase) -> Retrieve:
    return Retriever(knowledge_base_document(kb, embed="use"), "paragraph", "cosine",
                     topk=TOPK, similarity_cut_off=USE_COSINE_CUT_OFF)


@register_pipeline("hybrid-rrf", f"words + characters + cosine paths (top {WIDE} each), "
                   "reciprocal-rank fusion, no reranker")
def _hybrid_rrf(kb: KnowledgeBase) -> Retrieve:
    return MultiRetriever(paragraph_paths(knowledge_base_document(kb, embed=True)),
                          fusion="rrf", topk=TOPK)


@register_pipeline("bm25-paragraph-rerank", f"bm25-paragraph top {WIDE}, then the offline "
                   "FeatureReranker to top 5")
def _bm25_paragraph_rerank(kb: KnowledgeBase) -> Retrieve:
    doc = knowledge_base_document(kb)
    return rerank_after(Retriever(doc, "paragraph", "bm25_chinese", topk=WIDE),
                        prepared_reranker(doc))


@register_pipeline("multipath-rerank", f"words + characters + cosine paths (top {WIDE} each), "
                   "union, offline FeatureReranker to top 5")
def _multipath_rerank(kb: KnowledgeBase) -> Retrieve:
    doc = knowledge_base_document(kb, embed=True)
    return rerank_after(MultiRetriever(paragraph_paths(doc)), prepared_reranker(doc))


@register_pipeline("multipath-rerank-cutoff", f"multipath-rerank keeping only candidates whose "
                   f"reranker score (mean z-score) is above {RERANK_CUT_OFF}",
                   cut_off_of=("multipath-rerank", RERANK_CUT_OFF))
def _multipath_rerank_cutoff(kb: KnowledgeBase) -> Retrieve:
    doc = knowledge_base_document(kb, embed=True)
    return rerank_after(MultiRetriever(paragraph_paths(doc)),
                        prepared_reranker(doc, score_cut_off=RERANK_CUT_OFF))


# ---- LLM-built groups and query rewriting. Pipelines use the offline stand-in, so their
# numbers are reproducible; notebooks 02, 05 and 09 show how to plug in a real model.
def summary_document(kb: KnowledgeBase, embed: bool | str = False) -> Document:
    """The knowledge base with a ``summary`` group: one offline summary per paragraph."""
    from .llm import OfflineLLM
    from .llm_groups import LLMParser

    doc = knowledge_base_document(kb, embed=embed)
    doc.create_node_group("summary", parent="paragraph",
                          transform=LLMParser(OfflineLLM(), task_type="summary"))
    return doc


def small_to_big(retriever: Retriever, doc: Document, group: str = "paragraph") -> Retrieve:
    """Retrieve with ``retriever``, hand back the ``group`` ancestors (deduplicated)."""
    def retrieve(query: str) -> list[DocNode]:
        return doc.find(group)(retriever(query))

    return retrieve


@register_pipeline("bm25-summary-to-paragraph", "match offline paragraph summaries (TextRank, "
                   "2 sentences) with BM25, return their paragraphs")
def _bm25_summary(kb: KnowledgeBase) -> Retrieve:
    doc = summary_document(kb)
    return small_to_big(Retriever(doc, "summary", "bm25_chinese", topk=TOPK), doc)


@register_pipeline("cosine-summary-to-paragraph", "match offline paragraph summaries with "
                   "cosine (e5), return their paragraphs")
def _cosine_summary(kb: KnowledgeBase) -> Retrieve:
    doc = summary_document(kb, embed=True)
    return small_to_big(Retriever(doc, "summary", "cosine", topk=TOPK), doc)


@register_pipeline("cosine-summary-to-paragraph-use", "match offline paragraph summaries with "
                   "cosine (USE), return their paragraphs")
def _cosine_summary_use(kb: KnowledgeBase) -> Retrieve:
    doc = summary_document(kb, embed="use")
    return small_to_big(Retriever(doc, "summary", "cosine", topk=TOPK), doc)


@register_pipeline("bm25-paragraph-multiquery", "bm25-paragraph asked 3 ways by the offline "
                   "rewriter (original, content words, keyword expansion), fused by RRF")
def _bm25_multiquery(kb: KnowledgeBase) -> Retrieve:
    from .llm import OfflineLLM
    from .rewriting import MultiQueryRetriever

    retriever = Retriever(knowledge_base_document(kb), "paragraph", "bm25_chinese", topk=TOPK)
    return MultiQueryRetriever(retriever, OfflineLLM(), n=3, topk=TOPK)


@register_pipeline("bm25-paragraph-expansion", "bm25-paragraph after expanding the query with "
                   "keywords of its top result (offline pseudo-relevance feedback)")
def _bm25_expansion(kb: KnowledgeBase) -> Retrieve:
    from .llm import OfflineLLM
    from .rewriting import ExpansionRetriever

    retriever = Retriever(knowledge_base_document(kb), "paragraph", "bm25_chinese", topk=TOPK)
    return ExpansionRetriever(retriever, OfflineLLM())


def chapter_rag(kb: KnowledgeBase, llm: object | None = None, rewrite: str | None = None,
                context_size: int = 3, score_cut_off: float | None = None,
                answerability: object | None = None, qa_pairs: object = "offline",
                dedupe: bool = False) -> object:
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
    its gold paragraph (:func:`~course_lib.related.question_bank`); a matched stored pair
    then brings that paragraph into the context too (``qa_parents``); ``None`` — no QA
    path. Either path is BM25 on jieba words, top 1, score above 10.0.

    ``dedupe=True`` counts a text once in the context: a paragraph inside a coarse chunk
    that is also there is dropped and the next candidate takes its place
    (:func:`~course_lib.rag.drop_contained`).

    ``answerability``: ``None`` (always answer), a fitted
    :class:`~course_lib.answerability.AnswerabilityDetector`, or ``True`` to fit one on
    ``kb`` now (:func:`~course_lib.answerability.fit_detector`, a few seconds); the system
    then declines when the knowledge base does not seem to hold the answer (notebook 12).
    """
    from .datasets import Question
    from .llm import OfflineLLM, get_llm
    from .llm_groups import LLMParser
    from .rag import MultiPathRAG
    from .related import question_bank

    if answerability is True:
        from .answerability import fit_detector

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
