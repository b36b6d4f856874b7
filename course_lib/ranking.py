"""Ranking floats the same way on every machine: round, then sort with a stable tie-break.

Two machines compute the same score with different last bits: another BLAS kernel,
another thread count or another CPU sums a matrix product in another order. Where two
scores are equal in exact arithmetic (two symmetric sentences in TextRank, a node found
twice), those last bits alone decide which comes first — and a table changes. So every
place in the course that ranks or thresholds scores does it on scores rounded to
``SCORE_DECIMALS`` decimal places, and breaks ties by position (the order in which the
candidates were given: document order, discovery order). Rounding makes such near-equal
scores exactly equal; the position then decides, identically everywhere.

What it does not do: it cannot make two *different* scores closer than the rounding
step compare the same on every machine (nothing can); it makes exact ties, the common
case, reproducible.

>>> rounded([0.1 + 0.2, 0.3]).tolist()
[0.3, 0.3]
>>> best_first([0.5, 0.1 + 0.2, 0.3, 0.9]).tolist()   # the 0.3s keep their order
[3, 0, 1, 2]
>>> passes(0.3000000001, cut_off=0.3)                  # equal after rounding: not above
False
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

SCORE_DECIMALS = 6
"""Scores are compared at this many decimal places. Far coarser than the float32
noise of an embedding dot product (~1e-7) and far finer than any real difference
between two retrieved units."""


_SCALE = 10.0 ** SCORE_DECIMALS


def rounded(scores: Any) -> np.ndarray:
    """``scores`` as float64 rounded to :data:`SCORE_DECIMALS` places (``±inf`` kept)."""
    return np.rint(np.asarray(scores, dtype=np.float64) * _SCALE) / _SCALE


def round_score(score: float) -> float:
    """One score rounded exactly like :func:`rounded` (same float operations, half to
    even), without numpy's per-call cost: what a scored node carries."""
    value = float(score)
    return round(value * _SCALE) / _SCALE if math.isfinite(value) else value


def best_first(scores: Any) -> np.ndarray:
    """Indices of ``scores`` from best to worst; equal rounded scores keep their order."""
    return np.argsort(-rounded(scores), kind="stable")


def top_k(scores: Any, k: int, eligible: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``k`` best eligible scores, best first, ties by position.

    Same result as ``best_first(scores)[:k]`` restricted to ``eligible`` (a boolean
    mask), but ``argpartition`` avoids sorting every candidate when only a few are kept.

    >>> top_k([0.2, 0.9, 0.2, 0.5], 3).tolist()
    [1, 3, 0]
    """
    values = rounded(scores)
    candidates = np.arange(len(values)) if eligible is None else np.flatnonzero(eligible)
    if len(candidates) > k > 0:
        kept = values[candidates]
        kth = kept[np.argpartition(-kept, k - 1)[k - 1]]
        above, tied = candidates[kept > kth], candidates[kept == kth]
        candidates = np.concatenate([above, tied[: k - len(above)]])
        candidates.sort()  # positions again, so the stable sort below breaks ties by them
    elif k <= 0:
        return candidates[:0]
    return candidates[np.argsort(-values[candidates], kind="stable")]


def passes(score: float | None, cut_off: float | None) -> bool:
    """Is ``score`` strictly above ``cut_off`` when both are rounded? (No cut-off: yes;
    no score: no.)"""
    if cut_off is None:
        return True
    return score is not None and round_score(score) > round_score(cut_off)
