"""The asked-for type reader: what a question asks for, and the fillers a sentence holds —
in both scripts, with its known misses (issue: saying no where the topic is present)."""

import pytest

from course_lib.answerability import AnswerabilityDetector
from course_lib.asked_type import KINDS, asked_for, fillers


@pytest.mark.parametrize(("question", "kind"), [
    ("阿森纳是在哪一年成立的？", "time"), ("阿森納是在哪一年成立的？", "time"),
    ("德國的第一枚郵票是何時發行的？", "time"), ("长城有多长？", "number"),
    ("阿森納總共贏得了幾次冠軍？", "number"), ("誰發明了電話？", "person"),
    ("清朝最后一位皇帝是哪一位？", "person"), ("故宫位于哪里？", "place"),
    ("恐龍為什麼滅絕？", "reason"), ("茶是什么？", None), ("哪一種晶體形式比較不穩定？", None),
])
def test_the_asked_for_type_is_read_the_same_in_both_scripts(question, kind):
    assert asked_for(question) == kind


@pytest.mark.parametrize(("kind", "sentence", "found"), [
    ("time", "阿森納於1886年成立。", ["1886年"]), ("time", "阿森纳于1886年成立。", ["1886年"]),
    ("time", "它建于十九世纪。", ["十九世纪"]), ("number", "長城長8851.8公里。", ["8851.8"]),
    ("number", "他有三个儿子。", ["三"]), ("person", "電話由貝爾發明。", ["贝尔"]),
    ("place", "故宫位于北京。", ["北京"]), ("reason", "由于撞击，恐龙灭绝。", ["由于"]),
    ("time", "阿森納在倫敦。", []), ("person", "它在北京。", []),
])
def test_fillers_of_each_type_in_hand_written_sentences(kind, sentence, found):
    assert fillers(kind, sentence) == found


def test_a_filler_the_question_already_names_does_not_count():
    assert fillers("time", "1890年至1893年在恩域塔球場。", "阿森納於1890年至1893年在哪？") == []


def test_known_misses_are_what_the_docstring_says():
    assert fillers("time", "西沙群島於清宣統二年劃入版圖。") == []  # a reign year, one numeral
    assert asked_for("阿森納的主場叫什麼？") is None  # a 什麼 question: no type read
    # Form, not meaning: any year satisfies 哪一年, the men's team's as well as the women's.
    assert fillers("time", "阿森納男隊成立於1886年。") == ["1886年"]


def test_a_bad_kind_is_named():
    with pytest.raises(ValueError, match="kind must be one of"):
        fillers("colour", "红色")
    assert set(KINDS) == {"time", "number", "person", "place", "reason"}


def test_the_evidence_binds_the_filler_to_the_question_names_in_either_script():
    reader = AnswerabilityDetector(["阿森納於1886年成立。", "倫敦是英國首都。"], embedder=None,
                                   signals=["anchored_coverage", "asked_type"])
    holds = reader.signals("阿森纳是在哪一年成立的？", ["阿森納於1886年成立。"])  # Simplified q.
    assert (holds.asked, holds.filler) == ("time", "1886年")  # in the candidate's script
    assert holds.values["asked_type"] > 0.5
    # The right topic, a year — but not in a sentence that names 阿森納: no binding.
    apart = reader.signals("阿森納是在哪一年成立的？", ["阿森納在倫敦。1886年倫敦下雪。"])
    assert apart.filler == "" and apart.values["asked_type"] == 0.0
