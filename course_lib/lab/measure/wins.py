"""Does a technique win where its mechanism should help — and not where it should not?

A lesson measures its technique against a baseline in two or more settings
(:mod:`course_lib.lab.data.settings`): one where the mechanism has something to work on,
one where it has not. :func:`win_loss` takes those paired runs and returns one row per
comparison: both means, the difference with its 95 % bootstrap interval, the questions
won and lost, the p-value (exact McNemar for hit/miss metrics such as recall@1, the
paired sign-flip test otherwise), the p-value Holm-adjusted over the rows of the
table **on the same questions** (notebook 01's policy: a family is the comparisons one table
makes on one question set; rows on other questions are another family, even in the same
table), and the verdict the adjusted p allows: ``wins``, ``loses`` or ``no detectable
difference``.

:func:`format_win_loss` prints the table; a notebook's sentences quote its verdicts and
differences, and a test checks each sentence against the table
(``tests/repo/test_notebook_claims.py``).

>>> a = {"per_question": {"id": list("abcdefgh"), "recall@1": [1] * 8}}
>>> b = {"per_question": {"id": list("abcdefgh"), "recall@1": [0] * 8}}
>>> rows = win_loss([Case("toy", "new", "old", a, b)])
>>> rows[0]["difference"], rows[0]["won"], rows[0]["verdict"]
(1.0, 8, 'wins')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .significance import SEED, compare_pair, holm_family

ALPHA = 0.05
VERDICTS = ("wins", "loses", "no detectable difference")
WORDS = {"higher": "wins", "lower": "loses"}  # a technique against its baseline


@dataclass
class Case:
    """One comparison a lesson states: ``technique`` against ``baseline`` in ``setting``
    on ``metric``; ``technique_result`` and ``baseline_result`` are
    :func:`~course_lib.lab.measure.evaluation.evaluate` results on the very same questions."""

    setting: str
    technique: str
    baseline: str
    technique_result: Mapping[str, Any]
    baseline_result: Mapping[str, Any]
    metric: str = "recall@1"


def _column(result: Mapping[str, Any], metric: str, who: str) -> tuple[list[Any], list[float]]:
    table = result.get("per_question") if isinstance(result, Mapping) else None
    if not isinstance(table, Mapping) or "id" not in table:
        raise ValueError(f"{who} has no per_question columns: pass what evaluate() returns")
    if metric not in table:
        have = ", ".join(k for k in table if k not in ("id", "gold_rank"))
        raise ValueError(f"{who} has no per-question column {metric!r}; it has {have}")
    return list(table["id"]), [float(x) for x in table[metric]]


def win_loss(cases: Sequence[Case], alpha: float = ALPHA, seed: int = SEED
             ) -> list[dict[str, Any]]:
    """One row per case (see the module), Holm-adjusted over the rows on the same questions
    (the same question ids, in the same order)."""
    if not cases:
        raise ValueError("win_loss needs at least one Case")
    rows: list[dict[str, Any]] = []
    question_set: dict[int, tuple[Any, ...]] = {}  # each row's question ids
    for case in cases:
        ids_t, t = _column(case.technique_result, case.metric, f"{case.technique!r}")
        ids_b, b = _column(case.baseline_result, case.metric, f"{case.baseline!r}")
        if ids_t != ids_b:
            raise ValueError(f"{case.setting}: {case.technique!r} and {case.baseline!r} were "
                             "not run on the same questions in the same order (a paired "
                             "comparison needs both)")
        rows.append({"setting": case.setting, "technique": case.technique,
                     "baseline": case.baseline, "metric": case.metric, "questions": len(t),
                     "technique_mean": sum(t) / len(t), "baseline_mean": sum(b) / len(b),
                     **compare_pair(t, b, seed=seed)})
        question_set[id(rows[-1])] = tuple(ids_t)
    # one Holm family per question set: rows on other questions are corrected apart
    holm_family(rows, alpha, family=lambda row: question_set[id(row)])
    for row in rows:  # a table of techniques against baselines: wins and loses
        row["verdict"] = WORDS.get(row["verdict"], row["verdict"])
    return rows


def format_p(value: float) -> str:
    """A p-value as the table prints it: "<0.001", three decimals, or "1" (no
    discordant questions at all; printed so, "1.000" would read as a measured share)."""
    if value < 0.001:
        return "<0.001"
    return "1" if value >= 0.9995 else f"{value:.3f}"


def format_win_loss(rows: Sequence[Mapping[str, Any]], title: str = "") -> str:
    """The rows of :func:`win_loss` as a text table, with a footer saying how to read it.

    >>> a = {"per_question": {"id": ["q1", "q2"], "recall@1": [1, 1]}}
    >>> print(format_win_loss(win_loss([Case("toy", "new", "old", a, a)])))
    ... # doctest: +NORMALIZE_WHITESPACE
    setting  technique vs baseline  metric    baseline  technique  difference [95% interval]
        p  p_holm  verdict
    toy      new vs old             recall@1     1.000      1.000  +0.000 [+0.000, +0.000]
            1       1  no detectable difference
    (2 questions) difference = technique − baseline on the same questions; ...
    """
    pairs = [f"{r['technique']} vs {r['baseline']}" for r in rows]
    w_set = max(len("setting"), *(len(r["setting"]) for r in rows))
    w_pair = max(len("technique vs baseline"), *(len(p) for p in pairs))
    w_metric = max(len("metric"), *(len(r["metric"]) for r in rows))
    lines = [title] if title else []
    lines.append(f"{'setting':<{w_set}}  {'technique vs baseline':<{w_pair}}  "
                 f"{'metric':<{w_metric}}  {'baseline':>8}  {'technique':>9}  "
                 f"{'difference [95% interval]':<26}  {'p':>6}  {'p_holm':>6}  verdict")
    for row, pair in zip(rows, pairs, strict=True):
        span = f"{row['difference']:+.3f} [{row['low']:+.3f}, {row['high']:+.3f}]"
        p, p_holm = format_p(row["p"]), format_p(row["p_holm"])
        lines.append(f"{row['setting']:<{w_set}}  {pair:<{w_pair}}  {row['metric']:<{w_metric}}"
                     f"  {row['baseline_mean']:>8.3f}  {row['technique_mean']:>9.3f}  "
                     f"{span:<26}  {p:>6}  {p_holm:>6}  {row['verdict']}")
    # how many questions each setting asked, in the rows' order (one number when all agree)
    sizes = dict.fromkeys((r["setting"], r["questions"]) for r in rows)
    counted = (f"{rows[0]['questions']} questions" if len({n for _, n in sizes}) == 1 else
               "questions: " + "; ".join(f"{setting} {n}" for setting, n in sizes))
    lines.append(f"({counted}) difference = technique − baseline "
                 "on the same questions; interval: percentile bootstrap; p: exact McNemar "
                 "(hit/miss) or paired sign-flip; p_holm: Holm over this table's rows on the same "
                 "questions; "
                 f"verdict from p_holm < {ALPHA}")
    return "\n".join(lines)
