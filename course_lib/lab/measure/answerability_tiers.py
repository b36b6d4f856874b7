"""Harder "not in the knowledge base" questions, in tiers (notebook 12).

:func:`~course_lib.lab.measure.data.answerability_set.answerability_set` removes paragraphs, and
every question of a removed paragraph becomes unanswerable. Those are easy: a CMRC
question copies words from its own paragraph, and once it is gone no other paragraph
shares them. Real traffic is harder — the topic is there, the fact is not. The tiers:

* ``"absent paragraph"`` — every unanswerable question of the set (the easy tier);
* ``"topic present"`` — those of them whose *subject* (:func:`question_subject`) is still
  mentioned by a paragraph that remains, though none states it with the question's
  answer (:meth:`Facts.states`): the knowledge base knows the thing asked about, not
  the fact;
* ``"swapped subject"`` — an answerable question with its subject replaced by another
  name of the same kind that the knowledge base mentions, never together with the
  question's answer (:func:`swap_subject`): "罗保铭本科毕业于哪所大学？" becomes a question
  about someone else, whose university the knowledge base does not give.

Each tier is judged against the same answerable questions, in the same folds by
paragraph (a swapped question keeps its original's fold). What it does not do: prove a
swapped question unanswerable — a reader checks a sample (notebook 12).

>>> from course_lib.lab.data.datasets import KnowledgeBase, Question
>>> p1, p2 = "罗保铭毕业于海南大学，后任省长。", "李白是唐代诗人，生于碎叶城。"
>>> qs = [Question("q1", "罗保铭毕业于哪所大学？", ["海南大学"], [4], "p1", p1),
...       Question("q2", "李白是哪个朝代的诗人？", ["唐代"], [3], "p2", p2)]
>>> kb = KnowledgeBase({"a.txt": p1 + "\\n" + p2}, qs, [p1, p2], [], [])
>>> facts = Facts(kb.paragraphs)
>>> question_subject(qs[0], facts)
('罗保铭', 'person')
>>> swap_subject(qs[0], ("罗保铭", "person"), [("李白", "person")], facts)
('李白毕业于哪所大学？', '李白')
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..._support.validation import check_int
from ...word_tags import named_entities
from ..data.answerability_set import AnswerabilitySet, answerability_set
from ..data.datasets import KnowledgeBase, Question

TIERS = ("absent paragraph", "topic present", "swapped subject")


class Facts:
    """The paragraphs of a knowledge base, asked which mention a name (remembered per
    name: the tiers ask about the same names many times).

    >>> facts = Facts(["李白是唐代诗人。", "杜甫是诗人。"])
    >>> facts.mention("诗人"), facts.states("李白", ["唐代"]), facts.states("杜甫", ["唐代"])
    (2, True, False)
    """

    def __init__(self, paragraphs: Sequence[str]) -> None:
        self.paragraphs = list(paragraphs)
        self._where: dict[str, list[int]] = {}

    def where(self, name: str) -> list[int]:
        """The positions of the paragraphs that mention ``name``."""
        if name not in self._where:
            self._where[name] = [i for i, text in enumerate(self.paragraphs) if name in text]
        return self._where[name]

    def mention(self, name: str) -> int:
        """How many paragraphs mention ``name``."""
        return len(self.where(name))

    def states(self, name: str, answers: Sequence[str]) -> bool:
        """Whether a paragraph mentions ``name`` together with one of ``answers`` — then a
        question about ``name`` with that answer may be answerable after all, and no tier
        counts it as unanswerable."""
        return any(answer in self.paragraphs[i] for i in self.where(name) for answer in answers)


def question_subject(question: Question, facts: Facts) -> tuple[str, str] | None:
    """The thing a question asks about: among its names
    (:func:`~course_lib.word_tags.named_entities`) that its own paragraph contains, the
    one the fewest paragraphs of ``facts`` mention (the longer, then the first, on ties)
    — with its kind. ``None`` when it names nothing its paragraph holds ("此剧的制作人是谁？").
    """
    names = [(name, kind) for name, kind in named_entities(question.question)
             if name in question.paragraph]
    if not names:
        return None
    return min(names, key=lambda nk: (facts.mention(nk[0]), -len(nk[0])))


def swap_subject(question: Question, subject: tuple[str, str],
                 pool: Sequence[tuple[str, str]], facts: Facts,
                 rng: random.Random | None = None) -> tuple[str, str] | None:
    """``question``'s text with its subject replaced (everywhere) by a name from ``pool``
    of the same kind, and that name — one that its own paragraph does not mention, that
    neither contains nor is contained in the subject, and that no paragraph mentions
    together with any of the question's gold answers (so the knowledge base holds no such
    fact) — chosen by ``rng`` (default: the first that qualifies). ``None`` when no name
    qualifies.
    """
    name, kind = subject
    options = [other for other, other_kind in dict.fromkeys(pool)
               if other_kind == kind and other not in question.paragraph
               and other not in name and name not in other
               and not facts.states(other, question.answers)]
    if not options:
        return None
    chosen = rng.choice(options) if rng is not None else options[0]
    return question.question.replace(name, chosen), chosen


@dataclass
class TieredSet:
    """The answerability set plus its harder tiers, as one list of questions.

    ``all`` holds every question — the set's (answerable and absent-paragraph ones) and
    the swapped ones after them — with their labels and folds; ``tiers[name]`` lists the
    indices (into ``all.questions``) of that tier's unanswerable questions;
    ``subjects[i]`` is question i's subject (``None`` where it names nothing its
    paragraph holds); ``swapped_from[j]`` is the index of the answerable question that
    swapped question j was made from, and ``swaps[j]`` the (old, new) subject.
    """

    base: AnswerabilitySet
    all: AnswerabilitySet
    tiers: dict[str, list[int]]
    subjects: list[tuple[str, str] | None]
    swapped_from: dict[int, int]
    swaps: dict[int, tuple[str, str]]

    @property
    def answerable(self) -> list[int]:
        return [i for i, label in enumerate(self.all.answerable) if label]

    def indices(self, *tiers: str) -> list[int]:
        """The answerable questions and the unanswerable ones of ``tiers``, in order."""
        unknown = [name for name in tiers if name not in self.tiers]
        if unknown or not tiers:
            raise ValueError(f"tiers must be among {list(self.tiers)}, got {list(tiers)}")
        chosen = set(self.answerable).union(*(self.tiers[name] for name in tiers))
        return sorted(chosen)

    def tier(self, *tiers: str) -> AnswerabilitySet:
        """The answerable questions and ``tiers``' unanswerable ones as an answerability
        set of their own (questions, labels, folds)."""
        keep = self.indices(*tiers)
        return replace(self.all, questions=[self.all.questions[i] for i in keep],
                       answerable=[self.all.answerable[i] for i in keep],
                       folds=[self.all.folds[i] for i in keep])

    def signals_of(self, signals: dict[str, Sequence[float]], *tiers: str
                   ) -> dict[str, np.ndarray]:
        """``signals`` (one value per question of ``all``) cut to :meth:`tier` ``(*tiers)``."""
        keep = self.indices(*tiers)
        return {name: np.asarray(values)[keep] for name, values in signals.items()}

    def summary(self) -> str:
        """One line per tier: how many unanswerable questions it holds."""
        lines = [self.base.summary()]
        for name, members in self.tiers.items():
            lines.append(f"  {name:<17} {len(members):>4} unanswerable questions")
        return "\n".join(lines)


def answerability_tiers(kb: KnowledgeBase, held_out: float = 0.3, folds: int = 5,
                        seed: int = 0) -> TieredSet:
    """:func:`~course_lib.lab.measure.data.answerability_set.answerability_set` with its tiers
    (:data:`TIERS`): the topic-present subset of the absent-paragraph questions, and one
    swapped question per answerable question whose subject can be swapped (the new name
    drawn, seeded, from the subjects of the other answerable questions of the same kind).

    >>> from course_lib.lab.data.datasets import load_cmrc2018_kb            # doctest: +SKIP
    >>> print(answerability_tiers(load_cmrc2018_kb()).summary())    # doctest: +SKIP
    """
    seed = check_int(seed, "seed")
    base = answerability_set(kb, held_out, folds, seed)
    everywhere, kept = Facts(kb.paragraphs), Facts(base.kb.paragraphs)
    subjects = [question_subject(q, everywhere) for q in base.questions]
    absent = [i for i, label in enumerate(base.answerable) if not label]
    # Topic present: the subject is in a remaining paragraph — but none of them states it
    # with the question's answer (then the label would be wrong: the fact is there).
    topic = [i for i in absent if subjects[i] is not None and kept.mention(subjects[i][0])
             and not kept.states(subjects[i][0], base.questions[i].answers)]
    everything, swapped_from, swaps = add_swapped(base, subjects, kept, seed)
    tiers = {"absent paragraph": absent, "topic present": topic,
             "swapped subject": sorted(swapped_from)}
    return TieredSet(base, everything, tiers, subjects, swapped_from, swaps)


def add_swapped(base: AnswerabilitySet, subjects: list[tuple[str, str] | None], kept: Facts,
                seed: int) -> tuple[AnswerabilitySet, dict[int, int], dict[int, tuple[str, str]]]:
    """``base`` with one swapped question (:func:`swap_subject`, the new name drawn seeded
    from the other answerable questions' subjects of the same kind, checked against
    ``kept``, the reduced knowledge base's facts) after its questions per answerable
    question whose subject can be swapped, each in its original's fold; and which question
    each was made from, and the (old, new) subject. ``subjects`` gains a ``None`` per
    swapped question."""
    answerable = [i for i, label in enumerate(base.answerable) if label]
    pool = [subjects[i] for i in answerable if subjects[i] is not None]
    rng = random.Random(seed)
    questions, labels, fold_of = list(base.questions), list(base.answerable), list(base.folds)
    swapped_from: dict[int, int] = {}
    swaps: dict[int, tuple[str, str]] = {}
    for i in answerable:
        subject = subjects[i]
        if subject is None:
            continue
        swapped = swap_subject(base.questions[i], subject,
                               [s for s in pool if s != subject], kept, rng)
        if swapped is None:
            continue
        text, new_name = swapped
        swapped_from[len(questions)], swaps[len(questions)] = i, (subject[0], new_name)
        questions.append(replace(base.questions[i], id=f"{base.questions[i].id}-swapped",
                                 question=text))
        labels.append(False)
        fold_of.append(base.folds[i])
        subjects.append(None)
    everything = replace(base, questions=questions, answerable=labels, folds=fold_of)
    return everything, swapped_from, swaps


def tier_table(tiered: TieredSet, signals: dict[str, Sequence[float]], use: Sequence[str],
               max_wrong: float = 0.05) -> dict[str, dict[str, Any]]:
    """Per tier, cross-validated by paragraph (fitted and thresholded on the calibration
    folds of that tier's questions, reported on the held-out fold): AUROC with a 95 %
    bootstrap interval over paragraphs, and the shares declined (of the tier's
    unanswerable questions) and wrongly declined (of the answerable ones), each with its
    exact interval. ``signals`` holds one value per question of ``tiered.all``."""
    from ...answerability import SIGNALS  # noqa: F401  (names checked by cross_validate)
    from .answerability_evaluation import auroc_interval, cross_validate
    from .significance import proportion_interval

    table = {}
    for name in tiered.tiers:
        subset = tiered.tier(name)
        result = cross_validate(subset, tiered.signals_of(signals, name), use=use,
                                max_wrong=max_wrong)
        labels = result.answerable
        declined = int(result.declined[~labels].sum())
        wrong = int(result.declined[labels].sum())
        table[name] = {
            "unanswerable": int((~labels).sum()), "answerable": int(labels.sum()),
            "auroc": result.auroc,
            "auroc_interval": auroc_interval(result.probabilities, labels,
                                             subset.clusters()),
            "declined": declined / (~labels).sum(),
            "declined_interval": proportion_interval(declined, int((~labels).sum())),
            "wrongly_declined": wrong / labels.sum(),
            "wrongly_declined_interval": proportion_interval(wrong, int(labels.sum())),
            "result": result}
    return table


def tier_signals(tiered: TieredSet, signals: Sequence[str] | None = None
                 ) -> tuple[list[list[Any]], dict[str, np.ndarray]]:
    """Every question's candidates (``hybrid-rrf`` on the reduced knowledge base) and its
    ``signals`` (default :data:`~course_lib.answerability.SIGNALS`), for ``tiered.all``."""
    from ...answerability import SIGNALS, AnswerabilityDetector
    from ..systems.detector import retrieve_candidates
    from .answerability_evaluation import signal_table

    candidates = retrieve_candidates(tiered.all)
    detector = AnswerabilityDetector(tiered.all.kb.paragraphs, signals=signals or SIGNALS)
    return candidates, signal_table(tiered.all, candidates, detector)


def compare_detectors(tiered: TieredSet, signals: dict[str, Sequence[float]],
                      before: Sequence[str] | dict[str, dict[str, Any]], after: Sequence[str],
                      max_wrong: float = 0.05) -> dict[str, dict[str, Any]]:
    """Per tier, the detector on signals ``before`` and on ``after`` (each cross-validated
    by :func:`tier_table`; ``before`` may be a table already computed) and the paired
    difference of their held-out AUROCs, with a bootstrap interval over paragraphs and its
    p (:func:`~course_lib.lab.measure.answerability_evaluation.paired_auroc_difference`); the
    tiers' rows are one family: ``p_holm`` is Holm over them, and the verdict comes from it
    (:func:`~course_lib.lab.measure.significance.holm_family`)."""
    from .answerability_evaluation import paired_auroc_difference
    from .significance import holm_family

    first = before if isinstance(before, dict) else tier_table(tiered, signals, before,
                                                                max_wrong)
    second = tier_table(tiered, signals, after, max_wrong)
    changes = holm_family([paired_auroc_difference(
        first[name]["result"].probabilities, second[name]["result"].probabilities,
        first[name]["result"].answerable, tiered.tier(name).clusters())
        for name in tiered.tiers])
    return {name: {"before": first[name], "after": second[name], "auroc_change": change}
            for name, change in zip(tiered.tiers, changes, strict=True)}


def fold_lesson(data: AnswerabilitySet, signals: dict[str, Sequence[float]],
                use: Sequence[str], max_wrong: float = 0.05, seed: int = 0) -> dict[str, Any]:
    """The same cross-validation with folds dealt question by question at random (seeded)
    instead of by paragraph: the answerable questions wrongly declined under each, and
    the paired difference (random − by paragraph) with its 95 % interval and exact
    McNemar p (:func:`~course_lib.lab.measure.significance.compare_pair`)."""
    from .answerability_evaluation import cross_validate
    from .significance import compare_pair

    rng = np.random.default_rng(seed)
    dealt = rng.permutation(len(data.questions)) % data.n_folds
    by_paragraph = cross_validate(data, signals, use, max_wrong)
    at_random = cross_validate(replace(data, folds=[int(f) for f in dealt]), signals, use,
                               max_wrong)
    answerable = by_paragraph.answerable
    wrong_paragraph = by_paragraph.declined[answerable].astype(float)
    wrong_random = at_random.declined[answerable].astype(float)
    return {"by paragraph": by_paragraph, "at random": at_random,
            "wrongly declined": {"by paragraph": float(wrong_paragraph.mean()),
                                 "at random": float(wrong_random.mean())},
            "difference": compare_pair(wrong_random, wrong_paragraph)}


def stream_sample(tiered: TieredSet, answerable: int | None = None,
                  per_tier: int | None = None, seed: int = 0) -> dict[str, list[int]]:
    """A mixed stream: ``answerable`` answerable questions and ``per_tier`` unanswerable
    ones of each tier (seeded samples; ``None``: all of them), as indices into
    ``tiered.all.questions`` by kind."""
    rng = random.Random(seed)

    def take(indices: list[int], n: int | None) -> list[int]:
        return sorted(indices if n is None or n >= len(indices) else rng.sample(indices, n))

    return {"answerable": take(tiered.answerable, answerable),
            **{name: take(members, per_tier) for name, members in tiered.tiers.items()}}


def careful_system(kb: KnowledgeBase, detector: Any = None) -> Any:
    """The system of :func:`mixed_stream` on ``kb``: the three paragraph paths, union, the
    offline reranker to 3, the offline LLM — with ``detector`` as its answerability check
    (``None``: without one). Ask it with ``.ask(question)``; a declined reply carries the
    verdict and its evidence (``result.verdict.explain()``), as the chat panel shows it."""
    from ...llm import OfflineLLM
    from ...rag import MultiPathRAG
    from ..data.kb_document import knowledge_base_document
    from ..systems.pipelines import paragraph_paths, prepared_reranker

    doc = knowledge_base_document(kb, embed=True)
    # CMRC is one script: notebook 12's system tokenises as it did before the multi-path
    # pipelines learnt to normalise scripts (the same rankings but for a handful of
    # questions whose paragraphs hold a character such as 舖 that t2s maps).
    return MultiPathRAG(paragraph_paths(doc, normalise_script=False), llm=OfflineLLM(),
                        reranker=prepared_reranker(doc, topk=3, normalise_script=False),
                        context_size=3, answerability=detector)


def mixed_stream(tiered: TieredSet, detector: Any, stream: dict[str, list[int]]
                 ) -> dict[str, Any]:
    """Ask the questions of ``stream`` (:func:`stream_sample`) of :func:`careful_system`
    on the reduced knowledge base, once with ``detector`` as its answerability check and
    once without.

    Returns, per kind: how many were asked; for the answerable ones the share answered
    with a gold answer in the reply, with the check and without; for each tier the share
    declined; and the milliseconds per question with and without the check (one run of
    each, same questions: a ratio on this machine, not a benchmark).
    """
    import copy
    import time

    from ...embeddings import expected_queries
    from ...rag import answer_contains

    plain = careful_system(tiered.all.kb)
    careful = copy.copy(plain)
    careful.answerability = detector
    asked = [i for members in stream.values() for i in members]
    texts = [tiered.all.questions[i].question for i in asked]
    replies: dict[str, dict[int, Any]] = {}
    seconds = {}
    with expected_queries(texts):
        plain.ask(texts[0])  # warm: the first question builds the indexes
        for name, system in (("without", plain), ("with", careful)):
            started = time.perf_counter()
            replies[name] = {i: system.ask(text) for i, text in zip(asked, texts, strict=True)}
            seconds[name] = time.perf_counter() - started
    out: dict[str, Any] = {"asked": {kind: len(members) for kind, members in stream.items()},
                           "ms_per_question": {name: round(1000 * s / len(asked), 1)
                                               for name, s in seconds.items()}}
    gold = {i: tiered.all.questions[i].answers for i in stream["answerable"]}
    out["answered correctly"] = {
        name: float(np.mean([not replies[name][i].declined
                             and answer_contains(str(replies[name][i].answer), gold[i])
                             for i in stream["answerable"]]))
        for name in ("without", "with")}
    out["declined"] = {kind: float(np.mean([replies["with"][i].declined for i in members]))
                       for kind, members in stream.items()}
    return out


# ---------------------------------------------------------------- the reproduce rows
def answerability_possible(kb: KnowledgeBase, held_out: float = 0.3, folds: int = 5) -> bool:
    """Whether ``kb`` has enough paragraphs with questions for the answerability set."""
    asked = len({q.paragraph for q in kb.questions})
    count = round(held_out * asked)
    return min(count, asked - count) >= folds


# Each detector of the reproduce table adds one signal to the one before it.
STEPS = (("words + bigrams + e5 sentence", ("word_coverage", "bigram_coverage", "best_sentence")),
         ("+ anchored coverage", ("anchored_coverage",)), ("+ asked-for type", ("asked_type",)))


def step_rows(tiered: TieredSet, signals: dict[str, Sequence[float]],
              max_wrong: float = 0.05) -> list[dict[str, Any]]:
    """Per tier, each detector of :data:`STEPS` cross-validated (:func:`tier_table`), each
    after the first with its paired AUROC change from the one before it, its p and
    ``p_holm`` — Holm over every change of the table, all tiers and steps, one family on
    one question set — and the verdict ``p_holm`` allows (:func:`compare_detectors`) —
    the rows of the reproduce table."""
    from .significance import holm_family

    rows, used, before = [], [], None
    tables: dict[str, Any] = {}
    for label, added in STEPS:
        used = [*used, *added]
        if before is None:
            tables = tier_table(tiered, signals, used, max_wrong)
            changes = {}
        else:
            compared = compare_detectors(tiered, signals, before, used, max_wrong)
            tables = {name: row["after"] for name, row in compared.items()}
            changes = {name: row["auroc_change"] for name, row in compared.items()}
        for tier, result in tables.items():
            row = {"tier": tier, "label": label, "unanswerable": result["unanswerable"],
                   "auroc": round(result["auroc"], 4),
                   "auroc_interval": [round(x, 4) for x in result["auroc_interval"]],
                   "declined": round(float(result["declined"]), 4),
                   "wrongly_declined": round(float(result["wrongly_declined"]), 4)}
            if tier in changes:
                change = changes[tier]
                row.update(auroc_change=change["difference"], p=change["p"],
                           auroc_change_interval=[round(x, 4) for x in change["interval"]])
            rows.append(row)
        before = tables
    changed = [row for row in rows if "auroc_change" in row]
    family = holm_family([{"difference": row["auroc_change"], "p": row["p"]} for row in changed])
    for row, held in zip(changed, family, strict=True):
        row.update(p_holm=held["p_holm"], verdict=held["verdict"])
    order = list(tiered.tiers)
    return sorted(rows, key=lambda row: order.index(row["tier"]))  # stable: steps in order


def evaluate_answerability(kb: KnowledgeBase, held_out: float = 0.3, folds: int = 5,
                           seed: int = 0, max_wrong: float = 0.05) -> dict[str, Any]:
    """The reproduce table's numbers on CMRC: per tier of :func:`answerability_tiers`
    ``(kb, held_out, folds, seed)``, each detector of :data:`STEPS` (:func:`step_rows`)."""
    from ...answerability import KNOWN_SIGNALS

    tiered = answerability_tiers(kb, held_out, folds, seed)
    _, signals = tier_signals(tiered, KNOWN_SIGNALS)
    return {"held_out": held_out, "folds": folds, "seed": seed, "max_wrong": max_wrong,
            "answerable": len(tiered.answerable),
            "removed_paragraphs": len(tiered.base.held_out),
            "rows": step_rows(tiered, signals, max_wrong)}

def embed_tier_questions(kb: KnowledgeBase) -> int:
    """Fill the embedding cache with the swapped questions of :func:`answerability_tiers`
    on ``kb`` (the only questions of the tiers that are not the knowledge base's own), so
    that notebook 12 finds them there; returns how many."""
    from ...embeddings import default_embedder

    tiered = answerability_tiers(kb)
    texts = [tiered.all.questions[j].question for j in tiered.tiers["swapped subject"]]
    default_embedder("e5").embed_queries(texts)
    return len(texts)


_MOVED = {"SWAP_READING": "swap_reading", "reading_sample": "swap_reading",
          "reading_summary": "swap_reading"}


def __getattr__(name: str) -> Any:
    """Names that moved to their own module still import from here (older notebooks)."""
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"{__package__}.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
