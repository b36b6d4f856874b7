"""Tests of course_lib.scripts: OpenCC conversion between Traditional and Simplified Chinese
(offline), its errors, what it does not translate, and script_normalised tokenisers — as
registered in course_lib.similarity — that let a question in one script find a text in the
other."""

import pytest

from course_lib.node import DocNode
from course_lib.scripts import (
    CONVERSIONS,
    convert,
    script_normalised,
    to_simplified,
    to_traditional,
)
from course_lib.similarity import get_similarity
from course_lib.text_tokens import char_ngrams, chinese_tokens

TRADITIONAL = "臺灣的資訊產業"
SIMPLIFIED = "台湾的资讯产业"


def test_conversion_in_both_directions():
    assert to_simplified(TRADITIONAL) == SIMPLIFIED
    assert to_traditional("长城东起山海关") == "長城東起山海關"
    assert convert("長城", "t2s") == to_simplified("長城") == "长城"
    assert convert("长城", "s2t") == to_traditional("长城") == "長城"


def test_text_without_chinese_or_already_in_the_target_script_is_unchanged():
    for text in ("", "NBA 2008, 3.14 km!", "长城在北京。"):
        assert to_simplified(text) == text
    for text in ("", "NBA 2008", "長城在北京。"):
        assert to_traditional(text) == text


def test_a_conversion_keeps_the_length_of_the_text():
    for text in (TRADITIONAL, "長城東起山海關，西至嘉峪關。", "資料庫與軟體"):
        assert len(to_simplified(text)) == len(text)


def test_characters_are_converted_but_not_the_vocabulary():
    # the documented limitation: plain t2s, not tw2sp
    assert to_simplified("資訊") == "资讯" and to_simplified("資訊") != "信息"
    assert to_simplified("軟體") == "软体" and to_simplified("軟體") != "软件"


def test_a_bad_config_or_a_non_text_is_refused():
    with pytest.raises(ValueError, match=r"config must be one of \['s2t', 't2s'\], got 'tw2s'"):
        convert("長城", "tw2s")
    assert set(CONVERSIONS) == {"s2t", "t2s"}
    for value in (b"\xe9\x95\xb7", None, ["長城"]):
        with pytest.raises(TypeError, match=f"text must be a str, got {type(value).__name__}"):
            convert(value, "t2s")
        with pytest.raises(TypeError, match="text must be a str"):
            to_simplified(value)


def test_a_normalised_tokeniser_gives_the_same_tokens_in_either_script():
    tokens = script_normalised(chinese_tokens)
    assert tokens(TRADITIONAL) == tokens(SIMPLIFIED) == chinese_tokens(SIMPLIFIED)
    # without normalising, the two scripts share no word at all
    assert not set(chinese_tokens(TRADITIONAL)) & set(chinese_tokens(SIMPLIFIED))
    chars = script_normalised(char_ngrams)
    assert chars("學習") == chars("学习") == ["学", "习", "学习"]


def test_a_normalised_tokeniser_is_named_after_the_one_it_wraps():
    assert script_normalised(chinese_tokens).__name__ == "script_normalised(chinese_tokens)"
    assert "Simplified" in script_normalised(chinese_tokens).__doc__
    assert script_normalised(lambda text: [text])("臺") == ["台"]


def test_a_traditional_query_finds_the_tokens_of_a_simplified_text():
    tokens = script_normalised(chinese_tokens)
    query = "臺灣的資訊產業在哪裡發展"
    text = "台湾的资讯产业发展很快。"
    shared = set(tokens(query)) & set(tokens(text))
    assert {"台湾", "资讯", "产业", "发展"} <= shared


@pytest.mark.parametrize("name", ["bm25_chinese_norm", "bm25_char_norm"])
def test_the_registered_normalised_bm25_matches_across_scripts(name):
    nodes = [DocNode("北京有故宫。", uid="a"), DocNode("台湾的资讯产业发展很快。", uid="b"),
             DocNode("长城很长。", uid="c")]
    normalised = get_similarity(name)
    scores = normalised.scores("臺灣的資訊產業", nodes)
    assert scores[1] > 0 and scores[1] == max(scores)
    assert scores[0] == scores[2] == 0.0
    # the same query in Simplified scores the same
    assert list(normalised.scores(SIMPLIFIED, nodes)) == list(scores)


def test_the_plain_chinese_bm25_misses_a_traditional_query():
    nodes = [DocNode("台湾的资讯产业发展很快。", uid="b"), DocNode("长城很长。", uid="c")]
    assert list(get_similarity("bm25_chinese").scores("臺灣資訊產業", nodes)) == [0.0, 0.0]
