"""Keep nodes and vectors in Milvus: Milvus Lite (a local folder) here, a Milvus server at scale.

``MilvusStore()`` opens Milvus Lite in ``data/cache/milvus.db`` (pip-installed, no server,
no network). ``MilvusStore(uri="http://milvus:19530", token=...)`` is the same code
against a Milvus server or Zilliz Cloud. Attach it to a document and ask a retriever
for ``index="milvus"``::

    doc = Document(texts=..., embed={"e5": default_embedder()}, store=MilvusStore())
    Retriever(doc, "paragraph", "cosine", index="milvus")

The first search of a (group, embed key) copies its vectors into a collection; later
searches, in this process or the next, go to Milvus.

Which collection holds which vectors
------------------------------------
One store (the default one is a single database shared by every notebook) holds the vectors
of many documents, so a collection is named after its *contents*:
``{prefix}_{group}_{key}_{fingerprint}``. The fingerprint is a SHA-256 of the group, the
embed key, the model's name, the metric, every node's uid and text, and the vectors
themselves as float32 (what Milvus stores). Two documents with the same group, key and
node count but other texts, or the same texts embedded by another model or at another
dimension, therefore get different collections, and neither is ever searched with the
other's vectors. A collection is used only if its ``course.fingerprint`` property is the
full fingerprint (the name carries only 16 hex digits of it) and it holds one row per
node; otherwise (a build interrupted half-way, say) it is built again.

Why one collection per fingerprint rather than one per (group, key) rebuilt when the
fingerprint changes: two documents searched in turn (A, B, A) would rebuild on every
switch — seconds for 10k nodes. To keep the file from growing with every edit of a
corpus, building a collection drops the oldest ones of the same (prefix, group, key)
beyond ``keep`` (default 3); an index whose collection was dropped so builds it again
on its next search. Collections of other groups, keys or prefixes, and any collection
this class did not make, are never touched.

What it does not do: Milvus knows nothing of a retriever's metadata filters, so a
filtered search asks Milvus for every row and filters here (a Milvus server refuses, by
default, more than 16,384 rows per search: filter through Milvus itself at that size).
The default ``AUTOINDEX`` is approximate, so a search may miss a true neighbour now and
then.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from .._support.validation import check_int
from ..ranking import top_k

METRICS = ("COSINE", "IP")
FINGERPRINT, GROUP, KEY, PREFIX, CREATED = (
    "course.fingerprint", "course.group", "course.key", "course.prefix", "course.created")


class MilvusStoreError(RuntimeError):
    """The Milvus Lite database cannot be opened; the message names the path and why."""


class MilvusVectorIndex:
    """The vectors of one node group in one Milvus collection, searched like every index.

    Made by :meth:`MilvusStore.vector_index`; row ``id`` is the node's position in the
    group's node list. It keeps (references to) that call's arguments, ``source``, to
    build the collection again if newer builds have dropped it (see ``keep``).
    """

    def __init__(self, store: MilvusStore, collection: str, dimension: int,
                 source: tuple[Any, ...]) -> None:
        self.store, self.collection, self.source = store, collection, source
        self.size, self.dimension, self.metric = len(source[2]), dimension, store.metric

    def __len__(self) -> int:
        return self.size

    def search(self, query: Any, k: int,
               mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best ``(ids, scores)`` among the nodes Milvus returns, best first.

        ``ids`` are int64 positions, ``scores`` float64 similarities, ordered by rounded
        score with ties by position (:func:`~course_lib.ranking.top_k`). ``mask`` (a
        boolean per node) excludes the ``False`` nodes; since Milvus cannot see it, a
        masked search asks Milvus for every row. Without a mask Milvus is asked for
        ``max(4k, 50)`` rows, so ties at the edge of its answer are ranked here.
        """
        k = check_int(k, "k", low=0)
        vector = np.asarray(query, dtype=np.float32).ravel()
        if vector.size != self.dimension:
            raise ValueError(f"query vector has dimension {vector.size} but collection "
                             f"{self.collection!r} holds {self.dimension}-dimensional vectors")
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if mask.shape != (self.size,):
                raise ValueError(f"mask must be a boolean array of shape ({self.size},), "
                                 f"got shape {mask.shape}")
        limit = self.size if mask is not None else min(self.size, max(4 * k, 50))
        if k == 0 or limit == 0 or (mask is not None and not mask.any()):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        try:
            hits = self._nearest(vector, limit)
        except Exception:
            if self.store.client.has_collection(self.collection):
                raise
            self.store.vector_index(*self.source)  # dropped by newer builds: build it again
            hits = self._nearest(vector, limit)
        scores = np.full(self.size, -np.inf)
        returned = np.zeros(self.size, dtype=bool)
        for hit in hits:
            scores[hit["id"]], returned[hit["id"]] = hit["distance"], True
        ids = top_k(scores, k, returned if mask is None else returned & mask).astype(np.int64)
        return ids, scores[ids]

    def _nearest(self, vector: np.ndarray, limit: int) -> list[dict[str, Any]]:
        return self.store.client.search(self.collection, data=[vector.tolist()], limit=limit,
                                        output_fields=["id"])[0]  # not the stored vectors


class MilvusStore:
    """Collections of node vectors in Milvus Lite (``uri`` ending in ``.db``) or a server.

    Each collection has the fields ``id`` (the node's position), ``uid`` and ``vector``
    and the store's ``metric``: ``"COSINE"`` or ``"IP"`` (inner product).
    """

    def __init__(self, uri: str | None = None, token: str | None = None,
                 prefix: str = "course", metric: str = "COSINE", batch_size: int = 1000,
                 keep: int = 3) -> None:
        from .._support.places import cache_dir

        if metric not in METRICS:
            raise ValueError(f"metric must be 'COSINE' or 'IP', got {metric!r}")
        if not re.fullmatch(r"[A-Za-z_]\w*", prefix, flags=re.ASCII):
            raise ValueError(f"prefix must be letters, digits and underscores, not starting "
                             f"with a digit (a Milvus collection name), got {prefix!r}")
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.keep = check_int(keep, "keep", low=1)
        if uri is None:
            cache_dir().mkdir(parents=True, exist_ok=True)
            uri = str(cache_dir() / "milvus.db")
        self.uri, self.prefix, self.metric = uri, prefix, metric
        self.client = _connect(uri, token or "")

    def vector_index(self, group: str, key: str, uids: list[str], texts: list[str],
                     vectors: np.ndarray, model: str) -> MilvusVectorIndex:
        """The collection holding exactly these vectors of these nodes, built if missing.

        ``vectors[i]`` belongs to the node ``uids[i]`` with text ``texts[i]``; ``model``
        names the embedder. Reuses a complete collection with the same fingerprint (see
        the module's docstring), otherwise builds one and drops old ones beyond ``keep``.
        """
        source = (group, key, uids, texts, vectors, model)
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or not len(uids) == len(texts) == len(vectors):
            raise ValueError(f"vectors must have one row per node: {len(uids)} uids, "
                             f"{len(texts)} texts, vectors of shape {vectors.shape}")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        fp = fingerprint(group, key, model, self.metric, uids, texts, vectors)
        name = self._name(group, key, fp)
        if not self._is_complete(name, fp, len(uids)):
            self._build(name, group, key, fp, uids, vectors)
        return MilvusVectorIndex(self, name, int(vectors.shape[1]), source)

    def collections(self, group: str, key: str) -> list[str]:
        """The collections this store's prefix made for (group, key), newest first."""
        found = []
        for name in self.client.list_collections():
            if not name.startswith(f"{self.prefix}_"):
                continue
            props = self.client.describe_collection(name).get("properties", {})
            if (props.get(PREFIX), props.get(GROUP), props.get(KEY)) == (self.prefix, group, key):
                found.append((int(props.get(CREATED, 0)), name))
        return [name for _, name in sorted(found, reverse=True)]

    def collection(self, group: str, key: str) -> str:
        """The newest collection for (group, key); ``ValueError`` if there is none yet."""
        names = self.collections(group, key)
        if not names:
            raise ValueError(f"no collection for group {group!r}, embed key {key!r} yet: "
                             f"search with index='milvus' first")
        return names[0]

    def count(self, group: str, key: str) -> int:
        """Rows in the newest collection for (group, key); 0 if there is none."""
        names = self.collections(group, key)
        return self._rows(names[0]) if names else 0

    def drop(self, group: str, key: str) -> None:
        """Drop every collection this store's prefix made for (group, key)."""
        for name in self.collections(group, key):
            self.client.drop_collection(name)

    def close(self) -> None:
        self.client.close()

    def _name(self, group: str, key: str, fp: str) -> str:
        readable = re.sub(r"\W", "_", f"{self.prefix}_{group}_{key}", flags=re.ASCII)
        return f"{readable[:200]}_{fp[:16]}"  # Milvus allows 255 characters

    def _rows(self, name: str) -> int:
        return int(self.client.get_collection_stats(name).get("row_count", 0))

    def _is_complete(self, name: str, fp: str, size: int) -> bool:
        if not self.client.has_collection(name):
            return False
        props = self.client.describe_collection(name).get("properties", {})
        return props.get(FINGERPRINT) == fp and self._rows(name) == size

    def _build(self, name: str, group: str, key: str, fp: str, uids: list[str],
               vectors: np.ndarray) -> None:
        from pymilvus import DataType

        if self.client.has_collection(name):
            self.client.drop_collection(name)  # left half-built by an interrupted run
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("uid", DataType.VARCHAR, max_length=65535)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=int(vectors.shape[1]))
        index = self.client.prepare_index_params()
        index.add_index("vector", index_type="AUTOINDEX", metric_type=self.metric)
        self.client.create_collection(
            name, schema=schema, properties={PREFIX: self.prefix, GROUP: group, KEY: key,
                                             FINGERPRINT: fp, CREATED: str(time.time_ns())})
        # sync=False: pymilvus would sleep half a second before asking whether it is built;
        # loading waits for it anyway.
        self.client.create_index(name, index, sync=False)
        self.client.load_collection(name)
        for start in range(0, len(uids), self.batch_size):
            stop = min(start + self.batch_size, len(uids))
            rows = [{"id": i, "uid": uids[i], "vector": row} for i, row in
                    zip(range(start, stop), vectors[start:stop].tolist(), strict=True)]
            self.client.insert(name, rows)
        self.client.flush(name)
        for old in self.collections(group, key)[self.keep:]:
            if old != name:
                self.client.drop_collection(old)


def fingerprint(group: str, key: str, model: str, metric: str, uids: list[str],
                texts: list[str], vectors: np.ndarray) -> str:
    """SHA-256 (hex) of everything a collection's contents depend on.

    >>> v = np.eye(2, dtype=np.float32)
    >>> a = fingerprint("g", "k", "m", "COSINE", ["a", "b"], ["x", "y"], v)
    >>> a == fingerprint("g", "k", "m", "COSINE", ["a", "b"], ["x", "z"], v)
    False
    """
    digest = hashlib.sha256()
    matrix = np.ascontiguousarray(vectors, dtype="<f4")  # float32, little-endian everywhere
    for part in ("v1", group, key, model, metric, str(matrix.shape), *uids, *texts):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little") + data)  # lengths: "ab"+"c" != "a"+"bc"
    digest.update(matrix.tobytes())
    return digest.hexdigest()


def _connect(uri: str, token: str) -> Any:
    """A ``MilvusClient`` for ``uri``; for Milvus Lite, an error that says why it failed.

    pymilvus reports any failure to start Milvus Lite as "Open local milvus failed";
    the reason (another process holds the database's lock, a permission error) only
    reaches Milvus Lite's log. So the folder is checked first, and the log is listened
    to while connecting.
    """
    from pymilvus import MilvusClient

    if not uri.endswith(".db"):  # a server: pymilvus's own errors name the address
        return MilvusClient(uri=uri, token=token)
    path = Path(uri).absolute()
    where = f"cannot open the Milvus Lite database {path}"
    if path.parent.exists() and not path.parent.is_dir():
        raise MilvusStoreError(f"{where}: {path.parent} is a file, not a folder "
                               f"(pass a uri inside a folder)")
    if not path.parent.is_dir():
        raise MilvusStoreError(f"{where}: the folder {path.parent} does not exist "
                               f"(create it, or pass another uri)")
    if path.exists() and not path.is_dir():
        raise MilvusStoreError(f"{where}: it is a file, but Milvus Lite keeps a database in "
                               f"a folder of that name (an older Milvus Lite's file?); "
                               f"move it away or pass another uri")
    writable = path if path.exists() else path.parent
    if not os.access(writable, os.W_OK | os.X_OK):
        raise MilvusStoreError(f"{where}: the folder {writable} is not writable "
                               f"(permission denied); pass a uri in a folder you can write")
    log = logging.getLogger("milvus_lite")
    listener, propagate = _Listener(), log.propagate
    log.addHandler(listener)
    log.propagate = False  # the reason is raised below; no traceback printed on the side
    try:
        return MilvusClient(uri=str(path), token=token)
    except Exception as error:
        raise MilvusStoreError(f"{where}: {_reason(listener.errors)}") from (
            listener.errors[-1] if listener.errors else error)
    finally:
        log.removeHandler(listener)
        log.propagate = propagate


class _Listener(logging.Handler):
    """Keeps the exceptions logged while it is attached."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.errors: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.errors.append(record.exc_info[1])


def _reason(errors: list[BaseException]) -> str:
    """Words for why Milvus Lite did not start, from what it logged."""
    if not errors:
        return "Milvus Lite did not start and logged no reason"
    error = errors[-1]
    if type(error).__name__ == "DataDirLockedError":
        return ("it is already opened by another process (Milvus Lite lets one process at "
                "a time use a database: stop the other Python process, e.g. shut down the "
                "other notebook's kernel, or pass another uri)")
    if isinstance(error, PermissionError):
        return f"the folder is not writable (permission denied: {error})"
    return f"{type(error).__name__}: {error}"
