"""The course's statistics (course_lib.lab.measure.significance) equal scipy.stats on the same data.

The course writes its formulas out because they are the lesson; these tests hold them
to the well-kept implementations: ``binomtest`` (the exact interval and McNemar's
binomial tail), ``bootstrap`` (percentile method) and ``permutation_test`` (paired
sign flips), and Holm against a hand-worked example (and statsmodels when installed).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from course_lib.lab.measure.significance import (
    bootstrap_interval,
    compare_pair,
    holm,
    holm_family,
    interval,
    mcnemar,
    paired_difference,
    paired_randomization,
    proportion_interval,
    verdict,
)

MRR_VALUES = np.array([0.0, 0.2, 0.25, 1 / 3, 0.5, 1.0])  # what MRR@5 can be per question
MRR_WEIGHTS = [0.1, 0.03, 0.03, 0.04, 0.1, 0.7]


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def mrr_like(seed: int, n: int = 1000) -> np.ndarray:
    return np.random.default_rng(seed).choice(MRR_VALUES, p=MRR_WEIGHTS, size=n)


# ---------------------------------------------------------------- one run: intervals
@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (1, 1), (0, 1), (7, 20), (979, 1000),
                                      (500, 1000), (3, 3219), (3219, 3219)])
def test_proportion_interval_is_scipys_exact_clopper_pearson(k: int, n: int) -> None:
    expected = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    low, high = proportion_interval(k, n)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)


def test_proportion_interval_other_confidence_is_scipys_too() -> None:
    expected = stats.binomtest(90, 100).proportion_ci(0.99, method="exact")
    assert proportion_interval(90, 100, 0.99) == pytest.approx((expected.low, expected.high),
                                                               abs=1e-12)


def test_bootstrap_interval_matches_scipy_percentile_bootstrap() -> None:
    x = mrr_like(seed=1)
    expected = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=10_000,
                               rng=np.random.default_rng(0)).confidence_interval
    low, high = bootstrap_interval(x)
    assert high - low > 0.02  # a real interval, so the comparison below means something
    assert low == pytest.approx(expected.low, abs=0.005)
    assert high == pytest.approx(expected.high, abs=0.005)


def test_bootstrap_interval_is_seeded() -> None:
    x = mrr_like(seed=2)
    assert bootstrap_interval(x) == bootstrap_interval(x)
    assert bootstrap_interval(x, seed=1) != bootstrap_interval(x, seed=0)


def test_interval_is_exact_for_hits_and_bootstrap_otherwise() -> None:
    hits = [1] * 979 + [0] * 21
    assert interval(hits) == proportion_interval(979, 1000)
    x = mrr_like(seed=3)
    assert interval(x) == bootstrap_interval(x)


# ---------------------------------------------------------------- two runs: paired tests
@pytest.mark.parametrize(("won", "lost", "tied"), [(10, 3, 987), (1, 0, 5), (0, 1, 0),
                                                   (5, 5, 10), (30, 12, 958), (0, 9, 91),
                                                   (100, 60, 840)])
def test_mcnemar_p_is_scipys_binomial_test_on_the_disagreements(won: int, lost: int,
                                                                tied: int) -> None:
    a = [1] * won + [0] * lost + [1] * (tied // 2) + [0] * (tied - tied // 2)
    b = [0] * won + [1] * lost + [1] * (tied // 2) + [0] * (tied - tied // 2)
    result = mcnemar(a, b)
    assert (result["won"], result["lost"]) == (won, lost)
    assert result["p"] == pytest.approx(stats.binomtest(won, won + lost, 0.5).pvalue, rel=1e-12)


def test_mcnemar_ten_won_three_lost_is_not_significant() -> None:
    p = mcnemar([1] * 10 + [0] * 3, [0] * 10 + [1] * 3)["p"]
    assert p == pytest.approx(0.0923, abs=1e-4) and p > 0.05


def test_mcnemar_without_disagreement_is_one() -> None:
    assert mcnemar([1, 0, 1, 1], [1, 0, 1, 1]) == {"won": 0, "lost": 0, "p": 1.0}


def test_paired_randomization_is_scipys_exact_permutation_test_when_both_enumerate() -> None:
    # n = 8: scipy enumerates all 2**8 sign patterns; 6 non-zero differences: so do we.
    a = np.array([1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.5, 1.0])
    b = np.array([1.0, 1.0, 0.5, 0.0, 1.0, 0.25, 0.5, 0.0])
    expected = stats.permutation_test((a, b), mean_difference, permutation_type="samples",
                                      n_resamples=10_000)
    assert len(expected.null_distribution) == 2 ** 8  # scipy was exact
    assert paired_randomization(a, b) == pytest.approx(expected.pvalue, abs=1e-12)
    assert paired_randomization(b, a) == pytest.approx(expected.pvalue, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 4])
def test_paired_randomization_exact_small_cases_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.choice(MRR_VALUES, size=8)
    b = np.where(rng.random(8) < 0.5, a, rng.choice(MRR_VALUES, size=8))
    expected = stats.permutation_test((a, b), mean_difference, permutation_type="samples",
                                      n_resamples=10_000).pvalue
    assert paired_randomization(a, b) == pytest.approx(expected, abs=1e-12)


def test_paired_randomization_large_case_is_close_to_scipy() -> None:
    # 36 non-zero differences among 300: both sample. 100,000 draws each keep the Monte
    # Carlo error of either p-value near 0.0015, so 0.01 apart would be a real disagreement.
    rng = np.random.default_rng(3)
    a = rng.choice(MRR_VALUES, p=MRR_WEIGHTS, size=300)
    b = a.copy()
    changed = rng.choice(300, 45, replace=False)
    b[changed], a[changed] = rng.choice(MRR_VALUES, size=45), rng.choice(MRR_VALUES, size=45)
    assert (a != b).sum() > 20  # more than the exact branch enumerates
    expected = stats.permutation_test((a, b), mean_difference, permutation_type="samples",
                                      n_resamples=100_000, rng=np.random.default_rng(0)).pvalue
    assert 0.1 < expected < 0.6  # a p-value where an error would show
    assert paired_randomization(a, b, resamples=100_000) == pytest.approx(expected, abs=0.01)
    assert paired_randomization(a, b) == pytest.approx(expected, abs=0.02)  # the default draws


def test_paired_randomization_clear_difference_and_no_difference() -> None:
    a = mrr_like(seed=5)
    assert paired_randomization(a, a) == 1.0
    # two-sided, and never 0: (0 + 1) / (10,000 + 1) on each side
    assert paired_randomization(a, np.zeros_like(a)) == pytest.approx(2 / 10_001)


def test_holm_hand_worked() -> None:
    # sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → kept at 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.02]) == pytest.approx([0.02])


def test_holm_equals_statsmodels() -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(0).uniform(0, 0.2, size=12)
    expected = multitest.multipletests(p, method="holm")[1]
    assert holm(p) == pytest.approx(list(expected), abs=1e-12)


def test_paired_difference_of_a_constant_difference() -> None:
    a = mrr_like(seed=6)
    assert paired_difference(a, a - 0.25) == pytest.approx(
        {"difference": 0.25, "low": 0.25, "high": 0.25})


def test_compare_pair_picks_the_test_and_verdict_reads_p() -> None:
    hits_a, hits_b = [1] * 30 + [0] * 70, [0] * 30 + [0] * 70
    row = compare_pair(hits_a, hits_b)
    assert row["test"] == "mcnemar" and (row["won"], row["lost"]) == (30, 0)
    assert verdict(row) == "higher" and verdict({**row, "difference": -0.3}) == "lower"
    assert verdict({**row, "p": 0.2}) == "no detectable difference"
    assert compare_pair(mrr_like(7), mrr_like(8))["test"] == "randomization"


# ---------------------------------------------------------------- bad input, clear errors
@pytest.mark.parametrize("call", [
    lambda: mcnemar([1, 0, 1], [1, 0]),
    lambda: paired_randomization([0.5, 1.0], [0.5]),
    lambda: paired_difference([1.0], [1.0, 0.0]),
    lambda: compare_pair([1, 0], [1, 0, 1]),
], ids=["mcnemar", "randomization", "difference", "compare_pair"])
def test_mismatched_lengths_are_refused(call) -> None:
    with pytest.raises(ValueError, match=r"one value per question from each run: a has \d, "
                                         r"b has \d \(were they run on the same questions\?\)"):
        call()


@pytest.mark.parametrize("call", [
    lambda: bootstrap_interval([]), lambda: interval([]), lambda: mcnemar([], []),
    lambda: paired_randomization([], []), lambda: holm([]),
], ids=["bootstrap", "interval", "mcnemar", "randomization", "holm"])
def test_empty_input_is_refused(call) -> None:
    with pytest.raises(ValueError, match=r"must be a non-empty list of per-question numbers"):
        call()


def test_mcnemar_refuses_numbers_that_are_not_hits() -> None:
    with pytest.raises(ValueError, match=r"hit/miss columns \(0 or 1 per question\); for "
                                         r"other numbers use paired_randomization"):
        mcnemar([1, 0.5, 0], [1, 1, 0])


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.1, 95])
def test_confidence_outside_zero_one_is_refused(confidence: float) -> None:
    pattern = r"confidence must lie strictly between 0 and 1, got "
    with pytest.raises(ValueError, match=pattern):
        proportion_interval(5, 10, confidence)
    with pytest.raises(ValueError, match=pattern):
        bootstrap_interval([0.5, 1.0], confidence)
    with pytest.raises(ValueError, match=pattern):
        paired_difference([0.5, 1.0], [0.5, 0.0], confidence)


def test_proportion_interval_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match=r"need 0 ≤ successes ≤ n and n ≥ 1"):
        proportion_interval(11, 10)
    with pytest.raises(ValueError, match=r"need 0 ≤ successes ≤ n and n ≥ 1"):
        proportion_interval(0, 0)
    with pytest.raises(ValueError, match=r"must be whole numbers"):
        proportion_interval(2.5, 10)


def test_a_cluster_bootstrap_is_the_mean_of_whole_clusters_drawn_together():
    from course_lib.lab.measure.significance import (
        cluster_bootstrap_interval,
        cluster_resamples,
        paired_difference,
    )

    rng = np.random.default_rng(7)
    clusters = [f"p{k}" for k in rng.integers(0, 40, 300)]
    per_cluster = {c: rng.random() < 0.5 for c in set(clusters)}  # one paragraph, one fate
    values = np.array([float(per_cluster[c]) for c in clusters])
    members, drawn = cluster_resamples(clusters, resamples=500)
    by_hand = [values[np.concatenate([members[k] for k in row])].mean() for row in drawn]
    low, high = cluster_bootstrap_interval(values, clusters, resamples=500)
    assert (low, high) == pytest.approx(tuple(np.quantile(by_hand, [0.025, 0.975])), abs=1e-12)
    # questions that rise and fall with their paragraph: resampling them one by one is too sure
    one_by_one = bootstrap_interval(values, resamples=500)
    assert high - low > 2 * (one_by_one[1] - one_by_one[0])
    assert paired_difference(values, 0 * values, clusters=clusters)["low"] == pytest.approx(
        cluster_bootstrap_interval(values, clusters)[0])
    with pytest.raises(ValueError, match="clusters needs one label per question"):
        cluster_bootstrap_interval(values, clusters[:-1])


def test_holm_takes_a_raw_p_below_005_to_no_detectable_difference():
    rows = [{"difference": 0.01, "p": 0.03}, {"difference": -0.02, "p": 0.04}]
    held = holm_family(rows)
    assert [r["p_holm"] for r in held] == [0.06, 0.06]
    assert [r["verdict"] for r in held] == ["no detectable difference"] * 2
    assert holm_family(rows[1:])[0]["verdict"] == "lower"  # alone, p 0.04 is marked
    assert held[0] is rows[0]  # the table's own rows, completed in place


def test_holm_families_are_corrected_apart():
    rows = [{"difference": 0.01, "p": 0.03, "set": "a"},
            {"difference": 0.02, "p": 0.04, "set": "b"}]
    held = holm_family(rows, family=lambda row: row["set"])
    assert [r["p_holm"] for r in held] == [0.03, 0.04]  # two families of one: nothing to adjust
    assert [r["verdict"] for r in held] == ["higher", "higher"]
