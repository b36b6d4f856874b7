import pytest

from course_lib.llm_parsing import (
    clean_reply,
    parse_judgement,
    parse_keywords,
    parse_numbered_list,
    parse_qa_pairs,
    strip_preamble,
)


@pytest.mark.parametrize("text", [
    "Q: 长城东起哪里？\nA: 山海关\nQ: 西至哪里？\nA: 嘉峪关",
    "Q：长城东起哪里？\nA：山海关\nQ：西至哪里？\nA：嘉峪关",          # full-width colons
    "以下是根据文字生成的问答：\n\nQ: 长城东起哪里？\nA: 山海关\n\nQ: 西至哪里？\nA: 嘉峪关",
    "1. 问：长城东起哪里？ 答：山海关\n2. 问：西至哪里？ 答：嘉峪关",   # numbered, one line
    "问题1：长城东起哪里？\n答案1：山海关\n问题2：西至哪里？\n答案2：嘉峪关",
])
def test_qa_pairs_in_many_spellings(text):
    assert parse_qa_pairs(text) == [("长城东起哪里？", "山海关"), ("西至哪里？", "嘉峪关")]


def test_qa_pairs_drop_incomplete_ones():
    assert parse_qa_pairs("Q: 只有问题？") == []
    assert parse_qa_pairs("随便说点什么") == []


@pytest.mark.parametrize("text,expected", [
    ("长城,山海关,嘉峪关", ["长城", "山海关", "嘉峪关"]),
    ("长城，山海关，嘉峪关。", ["长城", "山海关", "嘉峪关"]),
    ("关键词：长城、山海关；嘉峪关", ["长城", "山海关", "嘉峪关"]),
    ("1. 长城\n2. 山海关\n- 嘉峪关\n- 长城", ["长城", "山海关", "嘉峪关"]),
])
def test_keywords_in_many_separators(text, expected):
    assert parse_keywords(text) == expected


def test_numbered_lists_and_preambles():
    assert parse_numbered_list("Sure, here are the questions:\n1) A?\n2) B?") == ["A?", "B?"]
    assert parse_numbered_list("一、甲\n二、乙\n三、丙\n四、丁", limit=3) == ["甲", "乙", "丙"]
    assert strip_preamble("摘要：长城很长。") == "长城很长。"
    assert clean_reply("```\n代码\n```") == "代码"
    assert len(clean_reply("x" * 50, limit=10)) == 10
    assert clean_reply(None) == ""


@pytest.mark.parametrize("text,expected", [
    ("True", True), ("true.", True), ("是的", True), ("Yes, it does.", True),
    ("False", False), ("false", False), ("否", False), ("不能", False), ("No.", False),
    ("Not really", False), ("", None), ("也许吧", None),
])
def test_judgements_are_read_not_cast(text, expected):
    assert parse_judgement(text) is expected
    if text == "False":
        assert bool(text) is True  # the chapter's bug, for the record
