"""Answerability: does the knowledge base hold the answer at all?

Retrieval always returns something, and the reranker's score is *relative* — a z-score
within the candidate pool (:class:`~course_lib.rerank.FeatureReranker`) — so the best of a
bad pool still stands out. Saying "the knowledge base does not contain this" needs an
*absolute* signal, one that means the same whatever else was retrieved.

:class:`AnswerabilityDetector` reads four signals from the candidates a system
retrieved — ``word_coverage`` (the idf-weighted share of the question's words found in a
candidate), ``bigram_coverage`` (the same for its character bigrams), ``best_sentence``
(e5's cosine of the question and the closest candidate sentence) and
``anchored_coverage`` (word coverage without function words, counted only in a line
that also holds every name the question asks about: a paragraph about someone else does
not answer a question about this one) — each the best over the candidates, combines
them with a logistic regression, and
declines below a threshold (:func:`choose_threshold`) chosen so that at most
``max_wrong`` of the answerable calibration questions are declined.

A fifth signal, ``asked_type`` (in :data:`KNOWN_SIGNALS`, not in the default :data:`SIGNALS`):
the best share of the question's content words in a sentence that holds every name of the
question *and* a filler of the type it asks for (:mod:`course_lib.asked_type`). Measured on
whole articles, it did not earn its place (notebook 12, section 10); the detector still reads
it as evidence, which :meth:`Verdict.explain` prints ("read, not scored").

``MultiPathRAG(..., answerability=detector)`` declines with :data:`course_lib.rag.DECLINED`
instead of answering. How well it separates the classes, measured on questions whose
answers were removed from the knowledge base, is the lab's job
(:mod:`course_lib.lab.measure.answerability_evaluation`, notebook 12).

>>> detector = AnswerabilityDetector(["长城东起山海关。", "故宫在北京。"], embedder=None,
...                                  signals=("word_coverage",))
>>> detector.signals("长城东起哪里？", ["长城东起山海关。"]).values
{'word_coverage': 1.0}
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._support.validation import check_number, validate_query
from .asked_type import asked_for, fillers
from .bm25 import BM25Stats
from .coverage import coverage, covered_terms
from .index import as_embedder
from .node import DocNode
from .offline_llm import content_terms
from .rerank import candidate_sentences
from .scripts import to_simplified
from .text_tokens import TextCache, char_ngrams, chinese_tokens
from .word_tags import function_words, named_entities

SIGNALS = ("word_coverage", "bigram_coverage", "best_sentence", "anchored_coverage")
# Measured, not in the default detector: it did not earn its place (notebook 12, section 10).
KNOWN_SIGNALS = (*SIGNALS, "asked_type")
# The detector before anchored coverage earned its place (kept for comparisons).
CLASSIC_SIGNALS = ("word_coverage", "bigram_coverage", "best_sentence")
SIGNAL_LABELS = {"word_coverage": "word coverage", "bigram_coverage": "bigram coverage",
                 "best_sentence": "best sentence (e5)",
                 "anchored_coverage": "anchored coverage", "asked_type": "asked-for type"}


def choose_threshold(answerable_scores: Sequence[float], max_wrong: float = 0.05) -> float:
    """A threshold that declines (score strictly below it) a new answerable question with
    chance at most ``max_wrong``: the k-th lowest of these ``n`` answerable scores,
    k = ⌊max_wrong · (n + 1)⌋.

    Why n + 1: a new answerable question scored like these is equally likely to land in
    any of the n + 1 places among them, so it falls below the k-th lowest with chance
    k / (n + 1) ≤ ``max_wrong`` (the split-conformal argument). Of the ``n`` themselves,
    k − 1 are declined. When k = 0 nothing may be declined: ``-inf``.

    >>> choose_threshold([0.1, 0.5, 0.6, 0.7, 0.8, 0.9, 0.91, 0.92, 0.93, 0.94], 0.2)
    0.5
    """
    max_wrong = check_number(max_wrong, "max_wrong", 0, 1)
    scores = np.sort(np.asarray(answerable_scores, dtype=np.float64))
    if scores.ndim != 1 or not len(scores) or not np.isfinite(scores).all():
        raise ValueError("answerable_scores must be a non-empty list of finite numbers")
    k = math.floor(max_wrong * (len(scores) + 1) + 1e-9)
    if k == 0:
        return -math.inf
    return math.inf if k > len(scores) else float(scores[k - 1])


# ---------------------------------------------------------------- the detector
def anchored_coverage(names: Sequence[str], words: Sequence[str] | dict[str, float],
                      line: str, weights: dict[str, float] | None = None) -> float:
    """The share of the question's content ``words`` found in ``line`` (weighted by
    ``weights``, e.g. idf; function words left out by the caller) — but 0.0 unless the
    line holds every one of the question's ``names``: evidence that co-occurs. A
    paragraph about someone else may share every other word; it does not answer.

    >>> anchored_coverage(["罗保铭"], ["毕业", "大学"], "山东女子学院是本科大学")
    0.0
    >>> anchored_coverage(["罗保铭"], ["毕业", "大学"], "罗保铭毕业于天津师范大学")
    1.0
    """
    lowered = line.lower()
    if not all(name in lowered for name in names):
        return 0.0
    return coverage(words, line, weights=weights, match="substring")


@dataclass
class Signals:
    """What the detector read from one question's candidates.

    ``values``: each signal, the best over the candidates. ``best``: the candidate with
    the highest word coverage (first on ties) — with ``anchored_coverage`` among the
    signals, the highest anchored coverage — at position ``best_rank`` among the
    candidates, with the question's content words it holds (``found``) and lacks
    (``missing``; function words not listed); ``anchors``: the question's names, which
    anchored coverage wants, all of them, in the same line as the rest; ``ignored``: its
    function words, which anchored coverage does not count (word coverage, the older
    signal, does); ``sentence``: the candidate sentence closest to the question
    by e5 ("" without that signal), from ``sentence_node``; ``asked``: the type the question
    asks for (:func:`~course_lib.asked_type.asked_for`, with the ``asked_type`` signal),
    ``filler`` the one found for it in ``filler_sentence`` ("" when no sentence holding the
    anchors has one).
    """

    values: dict[str, float]
    best: DocNode | None = None
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    sentence: str = ""
    sentence_node: DocNode | None = None
    best_rank: int | None = None          # ``best``'s position among the candidates, from 1
    anchors: list[str] = field(default_factory=list)   # the question's names
    ignored: list[str] = field(default_factory=list)   # its function words
    asked: str | None = None      # the asked-for type (asked_type signal)
    filler: str = ""              # the filler found for it ("" if none)
    filler_sentence: str = ""     # the sentence that holds it and the anchors
    asked_read: bool = False      # whether the asked-for type was read at all


@dataclass
class Verdict:
    """The detector's decision on one question, with its evidence (:meth:`explain`)."""

    question: str
    answerable: bool
    probability: float  # the detector's estimate that the answer is among the candidates
    threshold: float
    signals: Signals

    def explain(self, preview: int = 40) -> str:
        """A few lines: the decision, each signal, the best candidate and sentence."""
        decision = ("answer" if self.answerable else
                    "decline: the knowledge base does not seem to contain the answer")
        sign = "≥" if self.answerable else "<"
        lines = [f"{decision} (answerability {self.probability:.2f} {sign} threshold "
                 f"{self.threshold:.2f})"]
        evidence = self.signals
        shown = "anchored_coverage" if "anchored_coverage" in evidence.values else "word_coverage"
        for name, value in evidence.values.items():
            line = f"  {SIGNAL_LABELS.get(name, name):<19}{value:.2f}"
            if name == shown and evidence.best is not None:
                line += (f"  in candidate {evidence.best_rank} ({evidence.best.uid}): has "
                         f"{'、'.join(evidence.found) or 'none'}; lacks "
                         f"{'、'.join(evidence.missing) or 'none'}")
                if evidence.anchors and name == "anchored_coverage":
                    line += f"; anchor {'、'.join(evidence.anchors)}"
            if name == "best_sentence" and evidence.sentence:
                line += f"  「{_preview(evidence.sentence, preview)}」"
            lines.append(line)
        if evidence.asked_read:
            scored = "" if "asked_type" in evidence.values else " (read, not scored)"
            asked = f"a {evidence.asked}" if evidence.asked else "no type it names"
            names = "、".join(evidence.anchors) or "its words"
            held = (f"{evidence.filler} in 「{_preview(evidence.filler_sentence, preview)}」"
                    if evidence.filler else
                    f"no sentence with {names} holds one" if evidence.asked else
                    f"「{_preview(evidence.filler_sentence, preview)}」 holds {names}"
                    if evidence.filler_sentence else f"no sentence holds {names}")
            lines.append(f"  asks for{scored}: {asked} — {held}")
        if evidence.ignored:
            lines.append(f"  not counted (function words): {'、'.join(evidence.ignored)}")
        if evidence.best is None:
            lines.append("  no candidates were retrieved")
        return "\n".join(lines)


@dataclass
class LogisticModel:
    """A fitted logistic regression on standardised signals, kept as plain numbers, and
    its threshold: ``probabilities(matrix)`` below ``threshold`` are declined."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        """One probability per row of signals (columns in the order fitted)."""
        logits = ((matrix - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))


def fit_model(matrix: np.ndarray, answerable: Sequence[bool], max_wrong: float = 0.05,
              c: float = 1.0) -> LogisticModel:
    """Logistic regression (scikit-learn, L2 with strength ``1/c``) on the standardised
    columns of ``matrix`` (one row per question); the threshold from
    :func:`choose_threshold` on the fitted probabilities of the answerable rows.

    >>> model = fit_model(np.array([[0.9], [0.8], [0.7], [0.2], [0.1]]),
    ...                   [True, True, True, False, False], max_wrong=0.25)
    >>> model.probabilities(np.array([[0.85], [0.15]])).round(2).tolist(), model.threshold > 0.5
    ([0.83, 0.3], True)
    """
    from sklearn.linear_model import LogisticRegression

    matrix = np.asarray(matrix, dtype=np.float64)
    labels = np.asarray(answerable, dtype=bool)
    if matrix.ndim != 2 or len(matrix) != len(labels):
        raise ValueError(f"need one row of signals per question: got a matrix of shape "
                         f"{matrix.shape} for {len(labels)} labels")
    if labels.all() or not labels.any():
        raise ValueError("fitting needs answerable and unanswerable questions")
    mean, scale = matrix.mean(axis=0), matrix.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)  # a constant signal: leave it unscaled
    fitted = LogisticRegression(C=c, max_iter=1000).fit((matrix - mean) / scale, labels)
    model = LogisticModel(mean, scale, fitted.coef_[0].astype(np.float64),
                   float(fitted.intercept_[0]), 0.0)
    model.threshold = choose_threshold(model.probabilities(matrix)[labels], max_wrong)
    return model


class AnswerabilityDetector:
    """Is the answer to a question among its retrieved candidates? An absolute judgement.

    ``corpus`` (e.g. ``kb.paragraphs``) gives the words' and bigrams' idf. ``signals``
    chooses among :data:`SIGNALS`; ``best_sentence`` needs ``embedder`` (default: the
    course's cached e5). Each candidate is read line by line, so a long chunk is judged
    like the paragraphs it holds, and its sentences are split as the reranker splits
    them (their e5 vectors are then already in the cache).

    Unfitted, it computes :meth:`signals`; :meth:`fit` (or
    :func:`~course_lib.lab.systems.detector.fit_detector`) learns the weights and
    the threshold, after which calling it gives a :class:`Verdict`.
    """

    def __init__(self, corpus: Sequence[str], embedder: Any = "default",
                 signals: Sequence[str] = SIGNALS) -> None:
        if isinstance(corpus, str) or not all(isinstance(t, str) for t in corpus):
            raise TypeError("corpus must be a list of texts (e.g. kb.paragraphs)")
        if not corpus:
            raise ValueError("corpus is empty: give the knowledge base's paragraphs")
        if isinstance(signals, str):
            raise TypeError(f"signals must be a list of signal names, e.g. [{signals!r}]")
        unknown = [s for s in signals if s not in KNOWN_SIGNALS]
        if unknown or not signals or len(set(signals)) != len(signals):
            raise ValueError(f"signals must be distinct names among {KNOWN_SIGNALS}, got "
                             f"{list(signals)}")
        if embedder == "default":
            from .embeddings import default_embedder

            embedder = default_embedder() if "best_sentence" in signals else None
        if "best_sentence" in signals and embedder is None:
            raise ValueError("the best_sentence signal needs an embedder; leave it out of "
                             "signals for a lexical-only detector")
        self.signal_names = tuple(signals)
        self.embedder = None if embedder is None else as_embedder(embedder)
        self.model: LogisticModel | None = None
        self._bigrams: TextCache[frozenset[str]] = TextCache(32_768, 2_000_000, 20_000)
        self._set_corpus(corpus)

    def _set_corpus(self, corpus: Sequence[str]) -> None:
        words = [set(chinese_tokens(t)) for t in corpus]
        grams = [set(char_ngrams(t, (2,))) for t in corpus]
        self._stats = BM25Stats.of_lengths([len(w) for w in words])
        self._word_df = Counter(w for ws in words for w in ws)
        self._gram_df = Counter(g for gs in grams for g in gs)

    def with_corpus(self, corpus: Sequence[str]) -> AnswerabilityDetector:
        """The same detector (weights, threshold) with idf from another corpus — e.g.
        fitted on a knowledge base with paragraphs held out, used on the whole one."""
        other = copy.copy(self)
        other._bigrams = TextCache(32_768, 2_000_000, 20_000)
        other._set_corpus(corpus)
        return other

    @property
    def fitted(self) -> bool:
        return self.model is not None

    @property
    def threshold(self) -> float:
        return self._require_model().threshold

    def weights(self) -> dict[str, float]:
        """The fitted weight of each signal (on standardised signals: comparable)."""
        model = self._require_model()
        return {name: round(float(w), 3) for name, w in zip(self.signal_names, model.coef,
                                                             strict=True)}

    # -- signals -------------------------------------------------------------------
    def _idf(self, doc_freq: Counter[str], term: str) -> float:
        return float(self._stats.idf(doc_freq.get(term, 0)))

    @staticmethod
    def anchors(question: str) -> list[str]:
        """The names a candidate must hold, all of them, for anchored coverage: the
        question's :func:`~course_lib.word_tags.named_entities`, lower-cased (none for a
        question that names nothing: its coverage then needs no anchor).

        >>> AnswerabilityDetector.anchors("罗保铭本科毕业于哪所大学？")
        ['罗保铭']
        """
        return [name.lower() for name, _ in named_entities(question)]

    def signals(self, question: str, candidates: Sequence[DocNode | str],
                read_asked: bool = True) -> Signals:
        """Each signal's best value over ``candidates`` (0.0 when there are none). With
        anchored coverage among the signals, the asked-for type is read as evidence too
        (``read_asked=False``: not, unless it is scored — for tables of signals)."""
        validate_query(question)
        nodes = _as_nodes(candidates)
        terms = list(dict.fromkeys(content_terms(question)))
        ignored = function_words(question)
        words = {w: self._idf(self._word_df, w) for w in terms}
        grams = {g: self._idf(self._gram_df, g)
                 for g in dict.fromkeys(char_ngrams(question, (2,)))}
        content = {w: idf for w, idf in words.items() if w not in ignored}
        anchored = "anchored_coverage" in self.signal_names
        anchors = self.anchors(question) if anchored else []
        best_words, best_grams, best_anchored = -1.0, 0.0, -1.0
        best: tuple[int, DocNode, str] | None = None
        units = [(rank, node, unit) for rank, node in enumerate(nodes, 1)
                 for unit in _lines(node.text)]
        for rank, node, unit in units:
            # A word counts wherever it occurs in the line, as notebook 09's term_coverage.
            covered = coverage(words, unit, weights=words, match="substring")
            if covered > best_words:
                best_words = covered
                if not anchored:
                    best = (rank, node, unit)
            if anchored:
                value = anchored_coverage(anchors, content, unit, weights=content)
                if value > best_anchored:
                    best_anchored, best = value, (rank, node, unit)
            unit_grams = self._bigrams(unit, lambda t: frozenset(char_ngrams(t, (2,))))
            best_grams = max(best_grams, coverage(grams, unit_grams, weights=grams))
        values = {"word_coverage": max(best_words, 0.0), "bigram_coverage": best_grams,
                  "anchored_coverage": max(best_anchored, 0.0)}
        found = covered_terms(content, best[2], match="substring") if best else []
        evidence = Signals({}, best[1] if best else None, found,
                           [w for w in content if w not in found],
                           best_rank=best[0] if best else None, anchors=anchors,
                           ignored=[w for w in terms if w in ignored])
        if "asked_type" in self.signal_names or (anchored and read_asked):  # or as evidence
            values["asked_type"] = self._asked_type(question, [u for _, _, u in units],
                                                    content, evidence)
        if "best_sentence" in self.signal_names:
            values["best_sentence"] = self._best_sentence(
                question, [(node, unit) for _, node, unit in units], evidence)
        evidence.values = {name: round(float(values[name]), 6) for name in self.signal_names}
        return evidence

    @staticmethod
    def _asked_type(question: str, units: list[str], content: dict[str, float],
                    evidence: Signals) -> float:
        """The asked_type signal: over the candidates' sentences that hold every name of
        the question and a filler of the type it asks for (any sentence holding the names
        when the type is unknown), the best share of its content words — all read in
        Simplified, so a question in either script binds to a text in either."""
        kind = asked_for(question)
        names = [to_simplified(name) for name in AnswerabilityDetector.anchors(question)]
        words = {to_simplified(word): idf for word, idf in content.items()}
        evidence.asked, evidence.asked_read, best = kind, True, 0.0
        for unit in units:
            for sentence in candidate_sentences(unit):
                simplified = to_simplified(sentence).lower()
                if not all(name in simplified for name in names):
                    continue
                held = fillers(kind, simplified, question) if kind else []
                if kind and not held:
                    continue
                value = coverage(words, simplified, weights=words, match="substring")
                if value > best or not evidence.filler_sentence:
                    best, filler = value, (held or [""])[0]
                    at = simplified.find(filler) if len(simplified) == len(sentence) else -1
                    # shown in the candidate's own script where the two align
                    evidence.filler = sentence[at:at + len(filler)] if at >= 0 else filler
                    evidence.filler_sentence = sentence
        return best

    def _best_sentence(self, question: str, units: list[tuple[DocNode, str]],
                       evidence: Signals) -> float:
        sentences = [(node, s) for node, unit in units for s in candidate_sentences(unit)]
        if not sentences:
            return 0.0
        query = np.asarray(self.embedder.embed_query(question), dtype=np.float64)
        vectors = np.asarray(self.embedder([s for _, s in sentences]), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
        cosines = vectors @ query / np.maximum(norms, 1e-12)
        best = int(np.argmax(cosines))
        evidence.sentence_node, evidence.sentence = sentences[best]
        return float(cosines[best])

    def signal_matrix(self, questions: Sequence[Any],
                      candidates: Sequence[Sequence[DocNode | str]]) -> np.ndarray:
        """``(len(questions), len(signal_names))``: the signals of every question."""
        texts = [getattr(q, "question", q) for q in questions]  # a Question or its text
        if len(texts) != len(candidates):
            raise ValueError(f"{len(texts)} questions but {len(candidates)} candidate lists")
        return np.array([[self.signals(q, c, read_asked=False).values[name]
                           for name in self.signal_names]
                         for q, c in zip(texts, candidates, strict=True)],
                        dtype=np.float64).reshape(len(texts), len(self.signal_names))

    # -- fitting and deciding ----------------------------------------------------------
    def fit(self, questions: Sequence[Any],
            candidates: Sequence[Sequence[DocNode | str]], answerable: Sequence[bool],
            max_wrong: float = 0.05) -> AnswerabilityDetector:
        """Learn the weights and the threshold from labelled questions; returns ``self``."""
        return self.fit_signals(self.signal_matrix(questions, candidates), answerable,
                                max_wrong)

    def fit_signals(self, matrix: np.ndarray, answerable: Sequence[bool],
                    max_wrong: float = 0.05) -> AnswerabilityDetector:
        """:meth:`fit` from signals already computed (:meth:`signal_matrix`)."""
        matrix = np.asarray(matrix, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[1] != len(self.signal_names):
            raise ValueError(f"matrix must have one column per signal {self.signal_names}, "
                             f"got shape {matrix.shape}")
        self.model = fit_model(matrix, answerable, max_wrong)
        return self

    def _require_model(self) -> LogisticModel:
        if self.model is None:
            raise ValueError("this detector is not fitted yet: call fit(...) first, or build "
                             "a fitted one with fit_detector(kb)")
        return self.model

    def probability(self, question: str, candidates: Sequence[DocNode | str]) -> float:
        """The detector's estimate that the answer is among ``candidates``."""
        return self(question, candidates).probability

    def __call__(self, question: str, candidates: Sequence[DocNode | str]) -> Verdict:
        model = self._require_model()
        evidence = self.signals(question, candidates)
        row = np.array([[evidence.values[name] for name in self.signal_names]])
        probability = round(float(model.probabilities(row)[0]), 6)
        return Verdict(question, probability >= model.threshold, probability,
                       model.threshold, evidence)

    def __repr__(self) -> str:
        state = f"threshold={self.model.threshold:.3f}" if self.model else "not fitted"
        return f"AnswerabilityDetector(signals={list(self.signal_names)}, {state})"


def _as_nodes(candidates: Sequence[DocNode | str]) -> list[DocNode]:
    if isinstance(candidates, (str, DocNode)) or not isinstance(candidates, (list, tuple)):
        raise TypeError(f"candidates must be a list of DocNodes or texts, got "
                        f"{type(candidates).__name__}")
    nodes = []
    for i, candidate in enumerate(candidates):
        if isinstance(candidate, DocNode):
            nodes.append(candidate)
        elif isinstance(candidate, str):
            nodes.append(DocNode(candidate, uid=f"candidate {i + 1}"))
        else:
            raise TypeError(f"candidates must hold DocNodes or texts, got a "
                            f"{type(candidate).__name__} at position {i}")
    return nodes


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _preview(text: str, width: int) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[:width] + "…"
