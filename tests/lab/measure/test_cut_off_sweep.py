"""cut_off_sweep gives, for each threshold, exactly what scoring the cut rankings gives
(it only counts faster), plus the share of questions left with nothing; retrieve_all
runs a retriever over every question with the questions announced for batch embedding;
hit_ranks, head_to_head and scores_by_hit read rankings with the rule recall@k counts."""

import pytest

from course_lib import embedding_cache as embeddings  # its announced queries
from course_lib.lab.data.datasets import KnowledgeBase, Question
from course_lib.lab.measure.evaluation import (
    cut_off_sweep,
    head_to_head,
    hit_ranks,
    retrieve_all,
    score_rankings,
    scores_by_hit,
)
from course_lib.node import DocNode
from course_lib.ranking import passes

GOLD = ["北京是中国的首都。北京有故宫。", "上海是港口城市。上海有外滩。", "长城东起山海关。"]
QUESTIONS = [Question(str(i), f"问题{i}？", ["x"], [0], str(i), p) for i, p in enumerate(GOLD)]


def rankings():
    """Scored lists, one not sorted by score, one with a node without a score, one empty,
    and near-gold text (a hit with one sentence of two) to exercise context relevance."""
    return [
        [DocNode(GOLD[0], score=0.9), DocNode(GOLD[1], score=0.35), DocNode("无关。", score=0.3)],
        [DocNode("上海是港口城市。别的。", score=0.2), DocNode(GOLD[1], score=0.6),
         DocNode("无分数。", score=None)],
        [],
    ]


@pytest.mark.parametrize("k", [1, 2, 5])
def test_each_row_equals_scoring_the_cut_rankings(k):
    thresholds = [None, 0.0, 0.1, 0.2, 0.3, 0.35, 0.5, 0.9, 1.0]
    rows = cut_off_sweep(QUESTIONS, rankings(), thresholds, k=k)
    assert [row["cut_off"] for row in rows] == thresholds
    for threshold, row in zip(thresholds, rows, strict=True):
        kept = [[n for n in ranking[:k] if passes(n.score, threshold)] for ranking in rankings()]
        expected = score_rankings(QUESTIONS, kept, ks=(k,))
        assert row[f"recall@{k}"] == expected[f"recall@{k}"]
        assert row[f"context_relevance@{k}"] == expected[f"context_relevance@{k}"]
        assert row["mean_kept"] == round(sum(map(len, kept)) / 3, 3)
        assert row["empty"] == round(sum(not r for r in kept) / 3, 4)


def test_questions_left_with_nothing_lower_context_relevance():
    """Why a high cut-off can lower context relevance: an emptied question counts 0."""
    low, high = cut_off_sweep(QUESTIONS, rankings(), [0.25, 0.7])
    assert low["empty"] == round(1 / 3, 4) and high["empty"] == round(2 / 3, 4)
    assert high["context_relevance@5"] < low["context_relevance@5"]
    # among the questions that keep something, relevance rose
    assert high["context_relevance@5"] / (1 - high["empty"]) > \
        low["context_relevance@5"] / (1 - low["empty"])


def test_sweep_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="rankings"):
        cut_off_sweep(QUESTIONS, rankings()[:2], [0.0])
    with pytest.raises(ValueError, match="no questions"):
        cut_off_sweep([], [], [0.0])


def test_retrieve_all_runs_every_question_in_order_with_the_questions_announced():
    kb = KnowledgeBase(files={}, questions=QUESTIONS, paragraphs=GOLD, skipped=[],
                       fixed_offsets=[])
    seen = []

    def retrieve(question):
        seen.append((question, set(embeddings._EXPECTED_QUERIES)))
        return (DocNode(question),)

    result = retrieve_all(kb, retrieve)
    assert [[n.text for n in r] for r in result] == [[q.question] for q in QUESTIONS]
    assert all(isinstance(r, list) for r in result)
    assert [q for q, _ in seen] == [q.question for q in QUESTIONS]
    assert all(announced >= {q.question for q in QUESTIONS} for _, announced in seen)
    assert not embeddings._EXPECTED_QUERIES  # announced only while retrieving


def test_hit_ranks_use_the_rule_recall_counts():
    rank_rows = hit_ranks(QUESTIONS, rankings())
    assert rank_rows == [1, 1, None]  # "上海是港口城市。别的。" is near enough to the gold: a hit
    for k in (1, 2, 5):
        recall = score_rankings(QUESTIONS, rankings(), ks=(k,))[f"recall@{k}"]
        assert recall == round(sum(r is not None and r <= k for r in rank_rows) / 3, 4)
    with pytest.raises(ValueError, match="rankings"):
        hit_ranks(QUESTIONS, rankings()[:1])


def test_head_to_head_shares_out_every_question():
    gold = [DocNode(p) for p in GOLD]
    other = DocNode("无关。")
    first = [[gold[0]], [other, gold[1]], [other], []]
    second = [[gold[0]], [gold[1]], [gold[2]], [other]]
    questions = [*QUESTIONS, QUESTIONS[0]]
    cases = head_to_head(questions, {"BM25": first, "e5": second})
    assert cases == {"both": [0], "only BM25": [], "only e5": [1, 2], "neither": [3]}
    at_two = head_to_head(questions, {"BM25": first, "e5": second}, k=2)
    assert at_two["both"] == [0, 1] and at_two["only e5"] == [2]
    assert sorted(i for group in at_two.values() for i in group) == [0, 1, 2, 3]
    # both + only BM25 over all questions is BM25's recall@k
    assert (len(at_two["both"]) + len(at_two["only BM25"])) / 4 == \
        score_rankings(questions, first, ks=(2,))["recall@2"]
    with pytest.raises(ValueError, match="two rankings"):
        head_to_head(questions, {"BM25": first})


def test_scores_by_hit_splits_the_top_k_scores():
    split = scores_by_hit(QUESTIONS, rankings())
    # question 0: its gold, then question 1's gold (another paragraph); question 1: a
    # near-gold hit and the gold; a node without a score is left out
    assert split == {"gold paragraph": [0.9, 0.2, 0.6], "other paragraphs": [0.35, 0.3]}
    assert scores_by_hit(QUESTIONS, rankings(), k=1) == {"gold paragraph": [0.9, 0.2],
                                                         "other paragraphs": []}
