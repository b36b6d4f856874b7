import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.lab.data import vague_queries as vq
from course_lib.lab.data.datasets import Question, SquadSet, build_knowledge_base
from course_lib.lab.measure.evaluation import evaluate
from course_lib.lab.measure.significance import compare_pair

ROOT = Path(__file__).resolve().parents[3]
LONG = "2008年北京奥运会的游泳比赛中菲尔普斯获得了多少枚金牌并打破了几项世界纪录？"
TOPICS = ["长城", "故宫", "西湖", "黄山", "泰山", "丽江", "敦煌", "桂林"]


def small_kb():
    """One paragraph per topic; its question names the topic (the entity, in that
    paragraph only) and three words that every paragraph shares."""
    paragraphs, questions = [], []
    for i, topic in enumerate(TOPICS):
        text = f"{topic * 10}的风景位于中国第{i + 1}号地区，游客很多。"
        paragraphs.append((f"P{i}", text))
        answer = f"第{i + 1}号地区"
        questions.append(Question(f"Q{i}", f"{topic}的风景位于哪个地区？", [answer],
                                  [text.index(answer)], f"P{i}", text))
    return build_knowledge_base(SquadSet(paragraphs, questions), docs_per_file=4)


def test_content_words_drop_question_words_particles_single_characters_and_sub_words():
    words = vq.content_words("尤金袋鼠最初是何时被发现的？")
    assert words == ["尤金", "袋鼠", "最初", "发现"]
    # search mode emits 一年 inside 哪一年: the longer word wins, then it is a question word
    assert vq.content_words("他哪一年毕业？") == ["毕业"]
    assert vq.content_words("奥运会在哪里举行？") == ["奥运会", "举行"]  # not 奥运 as well
    assert vq.content_words("2008年的奥运会") == ["2008", "奥运会"]  # digits are kept
    assert not set(vq.content_words(LONG)) & vq.STOP_WORDS


def test_named_entity_is_the_rarest_word_with_its_ties_never_an_unknown_word():
    assert vq.named_entity(["a", "b", "c"], {"a": 3, "b": 1, "c": 2}) == ("b",)
    assert vq.named_entity(["a", "b", "c"], {"a": 1, "b": 1, "c": 2}) == ("a", "b")
    # a word found in no paragraph (0 or missing) is not the entity: BM25 ignores it anyway
    assert vq.named_entity(["a", "b", "c"], {"a": 0, "c": 5}) == ("c",)
    assert vq.named_entity(["a"], {}) == ()


def test_paragraph_frequencies_count_paragraphs_not_occurrences():
    frequencies = vq.paragraph_frequencies(["长城长城长城", "长城和故宫"])
    assert frequencies["长城"] == 2 and frequencies["故宫"] == 1


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_make_vague_is_deterministic_for_a_seed(seed):
    first = [vq.make_vague(LONG, seed=seed, drop_entity=False) for _ in range(3)]
    assert len(set(first)) == 1


def test_seeds_choose_different_words_and_words_keep_their_order():
    words = vq.content_words(LONG)
    made = {vq.make_vague(LONG, seed=seed, drop_entity=False) for seed in range(20)}
    assert len(made) > 1  # the seed matters
    for text in made:
        kept = text.split()
        assert len(kept) == 2 and set(kept) <= set(words)
        assert [words.index(w) for w in kept] == sorted(words.index(w) for w in kept)


def test_the_same_query_in_another_process_whatever_its_hash_seed():
    code = ("from course_lib.lab.data.vague_queries import make_vague; "
            f"print(make_vague({LONG!r}, seed=3, keep=3, drop_entity=False))")
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True, check=True)
        outputs.add(done.stdout.strip())
    assert outputs == {vq.make_vague(LONG, seed=3, keep=3, drop_entity=False)}


def test_the_entity_is_dropped():
    # jieba cuts 菲尔普斯 into 菲尔 | 普斯: both are found in one paragraph, so both go
    frequencies = {"菲尔": 1, "普斯": 1, "游泳": 4, "比赛": 9, "金牌": 6, "世界纪录": 3}
    for seed in range(10):
        made = vq.vague_query(LONG, seed=seed, keep=20, frequencies=frequencies)
        assert made.entity == ("菲尔", "普斯") and made.fallback is None
        assert made.text.split() == [w for w in vq.content_words(LONG) if w not in made.entity]
        shorter = vq.vague_query(LONG, seed=seed, frequencies=frequencies)
        assert not {"菲尔", "普斯"} & set(shorter.text.split())


def test_never_empty_with_the_fallbacks_documented():
    # no content word at all: the question itself
    made = vq.vague_query("是什么？", drop_entity=False)
    assert made.text == "是什么？" and made.fallback == "question kept"
    # every word is as rare as the rarest: they all are the entity, so they are kept
    made = vq.vague_query("尤金袋鼠在哪里？", frequencies={"尤金": 1, "袋鼠": 1})
    assert made.entity == ("尤金", "袋鼠") and made.fallback == "entity kept"
    assert made.text == "尤金 袋鼠"


def test_bad_arguments():
    with pytest.raises(ValueError, match="needs frequencies"):
        vq.make_vague(LONG)  # drop_entity needs to know the knowledge base
    with pytest.raises(ValueError, match="keep"):
        vq.make_vague(LONG, keep=0, drop_entity=False)
    with pytest.raises(ValueError, match="seed"):
        vq.make_vague(LONG, seed=1.5, drop_entity=False)
    with pytest.raises(ValueError):
        vq.make_vague("   ", drop_entity=False)
    with pytest.raises(TypeError):
        vq.make_vague(None, drop_entity=False)


def test_vague_questions_copy_the_knowledge_base_and_keep_the_gold():
    kb = small_kb()
    before = [q.question for q in kb.questions]
    vague = vq.vague_questions(kb, seed=0)
    assert [q.question for q in kb.questions] == before  # kb is not changed
    assert vague is not kb and vague.questions[0] is not kb.questions[0]
    assert [q.id for q in vague.questions] == [q.id for q in kb.questions]
    assert [q.paragraph for q in vague.questions] == [q.paragraph for q in kb.questions]
    assert vague.files == kb.files and vague.paragraphs == kb.paragraphs
    for original, made in zip(kb.questions, vague.questions, strict=True):
        topic = original.question.split("的")[0]
        assert topic not in made.question  # the topic is in one paragraph: the entity
        assert len(made.question.split()) == 2 and set(made.question.split()) <= {
            "风景", "位于", "地区"}
    assert vq.vague_questions(kb, seed=0) == vague  # deterministic


def test_vague_questions_evaluate_and_pair_with_the_originals():
    kb = small_kb()
    vague = vq.vague_questions(kb)
    original, made = evaluate(kb, "bm25-paragraph"), evaluate(vague, "bm25-paragraph")
    assert original["recall@1"] == 1.0
    assert made["recall@1"] < original["recall@1"]  # without the topic, every paragraph ties
    assert made["per_question"]["id"] == original["per_question"]["id"]
    row = compare_pair(made["per_question"]["recall@1"], original["per_question"]["recall@1"])
    assert row["won"] == 0 and row["lost"] > 0


def test_without_dropping_the_entity_the_topic_stays():
    kb = small_kb()
    kept = vq.vague_questions(kb, drop_entity=False, keep=4)
    assert all(q.question.split()[0] == TOPICS[i] for i, q in enumerate(kept.questions))
