"""Tokenisers for lexical similarity: English words, Chinese jieba words, character n-grams,
and jieba's bounded cache (:class:`~course_lib._support.text_cache.TextCache`).

What is done with the tokens is elsewhere: the coverage rule in :mod:`course_lib.coverage`,
names and function words (jieba's part-of-speech tags) in :mod:`course_lib.word_tags`; those
names still import from here, with a warning.

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

import jieba

from ._support.moved import moved_names
from ._support.places import private_dir
from ._support.text_cache import TextCache

# jieba announces its dictionary load on stderr; that noise would make notebook
# outputs differ between the first and later runs.
jieba.setLogLevel(logging.WARNING)
# jieba keeps its dictionary cache in /tmp/jieba.cache by default, which on a shared server
# any user can replace, changing everyone's words: keep it in this user's own folder.
jieba.dt.tmp_dir = str(private_dir())

# A word: letters and digits of any script (what every tokeniser keeps).
WORD = re.compile(r"\w+", re.UNICODE)


# jieba's words are the slowest tokens to make, and the same paragraphs are tokenised
# by several indexes, the FeatureReranker and the offline LLM: they are kept here, from
# their second use on (a query asked once keeps only its hash). Bound: 1,000,000
# characters (about 46 bytes each: ≈ 46 MB) or 32,768 texts (a short one costs about
# 0.8 kB: ≈ 25 MB), whichever comes first, plus 32,768 hashes (≈ 3 MB); a text over
# 10,000 characters is not kept. The CMRC knowledge base's 256 paragraphs are 134,000
# characters, so all its groups fit.
JIEBA_CACHE: TextCache[tuple[str, ...]] = TextCache(
    max_entries=32_768, max_chars=1_000_000, max_text_chars=10_000, second_use=True)


def english_tokens(text: str) -> list[str]:
    """Lower-cased runs of letters and digits."""
    return WORD.findall(text.lower())


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
    return tuple(w for w in jieba.lcut_for_search(text.lower()) if WORD.fullmatch(w))


def lazyllm_chinese_tokens(text: str) -> list[str]:
    """What LazyLLM's Chinese BM25 ends up indexing: ``jieba.lcut`` words of two or more
    characters (bm25s's token pattern drops single characters). Kept to reproduce the
    chapter's numbers and to show what the single characters are worth."""
    return [word for word in jieba.lcut(text.lower()) if WORD.fullmatch(word) and len(word) > 1]


def char_ngrams(text: str, sizes: tuple[int, ...] = (1, 2)) -> list[str]:
    """Character n-grams of the letters and digits of ``text`` (punctuation, spaces dropped).

    No dictionary, so no segmentation errors: "菲尔普斯" is found even if jieba cuts it
    wrongly, and "1987年" matches "1987". The price: more, noisier terms.

    >>> char_ngrams("北京，奥运")
    ['北', '京', '奥', '运', '北京', '京奥', '奥运']
    """
    clean = "".join(WORD.findall(text.lower()))
    return [clean[i:i + n] for n in sizes for i in range(len(clean) - n + 1)]


# The coverage rule and the tags lived here until each got its own module.
__getattr__ = moved_names(__name__, {
    **dict.fromkeys(["MATCHES", "coverage", "covered_terms"], "course_lib.coverage"),
    **dict.fromkeys(["NAME_TAGS", "FUNCTION_TAGS", "POS_CACHE", "tagged_words",
                     "named_entities", "function_words"], "course_lib.word_tags")})
