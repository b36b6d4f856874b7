"""Tests of course_lib.word_tags: tagged_words (jieba's part-of-speech tags, Traditional text
tagged through its Simplified form and cut at the same places), named_entities (titles in
《》 first, then persons, places, organisations, Latin-script words) and function_words."""

import re

import pytest

from course_lib.scripts import to_simplified
from course_lib.word_tags import NAME_TAGS, function_words, named_entities, tagged_words

TRADITIONAL = ["臺灣大學圖書館的藏書數量為全臺之冠", "長城東起山海關西至嘉峪關",
               "資訊產業在臺灣發展很快", "陸羽寫了茶經", "為什麼長城在北京"]


# ------------------------------------------------------------------ tagged_words
def test_tagged_words_drop_punctuation_and_spaces():
    assert tagged_words("长城，在北京！") == tagged_words("长城在北京")
    assert all(re.fullmatch(r"\w+", word) for word, _ in tagged_words("长城 东起、山海关。"))
    assert tagged_words("。，！？ ") == []


@pytest.mark.parametrize("text", TRADITIONAL)
def test_traditional_words_concatenate_back_to_the_original_text(text):
    words = [word for word, _ in tagged_words(text)]
    assert "".join(words) == text


@pytest.mark.parametrize("text", TRADITIONAL)
def test_traditional_text_is_cut_and_tagged_as_its_simplified_form(text):
    traditional, simplified = tagged_words(text), tagged_words(to_simplified(text))
    assert [to_simplified(word) for word, _ in traditional] == [word for word, _ in simplified]
    assert [flag for _, flag in traditional] == [flag for _, flag in simplified]


def test_traditional_text_with_punctuation_keeps_its_words_in_order():
    text = "長城東起山海關，西至嘉峪關。"
    words = [word for word, _ in tagged_words(text)]
    assert "".join(words) == "長城東起山海關西至嘉峪關"
    assert {"長城", "山海關", "嘉峪關"} <= set(words)


# ------------------------------------------------------------------ named_entities
def test_a_title_comes_first_even_when_it_is_written_last():
    assert named_entities("陆羽写了《茶经》") == [("茶经", "title"), ("陆羽", "person")]


def test_several_titles_keep_their_order():
    assert named_entities("《红楼梦》《西游记》的作者") == \
        [("红楼梦", "title"), ("西游记", "title")]


def test_a_name_inside_a_title_is_not_repeated():
    assert named_entities("《北京故事》讲的是北京吗") == [("北京故事", "title")]


def test_kinds_of_names():
    assert named_entities("李白和杜甫是朋友") == [("李白", "person"), ("杜甫", "person")]
    assert named_entities("苏轼去过杭州吗") == [("苏轼", "person"), ("杭州", "place")]
    assert named_entities("北京大学在哪") == [("北京大学", "organisation")]
    assert named_entities("Python和NBA") == [("Python", "latin"), ("NBA", "latin")]
    kinds = {kind for text in ("李白去杭州", "北京大学", "NBA") for _, kind in named_entities(text)}
    assert kinds <= set(NAME_TAGS.values())


def test_each_name_once_in_order_of_appearance():
    assert named_entities("北京和北京") == [("北京", "place")]
    assert named_entities("杭州还是北京，北京还是杭州") == [("杭州", "place"), ("北京", "place")]


def test_one_character_names_are_not_names():
    assert ("王", "nr") in tagged_words("王说他去了京")  # jieba tags it a person...
    assert named_entities("王说他去了京") == []  # ...but one character is too short


def test_traditional_names_come_out_in_traditional_characters():
    assert named_entities("陸羽是哪裡人？") == [("陸羽", "person")]
    assert named_entities("這本書在臺北出版") == [("臺北", "place")]


def test_a_sentence_without_names_has_none():
    assert named_entities("今天天气很好") == []
    assert named_entities("") == []


def test_a_name_inside_an_earlier_name_is_left_out():
    assert named_entities("北京大学在北京") == [("北京大学", "organisation")]


# ------------------------------------------------------------------ function_words
def test_function_words_keep_particles_prepositions_and_question_words():
    words = function_words("陆羽是哪里人？")
    assert {"是", "哪里"} <= words
    assert not {"陆羽", "人"} & words


def test_function_words_drop_content_words():
    words = function_words("长城东起山海关，西至嘉峪关")
    assert not {"长城", "山海关", "嘉峪关"} & words
    assert "至" in words


def test_one_character_verbs_are_function_words_longer_ones_are_not():
    words = function_words("王说他出版了书")
    assert {"说", "他", "了"} <= words
    assert "出版" not in words


def test_function_words_are_lower_cased_and_latin_words_are_content():
    assert function_words("What是NBA吗") >= {"是", "吗"}
    assert not {"nba", "NBA"} & function_words("What是NBA吗")
    assert all(word == word.lower() for word in function_words("What is 长城 the 吗"))


def test_function_words_of_traditional_text():
    assert {"在", "為什麼"} <= function_words("為什麼長城在北京")
    assert not {"長城", "北京"} & function_words("為什麼長城在北京")
