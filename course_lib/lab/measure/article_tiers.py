""""Not in the knowledge base" where the topic is present, on whole articles (DRCD).

On CMRC an article is one paragraph, so removing the paragraph that holds an answer
removes its topic too, and the topic-present tier has to be built by hand
(:mod:`~course_lib.lab.measure.answerability_tiers`). A DRCD article holds several paragraphs, so
the natural case exists: remove the answer's paragraph and its siblings stay — same
title, same names, same topic, no answer. :func:`article_tiers` builds, from a SQuAD set
with articles (one half of DRCD, :func:`~course_lib.lab.data.datasets.load_drcd`), the
knowledge base with articles as files and these tiers of unanswerable questions:

* ``"sibling kept"`` — the questions of one removed paragraph per chosen article of two
  or more paragraphs, the rest of the article kept (a question whose gold answer is
  written in a kept sibling is left out of the set: it may be answerable after all;
  :attr:`ArticleTiers.ambiguous` counts them);
* ``"article removed"`` — every question of a removed article;
* ``"swapped subject"`` — as on CMRC
  (:func:`~course_lib.lab.measure.answerability_tiers.add_swapped`).

A tier with no questions is left out (a set whose articles are single paragraphs, such as
CMRC, has no sibling-kept tier).

Folds, and the bootstrap intervals of the tier tables, go by article: siblings share a
fold. What it does not do: prove a sibling silent — the answer's text may be absent
from a sibling that still implies it.

>>> from course_lib.lab.data.datasets import load_drcd                      # doctest: +SKIP
>>> print(article_tiers(load_drcd("choose")).summary())                 # doctest: +SKIP
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ..._support.validation import check_int, check_number
from ..data.answerability_set import AnswerabilitySet
from ..data.datasets import SquadSet, build_article_knowledge_base, keep_paragraphs
from .answerability_tiers import Facts, TieredSet, add_swapped, question_subject

ARTICLE_TIERS = ("sibling kept", "article removed", "swapped subject")


@dataclass
class ArticleTiers(TieredSet):
    """A :class:`~course_lib.lab.measure.answerability_tiers.TieredSet` on whole articles, with
    the article each removed paragraph came from (``removed_from``) and how many
    sibling-kept questions were left out because a kept sibling writes their answer
    (``ambiguous``)."""

    removed_from: dict[str, str] | None = None
    ambiguous: int = 0

    def summary(self) -> str:
        return (super().summary() + f"\n  ({self.ambiguous} sibling-kept questions left out: "
                "a kept sibling writes their answer)")


def article_tiers(squad: SquadSet, article_share: float = 0.2, sibling_share: float = 0.5,
                  folds: int = 5, seed: int = 0, swapped: bool = True) -> ArticleTiers:
    """Remove a seeded ``article_share`` of ``squad``'s articles whole, and one paragraph
    with questions (seeded) from a seeded ``sibling_share`` of the remaining articles
    of two or more paragraphs; label every question; deal articles into ``folds``
    (articles with removals dealt apart from the untouched ones, so every fold has
    both labels); add the swapped-subject questions (``swapped=False``: not, when only
    the natural tiers are wanted).

    >>> from course_lib.lab.data.datasets import Article, Question
    >>> p = [("1-1", "甲城建于1900年。"), ("1-2", "甲城有河。"), ("2-1", "乙山高。"),
    ...      ("3-1", "丙湖深。"), ("4-1", "丁镇小。")]
    >>> qs = [Question(f"q{k}", f"{text[:2]}怎样？", [text[-3:-1]], [len(text) - 3], pid, text)
    ...       for k, (pid, text) in enumerate(p)]
    >>> squad = SquadSet(p, qs, articles=[Article("1", "甲", ["1-1", "1-2"]),
    ...     Article("2", "乙", ["2-1"]), Article("3", "丙", ["3-1"]), Article("4", "丁", ["4-1"])])
    >>> t = article_tiers(squad, article_share=0.25, sibling_share=1.0, folds=2)
    >>> {name: len(members) for name, members in t.tiers.items()}, t.ambiguous  # no swap here
    ({'sibling kept': 1, 'article removed': 1}, 0)
    """
    if not isinstance(squad, SquadSet) or not squad.articles:
        raise TypeError("squad must be a SquadSet with articles (load_drcd(half)), got "
                        f"{type(squad).__name__}")
    article_share = check_number(article_share, "article_share", 0, 1)
    sibling_share = check_number(sibling_share, "sibling_share", 0, 1)
    folds, seed = check_int(folds, "folds", low=2), check_int(seed, "seed")
    rng = random.Random(seed)
    articles = list(squad.articles)
    rng.shuffle(articles)
    cut = round(article_share * len(articles))
    whole, rest = articles[:cut], articles[cut:]
    asked = {q.paragraph_id for q in squad.questions}
    several = [a for a in rest if len(a.paragraph_ids) >= 2
               and any(pid in asked for pid in a.paragraph_ids)]
    chosen = several[:round(sibling_share * len(several))]
    sibling = {rng.choice([p for p in a.paragraph_ids if p in asked]): a for a in chosen}
    untouched = [a for a in rest if a not in chosen]
    if min(len(whole) + len(chosen), len(untouched)) < folds:
        raise ValueError(f"{len(squad.articles)} articles give {len(whole)} removed whole, "
                         f"{len(chosen)} with a sibling removed and {len(untouched)} untouched: "
                         f"the first two together, and the untouched, each need at least "
                         f"folds={folds} (a larger set, or other shares)")
    gone = {pid for a in whole for pid in a.paragraph_ids} | set(sibling)
    reduced = build_article_knowledge_base(
        keep_paragraphs(squad, {pid for pid, _ in squad.paragraphs} - gone))
    text_of = dict(squad.paragraphs)
    article_of = {pid: a.key for a in squad.articles for pid in a.paragraph_ids}
    fold_of: dict[str, int] = {}
    for group in (whole, chosen, untouched):
        rng.shuffle(group)
    for group in (whole + chosen, untouched):  # each fold gets both labels
        fold_of.update({a.key: k % folds for k, a in enumerate(group)})
    kept_question = {q.id: q for q in reduced.questions}  # with their files and offsets
    questions, labels, fold, members = [], [], [], {"sibling kept": [], "article removed": []}
    ambiguous = 0
    for question in squad.questions:
        pid = question.paragraph_id
        if pid in sibling:
            siblings = [text_of[p] for p in sibling[pid].paragraph_ids if p not in gone]
            if any(answer in text for answer in question.answers for text in siblings):
                ambiguous += 1
                continue
            members["sibling kept"].append(len(questions))
        elif pid in gone:
            members["article removed"].append(len(questions))
        questions.append(question if pid in gone else kept_question[question.id])
        labels.append(pid not in gone)
        fold.append(fold_of[article_of[pid]])
    base = AnswerabilitySet(reduced, questions, labels, fold,
                            [text for pid, text in squad.paragraphs if pid in gone], seed, folds,
                            {text_of[pid]: key for pid, key in article_of.items()})
    everywhere, kept = Facts([t for _, t in squad.paragraphs]), Facts(reduced.paragraphs)
    subjects = [question_subject(q, everywhere) for q in base.questions]
    everything, swapped_from, swaps = (add_swapped(base, subjects, kept, seed) if swapped
                                       else (base, {}, {}))
    tiers = {**members, **({"swapped subject": sorted(swapped_from)} if swapped else {})}
    tiers = {name: found for name, found in tiers.items() if found}  # CMRC: no siblings
    return ArticleTiers(base, everything, tiers, subjects, swapped_from, swaps,
                        {text_of[pid]: sibling[pid].key for pid in sibling}, ambiguous)



def evaluate_article_answerability(half: str | None, seed: int = 0, max_wrong: float = 0.05,
                                   squad: SquadSet | None = None) -> dict[str, Any]:
    """The reproduce table's DRCD numbers: per tier of :func:`article_tiers` on ``half``
    of DRCD (``"choose"`` or ``"report"``), each detector of
    :data:`~course_lib.lab.measure.answerability_tiers.STEPS`, folds and intervals by article.
    ``squad``: another set with articles instead of DRCD (``half=None``: all of it), as
    ``python -m course_lib reproduce --squad FILE`` passes it."""
    from ...answerability import KNOWN_SIGNALS
    from ..data.datasets import load_drcd, split_by_article
    from .answerability_tiers import step_rows, tier_signals

    if squad is None:
        squad = load_drcd(half)
    elif half is not None:
        squad = split_by_article(squad, half)
    tiered = article_tiers(squad, seed=seed)
    _, signals = tier_signals(tiered, KNOWN_SIGNALS)
    return {"half": half, "seed": seed, "max_wrong": max_wrong, "folds": tiered.base.n_folds,
            "answerable": len(tiered.answerable), "removed_paragraphs": len(tiered.base.held_out),
            "ambiguous": tiered.ambiguous, "rows": step_rows(tiered, signals, max_wrong)}


def embed_article_tier_questions(seed: int = 0) -> int:
    """Fill the e5 cache with the swapped questions of :func:`article_tiers` on both halves
    of DRCD (the only questions of its tiers that are not DRCD's own); returns how many."""
    from ...embeddings import default_embedder
    from ..data.datasets import HALVES, load_drcd

    texts = []
    for half in HALVES:
        tiered = article_tiers(load_drcd(half), seed=seed)
        texts += [tiered.all.questions[j].question for j in tiered.tiers["swapped subject"]]
    default_embedder("e5").embed_queries(texts)
    return len(texts)
