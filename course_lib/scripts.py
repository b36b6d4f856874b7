"""Chinese in two scripts: convert between Traditional and Simplified, offline, and
tokenise after normalising — a query rewriter that needs no model.

A reader in Beijing asks "台湾的信息产业" of a wiki written in Taipei ("臺灣的資訊產業"): the
same words, other characters, and a lexical matcher sees almost nothing in common.
OpenCC (the ``opencc`` package, with its own dictionaries: no network) converts one
script into the other, phrase by phrase, so normalising the query — or both sides
before tokenising — gives the matcher its words back.

What it does not do: it converts characters and a few phrases, not vocabulary.
"資訊" becomes "资讯", not the mainland word "信息"; "軟體" stays "软体", not "软件".
(OpenCC's ``tw2sp`` would translate such phrases too; the course keeps plain ``t2s``,
the conversion every reader of both scripts would agree on.)

>>> to_simplified("臺灣的資訊科技產業")
'台湾的资讯科技产业'
>>> to_traditional("汉字")
'漢字'
>>> script_normalised(str.split)("學 習")
['学', '习']
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from ._support.text_cache import TextCache

# OpenCC's configurations for plain character conversion (no regional vocabulary).
CONVERSIONS = {"t2s": "Traditional → Simplified", "s2t": "Simplified → Traditional"}

# Conversions are cheap (about 20 µs a paragraph) but every index, the reranker and each
# query convert the same texts again: keep them, bounded like the tokenisers' cache.
CONVERTED: TextCache[str] = TextCache(max_entries=32_768, max_chars=2_000_000,
                                      max_text_chars=20_000)


@cache
def _converter(config: str):  # opencc.OpenCC, imported when first needed
    import opencc

    return opencc.OpenCC(config)


def convert(text: str, config: str) -> str:
    """``text`` converted by OpenCC's ``config`` (``"t2s"`` or ``"s2t"``,
    :data:`CONVERSIONS`). Text already in the target script comes back unchanged,
    apart from the rare character the dictionary maps anyway ("舖" → "铺").

    >>> convert("資料庫", "t2s")
    '资料库'
    """
    if config not in CONVERSIONS:
        raise ValueError(f"config must be one of {sorted(CONVERSIONS)}, got {config!r}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return CONVERTED(text, _converter(config).convert, config)


def to_simplified(text: str) -> str:
    """``text`` in Simplified characters (OpenCC ``t2s``)."""
    return convert(text, "t2s")


def to_traditional(text: str) -> str:
    """``text`` in Traditional characters (OpenCC ``s2t``: OpenCC's standard forms, which
    differ from Taiwan's in a few characters — "爲" where DRCD writes "為")."""
    return convert(text, "s2t")


def script_normalised(tokenizer: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """``tokenizer`` applied after converting the text to Simplified: the same words in
    either script give the same tokens. Used on both sides (index and query), so a
    Simplified question meets a Traditional passage — and a mixed knowledge base is one
    vocabulary.
    """
    def tokens(text: str) -> list[str]:
        return tokenizer(to_simplified(text))

    tokens.__name__ = f"script_normalised({getattr(tokenizer, '__name__', 'tokenizer')})"
    tokens.__doc__ = f"{tokenizer.__name__ if hasattr(tokenizer, '__name__') else 'tokens'} " \
                     "of the text converted to Simplified Chinese"
    return tokens
