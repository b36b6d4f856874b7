"""Measuring the answerability detector where the answers are known to be missing.

* :func:`answerability_set` builds an evaluation set whose missing answers are known: a
  seeded share of the knowledge base's paragraphs is removed, so **every question of a
  removed paragraph becomes unanswerable** (the right reply is "not in the knowledge
  base"); the other questions stay answerable. Questions are dealt into folds by paragraph.
* :func:`auroc`, :func:`decline_rates` and :func:`roc_table` score a detector's
  probabilities against those labels.
* :func:`cross_validate` fits on the calibration folds and scores the held-out report
  fold, each fold in turn: nothing is fitted on the questions it is scored on.

>>> auroc([0.9, 0.8, 0.3, 0.1], [True, True, False, False])
1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...answerability import AnswerabilityDetector, choose_threshold, fit_model
from ...node import DocNode
from ..data.answerability_set import AnswerabilitySet
from .significance import cluster_resamples, verdict

# ---------------------------------------------------------------- metrics


def auroc(scores: Sequence[float], answerable: Sequence[bool]) -> float:
    """Area under the ROC curve: the chance that a random answerable question scores
    above a random unanswerable one (ties count half). 1.0 separates them perfectly,
    0.5 is chance.

    >>> auroc([0.9, 0.5, 0.5, 0.1], [True, True, False, False])
    0.875
    """
    from scipy.stats import rankdata

    scores, labels = _scores_and_labels(scores, answerable)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if not n_pos or not n_neg:
        raise ValueError(f"auroc needs answerable and unanswerable questions, got {n_pos} "
                         f"answerable and {n_neg} unanswerable")
    ranks = rankdata(scores)  # ties get their average rank: they count half
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


AUROC_RESAMPLES = 2_000  # each draw ranks every question: fewer draws than for a mean


def _cluster_draws(clusters: Sequence[Any], resamples: int, seed: int) -> np.ndarray:
    """Bootstrap draws as weights, resampling whole clusters (paragraphs) with replacement
    (:func:`~course_lib.lab.measure.significance.cluster_resamples`): row k holds how many times
    each question is in draw k. Questions of one paragraph rise and fall together, so
    resampling them one by one would make an interval too narrow."""
    members, drawn = cluster_resamples(clusters, resamples, seed)
    cluster_of = np.empty(sum(m.size for m in members), dtype=np.intp)
    for k, member in enumerate(members):
        cluster_of[member] = k
    flat = (np.arange(len(drawn))[:, None] * len(members) + drawn).ravel()
    counts = np.bincount(flat, minlength=len(drawn) * len(members))
    return counts.reshape(len(drawn), len(members))[:, cluster_of].astype(np.float64)


def _drawn_aurocs(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUROC on each draw (a row of :func:`_cluster_draws`; a draw that lost one class gives
    nan), counted as :func:`auroc` counts — answerable above unanswerable, ties half — on
    the draw's questions, each as many times as drawn. The counts are whole numbers, so the
    sums are exact and each value is the very number :func:`auroc` gives on that draw."""
    order = np.argsort(scores, kind="stable")
    ordered = scores[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # groups of ties
    positive = labels[order]
    out = np.empty(len(weights))
    for block in range(0, len(weights), 500):  # 500 draws at a time: bounded memory
        w = weights[block:block + 500, order]
        pos = np.add.reduceat(w * positive, starts, axis=1)
        neg = np.add.reduceat(w * ~positive, starts, axis=1)
        below = np.cumsum(neg, axis=1) - neg  # unanswerable weight strictly below each score
        n_pos, n_neg = pos.sum(axis=1), neg.sum(axis=1)
        twice_u = (pos * (2 * below + neg)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[block:block + 500] = np.where((n_pos > 0) & (n_neg > 0),
                                              twice_u / (2 * n_pos * n_neg), np.nan)
    return out


def auroc_interval(scores: Sequence[float], answerable: Sequence[bool],
                   clusters: Sequence[Any], confidence: float = 0.95,
                   resamples: int = AUROC_RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """A percentile-bootstrap interval for :func:`auroc`, resampling ``clusters`` (e.g.
    each question's paragraph) rather than single questions (seeded).

    >>> auroc_interval([0.9, 0.8, 0.3, 0.1], [True, True, False, False], [1, 2, 3, 4])
    (1.0, 1.0)
    """
    values, labels = _scores_and_labels(scores, answerable)
    if len(clusters) != len(values):
        raise ValueError(f"clusters needs one entry per question ({len(values)}), got "
                         f"{len(clusters)}")
    drawn = _drawn_aurocs(values, labels, _cluster_draws(clusters, resamples, seed))
    alpha = 1 - confidence
    low, high = np.nanquantile(drawn, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bootstrap_p(drawn: Sequence[float]) -> float:
    """Two-sided p-value of "no difference" read off bootstrap draws of a paired
    difference: ``min(1, 2 · min(share of draws ≤ 0, share ≥ 0))``, never below
    ``1 / (draws + 1)`` — that many draws cannot show a smaller p (nan draws, which lost
    one kind of question, are dropped).

    It is the percentile interval turned around: p < 0.05 when 0 falls outside the middle
    95 % of the draws (up to how the interval interpolates between two draws). It assumes
    what that interval assumes: the resampled units (paragraphs, articles) are independent
    and numerous enough that the spread of the draws stands for the spread of the
    difference over new samples of them.

    >>> bootstrap_p([0.1, 0.2, -0.1, 0.3])   # a quarter of the draws at or below 0
    0.5
    >>> bootstrap_p([0.1, 0.2, 0.3, 0.4])    # none: the floor 1/5
    0.2
    """
    values = np.asarray(drawn, dtype=np.float64)
    values = values[~np.isnan(values)]
    if not values.size:
        raise ValueError("bootstrap_p needs at least one draw that is a number")
    tail = min(float((values <= 0).mean()), float((values >= 0).mean()))
    return max(min(1.0, 2 * tail), 1 / (values.size + 1))


def paired_auroc_difference(a: Sequence[float], b: Sequence[float],
                            answerable: Sequence[bool], clusters: Sequence[Any],
                            confidence: float = 0.95, resamples: int = AUROC_RESAMPLES,
                            seed: int = 0) -> dict[str, Any]:
    """``auroc(b) − auroc(a)`` on the same questions, with a paired percentile-bootstrap
    interval (both scored on each draw of ``clusters``), the p-value of those same draws
    (:func:`bootstrap_p`) and the verdict that p allows on its own
    (:func:`~course_lib.lab.measure.significance.verdict`); in a table of several comparisons,
    :func:`~course_lib.lab.measure.significance.holm_family` replaces it by the family's.

    >>> row = paired_auroc_difference([0.9, 0.2, 0.6, 0.1], [0.9, 0.8, 0.3, 0.1],
    ...                               [True, True, False, False], [1, 2, 3, 4])
    >>> row["difference"], row["p"], row["verdict"]
    (0.25, 1.0, 'no detectable difference')
    """
    first, labels = _scores_and_labels(a, answerable)
    second, _ = _scores_and_labels(b, answerable)
    draws = _cluster_draws(clusters, resamples, seed)
    drawn = _drawn_aurocs(second, labels, draws) - _drawn_aurocs(first, labels, draws)
    alpha = 1 - confidence
    low, high = (float(x) for x in np.nanquantile(drawn, [alpha / 2, 1 - alpha / 2]))
    row = {"difference": round(auroc(second, labels) - auroc(first, labels), 4),
           "interval": (low, high), "p": bootstrap_p(drawn)}
    return {**row, "verdict": verdict(row)}


def decline_rates(scores: Sequence[float], answerable: Sequence[bool], threshold: float
                  ) -> dict[str, float]:
    """Declining every score below ``threshold``: the share of unanswerable questions
    declined (``declined``) and of answerable ones declined (``wrongly_declined``).

    >>> decline_rates([0.9, 0.2, 0.4, 0.1], [True, True, False, False], 0.3)
    {'declined': 0.5, 'wrongly_declined': 0.5}
    """
    scores, labels = _scores_and_labels(scores, answerable)
    declined = scores < threshold
    return {"declined": float(declined[~labels].mean()) if (~labels).any() else math.nan,
            "wrongly_declined": float(declined[labels].mean()) if labels.any() else math.nan}


def roc_table(scores: Sequence[float], answerable: Sequence[bool],
              wrong: Sequence[float] = (0.01, 0.02, 0.05, 0.1)) -> list[dict[str, float]]:
    """Points of the trade-off curve: for each share in ``wrong``, the threshold that
    declines at most that share of these answerable questions, and what it declines.
    The thresholds are read off the scores themselves — a description of the curve, not
    a calibrated promise (for that, :func:`cross_validate`).

    >>> roc_table([0.9, 0.8, 0.3, 0.1], [True, True, False, False], wrong=(0.5,))
    [{'max_wrong': 0.5, 'threshold': 0.8, 'declined': 1.0, 'wrongly_declined': 0.0}]
    """
    scores, labels = _scores_and_labels(scores, answerable)
    rows = []
    for share in wrong:
        threshold = choose_threshold(scores[labels], share)
        rows.append({"max_wrong": share, "threshold": round(threshold, 4),
                     **decline_rates(scores, labels, threshold)})
    return rows


def _scores_and_labels(scores: Sequence[float], answerable: Sequence[bool]
                       ) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(answerable)
    if values.ndim != 1 or values.shape != labels.shape:
        raise ValueError(f"scores and answerable must be two lists of the same length, got "
                         f"{values.shape} and {labels.shape}")
    if labels.dtype != np.bool_:
        raise ValueError(f"answerable must hold True/False, got {labels.dtype}")
    if not np.isfinite(values).all():
        raise ValueError("scores must be finite numbers")
    return values, labels


# ---------------------------------------------------------------- cross-validation
@dataclass
class CrossValidation:
    """Held-out results: each question scored by a detector fitted without its fold.

    ``probabilities[i]`` and ``declined[i]`` are question i's, from the model and the
    threshold of the folds that did not contain it (``thresholds[f]``, ``weights[f]``:
    fold f's).
    """

    signals: tuple[str, ...]
    max_wrong: float
    probabilities: np.ndarray
    answerable: np.ndarray
    declined: np.ndarray
    thresholds: list[float]
    weights: list[dict[str, float]]

    @property
    def auroc(self) -> float:
        return auroc(self.probabilities, self.answerable)

    @property
    def declined_share(self) -> float:
        """Share of the unanswerable questions declined."""
        return float(self.declined[~self.answerable].mean())

    @property
    def wrongly_declined_share(self) -> float:
        """Share of the answerable questions declined."""
        return float(self.declined[self.answerable].mean())

    def as_dict(self) -> dict[str, Any]:
        return {"signals": list(self.signals), "max_wrong": self.max_wrong,
                "auroc": round(self.auroc, 4), "declined": round(self.declined_share, 4),
                "wrongly_declined": round(self.wrongly_declined_share, 4)}

    def summary(self) -> str:
        """One line: the held-out AUROC and decline shares."""
        return (f"{' + '.join(self.signals)}: AUROC {self.auroc:.4f}; declined "
                f"{self.declined_share:.1%} of unanswerable, {self.wrongly_declined_share:.1%} "
                f"of answerable questions (held-out folds; thresholds for ≤ "
                f"{self.max_wrong:.0%} on the calibration folds)")


def signal_table(data: AnswerabilitySet, candidates: Sequence[Sequence[DocNode]],
                 detector: AnswerabilityDetector | None = None) -> dict[str, np.ndarray]:
    """``{signal: one value per question}`` for ``data``'s questions and ``candidates``,
    computed by ``detector`` (default: all :data:`SIGNALS`, idf from ``data.kb``)."""
    detector = detector or AnswerabilityDetector(data.kb.paragraphs)
    matrix = detector.signal_matrix(data.questions, candidates)
    return {name: matrix[:, j] for j, name in enumerate(detector.signal_names)}


def cross_validate(data: AnswerabilitySet, signals: dict[str, Sequence[float]],
                   use: Sequence[str] | None = None, max_wrong: float = 0.05
                   ) -> CrossValidation:
    """For each fold: fit the logistic regression and choose the threshold on the other
    folds (calibration), then score and decide this fold's questions (report).

    ``signals`` maps names to one value per question (:func:`signal_table`, plus any
    signal of your own); ``use`` picks the columns (default: all).
    """
    use = tuple(signals) if use is None else tuple(use)
    missing = [name for name in use if name not in signals]
    if missing or not use:
        raise ValueError(f"use must name signals among {list(signals)}, got {list(use)}")
    matrix = np.column_stack([np.asarray(signals[name], dtype=np.float64) for name in use])
    if len(matrix) != len(data.questions):
        raise ValueError(f"each signal needs one value per question ({len(data.questions)}), "
                         f"got {len(matrix)}")
    labels = np.asarray(data.answerable, dtype=bool)
    folds = np.asarray(data.folds)
    probabilities = np.zeros(len(labels))
    declined = np.zeros(len(labels), dtype=bool)
    thresholds, weights = [], []
    for fold in range(data.n_folds):
        report = folds == fold
        model = fit_model(matrix[~report], labels[~report], max_wrong)
        probabilities[report] = model.probabilities(matrix[report])
        declined[report] = probabilities[report] < model.threshold
        thresholds.append(round(model.threshold, 4))
        weights.append({name: round(float(w), 3) for name, w in zip(use, model.coef,
                                                                    strict=True)})
    return CrossValidation(use, max_wrong, probabilities, labels, declined, thresholds, weights)


# The single-signal baseline: the best candidate's idf-weighted word coverage.
BASELINE = ("word_coverage",)


def read_evidence(detector: AnswerabilityDetector, question: str,
                  candidates: Sequence[DocNode], gold_paragraph: str | None = None) -> str:
    """The detector's evidence on one question, read right: which candidate it comes from
    (its position and id), whether that is the gold paragraph, the question's names and
    whether the candidate holds them, the content words it has and lacks, and which of the
    question's function words it has (word coverage counts them, anchored coverage does
    not); then, if the gold paragraph is among the candidates
    but not the one chosen, what it has and lacks.

    >>> reader = AnswerabilityDetector(["罗保铭毕业于天津师范大学。"], embedder=None,
    ...                                signals=["anchored_coverage"])
    >>> nodes = [DocNode("山东女子学院是本科大学。", uid="a"),
    ...          DocNode("罗保铭毕业于天津师范大学。", uid="b")]
    >>> print(read_evidence(reader, "罗保铭本科毕业于哪所大学？", nodes, nodes[1].text))
    罗保铭本科毕业于哪所大学？
      evidence: candidate 2 (b), the gold paragraph — 「罗保铭毕业于天津师范大学。」
        names: 罗保铭 (all in it)
        has 罗保铭、毕业、大学; lacks 本科、本科毕业
        function words 于、所 (only word coverage counts them): it has 于
    """
    evidence = detector.signals(question, candidates)
    lines = [question]
    if evidence.best is None:
        return "\n".join(lines + ["  no candidates were retrieved"])
    best = evidence.best
    is_gold = gold_paragraph is not None and gold_paragraph in best.text
    text = best.text.replace("\n", " ")
    lines.append(f"  evidence: candidate {evidence.best_rank} ({best.uid}), "
                 f"{'the gold paragraph' if is_gold else 'not the gold paragraph'} — "
                 f"「{text[:30]}{'…' if len(text) > 30 else ''}」")

    def holds(signals: Any, node_text: str) -> list[str]:
        missing = [name for name in signals.anchors if name not in node_text.lower()]
        out = []
        if signals.anchors:
            out.append(f"    names: {'、'.join(signals.anchors)} "
                       + ("(all in it)" if not missing else f"(lacks {'、'.join(missing)})"))
        out.append(f"    has {'、'.join(signals.found) or 'none'}; lacks "
                   f"{'、'.join(signals.missing) or 'none'}")
        if signals.ignored:
            held = [word for word in signals.ignored if word in node_text.lower()]
            out.append(f"    function words {'、'.join(signals.ignored)} (only word coverage "
                       f"counts them): it has {'、'.join(held) or 'none'}")
        return out

    lines += holds(evidence, best.text)
    gold = [(rank, node) for rank, node in enumerate(candidates, 1)
            if gold_paragraph is not None and gold_paragraph in node.text]
    if gold and not is_gold:
        rank, node = gold[0]
        lines.append(f"  the gold paragraph is candidate {rank} ({node.uid}):")
        lines += holds(detector.signals(question, [node]), node.text)
    elif gold_paragraph is not None and not gold:
        lines.append("  the gold paragraph is not among the candidates")
    return "\n".join(lines)
