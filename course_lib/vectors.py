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

METRICS = ("cosine", "dot")


class DenseVectors:
    """Dense vectors with exact inner-product search (faiss by default)."""

    def __init__(self, vectors: Any, metric: str = "cosine", backend: str = "faiss") -> None:
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        if backend not in ("faiss", "numpy"):
            raise ValueError(f"backend must be 'faiss' or 'numpy', got {backend!r}")
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2:
            raise ValueError(f"vectors must be a 2-D array, got shape {matrix.shape}")
        if not np.isfinite(matrix).all():
            raise ValueError("vectors contain NaN or infinite values")
        if metric == "cosine":
            matrix = _normalise(matrix)
        self.metric, self.backend, self.matrix = metric, backend, matrix
        self.dim = matrix.shape[1]
        self._index = None
        if backend == "faiss":
            import faiss

            self._index = faiss.IndexFlatIP(self.dim)
            self._index.add(matrix)

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def scores(self, query: Any) -> np.ndarray:
        """Similarity of ``query`` to every stored vector, in storage order."""
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        if q.shape[1] != self.dim:
            raise ValueError(f"query vector has dimension {q.shape[1]}, the stored vectors "
                             f"have {self.dim}")
        if self.metric == "cosine":
            q = _normalise(q)
        if self._index is None:
            return (self.matrix @ q[0]).astype(np.float64)
        values, ids = self._index.search(q, len(self))
        out = np.empty(len(self))
        out[ids[0]] = values[0]
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
