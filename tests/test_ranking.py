"""Rankings do not depend on the last bits of a float (another BLAS kernel, CPU or thread
count): scores are compared rounded, ties keep their position."""

import numpy as np
import pytest

from course_lib import Document, Retriever
from course_lib.fusion import reciprocal_rank_fusion
from course_lib.node import DocNode
from course_lib.offline_llm import extractive_answer, textrank_summary
from course_lib.ranking import SCORE_DECIMALS, best_first, passes, round_score, rounded, top_k
from course_lib.rerank import Reranker
from course_lib.similarity import SIMILARITIES, register_similarity

NOISE = 10.0 ** -(SCORE_DECIMALS + 4)  # far below the rounding step, far above float64 eps


def test_last_bits_do_not_reorder_equal_scores():
    # 0.1 + 0.2 is 0.30000000000000004: an unrounded sort puts it before 0.3.
    assert best_first([0.3, 0.1 + 0.2]).tolist() == [0, 1]
    assert best_first([0.1 + 0.2, 0.3]).tolist() == [0, 1]
    assert not passes(0.1 + 0.2, 0.3) and passes(0.300002, 0.3) and passes(None, None)
    assert not passes(None, 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_top_k_is_a_stable_sort_of_rounded_scores(seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 5, 200) / 4 + rng.normal(0, NOISE, 200)  # many near-ties
    eligible = rng.random(200) > 0.3
    for k in (1, 7, 50, 500):
        expected = [i for i in best_first(scores) if eligible[i]][:k]
        assert top_k(scores, k, eligible).tolist() == expected
    assert top_k(scores, 0).tolist() == []


def test_rounded_keeps_infinities():
    assert rounded([-np.inf, 1.23456789]).tolist() == [-np.inf, 1.234568]


def test_textrank_breaks_exact_ties_by_position_whatever_the_noise(monkeypatch):
    # Two sentences symmetric in the similarity graph have equal PageRank in exact
    # arithmetic; simulate another machine by adding noise to every matrix product.
    text = "甲乙丙丁。丙丁戊己。戊己甲乙。庚辛壬癸。"
    reference = textrank_summary(text, max_sentences=1)
    rng = np.random.default_rng(0)
    real_matmul = np.ndarray.__matmul__

    class Noisy(np.ndarray):
        def __matmul__(self, other):
            out = real_matmul(np.asarray(self), np.asarray(other))
            return out + rng.normal(0, NOISE, np.shape(out))

    real_zeros = np.zeros
    monkeypatch.setattr(np, "zeros", lambda *a, **k: real_zeros(*a, **k).view(Noisy))
    noisy = {textrank_summary(text, max_sentences=1) for _ in range(20)}
    assert noisy == {reference} and reference == "甲乙丙丁。"  # the first of three equals


def test_retriever_rerankers_and_fusion_ignore_noise_below_the_rounding_step():
    texts = ["长城在北京。", "故宫在北京。", "长城很长。", "西湖在杭州。"] * 3
    doc = Document(texts=texts)
    rng = np.random.default_rng(1)

    @register_similarity(mode="text", batch=True, name="noisy_overlap")
    def noisy_overlap(query, nodes):
        exact = np.array([len(set(query) & set(n.text)) / len(set(query)) for n in nodes])
        return exact + rng.normal(0, NOISE, len(nodes))

    try:
        runs = {tuple(n.uid for n in Retriever(doc, "root", "noisy_overlap", topk=6)("北京长城"))
                for _ in range(20)}
        assert len(runs) == 1  # the same order every time: ties broken by document order
        nodes = Retriever(doc, "root", "noisy_overlap", topk=12)("北京长城")
        rerank = Reranker("ModuleReranker", model=lambda q, t: rng.normal(0, NOISE, len(t)))
        assert {tuple(n.uid for n in rerank("北京", nodes)) for _ in range(20)} == \
            {tuple(n.uid for n in nodes)}  # all equal: input order kept
    finally:
        SIMILARITIES.pop("noisy_overlap")


def test_fusion_and_answers_break_ties_by_discovery_order():
    a, b, c = (DocNode(t, uid=t) for t in "abc")
    fused = reciprocal_rank_fusion([[a, b], [b, a], [c]])
    assert [n.uid for n in fused] == ["a", "b", "c"]  # a and b tie: a was seen first
    assert extractive_answer("长城", ["长城在北京。长城很长。"]) == "长城在北京。"


def test_one_score_rounds_exactly_like_an_array_of_them():
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.normal(0, 30, 5000), rng.integers(-10**6, 10**6, 500) / 10**6
                             + 5e-7, [np.inf, -np.inf, 0.0, -0.0]])
    assert [round_score(v) for v in values] == rounded(values).tolist()
