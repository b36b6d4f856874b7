"""An evaluation set whose missing answers are known: questions labelled answerable or not.

:func:`answerability_set` removes a seeded share of the knowledge base's paragraphs, so
**every question of a removed paragraph becomes unanswerable** (the right reply is "not in
the knowledge base"); the other questions stay answerable. Questions are dealt into folds
by paragraph (by article where articles hold several paragraphs). What is measured on such
a set is in :mod:`course_lib.lab.measure.answerability_evaluation`; the detector fitted on
it, in :mod:`course_lib.lab.systems.detector`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from ..._support.validation import check_int, check_number
from .datasets import KnowledgeBase, Question, SquadSet, build_knowledge_base


@dataclass
class AnswerabilitySet:
    """Questions with known answerability, and the knowledge base they are asked of.

    ``kb`` is the knowledge base *without* the held-out paragraphs (its ``questions`` are
    the answerable ones, their ``file_name`` and offsets pointing into it).
    ``questions`` holds every question, in the original order; ``answerable[i]`` says
    whether question i's paragraph is still in ``kb``; the unanswerable ones keep the
    ``file_name`` of the original knowledge base. ``folds[i]`` is question i's fold: all
    questions of one paragraph share a fold, and each fold has about the same share of
    removed paragraphs. ``held_out`` lists the removed paragraphs' texts. ``article_of``
    maps a paragraph's text to its article's key where articles hold several paragraphs
    (:mod:`~course_lib.lab.measure.article_tiers`): folds and intervals then go by article; empty
    (CMRC: an article is a paragraph), they go by paragraph.
    """

    kb: KnowledgeBase
    questions: list[Question]
    answerable: list[bool]
    folds: list[int]
    held_out: list[str]
    seed: int
    n_folds: int
    article_of: dict[str, str] = field(default_factory=dict)

    def clusters(self) -> list[str]:
        """Each question's cluster for a bootstrap: its article (its paragraph where
        ``article_of`` does not say) — questions of one article rise and fall together."""
        return [self.article_of.get(q.paragraph, q.paragraph) for q in self.questions]

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
                f"{self.n_folds} folds by {'article' if self.article_of else 'paragraph'}")


def answerability_set(kb: KnowledgeBase, held_out: float = 0.3, folds: int = 5,
                      seed: int = 0, docs_per_file: int = 10) -> AnswerabilitySet:
    """Remove a seeded share ``held_out`` of the paragraphs that questions point at,
    rebuild the knowledge base without them (``docs_per_file`` per file, as
    :func:`~course_lib.lab.data.datasets.build_knowledge_base`), and label each question.

    All questions of a removed paragraph become unanswerable — even one whose answer
    happens to be written in another paragraph too (the label is then wrong; notebook 12
    reads a near case). Paragraphs are told apart by their text, so two equal paragraphs
    go together. The questions are copies: ``kb`` is unchanged.

    >>> from course_lib.lab.data.datasets import load_cmrc2018_kb             # doctest: +SKIP
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
