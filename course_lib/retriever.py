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

from ._support.validation import check_number, did_you_mean, validate_query, validate_topk
from .document import Document
from .fusion import reciprocal_rank_fusion
from .node import DocNode
from .ranking import passes
from .similarity import get_similarity
from .vectors import BACKENDS


class Retriever:
    """Retrieve the ``topk`` nodes of ``group_name`` most similar to a query.

    ``similarity`` is the name of a registered similarity (a string; to combine several,
    fuse several retrievers with :class:`~course_lib.fusion.MultiRetriever`).
    ``similarity_cut_off`` drops nodes whose score is not strictly above it (a float,
    or ``{embed_key: float}``). ``filters`` keeps nodes whose metadata value is in a
    list of hashable values, e.g. ``{"file_name": ["doc_01.txt"]}`` (a key missing from
    a node's metadata is looked up in its ``global_metadata``); a key that no node of the
    group has is an error listing the keys they have (a typo such as ``"filename"`` would
    otherwise silently match nothing). ``embed_keys`` picks the vectors an embedding
    similarity uses (default: all of the document's); ``index`` picks the dense vector
    index: ``"faiss"`` (exact, default), ``"numpy"`` (exact), ``"hnsw"`` (approximate,
    for large collections) or ``"milvus"`` (the document's vector store).

    ``index="map"`` searches nothing: it looks the query up in a hash map from the value
    of metadata key ``map_key`` (``"text"``: the node's text) to every node that has it,
    and returns them all, in document order, each with score 1.0 — ``similarity`` and
    ``topk`` are ignored, as in LazyLLM. It answers "which nodes have this exact value"
    (a file name, an id, a tag, a stored question), not "which nodes are about this";
    see :meth:`~course_lib.index.GroupIndex.value_map` for how values are compared.
    ``similarity_cut_off`` and ``embed_keys`` have no meaning there and are refused;
    ``filters`` still apply.

    >>> doc = Document(texts={"a.txt": "猫。\\n狗。", "b.txt": "鱼。"})
    >>> doc.create_node_group("line", transform=lambda t: t.split("\\n"))
    >>> [n.text for n in Retriever(doc, "line", index="map", map_key="file_name")("a.txt")]
    ['猫。', '狗。']

    Node groups are built lazily: what needs the group's nodes — the filter keys, and
    that the group has nodes at all (a group whose transform kept nothing is a
    ``ValueError`` naming it, on every similarity) — is checked here if the group is
    already built, otherwise at the first retrieval.
    """

    def __init__(self, doc: Document, group_name: str, similarity: str = "bm25_chinese",
                 topk: int = 6, similarity_cut_off: float | dict[str, float] | None = None,
                 filters: dict[str, Sequence[Any]] | None = None,
                 embed_keys: Sequence[str] | None = None, index: str = "faiss",
                 map_key: str | None = None) -> None:
        if group_name not in doc.groups():
            raise ValueError(f"unknown node group {group_name!r}; known groups: {doc.groups()}")
        self.doc = doc
        self.group_name = group_name
        self.similarity = get_similarity(similarity)
        self.topk = validate_topk(topk)
        self.filters = _validate_filters(filters)
        if index not in INDEXES:
            raise ValueError(f"index must be one of {INDEXES}, got {index!r}")
        self.map_key = _validate_map_key(map_key, index, similarity_cut_off, embed_keys)
        self.embed_keys = [] if index == "map" else self._validate_embed_keys(embed_keys)
        self.similarity_cut_off = self._validate_cut_off(similarity_cut_off)
        if index == "milvus" and getattr(doc, "store", None) is None:
            raise ValueError("index='milvus' needs a vector store: "
                             "Document(..., store=MilvusStore())")
        self.index = index
        if group_name in doc.built_groups():
            nodes = doc.index(group_name).require_nodes()
            self._keep_mask(nodes)
            if self.map_key is not None:
                doc.index(group_name).value_map(self.map_key)  # an unknown key fails here

    def _validate_embed_keys(self, embed_keys: Sequence[str] | None) -> list[str]:
        if isinstance(embed_keys, str):
            raise TypeError(f"embed_keys must be a list of embed keys, e.g. [{embed_keys!r}], "
                            f"got the string {embed_keys!r}")
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
        return {key: check_number(value, "similarity_cut_off" if key is None
                                  else f"similarity_cut_off[{key!r}]")
                for key, value in values.items()}

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
        index = self.doc.index(self.group_name)
        nodes = index.require_nodes()
        mask = self._keep_mask(nodes)
        if self.map_key is not None:  # a look-up: every match, no score, no topk
            ids = index.value_map(self.map_key).get(query, [])
            return [nodes[i].with_score(1.0) for i in ids if mask is None or mask[i]]
        rankings = []
        for key in self.embed_keys or [None]:
            cut_off = self.similarity_cut_off.get(key, self.similarity_cut_off.get(None))
            ids, scores = index.search(self.similarity, query, topk, mask, key=key,
                                       backend=self.index)
            # Best first: once a score fails the cut-off, every later one does too.
            ranking = []
            for i, score in zip(ids.tolist(), scores.tolist(), strict=True):
                if not passes(score, cut_off):
                    break
                ranking.append(nodes[i].with_score(score))
            rankings.append(ranking)
        if len(rankings) == 1:
            return rankings[0]
        return reciprocal_rank_fusion(rankings, topk=topk)

    def _keep_mask(self, nodes: list[DocNode]) -> np.ndarray | None:
        """Which nodes pass the metadata filters (None: no filters), computed once; a
        filter key that none of ``nodes`` has in its metadata is a ``ValueError``."""
        if not self.filters:
            return None
        if getattr(self, "_mask", None) is None or len(self._mask) != len(nodes):
            _check_filter_keys(self.filters, nodes, self.group_name)
            self._mask = np.array([matches_filters(n, self.filters) for n in nodes],
                                  dtype=bool)
        return self._mask


INDEXES = (*BACKENDS, "milvus", "map")


def _validate_map_key(map_key: Any, index: str, cut_off: Any, embed_keys: Any) -> str | None:
    """``map_key`` if it fits ``index``; a ``ValueError``/``TypeError`` saying why not."""
    if index != "map":
        if map_key is not None:
            raise ValueError(f"map_key= only applies to index='map' (a look-up by exact "
                             f"value); index={index!r} ranks by similarity: drop map_key, or "
                             "use index='map'")
        return None
    if map_key is None:
        raise ValueError("index='map' looks nodes up by the exact value of one metadata key: "
                         "give map_key=, e.g. map_key='file_name', or map_key='text' for the "
                         "nodes' text")
    if not isinstance(map_key, str) or not map_key:
        raise TypeError(f"map_key must be a metadata key (a non-empty string), got {map_key!r}")
    if cut_off is not None:
        raise ValueError("similarity_cut_off does not apply to index='map': a look-up scores "
                         "nothing (every match scores 1.0); drop it, or use a ranking index")
    if embed_keys:
        raise ValueError("embed_keys do not apply to index='map': a look-up uses no vectors")
    return map_key


def _validate_filters(filters: Any) -> dict[str, set[Any]]:
    """``filters`` as ``{key: set of allowed values}``, or a ``TypeError`` saying what a
    filter must be: a dict of lists of hashable values (the values are kept in a set)."""
    if filters is None:
        return {}
    if not isinstance(filters, dict):
        raise TypeError(f"filters must be a dict like {{'file_name': ['a.txt']}}, got "
                        f"{type(filters).__name__}")
    checked = {}
    for key, allowed in filters.items():
        if isinstance(allowed, (str, bytes)) or not isinstance(allowed,
                                                               (list, tuple, set, frozenset)):
            raise TypeError(f"filters[{key!r}] must be a list of allowed values, e.g. "
                            f"{{{key!r}: ['a.txt']}}, got {allowed!r:.60}")
        for position, value in enumerate(allowed):
            try:
                hash(value)
            except TypeError:
                raise TypeError(f"filters[{key!r}] must be a list of hashable values (strings, "
                                f"numbers, tuples) to compare with the nodes' metadata; item "
                                f"{position} is a {type(value).__name__}: {value!r:.60}"
                                ) from None
        checked[key] = set(allowed)
    return checked


def _check_filter_keys(filters: dict[str, set[Any]], nodes: list[DocNode], group: str) -> None:
    """A ``ValueError`` if a filter key is in no node's metadata nor global metadata: it
    names the unknown key(s), the closest known one and every key the group's nodes have."""
    known = sorted({key for node in nodes for key in (*node.metadata, *node.global_metadata)},
                   key=str)
    unknown = [key for key in filters if key not in known]
    if unknown:
        raise ValueError(f"filters name metadata key(s) {unknown} that no node of group "
                         f"{group!r} has{did_you_mean(unknown[0], known)}; the keys its "
                         f"nodes have: {known}")


def matches_filters(node: DocNode, filters: dict[str, Sequence[Any]]) -> bool:
    """Whether ``node`` passes ``filters`` (``{key: allowed values}``): each key's value —
    from the node's metadata, else its global metadata — is among the allowed ones.

    >>> node = DocNode("甲", metadata={"file_name": "a.txt"}, global_metadata={"year": 2018})
    >>> matches_filters(node, {"file_name": ["a.txt"], "year": [2017, 2018]})
    True
    >>> matches_filters(node, {"file_name": ["b.txt"]})
    False
    """
    for key, allowed in filters.items():
        value = node.metadata[key] if key in node.metadata else node.global_metadata.get(key)
        if value not in allowed:
            return False
    return True
