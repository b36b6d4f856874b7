"""Embedding services over HTTP: any OpenAI-compatible ``/v1/embeddings`` endpoint
(:class:`OpenAIEmbedder`) and :class:`HTTPEmbedder`, to subclass for any other service.
Errors are the course's remote family (:mod:`course_lib._support.http_json`).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._support.http_json import MalformedReply, retrying
from ._support.transports import deadline_transport, openai_try, post_json
from ._support.validation import check_int, check_seconds
from .embedding_base import (
    OFFLINE_HINT,
    Embedder,
    EmbeddingModelUnavailable,
    _checked,
)


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint.

    Configured by arguments or the environment: ``COURSE_EMBED_BASE_URL``,
    ``COURSE_EMBED_API_KEY``, ``COURSE_EMBED_MODEL``. Each request follows the course's
    one policy (:func:`course_lib._support.http_json.retrying`, as for every remote
    client): at most ``retries`` more tries, each within ``timeout`` seconds (the whole
    reply), all within ``deadline``; ``sleep`` does the waiting. Failures are that
    module's ``RemoteError`` family, naming the endpoint; a reply without one vector per
    text is ``MalformedReply``. (``max_retries=``, its old name, is refused: ``retries=``.)
    """

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = 30.0, retries: int = 2,
                 batch_size: int = 64, sleep: Callable[[float], object] = time.sleep, *,
                 deadline: float = 120.0, **renamed: Any) -> None:
        from openai import DefaultHttpx2Client, OpenAI

        if "max_retries" in renamed:
            raise TypeError("OpenAIEmbedder takes retries=, not max_retries=: the one name "
                            "every remote client of the course uses")
        if renamed:
            raise TypeError(f"OpenAIEmbedder() got an unexpected keyword argument "
                            f"{next(iter(renamed))!r}")
        model = model or os.environ.get("COURSE_EMBED_MODEL")
        base_url = base_url or os.environ.get("COURSE_EMBED_BASE_URL")
        api_key = api_key or os.environ.get("COURSE_EMBED_API_KEY") or "not-needed"
        if not model or not base_url:
            raise EmbeddingModelUnavailable(
                "OpenAIEmbedder needs model= and base_url= (or COURSE_EMBED_MODEL and "
                f"COURSE_EMBED_BASE_URL). {OFFLINE_HINT}")
        self.timeout = check_seconds(timeout, "timeout")
        self.deadline = check_seconds(deadline, "deadline")
        self.retries = check_int(retries, "retries", low=0, high=10)
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        # max_retries=0: retrying is the course's one loop (http_json.retrying), not the client's.
        transport = deadline_transport(base_url, "OpenAIEmbedder")
        http_client = DefaultHttpx2Client(transport=transport, trust_env=False)
        self._client = OpenAI(base_url=base_url, api_key=api_key, timeout=self.timeout,
                              max_retries=0, http_client=http_client)
        self.base_url, self.sleep, self.model = base_url, sleep, model
        self.name = f"openai:{model}"
        self.dim = 0  # known after the first call

    def _create(self, batch: list[str]) -> Any:
        """The endpoint's reply for ``batch``, tried as the course's policy says."""
        where = f"embedding endpoint {self.base_url} (model {self.model!r})"
        return retrying(
            lambda clock: openai_try(lambda: self._client.embeddings.create(
                model=self.model, input=batch), clock, where, self.base_url,
                "a list of embeddings"),
            where=where, endpoint=self.base_url, retries=self.retries, timeout=self.timeout,
            deadline=self.deadline, who="OpenAIEmbedder", sleep=self.sleep)

    def _embed(self, texts: list[str]) -> np.ndarray:
        where = f"embedding endpoint {self.base_url}"
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start:start + self.batch_size]
            response = self._create(batch)
            try:
                data = sorted(response.data, key=lambda item: item.index)
            except (AttributeError, TypeError) as error:
                raise MalformedReply(f"{where} sent a reply that is not a list of embeddings: "
                                     f"{type(error).__name__}: {error}", self.base_url) from error
            if len(data) != len(batch):
                raise MalformedReply(f"{where} returned {len(data)} vectors for {len(batch)} "
                                     "texts", self.base_url)
            rows.extend(item.embedding for item in data)
        try:
            vectors = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise MalformedReply(f"{where} returned malformed vectors: {error}",
                                 self.base_url) from error
        if vectors.ndim != 2 or not np.isfinite(vectors).all():
            raise MalformedReply(f"{where} returned malformed or non-finite vectors",
                                 self.base_url)
        self.dim = vectors.shape[1]
        return vectors


class HTTPEmbedder(Embedder):
    """An embedding service with its own HTTP API: subclass it and say how its JSON looks.

    A subclass writes two methods — LazyLLM's ``OnlineEmbeddingModuleBase`` calls them
    ``_encapsulated_data`` and ``_parse_response``:

    * ``request_body(texts, is_query) -> dict``: the JSON to POST for a batch of texts
      (``is_query`` is ``True`` for ``embed_query`` / ``embed_queries``: many services,
      like e5, embed a question differently from a passage);
    * ``parse_vectors(reply) -> list of vectors``: the vectors, in the order of the texts,
      from the decoded JSON reply.

    The class does the rest: it POSTs each batch of ``batch_size`` texts to ``url``
    (:func:`~course_lib._support.transports.post_json`: a ``timeout`` per try and a
    ``deadline`` per request, ``retries`` as the course's one retry policy says — after
    HTTP 408/409/429/5xx, timeouts and lost connections, none after another 4xx) and
    checks the reply — one vector per text, all of one length, finite numbers. Every
    failure is a :class:`~course_lib._support.http_json.RemoteError` (old name:
    :data:`EmbeddingEndpointError`) that names the endpoint and what was wrong; its
    subclass says what: ``RemoteConnectionError``, ``RemoteTimeout``, ``RemoteHTTPError``,
    or ``MalformedReply`` for a reply that is not one vector per text. ``dim``
    is 0 until the first reply. ``api_key`` goes in an ``Authorization: Bearer`` header.

    >>> class MyService(HTTPEmbedder):
    ...     def request_body(self, texts, is_query):
    ...         return {"model": self.model, "input": texts}
    ...     def parse_vectors(self, reply):
    ...         return [item["embedding"] for item in reply["embeddings"]]
    >>> MyService("http://127.0.0.1:8000/embed", model="my-model")
    MyService(name='http:my-model', dim=0)
    """

    def __init__(self, url: str, model: str | None = None, api_key: str | None = None,
                 timeout: float = 30.0, retries: int = 2, batch_size: int = 32,
                 sleep: Callable[[float], object] | None = None, *,
                 deadline: float = 120.0) -> None:
        if not isinstance(url, str) or not re.match(r"https?://[^/\s]+", url):
            raise ValueError(f"url must be the endpoint's full http:// or https:// address, "
                             f"got {url!r}")
        if model is not None and not isinstance(model, str):
            raise TypeError(f"model must be a string or None, got {type(model).__name__}")
        self.url, self.model = url, model
        self.timeout = check_seconds(timeout, "timeout")
        self.deadline = check_seconds(deadline, "deadline")
        self.retries = check_int(retries, "retries", low=0, high=10)
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.api_key, self.sleep = api_key, sleep or time.sleep
        self.name = f"http:{model or url}"
        self.dim = 0  # known after the first reply

    def request_body(self, texts: list[str], is_query: bool) -> dict[str, Any]:
        """The JSON to POST for ``texts`` (a subclass says what its service expects)."""
        raise NotImplementedError(f"{type(self).__name__} must define request_body(texts, "
                                  f"is_query) -> dict: the JSON its service expects")

    def parse_vectors(self, reply: Any) -> Sequence[Sequence[float]]:
        """The vectors in ``reply``, the decoded JSON (a subclass says where they are)."""
        raise NotImplementedError(f"{type(self).__name__} must define parse_vectors(reply) "
                                  f"-> list of vectors: where its service puts them")

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self._request(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self._request(_checked([text], "query"), is_query=True)[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = _checked(list(texts), "queries")
        return self._request(texts, is_query=True) if texts else \
            np.zeros((0, self.dim), dtype=np.float32)

    def _request(self, texts: list[str], is_query: bool) -> np.ndarray:
        where = f"embedding endpoint {self.url}"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start:start + self.batch_size]
            body = self.request_body(batch, is_query)
            reply = post_json(self.url, body, what="embedding endpoint", headers=headers,
                              timeout=self.timeout, deadline=self.deadline,
                              retries=self.retries, who=type(self).__name__, sleep=self.sleep)
            try:
                vectors = self.parse_vectors(reply)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
                raise MalformedReply(
                    f"{where}: {type(self).__name__}.parse_vectors could not read its reply "
                    f"({type(error).__name__}: {error}); the reply began "
                    f"{json.dumps(reply, ensure_ascii=False)[:160]}", self.url) from error
            parts.append(self._checked_vectors(vectors, len(batch), where))
            self.dim = parts[-1].shape[1]  # later batches and calls must keep it
        return np.vstack(parts)

    def _checked_vectors(self, vectors: Any, n_texts: int, where: str) -> np.ndarray:
        """``vectors`` as a float32 ``(n_texts, dim)`` array, or an error saying what is off."""
        if isinstance(vectors, np.ndarray):  # a parse_vectors that built an array is fine too
            vectors = vectors.tolist()
        if isinstance(vectors, (str, bytes, dict)) or not isinstance(vectors, Sequence):
            raise MalformedReply(f"{where}: parse_vectors must return a list of vectors, got "
                                 f"{type(vectors).__name__}", self.url)
        if len(vectors) != n_texts:
            raise MalformedReply(f"{where} returned {len(vectors)} "
                                 f"vector{'' if len(vectors) == 1 else 's'} for "
                                 f"{n_texts} text{'' if n_texts == 1 else 's'}", self.url)
        lengths = set()
        for i, vector in enumerate(vectors):
            if isinstance(vector, np.ndarray):
                vector = vector.tolist()
            if isinstance(vector, (str, bytes, dict)) or not isinstance(vector, Sequence) or \
                    not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                            for x in vector):
                raise MalformedReply(f"{where}: vector [{i}] is not a list of numbers: "
                                     f"{str(vector)[:60]}", self.url)
            lengths.add(len(vector))
        expected = {self.dim} if self.dim else set()
        if len(lengths | expected) > 1 or 0 in lengths:
            raise MalformedReply(
                f"{where} returned vectors of different lengths: {sorted(lengths | expected)}"
                + (f" (earlier replies had {self.dim})" if self.dim else ""), self.url)
        array = np.asarray(vectors, dtype=np.float64)
        if not np.isfinite(array).all():
            raise MalformedReply(f"{where} returned non-finite numbers (NaN or infinity) "
                                 "in its vectors", self.url)
        return array.astype(np.float32)


