"""The try-it check of notebook 01's "Is the difference real?" section: it passes the
exact McNemar p-value and names the wrong methods a learner may reach for."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from course_lib.lab.measure.evaluation import evaluate
from course_lib.lab.measure.significance import mcnemar
from course_lib.lab.teaching.exercises import try_it
from course_lib.lab.teaching.try_it_checks import check_paired_p_value

# 1,000 questions: 940 both hit, 30 both miss, 22 only a, 8 only b.
A = np.array([1] * 940 + [0] * 30 + [1] * 22 + [0] * 8, dtype=float)
B = np.array([1] * 940 + [0] * 30 + [0] * 22 + [1] * 8, dtype=float)


def _totals(a: np.ndarray, b: np.ndarray) -> list[list[int]]:
    return [[int(a.sum()), int(a.size - a.sum())], [int(b.sum()), int(b.size - b.sum())]]


def test_the_exact_mcnemar_p_passes_rounded_or_not_and_either_way_round():
    p = mcnemar(A, B)["p"]
    assert check_paired_p_value(p, A, B) is True
    assert check_paired_p_value(float(f"{p:.3g}"), A, B) is True
    assert check_paired_p_value(np.float64(p), B, A) is True
    assert check_paired_p_value(stats.binomtest(22, 30).pvalue, A, B) is True


def test_unpaired_tests_of_the_totals_are_named_unpaired():
    table = _totals(A, B)
    for p in (stats.fisher_exact(table).pvalue,
              stats.chi2_contingency(table).pvalue,
              stats.chi2_contingency(table, correction=False).pvalue,  # the pooled z-test
              stats.ttest_ind(A, B).pvalue):
        message = check_paired_p_value(float(p), A, B)
        assert isinstance(message, str) and "unpaired test" in message, p
        assert "30 where they disagree" in message
        assert "mcnemar" not in message.lower()  # says what is wrong, not the code


def test_one_sided_and_approximate_paired_p_values_are_named():
    assert "one-sided" in check_paired_p_value(mcnemar(A, B)["p"] / 2, A, B)
    chi_square = stats.chi2.sf((22 - 8 - 1) ** 2 / 30, 1)
    assert "approximate" in check_paired_p_value(float(chi_square), A, B)
    assert "approximate" in check_paired_p_value(float(stats.ttest_rel(A, B).pvalue), A, B)


@pytest.mark.parametrize(("answer", "words"), [
    (None, "not attempted"), ({"won": 22, "lost": 8, "p": 0.016}, "'p' entry"),
    ("0.016", "as a number"), (1.5, "between 0 and 1"), (0.5, "not the exact McNemar")])
def test_other_answers_say_what_is_wrong(answer, words):
    assert words in check_paired_p_value(answer, A, B)


def test_try_it_runs_the_check_and_leaves_none_not_attempted(capsys):
    assert try_it("paired", None, lambda p: check_paired_p_value(p, A, B)) is False
    assert "not attempted" in capsys.readouterr().out
    assert try_it("paired", mcnemar(A, B)["p"], lambda p: check_paired_p_value(p, A, B))


def test_on_notebook_01s_pair_paired_and_unpaired_p_values_differ_clearly(cmrc_kb):
    words = evaluate(cmrc_kb, "bm25-paragraph")["per_question"]["recall@1"]
    lazyllm = evaluate(cmrc_kb, "bm25-paragraph-lazyllm")["per_question"]["recall@1"]
    paired = mcnemar(words, lazyllm)["p"]
    unpaired = stats.fisher_exact(_totals(np.array(words), np.array(lazyllm))).pvalue
    assert paired < 0.01 < 0.05 < unpaired  # significant paired, not unpaired
    assert unpaired / paired > 10
    assert check_paired_p_value(paired, words, lazyllm) is True
    assert "unpaired test" in check_paired_p_value(float(unpaired), words, lazyllm)
