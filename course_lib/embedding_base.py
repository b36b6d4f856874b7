"""The embedding interface every backend keeps (:class:`Embedder`; queries and passages
apart: :class:`QueryPassageEmbedder`), the prefixes e5 was trained with, and the checks and
thread cap every backend shares. The backends are in :mod:`course_lib.embedding_models`
(offline, local) and :mod:`course_lib.embedding_remote` (HTTP services), the disk cache in
:mod:`course_lib.embedding_cache`; :mod:`course_lib.embeddings` gathers them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._support.http_json import RemoteError
from ._support.validation import check_int, check_text

OFFLINE_HINT = ("Offline? Use the default E5Embedder() or USEEmbedder() (both shipped inside "
                "PyPI packages), or pass the path of a model folder that is on this machine.")


class EmbeddingModelUnavailable(RuntimeError):
    """A *local* model could not be loaded (no network for a hub name, a wrong folder, ...),
    or a remote embedder lacks its settings. A remote service that fails raises the
    :class:`~course_lib._support.http_json.RemoteError` family instead."""


EmbeddingEndpointError = RemoteError
"""The old name of the errors of :class:`HTTPEmbedder` and :class:`OpenAIEmbedder`: every
:class:`~course_lib._support.http_json.RemoteError` (a reply that is not one vector per
text is its subclass ``MalformedReply``); the message names the endpoint."""


def cpu_threads(requested: int | None = None) -> int:
    """A thread count never above the CPU count (oversubscribed BLAS is 8-100× slower)."""
    try:
        available = len(os.sched_getaffinity(0))  # the CPUs this process may use
    except AttributeError:  # macOS, Windows
        available = os.cpu_count() or 1
    if requested is None:
        return min(available, 4)
    return min(check_int(requested, "threads", low=1), available)


class Embedder:
    """Base class: subclasses set ``name`` and ``dim`` and implement ``_embed``.

    ``embed_query(text)`` embeds one query and ``embed_queries(texts)`` several; they
    equal ``embed([text])[0]`` and ``embed(texts)`` unless a backend treats queries
    differently (sparse BM25 weights, caches). A text or query holding a lone surrogate
    (``"\\ud800"``, not valid Unicode) is a ``ValueError`` naming it and its position
    (:func:`~course_lib._support.validation.check_text`), on every backend.
    """

    name: str = "embedder"
    dim: int = 0
    sparse: bool = False

    def embed(self, texts: Sequence[str]) -> Any:
        if isinstance(texts, str):
            raise TypeError("embed takes a list of texts; wrap a single text in a list")
        texts = _checked(list(texts), "texts")
        if not texts:
            return [] if self.sparse else np.zeros((0, self.dim), dtype=np.float32)
        return self._embed(texts)

    def __call__(self, texts: Sequence[str]) -> Any:
        return self.embed(texts)

    def embed_query(self, text: str) -> Any:
        return self.embed(_checked([text], "query"))[0]

    def embed_queries(self, texts: Sequence[str]) -> Any:
        """Several queries at once (a batch is much faster than one query at a time);
        override together with ``embed_query`` for models that treat queries differently."""
        return self.embed(texts)

    def _embed(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"




class QueryPassageEmbedder(Embedder):
    """An embedder that reads a query differently from a passage (e5's "query: " and
    "passage: " prefixes): a subclass implements ``_embed_as(texts, is_query)`` only, and
    this class writes the rule once — ``embed`` reads passages, ``embed_query`` and
    ``embed_queries`` read queries.

    >>> class Tagged(QueryPassageEmbedder):
    ...     dim = 1
    ...     def _embed_as(self, texts, is_query):
    ...         return np.array([[1.0 if is_query else 0.0] for _ in texts])
    >>> Tagged().embed(["长城"]).tolist(), Tagged().embed_query("长城").tolist()
    ([[0.0]], [1.0])
    """

    def _embed(self, texts: list[str]) -> Any:
        return self._embed_as(texts, is_query=False)

    def embed_query(self, text: str) -> Any:
        return self._embed_as(_checked([text], "query"), is_query=True)[0]

    def embed_queries(self, texts: Sequence[str]) -> Any:
        texts = _checked(list(texts), "queries")
        return self._embed_as(texts, is_query=True) if texts else \
            np.zeros((0, self.dim), dtype=np.float32)

    def _embed_as(self, texts: list[str], is_query: bool) -> Any:
        raise NotImplementedError


# e5 models were trained with these prefixes; without them their scores are worse.
E5_PREFIXES = ("query: ", "passage: ")


def known_prefixes(model: str | os.PathLike[str]) -> tuple[str, str]:
    """The (query, passage) prefixes a model was trained with, by its name: e5's for
    the e5 family, none otherwise.

    >>> known_prefixes("intfloat/multilingual-e5-small")
    ('query: ', 'passage: ')
    >>> known_prefixes("BAAI/bge-small-zh-v1.5")
    ('', '')
    """
    name = Path(str(model)).name.lower()
    return E5_PREFIXES if re.match(r"(multilingual-)?e5-", name) else ("", "")



def _checked(texts: list[str], name: str) -> list[str]:
    """``texts`` unchanged, or the ``ValueError`` of :func:`check_text` for the first
    string holding a lone surrogate (named ``name[i]``, or ``name`` for one query);
    what is not a string is left to the backend."""
    for i, text in enumerate(texts):
        if isinstance(text, str):
            check_text(text, name if name == "query" else f"{name}[{i}]")
    return texts


