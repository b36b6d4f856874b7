"""Choosing in folds: an honest number for a setting chosen on the same questions.

Pick the best of several settings on a question set and read its score there, and the
number flatters the choice: the winner is partly the setting that was luckiest on these
questions. :func:`choose_in_folds` splits the questions into folds (whole clusters — all
questions of one paragraph — in one fold, so a paragraph never sits on both sides), and
for each fold chooses the best setting on the *other* folds, then scores that choice on
this fold. The mean over the folds estimates what "choose the best on such questions"
gives on questions the choice did not see. It does not replace a held-out set: the folds
still come from the same collection (notebook 13 compares both).

>>> columns = {"a": [1, 1, 0, 0, 1, 1], "b": [1, 0, 1, 0, 1, 0]}
>>> result = choose_in_folds(columns, clusters=["p1", "p1", "p2", "p2", "p3", "p3"], folds=3)
>>> result["best"], result["in_sample"], len(result["chosen"])
('a', 0.6667, 3)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._support.validation import check_int
from .significance import SEED


def folds_by_cluster(clusters: Sequence[object], folds: int = 5, seed: int = SEED) -> list[int]:
    """Each question's fold (0 … ``folds`` − 1): the distinct clusters shuffled (seeded)
    and dealt in turn, so all questions of one cluster share a fold.

    >>> folds_by_cluster(["p1", "p1", "p2", "p3"], folds=2)
    [1, 1, 0, 0]
    """
    folds = check_int(folds, "folds", low=2)
    distinct = list(dict.fromkeys(clusters))
    if len(distinct) < folds:
        raise ValueError(f"folds={folds} needs at least that many clusters, got {len(distinct)}")
    order = np.random.default_rng(seed).permutation(len(distinct))
    fold_of = {distinct[k]: i % folds for i, k in enumerate(order)}
    return [fold_of[cluster] for cluster in clusters]


def choose_in_folds(columns: Mapping[str, Sequence[float]], clusters: Sequence[object],
                    folds: int = 5, seed: int = SEED) -> dict[str, Any]:
    """Choose among ``columns`` (setting → per-question values, higher is better) in folds.

    Returns ``best`` and ``in_sample`` (the setting with the highest mean over all
    questions, and that mean: the flattering number), ``chosen`` (the setting chosen
    for each fold on the other folds), ``out_of_fold`` (the mean, over all questions, of
    the value of the setting chosen without the question's fold) and ``folds`` (each
    question's fold). Means are rounded to 4 decimals; ties go to the setting named
    first.
    """
    if not columns:
        raise ValueError("choose_in_folds needs at least one setting's column")
    names = list(columns)
    table = np.array([np.asarray(columns[name], dtype=float) for name in names])
    if table.ndim != 2 or table.shape[1] != len(clusters):
        raise ValueError(f"every column needs one value per question ({len(clusters)} "
                         "clusters given)")
    fold_of = np.array(folds_by_cluster(clusters, folds, seed))
    chosen, scored = [], np.empty(table.shape[1])
    for fold in range(int(fold_of.max()) + 1):
        inside = fold_of == fold
        pick = int(np.argmax(table[:, ~inside].mean(axis=1)))  # first of equal means
        chosen.append(names[pick])
        scored[inside] = table[pick, inside]
    means = table.mean(axis=1)
    best = int(np.argmax(means))
    return {"best": names[best], "in_sample": round(float(means[best]), 4), "chosen": chosen,
            "out_of_fold": round(float(scored.mean()), 4), "folds": fold_of.tolist()}
