"""A bounded cache of what was computed from a text (:class:`TextCache`): plumbing the
tokenisers, the script converter and the reranker share.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from .validation import check_int

V = TypeVar("V")


class TextCache(Generic[V]):
    """A least-recently-used cache of what was computed from a text, bounded three ways.

    * at most ``max_entries`` texts;
    * at most ``max_chars`` characters of text over all entries — what an entry costs
      grows with its text (a tuple of jieba words takes about 46 bytes per character of
      the text, a ``Counter`` of character n-grams about 110), so a bound on entries
      alone would not bound memory;
    * a text longer than ``max_text_chars`` is never stored: it is computed each time it
      comes (a 200,000-character text is rarely asked for twice, and would evict
      hundreds of paragraphs).

    When a new entry would cross a bound, the least recently used entries are dropped
    first. With ``second_use=True`` a text is stored only when it comes a second time
    while its hash is among the last ``max_entries`` new texts seen: a stream of
    distinct queries then keeps nothing but those hashes (about 0.1 kB each), while
    paragraphs that several indexes tokenise are kept from their second use on.

    ``cache(text, compute, kind)`` returns ``compute(text)``, from the cache when
    ``(kind, text)`` was stored. Safe to share between threads (the retrieval paths
    of :class:`course_lib.fusion.MultiRetriever`, run in threads when ``max_workers > 0``);
    two threads may compute the same missing text at once, and both get the same answer.
    It does not copy what it returns: callers must not change it.

    >>> cache = TextCache(max_entries=2, max_chars=100, max_text_chars=10)
    >>> [cache(t, len) for t in ("ab", "cde", "ab", "fg")]
    [2, 3, 2, 2]
    >>> len(cache), cache.chars  # "cde" was the least recently used
    (2, 4)
    >>> cache("x" * 11, len), len(cache)  # too long to keep
    (11, 2)
    >>> twice = TextCache(max_entries=2, max_chars=100, max_text_chars=10, second_use=True)
    >>> [(twice(t, len), len(twice)) for t in ("ab", "cd", "ab")]
    [(2, 0), (2, 0), (2, 1)]
    """

    def __init__(self, max_entries: int, max_chars: int, max_text_chars: int,
                 second_use: bool = False) -> None:
        self.max_entries = check_int(max_entries, "max_entries", low=1)
        self.max_chars = check_int(max_chars, "max_chars", low=1)
        self.max_text_chars = check_int(max_text_chars, "max_text_chars", low=0,
                                        high=self.max_chars)
        self.second_use = bool(second_use)
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._seen: OrderedDict[int, None] = OrderedDict()  # hashes of texts met once
        self._lock = threading.Lock()
        self.chars = 0  # characters of text held now
        self.hits = self.misses = 0

    def __call__(self, text: str, compute: Callable[[str], V], kind: Hashable = "") -> V:
        key = (kind, text)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return found[0]
            self.misses += 1
        value = compute(text)
        if len(text) <= self.max_text_chars:
            self._store(key, value, len(text))
        return value

    def _store(self, key: Hashable, value: V, size: int) -> None:
        with self._lock:
            if key in self._entries:  # another thread stored it meanwhile
                return
            if self.second_use:
                digest = hash(key)
                if digest not in self._seen:  # first use: remember only that it came
                    self._seen[digest] = None
                    if len(self._seen) > self.max_entries:
                        self._seen.popitem(last=False)
                    return
                del self._seen[digest]
            self._entries[key] = (value, size)
            self.chars += size
            while len(self._entries) > self.max_entries or self.chars > self.max_chars:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.chars -= dropped

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self._seen.clear()
            self.chars = 0

    def __repr__(self) -> str:
        return (f"TextCache({len(self)}/{self.max_entries} entries, "
                f"{self.chars:,}/{self.max_chars:,} characters, "
                f"texts up to {self.max_text_chars:,} characters kept)")
