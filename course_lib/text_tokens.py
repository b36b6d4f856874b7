"""Tokenisers for lexical similarity: English words and Chinese (jieba) words.

>>> english_tokens("The 2008 Olympics, in Beijing!")
['the', '2008', 'olympics', 'in', 'beijing']
>>> chinese_tokens("2008年北京奥运会")
['2008', '年', '北京', '奥运', '奥运会']
>>> lazyllm_chinese_tokens("2008年北京奥运会")
['2008', '北京', '奥运会']
"""

from __future__ import annotations

import functools
import logging
import re

import jieba

# jieba announces its dictionary load on stderr; that noise would make notebook
# outputs differ between the first and later runs.
jieba.setLogLevel(logging.WARNING)

_WORD = re.compile(r"\w+", re.UNICODE)


def english_tokens(text: str) -> list[str]:
    """Lower-cased runs of letters and digits."""
    return _WORD.findall(text.lower())


def chinese_tokens(text: str) -> list[str]:
    """jieba search-mode words, lower-cased, punctuation and spaces dropped.

    Search mode also emits the shorter words inside a long one ("奥运会" → "奥运",
    "奥运会"), so a query and a passage that segment differently still share terms.
    Single characters are kept: in Chinese "鱼" or "年" carry meaning (bm25s, used by
    LazyLLM, drops every one-character token).
    """
    return list(_chinese_tokens(text))


@functools.lru_cache(maxsize=65536)
def _chinese_tokens(text: str) -> tuple[str, ...]:
    # Memoised: the same paragraphs are tokenised by many indexes and rerankers.
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
