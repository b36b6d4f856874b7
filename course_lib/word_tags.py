"""Names and function words in a question, from jieba's part-of-speech tags.

:func:`named_entities` finds the names a question asks about (a title in 《》, a person, a
place, an organisation); :func:`function_words` the words that carry no content, which a
coverage of the question's words should not count. Statistical, so it errs: an unknown
name may come out cut in pieces (what it does not do: recognise names jieba does not tag).

>>> named_entities("长城在北京")
[('长城', 'place'), ('北京', 'place')]
"""

from __future__ import annotations

import re

from ._support.text_cache import TextCache
from .scripts import to_simplified
from .text_tokens import WORD

# Part-of-speech tags are only read from questions (short): a small cache.
POS_CACHE: TextCache[tuple[tuple[str, str], ...]] = TextCache(
    max_entries=8_192, max_chars=200_000, max_text_chars=500)
# jieba's part-of-speech tags (ICTCLAS) for names: person, place, organisation, other
# proper noun, and Latin-script words (model names, abbreviations: "AGG01", "NBA").
NAME_TAGS = {"nr": "person", "ns": "place", "nt": "organisation", "nz": "name", "eng": "latin"}
# Tags of words that carry no content of their own in a question: particles (u*),
# prepositions, conjunctions, pronouns (r*: question words included), modal particles,
# interjections, onomatopoeia, measure words, locatives and adverbs ("最", "大约").
FUNCTION_TAGS = frozenset("u uj ul uz ud ug uv p c r rr rz rg y e o q f d dg".split())
_TITLE = re.compile(r"《([^《》]{1,40})》")


def tagged_words(text: str) -> list[tuple[str, str]]:
    """jieba's words with their part-of-speech tags (``jieba.posseg``), punctuation and
    spaces dropped. Statistical, so it errs: an unknown name may come out cut in pieces.
    Traditional text is tagged through its Simplified form (jieba's dictionary is Simplified).

    >>> tagged_words("长城在北京")
    [('长城', 'ns'), ('在', 'p'), ('北京', 'ns')]
    """
    return [(word, flag) for word, flag in POS_CACHE(text, _tagged) if WORD.fullmatch(word)]


def _tagged(text: str) -> tuple[tuple[str, str], ...]:
    import jieba.posseg  # loads its model: only when a text is first tagged

    # jieba's dictionary is Simplified: on Traditional text every character is unknown and
    # its HMM runs over whole phrases (50 ms a DRCD question, and worse tags). Tag the
    # Simplified text and cut the original where it was cut, when the two align.
    simplified = to_simplified(text)
    if simplified == text or len(simplified) != len(text):
        return tuple((pair.word, pair.flag) for pair in jieba.posseg.lcut(text))
    pieces, at = [], 0
    for pair in jieba.posseg.lcut(simplified):
        pieces.append((text[at:at + len(pair.word)], pair.flag))
        at += len(pair.word)
    return tuple(pieces)


def named_entities(text: str) -> list[tuple[str, str]]:
    """The names in ``text``, each once, in order, with their kind: a book, film or game
    title in 《》 (kind ``"title"``), then the words jieba tags as a person, place,
    organisation, other name or Latin-script word (:data:`NAME_TAGS`), two or more
    characters long — except a name inside one found before it (``北京`` after ``北京大学``:
    the longer name already asks about it). A name jieba cuts in pieces is missed.

    >>> named_entities("《茶经》的作者陆羽是哪里人？")
    [('茶经', 'title'), ('陆羽', 'person')]
    """
    found = {title: "title" for title in _TITLE.findall(text)}
    for word, flag in tagged_words(text):
        kind = next((kind for tag, kind in NAME_TAGS.items() if flag.startswith(tag)), None)
        if kind and len(word) >= 2 and not any(word in title for title in found):
            found.setdefault(word, kind)
    return list(found.items())


def function_words(text: str) -> set[str]:
    """The words of ``text`` that carry no content (:data:`FUNCTION_TAGS`, and verbs of
    one character such as 是, 有), lower-cased: what a coverage of the question's words
    should not count.

    >>> sorted(function_words("罗保铭本科毕业于哪所大学？"))
    ['于', '哪', '所']
    """
    return {word.lower() for word, flag in tagged_words(text)
            if flag in FUNCTION_TAGS or (flag == "v" and len(word) == 1)}
