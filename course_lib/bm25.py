"""BM25, the lexical ranking formula, in one screen.

For a query q and a document d::

    score(q, d) = Σ_{t in q}  idf(t) · tf(t, d) · (k1 + 1)
                              ─────────────────────────────────────────
                              tf(t, d) + k1 · (1 − b + b · |d| / avgdl)

``tf`` is how often term t occurs in d, ``|d|`` the length of d in terms, ``avgdl``
the mean length, N the number of documents and n the number holding t. Two ``idf``
flavours:

* ``"lucene"`` (default): ``ln(1 + (N − n + 0.5) / (n + 0.5))`` — never negative
  (Lucene and bm25s also drop the constant ``k1 + 1``; rankings are the same).
* ``"okapi"``: ``ln((N − n + 0.5) / (n + 0.5))`` with negative values raised to
  ``epsilon × mean idf``, exactly as ``rank_bm25.BM25Okapi``. With only 26 documents a
  word in more than half of them would otherwise *lower* a document's score.

:class:`BM25Stats` holds N, avgdl, k1 and b and writes the formula once; the index, the
reranker and the sparse embedder all use it. :class:`BM25Index` computes each
(document, term) weight once into a sparse matrix; a query adds up its terms' columns
and ranks only the documents that can make its top k.

>>> index = BM25Index([["red", "apple"], ["green", "apple", "pie"], ["blue", "sky"]])
>>> index.scores(["apple", "pie"]).round(3).tolist()
[0.502, 1.286, 0.0]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from ._support.validation import check_int, check_number
from .ranking import SCORE_DECIMALS, rounded, top_k


@dataclass(frozen=True)
class BM25Stats:
    """What BM25 knows about a collection — its size and mean length — and the formula.

    The course has three BM25s: :class:`BM25Index`, the reranker's word and character
    features (:mod:`course_lib.rerank`) and the sparse n-gram embedder
    (:class:`course_lib.embeddings.CharNgramSparseEmbedder`). Each keeps document
    frequencies in its own shape (a column array, a ``Counter`` of words, a dict of
    n-gram ids), and all of them turn those into idf and weights here, so the three give
    the same scores. Both methods take numbers or numpy arrays alike.

    >>> stats = BM25Stats(n_docs=3, avgdl=2.0)
    >>> round(float(stats.idf(1)), 3), round(stats.weight(tf=1, length=3, idf=1.0), 3)
    (0.981, 0.816)
    """

    n_docs: int
    avgdl: float
    k1: float = 1.5
    b: float = 0.75

    def __post_init__(self) -> None:
        check_number(self.k1, "k1", low=0)
        check_number(self.b, "b", 0, 1)
        check_number(self.avgdl, "avgdl", low=0)
        if self.avgdl == 0:
            raise ValueError("avgdl must be > 0, got 0 (of_lengths uses 1.0 for empty texts)")

    @classmethod
    def of_lengths(cls, lengths: Sequence[int] | np.ndarray, k1: float = 1.5, b: float = 0.75
                   ) -> BM25Stats:
        """The statistics of documents with these lengths (in terms). A collection with
        no terms at all gets ``avgdl = 1.0``: any value works, as every tf is 0."""
        lengths = np.asarray(lengths, dtype=np.float64)
        mean = float(lengths.mean()) if lengths.size else 0.0
        return cls(len(lengths), mean or 1.0, k1, b)

    def idf(self, doc_freq: ArrayLike, flavour: str = "lucene", epsilon: float = 0.25
            ) -> np.ndarray:
        """idf from document frequencies (see the module docstring for the flavours).

        ``"okapi"`` floors negative values at ``epsilon ×`` the mean idf of the
        ``doc_freq`` given, so it needs every term of the collection at once.
        """
        if flavour not in ("lucene", "okapi"):
            raise ValueError(f"idf must be 'lucene' or 'okapi', got {flavour!r}")
        doc_freq = np.asarray(doc_freq, dtype=np.float64)
        ratio = (self.n_docs - doc_freq + 0.5) / (doc_freq + 0.5)
        if flavour == "lucene":
            return np.log1p(ratio)
        idf = np.log(ratio)
        floor = epsilon * idf.mean() if idf.size else 0.0
        return np.where(idf < 0, floor, idf)

    def weight(self, tf: ArrayLike, length: ArrayLike, idf: ArrayLike) -> Any:
        """One term's share of one document's score: the formula, written once."""
        k1, b = self.k1, self.b
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / self.avgdl))


class BM25Index:
    """A BM25 index over tokenised documents (``corpus``: one token list per document).

    ``k1`` and ``b`` as in the formula; ``idf`` the flavour, ``epsilon`` Okapi's floor.
    What it keeps: ``matrix`` (documents × terms, CSC, the weights), ``idf`` per term,
    ``vocabulary`` (term → column), ``k1``, ``b``, ``avgdl``.
    """

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                 idf: str = "lucene", epsilon: float = 0.25) -> None:
        self.vocabulary: dict[str, int] = {}
        rows, cols, counts = [], [], []
        lengths = np.zeros(len(corpus))
        for row, tokens in enumerate(corpus):
            lengths[row] = len(tokens)
            for term, count in Counter(tokens).items():
                rows.append(row)
                cols.append(self.vocabulary.setdefault(term, len(self.vocabulary)))
                counts.append(count)
        stats = BM25Stats.of_lengths(lengths, k1, b)
        n_docs, n_terms = len(corpus), len(self.vocabulary)
        self.idf = stats.idf(np.bincount(cols, minlength=n_terms), idf, epsilon)
        self.k1, self.b, self.avgdl = stats.k1, stats.b, stats.avgdl
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        weights = stats.weight(np.asarray(counts, dtype=np.float64), lengths[rows],
                               self.idf[cols])
        # Column slicing is the hot path (one column per query term): CSC format.
        self.matrix = _canonical_csc(
            sparse.csc_matrix((weights, (rows, cols)), shape=(n_docs, n_terms)))

    @classmethod
    def from_arrays(cls, matrix: sparse.spmatrix | sparse.sparray, idf: np.ndarray,
                    vocabulary: Sequence[str], k1: float, b: float, avgdl: float) -> BM25Index:
        """An index from its saved parts (what :mod:`course_lib.store.persist` writes).

        ``matrix`` is the ``(n_docs, n_terms)`` weight matrix, ``idf`` one value per
        term and ``vocabulary`` the terms in column order. Nothing is recomputed, so a
        loaded index scores exactly like the one that was saved.
        """
        if not sparse.issparse(matrix) or matrix.ndim != 2:
            raise ValueError("matrix must be a 2-D scipy sparse matrix, "
                             f"got {type(matrix).__name__}")
        n_terms = matrix.shape[1]
        idf = np.asarray(idf, dtype=np.float64)
        if idf.shape != (n_terms,):
            raise ValueError(f"idf must have one value per matrix column ({n_terms}), "
                             f"got shape {idf.shape}")
        if isinstance(vocabulary, str) or len(vocabulary) != n_terms:
            raise ValueError(f"vocabulary must list one term per matrix column ({n_terms}), "
                             f"got {len(vocabulary)}")
        if not all(isinstance(term, str) for term in vocabulary):
            raise ValueError("vocabulary must hold strings only")
        terms = {term: column for column, term in enumerate(vocabulary)}
        if len(terms) != n_terms:
            raise ValueError("vocabulary terms must be distinct")
        stats = BM25Stats(matrix.shape[0], avgdl, k1, b)  # checks k1, b and avgdl
        index = cls.__new__(cls)  # the parts are given: skip __init__'s counting
        index.matrix = _canonical_csc(matrix)
        index.idf, index.vocabulary = idf, terms
        index.k1, index.b, index.avgdl = float(stats.k1), float(stats.b), float(stats.avgdl)
        return index

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document; a repeated query term counts each time."""
        columns = [self.vocabulary[t] for t in query_tokens if t in self.vocabulary]
        indptr, indices, data = self.matrix.indptr, self.matrix.indices, self.matrix.data
        postings = [slice(indptr[c], indptr[c + 1]) for c in columns]
        if not postings:
            return np.zeros(len(self))
        # A CSC column lists the documents holding its term and their weights; adding
        # them up per document is one bincount, with no scipy indexing per query.
        return np.bincount(np.concatenate([indices[p] for p in postings]),
                           np.concatenate([data[p] for p in postings]), minlength=len(self))

    def search(self, query_tokens: Sequence[str], k: int, mask: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best documents that score above 0: ``(ids, scores)``, best first.

        Scores are compared rounded, ties go to the earlier document
        (:func:`course_lib.ranking.top_k`); ``mask[i] == False`` excludes document ``i``.

        >>> index = BM25Index([["red", "apple"], ["green", "apple", "pie"], ["blue", "sky"]])
        >>> ids, scores = index.search(["apple", "pie"], k=5)
        >>> ids.tolist(), scores.round(3).tolist()
        ([1, 0], [1.286, 0.502])
        """
        k = check_int(k, "k", low=0)
        scores = self.scores(query_tokens)
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != np.bool_ or mask.shape != (len(self),):
                raise ValueError(f"mask must be a boolean array of length {len(self)}, "
                                 f"got {mask.dtype} of shape {mask.shape}")
            scores[~mask] = 0.0  # an excluded document cannot match
        candidates = _candidates(scores, k)
        kept = scores[candidates]
        best = candidates[top_k(kept, k, rounded(kept) > 0)]  # a match scores above 0 rounded
        return best, scores[best]

    def __len__(self) -> int:
        return self.matrix.shape[0]


def _candidates(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions, ascending, of the matching documents that can be among the ``k`` best.

    Partitioning all n scores to find the k best would cost more than computing them;
    this costs one comparison. The k-th best score of *any* sample is at most the k-th
    best of all, so it is a lower bound, and only documents within rounding of it or
    above can make the top k (:func:`course_lib.ranking.top_k` compares rounded scores).
    Every s-th score with s = √(n/k) makes a sample of √(n·k) documents, and lets
    through about as many when scores are spread evenly (fewer when few match).
    """
    stride = math.isqrt(len(scores) // max(k, 1))
    sample = scores[::stride] if stride > 1 else scores[:0]
    lower = float(np.partition(sample, -k)[-k]) if len(sample) >= k > 0 else 0.0
    floor = lower - 2 * 10.0 ** -SCORE_DECIMALS  # rounds equal to `lower`: a possible tie
    return np.flatnonzero(scores >= floor if floor > 0 else scores > 0)


def _canonical_csc(matrix: sparse.spmatrix | sparse.sparray) -> sparse.csc_matrix:
    """float64 CSC (column slices are the hot path) with duplicate entries summed."""
    matrix = sparse.csc_matrix(matrix, dtype=np.float64)
    matrix.sum_duplicates()
    return matrix


def idf_of(index: BM25Index, term: str) -> float:
    """The idf of ``term`` in ``index`` (0.0 for an unseen term)."""
    position = index.vocabulary.get(term)
    return 0.0 if position is None else float(index.idf[position])


@dataclass
class TermStats:
    """A collection's BM25 statistics and its document frequencies by term, for scoring
    one tokenised text at a time. The formula is :class:`course_lib.bm25.BM25Stats`'s
    (k1 = 1.5, b = 0.75, Lucene idf); a term the collection lacks gets the idf of a
    term in no document."""

    stats: BM25Stats
    doc_freq: Counter[str]

    def idf(self, term: str) -> float:
        return float(self.stats.idf(self.doc_freq.get(term, 0)))

    def bm25(self, query_terms: list[str], doc_counts: Counter[str]) -> float:
        """BM25 of the text with ``doc_counts``; a repeated query term counts each time."""
        return self.bm25_all(query_terms, [doc_counts])[0]

    def bm25_all(self, query_terms: list[str], docs_counts: Sequence[Counter[str]]
                 ) -> list[float]:
        """:meth:`bm25` of each text, the query's idfs looked up once (same numbers)."""
        idf = {term: self.idf(term) for term in set(query_terms)}
        scores = []
        for doc_counts in docs_counts:
            length = sum(doc_counts.values())
            score = 0.0
            for term in query_terms:
                tf = doc_counts.get(term, 0)
                if tf:
                    score += self.stats.weight(tf, length, idf[term])
            scores.append(score)
        return scores
