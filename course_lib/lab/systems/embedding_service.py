"""A stand-in embedding service on this machine, to practise custom endpoints offline.

:class:`EmbeddingService` is a real HTTP server on 127.0.0.1 (a background thread of this
process) in front of an embedder of this process — by default the course's e5. It stands
in for a vendor's embedding service: the network part is real (sockets, HTTP, JSON), the
vendor and its API are made up. It speaks two made-up dialects, on two routes:

``POST /v1/embed`` (the notebook's worked example)
    request ``{"model": str, "texts": [str, ...], "input_type": "query" | "passage"}``;
    reply ``{"model": str, "embeddings": [{"index": i, "embedding": [float, ...]}, ...]}``

``POST /v2/encode`` (the "try it")
    request ``{"inputs": [str, ...], "kind": "query" | "document"}``;
    reply ``{"result": {"dim": int, "vectors": [[float, ...], ...]}}``

A request it cannot read gets HTTP 400 with ``{"error": "..."}`` saying why; another path
gets 404. Vectors go out as JSON numbers, which carry a float32 exactly: a client gets
back the very vectors the embedder computed.

>>> from course_lib.embeddings import CharNgramSparseEmbedder
>>> EmbeddingService(CharNgramSparseEmbedder())
Traceback (most recent call last):
...
TypeError: EmbeddingService serves dense vectors; char-ngram-bm25-1-2 is sparse
"""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

import numpy as np

SIDES = {"/v1/embed": ("texts", "input_type", {"query": True, "passage": False}),
         "/v2/encode": ("inputs", "kind", {"query": True, "document": False})}


class EmbeddingService:
    """Serve ``embedder`` over HTTP on ``127.0.0.1`` (a free port) until :meth:`close`.

    ``url`` is the address to give a client, e.g. ``service.url + "/v1/embed"``. Usable
    as a context manager. Requests are answered one at a time (the embedder need not be
    thread-safe); ``requests`` keeps the decoded body of each, to look at.
    """

    def __init__(self, embedder: Any = None, model: str = "course-e5") -> None:
        if embedder is None:
            from ...embeddings import default_embedder

            embedder = default_embedder()
        if getattr(embedder, "sparse", False):
            raise TypeError(f"EmbeddingService serves dense vectors; {embedder.name} is sparse")
        self.embedder, self.model = embedder, model
        self.requests: list[dict[str, Any]] = []
        service = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length",
                                                                           0))))
                except ValueError:
                    return self._send(400, {"error": "the body is not JSON"})
                service.requests.append(body)
                if self.path not in SIDES:
                    return self._send(404, {"error": f"no route {self.path}; this service "
                                                     f"has {sorted(SIDES)}"})
                try:
                    texts, is_query = read_request(self.path, body)
                except ValueError as error:
                    return self._send(400, {"error": str(error)})
                vectors = service.embed(texts, is_query).tolist()
                if self.path == "/v1/embed":
                    return self._send(200, {"model": service.model, "embeddings": [
                        {"index": i, "embedding": v} for i, v in enumerate(vectors)]})
                dim = len(vectors[0]) if vectors else 0
                return self._send(200, {"result": {"dim": dim, "vectors": vectors}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # keep the notebook's output clean
                pass

        self._httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        """What the service computes: the embedder's query side (``embed_query``, one
        text at a time: a :class:`~course_lib.embeddings.CachedEmbedder` then keeps them
        in memory instead of writing a cache file for each request) or passage side."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        if is_query:
            return np.vstack([np.asarray(self.embedder.embed_query(t), dtype=np.float32)
                              for t in texts])
        return np.asarray(self.embedder.embed(texts), dtype=np.float32)

    def close(self) -> None:
        """Stop serving and free the port."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> EmbeddingService:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingService({self.url}, serving {self.embedder.name})"


def read_request(path: str, body: Any) -> tuple[list[str], bool]:
    """(texts, is_query) of a request ``body`` to route ``path``, or a ``ValueError``
    saying what the request lacks.

    >>> read_request("/v2/encode", {"inputs": ["茶"], "kind": "query"})
    (['茶'], True)
    >>> read_request("/v1/embed", {"texts": ["茶"]})
    Traceback (most recent call last):
    ...
    ValueError: input_type must be one of ['passage', 'query'], got None
    """
    texts_key, side_key, sides = SIDES[path]
    if not isinstance(body, dict):
        raise ValueError(f"the body must be a JSON object, got {type(body).__name__}")
    texts = body.get(texts_key)
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError(f"{texts_key} must be a list of strings, got {texts!r:.60}")
    if body.get(side_key) not in sides:
        raise ValueError(f"{side_key} must be one of {sorted(sides)}, got {body.get(side_key)!r}")
    return texts, sides[body[side_key]]
