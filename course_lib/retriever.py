"""Retriever = node group × similarity (× index).

A retriever scores every node of one group against the query and returns the best
``topk`` **sorted by score, best first, each carrying its score**. LazyLLM returns an
unordered set; anything that reads ranks (MRR, "take the first hit") then measures
noise — notebook 01 shows by how much.

>>> doc = Document(texts={"a.txt": "猫喜欢鱼。\\n狗喜欢骨头。"})
>>> doc.create_node_group("line", transform=lambda t: t.split("\\n"))
>>> retriever = Retriever(doc, "line", similarity="bm25_chinese", topk=1)
>>> [(n.text, round(n.score, 2)) for n in retriever("狗喜欢什么")]
[('狗喜欢骨头。', 0.88)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .document import Document
from .fusion import reciprocal_rank_fusion
from .node import DocNode
from .ranking import passes, rounded, top_k
from .similarity import VectorSimilarity, get_similarity
from .vectors import BACKENDS

TOPK_RANGE = (1, 10000)
MAX_QUERY_CHARS = 1_000_000


def validate_topk(topk: Any, name: str = "topk") -> int:
    low, high = TOPK_RANGE
    if isinstance(topk, bool) or not isinstance(topk, int) or not low <= topk <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {topk!r}")
    return topk


def validate_query(query: Any) -> str:
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query is empty: give the question to retrieve for")
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"query has {len(query):,} characters; the limit is "
                         f"{MAX_QUERY_CHARS:,}")
    return query


class Retriever:
    """Retrieve the ``topk`` nodes of ``group_name`` most similar to a query.

    ``similarity_cut_off`` drops nodes whose score is not strictly above it (a float,
    or ``{embed_key: float}``). ``filters`` keeps nodes whose metadata value is in a
    list, e.g. ``{"file_name": ["doc_01.txt"]}``. ``embed_keys`` picks the vectors an
    embedding similarity uses (default: all of the document's); ``index`` picks the dense
    vector index: ``"faiss"`` (exact, default), ``"numpy"`` (exact), ``"hnsw"``
    (approximate, for large collections) or ``"milvus"`` (the document's vector store).
    """

    def __init__(self, doc: Document, group_name: str, similarity: str = "bm25_chinese",
                 topk: int = 6, similarity_cut_off: float | dict[str, float] | None = None,
                 filters: dict[str, Sequence[Any]] | None = None,
                 embed_keys: Sequence[str] | None = None, index: str = "faiss") -> None:
        if group_name not in doc.groups():
            raise ValueError(f"unknown node group {group_name!r}; known groups: {doc.groups()}")
        self.doc = doc
        self.group_name = group_name
        self.similarity = get_similarity(similarity)
        self.topk = validate_topk(topk)
        self.filters = _validate_filters(filters)
        self.embed_keys = self._validate_embed_keys(embed_keys)
        self.similarity_cut_off = self._validate_cut_off(similarity_cut_off)
        if index not in (*BACKENDS, "milvus"):
            raise ValueError(f"index must be one of {(*BACKENDS, 'milvus')}, got {index!r}")
        if index == "milvus" and getattr(doc, "store", None) is None:
            raise ValueError("index='milvus' needs a vector store: "
                             "Document(..., store=MilvusStore())")
        self.index = index

    def _validate_embed_keys(self, embed_keys: Sequence[str] | None) -> list[str]:
        if self.similarity.mode != "embedding":
            if embed_keys:
                raise ValueError(f"embed_keys only apply to embedding similarities; "
                                 f"{self.similarity.name!r} works on text")
            return []
        keys = list(embed_keys) if embed_keys else sorted(self.doc.embed)
        if not keys:
            raise ValueError(f"similarity {self.similarity.name!r} needs vectors: create the "
                             "Document with embed=... (a function or {key: function})")
        unknown = [k for k in keys if k not in self.doc.embed]
        if unknown:
            raise ValueError(f"unknown embed key(s) {unknown}; the document has "
                             f"{sorted(self.doc.embed)}")
        return keys

    def _validate_cut_off(self, cut_off: Any) -> dict[str | None, float]:
        if cut_off is None:
            return {}
        if isinstance(cut_off, dict):
            unknown = [k for k in cut_off if k not in self.embed_keys]
            if unknown:
                raise ValueError(f"similarity_cut_off names unknown embed key(s) {unknown}; "
                                 f"this retriever uses {self.embed_keys}")
            values = dict(cut_off)
        else:
            values = {None: cut_off}
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or np.isnan(value):
                raise ValueError(f"similarity_cut_off must be a number (or a dict of numbers "
                                 f"per embed key), got {value!r} for {key!r}")
        return {k: float(v) for k, v in values.items()}

    def __call__(self, query: str) -> list[DocNode]:
        return self.retrieve(query)

    def retrieve(self, query: str, topk: int | None = None) -> list[DocNode]:
        """The best nodes for ``query``, best first, each with ``.score``.

        With several embed keys, each key ranks the nodes on its own (and applies its own
        cut-off); the rankings are then fused by reciprocal rank, because raw scores of
        different models are not comparable. The fused score is ``Σ 1/(60 + rank)``.
        """
        validate_query(query)
        topk = self.topk if topk is None else validate_topk(topk)
        nodes = self.doc.get_nodes(self.group_name)
        keep = self._keep_mask(nodes)
        if self.similarity.mode == "text":
            scores = self.similarity.scores(query, nodes, self.doc.cache_for(self.group_name))
            return self._ranked(nodes, scores, keep, topk, self.similarity_cut_off.get(None))
        rankings = []
        for key in self.embed_keys:
            cut_off = self.similarity_cut_off.get(key, self.similarity_cut_off.get(None))
            rankings.append(self._ranked(nodes, self._vector_scores(query, key), keep, topk,
                                         cut_off))
        if len(rankings) == 1:
            return rankings[0]
        return reciprocal_rank_fusion(rankings, topk=topk)

    def _milvus_scores(self, key: str, vectors: np.ndarray, query_vector: Any) -> np.ndarray:
        """Scores from the document's vector store; nodes it did not return are ``-inf``."""
        store, group = self.doc.store, self.group_name
        wanted = {"cosine": "COSINE", "dot": "IP"}.get(self.similarity.name)
        if wanted != store.metric:
            raise ValueError(f"similarity {self.similarity.name!r} does not match the store's "
                             f"metric {store.metric!r}")
        store.sync(group, key, [n.uid for n in self.doc.get_nodes(group)], vectors)
        # With filters, ask for everything: the store knows nothing of our metadata filters.
        limit = len(vectors) if self.filters else min(len(vectors), max(4 * self.topk, 50))
        ids, values = store.search(group, key, np.asarray(query_vector, dtype=np.float32), limit)
        scores = np.full(len(vectors), -np.inf)
        scores[ids] = values
        return scores

    def _keep_mask(self, nodes: list[DocNode]) -> np.ndarray | None:
        """Which nodes pass the metadata filters (None: no filters), computed once."""
        if not self.filters:
            return None
        if getattr(self, "_mask", None) is None or len(self._mask) != len(nodes):
            self._mask = np.array([_passes(n, self.filters) for n in nodes], dtype=bool)
        return self._mask

    def _ranked(self, nodes: list[DocNode], scores: np.ndarray, keep: np.ndarray | None, topk: int,
                cut_off: float | None) -> list[DocNode]:
        """Top ``topk`` as scored copies, keeping only scores strictly above ``cut_off``."""
        ranked = []
        for i in _top_indices(scores, keep, topk, self.similarity.min_score):
            if not passes(scores[i], cut_off):
                break  # sorted: every later score is lower still
            ranked.append(nodes[i].with_score(scores[i]))
        return ranked

    def _vector_scores(self, query: str, key: str) -> np.ndarray:
        vectors = self.doc.embeddings(self.group_name, key)
        query_vector = self.doc.embed_query(key, query)
        dense = isinstance(vectors, np.ndarray)
        if dense and np.asarray(query_vector).shape[-1] != vectors.shape[1]:
            raise ValueError(f"embed {key!r}: query vector has dimension "
                             f"{np.asarray(query_vector).shape[-1]} but the nodes' vectors "
                             f"have {vectors.shape[1]}")
        items = vectors if (self.similarity.batch or not dense) else list(vectors)
        if self.index == "milvus" and dense:
            return self._milvus_scores(key, vectors, query_vector)
        cache = self.doc.cache_for(self.group_name).setdefault(f"vectors:{key}", {})
        if isinstance(self.similarity, VectorSimilarity):
            return self.similarity.scores(query_vector, items, cache, index=self.index)
        return self.similarity.scores(query_vector, items, cache)


def _top_indices(scores: np.ndarray, keep: np.ndarray | None, topk: int,
                 min_score: float) -> list[int]:
    """Indices of the ``topk`` best scores above ``min_score``, best first.

    Scores are compared rounded (:mod:`course_lib.ranking`) and equal scores keep
    document order, so results are the same on every machine.
    """
    passing = rounded(scores) > min_score
    return top_k(scores, topk, passing if keep is None else keep & passing).tolist()


def _validate_filters(filters: Any) -> dict[str, set[Any]]:
    if filters is None:
        return {}
    if not isinstance(filters, dict):
        raise TypeError(f"filters must be a dict like {{'file_name': ['a.txt']}}, got "
                        f"{type(filters).__name__}")
    checked = {}
    for key, allowed in filters.items():
        if isinstance(allowed, (str, bytes)) or not isinstance(allowed, (list, tuple, set)):
            raise TypeError(f"filters[{key!r}] must be a list of allowed values, got {allowed!r}")
        checked[key] = set(allowed)
    return checked


def _passes(node: DocNode, filters: dict[str, set[Any]]) -> bool:
    return all(node.metadata.get(key) in allowed for key, allowed in filters.items())
