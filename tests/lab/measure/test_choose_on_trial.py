"""cut_off_columns gives, per question, what a cut-off leaves: its means are exactly
cut_off_sweep's row (the sweep is built on it), and it is what an interval or a paired
comparison of two cut-offs needs — choose a cut-off on some questions, report it on others."""

import pytest

from course_lib.lab.data.datasets import Question
from course_lib.lab.measure.evaluation import cut_off_columns, cut_off_sweep, score_rankings
from course_lib.lab.measure.significance import compare_pair, interval
from course_lib.node import DocNode
from course_lib.ranking import passes

GOLD = ["北京是中国的首都。北京有故宫。", "上海是港口城市。上海有外滩。", "长城东起山海关。"]
QUESTIONS = [Question(str(i), f"问题{i}？", ["x"], [0], str(i), p) for i, p in enumerate(GOLD)]


def rankings():
    """Scored lists, one not sorted by score, one with a node without a score, one empty,
    and near-gold text (a hit with one sentence of two)."""
    return [
        [DocNode(GOLD[0], score=0.9), DocNode(GOLD[1], score=0.35), DocNode("无关。", score=0.3)],
        [DocNode("上海是港口城市。别的。", score=0.2), DocNode(GOLD[1], score=0.6),
         DocNode("无分数。", score=None)],
        [],
    ]


THRESHOLDS = [None, 0.0, 0.1, 0.2, 0.3, 0.35, 0.5, 0.9, 1.0]


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_columns_score_each_question_like_the_cut_rankings(threshold, k):
    columns = cut_off_columns(QUESTIONS, rankings(), threshold, k=k)
    assert set(columns) == {f"recall@{k}", f"context_relevance@{k}", "kept"}
    for i, ranking in enumerate(rankings()):
        kept = [n for n in ranking[:k] if passes(n.score, threshold)]
        expected = score_rankings(QUESTIONS[i:i + 1], [kept], ks=(k,))
        assert columns[f"recall@{k}"][i] == expected[f"recall@{k}"]
        assert round(columns[f"context_relevance@{k}"][i], 4) == \
            expected[f"context_relevance@{k}"]
        assert columns["kept"][i] == len(kept)


@pytest.mark.parametrize("k", [1, 5])
def test_the_sweep_rows_are_the_means_of_the_columns(k):
    for row in cut_off_sweep(QUESTIONS, rankings(), THRESHOLDS, k=k):
        columns = cut_off_columns(QUESTIONS, rankings(), row["cut_off"], k=k)
        for key in (f"recall@{k}", f"context_relevance@{k}"):
            assert row[key] == round(sum(columns[key]) / 3, 4)
        assert row["mean_kept"] == round(sum(columns["kept"]) / 3, 3)
        assert row["empty"] == round(columns["kept"].count(0) / 3, 4)


def test_the_columns_feed_intervals_and_paired_comparisons():
    low_cut = cut_off_columns(QUESTIONS, rankings(), 0.25)
    high_cut = cut_off_columns(QUESTIONS, rankings(), 0.7)
    # recall@5 is 0/1 per question: an exact interval around its mean
    low, high = interval(low_cut["recall@5"])
    assert low <= sum(low_cut["recall@5"]) / 3 <= high
    row = compare_pair(high_cut["recall@5"], low_cut["recall@5"])
    assert row["test"] == "mcnemar" and (row["won"], row["lost"]) == (0, 1)
    # a cut-off never raises recall
    assert all(h <= lo for h, lo in zip(high_cut["recall@5"], low_cut["recall@5"], strict=True))


def test_columns_reject_mismatched_inputs():
    with pytest.raises(ValueError, match="rankings"):
        cut_off_columns(QUESTIONS, rankings()[:2], 0.0)
    with pytest.raises(ValueError, match="no questions"):
        cut_off_columns([], [], 0.0)
