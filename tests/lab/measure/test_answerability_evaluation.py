"""Scoring a detector's probabilities against known answerability
(course_lib.lab.measure.answerability_evaluation): AUROC against a reference, decline rates,
the trade-off table, the paired AUROC difference, and cross-validation on synthetic signals."""

import math
from itertools import product

import numpy as np
import pytest

from course_lib.lab.measure.answerability_evaluation import (
    auroc,
    auroc_interval,
    bootstrap_p,
    cross_validate,
    decline_rates,
    paired_auroc_difference,
    roc_table,
)


def reference_auroc(scores, labels):
    """sklearn's roc_auc_score when installed, else counting every pair (ties half)."""
    try:
        from sklearn.metrics import roc_auc_score
    except ImportError:
        pos = [s for s, a in zip(scores, labels, strict=True) if a]
        neg = [s for s, a in zip(scores, labels, strict=True) if not a]
        pairs = [(p > n) + 0.5 * (p == n) for p, n in product(pos, neg)]
        return sum(pairs) / len(pairs)
    return float(roc_auc_score(labels, scores))


@pytest.mark.parametrize("seed", range(6))
def test_auroc_equals_the_reference_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    labels = [bool(x) for x in rng.random(40) < 0.6]
    labels[:2] = [True, False]
    scores = rng.random(40) + 0.3 * np.asarray(labels)
    if seed % 2:
        scores = np.round(scores * 4) / 4  # many ties
    assert auroc(scores, labels) == pytest.approx(reference_auroc(list(scores), labels))


def test_auroc_is_the_pair_count_and_flips_with_the_scores():
    scores, labels = [0.7, 0.4, 0.4, 0.9, 0.1], [True, False, True, False, False]
    # answerable 0.7 beats 0.4, 0.1 and loses to 0.9; 0.4 ties 0.4, beats 0.1, loses to 0.9
    assert auroc(scores, labels) == pytest.approx((2 + 1.5) / 6)
    assert auroc([-s for s in scores], labels) == pytest.approx(1 - (2 + 1.5) / 6)


@pytest.mark.parametrize("scores, labels, message", [
    ([0.1, math.nan], [True, False], "finite"),
    ([0.1, math.inf], [True, False], "finite"),
    ([[0.1, 0.2]], [[True, False]], "same length"),
    ([0.3, 0.2], [False, False], "0 answerable and 2 unanswerable"),
])
def test_auroc_refuses_what_it_cannot_score(scores, labels, message):
    with pytest.raises(ValueError, match=message):
        auroc(scores, labels)


def test_decline_rates_decline_strictly_below_the_threshold():
    scores = [0.9, 0.5, 0.2, 0.5, 0.1, 0.6]
    labels = [True, True, True, False, False, False]
    assert decline_rates(scores, labels, 0.5) == {"declined": 1 / 3, "wrongly_declined": 1 / 3}
    assert decline_rates(scores, labels, 0.51) == {"declined": 2 / 3,
                                                    "wrongly_declined": 2 / 3}
    assert decline_rates(scores, labels, 0.0) == {"declined": 0.0, "wrongly_declined": 0.0}
    assert decline_rates(scores, labels, 1.0) == {"declined": 1.0, "wrongly_declined": 1.0}


def test_decline_rates_of_a_missing_kind_are_nan():
    only_answerable = decline_rates([0.2, 0.8], [True, True], 0.5)
    assert math.isnan(only_answerable["declined"]) and only_answerable["wrongly_declined"] == 0.5
    only_unanswerable = decline_rates([0.2, 0.8], [False, False], 0.5)
    assert math.isnan(only_unanswerable["wrongly_declined"])
    assert only_unanswerable["declined"] == 0.5


def test_roc_table_rows_keep_their_promise_on_these_answerable_questions():
    rng = np.random.default_rng(3)
    labels = [True] * 60 + [False] * 40
    scores = np.r_[rng.normal(1.0, 1.0, 60), rng.normal(-1.0, 1.0, 40)]
    shares = (0.0, 0.05, 0.2, 0.5)
    rows = roc_table(scores, labels, wrong=shares)
    assert [row["max_wrong"] for row in rows] == list(shares)
    for row in rows:
        assert set(row) == {"max_wrong", "threshold", "declined", "wrongly_declined"}
        assert row["wrongly_declined"] <= row["max_wrong"]
        rates = decline_rates(scores, labels, row["threshold"])
        assert row["declined"] == rates["declined"]
    declined = [row["declined"] for row in rows]
    assert declined == sorted(declined) and declined[0] == 0.0 and declined[-1] > 0.8


def test_the_paired_auroc_difference_has_the_sign_of_b_minus_a():
    rng = np.random.default_rng(0)
    labels = [bool(i % 2) for i in range(120)]
    noise = rng.normal(size=120)
    weak = noise + 0.2 * np.asarray(labels)
    strong = noise + 3.0 * np.asarray(labels)
    clusters = [i // 2 for i in range(120)]  # pairs of questions share a paragraph
    better = paired_auroc_difference(weak, strong, labels, clusters, resamples=400)
    expected = round(auroc(strong, labels) - auroc(weak, labels), 4)
    assert better["difference"] == expected > 0
    low, high = better["interval"]
    assert 0 < low <= expected <= high
    assert better["p"] == pytest.approx(1 / 401) and better["verdict"] == "higher"
    worse = paired_auroc_difference(strong, weak, labels, clusters, resamples=400)
    assert worse["difference"] == -expected and worse["verdict"] == "lower"
    assert worse["interval"] == pytest.approx((-high, -low))
    same = paired_auroc_difference(weak, weak, labels, clusters, resamples=50)
    assert same["difference"] == 0 and same["p"] == 1.0
    assert same["verdict"] == "no detectable difference"


def test_auroc_interval_holds_the_auroc_and_is_seeded():
    rng = np.random.default_rng(1)
    labels = [bool(i % 3) for i in range(90)]
    scores = rng.normal(size=90) + np.asarray(labels)
    clusters = [i // 3 for i in range(90)]
    low, high = auroc_interval(scores, labels, clusters, resamples=300, seed=4)
    assert low < auroc(scores, labels) < high
    assert auroc_interval(scores, labels, clusters, resamples=300, seed=4) == (low, high)
    with pytest.raises(ValueError, match="one entry per question"):
        auroc_interval(scores, labels, clusters[:-1])


def test_bootstrap_p_reads_the_smaller_tail_and_drops_nan():
    assert bootstrap_p([-0.1, -0.2, 0.3, math.nan]) == pytest.approx(2 / 3)
    assert bootstrap_p([0.0, 0.0]) == 1.0
    assert bootstrap_p([-1.0] * 9) == 0.1  # the floor 1 / (9 + 1)
    with pytest.raises(ValueError, match="at least one draw"):
        bootstrap_p([math.nan])


class FoldedSet:
    """The part of an AnswerabilitySet that cross_validate reads."""

    def __init__(self, answerable, n_folds):
        self.answerable = answerable
        self.questions = list(range(len(answerable)))
        self.n_folds = n_folds
        self.folds = [(i // 2) % n_folds for i in range(len(answerable))]  # both kinds


def test_cross_validation_scores_each_fold_with_a_model_fitted_without_it():
    rng = np.random.default_rng(2)
    answerable = [bool(i % 2) for i in range(200)]
    signals = {"good": rng.normal(size=200) + 3.0 * np.asarray(answerable),
               "noise": rng.normal(size=200)}
    data = FoldedSet(answerable, 4)
    result = cross_validate(data, signals, max_wrong=0.1)
    assert result.signals == ("good", "noise") and len(result.thresholds) == 4
    assert result.auroc > 0.95 and result.declined_share > 0.7
    assert result.wrongly_declined_share < 0.2
    assert [set(w) for w in result.weights] == [{"good", "noise"}] * 4
    assert all(abs(w["good"]) > abs(w["noise"]) for w in result.weights)
    noise_only = cross_validate(data, signals, use=["noise"])
    assert abs(noise_only.auroc - 0.5) < 0.15
    assert noise_only.as_dict()["signals"] == ["noise"]
    with pytest.raises(ValueError, match="use must name signals"):
        cross_validate(data, signals, use=["missing"])
    with pytest.raises(ValueError, match="one value per question"):
        cross_validate(data, {"short": [0.1, 0.2]})
