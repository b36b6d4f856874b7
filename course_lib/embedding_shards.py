"""The embedding cache's file format: shards of vectors keyed by text hash.

A model's cache is a folder of shards (:func:`write_shard`), each an ``.npz`` named by the
SHA-256 of its own bytes, written once and never modified;
:class:`~course_lib.embeddings.CachedEmbedder` decides what to embed and when to merge.
This module only writes and checks the files.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> path = write_shard(folder, {text_hash("长城"): np.ones(3, dtype=np.float32)})
>>> {key[:8]: vector.tolist() for key, vector in read_shard(path, dim=3).items()}
{'c2ea3736': [1.0, 1.0, 1.0]}
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["DamagedCacheWarning", "DamagedShard", "read_cache", "read_shard", "text_hash",
           "write_shard"]


@functools.lru_cache(maxsize=1 << 16)  # the reranker asks for the same sentences per query
def text_hash(text: str) -> str:
    """A text's cache key: the SHA-1 of its UTF-8 bytes, in hex (the text is not stored)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class DamagedShard(ValueError):
    """A cache file that is not, byte for byte, a shard :func:`write_shard` wrote."""


class DamagedCacheWarning(UserWarning):
    """A damaged cache file was found and deleted; its vectors are embedded again."""


def write_shard(folder: Path, vectors: dict[str, np.ndarray]) -> Path:
    """Write ``{key: vector}`` as a new shard in ``folder``; return the shard's path.

    A shard is an ``.npz`` of two arrays, ``keys`` (str, ``(n,)``) and ``vectors``
    (float32, ``(n, dim)``), named by the SHA-256 of its own bytes: any later change to a
    byte, or a cut, no longer matches the name. It is written to a hidden temporary file
    and renamed into place (an atomic step), so a reader finds the whole shard or no shard
    (a kill mid-write leaves a hidden ``.*.tmp`` file, which readers ignore). Shards are
    never modified; they are only merged into a new one and deleted.
    """
    buffer = io.BytesIO()
    np.savez(buffer, keys=np.array(list(vectors), dtype=str),
             vectors=np.vstack(list(vectors.values())).astype(np.float32))
    data = buffer.getvalue()
    path = folder / f"{hashlib.sha256(data).hexdigest()}.npz"
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def read_shard(path: Path, dim: int = 0) -> dict[str, np.ndarray]:
    """The ``{key: vector}`` of one shard, checked, or :class:`DamagedShard` saying why.

    Checked: the bytes still hash to the file's name; they hold ``keys`` (str, 1-d) and
    ``vectors`` (float32, one row per key, ``dim`` columns when ``dim`` is given) and no
    pickled objects (never unpickled: a cache file must not run code).
    """
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != path.stem:
        raise DamagedShard(f"{path}: its bytes do not match its name (changed or cut short)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            keys, vectors = arrays["keys"], arrays["vectors"]
    except (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile) as error:
        raise DamagedShard(f"{path}: not a shard ({type(error).__name__}: {error})") from error
    if keys.ndim != 1 or keys.dtype.kind != "U":
        raise DamagedShard(f"{path}: keys must be 1-d str, got {keys.dtype} {keys.shape}")
    if (vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) != len(keys)
            or (dim and vectors.shape[1] != dim)):
        raise DamagedShard(f"{path}: vectors must be float32 ({len(keys)}, {dim or 'dim'}), "
                           f"got {vectors.dtype} {vectors.shape}")
    return dict(zip(keys.tolist(), vectors, strict=True))


def read_cache(folder: Path, dim: int = 0) -> dict[str, np.ndarray]:
    """Every ``{key: vector}`` stored in one model's cache folder (for inspection: raises
    :class:`DamagedShard` where :class:`~course_lib.embeddings.CachedEmbedder` would warn and
    rebuild)."""
    vectors: dict[str, np.ndarray] = {}
    for path in sorted(Path(folder).glob("*.npz")):
        vectors.update(read_shard(path, dim))
    return vectors
