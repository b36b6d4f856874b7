"""course_lib: the library behind the "Upgrading RAG recall" course.

The RAG ideas are the modules at this level (node, document, retriever, rerank, ...);
the course's plumbing lives in sub-packages: ``lab/`` (data, pipelines, evaluation,
exercises, plots), ``store/`` (files on disk) and ``_support/`` (private helpers).
Names follow LazyLLM where a learner would look for them; the behaviour is our own
and, where LazyLLM surprises, documented in the notebooks. The names below are the
ones notebooks use most, gathered here for ``from course_lib import ...``.
"""

# First, before anything computes: one float order for MKL and torch, so e5's vectors are the
# same bits on every Intel CPU (see course_lib.e5_torch; it imports no torch).
from . import e5_torch as _e5_torch  # noqa: F401  (isort: skip)
from ._support.http_json import (
    MalformedReply,
    RemoteConnectionError,
    RemoteError,
    RemoteHTTPError,
    RemoteTimeout,
)
from ._support.version import __version__
from .answerability import AnswerabilityDetector
from .document import ROOT, Document, NodeTransform, register_reader
from .fusion import (
    INPUT,
    PREVIOUS,
    MultiRetriever,
    bind,
    parallel,
    pipeline,
    reciprocal_rank_fusion,
)
from .lab.answerability_evaluation import answerability_set, fit_detector
from .lab.datasets import (
    DatasetFormatError,
    build_knowledge_base,
    fetch_cmrc2018,
    load_cmrc2018_kb,
    load_sample,
    load_squad,
)
from .lab.evaluation import evaluate, score_rankings
from .lab.kb_document import knowledge_base_document
from .lab.pipelines import PIPELINES, register_pipeline
from .llm import get_llm
from .llm_groups import LLMParser
from .metrics import (
    context_recall,
    context_relevance,
    edit_similarity,
    is_hit,
    mrr_at_k,
    recall_at_k,
)
from .node import DocNode
from .rerank import KeywordFilter, Reranker, register_reranker
from .retriever import Retriever
from .similarity import register_bm25, register_similarity
from .text_splitter import SentenceSplitter, approx_gpt2_tokens, split_paragraphs

__all__ = [
    "AnswerabilityDetector", "answerability_set", "fit_detector",
    "DatasetFormatError", "DocNode", "Document", "KeywordFilter", "LLMParser", "MultiRetriever",
    "NodeTransform",
    "INPUT", "PREVIOUS", "ROOT", "Reranker", "Retriever", "SentenceSplitter", "bind", "get_llm",
    "parallel", "pipeline",
    "reciprocal_rank_fusion", "register_reranker",
    "PIPELINES", "approx_gpt2_tokens", "build_knowledge_base", "context_recall",
    "context_relevance", "edit_similarity", "evaluate", "fetch_cmrc2018", "is_hit",
    "knowledge_base_document", "load_cmrc2018_kb", "load_sample", "load_squad", "mrr_at_k",
    "recall_at_k", "register_pipeline", "register_bm25", "register_reader", "register_similarity",
    "score_rankings", "split_paragraphs", "__version__",
    "RemoteError", "RemoteConnectionError", "RemoteTimeout", "RemoteHTTPError", "MalformedReply",
]
