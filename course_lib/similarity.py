"""Similarities: how a retriever scores a node against a query.

A similarity works on text (``mode='text'``: it sees the query string and the nodes)
or on vectors (``mode='embedding'``: it sees the query vector and the nodes'
vectors). Built in: ``bm25`` (English words), ``bm25_chinese`` (jieba words),
``bm25_lazyllm`` (jieba words as LazyLLM's BM25 sees them), ``bm25_char`` (character
unigrams and bigrams), ``bm25_chinese_norm`` and ``bm25_char_norm`` (the same after
converting both sides to Simplified: :mod:`course_lib.scripts`), ``cosine`` and ``dot``
(on dense or sparse vectors). Register your own::

    @register_similarity(mode="text", batch=False)
    def shared_characters(query: str, node: DocNode) -> float:
        return len(set(query) & set(node.text)) / len(set(query))

With ``batch=True`` the function gets all nodes (or, in embedding mode, the matrix of
their vectors) at once and returns one score per node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bm25 import BM25Index
from .node import DocNode
from .scripts import script_normalised
from .text_tokens import char_ngrams, chinese_tokens, english_tokens, lazyllm_chinese_tokens
from .vectors import DenseVectors, SparseVectors, is_sparse_batch

MODES = ("text", "embedding")


@dataclass
class Similarity:
    """A named scoring rule. A node is a hit only when its score is above ``min_score``."""

    name: str
    fn: Callable[..., Any]
    mode: str = "text"
    batch: bool = False
    min_score: float = float("-inf")

    def scores(self, query: Any, items: Sequence[Any]) -> np.ndarray:
        """One score per item. ``items`` are nodes (text mode) or vectors (embedding mode)."""
        if self.batch:
            raw = self.fn(query, items)
        else:
            raw = [self.fn(query, item) for item in items]
        scores = np.asarray(raw, dtype=np.float64).ravel()
        if scores.shape[0] != len(items):
            raise ValueError(f"similarity {self.name!r} returned {scores.shape[0]} scores "
                             f"for {len(items)} items")
        if np.isnan(scores).any():
            raise ValueError(f"similarity {self.name!r} returned NaN scores; "
                             "check the inputs (empty text? zero vector?)")
        return scores


class BM25Similarity(Similarity):
    """BM25 over a tokeniser. :meth:`build` makes the index (a
    :class:`~course_lib.index.GroupIndex` keeps one per node group).

    A node that shares no term with the query scores 0 and is **not** returned
    (LazyLLM pads its results with such zero-score nodes).
    """

    def __init__(self, name: str, tokenizer: Callable[[str], list[str]], **bm25_args: Any):
        super().__init__(name=name, fn=tokenizer, mode="text", batch=True, min_score=0.0)
        self.tokenizer = tokenizer
        self.bm25_args = bm25_args

    def build(self, texts: Sequence[str]) -> BM25Index:
        return BM25Index([self.tokenizer(text) for text in texts], **self.bm25_args)

    def scores(self, query: str, items: Sequence[DocNode]) -> np.ndarray:
        """Scores of ``items`` against ``query`` from an index built on the spot."""
        return self.build([node.text for node in items]).scores(self.tokenizer(query))


class VectorSimilarity(Similarity):
    """Cosine or dot product over an embed key's vectors: faiss (or numpy, HNSW, Milvus)
    for dense vectors, scipy for sparse ones — see :mod:`course_lib.vectors`.

    For sparse vectors, a node sharing no term with the query is not a match.
    """

    def __init__(self, name: str, metric: str) -> None:
        super().__init__(name=name, fn=None, mode="embedding", batch=True)
        self.metric = metric

    def scores(self, query: Any, items: Any) -> np.ndarray:
        """Scores of every vector in ``items`` (no index kept: exact, numpy)."""
        if is_sparse_batch(items):
            return SparseVectors(items, self.metric).scores(query)
        return DenseVectors(items, self.metric, backend="numpy").scores(query)


SIMILARITIES: dict[str, Similarity] = {
    "bm25": BM25Similarity("bm25", english_tokens),
    "bm25_chinese": BM25Similarity("bm25_chinese", chinese_tokens),
    "bm25_lazyllm": BM25Similarity("bm25_lazyllm", lazyllm_chinese_tokens),
    "bm25_char": BM25Similarity("bm25_char", char_ngrams),
    "bm25_chinese_norm": BM25Similarity("bm25_chinese_norm", script_normalised(chinese_tokens)),
    "bm25_char_norm": BM25Similarity("bm25_char_norm", script_normalised(char_ngrams)),
    "cosine": VectorSimilarity("cosine", "cosine"),
    "dot": VectorSimilarity("dot", "dot"),
}

BUILTIN = frozenset(SIMILARITIES)


def register_similarity(func: Callable[..., Any] | None = None, *, mode: str = "text",
                        batch: bool = False, name: str | None = None) -> Any:
    """Register ``func`` under ``name`` (default: its ``__name__``); usable as a decorator.

    >>> @register_similarity(mode="text")
    ... def same_length(query, node):
    ...     return -abs(len(query) - len(node.text))
    >>> get_similarity("same_length").mode
    'text'
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        key = name or fn.__name__
        if key in BUILTIN:
            raise ValueError(f"{key!r} is a built-in similarity; choose another name")
        SIMILARITIES[key] = Similarity(key, fn, mode=mode, batch=batch)
        return fn

    return register(func) if func is not None else register


def register_bm25(name: str, tokenizer: Callable[[str], list[str]], **bm25_args: Any) -> None:
    """Register a BM25 similarity over your own tokeniser (e.g. to compare tokenisations).

    >>> register_bm25("bm25_characters", lambda text: list(text))
    >>> get_similarity("bm25_characters").min_score
    0.0
    """
    if name in BUILTIN:
        raise ValueError(f"{name!r} is a built-in similarity; choose another name")
    SIMILARITIES[name] = BM25Similarity(name, tokenizer, **bm25_args)


def get_similarity(name: str) -> Similarity:
    """The registered similarity called ``name``, or a clear error listing the choices.

    ``name`` must be a string: a list such as ``["bm25"]`` is a ``TypeError`` (one
    retriever has one similarity; combine several with a
    :class:`~course_lib.fusion.MultiRetriever`), an unknown name a ``ValueError``.

    >>> get_similarity(["bm25"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: similarity must be the name of a registered similarity (a str), ...
    """
    if not isinstance(name, str):
        raise TypeError(f"similarity must be the name of a registered similarity (a str), "
                        f"one of {sorted(SIMILARITIES)}; got {type(name).__name__} "
                        f"{name!r:.60}. To combine several, make one Retriever each and "
                        "merge them with MultiRetriever")
    try:
        return SIMILARITIES[name]
    except KeyError:
        raise ValueError(f"unknown similarity {name!r}; choose one of "
                         f"{sorted(SIMILARITIES)} or register_similarity() your own") from None
