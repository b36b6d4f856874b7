"""This notebook's comparison chart: the results a notebook records (:func:`record`, kept in
memory per process, so a chart depends only on its own notebook's cells) drawn side by side
(:func:`comparison_chart`), the first highlighted only when a paired test says it is
detectably above the second (:func:`best_detectable`). :mod:`course_lib.lab.show.plots` offers
every name here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .figures import HIGHLIGHT, PLAIN, _axis_start, _clean, _figure, _step

# In memory, per Python process: what a notebook shows depends only on its own cells.
# (A shared file on disk made one notebook's chart depend on which others had run.)
_RECORDED: dict[str, dict[str, float]] = {}
_PER_QUESTION: dict[str, dict[str, list[float]]] = {}  # the same results, question by question


def record(result: dict[str, Any], label: str | None = None) -> None:
    """Add an evaluation result (recall@k, MRR@k) to this session's comparison chart — and
    its per-question columns, when it has them, so the chart can test its best bar.

    >>> clear_recorded(); record({"pipeline": "bm25", "recall@1": 0.9, "seconds": 2.0})
    >>> recorded()
    {'bm25': {'recall@1': 0.9}}
    """
    keep = {k: v for k, v in result.items() if k.startswith(("recall@", "mrr@"))}
    name = label or result["pipeline"]
    _RECORDED[name] = keep
    _PER_QUESTION[name] = {k: list(v) for k, v in result.get("per_question", {}).items()
                           if k in keep}


def recorded() -> dict[str, dict[str, float]]:
    """What :func:`record` collected in this Python process (a copy)."""
    return {name: dict(scores) for name, scores in _RECORDED.items()}


def clear_recorded() -> None:
    """Forget every recorded result."""
    _RECORDED.clear()
    _PER_QUESTION.clear()


def best_detectable(results: dict[str, dict[str, Any]], ranked: Sequence[str], metric: str
                    ) -> tuple[bool, str]:
    """Whether the first of ``ranked`` is detectably above the second on ``metric`` — a
    paired test over the same questions (:func:`~course_lib.lab.measure.significance.compare_pair`,
    p < 0.05) — and a few words saying so. Without both per-question columns (or with one
    pipeline) nothing can be tested: ``False``.

    >>> results = {"a": {"per_question": {"recall@1": [1.0] * 30}},
    ...            "b": {"per_question": {"recall@1": [0.0] * 30}}}
    >>> best_detectable(results, ["a", "b"], "recall@1")
    (True, 'best: a, detectably above b (paired test, p <0.001)')
    """
    from ..measure.significance import compare_pair
    from ..measure.wins import format_p

    if len(ranked) < 2:
        return False, f"only {ranked[0]}" if ranked else "nothing to compare"
    first, second = ranked[0], ranked[1]
    columns = [results[n].get("per_question", {}).get(metric, _PER_QUESTION.get(n, {}).get(metric))
               for n in (first, second)]
    if any(c is None for c in columns) or len(columns[0]) != len(columns[1]):
        return False, f"highest: {first} (not tested: no per-question results)"
    p = compare_pair(columns[0], columns[1])["p"]
    if p < 0.05 and sum(columns[0]) < sum(columns[1]):  # the test is two-sided
        return False, (f"{first} is detectably below {second} (paired test, p {format_p(p)}): "
                       "rank the pipelines best first")
    if p < 0.05:
        return True, f"best: {first}, detectably above {second} (paired test, p {format_p(p)})"
    return False, (f"highest: {first}, no detectable difference from {second} (paired test, "
                   f"p {format_p(p)}): none highlighted")


def comparison_chart(results: dict[str, dict[str, float]] | None = None,
                     ks: Sequence[int] = (1, 3, 5), limit: int = 8) -> Any:
    """One panel per metric (recall@k for each k, then MRR@max k), one bar per pipeline.

    Pipelines are sorted by recall@min k (ties: the next metrics, then the name); the first
    is highlighted only when a paired test says it is detectably above the second
    (:func:`best_detectable`; the subtitle says which); at most ``limit`` are drawn (the
    best ones, and the subtitle says so).
    Every bar carries its value; when all values are high the axis starts above 0, and
    the subtitle says where.
    """
    from plotly.subplots import make_subplots

    results = recorded() if results is None else results
    metrics = [m for m in [*(f"recall@{k}" for k in ks), f"mrr@{max(ks)}"]
               if any(m in scores for scores in results.values())]
    if not metrics:
        figure = _figure("Recall@k and MRR@k on CMRC 2018", width=820, height=240)
        figure.add_annotation(text="Nothing recorded yet: plots.record(evaluate(kb, name)) first.",
                              showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
        return figure
    ranked = sorted(results, key=lambda name: (*(-results[name].get(m, -1.0) for m in metrics),
                                               name))
    shown = ranked[:limit]
    values = [results[n][m] for n in shown for m in metrics if m in results[n]]
    start, top = _axis_start(min(values)), max(1.0, max(values))  # shares: up to 1
    step = _step(top - start)
    detectable, verdict = best_detectable(results, ranked, metrics[0])
    notes = [f"sorted by {metrics[0]}; {verdict}" + (" (highlighted)" if detectable else "")]
    if len(ranked) > len(shown):
        notes.append(f"the {len(shown)} best of {len(ranked)} pipelines")
    if start > 0:
        notes.append(f"bars start at {start:g}")
    figure = make_subplots(rows=1, cols=len(metrics), shared_yaxes=True, horizontal_spacing=0.06,
                           subplot_titles=[m.replace("mrr", "MRR") for m in metrics])
    figure.update_layout(template="plotly_white", width=820, height=150 + 34 * len(shown),
                         title={"text": "Recall@k and MRR@k on CMRC 2018",
                                "subtitle": {"text": _clean(" · ".join(notes))}},
                         margin={"l": 20, "r": 20, "t": 110, "b": 40}, showlegend=False,
                         bargap=0.25)
    for column, metric in enumerate(metrics, start=1):
        names = [n for n in shown if metric in results[n]]
        figure.add_bar(x=[results[n][metric] for n in names], y=names, orientation="h",
                       name=metric, text=[f"{results[n][metric]:.3f}" for n in names],
                       # inside the bar's end where it fits (a third of the panel), else after it
                       textposition=["inside" if (results[n][metric] - start) / (top - start)
                                     > 0.35 else "outside" for n in names],
                       insidetextanchor="end", constraintext="none",
                       textfont={"size": 11}, cliponaxis=False,
                       marker={"color": [HIGHLIGHT if detectable and n == shown[0] else PLAIN
                                         for n in names]},
                       hovertemplate="%{y}: %{x:.4f}<extra>" + metric + "</extra>",
                       row=1, col=column)
        figure.update_xaxes(range=[start, top], dtick=step, tick0=start,
                            tickformat=".2f" if step < 0.1 else ".1f", row=1, col=column)
    figure.update_yaxes(autorange="reversed", automargin=True, tickvals=shown,
                        ticktext=[f"<b>{_clean(n)}</b>" if detectable and i == 0 else _clean(n)
                                  for i, n in enumerate(shown)])
    return figure
