"""Tests of course_lib.offline_llm, the classical stand-ins behind the offline LLM, on tiny
inputs: TextRank summaries, TF-IDF keywords, question words, QA pairs, keyword expansion,
sub-question splitting, term coverage, judging, support and extractive answers.
(tests/test_llm.py tests the OfflineLLM object built on them.)"""

import pytest

from course_lib.offline_llm import (
    QUESTION_WORDS,
    content_terms,
    expand_with_keywords,
    extractive_answer,
    judge_by_overlap,
    question_qa_pairs,
    split_sub_questions,
    statement_supported,
    term_coverage,
    textrank_summary,
    tfidf_keywords,
)

WALL = "茶很好。长城在北京，长城东起山海关。长城西至嘉峪关，长城很长。北京有长城。"


# ------------------------------------------------------------------ summary
def test_a_text_with_few_sentences_is_its_own_summary():
    assert textrank_summary("长城很长。北京有故宫。", max_sentences=2) == "长城很长。北京有故宫。"
    assert textrank_summary("  只有一句  ", max_sentences=2) == "只有一句"
    assert textrank_summary("", max_sentences=2) == ""


def test_the_summary_keeps_the_original_order_not_the_rank():
    best = textrank_summary(WALL, max_sentences=1)
    two = textrank_summary(WALL, max_sentences=2)
    assert best == "北京有长城。"  # the most central sentence is the last one
    assert two == "长城在北京，长城东起山海关。北京有长城。"  # ranked second, written first


def test_a_sentence_sharing_nothing_with_the_others_is_left_out():
    for n in (1, 2, 3):
        assert "茶很好" not in textrank_summary(WALL, max_sentences=n)


def test_max_chars_cuts_the_summary():
    summary = textrank_summary(WALL, max_sentences=2)
    assert textrank_summary(WALL, max_sentences=2, max_chars=5) == summary[:5]


# ------------------------------------------------------------------ keywords and terms
def test_tfidf_keywords_respect_the_limit_and_skip_stop_words():
    text = "长城东起山海关，西至嘉峪关。长城是世界文化遗产。"
    assert len(tfidf_keywords(text, limit=3)) == 3
    assert tfidf_keywords(text, limit=3) == tfidf_keywords(text, limit=5)[:3]
    assert not {"是", "的", "，"} & set(tfidf_keywords(text, limit=20))


def test_content_terms_drop_question_words_and_particles():
    assert content_terms("长城在哪里？") == ["长城"]
    assert content_terms("What is the capital of China?") == ["capital", "china"]
    assert not set(content_terms("谁是长城的设计者？")) & QUESTION_WORDS


def test_term_coverage_is_the_share_of_content_terms_in_the_text():
    assert term_coverage("长城在哪里？", "万里长城") == 1.0  # found inside a longer word
    assert term_coverage("长城东起哪里？", "长城很长") == 0.5
    assert term_coverage("是哪里？", "任何文本") == 0.0  # no content terms: 0, not an error


# ------------------------------------------------------------------ QA pairs
def test_each_answer_is_asked_about_once():
    pairs = question_qa_pairs("长城东起山海关。长城东起山海关，很长。")
    answers = [answer for _, answer in pairs]
    assert answers.count("山海关") == 1 and len(answers) == len(set(answers))


def test_per_sentence_asks_about_several_fillers_of_one_sentence():
    assert question_qa_pairs("长城东起山海关，西至嘉峪关。", per_sentence=2) == [
        ("长城东起哪里，西至嘉峪关？", "山海关"), ("长城东起山海关，西至哪里？", "嘉峪关")]


def test_limit_stops_after_enough_pairs():
    text = "长城东起山海关。故宫在北京。颐和园修建于1750年。"
    assert len(question_qa_pairs(text)) == 3
    assert question_qa_pairs(text, limit=2) == question_qa_pairs(text)[:2]


def test_an_english_year_is_asked_with_when():
    assert question_qa_pairs("The wall was finished in 1644.") == \
        [("The wall was finished in when?", "1644")]


# ------------------------------------------------------------------ rewriting
def test_expansion_without_context_is_the_query():
    assert expand_with_keywords("长城在哪", []) == "长城在哪"
    assert expand_with_keywords("长城在哪", (), limit=5) == "长城在哪"


def test_expansion_adds_keywords_the_query_lacks_up_to_the_limit():
    context = ["长城东起山海关，西至嘉峪关。嘉峪关是关口。"]
    assert expand_with_keywords("长城", context, limit=1) == "长城 嘉峪关"
    expanded = expand_with_keywords("长城 嘉峪关", context, limit=2)
    assert expanded.startswith("长城 嘉峪关 ")
    added = expanded.split()[2:]
    assert len(added) == 2 and not {"长城", "嘉峪关"} & set(added)


def test_several_questions_are_split_at_their_question_marks_up_to_the_limit():
    query = "长城在哪里？故宫在哪里？颐和园在哪里？天坛在哪里？"
    assert split_sub_questions(query) == ["长城在哪里？", "故宫在哪里？", "颐和园在哪里？"]
    assert split_sub_questions(query, limit=2) == ["长城在哪里？", "故宫在哪里？"]


def test_an_enumerated_subject_becomes_one_question_per_item():
    assert split_sub_questions("长城与故宫是什么时候建的？") == \
        ["长城是什么时候建的？", "故宫是什么时候建的？"]
    assert split_sub_questions("长城和故宫分别在哪里？", limit=1) == ["长城在哪里？"]


def test_a_question_without_enumeration_comes_back_alone_and_stripped():
    assert split_sub_questions("  长城在哪里？  ") == ["长城在哪里？"]
    assert split_sub_questions("茶和咖啡") == ["茶和咖啡"]  # no verb after the items


# ------------------------------------------------------------------ judging and answering
def test_judge_needs_a_non_blank_answer_covering_the_threshold():
    assert judge_by_overlap("长城东起哪里？", "   ") is False
    assert judge_by_overlap("长城东起哪里？", "长城", threshold=0.5) is True  # 1 of 2 terms
    assert judge_by_overlap("长城东起哪里？", "长城", threshold=0.6) is False
    assert judge_by_overlap("长城东起哪里？", "山海关") is False


def test_support_must_come_from_one_sentence():
    statement = "长城东起山海关"
    # 4 of its 6 bigrams in the second sentence: below 0.7, and the sentences do not add up
    assert statement_supported(statement, ["长城很长。东起山海关。"]) is False
    assert statement_supported(statement, ["长城很长。东起山海关。"], threshold=0.6) is True
    assert statement_supported(statement, ["长城很长。", "长城东起山海关，西至嘉峪关。"]) is True


def test_nothing_to_support_or_nothing_to_support_it_is_not_support():
    assert statement_supported("长城东起山海关", []) is False
    assert statement_supported("", ["长城东起山海关。"]) is False
    assert statement_supported("长", ["长城东起山海关。"]) is False  # no bigram at all


def test_the_answer_is_the_sentence_covering_the_question_best():
    contexts = ["长城东起山海关。", "长城西至嘉峪关。"]
    assert extractive_answer("长城西至哪里", contexts) == "长城西至嘉峪关。"
    assert extractive_answer("长城东起哪里", contexts) == "长城东起山海关。"
    assert extractive_answer("故宫", contexts) == "长城东起山海关。"  # a tie: the first


@pytest.mark.parametrize("contexts", [[], [""], ["问：长城在哪"], ["长城在哪里？"]])
def test_questions_are_not_answers_and_no_sentence_gives_an_empty_answer(contexts):
    assert extractive_answer("长城在哪里", contexts) == ""


def test_a_question_in_the_context_is_skipped_for_the_statement_after_it():
    context = ["长城东起哪里？长城东起山海关。"]
    assert extractive_answer("长城东起哪里", context) == "长城东起山海关。"


def test_question_qa_pairs_never_exceeds_its_limit():
    text = "长城东起山海关，西至嘉峪关，全长21196千米。现存的城墙修建于1368年。"
    assert len(question_qa_pairs(text, per_sentence=3, limit=1)) == 1
    assert len(question_qa_pairs(text, per_sentence=3, limit=2)) == 2


@pytest.mark.parametrize(("query", "expected"), [
    ("颐和园和故宫分别在哪里？", ["颐和园在哪里？", "故宫在哪里？"]),   # 和 inside a name stays
    ("颐和园在哪里？", ["颐和园在哪里？"]),
    ("Alice and Bob were born where?", ["Alice were born where?", "Bob were born where?"]),
    ("北京、上海以及广州分别有多少人？", ["北京有多少人？", "上海有多少人？", "广州有多少人？"]),
])
def test_split_sub_questions_cuts_only_at_separator_words(query, expected):
    assert split_sub_questions(query) == expected
