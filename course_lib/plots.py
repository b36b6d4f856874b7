"""The course's pictures (plotly), and a way to show them that GitHub can render too.

:func:`show` draws a figure as a static SVG when plotly's exporter (kaleido, which
drives a local Chrome/Chromium) is available — so the committed notebooks display it —
and falls back to the interactive figure otherwise.

Every chart function takes plain numbers (results of :func:`course_lib.evaluate`,
sweeps, ranks) and returns a ``plotly.graph_objects.Figure``.
"""

from __future__ import annotations

import atexit
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

CHAPTER_CUT_OFF_POINT = (0.87, 0.88)  # (context relevance@5, recall@5) with bge cosine > 0.4


def show(figure: Any, width: int | None = None, height: int | None = None) -> None:
    """Display ``figure`` as SVG (static, renders on GitHub) or, failing that, interactively."""
    from IPython.display import SVG, display

    try:
        if not _exporter_ready():
            raise RuntimeError("no static exporter")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # kaleido's notes about its server options
            svg = figure.to_image(format="svg", width=width, height=height)
    except Exception:  # no kaleido or no browser for it: the interactive figure still works
        figure.show(renderer="notebook_connected")
        return
    display(SVG(svg))


_EXPORTER: list[bool] = []


def _exporter_ready() -> bool:
    """Start one headless browser for all exports, once (1.5 s, then 0.1 s per figure);
    remember a failure so a machine without Chrome does not retry every time."""
    if not _EXPORTER:
        try:
            import kaleido
            from choreographer.browsers.chromium import Chromium

            # Without a browser kaleido's server thread dies and exports wait forever:
            # look for one first.
            if Chromium.find_browser(skip_local=False) is None:
                raise RuntimeError("no Chrome/Chromium for plotly's exporter")
            kaleido.start_sync_server(silence_warnings=True)
            atexit.register(kaleido.stop_sync_server, silence_warnings=True)
            _EXPORTER.append(True)
        except Exception:
            _EXPORTER.append(False)
    return _EXPORTER[0]


def _figure(**layout: Any) -> Any:
    import plotly.graph_objects as go

    figure = go.Figure()
    figure.update_layout(template="plotly_white", margin={"l": 60, "r": 20, "t": 60, "b": 50},
                         **layout)
    return figure


# ---------------------------------------------------------------- this notebook's comparison
# In memory, per Python process: what a notebook shows depends only on its own cells.
# (A shared file on disk made one notebook's chart depend on which others had run.)
_RECORDED: dict[str, dict[str, float]] = {}


def record(result: dict[str, Any], label: str | None = None) -> None:
    """Add an evaluation result (recall@k, MRR@k) to this session's comparison chart.

    >>> clear_recorded(); record({"pipeline": "bm25", "recall@1": 0.9, "seconds": 2.0})
    >>> recorded()
    {'bm25': {'recall@1': 0.9}}
    """
    keep = {k: v for k, v in result.items() if k.startswith(("recall@", "mrr@"))}
    _RECORDED[label or result["pipeline"]] = keep


def recorded() -> dict[str, dict[str, float]]:
    """What :func:`record` collected in this Python process (a copy)."""
    return {name: dict(scores) for name, scores in _RECORDED.items()}


def clear_recorded() -> None:
    """Forget every recorded result."""
    _RECORDED.clear()


def comparison_chart(results: dict[str, dict[str, float]] | None = None,
                     ks: Sequence[int] = (1, 3, 5)) -> Any:
    """recall@k (solid) and MRR@k (dotted) against k, one colour per pipeline."""
    from plotly.colors import qualitative

    results = recorded() if results is None else results
    figure = _figure(title="Recall@k and MRR@k on CMRC 2018", xaxis_title="k",
                     yaxis_title="score", width=820, height=480)
    for i, (name, scores) in enumerate(sorted(results.items())):
        colour = qualitative.Plotly[i % len(qualitative.Plotly)]
        for metric, dash in (("recall", "solid"), ("mrr", "dot")):
            values = [scores.get(f"{metric}@{k}") for k in ks]
            if all(v is not None for v in values):
                figure.add_scatter(x=list(ks), y=values, mode="lines+markers",
                                   name=f"{name} · {metric}", line={"color": colour, "dash": dash},
                                   legendgroup=name)
    figure.update_xaxes(tickvals=list(ks))
    return figure


# ---------------------------------------------------------------- single charts
def threshold_chart(sweeps: dict[str, list[dict[str, float]]], k: int = 5,
                    chapter: tuple[float, float] | None = CHAPTER_CUT_OFF_POINT) -> Any:
    """Recall@k against context relevance@k as the cut-off moves (labels: cut-off)."""
    figure = _figure(title=f"Cut-off sweep: recall@{k} vs context relevance@{k}",
                     xaxis_title=f"context relevance@{k}", yaxis_title=f"recall@{k}",
                     width=820, height=480)
    for name, rows in sweeps.items():
        figure.add_scatter(x=[r[f"context_relevance@{k}"] for r in rows],
                           y=[r[f"recall@{k}"] for r in rows], mode="lines+markers+text",
                           text=[f"{r['cut_off']:g}" for r in rows], textposition="top center",
                           name=name)
    if chapter is not None:
        figure.add_scatter(x=[chapter[0]], y=[chapter[1]], mode="markers", name="chapter",
                           marker={"symbol": "star", "size": 16, "color": "black"})
    return figure


def rank_shift_chart(before: Sequence[int | None], after: Sequence[int | None],
                     worst: int = 21, limit: int = 60) -> Any:
    """Slope chart: the gold paragraph's rank before → after reranking, for questions whose
    rank changed (``None`` = not retrieved, drawn at ``worst``)."""
    figure = _figure(title="Rank of the gold paragraph, before → after reranking",
                     yaxis_title="rank (1 = first)", width=620, height=520)
    changed = [(b or worst, a or worst) for b, a in zip(before, after, strict=True)
               if (b or worst) != (a or worst)][:limit]
    for b, a in changed:
        colour = "seagreen" if a < b else "firebrick"
        figure.add_scatter(x=["before", "after"], y=[b, a], mode="lines+markers",
                           line={"color": colour, "width": 1.5}, opacity=0.6, showlegend=False)
    figure.update_yaxes(autorange="reversed", tickvals=[1, 2, 3, 5, 10, worst],
                        ticktext=["1", "2", "3", "5", "10", "not found"])
    figure.add_annotation(text=f"{sum(a < b for b, a in changed)} improved, "
                               f"{sum(a > b for b, a in changed)} worsened",
                          xref="paper", yref="paper", x=0.5, y=1.05, showarrow=False)
    return figure


def tree_chart(doc: Any, groups: Sequence[str] | None = None) -> Any:
    """The node-group tree: one box per group with its node count and mean length."""
    groups = list(groups or doc.groups())
    depth = {}
    for group in groups:
        depth[group] = 0 if doc.parent_of(group) is None else depth.get(doc.parent_of(group), 0) + 1
    rows: dict[int, list[str]] = {}
    for group in groups:
        rows.setdefault(depth[group], []).append(group)
    position = {g: (depth[g], -i + (len(rows[depth[g]]) - 1) / 2)
                for d in rows for i, g in enumerate(rows[d])}
    figure = _figure(title="Node groups: a tree through `parent`", width=820,
                     height=120 + 70 * max(len(r) for r in rows.values()))
    for group in groups:
        parent = doc.parent_of(group)
        if parent in position:
            (x0, y0), (x1, y1) = position[parent], position[group]
            figure.add_scatter(x=[x0, x1], y=[y0, y1], mode="lines", showlegend=False,
                               line={"color": "lightgray"})
    labels = []
    for group in groups:
        nodes = doc.get_nodes(group)
        mean = sum(len(n.text) for n in nodes) / max(len(nodes), 1)
        labels.append(f"<b>{group}</b><br>{len(nodes):,} nodes · {mean:,.0f} chars")
    figure.add_scatter(x=[position[g][0] for g in groups], y=[position[g][1] for g in groups],
                       mode="markers+text", text=labels, textposition="middle right",
                       marker={"size": 16, "color": "steelblue"}, showlegend=False)
    figure.update_xaxes(visible=False, range=[-0.3, max(depth.values()) + 1.3])
    figure.update_yaxes(visible=False)
    return figure


def pca_2d(vectors: np.ndarray) -> np.ndarray:
    """Project rows onto their first two principal components (centred SVD)."""
    centred = vectors - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    return centred @ components[:2].T


def embedding_map(vectors: np.ndarray, labels: Sequence[str], query: np.ndarray | None = None,
                  neighbours: Sequence[int] = ()) -> Any:
    """Paragraph embeddings in 2-D (PCA), coloured by document; a query and its neighbours."""
    points = pca_2d(np.vstack([vectors, query[None, :]]) if query is not None else vectors)
    figure = _figure(title="Paragraph embeddings, PCA to 2-D (colour: document)", width=820,
                     height=560)
    for label in dict.fromkeys(labels):
        mask = np.array([lab == label for lab in labels])
        figure.add_scatter(x=points[: len(labels)][mask, 0], y=points[: len(labels)][mask, 1],
                           mode="markers", name=label, marker={"size": 7, "opacity": 0.75})
    if len(neighbours):
        chosen = points[list(neighbours)]
        figure.add_scatter(x=chosen[:, 0], y=chosen[:, 1], mode="markers", name="neighbours",
                           marker={"size": 15, "color": "rgba(0,0,0,0)",
                                   "line": {"width": 2, "color": "black"}})
    if query is not None:
        figure.add_scatter(x=[points[-1, 0]], y=[points[-1, 1]], mode="markers", name="query",
                           marker={"symbol": "star", "size": 18, "color": "black"})
    return figure


def path_overlap_chart(found: Sequence[Sequence[str]], total: int) -> Any:
    """Which combination of paths found the gold paragraph (one bar per combination)."""
    from collections import Counter

    combos = Counter(" + ".join(sorted(paths)) if paths else "no path" for paths in found)
    order = sorted(combos, key=lambda c: -combos[c])
    figure = _figure(title="Which paths found the gold paragraph", width=820, height=420,
                     xaxis_title=f"share of {total} questions")
    figure.add_bar(x=[combos[c] / total for c in order], y=order, orientation="h",
                   text=[f"{combos[c] / total:.1%}" for c in order], textposition="outside")
    figure.update_yaxes(autorange="reversed")
    return figure
