"""The knowledge base as a :class:`~course_lib.document.Document`, and its embeddings
made once at set-up.

:func:`knowledge_base_document` is the document every pipeline and notebook starts from
(a ``paragraph`` group, one node per line); :func:`summary_document` adds one offline
summary per paragraph; :func:`embed_knowledge_base` fills the embedding cache.
"""

from __future__ import annotations

from ...document import Document
from ...embeddings import default_embedder
from ...llm import OfflineLLM
from ...llm_groups import LLMParser
from ...rerank import FeatureReranker
from ...text_splitter import split_paragraphs
from .datasets import KnowledgeBase


def knowledge_base_document(kb: KnowledgeBase, embed: bool | str = False) -> Document:
    """The knowledge base as a :class:`Document` with a ``paragraph`` group (one per line).

    ``embed=True`` attaches the offline default embedder (multilingual-e5-small) under
    the key ``"e5"``; ``embed="use"`` attaches USE multilingual under ``"use"`` instead.
    """
    if not (isinstance(embed, bool) or embed in ("e5", "use")):  # 1 == True: not a choice
        raise ValueError(f"embed must be False, True (e5), 'e5' or 'use', got {embed!r}")
    embedders = None
    if embed:
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
    reads (:func:`~course_lib.lab.systems.chapter_system.chapter_rag`). Texts already cached are
    not embedded again, and the
    vectors are the same as a notebook would compute (the cache is keyed by text).
    Returns, per model, how many paragraphs, coarse chunks and questions it embedded (or
    found cached).
    """
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


def summary_document(kb: KnowledgeBase, embed: bool | str = False) -> Document:
    """The knowledge base with a ``summary`` group: one offline summary per paragraph."""
    doc = knowledge_base_document(kb, embed=embed)
    doc.create_node_group("summary", parent="paragraph",
                          transform=LLMParser(OfflineLLM(), task_type="summary"))
    return doc
