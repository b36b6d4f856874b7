"""The course's pictures (plotly), and a way to show them that works anywhere, offline.

:func:`show` draws a figure as a PNG picture when plotly's static exporter (kaleido,
which drives a local Chrome/Chromium) is available. A PNG displays in a notebook nobody
has run or trusted yet (JupyterLab will not render SVG or scripts from an untrusted
notebook) and on GitHub. Without the exporter it shows plotly's interactive figure as
``application/vnd.plotly.v1+json``, which plotly's JupyterLab extension (installed with
plotly) draws with its own copy of plotly.js: no network, no CDN. Either way the plain-text
part of the output is a sentence naming the chart, not an object's repr.

Every chart function takes plain numbers (results of :func:`course_lib.evaluate`,
sweeps, ranks) and returns a ``plotly.graph_objects.Figure``. They are drawn to be read
as static pictures: values printed on the bars, room left for every label, point labels
that never overlap, at most eight pipelines at once, titles that say what is compared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .comparison_chart import (  # noqa: F401  (offered here too: plots.record, ...)
    best_detectable,
    clear_recorded,
    comparison_chart,
    record,
    recorded,
)
from .figures import (  # noqa: F401  (offered here too: notebooks call plots.show)
    CHOSEN_GAP,
    HIGHLIGHT,
    LABEL_GAP,
    MUTED,
    PLAIN,
    PLOTLY_MIME,
    PLOTS_ENV,
    PNG_MIME,
    _axis_start,
    _clean,
    _figure,
    _label,
    _label_spots,
    _overlaps,
    _step,
    compact_png,
    describe,
    figure_bundle,
    show,
)

CHAPTER_CUT_OFF_POINT = (0.87, 0.88)  # (context relevance@5, recall@5) with bge cosine > 0.4


# ---------------------------------------------------------------- single charts
def threshold_chart(sweeps: dict[str, list[dict[str, float]]] | list[dict[str, float]], k: int = 5,
                    chapter: tuple[float, float] | None = CHAPTER_CUT_OFF_POINT,
                    chapter_label: str = "reference chapter: bge cosine > 0.4",
                    chosen: float | None = None) -> Any:
    """Recall@k against context relevance@k, one point per cut-off (its value beside it).

    ``sweeps`` maps the name of the score each cut-off applies to (e.g. "cosine (e5)")
    to the rows of :func:`course_lib.lab.measure.evaluation.cut_off_sweep`; a bare list of rows
    is one unnamed curve. Labels that would overlap are moved around their point, or left out
    (hover shows every point); points that coincide share one label ("0–0.1").
    ``chosen`` circles the first curve's point at that cut-off (the slider's choice): its
    label is placed first, and no other label covers the circle.

    >>> rows = [{"cut_off": c, "recall@5": r, "context_relevance@5": x}
    ...         for c, r, x in ((0.0, 0.9, 0.2), (0.1, 0.9, 0.2), (1.0, 0.7, 0.8))]
    >>> figure = threshold_chart(rows, chosen=0.1)  # 0 and 0.1 coincide: one label
    >>> [a.text for a in figure.layout.annotations], figure.data[1].name
    (['0–0.1', '1'], 'chosen: cut-off 0.1')
    """
    from plotly.colors import qualitative

    named = isinstance(sweeps, dict)  # a bare list of rows: one curve, no legend entry
    # An unnamed curve is the cut-off's trade-off on whatever score the rows came from.
    sweeps = sweeps if isinstance(sweeps, dict) else {"score cut-off": list(sweeps)}
    if chosen is not None and not any(r["cut_off"] == chosen for r in next(iter(sweeps.values()))):
        raise ValueError(f"chosen={chosen!r} is not one of the first curve's cut-offs "
                         f"{[r['cut_off'] for r in next(iter(sweeps.values()))]}")
    xkey, ykey = f"context_relevance@{k}", f"recall@{k}"
    xs = [r[xkey] for rows in sweeps.values() for r in rows] + ([chapter[0]] if chapter else [])
    ys = [r[ykey] for rows in sweeps.values() for r in rows] + ([chapter[1]] if chapter else [])
    width, height = 820, 540
    margin = {"l": 70, "r": 30, "t": 95, "b": 120}
    xrange = (min(0.0, min(xs)) - 0.03, max(1.0, max(xs)) + 0.03)
    low = min(ys) if min(ys) < 0.5 else _axis_start(min(ys))
    yrange = (low - 0.05 * (1 - low), 1 + 0.08 * (1 - low))
    plot = (width - margin["l"] - margin["r"], height - margin["t"] - margin["b"])

    def pixel(x: float, y: float) -> tuple[float, float]:
        return ((x - xrange[0]) / (xrange[1] - xrange[0]) * plot[0],
                (yrange[1] - y) / (yrange[1] - yrange[0]) * plot[1])

    figure = _figure(f"Score cut-off: recall@{k} against context relevance@{k}",
                     "one point per cut-off, its value beside it; a higher cut-off keeps fewer "
                     "paragraphs per question", xaxis_title=f"context relevance@{k}  "
                     "(share of the kept sentences that are the gold paragraph's)",
                     yaxis_title=f"recall@{k}", width=width, height=height, margin=margin,
                     legend={"orientation": "h", "x": 0, "xanchor": "left",
                             "y": -75 / plot[1], "yanchor": "top",
                             "title": {"text": "cut-off on: " if named else ""}})
    figure.update_xaxes(range=list(xrange), dtick=_step(xrange[1] - xrange[0], 8))
    figure.update_yaxes(range=list(yrange), dtick=_step(yrange[1] - yrange[0], 6))
    curves = []
    anchor_of: dict[int, dict[str, float]] = {}  # each row -> the first row of its label group
    for name, rows in sweeps.items():  # points that coincide on screen share one label
        groups: list[list[dict[str, float]]] = []
        for row in rows:
            if groups and math.dist(pixel(row[xkey], row[ykey]),
                                    pixel(groups[-1][-1][xkey], groups[-1][-1][ykey])) < 4:
                groups[-1].append(row)
            else:
                groups.append([row])
        texts = [f"{g[0]['cut_off']:g}" + (f"–{g[-1]['cut_off']:g}" if len(g) > 1 else "")
                 for g in groups]
        anchor_of.update({id(row): g[0] for g in groups for row in g})
        curves.append((name, rows, [g[0] for g in groups], texts))
    points = {id(row): pixel(row[xkey], row[ykey])
              for _, _, anchors, _ in curves for row in anchors}
    markers = [(x - 2, y - 2, x + 2, y + 2) for x, y in points.values()]
    if chapter is not None:
        cx, cy = pixel(*chapter)
        markers.append((cx - 9, cy - 9, cx + 9, cy + 9))
    picked = None  # the chosen row, and the label group (anchor) it belongs to
    if chosen is not None:
        row = next(r for r in curves[0][1] if r["cut_off"] == chosen)
        picked = (row, anchor_of[id(row)])
        px, py = pixel(row[xkey], row[ykey])
        markers.append((px - 12, py - 12, px + 12, py + 12))  # the open circle, 20 px wide
    lines = [(*points[id(a)], *points[id(b)]) for _, _, anchors, _ in curves
             for a, b in zip(anchors, anchors[1:], strict=False)]
    for i, (name, rows, anchors, texts) in enumerate(curves):
        order = list(range(len(anchors)))
        if i == 0 and picked is not None:  # the chosen point's label first: it always gets one
            first = next(j for j, a in enumerate(anchors) if a is picked[1])
            order = [first] + [j for j in order if j != first]
        gaps = [CHOSEN_GAP if picked is not None and anchors[j] is picked[1] else LABEL_GAP
                for j in order]
        placed = _label_spots([points[id(anchors[j])] for j in order], [texts[j] for j in order],
                              markers, lines, plot, gaps)
        spots = [placed[order.index(j)] for j in range(len(anchors))]
        gap_of = {j: gaps[n] for n, j in enumerate(order)}
        colour = qualitative.Plotly[i % len(qualitative.Plotly)]
        figure.add_scatter(x=[r[xkey] for r in rows], y=[r[ykey] for r in rows],
                           mode="lines+markers", name=_clean(name), line={"color": colour},
                           showlegend=named, customdata=[r["cut_off"] for r in rows],
                           hovertemplate=f"cut-off %{{customdata:g}}<br>{xkey} %{{x:.3f}}<br>"
                                         f"{ykey} %{{y:.3f}}<extra>{_clean(name)}</extra>")
        for j, (anchor, text, spot) in enumerate(zip(anchors, texts, spots, strict=True)):
            if spot:
                figure.add_annotation(_label(anchor[xkey], anchor[ykey], text, spot, colour,
                                             gap_of[j]))
    if picked is not None:
        row = picked[0]
        figure.add_scatter(x=[row[xkey]], y=[row[ykey]], mode="markers",
                           name=f"chosen: cut-off {chosen:g}",
                           hovertemplate=f"chosen: cut-off {chosen:g}<extra></extra>",
                           marker={"size": 20, "color": "red", "symbol": "circle-open",
                                   "line": {"width": 2}})
    if chapter is not None:
        figure.add_scatter(x=[chapter[0]], y=[chapter[1]], mode="markers",
                           name=_clean(chapter_label),
                           marker={"symbol": "star", "size": 16, "color": "black"})
    return figure


def score_histograms(panels: dict[str, dict[str, Sequence[float]]],
                     lines: dict[str, dict[str, float]] | None = None, bin_size: float = 0.01,
                     x_range: tuple[float, float] = (0.0, 1.0),
                     title: str = "Scores of the gold paragraph and of the other paragraphs",
                     panel: str = "model") -> Any:
    """Overlaid histograms of scores: one panel (row) per model, all on one x axis, so
    that where each model puts its scores can be compared at a glance. ``panel`` names
    what a panel is in the subtitle ("model", or "signal", "detector", ...).

    ``panels`` maps a model (e.g. "cosine (e5)") to groups of scores, e.g. the "gold
    paragraph" and "other paragraphs" of :func:`course_lib.lab.measure.evaluation.scores_by_hit`.
    Each group is drawn as the share of *its own* scores per bin (percent), so a group of
    1,000 and one of 4,000 compare (their sizes are in the panel's title); the first group
    of each panel is highlighted.
    ``lines`` marks values on a panel, e.g. cut-offs: ``{model: {label: value}}``.

    >>> figure = score_histograms({"m": {"gold": [0.9, 0.92], "other": [0.85]}},
    ...                           lines={"m": {"cut-off 0.88": 0.88}})
    >>> [trace.name for trace in figure.data], figure.layout.annotations[-1].text
    (['gold', 'other'], 'cut-off 0.88')
    """
    from plotly.subplots import make_subplots

    if not panels:
        raise ValueError("panels is empty: give at least one model's scores")
    lines = lines or {}
    colours = (HIGHLIGHT, PLAIN, MUTED)
    names = list(panels)
    titles = [_clean(f"{name}: " + ", ".join(f"{group} {len(scores):,}" for group, scores
                                           in panels[name].items())) for name in names]
    figure = make_subplots(rows=len(names), cols=1, shared_xaxes=True, vertical_spacing=0.1,
                           subplot_titles=titles)
    figure.update_layout(template="plotly_white", width=820, height=140 + 210 * len(names),
                         barmode="overlay", bargap=0.05,
                         title={"text": _clean(title), "subtitle": {"text": _clean(
                             f"one panel per {panel}, same x axis; each colour: the share of its "
                             f"own scores in each {bin_size:g}-wide bin")}},
                         margin={"l": 70, "r": 30, "t": 110, "b": 100},
                         legend={"orientation": "h", "x": 0, "xanchor": "left", "y": -0.12,
                                 "yanchor": "top"})
    shown: set[str] = set()  # one legend entry per group name
    for row, name in enumerate(names, start=1):
        for i, (group, scores) in enumerate(panels[name].items()):
            colour = colours[i % len(colours)]
            figure.add_histogram(x=list(scores), histnorm="percent", name=_clean(group),
                                 showlegend=group not in shown, legendgroup=group,
                                 xbins={"start": x_range[0], "end": x_range[1], "size": bin_size},
                                 marker={"color": colour}, opacity=0.65,
                                 hovertemplate=f"{_clean(group)}: %{{y:.1f}}% of its scores "
                                               "in %{x}<extra>" + _clean(name) + "</extra>",
                                 row=row, col=1)
            shown.add(group)
        figure.update_yaxes(title_text="% of the group", row=row, col=1)
        for j, (label, value) in enumerate(lines.get(name, {}).items()):
            figure.add_vline(x=value, line={"dash": "dash", "color": "black", "width": 1.2},
                             row=row, col=1)
            axis = "y" if row == 1 else f"y{row}"
            figure.add_annotation(x=value, y=1 - 0.14 * j, xref="x" if row == 1 else f"x{row}",
                                  yref=f"{axis} domain", text=_clean(label), showarrow=False,
                                  xanchor="left", xshift=4, yanchor="top",
                                  bgcolor="rgba(255,255,255,0.8)")
    figure.update_xaxes(range=list(x_range), dtick=_step(x_range[1] - x_range[0], 10))
    figure.update_xaxes(title_text="score", row=len(names), col=1)
    return figure


def rank_shift_chart(before: Sequence[int | None], after: Sequence[int | None],
                     worst: int = 21, limit: int | None = None) -> Any:
    """Slope chart: the gold paragraph's rank before → after reranking, for the questions
    whose rank changed (``None`` = not retrieved, counted as rank ``worst``). Questions that
    moved the same way share one line, thicker the more of them there are; the rank axis
    is logarithmic, so that 1, 2 and 3 stay apart; ``limit`` keeps only the first so many
    changed questions."""
    from collections import Counter

    changed = [(b or worst, a or worst) for b, a in zip(before, after, strict=True)
               if (b or worst) != (a or worst)][:limit]
    moves = Counter(changed)
    up, down = sum(a < b for b, a in changed), sum(a > b for b, a in changed)
    figure = _figure("Rank of the gold paragraph, before → after reranking",
                     f"{len(changed)} of {len(before)} questions changed rank: {up} up, "
                     f"{down} down; a thicker line is more questions",
                     yaxis_title="rank (1 = first)", width=640, height=580,
                     margin={"b": 80}, legend={"orientation": "h", "x": 0.5, "xanchor": "center",
                                               "y": -0.08, "yanchor": "top"})
    missing = worst * 1.6  # where "not found" is drawn: clear of the last real rank

    def drawn(rank: int) -> float:
        return missing if rank == worst else rank

    legend_done = set()
    for (b, a), count in sorted(moves.items(), key=lambda item: item[1]):
        better = a < b
        label = f"moved up ({up})" if better else f"moved down ({down})"
        figure.add_scatter(x=["before", "after"], y=[drawn(b), drawn(a)], mode="lines+markers",
                           line={"color": "seagreen" if better else "firebrick",
                                 "width": min(1.5 + (count - 1), 9)},
                           opacity=0.7, name=label, legendgroup=label,
                           showlegend=label not in legend_done,
                           hovertemplate=f"{count} question(s): rank {b} → {a}<extra></extra>")
        legend_done.add(label)
    ticks = [t for t in (1, 2, 3, 5, 10, 20, 50, 100) if t < worst]
    figure.update_yaxes(type="log", range=[math.log10(missing * 1.25), math.log10(0.8)],
                        tickvals=[*ticks, missing],
                        ticktext=[str(t) for t in ticks] + ["not found"])
    figure.update_xaxes(range=[-0.15, 1.15])
    return figure


def tree_chart(doc: Any, groups: Sequence[str] | None = None) -> Any:
    """The node-group tree: one box per group (its node count and mean length), each
    joined to its parent group."""
    groups = list(groups or doc.groups())
    depth: dict[str, int] = {}
    for group in groups:
        parent = doc.parent_of(group)
        depth[group] = 0 if parent is None else depth.get(parent, 0) + 1
    rows: dict[int, list[str]] = {}
    for group in groups:
        rows.setdefault(depth[group], []).append(group)
    position = {g: (depth[g], -i + (len(rows[depth[g]]) - 1) / 2)
                for d in rows for i, g in enumerate(rows[d])}
    tallest = max(len(r) for r in rows.values())
    figure = _figure("Node groups: a tree through each group's parent",
                     "box: group name, number of nodes, mean length in characters",
                     width=820, height=150 + 75 * tallest, showlegend=False,
                     margin={"l": 20, "r": 20, "b": 20})
    for group in groups:
        parent = doc.parent_of(group)
        if parent in position:
            (x0, y0), (x1, y1) = position[parent], position[group]
            figure.add_scatter(x=[x0, (x0 + x1) / 2, (x0 + x1) / 2, x1], y=[y0, y0, y1, y1],
                               mode="lines", line={"color": "darkgray", "width": 1.5},
                               hoverinfo="skip")
    labels = []
    for group in groups:
        nodes = doc.get_nodes(group)
        mean = sum(len(n.text) for n in nodes) / max(len(nodes), 1)
        labels.append(f"<b>{group}</b><br>{len(nodes):,} nodes · {mean:,.0f} chars")
    for group, label in zip(groups, labels, strict=True):
        figure.add_annotation(x=position[group][0], y=position[group][1], text=label,
                              showarrow=False, align="center", bgcolor="#EEF3FA",
                              bordercolor="steelblue", borderwidth=1.5, borderpad=5)
    figure.add_scatter(x=[position[g][0] for g in groups], y=[position[g][1] for g in groups],
                       mode="markers", marker={"size": 1, "opacity": 0}, hovertext=labels,
                       hoverinfo="text", name="groups")
    figure.update_xaxes(visible=False, range=[-0.5, max(depth.values()) + 0.5])
    figure.update_yaxes(visible=False, range=[-(tallest - 1) / 2 - 0.6, (tallest - 1) / 2 + 0.6])
    return figure


def pca_2d(vectors: np.ndarray) -> np.ndarray:
    """Project rows onto their first two principal components (centred SVD)."""
    centred = vectors - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    return centred @ components[:2].T


GOLD, RETRIEVED, OTHER = "gold paragraph", "retrieved", "other"
ROLE_COLOURS = {OTHER: MUTED, RETRIEVED: PLAIN, GOLD: HIGHLIGHT}


def paragraph_roles(count: int, gold: int | Sequence[int] = (),
                    retrieved: Sequence[int] = ()) -> list[str]:
    """Each paragraph's role for :func:`embedding_map`: the gold paragraph (also when it was
    retrieved), a retrieved one, or another.

    >>> paragraph_roles(4, gold=2, retrieved=[2, 0])
    ['retrieved', 'other', 'gold paragraph', 'other']
    """
    golds = {gold} if isinstance(gold, int | np.integer) else set(gold)
    chosen = {int(i) for i in retrieved}
    return [GOLD if i in golds else RETRIEVED if i in chosen else OTHER for i in range(count)]


def embedding_map(vectors: np.ndarray, labels: Sequence[str], query: np.ndarray | None = None,
                  neighbours: Sequence[int] = ()) -> Any:
    """Paragraph embeddings in 2-D (PCA) with a question (star) and its nearest paragraphs
    (circled, with their rank).

    ``labels`` colour the points: pass the roles of :func:`paragraph_roles` ("gold
    paragraph", "retrieved", "other") — what a learner wants to see is where the right
    answer lies and what was retrieved; any other labels get one colour each.
    """
    from plotly.colors import qualitative

    points = pca_2d(np.vstack([vectors, query[None, :]]) if query is not None else vectors)
    paragraphs = points[: len(labels)]
    roles = set(labels) <= set(ROLE_COLOURS)
    subtitle = (f"the question (star), its gold paragraph and the top {len(neighbours)} "
                "retrieved (circled, with rank)" if roles else "colour: label")
    figure = _figure("Paragraph embeddings, projected to 2-D with PCA",
                     subtitle + "; distances in 2-D are only suggestive",
                     xaxis_title="first principal component",
                     yaxis_title="second principal component", width=820, height=580)
    order = [r for r in ROLE_COLOURS if r in labels] if roles else list(dict.fromkeys(labels))
    for i, label in enumerate(order):
        mask = np.array([lab == label for lab in labels])
        colour = ROLE_COLOURS[label] if roles else qualitative.Plotly[i % len(qualitative.Plotly)]
        size = 7 if label == OTHER else 11
        figure.add_scatter(x=paragraphs[mask, 0], y=paragraphs[mask, 1], mode="markers",
                           name=f"{_clean(label)} ({mask.sum()})",
                           marker={"size": size, "color": colour, "opacity": 0.85,
                                   "line": {"width": 0.5, "color": "white"}})
    if len(neighbours):
        chosen = paragraphs[list(neighbours)]
        figure.add_scatter(x=chosen[:, 0], y=chosen[:, 1], mode="markers+text",
                           name=f"top {len(neighbours)} (rank)",
                           text=[str(r) for r in range(1, len(neighbours) + 1)],
                           textposition="top right", textfont={"size": 12},
                           marker={"size": 19, "color": "rgba(0,0,0,0)",
                                   "line": {"width": 2, "color": "black"}})
    if query is not None:
        figure.add_scatter(x=[points[-1, 0]], y=[points[-1, 1]], mode="markers", name="question",
                           marker={"symbol": "star", "size": 18, "color": "black"})
    return figure


def path_overlap_chart(found: Sequence[Sequence[str]], total: int,
                       title: str = "Which retrieval paths found the gold paragraph") -> Any:
    """Which combination of paths found the gold paragraph (one bar per combination);
    ``found`` holds, per question, the names of the paths that found it."""
    from collections import Counter

    combos = Counter(" + ".join(sorted(paths)) if paths else "no path" for paths in found)
    order = sorted(combos, key=lambda c: (-combos[c], c))
    shares = [combos[c] / total for c in order]
    figure = _figure(title, f"one bar per combination of paths; share of {total} questions",
                     width=820, height=170 + 38 * len(order),
                     xaxis_title=f"share of {total} questions", margin={"l": 20, "r": 30})
    figure.add_bar(x=shares, y=order, orientation="h", text=[f"{s:.1%}" for s in shares],
                   textposition="outside", cliponaxis=False, marker={"color": PLAIN},
                   hovertemplate="%{y}: %{x:.1%}<extra></extra>")
    figure.update_xaxes(range=[0, max(shares) * 1.15], tickformat=".0%")
    figure.update_yaxes(autorange="reversed", automargin=True)
    return figure
