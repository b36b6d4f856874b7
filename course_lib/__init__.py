"""course_lib: the library behind the "Upgrading RAG recall" course.

The RAG ideas are the modules at this level (node, document, retriever, rerank, ...);
the course's plumbing lives in sub-packages: ``lab/`` (data, pipelines, evaluation,
exercises, plots), ``store/`` (files on disk) and ``_support/`` (private helpers).
Names follow LazyLLM where a learner would look for them; the behaviour is our own
and, where LazyLLM surprises, documented in the notebooks. The names below are the
ones notebooks use most, gathered here for ``from course_lib import ...`` — imported when
first asked for (PEP 562), so that ``import course_lib.bm25`` loads the package root and
``bm25``'s own imports, nothing of ``lab/``.
"""

from importlib import import_module
from typing import Any

# First, before anything computes: one float order for MKL and torch, so e5's vectors are the
# same bits on every Intel CPU (see course_lib.e5_torch). The root imports nothing else: it
# sits below every idea in the layers of pyproject.toml.
from ._support import float_order as _float_order  # noqa: F401  (isort: skip)
from ._support.version import __version__

# Each name of ``from course_lib import ...`` and the module it lives in, imported on first use.
_WHERE: dict[str, str] = {
    # the RAG ideas
    **dict.fromkeys(["DocNode"], ".node"),
    **dict.fromkeys(["ROOT", "Document", "NodeTransform", "register_reader"], ".document"),
    **dict.fromkeys(["SentenceSplitter", "approx_gpt2_tokens", "split_paragraphs"],
                    ".text_splitter"),
    **dict.fromkeys(["register_bm25", "register_similarity"], ".similarity"),
    **dict.fromkeys(["Retriever"], ".retriever"),
    **dict.fromkeys(["INPUT", "PREVIOUS", "bind", "parallel", "pipeline"], ".flow"),
    **dict.fromkeys(["MultiRetriever", "reciprocal_rank_fusion"], ".fusion"),
    **dict.fromkeys(["KeywordFilter", "Reranker", "register_reranker"], ".rerank"),
    **dict.fromkeys(["context_recall", "context_relevance", "edit_similarity", "is_hit",
                     "mrr_at_k", "recall_at_k"], ".metrics"),
    **dict.fromkeys(["get_llm"], ".llm"),
    **dict.fromkeys(["LLMParser"], ".llm_groups"),
    **dict.fromkeys(["AnswerabilityDetector"], ".answerability"),
    **dict.fromkeys(["MalformedReply", "RemoteConnectionError", "RemoteError", "RemoteHTTPError",
                     "RemoteTimeout"], "._support.http_json"),
    # the lab: data, pipelines, evaluation
    **dict.fromkeys(["DatasetFormatError", "build_knowledge_base", "fetch_cmrc2018",
                     "load_cmrc2018_kb", "load_sample", "load_squad"], ".lab.data.datasets"),
    **dict.fromkeys(["knowledge_base_document"], ".lab.data.kb_document"),
    **dict.fromkeys(["PIPELINES", "register_pipeline"], ".lab.systems.pipelines"),
    **dict.fromkeys(["evaluate", "score_rankings"], ".lab.measure.evaluation"),
    **dict.fromkeys(["answerability_set"], ".lab.data.answerability_set"),
    **dict.fromkeys(["fit_detector"], ".lab.systems.detector"),
}

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


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'course_lib' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name], __name__), name)
    globals()[name] = value  # later look-ups find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
