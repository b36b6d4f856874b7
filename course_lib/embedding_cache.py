"""The embeddings' disk cache (:class:`CachedEmbedder`, keyed by model name and text hash,
in :mod:`course_lib.embedding_shards` files) and :func:`expected_queries`, which lets
a loop's queries be embedded in one batch.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._support.places import cache_dir as default_cache_dir
from .embedding_base import Embedder, _checked
from .embedding_shards import (
    DamagedCacheWarning,
    DamagedShard,
    read_shard,
    text_hash,
    write_shard,
)


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
        if safe != embedder.name:  # "m/1" and "m:1" would share "m_1": the exact name decides
            safe += "-" + hashlib.sha256(embedder.name.encode("utf-8")).hexdigest()[:12]
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


