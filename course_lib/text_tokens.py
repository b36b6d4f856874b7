"""Tokenisers for lexical similarity (English words, Chinese jieba words, character
n-grams), their bounded caches (:class:`~course_lib._support.text_cache.TextCache`), and
the one coverage rule (:func:`coverage`).

>>> english_tokens("The 2008 Olympics, in Beijing!")
['the', '2008', 'olympics', 'in', 'beijing']
>>> chinese_tokens("2008年北京奥运会")
['2008', '年', '北京', '奥运', '奥运会']
>>> lazyllm_chinese_tokens("2008年北京奥运会")
['2008', '北京', '奥运会']
"""

from __future__ import annotations

import logging
import re
from collections.abc import Container, Iterable, Mapping

import jieba

from ._support.places import private_dir
from ._support.text_cache import TextCache

# jieba announces its dictionary load on stderr; that noise would make notebook
# outputs differ between the first and later runs.
jieba.setLogLevel(logging.WARNING)
# jieba keeps its dictionary cache in /tmp/jieba.cache by default, which on a shared server
# any user can replace, changing everyone's words: keep it in this user's own folder.
jieba.dt.tmp_dir = str(private_dir())

_WORD = re.compile(r"\w+", re.UNICODE)


# jieba's words are the slowest tokens to make, and the same paragraphs are tokenised
# by several indexes, the FeatureReranker and the offline LLM: they are kept here, from
# their second use on (a query asked once keeps only its hash). Bound: 1,000,000
# characters (about 46 bytes each: ≈ 46 MB) or 32,768 texts (a short one costs about
# 0.8 kB: ≈ 25 MB), whichever comes first, plus 32,768 hashes (≈ 3 MB); a text over
# 10,000 characters is not kept. The CMRC knowledge base's 256 paragraphs are 134,000
# characters, so all its groups fit.
JIEBA_CACHE: TextCache[tuple[str, ...]] = TextCache(
    max_entries=32_768, max_chars=1_000_000, max_text_chars=10_000, second_use=True)
# Part-of-speech tags are only read from questions (short): a small cache.
POS_CACHE: TextCache[tuple[tuple[str, str], ...]] = TextCache(
    max_entries=8_192, max_chars=200_000, max_text_chars=500)


def english_tokens(text: str) -> list[str]:
    """Lower-cased runs of letters and digits."""
    return _WORD.findall(text.lower())


def chinese_tokens(text: str, cached: bool = True) -> list[str]:
    """jieba search-mode words, lower-cased, punctuation and spaces dropped.

    Search mode also emits the shorter words inside a long one ("奥运会" → "奥运",
    "奥运会"), so a query and a passage that segment differently still share terms.
    Single characters are kept: in Chinese "鱼" or "年" carry meaning (bm25s, used by
    LazyLLM, drops every one-character token).

    Memoised in :data:`JIEBA_CACHE` (bounded: see :class:`TextCache`); ``cached=False``
    neither looks there nor counts as a use (for a text tokenised once more in the same
    call, such as a query the reranker reads after the retriever did).
    """
    return list(JIEBA_CACHE(text, _chinese_tokens) if cached else _chinese_tokens(text))


def _chinese_tokens(text: str) -> tuple[str, ...]:
    return tuple(w for w in jieba.lcut_for_search(text.lower()) if _WORD.fullmatch(w))


def lazyllm_chinese_tokens(text: str) -> list[str]:
    """What LazyLLM's Chinese BM25 ends up indexing: ``jieba.lcut`` words of two or more
    characters (bm25s's token pattern drops single characters). Kept to reproduce the
    chapter's numbers and to show what the single characters are worth."""
    return [word for word in jieba.lcut(text.lower()) if _WORD.fullmatch(word) and len(word) > 1]


def char_ngrams(text: str, sizes: tuple[int, ...] = (1, 2)) -> list[str]:
    """Character n-grams of the letters and digits of ``text`` (punctuation, spaces dropped).

    No dictionary, so no segmentation errors: "菲尔普斯" is found even if jieba cuts it
    wrongly, and "1987年" matches "1987". The price: more, noisier terms.

    >>> char_ngrams("北京，奥运")
    ['北', '京', '奥', '运', '北京', '京奥', '奥运']
    """
    clean = "".join(_WORD.findall(text.lower()))
    return [clean[i:i + n] for n in sizes for i in range(len(clean) - n + 1)]


MATCHES = ("token", "substring")


def coverage(terms: Iterable[str], within: str | Container[str], *,
             weights: Mapping[str, float] | None = None, match: str = "token") -> float:
    """The share of ``terms`` (a query's words or bigrams, distinct) found ``within`` a
    text: the one coverage rule of the reranker, the answerability detector and the
    offline LLM. 0.0 when the terms have no weight at all (no terms).

    * ``weights`` — ``{term: weight}``, e.g. idf: finding a rare word ("嘉峪关") says more
      than finding a common one ("中国"), so the reranker and the detector weight by
      idf. ``None`` counts every term once: the offline LLM's judge has no collection
      to take an idf from. Terms are added in the order given (a float sum depends on it).
    * ``match`` — ``"token"``: ``within`` is the text's tokens (any container: a set, a
      ``Counter``) and a term must be one of them; the reranker has every candidate's
      tokens counted and cached already. ``"substring"``: ``within`` is the text, and a
      term is found anywhere in it, ignoring case — robust to jieba cutting the text
      differently from the question ("长城" is in "万里长城", one jieba word), which the
      detector and the offline LLM read line by line without tokenising.

    >>> coverage(["长城", "山海关"], "万里长城东起山海关", match="substring")
    1.0
    >>> coverage(["长城", "山海关"], {"万里长城", "山海关"}, weights={"长城": 1.0, "山海关": 3.0})
    0.75
    """
    terms = list(terms)
    found = covered_terms(terms, within, match=match)
    if weights is None:
        return len(found) / len(terms) if terms else 0.0
    total = sum(weights[term] for term in terms)
    return sum(weights[term] for term in found) / total if total else 0.0


def covered_terms(terms: Iterable[str], within: str | Container[str], *,
                  match: str = "token") -> list[str]:
    """The ``terms`` found ``within`` a text, in their order: what :func:`coverage` counts
    (``match`` as there).

    >>> covered_terms(["长城", "故宫"], "万里长城", match="substring")
    ['长城']
    """
    if match not in MATCHES:
        raise ValueError(f"match must be one of {MATCHES}, got {match!r}")
    if match == "substring":
        if not isinstance(within, str):
            raise TypeError(f"match='substring' needs the text, got {type(within).__name__}")
        within = within.lower()
    return [term for term in terms if term in within]


# ---------------------------------------------------------------- names and function words
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
    return [(word, flag) for word, flag in POS_CACHE(text, _tagged) if _WORD.fullmatch(word)]


def _tagged(text: str) -> tuple[tuple[str, str], ...]:
    import jieba.posseg

    from .scripts import to_simplified  # scripts uses this module: imported when needed

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
    characters long. A name jieba cuts in pieces is missed (what it does not do).

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
