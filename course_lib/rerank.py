"""Reranking: retrieve wide, then re-order the candidates with a stronger scorer.

``Reranker('ModuleReranker', model=..., topk=...)`` scores ``(query, candidate)`` pairs
with ``model``, which may be

* a **cross-encoder** by hub name or local folder (sentence-transformers
  ``CrossEncoder``; ``backend="flag"`` for FlagEmbedding's ``FlagReranker``),
* a :class:`~course_lib.rerank_models.RerankEndpoint` (any Jina/Cohere-style ``/v1/rerank``
  HTTP service),
* any callable ``(query, texts) -> scores``,
* nothing: the offline default, :class:`FeatureReranker`.

``Reranker('KeywordFilter', required_keys=..., exclude_keys=...)`` filters without a
model, and ``register_reranker`` adds your own.

>>> nodes = [DocNode("猫喜欢鱼。", uid="a"), DocNode("狗喜欢骨头。", uid="b")]
>>> def shared_characters(query, texts):
...     return [len(set(query) & set(text)) for text in texts]
>>> rerank = Reranker("ModuleReranker", model=shared_characters, topk=1, output_format="content")
>>> rerank("狗喜欢什么？", nodes)
['狗喜欢骨头。']

The query comes first, ``reranker(query, nodes)``, as for every scorer ``(query, texts)``;
LazyLLM's order, ``reranker(nodes, query=...)``, raises a ``TypeError`` that says so.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._support.validation import check_int, check_number, is_number, validate_query, validate_topk
from .bm25 import BM25Stats, TermStats
from .coverage import coverage
from .index import as_embedder
from .node import DocNode
from .ranking import best_first, passes, round_score
from .rerank_models import CrossEncoderScorer, RerankEndpoint  # noqa: F401  (its old home)
from .scripts import to_simplified
from .text_splitter import split_sentences
from .text_tokens import TextCache, char_ngrams, chinese_tokens, english_tokens

Scorer = Callable[[str, list[str]], Sequence[float]]
OUTPUT_FORMATS = (None, "content", "dict")
_NOT_GIVEN: Any = object()  # a reranker's argument left out (None is a value: a wrong one)


# ---------------------------------------------------------------- the offline default
FEATURES = ("bm25_words", "bm25_chars", "term_coverage", "bigram_overlap",
            "dense", "best_sentence")


class FeatureReranker:
    """A deterministic, model-free reranker: six features, each turned into a z-score
    *within the candidate list*, averaged.

    For a query q and each candidate c:

    ``bm25_words``      BM25 of c for q's jieba words (English: words)
    ``bm25_chars``      BM25 of c for q's character unigrams + bigrams
    ``term_coverage``   share of q's words found in c, each word weighted by its idf
    ``bigram_overlap``  share of q's character bigrams found in c
    ``dense``           cosine of q and c (multilingual-e5-small, offline)
    ``best_sentence``   cosine of q and c's best-matching sentence

    With ``normalise_script=True`` both token features, the coverage and the bigram
    overlap read every text converted to Simplified first (:mod:`course_lib.scripts`),
    so a Simplified question scores a Traditional passage on its words, not on the few
    characters the two scripts share; the vector features read the texts as they are.

    A z-score says how far a candidate stands above the others on a feature, in units
    of their spread, so features on different scales add up fairly; the score is the
    mean z-score ("2.0" = two standard deviations above the pool, on average). The
    weights are equal — nothing is fitted — unless you pass ``weights`` (any finite
    numbers, negative ones included: fitted coefficients are welcome). Statistics for
    idf come from ``corpus`` (e.g. all paragraphs) or, without it, from the candidates.

    Memory: the token counts of candidate texts are kept in a least-recently-used
    :class:`~course_lib.text_tokens.TextCache` of at most ``CACHE_ENTRIES`` entries and
    ``cache_chars`` characters in all (each text twice, once for its words and once for
    its character n-grams; about 60 bytes per character: 1,000,000 ≈ 60 MB at most); a
    text over ``CACHE_TEXT_CHARS`` characters is counted each time, not kept. Queries
    are never kept: each is counted once per call. The unit vectors of a candidate and of
    its sentences are kept the same way, in :attr:`vectors` (e5: about 40 bytes per
    character, 1,000,000 ≈ 40 MB at most).
    """

    CACHE_ENTRIES, CACHE_CHARS, CACHE_TEXT_CHARS = 32_768, 1_000_000, 10_000

    def __init__(self, corpus: Sequence[str] | None = None, embedder: Any = "default",
                 language: str = "zh", weights: dict[str, float] | None = None,
                 cache_chars: int = CACHE_CHARS, normalise_script: bool = False) -> None:
        if language not in ("zh", "en"):
            raise ValueError(f"language must be 'zh' or 'en', got {language!r}")
        if weights is not None:
            if not isinstance(weights, dict):
                raise ValueError(f"weights must be a dict feature -> number (features are "
                                 f"{FEATURES}), got {type(weights).__name__}")
            unknown = sorted(set(weights) - set(FEATURES))
            if unknown:
                raise ValueError(f"unknown feature(s) {unknown}; features are {FEATURES}")
            for feature, weight in weights.items():
                if not is_number(weight) or not math.isfinite(weight):
                    raise ValueError(f"weights[{feature!r}] must be a finite number, "
                                     f"got {weight!r}")
        self.language = language
        self.normalise_script = bool(normalise_script)
        self.weights = {f: 1.0 for f in FEATURES} if weights is None else \
            {f: float(weights.get(f, 0.0)) for f in FEATURES}
        if embedder == "default":
            from .embeddings import default_embedder

            embedder = default_embedder()
        self.embedder = None if embedder is None else as_embedder(embedder)
        self.cache: TextCache[Counter[str]] = TextCache(
            self.CACHE_ENTRIES, check_int(cache_chars, "cache_chars", low=self.CACHE_TEXT_CHARS),
            self.CACHE_TEXT_CHARS)
        # each candidate's unit vector and its sentences', kept like the counts: a text
        # meets many queries, and looking its vectors up in the embedder's cache each
        # time costs more than all the other features (the same numbers either way)
        self.vectors: TextCache[tuple[np.ndarray, np.ndarray]] = TextCache(
            self.CACHE_ENTRIES, self.cache.max_chars, self.CACHE_TEXT_CHARS)
        self._corpus_stats = self._stats(corpus) if corpus is not None else None
        self.name = "feature-reranker"

    # -- statistics -------------------------------------------------------------
    def _count(self, kind: str, text: str, cached: bool = True) -> Counter[str]:
        """The token counts of ``text`` for ``kind`` (``"words"`` or ``"chars"``), not kept
        here; ``cached=False`` also keeps jieba's cache out of it (for queries)."""
        if self.normalise_script:
            text = to_simplified(text)
        if kind == "chars":
            return Counter(char_ngrams(text))
        if self.language == "zh":
            return Counter(chinese_tokens(text, cached=cached))
        return Counter(english_tokens(text))

    def _counts(self, kind: str, text: str) -> Counter[str]:
        """:meth:`_count`, kept in the bounded :attr:`cache` (do not change the result)."""
        return self.cache(text, lambda t: self._count(kind, t), kind)

    def _stats(self, texts: Sequence[str], terms: dict[str, set[str]] | None = None
               ) -> dict[str, TermStats]:
        """Document frequencies and mean length per token kind (only of ``terms`` if given)."""
        stats = {}
        for kind in ("words", "chars"):
            counts = [self._counts(kind, t) for t in texts]
            if terms is None:
                doc_freq = Counter(term for c in counts for term in c)
            else:  # only the query's terms matter: count, per text, those it holds
                wanted = terms[kind]
                doc_freq = Counter(term for c in counts for term in wanted & c.keys())
            lengths = [sum(c.values()) for c in counts]
            stats[kind] = TermStats(BM25Stats.of_lengths(lengths), doc_freq)
        return stats

    def prepare(self, texts: Sequence[str]) -> None:
        """Tokenise and embed ``texts`` (and their sentences) ahead of the first query."""
        for text in texts:
            self._counts("words", text)
            self._counts("chars", text)
        if self.embedder is not None and self._uses_vectors():
            self.embedder(list(texts) + [s for t in texts for s in candidate_sentences(t)])

    def _uses_vectors(self) -> bool:
        return bool(self.weights["dense"] or self.weights["best_sentence"])

    # -- features --------------------------------------------------------------
    def features(self, query: str, texts: list[str]) -> dict[str, np.ndarray]:
        """The raw (not yet z-scored) value of every feature for every candidate."""
        query_counts = {kind: self._count(kind, query, cached=False)
                        for kind in ("words", "chars")}
        query_terms = {kind: set(counts) for kind, counts in query_counts.items()}
        stats = self._corpus_stats or self._stats(texts, query_terms)
        values: dict[str, np.ndarray] = {}
        for kind, feature in (("words", "bm25_words"), ("chars", "bm25_chars")):
            terms = list(query_counts[kind].elements())
            values[feature] = np.array(stats[kind].bm25_all(
                terms, [self._counts(kind, t) for t in texts]))
        query_words = query_terms["words"]
        idf = {w: stats["words"].idf(w) for w in query_words}
        values["term_coverage"] = np.array(
            [coverage(query_words, self._counts("words", t), weights=idf) for t in texts])
        bigrams = {g for g in query_counts["chars"] if len(g) == 2}
        values["bigram_overlap"] = np.array(
            [coverage(bigrams, self._counts("chars", t)) for t in texts])
        if self.embedder is not None and self._uses_vectors():
            values.update(self._vector_features(query, texts))
        return values

    def _vector_features(self, query: str, texts: list[str]) -> dict[str, np.ndarray]:
        q = unit_rows(np.asarray(self.embedder.embed_query(query), dtype=np.float32)
                      .reshape(1, -1))[0]
        found = [self.vectors(text, self._passage_vectors, "vectors") for text in texts]
        passages = np.vstack([passage for passage, _ in found])
        sentences = [group for _, group in found]
        sentence_vectors = np.vstack(sentences)
        sentence_scores = sentence_vectors @ q
        best, start = [], 0
        for group in sentences:
            best.append(sentence_scores[start:start + len(group)].max(initial=-1.0))
            start += len(group)
        return {"dense": passages @ q, "best_sentence": np.array(best)}

    def _passage_vectors(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """``text``'s unit vector and its sentences' (one row each), for :attr:`vectors`."""
        vectors = unit_rows(np.asarray(self.embedder([text, *candidate_sentences(text)]),
                                       dtype=np.float32))
        return vectors[0], vectors[1:]

    def feature_matrix(self, query: str, texts: list[str]) -> np.ndarray:
        """``(len(texts), len(FEATURES))`` z-scores; a feature not computed is all zeros."""
        values = self.features(query, texts)
        return np.column_stack([zscore(values[f]) if f in values else np.zeros(len(texts))
                                for f in FEATURES])

    def __call__(self, query: str, texts: list[str]) -> np.ndarray:
        weights = np.array([self.weights[f] for f in FEATURES])
        if not self._uses_vectors() or self.embedder is None:
            weights[[FEATURES.index("dense"), FEATURES.index("best_sentence")]] = 0.0
        return self.feature_matrix(query, texts) @ weights / (weights.sum() or 1.0)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its length (a zero row stays zero).

    >>> unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def zscore(values: np.ndarray) -> np.ndarray:
    """``(x − mean) / std`` within the list; all zeros when the values do not vary."""
    values = np.asarray(values, dtype=np.float64)
    spread = values.std()
    return np.zeros_like(values) if spread == 0 else (values - values.mean()) / spread


@functools.lru_cache(maxsize=4096)  # a query meets ~40 candidates, most seen before
def candidate_sentences(text: str) -> tuple[str, ...]:
    """The sentences the reranker's ``best_sentence`` feature embeds, and the
    answerability detector too (so their e5 vectors are cached once): cut after 。！？!?
    and ". ", not at ；or a line break (:func:`~course_lib.text_splitter.split_sentences`);
    a text with no sentence is its own one.

    >>> candidate_sentences("长城很长！它在北京；很美。")
    ('长城很长！', '它在北京；很美。')
    """
    return tuple(split_sentences(text, ends="。！？!?", newlines=False,
                                 full_stop="space")) or (text,)


# ---------------------------------------------------------------- keyword filter
class KeywordFilter:
    """Keep nodes that contain the required keys and none of the excluded ones.

    ``mode='all'`` needs every required key (what LazyLLM's docs promise); ``'any'``
    needs one (what LazyLLM's code does). English keys match whole words, ignoring case;
    Chinese keys match as substrings. Call it as ``keyword_filter(query, nodes)``, the query
    first as for every reranker (it reads only the nodes, so ``query`` may be ``None``).
    """

    def __init__(self, required_keys: Sequence[str] = (), exclude_keys: Sequence[str] = (),
                 mode: str = "all", language: str = "zh") -> None:
        if mode not in ("all", "any"):
            raise ValueError(f"mode must be 'all' or 'any', got {mode!r}")
        if language not in ("zh", "en"):
            raise ValueError(f"language must be 'zh' or 'en', got {language!r}")
        for name, keys in (("required_keys", required_keys), ("exclude_keys", exclude_keys)):
            if isinstance(keys, str):
                raise TypeError(f"{name} must be a list of keys, got the string {keys!r}")
            if not isinstance(keys, (list, tuple, set, frozenset)):
                raise TypeError(f"{name} must be a list of keys (strings), "
                                f"got {type(keys).__name__}")
            for key in keys:
                if not isinstance(key, str):
                    raise TypeError(f"{name} must hold strings, got {type(key).__name__} "
                                    f"{key!r:.40}")
                if not key.strip():  # in every text: exclude_keys=[""] would drop everything
                    raise ValueError(f"{name} must hold non-empty strings, got {key!r}")
        self.required, self.excluded = list(required_keys), list(exclude_keys)
        self.mode, self.language = mode, language

    def _has(self, text: str, key: str) -> bool:
        if self.language == "en":
            return re.search(rf"\b{re.escape(key)}\b", text, flags=re.IGNORECASE) is not None
        return key in text

    def keep(self, node: DocNode) -> bool:
        if any(self._has(node.text, key) for key in self.excluded):
            return False
        if not self.required:
            return True
        found = [self._has(node.text, key) for key in self.required]
        return all(found) if self.mode == "all" else any(found)

    def __call__(self, query: Any = _NOT_GIVEN, nodes: Any = _NOT_GIVEN, /, **keywords: Any
                 ) -> list[DocNode]:
        query, nodes = _query_first(query, nodes, keywords)
        return [node for node in nodes if self.keep(node)]


# ---------------------------------------------------------------- registry and front door
RERANKERS: dict[str, tuple[Callable[..., Any], bool]] = {}


def register_reranker(func: Callable[..., Any] | None = None, *, batch: bool = False,
                      name: str | None = None) -> Any:
    """Register a custom reranker; usable as a decorator.

    ``batch=False``: ``func(node, query=..., **kwargs) -> node | None`` (None drops it).
    ``batch=True``: ``func(nodes, query=..., **kwargs) -> nodes``. When every returned
    node carries a score, the result is sorted by it, best first. ``func`` gets the query
    by keyword, as in LazyLLM; the ``Reranker(name)`` built on it is called, like every
    reranker, with the query first: ``Reranker(name)(query, nodes)``.
    """

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        key = name or fn.__name__
        if key in ("ModuleReranker", "KeywordFilter"):
            raise ValueError(f"{key!r} is a built-in reranker; choose another name")
        RERANKERS[key] = (fn, batch)
        return fn

    return register(func) if func is not None else register


class Reranker:
    """``Reranker(name, topk=..., output_format=..., join=..., **kwargs)``; call it as
    ``reranker(query, nodes)``: the query first, as for the scorers ``(query, texts)``
    (LazyLLM's order, ``reranker(nodes, query=...)``, raises a ``TypeError`` naming the fix).

    ``output_format``: ``None`` (nodes with ``.score``), ``'content'`` (texts) or
    ``'dict'`` (``{"content", "score", "uid", "metadata"}``, a copy of the metadata).
    ``join=True`` or a separator string joins the texts into one string (with
    ``output_format='content'`` only): ``True`` joins them with nothing between, as
    LazyLLM does, so a prompt is better served by a separator such as ``"\\n\\n"``. No
    candidate left gives ``[]``, or ``""`` when joined. ``score_cut_off`` keeps only nodes
    scoring strictly above it.

    >>> nodes = [DocNode("猫喜欢鱼。", uid="a"), DocNode("狗喜欢骨头。", uid="b")]
    >>> def shared(query, texts):
    ...     return [len(set(query) & set(text)) for text in texts]
    >>> Reranker(model=shared, output_format="content", join="\\n")("猫喜欢什么", nodes)
    '猫喜欢鱼。\\n狗喜欢骨头。'
    >>> Reranker(model=shared, topk=1, output_format="dict")("狗", nodes)
    [{'content': '狗喜欢骨头。', 'score': 1.0, 'uid': 'b', 'metadata': {}}]
    >>> Reranker(model=shared)(nodes, query="狗")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: call reranker(query, nodes): the query comes first (LazyLLM's order is ...)
    """

    def __init__(self, name: str = "ModuleReranker", *, model: Any = None,
                 topk: int | None = None, output_format: str | None = None,
                 join: bool | str = False, score_cut_off: float | None = None,
                 **kwargs: Any) -> None:
        if output_format not in OUTPUT_FORMATS:
            raise ValueError(f"output_format must be one of {OUTPUT_FORMATS}, "
                             f"got {output_format!r}")
        if not isinstance(join, (bool, str)):
            raise ValueError(f"join must be True, False or a separator string, got {join!r}")
        if join is not False and output_format != "content":
            raise ValueError(f"join needs output_format='content' (join makes one string of "
                             f"the texts); got output_format={output_format!r}")
        self.topk = None if topk is None else validate_topk(topk)
        self.name, self.output_format, self.join = name, output_format, join
        self.score_cut_off = (None if score_cut_off is None
                              else check_number(score_cut_off, "score_cut_off"))
        if name == "ModuleReranker":
            self.scorer = _as_scorer(model, **kwargs)
            self._rank = self._rank_with_model
        elif name == "KeywordFilter":
            self._filter = KeywordFilter(**kwargs)
            self._rank = lambda nodes, query: self._filter(query, nodes)
        elif name in RERANKERS:
            fn, batch = RERANKERS[name]
            self._rank = _registered(fn, batch, kwargs)
        else:
            raise ValueError(f"unknown reranker {name!r}; choose 'ModuleReranker', "
                             f"'KeywordFilter' or one of {sorted(RERANKERS)}")

    def _rank_with_model(self, nodes: list[DocNode], query: str) -> list[DocNode]:
        scores = np.asarray(self.scorer(query, [n.text for n in nodes]), dtype=np.float64)
        if scores.shape != (len(nodes),):
            raise ValueError(f"reranker model {_name(self.scorer)} must return one score per "
                             f"candidate: got {scores.size} scores for {len(nodes)} candidates")
        if np.isnan(scores).any():
            bad = np.flatnonzero(np.isnan(scores))[:5].tolist()
            raise ValueError(f"reranker model {_name(self.scorer)} must return a number per "
                             f"candidate: got NaN for candidates {bad}")
        order = best_first(scores)
        return [nodes[i].with_score(scores[i]) for i in order]

    def __call__(self, query: Any = _NOT_GIVEN, nodes: Any = _NOT_GIVEN, /, **keywords: Any
                 ) -> Any:
        query, nodes = _query_first(query, nodes, keywords)
        validate_query(query)
        nodes = _unique(nodes)
        ranked = self._rank(nodes, query) if nodes else []
        if self.score_cut_off is not None:
            ranked = [n for n in ranked if passes(n.score, self.score_cut_off)]
        if self.topk is not None:
            ranked = ranked[: self.topk]
        return self._format(ranked)

    def _format(self, nodes: list[DocNode]) -> Any:
        if self.output_format is None:
            return nodes
        if self.output_format == "dict":
            return [{"content": n.get_content(), "score": n.score, "uid": n.uid,
                     "metadata": dict(n.metadata)} for n in nodes]
        contents = [n.get_content() for n in nodes]
        if self.join is False:
            return contents
        return ("" if self.join is True else self.join).join(contents)


def _name(scorer: Any) -> str:
    return repr(getattr(scorer, "name", None) or getattr(scorer, "__name__", None)
                or type(scorer).__name__)


def _as_scorer(model: Any, backend: str = "sentence-transformers", **kwargs: Any) -> Scorer:
    if model is None:
        return FeatureReranker(**kwargs)
    if isinstance(model, (str, os.PathLike)):
        return CrossEncoderScorer(model, backend=backend, **kwargs)
    if callable(model):
        return model
    raise TypeError(f"model must be a model name or folder, a callable (query, texts) -> scores "
                    f"or None, got {type(model).__name__}")


def _registered(fn: Callable[..., Any], batch: bool, kwargs: dict[str, Any]
                ) -> Callable[[list[DocNode], str], list[DocNode]]:
    def rank(nodes: list[DocNode], query: str) -> list[DocNode]:
        if batch:
            result = fn(nodes, query=query, **kwargs)
        else:
            result = [fn(node, query=query, **kwargs) for node in nodes]
        if not isinstance(result, list) or not all(r is None or isinstance(r, DocNode)
                                                   for r in result):
            raise TypeError(f"reranker {fn.__name__!r} must return DocNodes (or None to drop)")
        kept = [r for r in result if r is not None]
        if all(r.score is not None for r in kept):  # scored: hand them back best first
            kept.sort(key=lambda r: -round_score(r.score))  # stable: ties keep their order
        return kept

    return rank


_OLD_ORDER = ("call reranker(query, nodes): the query comes first (LazyLLM's order is "
             "reranker(nodes, query=...))")


def _looks_like_nodes(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(n, DocNode) for n in value)


def _query_first(query: Any, nodes: Any, keywords: dict[str, Any]) -> tuple[Any, Any]:
    """A reranker's ``(query, nodes)`` from a call, the query first; LazyLLM's order
    (``reranker(nodes, query=...)``, ``reranker(nodes, "q")``, ``reranker(nodes)``) raises
    a ``TypeError`` saying so, rather than being silently accepted too."""
    unknown = sorted(set(keywords) - {"query", "nodes"})
    if unknown:
        raise TypeError(f"a reranker takes (query, nodes), got the keyword {unknown[0]!r}")
    if "query" in keywords:
        if query is not _NOT_GIVEN:  # reranker(nodes, query=...): the query twice
            raise TypeError(_OLD_ORDER)
        query = keywords["query"]
    if "nodes" in keywords:
        if nodes is not _NOT_GIVEN:
            raise TypeError(f"a reranker takes (query, nodes), got nodes twice; {_OLD_ORDER}")
        nodes = keywords["nodes"]
    if _looks_like_nodes(query) and (isinstance(nodes, str) or nodes is _NOT_GIVEN):
        raise TypeError(_OLD_ORDER)  # reranker(nodes, "q") or reranker(nodes)
    if nodes is _NOT_GIVEN:
        raise TypeError(f"a reranker needs the nodes to rank: {_OLD_ORDER}")
    return (None if query is _NOT_GIVEN else query), nodes


def _unique(nodes: Sequence[DocNode]) -> list[DocNode]:
    if isinstance(nodes, (str, bytes, DocNode)) or not isinstance(nodes, (list, tuple)):
        raise TypeError(f"nodes must be a list of DocNodes (what a retriever returns), "
                        f"got {type(nodes).__name__}")
    seen: dict[str, DocNode] = {}
    for node in nodes:
        if not isinstance(node, DocNode):
            raise TypeError(f"nodes must be a list of DocNodes, got a {type(node).__name__} "
                            f"in it: {node!r:.60}")
        seen.setdefault(node.uid, node)
    return list(seen.values())
