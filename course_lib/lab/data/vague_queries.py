"""Vague questions made from specific ones, to test query rewriting where it is meant to help.

CMRC 2018's questions are long and copy their paragraph's words ("尤金袋鼠分布在哪些地区？"),
so BM25 finds the gold paragraph for almost all of them and a rewriter has nothing to
add. A user's query is often vaguer: a few words, and no name ("分布 地区"). This
module makes such queries from the labelled questions, so that a rewriter can be
measured on them with the same gold paragraphs.

How a question is made vague (:func:`vague_query`), step by step:

1. **Content words.** The course's tokeniser (:func:`course_lib.text_tokens.chinese_tokens`,
   jieba search mode) cuts the question; a word inside a longer word of the question is
   dropped (search mode also emits 奥运 inside 奥运会, 一年 inside 哪一年), then question
   words and particles (:data:`STOP_WORDS`) and single characters other than digits.
2. **The named entity.** The entity is the question's rarest content word — the one
   found in the fewest knowledge-base paragraphs — together with any word exactly as
   rare (jieba cuts 尤金袋鼠 into 尤金 | 袋鼠, both in one paragraph). Rarity rather than
   jieba's part-of-speech tags (nr/ns/nt/nz, person/place/organisation/other proper
   noun), because the tagger marks a proper noun in only about two thirds of the trial
   questions and tags 尤金 but not 袋鼠, while rarity needs no tagger and is measured on
   exactly the words BM25 matches (it is BM25's idf, in order). A word found in no
   paragraph is never the entity: BM25 ignores it anyway.
3. **Keep a few.** ``keep`` of the remaining content words are chosen at random,
   seeded by ``seed`` and the question's text (the same call gives the same query, in
   any process), and joined with spaces in their question order.

Never empty: when dropping the entity leaves no word, the words are chosen among the
entity's (``fallback="entity kept"``); when the question has no content word at all,
it is returned unchanged (``fallback="question kept"``).

>>> frequencies = {"尤金": 1, "袋鼠": 1, "分布": 9, "地区": 30}
>>> make_vague("尤金袋鼠分布在哪些地区？", frequencies=frequencies)
'分布 地区'
>>> make_vague("尤金袋鼠分布在哪些地区？", keep=3, drop_entity=False)  # no entity dropped
'尤金 袋鼠 地区'
"""

from __future__ import annotations

import copy
import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..._support.validation import check_int, validate_query
from ...offline_llm import QUESTION_WORDS
from ...text_tokens import chinese_tokens
from .datasets import KnowledgeBase

# Question words and particles: the offline stand-in's list plus the longer question
# phrases of CMRC 2018 (jieba keeps 哪一年, 什么样, 哪两个 … as one word).
STOP_WORDS = QUESTION_WORDS | frozenset(
    "何时 何地 何处 何人 何种 为何 哪儿 哪一年 哪位 哪家 哪国 哪种 哪所 哪部 哪次 哪天 "
    "哪两个 哪几个 哪几种 哪两种 两个 几个 几种 几年 第几 什么样 时候 怎么样 多久 多长 "
    "多大 多高 多远 多重 多深 几项 几次 几位 是否 是不是 有没有 哪一个 哪一种 "
    "哪些地方 哪个地方 什么地方".split())


@dataclass(frozen=True)
class VagueQuery:
    """One vague query and how it was made (:func:`vague_query`)."""

    question: str  # the original question
    text: str  # the vague query
    entity: tuple[str, ...]  # the words dropped as the named entity (empty if none)
    fallback: str | None  # None, "entity kept" or "question kept"


def content_words(question: str) -> list[str]:
    """The question's content words, in order, each once (step 1 of the module doc).

    >>> content_words("尤金袋鼠最初是何时被发现的？")
    ['尤金', '袋鼠', '最初', '发现']
    """
    tokens = list(dict.fromkeys(chinese_tokens(validate_query(question))))
    longest = [t for t in tokens if not any(t != other and t in other for other in tokens)]
    return [t for t in longest if t not in STOP_WORDS and (len(t) > 1 or t.isdigit())]


def named_entity(words: Iterable[str], frequencies: Mapping[str, int]) -> tuple[str, ...]:
    """The rarest of ``words`` — found in the fewest paragraphs, by ``frequencies``
    (word → number of paragraphs holding it) — with every word exactly as rare; words
    found in no paragraph are never chosen. Empty when no word is found anywhere.

    >>> named_entity(["尤金", "袋鼠", "分布"], {"尤金": 1, "袋鼠": 1, "分布": 9})
    ('尤金', '袋鼠')
    """
    found = [w for w in words if frequencies.get(w, 0) > 0]
    if not found:
        return ()
    rarest = min(frequencies[w] for w in found)
    return tuple(w for w in found if frequencies[w] == rarest)


def paragraph_frequencies(paragraphs: Iterable[str]) -> dict[str, int]:
    """How many of ``paragraphs`` hold each word (the course's tokeniser): the
    document frequency behind BM25's idf.

    >>> paragraph_frequencies(["长城在北京。", "故宫在北京。"])["北京"]
    2
    """
    counts: Counter[str] = Counter()
    for paragraph in paragraphs:
        counts.update(set(chinese_tokens(paragraph)))
    return dict(counts)


def vague_query(question: str, seed: int = 0, keep: int = 2, drop_entity: bool = True,
                frequencies: Mapping[str, int] | None = None) -> VagueQuery:
    """Make ``question`` vague (see the module doc): ``keep`` content words, chosen at
    random (seeded by ``seed`` and the question), without its named entity when
    ``drop_entity`` — which needs ``frequencies`` (:func:`paragraph_frequencies` of the
    knowledge base) to know which word is rarest.

    >>> q = vague_query("尤金袋鼠分布在哪些地区？", frequencies={"尤金": 1, "袋鼠": 1, "分布": 9})
    >>> q.text, q.entity, q.fallback
    ('分布 地区', ('尤金', '袋鼠'), None)
    """
    seed = check_int(seed, "seed")
    keep = check_int(keep, "keep", low=1)
    if drop_entity and frequencies is None:
        raise ValueError("drop_entity=True needs frequencies (word -> number of paragraphs "
                         "holding it) to find the rarest word: pass "
                         "frequencies=paragraph_frequencies(kb.paragraphs), or use "
                         "vague_questions(kb), or drop_entity=False")
    words = content_words(question)
    if not words:
        return VagueQuery(question, question, (), "question kept")
    entity = named_entity(words, frequencies) if drop_entity and frequencies else ()
    pool = [w for w in words if w not in entity] or words
    fallback = "entity kept" if entity and pool == words else None
    digest = hashlib.sha256(f"{seed}\x00{question}".encode()).digest()
    chosen = sorted(random.Random(digest).sample(range(len(pool)), min(keep, len(pool))))
    return VagueQuery(question, " ".join(pool[i] for i in chosen), entity, fallback)


def make_vague(question: str, seed: int = 0, keep: int = 2, drop_entity: bool = True,
               frequencies: Mapping[str, int] | None = None) -> str:
    """The text of :func:`vague_query` — a short query of ``keep`` content words.

    >>> make_vague("锣鼓经运用的程式是什么？", drop_entity=False, keep=3)
    '锣鼓 运用 程式'
    """
    return vague_query(question, seed, keep, drop_entity, frequencies).text


def vague_questions(kb: KnowledgeBase, seed: int = 0, keep: int = 2,
                    drop_entity: bool = True) -> KnowledgeBase:
    """A copy of ``kb`` whose questions are made vague (:func:`make_vague`, the entity
    judged by ``kb``'s own paragraphs); ids, answers and gold paragraphs are unchanged,
    in the same order, so :func:`course_lib.lab.measure.evaluation.evaluate` scores it and its
    per-question columns pair with those of the original questions. ``kb`` is not
    changed.

    >>> from course_lib.lab.data.datasets import load_cmrc2018_kb      # doctest: +SKIP
    >>> vague = vague_questions(load_cmrc2018_kb())           # doctest: +SKIP
    >>> vague.questions[4].question                           # doctest: +SKIP
    '分布 地区'
    """
    frequencies = paragraph_frequencies(kb.paragraphs) if drop_entity else None
    vague = copy.deepcopy(kb)
    for question in vague.questions:
        question.question = make_vague(question.question, seed, keep, drop_entity, frequencies)
    return vague
