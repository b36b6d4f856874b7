"""Retrieval metrics: did we find the passage, how high, and how much noise came with it.

* **edit similarity** ``1 − Levenshtein(a, b) / max(|a|, |b|)``; a retrieved unit
  *hits* a reference passage when it is above 0.5 (LazyLLM's ``NonLLMContextRecall``).
  A unit more than twice as long as the reference can never hit: even containing the
  whole reference, over half of it is extra.
* **context recall**: share of reference passages hit by the retrieved units (binary:
  1 if any hit).
* **context relevance**: share of retrieved sentences (split on ``。``) that are
  sentences of the reference — "how much of what we hand the LLM is on topic".
* **recall@k** and **MRR@k** read a ranked list of hit flags.

>>> gold = "北京是中国的首都。北京有故宫。"
>>> context_recall([gold, "上海是港口城市。上海有外滩。"], [gold])
1.0
>>> context_relevance([gold, "上海是港口城市。上海有外滩。"], [gold])
0.5
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

from ._support.validation import check_int
from .text_splitter import split_sentences

HIT_THRESHOLD = 0.5


def edit_similarity(a: str, b: str) -> float:
    """``1 − normalised Levenshtein distance``: 1.0 for equal strings, 0.0 for disjoint."""
    return 1.0 - Levenshtein.normalized_distance(a, b)


def is_hit(unit: str, reference: str, threshold: float = HIT_THRESHOLD) -> bool:
    """The chapter's hit rule: edit similarity strictly above ``threshold``.

    >>> is_hit("长城东起山海关。", "长城东起山海关"), is_hit("长城", "山海关")
    (True, False)
    """
    # The same as ``edit_similarity(unit, reference) > threshold``, about 3x faster:
    # rapidfuzz may stop counting edits once there are more than ``allowed`` (it then
    # returns allowed + 1, still too many to hit); fewer are counted exactly. (Its own
    # cut-off on the normalised distance rounds, and missed a hit on the line.)
    if not threshold < 1.0:  # no similarity is above 1 (nor above NaN)
        return False
    if threshold < 0.0:  # every similarity is at least 0
        return True
    longest = max(len(unit), len(reference))
    if longest == 0:
        return True  # two empty strings: similarity 1.0
    allowed = int((1.0 - threshold) * longest) + 1
    distance = Levenshtein.distance(unit, reference, score_cutoff=allowed)
    return 1.0 - distance / longest > threshold


def context_recall(retrieved: Sequence[str], references: Sequence[str],
                   threshold: float = HIT_THRESHOLD, binary: bool = True) -> float:
    """Mean over references of: 1 if any retrieved unit hits it (``binary``), else the
    share of retrieved units that hit it — the two modes of ``NonLLMContextRecall``.

    >>> context_recall(["abcd", "wxyz"], ["abce"], binary=False)
    0.5
    """
    if not references:
        raise ValueError("references is empty: context recall needs at least one reference")
    per_reference = []
    for reference in references:
        hits = [is_hit(unit, reference, threshold) for unit in retrieved]
        if binary:
            per_reference.append(1.0 if any(hits) else 0.0)
        else:
            per_reference.append(sum(hits) / len(hits) if hits else 0.0)
    return sum(per_reference) / len(per_reference)


def context_sentences(texts: Sequence[str], splitter: str = "。") -> list[str]:
    """The sentences :func:`context_relevance` compares: those of all ``texts``, cut at
    each mark of ``splitter`` (:func:`~course_lib.text_splitter.split_sentences`), the mark
    dropped, stripped, empties dropped. Only ``splitter`` ends a sentence, not a line
    break or a full stop: the course's relevance numbers were measured so.

    >>> context_sentences(["a。。b。", " 。c"])
    ['a', 'b', 'c']
    """
    return [sentence for text in texts for sentence in _sentences(text, splitter)]


@functools.lru_cache(maxsize=8192)  # an evaluation meets the same passages again and again
def _sentences(text: str, splitter: str) -> tuple[str, ...]:
    return tuple(split_sentences(text, ends=splitter, newlines=False, full_stop=None,
                                 keep_ends=False))


def context_relevance(retrieved: Sequence[str], references: Sequence[str],
                      splitter: str = "。") -> float:
    """Share of retrieved sentences that also occur, exactly, among the references' sentences.

    Returns 0.0 when nothing was retrieved.
    """
    reference_sentences = set(context_sentences(references, splitter))
    retrieved_sentences = context_sentences(retrieved, splitter)
    if not retrieved_sentences:
        return 0.0
    return sum(s in reference_sentences for s in retrieved_sentences) / len(retrieved_sentences)


def recall_at_k(hits: Sequence[bool], k: int) -> float:
    """1.0 if any of the first ``k`` ranked units is a hit, else 0.0.

    >>> recall_at_k([False, True, False], 1), recall_at_k([False, True, False], 3)
    (0.0, 1.0)
    """
    k = check_int(k, "k", low=1)
    return 1.0 if any(hits[:k]) else 0.0


def mrr_at_k(hits: Sequence[bool], k: int) -> float:
    """Reciprocal rank of the first hit within the first ``k`` (0.0 if none).

    >>> mrr_at_k([False, True, False], 5)
    0.5
    """
    k = check_int(k, "k", low=1)
    for rank, hit in enumerate(hits[:k], start=1):
        if hit:
            return 1.0 / rank
    return 0.0
