"""Classical stand-ins for the language-model tasks of the course.

No model answers here; each task is a small, well-known algorithm, so the notebooks run
offline and the results are reproducible. Everything they produce is labelled
``backend="offline"``. With a real LLM configured, the same calls go to the model.

* summary — TextRank over sentences (Mihalcea & Tarau, 2004): sentences vote for the
  sentences they resemble; the best ones, in their original order, are the summary.
* keywords — jieba's TF-IDF keyword extraction.
* QA pairs — a sentence turned into a question: a time, number, person or place in it
  (:func:`course_lib.asked_type.fillers`) is the answer, and the question word of its type
  takes its place ("长城东起山海关。" → "长城东起哪里？" / "山海关"); a sentence with none
  asks 什么 in place of its best keyword.
* rewrites — expansion with keywords of retrieved text (pseudo-relevance feedback);
  sub-questions by splitting enumerations ("长城和故宫在哪里" → two questions).
* judge and support — term overlap between question, answer and context.
* answer — the context sentence that covers the question's terms best (extractive).

>>> textrank_summary("长城很长。长城在北京。北京有故宫。", max_sentences=1)
'长城在北京。'
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Sequence
from typing import Any

import jieba
import numpy as np

from .asked_type import fillers
from .coverage import coverage
from .ranking import best_first
from .text_splitter import split_sentences  # its default rule is this module's
from .text_tokens import char_ngrams, chinese_tokens
from .word_tags import tagged_words

jieba.setLogLevel(logging.WARNING)
# Words that carry no content in a question: they should not count as evidence.
QUESTION_WORDS = frozenset(
    "什么 哪 哪里 哪个 哪些 哪一 哪年 多少 几 谁 怎么 怎样 如何 为什么 是否 "
    "吗 呢 的 了 是 在 有 和 与 "
    "what which who whom where when why how is are was were "
    "the a an of in on to do does did".split())


def content_terms(text: str) -> list[str]:
    """Words of ``text`` that carry content: question words and particles removed."""
    return [t for t in chinese_tokens(text) if t not in QUESTION_WORDS]


# ---------------------------------------------------------------- summary
def textrank_summary(text: str, max_sentences: int = 2, max_chars: int | None = None,
                     damping: float = 0.85) -> str:
    """The ``max_sentences`` most central sentences, in their original order.

    Two sentences are similar when they share character bigrams (normalised by length,
    as in the TextRank paper); PageRank on that graph gives each sentence a centrality.
    """
    sentences = split_sentences(text)
    if len(sentences) <= max_sentences:
        return "".join(sentences) if sentences else text.strip()
    grams = [set(char_ngrams(s, (2,))) for s in sentences]
    n = len(sentences)
    weights = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            shared = len(grams[i] & grams[j])
            if shared:
                norm = math.log(len(grams[i]) + 1) + math.log(len(grams[j]) + 1)
                weights[i, j] = weights[j, i] = shared / norm
    out_weight = weights.sum(axis=1, keepdims=True)
    transition = np.divide(weights, out_weight, out=np.full_like(weights, 1.0 / n),
                           where=out_weight > 0)
    rank = np.full(n, 1.0 / n)
    for _ in range(50):
        rank = (1 - damping) / n + damping * transition.T @ rank
    chosen = sorted(best_first(rank)[:max_sentences])  # symmetric sentences tie exactly
    summary = "".join(sentences[i] for i in chosen)
    return summary if max_chars is None else summary[:max_chars]


# ---------------------------------------------------------------- keywords
def tfidf_keywords(text: str, limit: int = 8) -> list[str]:
    """jieba's TF-IDF keywords (its built-in idf table and stop words).

    >>> tfidf_keywords("长城东起山海关，西至嘉峪关。长城是世界文化遗产。", limit=2)[0]
    '长城'
    """
    return list(_tfidf_keywords(text, limit))


@functools.lru_cache(maxsize=2048)
def _tfidf_keywords(text: str, limit: int) -> tuple[str, ...]:
    # Pseudo-relevance feedback asks for the same top paragraph's keywords again and again
    # (an evaluation of 1,000 questions meets ~250 paragraphs): jieba is the cost, so cache.
    return tuple(tfidf_table().extract_tags(text, topK=limit))


def tfidf_table() -> Any:
    """jieba's default TF-IDF extractor (its idf table, stop words and tokenizer), imported
    on first use: ``jieba.analyse`` loads its idf table and, through ``jieba.posseg``, the
    part-of-speech table at import — about 100 MB of memory that a process which never
    asks for keywords need not hold (:class:`course_lib.llm.OfflineLLM` loads it when
    created)."""
    import jieba.analyse

    return jieba.analyse.default_tfidf


def tfidf_keywords_of(texts: Sequence[str], limit: int = 8) -> list[str]:
    """``tfidf_keywords("\\n".join(texts), limit)``, from each text's cut, cached.

    Feedback from the top 3 passages joins a different three each time, so the joined
    text is never in a cache; but jieba cuts at every line break, so the joined text's
    words are the texts' words in order, and counting them text by text gives jieba's
    weights and order exactly (``tests/test_rewriting.py`` compares the two on CMRC).
    This follows ``jieba.analyse.TFIDF.extract_tags``: words of 2+ characters that are
    not stop words, term frequency × jieba's idf (its median for an unknown word),
    sorted by weight, ties in order of first appearance.

    >>> tfidf_keywords_of(["长城东起山海关。", "长城是世界文化遗产。"], limit=1)
    ['长城']
    """
    table = tfidf_table()
    freq: dict[str, float] = {}
    for text in texts:
        for word in _keyword_candidates(text):
            freq[word] = freq.get(word, 0.0) + 1.0
    total = sum(freq.values())
    for word in freq:
        freq[word] *= table.idf_freq.get(word, table.median_idf) / total
    return sorted(freq, key=freq.__getitem__, reverse=True)[:limit]


@functools.lru_cache(maxsize=4096)
def _keyword_candidates(text: str) -> tuple[str, ...]:
    table = tfidf_table()
    return tuple(w for w in table.tokenizer.cut(text)
                 if len(w.strip()) >= 2 and w.lower() not in table.stop_words)


# ---------------------------------------------------------------- QA pairs
# The question word that takes the place of an answer of each type, in Chinese and English.
_QUESTION_WORD = {"time": ("什么时候", "when"), "number": ("多少", "how many"),
                  "person": ("谁", "who"), "place": ("哪里", "where"), "what": ("什么", "what")}
_TIME_WORD = (("年代", "哪个年代"), ("世纪", "哪个世纪"), ("日", "哪一天"), ("月", "哪个月"),
              ("年", "哪一年"))
_DATE = re.compile(r"(?:\d{1,4}年)?\d{1,2}月\d{1,2}日|\d{1,4}年\d{1,2}月")  # one answer, not two


_NOT_ANSWERS = frozenset("its it this that these those they their there here".split())


def _question_word(kind: str, answer: str, chinese: bool) -> str:
    if kind == "time" and chinese:  # 1987年 → 哪一年, 8月8日 → 哪一天: the unit it ends in
        return next((word for unit, word in _TIME_WORD if answer.endswith(unit)), "什么时候")
    if kind == "number" and not chinese and re.fullmatch(r"1\d{3}|20\d{2}", answer):
        return "when"  # an English sentence's 1991 is a year
    return _QUESTION_WORD[kind][0 if chinese else 1]


def _as_question(sentence: str, answer: str, word: str, chinese: bool) -> str:
    """``sentence`` with ``answer`` replaced by ``word`` and a question mark at its end."""
    if not chinese and sentence.startswith(answer):
        word = word.capitalize()
    asked = re.sub(r"[。！!；;…．.\s]*$", "", sentence.replace(answer, word, 1))
    return asked + ("？" if chinese else "?")


def _answers(sentence: str) -> list[tuple[str, str]]:
    """(type, answer) candidates of a sentence, typed ones first: whole dates, then the
    fillers of :mod:`course_lib.asked_type` (numbers only with a digit: 一 in 一人 is no
    answer). A place or time that opens the sentence is its topic ("长城东起…"), not
    something to ask about ("哪里东起…"); a filler read in Simplified may be written
    otherwise here, and is then skipped."""
    found = [("time", match.group()) for match in _DATE.finditer(sentence)]
    for kind in ("time", "number", "person", "place"):
        found += [(kind, answer) for answer in fillers(kind, sentence)
                  if kind != "number" or re.search(r"\d", answer)]
    kept = [(kind, answer) for kind, answer in found
            if answer in sentence and (kind == "person" or not sentence.startswith(answer))
            and not any(answer != other and answer in other for _, other in found)]
    # a name that modifies the next noun (中国 in 中国古代) is asked about last
    words = tagged_words(sentence)
    modifiers = {word for (word, _), (_, following) in zip(words, words[1:], strict=False)
                 if following.startswith(("n", "t"))}
    return sorted(kept, key=lambda pair: pair[0] in ("person", "place") and pair[1] in modifiers)


def question_qa_pairs(text: str, per_sentence: int = 1, limit: int = 8
                      ) -> list[tuple[str, str]]:
    """Question-answer pairs written from ``text``'s sentences, one per sentence.

    A time, number, person or place in the sentence becomes the answer, and the question
    word of its type takes its place; a sentence without one asks 什么 (or "what") in place
    of its best TF-IDF keyword. Each answer is asked about once. Rules, not understanding:
    the questions are the sentence's own words, so they match it lexically far better than
    a user's question would, and a wrong cut by jieba makes a wrong question.

    >>> question_qa_pairs("长城东起山海关，西至嘉峪关。现存的城墙修建于1368年。")
    [('长城东起哪里，西至嘉峪关？', '山海关'), ('现存的城墙修建于哪一年？', '1368年')]
    """
    keywords = tfidf_keywords(text, limit=30)
    pairs: list[tuple[str, str]] = []
    used: set[str] = set()
    for sentence in split_sentences(text):
        chinese = bool(re.search(r"[\u4e00-\u9fff]", sentence))
        # 什么 takes the place of a thing: a noun (jieba's n… tags), not a verb ("修建")
        nouns = {word for word, tag in tagged_words(sentence) if tag.startswith(("n", "eng"))}
        plain = [("what", keyword) for keyword in keywords
                 if keyword in sentence and keyword in nouns and len(keyword) >= 2
                 and keyword.lower() not in _NOT_ANSWERS]
        made = 0
        for kind, answer in _answers(sentence) + plain:
            if answer in used:
                continue
            word = _question_word(kind, answer, chinese)
            pairs.append((_as_question(sentence, answer, word, chinese), answer))
            used.add(answer)  # each answer is asked about once
            made += 1
            if made == per_sentence or len(pairs) == limit:
                break
        if len(pairs) >= limit:
            break
    return pairs


# ---------------------------------------------------------------- rewriting
def expand_with_keywords(query: str, context: Sequence[str] = (), limit: int = 3) -> str:
    """Add up to ``limit`` keywords of ``context`` (e.g. the top retrieved passages) that
    the query lacks — classic pseudo-relevance feedback. Without context: the query."""
    if not context:
        return query
    have = set(chinese_tokens(query))
    extra = [k for k in tfidf_keywords_of(context, limit=20)
             if k.lower() not in have and k not in query][:limit]
    return query if not extra else f"{query} {' '.join(extra)}"


_ENUMERATION = re.compile(r"(?P<items>[^，,。？?]+?(?:(?:和|与|以及|及|、|跟|还有|and|, ?)"
                          r"[^，,。？?]+?)+)(?P<rest>(?:分别|各自|各|都|respectively)?"
                          r"(?:是|在|有|为|属于|叫|位于|出生|建于|is|are|was|were)[^。？?]*[？?]?)$")
_ITEM_SEPARATORS = {"和", "与", "以及", "及", "、", "跟", "还有", "and", ","}


def _enumerated_items(text: str) -> list[str]:
    """The items ``text`` enumerates, cut at separators that are words of their own: jieba's
    words, so 颐和园和故宫 is two items, not three (its first 和 is inside a name)."""
    items, current = [], ""
    for word in jieba.lcut(text):
        if word.strip() in _ITEM_SEPARATORS:
            items.append(current.strip())
            current = ""
        else:
            current += word
    return [item for item in [*items, current.strip()] if item]


def _joined(left: str, right: str) -> str:
    """``left + right``, with a space where two English words meet ("Alice" + "were …")."""
    english = left[-1:].isascii() and left[-1:].isalnum() and right[:1].isascii() \
        and right[:1].isalnum()
    return f"{left} {right}" if english else left + right


def split_sub_questions(query: str, limit: int = 3) -> list[str]:
    """Split a broad question into at most ``limit`` concrete ones.

    Several questions in one ("…？…？") are split at their question marks; an
    enumerated subject ("长城和故宫分别在哪里？") becomes one question per item.
    Otherwise the question is returned alone.

    >>> split_sub_questions("颐和园和故宫分别在哪里？")
    ['颐和园在哪里？', '故宫在哪里？']
    >>> split_sub_questions("Alice and Bob were born where?")
    ['Alice were born where?', 'Bob were born where?']
    >>> split_sub_questions("颐和园在哪里？")
    ['颐和园在哪里？']
    """
    parts = [p.strip() for p in re.split(r"(?<=[？?])", query) if p.strip()]
    if len(parts) > 1:
        return parts[:limit]
    match = _ENUMERATION.search(query.strip())
    if match:
        items = _enumerated_items(match["items"])
        rest = re.sub(r"^(?:分别|各自|各|都|respectively)", "", match["rest"])
        prefix = query.strip()[: match.start()]
        if 2 <= len(items):
            return [prefix + _joined(item, rest) for item in items][:limit]
    return [query.strip()]


# ---------------------------------------------------------------- judging and answering
def term_coverage(question: str, text: str) -> float:
    """Share of the question's content terms that occur in ``text`` (0 when it has none)."""
    return coverage(set(content_terms(question)), text, match="substring")


def _is_question(sentence: str) -> bool:
    return bool(re.match(r"^\s*(?:问|Q)\s*[:：]", sentence)) \
        or sentence.rstrip().endswith(("？", "?"))


def extractive_answer(question: str, contexts: Sequence[str]) -> str:
    """The context sentence covering the most of the question's terms (first on ties).

    Sentences that are themselves questions (e.g. of a QA pair) are not answers.
    """
    sentences = [s for c in contexts for s in split_sentences(c) if not _is_question(s)]
    if not sentences:
        return ""
    scores = [term_coverage(question, s) for s in sentences]
    return sentences[int(best_first(scores)[0])]


def judge_by_overlap(question: str, answer: str, threshold: float = 0.5) -> bool:
    """Does ``answer`` address ``question``? Yes when it is non-empty and covers at least
    ``threshold`` of the question's content terms."""
    return bool(answer.strip()) and term_coverage(question, answer) >= threshold


def statement_supported(statement: str, contexts: Sequence[str], threshold: float = 0.7) -> bool:
    """Is ``statement`` backed by the contexts? Yes when one context sentence contains at
    least ``threshold`` of the statement's character bigrams."""
    grams = set(char_ngrams(statement, (2,)))
    if not grams:
        return False
    best = max((len(grams & set(char_ngrams(s, (2,)))) / len(grams)
                for c in contexts for s in split_sentences(c)), default=0.0)
    return best >= threshold
