"""Keep nodes and vectors in Milvus: Milvus Lite (a local file) here, a Milvus server at scale.

``MilvusStore()`` opens Milvus Lite in ``data/cache/milvus.db`` (pip-installed, no server,
no network). ``MilvusStore(uri="http://milvus:19530", token=...)`` is the same code
against a Milvus server or Zilliz Cloud. Attach it to a document and ask a retriever
for ``index="milvus"``::

    doc = Document(texts=..., embed={"e5": default_embedder()}, store=MilvusStore())
    Retriever(doc, "paragraph", "cosine", index="milvus")

The first search of a (group, embed key) copies its vectors into a collection; later
searches, in this process or the next, go to Milvus.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np


class MilvusStore:
    """One Milvus collection per (group, embed key): ``id`` (node position), ``uid``,
    ``vector``; cosine (or inner-product) metric."""

    def __init__(self, uri: str | None = None, token: str | None = None,
                 prefix: str = "course", metric: str = "COSINE", batch_size: int = 1000) -> None:
        from pymilvus import MilvusClient

        from .datasets import cache_dir

        if metric not in ("COSINE", "IP"):
            raise ValueError(f"metric must be 'COSINE' or 'IP', got {metric!r}")
        if uri is None:
            cache_dir().mkdir(parents=True, exist_ok=True)
            uri = str(cache_dir() / "milvus.db")
        self.uri, self.prefix, self.metric, self.batch_size = uri, prefix, metric, batch_size
        self.client = MilvusClient(uri=uri, token=token or "")

    def collection(self, group: str, key: str) -> str:
        """A legal collection name (letters, digits, underscores) for (group, key)."""
        return re.sub(r"\W", "_", f"{self.prefix}_{group}_{key}", flags=re.ASCII)

    def count(self, group: str, key: str) -> int:
        name = self.collection(group, key)
        if not self.client.has_collection(name):
            return 0
        return int(self.client.get_collection_stats(name).get("row_count", 0))

    def sync(self, group: str, key: str, uids: list[str], vectors: np.ndarray) -> None:
        """Make the collection hold exactly these vectors (rebuilt if the count differs)."""
        name = self.collection(group, key)
        if self.count(group, key) == len(uids):
            return
        if self.client.has_collection(name):
            self.client.drop_collection(name)
        self.client.create_collection(name, dimension=int(vectors.shape[1]),
                                      metric_type=self.metric)
        for start in range(0, len(uids), self.batch_size):
            rows = [{"id": i, "uid": uids[i], "vector": vectors[i].astype(float).tolist()}
                    for i in range(start, min(start + self.batch_size, len(uids)))]
            self.client.insert(name, rows)
        self.client.flush(name)

    def search(self, group: str, key: str, query: Any, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, scores)`` of the ``limit`` nearest vectors, best first."""
        name = self.collection(group, key)
        vector = np.asarray(query, dtype=np.float32).ravel().astype(float).tolist()
        hits = self.client.search(name, data=[vector], limit=limit)[0]
        ids = np.array([hit["id"] for hit in hits], dtype=np.int64)
        return ids, np.array([hit["distance"] for hit in hits], dtype=np.float64)

    def drop(self, group: str, key: str) -> None:
        name = self.collection(group, key)
        if self.client.has_collection(name):
            self.client.drop_collection(name)

    def close(self) -> None:
        self.client.close()
