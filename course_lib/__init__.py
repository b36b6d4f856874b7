"""course_lib: the library behind the "Upgrading RAG recall" course.

Names follow LazyLLM where a learner would look for them; the behaviour is our own
and, where LazyLLM surprises, documented in the notebooks.
"""

from .answerability import AnswerabilityDetector, answerability_set, fit_detector
from .datasets import (
    DatasetFormatError,
    build_knowledge_base,
    fetch_cmrc2018,
    load_cmrc2018_kb,
    load_sample,
    load_squad,
)
from .document import ROOT, Document, NodeTransform, register_reader
from .evaluation import evaluate, score_rankings
from .fusion import INPUT, MultiRetriever, bind, parallel, pipeline, reciprocal_rank_fusion
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
from .pipelines import PIPELINES, knowledge_base_document, register_pipeline
from .rerank import KeywordFilter, Reranker, register_reranker
from .retriever import Retriever
from .similarity import register_bm25, register_similarity
from .text_splitter import SentenceSplitter, approx_gpt2_tokens, split_paragraphs

__version__ = "0.1.0"

__all__ = [
    "AnswerabilityDetector", "answerability_set", "fit_detector",
    "DatasetFormatError", "DocNode", "Document", "KeywordFilter", "LLMParser", "MultiRetriever",
    "NodeTransform",
    "INPUT", "ROOT", "Reranker", "Retriever", "SentenceSplitter", "bind", "get_llm", "parallel",
    "pipeline",
    "reciprocal_rank_fusion", "register_reranker",
    "PIPELINES", "approx_gpt2_tokens", "build_knowledge_base", "context_recall",
    "context_relevance", "edit_similarity", "evaluate", "fetch_cmrc2018", "is_hit",
    "knowledge_base_document", "load_cmrc2018_kb", "load_sample", "load_squad", "mrr_at_k",
    "recall_at_k", "register_pipeline", "register_bm25", "register_reader", "register_similarity",
    "score_rankings", "split_paragraphs", "__version__",
]
