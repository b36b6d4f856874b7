"""Vector search: dense vectors through faiss, sparse vectors through scipy.

Dense vectors live in a faiss ``IndexFlatIP`` (exact inner product). For cosine the
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

from .ranking import top_k

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

    def search(self, query: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best ``(ids, scores)``, best first (approximate for ``"hnsw"``)."""
        q = self._query(query)
        k = min(k, len(self))
        if self._index is None:
            scores = self.matrix @ q[0]
            ids = top_k(scores, k)
            return ids, scores[ids].astype(np.float64)
        values, ids = self._index.search(q, k)
        found = ids[0] >= 0  # HNSW may return fewer than k
        return ids[0][found], values[0][found].astype(np.float64)

    def scores(self, query: Any) -> np.ndarray:
        """Similarity to every stored vector, in storage order. ``"hnsw"`` scores only
        the ``ef_search`` nodes its graph search reaches; the rest are ``-inf``."""
        if self.backend == "hnsw":
            ids, values = self.search(query, self.ef_search)
            out = np.full(len(self), -np.inf)
            out[ids] = values
            return out
        if self._index is None:
            return (self.matrix @ self._query(query)[0]).astype(np.float64)
        ids, values = self.search(query, len(self))
        out = np.empty(len(self))
        out[ids] = values
        return out


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


def is_sparse_batch(vectors: Any) -> bool:
    return isinstance(vectors, list) and all(isinstance(v, dict) for v in vectors)


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("cosine similarity is undefined for a zero vector")
    return matrix / norms
