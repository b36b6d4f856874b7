"""Is the difference real? Intervals for one pipeline, paired tests between two.

A recall@1 of 0.979 on 1,000 questions is an estimate: another 1,000 questions of the
same kind would give another number. This module says how far it could move, and
whether two pipelines run on **the same questions** really differ:

* :func:`proportion_interval` — an exact (Clopper–Pearson) 95 % interval for a share of
  questions (recall@k, a hit rate): the question either hits or not, so the count is
  binomial and the interval needs no simulation and no seed.
* :func:`bootstrap_interval` — a seeded percentile bootstrap for the mean of any
  per-question number (MRR@k, context relevance, nDCG): resample the questions with
  replacement, recompute the mean, keep the middle 95 %.
* :func:`mcnemar` — the exact McNemar test for two hit/miss columns: only the questions
  where the two pipelines *disagree* carry information; under "no difference" each
  of them is a fair coin, so the p-value is a binomial tail (``b`` won, ``c`` lost).
* :func:`paired_randomization` — the same idea for numbers that are not 0/1 (MRR,
  nDCG): under "no difference" the sign of each question's difference is a coin flip.
* :func:`paired_difference` — the mean difference with its bootstrap interval; with
  ``clusters`` (each question's paragraph, say) the bootstrap resamples whole clusters:
  questions written on one paragraph rise and fall together, and resampling them one by
  one makes the interval too narrow (:func:`cluster_resamples`).
* :func:`holm` — when one table tests many rows against one baseline, some small
  p-values appear by chance; Holm's step-down correction keeps the chance of *any*
  false "significant" at 5 %.

Paired beats unpaired: two pipelines on the same questions share each question's
difficulty, so their difference varies far less than either result does.

The formulas are written out here because they are the lesson; ``tests/test_significance``
checks each against ``scipy.stats`` (``binomtest``, ``bootstrap``, ``permutation_test``).

>>> mcnemar([1, 1, 0, 1, 0, 1], [1, 0, 0, 0, 0, 1])["won"], mcnemar([1, 1, 0], [1, 0, 0])["lost"]
(2, 0)
>>> [round(x, 3) for x in proportion_interval(979, 1000)]
[0.968, 0.987]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 10_000  # bootstrap / randomization draws: the 3rd decimal of an interval is stable
SEED = 0


def _column(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty list of per-question numbers, "
                         f"got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds NaN or infinite values; every question needs a number")
    return array


def _pair(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    a, b = _column(a, "a"), _column(b, "b")
    if a.size != b.size:
        raise ValueError(f"a paired comparison needs one value per question from each run: "
                         f"a has {a.size}, b has {b.size} (were they run on the same questions?)")
    return a, b


def _check_confidence(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return confidence


def proportion_interval(successes: int, n: int, confidence: float = CONFIDENCE
                        ) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval for a share ``successes / n``.

    It inverts two binomial tails, so it is never narrower than it should be (it covers
    the true share at least ``confidence`` of the time).

    >>> [round(x, 4) for x in proportion_interval(10, 10)]
    [0.6915, 1.0]
    """
    if not (isinstance(n, int | np.integer) and isinstance(successes, int | np.integer)):
        raise ValueError(f"successes and n must be whole numbers, got {successes!r} and {n!r}")
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 ≤ successes ≤ n and n ≥ 1, got successes={successes}, n={n}")
    from scipy.stats import beta  # here: importing scipy.stats costs ~50 MB of memory

    alpha = 1 - _check_confidence(confidence)
    low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.isf(alpha / 2, successes + 1, n - successes))
    return low, high


def _resampled_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Means of ``resamples`` bootstrap samples (questions drawn with replacement)."""
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, 1000):  # in blocks: 1,000 × n indices at a time
        stop = min(start + 1000, resamples)
        means[start:stop] = values[rng.integers(0, values.size, (stop - start, values.size))
                                   ].mean(axis=1)
    return means


def bootstrap_interval(values: Sequence[float], confidence: float = CONFIDENCE,
                       resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    """Percentile-bootstrap interval for the mean of per-question ``values`` (seeded).

    >>> bootstrap_interval([1.0, 1.0, 1.0])
    (1.0, 1.0)
    """
    values = _column(values, "values")
    alpha = 1 - _check_confidence(confidence)
    means = _resampled_means(values, resamples, seed)
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def interval(values: Sequence[float], confidence: float = CONFIDENCE, seed: int = SEED
             ) -> tuple[float, float]:
    """The course's interval for a mean over questions: exact when every value is 0 or 1
    (a share, such as recall@k), else the seeded bootstrap.

    >>> [round(x, 3) for x in interval([1] * 979 + [0] * 21)]
    [0.968, 0.987]
    """
    values = _column(values, "values")
    if np.isin(values, (0.0, 1.0)).all():
        return proportion_interval(int(values.sum()), int(values.size), confidence)
    return bootstrap_interval(values, confidence, seed=seed)


def mcnemar(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Exact McNemar test of two hit/miss columns (1 = hit) on the same questions.

    Returns ``won`` (questions ``a`` hits and ``b`` misses), ``lost`` (the reverse) and
    the two-sided ``p``: ``P(X ≤ min(won, lost)) · 2`` for ``X ~ Binomial(won + lost, ½)``,
    at most 1 (1.0 when they never disagree).

    >>> mcnemar([1] * 10 + [0] * 3, [0] * 10 + [1] * 3)["p"] < 0.1
    True
    """
    a, b = _pair(a, b)
    if not (np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all()):
        raise ValueError("mcnemar compares hit/miss columns (0 or 1 per question); for other "
                         "numbers use paired_randomization")
    won, lost = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    n = won + lost
    tail = sum(math.comb(n, i) for i in range(min(won, lost) + 1)) / 2 ** n
    return {"won": won, "lost": lost, "p": min(1.0, 2 * tail)}


def paired_randomization(a: Sequence[float], b: Sequence[float], resamples: int = RESAMPLES,
                         seed: int = SEED) -> float:
    """Two-sided p-value of a paired sign-flip test on the mean difference ``a − b``.

    Under "no difference" each question's difference is as likely to be ``+d`` as
    ``−d``. Questions with ``d = 0`` flip to themselves, so only the others are flipped:
    every pattern when there are at most log₂(``resamples``) of them (exact), else
    ``resamples`` seeded draws, counted like ``scipy.stats.permutation_test``
    (``(hits + 1) / (resamples + 1)``, never 0).

    >>> paired_randomization([0.5, 1.0, 1.0], [0.5, 1.0, 1.0])
    1.0
    """
    a, b = _pair(a, b)
    d = (a - b)[a != b]
    if d.size == 0:
        return 1.0
    observed = d.sum()
    if 2 ** d.size <= resamples:  # every sign pattern: an exact test
        signs = 1 - 2 * ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1)
        sums, extra = (signs * d).sum(axis=1), 0
    else:
        rng = np.random.default_rng(seed)
        sums = np.concatenate([(rng.choice((-1.0, 1.0), (min(1000, resamples - s), d.size))
                                * d).sum(axis=1) for s in range(0, resamples, 1000)])
        extra = 1
    tolerance = 1e-9 * max(1.0, abs(observed))  # equal sums must compare equal
    greater = ((sums >= observed - tolerance).sum() + extra) / (sums.size + extra)
    less = ((sums <= observed + tolerance).sum() + extra) / (sums.size + extra)
    return float(min(1.0, 2 * min(greater, less)))


def cluster_resamples(clusters: Sequence[object], resamples: int = RESAMPLES, seed: int = SEED
                      ) -> tuple[list[np.ndarray], np.ndarray]:
    """The clusters' members (question indices, clusters in the order first seen) and a
    ``(resamples, number of clusters)`` array of cluster numbers drawn with replacement:
    one bootstrap sample per row, whole clusters at a time.

    >>> members, drawn = cluster_resamples(["p1", "p1", "p2"], resamples=2)
    >>> [m.tolist() for m in members], drawn.shape
    ([[0, 1], [2]], (2, 2))
    """
    groups: dict[object, list[int]] = {}
    for i, cluster in enumerate(clusters):
        groups.setdefault(cluster, []).append(i)
    members = [np.asarray(group) for group in groups.values()]
    rng = np.random.default_rng(seed)
    drawn = np.stack([rng.integers(0, len(members), len(members)) for _ in range(resamples)])
    return members, drawn


def cluster_bootstrap_interval(values: Sequence[float], clusters: Sequence[object],
                               confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                               seed: int = SEED) -> tuple[float, float]:
    """Percentile-bootstrap interval for the mean of per-question ``values``, resampling
    whole ``clusters`` (one label per question) instead of single questions.

    >>> cluster_bootstrap_interval([1.0, 1.0, 0.0, 0.0], ["a", "a", "b", "b"], resamples=200)
    (0.0, 1.0)
    """
    values = _column(values, "values")
    if len(clusters) != values.size:
        raise ValueError(f"clusters needs one label per question ({values.size}), got "
                         f"{len(clusters)}")
    alpha = 1 - _check_confidence(confidence)
    members, drawn = cluster_resamples(clusters, resamples, seed)
    sums = np.array([values[m].sum() for m in members])
    sizes = np.array([m.size for m in members])
    means = sums[drawn].sum(axis=1) / sizes[drawn].sum(axis=1)
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def paired_difference(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE,
                      seed: int = SEED, clusters: Sequence[object] | None = None
                      ) -> dict[str, float]:
    """Mean of ``a − b`` over questions, with its percentile-bootstrap interval (over
    questions, or over whole ``clusters`` when given: :func:`cluster_bootstrap_interval`).

    >>> paired_difference([1, 1, 1], [0, 0, 0])
    {'difference': 1.0, 'low': 1.0, 'high': 1.0}
    """
    a, b = _pair(a, b)
    if clusters is None:
        low, high = bootstrap_interval(a - b, confidence, seed=seed)
    else:
        low, high = cluster_bootstrap_interval(a - b, clusters, confidence, seed=seed)
    return {"difference": float((a - b).mean()), "low": low, "high": high}


def compare_pair(a: Sequence[float], b: Sequence[float], seed: int = SEED) -> dict[str, float]:
    """Everything the course reports for one metric of two runs on the same questions:
    the mean difference ``a − b`` with its interval, and the p-value of the test that
    fits the numbers (exact McNemar for 0/1 columns, else the paired randomization
    test); ``won``/``lost`` count the questions where ``a`` is above / below ``b``.

    >>> compare_pair([1, 1, 0], [1, 0, 0])["test"]
    'mcnemar'
    """
    a, b = _pair(a, b)
    row = paired_difference(a, b, seed=seed)
    if np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all():
        test = mcnemar(a, b)
        row.update(won=test["won"], lost=test["lost"], p=test["p"], test="mcnemar")
    else:
        row.update(won=int((a > b).sum()), lost=int((a < b).sum()),
                   p=paired_randomization(a, b, seed=seed), test="randomization")
    return row


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given.

    Sort the m p-values; multiply the i-th smallest by ``m − i`` (i from 0), keep them
    non-decreasing and at most 1. Reject where the adjusted value is below 0.05.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    p = _column(p_values, "p_values")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("p-values lie between 0 and 1")
    order = np.argsort(p, kind="stable")
    adjusted = np.empty_like(p)
    running = 0.0
    for i, index in enumerate(order):
        running = max(running, min(1.0, (p.size - i) * p[index]))
        adjusted[index] = running
    return [round(float(x), 12) for x in adjusted]


def verdict(row: dict[str, float], alpha: float = 0.05, p_key: str = "p") -> str:
    """The words a difference has earned: "higher" or "lower" only when the test says so,
    else "no detectable difference".

    >>> verdict({"difference": 0.007, "p": 0.09})
    'no detectable difference'
    """
    if row[p_key] >= alpha:
        return "no detectable difference"
    return "higher" if row["difference"] > 0 else "lower"


def holm_family(rows: Sequence[dict[str, Any]], alpha: float = 0.05,
                family: Callable[[dict[str, Any]], Any] = lambda row: None
                ) -> list[dict[str, Any]]:
    """Notebook 01's policy, written once: give each row (a dict with ``difference`` and
    ``p``) its Holm-adjusted ``p_holm`` — Holm over the rows of its *family*, the rows for
    which ``family(row)`` is equal (by default all of them: one table on one question set)
    — and the ``verdict`` that ``p_holm`` allows (:func:`verdict`). The rows are updated in
    place and returned, in their order.

    >>> rows = [{"difference": 0.01, "p": 0.03}, {"difference": -0.02, "p": 0.04}]
    >>> [(row["p_holm"], row["verdict"]) for row in holm_family(rows)]
    [(0.06, 'no detectable difference'), (0.06, 'no detectable difference')]
    >>> [row["p_holm"] for row in holm_family(rows, family=lambda row: row["difference"])]
    [0.03, 0.04]
    """
    families: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        families.setdefault(family(row), []).append(row)
    for members in families.values():
        for row, adjusted in zip(members, holm([row["p"] for row in members]), strict=True):
            row["p_holm"] = adjusted
            row["verdict"] = verdict(row, alpha, "p_holm")
    return list(rows)


# ---------------------------------------------------------------- how many questions?
def mcnemar_power(n: int, difference: float, discordant_share: float, simulations: int = 1000,
                  alpha: float = 0.05, seed: int = SEED) -> float:
    """The share of simulated comparisons on ``n`` questions in which :func:`mcnemar`
    finds a difference (``p < alpha``): the *power* to detect a true difference
    ``difference`` in recall (``a − b``) when the two pipelines disagree on a share
    ``discordant_share`` of the questions. Seeded, so the same call gives the same share.

    Each simulated question is "only ``a`` hits" with probability
    ``(discordant_share + difference) / 2``, "only ``b`` hits" with probability
    ``(discordant_share − difference) / 2``, else both or neither (which McNemar ignores,
    so they need not be told apart): the counts ``won`` and ``lost`` of ``n`` such
    questions are one multinomial draw, and each draw is tested by :func:`mcnemar` itself.
    With ``difference=0`` the share is the test's false-alarm rate, at most about ``alpha``.

    >>> mcnemar_power(2000, 0.01, 0.025, simulations=200) > mcnemar_power(250, 0.01, 0.025,
    ...                                                                    simulations=200)
    True
    """
    if not (isinstance(n, int | np.integer) and n >= 1):
        raise ValueError(f"n must be a whole number of questions ≥ 1, got {n!r}")
    if not (isinstance(simulations, int | np.integer) and simulations >= 1):
        raise ValueError(f"simulations must be a whole number ≥ 1, got {simulations!r}")
    if not 0 < discordant_share <= 1:
        raise ValueError(f"discordant_share is a share of questions in (0, 1], "
                         f"got {discordant_share!r}")
    if not abs(difference) <= discordant_share:
        raise ValueError(f"a difference of {difference!r} needs at least that share of "
                         f"questions where the pipelines disagree, got {discordant_share!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    only_a, only_b = (discordant_share + difference) / 2, (discordant_share - difference) / 2
    draws = np.random.default_rng(seed).multinomial(
        n, [only_a, only_b, max(0.0, 1 - only_a - only_b)], size=simulations)
    p_values: dict[tuple[int, int], float] = {}  # one test per distinct (won, lost)
    rejected = 0
    for won, lost, _ in draws.tolist():
        if (won, lost) not in p_values:
            p_values[won, lost] = (mcnemar([1] * won + [0] * lost, [0] * won + [1] * lost)["p"]
                                   if won + lost else 1.0)
        rejected += p_values[won, lost] < alpha
    return rejected / simulations
