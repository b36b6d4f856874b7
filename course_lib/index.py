"""Indexes: what a retriever searches, built once per (document, node group).

A :class:`GroupIndex` holds everything built over one node group of one document, each
piece on first use:

* ``bm25`` — one :class:`~course_lib.bm25.BM25Index` per BM25 similarity (tokeniser);
* ``vectors`` — the nodes' vectors per embed key (a dense ``(n, dim)`` array, or a list
  of sparse ``{term_id: weight}`` dicts);
* ``vector_indexes`` — a searchable index per (embed key, similarity, backend):
  :class:`~course_lib.vectors.DenseVectors` (faiss / numpy / HNSW),
  :class:`~course_lib.vectors.SparseVectors`, or a Milvus collection;
* ``maps`` — a hash map per metadata key, value → the nodes that have it (what
  ``Retriever(index="map")`` looks up; it scores nothing, see :meth:`GroupIndex.value_map`).

Every index of a group (BM25, dense, sparse, Milvus, scan) answers one question the same
way::

    index.search(query, k, mask) -> (ids, scores)

(:meth:`GroupIndex.search`, which picks among them, takes more: the similarity, the embed
key and the backend.)

``ids`` are positions in the group's node list, best first, at most ``k``, only nodes
that match (BM25 > 0, a shared sparse term, reached by an approximate search); ``mask``
(a boolean per node) excludes the ``False`` ones; ties are broken by position, so the
result is the same on every machine. The retriever only picks the index, applies its
cut-off and turns ids into scored nodes.

This module does not read files or cut text (that is :mod:`course_lib.document`) and
does not rank across several indexes (that is :mod:`course_lib.fusion`).

>>> from course_lib.document import Document
>>> from course_lib.similarity import get_similarity
>>> doc = Document(texts={"a.txt": "猫喜欢鱼。\\n狗喜欢骨头。"})
>>> doc.create_node_group("line", transform=lambda t: t.split("\\n"))
>>> index = doc.index("line")
>>> ids, scores = index.search(get_similarity("bm25_chinese"), "狗喜欢什么", k=1)
>>> index.nodes[ids[0]].text, sorted(index.bm25)
('狗喜欢骨头。', ['bm25_chinese'])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ._support.validation import did_you_mean
from .bm25 import BM25Index
from .node import DocNode
from .ranking import rounded, top_k
from .similarity import BM25Similarity, Similarity, VectorSimilarity
from .vectors import DenseVectors, SparseVectors, is_sparse_batch


class SearchIndex(Protocol):
    """The one interface every index keeps."""

    def search(self, query: Any, k: int,
               mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]: ...


class NodeSource(Protocol):
    """What a GroupIndex needs from its document (a :class:`~course_lib.document.Document`)."""

    embed: dict[str, Callable[[list[str]], Any]]
    store: Any

    def get_nodes(self, group: str) -> list[DocNode]: ...


class FunctionEmbedder:
    """A plain function ``texts -> vectors`` as an embedder: a query is embedded as a
    one-text list (``function([query])[0]``), like any text. Made by :func:`as_embedder`."""

    def __init__(self, function: Callable[[list[str]], Any]) -> None:
        self.function = function
        self.name = getattr(function, "name", None) or getattr(function, "__name__", None) \
            or type(function).__name__

    def __call__(self, texts: Sequence[str]) -> Any:
        return self.function(texts)

    def embed(self, texts: Sequence[str]) -> Any:
        return self.function(texts)

    def embed_query(self, text: str) -> Any:
        return self.function([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> Any:
        return self.function(list(texts))

    def __repr__(self) -> str:
        return f"FunctionEmbedder({self.name!r})"


def as_embedder(embedder: Any) -> Any:
    """The one embedder interface every component accepts: an object with ``embed`` /
    ``__call__`` and ``embed_query`` (any :class:`~course_lib.embeddings.Embedder`) is
    returned as it is; a plain function ``texts -> vectors`` becomes a
    :class:`FunctionEmbedder`. Used by ``Document(embed=...)``'s index,
    :class:`~course_lib.rerank.FeatureReranker` and
    :class:`~course_lib.answerability.AnswerabilityDetector`. (It lives here, not in
    :mod:`course_lib.embeddings`, so that the index needs none of the backends.)

    >>> as_embedder(lambda texts: [[float(len(t))] for t in texts]).embed_query("长城")
    [2.0]
    """
    if callable(getattr(embedder, "embed_query", None)):
        return embedder
    if callable(embedder):
        return FunctionEmbedder(embedder)
    raise TypeError(f"an embedder must be an Embedder (with embed_query) or a function "
                    f"texts -> vectors, got {type(embedder).__name__}")


class ScanIndex:
    """No index at all: score every item with a registered similarity function.

    What a similarity made with :func:`~course_lib.similarity.register_similarity` gets;
    ``items`` are nodes (text mode) or the nodes' vectors (embedding mode).
    """

    def __init__(self, similarity: Similarity, items: Any) -> None:
        self.similarity, self.items = similarity, items

    def search(self, query: Any, k: int,
               mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        scores = self.similarity.scores(query, self.items)
        eligible = rounded(scores) > self.similarity.min_score
        ids = top_k(scores, k, eligible if mask is None else eligible & mask)
        return ids, scores[ids]


class GroupIndex:
    """The indexes of one node group of one document, each built on first use."""

    def __init__(self, doc: NodeSource, group: str) -> None:
        self.doc, self.group = doc, group
        self.bm25: dict[str, BM25Index] = {}
        self.vectors: dict[str, np.ndarray | list[dict[int, float]]] = {}
        self.vector_indexes: dict[tuple[str, str, str], SearchIndex] = {}
        self.maps: dict[str, dict[str, list[int]]] = {}

    @property
    def nodes(self) -> list[DocNode]:
        """The group's nodes (built by the document on first use)."""
        return self.doc.get_nodes(self.group)

    def require_nodes(self) -> list[DocNode]:
        """The group's nodes, or a ``ValueError`` naming the group if it has none.

        An empty group has nothing to search, on any similarity (faiss would fail with
        a bare ``AssertionError``, BM25 would answer ``[]`` as if no node matched): the
        usual cause is a transform that returned nothing, or only blank text (blank
        results are dropped), for every parent node.
        """
        nodes = self.nodes
        if not nodes:
            raise ValueError(f"node group {self.group!r} has no nodes, so there is nothing to "
                             "retrieve from: its transform returned nothing (or only blank "
                             "text) for every parent node, or the document has no text; check "
                             "the transform on a parent node's text")
        return nodes

    # -- the one entry point ----------------------------------------------------
    def search(self, similarity: Similarity, query: str, k: int, mask: np.ndarray | None = None,
               key: str | None = None, backend: str = "faiss") -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best ``(ids, scores)`` for the query text under ``similarity``.

        Text similarities see the query (BM25: its tokens); embedding similarities see
        the query's vector under embed ``key``, searched with ``backend``. A group with
        no nodes is a ``ValueError`` (see :meth:`require_nodes`).
        """
        self.require_nodes()
        if similarity.mode == "text":
            if isinstance(similarity, BM25Similarity):
                return self.bm25_index(similarity).search(similarity.tokenizer(query), k, mask)
            return ScanIndex(similarity, self.nodes).search(query, k, mask)
        if key is None:
            raise ValueError(f"similarity {similarity.name!r} needs an embed key")
        index = self.vector_index(key, similarity, backend)
        vector = self.embed_query(key, query)
        vectors = self.vectors[key]
        if isinstance(vectors, np.ndarray) and np.shape(vector)[-1] != vectors.shape[1]:
            raise ValueError(f"embed {key!r}: query vector has dimension {np.shape(vector)[-1]} "
                             f"but the nodes' vectors have {vectors.shape[1]}")
        return index.search(vector, k, mask)

    # -- exact look-up ------------------------------------------------------------
    def value_map(self, key: str) -> dict[str, list[int]]:
        """``{value: positions of the nodes that have it}`` for metadata ``key``, built once.

        ``key="text"`` maps each node's text (unless a node has a metadata key ``"text"``:
        metadata comes first); a key missing from a node's metadata is looked up in its
        ``global_metadata``. Values are compared as strings (``str(value)``), since a query
        is a string: ``paragraph_index`` 3 is found by ``"3"``. A list, tuple or set value
        maps each of its items (a node tagged ``["茶", "水温"]`` is found by either); a
        dict value, or a key no node has, is an error naming it. The map is built once, on
        first use: metadata changed after that is not seen (build a new Document).

        >>> from course_lib.document import Document
        >>> doc = Document(texts={"a.txt": "甲\\n乙", "b.txt": "丙"})
        >>> doc.create_node_group("line", transform=lambda text: text.split("\\n"))
        >>> {value: len(ids) for value, ids in doc.index("line").value_map("file_name").items()}
        {'a.txt': 2, 'b.txt': 1}
        """
        if key not in self.maps:
            nodes = self.require_nodes()
            table: dict[str, list[int]] = {}
            found = False
            for i, node in enumerate(nodes):
                if key in node.metadata:
                    value = node.metadata[key]
                elif key in node.global_metadata:
                    value = node.global_metadata[key]
                elif key == "text":
                    value = node.text
                else:
                    continue
                found = True
                if isinstance(value, dict):
                    raise TypeError(f"node {node.uid!r} has a dict under {key!r} "
                                    f"({value!r:.40}); a map looks up strings, numbers or "
                                    "lists of them")
                for item in (value if isinstance(value, (list, tuple, set, frozenset))
                             else [value]):
                    positions = table.setdefault(str(item), [])
                    if not positions or positions[-1] != i:  # an item listed twice: once
                        positions.append(i)
            if not found:
                known = sorted({k for n in nodes for k in (*n.metadata, *n.global_metadata)},
                               key=str)
                raise ValueError(f"map_key {key!r} is in no node's metadata of group "
                                 f"{self.group!r}{did_you_mean(key, known)}; the keys its "
                                 f"nodes have: {known}, or 'text' for the nodes' text")
            self.maps[key] = table
        return self.maps[key]

    # -- lexical ----------------------------------------------------------------
    def bm25_index(self, similarity: BM25Similarity) -> BM25Index:
        """The BM25 index of ``similarity``'s tokeniser over this group, built once."""
        if similarity.name not in self.bm25:
            self.bm25[similarity.name] = similarity.build([n.text for n in self.nodes])
        return self.bm25[similarity.name]

    # -- vectors ----------------------------------------------------------------
    def embeddings(self, key: str) -> np.ndarray | list[dict[int, float]]:
        """Vectors of all nodes under embed ``key``, computed once.

        Dense embedders give an ``(n, dim)`` array, sparse ones a list of
        ``{term_id: weight}`` dicts. A sparse embedder with a ``fit`` method (such as
        :class:`~course_lib.embeddings.CharNgramSparseEmbedder`) is first fitted on the
        group's texts, so its idf reflects this corpus.
        """
        embedder = self._embedder(key)
        if key not in self.vectors:
            texts = [n.text for n in self.nodes]
            if hasattr(embedder, "fit") and not getattr(embedder, "fitted", True):
                embedder.fit(texts)
            self.attach_vectors(key, embedder(texts))
        return self.vectors[key]

    def attach_vectors(self, key: str, vectors: Any) -> None:
        """Use ``vectors`` (one per node, in node order) as the nodes' vectors under
        ``key`` — what :meth:`embeddings` computes, or what was loaded from disk."""
        n = len(self.nodes)
        if is_sparse_batch(vectors):
            if len(vectors) != n:
                raise ValueError(f"embed {key!r} returned {len(vectors)} sparse vectors for "
                                 f"{n} nodes")
        else:
            vectors = np.asarray(vectors, dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != n:
                raise ValueError(f"embed {key!r} returned shape {vectors.shape}; expected "
                                 f"({n}, dim)")
        for node, vector in zip(self.nodes, vectors, strict=True):
            node.embeddings[key] = vector
        self.vectors[key] = vectors
        self.vector_indexes = {k: v for k, v in self.vector_indexes.items() if k[0] != key}

    def embed_query(self, key: str, query: str) -> Any:
        """The query's vector under ``key`` (embedders may embed queries differently:
        e5 prefixes "query: ", sparse BM25 vectors hold plain counts)."""
        vector = as_embedder(self._embedder(key)).embed_query(query)
        return vector if isinstance(vector, dict) else np.asarray(vector, dtype=np.float32)

    def vector_index(self, key: str, similarity: Similarity,
                     backend: str = "faiss") -> SearchIndex:
        """The searchable index over ``key``'s vectors for ``similarity``, built once."""
        vectors = self.embeddings(key)
        sparse = isinstance(vectors, list)
        slot = (key, similarity.name, "sparse" if sparse else backend)
        if slot not in self.vector_indexes:
            if not isinstance(similarity, VectorSimilarity):
                items = vectors if (similarity.batch or sparse) else list(vectors)
                return ScanIndex(similarity, items)  # a function, not an index: not kept
            self.vector_indexes[slot] = self._build_vector_index(key, similarity, vectors,
                                                                 backend)
        return self.vector_indexes[slot]

    def _build_vector_index(self, key: str, similarity: VectorSimilarity, vectors: Any,
                            backend: str) -> SearchIndex:
        if isinstance(vectors, list):
            return SparseVectors(vectors, similarity.metric)
        if backend != "milvus":
            return DenseVectors(vectors, similarity.metric, backend=backend)
        store = self.doc.store
        wanted = {"cosine": "COSINE", "dot": "IP"}[similarity.metric]
        if wanted != store.metric:
            raise ValueError(f"similarity {similarity.name!r} does not match the store's "
                             f"metric {store.metric!r}")
        nodes = self.nodes
        return store.vector_index(self.group, key, [n.uid for n in nodes],
                                  [n.text for n in nodes], vectors,
                                  model=getattr(self.doc.embed[key], "name", key))

    def _embedder(self, key: str) -> Callable[[list[str]], Any]:
        if key not in self.doc.embed:
            raise ValueError(f"unknown embed key {key!r}; this document has "
                             f"{sorted(self.doc.embed) or 'no embed= functions'}")
        return self.doc.embed[key]
