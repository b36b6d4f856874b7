"""Answerability: does the knowledge base hold the answer at all?

Retrieval always returns something, and the reranker's score is *relative* — a z-score
within the candidate pool (:class:`~course_lib.rerank.FeatureReranker`) — so the best of a
bad pool still stands out. Saying "the knowledge base does not contain this" needs an
*absolute* signal, one that means the same whatever else was retrieved:

* :func:`answerability_set` builds an evaluation set whose missing answers are known: a
  seeded share of the knowledge base's paragraphs is removed, so **every question of a
  removed paragraph becomes unanswerable** (the right reply is "not in the knowledge
  base"); the other questions stay answerable. Questions are dealt into folds by paragraph.
* :class:`AnswerabilityDetector` reads three signals from the candidates a system
  retrieved — ``word_coverage`` (the idf-weighted share of the question's content words
  found in a candidate), ``bigram_coverage`` (the same for its character bigrams) and
  ``best_sentence`` (e5's cosine of the question and the closest candidate sentence) —
  each the best over the candidates, combines them with a logistic regression, and
  declines below a threshold chosen so that at most ``max_wrong`` of the answerable
  calibration questions are declined.
* :func:`cross_validate` fits on the calibration folds and scores the held-out report
  fold, each fold in turn: nothing is fitted on the questions it is scored on.

``MultiPathRAG(..., answerability=detector)`` and ``chapter_rag(kb, answerability=...)``
decline with :data:`course_lib.rag.DECLINED` instead of answering.

>>> detector = AnswerabilityDetector(["长城东起山海关。", "故宫在北京。"], embedder=None,
...                                  signals=("word_coverage",))
>>> detector.signals("长城东起哪里？", ["长城东起山海关。"]).values
{'word_coverage': 1.0}
>>> auroc([0.9, 0.8, 0.3, 0.1], [True, True, False, False])
1.0
"""

from __future__ import annotations

import copy
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .bm25 import BM25Stats
from .datasets import KnowledgeBase, Question, SquadSet, build_knowledge_base
from .node import DocNode
from .offline_llm import content_terms
from .rerank import _sentences as reranker_sentences
from .text_tokens import TextCache, char_ngrams, chinese_tokens
from .validation import check_int, check_number, validate_query

SIGNALS = ("word_coverage", "bigram_coverage", "best_sentence")
SIGNAL_LABELS = {"word_coverage": "word coverage", "bigram_coverage": "bigram coverage",
                 "best_sentence": "best sentence (e5)"}


# ---------------------------------------------------------------- the evaluation set
@dataclass
class AnswerabilitySet:
    """Questions with known answerability, and the knowledge base they are asked of.

    ``kb`` is the knowledge base *without* the held-out paragraphs (its ``questions`` are
    the answerable ones, their ``file_name`` and offsets pointing into it).
    ``questions`` holds every question, in the original order; ``answerable[i]`` says
    whether question i's paragraph is still in ``kb``; the unanswerable ones keep the
    ``file_name`` of the original knowledge base. ``folds[i]`` is question i's fold: all
    questions of one paragraph share a fold, and each fold has about the same share of
    removed paragraphs. ``held_out`` lists the removed paragraphs' texts.
    """

    kb: KnowledgeBase
    questions: list[Question]
    answerable: list[bool]
    folds: list[int]
    held_out: list[str]
    seed: int
    n_folds: int

    def report_fold(self, fold: int) -> list[int]:
        """Indices of the questions scored in ``fold`` (the others calibrate)."""
        fold = check_int(fold, "fold", 0, self.n_folds - 1)
        return [i for i, f in enumerate(self.folds) if f == fold]

    def summary(self) -> str:
        """One line: what was removed and how many questions of each kind there are."""
        n_answerable = sum(self.answerable)
        return (f"{len(self.held_out)} of {len(self.held_out) + len(self.kb.paragraphs)} "
                f"paragraphs removed (seed {self.seed}): {n_answerable} answerable and "
                f"{len(self.questions) - n_answerable} unanswerable questions, "
                f"{self.n_folds} folds by paragraph")


def answerability_set(kb: KnowledgeBase, held_out: float = 0.3, folds: int = 5,
                      seed: int = 0, docs_per_file: int = 10) -> AnswerabilitySet:
    """Remove a seeded share ``held_out`` of the paragraphs that questions point at,
    rebuild the knowledge base without them (``docs_per_file`` per file, as
    :func:`~course_lib.datasets.build_knowledge_base`), and label each question.

    All questions of a removed paragraph become unanswerable — even one whose answer
    happens to be written in another paragraph too (the label is then wrong; notebook 12
    reads a near case). Paragraphs are told apart by their text, so two equal paragraphs
    go together. The questions are copies: ``kb`` is unchanged.

    >>> from course_lib.datasets import load_cmrc2018_kb             # doctest: +SKIP
    >>> print(answerability_set(load_cmrc2018_kb()).summary())       # doctest: +SKIP
    77 of 256 paragraphs removed (seed 0): ...
    """
    if not isinstance(kb, KnowledgeBase):
        raise TypeError(f"kb must be a KnowledgeBase (load_cmrc2018_kb()), got "
                        f"{type(kb).__name__}")
    held_out = check_number(held_out, "held_out", 0, 1)
    folds = check_int(folds, "folds", low=2)
    seed = check_int(seed, "seed")
    asked = list(dict.fromkeys(q.paragraph for q in kb.questions))  # in first-asked order
    count = round(held_out * len(asked))
    if min(count, len(asked) - count) < folds:
        raise ValueError(
            f"held_out={held_out} of the {len(asked)} paragraphs with questions removes "
            f"{count} and keeps {len(asked) - count}: each side needs at least folds={folds} "
            "paragraphs (one per fold); use a larger knowledge base, fewer folds or another "
            "held_out")
    rng = random.Random(seed)
    removed = set(rng.sample(asked, count))
    ids = {text: f"p{i}" for i, text in reversed(list(enumerate(kb.paragraphs)))}
    copies = [replace(q, answers=list(q.answers), answer_starts=list(q.answer_starts))
              for q in kb.questions]
    kept_questions = [replace(q, paragraph_id=ids[q.paragraph])
                      for q in copies if q.paragraph not in removed]
    kept_ids = {q.id for q in kept_questions}
    squad = SquadSet([(ids[t], t) for t in dict.fromkeys(kb.paragraphs) if t not in removed],
                     kept_questions, skipped=list(kb.skipped),
                     fixed_offsets=[i for i in kb.fixed_offsets if i in kept_ids])
    reduced = build_knowledge_base(squad, docs_per_file)
    # Folds by paragraph (a question's neighbours share its candidates), dealt separately
    # from the removed and the kept paragraphs so every fold has both kinds.
    fold_of: dict[str, int] = {}
    for group in (sorted(removed, key=asked.index), [t for t in asked if t not in removed]):
        group = list(group)
        rng.shuffle(group)
        fold_of.update({text: i % folds for i, text in enumerate(group)})
    kept = iter(kept_questions)  # the reduced knowledge base's own question objects
    questions = [next(kept) if q.paragraph not in removed else q for q in copies]
    return AnswerabilitySet(reduced, questions, [q.paragraph not in removed for q in questions],
                            [fold_of[q.paragraph] for q in questions],
                            [t for t in asked if t in removed], seed, folds)


def retrieve_candidates(data: AnswerabilitySet, pipeline: str = "hybrid-rrf"
                        ) -> list[list[DocNode]]:
    """Every question's candidates from ``pipeline`` (a registered name) run on the
    reduced knowledge base ``data.kb``.

    The default, ``hybrid-rrf`` (words + characters + e5, fused by reciprocal rank, top
    5), holds the gold paragraph about as often as the reranked pipelines and costs a
    tenth of ``multipath-rerank``; the detector takes the best of each signal over the
    candidates, so their order matters little (notebook 12 checks the detector on the
    reranked candidates of ``chapter_rag`` too)."""
    from .embeddings import expected_queries
    from .pipelines import build_pipeline

    retrieve = build_pipeline(pipeline, data.kb).retrieve
    with expected_queries([q.question for q in data.questions]):  # one e5 batch, cached
        return [list(retrieve(q.question)) for q in data.questions]


# ---------------------------------------------------------------- metrics
def auroc(scores: Sequence[float], answerable: Sequence[bool]) -> float:
    """Area under the ROC curve: the chance that a random answerable question scores
    above a random unanswerable one (ties count half). 1.0 separates them perfectly,
    0.5 is chance.

    >>> auroc([0.9, 0.5, 0.5, 0.1], [True, True, False, False])
    0.875
    """
    from scipy.stats import rankdata

    scores, labels = _scores_and_labels(scores, answerable)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if not n_pos or not n_neg:
        raise ValueError(f"auroc needs answerable and unanswerable questions, got {n_pos} "
                         f"answerable and {n_neg} unanswerable")
    ranks = rankdata(scores)  # ties get their average rank: they count half
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


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


def decline_rates(scores: Sequence[float], answerable: Sequence[bool], threshold: float
                  ) -> dict[str, float]:
    """Declining every score below ``threshold``: the share of unanswerable questions
    declined (``declined``) and of answerable ones declined (``wrongly_declined``).

    >>> decline_rates([0.9, 0.2, 0.4, 0.1], [True, True, False, False], 0.3)
    {'declined': 0.5, 'wrongly_declined': 0.5}
    """
    scores, labels = _scores_and_labels(scores, answerable)
    declined = scores < threshold
    return {"declined": float(declined[~labels].mean()) if (~labels).any() else math.nan,
            "wrongly_declined": float(declined[labels].mean()) if labels.any() else math.nan}


def roc_table(scores: Sequence[float], answerable: Sequence[bool],
              wrong: Sequence[float] = (0.01, 0.02, 0.05, 0.1)) -> list[dict[str, float]]:
    """Points of the trade-off curve: for each share in ``wrong``, the threshold that
    declines at most that share of these answerable questions, and what it declines.
    The thresholds are read off the scores themselves — a description of the curve, not
    a calibrated promise (for that, :func:`cross_validate`).

    >>> roc_table([0.9, 0.8, 0.3, 0.1], [True, True, False, False], wrong=(0.5,))
    [{'max_wrong': 0.5, 'threshold': 0.8, 'declined': 1.0, 'wrongly_declined': 0.0}]
    """
    scores, labels = _scores_and_labels(scores, answerable)
    rows = []
    for share in wrong:
        threshold = choose_threshold(scores[labels], share)
        rows.append({"max_wrong": share, "threshold": round(threshold, 4),
                     **decline_rates(scores, labels, threshold)})
    return rows


def _scores_and_labels(scores: Sequence[float], answerable: Sequence[bool]
                       ) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(answerable)
    if values.ndim != 1 or values.shape != labels.shape:
        raise ValueError(f"scores and answerable must be two lists of the same length, got "
                         f"{values.shape} and {labels.shape}")
    if labels.dtype != np.bool_:
        raise ValueError(f"answerable must hold True/False, got {labels.dtype}")
    if not np.isfinite(values).all():
        raise ValueError("scores must be finite numbers")
    return values, labels


def threshold_rule_test(rule: Callable[[Sequence[float], float], float]) -> bool | str:
    """For the notebook's "try it": does ``rule(answerable_scores, max_wrong)`` decline
    (scores strictly below it) the same scores as :func:`choose_threshold` — the k-th
    lowest score, k = ⌊max_wrong · (n + 1)⌋? ``True``, or what is wrong.

    >>> threshold_rule_test(choose_threshold)
    True
    >>> threshold_rule_test(lambda scores, max_wrong: min(scores))
    'with max_wrong=0.05 and 100 scores it declines 0 of them; the rule declines 4 (k = 5)'
    """
    rng = np.random.default_rng(0)
    for n, max_wrong in ((100, 0.05), (40, 0.1), (7, 0.05), (250, 0.02)):
        scores = [round(float(x), 3) for x in rng.random(n)]
        threshold = rule(list(scores), max_wrong)
        if not isinstance(threshold, (int, float, np.floating, np.integer)):
            return f"it returned {type(threshold).__name__}, not a number"
        below = sum(s < threshold for s in scores)
        expected = sum(s < choose_threshold(scores, max_wrong) for s in scores)
        if below != expected:
            k = math.floor(max_wrong * (n + 1) + 1e-9)
            return (f"with max_wrong={max_wrong} and {n} scores it declines {below} of them; "
                    f"the rule declines {expected} (k = {k})")
    return True


def coverage_rule_test(best_coverage: Callable[[str, Sequence[DocNode]], float]
                       ) -> bool | str:
    """For the notebook's "try it": does ``best_coverage(question, candidates)`` give
    notebook 09's ``term_coverage(question, text)`` of the best candidate (0.0 for none)?
    ``True``, or the first case it gets wrong.

    >>> from course_lib.offline_llm import term_coverage
    >>> coverage_rule_test(lambda q, nodes: max((term_coverage(q, n.text) for n in nodes),
    ...                                         default=0.0))
    True
    >>> coverage_rule_test(lambda q, nodes: term_coverage(q, nodes[0].text))[:40]
    'best_coverage("故宫在哪个城市？", 2 candidates) '
    """
    from .offline_llm import term_coverage

    cases = [("长城东起哪里？", ["长城东起山海关。"]),
             ("故宫在哪个城市？", ["长城东起山海关。", "故宫在北京，北京是一个城市。"]),
             ("西湖在哪里？", ["西湖在杭州。", "西湖的湖水很清。", "杭州有西湖。"]),
             ("《茶经》的作者是谁？", ["长城东起山海关。"]),
             ("长城东起哪里？", [])]
    for question, texts in cases:
        nodes = [DocNode(t, uid=f"n{i}") for i, t in enumerate(texts)]
        expected = max((term_coverage(question, t) for t in texts), default=0.0)
        try:
            got = best_coverage(question, nodes)
        except Exception as error:  # the learner's code raised: say on which case
            return (f'best_coverage("{question}", {len(nodes)} candidates) raised '
                    f"{type(error).__name__}: {error}")
        if not isinstance(got, (int, float, np.floating)) or abs(got - expected) > 1e-9:
            return (f'best_coverage("{question}", {len(nodes)} candidates) gave {got!r}, '
                    f"expected {expected:.3f} (the best term_coverage over the candidates' "
                    "texts, 0.0 without candidates)")
    return True


# ---------------------------------------------------------------- the detector
@dataclass
class Signals:
    """What the detector read from one question's candidates.

    ``values``: each signal, the best over the candidates. ``best``: the candidate with
    the highest word coverage (first on ties), with the question's content words it holds
    (``found``) and lacks (``missing``); ``sentence``: the candidate sentence closest to
    the question by e5 ("" without that signal), from ``sentence_node``.
    """

    values: dict[str, float]
    best: DocNode | None = None
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    sentence: str = ""
    sentence_node: DocNode | None = None


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
        for name, value in evidence.values.items():
            line = f"  {SIGNAL_LABELS.get(name, name):<19}{value:.2f}"
            if name == "word_coverage" and evidence.best is not None:
                line += (f"  in {evidence.best.uid or 'the best candidate'}: has "
                         f"{'、'.join(evidence.found) or 'none'}; lacks "
                         f"{'、'.join(evidence.missing) or 'none'}")
            if name == "best_sentence" and evidence.sentence:
                text = evidence.sentence.replace("\n", " ")
                line += f"  「{text if len(text) <= preview else text[:preview] + '…'}」"
            lines.append(line)
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

    Unfitted, it computes :meth:`signals`; :meth:`fit` (or :func:`fit_detector`) learns
    the weights and the threshold, after which calling it gives a :class:`Verdict`.
    """

    def __init__(self, corpus: Sequence[str], embedder: Any = "default",
                 signals: Sequence[str] = SIGNALS) -> None:
        if isinstance(corpus, str) or not all(isinstance(t, str) for t in corpus):
            raise TypeError("corpus must be a list of texts (e.g. kb.paragraphs)")
        if not corpus:
            raise ValueError("corpus is empty: give the knowledge base's paragraphs")
        if isinstance(signals, str):
            raise TypeError(f"signals must be a list of signal names, e.g. [{signals!r}]")
        unknown = [s for s in signals if s not in SIGNALS]
        if unknown or not signals or len(set(signals)) != len(signals):
            raise ValueError(f"signals must be distinct names among {SIGNALS}, got "
                             f"{list(signals)}")
        if embedder == "default":
            from .embeddings import default_embedder

            embedder = default_embedder() if "best_sentence" in signals else None
        if "best_sentence" in signals and embedder is None:
            raise ValueError("the best_sentence signal needs an embedder; leave it out of "
                             "signals for a lexical-only detector")
        self.signal_names = tuple(signals)
        self.embedder = embedder
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

    def signals(self, question: str, candidates: Sequence[DocNode | str]) -> Signals:
        """Each signal's best value over ``candidates`` (0.0 when there are none)."""
        validate_query(question)
        nodes = _as_nodes(candidates)
        words = {w: self._idf(self._word_df, w) for w in dict.fromkeys(content_terms(question))}
        grams = {g: self._idf(self._gram_df, g)
                 for g in dict.fromkeys(char_ngrams(question, (2,)))}
        word_total, gram_total = sum(words.values()), sum(grams.values())
        best_words, best_grams, best = -1.0, 0.0, None
        found: list[str] = []
        units = [(node, unit) for node in nodes for unit in _lines(node.text)]
        for node, unit in units:
            lowered = unit.lower()
            have = [w for w in words if w in lowered]  # as notebook 09's term_coverage
            coverage = sum(words[w] for w in have) / word_total if word_total else 0.0
            if coverage > best_words:
                best_words, best, found = coverage, node, have
            unit_grams = self._bigrams(unit, lambda t: frozenset(char_ngrams(t, (2,))))
            if gram_total:
                best_grams = max(best_grams, sum(v for g, v in grams.items()
                                                 if g in unit_grams) / gram_total)
        values = {"word_coverage": max(best_words, 0.0), "bigram_coverage": best_grams}
        evidence = Signals({}, best, found, [w for w in words if w not in found])
        if "best_sentence" in self.signal_names:
            values["best_sentence"] = self._best_sentence(question, units, evidence)
        evidence.values = {name: round(float(values[name]), 6) for name in self.signal_names}
        return evidence

    def _best_sentence(self, question: str, units: list[tuple[DocNode, str]],
                       evidence: Signals) -> float:
        sentences = [(node, s) for node, unit in units for s in reranker_sentences(unit)]
        if not sentences:
            return 0.0
        query = np.asarray(self.embedder.embed_query(question), dtype=np.float64)
        vectors = np.asarray(self.embedder([s for _, s in sentences]), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
        cosines = vectors @ query / np.maximum(norms, 1e-12)
        best = int(np.argmax(cosines))
        evidence.sentence_node, evidence.sentence = sentences[best]
        return float(cosines[best])

    def signal_matrix(self, questions: Sequence[str | Question],
                      candidates: Sequence[Sequence[DocNode | str]]) -> np.ndarray:
        """``(len(questions), len(signal_names))``: the signals of every question."""
        texts = [q.question if isinstance(q, Question) else q for q in questions]
        if len(texts) != len(candidates):
            raise ValueError(f"{len(texts)} questions but {len(candidates)} candidate lists")
        return np.array([[self.signals(q, c).values[name] for name in self.signal_names]
                         for q, c in zip(texts, candidates, strict=True)],
                        dtype=np.float64).reshape(len(texts), len(self.signal_names))

    # -- fitting and deciding ----------------------------------------------------------
    def fit(self, questions: Sequence[str | Question],
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


# ---------------------------------------------------------------- cross-validation
@dataclass
class CrossValidation:
    """Held-out results: each question scored by a detector fitted without its fold.

    ``probabilities[i]`` and ``declined[i]`` are question i's, from the model and the
    threshold of the folds that did not contain it (``thresholds[f]``, ``weights[f]``:
    fold f's).
    """

    signals: tuple[str, ...]
    max_wrong: float
    probabilities: np.ndarray
    answerable: np.ndarray
    declined: np.ndarray
    thresholds: list[float]
    weights: list[dict[str, float]]

    @property
    def auroc(self) -> float:
        return auroc(self.probabilities, self.answerable)

    @property
    def declined_share(self) -> float:
        """Share of the unanswerable questions declined."""
        return float(self.declined[~self.answerable].mean())

    @property
    def wrongly_declined_share(self) -> float:
        """Share of the answerable questions declined."""
        return float(self.declined[self.answerable].mean())

    def as_dict(self) -> dict[str, Any]:
        return {"signals": list(self.signals), "max_wrong": self.max_wrong,
                "auroc": round(self.auroc, 4), "declined": round(self.declined_share, 4),
                "wrongly_declined": round(self.wrongly_declined_share, 4)}

    def summary(self) -> str:
        """One line: the held-out AUROC and decline shares."""
        return (f"{' + '.join(self.signals)}: AUROC {self.auroc:.4f}; declined "
                f"{self.declined_share:.1%} of unanswerable, {self.wrongly_declined_share:.1%} "
                f"of answerable questions (held-out folds; thresholds for ≤ "
                f"{self.max_wrong:.0%} on the calibration folds)")


def signal_table(data: AnswerabilitySet, candidates: Sequence[Sequence[DocNode]],
                 detector: AnswerabilityDetector | None = None) -> dict[str, np.ndarray]:
    """``{signal: one value per question}`` for ``data``'s questions and ``candidates``,
    computed by ``detector`` (default: all :data:`SIGNALS`, idf from ``data.kb``)."""
    detector = detector or AnswerabilityDetector(data.kb.paragraphs)
    matrix = detector.signal_matrix(data.questions, candidates)
    return {name: matrix[:, j] for j, name in enumerate(detector.signal_names)}


def cross_validate(data: AnswerabilitySet, signals: dict[str, Sequence[float]],
                   use: Sequence[str] | None = None, max_wrong: float = 0.05
                   ) -> CrossValidation:
    """For each fold: fit the logistic regression and choose the threshold on the other
    folds (calibration), then score and decide this fold's questions (report).

    ``signals`` maps names to one value per question (:func:`signal_table`, plus any
    signal of your own); ``use`` picks the columns (default: all).
    """
    use = tuple(signals) if use is None else tuple(use)
    missing = [name for name in use if name not in signals]
    if missing or not use:
        raise ValueError(f"use must name signals among {list(signals)}, got {list(use)}")
    matrix = np.column_stack([np.asarray(signals[name], dtype=np.float64) for name in use])
    if len(matrix) != len(data.questions):
        raise ValueError(f"each signal needs one value per question ({len(data.questions)}), "
                         f"got {len(matrix)}")
    labels = np.asarray(data.answerable, dtype=bool)
    folds = np.asarray(data.folds)
    probabilities = np.zeros(len(labels))
    declined = np.zeros(len(labels), dtype=bool)
    thresholds, weights = [], []
    for fold in range(data.n_folds):
        report = folds == fold
        model = fit_model(matrix[~report], labels[~report], max_wrong)
        probabilities[report] = model.probabilities(matrix[report])
        declined[report] = probabilities[report] < model.threshold
        thresholds.append(round(model.threshold, 4))
        weights.append({name: round(float(w), 3) for name, w in zip(use, model.coef,
                                                                    strict=True)})
    return CrossValidation(use, max_wrong, probabilities, labels, declined, thresholds, weights)


def fit_detector(kb: KnowledgeBase, data: AnswerabilitySet | None = None,
                 candidates: Sequence[Sequence[DocNode]] | None = None,
                 max_wrong: float = 0.05, embedder: Any = "default") -> AnswerabilityDetector:
    """A detector ready for ``kb``: fitted on all questions of ``data`` (default:
    :func:`answerability_set` of ``kb``, seed 0) with their ``candidates`` (default:
    :func:`retrieve_candidates`), then given ``kb``'s own idf.

    Its threshold is chosen on the questions it was fitted on; :func:`cross_validate`
    measures how such a detector does on questions it has not seen.
    """
    data = data or answerability_set(kb)
    candidates = candidates if candidates is not None else retrieve_candidates(data)
    trained = AnswerabilityDetector(data.kb.paragraphs, embedder=embedder)
    trained.fit(data.questions, candidates, data.answerable, max_wrong)
    return trained.with_corpus(kb.paragraphs)


# ---------------------------------------------------------------- the reproduce row
BASELINE = ("word_coverage",)


def evaluate_answerability(kb: KnowledgeBase, held_out: float = 0.3, folds: int = 5,
                           seed: int = 0, max_wrong: float = 0.05) -> dict[str, Any]:
    """The reproduce table's numbers: the best candidate's word coverage alone and the
    full detector, cross-validated on :func:`answerability_set` ``(kb, held_out, folds,
    seed)`` with the candidates of :func:`retrieve_candidates`."""
    data = answerability_set(kb, held_out, folds, seed)
    table = signal_table(data, retrieve_candidates(data))
    rows = [{"label": "best candidate's word coverage (idf)",
             **cross_validate(data, table, BASELINE, max_wrong).as_dict()},
            {"label": "detector: words + bigrams + e5 sentence",
             **cross_validate(data, table, SIGNALS, max_wrong).as_dict()}]
    return {"held_out": held_out, "folds": folds, "seed": seed, "max_wrong": max_wrong,
            "answerable": int(sum(data.answerable)),
            "unanswerable": int(len(data.answerable) - sum(data.answerable)),
            "removed_paragraphs": len(data.held_out), "rows": rows}


def answerability_possible(kb: KnowledgeBase, held_out: float = 0.3, folds: int = 5) -> bool:
    """Whether ``kb`` has enough paragraphs with questions for :func:`answerability_set`."""
    asked = len({q.paragraph for q in kb.questions})
    count = round(held_out * asked)
    return min(count, asked - count) >= folds
