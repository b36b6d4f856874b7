"""Argument checks, in one place, with messages that say what was wrong.

Every public function of the library checks its arguments before it works, and a bad
argument gets a message that names it, says what is allowed and shows what was given:
``topk must be an integer in [1, 10000], got 3.5``. The checks live here so that each
module calls one function instead of repeating ``isinstance`` tests.

What counts as an integer or a number:

- an **integer** is a Python ``int`` or a numpy integer scalar (``numpy.int64(3)``, what
  ``np.argmax`` or indexing an int array gives you). ``True`` is not one, although Python
  treats it as 1, and neither is ``3.0``: a count given as a float is usually a mistake
  (``n / 2`` instead of ``n // 2``).
- a **number** is an integer as above or a Python or numpy float (``numpy.float32(0.5)``).
  NaN is refused unless ``allow_nan=True``: every comparison with NaN is false, so a NaN
  cut-off would silently drop (or keep) everything.

The checks return the value converted to a plain ``int`` or ``float``, so what a caller
stores prints and serialises like a Python number. They raise ``ValueError`` for a wrong
type as well as a wrong value, as the library always has: either way the argument's
value is what the caller must change.

>>> check_int(np.int64(3), "topk", 1, 10)
3
>>> check_int(3.5, "topk", 1, 10)
Traceback (most recent call last):
...
ValueError: topk must be an integer in [1, 10], got 3.5
>>> check_number(np.float32(0.5), "similarity_cut_off")
0.5
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

TOPK_RANGE = (1, 10000)
# The longest query every retrieval path serves in bounded time and memory. The dense
# paths' cost grows with the query (measured on Chinese text, 2 threads): e5 embeds it in
# 512-token windows of ~700 characters, ~1.3 s of CPU each (10,000 characters: 19 s,
# 200,000: 350 s); USE's memory grows by ~13 kB a character (10,000: +130 MB, 200,000:
# +2.6 GB). At 2,000 characters e5 takes ~2 s, USE +21 MB, BM25 (jieba or characters)
# 0.02 s. That holds any question (CMRC's longest is 54 characters) and any paragraph of
# the course's corpora used as a query (the longest is 968).
MAX_QUERY_CHARS = 2_000


def is_int(value: Any) -> bool:
    """Is ``value`` a Python or numpy integer (and not a bool)?

    >>> is_int(3), is_int(np.int32(3)), is_int(True), is_int(3.0)
    (True, True, False, False)
    """
    # numpy's bool_ is not an np.integer, but Python's bool is an int: exclude it by hand
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value: Any, allow_nan: bool = False) -> bool:
    """Is ``value`` an integer (see :func:`is_int`) or a Python or numpy float?

    NaN counts only with ``allow_nan=True``; infinities always count.

    >>> is_number(0.5), is_number(np.float32(0.5)), is_number(float("nan")), is_number("1")
    (True, True, False, False)
    """
    if is_int(value):
        return True
    if not isinstance(value, (float, np.floating)):
        return False
    return allow_nan or not math.isnan(value)


def _allowed_range(low: float | None, high: float | None) -> str:
    """`` in [low, high]``, `` >= low``, `` <= high`` or nothing."""
    if low is not None and high is not None:
        return f" in [{low}, {high}]"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""


def _in_range(value: float, low: float | None, high: float | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def check_int(value: Any, name: str, low: int | None = None, high: int | None = None, *,
              allowed: str | None = None) -> int:
    """``value`` as a Python ``int`` if it is an integer in ``[low, high]``, else ``ValueError``.

    ``low`` and ``high`` are inclusive; ``None`` leaves that side open. ``allowed`` replaces
    the range in the message when the bound has a name worth showing, e.g.
    ``allowed=f"in [0, chunk_size={size})"``.

    >>> check_int(0, "max_workers", low=0)
    0
    >>> check_int(True, "docs_per_file", low=1)
    Traceback (most recent call last):
    ...
    ValueError: docs_per_file must be an integer >= 1, got True
    """
    if not is_int(value) or not _in_range(value, low, high):
        rule = f" {allowed}" if allowed is not None else _allowed_range(low, high)
        raise ValueError(f"{name} must be an integer{rule}, got {value!r}")
    return int(value)


def check_number(value: Any, name: str, low: float | None = None, high: float | None = None,
                 *, allow_nan: bool = False) -> float:
    """``value`` as a Python ``float`` if it is a number in ``[low, high]``, else ``ValueError``.

    Accepts Python and numpy integers and floats, not bools or strings. NaN is refused
    unless ``allow_nan=True`` (then it also skips the range test, which NaN always fails).

    >>> check_number(float("nan"), "score_cut_off")
    Traceback (most recent call last):
    ...
    ValueError: score_cut_off must be a number, got nan (NaN compares false with everything)
    """
    rule = _allowed_range(low, high)
    if not is_number(value, allow_nan=True):
        raise ValueError(f"{name} must be a number{rule}, got {value!r}")
    number = float(value)
    if math.isnan(number):
        if allow_nan:
            return number
        raise ValueError(f"{name} must be a number{rule}, got nan "
                         "(NaN compares false with everything)")
    if not _in_range(number, low, high):
        raise ValueError(f"{name} must be a number{rule}, got {value!r}")
    return number


MAX_SECONDS = 3600.0  # the longest timeout or deadline a remote client accepts: an hour


def check_seconds(value: Any, name: str) -> float:
    """``value`` as a float if it is a number of seconds in (0, ``MAX_SECONDS``]: the one
    check of every remote client's ``timeout`` and ``deadline``.

    >>> check_seconds(0, "deadline")
    Traceback (most recent call last):
    ...
    ValueError: deadline must be a number of seconds in (0, 3600], got 0
    """
    if not is_number(value) or not 0 < value <= MAX_SECONDS:
        raise ValueError(f"{name} must be a number of seconds in (0, {MAX_SECONDS:g}], got "
                         f"{value!r}")
    return float(value)


def validate_topk(topk: Any, name: str = "topk") -> int:
    """``topk`` (or another result count called ``name``) as an ``int`` in ``TOPK_RANGE``.

    >>> validate_topk(np.int64(3))
    3
    """
    low, high = TOPK_RANGE
    return check_int(topk, name, low, high)


def validate_query(query: Any) -> str:
    """``query`` unchanged if it is a non-blank string of valid Unicode text (see
    :func:`check_text`) of at most ``MAX_QUERY_CHARS`` characters.

    A wrong type is a ``TypeError`` (a list of questions, ``None``); an empty string, a
    string longer than the limit or one holding a lone surrogate is a ``ValueError``.
    Every path that takes a query (Retriever, MultiRetriever, Reranker, the query
    rewriters, MultiPathRAG) calls this first, so each refuses the same queries with the
    same message. The limit is one that every retrieval path serves in bounded time and
    memory: the dense embedders' cost grows with the query's length (e5 embeds a long
    text window by window), while a question is rarely more than a few hundred
    characters.

    >>> validate_query("长城有多长？")
    '长城有多长？'
    >>> validate_query("长城" * 10_000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: query has 20,000 characters; the limit is ... (MAX_QUERY_CHARS)...
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query is empty: give the question to retrieve for")
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"query has {len(query):,} characters; the limit is "
                         f"{MAX_QUERY_CHARS:,} (MAX_QUERY_CHARS), so that every retrieval "
                         "path answers in bounded time and memory (a dense embedder's cost "
                         "grows with the query): ask with a shorter query, e.g. the question "
                         "or the key sentences of a passage")
    return check_text(query, "query")


_SURROGATE = re.compile("[\ud800-\udfff]")


def find_surrogate(text: str) -> re.Match[str] | None:
    """The first lone surrogate (``"\\ud800"`` … ``"\\udfff"``) in ``text``, or None: such a
    character is not valid Unicode, and no encoder, tokenizer or file can take it.

    >>> find_surrogate("长城\\ud800").start(), find_surrogate("长城")
    (2, None)
    """
    return None if text.isascii() else _SURROGATE.search(text)


def close_names(name: Any, known: Iterable[Any], n: int = 1) -> list[str]:
    """The (at most ``n``) names of ``known`` closest to ``name``, best first, as strings
    (:func:`difflib.get_close_matches`: similarity 0.6 or more): the course's one
    "did you mean" rule.

    >>> close_names("filename", ["file_name", "title"])
    ['file_name']
    """
    import difflib

    return difflib.get_close_matches(str(name), [str(k) for k in known], n=n)


def did_you_mean(name: Any, known: Iterable[Any]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``known`` (:func:`close_names`), or
    ``""`` when none is close: the hint an error message ends a wrong name with.

    >>> did_you_mean("filename", ["file_name", "title"]), did_you_mean("zzz", ["title"])
    (" (did you mean 'file_name'?)", '')
    """
    close = close_names(name, known)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_text(text: str, name: str) -> str:
    """``text`` unchanged unless it holds a lone surrogate (``"\\ud800"``), which no
    encoder, tokenizer or file can take: then ``ValueError`` naming ``name`` and the
    position. ``name`` says whose text it is (``"query"``, ``"texts['a.txt']"``).

    >>> check_text("长城\\ud800", "texts['a.txt']")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: texts['a.txt'] holds a lone surrogate '\\ud800' at position 2, which is not ...
    """
    found = find_surrogate(text)
    if found is not None:
        raise ValueError(f"{name} holds a lone surrogate {found.group()!r} at position "
                         f"{found.start()}, which is not valid Unicode: remove it, or clean the "
                         "text with text.encode('utf-8', 'replace').decode('utf-8')")
    return text
