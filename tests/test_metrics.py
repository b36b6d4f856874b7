import pytest

from course_lib.metrics import (
    context_recall,
    context_relevance,
    context_sentences,
    edit_similarity,
    is_hit,
    mrr_at_k,
    recall_at_k,
)

GOLD = "2008年夏季奥运会在北京举行。开幕式在8月8日。"
OTHER = "长城东起山海关。西至嘉峪关。"


def test_chapter_style_worked_example():
    # One retrieved passage is the reference, one is unrelated: recall 1.0, relevance 0.5.
    retrieved = [GOLD, OTHER]
    assert context_recall(retrieved, [GOLD]) == 1.0
    assert context_relevance(retrieved, [GOLD]) == 0.5


def test_edit_similarity_and_hit_rule():
    assert edit_similarity("abc", "abc") == 1.0
    assert edit_similarity("abc", "xyz") == 0.0
    assert edit_similarity("abcd", "abce") == 0.75
    assert not is_hit("ab", "abcd")  # exactly 0.5 is not above the threshold
    assert is_hit("abc", "abcd")


def test_the_fast_hit_rule_agrees_with_edit_similarity_everywhere():
    # is_hit asks rapidfuzz to stop early past the cut-off; on every pair and threshold it
    # must say what "edit_similarity(a, b) > threshold" says, on and around the line too.
    import random

    rng = random.Random(0)
    alphabet = "长城东起山海关西至嘉峪关。"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
             for _ in range(300)]
    pairs = [(rng.choice(texts), rng.choice(texts)) for _ in range(3000)]
    pairs += [("ab", "abcd"), ("abc", "abcd"), ("", ""), ("a", "")]
    for threshold in (-0.5, 0.0, 0.3, 0.5, 0.7, 0.75, 1.0, 1.5, float("nan")):
        for a, b in pairs:
            assert is_hit(a, b, threshold) == (edit_similarity(a, b) > threshold), (a, b)


def test_a_unit_twice_as_long_as_the_reference_can_never_hit():
    long_unit = GOLD + OTHER * 2
    assert len(long_unit) > 2 * len(GOLD)
    assert GOLD in long_unit and not is_hit(long_unit, GOLD)


def test_binary_and_fractional_recall():
    assert context_recall(["abcd", "wxyz"], ["abce"], binary=False) == 0.5
    assert context_recall(["abcd", "wxyz"], ["abce", "wxy!"], binary=True) == 1.0
    assert context_recall(["abcd"], ["abce", "zzzz"]) == 0.5
    assert context_recall([], ["abce"]) == 0.0
    with pytest.raises(ValueError, match="references"):
        context_recall(["a"], [])


def test_context_relevance_counts_exact_sentences():
    assert context_relevance(["北京举行。无关的话。"], ["在北京举行。北京举行。"]) == 0.5
    assert context_relevance([], [GOLD]) == 0.0
    assert context_sentences(["a。。b。", " 。c"]) == ["a", "b", "c"]
    assert context_relevance(["A. B."], ["A. C."], splitter=".") == 0.5


def test_recall_and_mrr_at_k():
    hits = [False, False, True]
    assert [recall_at_k(hits, k) for k in (1, 2, 3, 10)] == [0.0, 0.0, 1.0, 1.0]
    assert mrr_at_k(hits, 3) == pytest.approx(1 / 3)
    assert mrr_at_k(hits, 2) == 0.0
    assert mrr_at_k([], 5) == 0.0
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(hits, 0)
