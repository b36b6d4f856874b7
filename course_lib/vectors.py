"""Vector search: dense vectors through faiss, sparse vectors through scipy.

Dense vectors live in a faiss ``IndexFlatIP`` (exact inner product; ``backend="hnsw"``:
faiss ``IndexHNSWFlat``, approximate). For cosine the
vectors are L2-normalised first, so inner product *is* cosine. ``backend="numpy"`` does
the same with a matrix product — the tests check both give the same ranking.

Sparse vectors (``{term_id: weight}`` dicts) become a CSR matrix over a vocabulary of
the ids that occur; a query's unknown ids cannot match anything and are dropped.

>>> store = DenseVectors(np.array([[1.0, 0.0], [0.6, 0.8]]), metric="cosine")
>>> store.scores(np.array([1.0, 0.0])).round(2).tolist()
[1.0, 0.6]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import sparse

from .ranking import rounded, top_k

METRICS = ("cosine", "dot")
BACKENDS = ("faiss", "numpy", "hnsw")


class DenseVectors:
    """Dense vectors with inner-product search.

    ``backend``: ``"faiss"`` (exact ``IndexFlatIP``, the default), ``"numpy"`` (exact,
    a matrix product) or ``"hnsw"`` (faiss ``IndexHNSWFlat``: a graph index, approximate
    and much faster on large collections; ``ef_search`` trades speed for recall).
    """

    def __init__(self, vectors: Any, metric: str = "cosine", backend: str = "faiss",
                 hnsw_m: int = 32, ef_search: int = 128) -> None:
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2:
            raise ValueError(f"vectors must be a 2-D array, got shape {matrix.shape}")
        if not np.isfinite(matrix).all():
            raise ValueError("vectors contain NaN or infinite values")
        if metric == "cosine":
            matrix = _normalise(matrix)
        self.metric, self.backend, self.matrix = metric, backend, matrix
        self.dim = matrix.shape[1]
        self.ef_search = ef_search
        self._index = None
        if backend != "numpy":
            import faiss

            if backend == "hnsw":
                self._index = faiss.IndexHNSWFlat(self.dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
                self._index.hnsw.efConstruction = max(2 * hnsw_m, 80)
                self._index.hnsw.efSearch = ef_search
                # A graph built by several threads differs from run to run; one thread
                # makes the index (and every number measured on it) reproducible.
                threads = faiss.omp_get_max_threads()
                faiss.omp_set_num_threads(1)
                try:
                    self._index.add(matrix)
                finally:
                    faiss.omp_set_num_threads(threads)
            else:
                self._index = faiss.IndexFlatIP(self.dim)
                self._index.add(matrix)

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def _query(self, query: Any) -> np.ndarray:
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        if q.shape[1] != self.dim:
            raise ValueError(f"query vector has dimension {q.shape[1]}, the stored vectors "
                             f"have {self.dim}")
        return _normalise(q) if self.metric == "cosine" else q

    def search(self, query: Any, k: int,
               mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best ``(ids, scores)``, best first; ``mask`` (a boolean per vector)
        excludes the ``False`` ones. Exact for ``"faiss"`` and ``"numpy"``, with ties
        broken by position (:func:`~course_lib.ranking.top_k`), so the order is the same
        on every machine. ``"hnsw"`` returns only vectors its graph search reaches."""
        q = self._query(query)
        if self._index is None or (mask is not None and self.backend == "faiss"):
            scores = self._scores(q)  # every vector scored: the mask applies to all
            ids = top_k(scores, k, mask)
            return ids, scores[ids]
        ids, values = self._candidates(q, k)
        order = np.argsort(ids)  # by position, so top_k's ties go to the earlier vector
        ids, values = ids[order], values[order]
        if mask is not None:
            ids, values = ids[mask[ids]], values[mask[ids]]
        best = top_k(values, k)
        return ids[best], values[best]

    def scores(self, query: Any) -> np.ndarray:
        """Similarity to every stored vector, in storage order. ``"hnsw"`` scores only
        the ``ef_search`` nodes its graph search reaches; the rest are ``-inf``."""
        return self._scores(self._query(query))

    def _scores(self, q: np.ndarray) -> np.ndarray:
        if self._index is None:
            return (self.matrix @ q[0]).astype(np.float64)
        ids, values = self._faiss_search(q, len(self) if self.backend == "faiss"
                                         else self.ef_search)
        out = np.full(len(self), -np.inf)
        out[ids] = values
        return out

    def _candidates(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """What faiss returns for the ``k`` best: the vectors HNSW's search reaches, or
        flat's top ``k`` widened while the ``k``-th rounded score ties with the next one
        (faiss orders equal scores arbitrarily; every tied vector must be seen)."""
        if self.backend == "hnsw":
            return self._faiss_search(q, max(k, self.ef_search))
        fetch = min(k + 1, len(self))
        while True:
            ids, values = self._faiss_search(q, fetch)
            kept = rounded(values)
            if fetch == len(self) or kept[min(k, len(kept)) - 1] > kept[-1]:
                return ids, values
            fetch = min(2 * fetch, len(self))

    def _faiss_search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        values, ids = self._index.search(q, min(k, len(self)))
        found = ids[0] >= 0  # HNSW may return fewer than asked
        return ids[0][found].astype(np.int64), values[0][found].astype(np.float64)


class SparseVectors:
    """``{term_id: weight}`` vectors in a CSR matrix; dot product or cosine search."""

    def __init__(self, vectors: Sequence[dict[int, float]], metric: str = "dot") -> None:
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        self.vocabulary: dict[int, int] = {}
        rows, cols, values = [], [], []
        for row, vector in enumerate(vectors):
            for tid, weight in vector.items():
                rows.append(row)
                cols.append(self.vocabulary.setdefault(tid, len(self.vocabulary)))
                values.append(weight)
        self.matrix = sparse.csr_matrix((values, (rows, cols)),
                                        shape=(len(vectors), len(self.vocabulary)))
        self.metric = metric
        self._norms = np.sqrt(np.asarray(self.matrix.multiply(self.matrix).sum(axis=1)).ravel())

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def scores(self, query: dict[int, float]) -> np.ndarray:
        """Scores for every stored vector; ``-inf`` where no term is shared (no match)."""
        q = np.zeros(len(self.vocabulary))
        for tid, weight in query.items():
            col = self.vocabulary.get(tid)
            if col is not None:
                q[col] = weight
        scores = self.matrix @ q
        touched = np.asarray((self.matrix[:, np.flatnonzero(q)] != 0).sum(axis=1)).ravel() > 0
        if self.metric == "cosine":
            denominator = self._norms * np.sqrt(sum(w * w for w in query.values()))
            scores = np.divide(scores, denominator, out=np.zeros_like(scores),
                               where=denominator > 0)
        return np.where(touched, scores, -np.inf)

    def search(self, query: dict[int, float], k: int,
               mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best ``(ids, scores)`` among vectors sharing a term with the query."""
        scores = self.scores(query)
        eligible = np.isfinite(scores) if mask is None else mask & np.isfinite(scores)
        ids = top_k(scores, k, eligible)
        return ids, scores[ids]


def is_sparse_batch(vectors: Any) -> bool:
    return isinstance(vectors, list) and all(isinstance(v, dict) for v in vectors)


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("cosine similarity is undefined for a zero vector")
    return matrix / norms
