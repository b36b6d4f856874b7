"""Tests of course_lib.coverage: coverage() and covered_terms(), weighted and unweighted,
matching by tokens or by substrings, and the errors for a bad ``match`` or a non-text."""

from collections import Counter

import pytest

from course_lib.coverage import MATCHES, coverage, covered_terms


def test_unweighted_coverage_counts_each_term_once():
    assert coverage(["长城", "故宫", "天坛", "颐和园"], {"长城", "天坛", "北京"}) == 0.5
    assert coverage(["长城"], {"故宫"}) == 0.0
    assert coverage(iter(["长城", "故宫"]), {"长城", "故宫"}) == 1.0  # any iterable of terms


def test_weighted_coverage_is_the_share_of_the_weight_found():
    weights = {"嘉峪关": 9.0, "中国": 1.0}
    # the rare word found says more than the common one
    assert coverage(["嘉峪关", "中国"], {"嘉峪关"}, weights=weights) == 0.9
    assert coverage(["嘉峪关", "中国"], {"中国"}, weights=weights) == 0.1
    # unweighted, both count the same
    assert coverage(["嘉峪关", "中国"], {"嘉峪关"}) == coverage(["嘉峪关", "中国"], {"中国"}) == 0.5


def test_weights_of_words_that_are_not_terms_do_not_count():
    weights = {"a": 1.0, "b": 1.0, "unused": 100.0}
    assert coverage(["a", "b"], {"a", "unused"}, weights=weights) == 0.5


def test_zero_weight_gives_zero_not_a_division_error():
    assert coverage(["a", "b"], {"a", "b"}, weights={"a": 0.0, "b": 0.0}) == 0.0
    assert coverage([], {"a"}, weights={"a": 1.0}) == 0.0
    assert coverage([], "任何文本", match="substring") == 0.0


def test_weights_are_summed_in_the_order_the_terms_are_given():
    weights = {"a": 0.1, "b": 0.2, "c": 0.3}
    forward = coverage(["a", "b", "c"], {"a", "b"}, weights=weights)
    backward = coverage(["c", "b", "a"], {"a", "b"}, weights=weights)
    assert forward == (0.1 + 0.2) / (0.1 + 0.2 + 0.3)
    assert backward == (0.2 + 0.1) / (0.3 + 0.2 + 0.1)
    assert forward != backward  # float addition is not associative: the order shows


def test_token_match_needs_a_whole_token_and_takes_any_container():
    tokens = Counter(["万里长城", "东起", "山海关"])
    assert covered_terms(["长城", "山海关", "东起"], tokens) == ["山海关", "东起"]
    assert coverage(["长城", "山海关"], frozenset(tokens)) == 0.5
    assert coverage(["长城", "山海关"], tokens, match="token") == 0.5  # the default, named


def test_substring_match_finds_a_term_inside_a_longer_word():
    text = "万里长城东起山海关"
    assert covered_terms(["山海关", "故宫", "长城"], text, match="substring") == ["山海关", "长城"]
    assert coverage(["山海关", "故宫", "长城"], text, match="substring") == pytest.approx(2 / 3)
    # the same terms as tokens find nothing: the text is one string, not its words
    assert coverage(["长城"], {text}) == 0.0


def test_substring_match_ignores_the_case_of_the_text():
    assert covered_terms(["great", "wall", "tea"], "The GREAT Wall", match="substring") == \
        ["great", "wall"]
    assert coverage(["nba"], "NBA总决赛", match="substring") == 1.0


def test_substring_match_lower_cases_the_text_not_the_terms():
    # The terms come from the tokenisers, lower-case already; a capitalised term is not found.
    assert covered_terms(["wall"], "Great WALL", match="substring") == ["wall"]
    assert covered_terms(["Wall"], "Great Wall", match="substring") == []


def test_substring_match_combines_with_weights():
    weights = {"长城": 1.0, "山海关": 3.0}
    assert coverage(["长城", "山海关"], "山海关", weights=weights, match="substring") == 0.75


def test_covered_terms_keeps_the_order_given():
    assert covered_terms(["c", "a", "b"], {"a", "b", "c"}) == ["c", "a", "b"]
    assert covered_terms([], {"a"}) == []


@pytest.mark.parametrize("match", ["regex", "tokens", "", "Token"])
def test_an_unknown_match_is_a_value_error_naming_the_allowed_ones(match):
    for call in (lambda: coverage(["a"], {"a"}, match=match),
                 lambda: covered_terms(["a"], {"a"}, match=match)):
        with pytest.raises(ValueError) as caught:
            call()
        message = str(caught.value)
        assert all(repr(allowed) in message for allowed in MATCHES)
        assert repr(match) in message


@pytest.mark.parametrize("within", [{"万里长城"}, ["万里长城"], Counter(["万里长城"])])
def test_substring_match_on_tokens_instead_of_text_is_a_type_error(within):
    with pytest.raises(TypeError, match=f"needs the text, got {type(within).__name__}"):
        coverage(["长城"], within, match="substring")
    with pytest.raises(TypeError, match="match='substring'"):
        covered_terms(["长城"], within, match="substring")
