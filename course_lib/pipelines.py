"""Named retrieval pipelines, so notebooks and the command line compare the same things.

A pipeline takes a knowledge base and returns a function ``question -> ranked nodes``.
``python -m course_lib pipelines`` lists them; add one with :func:`register_pipeline`.

>>> sorted(PIPELINES)[:2]
['bm25-coarse', 'bm25-coarse-gpt2']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .datasets import KnowledgeBase
from .document import Document
from .node import DocNode
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


@dataclass
class BuiltPipeline:
    retrieve: Retrieve
    chunked: bool


PIPELINES: dict[str, Pipeline] = {}


def register_pipeline(name: str, description: str, chunked: bool = False):
    """Decorator: register ``build(kb) -> retrieve`` under ``name``."""
    def register(build: Callable[[KnowledgeBase], Retrieve]) -> Callable[[KnowledgeBase], Retrieve]:
        if name in PIPELINES:
            raise ValueError(f"pipeline {name!r} is already registered")
        PIPELINES[name] = Pipeline(name, description, build, chunked)
        return build
    return register


def build_pipeline(name: str, kb: KnowledgeBase) -> BuiltPipeline:
    if name not in PIPELINES:
        raise ValueError(f"unknown pipeline {name!r}; choose one of {sorted(PIPELINES)}")
    pipeline = PIPELINES[name]
    return BuiltPipeline(pipeline.build(kb), pipeline.chunked)


def knowledge_base_document(kb: KnowledgeBase) -> Document:
    """The knowledge base as a :class:`Document` with a ``paragraph`` group (one per line)."""
    doc = Document(texts=kb.files)
    doc.create_node_group("paragraph", transform=split_paragraphs)
    return doc


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
