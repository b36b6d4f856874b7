"""BM25, the lexical ranking formula, in one screen.

For a query q and a document d::

    score(q, d) = Σ_{t in q}  idf(t) · tf(t, d) · (k1 + 1)
                              ─────────────────────────────────────────
                              tf(t, d) + k1 · (1 − b + b · |d| / avgdl)

``tf`` is how often term t occurs in d, ``|d|`` the length of d in terms and
``avgdl`` the mean length. Two ``idf`` flavours:

* ``"lucene"`` (default): ``ln(1 + (N − n + 0.5) / (n + 0.5))`` — never negative
  (Lucene and bm25s also drop the constant ``k1 + 1``; rankings are the same).
* ``"okapi"``: ``ln((N − n + 0.5) / (n + 0.5))`` with negative values raised to
  ``epsilon × mean idf``, exactly as ``rank_bm25.BM25Okapi``. With only 26 documents a
  word in more than half of them would otherwise *lower* a document's score.

The per-(document, term) part does not depend on the query, so it is computed once
into a sparse matrix; a query then only adds up a few columns.

>>> index = BM25Index([["red", "apple"], ["green", "apple", "pie"], ["blue", "sky"]])
>>> index.scores(["apple", "pie"]).round(3).tolist()
[0.502, 1.286, 0.0]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy import sparse


class BM25Index:
    """A BM25 index over tokenised documents."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                 idf: str = "lucene", epsilon: float = 0.25) -> None:
        if idf not in ("lucene", "okapi"):
            raise ValueError(f"idf must be 'lucene' or 'okapi', got {idf!r}")
        if not 0.0 <= b <= 1.0:
            raise ValueError(f"b must be in [0, 1], got {b}")
        if k1 < 0:
            raise ValueError(f"k1 must be >= 0, got {k1}")
        self.k1, self.b = k1, b
        self.vocabulary: dict[str, int] = {}
        rows, cols, counts = [], [], []
        lengths = np.zeros(len(corpus))
        for row, tokens in enumerate(corpus):
            lengths[row] = len(tokens)
            for term, count in Counter(tokens).items():
                rows.append(row)
                cols.append(self.vocabulary.setdefault(term, len(self.vocabulary)))
                counts.append(count)
        n_docs, n_terms = len(corpus), len(self.vocabulary)
        tf = np.asarray(counts, dtype=np.float64)
        doc_freq = np.bincount(cols, minlength=n_terms).astype(np.float64)
        self.idf = self._idf(doc_freq, n_docs, idf, epsilon)

        avgdl = lengths.mean() if n_docs and lengths.mean() > 0 else 1.0
        self.avgdl = float(avgdl)
        norm = k1 * (1 - b + b * lengths[rows] / avgdl) if rows else np.zeros(0)
        weights = self.idf[cols] * tf * (k1 + 1) / (tf + norm)
        # Column slicing is the hot path (one column per query term): CSC format.
        self.matrix = sparse.csc_matrix((weights, (rows, cols)), shape=(n_docs, n_terms))

    @staticmethod
    def _idf(doc_freq: np.ndarray, n_docs: int, flavour: str, epsilon: float) -> np.ndarray:
        ratio = (n_docs - doc_freq + 0.5) / (doc_freq + 0.5)
        if flavour == "lucene":
            return np.log1p(ratio)
        idf = np.log(ratio)
        floor = epsilon * idf.mean() if idf.size else 0.0
        return np.where(idf < 0, floor, idf)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document; a repeated query term counts each time."""
        ids = [self.vocabulary[t] for t in query_tokens if t in self.vocabulary]
        if not ids:
            return np.zeros(self.matrix.shape[0])
        return np.asarray(self.matrix[:, ids].sum(axis=1)).ravel()

    def __len__(self) -> int:
        return self.matrix.shape[0]


def idf_of(index: BM25Index, term: str) -> float:
    """The idf of ``term`` in ``index`` (0.0 for an unseen term)."""
    position = index.vocabulary.get(term)
    return 0.0 if position is None else float(index.idf[position])

