"""Several pipelines on the same questions: each metric with its interval, and which
differences are real.

:func:`compare_results` takes :func:`course_lib.lab.measure.evaluation.evaluate` results (only their
``per_question`` columns are read) and returns a JSON-ready report:

* per pipeline, each metric's mean with its 95 % interval (exact for hit/miss columns
  such as recall@k, a seeded bootstrap over questions otherwise —
  :func:`course_lib.lab.measure.significance.interval`);
* per comparison — each other pipeline against the baseline (the first one named
  unless ``baseline`` says otherwise), for each tested metric — the paired difference
  ``pipeline − baseline`` with its bootstrap interval, won/lost questions, the p-value
  (exact McNemar for recall@k, paired sign-flip randomization for MRR and nDCG), the
  Holm-adjusted p over **all** the comparisons of the report, and a verdict that reads
  the adjusted p (:func:`course_lib.lab.measure.significance.verdict`).

:func:`format_comparison` prints it. It does not run pipelines (``evaluate`` does), and
it compares only runs on the very same questions, in the same order.

>>> a = {"per_question": {"id": ["q1", "q2", "q3", "q4"], "recall@1": [1, 1, 1, 0]}}
>>> b = {"per_question": {"id": ["q1", "q2", "q3", "q4"], "recall@1": [1, 0, 0, 0]}}
>>> report = compare_results({"old": b, "new": a}, metrics=["recall@1"], tested=["recall@1"])
>>> report["pipelines"]["new"]["recall@1"]["mean"], report["baseline"]
(0.75, 'old')
>>> row = report["comparisons"][0]
>>> row["pipeline"], row["difference"], row["won"], row["lost"], row["p"], row["verdict"]
('new', 0.5, 2, 0, 0.5, 'no detectable difference')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .significance import CONFIDENCE, RESAMPLES, SEED, compare_pair, holm_family, interval

METRICS = ("recall@1", "recall@5", "mrr@5", "ndcg@10", "context_relevance@5")  # summarised
TESTED = ("recall@1", "recall@5", "mrr@5", "ndcg@10")  # compared pair by pair
ALPHA = 0.05


def _columns(results: Mapping[str, Mapping[str, Any]], keys: Sequence[str]
             ) -> dict[str, dict[str, list[Any]]]:
    """Each result's ``per_question`` columns, checked: same question ids, keys present."""
    if len(results) < 2:
        raise ValueError(f"comparing needs at least two pipelines' results, got {len(results)}")
    columns: dict[str, dict[str, list[Any]]] = {}
    first_ids: list[Any] | None = None
    for name, result in results.items():
        table = result.get("per_question") if isinstance(result, Mapping) else None
        if not isinstance(table, Mapping) or "id" not in table:
            raise ValueError(f"result {name!r} has no per_question columns with question ids; "
                             "pass what course_lib.lab.measure.evaluation.evaluate returns")
        missing = [key for key in keys if key not in table]
        if missing:
            have = ", ".join(k for k in table if k not in ("id", "gold_rank"))
            raise ValueError(f"result {name!r} has no per-question column {missing[0]!r}; "
                             f"it has {have}")
        if first_ids is None:
            first_ids = list(table["id"])
        elif list(table["id"]) != first_ids:
            raise ValueError(f"result {name!r} was not run on the same questions, in the same "
                             "order, as the first one: a paired comparison needs both")
        columns[name] = {key: list(table[key]) for key in keys}
    return columns


def compare_results(results: Mapping[str, Mapping[str, Any]], baseline: str | None = None,
                    metrics: Sequence[str] = METRICS, tested: Sequence[str] = TESTED,
                    seed: int = SEED) -> dict[str, Any]:
    """Intervals per pipeline and paired tests against ``baseline`` (see the module).

    ``results`` maps pipeline names to ``evaluate`` results, in the order to report;
    ``baseline`` defaults to the first name. Returns a dict with ``baseline``,
    ``questions``, ``confidence``, ``pipelines`` (``{name: {metric: {"mean", "low",
    "high"}}}``), ``comparisons`` (one row per other pipeline and tested metric: keys
    ``pipeline``, ``baseline``, ``metric``, ``test``, ``difference``, ``low``, ``high``,
    ``won``, ``lost``, ``p``, ``p_holm``, ``verdict``) and ``note`` (how p and p_holm were
    computed: the table's footer line).
    Raises ``ValueError`` for fewer than two results, an unknown baseline, a missing
    column, or runs on different questions.
    """
    names = list(results)
    base = names[0] if baseline is None else baseline
    if base not in results:
        raise ValueError(f"baseline {base!r} is not among the results ({', '.join(names)})")
    columns = _columns(results, list(dict.fromkeys([*metrics, *tested])))
    questions = len(next(iter(results.values()))["per_question"]["id"])
    pipelines = {}
    for name in names:
        pipelines[name] = {}
        for metric in metrics:
            values = columns[name][metric]
            low, high = interval(values, seed=seed)
            pipelines[name][metric] = {"mean": round(sum(values) / len(values), 4),
                                       "low": round(low, 4), "high": round(high, 4)}
    rows: list[dict[str, Any]] = []
    for name in names:
        if name == base:
            continue
        for metric in tested:
            pair = compare_pair(columns[name][metric], columns[base][metric], seed=seed)
            rows.append({"pipeline": name, "baseline": base, "metric": metric,
                         "test": pair["test"], "difference": round(pair["difference"], 4),
                         "low": round(pair["low"], 4), "high": round(pair["high"], 4),
                         "won": pair["won"], "lost": pair["lost"], "p": pair["p"]})
    holm_family(rows, ALPHA)
    note = (f"p: exact McNemar (hit@k) / paired sign-flip randomization (MRR, nDCG), "
            f"{RESAMPLES:,} draws, seed {seed}; p_holm: Holm over the {len(rows)} tests above")
    return {"baseline": base, "questions": questions, "confidence": CONFIDENCE,
            "pipelines": pipelines, "comparisons": rows, "note": note}


def _p(value: float) -> str:
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def format_comparison(report: Mapping[str, Any]) -> str:
    """The report of :func:`compare_results` as two text tables and a footer line."""
    pipelines = report["pipelines"]
    width = max(len("pipeline"), *(len(name) for name in pipelines))
    metric_width = max(len("metric"), *(len(m) for row in pipelines.values() for m in row))
    percent = f"{report['confidence'] * 100:g} %"
    lines = [f"{report['questions']} questions; {percent} intervals: exact "
             "(Clopper–Pearson) for recall@k, bootstrap over questions for the others",
             f"{'pipeline':<{width}}  {'metric':<{metric_width}}  {'mean':>7}  interval"]
    for name, row in pipelines.items():
        for index, (metric, cell) in enumerate(row.items()):
            lines.append(f"{name if index == 0 else '':<{width}}  {metric:<{metric_width}}  "
                         f"{cell['mean']:>7.4f}  [{cell['low']:.4f}, {cell['high']:.4f}]")
    rows = report["comparisons"]
    if rows:
        lines += ["", f"against the baseline {report['baseline']}: difference = pipeline − "
                  f"baseline, its {percent} interval a percentile bootstrap over questions; "
                  f"verdict: p_holm < {ALPHA}",
                  f"{'pipeline':<{width}}  {'metric':<{metric_width}}  {'diff':>7}  "
                  f"{'interval':<18}  {'won':>4}  {'lost':>4}  {'p':>7}  {'p_holm':>7}  verdict"]
        for row in rows:
            span = f"[{row['low']:+.4f}, {row['high']:+.4f}]"
            lines.append(f"{row['pipeline']:<{width}}  {row['metric']:<{metric_width}}  "
                         f"{row['difference']:>+7.4f}  {span:<18}  "
                         f"{row['won']:>4}  {row['lost']:>4}  {_p(row['p']):>7}  "
                         f"{_p(row['p_holm']):>7}  {row['verdict']}")
        lines.append(report["note"])
    return "\n".join(lines)
